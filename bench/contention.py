"""Contention: how many cores processes other than the bench's kept busy over a window.

The kernel's counters are read at the start and the end of each timed chunk: busy CPU
time of the whole machine (``/proc/stat``: every state but idle and iowait) minus the CPU
time of the bench's own process tree (``/proc/PID/stat``: user + system time of all
threads, plus that of reaped children), divided by the wall time.  What is left was used
by other processes (and the kernel's own work, and a hypervisor's steal time: other
guests on the same cores), in cores.  Resolution is one clock tick
(10 ms) per core, so windows shorter than about 0.1 s are coarse.

Linux only; elsewhere every reading is 0 (nothing is flagged).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["THRESHOLD_CORES", "Probe", "foreign_load", "process_tree"]

#: A window counts as contended when other processes used more than this many cores.
THRESHOLD_CORES = 0.3

_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _busy_ticks() -> int:
    with open("/proc/stat") as f:
        vals = [int(v) for v in f.readline().split()[1:9]]
    return sum(vals) - vals[3] - vals[4]  # all but idle and iowait


def _stat_fields(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def _own_ticks(pid: int) -> int:
    """utime + stime (all threads) + cutime + cstime (reaped children) of ``pid``."""
    fields = _stat_fields(pid)
    if fields is None:
        return 0
    try:
        return sum(int(fields[i]) for i in (11, 12, 13, 14))
    except (IndexError, ValueError):
        return 0


def process_tree(roots: Iterable[int]) -> set[int]:
    """``roots`` and all their live descendants (from the parent ids in ``/proc``)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else []:
        if not entry.name.isdigit():
            continue
        fields = _stat_fields(int(entry.name))
        if fields:
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    out: set[int] = set()
    todo = list(roots)
    while todo:
        pid = todo.pop()
        if pid not in out:
            out.add(pid)
            todo += children.get(pid, [])
    return out


@dataclass
class Probe:
    """Foreign CPU use over a window: ``start()``, run the chunk, ``stop()``.

    ``roots``: the bench's processes (this one and its workers); their descendants
    (compile workers, for instance) count as the bench's own, including ones started
    during the window.
    """

    roots: list[int]
    threshold: float = THRESHOLD_CORES
    _t0: float = 0.0
    _busy0: int = 0
    _own0: dict[int, int] = field(default_factory=dict)

    def start(self) -> Probe:
        self._own0 = {pid: _own_ticks(pid) for pid in process_tree(self.roots)}
        self._t0 = time.perf_counter()
        try:
            self._busy0 = _busy_ticks()
        except OSError:
            self._busy0 = -1
        return self

    def stop(self) -> dict[str, float | bool]:
        """``foreign_cores`` (other processes' cores), ``own_cores``, ``wall_s`` and
        ``contended`` (``foreign_cores > threshold``)."""
        wall = max(time.perf_counter() - self._t0, 1e-6)
        if self._busy0 < 0:
            return {"foreign_cores": 0.0, "own_cores": 0.0, "wall_s": wall, "contended": False}
        busy = _busy_ticks() - self._busy0
        pids = process_tree(self.roots) | set(self._own0)
        own = sum(max(0, _own_ticks(p) - self._own0.get(p, 0)) for p in pids)
        foreign = max(0, busy - own) / _TICK / wall
        return {
            "foreign_cores": foreign,
            "own_cores": own / _TICK / wall,
            "wall_s": wall,
            "contended": foreign > self.threshold,
        }


def foreign_load(roots: list[int], window: float = 0.3) -> float:
    """Cores used by processes outside ``roots``' tree over the next ``window`` seconds."""
    probe = Probe(roots).start()
    time.sleep(window)
    return float(probe.stop()["foreign_cores"])
