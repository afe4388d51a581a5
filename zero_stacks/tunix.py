"""zero-rewards inside Tunix (JAX): reward functions and an advantage estimator.

Rewards are computed by :mod:`zero_jax` (eagerly, on the host arrays Tunix
hands its reward functions).  Pass them to ``GRPOLearner(reward_fns=...)``::

    from zero_stacks import tunix as zt

    estimator = zt.register_advantage_estimator()          # "zero_rewards_grpo"
    learner = GRPOLearner(
        rl_cluster=cluster,
        reward_fns=[zt.SolverReward()],                    # R-Zero, online votes
        algo_config=GRPOConfig(num_generations=4, advantage_estimator=estimator),
        metric_fns=[zt.VoteDiagnostics(4, truth_column="answer")],   # TTRL, logged
    )

Each reward is a small picklable object (:class:`SolverReward`,
:class:`ChallengerReward`, :class:`ProposerReward`, :class:`CoderReward`; and
:class:`OverlongPenalty`, DAPO's soft overlong punishment, with your
``count_tokens``).  Tunix passes ``num_generations`` from its ``GRPOConfig`` to
reward functions that take it, so a reward needs it only outside a learner.
:class:`VoteDiagnostics` is a ``metric_fns`` entry (TTRL's vote diagnostics
against a truth column).  The advantage estimators (:class:`AdvantageEstimator`,
``"zero_rewards_grpo"`` and, with ``preset="rloo"``, ``"zero_rewards_rloo"``) are
picklable objects too.  Importing this module does not import Tunix; only
:func:`register_advantage_estimator` does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import numpy as np

import zero_jax
from zero_stacks import challenger, coder, overlong, proposer, solver, votes
from zero_stacks._backend import Backend, is_float
from zero_stacks._checks import check_count
from zero_stacks.coder import CoderFeedback

__all__ = [
    "BACKEND",
    "ESTIMATOR_NAME",
    "ESTIMATOR_NAMES",
    "RLOO_ESTIMATOR_NAME",
    "AdvantageEstimator",
    "ChallengerReward",
    "CoderFeedback",
    "CoderReward",
    "OverlongPenalty",
    "ProposerReward",
    "SolverReward",
    "VoteDiagnostics",
    "group_advantages",
    "register_advantage_estimator",
]

#: The name our estimator is registered under in Tunix's advantage-estimator registry.
ESTIMATOR_NAME = "zero_rewards_grpo"
#: The name of our RLOO estimator (``ADVANTAGE_PRESETS["rloo"]``).
RLOO_ESTIMATOR_NAME = "zero_rewards_rloo"
#: The default registry name of each preset's estimator (others: ``"zero_rewards_<preset>"``).
ESTIMATOR_NAMES: dict[str, str] = {"tunix": ESTIMATOR_NAME, "rloo": RLOO_ESTIMATOR_NAME}


def _same(x: np.ndarray) -> np.ndarray:
    return x  # zero_jax takes NumPy arrays (int64 / float64 become JAX's types there)


#: zero_jax, the library every reward of this module computes with.
BACKEND = Backend("zero_jax", zero_jax, _same, np.asarray, checked=zero_jax.checked)


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


class OverlongPenalty(overlong.OverlongPenalty):
    """:class:`zero_stacks.overlong.OverlongPenalty` (DAPO Eq. 13) with zero_jax.

    Tunix hands reward functions the completion texts only (no token ids or
    lengths), so ``count_tokens(text) -> int`` is required: e.g. a module-level
    function returning ``len(tokenizer.encode(text))`` (a lambda works too, but does
    not pickle).  Tunix's own ``DAPOLearner`` shaping counts characters
    (``len(completion)``) and does not stop at -1.
    """

    backend = BACKEND

    def __init__(
        self,
        max_length: float,
        cache: float,
        *,
        count_tokens: overlong.CountTokens | None = None,
    ) -> None:
        if count_tokens is None:
            raise ValueError(
                "count_tokens is required with Tunix, which passes reward functions the "
                "completion texts only: e.g. count_tokens=lambda t: len(tokenizer.encode(t))"
            )
        super().__init__(max_length, cache, count_tokens=count_tokens)


class VoteDiagnostics(votes.VoteDiagnostics):
    """:class:`zero_stacks.votes.VoteDiagnostics` (TTRL) as a Tunix ``metric_fns`` entry.

    ``GRPOLearner(..., metric_fns=[VoteDiagnostics(num_generations, truth_column=
    "answer")])``: Tunix calls it with each batch's prompts, completions, rewards,
    advantages and dataset columns, and logs what it returns,
    ``{name: (value, np.mean)}``, with its other metrics.  Tunix does not pass
    ``num_generations`` to metric functions: give it here.  :meth:`metrics` returns
    the plain values.
    """

    backend = BACKEND

    def __init__(self, num_generations: int | None = None, **options: Any) -> None:
        if num_generations is None:
            raise ValueError(
                "num_generations is required: Tunix does not pass it to metric_fns "
                "(give GRPOConfig's value)"
            )
        super().__init__(num_generations, **options)

    def __call__(  # type: ignore[override]
        self,
        prompts: Any,
        completions: Any,
        num_generations: int | None = None,
        **kwargs: Any,
    ) -> dict[str, tuple[float, Callable[..., Any]]]:
        batch = self.batch(prompts, completions, num_generations, kwargs)
        return {name: (value, np.mean) for name, value in self.named(batch).items()}




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
    if not is_float(r.dtype):
        raise TypeError(f"rewards must be floats, got {r.dtype}")
    if preset not in zero_jax.ADVANTAGE_PRESETS:
        raise ValueError(
            f"preset must be one of {sorted(zero_jax.ADVANTAGE_PRESETS)}, got {preset!r}"
        )
    kwargs = {**zero_jax.ADVANTAGE_PRESETS[preset], **overrides}
    adv = zero_jax.group_advantages(jnp.asarray(r.reshape(-1, g)), **kwargs)
    return np.asarray(adv).reshape(-1)


class AdvantageEstimator:
    """A Tunix advantage estimator computed by ``zero_jax.group_advantages``.

    ``estimator(rewards, num_generations)``, the call Tunix's learners make, is
    :func:`group_advantages` with ``preset`` and ``overrides``: ``"tunix"`` equals
    Tunix's ``"grpo"`` on groups whose rewards differ, ``"rloo"`` equals Tunix's
    ``"rloo"`` (``r - (sum - r) / (G - 1)``) on groups whose rewards differ; both
    give 0, never NaN, to single-sample and all-equal groups.  A small object with
    ``__name__`` (the name it is registered under), picklable and deep-copyable;
    :func:`register_advantage_estimator` builds and registers one.
    """

    __name__: str
    preset: str
    overrides: dict[str, Any]

    def __init__(self, name: str | None = None, *, preset: str = "tunix", **overrides: Any) -> None:
        if preset not in zero_jax.ADVANTAGE_PRESETS:
            raise ValueError(
                f"preset must be one of {sorted(zero_jax.ADVANTAGE_PRESETS)}, got {preset!r}"
            )
        if name is None:
            name = ESTIMATOR_NAMES.get(preset, f"zero_rewards_{preset}")
        if not isinstance(name, str) or not name:
            raise ValueError(f"name must be a non-empty str, got {name!r}")
        # The library checks the options now, not at the first step.
        zero_jax.group_advantages(
            jnp.zeros((1, 2)), **{**zero_jax.ADVANTAGE_PRESETS[preset], **overrides}
        )
        self.__name__ = name
        self.preset = preset
        self.overrides = dict(overrides)

    def __call__(self, rewards: Any, num_generations: int) -> np.ndarray:
        return group_advantages(rewards, num_generations, preset=self.preset, **self.overrides)

    @property
    def options(self) -> dict[str, Any]:
        """The keyword arguments given to ``zero_jax.group_advantages``."""
        return {**zero_jax.ADVANTAGE_PRESETS[self.preset], **self.overrides}

    def __repr__(self) -> str:
        extra = "".join(f", {k}={v!r}" for k, v in self.overrides.items())
        return (
            f"{type(self).__module__}.{type(self).__qualname__}"
            f"({self.__name__!r}, preset={self.preset!r}{extra})"
        )


def register_advantage_estimator(
    name: str | None = None, *, preset: str = "tunix", **overrides: Any
) -> str:
    """Register an :class:`AdvantageEstimator` in Tunix's advantage-estimator registry.

    Afterwards ``GRPOConfig(advantage_estimator=name)`` makes ``GRPOLearner`` call
    it as ``estimator(rewards=..., num_generations=...)``.  ``name`` defaults to
    the preset's (:data:`ESTIMATOR_NAMES`): ``"zero_rewards_grpo"`` for
    ``preset="tunix"`` (Tunix's ``"grpo"``, never NaN), ``"zero_rewards_rloo"`` for
    ``preset="rloo"`` (Tunix's ``"rloo"``), else ``"zero_rewards_<preset>"``.
    Registering the same name again replaces the earlier function (Tunix logs a
    warning).  Needs the ``tunix`` extra.

    Returns:
      ``name``, to pass to ``GRPOConfig``.
    """
    try:
        from tunix.rl import function_registry  # the only import of Tunix in zero_stacks
    except ModuleNotFoundError as e:
        if not (e.name or "tunix").startswith("tunix"):
            raise
        raise ModuleNotFoundError(
            'register_advantage_estimator needs tunix (the [tunix] extra): run pip install '
            '".[tunix]" in the zero-rewards checkout', name="tunix"
        ) from None

    estimator = AdvantageEstimator(name, preset=preset, **overrides)
    function_registry.register_advantage_estimator(estimator.__name__)(estimator)
    return estimator.__name__
