"""``python -m bench``: time every reward for JAX, torch (eager and torch.compile) and
NumPy, each backend in its own long-lived subprocess, backends interleaved per
function family and repeated over rounds (a chunk that ran while other processes used
the cores is repeated, bounded: ``bench.contention``), a few functions also against a
plain ``jax.jit`` of the same math (``bench.overhead``), the logits reductions also
against reference passes over the same logits and a copy of as many bytes
(``bench.logits``); then JAX's runtime limits with and without the user-side settings
(``bench.limits``); then peak memory of the vote and of the logits reductions in fresh
subprocesses; then the table, the targets, ``latest.json``, the plots and the results
document.

  python -m bench                     # full run (about 45 minutes on 2 quiet cores)
  python -m bench --quick             # a one-minute subset (CI smoke test)
  python -m bench --out DIR           # write latest.json, the PNGs and RESULTS.md to DIR
  python -m bench --update-committed  # the committed bench/results/, bench/RESULTS.md and
                                      # the README's bench summary (full runs only)

Without ``--out`` or ``--update-committed`` everything goes to a scratch directory
outside the repository (``bench.output``), so that a run leaves ``git status`` clean.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import aggregate, extras, limits, output, overhead
from bench import cases as C
from bench import targets as TG
from bench.contention import THRESHOLD_CORES, Probe, foreign_load
from bench.worker import BACKENDS, THP_ENV

#: jax_thp (huge pages on request) is timed only where outputs are large.
THP_MIN_B = 1048576
QUICK_BACKENDS = ("jax", "torch", "numpy")

ROOT = Path(__file__).resolve().parent.parent


class Worker:
    """A backend's subprocess and its JSON-lines protocol."""

    def __init__(self, backend: str, log):
        self.backend = backend
        env = dict(os.environ)
        if backend == "jax_thp":
            env.update(THP_ENV)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bench.worker", backend],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            bufsize=1,
            env=env,
        )
        self.ready: dict[str, Any] | None = None

    def send(self, cmd: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()

    def recv(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            code = self.proc.wait()
            raise RuntimeError(f"{self.backend} worker exited with code {code} (see the log)")
        return json.loads(line)

    def wait_ready(self) -> dict[str, Any]:
        msg = self.recv()
        assert msg["event"] == "ready", msg
        self.ready = msg
        return msg

    def status(self) -> dict[str, Any]:
        """The worker's peak and current resident memory (MiB)."""
        self.send({"cmd": "status"})
        return self.recv()["result"]

    def close(self) -> None:
        try:
            self.send({"cmd": "quit"})
            self.proc.wait(timeout=30)
        except Exception:  # noqa: BLE001
            self.proc.kill()


class Progress:
    """A one-line progress bar on stderr (plain lines when stderr is not a terminal)."""

    def __init__(self, total: int):
        self.total = max(total, 1)
        self.done = 0
        self.t0 = time.perf_counter()
        self.tty = sys.stderr.isatty()
        self.last_pct = -10

    def step(self, label: str, n: int = 1) -> None:
        self.done += n
        frac = min(self.done / self.total, 1.0)
        elapsed = time.perf_counter() - self.t0
        eta = elapsed / frac - elapsed if frac > 0 else 0.0
        bar = "#" * int(30 * frac) + "-" * (30 - int(30 * frac))
        text = f"[{bar}] {100 * frac:5.1f}% {elapsed:6.0f}s eta {eta:5.0f}s  {label}"
        if self.tty:
            sys.stderr.write("\r" + text[:118].ljust(118))
            sys.stderr.flush()
        elif 100 * frac >= self.last_pct + 10 or self.done >= self.total:
            self.last_pct = int(100 * frac)
            print(text, file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.tty:
            sys.stderr.write("\n")


def machine_info() -> dict[str, Any]:
    info: dict[str, Any] = {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
    }
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
        with open("/proc/meminfo") as f:
            info["mem_GiB"] = round(int(f.readline().split()[1]) / 2**20, 1)
        thp = Path("/sys/kernel/mm/transparent_hugepage/enabled")
        if thp.exists():
            info["transparent_hugepage"] = thp.read_text().strip()
        # the VM guest's halt polling (templates.RUN_POLL says what 0 means)
        poll = Path("/sys/module/haltpoll/parameters/guest_halt_poll_ns")
        if poll.exists():
            info["guest_halt_poll_ns"] = int(poll.read_text().strip())
    except OSError:
        pass
    return info


class QuietGate:
    """Before each function family, wait (bounded) until other processes leave the
    cores alone: on a shared 2-core machine a busy neighbour distorts every timing,
    torch's most (its OpenMP threads wait for a descheduled sibling)."""

    def __init__(self, pids: list[int], enabled: bool, per_check: float, budget: float):
        self.pids, self.enabled = pids, enabled
        self.per_check, self.budget = per_check, budget
        self.waited = 0.0
        self.log: list[dict[str, Any]] = []

    def wait(self, label: str, threshold: float = 0.3, record: bool = True) -> float:
        """Wait until quiet (bounded); ``record``: log the chunk (before a family, not
        before a repeat, whose attempts ``meta.contention`` records)."""
        load = foreign_load(self.pids) if self.enabled else 0.0
        start = time.perf_counter()
        while (
            load > threshold
            and time.perf_counter() - start < self.per_check
            and self.waited + time.perf_counter() - start < self.budget
        ):
            time.sleep(2.0)
            load = foreign_load(self.pids)
        waited = time.perf_counter() - start
        self.waited += waited
        if not record:
            return load
        self.log.append(
            {"chunk": label, "foreign_cores": round(load, 2), "waited_s": round(waited, 1)}
        )
        return load


def runs_on(backend: str, case: C.Case) -> bool:
    if backend == "jax_thp":
        return case.B >= THP_MIN_B
    if backend == "numpy":
        from bench import numpy_impl

        return hasattr(numpy_impl, case.fn)
    return True


class Retries:
    """How often a contended chunk is repeated: at most ``per_chunk`` times, within
    ``budget_s`` seconds of repeats in the whole run (then the chunk is kept, flagged)."""

    def __init__(self, per_chunk: int, budget_s: float, gate: QuietGate | None):
        self.per_chunk, self.budget_s, self.gate = per_chunk, budget_s, gate
        self.spent_s = 0.0
        self.chunks: list[dict[str, Any]] = []

    def allowed(self, attempts: int) -> bool:
        return attempts <= self.per_chunk and self.spent_s < self.budget_s

    def summary(self) -> dict[str, Any]:
        return {
            "threshold_cores": THRESHOLD_CORES,
            "max_retries_per_chunk": self.per_chunk,
            "retry_budget_s": self.budget_s,
            "retry_time_s": round(self.spent_s, 1),
            "chunks_timed": len(self.chunks),
            "chunks_retried": sum(1 for c in self.chunks if c["retries"]),
            "retries": sum(c["retries"] for c in self.chunks),
            "chunks_still_contended": sum(1 for c in self.chunks if c["contended"]),
            "chunks": self.chunks,
        }


def watched(
    call: Callable[[], Any], roots: list[int], retries: Retries, label: str, backend: str
) -> tuple[list[Any], bool]:
    """``call()`` while a probe watches the other processes, repeated while it ran
    contended (bounded); returns every attempt's result (the last one counts) and whether
    the last attempt was still contended.  Every attempt is recorded in ``retries``."""
    attempts: list[dict[str, Any]] = []
    outs = []
    while True:
        t0 = time.perf_counter()
        probe = Probe(roots).start()
        outs.append(call())
        c = probe.stop()
        attempts.append({k: round(float(v), 3) for k, v in c.items() if k != "contended"})
        if len(attempts) > 1:
            retries.spent_s += time.perf_counter() - t0
        if not c["contended"] or not retries.allowed(len(attempts)):
            break
        if retries.gate is not None:
            retries.gate.wait(f"{label} (retry)", record=False)
    contended = bool(c["contended"])
    retries.chunks.append(
        {
            "chunk": label,
            "backend": backend,
            "attempts": attempts,
            "retries": len(attempts) - 1,
            "contended": contended,
        }
    )
    return outs, contended


def run_chunk(
    w: Worker,
    specs: list[dict[str, Any]],
    repeats: int,
    target_s: float,
    roots: list[int],
    retries: Retries,
    label: str,
) -> tuple[list[dict[str, Any]], bool]:
    """One backend on one family, watched (:func:`watched`): the last attempt's samples
    count, the first attempt's first call (trace and compile) stays the first call."""

    def call() -> list[dict[str, Any]]:
        w.send({"cmd": "run", "cases": specs, "repeats": repeats, "target_s": target_s})
        results = []
        while True:
            msg = w.recv()
            if msg["event"] == "done":
                return results
            results.append(msg["result"])

    outs, contended = watched(call, roots, retries, label, w.backend)
    first = {res["key"]: res.get("first_s", 0.0) for res in outs[0]}
    results = outs[-1]
    for res in results:
        if "first_s" in res and res["key"] in first:
            res["first_s"] = first[res["key"]]
    return results, contended


def families(cases: list[C.Case]) -> list[list[C.Case]]:
    groups: dict[str, list[C.Case]] = defaultdict(list)
    for c in cases:
        groups[c.family].append(c)
    return list(groups.values())


def run_rss(specs: list[tuple[str, C.Case]], parallel: bool, log) -> list[dict]:
    def start(spec):
        backend, case = spec
        args = [sys.executable, "-m", "bench.worker", "rss", backend, json.dumps(case.to_json())]
        return subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE, stderr=log, text=True)

    out = []
    if parallel:
        procs = [start(s) for s in specs]
        for s, p in zip(specs, procs, strict=True):
            out.append(_rss_result(s, p))
    else:
        for s in specs:
            out.append(_rss_result(s, start(s)))
    return out


def _rss_result(spec, proc) -> dict[str, Any]:
    stdout, _ = proc.communicate(timeout=600)
    try:
        return json.loads(stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        backend, case = spec
        return {"backend": backend, **case.to_json(), "error": f"exit code {proc.returncode}"}


def rss_cases(quick: bool) -> list[C.Case]:
    """The peak-memory cases: the vote across alphabets, and the logits reductions (at the
    issue's shape; quick: one small case of each)."""
    if quick:
        votes = [C.Case("consensus", 4096, K=8, n=n) for n in (16, 1_000_000)]
        logits = [c for c in C.quick_grid() if C.is_logits(c) and c.kind == "bfloat16"]
        return votes + logits[:1]
    votes = [
        C.Case(fn, 65536, K=16, n=n)
        for fn in ("consensus", "solver_rewards")
        for n in (16, 1024, 1_000_000, 10_000_000)
    ]
    votes.append(C.Case("consensus", 1024, K=8, n=10_000_000))
    return votes + [c for c in C.full_grid() if C.is_logits(c)]


def logits_copy_bytes(grid: list[C.Case]) -> int:
    """Bytes of the largest logits in ``grid`` (0 without logits rows): the size of the
    copy whose read rate the logits rows are compared with."""
    return max((C.logits_nbytes(c) for c in grid if C.is_logits(c)), default=0)


def parse(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="a one-minute subset (no torch.compile)")
    output.add_arguments(ap, "latest.json, the PNGs and RESULTS.md")
    ap.add_argument("--rounds", type=int, help="interleaved rounds (default 3; quick 1)")
    ap.add_argument("--repeats", type=int, help="timed loops per case and round (default 3)")
    ap.add_argument("--target-ms", type=float, help="length of one timed loop (default 20)")
    ap.add_argument(
        "--backends",
        default=None,
        help=f"comma list of {', '.join(BACKENDS)} (default: all; quick: "
        f"{','.join(QUICK_BACKENDS)})",
    )
    ap.add_argument(
        "--only",
        action="append",
        default=None,
        metavar="TEXT",
        help="only cases (and peak-memory cases) whose key contains TEXT (repeat for several, "
        "e.g. --only 'consensus[K=8,n=16]@B=4096' --only uncertainty_reward)",
    )
    ap.add_argument("--no-rss", action="store_true", help="skip the peak-memory subprocesses")
    ap.add_argument("--no-plot", action="store_true", help="skip the PNGs")
    ap.add_argument("--no-limits", action="store_true", help="skip the runtime-limit measurement")
    ap.add_argument(
        "--retries",
        type=int,
        default=None,
        help="repeats of a contended chunk (default 3; quick 1)",
    )
    ap.add_argument(
        "--retry-budget",
        type=float,
        default=None,
        help="seconds of repeats in the whole run (default 300; quick 5)",
    )
    ap.add_argument(
        "--max-wait",
        type=float,
        default=None,
        help="seconds to wait in total for other processes to go quiet (default 900; quick 0)",
    )
    return ap.parse_args(argv)


def check_extras(backends: list[str], plot: bool) -> None:
    """Exit with one line before any work if a backend's or the plots' package is missing."""
    needs = {"jax": "jax"}
    if any(b.startswith("torch") for b in backends):
        needs["torch"] = "torch"
    if plot:
        needs["matplotlib"] = "matplotlib"
    extras.require("python -m bench", needs)


def main(argv: list[str] | None = None) -> int:
    opts = parse(argv)
    quick = opts.quick
    backends = (opts.backends or ",".join(QUICK_BACKENDS if quick else BACKENDS)).split(",")
    unknown = [b for b in backends if b not in BACKENDS]
    if unknown:
        raise SystemExit(
            f"unknown backend(s) {', '.join(unknown)}: choose from {', '.join(BACKENDS)}"
        )
    check_extras(backends, not opts.no_plot)
    if opts.only and opts.update_committed:
        raise SystemExit("--only with --update-committed: the committed results are the whole grid")
    out = output.directory(opts, quick=quick)
    rounds = opts.rounds or (1 if quick else 3)
    repeats = opts.repeats or (2 if quick else 3)
    target_s = (opts.target_ms or (2.0 if quick else 20.0)) / 1000
    grid = C.quick_grid() if quick else C.full_grid()
    if opts.only:
        grid = [c for c in grid if any(w in c.key for w in opts.only)]
    if not grid:
        raise SystemExit(f"--only {' '.join(opts.only or [])!r} matches no case")
    fams = families(grid)
    log_path = Path(tempfile.gettempdir()) / f"bench-{os.getpid()}.log"
    t_start = time.time()
    load_start = os.getloadavg()

    rss_specs: list[tuple[str, C.Case]] = []
    if not opts.no_rss:
        rss_backends = [b for b in ("jax", "torch", "numpy") if b in backends]
        if quick:
            rss_backends = rss_backends[:1]
        chosen = [
            c for c in rss_cases(quick) if not opts.only or any(w in c.key for w in opts.only)
        ]
        rss_specs = [(b, c) for b in rss_backends for c in chosen if runs_on(b, c)]
    copy_logits = logits_copy_bytes(grid)

    limit_cases = {} if opts.no_limits or "jax" not in backends else limits.cases(quick)
    limit_rounds = 1 if quick else 3
    limit_backends = [limits.LIMITS[name][0] for name in limit_cases]
    timed = sum(runs_on(b, c) for b in backends for c in grid)
    total = rounds * (timed + 2 + len(backends)) + len(rss_specs)
    total += limit_rounds * sum(2 * len(cs) for cs in limit_cases.values())
    bar = Progress(total)
    samples: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    first: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    faults: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    errors: dict[str, dict[str, str]] = defaultdict(dict)
    plain: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    passes: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    peak_rss: dict[str, float] = {}
    contended_cells: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    lim_samples: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    lim_faults: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    dispatch: dict[str, list[dict[str, Any]]] = defaultdict(list)
    copies: list[dict[str, Any]] = []
    versions: dict[str, Any] = {}

    with open(log_path, "w") as log:
        workers = {b: Worker(b, log) for b in backends}
        for extra in ["numpy", *limit_backends]:
            if extra not in workers:
                workers[extra] = Worker(extra, log)
        try:
            for w in workers.values():
                versions[w.backend] = w.wait_ready()["versions"]

            def copy_round(r: int):
                def call():
                    workers["numpy"].send(
                        {
                            "cmd": "copy",
                            "repeats": 2 if quick else 3,
                            "target_s": target_s,
                            "logits_bytes": copy_logits,
                        }
                    )
                    return workers["numpy"].recv()["result"]

                outs, _ = watched(call, pids, retries, f"round {r + 1} copy", "numpy")
                copies.append(outs[-1])
                bar.step("copy bandwidth")

            pids = [os.getpid()] + [w.proc.pid for w in workers.values()]
            budget = opts.max_wait if opts.max_wait is not None else (0.0 if quick else 900.0)
            gate = QuietGate(pids, budget > 0, per_check=240.0, budget=budget)
            retries = Retries(
                opts.retries if opts.retries is not None else (1 if quick else 3),
                opts.retry_budget if opts.retry_budget is not None else (5.0 if quick else 300.0),
                gate if budget > 0 else None,
            )
            for r in range(rounds):
                copy_round(r)
                for i, fam in enumerate(fams):
                    gate.wait(f"round {r + 1} {fam[0].family}")
                    shift = (i + r) % len(backends)
                    order = backends[shift:] + backends[:shift]
                    for b in order:
                        w = workers[b]
                        specs = [
                            {
                                **c.to_json(),
                                "pair_plain": b == "jax" and overhead.covers(c),
                                "passes": b == "jax" and C.is_logits(c),
                            }
                            for c in fam
                            if runs_on(b, c)
                        ]
                        if not specs:
                            continue
                        label = f"round {r + 1} {fam[0].family}"
                        results, contended = run_chunk(
                            w, specs, repeats, target_s, pids, retries, label
                        )
                        for res in results:
                            key = res["key"]
                            if contended:
                                contended_cells[key][b] += 1
                            if "error" in res:
                                errors[key][b] = res["error"]
                            else:
                                samples[key][b] += res["samples_s"]
                                first[key][b].append(res["first_s"])
                                faults[key][b].append(res["faults_per_call"])
                                if "plain" in res:
                                    plain[key]["samples_s"] += res["plain"]["samples_s"]
                                    plain[key]["ratios"] += res["pair_ratios"]
                                if "naive" in res:
                                    plain[key]["naive_samples_s"] += res["naive"]["samples_s"]
                                    plain[key]["naive_ratios"] += res["naive_ratios"]
                                for name, m in (res.get("passes") or {}).items():
                                    passes[key][name] += m["samples_s"]
                            bar.step(f"round {r + 1}/{rounds} {b:<13} {key}")
                for b in backends:
                    if b in ("torch_compile", "jax_thp"):
                        bar.step(f"dispatch ({b}: not measured)")
                        continue
                    reps, loop_s = (2, 0.002) if quick else (5, 0.01)

                    def call(w=workers[b], reps=reps, loop_s=loop_s):
                        w.send({"cmd": "dispatch", "repeats": reps, "target_s": loop_s})
                        return w.recv()["result"]

                    outs, _ = watched(call, pids, retries, f"round {r + 1} dispatch", b)
                    dispatch[b].append(outs[-1])
                    bar.step(f"dispatch overhead {b}")
                copy_round(r)
            for r in range(limit_rounds):
                for i, (name, cs) in enumerate(limit_cases.items()):
                    pair = ["jax", limits.LIMITS[name][0]]
                    for b in pair[(i + r) % 2 :] + pair[: (i + r) % 2]:
                        specs = [c.to_json() for c in cs]
                        label = f"limits {r + 1} {name}"
                        results, _ = run_chunk(
                            workers[b], specs, repeats, target_s, pids, retries, label
                        )
                        for res in results:
                            if "error" not in res:
                                lim_samples[res["key"]][b] += res["samples_s"]
                                lim_faults[res["key"]][b].append(res["faults_per_call"])
                            bar.step(f"runtime limits {name} {b:<8} {res['key']}")
            for w in workers.values():
                peak_rss[w.backend] = w.status()["peak_MiB"]
        finally:
            for w in workers.values():
                w.close()

        rss_rows = []
        if rss_specs:
            for res in run_rss(rss_specs, parallel=quick, log=log):
                rss_rows.append(res)
                bar.step(f"peak memory {res.get('backend')} {res.get('key', res.get('fn'))}")
    bar.close()

    duration = time.time() - t_start
    result = aggregate.assemble(
        grid=grid,
        backends=backends,
        samples=samples,
        first=first,
        faults=faults,
        errors=errors,
        dispatch=dispatch,
        copies=copies,
        rss=rss_rows,
        contended=contended_cells,
        plain=plain if "jax" in backends else None,
        passes=passes,
        meta={
            "command": "python -m bench " + " ".join(argv if argv is not None else sys.argv[1:]),
            "quick": quick,
            "rounds": rounds,
            "repeats_per_round": repeats,
            "target_ms_per_loop": target_s * 1000,
            "backends": backends,
            "machine": machine_info(),
            "versions": versions,
            "started": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t_start)),
            "duration_s": round(duration, 1),
            "loadavg_start": load_start,
            "loadavg_end": os.getloadavg(),
            "jax_x64": True,
            "peak_rss_MiB": {k: round(v, 1) for k, v in peak_rss.items()},
            "quiet_gate": {
                "waited_s": round(gate.waited, 1),
                "chunks_still_contended": [g for g in gate.log if g["foreign_cores"] > 0.3],
            },
            "contention": retries.summary(),
            "log": str(log_path),
        },
    )
    if limit_cases:
        result["runtime_limits"] = limits.summarize(limit_cases, lim_samples, lim_faults)
    result["targets"] = TG.evaluate(result)
    from bench import render, tables

    out_json = out / "latest.json"
    out_json.write_text(aggregate.dumps(result))
    print(tables.results(result))
    print()
    print(render.summary(result, result["targets"]))
    if not opts.no_plot:
        from bench import plots

        for path in plots.plots(result, out):
            print(f"wrote {path}")
    print(f"wrote {out_json} ({duration:.0f} s)")
    for doc in output.finish(out):
        print(f"wrote {doc}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
