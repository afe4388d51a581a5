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
from jax.typing import ArrayLike

from zero_contracts import complement_weight
from zero_jax import _checks as _c
from zero_jax._checks import Index
from zero_jax.primitives import ids_equal, vote

__all__ = ["coder_rewards", "solver_rewards", "solver_rewards_frozen"]


def coder_rewards(
    executed: Any, easy_accuracy: Any, consistency: Any, syntax_error: Any
) -> jax.Array:
    """MM-Zero coder reward: execution and visual feedback minus error penalties.

    ``r_i = 1_e [1 + s_i + min(c_i, 1 - c_i)] - 0.1 1_not_e - 0.05 1_syntax``

    MM-Zero: Self-Evolving Multi-Model Vision Language Models From Zero Data
    (Zongxia Li et al., 2026), §2.5, Eqs. 7 and 11-12 (execution and visual
    feedback), https://arxiv.org/abs/2603.09206.  Output ``[B]``: the promoted dtype
    of ``easy_accuracy`` and ``consistency``; detached (no gradient).

    A rendered program earns 1 plus the solver's easy-question accuracy ``s`` plus
    the continuous difficulty ``min(c, 1 - c)`` (Eq. 7; no cap on ``s``).  A failed
    render earns -0.1 and its visual scores are ignored (they may be NaN).  The
    syntax penalty applies on top of either.  A rendered row whose scores are
    outside [0, 1] (or NaN) gives NaN.

    Args:
      executed: bool ``[B]``, the program rendered.
      easy_accuracy: float ``[B]`` in ``[0, 1]`` (read only where executed).
      consistency: float ``[B]`` in ``[0, 1]`` (read only where executed).
      syntax_error: bool ``[B]``.

    Returns:
      ``[B]`` (half precision computed in float32 and rounded once).

    >>> import jax.numpy as jnp, zero_jax
    >>> r = zero_jax.coder_rewards(jnp.array([True, False]), jnp.array([0.8, jnp.nan]),
    ...                            jnp.array([0.5, jnp.nan]), jnp.array([False, True]))
    >>> [round(x, 4) for x in r.tolist()]
    [2.3, -0.15]
    """
    e, s, c, x = _c.arrays("coder_rewards", executed, easy_accuracy, consistency, syntax_error)
    return _coder(e, s, c, x)


@_c.kernel("coder_rewards")
def _coder(
    executed: jax.Array, easy: jax.Array, c: jax.Array, syntax_error: jax.Array
) -> jax.Array:
    bad = _c.invalid("coder_rewards", executed=executed, easy_accuracy=easy, consistency=c)
    out = jnp.result_type(easy, c)
    dtype = _c.compute_dtype(out)
    easy, c = easy.astype(dtype), c.astype(dtype)
    success = 1 + easy + jnp.minimum(c, 1 - c)
    # an unexecuted render with a syntax error earns the constant -0.15 (-0.1 - 0.05 in
    # binary is -0.15000000000000002)
    # (each select has one array case: on an Explicit mesh the four [B] arguments may
    # be sharded differently, and a select's array cases and condition must share one)
    executed_reward = success - 0.05 * syntax_error.astype(dtype)
    reward = jnp.where(executed, executed_reward, -0.1)
    reward = jnp.where(~executed & syntax_error, -0.15, reward)
    rows = bad["easy_accuracy"] | bad["consistency"]
    return lax.stop_gradient(_c.poison(reward, rows).astype(out))


def solver_rewards(
    answers: Any,
    format_valid: Any,
    num_answers: Index,
    alpha: ArrayLike = 0.9,
    *,
    method: str = "auto",
) -> jax.Array:
    """MM-Zero solver reward: agreement with the silver majority plus a format bonus.

    ``r_ij = alpha 1[a_ij = y_i] + (1 - alpha) v_ij``

    MM-Zero: Self-Evolving Multi-Model Vision Language Models From Zero Data
    (Zongxia Li et al., 2026), §2.6, Eqs. 13-14 (silver-answer reward),
    https://arxiv.org/abs/2603.09206.  Output ``[B, K]``: float64 (float32 in JAX
    with x64 off); detached (no gradient).

    ``y`` is the majority over all K answers of the row (ties: smallest id) and
    ``v`` the format flag.  Format is additive, not a gate; the majority is a silver
    label, not a verified answer.  For a concrete ``alpha`` the weight
    ``1 - alpha`` is taken in decimal, as the published code writes it
    (``alpha = 0.9`` gives exactly ``0.1``); a traced one computes it in the output
    dtype.  A row holding an id outside ``[0, num_answers)`` gives NaN.

    Args:
      answers: integer ``[B, K]`` ids in ``[0, num_answers)``.
      format_valid: bool ``[B, K]``.
      num_answers: static size of the answer alphabet.
      alpha: weight in ``[0, 1]`` (a number or a traced scalar).
      method: voting method, as in :func:`zero_jax.consensus`.

    Returns:
      ``[B, K]``.

    >>> import jax.numpy as jnp, zero_jax
    >>> a = jnp.array([[4, 4, 2]]); v = jnp.array([[False, True, True]])
    >>> [round(x, 6) for x in zero_jax.solver_rewards(a, v, num_answers=5)[0].tolist()]
    [0.9, 1.0, 0.1]
    """
    a, v = _c.arrays("solver_rewards", answers, format_valid)
    h = _c.hypers("solver_rewards", num_answers=num_answers, alpha=alpha, method=method)
    if isinstance(h.get("alpha"), float):  # a Python alpha: 1 - alpha taken in decimal here
        h["beta"] = complement_weight(h["alpha"])
    return _solver(a, v, **h)


@_c.kernel("solver_rewards")
def _solver(
    answers: jax.Array,
    format_valid: jax.Array,
    num_answers: int,
    alpha: float | jax.Array,
    method: str,
    beta: float | jax.Array | None = None,
) -> jax.Array:
    bad = _c.invalid("solver_rewards", answers=answers, num_answers=num_answers, alpha=alpha)
    dtype = _c.float_dtype()
    if beta is None:  # the default alpha is a constant here; a traced one has no decimal
        beta = complement_weight(alpha) if isinstance(alpha, float) else 1 - alpha
    alpha = jnp.asarray(alpha, dtype)
    weight = jnp.asarray(beta, dtype)
    labels, _ = vote(answers, num_answers, method)
    agree = ids_equal(answers, labels[..., None]).astype(dtype)
    reward = alpha * agree + weight * format_valid.astype(dtype)
    rows = jnp.any(bad["answers"], axis=-1, keepdims=True) | _c.hyper_rules(bad)
    return lax.stop_gradient(_c.poison(reward, rows))


def solver_rewards_frozen(
    answers: Any, format_valid: Any, labels: Any, alpha: ArrayLike = 0.9
) -> jax.Array:
    """MM-Zero solver reward against frozen labels plus a format bonus.

    ``r_ij = alpha 1[a_ij = y_i] + (1 - alpha) v_ij, y_i given``

    MM-Zero: Self-Evolving Multi-Model Vision Language Models From Zero Data (Zongxia Li
    et al., 2026), §2.6, Eqs. 13-14 (silver-answer reward) with the label frozen,
    https://arxiv.org/abs/2603.09206.  Output ``[B, K]``: float64 (float32 in JAX with x64
    off); detached (no gradient).

    :func:`solver_rewards` with the silver label given instead of voted: the label
    of each row comes from an earlier vote (as R-Zero freezes its pseudo-labels,
    :func:`pseudo_rewards`), and the fresh answers are never re-voted.  No vote, so
    no alphabet: ids and labels are any integers, compared exactly whatever their
    dtypes (a label of -1 matches nothing but an answer of -1).  ``1 - alpha`` is
    taken in decimal for a concrete ``alpha``, as in :func:`solver_rewards`.

    Args:
      answers: integer ``[B, K]`` fresh answer ids.
      format_valid: bool ``[B, K]``.
      labels: integer ``[B]`` frozen labels.
      alpha: weight in ``[0, 1]`` (a number or a traced scalar).

    Returns:
      ``[B, K]``.

    >>> import jax.numpy as jnp, zero_jax
    >>> a = jnp.array([[4, 4, 2]]); v = jnp.array([[False, True, True]])
    >>> r = zero_jax.solver_rewards_frozen(a, v, jnp.array([2]))
    >>> [round(x, 6) for x in r[0].tolist()]
    [0.0, 0.1, 1.0]
    """
    a, v, y = _c.arrays("solver_rewards_frozen", answers, format_valid, labels)
    h = _c.hypers("solver_rewards_frozen", alpha=alpha)
    if isinstance(h.get("alpha"), float):  # a Python alpha: 1 - alpha taken in decimal here
        h["beta"] = complement_weight(h["alpha"])
    return _solver_frozen(a, v, y, **h)


@_c.kernel("solver_rewards_frozen")
def _solver_frozen(
    answers: jax.Array,
    format_valid: jax.Array,
    labels: jax.Array,
    alpha: float | jax.Array,
    beta: float | jax.Array | None = None,
) -> jax.Array:
    bad = _c.invalid("solver_rewards_frozen", alpha=alpha)
    dtype = _c.float_dtype()
    if beta is None:  # the default alpha is a constant here; a traced one has no decimal
        beta = complement_weight(alpha) if isinstance(alpha, float) else 1 - alpha
    agree = ids_equal(answers, labels[..., None]).astype(dtype)
    reward = jnp.asarray(alpha, dtype) * agree + jnp.asarray(beta, dtype) * format_valid.astype(
        dtype
    )
    return lax.stop_gradient(_c.poison(reward, _c.hyper_rules(bad)))
