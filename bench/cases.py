"""The benchmark grid and its inputs, one registry entry per public function.

A case is a public function at one shape (``B`` plus the named dimensions in
:data:`DIMS`), with inputs drawn from a fixed seed (the crc32 of the case key),
tie-heavy where ties matter (vote shares, duplicated cluster ids, few distinct answers
per row).  Every backend times the same NumPy-generated inputs; ``io_bytes`` is the
traffic of one call counted as every input read once plus every output written once.
A case may also have a ``kind``, a named variant that is not a size: the logits' dtype
of the logits reductions, the aggregation of ``multi_reward_advantages``, the RLOO preset
of ``group_advantages``.

The logits reductions (:data:`LOGITS_FUNCTIONS`) are timed at the issue's shape
:data:`LOGITS_SHAPE` (8 responses of 1,024 tokens over a 32,768-token vocabulary: 1 GiB
of float32 logits) in float32 and bfloat16; their ``B`` is the number of responses, and
their rows are compared with the machine's limits measured in the same run
(:mod:`bench.logits`) rather than along B.

Adding a function's rows is one entry: an input builder decorated with :func:`register`,
giving its full and quick grids, its B = 8 dispatch case(s), the bytes one call
writes and, where the builder fixes something the variant label does not show, a
``note`` for the report's list of shapes (a new shape dimension is a field of
:class:`Case` and its name in :data:`DIMS`).  The ``numpy`` backend times it when
:mod:`bench.numpy_impl` has a function of the same name (otherwise its cells are
``-``); the report, the targets and the plots pick the rows up from the results.
"""

from __future__ import annotations

import functools
import itertools
import zlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from zero_contracts import ADVANTAGE_PRESETS, AGGREGATIONS, CONTRACTS

__all__ = [
    "BENCHES",
    "BIG",
    "DIMS",
    "Arena",
    "FUNCTIONS",
    "LOGITS_DTYPES",
    "LOGITS_FUNCTIONS",
    "LOGITS_SHAPE",
    "RLOO",
    "Bench",
    "Case",
    "build",
    "dispatch_cases",
    "full_grid",
    "io_bytes",
    "is_logits",
    "logits_nbytes",
    "output_nbytes",
    "quick_grid",
    "register",
    "streaming_families",
]

#: Dimensions besides B that define a row (in the order of its variant label).
DIMS = ("K", "n", "T", "V", "R")

BATCHES = (256, 4096, 65536, 1048576)
BIG = 16 * 1048576
GROUPS = (8, 16)
ALPHABETS = (16, 1024, 1_000_000)
QUICK_B = (256, 16384)
#: The quick grid of the cheap helpers added with issue 19: the batch that compares with torch.
QUICK_NEW = (16384,)


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
    R: int | None = None
    kind: str | None = None  # a named variant: dtype, aggregation, preset

    @property
    def variant(self) -> str:
        parts = [x for x in (self.ids, self.kind) if x]
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
        return {"fn": self.fn, "B": self.B, **self.dims(), "ids": self.ids, "kind": self.kind}

    @staticmethod
    def from_json(d: Mapping[str, Any]) -> Case:
        dims = {k: d.get(k) for k in DIMS}
        return Case(d["fn"], d["B"], ids=d.get("ids"), kind=d.get("kind"), **dims)


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
    """A function's entry: its input builder, its grids, the bytes a call writes and a
    note on what the builder fixes (shown beside the function's shapes)."""

    fn: str
    inputs: Inputs
    out_bytes: Callable[[Case], int]
    full: tuple[Case, ...]
    quick: tuple[Case, ...]
    dispatch: tuple[Case, ...]
    streaming: Callable[[Case], bool]
    note: str = ""


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
    note: str = "",
) -> Callable[[Inputs], Inputs]:
    """Register ``fn``'s bench: each grid is a list of dicts of dimension values (tuples
    are multiplied out, e.g. ``{"K": (8, 16), "B": BATCHES}``); ``out_bytes(case)``:
    bytes one call writes with x64 on; ``streaming``: the case reads and writes each
    element once (its rows join the bandwidth target and the B = 8 dispatch target);
    ``note``: what the builder fixes that the variant label does not show."""
    if fn not in CONTRACTS:
        raise ValueError(f"{fn!r} is not a public function of the contract table")

    def add(inputs: Inputs) -> Inputs:
        stream = streaming if callable(streaming) else (lambda _c, s=bool(streaming): s)
        BENCHES[fn] = Bench(
            fn,
            inputs,
            out_bytes,
            _grid(fn, full),
            _grid(fn, quick),
            _grid(fn, dispatch),
            stream,
            note,
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


#: ``group_advantages(..., **RLOO)``: the RLOO preset (kind ``"rloo"``).
RLOO: dict[str, Any] = dict(ADVANTAGE_PRESETS["rloo"])


def _binary(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """0/1 float32 rewards (ties, all-equal groups)."""
    return (rng.random(shape, np.float32) < 0.5).astype(np.float32)


@register(
    "group_advantages",
    full=[{"K": GROUPS, "B": BATCHES}, {"kind": "rloo", "K": GROUPS, "B": BATCHES}],
    quick=[{"B": QUICK_B, "K": 8}, {"kind": "rloo", "B": QUICK_NEW, "K": 8}],
    dispatch=[{"B": 8, "K": 8}, {"kind": "rloo", "B": 8, "K": 8}],
    out_bytes=lambda c: 4 * c.B * (c.K or 1),
    note='0/1 rewards; rloo: `**ADVANTAGE_PRESETS["rloo"]`',
)
def _advantages(case: Case, rng: np.random.Generator) -> tuple[list[Any], dict[str, Any]]:
    assert case.K is not None
    r = _binary(rng, (case.B, case.K))
    return [r], dict(RLOO) if case.kind == "rloo" else {}


@register(
    "multi_reward_advantages",
    full=[{"kind": AGGREGATIONS, "K": 8, "R": (2, 3), "B": BATCHES}],
    quick=[{"kind": AGGREGATIONS, "B": QUICK_NEW, "K": 8, "R": 2}],
    dispatch=[{"kind": AGGREGATIONS, "B": 8, "K": 8, "R": 2}],
    out_bytes=lambda c: 4 * c.B * (c.K or 1),
    note="[B, K, R] rewards (0/1, and uniform for the others), weights [R]",
)
def _multi(case: Case, rng: np.random.Generator) -> tuple[list[Any], dict[str, Any]]:
    assert case.K is not None and case.R is not None
    r = rng.random((case.B, case.K, case.R), np.float32)
    r[..., 0] = _binary(rng, (case.B, case.K))  # a correctness reward and graded ones
    weights = np.linspace(1.0, 0.5, case.R, dtype=np.float32)
    return [r, weights], {"aggregation": case.kind}


# ------------------------------------------------------------------- logits rows

#: The logits reductions and the issue's shape for them: 8 responses of 1,024 tokens
#: over a 32,768-token vocabulary (1 GiB of float32 logits, 512 MiB of bfloat16).
LOGITS_FUNCTIONS = ("self_certainty", "token_entropy")
LOGITS_SHAPE = (8, 1024, 32768)
LOGITS_DTYPES = ("float32", "bfloat16")
#: The quick grid's logits shape (8 MiB of float32).
QUICK_LOGITS = {"B": 8, "T": 64, "V": 4096}


def is_logits(case: Case) -> bool:
    return case.fn in LOGITS_FUNCTIONS


def _np_dtype(name: str) -> np.dtype:
    if name == "bfloat16":
        import ml_dtypes  # installed with jax

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def logits_nbytes(case: Case) -> int:
    """Bytes of the logits of a logits case (read once per call)."""
    assert case.T is not None and case.V is not None and case.kind is not None
    return case.B * case.T * case.V * _np_dtype(case.kind).itemsize


#: Distinct values the logits are tiled from (not a multiple of any V).
_POOL = 2**22 + 17


class Arena:
    """A reusable, page-aligned buffer for a process's largest input (the logits).

    A fresh GiB costs a page fault per 4 KiB page on its first touch, seconds on this
    kind of machine, and the workers build the logits once per backend, case and round;
    filling the pages of the previous case instead takes a fraction of a second.  The
    alignment also lets ``jax.device_put`` use the NumPy buffer without a copy on the CPU
    (64-byte aligned arrays are aliased), so a JAX worker holds the logits once.  An
    array from :meth:`empty` is valid until the next call: :func:`build` with an arena
    is for a process that holds one case's inputs at a time (``bench.worker``)."""

    ALIGN = 4096

    def __init__(self) -> None:
        self._raw: np.ndarray | None = None

    @property
    def nbytes(self) -> int:
        return 0 if self._raw is None else self._raw.nbytes - self.ALIGN

    def empty(self, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        dt = np.dtype(dtype)
        n = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
        if self._raw is None or self.nbytes < n:
            self._raw = None  # free the smaller buffer first
            self._raw = np.empty(n + self.ALIGN, np.uint8)
            self._raw.fill(0)  # touch every page now (reads of untouched pages are free)
        off = (-self._raw.ctypes.data) % self.ALIGN
        return self._raw[off : off + n].view(dt).reshape(shape)


#: The arena of the build in progress (:func:`build`), if any.
_ARENA: Arena | None = None


def _logits(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """Logits drawn from N(0, 2^2): a pool of normals tiled at random offsets, so that a
    GiB is filled at copy speed (a fresh draw of 2^28 normals takes seconds per backend
    and round; the values do not change what a reduction costs)."""
    pool = (2 * rng.standard_normal(_POOL, dtype=np.float32)).astype(dtype)
    out = _ARENA.empty(shape, dtype) if _ARENA is not None else np.empty(shape, dtype)
    flat = out.reshape(-1)
    i = 0
    while i < flat.size:
        off = int(rng.integers(0, _POOL // 2))
        n = min(_POOL - off, flat.size - i)
        flat[i : i + n] = pool[off : off + n]
        i += n
    return out


def _response_mask(rng: np.random.Generator, b: int, t: int) -> np.ndarray:
    """bool [b, t], about 80 % True: after a prompt of up to 10 % of the tokens, a
    response of 70-90 % of them, then padding."""
    start = rng.integers(0, t // 10 + 1, size=(b, 1))
    length = (t * rng.uniform(0.7, 0.9, size=(b, 1))).astype(np.int64)
    pos = np.arange(t)
    return (pos >= start) & (pos < start + length)


def _logits_inputs(case: Case, rng: np.random.Generator) -> tuple[list[Any], dict[str, Any]]:
    assert case.T is not None and case.V is not None and case.kind is not None
    logits = _logits(rng, (case.B, case.T, case.V), _np_dtype(case.kind))
    return [logits, _response_mask(rng, case.B, case.T)], {}


for _fn in LOGITS_FUNCTIONS:
    register(
        _fn,
        full=[{"kind": LOGITS_DTYPES, **dict(zip("BTV", LOGITS_SHAPE, strict=True))}],
        quick=[{"kind": LOGITS_DTYPES, **QUICK_LOGITS}],
        dispatch=[{"kind": "float32", "B": 8, "T": 16, "V": 64}],
        out_bytes=lambda c: c.B * _np_dtype(c.kind or "float32").itemsize,
        note="logits N(0, 4), about 80 % response tokens per row",
    )(_logits_inputs)


# ------------------------------------------------------------ label-free helpers

#: ``pass_at_k``'s k in every case.
PASS_K = 4


@register(
    "pass_at_k",
    full=[{"K": 16, "B": BATCHES}, {"K": 1024, "B": (256, 4096, 65536)}],
    quick=[{"B": QUICK_NEW, "K": 16}],
    dispatch=[{"B": 8, "K": 16}],
    out_bytes=lambda c: 8 * c.B,
    note=f"K samples per question, k = {PASS_K}",
)
def _pass_at_k(case: Case, rng: np.random.Generator) -> tuple[list[Any], dict[str, Any]]:
    assert case.K is not None
    rate = rng.choice(np.array([0.0, 0.05, 0.3, 0.9, 1.0], np.float32), size=(case.B, 1))
    return [rng.random((case.B, case.K), np.float32) < rate, PASS_K], {}


@register(
    "vote_metrics",
    full=[{"K": 16, "n": 16, "B": BATCHES}],
    quick=[{"B": QUICK_NEW, "K": 16, "n": 16}],
    dispatch=[{"B": 8, "K": 16, "n": 16}],
    out_bytes=lambda c: 4 * 8,  # four float64 scalars
    note="votes over all K answers, the first K / 2 trained (`trained`)",
)
def _vote_metrics(case: Case, rng: np.random.Generator) -> tuple[list[Any], dict[str, Any]]:
    assert case.K is not None and case.n is not None
    a = _answers(rng, case.B, case.K, case.n)
    other = rng.integers(0, case.n, size=case.B)
    truth = np.where(rng.random(case.B) < 0.6, a[:, 0], other)  # often the first candidate
    return [a, truth, case.n], {"trained": case.K // 2}


#: ``overlong_penalty``'s limits in every case (lengths drawn up to 1.25 x max_length).
MAX_LENGTH, CACHE = 4096, 512


@register(
    "overlong_penalty",
    full=[ONE_D],
    quick=[{"B": QUICK_NEW}],
    dispatch=[{"B": 8}],
    out_bytes=lambda c: 8 * c.B,
    streaming=True,
    note=f"max_length {MAX_LENGTH:,}, cache {CACHE}, int64 lengths",
)
def _overlong(case: Case, rng: np.random.Generator) -> tuple[list[Any], dict[str, Any]]:
    lengths = rng.integers(0, MAX_LENGTH + MAX_LENGTH // 4, size=case.B)
    return [lengths, MAX_LENGTH, CACHE], {}


@register(
    "informative_groups",
    full=[{"K": GROUPS, "B": BATCHES}],
    quick=[{"B": QUICK_NEW, "K": 8}],
    dispatch=[{"B": 8, "K": 8}],
    out_bytes=lambda c: c.B,
    note="0/1 rewards",
)
def _informative(case: Case, rng: np.random.Generator) -> tuple[list[Any], dict[str, Any]]:
    assert case.K is not None
    return [_binary(rng, (case.B, case.K))], {}


@register(
    "learnability_reward",
    full=[ONE_D],
    quick=[{"B": QUICK_NEW}],
    dispatch=[{"B": 8}],
    out_bytes=lambda c: 4 * c.B,
    streaming=True,
    note="solve rates i / 8 (0 and 1 included) and uniforms",
)
def _learnability(case: Case, rng: np.random.Generator) -> tuple[list[Any], dict[str, Any]]:
    return [_scores(rng, case.B)], {}


# ------------------------------------------------------------------------- grids

#: The functions the bench times, in the contract table's order (a bench entry for a new
#: reward is optional; see CONTRIBUTING.md).
FUNCTIONS: tuple[str, ...] = tuple(name for name in CONTRACTS if name in BENCHES)


def _entries() -> list[Bench]:
    return [BENCHES[fn] for fn in FUNCTIONS]


def full_grid() -> list[Case]:
    return [c for e in _entries() for c in e.full]


def quick_grid() -> list[Case]:
    """A subset that runs in about a minute: every function at one or two batch sizes."""
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


def build(case: Case, arena: Arena | None = None) -> tuple[list[Any], dict[str, Any]]:
    """Positional and keyword arguments (NumPy arrays and Python scalars) of ``case``;
    with ``arena``, the logits are built in its buffer (valid until its next use)."""
    global _ARENA
    entry = BENCHES.get(case.fn)
    if entry is None:
        raise ValueError(f"no bench entry for {case.fn!r}")
    _ARENA = arena
    try:
        return entry.inputs(case, _rng(case))
    finally:
        _ARENA = None


def output_nbytes(case: Case) -> int:
    """Bytes written by one call (the contract dtypes with x64 on, as torch returns)."""
    return BENCHES[case.fn].out_bytes(case)


def _input_nbytes(case: Case) -> int:
    args, kwargs = build(case)
    return sum(a.nbytes for a in [*args, *kwargs.values()] if isinstance(a, np.ndarray))


@functools.cache
def io_bytes(case: Case) -> int:
    """Bytes read (every array argument once) plus bytes written, at the case's shape;
    the inputs are sized from builds at B = 1 and 2 (so that no large batch is drawn; an
    input whose size does not grow with B, such as ``weights [R]``, counts once)."""
    one, two = (
        _input_nbytes(Case(case.fn, b, ids=case.ids, kind=case.kind, **case.dims())) for b in (1, 2)
    )
    return one + (two - one) * (case.B - 1) + output_nbytes(case)
