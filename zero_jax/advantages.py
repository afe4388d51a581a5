"""Group advantages with every choice the published stacks disagree on as a keyword:
the baseline (group mean, or RLOO's leave-one-out mean), scaling (group std, batch std,
none), ``ddof``, ``eps`` and what a single-sample group gets; and several rewards per
sample aggregated as TRL and GDPO do.

Group-relative advantages as in *DeepSeekMath* (Shao et al., 2024,
https://arxiv.org/abs/2402.03300), Section 4.1.2; the leave-one-out baseline of RLOO
(Ahmadian et al., 2024, https://arxiv.org/abs/2402.14740); decoupled normalization of
GDPO (Liu et al., 2026, https://arxiv.org/abs/2601.05242).  The presets reproduce verl,
Tunix, TRL, Dr. GRPO and RLOO (constants in :mod:`zero_contracts`).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from jax import lax
from jax.sharding import AxisType, NamedSharding, reshard
from jax.typing import ArrayLike

from zero_contracts import ADVANTAGE_PRESETS
from zero_jax import _checks as _c
from zero_jax._checks import Index
from zero_jax.primitives import _gather, exact_div

__all__ = ["ADVANTAGE_PRESETS", "group_advantages", "multi_reward_advantages"]


def _moments(
    r: jax.Array, m: jax.Array, ddof: int, axis: int | tuple[int, ...] = -1
) -> tuple[jax.Array, jax.Array, jax.Array]:
    """Kept count, the kept rewards' deviations from their mean (``r - mean``) and their
    std over ``axis`` (the std of fewer than ``ddof + 1`` samples divides by 1).

    Corrected two-pass: the deviations from a first, rounded mean are summed again, so
    a common offset costs no accuracy (``r - mean0`` is exact for rewards within a
    factor of 2 of it; float32 rewards 1e6 + N(0, 1) lost ~10 % of their advantages,
    and rewards a few ulps apart their sign, with the rounded mean alone), and a reward
    far from the rest does not round the others' deviations beyond their own size.
    The callers scale the rewards into (-1, 1) first (:func:`_unit`), so no sum
    overflows."""
    n = jnp.sum(m, axis=axis, keepdims=True, dtype=r.dtype)
    first = jnp.sum(jnp.where(m, r, 0), axis=axis, keepdims=True) / jnp.maximum(n, 1)
    d = jnp.where(m, r - first, 0)
    dev = d - jnp.sum(d, axis=axis, keepdims=True) / jnp.maximum(n, 1)
    sq = jnp.sum(jnp.where(m, dev**2, 0), axis=axis, keepdims=True)
    return n, dev, jnp.sqrt(sq / jnp.maximum(n - ddof, 1))


def _leave_one_out(r: jax.Array, m: jax.Array, n: jax.Array) -> jax.Array:
    """``r_i`` minus the mean of the other kept rewards of its group, ``(n r_i - S) /
    (n - 1)``, in O(G N) memory: ``n r_i`` and the group's sum ``S`` are carried exactly
    as float pairs (Dekker's product, Knuth's two-sum in a pairwise tree), so the
    difference is rounded once, then divided: in float64 with x64 on, so a 7-vs-1 split
    of float32 0.35 gives the exact values rounded once to float32 (NeMo-RL PR #4161),
    and within float32's rounding of them with x64 off."""
    r, sharding = _gather(r, last=True)  # the pairwise tree reads a group's samples
    m = _gather(m, last=True)[0]
    dtype = r.dtype
    # float64 with x64 on, as the torch twin: float32 quotients rounded once
    r, n = r.astype(_c.float_dtype()), n.astype(_c.float_dtype())
    hi = jnp.where(m, r, 0)
    lo = jnp.zeros_like(hi)
    while hi.shape[-1] > 1:  # S = hi + lo, halving the samples per level
        if hi.shape[-1] % 2:
            pad = [(0, 0)] * (hi.ndim - 1) + [(0, 1)]
            hi, lo = jnp.pad(hi, pad), jnp.pad(lo, pad)
        pairs = hi.shape[:-1] + (hi.shape[-1] // 2, 2)
        h, low = hi.reshape(pairs), lo.reshape(pairs)
        hi, err = _two_sum(h[..., 0], h[..., 1])
        lo = low[..., 0] + low[..., 1] + err
    big, big_err = _two_product(n, r)
    top, top_err = _two_sum(big, -hi)
    out = exact_div(top + (top_err + big_err - lo), jnp.maximum(n - 1, 1)).astype(dtype)
    return out if sharding is None else reshard(out, sharding)


def _sharded_like(m: jax.Array, r: jax.Array) -> jax.Array:
    """``m`` with the sharding of ``r`` when the two differ on an Explicit mesh, where a
    select refuses a condition sharded unlike its cases (a mask as the host gave it, or
    made here, beside sharded rewards).  Auto-sharded and unsharded inputs pass
    through."""
    want = getattr(jax.typeof(r), "sharding", None)
    have = getattr(jax.typeof(m), "sharding", None)
    if not isinstance(want, NamedSharding) or not isinstance(have, NamedSharding):
        return m
    if AxisType.Explicit not in want.mesh.axis_types:
        return m

    def spec(s: NamedSharding, ndim: int) -> tuple[Any, ...]:
        return tuple(s.spec) + (None,) * (ndim - len(s.spec))

    if spec(want, r.ndim) == spec(have, m.ndim) or m.shape != r.shape:
        return m
    out: jax.Array = reshard(m, want)
    return out


def _two_sum(a: jax.Array, b: jax.Array) -> tuple[jax.Array, jax.Array]:
    """``(s, e)`` with ``s = fl(a + b)`` and ``s + e = a + b`` exactly (Knuth)."""
    s = a + b
    t = s - a
    return s, (a - (s - t)) + (b - t)


def _two_product(a: jax.Array, b: jax.Array) -> tuple[jax.Array, jax.Array]:
    """``(p, e)`` with ``p = fl(a b)`` and ``p + e = a b`` exactly (Dekker; every partial
    product of the halves is exact, so a contraction into fma changes nothing)."""
    p = a * b
    ah, al = _halves(a)
    bh, bl = _halves(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _halves(a: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Veltkamp's split of ``a`` (here |a| < 2^25) into two halves of half the mantissa."""
    factor = 2.0 ** ((jnp.finfo(a.dtype).nmant + 2) // 2) + 1
    c = a * factor
    high = c - (c - a)
    return high, a - high


def advantages_of(
    r: jax.Array,
    m: jax.Array,
    scale: str,
    ddof: int,
    eps: float | jax.Array,
    singleton: str,
    baseline: str,
) -> jax.Array:
    """The advantages of float rewards ``r`` ``[..., G, N]`` kept where ``m`` ("batch"
    is the last two axes), shared by both public functions (unpoisoned: the callers
    poison from the contract's rule).

    Computed on the rewards times a power of two (:func:`_unit`, the group's, or the
    batch's with ``"batch"`` scaling), which changes no value (every step commutes
    with it) but keeps the sums from overflowing and the squares from overflowing or
    flushing to 0."""
    ddof = min(ddof, r.shape[-1] * r.shape[-2])  # a larger ddof changes no result
    m = _sharded_like(m, r)
    hi = jnp.max(jnp.where(m, r, -jnp.inf), axis=-1, keepdims=True)
    lo = jnp.min(jnp.where(m, r, jnp.inf), axis=-1, keepdims=True)
    if scale == "batch":
        unit = _unit(jnp.max(hi, axis=-2, keepdims=True), jnp.min(lo, axis=-2, keepdims=True))
    else:
        unit = _unit(hi, lo)
    r = r * unit
    n, dev, std = _moments(r, m, ddof)
    single = n == 1
    if baseline == "leave_one_out":
        adv = _leave_one_out(r, m, n)
    else:
        adv = dev
    if scale == "batch":
        std = _moments(r, m, ddof, axis=(-2, -1))[2]
    if singleton == "raw":
        # verl: a lone sample has baseline 0 and std 1 (in the rewards' units), whatever
        # the scaling (a batch std of 0, with eps = 0, made it NaN or inf)
        adv = jnp.where(single, r, adv)
        std = jnp.where(single, unit, std)
    if scale != "none":
        # XLA may multiply by 1 / (std + eps)
        adv = adv / (std + jnp.asarray(eps, r.dtype) * unit)
    else:
        adv = adv / unit
    zero = hi == lo  # all kept rewards equal, including empty and one-sample groups
    if scale == "group":
        zero = zero | (n <= ddof)
    if singleton == "raw":
        zero = zero & ~single
    return jnp.where(m & ~zero, adv, 0)


def _unit(hi: jax.Array, lo: jax.Array) -> jax.Array:
    """``2^-k`` with ``2^(k-1) <= max |r| < 2^k`` over rewards whose max is ``hi`` and
    min ``lo`` (1 when there are none, or a non-finite one), ``k`` clipped so that
    ``2^k`` and ``2^-k`` are normal floats.  The rewards times it lie in (-1, 1), where
    the means, the pairwise differences of the leave-one-out baseline and the sums of
    squares cannot overflow (float32 rewards of 1e20 made the std infinite and every
    advantage 0) nor flush to 0 (rewards 1e-20 apart made it 0).  Multiplying by a
    power of two is exact, and every step commutes with it, so on rewards that none of
    this touches the result is unchanged to the bit.  Only a reward more than 2^126
    (float32; 2^1022 in float64) times smaller than the largest of its group is
    flushed to 0 by it."""
    top = jnp.maximum(hi, -lo)
    info = jnp.finfo(top.dtype)
    k = jnp.frexp(top)[1]  # top = f 2^k with 1/2 <= f < 1
    k = jnp.where((top > 0) & (top < jnp.inf), jnp.clip(k, info.minexp, info.maxexp - 2), 0)
    return jnp.ldexp(jnp.ones_like(top), -k)


def group_advantages(
    rewards: Any,
    mask: Any = None,
    *,
    scale: str = "group",
    ddof: Index = 1,
    eps: ArrayLike = 1e-6,
    singleton: str = "zero",
    baseline: str = "mean",
) -> jax.Array:
    """GRPO / RLOO advantages of groups of rewards, never NaN on valid data.

    ``A_gi = (r_gi - b_gi) / (std + eps), or r_gi - b_gi; b = mean_g or the leave-one-out mean``

    DeepSeekMath: Pushing the Limits of Mathematical Reasoning in Open Language
    Models (Zhihong Shao et al., 2024), §4.1.2, outcome supervision
    (group-normalised advantages), https://arxiv.org/abs/2402.03300.  Output
    ``[G, N]``: the dtype of ``rewards``; detached (no gradient).

    The baseline ``b`` is the group's mean (``"mean"``, GRPO) or, for each sample, the
    mean of the group's other samples (``"leave_one_out"``, RLOO: Ahmadian et al.,
    2024, https://arxiv.org/abs/2402.14740).  ``std`` is the group's (``"group"``) or
    the whole batch's (``"batch"``) standard deviation of the rewards with ``ddof``;
    ``"none"`` does not scale (Dr. GRPO, RLOO).  Means and stds are taken over the kept
    (``mask``) entries only.  Conventions (never NaN on valid data):

    * masked entries get advantage 0 and take no part in any mean or std;
    * a group whose kept rewards are all equal (including a fully masked group)
      gets exactly 0, not a float residue divided by ``eps``;
    * a single-sample group gets 0 (``singleton="zero"``), or, as in verl, its reward
      over ``1 + eps`` from baseline 0 and std 1 (``singleton="raw"``, with any
      ``scale``: its own std, not the batch's);
    * with ``"group"`` scaling a group of at most ``ddof`` samples gets 0.

    A group with a non-finite kept reward is NaN (with ``"batch"`` scaling, the
    whole output, whose std it enters).  See ``ADVANTAGE_PRESETS`` for verl, Tunix,
    TRL, Dr. GRPO and RLOO.

    Args:
      rewards: float ``[G, N]``.
      mask: optional bool ``[G, N]``; True keeps an entry.
      scale: ``"group"``, ``"batch"`` or ``"none"``.
      ddof: static int ``>= 0`` (1 gives the unbiased std of verl / Tunix / TRL).
      eps: ``>= 0``, added to the std (a number or a traced scalar).
      singleton: ``"zero"`` or ``"raw"``.
      baseline: ``"mean"`` or ``"leave_one_out"``.

    Returns:
      ``[G, N]`` (half precision computed in float32 and rounded once).

    >>> import jax.numpy as jnp, zero_jax
    >>> adv = zero_jax.group_advantages(jnp.array([[1.0, 0.0], [1.0, 1.0]]), eps=0.0)
    >>> [[round(x, 6) for x in row] for row in adv.tolist()]
    [[0.707107, -0.707107], [0.0, 0.0]]
    >>> r = jnp.array([[1.0, 0.0, 0.0, 0.0]])
    >>> adv = zero_jax.group_advantages(r, **zero_jax.ADVANTAGE_PRESETS["rloo"])
    >>> [round(x, 6) for x in adv[0].tolist()]
    [1.0, -0.333333, -0.333333, -0.333333]
    """
    r, m = _c.arrays("group_advantages", rewards, mask)
    h = _c.hypers(
        "group_advantages", scale=scale, ddof=ddof, eps=eps, singleton=singleton,
        baseline=baseline,
    )
    return _advantages(r, m, **h)


@_c.kernel("group_advantages")
def _advantages(
    rewards: jax.Array,
    mask: jax.Array | None,
    scale: str,
    ddof: int,
    eps: float | jax.Array,
    singleton: str,
    baseline: str,
) -> jax.Array:
    m = jnp.ones(rewards.shape, bool) if mask is None else mask
    bad = _c.invalid("group_advantages", rewards=rewards, mask=m, eps=eps)
    r = lax.stop_gradient(rewards).astype(_c.compute_dtype(rewards.dtype))
    adv = advantages_of(r, m, scale, ddof, eps, singleton, baseline)
    rows = jnp.any(bad["rewards"], axis=-1, keepdims=True)
    if scale == "batch":
        rows = jnp.any(rows)
    return lax.stop_gradient(_c.poison(adv, rows | bad["eps"]).astype(rewards.dtype))


def multi_reward_advantages(
    rewards: Any,
    weights: Any = None,
    mask: Any = None,
    *,
    aggregation: str = "sum_then_normalize",
    scale: str = "group",
    ddof: Index = 1,
    eps: ArrayLike = 1e-6,
    singleton: str = "zero",
    baseline: str = "mean",
) -> jax.Array:
    """Advantages of several rewards per sample, weighted and aggregated.

    ``sum_then_normalize: A(sum_k w_k r_k); normalize_then_sum: batchnorm(sum_k w_k A(r_k))``

    GDPO: Group reward-Decoupled Normalization Policy Optimization for Multi-reward
    RL Optimization (Shih-Yang Liu et al., 2026), §3, decoupled normalization (TRL's
    multi_objective_aggregation), https://arxiv.org/abs/2601.05242.  Output ``[G,
    N]``: the dtype of ``rewards``; detached (no gradient).

    ``A`` is :func:`group_advantages` with the same keyword options.
    ``"sum_then_normalize"`` (TRL's default) weights and sums the rewards of each
    sample, then takes group advantages of the sum.  ``"normalize_then_sum"`` (GDPO;
    TRL's second name) takes group advantages of each reward on its own, sums them
    with the weights, and standardises the sum over the whole batch (``ddof``,
    ``eps``; a batch of equal sums gives 0), so that one reward's scale cannot drown
    another's.  A sample is kept where any of its rewards is (``mask``); a masked
    reward counts as 0 in the sums, as TRL's ``nansum`` of a reward function's
    ``None``.  With ``ADVANTAGE_PRESETS["trl"]`` both equal TRL's computation.  A
    group with a non-finite kept reward is NaN (the whole output where a batch-wide
    statistic reads it, and for a non-finite weight).

    Args:
      rewards: float ``[G, N, R]``, ``R`` rewards per sample.
      weights: optional float ``[R]`` (default all ones), TRL's ``reward_weights``.
      mask: optional bool ``[G, N, R]``; True keeps a reward.
      aggregation: ``"sum_then_normalize"`` or ``"normalize_then_sum"``.
      scale, ddof, eps, singleton, baseline: as in :func:`group_advantages`.

    Returns:
      ``[G, N]``, computed in float64 with x64 on (as the torch twin) and in float32
      without it, and rounded once.

    >>> import jax.numpy as jnp, zero_jax
    >>> r = jnp.array([[[1.0, 0.0], [0.0, 0.0], [1.0, 1.0], [0.0, 1.0]]])
    >>> a = zero_jax.multi_reward_advantages(r, jnp.array([1.0, 0.5]), eps=0.0)
    >>> [round(x, 4) for x in a[0].tolist()]
    [0.3873, -1.1619, 1.1619, -0.3873]
    """
    r, w, m = _c.arrays("multi_reward_advantages", rewards, weights, mask)
    h = _c.hypers(
        "multi_reward_advantages", aggregation=aggregation, scale=scale, ddof=ddof,
        eps=eps, singleton=singleton, baseline=baseline,
    )
    return _multi(r, w, m, **h)


@_c.kernel("multi_reward_advantages")
def _multi(
    rewards: jax.Array,
    weights: jax.Array | None,
    mask: jax.Array | None,
    aggregation: str,
    scale: str,
    ddof: int,
    eps: float | jax.Array,
    singleton: str,
    baseline: str,
) -> jax.Array:
    m = jnp.ones(rewards.shape, bool) if mask is None else mask
    w = jnp.ones(rewards.shape[-1:], rewards.dtype) if weights is None else weights
    bad = _c.invalid("multi_reward_advantages", rewards=rewards, weights=w, mask=m, eps=eps)
    # float64 with x64 on, as the torch twin (the weighted sum of float32 rewards is not
    # a float32); float32 without x64, half precision included
    dtype = jnp.promote_types(_c.compute_dtype(rewards.dtype), _c.float_dtype())
    r, w = lax.stop_gradient(rewards).astype(dtype), lax.stop_gradient(w).astype(dtype)
    kept = jnp.any(m, axis=-1)
    options = (scale, ddof, eps, singleton, baseline)
    if aggregation == "sum_then_normalize":
        adv = advantages_of(jnp.sum(jnp.where(m, r * w, 0), axis=-1), kept, *options)
        rows = jnp.any(bad["rewards"], axis=(-2, -1))[..., None]
        if scale == "batch":
            rows = jnp.any(rows)
    else:  # each reward's advantages ([R, G, N]), weighted, then standardised over the batch
        per = advantages_of(jnp.moveaxis(r, -1, 0), jnp.moveaxis(m, -1, 0), *options)
        total = jnp.sum(per * w[:, None, None], axis=0)
        everything = (-2, -1)
        hi = jnp.max(jnp.where(kept, total, -jnp.inf), axis=everything, keepdims=True)
        lo = jnp.min(jnp.where(kept, total, jnp.inf), axis=everything, keepdims=True)
        unit = _unit(hi, lo)
        _, dev, std = _moments(total * unit, kept, min(ddof, kept.size), axis=everything)
        adv = dev / (std + jnp.asarray(eps, dtype) * unit)
        adv = jnp.where(kept & (hi != lo), adv, 0)
        rows = jnp.any(bad["rewards"])
    rows = rows | jnp.any(bad["weights"]) | bad["eps"]
    return lax.stop_gradient(_c.poison(adv, rows).astype(rewards.dtype))
