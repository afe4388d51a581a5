"""Plumbing shared by the Lab backends: which implementation of each reward function
to call, and validation of the training schedule."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from types import ModuleType
from typing import Any

from zero_contracts import CONTRACTS

__all__ = ["FUNCTION_NAMES", "check_schedule", "resolve_functions"]

#: The reward functions of the three papers (R-Zero, G-Zero, MM-Zero), in the contract
#: table's order; GRPO advantages and the shared primitives are not Lab functions.
FUNCTION_NAMES: tuple[str, ...] = tuple(
    name for name, c in CONTRACTS.items() if c.module in ("r_zero", "g_zero", "mm_zero")
)


def resolve_functions(
    functions: ModuleType | Mapping[str, Callable[..., Any]] | Any | None,
    names: Iterable[str],
    default: Callable[[], Any],
) -> dict[str, Callable[..., Any]]:
    """Pick an implementation for each of ``names``.

    Args:
      functions: ``None`` (use the package's own), a module or any object with the
        functions as attributes, or a mapping from function name to callable.  Names
        it lacks fall back to the package's own.
      names: the functions the lab needs.
      default: zero-argument callable returning the package module to fall back to
        (called lazily, only when some name is missing).

    Raises:
      ValueError: a mapping key is not one of the reward functions (``FUNCTION_NAMES``).
      TypeError: a supplied implementation is not callable.
    """
    if isinstance(functions, Mapping):
        unknown = sorted(set(functions) - set(FUNCTION_NAMES))
        if unknown:
            raise ValueError(
                f"functions has unknown names {unknown}; expected a subset of "
                f"{', '.join(FUNCTION_NAMES)}"
            )
        lookup = functions.get
    elif functions is None:
        lookup = {}.get
    else:

        def lookup(name: str) -> Any:
            return getattr(functions, name, None)

    chosen: dict[str, Callable[..., Any]] = {}
    for name in names:
        fn = lookup(name)
        if fn is None:
            fn = getattr(default(), name)
        if not callable(fn):
            raise TypeError(f"functions[{name!r}] must be callable, got {type(fn).__name__}")
        chosen[name] = fn
    return chosen


def check_schedule(steps: Any, learning_rate: Any) -> tuple[int, float]:
    """Validate ``run``'s schedule; return ``(steps, learning_rate)`` as Python numbers.

    Raises:
      ValueError: ``steps`` is not a non-negative int, or ``learning_rate`` is not a
        finite positive number.
    """
    if isinstance(steps, bool) or not hasattr(steps, "__index__") or steps < 0:
        raise ValueError(f"steps must be a non-negative int, got {steps!r}")
    try:
        lr = float(learning_rate)
    except (TypeError, ValueError):
        lr = math.nan
    if not math.isfinite(lr) or lr <= 0:
        raise ValueError(f"learning_rate must be a finite positive number, got {learning_rate!r}")
    return int(steps), lr
