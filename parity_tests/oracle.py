"""Independent NumPy / pure-Python oracles of the seed formulas, written from the
problem texts without sharing code with zero_jax or zero_torch."""

from __future__ import annotations

from collections import Counter

import numpy as np


def vote(row) -> tuple[int, float]:
    counts = Counter(int(a) for a in row)
    top = max(counts.values())
    return min(a for a, c in counts.items() if c == top), top / len(row)


def consensus(answers):
    out = [vote(r) for r in np.asarray(answers)]
    return (
        np.array([o[0] for o in out], np.int64),
        np.array([o[1] for o in out], np.float64),
    )


def uncertainty(p):
    p = np.asarray(p)
    return 1 - 2 * np.abs(p - 0.5)


def challenger(p, clusters, valid, strength=1.0):
    p = np.asarray(p)
    clusters = [int(c) for c in np.asarray(clusters)]
    sizes = Counter(clusters)
    b = len(clusters)
    out = np.zeros_like(p)
    for i, c in enumerate(clusters):
        if valid[i]:
            out[i] = max(0.0, 1 - 2 * abs(float(p[i]) - 0.5) - strength * sizes[c] / b)
    return out


def band(p, low=0.25, high=0.75):
    p = np.asarray(p)
    return (p >= p.dtype.type(low)) & (p <= p.dtype.type(high))


def pseudo(answers, labels):
    return (np.asarray(answers) == np.asarray(labels)[:, None]).astype(np.float64)


def hint_delta(base, hinted, mask):
    base, hinted, mask = np.asarray(base), np.asarray(hinted), np.asarray(mask)
    out = np.zeros(base.shape[0], np.result_type(base, hinted))
    for i in range(base.shape[0]):
        kept = (base[i] - hinted[i])[mask[i]]
        out[i] = kept.sum() / max(1, kept.size)
    return out


def proposer(delta, lengths, share, valid):
    delta, lengths, share = np.asarray(delta), np.asarray(lengths), np.asarray(share)
    pen = 0.03 * np.maximum(lengths - 200, 0) / 100
    return np.where(valid, delta - pen - share, -1 - share)


def coder(executed, easy, c, syntax):
    easy, c = np.asarray(easy), np.asarray(c)
    ok = 1 + easy + np.minimum(c, 1 - c)
    return np.where(executed, ok, -0.1) - 0.05 * np.asarray(syntax)


def solver(answers, fmt, alpha=0.9):
    labels, _ = consensus(answers)
    agree = (np.asarray(answers) == labels[:, None]).astype(np.float64)
    return alpha * agree + (1 - alpha) * np.asarray(fmt, np.float64)
