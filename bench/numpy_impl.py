"""A NumPy implementation of the rewards, written for the bench (vectorized, no input
validation, the dtypes of zero_jax with x64 on).  ``parity_tests/test_bench.py``
checks it against zero_jax so that its timings compare like with like."""

from __future__ import annotations

import numpy as np

__all__ = [
    "challenger_rewards",
    "coder_rewards",
    "consensus",
    "curriculum_mask",
    "group_advantages",
    "hint_delta",
    "proposer_rewards",
    "pseudo_rewards",
    "solver_rewards",
    "uncertainty_reward",
]


def uncertainty_reward(consistency: np.ndarray) -> np.ndarray:
    return 1 - 2 * np.abs(consistency - 0.5)


def _cluster_sizes(ids: np.ndarray, num_clusters: int | None) -> np.ndarray:
    if num_clusters is not None:
        return np.bincount(ids, minlength=num_clusters)[ids]
    _, inverse, counts = np.unique(ids, return_inverse=True, return_counts=True)
    return counts[inverse]


def challenger_rewards(consistency, clusters, valid, strength=1.0, *, num_clusters=None):
    p = consistency
    share = _cluster_sizes(clusters, num_clusters).astype(p.dtype) / p.dtype.type(p.shape[0])
    reward = np.maximum(1 - 2 * np.abs(p - 0.5) - p.dtype.type(strength) * share, 0)
    return np.where(valid, reward, p.dtype.type(0))


def _vote(answers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Majority per row by sorting it: run lengths, first (smallest) longest run."""
    s = np.sort(answers, axis=1)
    b, k = s.shape
    idx = np.broadcast_to(np.arange(k), (b, k))
    new = np.ones((b, k), bool)
    new[:, 1:] = s[:, 1:] != s[:, :-1]
    start = np.maximum.accumulate(np.where(new, idx, 0), axis=1)
    end = np.ones((b, k), bool)
    end[:, :-1] = new[:, 1:]
    stop = np.minimum.accumulate(np.where(end, idx, k - 1)[:, ::-1], axis=1)[:, ::-1]
    runs = stop - start + 1
    best = np.argmax(runs, axis=1)  # first longest run: the smallest tied id
    rows = np.arange(b)
    return s[rows, best], runs[rows, best]


def consensus(answers, num_answers):
    labels, top = _vote(answers)
    return labels.astype(np.int64), top / np.float64(answers.shape[1])


def curriculum_mask(consistency, low=0.25, high=0.75):
    t = consistency.dtype.type
    return (consistency >= t(low)) & (consistency <= t(high))


def pseudo_rewards(answers, labels):
    return (answers == labels[:, None]).astype(np.float64)


def hint_delta(base_logp, hinted_logp, mask):
    dtype = np.result_type(base_logp, hinted_logp)
    diff = np.where(mask, base_logp - hinted_logp, dtype.type(0))
    count = np.maximum(np.count_nonzero(mask, axis=1), 1).astype(dtype)
    return diff.sum(axis=1, dtype=dtype) / count


def proposer_rewards(delta, hint_lengths, cluster_share, valid):
    dtype = np.result_type(delta, cluster_share)
    t = dtype.type
    penalty = t(0.03) * np.maximum(hint_lengths.astype(dtype) - t(200), 0) / t(100)
    return np.where(valid, delta - penalty, t(-1)) - cluster_share


def coder_rewards(executed, easy_accuracy, consistency, syntax_error):
    dtype = np.result_type(easy_accuracy, consistency)
    t = dtype.type
    c = consistency
    success = 1 + easy_accuracy + np.minimum(c, 1 - c)
    return np.where(executed, success, t(-0.1)) - t(0.05) * syntax_error.astype(dtype)


def solver_rewards(answers, format_valid, num_answers, alpha=0.9):
    labels, _ = _vote(answers)
    agree = answers == labels[:, None]
    return alpha * agree + (1 - alpha) * format_valid.astype(np.float64)


def group_advantages(rewards, mask=None, *, ddof=1, eps=1e-6):
    """Group scaling, ``singleton="zero"`` (the library default)."""
    r = rewards
    t = r.dtype.type
    m = np.ones(r.shape, bool) if mask is None else mask
    n = m.sum(axis=1, keepdims=True).astype(r.dtype)
    mean = np.where(m, r, t(0)).sum(axis=1, keepdims=True) / np.maximum(n, 1)
    sq = np.where(m, (r - mean) ** 2, t(0)).sum(axis=1, keepdims=True)
    std = np.sqrt(sq / np.maximum(n - ddof, 1))
    adv = (r - mean) / (std + t(eps))
    hi = np.where(m, r, -np.inf).max(axis=1, keepdims=True)
    lo = np.where(m, r, np.inf).min(axis=1, keepdims=True)
    zero = (hi == lo) | (n <= ddof)
    return np.where(m & ~zero, adv, t(0))
