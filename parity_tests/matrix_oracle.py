"""Vectorised NumPy oracles for the test matrix, written from the problem texts.

Exact where the answer is discrete: ids are compared in their own dtype or as
Python ints (never through a float), cluster sizes come from ``np.unique``.
Float results are computed in float64 from the (exactly widened) inputs and
rounded once to the output dtype by the caller.  Shares no code with the twins.
"""

from __future__ import annotations

from decimal import Decimal

import numpy as np


def f64(x) -> np.ndarray:
    return np.asarray(x).astype(np.float64)


def vote(answers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(label, top count) per row; ties to the smallest id; exact in the ids' dtype."""
    a = np.asarray(answers)
    counts = (a[:, :, None] == a[:, None, :]).sum(-1)
    top = counts.max(axis=1)
    big = np.iinfo(a.dtype).max
    labels = np.where(counts == top[:, None], a, big).min(axis=1)
    return labels, top


def uncertainty_reward(consistency):
    return 1 - 2 * np.abs(f64(consistency) - 0.5)


def sizes(ids) -> np.ndarray:
    _, inverse, counts = np.unique(np.asarray(ids), return_inverse=True, return_counts=True)
    return counts[inverse.reshape(-1)]


def challenger_rewards(consistency, clusters, valid, strength=1.0, num_clusters=None):
    p = f64(consistency)
    share = sizes(clusters) / p.shape[0]
    reward = np.maximum(0.0, 1 - 2 * np.abs(p - 0.5) - float(strength) * share)
    return np.where(valid, reward, 0.0)


def consensus(answers, num_answers=None, method=None):
    labels, top = vote(answers)
    return labels, top / np.asarray(answers).shape[1]


def curriculum_mask(consistency, low=0.25, high=0.75):
    p = np.asarray(consistency)
    lo = np.asarray(low, p.dtype).astype(np.float64)
    hi = np.asarray(high, p.dtype).astype(np.float64)
    return (f64(p) >= lo) & (f64(p) <= hi)


def pseudo_rewards(answers, labels):
    a = np.asarray(answers).astype(object)
    y = np.asarray(labels).astype(object)
    return (a == y[:, None]).astype(np.float64)


def hint_delta(base_logp, hinted_logp, mask):
    diff = np.where(mask, f64(base_logp) - f64(hinted_logp), 0.0)
    return diff.sum(-1) / np.maximum(np.asarray(mask).sum(-1), 1)


def proposer_rewards(delta, hint_lengths, cluster_share, valid):
    lengths = np.asarray(hint_lengths).astype(object)
    excess = np.array([float(max(int(n) - 200, 0)) for n in lengths.ravel()], np.float64)
    penalty = 0.03 * excess.reshape(lengths.shape) / 100
    share = f64(cluster_share)
    with np.errstate(invalid="ignore"):
        return np.where(valid, f64(delta) - penalty - share, -1 - share)


def coder_rewards(executed, easy_accuracy, consistency, syntax_error):
    s, c = f64(easy_accuracy), f64(consistency)
    with np.errstate(invalid="ignore"):
        success = 1 + s + np.minimum(c, 1 - c)
    return np.where(executed, success, -0.1) - 0.05 * np.asarray(syntax_error)


def solver_rewards(answers, format_valid, num_answers=None, alpha=0.9, method=None):
    a = np.asarray(answers)
    labels, _ = vote(a)
    agree = (a == labels[:, None]).astype(np.float64)
    beta = float(Decimal(1) - Decimal(repr(float(alpha))))
    return float(alpha) * agree + beta * np.asarray(format_valid, np.float64)


def group_advantages(rewards, mask=None, scale="group", ddof=1, eps=1e-6, singleton="zero"):
    r = f64(rewards)
    m = np.ones(r.shape, bool) if mask is None else np.asarray(mask)
    n = m.sum(-1, keepdims=True).astype(np.float64)
    kept = np.where(m, r, 0.0)
    mean = kept.sum(-1, keepdims=True) / np.maximum(n, 1)
    sq = np.where(m, (r - mean) ** 2, 0.0).sum(-1, keepdims=True)
    std = np.sqrt(sq / np.maximum(n - ddof, 1))
    single = n == 1
    if singleton == "raw":
        mean = np.where(single, 0.0, mean)
        std = np.where(single, 1.0, std)
    if scale == "batch":
        nb = m.sum()
        mb = kept.sum() / max(nb, 1)
        sqb = np.where(m, (r - mb) ** 2, 0.0).sum()
        std = np.full_like(std, np.sqrt(sqb / max(nb - ddof, 1)))
    adv = r - mean
    if scale != "none":
        adv = adv / (std + eps)
    hi = np.where(m, r, -np.inf).max(-1, keepdims=True)
    lo = np.where(m, r, np.inf).min(-1, keepdims=True)
    zero = hi == lo
    if scale == "group":
        zero = zero | (n <= ddof)
    if singleton == "raw":
        zero = zero & ~single
    return np.where(m & ~zero, adv, 0.0)


def majority_vote(answers, num_answers=None, method=None):
    return vote(answers)


def cluster_sizes(ids, num_clusters=None):
    return sizes(ids)


def masked_mean(values, mask):
    v = f64(values)
    m = np.broadcast_to(np.asarray(mask), v.shape)
    return np.where(m, v, 0.0).sum(-1) / np.maximum(m.sum(-1), 1)
