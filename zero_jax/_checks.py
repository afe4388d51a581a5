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
import inspect
import math
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
R = TypeVar("R")

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
    if isinstance(x, jax.Array):  # a JAX array or tracer: no conversion
        _ARRAY_TYPES.add(type(x))
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


#: Types that pass :func:`arrays` untouched: ``None`` (an absent optional argument;
#: a required one is refused when the kernel traces) and the concrete types of the
#: JAX arrays and tracers seen so far (a set lookup is much cheaper than the
#: abstract-class check), added by :func:`_to_array`.
_ARRAY_TYPES: set[type] = {type(None)}


def arrays(contract: Contract | str, *values: Any) -> tuple[jax.Array, ...]:
    """The array arguments of ``contract`` (in signature order) as JAX arrays.

    JAX arrays and tracers pass through untouched: their kinds and shapes are
    checked when the reward's kernel is traced (see :func:`kernel`), once per
    signature, so a repeated call costs one type test per argument.  Anything else
    (NumPy arrays, lists, scalars) is converted and checked here: kind, rank,
    non-empty axes, shared shape symbols (see :class:`zero_contracts.validate.Shapes`)
    and, with x64 off, 64-bit ids that int32 cannot hold.  ``None`` stays ``None``
    for an absent optional argument.
    """
    if _ARRAY_TYPES.issuperset(map(type, values)):
        return values
    return _validate_arrays(contract, values)


#: The body of each contract's kernel (its parameters are checked in test_contracts).
KERNELS: dict[str, Callable[..., Any]] = {}
#: Each jitted kernel's ``bind`` (see :func:`_binder`), kept beside the jit object
#: rather than as an attribute of it.
BINDERS: dict[Any, Callable[[tuple[Any, ...]], Callable[..., Any]]] = {}


def kernel(
    contract: Contract | str, *, static_argnames: tuple[str, ...] = ()
) -> Callable[[F], F]:
    """``jax.jit`` of a reward's kernel that validates its array arguments as it traces.

    The kernel's leading positional parameters are the contract's array arguments,
    in order.  Their kinds and shapes (known while tracing, also under ``vmap``
    and inside a user's ``jit``) are checked by the same code as eager inputs, so
    a signature is validated when it is first traced and never again: the public
    call on JAX arrays then costs what a bare jitted kernel costs.  A failed check
    raises while tracing and nothing is cached.

    A real hyper-parameter passed as ``None`` (see :attr:`Hypers.args`) is the
    contract's default, a constant of the compiled kernel.
    """
    spec = V.contract(contract)
    count = len(spec.args)
    defaults = {h.name: h.default for h in spec.hypers if h.kind == "real"}

    def wrap(body: F) -> F:
        names = list(inspect.signature(body).parameters)
        KERNELS[spec.name] = body
        slots = {i: defaults[n] for i, n in enumerate(names) if n in defaults}

        @functools.wraps(body)
        def traced(*args: Any, **kwargs: Any) -> Any:  # runs only while tracing
            _validate_arrays(contract, args[:count])
            args = tuple(slots[i] if a is None and i in slots else a for i, a in enumerate(args))
            return body(*args, **kwargs)

        jitted = jax.jit(traced, static_argnames=static_argnames)
        BINDERS[jitted] = _binder(traced, jitted)
        return jitted  # type: ignore[return-value]

    return wrap


def _binder(
    traced: Callable[..., Any], jitted: Callable[..., Any]
) -> Callable[[tuple[Any, ...]], Callable[..., Any]]:
    """``bind(hyper_args)``: the kernel with its hyper-parameter arguments fixed, a
    function of the arrays alone.  Python values (static hyper-parameters, ``None``
    for a default) become constants of a jitted function made once per set, so a
    call passes only its arrays to jit's dispatch; a set holding JAX scalars or
    tracers keeps them as arguments (changing them never recompiles)."""
    bound: dict[tuple[Any, ...], Callable[..., Any]] = {}

    def bind(args: tuple[Any, ...]) -> Callable[..., Any]:
        if any(isinstance(x, jax.Array) for x in args):
            return lambda *arrays: jitted(*arrays, *args)
        hit = bound.get(args)
        if hit is None:
            if len(bound) >= 256:
                bound.clear()
            hit = bound[args] = jax.jit(lambda *arrays: traced(*arrays, *args))
        return hit

    return bind


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


try:  # the x64 flag, read the cheap way where it exists (a cache key on every call)
    from jax._src.config import enable_x64 as _ENABLE_X64

    def _x64() -> bool:
        return _ENABLE_X64.value is True
except ImportError:  # pragma: no cover - a JAX without the internal name

    def _x64() -> bool:
        return jax.config.read("jax_enable_x64") is True


class Hypers(dict[str, Any]):
    """Validated hyper-parameters: the static Python value of each by name (``None``
    for a traced real one), and :attr:`args`, what the kernel receives.

    ``args`` holds one entry per hyper-parameter in the contract's order: a static
    one's Python value; a real one given as a Python number equal to the contract's
    default is ``None`` (the kernel, see :func:`kernel`, uses the default as a
    constant, so a call at the defaults passes no scalar at all), any other Python
    number a weakly typed JAX scalar made once (a Python number passed to a jitted
    function is converted on every call, at microseconds each; a cached scalar is
    not, and changing it never recompiles), and a JAX scalar or tracer as it is.
    """

    def __init__(self, contract: Contract | str, given: tuple[Any, ...]) -> None:
        spec = V.contract(contract)
        names = [h.name for h in spec.hypers]
        super().__init__(V.hyper_values(spec, dict(zip(names, given, strict=True)), _number))
        self.args = tuple(
            (_kernel_arg(value, h.default) if h.kind == "real" else self[h.name])
            for h, value in zip(spec.hypers, given, strict=True)
        )
        self._bound: Callable[..., Any] | None = None
        self._derived: dict[str, Any] = {}

    def call(self, kernel: Callable[..., R], *arrays: Any) -> R:
        """``kernel(*arrays, *self.args)`` through the kernel's binder (see
        :func:`kernel`), bound once per set of hyper-parameters."""
        if self._bound is None:
            self._bound = BINDERS[kernel](self.args)
        return self._bound(*arrays)  # type: ignore[no-any-return]  # the kernel's own result

    def scalar(self, name: str, value: Any) -> Any:
        """A value derived from this set (e.g. ``"beta" = 1 - alpha``) as a kernel
        argument, converted as :attr:`args` converts a real hyper-parameter (no
        default), once per name."""
        if name not in self._derived:
            self._derived[name] = _kernel_arg(value, None)
        return self._derived[name]


def _kernel_arg(value: Any, default: Any) -> Any:
    """A real hyper-parameter as a kernel argument (see :class:`Hypers`): ``None`` for
    a Python number equal to ``default``, a weakly typed JAX scalar of the current
    x64 setting for another Python float or int (-0.0 and ints beyond int32 stay
    Python numbers), anything else (a JAX scalar, a tracer, None) as it is."""
    t = type(value)
    if t is not float and t is not int:
        return value
    if default is not None and value == default:
        return None
    if (t is float and value == 0.0 and math.copysign(1.0, value) < 0) or (
        t is int and not -(2**31) <= value < 2**31
    ):
        return value
    return jnp.asarray(value)


#: Hyper-parameter sets that passed validation, keyed by contract, the x64 setting
#: (the dtype of their JAX scalars), the values and their types (so ``True`` never
#: passes for ``1``, nor ``8.0`` for ``8``).  Failures are never cached.
_VALID_HYPERS: dict[Any, Hypers] = {}
#: Per contract, the last call's ``(x64 or None, values, their types, hypers)``: a call
#: with equal values of the same types (defaults, literals) needs no key.
_LAST_HYPERS: dict[Any, tuple[bool | None, tuple[Any, ...], tuple[type, ...], Hypers]] = {}
_CACHE_LIMIT = 4096


def hypers(contract: Contract | str, *given: Any) -> Hypers:
    """Validate hyper-parameters, given in the contract's order (see :class:`Hypers`).

    Results for plain Python values are remembered, so a repeated call costs a
    comparison with the contract's last call or one dictionary lookup.
    """
    types = tuple(map(type, given))
    last = _LAST_HYPERS.get(contract)
    # types first: a traced value is never compared (nor remembered: unhashable); the
    # x64 setting matters only to a set holding JAX scalars (last[0] is then not None)
    if (
        last is not None and types == last[2] and given == last[1]
        and (last[0] is None or last[0] is _x64())
    ):
        return last[3]
    x64 = _x64()
    try:
        key = (contract, x64, *given, *types)
        hit = _VALID_HYPERS.get(key)
    except TypeError:  # a traced or array-valued hyper-parameter: not hashable
        return Hypers(contract, given)
    if hit is None:
        hit = Hypers(contract, given)
        if len(_VALID_HYPERS) >= _CACHE_LIMIT:
            _VALID_HYPERS.clear()
        _VALID_HYPERS[key] = hit
    held = any(isinstance(x, jax.Array) for x in hit.args)
    _LAST_HYPERS[contract] = (x64 if held else None, given, types, hit)
    return hit


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
