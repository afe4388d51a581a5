"""MM-Zero rewards (problem 113): coder execution / visual feedback and solver
agreement with a silver majority label."""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
from jax import lax

from zero_jax import _checks as _c
from zero_jax.primitives import VOTE_METHODS, majority_vote

__all__ = ["coder_rewards", "solver_rewards"]


@functools.partial(jax.jit, static_argnames=("checked",))
def _coder(executed, easy, c, syntax_error, checked):
    dtype = jnp.result_type(easy, c)
    easy, c = easy.astype(dtype), c.astype(dtype)
    ok = ~executed | ((easy >= 0) & (easy <= 1))
    _c.check(checked, ok, "easy_accuracy must lie in [0, 1] where executed")
    ok = ~executed | ((c >= 0) & (c <= 1))
    _c.check(checked, ok, "consistency must lie in [0, 1] where executed")
    success = 1 + easy + jnp.minimum(c, 1 - c)
    reward = jnp.where(executed, success, -0.1) - 0.05 * syntax_error.astype(dtype)
    return lax.stop_gradient(reward)


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
    """
    e = _c.boolean("executed", executed, 1, "[B]")
    _c.nonempty("executed", e, "[B]")
    s = _c.floating("easy_accuracy", easy_accuracy, 1, "[B]")
    _c.same_shape("easy_accuracy", s, "executed", e)
    c = _c.floating("consistency", consistency, 1, "[B]")
    _c.same_shape("consistency", c, "executed", e)
    x = _c.boolean("syntax_error", syntax_error, 1, "[B]")
    _c.same_shape("syntax_error", x, "executed", e)
    return _coder(e, s, c, x, _c.checking())


@functools.partial(jax.jit, static_argnames=("num_answers", "method", "checked"))
def _solver(answers, format_valid, alpha, num_answers, method, checked):
    dtype = _c.float_dtype()
    alpha = jnp.asarray(alpha, dtype)
    in_range = (answers >= 0) & (answers < num_answers)
    _c.check(checked, in_range, f"answers must lie in [0, num_answers={num_answers})")
    _c.check(checked, (alpha >= 0) & (alpha <= 1), "alpha must lie in [0, 1]")
    labels, _ = majority_vote(answers, num_answers, method)
    agree = (answers == labels[..., None]).astype(dtype)
    return lax.stop_gradient(alpha * agree + (1 - alpha) * format_valid.astype(dtype))


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

    Args:
      answers: integer ``[B, K]`` ids in ``[0, num_answers)``.
      format_valid: bool ``[B, K]``.
      num_answers: static size of the answer alphabet.
      alpha: weight in ``[0, 1]`` (Python float or traced scalar).
      method: voting method, as in :func:`zero_jax.consensus`.

    Returns:
      float64 ``[B, K]`` (float32 when x64 is disabled); gradient-free.
    """
    a = _c.integer("answers", answers, 2, "[B, K]")
    _c.nonempty("answers", a, "[B, K]")
    v = _c.boolean("format_valid", format_valid, 2, "[B, K]")
    _c.same_shape("format_valid", v, "answers", a)
    num_answers = _c.static_count("num_answers", num_answers)
    _c.scalar("alpha", alpha, 0.0, 1.0, "in [0, 1]")
    method = _c.method("method", method, VOTE_METHODS)
    return _solver(a, v, alpha, num_answers, method, _c.checking())
