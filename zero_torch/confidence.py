"""Label-free confidence rewards from a response's own logits, PyTorch reference:
Intuitor's self-certainty (Zhao et al., 2025, arXiv:2505.19590) and the token entropy
of entropy minimisation (Agarwal et al., 2025, arXiv:2505.15134; RENT).  Mirrors
``zero_jax.confidence``.

Both reduce ``[B, T, V]`` logits over the vocabulary and average over the kept tokens.
The logits are read in pieces of at most ``CHUNK`` elements (rows of tokens, and parts
of a row's tokens when one row is larger), so the temporaries of the reduction stay a
small fraction of the logits' size; bfloat16 / float16 logits are widened to float32
piece by piece.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from zero_torch import _checks as _c

__all__ = ["self_certainty", "token_entropy"]

#: Logits reduced at once (float32: 16 MiB per temporary).
CHUNK = 2**22


def _self_certainty(x: torch.Tensor) -> torch.Tensor:
    """Per token ``logsumexp(x) - mean(x)`` over the last axis, as
    ``log sum exp(x - max) + mean(max - x)``: two non-negative terms, so no cancellation
    even for logits with a large common offset."""
    shifted = x - x.amax(-1, keepdim=True)  # <= 0
    spread = shifted.mean(-1).neg_()
    return shifted.exp_().sum(-1).log_().add_(spread)


def _token_entropy(x: torch.Tensor) -> torch.Tensor:
    """Per token ``-sum p log p = logsumexp(x) - sum softmax(x) x`` over the last axis,
    as ``log1p(R) + sum_v e_v (max - x_v) / (1 + R)`` with ``e = exp(x - max)`` and
    ``R = Z - 1`` the sum of ``e`` without one maximum (whose ``e`` is exactly 1 and adds
    0 to the second sum): two non-negative terms, and ``log Z`` accurate when the
    distribution is sharply peaked and the entropy close to 0."""
    top, at = torch.max(x, -1, keepdim=True)
    shifted = x - top  # <= 0
    e = shifted.exp().scatter_(-1, at, 0.0)
    rest = e.sum(-1)
    spread = e.mul_(shifted).sum(-1).neg_() / (1 + rest)
    return torch.log1p(rest).add_(spread)


def _masked_token_mean(
    logits: torch.Tensor, mask: torch.Tensor, per_token: Callable[[torch.Tensor], torch.Tensor]
) -> torch.Tensor:
    """``sum_t m_t f(l_t) / max(1, sum_t m_t)`` per row, reading the logits in pieces."""
    b, t, v = logits.shape
    acc = _c.compute_dtype(logits.dtype)
    total = torch.zeros(b, dtype=acc, device=logits.device)
    zero = torch.zeros((), dtype=acc, device=logits.device)
    rows = max(1, CHUNK // max(1, t * v))  # whole rows at once when they fit
    tokens = max(1, t) if rows > 1 else max(1, CHUNK // v)
    for r0 in range(0, b, rows):
        for t0 in range(0, t, tokens):
            piece = logits[r0 : r0 + rows, t0 : t0 + tokens].to(acc)
            kept = mask[r0 : r0 + rows, t0 : t0 + tokens]
            value = per_token(piece)  # masked tokens may be non-finite: never selected
            total[r0 : r0 + rows] += torch.where(kept, value, zero).sum(-1)
    count = mask.sum(-1).clamp(min=1).to(acc)
    return (total / count).to(logits.dtype)


@torch.no_grad()
def self_certainty(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Intuitor's self-certainty of each response: its mean KL(U || p) + log V.

    ``sc_i = sum_t m_it (logsumexp_v l_itv - mean_v l_itv) / max(1, sum_t m_it)``

    Learning to Reason without External Rewards (Xuandong Zhao et al., 2025), §3,
    self-certainty (the published code's logsumexp - mean), https://arxiv.org/abs/2505.19590.
    Output ``[B]``: the dtype of ``logits``; detached (no gradient).

    Intuitor's published trainer computes ``logsumexp - mean`` per token (the paper's
    ``KL(U || p)`` plus the constant ``log V``) and averages it over the response's
    tokens; so does this function.  ``logits`` ``[B, T, V]`` (float16 / bfloat16 /
    float32 / float64), ``mask`` ``[B, T]`` bool: the response tokens.  All-masked
    rows (and ``T = 0``) give 0; a masked token's logits are never read (they may be
    anything).  Non-finite logits at a kept token raise ValueError.  Half precision
    is computed in float32, rounded once.

    >>> import torch, zero_torch
    >>> logits = torch.tensor([[[2.0, 0.0, 0.0], [0.0, 0.0, 0.0]]])
    >>> sc = zero_torch.self_certainty(logits, torch.tensor([[True, False]]))
    >>> round(sc.item(), 4)  # log(e^2 + 2) - 2/3
    1.5729
    """
    x, m = _c.arrays("self_certainty", logits, mask)
    _c.data_checks("self_certainty", logits=x, mask=m)
    return _masked_token_mean(x, m, _self_certainty)


@torch.no_grad()
def token_entropy(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean token entropy of each response under its own logits.

    ``H_i = sum_t m_it (-sum_v p_itv log p_itv) / max(1, sum_t m_it)``

    The Unreasonable Effectiveness of Entropy Minimization in LLM Reasoning (Shivam Agarwal et
    al., 2025), §3, token-level entropy (the EM-RL / RENT reward),
    https://arxiv.org/abs/2505.15134.  Output ``[B]``: the dtype of ``logits``; detached (no
    gradient).

    ``p = softmax(l)`` over the vocabulary; entropy minimisation rewards ``-H``.
    ``logits`` ``[B, T, V]``, ``mask`` ``[B, T]`` bool as for :func:`self_certainty`:
    all-masked rows give 0, masked tokens are never read, non-finite kept logits
    raise ValueError, half precision is computed in float32.

    >>> import torch, zero_torch
    >>> logits = torch.tensor([[[0.0, 0.0], [5.0, 5.0]], [[1.0, 1.0], [9.0, 9.0]]])
    >>> h = zero_torch.token_entropy(logits, torch.tensor([[True, True], [True, False]]))
    >>> [round(x, 4) for x in h.tolist()]  # log 2: a fair coin per kept token
    [0.6931, 0.6931]
    """
    x, m = _c.arrays("token_entropy", logits, mask)
    _c.data_checks("token_entropy", logits=x, mask=m)
    return _masked_token_mean(x, m, _token_entropy)
