"""Helper processes that run math-verify under a hard time limit, from any thread.

math-verify bounds its own work with ``SIGALRM``, which only the main thread
can use, and SymPy can hold the GIL inside one C call for as long as an
answer makes it (``5^{5^{5^{5^5}}}``), so no thread of this process can stop
it. The work therefore runs in helper processes (:mod:`zero_text._mathworker`)
that the caller's thread waits for with a deadline; a helper still busy at its
deadline is killed by PID and replaced.

Life cycle, kept safe for users:

* one pool per process, created at the first request that needs math-verify;
* on POSIX a fork server (started once with ``sys.executable -c``; it imports
  math-verify and warms SymPy up) forks the helpers, so replacing one that ran
  over takes milliseconds and costs the limit, not a restart of Python and
  SymPy; it is the helpers' parent and the only one that kills them (by PID,
  when asked). Elsewhere each helper is its own ``sys.executable -c`` process;
* plain ``subprocess`` children, so the pool works whatever the multiprocessing
  start method, inside daemonic multiprocessing workers and without a
  ``__main__`` guard in the script;
* calls from several threads are served one at a time (a lock);
* at interpreter exit (or :func:`close_pool`) the fork server kills its helpers
  and exits; a forked child closes its copies of the parent's sockets and makes
  its own pool; an orphaned helper ends itself, at the end of its input when
  idle or by its own alarm (default action of ``SIGALRM``) when busy.
"""

from __future__ import annotations

import atexit
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Generator, Iterable
from typing import IO, Any

from . import _mathworker

__all__ = ["Job", "Request", "Result", "close_pool", "forget", "run_jobs"]

Request = tuple[str, ...]  # ("prep", answer) or ("cmp", a, b)
Result = str | bool | None  # "ok" / "empty", True / False; None: over the limit or crashed
Job = Generator[Request, Result, Any]

_CPU_TIMERS = hasattr(signal, "setitimer") and hasattr(signal, "SIGPROF")
_CAN_FORK = all(
    hasattr(x, y) for x, y in ((os, "fork"), (socket, "AF_UNIX"), (socket, "send_fds"))
)
_STARTUP_LIMIT = 120.0  # seconds for a helper to import math-verify on a loaded machine
_ALARM_MARGIN = 5.0  # a helper's own alarm fires this long after the parent's deadline


def wall_limit(limit: float) -> float:
    """Wall-clock seconds a step may take: its CPU-time ``limit``, plus as much again (at
    least 1 s) for a loaded machine. Without CPU-time timers (not POSIX), ``limit``."""
    return limit + max(limit, 1.0) if _CPU_TIMERS else limit

_MATH_EXTRA_HINT = (
    'equivalence="math" needs the math_verify package; install it with '
    'pip install "zero-rewards[math]" (or pip install math-verify)'
)


def _boot_code(entry: str) -> str:
    """``python -c`` code that runs ``_mathworker.<entry>``.

    The worker file is loaded on its own, not through the package, so a helper
    never imports NumPy and SciPy (``zero_text/__init__``); the parent's
    ``sys.path`` comes first, so math-verify is found where the caller finds it.
    """
    paths = [os.path.abspath(p) if p else os.getcwd() for p in sys.path]
    worker = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_mathworker.py")
    return (
        "import importlib.util, sys\n"
        f"sys.path[:0] = {paths!r}\n"
        f"spec = importlib.util.spec_from_file_location('zero_text_mathworker', {worker!r})\n"
        "module = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(module)\n"
        f"module.{entry}(*map(int, sys.argv[1:]))\n"
    )


def _start(entry: str, args: list[str], **popen: Any) -> subprocess.Popen[bytes]:
    try:
        return subprocess.Popen(
            [sys.executable, "-c", _boot_code(entry), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            **popen,
        )
    except OSError as exc:
        raise RuntimeError(
            f'equivalence="math" could not start a helper process with {sys.executable!r}: '
            f"{exc}"
        ) from exc


Inbox = queue.Queue[tuple[Any, bytes | None]]


def _pump(source: IO[bytes], owner: object, inbox: Inbox) -> None:
    """Reader thread: every line of ``source`` to ``inbox`` as (owner, line), then None."""
    try:
        for line in source:
            inbox.put((owner, line))
    except (OSError, ValueError):
        pass
    inbox.put((owner, None))


def _reader(source: IO[bytes], owner: object, inbox: Inbox) -> None:
    threading.Thread(
        target=_pump, args=(source, owner, inbox), name="zero_text-math-reader", daemon=True
    ).start()


class _ForkServer:
    """The process that forks helpers (POSIX), and its control socket."""

    def __init__(self, inbox: Inbox) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.proc = _start(
                "forkserver_main",
                [str(theirs.fileno())],
                stdin=subprocess.DEVNULL,
                pass_fds=(theirs.fileno(),),
            )
        finally:
            theirs.close()
        self.control = ours
        self.started = time.monotonic()
        assert self.proc.stdout is not None
        _reader(self.proc.stdout, self, inbox)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def _send(self, words: str, fds: list[int] | None = None) -> bool:
        data = words.encode().ljust(_mathworker.CONTROL_MESSAGE)
        try:
            if fds:
                socket.send_fds(self.control, [data], fds)
            else:
                self.control.sendall(data)
        except OSError:
            return False
        return True

    def fork(self, channel: socket.socket) -> bool:
        return self._send("fork", [channel.fileno()])

    def kill(self, pid: int) -> None:
        self._send(f"kill {pid}")

    def close(self) -> None:
        """Ask the server to kill its helpers and exit; kill it if it does not."""
        self._send("quit")
        try:
            self.control.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


class _Helper:
    """One helper process: a forked child of the fork server, or its own subprocess."""

    def __init__(self, inbox: Inbox, server: _ForkServer | None) -> None:
        self.server = server
        self.proc: subprocess.Popen[bytes] | None = None
        self.pid: int | None = None
        self.started = time.monotonic()
        self.ready = False
        self.seq = 0
        self.deadline: float | None = None
        self.backlog: bytes | None = None  # the request written once the helper is ready
        self.channel: socket.socket | None = None
        if server is not None:
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                forked = server.fork(theirs)
            finally:
                theirs.close()
            self.channel = ours
            self._out: IO[bytes] = ours.makefile("wb")
            source: IO[bytes] = ours.makefile("rb")
            if not forked:
                ours.shutdown(socket.SHUT_RDWR)  # reported as ended at once
        else:
            self.proc = _start("main", [], stdin=subprocess.PIPE)
            assert self.proc.stdin is not None and self.proc.stdout is not None
            self._out, source = self.proc.stdin, self.proc.stdout
        _reader(source, self, inbox)

    def write(self, line: bytes) -> bool:
        try:
            self._out.write(line)
            self._out.flush()
        except (OSError, ValueError):
            return False
        return True

    def kill(self) -> None:
        """End the process by PID (through its parent, the fork server) and close the pipes."""
        if self.proc is not None:
            if self.proc.poll() is None:
                try:
                    self.proc.kill()
                except OSError:
                    pass
            self.proc.wait()
        elif self.server is not None and self.pid is not None:
            self.server.kill(self.pid)
        if self.channel is not None:
            try:  # end of input for the helper, even if it was never killed
                self.channel.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        for pipe in (self._out, self.channel):
            if pipe is not None:
                try:
                    pipe.close()
                except OSError:
                    pass


class _Pool:
    def __init__(self) -> None:
        self.owner = os.getpid()
        self.inbox: Inbox = queue.Queue()
        self.slots: list[_Helper] = []
        self.server: _ForkServer | None = None

    def _new(self) -> _Helper:
        if not _CAN_FORK:
            return _Helper(self.inbox, None)
        if self.server is None or not self.server.alive():
            if self.server is not None:
                self.server.close()
            self.server = _ForkServer(self.inbox)
        return _Helper(self.inbox, self.server)

    def resize(self, n: int) -> None:
        while len(self.slots) > n:
            self.slots.pop().kill()
        while len(self.slots) < n:
            self.slots.append(self._new())

    def replace(self, slot: int) -> None:
        self.slots[slot].kill()
        self.slots[slot] = self._new()

    def close(self) -> None:
        for helper in self.slots:
            helper.kill()
        self.slots = []
        if self.server is not None:
            self.server.close()
            self.server = None

    # ---------------------------------------------------------------- scheduling

    def run(self, jobs: Iterable[tuple[Job, Request]], processes: int, limit: float) -> None:
        """Drive ``jobs`` (each a suspended generator and its first request) to the end.

        A job runs on one helper until it finishes, so what that helper parsed
        for it stays parsed; up to ``processes`` jobs run at once. A request
        may use ``limit`` seconds of CPU time (the helper's own timer ends it)
        and :func:`wall_limit` seconds of wall time from the moment its helper
        can start on it; past either the job receives None and the helper is
        replaced.
        """
        self.resize(processes)
        pending = iter(jobs)
        running: dict[int, Job] = {}
        wall = wall_limit(limit)
        alarm = wall + _ALARM_MARGIN

        def send(slot: int, request: Request) -> None:
            helper = self.slots[slot]
            helper.seq += 1
            line = (json.dumps([helper.seq, *request, limit, alarm]) + "\n").encode()
            if helper.ready:
                helper.deadline = time.monotonic() + wall
                if not helper.write(line):
                    helper.deadline = time.monotonic()  # dead: settled as over the limit
            else:
                helper.backlog = line
                helper.deadline = None

        def feed(slot: int, result: Result) -> None:
            job = running[slot]
            try:
                request = job.send(result)
            except StopIteration:
                del running[slot]
                start(slot)
                return
            send(slot, request)

        def start(slot: int) -> None:
            for job, request in pending:
                running[slot] = job
                send(slot, request)
                return

        for slot in range(len(self.slots)):
            start(slot)
        while running:
            now = time.monotonic()
            deadlines = [self.slots[s].deadline for s in running]
            waits = [d - now for d in deadlines if d is not None]
            if len(waits) < len(deadlines):  # a helper still starting
                starting = min(
                    self.slots[s].started for s in running if self.slots[s].deadline is None
                )
                waits.append(starting + _STARTUP_LIMIT - now)
            try:
                owner, line = self.inbox.get(timeout=max(0.0, min(waits)))
            except queue.Empty:
                owner, line = None, None
            if owner is not None:
                self._handle(owner, line, running, wall, feed)
            now = time.monotonic()
            for slot in list(running):
                helper = self.slots[slot]
                if helper.deadline is not None and now >= helper.deadline:
                    self.replace(slot)
                    feed(slot, None)
                elif not helper.ready and now >= helper.started + _STARTUP_LIMIT:
                    raise RuntimeError(
                        'equivalence="math": a math-verify helper process did not start '
                        f"within {_STARTUP_LIMIT:.0f} s"
                    )

    def _handle(
        self,
        owner: object,
        line: bytes | None,
        running: dict[int, Job],
        wall: float,
        feed: Callable[[int, Result], None],
    ) -> None:
        message = json.loads(line) if line is not None else None
        if message is not None and message[0] == "error":
            if message[1] == "import":
                raise ImportError(f"{_MATH_EXTRA_HINT} ({message[2]})")
            raise RuntimeError(f"math-verify failed to load in a helper process: {message[2]}")
        if not isinstance(owner, _Helper):  # the fork server: readiness or its end
            return
        helper = owner
        slot = next((s for s, h in enumerate(self.slots) if h is helper), None)
        if slot is None:  # a helper already replaced
            return
        if message is None:  # the process ended
            if not helper.ready:
                raise RuntimeError(
                    'equivalence="math": a math-verify helper process ended while starting'
                )
            if slot in running:
                helper.deadline = time.monotonic()  # settled as over the limit
            else:
                self.replace(slot)
            return
        if message[0] == "ready":
            helper.ready = True
            helper.pid = int(message[1])
            if helper.backlog is not None:
                backlog, helper.backlog = helper.backlog, None
                helper.deadline = time.monotonic() + wall
                if not helper.write(backlog):
                    helper.deadline = time.monotonic()
            return
        seq, reply = message
        if slot in running and seq == helper.seq:
            helper.deadline = None
            feed(slot, reply)


_POOL: _Pool | None = None
_LOCK = threading.Lock()


def run_jobs(jobs: Iterable[tuple[Job, Request]], *, processes: int, limit: float) -> None:
    """Run suspended jobs on the process-wide pool (see :meth:`_Pool.run`)."""
    global _POOL
    with _LOCK:
        if _POOL is None or _POOL.owner != os.getpid():
            _POOL = _Pool()
        pool = _POOL
        done = False
        try:
            pool.run(jobs, processes, limit)
            done = True
        finally:
            if not done:  # a request may still be in flight: start clean next time
                pool.close()
                _POOL = None


def forget(processes: int = 1) -> None:
    """Make ``processes`` helpers drop their cached answers (benchmarks time cold strings).

    One job per helper: the scheduler starts one on every free helper at once.
    """

    def job() -> Job:
        yield ("forget",)

    def jobs() -> Iterable[tuple[Job, Request]]:
        for _ in range(processes):
            started = job()
            yield started, next(started)

    run_jobs(jobs(), processes=processes, limit=60.0)


def close_pool() -> None:
    """Kill the helper processes now (a later call starts new ones)."""
    global _POOL
    with _LOCK:
        if _POOL is not None and _POOL.owner == os.getpid():
            _POOL.close()
        _POOL = None


def _at_exit() -> None:
    pool = _POOL
    if pool is not None and pool.owner == os.getpid():
        pool.close()


def _after_fork_in_child() -> None:
    """The parent's helpers are not ours: close our copies of their sockets, forget them.

    Sockets are detached before their descriptors are closed, so a later
    garbage collection cannot close a descriptor number this child reuses.
    Closing the copies matters: the fork server and idle helpers end when the
    parent's ends close, which they would not while this child held copies.
    """
    global _POOL, _LOCK
    pool, _POOL = _POOL, None
    _LOCK = threading.Lock()  # it may have been held by a thread of the parent
    if pool is None:
        return
    sockets = [pool.server.control] if pool.server is not None else []
    sockets += [helper.channel for helper in pool.slots if helper.channel is not None]
    for sock in sockets:
        try:
            os.close(sock.detach())
        except OSError:
            pass


atexit.register(_at_exit)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
