"""Absolute Zero's proposer reward, PyTorch reference (Zhao et al., 2025,
arXiv:2505.03335, §3.2, Eq. 4).  Mirrors ``zero_jax.azr``."""

from __future__ import annotations

import torch

from zero_torch import _checks as _c

__all__ = ["learnability_reward", "learnability_reward_published"]


@torch.no_grad()
def learnability_reward(solve_rate: torch.Tensor) -> torch.Tensor:
    """Absolute Zero's learnability reward of a proposed task from its solve rate.

    ``r_i = 0 if s_i in {0, 1}, else 1 - s_i``

    Absolute Zero: Reinforced Self-play Reasoning with Zero Data (Andrew Zhao et al., 2025),
    §3.2, Eq. 4 (the proposer's learnability reward), https://arxiv.org/abs/2505.03335.  Output
    ``[B]``: the dtype of ``solve_rate``; detached (no gradient).

    ``solve_rate`` ``[B]`` in [0, 1] (else ValueError): the share of the solver's
    rollouts that solved the proposed task.  A task nobody or everybody solves
    teaches nothing and earns 0; otherwise the harder the better.  Half precision is
    computed in float32 and rounded once.

    >>> import torch, zero_torch
    >>> zero_torch.learnability_reward(torch.tensor([0.0, 0.25, 0.5, 1.0])).tolist()
    [0.0, 0.75, 0.5, 0.0]
    """
    (s,) = _c.arrays("learnability_reward", solve_rate)
    _c.data_checks("learnability_reward", solve_rate=s)
    x = s.to(_c.compute_dtype(s.dtype))
    extreme = (x == 0) | (x == 1)
    return torch.where(extreme, torch.zeros_like(x), 1 - x).to(s.dtype)


@torch.no_grad()
def learnability_reward_published(solve_rate: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    """Absolute Zero's proposer reward as its published code trains it.

    ``r_i = 1 - s_i if v_i and 0 < s_i < 1; -0.5 if v_i and s_i in {0, 1}; -1 if not v_i``

    Absolute Zero: Reinforced Self-play Reasoning with Zero Data (Andrew Zhao et al., 2025),
    published code: rewards/reward_managers.py (a zero reward becomes -0.5; a bad format -1;
    issue #37), https://arxiv.org/abs/2505.03335.  Output ``[B]``: the dtype of
    ``solve_rate``; detached (no gradient).

    ``solve_rate`` ``[B]`` in [0, 1] where ``valid`` (else ValueError); the rate of
    a badly formatted row is never read.  Half precision is computed in float32 and
    rounded once.

    >>> import torch, zero_torch
    >>> s = torch.tensor([0.0, 0.25, 1.0, 0.5]); valid = torch.tensor([True, True, True, False])
    >>> zero_torch.learnability_reward_published(s, valid).tolist()
    [-0.5, 0.75, -0.5, -1.0]
    """
    s, v = _c.arrays("learnability_reward_published", solve_rate, valid)
    _c.data_checks("learnability_reward_published", solve_rate=s, valid=v)
    x = s.to(_c.compute_dtype(s.dtype))
    eq4 = torch.where((x == 0) | (x == 1), torch.zeros_like(x), 1 - x)
    paid = torch.where(eq4 > 0, eq4, torch.full_like(x, -0.5))  # a zero reward: -0.5
    return torch.where(v, paid, torch.full_like(x, -1.0)).to(s.dtype)
