"""The helper processes behind ``equivalence="math"``: math-verify, one request at a time.

Started by :mod:`zero_text._mathpool` with ``python -c`` and the parent's
``sys.path``, in one of two ways:

* :func:`forkserver_main` (POSIX): imports math-verify, warms it up on a few
  typical answers, then forks one helper per ``fork`` message received on its
  control socket (the message carries the helper's socket), and kills its own
  children by PID on ``kill <pid>`` (it is their parent, so a PID it has not
  reaped cannot belong to anyone else). On ``quit``, or when the control
  socket closes (the parent exited, even without its exit handlers), it kills
  its children and exits. Fork from this single-threaded process takes
  milliseconds, so a helper ended at its time limit is replaced at once.
* :func:`main` (elsewhere): the process is itself one helper on stdin / stdout.

A helper speaks JSON lines:

* first it writes ``["ready", pid]``, or ``["error", kind, message]`` when
  math-verify cannot be imported;
* ``[seq, "read", answer, cpu, alarm]``: parse ``\\boxed{answer}`` (kept in a
  cache); replies ``[seq, "ok"]``, or ``[seq, "empty"]`` when nothing was
  parsed;
* ``[seq, "prep", answer, cpu, alarm]``: the same, then verify it once against the
  integer 7, a probe that makes SymPy evaluate it as a number (so an answer
  that cannot be evaluated runs over here, before it is compared with others);
* ``[seq, "cmp", a, b, cpu, alarm]``: replies ``[seq, true]`` when math-verify's
  ``verify`` accepts either direction (an empty parse, an error: false), with
  two shortcuts that give ``verify``'s own verdict (see :meth:`_Checker.cmp`);
* ``[seq, "forget", cpu, alarm]``: drop the cached answers (for benchmarks).

Each request arms two timers whose signals keep their default action (end the
process, even when the interpreter is stuck in C code): ``SIGPROF`` after
``cpu`` seconds of CPU time (the time limit proper: a loaded machine slows an
honest request down without making it fail) and ``SIGALRM`` after ``alarm``
seconds of wall time (so a helper whose parent is gone cannot run on). The
parent sees the helper end, or ends it at its own wall-clock deadline. An
idle helper exits when its input closes. SIGINT is ignored: the parent owns
the helpers' lives.
"""

from __future__ import annotations

import json
import logging
import math
import os
import signal
import socket
import sys
import warnings
from collections.abc import Callable
from typing import IO, Any

__all__ = ["CONTROL_MESSAGE", "forkserver_main", "main"]

CONTROL_MESSAGE = 32  # bytes per control message (padded), so a stream keeps boundaries
_CACHE_LIMIT = 20_000  # parsed answers kept; cleared when full
_APART = 1e-5  # two real values further apart than this (and relatively than the next)
_APART_RELATIVE = 1e-9  # are never equal for math-verify: see _Checker.apart
_PROBE = "7"  # read as \boxed{7}, like every answer
_WARM_UP = ("\\frac{1}{2}", "x^2+1", "\\sqrt{2}", "(1,2)", "3.5", "x=3", "\\pi", "10\\%", "[0,1)")


def _write(out: IO[bytes], message: list[Any]) -> None:
    out.write((json.dumps(message) + "\n").encode())
    out.flush()


def _arm(cpu_seconds: float, wall_seconds: float) -> None:
    """End this process (default actions of SIGPROF / SIGALRM) after that much CPU / wall
    time; zeros disarm both."""
    if hasattr(signal, "setitimer"):
        signal.setitimer(signal.ITIMER_PROF, max(0.0, cpu_seconds))
        signal.setitimer(signal.ITIMER_REAL, max(0.0, wall_seconds))


class _Checker:
    """math-verify's parse (cached) and two-way verify, never raising."""

    def __init__(self) -> None:
        import math_verify
        import math_verify.parser
        import sympy  # type: ignore[import-untyped]

        self._parser = math_verify.parser
        self._sympy = sympy
        self._rational = sympy.Rational
        self._values: dict[str, list[float] | None] = {}
        self._parse = math_verify.parse
        self._verify = math_verify.verify
        self._cache: dict[str, list[Any]] = {}
        self.probe = self.parsed(_PROBE)

    def parsed(self, answer: str) -> list[Any]:
        value = self._cache.get(answer)
        if value is None:
            if len(self._cache) >= _CACHE_LIMIT:
                self._cache.clear()
            try:
                value = self._parse("\\boxed{" + answer + "}", parsing_timeout=None)
            except Exception:
                value = []
            self._cache[answer] = value
        return value

    def numbers(self, answer: str) -> list[float] | None:
        """Values of the parsed expressions of ``answer`` when each is a real number.

        Each expression must be a SymPy ``Expr`` without free symbols or
        percentages (``UnevaluatedExpr``) whose ``evalf(30)`` is a finite
        ``Float``; otherwise None. Cached per answer.
        """
        if answer in self._values:
            return self._values[answer]
        sympy = self._sympy
        out: list[float] | None = []
        for item in self.parsed(answer):
            if isinstance(item, str):
                continue
            try:
                if (
                    not isinstance(item, sympy.Expr)
                    or item.free_symbols
                    or item.has(sympy.UnevaluatedExpr)
                ):
                    out = None
                    break
                value = item.evalf(30)
                number = float(value) if value.is_Float else math.nan
            except Exception:
                number = math.nan
            if not math.isfinite(number):
                out = None
                break
            assert out is not None
            out.append(number)
        if len(self._values) >= _CACHE_LIMIT:
            self._values.clear()
        self._values[answer] = out
        return out

    def equal(self, pa: list[Any], pb: list[Any]) -> bool:
        for gold, target in ((pa, pb), (pb, pa)):
            try:
                if self._verify(gold, target, timeout_seconds=None):
                    return True
            except Exception:
                continue
        return False

    def forget(self) -> str:
        """Drop every cached answer, ours and math-verify's (benchmarks start cold)."""
        self._cache.clear()
        self._values.clear()
        for name in ("parse_latex_cached", "parse_expr_cached"):
            cached = getattr(self._parser, name, None)
            if cached is not None and hasattr(cached, "cache_clear"):
                cached.cache_clear()
        self.probe = self.parsed(_PROBE)
        return "ok"

    def read(self, answer: str) -> str:
        return "ok" if self.parsed(answer) else "empty"

    def prep(self, answer: str) -> str:
        value = self.parsed(answer)
        if not value:
            return "empty"
        try:
            self._verify(value, self.probe, timeout_seconds=None)
        except Exception:
            pass
        return "ok"

    def exact_rationals(self, pa: list[Any], pb: list[Any]) -> bool | None:
        """``verify``'s verdict, in either direction, when both parses hold only exact
        rationals and strings; None otherwise.

        ``verify(gold, target)`` is ``any`` over the pairs of the two lists: two
        SymPy ``Rational`` compare by ``==`` (first test of ``sympy_expr_eq``)
        and then only by tests exact on rationals (``Integer ==``, ``doit() ==``,
        ``simplify(a - b).is_zero``), so the result is their equality; two
        strings compare equal when they are equal and non-empty once stripped;
        a string and an expression never compare equal. All of that is
        symmetric, so one answer serves both directions. Covers the many
        answers math-verify reads as plain numbers (``12 \\text{ cm}``, ``\\text{12}``,
        ``1,000``, ``2\\frac{1}{2}``) without its cost.
        """
        rational = self._rational
        for item in (*pa, *pb):
            if not isinstance(item, (str, rational)):
                return None
        for x in pa:
            for y in pb:
                if isinstance(x, str) and isinstance(y, str):
                    if x.strip() and x.strip() == y.strip():
                        return True
                elif not isinstance(x, str) and not isinstance(y, str) and x == y:
                    return True
        return False

    def apart(self, a: str, b: str) -> bool:
        """True when ``verify`` must say False, in either direction, because ``a`` and
        ``b`` are real numbers clearly apart (and their strings differ).

        For two variable-free real expressions (see :meth:`numbers`) at least
        ``max(1e-5, 1e-9 * magnitude)`` apart, every test of ``sympy_expr_eq``
        fails: structural ``==`` (equal trees have equal values), the
        ``round(6)`` comparison when a ``Float`` is involved (values more than
        10**-6 apart round to different multiples of 10**-6), exact comparison of
        numbers, ``(a - b).evalf(15) == 0`` and ``simplify(a - b).is_zero``
        (both keep the nonzero value); relations, sets, tuples, matrices and
        symbols are excluded by construction. A string and an expression never
        compare equal, and two strings only when equal.
        """
        xs, ys = self.numbers(a), self.numbers(b)
        if not xs or not ys:
            return False
        for x in xs:
            for y in ys:
                if not abs(x - y) > max(_APART, _APART_RELATIVE * max(abs(x), abs(y))):
                    return False
        strings_a = [s.strip() for s in self.parsed(a) if isinstance(s, str)]
        strings_b = {s.strip() for s in self.parsed(b) if isinstance(s, str)}
        return not any(s and s in strings_b for s in strings_a)

    def cmp(self, a: str, b: str) -> bool:
        pa, pb = self.parsed(a), self.parsed(b)
        if not (pa and pb):
            return False
        shortcut = self.exact_rationals(pa, pb)
        if shortcut is not None:
            return shortcut
        if self.apart(a, b):
            return False
        return self.equal(pa, pb)


def _quiet() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    warnings.simplefilter("ignore")
    logging.disable(logging.CRITICAL)  # math-verify logs every parse failure and timeout


def _load(out: IO[bytes]) -> _Checker | None:
    try:
        return _Checker()
    except ImportError as exc:
        _write(out, ["error", "import", repr(exc)])
    except Exception as exc:  # a broken installation
        _write(out, ["error", "other", repr(exc)])
    return None


def _serve(checker: _Checker, rfile: IO[bytes], wfile: IO[bytes]) -> None:
    """Answer requests from ``rfile`` until it closes."""
    for name in ("SIGALRM", "SIGPROF"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    _write(wfile, ["ready", os.getpid()])
    handlers: dict[str, Callable[..., Any]] = {
        "forget": checker.forget,
        "read": checker.read,
        "prep": checker.prep,
        "cmp": checker.cmp,
    }
    for line in rfile:
        request = json.loads(line)
        _arm(float(request[-2]), float(request[-1]))
        reply = handlers[request[1]](*request[2:-2])
        _arm(0.0, 0.0)
        _write(wfile, [request[0], reply])


def main() -> None:
    """One helper on stdin / stdout."""
    _quiet()
    checker = _load(sys.stdout.buffer)
    if checker is not None:
        _serve(checker, sys.stdin.buffer, sys.stdout.buffer)


def _receive(control: socket.socket) -> tuple[bytes, list[int]]:
    """One control message and the descriptors sent with it; b"" at the end."""
    data, fds = b"", []
    while len(data) < CONTROL_MESSAGE:
        try:
            chunk, more, _flags, _addr = socket.recv_fds(
                control, CONTROL_MESSAGE - len(data), 4
            )
        except InterruptedError:
            continue
        if not chunk:
            for fd in more:
                os.close(fd)
            return b"", []
        data += chunk
        fds += more
    return data.rstrip(b" "), fds


def forkserver_main(control_fd: int) -> None:
    """Fork helpers on request (see the module docstring) until the control socket closes."""
    _quiet()
    report = sys.stdout.buffer
    checker = _load(report)
    if checker is None:
        return
    for text in _WARM_UP:  # import what SymPy loads lazily, once, before any fork
        checker.prep(text)
        checker.cmp(text, "2")
    report.write(b'["forkserver-ready"]\n')
    report.flush()
    control = socket.socket(fileno=control_fd)
    children: set[int] = set()

    def reap() -> None:
        for pid in list(children):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done = pid
            if done:
                children.discard(pid)

    while True:
        message, fds = _receive(control)
        if not message:
            break
        reap()
        words = message.split()
        if words[0] == b"quit":
            for fd in fds:
                os.close(fd)
            break
        if words[0] == b"fork" and fds:
            for extra in fds[1:]:
                os.close(extra)
            pid = os.fork()
            if pid == 0:  # the helper
                try:
                    control.close()
                    channel = socket.socket(fileno=fds[0])
                    _serve(checker, channel.makefile("rb"), channel.makefile("wb"))
                finally:
                    os._exit(0)
            children.add(pid)
            os.close(fds[0])
        elif words[0] == b"kill" and len(words) == 2:
            for fd in fds:
                os.close(fd)
            pid = int(words[1])
            if pid in children:
                try:
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                except (ProcessLookupError, ChildProcessError):
                    pass
                children.discard(pid)
        else:
            for fd in fds:
                os.close(fd)
    for pid in children:  # the parent is done (or gone): end every helper
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass


if __name__ == "__main__":  # pragma: no cover - run by the pool
    main()
