"""zero-rewards inside Tunix (JAX): reward functions and an advantage estimator.

Rewards are computed by :mod:`zero_jax` (eagerly, on the host arrays Tunix
hands its reward functions).  Pass them to ``GRPOLearner(reward_fns=...)``::

    from zero_stacks import tunix as zt

    estimator = zt.register_advantage_estimator()          # "zero_rewards_grpo"
    learner = GRPOLearner(
        rl_cluster=cluster,
        reward_fns=[zt.solver_reward()],                   # R-Zero, online votes
        algo_config=GRPOConfig(num_generations=4, advantage_estimator=estimator),
    )

Tunix passes ``num_generations`` from its ``GRPOConfig`` to reward functions that
take it, so the factories need it only outside a learner.  Importing this module
does not import Tunix; only :func:`register_advantage_estimator` does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax.numpy as jnp
import numpy as np

import zero_jax
from zero_stacks import _common
from zero_stacks._common import CoderFeedback, RewardFn

__all__ = [
    "BACKEND",
    "ESTIMATOR_NAME",
    "CoderFeedback",
    "challenger_reward",
    "coder_reward",
    "group_advantages",
    "proposer_reward",
    "register_advantage_estimator",
    "solver_reward",
]

#: The name our estimator is registered under in Tunix's advantage-estimator registry.
ESTIMATOR_NAME = "zero_rewards_grpo"

#: zero_jax as the backend of the shared reward implementations.
BACKEND = _common.Backend("zero_jax", zero_jax, jnp.asarray, np.asarray)


def solver_reward(num_generations: int | None = None, **options: Any) -> RewardFn:
    """R-Zero / MM-Zero solver reward computed by zero_jax.

    Options (keyword-only): ``labels_column``, ``consistency_column``,
    ``unparseable``, ``equivalence``, ``band``, ``low``, ``high``, ``alpha``,
    ``format``; see :func:`zero_stacks._common.solver_reward` for their meaning.
    """
    return _common.solver_reward(BACKEND, num_generations, **options)


def challenger_reward(
    solver: Callable[[list[str], int], Sequence[Sequence[str]]],
    num_generations: int | None = None,
    **options: Any,
) -> RewardFn:
    """R-Zero challenger reward computed by zero_jax.

    ``solver(questions, k)`` returns k sampled replies per question.  Options:
    ``num_samples`` (10), ``strength`` (1.0), ``threshold`` (0.5),
    ``unparseable``, ``equivalence``; see :func:`zero_stacks._common.challenger_reward`.
    """
    return _common.challenger_reward(BACKEND, solver, num_generations, **options)


def proposer_reward(
    logprobs: Callable[[list[str], list[str]], tuple[Any, Any, Any]],
    num_generations: int | None = None,
    **options: Any,
) -> RewardFn:
    """G-Zero proposer reward computed by zero_jax.

    ``logprobs(questions, hints)`` returns ``(base_logp, hinted_logp, mask)``
    ``[m, T]``.  Options: ``count_tokens``, ``threshold``; see
    :func:`zero_stacks._common.proposer_reward`.
    """
    return _common.proposer_reward(BACKEND, logprobs, num_generations, **options)


def coder_reward(
    execute: Callable[[list[str]], Sequence[Any]], num_generations: int | None = None
) -> RewardFn:
    """MM-Zero coder reward computed by zero_jax; ``execute(codes)`` returns one
    :class:`CoderFeedback` per completion (see :func:`zero_stacks._common.coder_reward`)."""
    return _common.coder_reward(BACKEND, execute, num_generations)


def group_advantages(
    rewards: Any, num_generations: int, *, preset: str = "tunix", **overrides: Any
) -> np.ndarray:
    """Tunix-style flat advantages from ``zero_jax.group_advantages``.

    ``rewards`` is the flat ``[B * G]`` vector Tunix passes its estimators; it is
    reshaped to ``[B, G]`` groups, scaled with ``ADVANTAGE_PRESETS[preset]``
    (``"tunix"``: ``(r - mean) / (std(ddof=1) + 1e-6)``, Tunix's own ``"grpo"``
    estimator) updated by ``overrides``, and flattened back.  Unlike Tunix's
    estimator it never returns NaN: a group of one sample gets 0 (Tunix: NaN) and
    a group of equal rewards gets exactly 0.

    Returns:
      float ``[B * G]`` NumPy array (float64 with x64 enabled, else float32).
    """
    g = _common.check_num_generations(num_generations)
    r = np.asarray(rewards)
    if r.ndim != 1 or r.size == 0 or r.size % g:
        raise ValueError(
            f"rewards must be a non-empty flat [B * num_generations] vector, "
            f"got shape {list(r.shape)} with num_generations={g}"
        )
    if not np.issubdtype(r.dtype, np.floating):
        raise TypeError(f"rewards must be floats, got {r.dtype}")
    if preset not in zero_jax.ADVANTAGE_PRESETS:
        raise ValueError(
            f"preset must be one of {sorted(zero_jax.ADVANTAGE_PRESETS)}, got {preset!r}"
        )
    kwargs = {**zero_jax.ADVANTAGE_PRESETS[preset], **overrides}
    adv = zero_jax.group_advantages(jnp.asarray(r.reshape(-1, g)), **kwargs)
    return np.asarray(adv).reshape(-1)


def register_advantage_estimator(
    name: str = ESTIMATOR_NAME, *, preset: str = "tunix", **overrides: Any
) -> str:
    """Register :func:`group_advantages` in Tunix's advantage-estimator registry.

    Afterwards ``GRPOConfig(advantage_estimator=name)`` makes ``GRPOLearner`` call
    it as ``estimator(rewards=..., num_generations=...)``.  Registering the same
    name again replaces the earlier function (Tunix logs a warning).  Needs the
    ``tunix`` extra.

    Returns:
      ``name``, to pass to ``GRPOConfig``.
    """
    from tunix.rl import function_registry  # the only import of Tunix in zero_stacks

    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty str, got {name!r}")
    if preset not in zero_jax.ADVANTAGE_PRESETS:
        raise ValueError(
            f"preset must be one of {sorted(zero_jax.ADVANTAGE_PRESETS)}, got {preset!r}"
        )

    def estimator(rewards: Any, num_generations: int) -> np.ndarray:
        return group_advantages(rewards, num_generations, preset=preset, **overrides)

    estimator.__name__ = estimator.__qualname__ = name.replace("-", "_")
    function_registry.register_advantage_estimator(name)(estimator)
    return name
