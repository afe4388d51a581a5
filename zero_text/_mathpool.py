"""math-verify on a :class:`pebble.ProcessPool`, bounded from any thread.

math-verify's own ``SIGALRM`` limit works only in the main thread (Math-Verify issue #65)
and SymPy can stay inside one C call for as long as an answer makes it, so the work runs
in pebble's workers, and a task past its limit is ended by killing its worker. Workers
start from the ``forkserver`` context (``spawn`` where it is missing), never a fork of the
caller, whose threads (JAX, torch) make ``fork`` unsafe; the fork server preloads
:mod:`zero_text._mathpreload` (math-verify warm), so a replacement is forked ready. One
pool per process: started by the first call that needs it, stopped at exit or by
:func:`close_pool`; a forked child forgets its parent's pool and fork server.
"""

from __future__ import annotations

import atexit
import logging
import math
import multiprocessing
import os
import signal
import threading
import warnings
from typing import Any

__all__ = ["Summary", "close_pool", "compare", "get_pool", "read", "read_all", "warm_up"]

_MATH_EXTRA_HINT = (
    'equivalence="math" needs the math_verify and pebble packages; install them with '
    'pip install "zero-rewards[math]" (or pip install math-verify pebble)'
)

# ------------------------------------------------------------------ worker side

#: What the caller learns from reading one answer: ``exact``, the (p, q) of each parsed
#: expression when all are SymPy Rationals (else None); ``numbers``, their float values
#: when all are real and variable-free (else None); ``strings``, the parsed strings.
Summary = tuple[tuple[tuple[int, int], ...] | None, tuple[float, ...] | None, tuple[str, ...]]

_CACHE_LIMIT = 20_000
_CACHE: dict[str, list[Any]] = {}
_MV: dict[str, Any] = {}
_WARM_UP = ("\\frac{1}{2}", "x^2+1", "\\sqrt{2}", "(1,2)", "3.5", "x=3", "\\pi", "10\\%", "[0,1)")


def _mv() -> dict[str, Any]:
    if not _MV:
        warnings.simplefilter("ignore")
        logging.disable(logging.CRITICAL)  # math-verify logs every parse failure
        import math_verify
        import sympy  # type: ignore[import-untyped]

        _MV.update(parse=math_verify.parse, verify=math_verify.verify, sympy=sympy)
        _MV["probe"] = _parsed("7")  # read as \boxed{7}, like every answer
    return _MV


def _parsed(answer: str) -> list[Any]:
    value = _CACHE.get(answer)
    if value is None:
        if len(_CACHE) >= _CACHE_LIMIT:
            _CACHE.clear()
        try:
            value = _mv()["parse"]("\\boxed{" + answer + "}", parsing_timeout=None)
        except Exception:
            value = []
        _CACHE[answer] = value
    return value


def _equal(pa: list[Any], pb: list[Any]) -> bool:
    for gold, target in ((pa, pb), (pb, pa)):
        try:
            if _mv()["verify"](gold, target, timeout_seconds=None):
                return True
        except Exception:
            continue
    return False


def read(answer: str, probe: bool) -> Summary | None:
    """Parse ``\\boxed{answer}`` (None when nothing is parsed); with ``probe``, verify it
    against 7 first, so an answer SymPy cannot evaluate runs over here, on its own."""
    parsed = _parsed(answer)
    if not parsed:
        return None
    if probe:
        _equal(parsed, _mv()["probe"])
    sympy = _mv()["sympy"]
    strings = tuple(item.strip() for item in parsed if isinstance(item, str))
    items = [item for item in parsed if not isinstance(item, str)]
    exact = None
    if all(isinstance(item, sympy.Rational) for item in items):
        exact = tuple((int(item.p), int(item.q)) for item in items)
    numbers: Any = [p / q for p, q in exact] if exact is not None else []
    try:
        for item in items if exact is None else ():
            value = item.evalf(30) if not item.free_symbols else None
            if value is None or not value.is_Float or item.has(sympy.UnevaluatedExpr):
                raise ValueError  # not a plain real value
            numbers.append(float(value))
    except Exception:
        numbers = None
    numbers = tuple(numbers) if numbers is not None and all(map(math.isfinite, numbers)) else None
    return exact, numbers, strings


def read_all(answers: tuple[str, ...]) -> list[Summary | None]:
    """:func:`read` of each answer, without the probe (for tame answers)."""
    return [read(answer, False) for answer in answers]


def compare(a: str, b: str) -> bool:
    """math-verify's ``verify`` of the two parses, in either direction."""
    pa, pb = _parsed(a), _parsed(b)
    return bool(pa and pb) and _equal(pa, pb)


def _start_worker() -> None:
    """pebble's initializer: warm, and ended by SIGTERM even inside a C call."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    warm_up()


def warm_up() -> None:
    """Import math-verify and what SymPy loads lazily (once, before any fork)."""
    if "warm" in _MV:
        return
    _mv()["warm"] = True
    for text in _WARM_UP:
        read(text, True)
        compare(text, "2")


# ------------------------------------------------------------------ the pool

_POOL: Any = None
_SIZE = 0
_STARTED_SERVER = False
_LOCK = threading.Lock()  # one call at a time uses the pool


def _context() -> Any:
    global _STARTED_SERVER
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    from multiprocessing import forkserver

    _STARTED_SERVER = True
    preload = list(getattr(forkserver._forkserver, "_preload_modules", ["__main__"]))
    if "zero_text._mathpreload" not in preload:  # effective when the server starts
        forkserver.set_forkserver_preload([*preload, "zero_text._mathpreload"])
    return multiprocessing.get_context("forkserver")


def get_pool(processes: int) -> Any:
    """The process-wide pool with ``processes`` workers (call with :data:`_LOCK` held)."""
    global _POOL, _SIZE
    if _POOL is not None and (_SIZE != processes or not _POOL.active):
        close_pool(locked=True)
    if _POOL is None:
        try:
            import pebble
        except ImportError as exc:
            raise ImportError(_MATH_EXTRA_HINT) from exc
        if multiprocessing.current_process().daemon:
            raise RuntimeError(
                'equivalence="math" runs math-verify in helper processes, which a daemonic '
                "process (a multiprocessing.Pool worker) cannot start"
            )
        # one worker more than the caller asked for: the lane of the steps that may stall
        _POOL = pebble.ProcessPool(processes + 1, initializer=_start_worker, context=_context())
        _SIZE = processes
    return _POOL


def close_pool(locked: bool = False) -> None:
    """Stop the workers now (a later call starts new ones)."""
    global _POOL
    if not locked:
        with _LOCK:
            return close_pool(locked=True)
    pool, _POOL = _POOL, None
    if pool is not None:
        pool.stop()
        pool.join(timeout=10)


def _after_fork_in_child() -> None:
    """The parent's workers, lock and fork server are not ours: forget them."""
    global _POOL, _LOCK
    _POOL, _LOCK = None, threading.Lock()
    if _STARTED_SERVER:  # multiprocessing would ask the parent's server for workers
        from multiprocessing import forkserver

        server: Any = forkserver._forkserver
        if server._forkserver_alive_fd is not None:
            os.close(server._forkserver_alive_fd)
        server._forkserver_address = server._forkserver_alive_fd = None
        server._forkserver_pid, server._lock = None, threading.Lock()


atexit.register(close_pool, True)  # without the lock: a call may be running in a thread
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
