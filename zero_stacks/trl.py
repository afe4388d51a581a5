"""zero-rewards inside TRL (PyTorch): reward functions and TRL's advantages.

Rewards are computed by :mod:`zero_torch`.  Pass them to ``GRPOTrainer``::

    from zero_stacks import trl as zt

    trainer = GRPOTrainer(
        model=model,
        reward_funcs=[zt.SolverReward(num_generations=4)],    # R-Zero, online votes
        args=GRPOConfig(num_generations=4, ...),
        train_dataset=dataset,
    )

Each reward is a small picklable object (:class:`SolverReward`,
:class:`ChallengerReward`, :class:`ProposerReward`, :class:`CoderReward`), and so are
:class:`OverlongPenalty` (DAPO's soft overlong punishment, from the
``completion_ids`` TRL passes) and :class:`VoteDiagnostics` (TTRL's vote
diagnostics against a truth column, logged through TRL's ``log_metric``; it
returns zeros).  TRL does not tell
reward functions its ``num_generations``: give the same value to the reward (inside
a ``GRPOTrainer`` the rewards check it, and in evaluation they vote over groups of
``num_generations_eval``, as the trainer samples them).  Online votes need each
prompt's whole group in one call, which holds on one process; the rewards raise a
``ValueError`` when a group is split.

TRL computes advantages itself; :data:`TRL_PRESETS` names the
``zero_torch.ADVANTAGE_PRESETS`` entry that reproduces each ``scale_rewards``
setting (:func:`group_advantages` applies it), and :func:`advantage_options` /
:func:`trainer_advantages` reproduce ``GRPOTrainer`` with several reward
functions (``reward_weights``, both ``multi_objective_aggregation`` values) and
``RLOOTrainer`` (:data:`RLOO_PRESET`).  Importing this module does not import
TRL.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import ml_dtypes
import numpy as np
import torch

import zero_torch
from zero_stacks import base, challenger, coder, overlong, proposer, solver, votes
from zero_stacks._backend import Backend, floats
from zero_stacks._batch import Batch
from zero_stacks._checks import check_count
from zero_stacks.coder import CoderFeedback

__all__ = [
    "AGGREGATIONS",
    "BACKEND",
    "RLOO_PRESET",
    "TRAINERS",
    "TRL_PRESETS",
    "ChallengerReward",
    "CoderFeedback",
    "CoderReward",
    "OverlongPenalty",
    "ProposerReward",
    "SolverReward",
    "VoteDiagnostics",
    "advantage_options",
    "group_advantages",
    "trainer_advantages",
]

#: ``GRPOConfig.scale_rewards`` -> the ``ADVANTAGE_PRESETS`` entry with TRL's numbers
#: (group mean; unbiased std of the group / of the batch / none; eps 1e-4).
TRL_PRESETS: dict[str, str] = {"group": "trl", "batch": "trl_batch", "none": "dr_grpo"}
#: The ``ADVANTAGE_PRESETS`` entry of ``RLOOTrainer`` (``normalize_advantages=False``, its
#: default): ``r_i`` minus the mean of the group's other rewards, unscaled.
RLOO_PRESET = "rloo"
#: The trainers :func:`advantage_options` knows: ``GRPOTrainer`` and ``RLOOTrainer``.
TRAINERS = ("grpo", "rloo")
#: ``GRPOConfig.multi_objective_aggregation`` values (``multi_reward_advantages``'
#: ``aggregation``).
AGGREGATIONS = ("sum_then_normalize", "normalize_then_sum")


def _to_numpy(x: Any) -> np.ndarray:
    if not isinstance(x, torch.Tensor):
        return np.asarray(x)
    x = x.detach().cpu()
    if x.dtype == torch.bfloat16:  # NumPy has no bfloat16: the same bits as ml_dtypes'
        return x.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return x.numpy()


def _from_numpy(x: np.ndarray) -> torch.Tensor:
    if x.dtype == ml_dtypes.bfloat16:
        return torch.from_numpy(x.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(x)


#: zero_torch, the library every reward of this module computes with.
BACKEND = Backend("zero_torch", zero_torch, _from_numpy, _to_numpy)


def _trainer_group_sizes(columns: Mapping[str, Any]) -> tuple[int, int] | None:
    """``(num_generations, group size of this call)`` of the ``GRPOTrainer`` calling a
    reward, or None outside one.  TRL passes neither to reward functions, but its
    ``log_metric`` is the trainer's bound method; the size of the call is TRL's own
    rule: ``num_generations`` in training, ``num_generations_eval`` in evaluation."""
    trainer = getattr(columns.get("log_metric"), "__self__", None)
    model = getattr(trainer, "model", None)
    train = getattr(trainer, "num_generations", None)
    current = getattr(trainer, "num_generations_eval", None)
    if not isinstance(train, int) or model is None:
        return None
    if getattr(model, "training", True) or not isinstance(current, int):
        current = train
    return train, current


class _InTrainer(base.StackReward):
    """A reward that takes its group size from the ``GRPOTrainer`` calling it, so that
    evaluation with ``num_generations_eval`` votes over each prompt's whole eval group
    (the reward's own ``num_generations`` must equal the trainer's)."""

    def batch(
        self,
        prompts: Sequence[Any],
        completions: Sequence[Any],
        num_generations: int | None,
        columns: Mapping[str, Any],
    ) -> Batch:
        sizes = _trainer_group_sizes(columns)
        if sizes is None or num_generations is not None or not self.grouped:
            return super().batch(prompts, completions, num_generations, columns)
        train, current = sizes
        if self.num_generations is not None and self.num_generations != train:
            raise ValueError(
                f"num_generations={self.num_generations} given to the reward differs from "
                f"GRPOConfig.num_generations={train}"
            )
        return Batch.check(prompts, completions, current, columns)


class SolverReward(_InTrainer, solver.SolverReward):
    """:class:`zero_stacks.solver.SolverReward` (R-Zero / MM-Zero solver) with zero_torch."""

    backend = BACKEND


class ChallengerReward(_InTrainer, challenger.ChallengerReward):
    """:class:`zero_stacks.challenger.ChallengerReward` (R-Zero) with zero_torch."""

    backend = BACKEND


class ProposerReward(_InTrainer, proposer.ProposerReward):
    """:class:`zero_stacks.proposer.ProposerReward` (G-Zero) with zero_torch."""

    backend = BACKEND


class CoderReward(_InTrainer, coder.CoderReward):
    """:class:`zero_stacks.coder.CoderReward` (MM-Zero) with zero_torch."""

    backend = BACKEND


class OverlongPenalty(_InTrainer, overlong.OverlongPenalty):
    """:class:`zero_stacks.overlong.OverlongPenalty` (DAPO Eq. 13) with zero_torch.

    ``OverlongPenalty(max_length, cache)`` reads the lengths from the
    ``completion_ids`` TRL passes to reward functions, and equals
    ``trl.rewards.get_soft_overlong_punishment(max_length, cache)``.
    """

    backend = BACKEND


class VoteDiagnostics(_InTrainer, votes.VoteDiagnostics):
    """:class:`zero_stacks.votes.VoteDiagnostics` (TTRL) as a TRL reward function.

    ``VoteDiagnostics(num_generations, truth_column="answer")`` in
    ``reward_funcs`` logs the four diagnostics through the ``log_metric`` TRL
    passes (averaged over each logging step, next to TRL's ``reward`` and ``kl``)
    and returns 0.0 for every completion, which changes no advantage (it adds 0
    to the weighted sum; normalised alone it is an all-equal reward, 0).  With
    ``reward_weights``, give it a weight too (any; 0.0 says what it is).
    Outside a trainer, :meth:`metrics` returns them.
    """

    backend = BACKEND

    def __call__(
        self,
        prompts: Any,
        completions: Any,
        num_generations: int | None = None,
        **kwargs: Any,
    ) -> list[float]:
        batch = self.batch(prompts, completions, num_generations, kwargs)
        self.log_through(batch, kwargs)
        return floats(self.compute(batch))




def group_advantages(
    rewards: torch.Tensor, num_generations: int, scale_rewards: str | bool = "group"
) -> torch.Tensor:
    """``GRPOTrainer``'s advantages of flat ``[B * G]`` rewards, from zero_torch.

    ``zero_torch.group_advantages(rewards.view(-1, G), **ADVANTAGE_PRESETS[p])``
    with ``p = TRL_PRESETS[scale_rewards]`` (``True`` / ``False`` as ``GRPOConfig``
    reads them: ``"group"`` / ``"none"``), flattened.  Equal to TRL's own
    computation (``sum_then_normalize``, one process, no NaN rewards) up to float
    rounding, except that all-equal groups get exactly 0.
    """
    g = check_count(num_generations, "num_generations")
    scale = _scale(scale_rewards)
    if not isinstance(rewards, torch.Tensor) or rewards.ndim != 1:
        raise TypeError("rewards must be a flat [B * num_generations] torch.Tensor")
    if rewards.numel() == 0 or rewards.numel() % g:
        raise ValueError(
            f"rewards has {rewards.numel()} entries, not a positive multiple of num_generations={g}"
        )
    preset = zero_torch.ADVANTAGE_PRESETS[TRL_PRESETS[scale]]
    return zero_torch.group_advantages(rewards.view(-1, g), **preset).reshape(-1)


def _scale(value: object) -> str:
    """``GRPOConfig.scale_rewards`` as GRPOConfig reads it (True: "group", False: "none")."""
    scale = "group" if value is True else "none" if value is False else value
    if not isinstance(scale, str) or scale not in TRL_PRESETS:
        raise ValueError(
            f"scale_rewards must be one of {sorted(TRL_PRESETS)} (or True / False), got {value!r}"
        )
    return scale


def advantage_options(
    trainer: str = "grpo",
    *,
    scale_rewards: str | bool | None = None,
    multi_objective_aggregation: str | None = None,
) -> dict[str, Any]:
    """The ``zero_torch.multi_reward_advantages`` keywords of a TRL trainer's advantages.

    * ``trainer="grpo"`` (``GRPOTrainer``): ``multi_objective_aggregation``
      ``"sum_then_normalize"`` (default) with the preset of ``scale_rewards``
      (:data:`TRL_PRESETS`: ``"group"`` default, ``"batch"``, ``"none"``; ``True`` /
      ``False`` as ``GRPOConfig`` reads them), or ``"normalize_then_sum"`` (GDPO),
      which TRL computes with the group std and ``1e-4`` whatever ``scale_rewards``
      says (``ADVANTAGE_PRESETS["trl"]``).
    * ``trainer="rloo"`` (``RLOOTrainer``, ``normalize_advantages=False``, its
      default): ``"sum_then_normalize"`` with ``ADVANTAGE_PRESETS["rloo"]``; it has
      neither option (giving one is a ``ValueError``).

    >>> advantage_options("rloo")["baseline"]
    'leave_one_out'
    >>> advantage_options(multi_objective_aggregation="normalize_then_sum")["eps"]
    0.0001

    Returns:
      a new dict: ``aggregation`` and the preset's ``scale``, ``ddof``, ``eps``,
      ``singleton`` (and ``baseline``).
    """
    if trainer not in TRAINERS:
        raise ValueError(f"trainer must be one of {list(TRAINERS)}, got {trainer!r}")
    if trainer == "rloo":
        for name, value in (
            ("scale_rewards", scale_rewards),
            ("multi_objective_aggregation", multi_objective_aggregation),
        ):
            if value is not None:
                raise ValueError(f"RLOOTrainer has no {name} (got {value!r}); leave it None")
        return {"aggregation": "sum_then_normalize", **zero_torch.ADVANTAGE_PRESETS[RLOO_PRESET]}
    scale = _scale("group" if scale_rewards is None else scale_rewards)
    aggregation = multi_objective_aggregation or "sum_then_normalize"
    if aggregation not in AGGREGATIONS:
        raise ValueError(
            f"multi_objective_aggregation must be one of {list(AGGREGATIONS)}, got {aggregation!r}"
        )
    preset = TRL_PRESETS[scale] if aggregation == "sum_then_normalize" else "trl"
    return {"aggregation": aggregation, **zero_torch.ADVANTAGE_PRESETS[preset]}


def trainer_advantages(
    rewards_per_func: torch.Tensor,
    num_generations: int,
    *,
    trainer: str = "grpo",
    scale_rewards: str | bool | None = None,
    multi_objective_aggregation: str | None = None,
    reward_weights: Any = None,
) -> torch.Tensor:
    """A TRL trainer's advantages of its ``rewards_per_func``, from zero_torch.

    ``rewards_per_func`` is the ``[B * G, F]`` float tensor TRL builds, one column
    per reward function, NaN where a function returned ``None`` (a ``[B * G]``
    tensor is one function); ``reward_weights`` is ``GRPOConfig`` /
    ``RLOOConfig.reward_weights`` (``[F]``, default ones).  Returns the flat
    ``[B * G]`` advantages of ``zero_torch.multi_reward_advantages`` with
    :func:`advantage_options` ``(trainer, ...)``, NaN entries masked: equal to
    TRL's on one process up to float rounding: a completion whose every reward is
    None gets 0, and so, under RLOO, does a group with one scorable completion, as
    in TRL; groups whose kept rewards are all equal get exactly 0 (TRL: 0 up to a
    rounding residue).  ``RLOOTrainer`` adds its KL penalty
    (``beta``, default 0.05) and ``reward_clip_range`` to the summed reward before
    the baseline: these are its advantages with ``beta=0.0`` and no clipping (for
    ``beta != 0``, append the sequence KL as one more column with weight
    ``-beta``).
    """
    g = check_count(num_generations, "num_generations")
    options = advantage_options(
        trainer,
        scale_rewards=scale_rewards,
        multi_objective_aggregation=multi_objective_aggregation,
    )
    if not isinstance(rewards_per_func, torch.Tensor) or rewards_per_func.ndim not in (1, 2):
        raise TypeError("rewards_per_func must be a [B * num_generations, F] torch.Tensor")
    if not rewards_per_func.is_floating_point():
        raise TypeError(f"rewards_per_func must be floats, got {rewards_per_func.dtype}")
    count = rewards_per_func.shape[0]
    if rewards_per_func.ndim == 2 and rewards_per_func.shape[1] == 0:
        raise ValueError("rewards_per_func has no reward function (0 columns)")
    if count == 0 or count % g:
        raise ValueError(
            f"rewards_per_func has {count} rows, not a positive multiple of "
            f"num_generations={g}"
        )
    rows = rewards_per_func.reshape(count, -1)
    weights = None
    if reward_weights is not None:
        weights = torch.as_tensor(reward_weights, dtype=rows.dtype).reshape(-1)
        if weights.numel() != rows.shape[1]:
            raise ValueError(
                f"reward_weights has {weights.numel()} entries for {rows.shape[1]} reward functions"
            )
    grouped = rows.reshape(-1, g, rows.shape[1])
    kept = torch.isnan(grouped).logical_not()
    advantages = zero_torch.multi_reward_advantages(grouped, weights, kept, **options)
    return advantages.reshape(-1)
