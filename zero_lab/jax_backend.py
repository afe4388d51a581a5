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
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax import lax

import zero_jax
from zero_lab import LABS, Lab, LabResult, check_schedule, get_lab, resolve_functions
from zero_lab.lab_rewards import Ops, lab_rewards

__all__ = ["LABS", "rewards", "run"]

_OPS = Ops(
    f64=lambda x: jnp.asarray(x, dtype=jnp.float64),
    i64=lambda x: jnp.asarray(x, dtype=jnp.int64),
    bool_=lambda x: jnp.asarray(x, dtype=jnp.bool_),
    minimum=jnp.minimum,
    maximum=jnp.maximum,
)


def _rewards(lab: Lab, functions: Any) -> jax.Array:
    return lab_rewards(lab, resolve_functions(functions, lab.functions, lambda: zero_jax), _OPS)


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
