"""R-Zero rewards: challenger uncertainty with a repetition penalty (problem 107),
majority-vote pseudo-labels, the informative band and solver rewards (problem 108).

Every function validates ranks, dtypes and concrete hyper-parameters eagerly, then
runs a jit-compiled kernel; all are usable inside ``jit``, ``vmap`` and ``grad``.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
from jax import lax

from zero_jax import _checks as _c
from zero_jax.primitives import VOTE_METHODS, cluster_sizes, exact_div, majority_vote

__all__ = [
    "challenger_rewards",
    "consensus",
    "curriculum_mask",
    "pseudo_rewards",
    "uncertainty_reward",
]

_UNIT = "{} must lie in [0, 1]"


def _triangle(p: jax.Array) -> jax.Array:
    return 1 - 2 * jnp.abs(p - 0.5)


@functools.partial(jax.jit, static_argnames=("checked",))
def _uncertainty(p: jax.Array, checked: bool) -> jax.Array:
    _c.check(checked, (p >= 0) & (p <= 1), _UNIT.format("consistency"))
    return lax.stop_gradient(_triangle(p))


def uncertainty_reward(consistency: Any) -> jax.Array:
    """Triangular uncertainty of a self-consistency score.

    ``u = 1 - 2 |p - 1/2|``: 1 when the solver splits evenly, 0 when it is
    unanimous (whether right or wrong: agreement is not accuracy).

    Args:
      consistency: float ``[B]``, values in ``[0, 1]``.

    Returns:
      ``[B]`` in the dtype of ``consistency``; gradient-free (``stop_gradient``).
    """
    p = _c.floating("consistency", consistency, 1, "[B]")
    _c.nonempty("consistency", p, "[B]")
    return _uncertainty(p, _c.checking())


@functools.partial(jax.jit, static_argnames=("num_clusters", "checked"))
def _challenger(p, clusters, valid, strength, num_clusters, checked):
    strength = jnp.asarray(strength, p.dtype)
    _c.check(checked, (p >= 0) & (p <= 1), _UNIT.format("consistency"))
    _c.check(checked, strength >= 0, "strength must be a finite number >= 0")
    if num_clusters is not None:
        in_range = (clusters >= 0) & (clusters < num_clusters)
        _c.check(checked, in_range, f"clusters must lie in [0, num_clusters={num_clusters})")
    share = exact_div(cluster_sizes(clusters, num_clusters).astype(p.dtype), p.shape[-1])
    reward = jnp.maximum(0, _triangle(p) - strength * share)
    return lax.stop_gradient(jnp.where(valid, reward, 0))


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
      ``[B]`` in the dtype of ``consistency``; gradient-free.
    """
    p = _c.floating("consistency", consistency, 1, "[B]")
    _c.nonempty("consistency", p, "[B]")
    c = _c.integer("clusters", clusters, 1, "[B]")
    _c.same_shape("clusters", c, "consistency", p)
    v = _c.boolean("valid", valid, 1, "[B]")
    _c.same_shape("valid", v, "consistency", p)
    _c.scalar("strength", strength, 0.0, None, "a finite number >= 0")
    if num_clusters is not None:
        num_clusters = _c.static_count("num_clusters", num_clusters)
    return _challenger(p, c, v, strength, num_clusters, _c.checking())


def _check_answers(answers: Any, name: str = "answers") -> jax.Array:
    a = _c.integer(name, answers, 2, "[B, K]")
    _c.nonempty(name, a, "[B, K]")
    return a


@functools.partial(jax.jit, static_argnames=("num_answers", "method", "checked"))
def _consensus(answers, num_answers, method, checked):
    in_range = (answers >= 0) & (answers < num_answers)
    _c.check(checked, in_range, f"answers must lie in [0, num_answers={num_answers})")
    labels, top = majority_vote(answers, num_answers, method)
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
      when x64 is disabled); gradient-free.
    """
    a = _check_answers(answers)
    num_answers = _c.static_count("num_answers", num_answers)
    method = _c.method("method", method, VOTE_METHODS)
    return _consensus(a, num_answers, method, _c.checking())


@functools.partial(jax.jit, static_argnames=("checked",))
def _band(p, low, high, checked):
    low = jnp.asarray(low, p.dtype)
    high = jnp.asarray(high, p.dtype)
    _c.check(checked, (p >= 0) & (p <= 1), _UNIT.format("consistency"))
    _c.check(checked, (low >= 0) & (low <= high) & (high <= 1), "need 0 <= low <= high <= 1")
    return (p >= low) & (p <= high)


def curriculum_mask(consistency: Any, low: float = 0.25, high: float = 0.75) -> jax.Array:
    """Informative band: keep questions with ``low <= p_i <= high`` (both ends kept).

    Args:
      consistency: float ``[B]`` in ``[0, 1]``.
      low, high: band edges with ``0 <= low <= high <= 1`` (floats or traced scalars),
        compared in the dtype of ``consistency``.

    Returns:
      bool ``[B]``.
    """
    p = _c.floating("consistency", consistency, 1, "[B]")
    _c.nonempty("consistency", p, "[B]")
    lo = _c.scalar("low", low, 0.0, 1.0, "in [0, 1]")
    hi = _c.scalar("high", high, 0.0, 1.0, "in [0, 1]")
    if lo is not None and hi is not None and lo > hi:
        raise ValueError(f"need 0 <= low <= high <= 1, got low={lo!r} > high={hi!r}")
    return _band(p, low, high, _c.checking())


@jax.jit
def _pseudo(answers, labels):
    return (answers == labels[..., None]).astype(_c.float_dtype())


def pseudo_rewards(answers: Any, labels: Any) -> jax.Array:
    """Agreement of fresh answers with frozen pseudo-labels.

    ``r_ij = 1[a_ij == y_i]``.  ``labels`` must come from an earlier vote; the
    fresh answers are never re-voted (that would move the training target).

    Args:
      answers: integer ``[B, K]`` fresh answer ids.
      labels: integer ``[B]`` frozen labels.

    Returns:
      float64 ``[B, K]`` (float32 when x64 is disabled).
    """
    a = _check_answers(answers)
    y = _c.integer("labels", labels, 1, "[B]")
    _c.same_batch("labels", y, "answers", a)
    return _pseudo(a, y)
