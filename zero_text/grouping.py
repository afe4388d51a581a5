"""Turning K solver replies per question into integer answer ids for the vote rewards."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np

from .answers import _published_boxed_content, extract_boxed, normalize_answer

__all__ = ["group_answers", "math_equivalent"]

Equivalence = Literal["exact", "math"] | Callable[[str, str], bool]
Unparseable = Literal["distinct", "bucket", "r_zero"]
_POLICIES = ("distinct", "bucket", "r_zero")

_MATH_EXTRA_HINT = (
    'equivalence="math" needs the math_verify package; install it with '
    'pip install "zero-rewards[math]" (or pip install math-verify)'
)


def _load_math_verify() -> tuple[Callable[..., Any], Callable[..., Any], type[Exception]]:
    try:
        import math_verify
        from math_verify.errors import TimeoutException
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(_MATH_EXTRA_HINT) from exc
    return math_verify.parse, math_verify.verify, TimeoutException


class _MathChecker:
    """``math_verify``-backed equivalence with per-call parse caching.

    Each answer is parsed once, wrapped as ``\\boxed{answer}`` so that LaTeX
    (``\\frac{1}{2}``) and plain forms (``0.5``) both go through math_verify's
    LaTeX extractor. Two answers are equivalent when ``verify`` accepts either
    direction (it is not symmetric, e.g. for assignments such as ``x=3``
    versus ``3``). Any exception or timeout counts as "not equivalent".
    math_verify implements timeouts with ``SIGALRM``, which only works in the
    main thread; elsewhere they are switched off rather than failing.
    """

    def __init__(self) -> None:
        self._parse, self._verify, self._timeout_exc = _load_math_verify()
        self._cache: dict[str, list[Any]] = {}
        in_main = threading.current_thread() is threading.main_thread()
        self._timeout = 5 if in_main else None

    def _parsed(self, answer: str) -> list[Any]:
        if answer not in self._cache:
            try:
                value = self._parse("\\boxed{" + answer + "}", parsing_timeout=self._timeout)
            except (Exception, self._timeout_exc):
                value = []
            self._cache[answer] = value
        return self._cache[answer]

    def __call__(self, a: str, b: str) -> bool:
        pa, pb = self._parsed(a), self._parsed(b)
        if not pa or not pb:
            return False
        for gold, target in ((pa, pb), (pb, pa)):
            try:
                if self._verify(gold, target, timeout_seconds=self._timeout):
                    return True
            except (Exception, self._timeout_exc):
                continue
        return False


def math_equivalent(a: str, b: str) -> bool:
    """True when ``math_verify`` judges two answer strings equal (either direction).

    Convenience wrapper around the checker used by ``equivalence="math"``:
    ``math_equivalent("\\\\frac{1}{2}", "0.5")`` is True. Parse errors and
    timeouts give False. Raises ImportError naming the ``[math]`` extra when
    math_verify is missing, TypeError for non-string arguments.
    """
    if not isinstance(a, str) or not isinstance(b, str):
        raise TypeError("a and b must both be str")
    return normalize_answer(a) == normalize_answer(b) or _MathChecker()(
        normalize_answer(a), normalize_answer(b)
    )


def _validate_replies(replies: object) -> list[list[str]]:
    if isinstance(replies, (str, bytes)) or not isinstance(replies, Sequence):
        raise TypeError(
            "replies must be a sequence (B rows) of sequences (K replies) of str, "
            f"got {type(replies).__name__}"
        )
    rows: list[list[str]] = []
    for b, row in enumerate(replies):
        if isinstance(row, (str, bytes)) or not isinstance(row, Sequence):
            raise TypeError(
                f"replies[{b}] must be a sequence of str (one row of K replies), "
                f"got {type(row).__name__}"
            )
        row = list(row)
        for k, item in enumerate(row):
            if not isinstance(item, str):
                raise TypeError(f"replies[{b}][{k}] must be a str, got {type(item).__name__}")
        rows.append(row)
    if not rows:
        raise ValueError("replies must contain at least one row (B >= 1)")
    width = len(rows[0])
    if width == 0:
        raise ValueError("replies rows must contain at least one reply (K >= 1)")
    for b, row in enumerate(rows):
        if len(row) != width:
            raise ValueError(
                f"replies is ragged: row 0 has K={width} replies but row {b} has {len(row)}"
            )
    return rows


def group_answers(
    replies: Sequence[Sequence[str]],
    *,
    unparseable: Unparseable = "distinct",
    equivalence: Equivalence = "exact",
) -> tuple[np.ndarray, int]:
    """Assign each reply an answer id so that equal answers share an id.

    Every reply goes through :func:`zero_text.extract_boxed` and
    :func:`zero_text.normalize_answer`. A reply is *unparseable* when it has
    no complete box or its box is empty after normalisation (with
    ``unparseable="r_zero"``, the published extractor and its rules instead).

    Ids are per row and follow first appearance: the first answer of a row is
    0, the next answer not equivalent to an earlier one is 1, and so on. A
    downstream "smallest id wins" tie break therefore picks the answer seen
    first, matching the published majority vote (``max`` over an
    insertion-ordered dict of counts).

    Args:
        replies: B rows of K raw replies each (``list[list[str]]`` or any
            nested sequence); all rows must have the same K.
        unparseable: ``"distinct"`` (default) gives every unparseable reply a
            fresh id of its own, numbered after every parsed answer of the
            row, so it never forms a majority with anything and loses every
            tie: a row with any parsed answer is labelled with one (a row
            with none gets its first unparseable reply at ``p = 1 / K``).
            ``"bucket"`` puts all unparseable replies of a row under one shared
            id, created at the first such reply like any answer, so "no
            answer" can win the vote. A reply that boxes the word
            ``None`` is an ordinary answer under both.
            ``"r_zero"`` reproduces the vote of R-Zero's solver service
            (``vllm_service_init/start_vllm_server.py``): answers are read with
            the published extractor (mathruler's ``extract_boxed_content``:
            last literal ``\\boxed{``, every brace counted, stripped; then
            normalised as usual, but emptiness is judged before), which
            returns the string ``"None"`` for a missing or unclosed box, so
            those replies and a boxed ``None`` form one ordinary answer that
            can win; an empty box is skipped by the count but stays in the
            denominator, which here means ids after every real answer of its
            row (each empty box its own id), so with ``consensus`` (smallest id
            wins ties) it never wins and ``p = count / K`` as published. One
            case is not reproducible with ids: when all K replies are empty
            boxes R-Zero gives no label and ``p = 0``, while these ids
            (``0 .. K-1``) give ``p = 1 / K``. The answer comparison is still
            ``equivalence`` (R-Zero uses mathruler's ``grade_answer`` and also
            merges any two answers that both contain ``"no "``).
        equivalence: how two normalised answers are compared.
            ``"exact"``: string equality. ``"math"``: string equality or
            ``math_verify`` equivalence in either direction (see
            :func:`math_equivalent`; needs the ``[math]`` extra).
            A callable ``f(representative, candidate) -> bool`` plugs in your
            own checker; it receives normalised strings and its exceptions
            propagate. With ``"math"`` or a callable, answers are grouped
            greedily: each new answer is compared with the representatives
            (first member) of the existing groups in id order and joins the
            first match, otherwise it founds a new group. Equal strings always
            match without calling the checker.

    Returns:
        ``(ids, num_answers)``: ``ids`` is int64 [B, K] with values in
        ``[0, num_answers)``; ``num_answers`` is the largest number of
        distinct ids in any row (at least 1), the size to give one-hot or
        count tensors.

    Raises:
        TypeError: bad container or element types, or an unsupported type for
            ``equivalence``.
        ValueError: B == 0, K == 0, ragged rows, or an unknown
            ``unparseable`` / ``equivalence`` name.
        ImportError: ``equivalence="math"`` without math_verify installed.
    """
    if unparseable not in _POLICIES:
        raise ValueError(
            f'unparseable must be "distinct", "bucket" or "r_zero", got {unparseable!r}'
        )
    checker: Callable[[str, str], bool] | None
    if isinstance(equivalence, str):
        if equivalence == "exact":
            checker = None
        elif equivalence == "math":
            checker = _MathChecker()
        else:
            raise ValueError(
                f'equivalence must be "exact", "math" or a callable, got {equivalence!r}'
            )
    elif callable(equivalence):
        checker = equivalence
    else:
        raise TypeError(
            f'equivalence must be "exact", "math" or a callable, got {type(equivalence).__name__}'
        )
    rows = _validate_replies(replies)

    ids = np.empty((len(rows), len(rows[0])), dtype=np.int64)
    num_answers = 1
    for b, row in enumerate(rows):
        exact_ids: dict[str, int] = {}
        representatives: list[str] = []  # index = id of a parsed-answer group
        rep_ids: list[int] = []
        bucket_id: int | None = None
        skipped: list[int] = []  # columns numbered after every answer of the row
        next_id = 0
        for k, reply in enumerate(row):
            if unparseable == "r_zero":
                raw = _published_boxed_content(reply)
                if not raw:
                    skipped.append(k)
                    continue
                answer = normalize_answer(raw)
            else:
                boxed = extract_boxed(reply)
                answer = normalize_answer(boxed) if boxed is not None else ""
            if not answer and unparseable != "r_zero":
                if unparseable == "bucket":
                    if bucket_id is None:
                        bucket_id = next_id
                        next_id += 1
                    ids[b, k] = bucket_id
                else:
                    skipped.append(k)  # distinct ids after every parsed answer
                continue
            found = exact_ids.get(answer)
            if found is None and checker is not None:
                for rep, rep_id in zip(representatives, rep_ids, strict=True):
                    if checker(rep, answer):
                        found = rep_id
                        break
            if found is None:
                found = next_id
                next_id += 1
                representatives.append(answer)
                rep_ids.append(found)
            exact_ids[answer] = found
            ids[b, k] = found
        for k in skipped:
            ids[b, k] = next_id
            next_id += 1
        num_answers = max(num_answers, next_id)
    return ids, num_answers
