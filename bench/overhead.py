"""The overhead report: the public ``zero_jax`` call against a plain ``jax.jit`` of the
same math, for a few representative functions at B >= 4,096.

The plain versions below are what a user would write by hand for the bench's cases
(default hyper-parameters, valid data, x64 on): no validation, no conventions beyond
what these inputs need.  ``python -m bench`` times each covered case in the ``jax``
worker side by side with the public call, on the same device buffers
(:func:`bench.worker.measure_paired`); the report gives the median of the per-pair
ratios public / plain.  ``parity_tests/test_bench_overhead.py`` checks that the plain
versions give the public outputs on the bench's inputs, so that the ratio compares the
same work.

The plain versions are deliberately the obvious code, not a copy of the library's
kernels (which would have to follow every change of the library): a ratio near 1 says
the call path costs nothing where the work matters; below 1, the library's kernel beats
the obvious one (the vote's single packed reduction, for instance); above the target,
either the call path or the library's kernel is slower than what a user would write.
It reports; it does not prescribe how the library is built.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

__all__ = ["FUNCTIONS", "MIN_B", "covers", "plain"]

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


@functools.cache
def plain(fn: str) -> Callable[..., Any]:
    """The plain ``jax.jit`` of ``fn``'s math (imports JAX on first use; one jit object
    per function, kept for the process)."""
    import jax
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

    kernels: dict[str, Callable[..., Any]] = {
        "uncertainty_reward": jax.jit(uncertainty_reward),
        "challenger_rewards": jax.jit(challenger_rewards, static_argnames=("num_clusters",)),
        "consensus": jax.jit(consensus, static_argnames=("num_answers",)),
        "group_advantages": jax.jit(group_advantages),
    }
    return kernels[fn]
