"""``python -m bench.report [DIR] [--check]``: RESULTS.md generated from the JSON files of a
run (``grid.json``, ``step.json``, ``bleu.json``, and ``strings.json`` when present).  The
committed ``bench/results/`` gives ``bench/RESULTS.md``; any other DIR, ``DIR/RESULTS.md``.
The text depends on the JSON only (the same files give the same bytes)."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from bench import output, targets
from bench import strings as bench_strings


def rounded(x: Any) -> Any:
    """``x`` with every float rounded to 4 significant digits (lighter JSON)."""
    if isinstance(x, float):
        return float(f"{x:.4g}") if math.isfinite(x) else None
    if isinstance(x, dict):
        return {k: rounded(v) for k, v in x.items()}
    if isinstance(x, list):
        return [rounded(v) for v in x]
    return x


def num(v: float | None) -> str:
    if v is None:
        return "-"
    if abs(v) >= 100:
        return f"{v:,.0f}"
    return f"{v:.1f}" if abs(v) >= 10 else f"{v:.2f}" if abs(v) >= 1 else f"{v:.2g}"


def load(d: Path, name: str) -> dict[str, Any] | None:
    p = d / f"{name}.json"
    return json.loads(p.read_text()) if p.exists() else None


def grid_tables(grid: dict[str, Any]) -> list[str]:
    rows = [r for r in grid["rows"] if r["fn"] not in ("self_certainty", "token_entropy")]
    sizes = sorted({r["B"] for r in rows})
    head = "| family | " + " | ".join(f"B = {b:,}" for b in sizes) + " |"
    sep = "|---|" + "---:|" * len(sizes)

    def table(cell: Any) -> list[str]:
        out = [head, sep]
        for fam in dict.fromkeys(r["family"] for r in rows):
            by_b = {r["B"]: r for r in rows if r["family"] == fam}
            out.append(f"| `{fam}` | " + " | ".join(
                cell(by_b[b]["backends"]) if b in by_b else "" for b in sizes) + " |")
        return out

    def us(b: dict[str, Any]) -> str:
        parts = [num(b[n]["median_us"]) if n in b else "-" for n in ("jax", "jax_jit")]
        return " / ".join(parts + ([num(b["jax_sync"]["median_us"])] if "jax_sync" in b else []))

    def rel(b: dict[str, Any]) -> str:
        if "jax" not in b:
            return "-"
        return " / ".join(num(b[n]["median_us"] / b["jax"]["median_us"]) if n in b else "-"
                          for n in ("torch", "torch_compile", "numpy"))

    return ["### zero_jax, µs per call: eager / inside a `jax.jit` / eager with async "
            "dispatch off (B ≤ 4,096)", "", *table(us), "",
            "### Time relative to zero_jax eager: torch eager / `torch.compile` / NumPy oracle "
            "(> 1: JAX faster; the oracle runs up to B = 65,536)", "", *table(rel)]


def summary(grid: dict[str, Any] | None, step: dict[str, Any] | None,
            bleu: dict[str, Any] | None) -> list[str]:
    out = []
    if grid:
        m = grid["meta"]
        loads = [r["loadavg_start"][0] for r in grid["rounds"]] + [m["loadavg_end"][0]]
        versions = {k: v for b in grid["versions"].values() for k, v in b.items()}
        out.append(
            f"- This run: `{m['command'].strip()}`, started {m['started']}, {num(m['duration_s'])}"
            f" s for the grid; {m['rounds']} rounds of {m['repeats']} loops of about "
            f"{num(m['target_ms'])} ms per case and backend; {m['machine'].get('cpus')} × "
            f"{m['machine'].get('cpu', '?')}; " + ", ".join(
                f"{k} {v}" for k, v in sorted(versions.items())) + ".")
        # the bench's own timed process keeps about one core busy (load about 1)
        busy = max(loads) > 0.5 + 0.5 * (m["machine"].get("cpus") or 1)
        out.append(
            f"- **Load**: 1-minute load average {num(min(loads))} to {num(max(loads))} on "
            f"{m['machine'].get('cpus')} cores during the grid (per round in `grid.json`). "
            + ("The machine was shared with other jobs: absolute times are inflated and noisy; "
               "the ratios compare backends timed in turn within seconds of each other."
               if busy else "The bench's own process accounts for that load: the machine "
               "was otherwise idle."))
        for other, what in (("torch", "the torch twin (eager)"),
                            ("torch_compile", "`torch.compile` of the twin"),
                            ("numpy", "the NumPy oracle")):
            med, best = targets.ratios(grid, other), targets.ratios(grid, other, stat="min_us")
            if med:
                ahead = sum(x > 1 for x in med)
                out.append(f"- zero_jax eager against {what} at B ≥ 4,096: geometric mean of "
                           f"their time / JAX's **{num(targets.geomean(med))}x** on medians "
                           f"({num(targets.geomean(best))}x on minima); JAX ahead on {ahead} "
                           f"of {len(med)} rows.")
        jit = targets.ratios(grid, "jax", "jax_jit", min_b=0)
        if jit:
            out.append(f"- The eager call over the same call inside a `jax.jit`: "
                       f"{num(min(jit))}-{num(max(jit))}x (geometric mean "
                       f"{num(targets.geomean(jit))}x): what the eager call path costs.")
        sync = targets.ratios(grid, "jax", "jax_sync", min_b=0)
        if sync:
            out.append(f"- The eager call over the same with async dispatch off (B ≤ 4,096): "
                       f"{num(min(sync))}-{num(max(sync))}x (geometric mean "
                       f"{num(targets.geomean(sync))}x): what handing each computation to "
                       "JAX's runtime thread costs a small eager call.")
    if step:
        v = step["variants"]
        out.append("- GRPO step (`bench.step`), medians: " + "; ".join(
            f"{x['label']} {num(x['step_us'] / 1e3)} ms, rewards "
            f"**{100 * x['rewards_share']:.3g} %**" for x in v.values()) + ".")
    if bleu:
        same = "the same partition" if bleu["same_partition"] else "**different partitions**"
        out.append(f"- BLEU clusters (`bench.bleu`, {bleu['n']:,} questions): "
                   f"`zero_text.bleu_clusters` **{num(bleu['speedup'])}x** faster than the "
                   f"published NLTK + scikit-learn loop, {same}.")
    return out


def render(d: Path) -> str:
    grid, step, bleu, strings = (load(d, n) for n in ("grid", "step", "bleu", "strings"))
    out = ["# Bench results", "",
           "Generated by `python -m bench.report` from the JSON files in `results/`; do not "
           "edit. Commands and method: [README.md](README.md). Each backend runs in its own "
           "process; per family the backends take turns in a rotating order, over interleaved "
           "rounds of short timed loops; a cell is the median time per call over all loops "
           "(minima in `grid.json`). Inputs are the same NumPy arrays for every backend "
           "(`bench/grid.py`); JAX runs with x64 on (the dtypes torch returns).", "",
           "## Summary", "", *summary(grid, step, bleu)]
    if strings is not None:  # python -m bench.strings, run on its own
        out += bench_strings.headline(strings)
    out += ["", "## Targets", "", "| target | what | measured | status |", "|---|---|---|---|"]
    for t in targets.evaluate(grid, step) + bench_strings.targets(strings):
        shown = ", ".join(f"{k} {num(v) if not isinstance(v, list) else '-'.join(map(num, v))}"
                          for k, v in t["details"].items())
        status = f"**{t['status']}**" if t["status"] == targets.MET else t["status"]
        out.append(f"| `{t['name']}` | {t['what']} | {shown} | {status} |")
    if grid:
        out += ["", "## The size grid", "", *grid_tables(grid)]
        errors = [f"`{r['key']}` {b}: {e}" for r in grid["rows"] for b, e in r["errors"].items()]
        out += ["", *(f"- Error: {e}" for e in errors[:5])] if errors else []
        out += ["", "## Logits reductions against one exp pass and a copy", "",
                "At [8, 1,024, 32,768] (1 GiB of float32 logits, 512 MiB of bfloat16), in the "
                "JAX process, side by side: the public call, a jitted `sum(exp(x))` over V (one "
                "read and one exponential per logit) and a NumPy copy of the same bytes into a "
                "preallocated buffer. Read rate = logits bytes / median time.", "",
                "| case | call ms | torch / JAX | exp pass ms | copy ms | call GB/s | "
                "exp pass GB/s | copy GB/s |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
        by_key = {r["key"]: r for r in grid["rows"]}
        for row in grid["logits"]:
            r, b = targets.logits_rates(row), by_key[row["key"]]["backends"]
            tj = b["torch"]["median_us"] / b["jax"]["median_us"] if "torch" in b else None
            out.append(f"| `{row['key'].split('@')[0]}` | {num(row['call']['median_us'] / 1e3)}"
                       f" | {num(tj)} | {num(row['exp_pass']['median_us'] / 1e3)} | "
                       f"{num(row['copy']['median_us'] / 1e3)} | {num(r['call'])} | "
                       f"{num(r['exp_pass'])} | {num(r['copy'])} |")
    if step:
        c = step["config"]
        out += ["", "## Rewards inside a GRPO step", "",
                f"`python -m bench.step`: {c['prompts']} prompts × {c['samples']} samples, a "
                f"linear head {c['hidden']} → {c['vocab']} over {c['T']} tokens, Adam; rewards "
                "= consensus, pseudo-rewards, the band, group advantages; "
                f"{c['steps']} interleaved steps per variant. For (a) the rewards' time is the "
                "same rewards jitted alone, timed right after each step (an upper bound of their "
                "cost inside the step).", "",
                "| variant | step ms (median) | step ms (min) | rewards µs | share |",
                "|---|---:|---:|---:|---:|"]
        for v in step["variants"].values():
            out.append(f"| {v['label']} | {num(v['step_us'] / 1e3)} | "
                       f"{num(v['step_min_us'] / 1e3)} | {num(v['rewards_us'])} | "
                       f"{100 * v['rewards_share']:.3g} % |")
        out.append(f"| the update alone | {num(step['update_only_us'] / 1e3)} | | | |")
    return "\n".join(out) + "\n"


def path_for(d: Path) -> Path:
    return d.parent / "RESULTS.md" if d.resolve() == output.COMMITTED else d / "RESULTS.md"


def write(d: Path) -> Path:
    p = path_for(d)
    p.write_text(render(d), encoding="utf-8")
    return p


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.report", description=__doc__.split("\n")[0])
    ap.add_argument("dir", nargs="?", type=Path, default=output.COMMITTED)
    ap.add_argument("--check", action="store_true", help="exit 1 if RESULTS.md is stale")
    args = ap.parse_args(argv)
    p = path_for(args.dir)
    if args.check:
        fresh = p.exists() and p.read_text(encoding="utf-8") == render(args.dir)
        print(f"{p} {'is up to date' if fresh else 'is stale: run python -m bench.report'}")
        return 0 if fresh else 1
    print(f"wrote {write(args.dir)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
