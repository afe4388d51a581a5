"""Input validation of the PyTorch reference, read from :mod:`zero_contracts`.

Every public function checks its inputs here and raises ``TypeError`` (wrong kind
of dtype or object) or ``ValueError`` (shapes, empty batches, out-of-range values),
naming the argument, with the messages zero_jax raises (eagerly, or under
``zero_jax.checked`` for the data checks).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterator
from typing import Any, TypeAlias

import numpy as np
import torch

from zero_contracts import Contract
from zero_contracts import messages as msg
from zero_contracts import validate as V

#: A real hyper-parameter as the functions accept it: a Python number, a NumPy scalar
#: or 0-d array, or a 0-d tensor.
Real: TypeAlias = "float | np.number[Any] | np.ndarray[Any, Any] | torch.Tensor"
#: A static integer hyper-parameter (``num_answers``, ``ddof``, ``k``, ...): a Python or
#: NumPy integer.
Index: TypeAlias = "int | np.integer[Any]"

_FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
_UNSIGNED = (torch.uint8, torch.uint16, torch.uint32, torch.uint64)


def arrays(contract: Contract | str, *values: Any) -> tuple[torch.Tensor, ...]:
    """Validate the tensor arguments of ``contract`` (in signature order).

    Checks type, kind, rank, non-empty axes, that shared shape symbols agree (see
    :class:`zero_contracts.validate.Shapes`) and that tensors share a device;
    returns them (``None`` for an absent optional).
    """
    spec = V.contract(contract)
    shapes = V.Shapes()
    first: tuple[str, torch.Tensor] | None = None
    out: list[Any] = []
    for arg, x in zip(spec.args, values, strict=True):
        if x is None and arg.optional:
            out.append(None)
            continue
        if not isinstance(x, torch.Tensor):
            raise TypeError(msg.NOT_TENSOR.format(name=arg.name, got=type(x).__name__))
        dtype = x.dtype
        V.check_kind(
            arg.name,
            arg.kind,
            dtype,
            floating=dtype in _FLOATS,
            integer=not (dtype.is_floating_point or dtype.is_complex or dtype == torch.bool),
            boolean=dtype == torch.bool,
        )
        shapes.check(arg, tuple(x.shape))
        if x.device.type == "meta":
            raise ValueError(msg.META.format(name=arg.name))
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


# -------------------------------------------------------------------- hyper-parameters


def _number(name: str, x: Any) -> float:
    """The value of a real hyper-parameter: a Python or NumPy number, a 0-d NumPy
    array or a 0-d tensor."""
    if isinstance(x, torch.Tensor):
        if x.ndim != 0:
            raise TypeError(msg.NOT_SCALAR_TENSOR.format(name=name, got=tuple(x.shape)))
        if x.device.type == "meta":
            raise ValueError(msg.META.format(name=name))
        if x.dtype == torch.bool or x.dtype.is_complex:
            raise TypeError(msg.NOT_SCALAR.format(name=name, got=f"a {x.dtype} tensor"))
        return float(x)
    if isinstance(x, np.ndarray) and x.shape == () and V.real_kind(x.dtype.kind, x.dtype.name):
        return float(x)
    if isinstance(x, numbers.Real) and not isinstance(x, (bool, np.bool_)):
        return V.python_real(x)
    if isinstance(x, np.generic) and V.real_kind(x.dtype.kind, x.dtype.name):
        return float(x)  # an ml_dtypes scalar (bfloat16) is not a numbers.Real
    raise TypeError(msg.NOT_SCALAR.format(name=name, got=type(x).__name__))


def hypers(contract: Contract | str, **values: Any) -> dict[str, Any]:
    """Validate hyper-parameters by their contract; returns their Python values."""
    return V.hyper_values(contract, values, _number)


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


#: Elements of a data rule evaluated at once: a rule over a large tensor (the
#: ``[B, T, V]`` logits) runs over pieces of its leading axes, so its bool temporaries
#: stay far below the tensor's size.
CHECK_CHUNK = 2**22


def _rule_holds(arg: Any, x: torch.Tensor, named: dict[str, Any]) -> torch.Tensor:
    """Where the value rule of ``arg`` holds on ``x`` (a bool tensor of ``x``'s shape)."""
    if arg.value == "unit":
        return (x >= 0) & (x <= 1)
    if arg.value == "finite":
        return torch.isfinite(x)
    if arg.value == "nonneg":
        if x.dtype == torch.uint64:
            return torch.ones_like(x, dtype=torch.bool)
        return as_int64(x) >= 0
    # ids in [0, bound); uint64 ids >= 2**63 are negative as int64
    bound = named[arg.bound or ""]
    ids = as_int64(x)
    ok = ids >= 0
    if bound <= 2**63 - 1:
        ok = ok & (ids < bound)
    return ok


def _pieces(shape: tuple[int, ...], depth: int) -> Iterator[tuple[slice, ...]]:
    """Index tuples over the first ``depth`` axes of ``shape`` whose pieces hold at most
    ``CHECK_CHUNK`` elements (or one index of the deepest axis allowed)."""
    if depth == 0 or not shape:
        yield ()
        return
    inner = math.prod(shape[1:])
    if inner <= CHECK_CHUNK or depth == 1:
        step = max(1, CHECK_CHUNK // max(1, inner))
        for i in range(0, max(shape[0], 1), step):
            yield (slice(i, i + step),)
        return
    for i in range(shape[0]):
        for rest in _pieces(shape[1:], depth - 1):
            yield (slice(i, i + 1), *rest)


def data_checks(contract: Contract | str, **named: Any) -> None:
    """Raise the value errors of ``contract`` for the given tensors and hyper-parameters.

    A gate (``where``) of lower rank than its argument applies to the argument's
    leading axes: a ``[B, T]`` mask gates every ``[B, T, V]`` logit of its token.  A
    large argument is checked in pieces, so the rule's temporaries stay small.
    """
    for arg, x, gate in V.value_rules(contract, named):
        aligned = gate is None or tuple(gate.shape) == tuple(x.shape[: gate.ndim])
        depth = x.ndim if gate is None else (gate.ndim if aligned else 0)
        for index in _pieces(tuple(x.shape), depth):
            part = x[index]
            if not part.numel():
                continue
            g = None if gate is None else (gate[index[: gate.ndim]] if aligned else gate)
            if g is not None and 0 < g.ndim < part.ndim:
                # every entry of a gated position must hold: reduce the trailing axes
                axes = tuple(range(g.ndim, part.ndim))
                if arg.value == "finite":  # max and min propagate NaN: no bool temporary
                    ok = torch.isfinite(part.amax(axes)) & torch.isfinite(part.amin(axes))
                else:
                    ok = _rule_holds(arg, part, named).flatten(g.ndim).all(-1)
            else:
                ok = _rule_holds(arg, part, named)
            if g is not None:
                ok = ok | ~g
            require(ok, V.value_message(arg, named))


def k_at_most_samples(k: int, n: int) -> None:
    """``pass_at_k``: ``k`` cannot exceed the ``N`` samples per question."""
    if k > n:
        raise ValueError(msg.K_TOO_LARGE.format(n=n, k=k))


def trained_at_most_answers(trained: int, k: int) -> None:
    """``vote_metrics``: the trained answers are some of the ``K`` voted ones."""
    if trained > k:
        raise ValueError(msg.TRAINED_TOO_LARGE.format(k=k, trained=trained))


def compute_dtype(dtype: torch.dtype) -> torch.dtype:
    """float16 / bfloat16 computations run in float32 (rounded once at the end)."""
    return torch.promote_types(dtype, torch.float32)
