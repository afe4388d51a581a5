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
    "informative_groups",
    "learnability_reward",
    "multi_reward_advantages",
    "overlong_penalty",
    "pass_at_k",
    "proposer_rewards",
    "pseudo_rewards",
    "self_certainty",
    "solver_rewards",
    "token_entropy",
    "uncertainty_reward",
    "vote_metrics",
]

#: Logits reduced at once by the logits reductions (float32: 8 MiB per temporary).
CHUNK = 2**21


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


def group_advantages(
    rewards, mask=None, *, scale="group", ddof=1, eps=1e-6, singleton="zero", baseline="mean"
):
    """Group or no scaling, mean or leave-one-out baseline, ``singleton="zero"`` (the
    bench's cases: the library default and the RLOO preset)."""
    if scale not in ("group", "none") or singleton != "zero":
        raise NotImplementedError(f"scale={scale!r}, singleton={singleton!r}")
    r = rewards
    t = r.dtype.type
    m = np.ones(r.shape, bool) if mask is None else mask
    kept = np.where(m, r, t(0))
    n = m.sum(axis=1, keepdims=True).astype(r.dtype)
    mean = kept.sum(axis=1, keepdims=True) / np.maximum(n, 1)
    if baseline == "leave_one_out":
        # sum_{j != i} (r_i - r_j) / (n - 1): differences of equal rewards are exactly 0
        adv = (n * r - kept.sum(axis=1, keepdims=True)) / np.maximum(n - 1, 1)
    else:
        adv = r - mean
    if scale == "group":
        sq = np.where(m, (r - mean) ** 2, t(0)).sum(axis=1, keepdims=True)
        adv = adv / (np.sqrt(sq / np.maximum(n - ddof, 1)) + t(eps))
    hi = np.where(m, r, -np.inf).max(axis=1, keepdims=True)
    lo = np.where(m, r, np.inf).min(axis=1, keepdims=True)
    zero = (hi == lo) | (n <= (ddof if scale == "group" else 1))
    return np.where(m & ~zero, adv, t(0))


def multi_reward_advantages(
    rewards, weights=None, mask=None, *, aggregation="sum_then_normalize", **options
):
    """Both aggregations without a mask (the bench's cases)."""
    if mask is not None:
        raise NotImplementedError("mask")
    r = rewards
    t = r.dtype.type
    w = np.ones(r.shape[-1], r.dtype) if weights is None else weights.astype(r.dtype)
    if aggregation == "sum_then_normalize":
        return group_advantages((r * w).sum(axis=-1), **options)
    parts = [group_advantages(r[..., k], **options) for k in range(r.shape[-1])]
    s = sum(w[k] * a for k, a in enumerate(parts))
    if s.max() == s.min():
        return np.zeros_like(s)
    ddof, eps = options.get("ddof", 1), options.get("eps", 1e-6)
    return ((s - s.mean()) / (s.std(ddof=ddof) + t(eps))).astype(r.dtype)


def _per_token_mean(logits, mask, per_token):
    """``sum_t m_t f(l_t) / max(1, sum_t m_t)`` per row, the logits widened to float32
    (float64 stays) piece by piece."""
    b, t, v = logits.shape
    acc = np.float64 if logits.dtype == np.float64 else np.float32
    total = np.zeros(b, acc)
    step = max(1, CHUNK // max(1, v))
    for i in range(b):
        for t0 in range(0, t, step):
            x = logits[i, t0 : t0 + step].astype(acc)  # a copy: per_token may work in place
            kept = mask[i, t0 : t0 + step]
            total[i] += np.where(kept, per_token(x), acc(0)).sum()
    count = np.maximum(mask.sum(axis=1), 1).astype(acc)
    return (total / count).astype(logits.dtype)


def _lse_and_mean(x):
    top = x.max(axis=-1, keepdims=True)
    mean = x.mean(axis=-1)
    x -= top
    np.exp(x, out=x)
    return top[..., 0] + np.log(x.sum(axis=-1)), mean


def _entropy(x):
    top = x.max(axis=-1, keepdims=True)
    x -= top  # <= 0
    e = np.exp(x)
    z = e.sum(axis=-1)
    return np.log(z) - (e * x).sum(axis=-1) / z


def self_certainty(logits, mask):
    def per_token(x):
        lse, mean = _lse_and_mean(x)
        return lse - mean

    return _per_token_mean(logits, mask, per_token)


def token_entropy(logits, mask):
    return _per_token_mean(logits, mask, _entropy)


def pass_at_k(correct, k):
    """``1 - prod_{i = n-c+1}^{n} (1 - k / i)``, 1 when ``n - c < k``."""
    n = correct.shape[1]
    c = correct.sum(axis=1)
    # P[m] = prod_{i = k+1}^{m} (1 - k / i): the product over (n - c, n] is P[n] / P[n - c]
    i = np.arange(k + 1, n + 1, dtype=np.float64)
    p = np.ones(n + 1)
    p[k + 1 :] = np.cumprod(1 - k / i)
    rest = n - c
    out = 1 - p[n] / p[np.maximum(rest, k)]
    return np.where(rest < k, 1.0, out)


def vote_metrics(answers, truth, num_answers, *, trained=None, method="auto"):
    k = answers.shape[1]
    k_s = k if trained is None else trained
    voted, top = _vote(answers)
    t = truth.astype(np.int64)
    head = answers[:, :k_s]
    reward_hit = (head == voted[:, None]) == (head == t[:, None])
    trained_vote, _ = _vote(head)
    return (
        np.mean(voted == t),
        np.mean(reward_hit),
        np.mean(top / np.float64(k)),
        np.mean(trained_vote == t),
    )


def overlong_penalty(lengths, max_length, cache):
    length = lengths.astype(np.float64)
    free = np.float64(max_length) - np.float64(cache)
    soft = (free - length) / np.float64(cache) if cache else np.zeros_like(length)
    return np.where(length <= free, 0.0, np.where(length <= max_length, soft, -1.0))


def informative_groups(rewards, mask=None):
    if mask is not None:
        raise NotImplementedError("mask")
    return rewards.max(axis=1) > rewards.min(axis=1)


def learnability_reward(solve_rate):
    s = solve_rate
    t = s.dtype.type
    return np.where((s == 0) | (s == 1), t(0), t(1) - s)
