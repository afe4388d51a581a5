"""The bench's contention detector (``bench/contention.py``): a busy process outside the
bench's process tree is flagged; a quiet machine, and the bench's own busy children, are
not.  Each check watches a window of under a second."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from bench import contention

pytestmark = [
    pytest.mark.skipif(not os.path.exists("/proc/stat"), reason="the detector reads Linux's /proc"),
    pytest.mark.alone,  # the README's test command runs these alone, on an idle machine
]

BUSY = "import time\nt = time.perf_counter()\nwhile time.perf_counter() - t < {s}: pass\n"


def _foreign_busy_process(seconds: float) -> None:
    """Start a busy loop that is not this process's descendant (its parent exits at once,
    so it is re-parented outside our tree), and return when it has started."""
    launcher = (
        "import subprocess, sys\n"
        f"subprocess.Popen([sys.executable, '-c', {BUSY.format(s=seconds)!r}])\n"
    )
    subprocess.run([sys.executable, "-c", launcher], check=True, timeout=30)


def _quiet_or_skip() -> None:
    load = contention.foreign_load([os.getpid()], window=0.5)
    if load > contention.THRESHOLD_CORES:
        pytest.skip(
            f"machine already loaded: other processes use {load:.2f} cores "
            f"(> {contention.THRESHOLD_CORES}), so 'quiet' cannot be checked here"
        )


def test_a_busy_process_outside_the_tree_is_flagged():
    probe = contention.Probe([os.getpid()]).start()
    _foreign_busy_process(0.8)
    time.sleep(0.9)
    reading = probe.stop()
    assert reading["contended"], reading
    assert reading["foreign_cores"] > 0.5, reading


def test_a_quiet_machine_is_not_flagged():
    _quiet_or_skip()
    readings = []
    for _ in range(3):  # a neighbour may wake up for one window; one quiet window suffices
        probe = contention.Probe([os.getpid()]).start()
        time.sleep(0.5)
        readings.append(probe.stop())
        if not readings[-1]["contended"]:
            return
    _quiet_or_skip()
    pytest.fail(f"every window flagged on a quiet machine: {readings}")


def test_the_bench_own_busy_children_are_not_flagged():
    _quiet_or_skip()
    readings = []
    for _ in range(3):
        probe = contention.Probe([os.getpid()]).start()
        subprocess.run([sys.executable, "-c", BUSY.format(s=0.5)], check=True, timeout=30)
        readings.append(probe.stop())
        assert readings[-1]["own_cores"] > 0.2, readings[-1]
        if not readings[-1]["contended"]:
            return
    _quiet_or_skip()
    pytest.fail(f"the bench's own child counted as contention: {readings}")


def test_process_tree_holds_the_children():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(5)"])
    try:
        assert {os.getpid(), child.pid} <= contention.process_tree([os.getpid()])
    finally:
        child.kill()
        child.wait()
