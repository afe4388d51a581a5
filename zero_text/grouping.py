"""Turning K solver replies per question into integer answer ids for the vote rewards."""

from __future__ import annotations

import collections
import importlib.util
import math
import queue
import time
from collections.abc import Callable, Generator, Sequence
from concurrent.futures import CancelledError, Future
from typing import Any, Literal

import numpy as np

from . import _mathpool
from ._fastmath import fast_equivalent, plain_summary, summary_verdict, tame
from .answers import _published_boxed_content, extract_boxed, normalize_answer

__all__ = ["GroupedAnswers", "close_math_workers", "group_answers", "math_equivalent"]

Equivalence = Literal["exact", "math"] | Callable[[str, str], bool]
Unparseable = Literal["distinct", "bucket", "r_zero"]
_POLICIES = ("distinct", "bucket", "r_zero")

# Sentinels for replies without an answer: numbered after every answer of the row
# ("distinct" and R-Zero's empty box), or sharing one id ("bucket").
_SKIP = object()
_BUCKET = object()
Key = Any  # a normalised answer (str) or one of the sentinels

# A comparison is a generator: it may ask the helper processes (yield a request,
# receive the reply) and returns True, False or None (the newcomer is undecided).
Request = tuple[Any, ...]  # ("read", answer, probe) or ("cmp", a, b)
Compare = Callable[[str, str], Generator[Request, Any, bool | None]]
_CUT = object()  # the reply to a request cut off by the call's time budget


class GroupedAnswers(tuple[np.ndarray, int]):
    """What :func:`group_answers` returns: the pair ``(ids, num_answers)``, which unpacks as
    before, with the attribute ``cut_off``: how many replies were grouped as unparseable
    because math-verify could not decide them within the call's time budget (0 unless
    ``equivalence="math"`` met an answer that stalls)."""

    cut_off: int

    def __new__(cls, ids: np.ndarray, num_answers: int, cut_off: int = 0) -> GroupedAnswers:
        out = super().__new__(cls, (ids, num_answers))
        out.cut_off = cut_off
        return out

    @property
    def ids(self) -> np.ndarray:
        return self[0]

    @property
    def num_answers(self) -> int:
        return self[1]


def _check_math_available() -> None:
    try:
        found = importlib.util.find_spec("math_verify") is not None
        found = found and importlib.util.find_spec("pebble") is not None
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
    """One call's readings (:data:`zero_text._mathpool.Summary`, None when nothing parsed,
    or :data:`_CUT`) and verdicts, shared by its rows; ``undecided``: answers whose read or
    comparison (as the newcomer) was cut off, grouped as unparseable in every row."""

    def __init__(self) -> None:
        self.reads: dict[str, Any] = {}
        self.verdicts: dict[tuple[str, str], Any] = {}
        self.undecided: set[str] = set()
        self.batch: dict[str, tuple[Request, int]] = {}

    def read(self, answer: str) -> Generator[Request, Any, Any]:
        if answer not in self.reads and plain_summary(answer) is not None:
            self.reads[answer] = plain_summary(answer)
        if answer not in self.reads:  # rows run interleaved: set only once replied
            request, at = self.batch.get(answer, (("read", answer, not tame(answer)), -1))
            reply = yield request
            self.reads[answer] = reply[at] if at >= 0 and reply is not _CUT else reply
        if self.reads[answer] is _CUT:
            self.undecided.add(answer)
        return self.reads[answer]

    def read_first(self, answers: list[str]) -> list[Generator[Request, Any, Any]]:
        """Jobs that read tame ``answers`` in batches of 32, before any row asks for them."""
        batches = [tuple(answers[i : i + 32]) for i in range(0, len(answers), 32)]
        self.batch = {a: (("reads", *b), at) for b in batches for at, a in enumerate(b)}
        return [self.read(b[0]) for b in batches]

    def compare(self, rep: str, cand: str) -> Generator[Request, Any, bool | None]:
        verdict = fast_equivalent(rep, cand)
        if verdict is not None:
            return verdict
        if cand in self.undecided:
            return None
        sa = yield from self.read(rep)
        if rep in self.undecided or sa is None:
            return False
        sb = yield from self.read(cand)
        if cand in self.undecided:
            return None
        verdict = summary_verdict(sa, sb) if sb is not None else False
        if verdict is not None:
            return verdict
        pair = (rep, cand) if rep < cand else (cand, rep)
        if pair not in self.verdicts:
            self.verdicts[pair] = yield ("cmp", *pair)
        if self.verdicts[pair] is _CUT:
            self.undecided.add(cand)
            return None
        return bool(self.verdicts[pair])


def _calling(checker: Callable[[str, str], bool]) -> Compare:
    def compare(rep: str, cand: str) -> Generator[Request, Any, bool | None]:
        return bool(checker(rep, cand))
        yield  # pragma: no cover - makes this a generator that never asks

    return compare


def _groups(keys: list[Key], compare: Compare | None) -> Generator[Request, Any, dict[str, Any]]:
    """Greedy grouping of one row: each answer to its group's first member (_CUT when
    undecided); asks whatever ``compare`` asks."""
    group: dict[str, Any] = {}
    reps: list[str] = []
    for key in keys:
        if not isinstance(key, str) or key in group:
            continue
        found: Any = key
        if compare is not None:
            for rep in reps:
                verdict = yield from compare(rep, key)
                if verdict is None or verdict:
                    found = _CUT if verdict is None else rep
                    break
        group[key] = found
        if found is key:
            reps.append(key)
    return group


def _ids(labels: list[Key]) -> list[int]:
    """First-seen ids of a row's labels; one shared id for _BUCKET, each _SKIP one after all."""
    ids = [0] * len(labels)
    seen: dict[Any, int] = {}
    skipped = []
    for k, label in enumerate(labels):
        if label is _SKIP:
            skipped.append(k)
        else:
            ids[k] = seen.setdefault(label, len(seen))
    for n, k in enumerate(skipped):
        ids[k] = len(seen) + n
    return ids


def _finish(job: Generator[Request, Any, Any]) -> Any:
    """Run a job that never asks the helpers; return its value."""
    try:
        request = next(job)
    except StopIteration as stop:
        return stop.value
    raise AssertionError(f"unexpected request {request!r}")  # pragma: no cover


_WORK = {"read": _mathpool.read, "reads": _mathpool.read_all, "cmp": _mathpool.compare}


def _risky(request: Request) -> bool:
    return not all(tame(answer) for answer in request[1:] if isinstance(answer, str))


def _run_math(jobs: list[Generator[Request, Any, Any]], limit: float, processes: int) -> list[Any]:
    """Values of ``jobs``, whose requests (each run once) go to the helper processes: tame
    ones (:func:`tame`) ``processes`` at a time, the others one at a time beside them on
    the extra worker, with one deadline ``limit`` seconds after the first is sent; then
    every such request not done is cut off (:data:`_CUT`, its worker killed).
    """
    values: list[Any] = [None] * len(jobs)
    waiting: dict[Request, list[int]] = {}
    replies: dict[Request, Any] = {}
    tame_running: dict[Future[Any], Request] = {}
    risky_running: dict[Future[Any], Request] = {}
    deadline: float | None = None  # of the risky requests, set when the first is sent
    deferred: list[Request] = []  # risky
    queued: collections.deque[Request] = collections.deque()  # tame
    finished: queue.SimpleQueue[Future[Any]] = queue.SimpleQueue()
    spent = False

    def submit(request: Request) -> None:
        work, args = _WORK[request[0]], request[1:]
        batch = request[0] == "reads"  # each answer of a batch has its own limit
        future = _mathpool.get_pool(processes).schedule(
            work, (args,) if batch else args, timeout=limit * (len(args) if batch else 1)
        )
        (risky_running if _risky(request) else tame_running)[future] = request
        future.add_done_callback(finished.put)

    def step(i: int, reply: Any) -> None:
        while True:
            try:
                request = jobs[i].send(reply)
            except StopIteration as stop:
                values[i] = stop.value
                return
            reply = replies.get(request, _CUT if spent and _risky(request) else None)
            if request not in replies and reply is None:
                break
        if request not in waiting:
            waiting[request] = []
            (deferred if _risky(request) else queued).append(request)
        waiting[request].append(i)

    def finish(request: Request, reply: Any) -> None:
        replies[request] = reply
        for i in waiting.pop(request):
            step(i, reply)

    with _mathpool._LOCK:
        for i in range(len(jobs)):
            step(i, None)
        while tame_running or risky_running or deferred or queued:
            while queued and len(tame_running) < processes:
                submit(queued.popleft())
            if deferred and not risky_running:  # one at a time, on the spare worker
                submit(deferred.pop(0))
            if risky_running and deadline is None:  # the call's one budget starts
                deadline = time.monotonic() + limit
            end = deadline if risky_running and deadline is not None else math.inf
            timeout = min(end - time.monotonic(), 2 * limit)
            try:
                done = [finished.get(timeout=max(timeout, 0.0))]
            except queue.Empty:
                done = []
            while not finished.empty():
                done.append(finished.get())
            for future in done:
                request = tame_running.pop(future, ()) or risky_running.pop(future, ())
                if not request:  # cut off already
                    continue
                try:
                    reply = future.result()
                except (TimeoutError, CancelledError, OSError):  # over the limit, crashed
                    reply, spent = _CUT, True
                finish(request, reply)
            spent = spent or bool(risky_running) and time.monotonic() >= end
            if spent:  # cut every risky request not done; pebble kills the running ones
                for cancelled in risky_running:
                    cancelled.cancel()
                cut = [*risky_running.values(), *deferred]
                risky_running.clear()
                deferred.clear()
                for request in cut:
                    finish(request, _CUT)
    return values


def close_math_workers() -> None:
    """End the helper processes that ``equivalence="math"`` started (if any).

    They are otherwise kept for the next call and stopped at interpreter exit;
    a later call starts new ones.
    """
    _mathpool.close_pool()


def math_equivalent(a: str, b: str, *, timeout: float = 1.0) -> bool:
    """True when two answers are equal after :func:`normalize_answer` or for math-verify.

    The check behind ``equivalence="math"`` (see :func:`group_answers` for the
    time limit and the fast path): ``math_equivalent("\\\\frac{1}{2}", "0.5")`` is
    True. Parse errors and steps over the ``timeout`` give False.

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
    (verdict,) = _run_math([state.compare(na, nb)], limit, 1)
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
) -> GroupedAnswers:
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
            math-verify's verdict; everything else runs in helper processes
            (see ``timeout``), whose reading of an answer also settles the
            pairs whose parses are exact rationals or clearly apart numbers.
            A callable ``f(representative, candidate) -> bool`` plugs in your
            own checker, called in this thread; it receives normalised strings
            and its exceptions propagate.
        timeout: ``equivalence="math"`` only: the time limit, in seconds
            of wall time, of each step given to math-verify (reading a new
            answer, or comparing two), in any thread, and the call's budget
            for steps that stall. Every step of a call is queued at once on
            the helper processes; a step over the limit is stopped by killing
            its helper (pebble forks a ready replacement). Steps that involve
            an answer with powers, factorials or other constructs SymPy may not
            finish (Math-Verify issue #65's towers; see
            :func:`zero_text._fastmath.tame`) run one at a time on an extra
            helper, beside the others, and share one deadline: ``timeout``
            seconds after the first of them starts, every such step not done is
            cut off, so a call takes at most its normal time plus about one
            ``timeout`` however many replies stall. An answer whose reading, or whose
            comparison as the newer answer, was cut off or stopped is grouped
            as ``unparseable`` says, in every row of the call; the result's
            ``cut_off`` counts those replies. Ids are deterministic unless a
            step lands near the limit. A ``timeout`` above 10**6 s is used as
            10**6 s.
        processes: ``equivalence="math"`` only: helper processes working on
            the call's steps in parallel (the pool keeps one more, idle, to take
            over at once from a helper killed at the limit). They are started (from the
            ``forkserver`` context, never a fork of this process) by the first
            call that needs them, reused by later calls with the same
            ``processes``, stopped at interpreter exit or by
            :func:`zero_text.close_math_workers`. As with ``multiprocessing``,
            a script needs an ``if __name__ == "__main__":`` guard, and a
            daemonic process cannot start them. Calls from several threads are
            served one at a time.

    Returns:
        A :class:`GroupedAnswers`, the pair ``(ids, num_answers)``: ``ids`` is
        int64 [B, K] with values in ``[0, num_answers)``; ``num_answers`` is the
        largest number of distinct ids in any row (at least 1), the size to give
        one-hot or count tensors; its attribute ``cut_off`` counts the replies
        grouped as unparseable because math-verify could not decide them in time.

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

    keys = [_row_keys(row, unparseable) for row in rows]
    jobs = [_groups(row, compare) for row in keys]
    if state is not None:  # read the tame answers first, so a stall cannot delay them
        needed: set[str] = set()
        for row in keys:  # the pairs greedy compares if math-verify finds no match
            reps: list[str] = []
            for key in dict.fromkeys(k for k in row if isinstance(k, str)):
                found = [r for r in reps if fast_equivalent(r, key) is None]
                needed.update([*found, key] if found else [])
                if not any(fast_equivalent(r, key) for r in reps):
                    reps.append(key)
        needed = {k for k in needed if tame(k) and plain_summary(k) is None}
        first = state.read_first(sorted(needed))
        groups = _run_math(first + jobs, limit, workers)[len(first) :]
    else:
        groups = [_finish(job) for job in jobs]
    cut = _BUCKET if unparseable == "bucket" else _SKIP
    undecided = state.undecided if state is not None else set()
    labels = [
        [k if not isinstance(k, str) else group[k] if k not in undecided else _CUT for k in row]
        for row, group in zip(keys, groups, strict=True)
    ]
    cut_off = sum(label is _CUT for row in labels for label in row)
    labels = [[cut if label is _CUT else label for label in row] for row in labels]
    ids = np.asarray([_ids(row) for row in labels], dtype=np.int64).reshape(len(rows), -1)
    num_answers = max(1, int(ids.max(initial=0)) + 1)
    return GroupedAnswers(ids, num_answers, cut_off)
