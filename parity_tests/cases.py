"""Per function: a vectorised NumPy oracle and an input builder for the test matrix.

Adding a reward adds one oracle (named like the function) and one ``build_<name>``
here; ``tester.py`` runs both for every configuration of the matrix.

The oracles are written from the problem texts.

Exact where the answer is discrete: ids are compared in their own dtype or as
Python ints (never through a float), cluster sizes come from ``np.unique``.
Float results are computed in float64 from the (exactly widened) inputs and
rounded once to the output dtype by the caller.  Shares no code with the twins.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterator, Mapping
from decimal import Decimal
from typing import Any

import ml_dtypes
import numpy as np

from zero_contracts import AGGREGATIONS, BASELINES, CONTRACTS, SCALES, SINGLETONS

ID_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
FLOAT_DTYPES = ("float16", "bfloat16", "float32", "float64")
BATCHES = (1, 128, 129, 4096, 65537)
#: Batch sizes of single functions beyond BATCHES (none today: the only internal
#: thresholds, 128 ids for pairwise cluster sizes and the counting table's size, are
#: covered by BATCHES and parity_tests/test_limits.py).
EXTRA_BATCHES: dict[str, tuple[int, ...]] = {}
PATTERNS = ("near_limits", "negative", "sparse", "all_equal", "all_distinct", "dense")
METHODS = ("auto", "one_hot", "segment_sum", "pairwise")
TRANSFORMS = ("eager", "jit", "vmap")


def np_dtype(name: str) -> np.dtype:
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


@dataclasses.dataclass(frozen=True)
class Config:
    x64: bool = True
    batch: int = 129
    id_dtype: str = "int64"
    pattern: str = "sparse"
    float_dtype: str = "float32"
    method: str = "auto"
    transform: str = "eager"
    seed: int = 0

    def label(self) -> str:
        return (
            f"x64={'on' if self.x64 else 'off'}-B{self.batch}-{self.id_dtype}-{self.pattern}"
            f"-{self.float_dtype}-{self.method}-{self.transform}"
        )




def f64(x) -> np.ndarray:
    return np.asarray(x).astype(np.float64)


def box(answer: str) -> str:
    """A model reply whose final answer is ``\\boxed{answer}``, after some reasoning."""
    return f"<think>some work</think> so the answer is \\boxed{{{answer}}}."


# Invalid data (the contract's rule, written here from its text): every output row
# that reads an invalid entry is NaN (floats) or -1 (integers), a bool output keeps no
# such entry, and valid rows come out as if the invalid ids matched no valid id; a
# hyper-parameter out of range poisons everything.


def bad_unit(x) -> np.ndarray:
    x = f64(x)
    with np.errstate(invalid="ignore"):
        return ~((x >= 0) & (x <= 1))


def bad_ids(x, bound) -> np.ndarray:
    """Ids outside [0, bound), compared exactly (as Python ints when needed)."""
    x = np.asarray(x)
    if bound is None:
        return np.zeros(x.shape, bool)
    if bound <= np.iinfo(x.dtype).max:
        return (x < 0) | (x >= np.asarray(bound, x.dtype))
    return x < 0


def bad_real(value, lo=None, hi=None) -> bool:
    v = float(value)
    return not (np.isfinite(v) and (lo is None or v >= lo) and (hi is None or v <= hi))


def nan_where(out: np.ndarray, bad) -> np.ndarray:
    return np.where(bad, np.nan, out)


def vote(answers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(label, top count) per row; ties to the smallest id; exact in the ids' dtype."""
    a = np.asarray(answers)
    counts = (a[:, :, None] == a[:, None, :]).sum(-1)
    top = counts.max(axis=1)
    big = np.iinfo(a.dtype).max
    labels = np.where(counts == top[:, None], a, big).min(axis=1)
    return labels, top


def uncertainty_reward(consistency):
    p = f64(consistency)
    return nan_where(1 - 2 * np.abs(p - 0.5), bad_unit(p))


def sizes(ids) -> np.ndarray:
    _, inverse, counts = np.unique(np.asarray(ids), return_inverse=True, return_counts=True)
    return counts[inverse.reshape(-1)]


def dense_sizes(ids, num_clusters) -> tuple[np.ndarray, np.ndarray]:
    """(sizes counting only the ids in [0, num_clusters), which ids are invalid)."""
    x = np.asarray(ids)
    invalid = bad_ids(x, num_clusters)
    valid_ids = x[~invalid].astype(np.int64)
    counts = np.bincount(valid_ids, minlength=num_clusters)
    return np.where(invalid, 0, counts[np.where(invalid, 0, x).astype(np.int64)]), invalid


def challenger_rewards(consistency, clusters, valid, strength=1.0, num_clusters=None):
    p = f64(consistency)
    c = np.asarray(clusters)
    if num_clusters is None:
        invalid_id = np.zeros(c.shape, bool)
        size = sizes(c)
    else:  # invalid ids are in no cluster (but stay in B)
        size, invalid_id = dense_sizes(c, num_clusters)
    share = size / p.shape[0]
    with np.errstate(invalid="ignore"):
        reward = np.maximum(0.0, 1 - 2 * np.abs(p - 0.5) - float(strength) * share)
    reward = np.where(valid, reward, 0.0)
    return nan_where(reward, bad_unit(p) | invalid_id | bad_real(strength, 0.0))


def consensus(answers, num_answers=None, method=None):
    labels, top = vote(answers)
    rows = bad_ids(answers, num_answers).any(-1)
    return np.where(rows, -1, labels.astype(object)), nan_where(top / np.shape(answers)[1], rows)


def curriculum_mask(consistency, low=0.25, high=0.75):
    p = np.asarray(consistency)
    lo = np.asarray(low, p.dtype).astype(np.float64)
    hi = np.asarray(high, p.dtype).astype(np.float64)
    broken = bad_real(low, 0, 1) or bad_real(high, 0, 1) or float(low) > float(high)
    with np.errstate(invalid="ignore"):
        keep = (f64(p) >= lo) & (f64(p) <= hi)
    return keep & ~bad_unit(p) & (not broken)


def pseudo_rewards(answers, labels):
    a = np.asarray(answers).astype(object)
    y = np.asarray(labels).astype(object)
    return (a == y[:, None]).astype(np.float64)


def hint_delta(base_logp, hinted_logp, mask):
    b, h = f64(base_logp), f64(hinted_logp)
    with np.errstate(invalid="ignore"):
        diff = np.where(mask, b - h, 0.0)
    out = diff.sum(-1) / np.maximum(np.asarray(mask).sum(-1), 1)
    return nan_where(out, (np.asarray(mask) & (~np.isfinite(b) | ~np.isfinite(h))).any(-1))


def proposer_rewards(delta, hint_lengths, cluster_share, valid):
    lengths = np.asarray(hint_lengths).astype(object)
    excess = np.array([float(max(int(n) - 200, 0)) for n in lengths.ravel()], np.float64)
    penalty = 0.03 * excess.reshape(lengths.shape) / 100
    share = f64(cluster_share)
    v = np.asarray(valid)
    rows = (v & ~np.isfinite(f64(delta))) | (v & (lengths < 0).astype(bool)) | bad_unit(share)
    with np.errstate(invalid="ignore"):
        return nan_where(np.where(valid, f64(delta) - penalty - share, -1 - share), rows)


def coder_rewards(executed, easy_accuracy, consistency, syntax_error):
    s, c = f64(easy_accuracy), f64(consistency)
    with np.errstate(invalid="ignore"):
        success = 1 + s + np.minimum(c, 1 - c)
    out = np.where(executed, success, -0.1) - 0.05 * np.asarray(syntax_error)
    return nan_where(out, np.asarray(executed) & (bad_unit(s) | bad_unit(c)))


def solver_rewards(answers, format_valid, num_answers=None, alpha=0.9, method=None):
    a = np.asarray(answers)
    labels, _ = vote(a)
    agree = (a == labels[:, None]).astype(np.float64)
    beta = float(Decimal(1) - Decimal(repr(float(alpha))))
    out = float(alpha) * agree + beta * np.asarray(format_valid, np.float64)
    rows = bad_ids(a, num_answers).any(-1, keepdims=True) | bad_real(alpha, 0, 1)
    return nan_where(out, rows)


def group_advantages(rewards, mask=None, scale="group", ddof=1, eps=1e-6, singleton="zero",
                     baseline="mean"):
    with np.errstate(invalid="ignore"):  # a broken group's NaN is replaced below
        return _group_advantages(rewards, mask, scale, ddof, eps, singleton, baseline)


def _group_advantages(rewards, mask, scale, ddof, eps, singleton, baseline="mean"):
    r = f64(rewards)
    m = np.ones(r.shape, bool) if mask is None else np.asarray(mask)
    broken = (m & ~np.isfinite(r)).any(-1, keepdims=True) | bad_real(eps, 0.0)
    if scale == "batch":
        broken = broken | broken.any()
    r = np.where(m, r, 0.0)  # masked entries are never read
    n = m.sum(-1, keepdims=True).astype(np.float64)
    kept = np.where(m, r, 0.0)
    mean = kept.sum(-1, keepdims=True) / np.maximum(n, 1)
    sq = np.where(m, (r - mean) ** 2, 0.0).sum(-1, keepdims=True)
    std = np.sqrt(sq / np.maximum(n - ddof, 1))
    if baseline == "leave_one_out":  # RLOO: the mean of the group's other kept rewards
        base = (kept.sum(-1, keepdims=True) - kept) / np.maximum(n - 1, 1)
    else:
        base = np.broadcast_to(mean, r.shape)
    single = n == 1
    if singleton == "raw":
        base = np.where(single, 0.0, base)
        std = np.where(single, 1.0, std)
    if scale == "batch":
        nb = m.sum()
        mb = kept.sum() / max(nb, 1)
        sqb = np.where(m, (r - mb) ** 2, 0.0).sum()
        batch_std = np.full_like(std, np.sqrt(sqb / max(nb - ddof, 1)))
        # verl's lone sample has std 1 (TRL's batch std has no singleton rule)
        std = np.where(single, std, batch_std) if singleton == "raw" else batch_std
    adv = r - base
    if scale != "none":
        with np.errstate(divide="ignore", invalid="ignore"):  # zeroed below
            adv = adv / (std + float(eps))
    hi = np.where(m, r, -np.inf).max(-1, keepdims=True)
    lo = np.where(m, r, np.inf).min(-1, keepdims=True)
    zero = hi == lo
    if scale == "group":
        zero = zero | (n <= ddof)
    if singleton == "raw":
        zero = zero & ~single
    return nan_where(np.where(m & ~zero, adv, 0.0), broken)


def multi_reward_advantages(rewards, weights=None, mask=None, aggregation="sum_then_normalize",
                            scale="group", ddof=1, eps=1e-6, singleton="zero", baseline="mean"):
    """TRL's two aggregations (GDPO is normalize_then_sum) from their definitions: a
    sample is kept when any of its rewards is; a masked reward counts 0 in a sum."""
    r = f64(rewards)
    m = np.ones(r.shape, bool) if mask is None else np.asarray(mask)
    w = np.ones(r.shape[-1]) if weights is None else f64(weights)
    kept = m.any(-1)
    broken_group = (m & ~np.isfinite(r)).any((-2, -1))[:, None]
    broken_all = bool((~np.isfinite(w)).any()) or bad_real(eps, 0.0)
    options = (scale, ddof, eps, singleton, baseline)
    with np.errstate(invalid="ignore", over="ignore"):
        if aggregation == "sum_then_normalize":
            total = (np.where(m, r, 0.0) * w).sum(-1)
            out = group_advantages(total, kept, *options)
            broken = broken_group if scale != "batch" else np.full(kept.shape, broken_group.any())
            return nan_where(out, broken | broken_all)
        per_reward = np.stack(
            [group_advantages(r[..., k], m[..., k], *options) for k in range(r.shape[-1])], -1
        )
        s = (per_reward * w).sum(-1)
        n = kept.sum()
        mean = np.where(kept, s, 0.0).sum() / max(n, 1)
        std = np.sqrt(np.where(kept, (s - mean) ** 2, 0.0).sum() / max(n - ddof, 1))
        equal = np.where(kept, s, -np.inf).max() == np.where(kept, s, np.inf).min()
        with np.errstate(divide="ignore"):
            z = (s - mean) / (std + float(eps))
    out = np.where(kept & ~equal, z, 0.0)
    return nan_where(out, broken_group.any() | broken_all)


def majority_vote(answers, num_answers=None, method=None):
    labels, top = vote(answers)
    rows = bad_ids(answers, num_answers).any(-1)
    minus_one = np.array(-1).astype(labels.dtype)  # the largest value of an unsigned dtype
    return np.where(rows, minus_one, labels), np.where(rows, -1, top)


def cluster_sizes(ids, num_clusters=None):
    if num_clusters is None:
        return sizes(ids)
    counts, invalid = dense_sizes(ids, num_clusters)
    return np.where(invalid, -1, counts)


def masked_mean(values, mask):
    v = f64(values)
    m = np.broadcast_to(np.asarray(mask), v.shape)
    return np.where(m, v, 0.0).sum(-1) / np.maximum(m.sum(-1), 1)



def _logits_poison(logits: np.ndarray, mask) -> np.ndarray:
    """Rows with a non-finite logit at a kept token."""
    return (np.asarray(mask) & ~np.isfinite(logits).all(-1)).any(-1)


def _token_mean(per_token: np.ndarray, mask) -> np.ndarray:
    m = np.asarray(mask)
    return np.where(m, per_token, 0.0).sum(-1) / np.maximum(m.sum(-1), 1)


def _log_softmax(logits) -> np.ndarray:
    """log p in extended precision (x87 80-bit, ~1e-19): the reference keeps a few
    digits beyond float64 where a peaked distribution makes log Z close to 0."""
    x = np.asarray(logits).astype(np.float64).astype(np.longdouble)
    top = x.max(-1, keepdims=True)
    return x - (top + np.log(np.exp(x - top).sum(-1, keepdims=True)))


def self_certainty(logits, mask):
    """Intuitor: KL(U || p) = -log V - mean_v log p_v per token; its published code drops
    the constant -log V, so the per-token value is -mean_v log p_v."""
    with np.errstate(invalid="ignore", over="ignore"):
        per_token = (-_log_softmax(logits).mean(-1)).astype(np.float64)
        return nan_where(_token_mean(per_token, mask), _logits_poison(f64(logits), mask))


def token_entropy(logits, mask):
    """-sum_v p_v log p_v per token, p = softmax(logits)."""
    with np.errstate(invalid="ignore", over="ignore"):
        logp = _log_softmax(logits)
        per_token = (-(np.exp(logp) * logp).sum(-1)).astype(np.float64)
        return nan_where(_token_mean(per_token, mask), _logits_poison(f64(logits), mask))


def pass_at_k(correct, k):
    """Chen et al. (2021): 1 - C(n - c, k) / C(n, k), exact in integers and correctly
    rounded (Python's int division)."""
    c = np.asarray(correct).sum(-1)
    n = np.shape(correct)[-1]
    table = {}
    for ci in np.unique(c).tolist():
        if n - ci < k:
            table[ci] = 1.0
        else:
            total = math.comb(n, k)
            table[ci] = (total - math.comb(n - ci, k)) / total
    return np.array([table[ci] for ci in c.tolist()], np.float64)


def vote_metrics(answers, truth, num_answers=None, trained=None, method=None):
    """TTRL's diagnostics from their definitions, in exact integer counts."""
    a = np.asarray(answers)
    b, k = a.shape
    k_s = k if trained is None else int(trained)
    t = np.asarray(truth).astype(object)
    labels, top = vote(a)
    sub = a[:, :k_s]
    sub_labels, _ = vote(sub)
    pseudo = sub == labels[:, None]
    true = sub.astype(object) == t[:, None]
    counts = [
        (int((labels.astype(object) == t).sum()), b),
        (int((pseudo == true).sum()), b * k_s),
        (int(top.sum()), b * k),
        (int((sub_labels.astype(object) == t).sum()), b),
    ]
    broken = bool(bad_ids(a, num_answers).any())
    return tuple(np.float64(np.nan if broken else hits / total) for hits, total in counts)


def overlong_penalty(lengths, max_length, cache):
    """DAPO Eq. 13 in Python numbers (exact int / float comparisons), as TRL's
    get_soft_overlong_punishment computes it."""
    top, band = float(max_length), float(cache)
    start = top - band
    broken = bad_real(top, 0.0) or bad_real(band, 0.0) or band > top
    out = []
    for length in np.asarray(lengths).astype(object).tolist():
        if broken or length < 0:
            out.append(np.nan)
        elif length <= start:
            out.append(0.0)
        elif length <= top:
            out.append((start - length) / band)
        else:
            out.append(-1.0)
    return np.array(out, np.float64)


def informative_groups(rewards, mask=None):
    r = f64(rewards)
    m = np.ones(r.shape, bool) if mask is None else np.asarray(mask)
    broken = (m & ~np.isfinite(r)).any(-1)
    with np.errstate(invalid="ignore"):
        hi = np.where(m, r, -np.inf).max(-1)
        lo = np.where(m, r, np.inf).min(-1)
        return (hi > lo) & ~broken


def learnability_reward(solve_rate):
    s = f64(solve_rate)
    return nan_where(np.where((s == 0) | (s == 1), 0.0, 1 - s), bad_unit(s))


# ------------------------------------------------------------------------- values


def unit(rng: np.random.Generator, shape, dtype: str) -> np.ndarray:
    """Values in [0, 1]: exact vote shares (band edges), the ends, tiny and random."""
    dt = np_dtype(dtype)
    k = 8
    shares = rng.integers(0, k + 1, size=shape) / k
    info = ml_dtypes.finfo(dt)
    tiny = float(info.smallest_subnormal)
    special = rng.choice(np.array([0.0, 1.0, tiny, 1 - float(info.epsneg), 0.5]), shape)
    pick = rng.integers(0, 3, size=shape)
    out = np.where(pick == 0, shares, np.where(pick == 1, special, rng.random(shape)))
    return out.astype(dt)


def ids(rng: np.random.Generator, shape, dtype: str, pattern: str, x64: bool) -> np.ndarray:
    """Integer ids of ``dtype`` following ``pattern`` (any integers, for cluster ids)."""
    dt = np.dtype(dtype)
    info = np.iinfo(dt)
    lo, hi = int(info.min), int(info.max)
    n = int(np.prod(shape))
    if pattern == "near_limits":
        pool = [lo, lo + 1, hi - 1, hi, 0, 1]
    elif pattern == "negative":
        pool = [v for v in (-1, -7, -100, lo, lo + 3) if v >= lo] or [0, 1, 2]
    elif pattern == "sparse":
        pool = sorted({min(hi, v) for v in (0, 3, 97, 1000, 65_000, 10**9, 2**40, hi)})
    elif pattern == "all_equal":
        pool = [min(hi, 42)]
    elif pattern == "all_distinct":
        span = hi - lo + 1
        if span >= n:
            start = max(lo, min(0, hi - n + 1)) if lo < 0 else lo
            vals = np.arange(n, dtype=np.int64 if dt.kind == "i" else np.uint64) + np.asarray(
                start, np.int64 if dt.kind == "i" else np.uint64
            )
            return rng.permutation(vals).astype(dt).reshape(shape)
        pool = list(range(lo, hi + 1))
    else:  # dense: small non-negative ids
        pool = list(range(min(hi, 5) + 1))
    return np.asarray(rng.choice(np.array(pool, dtype=object), size=shape).tolist(), dt).reshape(
        shape
    )


def answer_ids(rng, shape, dtype: str, pattern: str, x64: bool) -> tuple[np.ndarray, int]:
    """Answer ids in ``[0, num_answers)`` and ``num_answers``, for voting functions."""
    dt = np.dtype(dtype)
    hi = int(np.iinfo(dt).max)
    label_limit = 2**63 if x64 else 2**31  # labels are int64 / int32
    if pattern == "near_limits":
        n = min(hi + 1, label_limit)
        pool = [n - 1, n - 2, 0, 1] if n > 2 else [0, 1]
    elif pattern == "all_equal":
        n, pool = 7, [6]
    elif pattern in ("sparse", "negative"):
        n = min(hi + 1, 10**9 if x64 else 2**31 - 1)
        pool = sorted({min(n - 1, v) for v in (0, 5, 97, 10**6, n - 1)})
    elif pattern == "all_distinct":
        n = min(hi + 1, 1000)
        k = shape[-1]
        offsets = rng.integers(0, n, size=(shape[0], 1))
        rows = (offsets + np.arange(k)) % n  # distinct within a row when n >= k
        return rows.astype(dt), n
    else:  # dense: a small alphabet with many ties
        n, pool = 3, [0, 1, 2]
    vals = rng.choice(np.array(pool, dtype=object), size=shape).tolist()
    return np.asarray(vals, dt).reshape(shape), n


# ----------------------------------------------------------------------- builders

Inputs = tuple[dict[str, Any], dict[str, Any]]  # (arrays, hyper-parameters)


def _fl(cfg: Config) -> str:
    return cfg.float_dtype


def build_uncertainty_reward(rng, cfg: Config) -> Inputs:
    return {"consistency": unit(rng, cfg.batch, _fl(cfg))}, {}


def build_challenger_rewards(rng, cfg: Config) -> Inputs:
    b = cfg.batch
    arrays = {
        "consistency": unit(rng, b, _fl(cfg)),
        "clusters": ids(rng, b, cfg.id_dtype, cfg.pattern, cfg.x64),
        "valid": rng.random(b) < 0.8,
    }
    hypers: dict[str, Any] = {"strength": float(rng.choice([0.0, 0.5, 1.0, 2.5]))}
    if cfg.pattern == "dense":
        hypers["num_clusters"] = 6
    return arrays, hypers


def build_consensus(rng, cfg: Config) -> Inputs:
    k = int(rng.choice([1, 5, 8]))
    a, n = answer_ids(rng, (cfg.batch, k), cfg.id_dtype, cfg.pattern, cfg.x64)
    return {"answers": a}, {"num_answers": n, "method": cfg.method}


def build_majority_vote(rng, cfg: Config) -> Inputs:
    return build_consensus(rng, cfg)


def build_solver_rewards(rng, cfg: Config) -> Inputs:
    arrays, hypers = build_consensus(rng, cfg)
    arrays["format_valid"] = rng.random(arrays["answers"].shape) < 0.7
    hypers["alpha"] = float(rng.choice([0.9, 0.6, 0.0, 1.0, 0.3]))
    hypers = {"num_answers": hypers["num_answers"], "alpha": hypers["alpha"],
              "method": hypers["method"]}
    return arrays, hypers


def build_curriculum_mask(rng, cfg: Config) -> Inputs:
    low, high = [(0.25, 0.75), (0.2, 0.6), (0.0, 1.0), (0.5, 0.5)][int(rng.integers(0, 4))]
    return {"consistency": unit(rng, cfg.batch, _fl(cfg))}, {"low": low, "high": high}


def build_pseudo_rewards(rng, cfg: Config) -> Inputs:
    k = int(rng.choice([1, 4, 8]))
    a = ids(rng, (cfg.batch, k), cfg.id_dtype, cfg.pattern, cfg.x64)
    # labels of another integer dtype: half of them one of the row's own answers
    # (when it fits that dtype), so that equality across dtypes is exercised
    other = str(rng.choice(ID_DTYPES))
    if not cfg.x64 and np.dtype(other).itemsize == 8:
        other = other.replace("64", "32")
    info = np.iinfo(other)
    y = ids(rng, cfg.batch, other, cfg.pattern, cfg.x64).astype(object)
    own = a[np.arange(cfg.batch), rng.integers(0, k, cfg.batch)].astype(object)
    fits = np.array([info.min <= v <= info.max for v in own.tolist()], bool)
    take = fits & (rng.random(cfg.batch) < 0.5)
    y = np.where(take, own, y)
    return {"answers": a, "labels": np.asarray(y.tolist(), other)}, {}


def build_hint_delta(rng, cfg: Config) -> Inputs:
    t = int(rng.choice([0, 1, 5]))
    dt = np_dtype(_fl(cfg))
    shape = (cfg.batch, t)
    scale = 30.0 if dt.itemsize == 2 else 1e4
    base = (-rng.random(shape) * scale).astype(dt)
    hinted = (-rng.random(shape) * scale).astype(dt)
    return {"base_logp": base, "hinted_logp": hinted, "mask": rng.random(shape) < 0.6}, {}


def build_proposer_rewards(rng, cfg: Config) -> Inputs:
    b = cfg.batch
    dt = np_dtype(_fl(cfg))
    lengths = ids(rng, b, cfg.id_dtype, "dense" if cfg.pattern == "negative" else cfg.pattern,
                  cfg.x64)
    valid = rng.random(b) < 0.7
    if np.iinfo(lengths.dtype).min < 0:
        lengths = np.where(valid & (lengths < 0), 0, lengths).astype(lengths.dtype)
    delta = np.where(valid, rng.normal(size=b) * 3, np.nan).astype(dt)
    return {
        "delta": delta,
        "hint_lengths": lengths,
        "cluster_share": unit(rng, b, _fl(cfg)),
        "valid": valid,
    }, {}


def build_coder_rewards(rng, cfg: Config) -> Inputs:
    b = cfg.batch
    e = rng.random(b) < 0.7
    s = np.where(e, unit(rng, b, _fl(cfg)).astype(np.float64), np.nan).astype(np_dtype(_fl(cfg)))
    c = np.where(e, unit(rng, b, _fl(cfg)).astype(np.float64), np.nan).astype(np_dtype(_fl(cfg)))
    return {"executed": e, "easy_accuracy": s, "consistency": c,
            "syntax_error": rng.random(b) < 0.3}, {}


def _group_rewards(rng, g: int, n: int) -> np.ndarray:
    """Rewards of ``g`` groups of ``n``: binary (ties, all-equal groups), rounded normals,
    constant groups, and NeMo-RL's float32 trap (identical non-dyadic rewards and one
    other: 0.35 x (n - 1) and 0 or 0.95)."""
    kind = rng.integers(0, 4, size=(g, 1))
    odd = np.where(rng.random((g, 1)) < 0.5, 0.0, 0.95)
    trap = np.where(np.arange(n) == rng.integers(0, n, size=(g, 1)), odd, 0.35)
    return np.where(kind == 0, rng.integers(0, 2, (g, n)),
                    np.where(kind == 1, np.round(rng.normal(size=(g, n)), 2),
                             np.where(kind == 2, 3.0, trap)))


def _advantage_options(rng) -> dict[str, Any]:
    return {
        "scale": str(rng.choice(SCALES)),
        "ddof": int(rng.choice([0, 1])),
        "eps": float(rng.choice([0.0, 1e-6, 1e-4])),
        "singleton": str(rng.choice(SINGLETONS)),
        "baseline": str(rng.choice(BASELINES)),
    }


def build_group_advantages(rng, cfg: Config) -> Inputs:
    n = int(rng.choice([1, 2, 8])) if cfg.batch < 2**18 - 1 else 8
    g = cfg.batch
    r = _group_rewards(rng, g, n)
    hypers = _advantage_options(rng)
    mask = rng.random((g, n)) < 0.8 if rng.random() < 0.5 else None
    return {"rewards": r.astype(np_dtype(_fl(cfg))), "mask": mask}, hypers


def build_multi_reward_advantages(rng, cfg: Config) -> Inputs:
    """R in {1, 2, 3} rewards of dyadic values (so weighted sums are exact in any float
    dtype), with ties, constant groups and the float32 trap of ``_group_rewards``."""
    n = int(rng.choice([1, 2, 8])) if cfg.batch < 2**18 - 1 else 8
    r_count = int(rng.choice([1, 2, 3]))
    g = cfg.batch
    dt = np_dtype(_fl(cfg))
    pool = np.array([0.0, 1.0, 0.5, 0.25, -1.0, 2.0, 3.0])
    kinds = rng.integers(0, 3, size=(g, 1, r_count))
    r = np.where(kinds == 0, rng.integers(0, 2, (g, n, r_count)),
                 np.where(kinds == 1, rng.choice(pool, (g, n, r_count)),
                          _group_rewards(rng, g * r_count, n).reshape(g, r_count, n)
                          .transpose(0, 2, 1)))
    weights = None if rng.random() < 0.25 else rng.choice(
        np.array([1.0, 0.5, 2.0, -1.0, 0.25, 0.0]), r_count).astype(dt)
    mask = rng.random((g, n, r_count)) < 0.8 if rng.random() < 0.5 else None
    hypers = {"aggregation": str(rng.choice(AGGREGATIONS)), **_advantage_options(rng)}
    return {"rewards": r.astype(dt), "weights": weights, "mask": mask}, hypers


def build_informative_groups(rng, cfg: Config) -> Inputs:
    n = int(rng.choice([1, 2, 8])) if cfg.batch < 2**18 - 1 else 8
    g = cfg.batch
    r = _group_rewards(rng, g, n).astype(np_dtype(_fl(cfg)))
    mask = rng.random((g, n)) < 0.7 if rng.random() < 0.6 else None
    return {"rewards": r, "mask": mask}, {}


def _logits(rng, cfg: Config) -> Inputs:
    """Small ``[B, T, V]`` logits (T in {0, 1, 3}, V in {1, 5, 33}) scaled to the dtype:
    spread rows, peaked rows, a common offset; masked tokens hold garbage (NaN / inf),
    which must never be read."""
    t = int(rng.choice([0, 1, 3]))
    v = int(rng.choice([1, 5, 33]))
    dt = np_dtype(_fl(cfg))
    scale = {"float16": 3.0, "bfloat16": 6.0}.get(_fl(cfg), 20.0)
    b = cfg.batch
    spread = np.where(rng.random((b, 1, 1)) < 0.3, 6.0, 1.0)  # some sharply peaked rows
    offset = float(rng.choice([0.0, -2 * scale, 10 * scale]))
    logits = rng.normal(size=(b, t, v)) * scale * spread + offset
    mask = rng.random((b, t)) < 0.7
    junk = ~mask[..., None] & (rng.random((b, t, v)) < 0.2)
    logits = np.where(junk, rng.choice(np.array([np.nan, np.inf, -np.inf]), (b, t, v)), logits)
    return {"logits": logits.astype(dt), "mask": mask}, {}


def build_self_certainty(rng, cfg: Config) -> Inputs:
    return _logits(rng, cfg)


def build_token_entropy(rng, cfg: Config) -> Inputs:
    return _logits(rng, cfg)


def build_pass_at_k(rng, cfg: Config) -> Inputs:
    """n samples per question up to 1024 (the stability limit the contract names), k from
    1 to n, questions from never to always solved."""
    ns = [1, 3, 16, 200] + ([1024] if cfg.batch <= 4096 else [])
    n = int(rng.choice(ns))
    k = int(rng.choice([1, n, int(rng.integers(1, n + 1))]))
    p = rng.choice(np.array([0.0, 0.002, 0.05, 0.5, 0.95, 1.0]), (cfg.batch, 1))
    return {"correct": rng.random((cfg.batch, n)) < p}, {"k": k}


def build_vote_metrics(rng, cfg: Config) -> Inputs:
    """Votes as for consensus; the truth (another integer dtype) is the row's majority,
    one of its answers, or anything."""
    k = int(rng.choice([1, 5, 8]))
    a, num = answer_ids(rng, (cfg.batch, k), cfg.id_dtype, cfg.pattern, cfg.x64)
    other = str(rng.choice(ID_DTYPES))
    if not cfg.x64 and np.dtype(other).itemsize == 8:
        other = other.replace("64", "32")
    info = np.iinfo(other)
    labels, _ = vote(a)
    own = a[np.arange(cfg.batch), rng.integers(0, k, cfg.batch)].astype(object)
    pick = rng.integers(0, 3, cfg.batch)
    truth = np.where(pick == 0, labels.astype(object), np.where(
        pick == 1, own, ids(rng, cfg.batch, other, cfg.pattern, cfg.x64).astype(object)))
    fits = np.array([info.min <= v <= info.max for v in truth.tolist()], bool)
    truth = np.where(fits, truth, 0)
    trained = None if rng.random() < 0.4 else int(rng.integers(1, k + 1))
    hypers = {"num_answers": num, "trained": trained, "method": cfg.method}
    return {"answers": a, "truth": np.asarray(truth.tolist(), other)}, hypers


def build_overlong_penalty(rng, cfg: Config) -> Inputs:
    """Lengths of the id patterns (negatives replaced) and lengths around both edges of
    the soft band, for bands with and without a cache and with fractional edges."""
    top, band = [(16, 4), (100, 20), (4096.0, 512.0), (20.5, 2.5), (8, 0), (10, 10), (0, 0),
                 (30, 7.25)][int(rng.integers(0, 8))]
    b = cfg.batch
    dt = np.dtype(cfg.id_dtype)
    hi = int(np.iinfo(dt).max)
    pattern = "dense" if cfg.pattern == "negative" else cfg.pattern
    base = ids(rng, b, cfg.id_dtype, pattern, cfg.x64).astype(object)
    base = np.where(base < 0, 0, base)
    edge = rng.integers(max(0, math.floor(top - band) - 3), math.ceil(top) + 4, b)
    near = np.array([min(int(e), hi) for e in edge.tolist()], dtype=object)
    lengths = np.where(rng.random(b) < 0.6, near, base)
    return {"lengths": np.asarray(lengths.tolist(), dt)}, {"max_length": top, "cache": band}


def build_learnability_reward(rng, cfg: Config) -> Inputs:
    # the ends, tiny and random rates, but no subnormal one (XLA on CPU flushes it to 0,
    # where the reward jumps; a share of rollouts is never subnormal)
    s = unit(rng, cfg.batch, _fl(cfg))
    tiny = float(ml_dtypes.finfo(np_dtype(_fl(cfg))).smallest_normal)
    if not cfg.x64:  # float64 input becomes float32 in JAX
        tiny = max(tiny, float(np.finfo(np.float32).smallest_normal))
    s = np.where((s > 0) & (s.astype(np.float64) < tiny), np.float64(tiny), s)
    return {"solve_rate": s.astype(np_dtype(_fl(cfg)))}, {}


def build_cluster_sizes(rng, cfg: Config) -> Inputs:
    hypers = {"num_clusters": 6} if cfg.pattern == "dense" else {}
    return {"ids": ids(rng, cfg.batch, cfg.id_dtype, cfg.pattern, cfg.x64)}, hypers


def build_masked_mean(rng, cfg: Config) -> Inputs:
    t = int(rng.choice([0, 1, 6]))
    if rng.random() < 0.25:  # integer values are accepted too
        v = rng.integers(-50, 50, (cfg.batch, t)).astype(cfg.id_dtype if cfg.id_dtype in (
            "int16", "int32") else "int32")
    else:
        v = rng.normal(size=(cfg.batch, t)).astype(np_dtype(_fl(cfg)))
    return {"values": v, "mask": rng.random((cfg.batch, t)) < 0.5}, {}


class _Builders(Mapping[str, Callable[[np.random.Generator, Config], Inputs]]):
    """``build_<name>`` of this module for each contract that has one, looked up when
    asked (so a builder defined anywhere in the module is found)."""

    def __getitem__(self, name: str) -> Callable[[np.random.Generator, Config], Inputs]:
        builder = globals().get(f"build_{name}")
        if builder is None:
            raise KeyError(f"parity_tests/cases.py has no build_{name} for contract {name!r}")
        return builder

    def __iter__(self) -> Iterator[str]:
        return (name for name in CONTRACTS if f"build_{name}" in globals())

    def __len__(self) -> int:
        return sum(1 for _ in self)


BUILDERS = _Builders()


# ------------------------------------------------------- issue 39 (oracles, builders)
# Written from the published code: R-Zero's caller_penalty.py, Absolute Zero's
# reward_managers.py, SPIRAL's train_spiral.py / utils.EMA (see the twins' docstrings).


def challenger_rewards_published(consistency, clusters, valid, num_clusters=None):
    p = f64(consistency)
    c = np.asarray(clusters)
    v = np.asarray(valid, bool)
    if num_clusters is None:
        invalid_id = np.zeros(c.shape, bool)
        size = sizes(c)
    else:  # invalid ids are in no cluster (but stay in B)
        size, invalid_id = dense_sizes(c, num_clusters)
    penalty = size / p.shape[0]
    with np.errstate(invalid="ignore"):
        uncertainty = np.minimum(p, 1 - p)
    score = np.where(v, uncertainty, -1.0) - penalty  # invalid rows: -1 - penalty
    return nan_where(score, (v & bad_unit(p)) | invalid_id)


def learnability_reward_published(solve_rate, valid):
    s = f64(solve_rate)
    v = np.asarray(valid, bool)
    with np.errstate(invalid="ignore"):
        accuracy = np.where(s > 0, 1 - s, 0.0)  # generation_accuracy_convertion: one_minus
        paid = np.where(accuracy > 0, accuracy, -0.5)  # format ok, reward 0: -0.5
    return nan_where(np.where(v, paid, -1.0), v & bad_unit(s))  # bad format: -1


def solver_rewards_frozen(answers, format_valid, labels, alpha=0.9):
    a = np.asarray(answers).astype(object)
    y = np.asarray(labels).astype(object)
    agree = (a == y[:, None]).astype(np.float64)
    beta = float(Decimal(1) - Decimal(repr(float(alpha))))
    out = float(alpha) * agree + beta * np.asarray(format_valid, np.float64)
    return nan_where(out, bad_real(alpha, 0, 1))


def role_baseline_advantages(rewards, roles, baselines, mask=None, num_roles=None, decay=0.95):
    """SPIRAL's loop: per entry, baseline = ema[role].get(); ema[role].update(r);
    advantage = r - baseline (EMA: value = decay * value + (1 - decay) * x)."""
    r = f64(rewards)
    k = np.asarray(roles).astype(object)
    kept = np.ones(r.shape, bool) if mask is None else np.asarray(mask, bool)
    ema = [float(x) if np.isfinite(x) else math.nan for x in f64(baselines)]
    if bad_real(decay, 0, 1):
        return np.full(r.shape, np.nan), np.full(len(ema), np.nan)
    d = float(decay)
    advantages = np.zeros(r.shape)
    for i in range(r.shape[0]):
        if not kept[i]:
            continue
        role = int(k[i])
        if not 0 <= role < num_roles:
            advantages[i] = math.nan
            continue
        x = float(r[i]) if np.isfinite(r[i]) else math.nan
        baseline = ema[role]
        ema[role] = d * ema[role] + (1 - d) * x
        advantages[i] = x - baseline
    return advantages, np.array(ema)


def build_challenger_rewards_published(rng, cfg: Config) -> Inputs:
    arrays, hypers = build_challenger_rewards(rng, cfg)
    hypers.pop("strength")
    p = arrays["consistency"]
    # the score of an invalid proposal is never read (R-Zero's service sends -1)
    junk = rng.choice(np.array([-1.0, np.nan, 2.0]), p.shape).astype(p.dtype)
    arrays["consistency"] = np.where(arrays["valid"], p, junk)
    return arrays, hypers


def build_learnability_reward_published(rng, cfg: Config) -> Inputs:
    (arrays, _) = build_learnability_reward(rng, cfg)
    s = arrays["solve_rate"]
    if not cfg.x64:  # a float64 rate becomes float32 in JAX: 1 - 2**-53 becomes 1 (-0.5)
        s = s.astype(np.float32).astype(s.dtype)
    valid = rng.random(s.shape) < 0.8
    junk = rng.choice(np.array([np.nan, -0.5, 3.0]), s.shape).astype(s.dtype)
    return {"solve_rate": np.where(valid, s, junk), "valid": valid}, {}


def build_solver_rewards_frozen(rng, cfg: Config) -> Inputs:
    """Answers of any integers (the pseudo_rewards patterns) and labels of another
    integer dtype, half of them one of the row's answers."""
    arrays, _ = build_pseudo_rewards(rng, cfg)
    a = arrays["answers"]
    alpha = float(rng.choice([0.9, 0.6, 0.0, 1.0, 0.3]))
    return {"answers": a, "format_valid": rng.random(a.shape) < 0.7,
            "labels": arrays["labels"]}, {"alpha": alpha}


def build_role_baseline_advantages(rng, cfg: Config) -> Inputs:
    """One to five roles; game outcomes (-1 / 0 / 1) or spread rewards; baselines from
    zero (a first step) or carried; dropped entries hold NaN rewards and any ids."""
    b = cfg.batch
    num_roles = int(rng.choice([1, 2, 3, 5]))
    dt = np_dtype(_fl(cfg))
    outcomes = rng.choice(np.array([-1.0, 0.0, 1.0]), b)
    spread = np.round(rng.normal(size=b) * 2, 2)
    rewards = np.where(rng.random() < 0.5, outcomes, spread)
    roles = rng.integers(0, num_roles, b).astype(cfg.id_dtype)
    mask = None
    if rng.random() < 0.5:
        mask = rng.random(b) < 0.8
        rewards = np.where(mask, rewards, np.nan)
        roles = np.where(mask, roles, ids(rng, b, cfg.id_dtype, cfg.pattern, cfg.x64))
    baselines = np.zeros(num_roles) if rng.random() < 0.3 else rng.normal(size=num_roles) / 2
    bdt = dt if rng.random() < 0.7 else np.dtype(np.float32)
    decay = float(rng.choice([0.95, 0.0, 1.0, 0.5, 0.999]))
    return (
        {"rewards": rewards.astype(dt), "roles": roles.astype(cfg.id_dtype),
         "baselines": baselines.astype(bdt), "mask": mask},
        {"num_roles": num_roles, "decay": decay},
    )


# ------------------------------------- label-free methods and controls (issue 39)
# EMPO (Zhang et al., 2025), Spurious Rewards (Shao et al., 2025), URLVR (He et al.,
# 2026): oracles from the papers' definitions and their published code, in exact
# integers / Python floats; builders below.


def _row_groups(row) -> list[int]:
    """For each entry of a row, how many entries of the row equal it (exact ints)."""
    vals = [int(v) for v in np.asarray(row).tolist()]
    return [vals.count(v) for v in vals]


def semantic_cluster_rewards(clusters, answered):
    c = np.asarray(clusters)
    k = c.shape[1]
    share = np.array([[n / k for n in _row_groups(row)] for row in c], np.float64)
    return np.where(np.asarray(answered), share, 0.0).reshape(c.shape)


def semantic_entropy_filter(clusters, max_entropy=1.0):
    """keep_i = H_i < max_entropy log K with H in nats over the cluster shares; the
    comparison at max_entropy = 1 is exact (H = log K only for all-distinct rows)."""
    t = float(max_entropy)
    if bad_real(t, 0.0, 1.0):
        return np.zeros(np.shape(clusters)[0], bool)
    out = []
    for row in np.asarray(clusters):
        k = len(row)
        counts = list(_counts_of(row).values())
        if t == 1.0:
            out.append(any(n > 1 for n in counts))
            continue
        h = -math.fsum(n / k * math.log(n / k) for n in counts)
        out.append(h < t * math.log(k))
    return np.array(out, bool)


def _counts_of(row) -> dict[int, int]:  # an exact counter of Python ints
    counts: dict[int, int] = {}
    for v in np.asarray(row).tolist():
        counts[int(v)] = counts.get(int(v), 0) + 1
    return counts


def random_rewards(key, mask, rate=0.5, *, uniforms):
    """Published: int(random.random() < rate) per response; here given the twin's own
    uniform draws (``uniforms``, float32) and compared with rate rounded to float32."""
    if bad_real(rate, 0.0, 1.0):
        return np.full(np.shape(mask), np.nan)
    r32 = float(np.float32(float(rate)))
    return (np.asarray(mask) & (f64(uniforms) < r32)).astype(np.float64)


def format_rewards(format_valid):
    return np.asarray(format_valid).astype(np.float64)


def wrong_label_rewards(answers, truth):
    out = []
    for row, t in zip(np.asarray(answers).tolist(), np.asarray(truth).tolist(), strict=True):
        row = [int(v) for v in row]
        wrong = [v for v in row if v != int(t)]
        if not wrong:
            out.append([0.0] * len(row))
            continue
        top = max(wrong.count(v) for v in wrong)
        label = min(v for v in wrong if wrong.count(v) == top)
        out.append([1.0 if v == label else 0.0 for v in row])
    return np.array(out, np.float64).reshape(np.shape(answers))


def point_biserial(proxy, truth):
    """The Pearson correlation of x with the 0/1 truth, in exact rationals where the
    inputs are (floats are exact binary rationals): NaN when undefined or x is not
    finite."""
    from fractions import Fraction

    x = f64(proxy)
    t = np.asarray(truth, bool)
    if not np.isfinite(x).all():
        return np.float64(np.nan)
    n, n1 = len(x), int(t.sum())
    xs = [Fraction(float(v)) for v in x.tolist()]
    mean = sum(xs, Fraction(0)) / n
    ss = sum(((v - mean) ** 2 for v in xs), Fraction(0))
    if n1 in (0, n) or ss == 0:
        return np.float64(np.nan)
    cov = sum((v - mean for v, ti in zip(xs, t.tolist(), strict=True) if ti), Fraction(0))
    # r = cov / sqrt(ss n1 n0 / n), r^2 exact, sign of cov
    r2 = cov * cov * n / (ss * n1 * (n - n1))
    r = math.sqrt(float(r2)) if r2 < 1 else 1.0
    return np.float64(math.copysign(r, float(cov)) if cov != 0 else 0.0)


def collapse_step(values, threshold=0.01, patience=1):
    if bad_real(threshold):
        return np.int64(-1)
    v = f64(values).tolist()
    for step in range(len(v) - int(patience) + 1):
        if all(x < float(threshold) for x in v[step : step + int(patience)]):
            return np.int64(step)
    return np.int64(-1)


#: Oracles that need the twin's own random draws: name -> draws(twin, arrays) (the
#: matrix compares the coins given the same uniforms; the statistics of the draws
#: themselves are checked in parity_tests/test_label_free_controls.py).
def _coin_uniforms(twin: str, arrays: dict) -> np.ndarray:
    seed = int(np.asarray(arrays["key"]))
    shape = np.shape(arrays["mask"])
    if twin == "torch":
        import torch

        g = torch.Generator().manual_seed(seed)
        return torch.rand(shape, generator=g, dtype=torch.float32).numpy()
    import jax
    import jax.numpy as jnp

    with jax.enable_x64(True):
        key = jax.random.key(np.asarray(arrays["key"]))
        return np.asarray(jax.random.uniform(key, shape, jnp.float32))


DRAWS: dict[str, Callable[[str, dict], np.ndarray]] = {"random_rewards": _coin_uniforms}


def _cluster_ids(rng, cfg: Config, k: int) -> np.ndarray:
    """[B, K] ids of the matrix's patterns, with rows of repeated ids (clusters)."""
    a = ids(rng, (cfg.batch, k), cfg.id_dtype, cfg.pattern, cfg.x64)
    # copy some entries within their row so that clusters of several sizes appear
    src = rng.integers(0, k, (cfg.batch, k))
    copy = rng.random((cfg.batch, k)) < 0.4
    return np.where(copy, np.take_along_axis(a, src, 1), a).astype(a.dtype)


def build_semantic_cluster_rewards(rng, cfg: Config) -> Inputs:
    k = int(rng.choice([1, 4, 8]))
    c = _cluster_ids(rng, cfg, k)
    return {"clusters": c, "answered": rng.random(c.shape) < 0.8}, {}


def build_semantic_entropy_filter(rng, cfg: Config) -> Inputs:
    # thresholds away from the entropies of groups of K <= 8 (no near-ties to round)
    k = int(rng.choice([1, 3, 4, 8]))
    t = float(rng.choice([1.0, 0.0, 0.37, 0.71, 0.93]))
    return {"clusters": _cluster_ids(rng, cfg, k)}, {"max_entropy": t}


def build_random_rewards(rng, cfg: Config) -> Inputs:
    dt = str(rng.choice(["int32", "uint32"] + (["int64"] if cfg.x64 else [])))
    key = np.asarray(int(rng.integers(0, 2**31 - 1)), dt)
    rate = float(rng.choice([0.5, 0.0, 1.0, 0.3, 0.125]))
    return {"key": key, "mask": rng.random(cfg.batch) < 0.8}, {"rate": rate}


def build_format_rewards(rng, cfg: Config) -> Inputs:
    return {"format_valid": rng.random(cfg.batch) < 0.6}, {}


def build_wrong_label_rewards(rng, cfg: Config) -> Inputs:
    """Answers of the id patterns with clusters; the truth (another integer dtype) is
    the row's majority, one of its answers, or anything."""
    k = int(rng.choice([1, 5, 8]))
    a = _cluster_ids(rng, cfg, k)
    other = str(rng.choice(ID_DTYPES))
    if not cfg.x64 and np.dtype(other).itemsize == 8:
        other = other.replace("64", "32")
    info = np.iinfo(other)
    own = a[np.arange(cfg.batch), rng.integers(0, k, cfg.batch)].astype(object)
    truth = np.where(rng.random(cfg.batch) < 0.7, own,
                     ids(rng, cfg.batch, other, cfg.pattern, cfg.x64).astype(object))
    fits = np.array([info.min <= v <= info.max for v in truth.tolist()], bool)
    truth = np.where(fits, truth, 0)
    return {"answers": a, "truth": np.asarray(truth.tolist(), other)}, {}


def build_point_biserial(rng, cfg: Config) -> Inputs:
    """Proxies: majority-agreement shares (k / 8), rounded normals, constants, and
    proxies that equal the truth; truths of every balance, also constant."""
    b = cfg.batch
    dt = np_dtype(_fl(cfg))
    p = float(rng.choice([0.0, 0.02, 0.5, 0.9, 1.0]))
    t = rng.random(b) < p
    kind = int(rng.integers(0, 4))
    if kind == 0:
        x = rng.integers(0, 9, b) / 8
    elif kind == 1:
        x = np.round(rng.normal(size=b) * 2, 2)
    elif kind == 2:
        x = np.full(b, 0.75)
    else:
        x = np.where(t, 1.0, 0.0) + np.where(rng.random(b) < 0.2, 0.5, 0.0)
    return {"proxy": x.astype(dt), "truth": t}, {}


def build_collapse_step(rng, cfg: Config) -> Inputs:
    """A rise-then-fall curve of T steps (T in {0, 1, 7, 50, batch}), with NaN steps."""
    n = int(rng.choice([0, 1, 7, 50, min(cfg.batch, 4096)]))
    if cfg.transform.startswith("sharded"):  # the steps axis is the one sharded
        n = cfg.batch
    steps = np.arange(n)
    peak = max(n // 3, 1)
    curve = np.where(steps < peak, 0.5 + 0.4 * steps / peak, 0.9 - (steps - peak) / max(n / 2, 1))
    curve = curve + np.round(rng.normal(size=n) * 0.05, 3)
    curve = np.where(rng.random(n) < 0.05, np.nan, curve)
    threshold = float(rng.choice([0.01, 0.5, 0.0, -1.0, 0.3]))
    patience = int(rng.choice([1, 2, 5]))
    return {"values": curve.astype(np_dtype(_fl(cfg)))}, {"threshold": threshold,
                                                         "patience": patience}
