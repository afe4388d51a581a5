"""zero-rewards inside TRL (PyTorch): reward functions and TRL's advantages.

Rewards are computed by :mod:`zero_torch`.  Pass them to ``GRPOTrainer``::

    from zero_stacks import trl as zt

    trainer = GRPOTrainer(
        model=model,
        reward_funcs=[zt.solver_reward(num_generations=4)],   # R-Zero, online votes
        args=GRPOConfig(num_generations=4, ...),
        train_dataset=dataset,
    )

TRL does not tell reward functions its ``num_generations``: give the same value
to the factory.  Online votes need each prompt's whole group in one call, which
holds on one process; the rewards raise a ``ValueError`` when a group is split.

TRL computes advantages itself; :data:`TRL_PRESETS` names the
``zero_torch.ADVANTAGE_PRESETS`` entry that reproduces each ``scale_rewards``
setting (:func:`group_advantages` applies it).  Importing this module does not
import TRL.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

import zero_torch
from zero_stacks import _common
from zero_stacks._common import CoderFeedback, RewardFn

__all__ = [
    "BACKEND",
    "TRL_PRESETS",
    "CoderFeedback",
    "challenger_reward",
    "coder_reward",
    "group_advantages",
    "proposer_reward",
    "solver_reward",
]

#: ``GRPOConfig.scale_rewards`` -> the ``ADVANTAGE_PRESETS`` entry with TRL's numbers
#: (group mean; unbiased std of the group / of the batch / none; eps 1e-4).
TRL_PRESETS: dict[str, str] = {"group": "trl", "batch": "trl_batch", "none": "dr_grpo"}


def _to_numpy(x: Any) -> np.ndarray:
    return x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else np.asarray(x)


#: zero_torch as the backend of the shared reward implementations.
BACKEND = _common.Backend("zero_torch", zero_torch, torch.from_numpy, _to_numpy)


def solver_reward(num_generations: int | None = None, **options: Any) -> RewardFn:
    """R-Zero / MM-Zero solver reward computed by zero_torch.

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
    """R-Zero challenger reward computed by zero_torch.

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
    """G-Zero proposer reward computed by zero_torch.

    ``logprobs(questions, hints)`` returns ``(base_logp, hinted_logp, mask)``
    ``[m, T]`` (NumPy arrays or CPU tensors).  Options: ``count_tokens``,
    ``threshold``; see :func:`zero_stacks._common.proposer_reward`.
    """
    return _common.proposer_reward(BACKEND, logprobs, num_generations, **options)


def coder_reward(
    execute: Callable[[list[str]], Sequence[Any]], num_generations: int | None = None
) -> RewardFn:
    """MM-Zero coder reward computed by zero_torch; ``execute(codes)`` returns one
    :class:`CoderFeedback` per completion (see :func:`zero_stacks._common.coder_reward`)."""
    return _common.coder_reward(BACKEND, execute, num_generations)


def group_advantages(
    rewards: torch.Tensor, num_generations: int, scale_rewards: str = "group"
) -> torch.Tensor:
    """``GRPOTrainer``'s advantages of flat ``[B * G]`` rewards, from zero_torch.

    ``zero_torch.group_advantages(rewards.view(-1, G), **ADVANTAGE_PRESETS[p])``
    with ``p = TRL_PRESETS[scale_rewards]``, flattened.  Equal to TRL's own
    computation (``sum_then_normalize``, one process, no NaN rewards) up to float
    rounding, except that all-equal groups get exactly 0.
    """
    g = _common.check_num_generations(num_generations)
    if scale_rewards not in TRL_PRESETS:
        raise ValueError(
            f"scale_rewards must be one of {sorted(TRL_PRESETS)}, got {scale_rewards!r}"
        )
    if not isinstance(rewards, torch.Tensor) or rewards.ndim != 1:
        raise TypeError("rewards must be a flat [B * num_generations] torch.Tensor")
    if rewards.numel() == 0 or rewards.numel() % g:
        raise ValueError(
            f"rewards has {rewards.numel()} entries, not a positive multiple of num_generations={g}"
        )
    preset = zero_torch.ADVANTAGE_PRESETS[TRL_PRESETS[scale_rewards]]
    return zero_torch.group_advantages(rewards.view(-1, g), **preset).reshape(-1)
