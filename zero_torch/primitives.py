"""Shared voting and grouping primitives of the PyTorch reference (mirrors
``zero_jax.primitives``): majority vote, cluster sizes, masked mean."""

from __future__ import annotations

from typing import Any

import torch

from zero_contracts import MAX_TABLE, VOTE_METHODS, choose_vote_method, vote_alphabet
from zero_contracts import messages as msg
from zero_torch import _checks as _c
from zero_torch._checks import Index

__all__ = ["VOTE_METHODS", "choose_vote_method", "cluster_sizes", "majority_vote", "masked_mean"]


def vote(
    answers: torch.Tensor, num_answers: int, method: str, id_max: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Majority id of each row of validated int64 ids ``[B, K]`` and its count.

    ``id_max`` is the largest value of the ids' original dtype (valid ids lie in
    ``[0, min(num_answers, id_max + 1))``, the columns of a counting table).
    """
    method = choose_vote_method(method, num_answers, answers.shape[1])
    if method == "pairwise":
        counts = (answers[:, :, None] == answers[:, None, :]).sum(-1)
        top = counts.max(dim=1).values
        big = torch.iinfo(answers.dtype).max
        tied = torch.where(counts == top[:, None], answers, torch.full_like(answers, big))
        return tied.min(dim=1).values, top
    # "one_hot" and "segment_sum" both count into a [B, alphabet] table.
    alphabet = vote_alphabet(num_answers, id_max)
    size = answers.shape[0] * alphabet
    if size > MAX_TABLE:
        raise ValueError(msg.TABLE_TOO_LARGE.format(method=method, size=size, limit=MAX_TABLE))
    table = torch.zeros(answers.shape[0], alphabet, dtype=torch.int64, device=answers.device)
    table.scatter_add_(1, answers, torch.ones_like(answers))
    top = table.max(dim=1).values
    # argmax returns the first maximum, i.e. the smallest tied id.
    return table.argmax(dim=1), top


@torch.no_grad()
def majority_vote(
    answers: torch.Tensor, num_answers: Index, method: str = "auto"
) -> tuple[torch.Tensor, torch.Tensor]:
    """Majority answer of each row and its vote count.

    ``y_i = argmax_c n_ic (smallest id on ties), n_i = max_c n_ic``

    R-Zero: Self-Evolving Reasoning LLM from Zero Data (Chengsong Huang et al., 2025), §2.3, the
    vote behind consensus and solver rewards, https://arxiv.org/abs/2508.05004.  Output ``([B],
    [B])``: labels in the dtype of ``answers``, int counts (int32 in JAX, int64 in torch);
    detached (no gradient).

    Returns ``(labels [B] in the dtype of answers, counts [B] int64)``.

    >>> import torch, zero_torch
    >>> labels, top = zero_torch.majority_vote(torch.tensor([[2, 1, 1, 2, 0]]), 3)
    >>> labels.tolist(), top.tolist()
    ([1], [2])
    """
    (a,) = _c.arrays("majority_vote", answers)
    h = _c.hypers("majority_vote", num_answers=num_answers, method=method)
    _c.data_checks("majority_vote", answers=a, num_answers=h["num_answers"])
    labels, top = vote(_c.as_int64(a), h["num_answers"], h["method"], _c.id_max(a))
    if a.dtype == torch.uint64:
        return labels.view(torch.uint64), top
    return labels.to(a.dtype), top


def sizes(ids: torch.Tensor, num_clusters: int | None = None) -> torch.Tensor:
    """Cluster sizes of validated integer ids (any dtype), int64 ``[B]``."""
    ids = _c.as_int64(ids)
    if num_clusters is not None:
        return torch.bincount(ids, minlength=num_clusters)[ids]
    _, inverse, counts = torch.unique(ids, return_inverse=True, return_counts=True)
    return counts[inverse]  # type: ignore[no-any-return]  # torch.unique is untyped


@torch.no_grad()
def cluster_sizes(ids: torch.Tensor, num_clusters: Index | None = None) -> torch.Tensor:
    """How many entries of the batch share each entry's id.

    ``|C_i| = #{j : c_j = c_i}``

    R-Zero: Self-Evolving Reasoning LLM from Zero Data (Chengsong Huang et al., 2025), §2.2,
    |C_i| of the repetition penalty, https://arxiv.org/abs/2508.05004.  Output ``[B]``: int
    counts (int32 in JAX, int64 in torch); detached (no gradient).

    >>> import torch, zero_torch
    >>> zero_torch.cluster_sizes(torch.tensor([7, -3, 7, 7])).tolist()
    [3, 1, 3, 3]
    """
    (x,) = _c.arrays("cluster_sizes", ids)
    h = _c.hypers("cluster_sizes", num_clusters=num_clusters)
    _c.data_checks("cluster_sizes", ids=x, num_clusters=h["num_clusters"])
    return sizes(x, h["num_clusters"])


def mean_kept(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Masked mean of validated tensors (float values; half precision sums in float32)."""
    acc = _c.compute_dtype(values.dtype)
    mask = mask.expand(torch.broadcast_shapes(values.shape, mask.shape))  # count every kept t
    total = torch.where(mask, values.to(acc), torch.zeros((), dtype=acc)).sum(-1)
    count = mask.sum(-1).clamp(min=1).to(acc)
    return (total / count).to(values.dtype)


def masked_mean(values: Any, mask: Any) -> torch.Tensor:
    """Mean over the last axis of the kept entries; 0 for empty rows.

    ``mean_i = sum_t m_it x_it / max(1, sum_t m_it)``

    G-Zero: Self-Play for Open-Ended Generation from Zero Data (Chengsong Huang et al., 2026),
    §3.1, the token average of Hint-delta, https://arxiv.org/abs/2605.09959.  Output ``[...]``:
    the dtype of float ``values``; float64 for integers (float32 in JAX with x64 off);
    differentiable in ``values``.

    >>> import torch, zero_torch
    >>> v = torch.tensor([[1.0, 2.0, 6.0]]); m = torch.tensor([[True, False, True]])
    >>> zero_torch.masked_mean(v, m).tolist()
    [3.5]
    """
    v, m = _c.arrays("masked_mean", values, mask)
    if not v.dtype.is_floating_point:
        v = v.to(torch.float64)
    return mean_kept(v, m)
