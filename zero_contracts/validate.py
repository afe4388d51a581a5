"""The framework-neutral half of validation, shared by both twins.

Everything here works on plain Python values (shapes as tuples, hyper-parameters
as numbers), so zero_jax and zero_torch check kinds, shapes, hyper-parameters and
build data-check messages with the same code; each twin only turns its own arrays
into those plain values and evaluates the data predicates in its framework.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from zero_contracts import messages as msg
from zero_contracts.spec import CONTRACTS, Arg, Contract, Hyper

__all__ = [
    "Shapes",
    "check_kind",
    "contract",
    "hyper_values",
    "traced_hypers",
    "value_message",
    "value_rules",
]


def contract(spec: Contract | str) -> Contract:
    """The contract named ``spec`` (or ``spec`` itself)."""
    return CONTRACTS[spec] if isinstance(spec, str) else spec


def check_kind(name: str, kind: str, dtype: Any, *, floating: bool, integer: bool,
               boolean: bool) -> None:
    """Raise ``TypeError`` unless a dtype with these properties suits ``kind``."""
    if kind == "float" and not floating:
        raise TypeError(msg.NOT_FLOAT.format(name=name, dtype=dtype))
    if kind == "int" and not integer:
        raise TypeError(msg.NOT_INT.format(name=name, dtype=dtype))
    if kind == "bool" and not boolean:
        raise TypeError(msg.NOT_BOOL.format(name=name, dtype=dtype))
    if kind == "real" and not (floating or integer):
        raise TypeError(msg.NOT_FLOAT.format(name=name, dtype=dtype))


def _broadcastable(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    return all(x == y or x == 1 or y == 1 for x, y in zip(a[::-1], b[::-1], strict=False))


class Shapes:
    """Checks the shapes of one call's arguments against their symbols.

    ``check(arg, shape)`` verifies the rank, the non-empty axes and that every shape
    symbol has the size an earlier argument gave it (``same shape`` when the two
    arguments have the same symbols, else the axis by its symbol); arguments with no
    symbols (``shape=None``) need rank >= 1 and must broadcast with the first one.
    """

    def __init__(self) -> None:
        self.bound: dict[str, tuple[int, Arg, tuple[int, ...]]] = {}
        self.first: tuple[str, tuple[int, ...]] | None = None

    def check(self, arg: Arg, shape: tuple[int, ...]) -> None:
        if arg.shape is None:
            if len(shape) < 1:
                raise ValueError(msg.RANK.format(name=arg.name, shape="[..., T]", got=shape))
            if self.first is not None and not _broadcastable(self.first[1], shape):
                raise ValueError(
                    msg.SAME_SHAPE.format(
                        name=arg.name, ref=self.first[0], ref_shape=self.first[1], got=shape
                    )
                )
        else:
            text = arg.shape_text
            if len(shape) != len(arg.shape):
                raise ValueError(msg.RANK.format(name=arg.name, shape=text, got=shape))
            pairs = list(zip(arg.shape, shape, strict=True))
            if any(d == 0 for s, d in pairs if s in arg.nonempty):
                if set(arg.nonempty) != set(arg.shape):
                    text = text + " with " + ", ".join(f"{s} >= 1" for s in arg.nonempty)
                raise ValueError(msg.EMPTY.format(name=arg.name, shape=text, got=shape))
            for symbol, size in pairs:
                if symbol in self.bound and self.bound[symbol][0] != size:
                    ref_size, ref, ref_shape = self.bound[symbol]
                    if ref.shape == arg.shape:
                        raise ValueError(
                            msg.SAME_SHAPE.format(
                                name=arg.name, ref=ref.name, ref_shape=ref_shape, got=shape
                            )
                        )
                    raise ValueError(
                        msg.SAME_AXIS.format(
                            name=arg.name, shape=text, axis=symbol, size=ref_size, ref=ref.name,
                            ref_shape=ref.shape_text, ref_got=ref_shape, got=shape,
                        )
                    )
            for symbol, size in pairs:
                self.bound.setdefault(symbol, (size, arg, shape))
        if self.first is None:
            self.first = (arg.name, shape)


def _static_int(name: str, x: Any, message: str) -> int:
    """A static integer hyper-parameter: a Python / NumPy int or a concrete 0-d integer
    array (anything with ``__index__`` but a bool); a traced value is refused."""
    boolean = str(getattr(x, "dtype", "")) in ("bool", "torch.bool")  # NumPy / JAX, torch
    if isinstance(x, (bool, float)) or boolean or getattr(x, "ndim", 0) != 0:
        raise TypeError(message.format(name=name, got=type(x).__name__))
    try:
        return operator.index(x)
    except Exception:  # a float, a traced value (TracerIntegerConversionError), ...
        raise TypeError(message.format(name=name, got=type(x).__name__)) from None


def _count(name: str, x: Any) -> int:
    value = _static_int(name, x, msg.NOT_STATIC_INT)
    if value < 1:
        raise ValueError(msg.TOO_SMALL.format(name=name, low=1, value=value))
    return value


def real_kind(kind: str, name: str) -> bool:
    """Whether a NumPy dtype (by its ``kind`` and ``name``) holds real numbers that a
    real hyper-parameter accepts: integers and floats, bfloat16 included."""
    return kind in "iuf" or name == "bfloat16"


def python_real(x: Any) -> float:
    """``float(x)``; an int beyond the float range becomes an infinity (refused as out
    of range by :func:`hyper_values`, not an ``OverflowError``)."""
    try:
        return float(x)
    except OverflowError:
        return math.inf if x > 0 else -math.inf


def hyper_values(
    spec: Contract | str,
    values: Mapping[str, Any],
    number: Callable[[str, Any], float | None],
    *,
    keep_traced: bool = False,
) -> dict[str, Any]:
    """Validate hyper-parameters by their contract; returns their Python values.

    ``values`` holds every hyper-parameter of the contract by name.  ``number(name, x)``
    turns a real hyper-parameter into a float, or ``None`` when it is traced (it raises
    ``TypeError`` for anything that is not a real scalar); a traced value is returned
    as ``None``, or as it is with ``keep_traced``.
    """
    spec = contract(spec)
    out: dict[str, Any] = {}
    for h in spec.hypers:
        name = h.name
        value = values[name]
        kind = h.kind
        if kind == "real":
            v = value if type(value) is float else number(name, value)
            if v is None:
                out[name] = value if keep_traced else None
                continue
            if not math.isfinite(v) or (h.lo is not None and v < h.lo) or (
                h.hi is not None and v > h.hi
            ):
                raise ValueError(msg.OUT_OF_RANGE.format(name=name, expected=h.expected, value=v))
            out[name] = v
        elif kind == "count":
            if value is None and h.optional:
                out[name] = None
                continue
            v = value if type(value) is int and value >= 1 else _count(name, value)
            if h.hi is not None and v > h.hi:
                raise ValueError(msg.TOO_LARGE.format(name=name, limit=int(h.hi), value=value))
            out[name] = v
        elif kind == "int":
            v = value if type(value) is int else _static_int(name, value, msg.NOT_INT_PARAM)
            if h.lo is not None and v < h.lo:
                raise ValueError(msg.TOO_SMALL.format(name=name, low=int(h.lo), value=v))
            out[name] = v
        else:
            if not isinstance(value, str) or value not in h.choices:
                raise ValueError(msg.CHOICE.format(name=name, allowed=h.choices, value=value))
            out[name] = str(value)  # a str subclass (np.str_) as the plain string
    for order in spec.constraints:
        lo, hi = out[order.low], out[order.high]
        if type(lo) is float and type(hi) is float and lo > hi:
            raise ValueError(
                msg.ORDER.format(low=order.low, high=order.high, low_value=lo, high_value=hi)
            )
    return out


def value_rules(
    spec: Contract | str, named: Mapping[str, Any]
) -> Iterator[tuple[Arg, Any, Any]]:
    """The data rules that apply to this call: ``(arg, value, gate or None)``.

    Skips absent arguments and ids with no bound (e.g. ``num_clusters=None``).
    """
    for arg in contract(spec).args:
        x = named.get(arg.name)
        if arg.value is None or x is None:
            continue
        if arg.value == "ids" and named.get(arg.bound or "") is None:
            continue
        yield arg, x, (named.get(arg.where) if arg.where else None)


def value_message(arg: Arg, named: Mapping[str, Any]) -> str:
    """The error message of ``arg``'s data rule."""
    if arg.value == "unit":
        if arg.where:
            return msg.UNIT_WHERE.format(name=arg.name, where=arg.where)
        return msg.UNIT.format(name=arg.name)
    if arg.value == "finite":
        if arg.where:
            return msg.FINITE_WHERE.format(name=arg.name, where=arg.where)
        return msg.FINITE.format(name=arg.name)
    if arg.value == "nonneg":
        if arg.where:
            return msg.NONNEG_WHERE.format(name=arg.name, where=arg.where)
        return msg.NONNEG.format(name=arg.name)
    return msg.IDS.format(name=arg.name, bound=arg.bound, count=named[arg.bound or ""])


def traced_hypers(spec: Contract | str) -> Iterator[Hyper]:
    """The real hyper-parameters, whose range is also a data rule inside the kernels
    (a Python value was checked eagerly by :func:`hyper_values`; a traced one is only
    known there).  Their messages are ``OUT_OF_RANGE`` and ``ORDER`` with the value
    formatted in, as for a Python value."""
    return (h for h in contract(spec).hypers if h.kind == "real")
