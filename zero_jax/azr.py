"""Absolute Zero's learnability reward for a task proposer.

From *Absolute Zero: Reinforced Self-play Reasoning with Zero Data* (Zhao et al., 2025,
https://arxiv.org/abs/2505.03335), Section 3.2, Eq. 4.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from jax import lax

from zero_jax import _checks as _c

__all__ = ["learnability_reward"]


def learnability_reward(solve_rate: Any) -> jax.Array:
    """Absolute Zero's learnability reward of a proposed task from its solve rate.

    ``r_i = 0 if s_i in {0, 1}, else 1 - s_i``

    Absolute Zero: Reinforced Self-play Reasoning with Zero Data (Andrew Zhao et al.,
    2025), §3.2, Eq. 4 (the proposer's learnability reward),
    https://arxiv.org/abs/2505.03335.  Output ``[B]``: the dtype of ``solve_rate``;
    detached (no gradient).

    ``s`` is the share of the solver's rollouts that solved the task.  A task that is
    always or never solved teaches nothing and earns 0; otherwise harder tasks earn
    more.  A rate outside [0, 1] (or NaN) gives NaN.  (XLA on CPU flushes subnormal
    numbers to 0, so a subnormal rate, which no share of rollouts can be, counts as 0.)

    Args:
      solve_rate: float ``[B]`` in ``[0, 1]``.

    Returns:
      ``[B]`` (half precision computed in float32 and rounded once).

    >>> import jax.numpy as jnp, zero_jax
    >>> zero_jax.learnability_reward(jnp.array([0.0, 0.25, 0.5, 1.0])).tolist()
    [0.0, 0.75, 0.5, 0.0]
    """
    (s,) = _c.arrays("learnability_reward", solve_rate)
    return _learnability(s)


@_c.kernel("learnability_reward")
def _learnability(s: jax.Array) -> jax.Array:
    bad = _c.invalid("learnability_reward", solve_rate=s)
    x = s.astype(_c.compute_dtype(s.dtype))
    reward = jnp.where((x == 0) | (x == 1), 0, 1 - x)
    return lax.stop_gradient(_c.poison(reward, bad["solve_rate"]).astype(s.dtype))
