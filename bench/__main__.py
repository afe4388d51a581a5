"""``python -m bench``: the whole bench in one command (about 15 minutes on 2 quiet cores).

1. ``python -m bench.step`` (the rewards inside a jitted GRPO step) and
   ``python -m bench.bleu`` (BLEU clusters against the published loop), each in its own
   process.
2. The size grid (``bench.grid``): every reward in each backend (``bench.worker``), each
   backend in its own process; over ``--rounds`` rounds, per family, the backends take
   turns in a rotating order; the machine's load average is recorded around every round.
   The logits reductions against one exp pass and a copy (``bench.logits``) in the same
   rounds.
3. ``grid.json`` beside their JSON, and ``RESULTS.md`` generated from them
   (``bench.report``).

  python -m bench                      # the full run, to a scratch directory
  python -m bench --quick              # tiny sizes, one round (seconds; CI)
  python -m bench --update-committed   # the committed bench/results/ and bench/RESULTS.md
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

import numpy as np

from bench import grid, logits, output, report, worker

ROOT = Path(__file__).resolve().parent.parent


def pool(name: str) -> ProcessPoolExecutor:
    ctx = multiprocessing.get_context("spawn")
    return ProcessPoolExecutor(1, mp_context=ctx, initializer=worker.start, initargs=(name,))


def stats(samples: list[float], first_s: float) -> dict[str, Any]:
    a = np.asarray(samples) * 1e6
    return {"median_us": float(np.median(a)), "min_us": float(a.min()), "loops": len(a),
            "first_ms": first_s * 1e3}


def machine() -> dict[str, Any]:
    info: dict[str, Any] = {"platform": platform.platform(), "python": platform.python_version(),
                            "cpus": os.cpu_count()}
    try:
        cpu = [x for x in Path("/proc/cpuinfo").read_text().splitlines() if "model name" in x]
        info["cpu"] = cpu[0].split(":", 1)[1].strip()
        info["mem_GiB"] = round(int(Path("/proc/meminfo").read_text().split()[1]) / 2**20, 1)
    except (OSError, IndexError):
        pass
    return info


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def run_grid(opts: argparse.Namespace, cases: list[grid.Case]) -> dict[str, Any]:
    backends = opts.backends.split(",")
    pools = {b: pool(b) for b in backends}
    samples: dict[str, dict[str, list[float]]] = {}
    first: dict[str, dict[str, float]] = {}
    errors: dict[str, dict[str, str]] = {}
    families = list(dict.fromkeys(c.family for c in cases))
    logit_keys = [c.key for c in cases if c.logits] if "jax" in backends else []
    logit_samples: dict[str, dict[str, list[float]]] = {k: {} for k in logit_keys}
    nbytes: dict[str, int] = {}
    rounds, versions = [], {}
    try:
        for b, p in pools.items():
            versions[b] = p.submit(worker.versions).result()
        for r in range(opts.rounds):
            t0, load0 = time.time(), load()
            for i, fam in enumerate(families):
                shift = (i + r) % len(backends)
                for b in backends[shift:] + backends[:shift]:
                    keys = [c.key for c in cases if c.family == fam and grid.runs_on(b, c)]
                    if not keys:
                        continue
                    try:
                        res = pools[b].submit(worker.run, keys, opts.quick, opts.repeats,
                                              opts.target_ms / 1e3, r > 0).result()
                    except BrokenProcessPool as e:  # a crashed worker: record, restart
                        pools[b] = pool(b)
                        res = [{"key": k, "error": f"worker died: {e}"} for k in keys]
                    for row in res:
                        if "error" in row:
                            errors.setdefault(row["key"], {})[b] = row["error"]
                        for name, m in row.items():
                            if isinstance(m, dict):
                                samples.setdefault(row["key"], {}).setdefault(name, [])
                                samples[row["key"]][name] += m["samples"]
                                first.setdefault(row["key"], {}).setdefault(name, m["first_s"])
                print(f"round {r + 1}/{opts.rounds} {fam} ({time.time() - t0:.0f} s)",
                      file=sys.stderr, flush=True)
            for key in logit_keys:
                try:
                    res = pools["jax"].submit(logits.compare, key, opts.quick, opts.repeats + 2,
                                              opts.target_ms / 1e3, r > 0).result()
                except BrokenProcessPool:  # recorded as a missing row
                    pools["jax"] = pool("jax")
                    continue
                nbytes[key] = res["bytes"]
                for name in ("call", "exp_pass", "copy"):
                    logit_samples[key].setdefault(name, []).extend(res[name]["samples"])
            rounds.append({"round": r + 1, "seconds": round(time.time() - t0, 1),
                           "loadavg_start": load0, "loadavg_end": load()})
            if opts.max_minutes and time.time() - opts.t0 > 60 * opts.max_minutes:
                break
    finally:
        for p in pools.values():
            p.shutdown(cancel_futures=True)
    rows = []
    for c in cases:
        got = samples.get(c.key, {})
        rows.append({"key": c.key, "family": c.family, "fn": c.fn, "B": c.B,
                     "backends": {n: stats(s, first[c.key][n]) for n, s in got.items()},
                     "errors": errors.get(c.key, {})})
    logit_rows = [{"key": k, "bytes": nbytes[k], **{n: stats(s, 0.0) for n, s in got.items()}}
                  for k, got in logit_samples.items() if got]
    return {"rows": rows, "logits": logit_rows, "rounds": rounds, "versions": versions}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="tiny sizes, one round (seconds)")
    output.add_arguments(ap, "grid.json, step.json, bleu.json and RESULTS.md")
    ap.add_argument("--rounds", type=int, help="interleaved rounds (default 3; quick 1)")
    ap.add_argument("--repeats", type=int, default=3, help="timed loops per case and round")
    ap.add_argument("--target-ms", type=float, default=20.0, help="length of one timed loop")
    ap.add_argument("--backends", help=f"comma list of {','.join(worker.BACKENDS)} (default: "
                    "all; quick: jax,torch,numpy)")
    ap.add_argument("--only", action="append", metavar="TEXT",
                    help="only the families whose name contains TEXT (no step, no BLEU)")
    ap.add_argument("--grid-only", action="store_true", help="skip bench.step and bench.bleu")
    ap.add_argument("--max-minutes", type=float, help="start no grid round after this many "
                    "minutes of the run (at least one round runs; the rounds done are recorded)")
    opts = ap.parse_args(argv)
    out = output.directory(opts, quick=opts.quick)
    opts.rounds = opts.rounds or (1 if opts.quick else 3)
    opts.backends = opts.backends or ("jax,torch,numpy" if opts.quick else ",".join(
        worker.BACKENDS))
    if opts.quick:
        opts.target_ms = min(opts.target_ms, 2.0)
    cases = grid.cases(opts.quick, opts.only)
    if not cases:
        raise SystemExit(f"--only {opts.only} matches no family")
    opts.t0 = time.time()
    if not (opts.only or opts.grid_only):  # the separate commands first: they take known time
        quick = ["--quick"] if opts.quick else []
        for cmd in (["bench.step", *quick], ["bench.bleu", *(["--n", "48"] if quick else [])]):
            print(f"python -m {' '.join(cmd)}", file=sys.stderr, flush=True)
            subprocess.run([sys.executable, "-m", *cmd, "--out", str(out)], cwd=ROOT, check=True)
    t0, load0 = time.time(), load()
    result: dict[str, Any] = {"meta": {
        "command": "python -m bench " + " ".join(sys.argv[1:] if argv is None else argv),
        "quick": opts.quick, "started": time.strftime("%Y-%m-%d %H:%M:%S"),
        "rounds": opts.rounds, "repeats": opts.repeats, "target_ms": opts.target_ms,
        "backends": opts.backends.split(","), "machine": machine(), "loadavg_start": load0}}
    result.update(run_grid(opts, cases))
    result["meta"].update(duration_s=round(time.time() - t0, 1), loadavg_end=load(),
                          rounds=len(result["rounds"]))
    (out / "grid.json").write_text(json.dumps(report.rounded(result), indent=1) + "\n")
    print(f"wrote {report.write(out)} ({time.time() - opts.t0:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
