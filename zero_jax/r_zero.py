"""R-Zero rewards: challenger uncertainty with a repetition penalty, majority-vote
pseudo-labels, the informative band and solver rewards.

From *R-Zero: Self-Evolving Reasoning LLM from Zero Data* (Huang et al., 2025,
https://arxiv.org/abs/2508.05004), Sections 2.2-2.4.  Every function validates
kinds, shapes and concrete hyper-parameters when it is traced (the contracts are
in :mod:`zero_contracts`), then runs a jit-compiled kernel; all are usable inside
``jit``, ``vmap`` and ``grad``.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from jax import lax

from zero_jax import _checks as _c
from zero_jax.primitives import exact_div, ids_equal, sizes, vote

__all__ = [
    "challenger_rewards",
    "consensus",
    "curriculum_mask",
    "pseudo_rewards",
    "uncertainty_reward",
]


def _triangle(p: jax.Array) -> jax.Array:
    return 1 - 2 * jnp.abs(p - 0.5)


@_c.kernel("uncertainty_reward")
def _uncertainty(p: jax.Array) -> jax.Array:
    _c.data_checks("uncertainty_reward", consistency=p)
    x = p.astype(_c.compute_dtype(p.dtype))
    return lax.stop_gradient(_triangle(x).astype(p.dtype))


def uncertainty_reward(consistency: Any) -> jax.Array:
    """Triangular uncertainty of a self-consistency score.

    ``u = 1 - 2 |p - 1/2|``: 1 when the solver splits evenly, 0 when it is
    unanimous (whether right or wrong: agreement is not accuracy).

    Args:
      consistency: float ``[B]``, values in ``[0, 1]``.

    Returns:
      ``[B]`` in the dtype of ``consistency``; gradient-free (``stop_gradient``).

    >>> import jax.numpy as jnp, zero_jax
    >>> zero_jax.uncertainty_reward(jnp.array([0.5, 0.75, 1.0])).tolist()
    [1.0, 0.5, 0.0]
    """
    (p,) = _c.arrays("uncertainty_reward", consistency)
    return _uncertainty(p)


@_c.kernel("challenger_rewards", static_argnames=("num_clusters",))
def _challenger(
    p: jax.Array,
    clusters: jax.Array,
    valid: jax.Array,
    strength: float | jax.Array,
    num_clusters: int | None,
) -> jax.Array:
    _c.data_checks(
        "challenger_rewards",
        consistency=p,
        clusters=clusters,
        strength=strength,
        num_clusters=num_clusters,
    )
    dtype = _c.compute_dtype(p.dtype)  # counts and B never pass through float16
    share = exact_div(sizes(clusters, num_clusters).astype(dtype), p.shape[-1])
    reward = jnp.maximum(0, _triangle(p.astype(dtype)) - jnp.asarray(strength, dtype) * share)
    return lax.stop_gradient(jnp.where(valid, reward, 0).astype(p.dtype))


def challenger_rewards(
    consistency: Any,
    clusters: Any,
    valid: Any,
    strength: float = 1.0,
    *,
    num_clusters: int | None = None,
) -> jax.Array:
    """R-Zero challenger reward: uncertainty minus a repetition penalty, format-gated.

    ``r_i = valid_i * max(0, 1 - 2|p_i - 1/2| - strength * |C_i| / B)``, where
    ``|C_i|`` counts the proposals of the whole batch (valid or not) that share
    proposal ``i``'s cluster id and ``B`` is the batch size.

    Args:
      consistency: float ``[B]`` in ``[0, 1]``, the solver's self-consistency.
      clusters: integer ``[B]`` cluster ids; any integers (negative, sparse, 64-bit).
      valid: bool ``[B]``, the format gate.
      strength: repetition-penalty weight ``>= 0`` (Python float or traced scalar).
      num_clusters: optional static int; when given, ids must be dense in
        ``[0, num_clusters)`` (as ``zero_text.bleu_clusters`` returns) and sizes are
        one bincount, ``O(B + num_clusters)``, instead of hashing rounds.

    Returns:
      ``[B]`` in the dtype of ``consistency`` (half precision is computed in
      float32 and rounded once); gradient-free.

    >>> import jax.numpy as jnp, zero_jax
    >>> p = jnp.array([0.5, 0.5, 0.75, 1.0])
    >>> ids = jnp.array([0, 0, 1, 2]); valid = jnp.array([True, True, True, False])
    >>> zero_jax.challenger_rewards(p, ids, valid).tolist()
    [0.5, 0.5, 0.25, 0.0]
    """
    p, c, v = _c.arrays("challenger_rewards", consistency, clusters, valid)
    h = _c.hypers("challenger_rewards", strength, num_clusters)
    return h.call(_challenger, p, c, v)


@_c.kernel("consensus", static_argnames=("num_answers", "method"))
def _consensus(answers: jax.Array, num_answers: int, method: str) -> tuple[jax.Array, jax.Array]:
    _c.label_range("num_answers", answers, num_answers)
    _c.data_checks("consensus", answers=answers, num_answers=num_answers)
    labels, top = vote(answers, num_answers, method)
    consistency = exact_div(top.astype(_c.float_dtype()), answers.shape[-1])
    return labels.astype(_c.int_dtype()), lax.stop_gradient(consistency)


def consensus(
    answers: Any, num_answers: int, *, method: str = "auto"
) -> tuple[jax.Array, jax.Array]:
    """Majority-vote pseudo-label and self-consistency of each question's K answers.

    ``y_i = argmax_c n_ic`` (ties: smallest id), ``p_i = max_c n_ic / K``, where
    ``n_ic`` counts the K answers of row ``i`` equal to ``c``.  All K answers
    count.  With ids assigned in order of first appearance (as
    ``zero_text.group_answers`` does) the smallest-id tie is the first-seen tie.

    Args:
      answers: integer ``[B, K]`` answer ids in ``[0, num_answers)``.
      num_answers: static size of the answer alphabet.
      method: ``"auto"`` (default), ``"one_hot"``, ``"segment_sum"`` (both count over
        ``[B, num_answers]``) or ``"pairwise"`` (``[B, K, K]``, independent of
        ``num_answers``).  ``"auto"`` counts only when ``num_answers < K``.

    Returns:
      ``(labels, consistency)``: int64 ``[B]`` and float64 ``[B]`` (int32 / float32
      when x64 is disabled; a ``num_answers`` whose labels int32 cannot hold is
      then a ``ValueError``); gradient-free.

    >>> import jax.numpy as jnp, zero_jax
    >>> labels, p = zero_jax.consensus(jnp.array([[2, 1, 1, 0]]), 3)
    >>> labels.tolist(), p.tolist()
    ([1], [0.5])
    """
    (a,) = _c.arrays("consensus", answers)
    h = _c.hypers("consensus", num_answers, method)
    return h.call(_consensus, a)


@_c.kernel("curriculum_mask")
def _band(p: jax.Array, low: float | jax.Array, high: float | jax.Array) -> jax.Array:
    _c.data_checks("curriculum_mask", consistency=p, low=low, high=high)
    return (p >= jnp.asarray(low, p.dtype)) & (p <= jnp.asarray(high, p.dtype))


def curriculum_mask(consistency: Any, low: float = 0.25, high: float = 0.75) -> jax.Array:
    """Informative band: keep questions with ``low <= p_i <= high`` (both ends kept).

    Args:
      consistency: float ``[B]`` in ``[0, 1]``.
      low, high: band edges with ``0 <= low <= high <= 1`` (floats or traced scalars),
        compared in the dtype of ``consistency``.

    Returns:
      bool ``[B]``.

    >>> import jax.numpy as jnp, zero_jax
    >>> zero_jax.curriculum_mask(jnp.array([0.2, 0.25, 0.5, 0.75, 0.8])).tolist()
    [False, True, True, True, False]
    """
    (p,) = _c.arrays("curriculum_mask", consistency)
    h = _c.hypers("curriculum_mask", low, high)
    return h.call(_band, p)


@_c.kernel("pseudo_rewards")
def _pseudo(answers: jax.Array, labels: jax.Array) -> jax.Array:
    return ids_equal(answers, labels[..., None]).astype(_c.float_dtype())


def pseudo_rewards(answers: Any, labels: Any) -> jax.Array:
    """Agreement of fresh answers with frozen pseudo-labels.

    ``r_ij = 1[a_ij == y_i]``, compared exactly whatever the two integer dtypes.
    ``labels`` must come from an earlier vote; the fresh answers are never
    re-voted (that would move the training target).

    Args:
      answers: integer ``[B, K]`` fresh answer ids.
      labels: integer ``[B]`` frozen labels.

    Returns:
      float64 ``[B, K]`` (float32 when x64 is disabled).

    >>> import jax.numpy as jnp, zero_jax
    >>> zero_jax.pseudo_rewards(jnp.array([[3, 1, 3]]), jnp.array([3])).tolist()
    [[1.0, 0.0, 1.0]]
    """
    a, y = _c.arrays("pseudo_rewards", answers, labels)
    return _pseudo(a, y)
