"""The call path of zero_jax: boundary validation read from :mod:`zero_contracts`,
the contract's data rules, and :func:`checked`.

Every public function does three things, like its torch twin:

1. ``arrays(name, *values)``: JAX arrays and tracers pass as they are; anything else
   (NumPy arrays, lists, scalars) becomes a JAX array.  64-bit integer ids that the
   current x64 setting cannot hold raise ``ValueError`` (JAX would truncate them).
2. ``hypers(name, **values)``: the hyper-parameters, validated in Python on every
   call; a traced real hyper-parameter passes through to the kernel.
3. its kernel, decorated ``@kernel(name)``: one :func:`jax.jit` whose static
   arguments are the contract's static hyper-parameters.  While it traces, it checks
   the arrays' kinds, ranks and shapes (known then, under ``vmap`` and inside a user's
   ``jit`` too); then the math runs.  The math calls :func:`invalid` for the
   contract's data rules and :func:`poison` s the output rows they touch (NaN or -1),
   so invalid data is never a plausible number (a kernel whose math already fails on
   every invalid entry reads the poison from it); under :func:`checked` the same rules
   raise ``ValueError`` with the torch twin's message.

Nothing here holds a JAX value between calls: the only caches are JAX's own jit
caches and ``functools`` caches of plain Python values.
"""

from __future__ import annotations

import functools
import math
import numbers
import re
import string
import threading
from collections.abc import Callable, Hashable
from typing import Any, TypeAlias, TypeVar

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import checkify

from zero_contracts import CONTRACTS, Arg, Contract
from zero_contracts import messages as msg
from zero_contracts import validate as V

#: A static integer hyper-parameter (``num_answers``, ``ddof``, ``k``, ...): a Python or
#: NumPy integer, never traced (it fixes a shape or a compiled branch).
Index: TypeAlias = "int | np.integer[Any]"

__all__ = ["checked"]

F = TypeVar("F", bound=Callable[..., Any])

# --------------------------------------------------------------------------- checked

#: True while ``checked`` traces.  A JAX user context is part of every jit cache key,
#: so a kernel traced with its checks and the same kernel traced without them are two
#: cache entries: plain calls never carry a check.
_CHECKING = jax.make_user_context(False)

#: Per thread: whether it is inside ``checked`` (an inner ``checked`` leaves its checks
#: to the outer one's ``checkify``) and whether it is registering a check's callback.
_DEPTH = threading.local()

_SUFFIX = re.compile(r"\s*\(`check` failed.*\)\s*$", re.DOTALL)
_STAGED_HINT = (
    " (raised by zero_jax.checked when the staged step ran; inside jax.jit, lax.scan, "
    "lax.cond and the like JAX reports it as a runtime error: put zero_jax.checked "
    "around the outermost of them for a ValueError)"
)


def checked(fn: F) -> F:
    """Wrap ``fn`` so that the library's data checks run and raise ``ValueError``.

    ``fn`` is any function built from zero_jax rewards: one reward, or your whole
    (jitted) step.  The wrapper runs ``fn`` under :func:`checkify.checkify` and raises
    ``ValueError`` with the message the PyTorch twin gives when a data rule of the
    contract fails (ids out of range, non-finite scores, values outside [0, 1],
    traced hyper-parameters out of range).  On valid data the results are the plain
    ones, and a jitted step can be called with and without ``checked``, in any order.

    Placement: ``checked(jax.jit(step))`` raises the ``ValueError`` itself; so does
    ``checked`` under ``vmap`` or ``grad`` outside a jit, and a ``checked`` nested in
    another leaves the checking to the outer one.  Inside ``jax.jit`` or ``lax.scan``
    no Python exception can leave the compiled code: a failed check there stops the
    call with JAX's runtime error carrying the same message.

    Example::

        labels, p = zero_jax.checked(zero_jax.consensus)(answers, 8)
        new_state = zero_jax.checked(train_step)(state, batch)
    """

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if getattr(_DEPTH, "value", 0):
            return fn(*args, **kwargs)
        _check_wide_arguments(fn, args, kwargs)
        run = checkify.checkify(fn, errors=checkify.user_checks)
        _DEPTH.value = 1
        try:
            with _CHECKING(True):
                err, out = run(*args, **kwargs)
        finally:
            _DEPTH.value = 0
        if any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree.leaves(err)):
            # Known only when the values are: at once under an eager vmap / grad (the
            # callback runs inside this call), when the step runs inside a jit.
            _DEPTH.registering = True
            try:
                jax.debug.callback(_raise_traced, err)
            finally:
                _DEPTH.registering = False
        else:
            _raise(err)
        return out

    return wrapper  # type: ignore[return-value]


def _check_wide_arguments(fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """With x64 off, ``jax.jit`` narrows 64-bit integer arguments to 32 bits before any
    reward sees them: ``checked`` around a jitted function checks their range first.
    (Around a plain function an argument may never reach JAX, e.g. a NumPy seed.)"""
    if int_dtype() == np.int64 or not callable(getattr(fn, "lower", None)):
        return
    leaves = jax.tree_util.tree_flatten_with_path((args, kwargs))[0]
    for path, leaf in leaves:
        if isinstance(leaf, jax.core.Tracer):
            continue
        if not isinstance(leaf, (jax.Array, np.ndarray, np.generic)):
            continue
        if jnp.issubdtype(leaf.dtype, jax.dtypes.extended) or not _wide_ints(leaf.dtype):
            continue  # a typed PRNG key, floats, 32-bit ints
        where = "args" if path[0] == jax.tree_util.SequenceKey(0) else "kwargs"
        name = where + jax.tree_util.keystr(tuple(path[1:]))
        try:
            _check_narrow(name, leaf, msg.WIDE_ARGUMENT)
        except ValueError:
            if len(path) == 2 and isinstance(leaf, np.generic) and _static(fn, args, kwargs, path):
                continue  # a static argument reaches the function as it is
            raise


def _static(fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any], path: Any) -> bool:
    """Whether the top-level argument at ``path`` is one of ``jax.jit``'s static
    arguments (only a hashable one, e.g. a NumPy scalar, can be): its trace lists the
    others.  Asked only of a value that would be refused, so the extra trace costs a
    valid call nothing."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # JAX's warning about narrowing the others
        dynamic_args, dynamic_kwargs = fn.trace(*args, **kwargs).args_info
    if path[0] == jax.tree_util.SequenceKey(1):
        return path[1].key not in dynamic_kwargs
    hashable = [i for i, a in enumerate(args) if isinstance(a, Hashable)]
    # the positional statics are hashable; when as many are missing as there are
    # hashable arguments, each of those is static (else a wide one is checked anyway)
    return len(args) - len(dynamic_args) == len(hashable) and path[1].idx in hashable


def _raise(err: checkify.Error, hint: str = "") -> None:
    message = err.get()
    if message is not None:
        raise ValueError(_SUFFIX.sub("", message) + hint)


def _raise_traced(err: checkify.Error) -> None:
    _raise(err, "" if getattr(_DEPTH, "registering", False) else _STAGED_HINT)


def checking() -> bool:
    """Whether data checks are being emitted (a ``checked`` call is tracing)."""
    return bool(_CHECKING.value)


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


def arrays(contract: Contract | str, *values: Any) -> tuple[Any, ...]:
    """The array arguments of ``contract`` (in signature order) as JAX arrays.

    JAX arrays and tracers pass as they are (their kinds and shapes are checked when
    the kernel traces, see :func:`kernel`); ``None`` stays ``None`` (an absent
    optional argument; a required one is refused by the kernel).  Anything else is
    converted with :func:`numpy.asarray` then :func:`jax.numpy.asarray`.  With x64 off,
    64-bit integer ids outside the 32-bit range raise ``ValueError`` whether they come
    as NumPy arrays or as JAX arrays made while x64 was on, and the others become
    32-bit; such a JAX array traced by a jit or vmap (its values unknown) raises
    ``ValueError`` saying to narrow it outside the transform.
    """
    spec = CONTRACTS[contract] if isinstance(contract, str) else contract
    for x in values:  # JAX arrays other than 64-bit ints need nothing here (1.9 -> 0.8 µs)
        if not isinstance(x, jax.Array) or (x.dtype.kind in "iu" and x.dtype.itemsize == 8):
            break
    else:
        if len(values) == len(spec.args):
            return values
    return tuple([_to_array(arg, x) for arg, x in zip(spec.args, values, strict=True)])


def _to_array(arg: Arg, x: Any) -> Any:
    name = arg.name
    # ids would merge; lengths (a "nonneg" rule) and plain values would wrap around
    wide = msg.WIDE_IDS if arg.kind == "int" and arg.value != "nonneg" else msg.WIDE_VALUES
    if isinstance(x, jax.Array):
        if not _wide_ints(x.dtype):
            return x
        # 64-bit ids made while x64 was on, used with x64 off: the kernels compute in
        # the 32-bit ints of that setting, so the ids are checked, then narrowed
        if isinstance(x, jax.core.Tracer):  # inside a jit or vmap: values unknown
            raise ValueError(msg.WIDE_TRACED_IDS.format(name=name, dtype=x.dtype.name))
        _check_narrow(name, x, wide)
        return x.astype(_narrow(x.dtype))
    if x is None:
        return None
    if isinstance(x, (str, bytes)):
        raise TypeError(msg.NOT_ARRAY.format(name=name, got=type(x).__name__))
    try:
        arr = np.asarray(x)
    except (TypeError, ValueError, OverflowError) as e:
        raise TypeError(msg.NOT_ARRAY.format(name=name, got=type(x).__name__)) from e
    if arr.dtype.kind in "OUSVMm" and arr.dtype.name != "bfloat16":  # not numbers
        raise TypeError(msg.NOT_ARRAY.format(name=name, got=type(x).__name__))
    if _wide_ints(arr.dtype):
        _check_narrow(name, arr, wide)
    return jnp.asarray(arr)


def _wide_ints(dtype: Any) -> bool:
    """64-bit integers while the x64 setting holds only 32-bit ones."""
    return np.dtype(dtype).kind in "iu" and np.dtype(dtype).itemsize == 8 and (
        int_dtype() != np.int64
    )


def _narrow(dtype: Any) -> type[np.integer[Any]]:
    return np.int32 if np.dtype(dtype).kind == "i" else np.uint32


def _check_narrow(name: str, x: Any, message: str = msg.WIDE_IDS) -> None:
    """Raise ``message`` when 64-bit integers ``x`` (NumPy, or a JAX array's shards on
    this process) do not fit their 32-bit type."""
    info = np.iinfo(_narrow(x.dtype))
    shards = x.addressable_shards if isinstance(x, jax.Array) else [x]
    for shard in shards:
        arr = np.asarray(getattr(shard, "data", shard))
        if arr.size and (arr.min() < info.min or arr.max() > info.max):
            raise ValueError(message.format(name=name, dtype=info.dtype.name))


def kernel(contract: Contract | str) -> Callable[[F], F]:
    """``jax.jit`` of a reward's math that checks its array arguments as it traces.

    The kernel's leading positional parameters are the contract's arrays in order,
    then its hyper-parameters by their contract names (further derived values may
    follow); the contract's static hyper-parameters are the jit's static arguments,
    and a real one left out (see :func:`hypers`) is its contract default, a constant of
    the compiled kernel.
    Kinds, ranks and shapes are checked with the same code as the torch twin's
    (:mod:`zero_contracts.validate`) each time the kernel traces: once per signature,
    also under ``vmap`` and inside a user's ``jit``.
    """
    spec = V.contract(contract)
    statics = tuple(h.name for h in spec.hypers if h.static)
    defaults = {h.name: h.default for h in spec.hypers if h.kind == "real" and not h.required}

    def wrap(body: F) -> F:
        @functools.wraps(body)
        def traced(*args: Any, **kwargs: Any) -> Any:  # runs only while tracing
            _check_arrays(spec, args[: len(spec.args)])
            return body(*args, **{**defaults, **kwargs})

        return jax.jit(traced, static_argnames=statics)  # type: ignore[return-value]

    return wrap


def _check_arrays(spec: Contract, values: tuple[Any, ...]) -> None:
    shapes = V.Shapes()
    for arg, x in zip(spec.args, values, strict=True):
        if x is None and arg.optional:
            continue
        if x is None:
            raise TypeError(msg.NOT_ARRAY.format(name=arg.name, got="NoneType"))
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


# -------------------------------------------------------------------- hyper-parameters


def _number(name: str, x: Any) -> float | None:
    """The Python value of a real hyper-parameter, or None when it is traced."""
    if isinstance(x, jax.core.Tracer):
        if x.shape != ():
            raise TypeError(msg.NOT_SCALAR_SHAPE.format(name=name, got=tuple(x.shape)))
        if not (jnp.issubdtype(x.dtype, jnp.integer) or jnp.issubdtype(x.dtype, jnp.floating)):
            raise TypeError(msg.NOT_SCALAR.format(name=name, got=f"traced {x.dtype.name}"))
        return None
    if isinstance(x, (bool, str, bytes)) or x is None:
        raise TypeError(msg.NOT_SCALAR.format(name=name, got=type(x).__name__))
    if isinstance(x, int) or (isinstance(x, numbers.Real) and not isinstance(x, np.generic)):
        return V.python_real(x)  # an int of any size, a Fraction, a Decimal-like real
    try:
        arr = np.asarray(x)  # Python and NumPy numbers, 0-d NumPy and JAX arrays
    except (TypeError, ValueError):
        raise TypeError(msg.NOT_SCALAR.format(name=name, got=type(x).__name__)) from None
    if arr.shape != () or not V.real_kind(arr.dtype.kind, arr.dtype.name):
        raise TypeError(msg.NOT_SCALAR.format(name=name, got=type(x).__name__))
    return float(arr)


#: The smallest magnitude that rounds to inf in float32 (2^128 - 2^103).
_FLOAT32_OVERFLOW = 2.0**128 - 2.0**103


def hypers(contract: Contract | str, **values: Any) -> dict[str, Any]:
    """Validate hyper-parameters by their contract; the kernel's keyword arguments.

    Static ones become Python ints / strings; a concrete real one becomes a Python
    float, a plain jit argument (changing it never recompiles), except that one equal
    to its contract default is left out, so the kernel compiles the default in (a
    Python float passed to jit is converted on every call, a few microseconds); a
    traced real one passes through (its range is a data rule of the kernel, see
    :func:`invalid`).  With x64 off a finite value beyond float32's range raises
    ``ValueError`` (JAX would compute with inf).
    """
    spec = CONTRACTS[contract] if isinstance(contract, str) else contract
    out = V.hyper_values(spec, values, _number, keep_traced=True)
    narrow = float_dtype() == np.float32
    for h in spec.hypers:
        v = out[h.name]
        if narrow and type(v) is float and math.isfinite(v) and abs(v) >= _FLOAT32_OVERFLOW:
            raise ValueError(msg.WIDE_REAL.format(name=h.name, value=v))
        if h.kind == "real" and type(v) is float and v == h.default and math.copysign(1, v) > 0:
            del out[h.name]
    return out


def label_range(answers: jax.Array, num_answers: int) -> None:
    """Raise when labels in ``[0, num_answers)`` cannot be held by the canonical int."""
    _label_range(np.dtype(answers.dtype), num_answers, np.dtype(int_dtype()))


@functools.lru_cache(maxsize=1024)
def _label_range(dtype: np.dtype, num_answers: int, labels: np.dtype) -> None:
    largest = min(num_answers, int(np.iinfo(dtype).max) + 1) - 1
    limit = int(np.iinfo(labels).max)
    if largest > limit:
        hint = " or enable x64 for int64 labels" if labels == np.int32 else ""
        raise ValueError(
            msg.WIDE_LABELS.format(
                count=num_answers, dtype=labels.name, library="zero_jax",
                limit=f"2**{limit.bit_length()}", hint=hint,
            )
        )


# ----------------------------------------------------------------------- data rules


def in_range(x: jax.Array, bound: int) -> jax.Array:
    """``0 <= x < bound`` for integer ``x`` and a Python int ``bound`` of any size."""
    ok = jnp.ones(x.shape, bool) if jnp.issubdtype(x.dtype, jnp.unsignedinteger) else x >= 0
    if bound <= int(jnp.iinfo(x.dtype).max):
        ok = ok & (x < jnp.asarray(bound, x.dtype))
    return ok


def _holds(arg_value: str, x: jax.Array, named: dict[str, Any], bound: str | None) -> jax.Array:
    if arg_value == "unit":
        return (x >= 0) & (x <= 1)  # False for NaN
    if arg_value == "finite":
        return jnp.isfinite(x)
    if arg_value == "nonneg":
        return in_range(x, 2**64)
    return in_range(x, named[bound or ""])  # ids in [0, bound)


def invalid(contract: Contract | str, **named: Any) -> dict[str, jax.Array]:
    """Where the data break the contract's rules (inside a kernel).

    ``named`` maps argument and hyper-parameter names to their (traced) values;
    static hyper-parameters such as ``num_answers`` are Python ints.  Returns, for
    each argument with a value rule, a bool array of its shape (True: the entry is
    invalid, where its gate holds); for each real hyper-parameter and each
    constraint between them, a bool scalar.  Under :func:`checked` each rule is
    also a check that raises the contract's message.
    """
    spec = V.contract(contract)
    bad: dict[str, jax.Array] = {}
    for arg, x, gate in V.value_rules(spec, named):
        ok = _holds(arg.value or "", x, named, arg.bound)
        if gate is not None:  # a gate of fewer axes (mask [B, T] of logits [B, T, V])
            ok = ok | ~gate.reshape(gate.shape + (1,) * (ok.ndim - gate.ndim))
        _check(ok, V.value_message(arg, named))
        bad[arg.name] = ~ok
    for h in V.traced_hypers(spec):
        v = jnp.asarray(named[h.name])
        ok = jnp.isfinite(v)
        if h.lo is not None:
            ok = ok & (v >= h.lo)
        if h.hi is not None:
            ok = ok & (v <= h.hi)
        _check(ok, msg.OUT_OF_RANGE, name=h.name, expected=h.expected, value=v)
        bad[h.name] = ~ok
    for order in spec.constraints:
        lo, hi = jnp.asarray(named[order.low]), jnp.asarray(named[order.high])
        _check(lo <= hi, msg.ORDER, low=order.low, high=order.high, low_value=lo, high_value=hi)
        bad[f"{order.low}<={order.high}"] = ~(lo <= hi)
    return bad


def hyper_rules(bad: dict[str, jax.Array]) -> jax.Array | bool:
    """True when a real hyper-parameter or a constraint between them fails."""
    out: jax.Array | bool = False
    for b in bad.values():
        if b.ndim == 0:
            out = out | b
    return out


def poison(x: jax.Array, bad: jax.Array | bool) -> jax.Array:
    """``x`` with NaN (floats) or -1 (integers; the largest value if unsigned) where
    ``bad`` holds (broadcast against ``x``)."""
    if isinstance(bad, bool) and not bad:
        return x
    if jnp.issubdtype(x.dtype, jnp.floating):
        fill = jnp.asarray(jnp.nan, x.dtype)
    else:
        fill = jnp.asarray(-1).astype(x.dtype)
    return jnp.where(bad, fill, x)


def _check(ok: jax.Array, message: str, **values: Any) -> None:
    """A check of ``ok`` everywhere, under :func:`checked` only; ``message`` is
    formatted with ``values`` (strings as they are, arrays by their value)."""
    if not checking():
        return
    arrays = {k: v for k, v in values.items() if not isinstance(v, str)}
    text = "".join(  # the strings formatted in now, the traced values left to checkify
        literal.replace("{", "{{").replace("}", "}}")
        + ("" if field is None else (
            "{" + field + (":" + spec if spec else "") + "}" if field in arrays
            else format(values[field], spec or "")))
        for literal, field, spec, _ in string.Formatter().parse(message)
    )
    checkify.check(jnp.all(ok), text, **arrays)
