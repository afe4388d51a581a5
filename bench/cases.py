"""The benchmark grid and its inputs, one registry entry per public function.

A case is a public function at one shape (``B`` plus the named dimensions in
:data:`DIMS`), with inputs drawn from a fixed seed (the crc32 of the case key),
tie-heavy where ties matter (vote shares, duplicated cluster ids, few distinct answers
per row).  Every backend times the same NumPy-generated inputs; ``io_bytes`` is the
traffic of one call counted as every input read once plus every output written once.

Adding a function's rows is one entry: an input builder decorated with :func:`register`,
giving its full and quick grids, its B = 8 dispatch case(s) and the bytes one call
writes (a new shape dimension is a field of :class:`Case` and its name in
:data:`DIMS`).  The ``numpy`` backend times it when :mod:`bench.numpy_impl` has a
function of the same name (otherwise its cells are ``-``); the report, the targets and
the plots pick the rows up from the results.
"""

from __future__ import annotations

import itertools
import zlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from zero_contracts import CONTRACTS

__all__ = [
    "BENCHES",
    "BIG",
    "DIMS",
    "FUNCTIONS",
    "Bench",
    "Case",
    "build",
    "dispatch_cases",
    "full_grid",
    "io_bytes",
    "output_nbytes",
    "quick_grid",
    "register",
    "streaming_families",
]

#: Dimensions besides B that define a row (in the order of its variant label).
DIMS = ("K", "n", "T", "V")

BATCHES = (256, 4096, 65536, 1048576)
BIG = 16 * 1048576
GROUPS = (8, 16)
ALPHABETS = (16, 1024, 1_000_000)
QUICK_B = (256, 16384)


@dataclass(frozen=True)
class Case:
    """One function at one shape.  ``variant`` names what besides B defines the row."""

    fn: str
    B: int
    K: int | None = None
    n: int | None = None
    T: int | None = None
    ids: str | None = None  # "dense" or "arbitrary" (challenger_rewards)
    V: int | None = None

    @property
    def variant(self) -> str:
        parts = [self.ids] if self.ids else []
        for dim in DIMS:
            v = getattr(self, dim)
            if v is not None:
                parts.append(f"{dim}={_short(v) if dim == 'n' else v}")
        return ",".join(parts)

    @property
    def family(self) -> str:
        """Function plus variant without B: one line in the plots."""
        return f"{self.fn}[{self.variant}]" if self.variant else self.fn

    @property
    def key(self) -> str:
        return f"{self.family}@B={self.B}"

    @property
    def elementwise(self) -> bool:
        """Reads and writes each element once (the bandwidth target's rows)."""
        entry = BENCHES.get(self.fn)
        return bool(entry and entry.streaming(self))

    def dims(self) -> dict[str, Any]:
        return {d: getattr(self, d) for d in DIMS}

    def to_json(self) -> dict[str, Any]:
        return {"fn": self.fn, "B": self.B, **self.dims(), "ids": self.ids}

    @staticmethod
    def from_json(d: Mapping[str, Any]) -> Case:
        return Case(d["fn"], d["B"], ids=d.get("ids"), **{k: d.get(k) for k in DIMS})


def _short(n: int) -> str:
    if n >= 1_000_000 and n % 1_000_000 == 0:
        return f"{n // 1_000_000}M"
    if n >= 1000 and n % 1000 == 0 and n != 1024:
        return f"{n // 1000}k"
    return str(n)


Inputs = Callable[[Case, np.random.Generator], tuple[list[Any], dict[str, Any]]]
Grid = Iterable[Mapping[str, Any]]


@dataclass(frozen=True)
class Bench:
    """A function's entry: its input builder, its grids and the bytes a call writes."""

    fn: str
    inputs: Inputs
    out_bytes: Callable[[Case], int]
    full: tuple[Case, ...]
    quick: tuple[Case, ...]
    dispatch: tuple[Case, ...]
    streaming: Callable[[Case], bool]


#: Function name -> its entry, in registration order.
BENCHES: dict[str, Bench] = {}


def _grid(fn: str, specs: Grid) -> tuple[Case, ...]:
    """The union of the products of each spec's values (a scalar is one value)."""
    cases: list[Case] = []
    for spec in specs:
        names = list(spec)
        values = [v if isinstance(v, (tuple, list)) else (v,) for v in spec.values()]
        for combo in itertools.product(*values):
            cases.append(Case(fn, **dict(zip(names, combo, strict=True))))
    return tuple(cases)


def register(
    fn: str,
    *,
    full: Grid,
    quick: Grid,
    dispatch: Grid,
    out_bytes: Callable[[Case], int],
    streaming: bool | Callable[[Case], bool] = False,
) -> Callable[[Inputs], Inputs]:
    """Register ``fn``'s bench: each grid is a list of dicts of dimension values (tuples
    are multiplied out, e.g. ``{"K": (8, 16), "B": BATCHES}``); ``out_bytes(case)``:
    bytes one call writes with x64 on; ``streaming``: the case reads and writes each
    element once (its rows join the bandwidth target)."""
    if fn not in CONTRACTS:
        raise ValueError(f"{fn!r} is not a public function of the contract table")

    def add(inputs: Inputs) -> Inputs:
        stream = streaming if callable(streaming) else (lambda _c, s=bool(streaming): s)
        BENCHES[fn] = Bench(
            fn, inputs, out_bytes, _grid(fn, full), _grid(fn, quick), _grid(fn, dispatch), stream
        )
        return inputs

    return add


# ------------------------------------------------------------------------- inputs


def _scores(rng: np.random.Generator, b: int, k: int = 8) -> np.ndarray:
    """Consistencies in [0, 1]: exact vote shares i/k (ties, band edges) and uniforms."""
    shares = rng.integers(0, k + 1, size=b).astype(np.float32) / np.float32(k)
    return np.where(rng.random(b, np.float32) < 0.5, shares, rng.random(b, np.float32))


def _answers(rng: np.random.Generator, b: int, k: int, n: int) -> np.ndarray:
    """int64 [b, k] ids in [0, n): each row draws from 3 candidates (many ties)."""
    pool = rng.integers(0, n, size=(b, 3))
    pick = rng.integers(0, 3, size=(b, k))
    return np.take_along_axis(pool, pick, axis=1)


def num_clusters(b: int) -> int:
    """Dense cluster count of the challenger cases: clusters of about 4 proposals."""
    return max(1, b // 4)


ONE_D = {"B": (*BATCHES, BIG)}


@register(
    "uncertainty_reward",
    full=[ONE_D],
    quick=[{"B": QUICK_B}],
    dispatch=[{"B": 8}],
    out_bytes=lambda c: 4 * c.B,
    streaming=True,
)
def _uncertainty(case: Case, rng: np.random.Generator) -> tuple[list[Any], dict[str, Any]]:
    return [_scores(rng, case.B)], {}


@register(
    "challenger_rewards",
    full=[{"ids": "dense", "B": (*BATCHES, BIG)}, {"ids": "arbitrary", "B": BATCHES}],
    quick=[{"B": QUICK_B, "ids": ("dense", "arbitrary")}],
    dispatch=[{"B": 8, "ids": ("dense", "arbitrary")}],
    out_bytes=lambda c: 4 * c.B,
    streaming=lambda c: c.ids == "dense",  # dense ids count in O(B)
)
def _challenger(case: Case, rng: np.random.Generator) -> tuple[list[Any], dict[str, Any]]:
    b = case.B
    p = _scores(rng, b)
    valid = rng.random(b, np.float32) < 0.8
    nc = num_clusters(b)
    dense = rng.integers(0, nc, size=b)
    if case.ids == "dense":
        return [p, dense, valid, 1.0], {"num_clusters": nc}
    # Arbitrary int64 ids (negative, beyond int32), duplicated like the dense ones.
    table = rng.integers(-(2**62), 2**62, size=nc)
    return [p, table[dense], valid, 1.0], {}


@register(
    "consensus",
    full=[{"K": GROUPS, "n": ALPHABETS, "B": BATCHES}],
    quick=[{"B": QUICK_B, "K": 8, "n": 16}, {"B": QUICK_B, "K": 16, "n": 1_000_000}],
    dispatch=[{"B": 8, "K": 8, "n": 16}],
    out_bytes=lambda c: 16 * c.B,  # int64 labels + float64 consistency
)
def _consensus(case: Case, rng: np.random.Generator) -> tuple[list[Any], dict[str, Any]]:
    assert case.K is not None and case.n is not None
    return [_answers(rng, case.B, case.K, case.n), case.n], {}


@register(
    "curriculum_mask",
    full=[ONE_D],
    quick=[{"B": QUICK_B}],
    dispatch=[{"B": 8}],
    out_bytes=lambda c: c.B,
    streaming=True,
)
def _band(case: Case, rng: np.random.Generator) -> tuple[list[Any], dict[str, Any]]:
    return [_scores(rng, case.B), 0.25, 0.75], {}


@register(
    "pseudo_rewards",
    full=[{"K": GROUPS, "B": BATCHES}],
    quick=[{"B": QUICK_B, "K": 8}],
    dispatch=[{"B": 8, "K": 8}],
    out_bytes=lambda c: 8 * c.B * (c.K or 1),
)
def _pseudo(case: Case, rng: np.random.Generator) -> tuple[list[Any], dict[str, Any]]:
    assert case.K is not None
    a = _answers(rng, case.B, case.K, 16)
    return [a, a[:, 0].copy()], {}


#: [B, T] for hint_delta: B * T is capped at 2**25 (128 MiB per float32 input).
HINT_SHAPES = [{"T": 512, "B": (256, 4096, 65536)}, {"T": 2048, "B": (256, 4096, 16384)}]


@register(
    "hint_delta",
    full=HINT_SHAPES,
    quick=[{"B": (4, 256), "T": 512}],
    dispatch=[{"B": 8, "T": 16}],
    out_bytes=lambda c: 4 * c.B,
)
def _hint(case: Case, rng: np.random.Generator) -> tuple[list[Any], dict[str, Any]]:
    b, t = case.B, case.T
    assert t is not None
    base = -rng.standard_exponential((b, t), np.float32)
    hinted = -rng.standard_exponential((b, t), np.float32)
    length = rng.integers(0, t + 1, size=(b, 1))
    mask = np.arange(t) < length  # right-padded responses, some empty
    return [base, hinted, mask], {}


@register(
    "proposer_rewards",
    full=[ONE_D],
    quick=[{"B": QUICK_B}],
    dispatch=[{"B": 8}],
    out_bytes=lambda c: 4 * c.B,
    streaming=True,
)
def _proposer(case: Case, rng: np.random.Generator) -> tuple[list[Any], dict[str, Any]]:
    b = case.B
    delta = rng.standard_normal(b, np.float32)
    lengths = rng.integers(0, 600, size=b)
    share = (rng.integers(1, 9, size=b) / 64).astype(np.float32)
    valid = rng.random(b, np.float32) < 0.8
    return [delta, lengths, share, valid], {}


@register(
    "coder_rewards",
    full=[ONE_D],
    quick=[{"B": QUICK_B}],
    dispatch=[{"B": 8}],
    out_bytes=lambda c: 4 * c.B,
    streaming=True,
)
def _coder(case: Case, rng: np.random.Generator) -> tuple[list[Any], dict[str, Any]]:
    b = case.B
    executed = rng.random(b, np.float32) < 0.7
    easy = _scores(rng, b)
    easy[~executed] = np.nan  # failed renders carry no visual score
    return [executed, easy, _scores(rng, b), rng.random(b, np.float32) < 0.2], {}


@register(
    "solver_rewards",
    full=[{"K": GROUPS, "n": ALPHABETS, "B": BATCHES}],
    quick=[{"B": QUICK_B, "K": 8, "n": 1024}],
    dispatch=[{"B": 8, "K": 8, "n": 16}],
    out_bytes=lambda c: 8 * c.B * (c.K or 1),
)
def _solver(case: Case, rng: np.random.Generator) -> tuple[list[Any], dict[str, Any]]:
    assert case.K is not None and case.n is not None
    a = _answers(rng, case.B, case.K, case.n)
    fmt = rng.random((case.B, case.K), np.float32) < 0.7
    return [a, fmt, case.n, 0.9], {}


@register(
    "group_advantages",
    full=[{"K": GROUPS, "B": BATCHES}],
    quick=[{"B": QUICK_B, "K": 8}],
    dispatch=[{"B": 8, "K": 8}],
    out_bytes=lambda c: 4 * c.B * (c.K or 1),
)
def _advantages(case: Case, rng: np.random.Generator) -> tuple[list[Any], dict[str, Any]]:
    assert case.K is not None
    r = (rng.random((case.B, case.K), np.float32) < 0.5).astype(np.float32)  # 0/1 rewards
    return [r], {}


# ------------------------------------------------------------------------- grids

#: The functions the bench times, in the contract table's order (a bench entry for a new
#: reward is optional; see CONTRIBUTING.md).
FUNCTIONS: tuple[str, ...] = tuple(name for name in CONTRACTS if name in BENCHES)


def _entries() -> list[Bench]:
    return [BENCHES[fn] for fn in FUNCTIONS]


def full_grid() -> list[Case]:
    return [c for e in _entries() for c in e.full]


def quick_grid() -> list[Case]:
    """A subset that runs in about a minute: every function, two batch sizes."""
    return [c for e in _entries() for c in e.quick]


def dispatch_cases() -> list[Case]:
    """One tiny case per function and variant (B = 8) for the per-call overhead."""
    return [c for e in _entries() for c in e.dispatch]


def streaming_families() -> set[str]:
    """Families (function and variant) whose rows read and write each element once."""
    grids = (e.full + e.quick + e.dispatch for e in _entries())
    return {c.family for cs in grids for c in cs if c.elementwise}


def _rng(case: Case) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(case.key.encode()))


def build(case: Case) -> tuple[list[Any], dict[str, Any]]:
    """Positional and keyword arguments (NumPy arrays and Python scalars) of ``case``."""
    entry = BENCHES.get(case.fn)
    if entry is None:
        raise ValueError(f"no bench entry for {case.fn!r}")
    return entry.inputs(case, _rng(case))


def output_nbytes(case: Case) -> int:
    """Bytes written by one call (the contract dtypes with x64 on, as torch returns)."""
    return BENCHES[case.fn].out_bytes(case)


def io_bytes(case: Case) -> int:
    """Bytes read (every array argument once) plus bytes written, at the case's shape;
    the inputs are sized from a build at B = 1 (so that no large batch is drawn)."""
    small = Case(case.fn, 1, ids=case.ids, **case.dims())
    args, kwargs = build(small)
    arrays = [a for a in [*args, *kwargs.values()] if isinstance(a, np.ndarray)]
    return sum(a.nbytes for a in arrays) * case.B + output_nbytes(case)
