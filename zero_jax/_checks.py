"""Boundary validation for zero_jax, read from :mod:`zero_contracts`, and ``checked``.

Everything knowable while tracing (kinds, ranks, shapes, dtypes, concrete Python
hyper-parameters, NumPy ids too wide for the enabled integer types) is checked by
:func:`arrays` and :func:`hypers` and raises ``TypeError`` / ``ValueError``.
Checks that need the data (ids in range, finite scores, values in [0, 1], traced
hyper-parameters) are emitted by :func:`data_checks` inside the jitted kernels,
as :func:`jax.experimental.checkify.check`, only while :func:`checked` runs.
``checked`` switches them on through a JAX *user context*
(:func:`jax.make_user_context`), which is part of every jit cache key: a jitted
step traced with checks and the same step traced without them are two cache
entries, so plain calls never carry (or pay for) a check and checked calls never
reuse an unchecked trace.  On a JAX without user contexts the checks are
``checkify.debug_check``, correct in both modes but slower on the plain path.
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

from zero_contracts import Contract
from zero_contracts import messages as msg
from zero_contracts import validate as V

__all__ = ["checked"]

F = TypeVar("F", bound=Callable[..., Any])

_SUFFIX = re.compile(r"\s*\(`check` failed.*\)\s*$", re.DOTALL)

_make_user_context = getattr(jax, "make_user_context", None)
#: True while ``checked`` runs; part of the jit cache key (see the module docstring).
_CHECKING = _make_user_context(False) if _make_user_context is not None else None


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
        if _CHECKING is None:
            err, out = run()
        else:
            with _CHECKING(True):
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


#: Signatures that passed validation: ``(contract, ((dtype, shape) | None, ...))`` for
#: calls whose arrays are all JAX arrays or tracers (their values are never read
#: here).  A repeated signature skips the checks, so validation costs once per
#: signature, like tracing; failures are never cached.
_VALID_ARRAYS: dict[Any, None] = {}
_VALID_HYPERS: dict[Any, dict[str, Any]] = {}
_CACHE_LIMIT = 4096


def _remember(cache: dict[Any, Any], key: Any, value: Any) -> None:
    if len(cache) >= _CACHE_LIMIT:
        cache.clear()
    cache[key] = value


def arrays(contract: Contract | str, *values: Any) -> tuple[jax.Array, ...]:
    """Validate the array arguments of ``contract`` (in signature order).

    Checks kind, rank, non-empty axes and that shared shape symbols agree (see
    :class:`zero_contracts.validate.Shapes`); returns the arguments as JAX arrays
    (``None`` stays ``None`` for an absent optional one).
    """
    key = None
    if all(v is None or type(v) in _ARRAY_TYPES or _is_array(v) for v in values):
        key = (contract, tuple(None if v is None else (v.dtype, v.shape) for v in values))
        if key in _VALID_ARRAYS:
            return values
    out = _validate_arrays(contract, values)
    if key is not None:
        _remember(_VALID_ARRAYS, key, None)
    return out


_ARRAY_TYPES: set[type] = set()


def _is_array(v: Any) -> bool:
    """``isinstance(v, jax.Array)``, remembering the concrete types seen (a set
    lookup is cheaper than the abstract-class check on every call)."""
    if isinstance(v, jax.Array):
        _ARRAY_TYPES.add(type(v))
        return True
    return False


def _validate_arrays(contract: Contract | str, values: tuple[Any, ...]) -> tuple[jax.Array, ...]:
    spec = V.contract(contract)
    shapes = V.Shapes()
    out: list[Any] = []
    for arg, value in zip(spec.args, values, strict=True):
        if value is None and arg.optional:
            out.append(None)
            continue
        x = _to_array(arg.name, value)
        dtype = x.dtype
        V.check_kind(
            arg.name,
            arg.kind,
            dtype,
            floating=bool(jnp.issubdtype(dtype, jnp.floating)),
            integer=bool(jnp.issubdtype(dtype, jnp.integer)),
            boolean=dtype == jnp.bool_,
        )
        shapes.check(arg, tuple(x.shape))
        out.append(x)
    return tuple(out)


# -------------------------------------------------------------------- hyper-parameters


def _number(name: str, x: Any) -> float | None:
    """The Python value of a real hyper-parameter, or None when it is traced."""
    if isinstance(x, jax.core.Tracer):
        if x.shape != ():
            raise TypeError(msg.NOT_SCALAR_SHAPE.format(name=name, got=tuple(x.shape)))
        return None
    bad = TypeError(msg.NOT_SCALAR.format(name=name, got=type(x).__name__))
    if isinstance(x, (bool, str, bytes)) or x is None:
        raise bad
    if isinstance(x, numbers.Real):
        return float(x)
    try:
        arr = np.asarray(x)
    except (TypeError, ValueError):
        raise bad from None
    if arr.shape != () or not (
        np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)
    ):
        raise bad
    return float(arr)


def hypers(contract: Contract | str, **values: Any) -> dict[str, Any]:
    """Validate hyper-parameters by their contract; returns their static values.

    Real hyper-parameters map to their Python value, or ``None`` when traced.
    Results for plain Python values are remembered (keyed with their types, so
    ``True`` never passes for ``1``).
    """
    try:
        key = (contract, tuple((k, type(v), v) for k, v in values.items()))
        hit = _VALID_HYPERS.get(key)
    except TypeError:  # a traced or array-valued hyper-parameter: not hashable
        return V.hyper_values(contract, values, _number)
    if hit is not None:
        return hit
    out = V.hyper_values(contract, values, _number)
    _remember(_VALID_HYPERS, key, out)
    return out


def label_range(name: str, answers: jax.Array, num_answers: int) -> None:
    """Raise when labels in ``[0, num_answers)`` cannot be held by the canonical int."""
    _label_range(np.dtype(answers.dtype), num_answers, np.dtype(int_dtype()))


@functools.lru_cache(maxsize=1024)
def _label_range(dtype: np.dtype, num_answers: int, labels: np.dtype) -> None:
    largest = min(num_answers, int(np.iinfo(dtype).max) + 1) - 1
    limit = int(np.iinfo(labels).max)
    if largest > limit:
        hint = " or enable x64 for int64 labels" if int_dtype() == np.int32 else ""
        raise ValueError(
            msg.WIDE_LABELS.format(
                count=num_answers, dtype=int_dtype().name, library="zero_jax",
                limit=f"2**{limit.bit_length()}", hint=hint,
            )
        )


# ----------------------------------------------------------------------- data checks


def checking() -> bool:
    """Whether data checks are being emitted (a ``checked`` call is tracing)."""
    return _CHECKING is None or bool(_CHECKING.value)


def _check(pred: jax.Array, message: str) -> None:
    if _CHECKING is None:
        checkify.debug_check(jnp.all(pred), message)
    else:
        checkify.check(jnp.all(pred), message)


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
    if not checking():
        return
    spec = V.contract(contract)
    for arg, x, gate in V.value_rules(spec, named):
        if arg.value == "unit":
            ok = (x >= 0) & (x <= 1)
        elif arg.value == "finite":
            ok = jnp.isfinite(x)
        elif arg.value == "nonneg":
            ok = _nonneg(x)
        else:  # ids in [0, bound)
            ok = _nonneg(x) & _below(x, named[arg.bound or ""])
        if gate is not None:
            ok = ok | ~gate
        _check(ok, V.value_message(arg, named))
    for name, lo, hi, message in V.traced_hypers(spec):
        if name not in named:
            continue
        v = jnp.asarray(named[name])
        ok = jnp.isfinite(v)
        if lo is not None:
            ok = ok & (v >= lo)
        if hi is not None:
            ok = ok & (v <= hi)
        _check(ok, message)
    ordered = spec.extra.get("ordered", ())
    if ordered:
        low, high = (jnp.asarray(named[n]) for n in ordered)
        _check((low >= 0) & (low <= high) & (high <= 1), msg.BAND_TRACED)
