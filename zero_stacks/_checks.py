"""Checks of the options a stack reward is built with (``TypeError`` / ``ValueError``
naming the option).  Where :mod:`zero_text` owns an option (``unparseable``,
``equivalence``, the BLEU ``threshold``), zero_text itself is asked, so that its
messages and any policy it adds work here unchanged."""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from typing import Any

import numpy as np

import zero_text

__all__ = [
    "check_answer_options",
    "check_bool",
    "check_callable",
    "check_count",
    "check_threshold",
    "check_unit",
]


def check_count(value: object, name: str) -> int:
    """An ``int >= 1`` such as a group size or a number of samples."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int >= 1, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{name} must be an int >= 1, got {value}")
    return int(value)


def check_unit(value: object, name: str) -> float:
    """A real number in ``[0, 1]``, returned as a Python float (the same double:
    the library takes decimals such as ``1 - alpha`` from it)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number in [0, 1], got {type(value).__name__}")
    number = float(value)
    if not (math.isfinite(number) and 0.0 <= number <= 1.0):
        raise ValueError(f"{name} must lie in [0, 1], got {value!r}")
    return number


def check_bool(value: object, name: str) -> bool:
    """``True`` or ``False`` (NumPy booleans too), nothing that merely has a truth value."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_callable(value: object, name: str, signature: str) -> Callable[..., Any]:
    """A callable; the message shows the expected ``signature``."""
    if not callable(value):
        raise TypeError(f"{name} must be a callable {signature}, got {value!r}")
    return value


def check_answer_options(
    unparseable: Any, equivalence: Any, timeout: Any = 1.0, processes: Any = 1
) -> None:
    """Let :func:`zero_text.group_answers` reject a bad ``unparseable`` /
    ``equivalence`` / ``timeout`` / ``processes`` now, at construction, rather than
    at the first batch (one reply: nothing is compared, no helper process starts)."""
    zero_text.group_answers(
        [["\\boxed{0}"]],
        unparseable=unparseable,
        equivalence=equivalence,
        timeout=timeout,
        processes=processes,
    )


def check_threshold(value: object) -> float:
    """A BLEU-distance threshold, as :func:`zero_text.bleu_clusters` accepts it."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"threshold must be a number, got {type(value).__name__}")
    zero_text.bleu_clusters(["a", "b"], threshold=float(value))
    return float(value)
