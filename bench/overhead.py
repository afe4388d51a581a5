"""The overhead report: the public ``zero_jax`` call against a plain ``jax.jit`` of the
same math, for a few representative functions at B >= 4,096.

Two hand-written versions per function, for the bench's cases (default
hyper-parameters, x64 on), with no validation:

* :func:`plain`, the same math: what the contract says the call computes, written the
  plain way (one ``jax.jit``, no call path): the same values on valid data and the same
  NaN / -1 where the data break a rule, the same numerics conventions (the exact
  ``2 min(p, 1 - p)``, group advantages computed on the rewards times a power of two,
  from a corrected two-pass mean).  ``public / plain`` is the cost of the call path
  (argument checks in Python, the kernel's dispatch) and of any difference in how the
  library's kernel is written; the target is on this ratio.
* :func:`naive`, the obvious formula a user might write first: no invalid-data
  rule, no care at extreme values (``1 - 2 |p - 1/2|``, one-pass std).  ``public /
  naive`` is reported beside it: what the library's conventions cost, not a target.

``python -m bench`` times each covered case in the ``jax`` worker side by side with both,
on the same device buffers (:func:`bench.worker.measure_paired`); the report gives the
medians of the per-loop ratios.  ``parity_tests/test_bench_overhead.py`` checks that
:func:`plain` gives the public outputs on the bench's inputs and on invalid and extreme
ones, and :func:`naive` on the bench's inputs, so that each ratio compares the stated
work.  Neither is a copy of the library's kernels (they share no code with them).  The
report reports; it does not prescribe how the library is built.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

__all__ = ["FUNCTIONS", "MIN_B", "covers", "naive", "plain"]

#: The functions with a plain version: a trivial elementwise reward, the challenger
#: with cluster sizes (dense ids), a vote, and group advantages.
FUNCTIONS = ("uncertainty_reward", "challenger_rewards", "consensus", "group_advantages")
#: Cases are paired from this batch size up (below it the fixed cost of any call dominates).
MIN_B = 4096


def covers(case: Any) -> bool:
    """Whether ``case`` (a :class:`bench.cases.Case`) is timed against a plain jit."""
    if case.fn not in FUNCTIONS or case.B < MIN_B or case.kind is not None:
        return False  # a kind (the RLOO preset, ...) is not what the plain version computes
    return case.fn != "challenger_rewards" or case.ids == "dense"


#: The static arguments of each function's jit.
STATIC = {"challenger_rewards": ("num_clusters",), "consensus": ("num_answers",)}


def _jit(fn: str, defined: dict[str, Any]) -> Callable[..., Any]:
    import jax

    return jax.jit(defined[fn], static_argnames=STATIC.get(fn, ()))


@functools.cache
def plain(fn: str) -> Callable[..., Any]:
    """The plain ``jax.jit`` of ``fn``'s math as the contract states it, invalid-data rule
    and numerics conventions included (imports JAX on first use; one jit object per
    function, kept for the process)."""
    import jax.numpy as jnp

    def uncertainty_reward(consistency):
        p = consistency
        return jnp.where((p >= 0) & (p <= 1), 2 * jnp.minimum(p, 1 - p), jnp.nan)

    def challenger_rewards(consistency, clusters, valid, strength=1.0, *, num_clusters):
        p = consistency
        known = (clusters >= 0) & (clusters < num_clusters)
        slot = jnp.where(known, clusters, num_clusters)  # invalid ids share a spare slot
        sizes = jnp.bincount(slot, length=num_clusters + 1)[slot]
        share = sizes.astype(p.dtype) / p.shape[0]
        reward = jnp.maximum(0, 2 * jnp.minimum(p, 1 - p) - strength * share)
        reward = jnp.where(valid, reward, 0)
        strength = jnp.asarray(strength)
        bad = ~((p >= 0) & (p <= 1)) | ~known | ~(jnp.isfinite(strength) & (strength >= 0))
        return jnp.where(bad, jnp.nan, reward).astype(p.dtype)

    def consensus(answers, num_answers):
        counts = jnp.sum(answers[:, :, None] == answers[:, None, :], axis=-1)
        top = jnp.max(counts, axis=-1)
        best = jnp.where(counts == top[:, None], answers, num_answers)
        bad = jnp.any((answers < 0) | (answers >= num_answers), axis=-1)
        labels = jnp.where(bad, -1, jnp.min(best, axis=-1))
        return labels, jnp.where(bad, jnp.nan, top / answers.shape[-1])

    def group_advantages(rewards, eps=1e-6):
        hi = jnp.max(rewards, axis=-1, keepdims=True)
        lo = jnp.min(rewards, axis=-1, keepdims=True)
        # the rewards times 2^-k, 2^(k-1) <= max |r| < 2^k, so that no sum overflows
        info = jnp.finfo(rewards.dtype)
        top = jnp.maximum(hi, -lo)
        k = jnp.frexp(top)[1]
        k = jnp.where(jnp.isfinite(top) & (top > 0), jnp.clip(k, info.minexp, info.maxexp - 2), 0)
        unit = jnp.ldexp(jnp.ones_like(top), -k)
        x = rewards * unit
        d = x - jnp.mean(x, axis=-1, keepdims=True)
        dev = d - jnp.mean(d, axis=-1, keepdims=True)  # corrected two-pass
        std = jnp.sqrt(jnp.sum(dev**2, axis=-1, keepdims=True) / max(x.shape[-1] - 1, 1))
        adv = dev / (std + eps * unit)
        same = (hi == lo) | (x.shape[-1] <= 1)
        bad = ~(jnp.isfinite(hi) & jnp.isfinite(lo)) | ~(jnp.asarray(eps) >= 0)
        return jnp.where(bad, jnp.nan, jnp.where(same, 0, adv)).astype(rewards.dtype)

    return _jit(fn, locals())


@functools.cache
def naive(fn: str) -> Callable[..., Any]:
    """The obvious ``jax.jit`` of ``fn``'s formula, for valid data only (see the module
    docstring; one jit object per function, kept for the process)."""
    import jax.numpy as jnp

    def uncertainty_reward(consistency):
        return 1 - 2 * jnp.abs(consistency - 0.5)

    def challenger_rewards(consistency, clusters, valid, strength=1.0, *, num_clusters):
        p = consistency
        sizes = jnp.bincount(clusters, length=num_clusters)[clusters]
        share = sizes.astype(p.dtype) / p.shape[0]
        reward = jnp.maximum(0, 1 - 2 * jnp.abs(p - 0.5) - strength * share)
        return jnp.where(valid, reward, 0).astype(p.dtype)

    def consensus(answers, num_answers):
        counts = jnp.sum(answers[:, :, None] == answers[:, None, :], axis=-1)
        top = jnp.max(counts, axis=-1)
        best = jnp.where(counts == top[:, None], answers, num_answers)
        return jnp.min(best, axis=-1), top / answers.shape[-1]

    def group_advantages(rewards):
        mean = jnp.mean(rewards, axis=-1, keepdims=True)
        std = jnp.std(rewards, axis=-1, keepdims=True, ddof=1)
        adv = (rewards - mean) / (std + 1e-6)
        same = jnp.max(rewards, axis=-1, keepdims=True) == jnp.min(rewards, axis=-1, keepdims=True)
        return jnp.where(same, 0, adv).astype(rewards.dtype)

    return _jit(fn, locals())
