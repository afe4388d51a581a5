"""GRPO group advantages, PyTorch reference.  Mirrors ``zero_jax.advantages``."""

from __future__ import annotations

from typing import Any

import torch

from zero_torch import _checks as _c

__all__ = ["ADVANTAGE_PRESETS", "group_advantages"]

SCALES = ("group", "batch", "none")
SINGLETONS = ("zero", "raw")

#: Keyword sets reproducing verl, Tunix, TRL and Dr. GRPO (see zero_jax.advantages).
ADVANTAGE_PRESETS: dict[str, dict[str, Any]] = {
    "verl": {"scale": "group", "ddof": 1, "eps": 1e-6, "singleton": "raw"},
    "tunix": {"scale": "group", "ddof": 1, "eps": 1e-6, "singleton": "zero"},
    "trl": {"scale": "group", "ddof": 1, "eps": 1e-4, "singleton": "zero"},
    "trl_batch": {"scale": "batch", "ddof": 1, "eps": 1e-4, "singleton": "zero"},
    "dr_grpo": {"scale": "none", "ddof": 1, "eps": 0.0, "singleton": "zero"},
}


def _moments(r: torch.Tensor, m: torch.Tensor, ddof: int, dim=-1):
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
    """``(r - mean_g) / (std + eps)`` (group or batch std) or ``r - mean_g`` (none).

    Masked entries get 0 and are left out of every mean and std; groups whose kept
    rewards are all equal get exactly 0; a single-sample group gets 0, or
    ``r / (1 + eps)`` with ``singleton="raw"`` (verl); with group scaling a group
    of at most ``ddof`` samples gets 0.  Detached, dtype of ``rewards``.
    """
    r = _c.floating("rewards", rewards, 2, "[G, N]")
    _c.nonempty("rewards", r, "[G, N]")
    if mask is None:
        m = torch.ones_like(r, dtype=torch.bool)
    else:
        m = _c.boolean("mask", mask, 2, "[G, N]")
        _c.same_shape("mask", m, "rewards", r)
    scale = _c.method("scale", scale, SCALES)
    singleton = _c.method("singleton", singleton, SINGLETONS)
    if isinstance(ddof, bool) or not isinstance(ddof, int):
        raise TypeError(f"ddof must be a Python int, got {type(ddof).__name__}")
    if ddof < 0:
        raise ValueError(f"ddof must be >= 0, got {ddof}")
    eps = _c.scalar("eps", eps, 0.0, None, "a finite number >= 0")

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
    return torch.where(m & ~zero, adv, torch.zeros_like(adv))
