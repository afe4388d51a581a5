"""Boundary validation for zero_jax, read from :mod:`zero_contracts`, and ``checked``.

Everything knowable while tracing (kinds, ranks, shapes, dtypes, concrete Python
hyper-parameters, NumPy ids too wide for the enabled integer types) is checked by
:func:`arrays` and :func:`hypers` and raises ``TypeError`` / ``ValueError``.
Checks that need the data (ids in range, finite scores, values in [0, 1], traced
hyper-parameters) are emitted by :func:`data_checks` inside the jitted kernels as
:func:`jax.experimental.checkify.debug_check`: a no-op that compiles to nothing
unless the computation runs under :func:`checked`.  The traced program is the
same with and without ``checked``, so jit caches never mix the two.
"""

from __future__ import annotations

import functools
import numbers
import re
from collections.abc import Callable
from typing import Any, TypeVar

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import checkify

from zero_contracts import CONTRACTS, Contract
from zero_contracts import messages as msg

__all__ = ["checked"]

F = TypeVar("F", bound=Callable[..., Any])

_SUFFIX = re.compile(r"\s*\(`check` failed.*\)\s*$", re.DOTALL)


def checked(fn: F) -> F:
    """Wrap ``fn`` so that the library's data checks run and raise ``ValueError``.

    ``fn`` is any function built from zero_jax rewards: a single reward, or a
    user's own (possibly jitted) step.  The wrapper runs ``fn`` under
    :func:`checkify.checkify` and raises ``ValueError`` with the message the
    PyTorch reference gives when a check fails (ids out of range, non-finite
    scores, values outside [0, 1], traced hyper-parameters out of range).  The
    plain functions are unaffected: their checks compile to nothing, and a jitted
    step can be called with and without ``checked``, in any order.

    Example::

        labels, p = zero_jax.checked(zero_jax.consensus)(answers, 8)
        new_state = zero_jax.checked(train_step)(state, batch)
    """

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        run = checkify.checkify(lambda: fn(*args, **kwargs), errors=checkify.user_checks)
        err, out = run()
        message = err.get()
        if message is not None:
            raise ValueError(_SUFFIX.sub("", message))
        return out

    return wrapper  # type: ignore[return-value]


# --------------------------------------------------------------------------- dtypes


def float_dtype() -> np.dtype:
    """float64 when x64 is enabled, else float32 (JAX's canonical float)."""
    return jax.dtypes.canonicalize_dtype(jnp.float64)


def int_dtype() -> np.dtype:
    """int64 when x64 is enabled, else int32 (JAX's canonical int)."""
    return jax.dtypes.canonicalize_dtype(jnp.int64)


def compute_dtype(dtype: Any) -> np.dtype:
    """The dtype a float computation runs in: float16 / bfloat16 run in float32."""
    return jnp.promote_types(dtype, jnp.float32)


# --------------------------------------------------------------------------- arrays


def _to_array(name: str, x: Any) -> jax.Array:
    if isinstance(x, jax.Array):  # a JAX array or tracer: no conversion (fast path)
        return x
    if isinstance(x, (str, bytes)) or x is None:
        raise TypeError(msg.NOT_ARRAY.format(name=name, got=type(x).__name__))
    try:
        arr = np.asarray(x)
    except (TypeError, ValueError, OverflowError) as e:
        raise TypeError(msg.NOT_ARRAY.format(name=name, got=type(x).__name__)) from e
    if arr.dtype == object:
        raise TypeError(msg.NOT_ARRAY.format(name=name, got=type(x).__name__))
    if arr.dtype.kind in "iu" and arr.dtype.itemsize == 8 and int_dtype() != np.int64:
        narrow = np.int32 if arr.dtype.kind == "i" else np.uint32
        info = np.iinfo(narrow)
        if arr.size and (arr.min() < info.min or arr.max() > info.max):
            raise ValueError(msg.WIDE_IDS.format(name=name, dtype=np.dtype(narrow).name))
    try:
        return jnp.asarray(arr)
    except TypeError as e:
        raise TypeError(msg.NOT_ARRAY.format(name=name, got=type(x).__name__)) from e


def _kind(name: str, x: jax.Array, kind: str) -> None:
    dtype = x.dtype
    if kind == "float" and not jnp.issubdtype(dtype, jnp.floating):
        raise TypeError(msg.NOT_FLOAT.format(name=name, dtype=dtype))
    if kind == "int" and not jnp.issubdtype(dtype, jnp.integer):
        raise TypeError(msg.NOT_INT.format(name=name, dtype=dtype))
    if kind == "bool" and dtype != jnp.bool_:
        raise TypeError(msg.NOT_BOOL.format(name=name, dtype=dtype))
    if kind == "real" and not (
        jnp.issubdtype(dtype, jnp.floating) or jnp.issubdtype(dtype, jnp.integer)
    ):
        raise TypeError(msg.NOT_FLOAT.format(name=name, dtype=dtype))


def arrays(contract: Contract | str, *values: Any) -> tuple[jax.Array, ...]:
    """Validate the array arguments of ``contract`` (in signature order).

    Checks kind, rank, non-empty axes and that shared shape symbols agree; returns
    the arguments as JAX arrays (``None`` stays ``None`` for an optional one).
    """
    spec = CONTRACTS[contract] if isinstance(contract, str) else contract
    bound: dict[str, tuple[int, str, tuple[int, ...]]] = {}
    out: list[Any] = []
    first = None
    for arg, value in zip(spec.args, values, strict=True):
        if value is None and arg.optional:
            out.append(None)
            continue
        x = _to_array(arg.name, value)
        _kind(arg.name, x, arg.kind)
        shape = tuple(x.shape)
        if arg.shape is None:
            if x.ndim < 1:
                raise ValueError(msg.RANK.format(name=arg.name, shape="[..., T]", got=shape))
            if first is not None:
                try:
                    jnp.broadcast_shapes(first[1], shape)
                except ValueError:
                    raise ValueError(
                        msg.SAME_SHAPE.format(
                            name=arg.name, ref=first[0], ref_shape=first[1], got=shape
                        )
                    ) from None
            else:
                first = (arg.name, shape)
            out.append(x)
            continue
        text = arg.shape_text
        if x.ndim != len(arg.shape):
            raise ValueError(msg.RANK.format(name=arg.name, shape=text, got=shape))
        if arg.nonempty:
            empty = any(d == 0 for s, d in zip(arg.shape, shape, strict=True) if s in arg.nonempty)
            if empty:
                if set(arg.nonempty) != set(arg.shape):
                    text = text + " with " + ", ".join(f"{s} >= 1" for s in arg.nonempty)
                raise ValueError(msg.EMPTY.format(name=arg.name, shape=text, got=shape))
        _bind(arg.name, arg.shape, shape, bound)
        out.append(x)
    return tuple(out)


def _bind(
    name: str,
    symbols: tuple[str, ...],
    shape: tuple[int, ...],
    bound: dict[str, tuple[int, str, tuple[int, ...]]],
) -> None:
    """Record each shape symbol's size; raise when it disagrees with an earlier argument."""
    for symbol, size in zip(symbols, shape, strict=True):
        if symbol not in bound:
            continue
        ref_size, ref_name, ref_shape = bound[symbol]
        if size != ref_size:
            if len(ref_shape) == len(shape):
                raise ValueError(
                    msg.SAME_SHAPE.format(name=name, ref=ref_name, ref_shape=ref_shape, got=shape)
                )
            raise ValueError(
                msg.SAME_BATCH.format(name=name, size=ref_size, ref=ref_name, got=size)
            )
    for symbol, size in zip(symbols, shape, strict=True):
        bound.setdefault(symbol, (size, name, shape))


# -------------------------------------------------------------------- hyper-parameters


def _concrete(x: Any) -> float | None:
    """The Python value of a real hyper-parameter, or None when it is traced."""
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


def real(name: str, x: Any, lo: float | None, hi: float | None, expected: str) -> float | None:
    """Validate a real hyper-parameter; returns its value, or None when traced."""
    try:
        value = _concrete(x)
    except TypeError:
        raise TypeError(msg.NOT_SCALAR.format(name=name, got=type(x).__name__)) from None
    if value is None:
        shape = getattr(x, "shape", ())
        if shape != ():
            raise TypeError(msg.NOT_SCALAR_SHAPE.format(name=name, got=tuple(shape)))
        return None
    if not np.isfinite(value) or (lo is not None and value < lo) or (hi is not None and value > hi):
        raise ValueError(msg.OUT_OF_RANGE.format(name=name, expected=expected, value=value))
    return value


def count(name: str, x: Any) -> int:
    """A static positive integer such as ``num_answers``."""
    if isinstance(x, bool) or not isinstance(x, (numbers.Integral, np.integer)):
        raise TypeError(msg.NOT_STATIC_INT.format(name=name, got=type(x).__name__))
    if x < 1:
        raise ValueError(msg.TOO_SMALL.format(name=name, low=1, value=x))
    return int(x)


def hypers(contract: Contract | str, **values: Any) -> dict[str, Any]:
    """Validate hyper-parameters by their contract; returns their static values.

    Real hyper-parameters map to their Python value, or ``None`` when traced.
    """
    spec = CONTRACTS[contract] if isinstance(contract, str) else contract
    out: dict[str, Any] = {}
    for name, value in values.items():
        h = spec.hyper(name)
        if h.kind == "real":
            out[name] = real(name, value, h.lo, h.hi, h.expected)
        elif h.kind == "count":
            out[name] = None if (value is None and h.optional) else count(name, value)
        elif h.kind == "int":
            if isinstance(value, bool) or not isinstance(value, (numbers.Integral, np.integer)):
                raise TypeError(msg.NOT_INT_PARAM.format(name=name, got=type(value).__name__))
            if h.lo is not None and value < h.lo:
                raise ValueError(msg.TOO_SMALL.format(name=name, low=int(h.lo), value=value))
            out[name] = int(value)
        else:
            if not isinstance(value, str) or value not in h.choices:
                raise ValueError(msg.CHOICE.format(name=name, allowed=h.choices, value=value))
            out[name] = value
    ordered = spec.extra.get("ordered")
    if ordered and all(out.get(n) is not None for n in ordered):
        lo, hi = (out[n] for n in ordered)
        if lo > hi:
            raise ValueError(msg.BAND_ORDER.format(low=lo, high=hi))
    return out


def label_range(name: str, answers: jax.Array, num_answers: int) -> None:
    """Raise when labels in ``[0, num_answers)`` cannot be held by the canonical int."""
    largest = min(num_answers, int(jnp.iinfo(answers.dtype).max) + 1) - 1
    limit = int(jnp.iinfo(int_dtype()).max)
    if largest > limit:
        hint = " or enable x64 for int64 labels" if int_dtype() == np.int32 else ""
        raise ValueError(
            msg.WIDE_LABELS.format(
                count=num_answers, dtype=int_dtype().name, library="zero_jax",
                limit=f"2**{limit.bit_length()}", hint=hint,
            )
        )


# ----------------------------------------------------------------------- data checks


def _check(pred: jax.Array, message: str) -> None:
    checkify.debug_check(jnp.all(pred), message)


def _below(x: jax.Array, bound: int) -> jax.Array:
    """``x < bound`` for a Python int bound that may not fit ``x``'s dtype."""
    if bound > int(jnp.iinfo(x.dtype).max):
        return jnp.ones(x.shape, bool)
    return x < jnp.asarray(bound, x.dtype)


def _nonneg(x: jax.Array) -> jax.Array:
    if jnp.issubdtype(x.dtype, jnp.unsignedinteger):
        return jnp.ones(x.shape, bool)
    return x >= 0


def data_checks(contract: Contract | str, **named: Any) -> None:
    """Emit the data checks of ``contract`` (inside a kernel; no-ops unless checked).

    ``named`` maps argument and hyper-parameter names to their (traced) values;
    static hyper-parameters such as ``num_answers`` are Python ints.
    """
    spec = CONTRACTS[contract] if isinstance(contract, str) else contract
    for arg in spec.args:
        x = named.get(arg.name)
        if arg.value is None or x is None:
            continue
        if arg.value == "unit":
            ok = (x >= 0) & (x <= 1)
        elif arg.value == "finite":
            ok = jnp.isfinite(x)
        elif arg.value == "nonneg":
            ok = _nonneg(x)
        else:  # ids in [0, bound)
            bound = named.get(arg.bound) if arg.bound else None
            if bound is None:
                continue
            ok = _nonneg(x) & _below(x, bound)
        gate = named.get(arg.where) if arg.where else None
        if gate is not None:
            ok = ok | ~gate
        if arg.value == "unit" and arg.where:
            text = msg.UNIT_WHERE.format(name=arg.name, where=arg.where)
        elif arg.value == "unit":
            text = msg.UNIT.format(name=arg.name)
        elif arg.value == "finite":
            text = msg.FINITE.format(name=arg.name)
        elif arg.value == "nonneg":
            text = msg.NONNEG.format(name=arg.name)
        else:
            text = msg.IDS.format(name=arg.name, bound=arg.bound, count=bound)
        _check(ok, text)
    ordered = spec.extra.get("ordered", ())
    for h in spec.hypers:
        if h.kind != "real" or h.name in ordered or h.name not in named:
            continue
        v = jnp.asarray(named[h.name])
        ok = jnp.isfinite(v)
        if h.lo is not None:
            ok = ok & (v >= h.lo)
        if h.hi is not None:
            ok = ok & (v <= h.hi)
        _check(ok, msg.TRACED_RANGE.format(name=h.name, expected=h.expected))
    if ordered:
        lo, hi = (jnp.asarray(named[n]) for n in ordered)
        _check((lo >= 0) & (lo <= hi) & (hi <= 1), msg.BAND_TRACED)
