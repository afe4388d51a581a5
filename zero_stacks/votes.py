"""TTRL's vote diagnostics from a stack's batch (stack-neutral part).

The stack modules give the shape each stack plugs in: in :mod:`zero_stacks.trl` a
reward function that logs through TRL's ``log_metric`` and returns zeros, in
:mod:`zero_stacks.tunix` a ``metric_fns`` entry of Tunix's learners.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

import zero_text
from zero_contracts import VoteMetrics
from zero_stacks._answers import Equivalence, label_text
from zero_stacks._backend import floats
from zero_stacks._batch import Batch
from zero_stacks._checks import check_answer_options, check_count
from zero_stacks.base import StackReward

__all__ = ["VoteDiagnostics"]


def _column_name(value: object, name: str) -> str:
    if not (isinstance(value, str) and value):
        raise TypeError(f"{name} must be a column name (a non-empty str), got {value!r}")
    return value


class VoteDiagnostics(StackReward):
    """TTRL's diagnostics of majority-vote training, from the completions and a truth column.

    For monitoring only: the truth never enters a reward.  Each prompt's
    ``num_generations`` completions are the votes; its truth is read from the dataset
    column ``truth_column`` (``"4"``, ``4`` or text with a ``\\boxed{}``, as frozen
    labels are).  The replies and the truth are grouped together, one row per prompt
    with the truth last (so the replies' ids, and the vote's ties, are those the
    solver reward sees), by :func:`zero_text.group_answers` (``unparseable``,
    ``equivalence``, ``timeout``, ``processes`` as there and as in
    :class:`SolverReward`), and :func:`vote_metrics` computes, over the call's
    prompts:

    * ``label_accuracy``: share of prompts whose voted label is the truth;
    * ``reward_accuracy``: share of the trained replies whose pseudo reward
      ``1[answer == label]`` equals the true reward ``1[answer == truth]`` (TTRL
      issue #29 is this number falling);
    * ``majority_ratio``: mean share of the votes the winning answer got;
    * ``maj@K``: share of prompts whose majority over the first ``K = trained``
      replies is the truth (``trained`` defaults to all ``num_generations``; TTRL
      votes on ``K_v`` samples and trains on ``K_s <= K_v`` of them).  In an
      evaluation whose groups are smaller than ``trained`` and than the
      ``num_generations`` given here (TRL's ``num_generations_eval``), every reply of a
      group counts as trained.

    They are logged under ``prefix + name`` (``"votes/label_accuracy"``, ...,
    ``"votes/maj@8"``).  :meth:`metrics` returns them as a dict of floats.  A
    prompt whose replies hold no parsed answer is counted as :func:`vote_metrics`
    counts it (its label, the first unparseable reply under ``"distinct"``, is
    never the truth), while :class:`SolverReward` pays such a group 0.
    """

    __name__ = "zero_votes"

    truth_column: str
    trained: int | None
    unparseable: Any
    equivalence: Equivalence
    timeout: float
    processes: int
    prefix: str

    def __init__(
        self,
        num_generations: int | None = None,
        *,
        truth_column: str = "answer",
        trained: int | None = None,
        unparseable: Any = "distinct",
        equivalence: Equivalence = "exact",
        timeout: float = 1.0,
        processes: int = 1,
        prefix: str = "votes/",
    ) -> None:
        super().__init__(num_generations)
        truth_column = _column_name(truth_column, "truth_column")
        if trained is not None:
            trained = check_count(trained, "trained")
            if self.num_generations is not None and trained > self.num_generations:
                raise ValueError(
                    f"trained={trained} exceeds num_generations={self.num_generations}"
                )
        check_answer_options(unparseable, equivalence, timeout, processes)
        if not isinstance(prefix, str):
            raise TypeError(f"prefix must be a str, got {type(prefix).__name__}")
        self._set(
            truth_column=truth_column,
            trained=trained,
            unparseable=unparseable,
            equivalence=equivalence,
            timeout=timeout,
            processes=processes,
            prefix=prefix,
        )

    def vote_metrics(self, batch: Batch) -> VoteMetrics:
        """The library's :class:`zero_contracts.VoteMetrics` of a checked batch (NumPy
        scalars)."""
        return truth_metrics(self, batch, self.truth_column, self._trained(batch.num_generations))

    def _trained(self, size: int) -> int | None:
        """``trained``, capped at the group size of an evaluation whose groups are smaller
        than the training groups this was built for (elsewhere the library refuses a
        ``trained`` beyond the group)."""
        if self.trained is None or self.num_generations is None or size >= self.num_generations:
            return self.trained
        return min(self.trained, size)

    def named(self, batch: Batch) -> dict[str, float]:
        """The four diagnostics of a checked batch by their logged names."""
        return named_truth_metrics(
            self, batch, self.truth_column, self._trained(batch.num_generations), self.prefix
        )

    def metrics(
        self,
        prompts: Sequence[Any],
        completions: Sequence[Any],
        num_generations: int | None = None,
        **columns: Any,
    ) -> dict[str, float]:
        """The diagnostics of one batch (same arguments as a reward call), by name."""
        return self.named(self.batch(prompts, completions, num_generations, columns))

    def compute(self, batch: Batch) -> np.ndarray:
        """Zeros ``[B * G]``: the diagnostics add nothing to the reward."""
        return np.zeros(len(batch.texts), dtype=np.float64)

    def log_through(self, batch: Batch, columns: Mapping[str, Any]) -> None:
        """Log the diagnostics with the stack's ``log_metric(name, value)`` (TRL)."""
        log = columns.get("log_metric")
        if not callable(log):
            raise ValueError(
                "log_metric was not passed to the reward: TRL's GRPOTrainer / RLOOTrainer "
                "pass it (trl >= 1.16); outside a trainer call .metrics(...)"
            )
        for name, value in self.named(batch).items():
            log(name, value)


def truth_metrics(reward: Any, batch: Batch, truth_column: str, trained: int | None) -> VoteMetrics:
    """:func:`vote_metrics` of a batch's replies against the truth column: each
    prompt's replies and its truth grouped in one row, truth last, with ``reward``'s
    answer options (``unparseable``, ``equivalence``, ``timeout``, ``processes``) and
    library (``reward.run``)."""
    groups = batch.groups()
    truths = [
        label_text(value, b, truth_column, reward.unparseable)
        for b, value in enumerate(batch.column(truth_column))
    ]
    ids, num_answers = zero_text.group_answers(
        [[*group, truth] for group, truth in zip(groups, truths, strict=True)],
        unparseable=reward.unparseable,
        equivalence=reward.equivalence,
        timeout=reward.timeout,
        processes=reward.processes,
    )
    size = batch.num_generations
    answers = np.ascontiguousarray(ids[:, :size])
    truth = np.ascontiguousarray(ids[:, size])
    out: VoteMetrics = reward.run("vote_metrics", answers, truth, num_answers, trained=trained)
    return out


def named_truth_metrics(
    reward: Any, batch: Batch, truth_column: str, trained: int | None, prefix: str
) -> dict[str, float]:
    """:func:`truth_metrics` by their logged names, ``prefix + name``."""
    m = truth_metrics(reward, batch, truth_column, trained)
    values = floats(np.array([m.label_accuracy, m.reward_accuracy, m.majority_ratio, m.maj_at_k]))
    names = [
        "label_accuracy",
        "reward_accuracy",
        "majority_ratio",
        f"maj@{trained or batch.num_generations}",
    ]
    return {prefix + name: value for name, value in zip(names, values, strict=True)}
