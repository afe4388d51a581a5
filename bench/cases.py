"""The benchmark grid and its inputs: every case is a public function at one shape,
with inputs drawn from a fixed seed (the crc32 of the case key), tie-heavy where
ties matter (vote shares, duplicated cluster ids, few distinct answers per row).

All backends time the same NumPy-generated inputs; ``io_bytes`` is the traffic of
one call counted as every input read once plus every output written once.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from zero_contracts import CONTRACTS

__all__ = [
    "ELEMENTWISE",
    "FUNCTIONS",
    "Case",
    "build",
    "dispatch_cases",
    "full_grid",
    "io_bytes",
    "quick_grid",
]

#: 1-D functions that only stream their inputs (challenger with dense ids counts in O(B)).
ELEMENTWISE = (
    "uncertainty_reward",
    "challenger_rewards[dense]",
    "curriculum_mask",
    "proposer_rewards",
    "coder_rewards",
)

BATCHES = (256, 4096, 65536, 1048576)
BIG = 16 * 1048576
GROUPS = (8, 16)
ALPHABETS = (16, 1024, 1_000_000)
#: [B, T] for hint_delta: B * T is capped at 2**25 (128 MiB per float32 input).
HINT_SHAPES = ((256, 512), (4096, 512), (65536, 512), (256, 2048), (4096, 2048), (16384, 2048))


@dataclass(frozen=True)
class Case:
    """One function at one shape.  ``variant`` names what besides B defines the row."""

    fn: str
    B: int
    K: int | None = None
    n: int | None = None
    T: int | None = None
    ids: str | None = None  # "dense" or "arbitrary" (challenger_rewards)
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def variant(self) -> str:
        parts = []
        if self.ids:
            parts.append(self.ids)
        if self.K is not None:
            parts.append(f"K={self.K}")
        if self.n is not None:
            parts.append(f"n={_short(self.n)}")
        if self.T is not None:
            parts.append(f"T={self.T}")
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
        return self.family in ELEMENTWISE

    def to_json(self) -> dict[str, Any]:
        return {"fn": self.fn, "B": self.B, "K": self.K, "n": self.n, "T": self.T, "ids": self.ids}

    @staticmethod
    def from_json(d: dict[str, Any]) -> Case:
        return Case(d["fn"], d["B"], d.get("K"), d.get("n"), d.get("T"), d.get("ids"))


def _short(n: int) -> str:
    if n >= 1_000_000 and n % 1_000_000 == 0:
        return f"{n // 1_000_000}M"
    if n >= 1000 and n % 1000 == 0 and n != 1024:
        return f"{n // 1000}k"
    return str(n)


def full_grid() -> list[Case]:
    cases: list[Case] = []
    one_d = ("uncertainty_reward", "curriculum_mask", "proposer_rewards", "coder_rewards")
    for fn in one_d:
        cases += [Case(fn, b) for b in (*BATCHES, BIG)]
    cases += [Case("challenger_rewards", b, ids="dense") for b in (*BATCHES, BIG)]
    cases += [Case("challenger_rewards", b, ids="arbitrary") for b in BATCHES]
    for fn in ("consensus", "solver_rewards"):
        cases += [Case(fn, b, K=k, n=n) for k in GROUPS for n in ALPHABETS for b in BATCHES]
    for fn in ("pseudo_rewards", "group_advantages"):
        cases += [Case(fn, b, K=k) for k in GROUPS for b in BATCHES]
    cases += [Case("hint_delta", b, T=t) for b, t in HINT_SHAPES]
    return cases


def quick_grid() -> list[Case]:
    """A subset that runs in well under a minute: every function, two batch sizes."""
    cases: list[Case] = []
    for b in (256, 16384):
        cases += [
            Case("uncertainty_reward", b),
            Case("challenger_rewards", b, ids="dense"),
            Case("challenger_rewards", b, ids="arbitrary"),
            Case("consensus", b, K=8, n=16),
            Case("consensus", b, K=16, n=1_000_000),
            Case("curriculum_mask", b),
            Case("pseudo_rewards", b, K=8),
            Case("hint_delta", b // 64, T=512),
            Case("proposer_rewards", b),
            Case("coder_rewards", b),
            Case("solver_rewards", b, K=8, n=1024),
            Case("group_advantages", b, K=8),
        ]
    return cases


def dispatch_cases() -> list[Case]:
    """One tiny case per function (B = 8) for the per-call overhead."""
    return [
        Case("uncertainty_reward", 8),
        Case("challenger_rewards", 8, ids="dense"),
        Case("challenger_rewards", 8, ids="arbitrary"),
        Case("consensus", 8, K=8, n=16),
        Case("curriculum_mask", 8),
        Case("pseudo_rewards", 8, K=8),
        Case("hint_delta", 8, T=16),
        Case("proposer_rewards", 8),
        Case("coder_rewards", 8),
        Case("solver_rewards", 8, K=8, n=16),
        Case("group_advantages", 8, K=8),
    ]


_TIMED = {case.fn for grid in (full_grid, quick_grid, dispatch_cases) for case in grid()}
#: The functions the bench times, in the contract table's order: every public function
#: with cases above (a bench case for a new reward is optional; see CONTRIBUTING.md).
FUNCTIONS: tuple[str, ...] = tuple(name for name in CONTRACTS if name in _TIMED)


# ------------------------------------------------------------------------- inputs


def _rng(case: Case) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(case.key.encode()))


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


def build(case: Case) -> tuple[list[Any], dict[str, Any]]:
    """Positional and keyword arguments (NumPy arrays and Python scalars) of ``case``."""
    rng = _rng(case)
    b = case.B
    fn = case.fn
    if fn == "uncertainty_reward":
        return [_scores(rng, b)], {}
    if fn == "curriculum_mask":
        return [_scores(rng, b), 0.25, 0.75], {}
    if fn == "challenger_rewards":
        p = _scores(rng, b)
        valid = rng.random(b, np.float32) < 0.8
        nc = num_clusters(b)
        dense = rng.integers(0, nc, size=b)
        if case.ids == "dense":
            return [p, dense, valid, 1.0], {"num_clusters": nc}
        # Arbitrary int64 ids (negative, beyond int32), duplicated like the dense ones.
        table = rng.integers(-(2**62), 2**62, size=nc)
        return [p, table[dense], valid, 1.0], {}
    if fn == "consensus":
        return [_answers(rng, b, case.K, case.n), case.n], {}
    if fn == "solver_rewards":
        a = _answers(rng, b, case.K, case.n)
        fmt = rng.random((b, case.K), np.float32) < 0.7
        return [a, fmt, case.n, 0.9], {}
    if fn == "pseudo_rewards":
        a = _answers(rng, b, case.K, 16)
        return [a, a[:, 0].copy()], {}
    if fn == "hint_delta":
        t = case.T
        base = -rng.standard_exponential((b, t), np.float32)
        hinted = -rng.standard_exponential((b, t), np.float32)
        length = rng.integers(0, t + 1, size=(b, 1))
        mask = np.arange(t) < length  # right-padded responses, some empty
        return [base, hinted, mask], {}
    if fn == "proposer_rewards":
        delta = rng.standard_normal(b, np.float32)
        lengths = rng.integers(0, 600, size=b)
        share = (rng.integers(1, 9, size=b) / 64).astype(np.float32)
        valid = rng.random(b, np.float32) < 0.8
        return [delta, lengths, share, valid], {}
    if fn == "coder_rewards":
        executed = rng.random(b, np.float32) < 0.7
        easy = _scores(rng, b)
        easy[~executed] = np.nan  # failed renders carry no visual score
        return [executed, easy, _scores(rng, b), rng.random(b, np.float32) < 0.2], {}
    if fn == "group_advantages":
        r = (rng.random((b, case.K), np.float32) < 0.5).astype(np.float32)  # 0/1 rewards
        return [r], {}
    raise ValueError(f"unknown function {fn!r}")


def output_nbytes(case: Case) -> int:
    """Bytes written by one call (the contract dtypes with x64 on, as torch returns)."""
    b = case.B
    fn = case.fn
    if fn in ("uncertainty_reward", "challenger_rewards", "proposer_rewards", "coder_rewards"):
        return 4 * b
    if fn == "curriculum_mask":
        return b
    if fn == "consensus":
        return 16 * b  # int64 labels + float64 consistency
    if fn in ("pseudo_rewards", "solver_rewards"):
        return 8 * b * case.K
    if fn == "hint_delta":
        return 4 * b
    if fn == "group_advantages":
        return 4 * b * case.K
    raise ValueError(fn)


def io_bytes(case: Case, args: list[Any]) -> int:
    """Bytes read (every array argument once) plus bytes written."""
    read = sum(a.nbytes for a in args if isinstance(a, np.ndarray))
    return read + output_nbytes(case)
