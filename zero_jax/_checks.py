"""Boundary validation for zero_jax and the opt-in checked mode.

Everything that is knowable while tracing (ranks, shapes, dtypes, concrete Python
hyper-parameters) is checked eagerly and raises ``TypeError`` / ``ValueError``.
Checks that need the data (ids in range, finite scores, values in [0, 1], traced
hyper-parameters) are emitted with :func:`jax.experimental.checkify.check` only
while a :func:`checked` wrapper is tracing; the ordinary jitted path trusts its
inputs and carries no checks.
"""

from __future__ import annotations

import contextvars
import functools
import numbers
import re
from collections.abc import Callable
from typing import Any, TypeVar

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import checkify

__all__ = ["checked"]

F = TypeVar("F", bound=Callable[..., Any])

_CHECKED: contextvars.ContextVar[bool] = contextvars.ContextVar("zero_jax_checked", default=False)
_SUFFIX = re.compile(r"\s*\(`check` failed.*\)\s*$", re.DOTALL)


def checked(fn: F) -> F:
    """Wrap ``fn`` so that data-dependent input checks run and raise ``ValueError``.

    ``fn`` is any function built from zero_jax rewards (a single reward, or a user's
    own step).  The wrapper traces ``fn`` under :func:`checkify.checkify` with every
    value check of the library switched on, runs it, and raises ``ValueError`` with
    the same message the PyTorch reference gives when a check fails.  It is meant
    for debugging and tests, called eagerly; inside your own ``jit`` use the plain
    functions, which trust their inputs.

    Example::

        labels, p = zero_jax.checked(zero_jax.consensus)(answers, 8)
    """

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        token = _CHECKED.set(True)
        try:
            err, out = checkify.checkify(lambda: fn(*args, **kwargs))()
        finally:
            _CHECKED.reset(token)
        message = err.get()
        if message is not None:
            raise ValueError(_SUFFIX.sub("", message))
        return out

    return wrapper  # type: ignore[return-value]


def checking() -> bool:
    """Whether value checks are being emitted (inside :func:`checked`)."""
    return _CHECKED.get()


def check(enabled: bool, predicate: jax.Array, message: str) -> None:
    """Emit a checkify check when ``enabled`` (a static flag)."""
    if enabled:
        checkify.check(jnp.all(predicate), message)


# --------------------------------------------------------------------------- dtypes


def float_dtype() -> np.dtype:
    """float64 when x64 is enabled, else float32 (JAX's canonical float)."""
    return jax.dtypes.canonicalize_dtype(jnp.float64)


def int_dtype() -> np.dtype:
    """int64 when x64 is enabled, else int32 (JAX's canonical int)."""
    return jax.dtypes.canonicalize_dtype(jnp.int64)


def _as_array(name: str, x: Any) -> jax.Array:
    if isinstance(x, jax.Array):  # already a JAX array or tracer: no conversion (fast path)
        return x
    if isinstance(x, (str, bytes)) or x is None:
        raise TypeError(f"{name} must be an array, got {type(x).__name__}")
    try:
        return jnp.asarray(x)
    except TypeError as e:
        raise TypeError(f"{name} must be an array, got {type(x).__name__}") from e


def _rank(name: str, x: jax.Array, ndim: int, shape: str) -> None:
    if x.ndim != ndim:
        raise ValueError(f"{name} must have shape {shape}, got shape {tuple(x.shape)}")


def floating(name: str, x: Any, ndim: int, shape: str) -> jax.Array:
    x = _as_array(name, x)
    if not jnp.issubdtype(x.dtype, jnp.floating):
        raise TypeError(f"{name} must be a floating-point array, got dtype {x.dtype}")
    _rank(name, x, ndim, shape)
    return x


def integer(name: str, x: Any, ndim: int, shape: str) -> jax.Array:
    x = _as_array(name, x)
    if not jnp.issubdtype(x.dtype, jnp.integer):
        raise TypeError(f"{name} must be an integer array, got dtype {x.dtype}")
    _rank(name, x, ndim, shape)
    return x


def boolean(name: str, x: Any, ndim: int, shape: str) -> jax.Array:
    x = _as_array(name, x)
    if x.dtype != jnp.bool_:
        raise TypeError(f"{name} must be a bool array, got dtype {x.dtype}")
    _rank(name, x, ndim, shape)
    return x


def nonempty(name: str, x: jax.Array, shape: str) -> None:
    if any(d == 0 for d in x.shape):
        raise ValueError(f"{name} must be non-empty with shape {shape}, got shape {tuple(x.shape)}")


def same_shape(name: str, x: jax.Array, ref_name: str, ref: jax.Array) -> None:
    if x.shape != ref.shape:
        raise ValueError(
            f"{name} must have the same shape as {ref_name} {tuple(ref.shape)}, "
            f"got {tuple(x.shape)}"
        )


def same_batch(name: str, x: jax.Array, ref_name: str, ref: jax.Array) -> None:
    if x.shape[0] != ref.shape[0]:
        raise ValueError(
            f"{name} must have batch size {ref.shape[0]} like {ref_name}, got {x.shape[0]}"
        )


# -------------------------------------------------------------------- hyper-parameters


def _concrete(x: Any) -> float | None:
    """The Python value of a hyper-parameter, or None when it is traced."""
    if isinstance(x, jax.core.Tracer):
        return None
    if isinstance(x, (bool, str, bytes)) or x is None:
        raise TypeError
    if isinstance(x, numbers.Real):
        return float(x)
    arr = np.asarray(x)
    if arr.shape != () or not (
        np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)
    ):
        raise TypeError
    return float(arr)


def scalar(name: str, x: Any, lo: float | None, hi: float | None, expected: str) -> float | None:
    """Validate a real hyper-parameter; returns its value, or None when traced."""
    try:
        value = _concrete(x)
    except TypeError:
        raise TypeError(f"{name} must be a real scalar, got {type(x).__name__}") from None
    if value is None:
        shape = getattr(x, "shape", ())
        if shape != ():
            raise TypeError(f"{name} must be a real scalar, got shape {tuple(shape)}")
        return None
    if not np.isfinite(value) or (lo is not None and value < lo) or (hi is not None and value > hi):
        raise ValueError(f"{name} must be {expected}, got {value!r}")
    return value


def static_count(name: str, x: Any) -> int:
    """A static positive integer such as ``num_answers``."""
    if isinstance(x, bool) or not isinstance(x, (numbers.Integral, np.integer)):
        raise TypeError(f"{name} must be a Python int (static), got {type(x).__name__}")
    if x < 1:
        raise ValueError(f"{name} must be >= 1, got {x}")
    return int(x)


def method(name: str, x: Any, allowed: tuple[str, ...]) -> str:
    if x not in allowed:
        raise ValueError(f"{name} must be one of {allowed}, got {x!r}")
    return x
