"""The core library a stack's rewards compute with, and the array conversions."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["Backend", "floats", "is_float"]


def is_float(dtype: Any) -> bool:
    """Whether a NumPy dtype holds floats, ml_dtypes' ``bfloat16`` and float8 types
    included (``np.issubdtype(dtype, np.floating)`` does not know them)."""
    return dtype.kind == "f" or (dtype.kind == "V" and "float" in dtype.name)


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
    #: ``zero_jax.checked`` for zero_jax, whose plain calls mark invalid data with NaN
    #: / -1 instead of raising (zero_torch raises by itself).
    checked: Callable[[Callable[..., Any]], Callable[..., Any]] | None = None

    def run(self, fn: str, *args: Any, **kwargs: Any) -> Any:
        """``lib.<fn>(*args, **kwargs)`` on converted arrays, NumPy result(s) back (a
        NamedTuple result keeps its type, its fields as NumPy arrays).

        Invalid data raises the library's ``ValueError`` with either library: a
        zero_jax result holding NaN or a negative integer (its mark for invalid data)
        is computed again under ``checked``, which raises the torch twin's message
        when a data rule fails (and returns otherwise: a NaN that valid data gives).
        A stack never receives a NaN reward for invalid data (Tunix's reward manager
        would sum it as 0)."""
        conv = [self.to_array(a) if isinstance(a, np.ndarray) else a for a in args]
        call = getattr(self.lib, fn)
        out = call(*conv, **kwargs)
        values = [self.to_numpy(o) for o in out] if isinstance(out, tuple) else [self.to_numpy(out)]
        if self.checked is not None and any(_marked(v) for v in values):
            self.checked(call)(*conv, **kwargs)
        if not isinstance(out, tuple):
            return values[0]
        if hasattr(out, "_fields"):  # a NamedTuple such as zero_contracts.VoteMetrics
            return type(out)(*values)
        return tuple(values)


def _marked(value: np.ndarray) -> bool:
    """Whether a result holds zero_jax's mark of invalid data (NaN, or -1 labels)."""
    if is_float(value.dtype):
        return bool(np.isnan(value.astype(np.float64)).any())
    return value.dtype.kind == "i" and bool((value < 0).any())


def floats(values: np.ndarray) -> list[float]:
    """Rewards as the flat ``list[float]`` the stacks expect, value for value.

    float64 results are returned as they are.  A narrower float (JAX computes in
    float32 unless x64 is enabled) is returned as the shortest decimal that rounds
    back to the same float32, the number the library meant: ``0.1``, not
    ``0.10000000149011612``.  The stack turns the list into float32 again, so
    nothing is lost.
    """
    flat = np.asarray(values).reshape(-1)
    if not is_float(flat.dtype):
        raise TypeError(f"rewards must be floats, got {flat.dtype}")
    if flat.dtype == np.float64:
        return [float(v) for v in flat]
    return [float(str(v)) for v in flat]
