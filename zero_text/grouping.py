"""Turning K solver replies per question into integer answer ids for the vote rewards."""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Callable, Generator, Iterator, Sequence
from typing import Any, Literal

import numpy as np

from . import _mathpool
from ._fastmath import fast_equivalent, tame, unbounded
from ._mathpool import Job, Request, Result
from .answers import _published_boxed_content, extract_boxed, normalize_answer

__all__ = ["close_math_workers", "group_answers", "math_equivalent"]

Equivalence = Literal["exact", "math"] | Callable[[str, str], bool]
Unparseable = Literal["distinct", "bucket", "r_zero"]
_POLICIES = ("distinct", "bucket", "r_zero")

# Sentinels for replies without an answer: numbered after every answer of the row
# ("distinct" and R-Zero's empty box), or sharing one id ("bucket").
_SKIP = object()
_BUCKET = object()
Key = Any  # a normalised answer (str) or one of the sentinels

# A comparison is a generator: it may ask the math-verify helpers (yield a request,
# receive the result) and returns the verdict.
Compare = Callable[[str, str], Generator[Request, Result, bool]]


def _check_math_available() -> None:
    try:
        found = importlib.util.find_spec("math_verify") is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise ImportError(_mathpool._MATH_EXTRA_HINT)


#: The longest time limit used (about 11.6 days): a larger ``timeout`` means this.
_MAX_TIMEOUT = 1e6


def _check_limit(timeout: object) -> float:
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float, np.integer, np.floating)):
        raise TypeError(f"timeout must be a number of seconds, got {type(timeout).__name__}")
    try:
        value = float(timeout)
    except OverflowError:  # an int beyond every float: no practical limit
        return _MAX_TIMEOUT
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"timeout must be a finite number of seconds > 0, got {timeout!r}")
    return min(value, _MAX_TIMEOUT)  # timers and queue waits overflow near 1e10 s


def _check_processes(processes: object) -> int:
    if isinstance(processes, bool) or not isinstance(processes, (int, np.integer)):
        raise TypeError(f"processes must be an int, got {type(processes).__name__}")
    if processes < 1:
        raise ValueError(f"processes must be >= 1, got {processes}")
    return int(processes)


class _MathState:
    """What one call has learnt about its answers (shared by its rows).

    ``refused`` answers are compared by exact string only: the static guard
    flagged them, math-verify parsed nothing from them, or they ran over the
    time limit. ``guarded`` answers passed the guard; ``prepared`` ones were
    also parsed within the limit, and probed first unless they are tame (see
    :func:`zero_text._fastmath.tame`), so an answer that SymPy cannot evaluate
    runs over on its own rather than in a comparison. ``verdicts`` holds every
    pair math-verify has compared (the check is symmetric, so one per pair);
    ``strikes`` counts, per representative, comparisons that ran over: the
    newcomer is blamed first, and a representative at its second strike is
    refused too.
    """

    def __init__(self) -> None:
        self.guarded: set[str] = set()
        self.prepared: set[str] = set()
        self.refused: set[str] = set()
        self.verdicts: dict[tuple[str, str], bool] = {}
        self.strikes: dict[str, int] = {}

    def compare(self, rep: str, cand: str) -> Generator[Request, Result, bool]:
        verdict = fast_equivalent(rep, cand)
        if verdict is not None:
            return verdict
        if rep in self.refused or cand in self.refused:
            return False
        pair = (rep, cand) if rep < cand else (cand, rep)
        known = self.verdicts.get(pair)
        if known is not None:
            return known
        for answer in (rep, cand):
            if answer not in self.guarded:
                if unbounded(answer):
                    self.refused.add(answer)
                    return False
                self.guarded.add(answer)
        for answer in (rep, cand):
            if answer not in self.prepared:
                status = yield ("read" if tame(answer) else "prep", answer)
                if status != "ok":  # nothing parsed, or over the limit
                    self.refused.add(answer)
                    return False
                self.prepared.add(answer)
        equal = yield ("cmp", rep, cand)
        if equal is None:  # over the limit: not equivalent, and the newcomer is refused
            self.refused.add(cand)
            self.strikes[rep] = self.strikes.get(rep, 0) + 1
            if self.strikes[rep] >= 2:
                self.refused.add(rep)
            return False
        self.verdicts[pair] = bool(equal)
        return bool(equal)


def _calling(checker: Callable[[str, str], bool]) -> Compare:
    def compare(rep: str, cand: str) -> Generator[Request, Result, bool]:
        return bool(checker(rep, cand))
        yield  # pragma: no cover - makes this a generator that never asks

    return compare


def _row_ids(keys: list[Key], compare: Compare | None) -> Generator[Request, Result, list[int]]:
    """Greedy first-seen ids of one row; asks whatever ``compare`` asks."""
    ids = [0] * len(keys)
    exact_ids: dict[str, int] = {}
    representatives: list[tuple[str, int]] = []  # (first member, id) in id order
    bucket_id: int | None = None
    skipped: list[int] = []
    next_id = 0
    for k, key in enumerate(keys):
        if key is _SKIP:
            skipped.append(k)
            continue
        if key is _BUCKET:
            if bucket_id is None:
                bucket_id = next_id
                next_id += 1
            ids[k] = bucket_id
            continue
        found = exact_ids.get(key)
        if found is None and compare is not None:
            for rep, rep_id in representatives:
                if (yield from compare(rep, key)):
                    found = rep_id
                    break
        if found is None:
            found = next_id
            next_id += 1
            representatives.append((key, found))
        exact_ids[key] = found
        ids[k] = found
    for k in skipped:
        ids[k] = next_id
        next_id += 1
    return ids


def _finish_locally(job: Generator[Request, Result, Any]) -> Any:
    """Run a job that never asks the helpers; return its value."""
    try:
        request = next(job)
    except StopIteration as stop:
        return stop.value
    raise AssertionError(f"unexpected request {request!r}")  # pragma: no cover


def _run_math(
    jobs: list[Generator[Request, Result, Any]], *, timeout: float, processes: int
) -> list[Any]:
    """Values of ``jobs``; those that ask math-verify run on the helper processes.

    Each job is started here; one that finishes without a request (exact
    duplicates, the fast path, refused answers) never touches a process, and
    the pool is only started when some job needs it.
    """
    values: list[Any] = [None] * len(jobs)

    def wrap(i: int, job: Generator[Request, Result, Any]) -> Job:
        values[i] = yield from job

    def primed() -> Iterator[tuple[Job, Request]]:
        for i, job in enumerate(jobs):
            wrapped = wrap(i, job)
            try:
                request = next(wrapped)
            except StopIteration:
                continue
            yield wrapped, request

    pending = primed()
    first = next(pending, None)
    if first is not None:

        def chained() -> Iterator[tuple[Job, Request]]:
            yield first
            yield from pending

        _mathpool.run_jobs(chained(), processes=processes, limit=timeout)
    return values


def close_math_workers() -> None:
    """End the helper processes that ``equivalence="math"`` started (if any).

    They are otherwise kept for the next call and killed at interpreter exit;
    a later call starts new ones.
    """
    _mathpool.close_pool()


def math_equivalent(a: str, b: str, *, timeout: float = 1.0) -> bool:
    """True when two answers are equal after :func:`normalize_answer` or for math-verify.

    The check behind ``equivalence="math"`` (see :func:`group_answers` for the
    time limit, the fast path and the static guard):
    ``math_equivalent("\\\\frac{1}{2}", "0.5")`` is True. Parse errors, answers
    the guard refuses and steps over the ``timeout`` give False.

    Raises:
        TypeError: non-string arguments, or a non-numeric ``timeout``.
        ValueError: ``timeout`` not a finite number > 0.
        ImportError: math_verify is not installed (the ``[math]`` extra).
    """
    if not isinstance(a, str) or not isinstance(b, str):
        raise TypeError("a and b must both be str")
    limit = _check_limit(timeout)
    _check_math_available()
    na, nb = normalize_answer(a), normalize_answer(b)
    if na == nb:
        return True
    state = _MathState()
    (verdict,) = _run_math([state.compare(na, nb)], timeout=limit, processes=1)
    return bool(verdict)


def _as_rows(replies: object) -> list[list[Any]]:
    if isinstance(replies, np.ndarray):
        if replies.ndim != 2:
            raise ValueError(
                f"replies must be a 2-D array [B, K] of str, got shape {replies.shape}"
            )
        rows: list[list[Any]] = replies.tolist()
        return rows
    if isinstance(replies, (str, bytes)) or not isinstance(replies, Sequence):
        raise TypeError(
            "replies must be a sequence (B rows) of sequences (K replies) of str, "
            f"got {type(replies).__name__}"
        )
    out: list[list[Any]] = []
    for b, row in enumerate(replies):
        if isinstance(row, np.ndarray):
            if row.ndim != 1:
                raise ValueError(f"replies[{b}] must be 1-D (K replies), got shape {row.shape}")
            out.append(row.tolist())
            continue
        if isinstance(row, (str, bytes)) or not isinstance(row, Sequence):
            raise TypeError(
                f"replies[{b}] must be a sequence of str (one row of K replies), "
                f"got {type(row).__name__}"
            )
        out.append(list(row))
    return out


def _validate_replies(replies: object) -> list[list[str]]:
    rows = _as_rows(replies)
    for b, row in enumerate(rows):
        for k, item in enumerate(row):
            if not isinstance(item, str):
                raise TypeError(f"replies[{b}][{k}] must be a str, got {type(item).__name__}")
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


def _row_keys(row: list[str], unparseable: str) -> list[Key]:
    keys: list[Key] = []
    for reply in row:
        if unparseable == "r_zero":
            raw = _published_boxed_content(reply)
            keys.append(normalize_answer(raw) if raw else _SKIP)
            continue
        boxed = extract_boxed(reply)
        answer = normalize_answer(boxed) if boxed is not None else ""
        if answer:
            keys.append(answer)
        else:
            keys.append(_BUCKET if unparseable == "bucket" else _SKIP)
    return keys


def group_answers(
    replies: Sequence[Sequence[str]] | np.ndarray,
    *,
    unparseable: Unparseable = "distinct",
    equivalence: Equivalence = "exact",
    timeout: float = 1.0,
    processes: int = 1,
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
        replies: B rows of K raw replies each (``list[list[str]]``, any nested
            sequence, or a 2-D NumPy array of ``str``, dtype ``U`` or
            ``object``); all rows must have the same K.
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
        equivalence: how two normalised answers are compared. Answers are
            grouped greedily: each new answer (equal strings always match
            without a comparison) is compared with the representatives (first
            member) of the row's groups in id order and joins the first match,
            otherwise it founds a new group; so each distinct pair of a row is
            compared at most once.
            ``"exact"``: string equality.
            ``"math"``: math-verify (``parse`` of ``\\boxed{answer}``, then
            ``verify`` in either direction; needs the ``[math]`` extra), with
            the same ids as calling it on every such pair, but bounded and
            cheaper: plain numbers (integers, decimals with up to 6 places,
            integer fractions) are settled exactly where that provably gives
            math-verify's verdict; answers whose evaluation has no useful
            bound (towers of powers, huge exponents, factorials or literals,
            more than 1000 characters) are compared by exact string only;
            everything else runs in helper processes (see ``timeout``).
            A callable ``f(representative, candidate) -> bool`` plugs in your
            own checker, called in this thread; it receives normalised strings
            and its exceptions propagate.
        timeout: ``equivalence="math"`` only: the time limit, in seconds, of
            each step given to math-verify (reading a new answer, or comparing
            two), in any thread. It counts the CPU time of the helper process
            doing the step, so a loaded machine slows honest steps down without
            failing them, and a step may take at most ``timeout + max(timeout,
            1)`` seconds of wall time in all (just ``timeout`` where the
            platform has no CPU-time timers). A step over the limit is stopped
            by ending its helper process (a fresh one is forked in
            milliseconds) and counts as "not equivalent"; the answer that ran
            over (for a comparison, the newer one, and the representative too
            once a second comparison with it runs over, so that one slow answer
            cannot cost every later reply of its row the limit) is compared by
            exact string only for the rest of the call. Ids are deterministic
            unless a step lands near the limit. A ``timeout`` above 10**6 s
            is used as 10**6 s.
        processes: ``equivalence="math"`` only: helper processes, each working
            on one row at a time (rows in parallel, for large batches whose rows
            share few answers: each helper reads its rows' answers itself).
            They are forked by one more process that has math-verify loaded,
            reused by later calls, killed at interpreter exit or by
            :func:`zero_text.close_math_workers`. Calls from several threads
            are served one at a time.

    Returns:
        ``(ids, num_answers)``: ``ids`` is int64 [B, K] with values in
        ``[0, num_answers)``; ``num_answers`` is the largest number of
        distinct ids in any row (at least 1), the size to give one-hot or
        count tensors.

    Raises:
        TypeError: bad container or element types, or an unsupported type for
            ``equivalence``, ``timeout`` or ``processes``.
        ValueError: B == 0, K == 0, ragged rows, an array that is not 2-D, an
            unknown ``unparseable`` / ``equivalence`` name, ``timeout <= 0``
            or ``processes < 1``.
        ImportError: ``equivalence="math"`` without math_verify installed.
    """
    if unparseable not in _POLICIES:
        raise ValueError(
            f'unparseable must be "distinct", "bucket" or "r_zero", got {unparseable!r}'
        )
    limit = _check_limit(timeout)
    workers = _check_processes(processes)
    state: _MathState | None = None
    compare: Compare | None
    if isinstance(equivalence, str):
        if equivalence == "exact":
            compare = None
        elif equivalence == "math":
            _check_math_available()
            state = _MathState()
            compare = state.compare
        else:
            raise ValueError(
                f'equivalence must be "exact", "math" or a callable, got {equivalence!r}'
            )
    elif callable(equivalence):
        compare = _calling(equivalence)
    else:
        raise TypeError(
            f'equivalence must be "exact", "math" or a callable, got {type(equivalence).__name__}'
        )
    rows = _validate_replies(replies)

    jobs = [_row_ids(_row_keys(row, unparseable), compare) for row in rows]
    if state is not None:
        row_ids = _run_math(jobs, timeout=limit, processes=workers)
    else:
        row_ids = [_finish_locally(job) for job in jobs]
    ids = np.asarray(row_ids, dtype=np.int64).reshape(len(rows), len(rows[0]))
    num_answers = max(1, int(ids.max(initial=0)) + 1)
    return ids, num_answers
