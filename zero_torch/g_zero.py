"""G-Zero rewards, PyTorch reference (Huang et al., 2026, arXiv:2605.09959, Eqs. 3
and 5).  Mirrors ``zero_jax.g_zero``."""

from __future__ import annotations

import torch

from zero_torch import _checks as _c
from zero_torch.primitives import mean_kept

__all__ = ["hint_delta", "proposer_rewards"]


def hint_delta(
    base_logp: torch.Tensor, hinted_logp: torch.Tensor, mask: torch.Tensor
) -> torch.Tensor:
    """Mean per-token log-probability shift of a response when a hint is added.

    ``delta_i = sum_t m_it (log p_it - log p^h_it) / max(1, sum_t m_it)``

    G-Zero: Self-Play for Open-Ended Generation from Zero Data (Chengsong Huang et al., 2026),
    §3.1, Eq. 3 (Hint-delta), https://arxiv.org/abs/2605.09959.  Output ``[B]``: the promoted
    dtype of ``base_logp`` and ``hinted_logp``; differentiable in ``base_logp``,
    ``hinted_logp``.

    Differentiable in both log-prob tensors; a masked position is never read (it may
    be NaN or -inf) and gets exactly zero gradient; an all-masked row (or ``T = 0``)
    returns 0; a non-finite log-prob at a kept position raises ValueError.  Output
    dtype: promoted dtype of the two inputs.

    >>> import torch, zero_torch
    >>> base = torch.tensor([[-1.0, -2.0, -9.0]]); hinted = torch.tensor([[-0.5, -1.0, 0.0]])
    >>> zero_torch.hint_delta(base, hinted, torch.tensor([[True, True, False]])).tolist()
    [-0.75]
    """
    base, hinted, m = _c.arrays("hint_delta", base_logp, hinted_logp, mask)
    _c.data_checks("hint_delta", base_logp=base, hinted_logp=hinted, mask=m)
    dtype = torch.result_type(base, hinted)
    acc = _c.compute_dtype(dtype)  # half precision: the difference too, rounded once
    zero = torch.zeros((), dtype=acc, device=base.device)
    # masked positions replaced before the difference: value and gradient never matter
    diff = torch.where(m, base.to(acc), zero) - torch.where(m, hinted.to(acc), zero)
    return mean_kept(diff, m).to(dtype)


@torch.no_grad()
def proposer_rewards(
    delta: torch.Tensor,
    hint_lengths: torch.Tensor,
    cluster_share: torch.Tensor,
    valid: torch.Tensor,
) -> torch.Tensor:
    """G-Zero proposer reward: hint-delta minus length and repetition penalties.

    ``r_i = delta_i - 0.03 max(L_i - 200, 0) / 100 - s_i if valid, else -1 - s_i``

    G-Zero: Self-Play for Open-Ended Generation from Zero Data (Chengsong Huang et al., 2026),
    §3.2, Eq. 5 (proposer reward), https://arxiv.org/abs/2605.09959.  Output ``[B]``: the
    promoted dtype of ``delta`` and ``cluster_share``; detached (no gradient).

    Delta and length of an invalid proposal are ignored (they may be anything);
    the cluster share ``s`` always counts.  Output dtype: promoted dtype of
    ``delta`` and ``cluster_share`` (half precision computed in float32).

    >>> import torch, zero_torch
    >>> r = zero_torch.proposer_rewards(torch.tensor([0.5, 0.5]), torch.tensor([300, 10]),
    ...                                 torch.tensor([0.25, 0.5]), torch.tensor([True, False]))
    >>> [round(x, 4) for x in r.tolist()]
    [0.22, -1.5]
    """
    d, n, s, v = _c.arrays("proposer_rewards", delta, hint_lengths, cluster_share, valid)
    _c.data_checks("proposer_rewards", delta=d, hint_lengths=n, cluster_share=s, valid=v)
    out = torch.result_type(d, s)
    dtype = _c.compute_dtype(out)
    d, s = d.to(dtype), s.to(dtype)
    length_penalty = 0.03 * (n.to(dtype) - 200).clamp(min=0) / 100
    reward = torch.where(v, d - length_penalty, torch.full_like(d, -1)) - s
    return reward.to(out)
