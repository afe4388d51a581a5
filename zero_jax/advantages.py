"""GRPO group advantages with every choice the published stacks disagree on as a
keyword: scaling (group std, batch std, none), ``ddof``, ``eps``, and what a
single-sample group gets.

Group-relative advantages as in *DeepSeekMath* (Shao et al., 2024,
https://arxiv.org/abs/2402.03300), Section 4.1.2; the presets reproduce verl,
Tunix, TRL and Dr. GRPO (constants in :mod:`zero_contracts`).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from jax import lax

from zero_contracts import ADVANTAGE_PRESETS
from zero_jax import _checks as _c

__all__ = ["ADVANTAGE_PRESETS", "group_advantages"]


def _moments(
    r: jax.Array, m: jax.Array, ddof: int, axis: int | tuple[int, ...] = -1
) -> tuple[jax.Array, jax.Array, jax.Array]:
    """Kept count, masked mean and std over ``axis`` (the std of fewer than
    ``ddof + 1`` samples divides by 1)."""
    n = jnp.sum(m, axis=axis, keepdims=True, dtype=r.dtype)
    mean = jnp.sum(jnp.where(m, r, 0), axis=axis, keepdims=True) / jnp.maximum(n, 1)
    sq = jnp.sum(jnp.where(m, (r - mean) ** 2, 0), axis=axis, keepdims=True)
    return n, mean, jnp.sqrt(sq / jnp.maximum(n - ddof, 1))


def group_advantages(
    rewards: Any,
    mask: Any = None,
    *,
    scale: str = "group",
    ddof: int = 1,
    eps: float = 1e-6,
    singleton: str = "zero",
) -> jax.Array:
    """GRPO advantages of groups of rewards, never NaN on valid data.

    ``A_gi = (r_gi - mean_g) / (std + eps), or r_gi - mean_g``

    DeepSeekMath: Pushing the Limits of Mathematical Reasoning in Open Language
    Models (Zhihong Shao et al., 2024), §4.1.2, outcome supervision
    (group-normalised advantages), https://arxiv.org/abs/2402.03300.  Output
    ``[G, N]``: the dtype of ``rewards``; detached (no gradient).

    ``std`` is the group's (``"group"``) or the whole batch's (``"batch"``) standard
    deviation with ``ddof``; ``"none"`` only centres (Dr. GRPO).  Means and stds are
    taken over the kept (``mask``) entries only.  Conventions (never NaN on valid
    data):

    * masked entries get advantage 0 and take no part in any mean or std;
    * a group whose kept rewards are all equal (including a fully masked group)
      gets exactly 0, not a float residue divided by ``eps``;
    * a single-sample group gets 0 (``singleton="zero"``), or, as in verl,
      ``r / (1 + eps)`` from mean 0 and std 1 (``singleton="raw"``);
    * with ``"group"`` scaling a group of at most ``ddof`` samples gets 0.

    A group with a non-finite kept reward is NaN (with ``"batch"`` scaling, the
    whole output, whose std it enters).  See ``ADVANTAGE_PRESETS`` for verl, Tunix,
    TRL and Dr. GRPO.

    Args:
      rewards: float ``[G, N]``.
      mask: optional bool ``[G, N]``; True keeps an entry.
      scale: ``"group"``, ``"batch"`` or ``"none"``.
      ddof: static int ``>= 0`` (1 gives the unbiased std of verl / Tunix / TRL).
      eps: ``>= 0``, added to the std (a number or a traced scalar).
      singleton: ``"zero"`` or ``"raw"``.

    Returns:
      ``[G, N]`` (half precision computed in float32 and rounded once).

    >>> import jax.numpy as jnp, zero_jax
    >>> adv = zero_jax.group_advantages(jnp.array([[1.0, 0.0], [1.0, 1.0]]), eps=0.0)
    >>> [[round(x, 6) for x in row] for row in adv.tolist()]
    [[0.707107, -0.707107], [0.0, 0.0]]
    """
    r, m = _c.arrays("group_advantages", rewards, mask)
    h = _c.hypers(
        "group_advantages", scale=scale, ddof=ddof, eps=eps, singleton=singleton
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
) -> jax.Array:
    m = jnp.ones(rewards.shape, bool) if mask is None else mask
    bad = _c.invalid("group_advantages", rewards=rewards, mask=m, eps=eps)
    out = rewards.dtype
    r = lax.stop_gradient(rewards).astype(_c.compute_dtype(out))  # half precision in float32
    ddof = min(ddof, r.size)  # a larger ddof changes no result (and may not fit a float)

    n, mean, std = _moments(r, m, ddof)
    single = n == 1
    if singleton == "raw":
        mean = jnp.where(single, 0, mean)
        std = jnp.where(single, 1, std)
    if scale == "batch":
        _, _, std = _moments(r, m, ddof, axis=(-2, -1))
    adv = r - mean
    if scale != "none":
        adv = adv / (std + jnp.asarray(eps, r.dtype))  # XLA may multiply by 1 / (std + eps)
    hi = jnp.max(jnp.where(m, r, -jnp.inf), axis=-1, keepdims=True)
    lo = jnp.min(jnp.where(m, r, jnp.inf), axis=-1, keepdims=True)
    zero = hi == lo  # all kept rewards equal, including empty and one-sample groups
    if scale == "group":
        zero = zero | (n <= ddof)
    if singleton == "raw":
        zero = zero & ~single
    adv = jnp.where(m & ~zero, adv, 0)

    rows = jnp.any(bad["rewards"], axis=-1, keepdims=True) | bad["eps"]
    if scale == "batch":
        rows = jnp.any(rows)
    return lax.stop_gradient(_c.poison(adv, rows).astype(out))
