"""zero_text: from raw model outputs (strings) to the integer tensors the rewards need.

Framework-neutral: pure Python, NumPy and SciPy; importing it never imports
JAX or PyTorch. ``math_verify`` is only needed for ``equivalence="math"``.

* answers: :func:`extract_boxed`, :func:`normalize_answer`, :func:`extract_tag`
* grouping: :func:`group_answers` (answer ids for majority-vote rewards),
  :func:`math_equivalent`, :func:`close_math_workers` (math-verify runs in
  helper processes under a hard time limit)
* BLEU: :func:`bleu_matrix`, :func:`bleu_distances`,
  :func:`condensed_bleu_distances` (NLTK-exact, vectorised)
* clustering: :func:`bleu_clusters` (the published repetition clustering),
  :func:`clusters_from_condensed`, :func:`first_seen_labels`
* formats: per-paper format gates returning bool arrays
* fixtures: :func:`load_example_batch`
"""

from .answers import extract_boxed, extract_tag, normalize_answer
from .bleu import bleu_distances, bleu_matrix, condensed_bleu_distances
from .clustering import bleu_clusters, clusters_from_condensed, first_seen_labels
from .example import load_example_batch
from .formats import (
    g_zero_proposer_format_ok,
    mm_zero_solver_format_ok,
    r_zero_challenger_format_ok,
    r_zero_solver_format_ok,
)
from .grouping import close_math_workers, group_answers, math_equivalent

__all__ = [
    "bleu_clusters",
    "bleu_distances",
    "bleu_matrix",
    "close_math_workers",
    "clusters_from_condensed",
    "condensed_bleu_distances",
    "extract_boxed",
    "extract_tag",
    "first_seen_labels",
    "g_zero_proposer_format_ok",
    "group_answers",
    "load_example_batch",
    "math_equivalent",
    "mm_zero_solver_format_ok",
    "normalize_answer",
    "r_zero_challenger_format_ok",
    "r_zero_solver_format_ok",
]
