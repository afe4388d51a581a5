"""Role-conditioned advantages, PyTorch reference (SPIRAL, Liu et al., 2025,
arXiv:2506.24119, role-conditioned advantage estimation).  Mirrors ``zero_jax.roles``."""

from __future__ import annotations

import torch

from zero_contracts import messages as msg
from zero_torch import _checks as _c
from zero_torch._checks import Index, Real

__all__ = ["role_baseline_advantages"]


@torch.no_grad()
def role_baseline_advantages(
    rewards: torch.Tensor,
    roles: torch.Tensor,
    baselines: torch.Tensor,
    mask: torch.Tensor | None = None,
    *,
    num_roles: Index,
    decay: Real = 0.95,
) -> tuple[torch.Tensor, torch.Tensor]:
    """SPIRAL's role-conditioned advantages: each role's reward minus its moving baseline.

    ``A_i = r_i - b_k, then b_k <- decay b_k + (1 - decay) r_i (k = role_i, in batch order)``

    SPIRAL: Self-Play on Zero-Sum Games Incentivizes Reasoning via Multi-Agent Multi-Turn
    Reinforcement Learning (Bo Liu et al., 2025), role-conditioned advantage estimation
    (RAE; its published train_spiral.py), https://arxiv.org/abs/2506.24119.  Output
    ``([B], [R])``: advantages in the promoted dtype of ``rewards`` and ``baselines``, new
    baselines in the dtype of ``baselines``; detached (no gradient).

    The published update, one entry at a time in batch order, in float64 and
    rounded once: score against the role's baseline, then fold the reward in.
    Entries the mask drops are skipped (advantage 0).

    >>> import torch, zero_torch
    >>> adv, b = zero_torch.role_baseline_advantages(
    ...     torch.tensor([1.0, -1.0, 1.0, -1.0]), torch.tensor([0, 1, 0, 1]), torch.zeros(2),
    ...     num_roles=2, decay=0.5)
    >>> adv.tolist(), b.tolist()
    ([1.0, -1.0, 0.5, -0.5], [0.75, -0.75])
    """
    r, k, b, m = _c.arrays("role_baseline_advantages", rewards, roles, baselines, mask)
    h = _c.hypers("role_baseline_advantages", num_roles=num_roles, decay=decay)
    count: int = h["num_roles"]
    if b.shape[-1] != count:
        raise ValueError(msg.ROLES_SHAPE.format(count=count, got=tuple(b.shape)))
    _c.data_checks(
        "role_baseline_advantages",
        rewards=r, roles=k, baselines=b, mask=m, num_roles=count,
    )
    g: float = h["decay"]
    kept = [True] * r.shape[0] if m is None else m.tolist()
    current = b.to(torch.float64).tolist()
    advantages = [0.0] * r.shape[0]
    values = r.to(torch.float64).tolist()
    for i, (x, role, keep) in enumerate(zip(values, _c.as_int64(k).tolist(), kept, strict=True)):
        if keep:
            advantages[i] = x - current[role]
            current[role] = g * current[role] + (1 - g) * x
    out = torch.promote_types(r.dtype, b.dtype)
    return (
        torch.tensor(advantages, dtype=torch.float64, device=r.device).to(out),
        torch.tensor(current, dtype=torch.float64, device=b.device).to(b.dtype),
    )
