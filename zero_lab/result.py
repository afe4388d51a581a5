"""The outcome of one Lab run and the pass rule shared by every backend."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["MIN_GAIN", "PASS_PROB", "LabResult"]

#: The target action's final probability must end strictly above this value.
PASS_PROB = 0.72
#: ... and must have risen by strictly more than this from the uniform start.
MIN_GAIN = 0.3


@dataclass(frozen=True, eq=False)
class LabResult:
    """Probability trajectory of a Lab policy and its verdict.

    Attributes:
      name: the lab's key in ``LABS``.
      probs: float64 ``[steps + 1, N]`` (read-only): the policy before training
        and after each of the ``steps`` updates.
      target: index of the action the correct rewards should teach.
      p0, p_final: the target's probability at the start and at the end.
      gain: ``p_final - p0``.
      passed: ``p_final > PASS_PROB and gain > MIN_GAIN``.
    """

    name: str
    probs: np.ndarray
    target: int
    p0: float
    p_final: float
    gain: float
    passed: bool

    @classmethod
    def from_probs(cls, name: str, probs: Any, target: int) -> LabResult:
        """Build a result from a ``[steps + 1, N]`` trajectory, applying the pass rule."""
        p = np.array(probs, dtype=np.float64)
        if p.ndim != 2 or p.shape[0] < 1 or not 0 <= target < p.shape[1]:
            raise ValueError(
                f"probs must be [steps + 1, N] with 0 <= target < N; got shape {p.shape} "
                f"and target {target}"
            )
        p.setflags(write=False)
        p0, p_final = float(p[0, target]), float(p[-1, target])
        gain = p_final - p0
        return cls(
            name=name,
            probs=p,
            target=int(target),
            p0=p0,
            p_final=p_final,
            gain=gain,
            passed=bool(p_final > PASS_PROB and gain > MIN_GAIN),
        )

    @property
    def target_probs(self) -> np.ndarray:
        """The target action's probability after each step, ``[steps + 1]``."""
        return self.probs[:, self.target]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (the full trajectory is included as nested lists)."""
        return {
            "name": self.name,
            "target": self.target,
            "p0": self.p0,
            "p_final": self.p_final,
            "gain": self.gain,
            "passed": self.passed,
            "final_probs": self.probs[-1].tolist(),
            "target_probs": self.target_probs.tolist(),
        }
