"""R-Zero rewards, PyTorch reference (Huang et al., 2025, arXiv:2508.05004,
Sections 2.2-2.4).  Mirrors ``zero_jax.r_zero``; see there for the equations in
full and :mod:`zero_contracts` for the argument contracts."""

from __future__ import annotations

import torch

from zero_torch import _checks as _c
from zero_torch._checks import Index, Real
from zero_torch.primitives import sizes, vote

__all__ = [
    "challenger_rewards",
    "challenger_rewards_published",
    "consensus",
    "curriculum_mask",
    "pseudo_rewards",
    "uncertainty_reward",
]


@torch.no_grad()
def uncertainty_reward(consistency: torch.Tensor) -> torch.Tensor:
    """Triangular uncertainty of a self-consistency score.

    ``u_i = 1 - 2 |p_i - 1/2|``

    R-Zero: Self-Evolving Reasoning LLM from Zero Data (Chengsong Huang et al., 2025), §2.2,
    uncertainty reward, https://arxiv.org/abs/2508.05004.  Output ``[B]``: the dtype of
    ``consistency``; detached (no gradient).

    >>> import torch, zero_torch
    >>> zero_torch.uncertainty_reward(torch.tensor([0.5, 0.75, 1.0])).tolist()
    [1.0, 0.5, 0.0]
    """
    (p,) = _c.arrays("uncertainty_reward", consistency)
    _c.data_checks("uncertainty_reward", consistency=p)
    return _triangle(p.to(_c.compute_dtype(p.dtype))).to(p.dtype)


def _triangle(p: torch.Tensor) -> torch.Tensor:
    """``1 - 2 |p - 1/2|`` as ``2 min(p, 1 - p)``, exact for every float ``p`` in [0, 1]."""
    return 2 * torch.minimum(p, 1 - p)


@torch.no_grad()
def challenger_rewards(
    consistency: torch.Tensor,
    clusters: torch.Tensor,
    valid: torch.Tensor,
    strength: Real = 1.0,
    *,
    num_clusters: Index | None = None,
) -> torch.Tensor:
    """R-Zero challenger reward: uncertainty minus a repetition penalty, format-gated.

    ``r_i = v_i max(0, 1 - 2 |p_i - 1/2| - strength |C_i| / B)``

    R-Zero: Self-Evolving Reasoning LLM from Zero Data (Chengsong Huang et al., 2025), §2.2,
    uncertainty, repetition penalty and format gate, https://arxiv.org/abs/2508.05004.  Output
    ``[B]``: the dtype of ``consistency``; detached (no gradient).

    ``|C_i|`` counts every proposal of the batch with proposal i's cluster id,
    invalid ones included.  Ids are arbitrary integers of any dtype, or dense in
    ``[0, num_clusters)`` when ``num_clusters`` is given.  Half precision is
    computed in float32 and rounded once.

    >>> import torch, zero_torch
    >>> p = torch.tensor([0.5, 0.5, 0.75, 1.0])
    >>> ids = torch.tensor([0, 0, 1, 2]); valid = torch.tensor([True, True, True, False])
    >>> zero_torch.challenger_rewards(p, ids, valid).tolist()
    [0.5, 0.5, 0.25, 0.0]
    """
    p, c, v = _c.arrays("challenger_rewards", consistency, clusters, valid)
    h = _c.hypers("challenger_rewards", strength=strength, num_clusters=num_clusters)
    _c.data_checks("challenger_rewards", consistency=p, clusters=c, num_clusters=h["num_clusters"])
    dtype = _c.compute_dtype(p.dtype)
    share = sizes(c, h["num_clusters"]).to(dtype) / p.shape[0]
    reward = (_triangle(p.to(dtype)) - h["strength"] * share).clamp(min=0)
    return torch.where(v, reward, torch.zeros_like(reward)).to(p.dtype)


@torch.no_grad()
def consensus(
    answers: torch.Tensor, num_answers: Index, *, method: str = "auto"
) -> tuple[torch.Tensor, torch.Tensor]:
    """Majority-vote pseudo-label and self-consistency of each question's K answers.

    ``y_i = argmax_c n_ic (smallest id on ties), p_i = max_c n_ic / K``

    R-Zero: Self-Evolving Reasoning LLM from Zero Data (Chengsong Huang et al., 2025), §2.3,
    majority-vote pseudo-labels, https://arxiv.org/abs/2508.05004.  Output ``([B], [B])``: int64
    labels, float64 shares (int32 / float32 in JAX with x64 off); detached (no gradient).

    >>> import torch, zero_torch
    >>> labels, p = zero_torch.consensus(torch.tensor([[2, 1, 1, 2, 0]]), 3)
    >>> labels.tolist(), p.tolist()
    ([1], [0.4])
    """
    (a,) = _c.arrays("consensus", answers)
    h = _c.hypers("consensus", num_answers=num_answers, method=method)
    _c.label_range("num_answers", a, h["num_answers"])
    _c.data_checks("consensus", answers=a, num_answers=h["num_answers"])
    labels, top = vote(_c.as_int64(a), h["num_answers"], h["method"], _c.id_max(a))
    return labels, top.to(torch.float64) / a.shape[1]


def curriculum_mask(
    consistency: torch.Tensor, low: Real = 0.25, high: Real = 0.75
) -> torch.Tensor:
    """Informative band: keep the questions whose vote share lies in [low, high].

    ``keep_i = low <= p_i <= high``

    R-Zero: Self-Evolving Reasoning LLM from Zero Data (Chengsong Huang et al., 2025), §2.4,
    informative band, https://arxiv.org/abs/2508.05004.  Output ``[B]``: bool; detached (no
    gradient).

    >>> import torch, zero_torch
    >>> zero_torch.curriculum_mask(torch.tensor([0.2, 0.25, 0.5, 0.75, 0.8])).tolist()
    [False, True, True, True, False]
    """
    (p,) = _c.arrays("curriculum_mask", consistency)
    h = _c.hypers("curriculum_mask", low=low, high=high)
    _c.data_checks("curriculum_mask", consistency=p)
    lo = torch.tensor(h["low"], dtype=p.dtype, device=p.device)
    hi = torch.tensor(h["high"], dtype=p.dtype, device=p.device)
    return (p >= lo) & (p <= hi)


@torch.no_grad()
def pseudo_rewards(answers: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Agreement of fresh answers with frozen pseudo-labels.

    ``r_ij = 1[a_ij = y_i]``

    R-Zero: Self-Evolving Reasoning LLM from Zero Data (Chengsong Huang et al., 2025), §2.3,
    solver reward against frozen pseudo-labels, https://arxiv.org/abs/2508.05004.  Output ``[B,
    K]``: float64 (float32 in JAX with x64 off); detached (no gradient).

    >>> import torch, zero_torch
    >>> zero_torch.pseudo_rewards(torch.tensor([[3, 1, 3]]), torch.tensor([3])).tolist()
    [[1.0, 0.0, 1.0]]
    """
    a, y = _c.arrays("pseudo_rewards", answers, labels)
    return _c.ids_equal(a, y[:, None]).to(torch.float64)


@torch.no_grad()
def challenger_rewards_published(
    consistency: torch.Tensor,
    clusters: torch.Tensor,
    valid: torch.Tensor,
    *,
    num_clusters: Index | None = None,
) -> torch.Tensor:
    """R-Zero challenger reward as its published code trains it: unclipped, -1 when invalid.

    ``r_i = min(p_i, 1 - p_i) - |C_i| / B if v_i, else -1 - |C_i| / B``

    R-Zero: Self-Evolving Reasoning LLM from Zero Data (Chengsong Huang et al., 2025),
    published code: examples/reward_function/caller_penalty.py (compute_score),
    https://arxiv.org/abs/2508.05004.  Output ``[B]``: the dtype of ``consistency``;
    detached (no gradient).

    Half the paper's uncertainty, the whole cluster share, no clip at 0 and
    ``-1 - |C_i| / B`` for an invalid proposal (see ``zero_jax``'s twin).  The
    score of an invalid row is never read.  Half precision is computed in float32
    and rounded once.

    >>> import torch, zero_torch
    >>> p = torch.tensor([0.5, 0.75, 1.0, 0.5])
    >>> ids = torch.tensor([0, 1, 2, 2]); valid = torch.tensor([True, True, True, False])
    >>> zero_torch.challenger_rewards_published(p, ids, valid).tolist()
    [0.25, 0.0, -0.5, -1.5]
    """
    p, c, v = _c.arrays("challenger_rewards_published", consistency, clusters, valid)
    h = _c.hypers("challenger_rewards_published", num_clusters=num_clusters)
    _c.data_checks(
        "challenger_rewards_published",
        consistency=p, clusters=c, valid=v, num_clusters=h["num_clusters"],
    )
    dtype = _c.compute_dtype(p.dtype)
    share = sizes(c, h["num_clusters"]).to(dtype) / p.shape[0]
    x = p.to(dtype)
    hedge = torch.where(v, torch.minimum(x, 1 - x), torch.full_like(x, -1.0))
    return (hedge - share).to(p.dtype)
