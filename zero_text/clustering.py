"""The R-Zero / G-Zero / MM-Zero repetition clustering of generated questions.

The published penalty builds the BLEU distance matrix of the batch (see
:func:`zero_text.bleu.bleu_distances`) and runs scikit-learn's
``AgglomerativeClustering(n_clusters=None, distance_threshold=threshold,
metric="precomputed", linkage="average")``. Each question is then penalised
by the share of the batch that landed in its cluster.

scikit-learn is not needed here. For a precomputed metric it hands the upper
triangle of the matrix to ``scipy.cluster.hierarchy.linkage(...,
method="average")`` and then:

* counts the clusters as ``1 + #{merges with height >= threshold}``;
* undoes that many of the *last* merges of the tree.

So a merge is kept exactly when its height is strictly below the threshold:
two groups at average distance equal to the threshold stay apart. (SciPy's
``fcluster(Z, t, criterion="distance")`` keeps heights ``<= t``, which would
differ exactly at the threshold.) We call the same SciPy linkage on
bit-identical distances and replay the first ``#{height < threshold}``
merges in row order, which is what scikit-learn's tree cut does even if
rounding made two heights come out of order.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy.cluster.hierarchy import linkage

from ._validation import as_str_list
from .bleu import condensed_bleu_distances

__all__ = ["bleu_clusters", "clusters_from_condensed", "first_seen_labels"]


def first_seen_labels(labels: np.ndarray) -> np.ndarray:
    """Relabel an arbitrary labelling as 0, 1, 2, ... in order of first appearance.

    Args:
        labels: int array [n] (any label values).

    Returns:
        int64 array [n]; the first element gets 0, the next element with a new
        label gets 1, and so on. Two elements share an output label exactly
        when they shared an input label.
    """
    labels = np.asarray(labels)
    if labels.ndim != 1:
        raise ValueError(f"labels must be 1-D, got shape {labels.shape}")
    if labels.size == 0:
        return np.zeros(0, dtype=np.int64)
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(first.size, dtype=np.int64)
    return rank[inverse.reshape(-1)]


def _check_threshold(threshold: float) -> float:
    if isinstance(threshold, bool) or not isinstance(
        threshold, (int, float, np.floating, np.integer)
    ):
        raise TypeError(f"threshold must be a real number, got {type(threshold).__name__}")
    value = float(threshold)
    if math.isnan(value) or value < 0:
        raise ValueError(f"threshold must be >= 0, got {threshold!r}")
    return value


def clusters_from_condensed(
    condensed: np.ndarray, n: int, *, threshold: float
) -> tuple[np.ndarray, np.ndarray]:
    """Average-linkage clusters of a condensed distance vector, cut like scikit-learn.

    Args:
        condensed: float64 [n * (n - 1) // 2], SciPy condensed layout.
        n: number of items.
        threshold: merges with average-linkage height ``< threshold`` are kept.

    Returns:
        ``(cluster_ids, shares)`` as in :func:`bleu_clusters`.
    """
    threshold = _check_threshold(threshold)
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
    if n == 1:
        return np.zeros(1, dtype=np.int64), np.ones(1, dtype=np.float64)
    condensed = np.asarray(condensed, dtype=np.float64)
    if condensed.shape != (n * (n - 1) // 2,):
        raise ValueError(
            f"condensed must have shape ({n * (n - 1) // 2},) for n={n}, got {condensed.shape}"
        )
    tree = linkage(condensed, method="average")
    # scikit-learn: n_clusters = 1 + #{height >= threshold}; undo that many last merges
    kept = (n - 1) - int(np.count_nonzero(tree[:, 2] >= threshold))
    # parent[node] for the 2n - 1 tree nodes; node n + r is created by merge r
    parent = np.arange(2 * n - 1, dtype=np.int64)
    children = tree[:kept, :2].astype(np.int64)
    new_nodes = n + np.arange(kept, dtype=np.int64)
    parent[children[:, 0]] = new_nodes
    parent[children[:, 1]] = new_nodes
    while True:  # pointer jumping until every node points at its root
        grand = parent[parent]
        if np.array_equal(grand, parent):
            break
        parent = grand
    ids = first_seen_labels(parent[:n])
    sizes = np.bincount(ids)
    return ids, sizes[ids] / n


def bleu_clusters(
    texts: Sequence[str] | np.ndarray, *, threshold: float = 0.5
) -> tuple[np.ndarray, np.ndarray]:
    """Cluster texts exactly like the published BLEU repetition penalty.

    Args:
        texts: n strings, a list or a 1-D NumPy array (typically the
            extracted questions of one batch; empty strings are allowed and,
            having BLEU 0 with everything, always end up alone).
        threshold: average-linkage distance cut, ``>= 0``. 0.5 in R-Zero and
            G-Zero, 0.25 in MM-Zero. Groups whose average distance equals the
            threshold are *not* merged (scikit-learn's rule).

    Returns:
        ``(cluster_ids, shares)``:

        * ``cluster_ids``: int64 [n], dense in ``[0, n_clusters)`` and
          numbered in order of first appearance (``cluster_ids[0] == 0``);
        * ``shares``: float64 [n], size of the text's cluster divided by n
          (the quantity the published reward subtracts).

        The partition equals scikit-learn's ``AgglomerativeClustering`` on the
        NLTK double-loop matrix; only the label numbering differs. ``n == 0``
        gives two empty arrays; ``n == 1`` gives one cluster with share 1.0
        (where scikit-learn would refuse a single sample).

    Raises:
        TypeError: if ``texts`` is not a sequence of strings or ``threshold``
            is not a real number.
        ValueError: if ``threshold`` is negative or NaN.
    """
    items = as_str_list(texts, "texts")
    threshold = _check_threshold(threshold)
    n = len(items)
    return clusters_from_condensed(condensed_bleu_distances(items), n, threshold=threshold)
