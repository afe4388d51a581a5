"""Shared voting and grouping primitives (used by R-Zero and MM-Zero rewards).

* :func:`majority_vote` -- per-row majority answer with smallest-id ties, by one-hot
  counting, ``segment_sum`` counting, or a within-row pairwise comparison.
* :func:`cluster_sizes` -- how many entries of a batch share each entry's cluster id.
* :func:`masked_mean` -- mean over the last axis of the entries a bool mask keeps.

All functions are traceable (use them inside ``jit``/``vmap``/``grad``); inputs are
assumed valid -- the public rewards validate before calling them.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax
from jax.sharding import NamedSharding, PartitionSpec, reshard

__all__ = [
    "VOTE_METHODS",
    "choose_vote_method",
    "cluster_sizes",
    "exact_div",
    "majority_vote",
    "masked_mean",
]

VOTE_METHODS = ("auto", "one_hot", "segment_sum", "pairwise")


def exact_div(numerator: jax.Array, denominator: jax.Array | float) -> jax.Array:
    """``numerator / denominator`` correctly rounded, as NumPy and torch compute it.

    XLA rewrites a division by a broadcast value into a multiplication by its
    reciprocal, which is off by one ulp for many quotients (``3 / 5`` gives
    ``0.6000000000000001``).  Vote shares are compared with band edges such as 0.6
    or 0.8, so that ulp would move a question out of the band.  The barrier keeps
    the broadcast divisor opaque and the division exact.
    """
    den = jnp.broadcast_to(jnp.asarray(denominator, numerator.dtype), numerator.shape)
    return numerator / lax.optimization_barrier(den)


def choose_vote_method(method: str, num_answers: int, k: int) -> str:
    """Resolve ``"auto"``: count over the alphabet only when it is no wider than a row.

    Counting costs ``O(B * num_answers)``; the pairwise comparison costs
    ``O(B * K^2)`` and never depends on ``num_answers``.  Counting is used only
    when ``num_answers <= K``, so "auto" never allocates a table that grows with a
    large answer vocabulary.
    """
    if method != "auto":
        return method
    return "one_hot" if num_answers <= k else "pairwise"


def majority_vote(
    answers: jax.Array, num_answers: int, method: str = "auto"
) -> tuple[jax.Array, jax.Array]:
    """Majority answer per row of ``answers`` ``[B, K]`` and its vote count.

    Returns ``(labels [B], top_count [B] int32)``; ties go to the smallest id.
    """
    k = answers.shape[-1]
    method = choose_vote_method(method, num_answers, k)
    if method == "pairwise":
        # counts[b, j] = number of samples in row b equal to sample j.
        same = answers[..., :, None] == answers[..., None, :]
        counts = jnp.sum(same, axis=-1, dtype=jnp.int32)
        top = jnp.max(counts, axis=-1)
        big = jnp.iinfo(answers.dtype).max
        labels = jnp.min(jnp.where(counts == top[..., None], answers, big), axis=-1)
        return labels, top
    if method == "one_hot":
        ids = jnp.arange(num_answers, dtype=answers.dtype)
        table = jnp.sum(answers[..., :, None] == ids, axis=-2, dtype=jnp.int32)
    elif method == "segment_sum":
        b = answers.shape[0]
        rows = jnp.arange(b, dtype=answers.dtype)[:, None] * num_answers
        flat = (rows + answers).reshape(-1)
        ones = jnp.ones(flat.shape, jnp.int32)
        table = jax.ops.segment_sum(ones, flat, num_segments=b * num_answers)
        table = table.reshape(b, num_answers)
    else:
        raise ValueError(f"method must be one of {VOTE_METHODS}, got {method!r}")
    # argmax returns the first maximum: the smallest id among tied answers.
    return jnp.argmax(table, axis=-1).astype(answers.dtype), jnp.max(table, axis=-1)


def cluster_sizes(ids: jax.Array, num_clusters: int | None = None) -> jax.Array:
    """``sizes[i] = #{j : ids[j] == ids[i]}`` over the whole 1-D batch, int32 ``[B]``.

    With ``num_clusters`` (dense ids in ``[0, num_clusters)``) this is a bincount,
    ``O(B + num_clusters)``.  Without it ids are arbitrary integers (negative,
    sparse, 64-bit) and sizes come from one sort and two binary searches,
    ``O(B log B)``.
    """
    ids, sharding = _gather(ids)
    if num_clusters is not None:
        counts = jnp.zeros((num_clusters,), jnp.int32).at[ids].add(1, mode="drop")
        sizes = counts[ids]
    else:
        ordered = jnp.sort(ids)
        left = jnp.searchsorted(ordered, ids, side="left", method="sort")
        right = jnp.searchsorted(ordered, ids, side="right", method="sort")
        sizes = (right - left).astype(jnp.int32)
    return sizes if sharding is None else reshard(sizes, sharding)


def _gather(x: jax.Array) -> tuple[jax.Array, NamedSharding | None]:
    """Replicate ``x`` if it is explicitly sharded (a batch-wide count needs every id).

    Under explicit-sharding meshes, sort and scatter refuse a sharded operand; the
    ids are gathered (they are small next to the activations) and the sizes are
    sharded back like the input.  Auto-sharded and unsharded inputs pass through.
    """
    sharding = getattr(jax.typeof(x), "sharding", None)
    if isinstance(sharding, NamedSharding) and any(s is not None for s in sharding.spec):
        return reshard(x, NamedSharding(sharding.mesh, PartitionSpec())), sharding
    return x, None


def masked_mean(values: jax.Array, mask: jax.Array) -> jax.Array:
    """Mean over the last axis of ``values`` where ``mask`` is True; 0 for empty rows.

    Masked entries contribute exactly zero value and zero gradient, and an
    all-masked row returns 0 with a zero (finite) gradient.
    """
    kept = jnp.where(mask, values, jnp.zeros((), values.dtype))
    total = jnp.sum(kept, axis=-1)
    count = jnp.sum(mask, axis=-1, dtype=values.dtype)
    return total / jnp.maximum(count, 1)
