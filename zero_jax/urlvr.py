"""URLVR's diagnostics of a label-free run: proxy-truth correlation and collapse step.

From *How Far Can Unsupervised RLVR Scale LLM Training?* (He et al., 2026,
https://arxiv.org/abs/2603.08660; code on TTRL's ``urlvr-dev`` branch): intrinsic
rewards rise, then collapse once the model's confidence stops tracking correctness.
:func:`point_biserial` measures that tracking on a batch with held-back truth;
:func:`collapse_step` finds the step a logged curve (e.g. TTRL's reward accuracy from
``vote_metrics``) falls below a threshold, the paper's Model Collapse Step.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from jax import lax
from jax.typing import ArrayLike

from zero_jax import _checks as _c
from zero_jax._checks import Index
from zero_jax.primitives import _gather

__all__ = ["collapse_step", "point_biserial"]


def point_biserial(proxy: Any, truth: Any) -> jax.Array:
    """Point-biserial correlation of a proxy reward with the true correctness.

    ``r_pb = (mean_{t=1} x - mean_{t=0} x) sqrt(n_1 n_0) / (n s_x), s_x the population
    std; NaN if x or t is constant``

    How Far Can Unsupervised RLVR Scale LLM Training? (Bingxiang He et al., 2026), §4,
    proxy-truth correlation of an intrinsic reward, https://arxiv.org/abs/2603.08660.
    Output ``[]``: float64 (float32 in JAX with x64 off); detached (no gradient).

    The Pearson correlation of the proxy rewards ``x`` (a label-free reward: majority
    agreement, self-certainty, ...) with the 0/1 truth ``t`` of the same responses,
    as ``scipy.stats.pointbiserialr`` computes it.  It is undefined when all
    responses are right, all wrong, or the proxy is constant (also for B = 1): then
    NaN, as scipy gives, not 0, which would read as "the proxy has lost its signal",
    the very collapse being watched for.  A non-finite proxy gives NaN too.  Computed
    from centred sums in the output's float type.

    Args:
      proxy: float ``[B]`` finite.
      truth: bool ``[B]``.

    Returns:
      ``[]``, in ``[-1, 1]`` or NaN.

    >>> import jax.numpy as jnp, zero_jax
    >>> x = jnp.array([1.0, 1.0, 0.0, 0.0])
    >>> round(float(zero_jax.point_biserial(x, jnp.array([True, True, False, True]))), 4)
    0.5774
    """
    x, t = _c.arrays("point_biserial", proxy, truth)
    return _point_biserial(x, t)


@_c.kernel("point_biserial")
def _point_biserial(proxy: jax.Array, truth: jax.Array) -> jax.Array:
    bad = _c.invalid("point_biserial", proxy=proxy, truth=truth)
    fl = _c.float_dtype()
    x = proxy.astype(fl)
    n = x.shape[-1]
    n1 = jnp.sum(truth, axis=-1, dtype=jnp.int32).astype(fl)
    centred = x - jnp.sum(x, axis=-1, keepdims=True) / n
    spread = jnp.sum(centred * centred, axis=-1)
    # cov(x, t) n = sum_i (x_i - mean) t_i; var(t) n = n_1 n_0 / n
    cov = jnp.sum(jnp.where(truth, centred, 0), axis=-1)
    r = cov / jnp.sqrt(spread * (n1 * (n - n1) / n))
    r = jnp.clip(r, -1, 1)  # rounding of a perfect correlation; NaN stays NaN
    # a constant proxy is exactly so (its rounded mean may leave a tiny spread)
    constant = jnp.max(x, axis=-1) == jnp.min(x, axis=-1)
    one_sided = (n1 == 0) | (n1 == n)  # all right or all wrong
    r = jnp.where(constant | one_sided, jnp.nan, r)
    return lax.stop_gradient(_c.poison(r, jnp.any(bad["proxy"], axis=-1)))


def collapse_step(values: Any, threshold: ArrayLike = 0.01, *, patience: Index = 1) -> jax.Array:
    """The first step of a run whose logged value falls below a threshold, or -1.

    ``step = min{t : v_s < threshold for t <= s < t + patience}, -1 if none``

    How Far Can Unsupervised RLVR Scale LLM Training? (Bingxiang He et al., 2026), §5,
    Model Collapse Step (first step the reward accuracy falls below 1%),
    https://arxiv.org/abs/2603.08660.  Output ``[]``: int counts (int32 in JAX, int64
    in torch); detached (no gradient).

    ``values[t]`` is the value logged at step t (index into your log: step numbers
    start where it starts).  With the defaults it is the paper's Model Collapse Step
    of a reward-accuracy curve: the first step below 1%.  ``patience`` > 1 asks for
    that many consecutive steps below (a single noisy dip is not a collapse); a run
    shorter than that, or one that never falls below, gives -1.  A NaN value (a step
    whose diagnostic was undefined, e.g. :func:`point_biserial` of a constant batch)
    is never below the threshold.  Functional: ``vmap`` it over runs ``[R, T]``.

    Args:
      values: float ``[T]`` (T may be 0).
      threshold: real (traceable; a non-finite traced one gives -1, raised under
        ``zero_jax.checked``).
      patience: int >= 1, keyword-only.

    Returns:
      ``[]`` int32 step index, or -1.

    >>> import jax.numpy as jnp, zero_jax
    >>> acc = jnp.array([0.6, 0.7, 0.4, 0.005, 0.2, 0.0, 0.0])
    >>> int(zero_jax.collapse_step(acc)), int(zero_jax.collapse_step(acc, patience=2))
    (3, 5)
    """
    (v,) = _c.arrays("collapse_step", values)
    h = _c.hypers("collapse_step", threshold=threshold, patience=patience)
    return _collapse(v, **h)


@_c.kernel("collapse_step")
def _collapse(values: jax.Array, threshold: float | jax.Array, patience: int) -> jax.Array:
    bad = _c.invalid("collapse_step", values=values, threshold=threshold)
    values, _ = _gather(values)  # shifted slices of a sharded axis: gather the log
    t = values.shape[-1]
    x = values.astype(_c.compute_dtype(values.dtype))
    low = x < jnp.asarray(threshold, x.dtype)  # NaN is never below
    if patience > 1:  # a run of `patience` lows starting at each step
        starts = max(t - patience + 1, 0)
        run = jnp.ones(low.shape[:-1] + (starts,), bool)
        for d in range(patience):
            run = run & low[..., d : d + starts]
        low = run
    never = jnp.iinfo(jnp.int32).max
    steps = jnp.arange(low.shape[-1], dtype=jnp.int32)
    first = jnp.min(jnp.where(low, steps, never), axis=-1, initial=never)
    out = jnp.where(first == never, jnp.int32(-1), first)
    return lax.stop_gradient(_c.poison(out, _c.hyper_rules(bad)))
