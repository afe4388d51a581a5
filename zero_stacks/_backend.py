"""The core library a stack's rewards compute with, and the array conversions."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["Backend", "floats"]


@dataclasses.dataclass(frozen=True)
class Backend:
    """The core library a stack module computes with.

    ``lib`` is :mod:`zero_jax` or :mod:`zero_torch`; ``to_array`` turns a NumPy
    array into an argument of the library and ``to_numpy`` turns a result back.
    Only NumPy arrays are converted; Python scalars (``num_answers``, ``alpha``, ...)
    are passed as they are, so the library sees the user's decimals.
    """

    name: str
    lib: Any
    to_array: Callable[[np.ndarray], Any]
    to_numpy: Callable[[Any], np.ndarray]

    def run(self, fn: str, *args: Any, **kwargs: Any) -> Any:
        """``lib.<fn>(*args, **kwargs)`` on converted arrays, NumPy result(s) back (a
        NamedTuple result keeps its type, its fields as NumPy arrays)."""
        conv = [self.to_array(a) if isinstance(a, np.ndarray) else a for a in args]
        out = getattr(self.lib, fn)(*conv, **kwargs)
        if isinstance(out, tuple):
            values = [self.to_numpy(o) for o in out]
            if hasattr(out, "_fields"):  # a NamedTuple such as zero_contracts.VoteMetrics
                return type(out)(*values)
            return tuple(values)
        return self.to_numpy(out)


def floats(values: np.ndarray) -> list[float]:
    """Rewards as the flat ``list[float]`` the stacks expect, value for value.

    float64 results are returned as they are.  A narrower float (JAX computes in
    float32 unless x64 is enabled) is returned as the shortest decimal that rounds
    back to the same float32, the number the library meant: ``0.1``, not
    ``0.10000000149011612``.  The stack turns the list into float32 again, so
    nothing is lost.
    """
    flat = np.asarray(values).reshape(-1)
    if not np.issubdtype(flat.dtype, np.floating):
        raise TypeError(f"rewards must be floats, got {flat.dtype}")
    if flat.dtype == np.float64:
        return [float(v) for v in flat]
    return [float(str(v)) for v in flat]
