"""DAPO's reward shaping: the soft overlong punishment and dynamic sampling.

From *DAPO: An Open-Source LLM Reinforcement Learning System at Scale* (Yu et al.,
2025, https://arxiv.org/abs/2503.14476), Eq. 13 and Section 3.2.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from jax import lax
from jax.typing import ArrayLike

from zero_jax import _checks as _c
from zero_jax.primitives import exact_div

__all__ = ["informative_groups", "overlong_penalty"]


def overlong_penalty(lengths: Any, max_length: ArrayLike, cache: ArrayLike) -> jax.Array:
    """DAPO's soft punishment of responses that run into the length limit.

    ``R_i = 0 if L_i <= L_max - L_cache; (L_max - L_cache - L_i) / L_cache if <= L_max; -1 beyond``

    DAPO: An Open-Source LLM Reinforcement Learning System at Scale (Qiying Yu et al.,
    2025), §3.4, Eq. 13 (soft overlong punishment), https://arxiv.org/abs/2503.14476.
    Output ``[B]``: float64 (float32 in JAX with x64 off); detached (no gradient).

    The penalty falls linearly from 0 to -1 over the last ``cache`` tokens before
    ``max_length`` and is -1 beyond it (TRL's ``get_soft_overlong_punishment``).
    ``cache = 0`` is the hard cut-off.  A negative length gives NaN.  Lengths and
    hyper-parameters are compared in the output dtype: with x64 off, exactly up to
    2**24 = 16,777,216 tokens.

    Args:
      lengths: integer ``[B]`` response lengths in tokens.
      max_length: ``L_max >= 0`` (a number or a traced scalar).
      cache: ``L_cache``, ``0 <= cache <= max_length`` (a number or a traced scalar).

    Returns:
      ``[B]`` in [-1, 0].

    >>> import jax.numpy as jnp, zero_jax
    >>> zero_jax.overlong_penalty(jnp.array([70, 90, 100, 120]), 100, 20).tolist()
    [0.0, -0.5, -1.0, -1.0]
    """
    (n,) = _c.arrays("overlong_penalty", lengths)
    h = _c.hypers("overlong_penalty", max_length=max_length, cache=cache)
    return _overlong(n, **h)


@_c.kernel("overlong_penalty")
def _overlong(
    lengths: jax.Array, max_length: float | jax.Array, cache: float | jax.Array
) -> jax.Array:
    bad = _c.invalid("overlong_penalty", lengths=lengths, max_length=max_length, cache=cache)
    dtype = _c.float_dtype()
    length = lengths.astype(dtype)
    top, soft = jnp.asarray(max_length, dtype), jnp.asarray(cache, dtype)
    # measured from L_max: exact for integer lengths and L_max, so a fractional cache
    # moves no boundary, and ((L_max - L) - L_cache) / L_cache stays in [-1, 0]
    gap = top - length
    ramp = exact_div(gap - soft, jnp.where(soft > 0, soft, 1))  # unused when soft = 0
    penalty = jnp.where(gap >= soft, 0, jnp.where(gap >= 0, ramp, -1))
    return lax.stop_gradient(_c.poison(penalty, bad["lengths"] | _c.hyper_rules(bad)))


def informative_groups(rewards: Any, mask: Any = None) -> jax.Array:
    """DAPO's dynamic sampling: the groups whose kept rewards are not all equal.

    ``keep_g = max_i r_gi > min_i r_gi over the kept entries``

    DAPO: An Open-Source LLM Reinforcement Learning System at Scale (Qiying Yu et al.,
    2025), §3.2, dynamic sampling (verl's filter_groups),
    https://arxiv.org/abs/2503.14476.  Output ``[G]``: bool; detached (no gradient).

    A group whose rewards are all equal has zero advantages and teaches nothing;
    DAPO over-samples and keeps the others.  A group with fewer than two kept
    entries, or with a non-finite kept reward, is not kept.

    Args:
      rewards: float ``[G, N]``.
      mask: optional bool ``[G, N]``; True keeps an entry.

    Returns:
      bool ``[G]``.

    >>> import jax.numpy as jnp, zero_jax
    >>> r = jnp.array([[1.0, 0.0, 1.0], [1.0, 1.0, 1.0], [0.0, 0.0, 0.0]])
    >>> zero_jax.informative_groups(r).tolist()
    [True, False, False]
    """
    r, m = _c.arrays("informative_groups", rewards, mask)
    return _informative(r, m)


@_c.kernel("informative_groups")
def _informative(rewards: jax.Array, mask: jax.Array | None) -> jax.Array:
    m = jnp.ones(rewards.shape, bool) if mask is None else mask
    bad = _c.invalid("informative_groups", rewards=rewards, mask=m)
    hi = jnp.max(jnp.where(m, rewards, -jnp.inf), axis=-1)
    lo = jnp.min(jnp.where(m, rewards, jnp.inf), axis=-1)
    return (hi > lo) & ~jnp.any(bad["rewards"], axis=-1)
