"""Pairwise sentence BLEU, computed for all pairs at once and matching NLTK exactly.

The R-Zero, G-Zero and MM-Zero repetition penalties score every pair of
generated questions with::

    nltk.translate.bleu_score.sentence_bleu(
        [reference.split()], hypothesis.split(),
        smoothing_function=SmoothingFunction().method1,
    )

i.e. whitespace tokens, uniform weights ``(0.25,) * 4``, one reference and
Chen & Cherry's smoothing method 1 (``epsilon = 0.1``). Calling that in a
double loop costs ``n * (n - 1) / 2`` Python calls. This module gets the same
numbers from vectorised n-gram statistics instead:

1. every distinct n-gram (n = 1..4) gets an integer id and each text becomes
   a sparse count vector (``scipy.sparse`` CSR);
2. clipped matches ``sum_g min(count_hyp[g], count_ref[g])`` for all pairs
   come from sparse products of the "count >= t" indicator layers
   (``min(a, b) = sum_{t >= 1} [a >= t] * [b >= t]``);
3. a pair's score depends only on ``(hyp_len, ref_len, m1, m2, m3, m4)``;
   each distinct tuple is evaluated once with the very float operations NLTK
   performs (``math.log`` of ``m / d``, ``math.fsum``, ``math.exp``), so the
   results are bit-for-bit identical to NLTK, not merely close.

NLTK rules reproduced (``nltk/translate/bleu_score.py``):

* the n-gram precision denominator is ``max(1, hyp_len - n + 1)``;
* if there is no unigram match at all (this covers an empty hypothesis, an
  empty reference and disjoint vocabularies) the score is exactly 0;
* method 1 replaces a zero precision ``0 / d`` by ``0.1 / d``; non-zero
  precisions are left alone. A hypothesis shorter than n tokens therefore
  gets ``0.1`` for that order, so identical texts of 1, 2 and 3 tokens score
  ``0.1 ** 0.75``, ``0.1 ** 0.5`` and ``0.1 ** 0.25`` (about 0.178, 0.316,
  0.562) instead of 1;
* brevity penalty with the single reference's length: 1 when
  ``hyp_len > ref_len``, else ``exp(1 - ref_len / hyp_len)``.

Cost: memory is O(n^2) (four int32 match matrices plus the float64 output,
about 100 MB for n = 2048); time is dominated by a few sparse products and
one sort of the pair statistics.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from ._validation import as_str_list

__all__ = ["bleu_matrix", "bleu_distances", "condensed_bleu_distances"]

_MAX_ORDER = 4
_WEIGHT = 0.25  # NLTK default weights (0.25, 0.25, 0.25, 0.25)
_EPSILON = 0.1  # SmoothingFunction().method1 default


def _pair_bleu(hyp_len: int, ref_len: int, m1: int, m2: int, m3: int, m4: int) -> float:
    """BLEU of one pair from its statistics, replaying NLTK's float operations."""
    if m1 == 0:
        return 0.0
    terms = []
    for order, matched in enumerate((m1, m2, m3, m4), start=1):
        denom = max(1, hyp_len - order + 1)
        # NLTK: Fraction(matched, denom) -> float(matched / denom) inside math.log,
        # or (0 + epsilon) / denom for a zero numerator under method 1.
        precision = matched / denom if matched else (0 + _EPSILON) / denom
        terms.append(_WEIGHT * math.log(precision))
    if hyp_len > ref_len:
        penalty = 1.0
    else:
        penalty = math.exp(1 - ref_len / hyp_len)
    return penalty * math.exp(math.fsum(terms))


def _ngram_count_matrices(tokens: list[list[str]]) -> tuple[np.ndarray, list[sp.csr_matrix]]:
    """Token lengths (int64 [n]) and, per order 1..4, a CSR count matrix [n, n_grams]."""
    n = len(tokens)
    lengths = np.fromiter((len(t) for t in tokens), dtype=np.int64, count=n)
    total = int(lengths.sum())
    vocab: dict[str, int] = {}
    flat = np.fromiter(
        (vocab.setdefault(tok, len(vocab)) for toks in tokens for tok in toks),
        dtype=np.int64,
        count=total,
    )
    owner = np.repeat(np.arange(n, dtype=np.int64), lengths)
    starts = np.cumsum(lengths) - lengths
    # tokens left in the owning text, counting the current one
    remaining = lengths[owner] - (np.arange(total, dtype=np.int64) - starts[owner])

    matrices = []
    gram = flat  # id of the order-k n-gram starting at each position (if it exists)
    n_ids = len(vocab)
    for order in range(1, _MAX_ORDER + 1):
        starts_here = np.flatnonzero(remaining >= order)
        if order > 1 and starts_here.size:
            # extend each (order-1)-gram id by the next token; ids stay < total
            key = gram[starts_here] * max(len(vocab), 1) + flat[starts_here + order - 1]
            uniq, inverse = np.unique(key, return_inverse=True)
            gram = np.full(total, -1, dtype=np.int64)
            gram[starts_here] = inverse
            n_ids = uniq.size
        elif order > 1:
            n_ids = 0
        counts = sp.csr_matrix(
            (
                np.ones(starts_here.size, dtype=np.int32),
                (owner[starts_here], gram[starts_here]),
            ),
            shape=(n, max(n_ids, 1)),
        )
        counts.sum_duplicates()
        matrices.append(counts)
    return lengths, matrices


_SPARSE_LEVELS = 3  # indicator layers done with sparse products before the direct finish


def _clipped_matches(counts: sp.csr_matrix) -> np.ndarray:
    """``out[i, j] = sum_g min(counts[i, g], counts[j, g])`` as a dense int32 [n, n].

    The first few layers ``[count >= t]`` (which hold almost all the mass) go
    through sparse products. What is left (n-grams repeated more than
    ``_SPARSE_LEVELS`` times in a text) is finished per n-gram with
    ``min(a - t0, b - t0)`` directly, so a degenerate text that repeats a
    word hundreds of times costs one small outer minimum, not hundreds of
    sparse products.
    """
    n = counts.shape[0]
    out = np.zeros((n, n), dtype=np.int32)
    level = counts.copy()
    for _ in range(_SPARSE_LEVELS):
        if not level.nnz:
            return out
        indicator = level.copy()
        indicator.data = np.ones_like(indicator.data)
        out += (indicator @ indicator.T).toarray()
        level.data -= 1
        level.eliminate_zeros()
    if level.nnz:
        rest = level.tocsc()
        for col in np.flatnonzero(np.diff(rest.indptr)):
            lo, hi = rest.indptr[col], rest.indptr[col + 1]
            rows, left = rest.indices[lo:hi], rest.data[lo:hi]
            out[np.ix_(rows, rows)] += np.minimum.outer(left, left)
    return out


def _match_statistics(texts: list[str]) -> tuple[np.ndarray, list[np.ndarray]]:
    """Lengths (int64 [n]) and symmetric clipped-match matrices for orders 1..4."""
    lengths, matrices = _ngram_count_matrices([t.split() for t in texts])
    return lengths, [_clipped_matches(m) for m in matrices]


def _unique_rows(fields: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows of the stacked non-negative int fields and the inverse index.

    Returns ``(rows, inverse)`` with ``rows`` int64 [u, n_fields] and
    ``inverse`` [m] such that ``rows[inverse]`` rebuilds the input.
    """
    radices = [int(f.max()) + 1 for f in fields]
    if math.prod(radices) < 2**62:
        packed = np.zeros(fields[0].shape, dtype=np.int64)
        for f, r in zip(fields, radices, strict=True):
            packed *= r
            packed += f
        uniq, inverse = np.unique(packed, return_inverse=True)
        rows = np.empty((uniq.size, len(fields)), dtype=np.int64)
        for k in range(len(fields) - 1, -1, -1):
            uniq, rows[:, k] = np.divmod(uniq, radices[k])
        return rows, inverse.reshape(-1)
    stacked = np.stack([f.astype(np.int64) for f in fields], axis=1)
    rows, inverse = np.unique(stacked, axis=0, return_inverse=True)
    return rows, inverse.reshape(-1)


def _bleu_for_pairs(
    lengths: np.ndarray, matches: list[np.ndarray], hyp: np.ndarray, ref: np.ndarray
) -> np.ndarray:
    """BLEU(hyp=texts[hyp[p]], ref=texts[ref[p]]) for every p, float64 [len(hyp)]."""
    out = np.zeros(hyp.shape[0], dtype=np.float64)
    n = matches[0].shape[0]
    flat = hyp * n + ref
    m1 = np.take(matches[0].ravel(), flat)
    live = np.flatnonzero(m1)
    if live.size == 0:
        return out
    flat = flat[live]
    fields = [lengths[hyp[live]], lengths[ref[live]], m1[live]]
    fields += [np.take(m.ravel(), flat) for m in matches[1:]]
    rows, inverse = _unique_rows(fields)
    values = np.fromiter(
        (_pair_bleu(*map(int, row)) for row in rows), dtype=np.float64, count=rows.shape[0]
    )
    out[live] = values[inverse]
    return out


def bleu_matrix(texts: Sequence[str] | np.ndarray) -> np.ndarray:
    """Sentence BLEU between every ordered pair of texts.

    Args:
        texts: n strings (a list, or a 1-D NumPy array of ``str``); each is
            tokenised with ``str.split()`` (runs of whitespace), exactly as
            the published reward code does.

    Returns:
        float64 array [n, n] with ``out[i, j] = BLEU(hypothesis=texts[i],
        references=[texts[j]])`` under NLTK's defaults plus smoothing method 1.
        BLEU is asymmetric, so the matrix generally is too. The diagonal holds
        the true self-BLEU (1.0 for texts of 4+ tokens, about 0.178 / 0.316 /
        0.562 for 1 / 2 / 3 tokens, 0.0 for an empty text); note that
        :func:`bleu_distances` overrides the diagonal instead. Values equal
        NLTK's ``sentence_bleu`` bit for bit.

    Raises:
        TypeError: if ``texts`` is a single string or holds a non-string.
    """
    items = as_str_list(texts, "texts")
    n = len(items)
    if n == 0:
        return np.zeros((0, 0), dtype=np.float64)
    lengths, matches = _match_statistics(items)
    hyp = np.repeat(np.arange(n, dtype=np.int64), n)
    ref = np.tile(np.arange(n, dtype=np.int64), n)
    return _bleu_for_pairs(lengths, matches, hyp, ref).reshape(n, n)


def condensed_bleu_distances(texts: Sequence[str] | np.ndarray) -> np.ndarray:
    """Published BLEU distances in SciPy's condensed (upper-triangle) layout.

    Returns:
        float64 array [n * (n - 1) // 2]; entry for the pair ``i < j`` (in
        ``scipy.spatial.distance.squareform`` order) is
        ``1 - BLEU(hypothesis=texts[i], references=[texts[j]])``: only the
        earlier text is ever the hypothesis, as in the reference double loop.
    """
    items = as_str_list(texts, "texts")
    n = len(items)
    if n < 2:
        return np.zeros(0, dtype=np.float64)
    lengths, matches = _match_statistics(items)
    hyp, ref = np.triu_indices(n, k=1)
    return 1.0 - _bleu_for_pairs(lengths, matches, hyp.astype(np.int64), ref.astype(np.int64))


def bleu_distances(texts: Sequence[str] | np.ndarray) -> np.ndarray:
    """The symmetric distance matrix the R-Zero / G-Zero / MM-Zero penalty clusters.

    Returns:
        float64 array [n, n] with ``d[i, j] = d[j, i] = 1 - BLEU(hypothesis=
        texts[i], references=[texts[j]])`` for ``i < j`` (upper triangle
        mirrored, the earlier text is the hypothesis) and ``d[i, i] = 0``
        (the published code writes a score of 1.0 on the diagonal without
        computing it). Feed it to any clustering that accepts a precomputed
        metric.

    Raises:
        TypeError: if ``texts`` is a single string or holds a non-string.
    """
    items = as_str_list(texts, "texts")
    n = len(items)
    out = np.zeros((n, n), dtype=np.float64)
    if n < 2:
        return out
    upper = condensed_bleu_distances(items)
    i, j = np.triu_indices(n, k=1)
    out[i, j] = upper
    out[j, i] = upper
    return out
