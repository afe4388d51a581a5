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

__all__ = ["learnability_reward", "learnability_reward_published"]


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


def learnability_reward_published(solve_rate: Any, valid: Any) -> jax.Array:
    """Absolute Zero's proposer reward as its published code trains it.

    ``r_i = 1 - s_i if v_i and 0 < s_i < 1; -0.5 if v_i and s_i in {0, 1}; -1 if not v_i``

    Absolute Zero: Reinforced Self-play Reasoning with Zero Data (Andrew Zhao et al., 2025),
    published code: rewards/reward_managers.py (a zero reward becomes -0.5; a bad format -1;
    issue #37), https://arxiv.org/abs/2505.03335.  Output ``[B]``: the dtype of
    ``solve_rate``; detached (no gradient).

    The published trainer (github.com/LeapLabTHU/Absolute-Zero-Reasoner,
    ``absolute_zero_reasoner/rewards/reward_managers.py``, default
    ``generation_accuracy_convertion: one_minus`` and no intrinsic rewards) computes
    Eq. 4, then pays a well-formatted proposal whose reward is 0 (a task always or
    never solved) -0.5 instead, and a badly formatted one -1 (Eq. 6 gives -0.5 only
    for a wrong answer and -1 for a format error).  A proposal whose program does
    not run is given solve rate 1 there, hence -0.5.  The rate of a badly formatted
    row is never read (it may be NaN); a well-formatted row with a rate outside
    [0, 1] or NaN gives NaN.  (XLA on CPU flushes subnormal rates to 0.)

    Args:
      solve_rate: float ``[B]``, in ``[0, 1]`` where ``valid``.
      valid: bool ``[B]``: the proposal is well formatted.

    Returns:
      ``[B]`` (half precision computed in float32 and rounded once).

    >>> import jax.numpy as jnp, zero_jax
    >>> s = jnp.array([0.0, 0.25, 1.0, 0.5]); valid = jnp.array([True, True, True, False])
    >>> zero_jax.learnability_reward_published(s, valid).tolist()
    [-0.5, 0.75, -0.5, -1.0]
    """
    s, v = _c.arrays("learnability_reward_published", solve_rate, valid)
    return _learnability_published(s, v)


@_c.kernel("learnability_reward_published")
def _learnability_published(s: jax.Array, valid: jax.Array) -> jax.Array:
    bad = _c.invalid("learnability_reward_published", solve_rate=s, valid=valid)
    x = s.astype(_c.compute_dtype(s.dtype))
    reward = jnp.where((x == 0) | (x == 1), -0.5, 1 - x)
    reward = _c.poison(reward, bad["solve_rate"])  # the rule is read where valid only
    return lax.stop_gradient(jnp.where(valid, reward, -1).astype(s.dtype))
