"""Shared voting and grouping primitives of the PyTorch reference (mirrors
``zero_jax.primitives``).  Inputs are assumed validated by the caller."""

from __future__ import annotations

import torch

__all__ = ["VOTE_METHODS", "choose_vote_method", "cluster_sizes", "majority_vote", "masked_mean"]

VOTE_METHODS = ("auto", "one_hot", "segment_sum", "pairwise")


def choose_vote_method(method: str, num_answers: int, k: int) -> str:
    """``"auto"`` counts over the alphabet only when ``num_answers <= K``."""
    if method != "auto":
        return method
    return "one_hot" if num_answers <= k else "pairwise"


def majority_vote(
    answers: torch.Tensor, num_answers: int, method: str = "auto"
) -> tuple[torch.Tensor, torch.Tensor]:
    """Majority id of each row of ``answers`` ``[B, K]`` (ties: smallest id) and its count."""
    method = choose_vote_method(method, num_answers, answers.shape[1])
    if method == "pairwise":
        counts = (answers[:, :, None] == answers[:, None, :]).sum(-1)
        top = counts.max(dim=1).values
        big = torch.iinfo(answers.dtype).max
        tied = torch.where(counts == top[:, None], answers, torch.full_like(answers, big))
        return tied.min(dim=1).values, top
    # "one_hot" and "segment_sum" both count into a [B, num_answers] table.
    table = torch.zeros(answers.shape[0], num_answers, dtype=torch.int64, device=answers.device)
    table.scatter_add_(1, answers.long(), torch.ones_like(answers, dtype=torch.int64))
    top = table.max(dim=1).values
    # argmax returns the first maximum, i.e. the smallest tied id.
    return table.argmax(dim=1).to(answers.dtype), top


def cluster_sizes(ids: torch.Tensor, num_clusters: int | None = None) -> torch.Tensor:
    """``sizes[i] = #{j : ids[j] == ids[i]}`` over the whole batch (int64 ``[B]``)."""
    if num_clusters is not None:
        return torch.bincount(ids.long(), minlength=num_clusters)[ids.long()]
    _, inverse, counts = torch.unique(ids, return_inverse=True, return_counts=True)
    return counts[inverse]


def masked_mean(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean over the last axis where ``mask`` holds; 0 (with zero gradient) for empty rows."""
    total = torch.where(mask, values, torch.zeros((), dtype=values.dtype)).sum(-1)
    count = mask.sum(-1).clamp(min=1).to(values.dtype)
    return total / count
