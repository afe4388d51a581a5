"""The Lab's JAX backend: train a categorical policy with optax on each problem's rewards.

Each lab (see ``zero_lab.records``) computes one reward per action from fixed
feedback records with the problem's reward functions (``zero_jax``'s public ones or a
caller's replacements), then runs plain gradient ascent on the exact expected reward
``sum_i softmax(logits)_i r_i`` from zero logits: ``optax.sgd(learning_rate)`` for
``steps`` updates inside one jitted ``lax.scan``, in float64 (under a local
``jax.enable_x64`` context; the global configuration is left alone).

Run every lab and print the table with ``zero-lab`` (or ``python -m zero_lab``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax import lax

import zero_jax
from zero_lab import (
    LABS,
    Lab,
    LabResult,
    check_schedule,
    get_lab,
    padded,
    resolve_functions,
)

__all__ = ["LABS", "rewards", "run"]

Functions = Mapping[str, Callable[..., Any]]


def _f64(x: Any) -> jax.Array:
    return jnp.asarray(x, dtype=jnp.float64)


def _i64(x: Any) -> jax.Array:
    return jnp.asarray(x, dtype=jnp.int64)


def _bool(x: Any) -> jax.Array:
    return jnp.asarray(x, dtype=jnp.bool_)


def _challenger(f: Functions, lab: Lab) -> jax.Array:
    consistency = _f64(lab.column("consistency"))
    reward = f["challenger_rewards"](
        consistency,
        _i64(lab.column("cluster")),
        _bool(lab.column("valid")),
        lab.params["strength"],
    )
    return jnp.minimum(reward, f["uncertainty_reward"](consistency))


def _pseudo_labels(f: Functions, lab: Lab) -> jax.Array:
    p = lab.params
    labels, consistency = f["consensus"](_i64(lab.column("old_votes")), p["num_answers"])
    keep = _f64(f["curriculum_mask"](consistency, p["low"], p["high"]))
    agree = _f64(f["pseudo_rewards"](_i64(lab.column("fresh")), labels))
    return (keep[:, None] * agree).sum(axis=0) / jnp.maximum(1.0, keep.sum())


def _proposer(f: Functions, lab: Lab) -> jax.Array:
    base, mask = padded(lab, "base_logp")
    hinted, _ = padded(lab, "hinted_logp")
    delta = f["hint_delta"](_f64(base), _f64(hinted), _bool(mask))
    return f["proposer_rewards"](
        delta,
        _i64(lab.column("hint_chars")),
        _f64(lab.column("cluster_share")),
        _bool(lab.column("valid")),
    )


def _coder(f: Functions, lab: Lab) -> jax.Array:
    return f["coder_rewards"](
        _bool(lab.column("executed")),
        _f64(lab.column("easy_accuracy")),
        _f64(lab.column("consistency")),
        _bool(lab.column("syntax_error")),
    )


def _solver(f: Functions, lab: Lab) -> jax.Array:
    p = lab.params
    per_answer = f["solver_rewards"](
        _i64(lab.column("answers")),
        _bool(lab.column("format_valid")),
        p["num_answers"],
        p["alpha"],
    )
    return _f64(per_answer).mean(axis=0)


_REWARDS: dict[str, Callable[[Functions, Lab], jax.Array]] = {
    "challenger": _challenger,
    "pseudo_labels": _pseudo_labels,
    "proposer": _proposer,
    "coder": _coder,
    "solver": _solver,
}


def _rewards(lab: Lab, functions: Any) -> jax.Array:
    fns = resolve_functions(functions, lab.functions, lambda: zero_jax)
    r = _f64(_REWARDS[lab.name](fns, lab))
    if r.shape != (lab.num_actions,):
        raise ValueError(
            f"lab {lab.name!r}: the rewards must have shape ({lab.num_actions},), one per "
            f"action; the functions produced {r.shape}"
        )
    return r


def rewards(name: str, *, functions: Any = None) -> np.ndarray:
    """The per-action rewards of lab ``name`` (float64 ``[N]``) with the given functions."""
    lab = get_lab(name)
    with jax.enable_x64(True):
        return np.asarray(_rewards(lab, functions))


@functools.partial(jax.jit, static_argnames=("steps",))
def _train(rewards: jax.Array, learning_rate: jax.Array, steps: int) -> jax.Array:
    opt = optax.sgd(learning_rate)

    def loss(logits: jax.Array) -> jax.Array:
        return -jnp.dot(jax.nn.softmax(logits), rewards)

    def step(carry, _):
        logits, state = carry
        updates, state = opt.update(jax.grad(loss)(logits), state, logits)
        logits = optax.apply_updates(logits, updates)
        return (logits, state), jax.nn.softmax(logits)

    logits = jnp.zeros_like(rewards)
    _, probs = lax.scan(step, (logits, opt.init(logits)), None, length=steps)
    return jnp.concatenate([jax.nn.softmax(logits)[None], probs])


def run(
    name: str, *, functions: Any = None, steps: int = 60, learning_rate: float = 0.5
) -> LabResult:
    """Train lab ``name``'s policy and return its trajectory and verdict.

    Args:
      name: a key of ``LABS``.
      functions: ``None`` for ``zero_jax``'s own rewards, or a module / mapping of
        replacements taking and returning JAX arrays; missing names fall back to
        ``zero_jax``.  They are called eagerly, once, before the jitted loop.
      steps: number of optax.sgd updates.
      learning_rate: SGD step size.

    Raises:
      ValueError: unknown lab name, bad schedule, or rewards of the wrong shape.
    """
    lab = get_lab(name)
    steps, lr = check_schedule(steps, learning_rate)
    with jax.enable_x64(True):
        r = _rewards(lab, functions)
        probs = np.asarray(_train(r, jnp.asarray(lr, jnp.float64), steps))
    return LabResult.from_probs(lab.name, probs, lab.target)
