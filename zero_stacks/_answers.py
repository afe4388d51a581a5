"""From completion texts to the integer / bool arrays the vote rewards take.

Everything here is :mod:`zero_text`: answer ids (:func:`zero_text.group_answers`),
whether a reply carries an answer at all (the same function's ``unparseable``
policy decides), frozen labels and the format checks.
"""

from __future__ import annotations

import dataclasses
import numbers
from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np

import zero_text

__all__ = [
    "FORMATS",
    "Answers",
    "Equivalence",
    "FormatCheck",
    "check_format",
    "format_flags",
    "frozen_answers",
    "online_answers",
    "parsed",
]

Equivalence = Literal["exact", "math"] | Callable[[str, str], bool]
FormatCheck = Literal["r_zero", "mm_zero"] | Callable[[Sequence[str]], Any]

#: The named format checks of the solver's format term.
FORMATS: dict[str, Callable[[Sequence[str]], np.ndarray]] = {
    "r_zero": zero_text.r_zero_solver_format_ok,
    "mm_zero": zero_text.mm_zero_solver_format_ok,
}


@dataclasses.dataclass(frozen=True)
class Answers:
    """Answer ids of ``B`` groups of ``G`` replies.

    ``ids``: int64 ``[B, G]`` in ``[0, num_answers)``; ``answered``: bool ``[B]``,
    the group holds at least one parsed answer; ``labels``: int64 ``[B]`` ids of
    the frozen labels in the same namespace, or ``None`` (labels voted online).
    """

    ids: np.ndarray
    num_answers: int
    answered: np.ndarray
    labels: np.ndarray | None = None


#: A reply without an answer under every policy (an empty box), cheap to read.
_NO_ANSWER = "\\boxed{}"


def parsed(texts: Sequence[str], unparseable: Any) -> np.ndarray:
    """bool ``[n]``: which texts carry an answer, as :func:`zero_text.group_answers`
    decides under the policy ``unparseable``.

    ``"distinct"`` and ``"bucket"`` read the same answers (a complete box, not
    empty once normalised); ``"r_zero"`` reads them with R-Zero's extractor, for
    which a missing box is the answer ``"None"`` and only an empty box is no
    answer.  The policy's own rule is used, not a copy of it: each text is grouped
    after an empty box, and ``"distinct"`` and ``"r_zero"`` number a reply without
    an answer after every answer of its row, so the empty box gets id 1 exactly
    when the text has an answer (``"bucket"`` is probed as ``"distinct"``, whose
    answers it shares).
    """
    if not texts:
        return np.zeros(0, dtype=bool)
    probe: Any = "distinct" if unparseable == "bucket" else unparseable
    ids, _ = zero_text.group_answers([[_NO_ANSWER, t] for t in texts], unparseable=probe)
    return np.asarray(ids[:, 0] == 1)


def online_answers(
    groups: Sequence[Sequence[str]],
    unparseable: Any,
    equivalence: Equivalence,
    *,
    timeout: float = 1.0,
    processes: int = 1,
) -> Answers:
    """Ids of each group's answers, numbered by first appearance (the vote's ids).

    ``timeout`` and ``processes`` go to :func:`zero_text.group_answers` (they act
    with ``equivalence="math"``: seconds per math-verify step, helper processes)."""
    ids, num_answers = zero_text.group_answers(
        groups,
        unparseable=unparseable,
        equivalence=equivalence,
        timeout=timeout,
        processes=processes,
    )
    flat = [t for group in groups for t in group]
    answered = np.asarray(parsed(flat, unparseable).reshape(ids.shape).any(axis=1))
    return Answers(ids, num_answers, answered)


def label_text(value: object, row: int, name: str, unparseable: Any) -> str:
    """A frozen label as a boxed answer: ``"4"``, ``4`` or text with ``\\boxed{4}``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (str, numbers.Integral)):
        raise TypeError(
            f"column {name!r} must hold answer strings (or ints), "
            f"got {type(value).__name__} for prompt {row}"
        )
    text = str(value)
    inner = zero_text.extract_boxed(text)
    answer = zero_text.normalize_answer(text if inner is None else inner)
    boxed = "\\boxed{" + answer + "}"
    if not answer or not parsed([boxed], unparseable)[0]:
        raise ValueError(f"column {name!r} has no usable answer for prompt {row}: {value!r}")
    return boxed


def frozen_answers(
    groups: Sequence[Sequence[str]],
    labels: Sequence[Any],
    name: str,
    unparseable: Any,
    equivalence: Equivalence,
    *,
    timeout: float = 1.0,
    processes: int = 1,
) -> Answers:
    """Ids of the replies and of each group's frozen label, in one namespace.

    Each group is prefixed with its label (as ``\\boxed{label}``), so that the
    label and the replies are compared with one equivalence; the prefix's id is
    the label.  ``timeout`` / ``processes`` as in :func:`online_answers`.
    """
    boxed = [label_text(v, b, name, unparseable) for b, v in enumerate(labels)]
    ids, num_answers = zero_text.group_answers(
        [[label, *group] for label, group in zip(boxed, groups, strict=True)],
        unparseable=unparseable,
        equivalence=equivalence,
        timeout=timeout,
        processes=processes,
    )
    flat = [t for group in groups for t in group]
    replies = np.ascontiguousarray(ids[:, 1:])
    answered = np.asarray(parsed(flat, unparseable).reshape(replies.shape).any(axis=1))
    return Answers(replies, num_answers, answered, np.ascontiguousarray(ids[:, 0]))


def check_format(check: object) -> FormatCheck:
    """``"r_zero"``, ``"mm_zero"`` or a callable ``texts -> bool [n]``."""
    if isinstance(check, str):
        if check not in FORMATS:
            raise ValueError(f'format must be "r_zero", "mm_zero" or a callable, got {check!r}')
        return check  # type: ignore[return-value]
    if not callable(check):
        raise TypeError(f"format must be a name or a callable, got {type(check).__name__}")
    return check


def format_flags(check: FormatCheck, texts: Sequence[str]) -> np.ndarray:
    """bool ``[n]`` format flags of ``texts``."""
    flags = np.asarray(FORMATS[check](texts) if isinstance(check, str) else check(list(texts)))
    if flags.dtype != np.bool_ or flags.shape != (len(texts),):
        raise ValueError(
            f"format callable must return bool [{len(texts)}], "
            f"got {flags.dtype} {list(flags.shape)}"
        )
    return flags


def cluster_keys(texts: Sequence[str], valid: np.ndarray) -> list[str]:
    """What :func:`zero_text.bleu_clusters` clusters: each well-formed output's
    ``<question>``, and ``""`` for a malformed one, which is then alone (published R-Zero
    uses ``""``, G-Zero a fixed key): it never joins, nor raises the share of, a
    well-formed question's cluster."""
    return [
        (zero_text.extract_tag(t, "question") or "") if ok else ""
        for t, ok in zip(texts, valid, strict=True)
    ]
