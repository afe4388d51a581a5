"""Input validation of the PyTorch reference, read from :mod:`zero_contracts`.

Every public function checks its inputs here and raises ``TypeError`` (wrong kind
of dtype or object) or ``ValueError`` (shapes, empty batches, out-of-range values),
naming the argument, with the messages zero_jax raises (eagerly, or under
``zero_jax.checked`` for the data checks).
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import torch

from zero_contracts import CONTRACTS, Contract
from zero_contracts import messages as msg

_FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
_UNSIGNED = (torch.uint8, torch.uint16, torch.uint32, torch.uint64)


def _spec(contract: Contract | str) -> Contract:
    return CONTRACTS[contract] if isinstance(contract, str) else contract


def _kind(name: str, x: torch.Tensor, kind: str) -> None:
    dtype = x.dtype
    if kind == "float" and dtype not in _FLOATS:
        raise TypeError(msg.NOT_FLOAT.format(name=name, dtype=dtype))
    is_int = not (dtype.is_floating_point or dtype.is_complex or dtype == torch.bool)
    if kind == "int" and not is_int:
        raise TypeError(msg.NOT_INT.format(name=name, dtype=dtype))
    if kind == "bool" and dtype != torch.bool:
        raise TypeError(msg.NOT_BOOL.format(name=name, dtype=dtype))
    if kind == "real" and not (is_int or dtype in _FLOATS):
        raise TypeError(msg.NOT_FLOAT.format(name=name, dtype=dtype))


def arrays(contract: Contract | str, *values: Any) -> tuple[torch.Tensor, ...]:
    """Validate the tensor arguments of ``contract`` (in signature order).

    Checks type, kind, rank, non-empty axes, that shared shape symbols agree and
    that tensors share a device; returns them (``None`` for an absent optional).
    """
    spec = _spec(contract)
    bound: dict[str, tuple[int, str, tuple[int, ...]]] = {}
    first: tuple[str, torch.Tensor] | None = None
    out: list[Any] = []
    for arg, x in zip(spec.args, values, strict=True):
        if x is None and arg.optional:
            out.append(None)
            continue
        if not isinstance(x, torch.Tensor):
            raise TypeError(msg.NOT_TENSOR.format(name=arg.name, got=type(x).__name__))
        _kind(arg.name, x, arg.kind)
        shape = tuple(x.shape)
        if arg.shape is None:
            if x.ndim < 1:
                raise ValueError(msg.RANK.format(name=arg.name, shape="[..., T]", got=shape))
            if first is not None:
                try:
                    torch.broadcast_shapes(first[1].shape, x.shape)
                except RuntimeError:
                    raise ValueError(
                        msg.SAME_SHAPE.format(
                            name=arg.name, ref=first[0], ref_shape=tuple(first[1].shape), got=shape
                        )
                    ) from None
        else:
            text = arg.shape_text
            if x.ndim != len(arg.shape):
                raise ValueError(msg.RANK.format(name=arg.name, shape=text, got=shape))
            if arg.nonempty and any(
                d == 0 for s, d in zip(arg.shape, shape, strict=True) if s in arg.nonempty
            ):
                if set(arg.nonempty) != set(arg.shape):
                    text = text + " with " + ", ".join(f"{s} >= 1" for s in arg.nonempty)
                raise ValueError(msg.EMPTY.format(name=arg.name, shape=text, got=shape))
            _bind(arg.name, arg.shape, shape, bound)
        if first is None:
            first = (arg.name, x)
        elif x.device != first[1].device:
            raise ValueError(
                msg.DEVICE.format(
                    name=arg.name, ref=first[0], ref_device=first[1].device, got=x.device
                )
            )
        out.append(x)
    return tuple(out)


def _bind(
    name: str,
    symbols: tuple[str, ...],
    shape: tuple[int, ...],
    bound: dict[str, tuple[int, str, tuple[int, ...]]],
) -> None:
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


def real(name: str, x: Any, lo: float | None, hi: float | None, expected: str) -> float:
    """Validate a real hyper-parameter (Python number or 0-d tensor); return it."""
    if isinstance(x, torch.Tensor):
        if x.ndim != 0 or x.dtype == torch.bool or x.dtype.is_complex:
            raise TypeError(msg.NOT_SCALAR_TENSOR.format(name=name, got=tuple(x.shape)))
        value = float(x)
    elif isinstance(x, numbers.Real) and not isinstance(x, bool):
        value = float(x)
    else:
        raise TypeError(msg.NOT_SCALAR.format(name=name, got=type(x).__name__))
    if (
        not math.isfinite(value)
        or (lo is not None and value < lo)
        or (hi is not None and value > hi)
    ):
        raise ValueError(msg.OUT_OF_RANGE.format(name=name, expected=expected, value=value))
    return value


def count(name: str, x: Any) -> int:
    if isinstance(x, bool) or not isinstance(x, numbers.Integral):
        raise TypeError(msg.NOT_STATIC_INT.format(name=name, got=type(x).__name__))
    if x < 1:
        raise ValueError(msg.TOO_SMALL.format(name=name, low=1, value=x))
    return int(x)


def hypers(contract: Contract | str, **values: Any) -> dict[str, Any]:
    """Validate hyper-parameters by their contract; returns their Python values."""
    spec = _spec(contract)
    out: dict[str, Any] = {}
    for name, value in values.items():
        h = spec.hyper(name)
        if h.kind == "real":
            out[name] = real(name, value, h.lo, h.hi, h.expected)
        elif h.kind == "count":
            out[name] = None if (value is None and h.optional) else count(name, value)
        elif h.kind == "int":
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise TypeError(msg.NOT_INT_PARAM.format(name=name, got=type(value).__name__))
            if h.lo is not None and value < h.lo:
                raise ValueError(msg.TOO_SMALL.format(name=name, low=int(h.lo), value=value))
            out[name] = int(value)
        else:
            if not isinstance(value, str) or value not in h.choices:
                raise ValueError(msg.CHOICE.format(name=name, allowed=h.choices, value=value))
            out[name] = value
    ordered = spec.extra.get("ordered")
    if ordered and all(n in out for n in ordered):
        lo, hi = (out[n] for n in ordered)
        if lo > hi:
            raise ValueError(msg.BAND_ORDER.format(low=lo, high=hi))
    return out


# ----------------------------------------------------------------------- integers


def as_int64(x: torch.Tensor) -> torch.Tensor:
    """Integer ids as int64, keeping equality: uint64 is reinterpreted bit for bit.

    torch implements few operations for uint16 / uint32 / uint64; the ids are
    converted exactly (uint64 values of 2**63 and above become negative int64,
    distinct from every valid id in ``[0, n)`` and from each other).
    """
    if x.dtype == torch.int64:
        return x
    if x.dtype == torch.uint64:
        return x.view(torch.int64)
    return x.to(torch.int64)


def id_max(x: torch.Tensor) -> int:
    """The largest value of an integer tensor's dtype."""
    return int(torch.iinfo(x.dtype).max)


def ids_equal(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Exact ``a == b`` for integer tensors of any two dtypes (broadcasting)."""
    eq = as_int64(a) == as_int64(b)
    # A uint64 value >= 2**63 viewed as int64 is negative and could equal a negative
    # signed id; a signed id must be >= 0 to equal any unsigned one.
    for u, s in ((a, b), (b, a)):
        if u.dtype == torch.uint64 and s.dtype not in _UNSIGNED:
            eq = eq & (s >= 0)
    return eq


def label_range(name: str, answers: torch.Tensor, num_answers: int) -> None:
    """Raise when labels in ``[0, num_answers)`` cannot be held by int64."""
    if answers.dtype == torch.uint64 and num_answers > 2**63:
        raise ValueError(
            msg.WIDE_LABELS.format(
                count=num_answers, dtype="int64", library="zero_torch", limit="2**63", hint=""
            )
        )


# ----------------------------------------------------------------------- data checks


def require(ok: torch.Tensor | bool, message: str) -> None:
    """Raise ValueError(message) unless ``ok`` holds everywhere."""
    if isinstance(ok, torch.Tensor):
        ok = bool(ok.all())
    if not ok:
        raise ValueError(message)


def data_checks(contract: Contract | str, **named: Any) -> None:
    """Raise the value errors of ``contract`` for the given tensors and hyper-parameters."""
    spec = _spec(contract)
    for arg in spec.args:
        x = named.get(arg.name)
        if arg.value is None or x is None:
            continue
        if arg.value == "unit":
            ok = (x >= 0) & (x <= 1)
        elif arg.value == "finite":
            ok = torch.isfinite(x)
        elif arg.value == "nonneg":
            uint64 = x.dtype == torch.uint64
            ok = torch.ones_like(x, dtype=torch.bool) if uint64 else as_int64(x) >= 0
        else:
            bound = named.get(arg.bound) if arg.bound else None
            if bound is None:
                continue
            ids = as_int64(x)
            ok = ids >= 0
            if bound <= 2**63 - 1:
                ok = ok & (ids < bound)
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
        require(ok, text)


def compute_dtype(dtype: torch.dtype) -> torch.dtype:
    """float16 / bfloat16 computations run in float32 (rounded once at the end)."""
    return torch.promote_types(dtype, torch.float32)
