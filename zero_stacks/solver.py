"""The R-Zero / MM-Zero solver reward as a stack reward (stack-neutral part)."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from zero_stacks._answers import (
    Equivalence,
    FormatCheck,
    check_format,
    format_flags,
    frozen_answers,
    online_answers,
    parsed,
)
from zero_stacks._backend import floats
from zero_stacks._batch import Batch
from zero_stacks._checks import check_answer_options, check_bool, check_unit
from zero_stacks.base import StackReward, Steps
from zero_stacks.votes import named_truth_metrics

__all__ = ["SolverReward"]


def _column_name(value: object, name: str) -> str | None:
    if value is not None and not (isinstance(value, str) and value):
        raise TypeError(f"{name} must be a column name (a non-empty str) or None, got {value!r}")
    return value


class SolverReward(StackReward):
    """R-Zero / MM-Zero solver reward: agreement with the prompt's pseudo-label.

    Each completion's ``\\boxed{}`` answer is read and grouped per prompt by
    :func:`zero_text.group_answers` (``unparseable``, ``equivalence`` and, for
    ``equivalence="math"``, ``timeout``, seconds per math-verify step, default 1,
    and ``processes``, helper processes working on groups in parallel, as there).
    A completion earns ``1[answer == label]`` (:func:`pseudo_rewards`), where the
    label is

    * voted online (``labels_column=None``, default): the majority of the prompt's
      own ``num_generations`` completions (:func:`consensus`; ties to the answer
      seen first);
    * frozen (``labels_column="answer"``): read from that dataset column, voted
      earlier as R-Zero does; a value may be ``"4"``, ``4`` or text with a
      ``\\boxed{}``; an empty or unparseable label is a ``ValueError``.

    A group in which no completion has a parsed answer gets 0 for all its
    completions (no label exists; GRPO gives it zero advantage).  What counts as
    parsed is the ``unparseable`` policy's: a complete, non-empty box for
    ``"distinct"`` (default) and ``"bucket"``.  ``"r_zero"`` reproduces R-Zero's
    published vote, in which a missing box is the answer ``"None"``, which can win
    and be paid; only a group of empty boxes has no answer there (R-Zero: no label).

    ``alpha`` (``None``: no format term) adds MM-Zero's format term,
    ``alpha * 1[answer == label] + (1 - alpha) * format_ok``, computed by
    :func:`solver_rewards` (``1 - alpha`` is exact in decimal: ``alpha=0.9`` gives
    0.1); ``format`` is the check: ``"r_zero"`` (``<think>...</think>`` then a box),
    ``"mm_zero"`` (think block, then only the box) or a callable
    ``texts -> bool [n]``.  With frozen labels the same sum is
    :func:`solver_rewards_frozen` against the given labels.

    ``band=True`` keeps R-Zero's informative band ``low <= p <= high``
    (:func:`curriculum_mask`, both edges kept): prompts outside get 0 for every
    completion.  ``p`` is the online vote share (:func:`consensus`) or, with frozen
    labels, the ``consistency_column`` value the label was frozen with (required
    then).

    ``unscored`` is what the completions of a group the reward does not score (no
    parsed answer, or outside the band) get: ``0.0`` (default), or ``None`` in TRL,
    which leaves them out of its group baseline and logged means, as for any reward
    returning None.

    Where the stack passes ``log_metric`` (TRL), the reward logs its diagnostics
    under ``"zero_solver/..."``: ``parse_rate`` (share of completions with a parsed
    answer), ``vote_share`` (the online vote's majority share), ``band_kept`` (share
    of completions in groups inside the band, with ``band=True``) and, when
    ``truth_column`` names a dataset column with the true answers (monitoring only;
    never rewarded), TTRL's ``label_accuracy``, ``reward_accuracy``,
    ``majority_ratio`` and ``maj@G`` of the online vote (:func:`vote_metrics`, as
    :class:`VoteDiagnostics` computes them).

    The functions named are those of the stack's library (:mod:`zero_torch` for
    :mod:`zero_stacks.trl`, :mod:`zero_jax` for :mod:`zero_stacks.tunix`).
    """

    __name__ = "zero_solver"
    #: Whether the stack takes ``None`` for a reward (TRL does, Tunix does not).
    takes_none: ClassVar[bool] = False

    labels_column: str | None
    consistency_column: str | None
    unparseable: Any
    equivalence: Equivalence
    timeout: float
    processes: int
    band: bool
    low: float
    high: float
    alpha: float | None
    format: FormatCheck
    unscored: float | None
    truth_column: str | None

    def __init__(
        self,
        num_generations: int | None = None,
        *,
        labels_column: str | None = None,
        consistency_column: str | None = None,
        unparseable: Any = "distinct",
        equivalence: Equivalence = "exact",
        timeout: float = 1.0,
        processes: int = 1,
        band: bool = False,
        low: float = 0.25,
        high: float = 0.75,
        alpha: float | None = None,
        format: FormatCheck = "r_zero",
        unscored: float | None = 0.0,
        truth_column: str | None = None,
    ) -> None:
        super().__init__(num_generations)
        check_answer_options(unparseable, equivalence, timeout, processes)
        labels_column = _column_name(labels_column, "labels_column")
        consistency_column = _column_name(consistency_column, "consistency_column")
        band = check_bool(band, "band")
        low, high = check_unit(low, "low"), check_unit(high, "high")
        if low > high:
            raise ValueError(f"need low <= high, got low={low!r} > high={high!r}")
        if alpha is not None:
            alpha = check_unit(alpha, "alpha")
        format = check_format(format)
        truth_column = _column_name(truth_column, "truth_column")
        if unscored is None and not type(self).takes_none:
            raise ValueError(
                f"unscored=None: {type(self).__module__} passes rewards to a stack that "
                "needs a number for every completion; use unscored=0.0"
            )
        if unscored is not None and (
            isinstance(unscored, bool) or not isinstance(unscored, (int, float)) or unscored != 0
        ):
            raise ValueError(f"unscored must be 0.0 or None, got {unscored!r}")
        if band and labels_column is not None and consistency_column is None:
            raise ValueError(
                "band=True with frozen labels (labels_column) needs consistency_column, "
                "the vote share each label was frozen with"
            )
        self._set(
            labels_column=labels_column,
            consistency_column=consistency_column,
            unparseable=unparseable,
            equivalence=equivalence,
            timeout=timeout,
            processes=processes,
            band=band,
            low=low,
            high=high,
            alpha=alpha,
            format=format,
            unscored=None if unscored is None else 0.0,
            truth_column=truth_column,
        )

    def compute(self, batch: Batch) -> np.ndarray:
        return self._scores(batch)[0]

    def compute_steps(self, batch: Batch, part: slice) -> Steps:
        """The rewards of ``batch.texts[part]``, from the groups it overlaps only (a
        group's rewards depend on that group alone), and their diagnostics."""
        size = batch.num_generations
        first, stop = part.start // size, -(-part.stop // size)  # the groups part overlaps
        sub = batch.part(slice(first, stop))
        values, keep, share = self._scores(sub)
        offset = first * size
        mine = slice(part.start - offset, part.stop - offset)
        kept = np.repeat(keep, size)[mine]
        log = batch.columns.get("log_metric")
        if callable(log):
            self._log(log, sub, mine, kept, share)
            if self.truth_column is not None and part.start == 0:  # once, whole batch
                named = named_truth_metrics(self, batch, self.truth_column, None, "zero_solver/")
                for name, value in named.items():
                    log(name, value)
        return values.reshape(-1)[mine], kept
        yield  # pragma: no cover  (no callable to request)

    def _log(
        self, log: Any, sub: Batch, mine: slice, kept: np.ndarray, share: np.ndarray | None
    ) -> None:
        """Per-completion diagnostics of ``sub.texts[mine]``; the stack averages them
        (TRL: over the logging step and its processes)."""
        size = sub.num_generations
        for flag in parsed(sub.texts[mine], self.unparseable):
            log("zero_solver/parse_rate", float(flag))
        if share is not None:
            for value in floats(np.repeat(share, size)[mine]):
                log("zero_solver/vote_share", value)
        if self.band:
            for flag in kept:
                log("zero_solver/band_kept", float(flag))

    def finish(self, values: Any) -> list[float | None]:
        scores, kept = values
        out: list[float | None] = list(floats(scores))
        if self.unscored is None:
            out = [v if k else None for v, k in zip(out, kept, strict=True)]
        return out

    def _scores(self, batch: Batch) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """float ``[B, G]`` rewards (0 in the groups not scored), bool ``[B]`` which
        groups are scored, and the online vote share ``[B]`` (None with frozen labels)."""
        groups = batch.groups()
        if self.labels_column is None:
            answers = online_answers(
                groups,
                self.unparseable,
                self.equivalence,
                timeout=self.timeout,
                processes=self.processes,
            )
        else:
            answers = frozen_answers(
                groups,
                batch.column(self.labels_column),
                self.labels_column,
                self.unparseable,
                self.equivalence,
                timeout=self.timeout,
                processes=self.processes,
            )
        ids, num_answers = answers.ids, answers.num_answers
        valid = None
        if self.alpha is not None:
            valid = format_flags(self.format, batch.texts).reshape(ids.shape)

        if answers.labels is None:
            labels, consistency = self.run("consensus", ids, num_answers)
            if valid is None:
                scores = self.run("pseudo_rewards", ids, labels)
            else:
                scores = self.run("solver_rewards", ids, valid, num_answers, self.alpha)
        else:
            consistency = None
            if self.band:
                consistency = np.array(
                    [
                        check_unit(v, f"column {self.consistency_column!r}")
                        for v in batch.column(self.consistency_column)  # type: ignore[arg-type]
                    ]
                )
            if valid is None:
                scores = self.run("pseudo_rewards", ids, answers.labels)
            else:
                scores = self.run("solver_rewards_frozen", ids, valid, answers.labels, self.alpha)

        share = None if answers.labels is not None else self.numpy(consistency)
        keep = answers.answered
        if self.band:
            inside = self.run("curriculum_mask", consistency, self.low, self.high)
            keep = keep & np.asarray(inside, dtype=bool)
        return np.asarray(np.where(keep[:, None], scores, np.zeros_like(scores))), keep, share
