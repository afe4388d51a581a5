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
``num_generations_eval``, as the trainer samples them).

On several processes TRL calls each reward with its process's slice of the batch,
and a prompt's group may be split between processes (when
``per_device_train_batch_size * steps_per_generation`` is not a multiple of
``num_generations``).  Inside a ``GRPOTrainer`` with ``torch.distributed``
initialised (as ``accelerate launch`` and ``torchrun`` do), the group rewards
(:class:`SolverReward`, :class:`VoteDiagnostics`, :class:`ChallengerReward`,
:class:`ProposerReward`) bring the processes' slices together with one
``torch.distributed.all_gather_object`` per call, on every process, and return this
process's slice of what one process would compute from the whole batch (the same
numbers, bit for bit; a user's callable is asked only about this process's
completions).  Without a process group a split group is a ``ValueError`` saying so.

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
from typing import Any, ClassVar

import ml_dtypes
import numpy as np
import torch
from torch import distributed

import zero_torch
from zero_stacks import base, challenger, coder, overlong, proposer, solver, votes
from zero_stacks._backend import Backend
from zero_stacks._batch import Batch
from zero_stacks._checks import check_count
from zero_stacks.base import Steps, is_async, run_steps_async
from zero_stacks.coder import CoderFeedback

__all__ = [
    "AGGREGATIONS",
    "BACKEND",
    "AsyncChallengerReward",
    "AsyncCoderReward",
    "AsyncProposerReward",
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


#: Entries TRL passes every reward that are no dataset column (never gathered).
_TRL_ENTRIES = ("log_metric", "log_extra", "trainer_state", "environments")


def _processes(columns: Mapping[str, Any]) -> int:
    """How many processes call a reward at once: the ``torch.distributed`` world size
    inside a ``GRPOTrainer`` (which calls every process's rewards on every step), else
    1 (a call outside a trainer may be made on one process only)."""
    if _trainer_group_sizes(columns) is None:
        return 1
    if not (distributed.is_available() and distributed.is_initialized()):
        return 1
    return int(distributed.get_world_size())


class _InTrainer(base.StackReward):
    """A reward that takes its group size from the ``GRPOTrainer`` calling it, so that
    evaluation with ``num_generations_eval`` votes over each prompt's whole eval group
    (the reward's own ``num_generations`` must equal the trainer's), and that brings the
    processes' slices together when TRL runs on several processes."""

    #: The name of the option holding a user's callable that may be ``async``.
    user_callable: ClassVar[str | None] = None
    #: The subclass with an ``async __call__``, built when that callable is async.
    async_variant: ClassVar[type | None] = None

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        name, variant = cls.user_callable, cls.async_variant
        if name is not None and variant is not None:
            fn = kwargs.get(name, args[0] if args else None)
            if is_async(fn):
                cls = variant
        return object.__new__(cls)

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
        if hasattr(completions, "__len__") and len(completions) % current:
            raise ValueError(
                f"got {len(completions)} completions, not a multiple of num_generations="
                f"{current}: a prompt's group is split between processes (TRL splits it when "
                f"per_device_train_batch_size * steps_per_generation is not a multiple of "
                f"num_generations). Initialise torch.distributed before building the trainer "
                f"(accelerate launch and torchrun do; or torch.distributed."
                f"init_process_group) so that the reward gathers the group, or make "
                f"per_device_train_batch_size * steps_per_generation a multiple of "
                f"num_generations"
            )
        return Batch.check(prompts, completions, current, columns)

    def reads(self) -> tuple[str, ...]:
        """The dataset columns a call reads (gathered with the completions)."""
        names = ("labels_column", "consistency_column", "truth_column")
        return tuple(v for v in (getattr(self, n, None) for n in names) if v is not None)

    def steps(
        self,
        prompts: Sequence[Any],
        completions: Sequence[Any],
        num_generations: int | None,
        columns: Mapping[str, Any],
    ) -> Steps:
        world = _processes(columns)
        if world == 1 or not self.grouped:
            return (yield from super().steps(prompts, completions, num_generations, columns))
        prompts, completions, gathered, part = _gather(
            world, prompts, completions, columns, self.reads()
        )
        batch = self.batch(prompts, completions, num_generations, {**columns, **gathered})
        values = yield from self.compute_steps(batch, part)
        return self.finish(values)


def _gather(
    world: int,
    prompts: Sequence[Any],
    completions: Sequence[Any],
    columns: Mapping[str, Any],
    names: tuple[str, ...],
) -> tuple[list[Any], list[Any], dict[str, list[Any]], slice]:
    """The whole batch of the ``world`` processes' calls, in process order (TRL's order
    when it gathers the rewards), and this process's slice of it.  One
    ``all_gather_object`` on every process; an error building this process's share is
    raised on every process after it (so that none waits for a collective)."""
    try:
        share: Any = (
            list(prompts),
            list(completions),
            {n: list(columns[n]) for n in names if n in columns and n not in _TRL_ENTRIES},
        )
    except Exception as exc:  # raised below, on every process, after the collective
        share = exc
    shares: list[Any] = [None] * world
    distributed.all_gather_object(shares, share)
    for rank, item in enumerate(shares):
        if isinstance(item, BaseException):
            raise ValueError(f"process {rank} could not pass its completions: {item!r}") from (
                item if item is share else None
            )
    rank = distributed.get_rank()
    start = sum(len(c) for _, c, _ in shares[:rank])
    part = slice(start, start + len(shares[rank][1]))
    gathered = {
        n: [v for _, _, cols in shares for v in cols.get(n, [])]
        for n in names
        if all(n in cols for _, _, cols in shares)
    }
    return (
        [p for ps, _, _ in shares for p in ps],
        [c for _, cs, _ in shares for c in cs],
        gathered,
        part,
    )


class _Async:
    """Mixin: an ``async __call__`` (TRL awaits such a reward in its event loop, next to
    its other async rewards) for a reward holding an ``async`` callable."""

    async def __call__(
        self,
        prompts: Sequence[Any],
        completions: Sequence[Any],
        num_generations: int | None = None,
        **kwargs: Any,
    ) -> list[float | None]:
        steps = self.steps(prompts, completions, num_generations, kwargs)  # type: ignore[attr-defined]
        return await run_steps_async(steps)  # type: ignore[no-any-return]


class SolverReward(_InTrainer, solver.SolverReward):
    """:class:`zero_stacks.solver.SolverReward` (R-Zero / MM-Zero solver) with zero_torch
    (``unscored=None`` allowed: TRL leaves a None reward out of its baselines)."""

    backend = BACKEND
    takes_none = True


class ChallengerReward(_InTrainer, challenger.ChallengerReward):
    """:class:`zero_stacks.challenger.ChallengerReward` (R-Zero) with zero_torch; with an
    ``async`` solver it is an :class:`AsyncChallengerReward`."""

    backend = BACKEND
    user_callable = "solver"


class AsyncChallengerReward(_Async, ChallengerReward):
    """:class:`ChallengerReward` holding an ``async`` solver: an async reward function."""


class ProposerReward(_InTrainer, proposer.ProposerReward):
    """:class:`zero_stacks.proposer.ProposerReward` (G-Zero) with zero_torch; with an
    ``async`` ``logprobs`` it is an :class:`AsyncProposerReward`."""

    backend = BACKEND
    user_callable = "logprobs"


class AsyncProposerReward(_Async, ProposerReward):
    """:class:`ProposerReward` holding an ``async`` ``logprobs``: an async reward function."""


class CoderReward(_InTrainer, coder.CoderReward):
    """:class:`zero_stacks.coder.CoderReward` (MM-Zero) with zero_torch; with an ``async``
    ``execute`` it is an :class:`AsyncCoderReward`."""

    backend = BACKEND
    user_callable = "execute"


class AsyncCoderReward(_Async, CoderReward):
    """:class:`CoderReward` holding an ``async`` ``execute``: an async reward function."""


ChallengerReward.async_variant = AsyncChallengerReward
ProposerReward.async_variant = AsyncProposerReward
CoderReward.async_variant = AsyncCoderReward


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
    ``SolverReward(truth_column="answer")`` logs the same four itself; this class
    stays for runs that want them without the solver reward.  On several processes
    the diagnostics of the whole batch are logged once, by process 0.
    Outside a trainer, :meth:`metrics` returns them.
    """

    backend = BACKEND

    def compute_steps(self, batch: Batch, part: slice) -> Steps:
        if part.start == 0:  # the whole batch's diagnostics, logged once
            self.log_through(batch, batch.columns)
        return self.compute(batch)[part]
        yield  # pragma: no cover  (no callable to request)




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
            f"rewards_per_func has {count} rows, not a positive multiple of num_generations={g}"
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
