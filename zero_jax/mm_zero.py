"""MM-Zero rewards: coder execution / visual feedback and solver agreement with a
silver majority label.

From *MM-Zero: Self-Evolving Multi-Model Vision Language Models From Zero Data*
(Li et al., 2026, https://arxiv.org/abs/2603.09206), Sections 2.5-2.6.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from jax import lax

from zero_contracts import complement_weight
from zero_jax import _checks as _c
from zero_jax.primitives import vote

__all__ = ["coder_rewards", "solver_rewards"]


@_c.kernel("coder_rewards")
def _coder(
    executed: jax.Array, easy: jax.Array, c: jax.Array, syntax_error: jax.Array
) -> jax.Array:
    _c.data_checks("coder_rewards", executed=executed, easy_accuracy=easy, consistency=c)
    out = jnp.result_type(easy, c)
    dtype = _c.compute_dtype(out)
    easy, c = easy.astype(dtype), c.astype(dtype)
    success = 1 + easy + jnp.minimum(c, 1 - c)
    reward = jnp.where(executed, success, -0.1) - 0.05 * syntax_error.astype(dtype)
    return lax.stop_gradient(reward.astype(out))


def coder_rewards(
    executed: Any, easy_accuracy: Any, consistency: Any, syntax_error: Any
) -> jax.Array:
    """MM-Zero coder reward: execution and visual feedback minus error penalties.

    ``r_C = 1_e [1 + s + min(c, 1 - c)] - 0.1 * 1_{not e} - 0.05 * 1_syntax``: a
    rendered program earns 1 plus the solver's easy-question accuracy ``s`` plus
    the continuous difficulty ``min(c, 1 - c)`` (Eq. 7; no cap on ``s``).  A failed
    render earns -0.1 and its visual scores are ignored (they may be NaN).  The
    syntax penalty applies on top of either.

    Args:
      executed: bool ``[B]``, the program rendered.
      easy_accuracy: float ``[B]`` in ``[0, 1]`` (read only where executed).
      consistency: float ``[B]`` in ``[0, 1]`` (read only where executed).
      syntax_error: bool ``[B]``.

    Returns:
      ``[B]`` in the promoted dtype of the two float inputs; gradient-free.

    >>> import jax.numpy as jnp, zero_jax
    >>> r = zero_jax.coder_rewards(jnp.array([True, False]), jnp.array([0.8, jnp.nan]),
    ...                            jnp.array([0.5, jnp.nan]), jnp.array([False, True]))
    >>> [round(x, 4) for x in r.tolist()]
    [2.3, -0.15]
    """
    e, s, c, x = _c.arrays("coder_rewards", executed, easy_accuracy, consistency, syntax_error)
    return _coder(e, s, c, x)


@_c.kernel("solver_rewards", static_argnames=("num_answers", "method"))
def _solver(
    answers: jax.Array,
    format_valid: jax.Array,
    num_answers: int,
    alpha: float | jax.Array,
    method: str,
    beta: float | jax.Array | None,
) -> jax.Array:
    _c.data_checks("solver_rewards", answers=answers, num_answers=num_answers, alpha=alpha)
    dtype = _c.float_dtype()
    if isinstance(alpha, float):  # the default, a constant: 1 - alpha in decimal
        beta = complement_weight(alpha)
    alpha = jnp.asarray(alpha, dtype)
    weight = 1 - alpha if beta is None else jnp.asarray(beta, dtype)
    labels, _ = vote(answers, num_answers, method)
    agree = (answers == labels[..., None]).astype(dtype)
    return lax.stop_gradient(alpha * agree + weight * format_valid.astype(dtype))


def solver_rewards(
    answers: Any,
    format_valid: Any,
    num_answers: int,
    alpha: float = 0.9,
    *,
    method: str = "auto",
) -> jax.Array:
    """MM-Zero solver reward: agreement with the silver majority plus a format bonus.

    ``r_S = alpha * 1[a == y] + (1 - alpha) * v`` where ``y`` is the majority over
    all K answers of the row (ties: smallest id) and ``v`` the format flag.  Format
    is additive, not a gate; the majority is a silver label, not a verified answer.
    For a Python ``alpha`` the weight ``1 - alpha`` is taken in decimal, as the
    published code writes it (``alpha = 0.9`` gives exactly ``0.1``).

    Args:
      answers: integer ``[B, K]`` ids in ``[0, num_answers)``.
      format_valid: bool ``[B, K]``.
      num_answers: static size of the answer alphabet.
      alpha: weight in ``[0, 1]`` (Python float or traced scalar).
      method: voting method, as in :func:`zero_jax.consensus`.

    Returns:
      float64 ``[B, K]`` (float32 when x64 is disabled); gradient-free.

    >>> import jax.numpy as jnp, zero_jax
    >>> a = jnp.array([[4, 4, 2]]); v = jnp.array([[False, True, True]])
    >>> [round(x, 6) for x in zero_jax.solver_rewards(a, v, num_answers=5)[0].tolist()]
    [0.9, 1.0, 0.1]
    """
    a, v = _c.arrays("solver_rewards", answers, format_valid)
    h = _c.hypers("solver_rewards", num_answers, alpha, method)
    # 1 - alpha in decimal for a Python alpha (the kernel's own for the default one)
    n, weight, how = h.args
    baked = weight is None or h["alpha"] is None
    beta = None if baked else h.scalar("beta", complement_weight(h["alpha"]))
    return _solver(a, v, n, weight, how, beta)
