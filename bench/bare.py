"""Bare kernels: the math of every public ``zero_jax`` reward as one plain ``jax.jit``
each, written for the bench with no validation, no hyper-parameter checks and no
Python work per call.  The bench times them next to the public calls (backend
``jax_bare``); the ratio public / bare is what the library's own call machinery costs.

Same algorithms as the library (pairwise vote with a packed (count, -id) key, bincount
or hashed cluster sizes, one variadic reduction for masked means and group statistics,
correctly rounded divisions), so that the ratio measures overhead, not a different
method (the vote is the pairwise one at every alphabet: the library's ``"auto"`` picks it
whenever ``num_answers >= K``, as in every bench case; group advantages take the
row-statistics path the library takes below 2^18 groups, and the bench times bare kernels
at B <= 65,536).  ``parity_tests/test_bench_bare.py`` checks that outputs equal
``zero_jax``'s.

Signatures and defaults are the public ones; ``num_answers`` / ``num_clusters`` are
static.  Expects x64 on (the bench's setting), as the contract dtypes do.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

__all__ = [
    "challenger_rewards",
    "coder_rewards",
    "consensus",
    "curriculum_mask",
    "group_advantages",
    "hint_delta",
    "proposer_rewards",
    "pseudo_rewards",
    "solver_rewards",
    "uncertainty_reward",
]


def _div(num, den):
    """``num / den`` as a true division (XLA would multiply by a broadcast reciprocal,
    one ulp off): the divisor is made data-dependent by a select that changes nothing."""
    den = jnp.where(jnp.isnan(num), jnp.ones((), num.dtype), jnp.asarray(den, num.dtype))
    return num / den


def _triangle(p):
    return 1 - 2 * jnp.abs(p - 0.5)


@jax.jit
def uncertainty_reward(consistency):
    return _triangle(consistency)


def _packed(num_answers: int, k: int):
    for dtype, bits in ((jnp.int32, 31), (jnp.int64, 63)):
        shift = bits - int(k).bit_length()
        if num_answers <= (1 << shift):
            return dtype, shift
    raise ValueError("num_answers too large for a packed key")


def _vote(answers, num_answers: int):
    """Pairwise vote: counts[b, j] = answers of row b equal to answer j; one max over
    ``count << shift | (low - id)`` gives the top count and its smallest id."""
    dtype, shift = _packed(num_answers, answers.shape[-1])
    a = answers.astype(dtype)
    counts = jnp.sum(a[:, :, None] == a[:, None, :], axis=-1, dtype=jnp.int32)
    low = (1 << shift) - 1
    best = jnp.max((counts.astype(dtype) << shift) | (low - a), axis=-1)
    return (low - (best & low)).astype(answers.dtype), (best >> shift).astype(jnp.int32)


@functools.partial(jax.jit, static_argnames=("num_answers",))
def consensus(answers, num_answers):
    labels, top = _vote(answers, num_answers)
    return labels.astype(jnp.int64), _div(top.astype(jnp.float64), answers.shape[-1])


@jax.jit
def curriculum_mask(consistency, low=0.25, high=0.75):
    p = consistency
    return (p >= jnp.asarray(low, p.dtype)) & (p <= jnp.asarray(high, p.dtype))


@jax.jit
def pseudo_rewards(answers, labels):
    return (answers == labels[:, None]).astype(jnp.float64)


# ------------------------------------------------------------------ cluster sizes


def _mix(x, seed):
    """murmur3's 64-bit finaliser with a seed (bijective on uint64)."""
    x = x ^ seed
    x = (x ^ (x >> 33)) * jnp.uint64(0xFF51AFD7ED558CCD)
    x = (x ^ (x >> 33)) * jnp.uint64(0xC4CEB9FE1A85EC53)
    return x ^ (x >> 33)


def _hashed_sizes(ids):
    """Exact sizes of arbitrary int64 ids: hashing rounds, the smallest id owns a slot
    (scatter-min), owners count their slot (scatter-add), losers rehash."""
    b = ids.shape[0]
    bits = max(4, (2 * b - 1).bit_length())
    slots = 1 << bits
    u = lax.bitcast_convert_type(ids.astype(jnp.int64), jnp.uint64)
    top = 64 - bits

    def body(state):
        sizes, done, seed = state
        slot = jnp.where(done, slots, (_mix(u, seed) >> top).astype(jnp.int32))
        owner = jnp.full((slots,), np.iinfo(np.uint64).max, jnp.uint64)
        owner = owner.at[slot].min(u, mode="drop")
        wins = ~done & (owner.at[slot].get(mode="fill", fill_value=0) == u)
        count = jnp.zeros((slots,), jnp.int32).at[jnp.where(wins, slot, slots)].add(1, mode="drop")
        sizes = jnp.where(wins, count.at[slot].get(mode="fill", fill_value=0), sizes)
        return sizes, done | wins, seed + jnp.uint64(0x9E3779B9)

    init = (jnp.zeros((b,), jnp.int32), jnp.zeros((b,), bool), jnp.uint64(0))
    return lax.while_loop(lambda s: ~jnp.all(s[1]), body, init)[0]


def _sizes(ids, num_clusters):
    if num_clusters is not None:
        idx = ids.astype(jnp.int32)
        counts = jnp.zeros((num_clusters,), jnp.int32).at[idx].add(1, mode="drop")
        return counts.at[idx].get(mode="fill", fill_value=0)
    if ids.shape[0] <= 128:
        return jnp.sum(ids[:, None] == ids[None, :], axis=-1, dtype=jnp.int32)
    return _hashed_sizes(ids)


@functools.partial(jax.jit, static_argnames=("num_clusters",))
def challenger_rewards(consistency, clusters, valid, strength=1.0, *, num_clusters=None):
    p = consistency
    share = _div(_sizes(clusters, num_clusters).astype(p.dtype), p.shape[0])
    reward = jnp.maximum(0, _triangle(p) - jnp.asarray(strength, p.dtype) * share)
    return jnp.where(valid, reward, 0).astype(p.dtype)


# ------------------------------------------------------------------ G-Zero, MM-Zero


@jax.jit
def hint_delta(base_logp, hinted_logp, mask):
    dtype = jnp.result_type(base_logp, hinted_logp)
    acc = jnp.promote_types(dtype, jnp.float32)
    diff = (base_logp.astype(dtype) - hinted_logp.astype(dtype)).astype(acc)
    kept = jnp.where(mask, diff, jnp.zeros((), acc))
    total, count = lax.reduce(
        (kept, mask.astype(jnp.int32)),
        (jnp.zeros((), acc), jnp.zeros((), jnp.int32)),
        lambda x, y: (x[0] + y[0], x[1] + y[1]),
        (1,),
    )
    return (total / jnp.maximum(count, 1).astype(acc)).astype(dtype)


@jax.jit
def proposer_rewards(delta, hint_lengths, cluster_share, valid):
    dtype = jnp.result_type(delta, cluster_share)
    excess = jnp.maximum(hint_lengths.astype(dtype) - 200, 0)
    penalty = _div(0.03 * excess, 100)
    return jnp.where(valid, delta.astype(dtype) - penalty, -1) - cluster_share.astype(dtype)


@jax.jit
def coder_rewards(executed, easy_accuracy, consistency, syntax_error):
    dtype = jnp.result_type(easy_accuracy, consistency)
    c = consistency.astype(dtype)
    success = 1 + easy_accuracy.astype(dtype) + jnp.minimum(c, 1 - c)
    return jnp.where(executed, success, -0.1) - 0.05 * syntax_error.astype(dtype)


@functools.partial(jax.jit, static_argnames=("num_answers",))
def solver_rewards(answers, format_valid, num_answers, alpha=0.9):
    labels, _ = _vote(answers, num_answers)
    alpha = jnp.asarray(alpha, jnp.float64)
    agree = (answers == labels[:, None]).astype(jnp.float64)
    return alpha * agree + (1 - alpha) * format_valid.astype(jnp.float64)


@jax.jit
def group_advantages(rewards, mask=None):
    """``scale="group"``, ``ddof=1``, ``eps=1e-6``, ``singleton="zero"`` (the defaults)."""
    r = rewards
    m = jnp.ones(r.shape, bool) if mask is None else mask
    zero_f, inf = jnp.zeros((), r.dtype), jnp.asarray(jnp.inf, r.dtype)
    n, total, hi, lo = lax.reduce(
        (m.astype(r.dtype), jnp.where(m, r, zero_f), jnp.where(m, r, -inf), jnp.where(m, r, inf)),
        (zero_f, zero_f, -inf, inf),
        lambda a, b: (a[0] + b[0], a[1] + b[1], jnp.maximum(a[2], b[2]), jnp.minimum(a[3], b[3])),
        (1,),
    )
    n, total, hi, lo = (v[:, None] for v in (n, total, hi, lo))
    mean = total / jnp.maximum(n, 1)
    sq = jnp.sum(jnp.where(m, (r - mean) ** 2, 0), axis=-1, keepdims=True)
    std = jnp.sqrt(sq / jnp.maximum(n - 1, 1))
    zero = (hi == lo) | (n <= 1)
    adv = _div(r - mean, std + jnp.asarray(1e-6, r.dtype))
    return jnp.where(m & ~zero, adv, 0).astype(r.dtype)
