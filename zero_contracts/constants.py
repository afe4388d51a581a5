"""Constants and small rules shared by both twins (defined once, here)."""

from __future__ import annotations

import functools
from decimal import Decimal
from typing import Any, NamedTuple

__all__ = [
    "ADVANTAGE_PRESETS",
    "AGGREGATIONS",
    "BAND_PRESETS",
    "BASELINES",
    "SCALES",
    "SINGLETONS",
    "VOTE_METHODS",
    "VoteMetrics",
    "MAX_TABLE",
    "choose_vote_method",
    "complement_weight",
    "vote_alphabet",
]

#: The most entries a counting vote (``"one_hot"`` / ``"segment_sum"``) may allocate
#: for its ``[B, num_answers]`` table (2**28 int32 counts are 1 GiB); beyond it both
#: twins raise and point to ``method="pairwise"``, whose cost does not depend on
#: ``num_answers``.  Also the largest ``num_clusters``.
MAX_TABLE = 2**28

#: Voting methods of ``consensus`` / ``solver_rewards`` / ``majority_vote``.
VOTE_METHODS = ("auto", "one_hot", "segment_sum", "pairwise")

#: ``group_advantages(scale=...)``, ``(singleton=...)`` and ``(baseline=...)``.
SCALES = ("group", "batch", "none")
SINGLETONS = ("zero", "raw")
BASELINES = ("mean", "leave_one_out")

#: ``multi_reward_advantages(aggregation=...)``: TRL's two names (GDPO is the second).
AGGREGATIONS = ("sum_then_normalize", "normalize_then_sum")

#: Keyword sets that reproduce published defaults, e.g.
#: ``group_advantages(r, **ADVANTAGE_PRESETS["verl"])``.  They differ from those
#: stacks only where the published formula is undefined or noise: groups whose
#: kept rewards are all equal get exactly 0 (not a float residue / eps), and (except
#: for verl, which fixes it) single-sample groups get 0 instead of NaN.
ADVANTAGE_PRESETS: dict[str, dict[str, Any]] = {
    # verl compute_grpo_outcome_advantage: unbiased std, eps 1e-6, a group of one
    # sample uses mean 0 and std 1.
    "verl": {"scale": "group", "ddof": 1, "eps": 1e-6, "singleton": "raw"},
    # Tunix GRPO: (r - mean) / (std(ddof=1) + 1e-6).
    "tunix": {"scale": "group", "ddof": 1, "eps": 1e-6, "singleton": "zero"},
    # TRL GRPOTrainer, scale_rewards="group" (torch.std is unbiased) with 1e-4.
    "trl": {"scale": "group", "ddof": 1, "eps": 1e-4, "singleton": "zero"},
    # TRL scale_rewards="batch": std of all rewards of the batch.
    "trl_batch": {"scale": "batch", "ddof": 1, "eps": 1e-4, "singleton": "zero"},
    # Dr. GRPO (TRL scale_rewards="none"): mean-centring only.
    "dr_grpo": {"scale": "none", "ddof": 1, "eps": 0.0, "singleton": "zero"},
    # RLOO (TRL RLOOTrainer, verl "rloo_vectorized", Tunix "rloo"): r_i minus the
    # mean of the group's other rewards, unscaled.  verl's older "rloo" estimator
    # keeps a single-sample group's raw reward: add singleton="raw" for it.
    "rloo": {"scale": "none", "ddof": 1, "eps": 0.0, "singleton": "zero",
             "baseline": "leave_one_out"},
}


#: Edges of R-Zero's informative band, ``curriculum_mask(p, **BAND_PRESETS["r_zero_published"])``:
#: the paper's ``|p - 1/2| <= 1/4`` (the defaults) and the band its published scripts
#: pass when they filter the generated questions (scripts/solver_train.sh:
#: ``question_evaluate/upload.py --max_score 0.8 --min_score 0.3``, both edges kept).
BAND_PRESETS: dict[str, dict[str, float]] = {
    "r_zero_paper": {"low": 0.25, "high": 0.75},
    "r_zero_published": {"low": 0.3, "high": 0.8},
}


class VoteMetrics(NamedTuple):
    """What ``vote_metrics`` returns in both twins (each a scalar of the batch)."""

    label_accuracy: Any  # share of questions whose voted label is the truth
    reward_accuracy: Any  # share of trained answers whose pseudo reward is their true reward
    majority_ratio: Any  # mean share of the K votes that the winning label got
    maj_at_k: Any  # share of questions whose majority over the trained answers is the truth


def choose_vote_method(method: str, num_answers: int, k: int) -> str:
    """Resolve ``"auto"``: count over the alphabet only when it is narrower than a row.

    Counting costs ``O(B * K * num_answers)``; comparing within a row costs
    ``O(B * K^2)`` and never depends on ``num_answers``.  ``"auto"`` counts only
    when ``num_answers < K``, so it never allocates a table that grows with a large
    answer vocabulary.  Both twins resolve ``"auto"`` here.
    """
    if method != "auto":
        return method
    return "one_hot" if num_answers < k else "pairwise"


def vote_alphabet(num_answers: int, id_max: int) -> int:
    """Columns of a counting table: valid ids lie in ``[0, min(num_answers, id_max + 1))``.

    Written as a comparison, not ``min``: ``torch.compile`` treats a ``num_answers``
    that changes between calls as a symbol, and a symbolic ``min`` with ``2**63`` (int64
    ids) is a size it cannot compile; the comparison becomes a guard instead."""
    return num_answers if num_answers <= id_max else id_max + 1


@functools.lru_cache(maxsize=256)
def complement_weight(alpha: float) -> float:
    """``1 - alpha`` as the published code writes it: exact in decimal.

    MM-Zero's solver reward weights the format flag by ``1 - alpha``; with
    ``alpha = 0.9`` binary arithmetic gives ``0.09999999999999998`` where the
    published code (and the worked example) has ``0.1``.  The complement is taken
    on the shortest decimal form of ``alpha`` and rounded once.
    """
    return float(Decimal(1) - Decimal(repr(float(alpha))))
