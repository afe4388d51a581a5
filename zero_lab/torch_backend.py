"""The Lab's PyTorch backend: the twin of ``zero_lab.jax_backend`` (no jax import).

Same records, same per-action rewards (from ``zero_torch``'s public functions or a
caller's replacements), same optimisation: ``torch.optim.SGD`` on the negative
exact expected reward, from zero logits, in float64 on the CPU.

Run every lab with ``zero-lab --backend torch`` (or ``python -m zero_lab --backend torch``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import torch

import zero_torch
from zero_lab import (
    LABS,
    Lab,
    LabResult,
    check_schedule,
    get_lab,
    padded,
    resolve_functions,
)

__all__ = ["LABS", "rewards", "run"]

Functions = Mapping[str, Callable[..., Any]]


def _f64(x: Any) -> torch.Tensor:
    return torch.as_tensor(x, dtype=torch.float64)


def _i64(x: Any) -> torch.Tensor:
    return torch.as_tensor(x, dtype=torch.int64)


def _bool(x: Any) -> torch.Tensor:
    return torch.as_tensor(x, dtype=torch.bool)


def _challenger(f: Functions, lab: Lab) -> torch.Tensor:
    consistency = _f64(lab.column("consistency"))
    reward = f["challenger_rewards"](
        consistency,
        _i64(lab.column("cluster")),
        _bool(lab.column("valid")),
        lab.params["strength"],
    )
    return torch.minimum(_f64(reward), _f64(f["uncertainty_reward"](consistency)))


def _pseudo_labels(f: Functions, lab: Lab) -> torch.Tensor:
    p = lab.params
    labels, consistency = f["consensus"](_i64(lab.column("old_votes")), p["num_answers"])
    keep = _f64(f["curriculum_mask"](consistency, p["low"], p["high"]))
    agree = _f64(f["pseudo_rewards"](_i64(lab.column("fresh")), labels))
    return (keep[:, None] * agree).sum(dim=0) / keep.sum().clamp_min(1.0)


def _proposer(f: Functions, lab: Lab) -> torch.Tensor:
    base, mask = padded(lab, "base_logp")
    hinted, _ = padded(lab, "hinted_logp")
    delta = f["hint_delta"](_f64(base), _f64(hinted), _bool(mask))
    return f["proposer_rewards"](
        delta,
        _i64(lab.column("hint_chars")),
        _f64(lab.column("cluster_share")),
        _bool(lab.column("valid")),
    )


def _coder(f: Functions, lab: Lab) -> torch.Tensor:
    return f["coder_rewards"](
        _bool(lab.column("executed")),
        _f64(lab.column("easy_accuracy")),
        _f64(lab.column("consistency")),
        _bool(lab.column("syntax_error")),
    )


def _solver(f: Functions, lab: Lab) -> torch.Tensor:
    p = lab.params
    per_answer = f["solver_rewards"](
        _i64(lab.column("answers")),
        _bool(lab.column("format_valid")),
        p["num_answers"],
        p["alpha"],
    )
    return _f64(per_answer).mean(dim=0)


_REWARDS: dict[str, Callable[[Functions, Lab], torch.Tensor]] = {
    "challenger": _challenger,
    "pseudo_labels": _pseudo_labels,
    "proposer": _proposer,
    "coder": _coder,
    "solver": _solver,
}


def _rewards(lab: Lab, functions: Any) -> torch.Tensor:
    fns = resolve_functions(functions, lab.functions, lambda: zero_torch)
    with torch.no_grad():
        r = _f64(_REWARDS[lab.name](fns, lab)).detach()
    if tuple(r.shape) != (lab.num_actions,):
        raise ValueError(
            f"lab {lab.name!r}: the rewards must have shape ({lab.num_actions},), one per "
            f"action; the functions produced {tuple(r.shape)}"
        )
    return r


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
