"""The R-Zero challenger reward as a stack reward (stack-neutral part)."""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import zero_text
from zero_stacks._answers import Equivalence, cluster_keys, online_answers
from zero_stacks._backend import floats
from zero_stacks._batch import Batch
from zero_stacks._checks import (
    check_answer_options,
    check_callable,
    check_count,
    check_threshold,
)
from zero_stacks.base import StackReward, Steps, run_steps

__all__ = ["ChallengerReward", "Solver"]

#: ``solver(questions, k)``: ``k`` sampled reply strings for each question.
Solver = Callable[[list[str], int], Sequence[Sequence[str]]]


def _replies(replies: object, questions: list[str], k: int) -> list[list[str]]:
    if isinstance(replies, (str, bytes)) or not isinstance(replies, Sequence):
        raise TypeError(
            f"solver must return a list of {len(questions)} lists of {k} replies, "
            f"got {type(replies).__name__}"
        )
    if len(replies) != len(questions):
        raise ValueError(
            f"solver returned {len(replies)} rows of replies for {len(questions)} questions"
        )
    rows = []
    for i, row in enumerate(replies):
        if isinstance(row, (str, bytes)) or not isinstance(row, Sequence) or len(row) != k:
            raise ValueError(f"solver must return {k} replies per question; row {i} is {row!r}")
        for j, reply in enumerate(row):
            if not isinstance(reply, str):
                raise TypeError(
                    f"solver reply [{i}][{j}] must be a str, got {type(reply).__name__}"
                )
        rows.append(list(row))
    return rows


class ChallengerReward(StackReward):
    """R-Zero challenger reward: questions the current solver is unsure about.

    Completions are proposed questions, ``<question>...</question>`` plus a
    ``\\boxed{}`` answer (:func:`zero_text.r_zero_challenger_format_ok`).  For the
    well-formed ones, ``solver(questions, num_samples)`` returns ``num_samples``
    reply strings per question (your current solver model, sampled); their answers
    are grouped (:func:`zero_text.group_answers`; ``unparseable``,
    ``equivalence`` and, for ``equivalence="math"``, ``timeout`` and ``processes``
    as there) and their majority share is the consistency ``p``
    (:func:`consensus`).  Replies without any parsed answer give ``p = 0`` (no
    label), as in R-Zero when every box is empty.

    The reward is :func:`challenger_rewards`: ``1 - 2|p - 1/2|`` minus
    ``strength`` times the share of the call's questions in the question's BLEU
    cluster (:func:`zero_text.bleu_clusters`, ``threshold`` 0.5 as published),
    floored at 0, and 0 for malformed outputs (not sent to the solver; they stay in
    the cluster denominator, each in a cluster of its own, as in published R-Zero, so
    they never raise a well-formed question's share).
    """

    __name__ = "zero_challenger"

    solver: Solver
    num_samples: int
    strength: float
    threshold: float
    unparseable: Any
    equivalence: Equivalence
    timeout: float
    processes: int

    def __init__(
        self,
        solver: Solver,
        num_generations: int | None = None,
        *,
        num_samples: int = 10,
        strength: float = 1.0,
        threshold: float = 0.5,
        unparseable: Any = "distinct",
        equivalence: Equivalence = "exact",
        timeout: float = 1.0,
        processes: int = 1,
    ) -> None:
        super().__init__(num_generations)
        check_callable(solver, "solver", "(questions, k) -> replies")
        num_samples = check_count(num_samples, "num_samples")
        check_answer_options(unparseable, equivalence, timeout, processes)
        if isinstance(strength, bool) or not isinstance(strength, numbers.Real) or strength < 0:
            raise ValueError(f"strength must be a number >= 0, got {strength!r}")
        self._set(
            solver=solver,
            num_samples=num_samples,
            strength=float(strength),
            threshold=check_threshold(threshold),
            unparseable=unparseable,
            equivalence=equivalence,
            timeout=timeout,
            processes=processes,
        )

    def compute(self, batch: Batch) -> np.ndarray:
        return np.asarray(run_steps(self.compute_steps(batch, slice(0, len(batch.texts)))))

    def compute_steps(self, batch: Batch, part: slice) -> Steps:
        """The rewards of ``batch.texts[part]``: BLEU clusters over the whole batch, the
        solver asked about the well-formed questions of ``part`` only (a reward depends
        on its own question's consistency, and on the others only through clusters)."""
        texts = list(batch.texts)
        valid = zero_text.r_zero_challenger_format_ok(texts)
        questions = cluster_keys(texts, valid)
        clusters, _ = zero_text.bleu_clusters(questions, threshold=self.threshold)
        consistency = np.zeros(len(texts), dtype=np.float64)
        mine = np.zeros(len(texts), dtype=bool)
        mine[part] = True
        asked = np.flatnonzero(valid & mine)
        if asked.size:
            sent = [questions[i] for i in asked]
            replies = yield self.solver, (sent, self.num_samples)
            rows = _replies(replies, sent, self.num_samples)
            answers = online_answers(
                rows,
                self.unparseable,
                self.equivalence,
                timeout=self.timeout,
                processes=self.processes,
            )
            _, share = self.run("consensus", answers.ids, answers.num_answers)
            consistency[asked] = np.where(answers.answered, share, np.zeros_like(share))
        rewards = self.run(
            "challenger_rewards",
            consistency,
            clusters,
            valid,
            self.strength,
            num_clusters=int(clusters.max()) + 1,
        )
        log = batch.columns.get("log_metric")
        if callable(log):
            for flag in valid[part]:
                log("zero_challenger/format_rate", float(flag))
            for value in floats(consistency[asked]):
                log("zero_challenger/solver_share", value)
        return np.asarray(rewards)[part]
