"""Absolute Zero's proposer reward, PyTorch reference (Zhao et al., 2025,
arXiv:2505.03335, §3.2, Eq. 4).  Mirrors ``zero_jax.azr``."""

from __future__ import annotations

import torch

from zero_torch import _checks as _c

__all__ = ["learnability_reward"]


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
