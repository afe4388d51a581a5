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
:class:`ChallengerReward`, :class:`ProposerReward`, :class:`CoderReward`; the
lower-case names ``solver_reward`` ... are the same classes).  TRL does not tell
reward functions its ``num_generations``: give the same value to the reward.
Online votes need each prompt's whole group in one call, which holds on one
process; the rewards raise a ``ValueError`` when a group is split.

TRL computes advantages itself; :data:`TRL_PRESETS` names the
``zero_torch.ADVANTAGE_PRESETS`` entry that reproduces each ``scale_rewards``
setting (:func:`group_advantages` applies it).  Importing this module does not
import TRL.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

import zero_torch
from zero_stacks import challenger, coder, proposer, solver
from zero_stacks._backend import Backend
from zero_stacks._checks import check_count
from zero_stacks.coder import CoderFeedback

__all__ = [
    "BACKEND",
    "TRL_PRESETS",
    "ChallengerReward",
    "CoderFeedback",
    "CoderReward",
    "ProposerReward",
    "SolverReward",
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


#: zero_torch, the library every reward of this module computes with.
BACKEND = Backend("zero_torch", zero_torch, torch.from_numpy, _to_numpy)


class SolverReward(solver.SolverReward):
    """:class:`zero_stacks.solver.SolverReward` (R-Zero / MM-Zero solver) with zero_torch."""

    backend = BACKEND


class ChallengerReward(challenger.ChallengerReward):
    """:class:`zero_stacks.challenger.ChallengerReward` (R-Zero) with zero_torch."""

    backend = BACKEND


class ProposerReward(proposer.ProposerReward):
    """:class:`zero_stacks.proposer.ProposerReward` (G-Zero) with zero_torch."""

    backend = BACKEND


class CoderReward(coder.CoderReward):
    """:class:`zero_stacks.coder.CoderReward` (MM-Zero) with zero_torch."""

    backend = BACKEND


#: The names earlier code calls (``solver_reward(num_generations=8, labels_column="answer")``):
#: the classes themselves, same arguments.
solver_reward = SolverReward
challenger_reward = ChallengerReward
proposer_reward = ProposerReward
coder_reward = CoderReward


def group_advantages(
    rewards: torch.Tensor, num_generations: int, scale_rewards: str = "group"
) -> torch.Tensor:
    """``GRPOTrainer``'s advantages of flat ``[B * G]`` rewards, from zero_torch.

    ``zero_torch.group_advantages(rewards.view(-1, G), **ADVANTAGE_PRESETS[p])``
    with ``p = TRL_PRESETS[scale_rewards]``, flattened.  Equal to TRL's own
    computation (``sum_then_normalize``, one process, no NaN rewards) up to float
    rounding, except that all-equal groups get exactly 0.
    """
    g = check_count(num_generations, "num_generations")
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
