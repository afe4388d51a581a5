"""Input validation of the PyTorch reference: every public function checks its
inputs here and raises ``TypeError`` (wrong kind of dtype or object) or
``ValueError`` (shapes, empty batches, out-of-range values), naming the argument.
The messages of the value checks are the ones zero_jax's checked mode raises."""

from __future__ import annotations

import math
import numbers
from typing import Any

import torch

_FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


def _tensor(name: str, x: Any) -> torch.Tensor:
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    return x


def _rank(name: str, x: torch.Tensor, ndim: int, shape: str) -> None:
    if x.ndim != ndim:
        raise ValueError(f"{name} must have shape {shape}, got shape {tuple(x.shape)}")


def floating(name: str, x: Any, ndim: int, shape: str) -> torch.Tensor:
    x = _tensor(name, x)
    if x.dtype not in _FLOATS:
        raise TypeError(f"{name} must be a floating-point array, got dtype {x.dtype}")
    _rank(name, x, ndim, shape)
    return x


def integer(name: str, x: Any, ndim: int, shape: str) -> torch.Tensor:
    x = _tensor(name, x)
    if x.dtype.is_floating_point or x.dtype.is_complex or x.dtype == torch.bool:
        raise TypeError(f"{name} must be an integer array, got dtype {x.dtype}")
    _rank(name, x, ndim, shape)
    return x


def boolean(name: str, x: Any, ndim: int, shape: str) -> torch.Tensor:
    x = _tensor(name, x)
    if x.dtype != torch.bool:
        raise TypeError(f"{name} must be a bool array, got dtype {x.dtype}")
    _rank(name, x, ndim, shape)
    return x


def nonempty(name: str, x: torch.Tensor, shape: str) -> None:
    if any(d == 0 for d in x.shape):
        raise ValueError(f"{name} must be non-empty with shape {shape}, got shape {tuple(x.shape)}")


def same_shape(name: str, x: torch.Tensor, ref_name: str, ref: torch.Tensor) -> None:
    if x.shape != ref.shape:
        raise ValueError(
            f"{name} must have the same shape as {ref_name} {tuple(ref.shape)}, "
            f"got {tuple(x.shape)}"
        )
    if x.device != ref.device:
        raise ValueError(
            f"{name} must be on the device of {ref_name} ({ref.device}), got {x.device}"
        )


def same_batch(name: str, x: torch.Tensor, ref_name: str, ref: torch.Tensor) -> None:
    if x.shape[0] != ref.shape[0]:
        raise ValueError(
            f"{name} must have batch size {ref.shape[0]} like {ref_name}, got {x.shape[0]}"
        )
    if x.device != ref.device:
        raise ValueError(
            f"{name} must be on the device of {ref_name} ({ref.device}), got {x.device}"
        )


def require(ok: torch.Tensor | bool, message: str) -> None:
    """Raise ValueError(message) unless ``ok`` holds everywhere."""
    if isinstance(ok, torch.Tensor):
        ok = bool(ok.all())
    if not ok:
        raise ValueError(message)


def unit(name: str, x: torch.Tensor, where: torch.Tensor | None = None) -> None:
    ok = (x >= 0) & (x <= 1)
    if where is not None:
        require(ok | ~where, f"{name} must lie in [0, 1] where executed")
    else:
        require(ok, f"{name} must lie in [0, 1]")


def scalar(name: str, x: Any, lo: float | None, hi: float | None, expected: str) -> float:
    """Validate a real hyper-parameter (Python number or 0-d tensor); return it."""
    if isinstance(x, torch.Tensor):
        if x.ndim != 0 or x.dtype == torch.bool or x.dtype.is_complex:
            raise TypeError(f"{name} must be a real scalar, got a tensor of shape {tuple(x.shape)}")
        value = float(x)
    elif isinstance(x, numbers.Real) and not isinstance(x, bool):
        value = float(x)
    else:
        raise TypeError(f"{name} must be a real scalar, got {type(x).__name__}")
    if (
        not math.isfinite(value)
        or (lo is not None and value < lo)
        or (hi is not None and value > hi)
    ):
        raise ValueError(f"{name} must be {expected}, got {value!r}")
    return value


def static_count(name: str, x: Any) -> int:
    if isinstance(x, bool) or not isinstance(x, numbers.Integral):
        raise TypeError(f"{name} must be a Python int (static), got {type(x).__name__}")
    if x < 1:
        raise ValueError(f"{name} must be >= 1, got {x}")
    return int(x)


def method(name: str, x: Any, allowed: tuple[str, ...]) -> str:
    if x not in allowed:
        raise ValueError(f"{name} must be one of {allowed}, got {x!r}")
    return x
