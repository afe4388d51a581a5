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
* ``[seq, "prep", answer, alarm]``: parse ``\\boxed{answer}`` (kept in a cache),
  then compare it once with the integer 7, a probe that makes SymPy evaluate
  it as a number; replies ``[seq, "ok"]``, or ``[seq, "empty"]`` when nothing
  was parsed;
* ``[seq, "cmp", a, b, alarm]``: replies ``[seq, true]`` when math-verify's
  ``verify`` accepts either direction (an empty parse, an error: false).

Each request arms ``SIGALRM`` at its default action for ``alarm`` seconds, so
a request still running then ends the process even when the parent is gone
or the interpreter is stuck in C code; the parent normally ends it sooner, at
its own time limit. An idle helper exits when its input closes. SIGINT is
ignored: the parent owns the helpers' lives.
"""

from __future__ import annotations

import json
import logging
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
_PROBE = "7"  # read as \boxed{7}, like every answer
_WARM_UP = ("\\frac{1}{2}", "x^2+1", "\\sqrt{2}", "(1,2)", "3.5", "x=3", "\\pi", "10\\%", "[0,1)")


def _write(out: IO[bytes], message: list[Any]) -> None:
    out.write((json.dumps(message) + "\n").encode())
    out.flush()


def _arm(seconds: float) -> None:
    if hasattr(signal, "setitimer"):
        signal.setitimer(signal.ITIMER_REAL, max(0.0, seconds))


class _Checker:
    """math-verify's parse (cached) and two-way verify, never raising."""

    def __init__(self) -> None:
        import math_verify

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

    def equal(self, pa: list[Any], pb: list[Any]) -> bool:
        for gold, target in ((pa, pb), (pb, pa)):
            try:
                if self._verify(gold, target, timeout_seconds=None):
                    return True
            except Exception:
                continue
        return False

    def prep(self, answer: str) -> str:
        value = self.parsed(answer)
        if not value:
            return "empty"
        self.equal(value, self.probe)
        return "ok"

    def cmp(self, a: str, b: str) -> bool:
        pa, pb = self.parsed(a), self.parsed(b)
        return bool(pa and pb and self.equal(pa, pb))


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
    if hasattr(signal, "SIGALRM"):
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
    _write(wfile, ["ready", os.getpid()])
    handlers: dict[str, Callable[..., Any]] = {"prep": checker.prep, "cmp": checker.cmp}
    for line in rfile:
        request = json.loads(line)
        _arm(float(request[-1]))
        reply = handlers[request[1]](*request[2:-1])
        _arm(0.0)
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
