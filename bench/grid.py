"""The size grid: one family per public reward (a function and its fixed settings), each
timed at several batch sizes B on inputs drawn from a fixed seed.

Inputs are tie-heavy where ties matter (vote shares on a coarse grid, three candidate
answers per question, repeated cluster ids), floats are float32, ids int64.  The logits
reductions run at one shape, ``[8, 1,024, 32,768]`` (1 GiB of float32 logits).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from zero_contracts import ADVANTAGE_PRESETS

SIZES = (256, 4096, 65536, 524288)
QUICK_SIZES = (64,)
LOGITS_SHAPE = (8, 1024, 32768)
QUICK_LOGITS_SHAPE = (2, 16, 512)
#: The NumPy oracle (float64, Python ints, extended precision: written to be exact, not
#: fast) runs up to this B; beyond it a call takes seconds to minutes, and on the logits
#: shape its extended-precision temporaries would need 4 GiB each.
ORACLE_MAX_B = 65536
#: ``jax_sync`` (async dispatch off) is timed where the hand-off matters: small calls.
SYNC_MAX_B = 4096

Args = tuple[list[Any], dict[str, Any]]
Builder = Callable[[np.random.Generator, int], Args]


@dataclass(frozen=True)
class Case:
    family: str
    fn: str
    B: int

    @property
    def key(self) -> str:
        return f"{self.family}@B={self.B}"

    @property
    def logits(self) -> bool:
        return self.fn in ("self_certainty", "token_entropy")


#: family -> (function, input builder, sizes or None for the default sizes)
FAMILIES: dict[str, tuple[str, Builder, tuple[int, ...] | None]] = {}


def family(fn: str, label: str, build: Builder, sizes: tuple[int, ...] | None = None) -> None:
    FAMILIES[f"{fn}[{label}]" if label else fn] = (fn, build, sizes)


def scores(rng: np.random.Generator, b: int, k: int = 8) -> np.ndarray:
    """Values in [0, 1]: half exact vote shares i/k (ties, band edges), half uniform."""
    shares = rng.integers(0, k + 1, size=b).astype(np.float32) / np.float32(k)
    return np.where(rng.random(b, np.float32) < 0.5, shares, rng.random(b, np.float32))


def answers(rng: np.random.Generator, b: int, k: int, n: int) -> np.ndarray:
    """int64 [b, k] ids in [0, n), each row drawn from 3 candidates."""
    pool = rng.integers(0, n, size=(b, 3))
    return np.take_along_axis(pool, rng.integers(0, 3, size=(b, k)), axis=1)


def binary(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return (rng.random(shape, np.float32) < 0.5).astype(np.float32)


def challenger(rng: np.random.Generator, b: int, dense: bool) -> Args:
    nc = max(1, b // 4)  # clusters of about four proposals
    ids = rng.integers(0, nc, size=b)
    p, valid = scores(rng, b), rng.random(b, np.float32) < 0.8
    if dense:
        return [p, ids, valid, 1.0], {"num_clusters": nc}
    return [p, rng.integers(-(2**62), 2**62, size=nc)[ids], valid, 1.0], {}  # 62-bit ids


def hint(rng: np.random.Generator, b: int, t: int = 512) -> Args:
    base = -rng.standard_exponential((b, t), np.float32)
    hinted = -rng.standard_exponential((b, t), np.float32)
    mask = np.arange(t) < rng.integers(0, t + 1, size=(b, 1))  # right-padded, some empty
    return [base, hinted, mask], {}


def proposer(rng: np.random.Generator, b: int) -> Args:
    delta = rng.standard_normal(b, np.float32)
    share = (rng.integers(1, 9, size=b) / 64).astype(np.float32)
    return [delta, rng.integers(0, 600, size=b), share, rng.random(b, np.float32) < 0.8], {}


def coder(rng: np.random.Generator, b: int) -> Args:
    executed = rng.random(b, np.float32) < 0.7
    easy = np.where(executed, scores(rng, b), np.float32(np.nan))  # failed renders: no score
    return [executed, easy, scores(rng, b), rng.random(b, np.float32) < 0.2], {}


def multi(rng: np.random.Generator, b: int, aggregation: str) -> Args:
    r = rng.random((b, 8, 2), np.float32)
    r[..., 0] = binary(rng, (b, 8))  # a correctness reward and a graded one
    return [r, np.array([1.0, 0.5], np.float32)], {"aggregation": aggregation}


def logits(shape: tuple[int, int, int], dtype: str) -> Builder:
    """Logits N(0, 4) tiled from a pool of normals (filled at copy speed), and a mask of
    about 80 % response tokens per row."""

    def build(rng: np.random.Generator, b: int) -> Args:
        _, t, v = shape
        pool = 2 * rng.standard_normal(2**20 + 17, np.float32)
        if dtype == "bfloat16":
            import ml_dtypes

            pool = pool.astype(ml_dtypes.bfloat16)
        x = np.resize(pool, b * t * v).reshape(b, t, v)
        start = rng.integers(0, t // 10 + 1, size=(b, 1))
        length = (t * rng.uniform(0.7, 0.9, size=(b, 1))).astype(np.int64)
        pos = np.arange(t)
        return [x, (pos >= start) & (pos < start + length)], {}

    return build


def pseudo(rng: np.random.Generator, b: int) -> Args:
    a = answers(rng, b, 8, 16)
    return [a, a[:, 0].copy()], {}  # labels: one of the row's answers


def vote_metrics(rng: np.random.Generator, b: int) -> Args:
    a = answers(rng, b, 16, 16)
    truth = np.where(rng.random(b) < 0.6, a[:, 0], rng.integers(0, 16, size=b))
    return [a, truth, 16], {"trained": 8}  # the first 8 of 16 samples trained


def pass_at_k(rng: np.random.Generator, b: int) -> Args:
    rate = rng.choice(np.array([0, 0.05, 0.3, 0.9, 1], np.float32), size=(b, 1))
    return [rng.random((b, 16), np.float32) < rate, 4], {}


RLOO = dict(ADVANTAGE_PRESETS["rloo"])
family("uncertainty_reward", "", lambda r, b: ([scores(r, b)], {}))
family("challenger_rewards", "dense ids", lambda r, b: challenger(r, b, True))
family("challenger_rewards", "62-bit ids", lambda r, b: challenger(r, b, False))
family("consensus", "K=8,n=16", lambda r, b: ([answers(r, b, 8, 16), 16], {}))
family("consensus", "K=8,n=1M", lambda r, b: ([answers(r, b, 8, 10**6), 10**6], {}))
family("curriculum_mask", "", lambda r, b: ([scores(r, b), 0.25, 0.75], {}))
family("pseudo_rewards", "K=8", pseudo)
family("hint_delta", "T=512", hint, (256, 4096, 65536))
family("proposer_rewards", "", proposer)
family("coder_rewards", "", coder)
family("solver_rewards", "K=8,n=16", lambda r, b: (
    [answers(r, b, 8, 16), r.random((b, 8), np.float32) < 0.7, 16, 0.9], {}))
family("group_advantages", "K=8", lambda r, b: ([binary(r, (b, 8))], {}))
family("group_advantages", "rloo,K=8", lambda r, b: ([binary(r, (b, 8))], dict(RLOO)))
for _agg in ("sum_then_normalize", "normalize_then_sum"):
    family("multi_reward_advantages", f"{_agg},K=8,R=2",
           lambda r, b, a=_agg: multi(r, b, a))
for _fn in ("self_certainty", "token_entropy"):
    for _dt in ("float32", "bfloat16"):
        family(_fn, _dt, logits(LOGITS_SHAPE, _dt), (LOGITS_SHAPE[0],))
family("pass_at_k", "K=16,k=4", pass_at_k)
family("vote_metrics", "K=16,n=16", vote_metrics)
family("overlong_penalty", "max 4096,cache 512", lambda r, b: (
    [r.integers(0, 5120, size=b), 4096, 512], {}))
family("informative_groups", "K=8", lambda r, b: ([binary(r, (b, 8))], {}))
family("learnability_reward", "", lambda r, b: ([scores(r, b)], {}))
# the label-free controls, diagnostics and published-code forms
def published_challenger(rng: np.random.Generator, b: int) -> Args:
    args, kwargs = challenger(rng, b, True)
    return args[:3], kwargs  # no strength: the published penalty has weight 1


def frozen_solver(rng: np.random.Generator, b: int) -> Args:
    (a, labels), _ = pseudo(rng, b)
    return [a, rng.random((b, 8), np.float32) < 0.7, labels, 0.9], {}


family("challenger_rewards_published", "dense ids", published_challenger)
family("learnability_reward_published", "", lambda r, b: (
    [scores(r, b), r.random(b, np.float32) < 0.9], {}))
family("solver_rewards_frozen", "K=8", frozen_solver)
family("role_baseline_advantages", "2 roles", lambda r, b: (
    [binary(r, (b,)), r.integers(0, 2, size=b), np.zeros(2, np.float32)], {"num_roles": 2}))
family("semantic_cluster_rewards", "K=8", lambda r, b: (
    [answers(r, b, 8, 4), r.random((b, 8), np.float32) < 0.9], {}))
family("semantic_entropy_filter", "K=8", lambda r, b: ([answers(r, b, 8, 4)], {}))
family("random_rewards", "", lambda r, b: ([0, r.random(b, np.float32) < 0.9, 0.3], {}))
family("format_rewards", "", lambda r, b: ([r.random(b, np.float32) < 0.7], {}))
family("wrong_label_rewards", "K=8", lambda r, b: (
    [answers(r, b, 8, 6), r.integers(0, 6, size=b)], {}))
family("point_biserial", "", lambda r, b: (
    [r.random(b, np.float32), r.random(b, np.float32) < 0.5], {}))
family("collapse_step", "T=B", lambda r, b: ([r.random(b, np.float32) * 0.02 + 0.009], {}))


def cases(quick: bool = False, only: list[str] | None = None) -> list[Case]:
    out = []
    for name, (fn, _, sizes) in FAMILIES.items():
        if only and not any(w in name for w in only):
            continue
        if quick:
            sizes = (QUICK_LOGITS_SHAPE[0],) if sizes == (LOGITS_SHAPE[0],) else QUICK_SIZES
        out += [Case(name, fn, b) for b in sizes or SIZES]
    return out


def build(case: Case) -> Args:
    """The case's positional and keyword arguments (NumPy arrays and Python scalars)."""
    fn, builder, _ = FAMILIES[case.family]
    if case.logits and case.B == QUICK_LOGITS_SHAPE[0]:
        builder = logits(QUICK_LOGITS_SHAPE, case.family.split("[")[1][:-1])
    return builder(np.random.default_rng(zlib.crc32(case.key.encode())), case.B)


def runs_on(backend: str, case: Case) -> bool:
    if backend == "numpy":  # the oracle of random_rewards takes the twin's own draws
        if case.fn == "random_rewards":
            return False
        return case.B <= ORACLE_MAX_B and not (case.logits and case.B == LOGITS_SHAPE[0])
    if backend == "jax_sync":
        return case.B <= SYNC_MAX_B and not case.logits
    return True
