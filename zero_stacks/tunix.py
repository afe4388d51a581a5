"""zero-rewards inside Tunix (JAX): reward functions and an advantage estimator.

Rewards are computed by :mod:`zero_jax` (eagerly, on the host arrays Tunix
hands its reward functions).  Pass them to ``GRPOLearner(reward_fns=...)``::

    from zero_stacks import tunix as zt

    estimator = zt.register_advantage_estimator()          # "zero_rewards_grpo"
    learner = GRPOLearner(
        rl_cluster=cluster,
        reward_fns=[zt.SolverReward()],                    # R-Zero, online votes
        algo_config=GRPOConfig(num_generations=4, advantage_estimator=estimator),
    )

Each reward is a small picklable object (:class:`SolverReward`,
:class:`ChallengerReward`, :class:`ProposerReward`, :class:`CoderReward`; the
lower-case names ``solver_reward`` ... are the same classes).  Tunix passes
``num_generations`` from its ``GRPOConfig`` to reward functions that take it, so
a reward needs it only outside a learner.  Importing this module
does not import Tunix; only :func:`register_advantage_estimator` does.
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as np

import zero_jax
from zero_stacks import challenger, coder, proposer, solver
from zero_stacks._backend import Backend
from zero_stacks._checks import check_count
from zero_stacks.coder import CoderFeedback

__all__ = [
    "BACKEND",
    "ESTIMATOR_NAME",
    "ChallengerReward",
    "CoderFeedback",
    "CoderReward",
    "ProposerReward",
    "SolverReward",
    "challenger_reward",
    "coder_reward",
    "group_advantages",
    "proposer_reward",
    "register_advantage_estimator",
    "solver_reward",
]

#: The name our estimator is registered under in Tunix's advantage-estimator registry.
ESTIMATOR_NAME = "zero_rewards_grpo"


def _same(x: np.ndarray) -> np.ndarray:
    return x  # zero_jax takes NumPy arrays (int64 / float64 become JAX's types there)


#: zero_jax, the library every reward of this module computes with.
BACKEND = Backend("zero_jax", zero_jax, _same, np.asarray)


class SolverReward(solver.SolverReward):
    """:class:`zero_stacks.solver.SolverReward` (R-Zero / MM-Zero solver) with zero_jax."""

    backend = BACKEND


class ChallengerReward(challenger.ChallengerReward):
    """:class:`zero_stacks.challenger.ChallengerReward` (R-Zero) with zero_jax."""

    backend = BACKEND


class ProposerReward(proposer.ProposerReward):
    """:class:`zero_stacks.proposer.ProposerReward` (G-Zero) with zero_jax."""

    backend = BACKEND


class CoderReward(coder.CoderReward):
    """:class:`zero_stacks.coder.CoderReward` (MM-Zero) with zero_jax."""

    backend = BACKEND


#: The names earlier code calls (``solver_reward(band=True)``): the classes
#: themselves, same arguments.
solver_reward = SolverReward
challenger_reward = ChallengerReward
proposer_reward = ProposerReward
coder_reward = CoderReward


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
    g = check_count(num_generations, "num_generations")
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
