"""EMPO's semantic-cluster reward and entropy filter, PyTorch reference (Zhang et al.,
2025, arXiv:2504.05812, §3).  Mirrors ``zero_jax.empo``."""

from __future__ import annotations

import math

import torch

from zero_torch import _checks as _c
from zero_torch._checks import Real

__all__ = ["semantic_cluster_rewards", "semantic_entropy_filter"]


def _row_counts(clusters: torch.Tensor) -> torch.Tensor:
    """``n_ij``: how many ids of row i equal ``clusters[i, j]`` (int64)."""
    return _c.ids_equal(clusters[:, :, None], clusters[:, None, :]).sum(-1)


@torch.no_grad()
def semantic_cluster_rewards(clusters: torch.Tensor, answered: torch.Tensor) -> torch.Tensor:
    """EMPO's reward: each response is paid its semantic cluster's share of the group.

    ``r_ij = answered_ij n_i(c_ij) / K, n_i(c) = #{k : c_ik = c}``

    Right Question is Already Half the Answer: Fully Unsupervised LLM Reasoning
    Incentivization (Qingyang Zhang et al., 2025), §3, semantic-cluster reward (the
    published code's semantic_entropy_math_reward), https://arxiv.org/abs/2504.05812.
    Output ``[B, K]``: float64 (float32 in JAX with x64 off); detached (no gradient).

    ``clusters`` ``[B, K]``: any integer cluster ids per row (equal ids, compared
    exactly, are one cluster); every response counts as one of the K, and
    ``answered`` ``[B, K]`` (bool) only gates the payment: a response without an
    answer earns 0, as in the published code.

    >>> import torch, zero_torch
    >>> c = torch.tensor([[0, 0, 1, 0]])
    >>> zero_torch.semantic_cluster_rewards(c, torch.tensor([[True, True, True, False]])).tolist()
    [[0.75, 0.75, 0.25, 0.0]]
    """
    c, a = _c.arrays("semantic_cluster_rewards", clusters, answered)
    share = _row_counts(c).to(torch.float64) / c.shape[1]
    return torch.where(a, share, torch.zeros_like(share))


@torch.no_grad()
def semantic_entropy_filter(clusters: torch.Tensor, max_entropy: Real = 1.0) -> torch.Tensor:
    """EMPO's prompt filter: keep the groups whose semantic entropy is low enough.

    ``keep_i = H_i < max_entropy log K, H_i = -sum_c (n_ic / K) log(n_ic / K)``

    Right Question is Already Half the Answer: Fully Unsupervised LLM Reasoning
    Incentivization (Qingyang Zhang et al., 2025), §3, entropy thresholding (the
    published code keeps H_i < log K), https://arxiv.org/abs/2504.05812.  Output
    ``[B]``: bool; detached (no gradient).

    ``H_i`` in nats over the cluster shares of row i; ``max_entropy`` in [0, 1] is the
    threshold as a fraction of ``log K`` (default 1: the published
    ``total_entropy < math.log(n_generations)``, exact: a row is dropped only when
    its K answers are all different).  Computed as ``sum_c n_ic log n_ic > K (1 -
    max_entropy) log K``.

    >>> import torch, zero_torch
    >>> c = torch.tensor([[0, 0, 1, 2], [0, 1, 2, 3], [5, 5, 5, 5]])
    >>> zero_torch.semantic_entropy_filter(c).tolist()
    [True, False, True]
    """
    (c,) = _c.arrays("semantic_entropy_filter", clusters)
    h = _c.hypers("semantic_entropy_filter", max_entropy=max_entropy)
    k = c.shape[1]
    mass = torch.log(_row_counts(c).to(torch.float64)).sum(-1)
    keep: torch.Tensor = mass > k * (1 - h["max_entropy"]) * math.log(k)
    return keep
