"""EMPO's semantic-cluster reward and its entropy filter of prompts.

From *Right Question is Already Half the Answer: Fully Unsupervised LLM Reasoning
Incentivization* (Zhang et al., 2025, https://arxiv.org/abs/2504.05812), §3, as the
published code (QingyangZhang/EMPO, ``trl/src/open_r1/rewards.py``,
``semantic_entropy_math_reward``) computes it: each of a prompt's K responses is paid
the share of the K responses in its semantic cluster, and a prompt whose cluster
entropy (natural log) is not below ``log K`` pays nothing.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from jax import lax
from jax.sharding import reshard
from jax.typing import ArrayLike

from zero_jax import _checks as _c
from zero_jax.primitives import _gather, exact_div, ids_equal

__all__ = ["semantic_cluster_rewards", "semantic_entropy_filter"]


def _row_counts(clusters: jax.Array) -> jax.Array:
    """``n_ij``: how many of row i's K ids equal ``clusters[i, j]`` (int32).  A row
    sharded over its K responses is gathered (an explicit mesh refuses the pairwise
    comparison of a sharded axis with itself) and the counts sharded back."""
    c, sharding = _gather(clusters, last=True)
    same = ids_equal(c[..., :, None], c[..., None, :])
    counts = jnp.sum(same, axis=-1, dtype=jnp.int32)
    return counts if sharding is None else reshard(counts, sharding)


def semantic_cluster_rewards(clusters: Any, answered: Any) -> jax.Array:
    """EMPO's reward: each response is paid its semantic cluster's share of the group.

    ``r_ij = answered_ij n_i(c_ij) / K, n_i(c) = #{k : c_ik = c}``

    Right Question is Already Half the Answer: Fully Unsupervised LLM Reasoning
    Incentivization (Qingyang Zhang et al., 2025), §3, semantic-cluster reward (the
    published code's semantic_entropy_math_reward), https://arxiv.org/abs/2504.05812.
    Output ``[B, K]``: float64 (float32 in JAX with x64 off); detached (no gradient).

    ``clusters[i]`` are the semantic-cluster ids of prompt i's K responses (any
    integers; equal ids, compared exactly across dtypes, are one cluster: give each
    response the id of the first response it is equivalent to, e.g. by math-verify).
    Every response counts as one of the K, as in the published code, and
    ``answered`` only gates the payment: a response with no extracted answer earns 0
    (give it an id of its own, or the id the published code's clustering gives the
    empty answer).  Combine with :func:`semantic_entropy_filter` for EMPO's entropy
    thresholding.

    Args:
      clusters: integer ``[B, K]`` cluster ids.
      answered: bool ``[B, K]``, False for a response without an answer.

    Returns:
      ``[B, K]`` shares in ``[0, 1]``.

    >>> import jax.numpy as jnp, zero_jax
    >>> c = jnp.array([[0, 0, 1, 0]])
    >>> zero_jax.semantic_cluster_rewards(c, jnp.array([[True, True, True, False]])).tolist()
    [[0.75, 0.75, 0.25, 0.0]]
    """
    c, a = _c.arrays("semantic_cluster_rewards", clusters, answered)
    return _cluster_rewards(c, a)


@_c.kernel("semantic_cluster_rewards")
def _cluster_rewards(clusters: jax.Array, answered: jax.Array) -> jax.Array:
    fl = _c.float_dtype()
    share = exact_div(_row_counts(clusters).astype(fl), clusters.shape[-1])  # as numpy
    return lax.stop_gradient(jnp.where(answered, share, jnp.zeros((), fl)))


def semantic_entropy_filter(clusters: Any, max_entropy: ArrayLike = 1.0) -> jax.Array:
    """EMPO's prompt filter: keep the groups whose semantic entropy is low enough.

    ``keep_i = H_i < max_entropy log K, H_i = -sum_c (n_ic / K) log(n_ic / K)``

    Right Question is Already Half the Answer: Fully Unsupervised LLM Reasoning
    Incentivization (Qingyang Zhang et al., 2025), §3, entropy thresholding (the
    published code keeps H_i < log K), https://arxiv.org/abs/2504.05812.  Output
    ``[B]``: bool; detached (no gradient).

    ``H_i`` is the entropy in nats of the cluster shares of row i's K responses
    (``clusters`` as in :func:`semantic_cluster_rewards`); ``max_entropy`` is the
    threshold as a fraction of the largest possible entropy, ``log K``.  The default
    1 is the published code's ``total_entropy < math.log(n_generations)``: it drops
    only the groups whose K answers are all different (and every group of K = 1).
    The comparison is exact at that default (``H_i < log K`` exactly when two
    responses share a cluster), computed as ``sum_c n_ic log n_ic > K (1 -
    max_entropy) log K``.  Multiply the rewards by the mask (the published code pays
    0 to a dropped group) or drop the groups from the batch.

    Args:
      clusters: integer ``[B, K]`` cluster ids.
      max_entropy: real in ``[0, 1]`` (traceable; NaN or outside keeps nothing).

    Returns:
      ``[B]`` bool, True for a prompt to keep.

    >>> import jax.numpy as jnp, zero_jax
    >>> c = jnp.array([[0, 0, 1, 2], [0, 1, 2, 3], [5, 5, 5, 5]])
    >>> zero_jax.semantic_entropy_filter(c).tolist()
    [True, False, True]
    >>> zero_jax.semantic_entropy_filter(c, 0.5).tolist()
    [False, False, True]
    """
    (c,) = _c.arrays("semantic_entropy_filter", clusters)
    h = _c.hypers("semantic_entropy_filter", max_entropy=max_entropy)
    return _entropy_filter(c, **h)


@_c.kernel("semantic_entropy_filter")
def _entropy_filter(clusters: jax.Array, max_entropy: float | jax.Array) -> jax.Array:
    bad = _c.invalid("semantic_entropy_filter", clusters=clusters, max_entropy=max_entropy)
    fl = _c.float_dtype()
    k = clusters.shape[-1]
    # sum over the responses of log n_ij = sum over the clusters of n_c log n_c; it is
    # 0 exactly when every cluster is a singleton (H = log K)
    mass = jnp.sum(jnp.log(_row_counts(clusters).astype(fl)), axis=-1)
    bound = k * (1 - jnp.asarray(max_entropy, fl)) * jnp.log(jnp.asarray(k, fl))
    return lax.stop_gradient((mass > bound) & ~_c.hyper_rules(bad))
