"""GRPO group advantages, PyTorch reference (DeepSeekMath, arXiv:2402.03300).
Mirrors ``zero_jax.advantages``; presets and constants live in :mod:`zero_contracts`."""

from __future__ import annotations

import torch

from zero_contracts import ADVANTAGE_PRESETS
from zero_torch import _checks as _c

__all__ = ["ADVANTAGE_PRESETS", "group_advantages"]

def _moments(
    r: torch.Tensor, m: torch.Tensor, ddof: int, dim: int | tuple[int, ...] = -1
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    zero = torch.zeros((), dtype=r.dtype)
    n = m.sum(dim, keepdim=True).to(r.dtype)
    mean = torch.where(m, r, zero).sum(dim, keepdim=True) / n.clamp(min=1)
    sq = torch.where(m, (r - mean) ** 2, zero).sum(dim, keepdim=True)
    return n, mean, torch.sqrt(sq / (n - ddof).clamp(min=1))


@torch.no_grad()
def group_advantages(
    rewards: torch.Tensor,
    mask: torch.Tensor | None = None,
    *,
    scale: str = "group",
    ddof: int = 1,
    eps: float = 1e-6,
    singleton: str = "zero",
) -> torch.Tensor:
    """GRPO advantages of groups of rewards, never NaN on valid data.

    ``A_gi = (r_gi - mean_g) / (std + eps), or r_gi - mean_g``

    DeepSeekMath: Pushing the Limits of Mathematical Reasoning in Open Language Models (Zhihong
    Shao et al., 2024), §4.1.2, outcome supervision (group-normalised advantages),
    https://arxiv.org/abs/2402.03300.  Output ``[G, N]``: the dtype of ``rewards``; detached (no
    gradient).

    Masked entries get 0 and are left out of every mean and std; groups whose kept
    rewards are all equal get exactly 0; a single-sample group gets 0, or
    ``r / (1 + eps)`` with ``singleton="raw"`` (verl); with group scaling a group
    of at most ``ddof`` samples gets 0.  Non-finite kept rewards raise ValueError.
    Half precision is computed in float32.

    >>> import torch, zero_torch
    >>> r = torch.tensor([[1.0, 0.0], [1.0, 1.0]], dtype=torch.float64)
    >>> [[round(x, 6) for x in row] for row in zero_torch.group_advantages(r, eps=0.0).tolist()]
    [[0.707107, -0.707107], [0.0, 0.0]]
    """
    r, m = _c.arrays("group_advantages", rewards, mask)
    h = _c.hypers("group_advantages", scale=scale, ddof=ddof, eps=eps, singleton=singleton)
    if m is None:
        m = torch.ones_like(r, dtype=torch.bool)
    _c.data_checks("group_advantages", rewards=r, mask=m)
    scale, ddof, eps, singleton = h["scale"], h["ddof"], h["eps"], h["singleton"]
    out = r.dtype
    r = r.to(_c.compute_dtype(out))  # counts and sums of half precision run in float32

    n, mean, std = _moments(r, m, ddof)
    single = n == 1
    if singleton == "raw":
        mean = torch.where(single, torch.zeros_like(mean), mean)
        std = torch.where(single, torch.ones_like(std), std)
    if scale == "batch":
        _, _, std = _moments(r, m, ddof, dim=(-2, -1))
    adv = r - mean
    if scale != "none":
        adv = adv / (std + eps)
    inf = torch.tensor(float("inf"), dtype=r.dtype)
    hi = torch.where(m, r, -inf).amax(-1, keepdim=True)
    lo = torch.where(m, r, inf).amin(-1, keepdim=True)
    zero = hi == lo
    if scale == "group":
        zero = zero | (n <= ddof)
    if singleton == "raw":
        zero = zero & ~single
    return torch.where(m & ~zero, adv, torch.zeros_like(adv)).to(out)
