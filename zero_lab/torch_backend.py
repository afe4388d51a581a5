"""The Lab's PyTorch backend: the twin of ``zero_lab.jax_backend`` (no jax import).

Same records, same per-action rewards (from ``zero_torch``'s public functions or a
caller's replacements), same optimisation: ``torch.optim.SGD`` on the negative
exact expected reward, from zero logits, in float64 on the CPU.

Run every lab with ``zero-lab --backend torch`` (or ``python -m zero_lab --backend torch``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

import zero_torch
from zero_lab import LABS, Lab, LabResult, check_schedule, get_lab, resolve_functions
from zero_lab.lab_rewards import Ops, lab_rewards

__all__ = ["LABS", "rewards", "run"]

_OPS = Ops(
    f64=lambda x: torch.as_tensor(x, dtype=torch.float64),
    i64=lambda x: torch.as_tensor(x, dtype=torch.int64),
    bool_=lambda x: torch.as_tensor(x, dtype=torch.bool),
    minimum=torch.minimum,
    maximum=torch.maximum,
)


def _rewards(lab: Lab, functions: Any) -> torch.Tensor:
    fns = resolve_functions(functions, lab.functions, lambda: zero_torch)
    with torch.no_grad():
        return lab_rewards(lab, fns, _OPS).detach()


def rewards(name: str, *, functions: Any = None) -> np.ndarray:
    """The per-action rewards of lab ``name`` (float64 ``[N]``) with the given functions."""
    return _rewards(get_lab(name), functions).numpy()


def run(
    name: str, *, functions: Any = None, steps: int = 60, learning_rate: float = 0.5
) -> LabResult:
    """Train lab ``name``'s policy with ``torch.optim.SGD`` and return the result.

    Args:
      name: a key of ``LABS``.
      functions: ``None`` for ``zero_torch``'s own rewards, or a module / mapping of
        replacements taking and returning torch tensors; missing names fall back to
        ``zero_torch``.
      steps: number of SGD updates.
      learning_rate: SGD step size.

    Raises:
      ValueError: unknown lab name, bad schedule, or rewards of the wrong shape.
    """
    lab = get_lab(name)
    steps, lr = check_schedule(steps, learning_rate)
    r = _rewards(lab, functions)
    logits = torch.zeros(lab.num_actions, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.SGD([logits], lr=lr)
    probs = [torch.softmax(logits.detach(), dim=0)]
    for _ in range(steps):
        opt.zero_grad()
        loss = -(torch.softmax(logits, dim=0) * r).sum()
        loss.backward()
        opt.step()
        probs.append(torch.softmax(logits.detach(), dim=0))
    return LabResult.from_probs(lab.name, torch.stack(probs).numpy(), lab.target)
