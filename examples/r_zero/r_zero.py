"""R-Zero end to end: a text Challenger and a Solver co-evolving inside TRL or Tunix.

Per seed, a small GPT-2-shaped Challenger and Solver are warm-started (models.py), then
every arm runs R-Zero's iterations from copies of them (zero_stacks.r_zero.loop):
Challenger GRPO on ChallengerReward against the frozen Solver's votes, a pool voted and
banded into frozen labels, Solver GRPO on SolverReward, evaluation on the seed's frozen
deduction and abduction carts.  The outcome is pre-registered in
examples/r_zero/PREREGISTRATION.md.

    python examples/r_zero/r_zero.py --stack trl --seeds 0 1 --json run.json --plot run.png
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import importlib.metadata as md
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(Path(__file__).resolve().parent)]

import models  # noqa: E402  (examples/r_zero/models.py)
import numpy as np  # noqa: E402

from zero_stacks.r_zero import ARM_HELP, ARMS, Settings, run_arms  # noqa: E402

#: Tuning seeds are below FRESH_FROM; seeds from FRESH_FROM on are the pre-registered run's.
FRESH_FROM = 300
#: The pre-registered outcome (PREREGISTRATION.md): metric, arms compared, test.
PRIMARY = "pass@1"
SECONDARY = "greedy"
ALPHA = 0.05
#: A configuration small enough for CI: every arm, a few steps each.
SMOKE = {
    "settings": dict(iterations=1, challenger_steps=2, challenger_generations=4, votes=4,
                     pool=16, solver_steps=2, solver_prompts=2, solver_generations=4,
                     eval_per_kind=8, eval_samples=2),
    "model": dict(labelled=64, warm_solver_steps=10, warm_challenger_steps=10, warm_batch=16),
}  # fmt: skip


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python examples/r_zero/r_zero.py",
        description=__doc__.split("\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="arms:\n"
        + "\n".join(f"  {a:<17} {h}" for a, h in ARM_HELP.items())
        + "\n\nWithout overrides every setting is the one frozen for the pre-registered run.",
    )
    p.add_argument("--stack", choices=("trl", "tunix"), default="trl")
    p.add_argument(
        "--seeds",
        type=int,
        nargs="+",
        default=[0],
        metavar="SEED",
        help=f"run seeds (tuning: below {FRESH_FROM}; fresh seeds need --fresh)",
    )
    p.add_argument(
        "--fresh",
        action="store_true",
        help=f"allow seeds >= {FRESH_FROM} (the pre-registered run only)",
    )
    p.add_argument(
        "--arms",
        nargs="+",
        choices=ARMS,
        default=list(ARMS),
        metavar="ARM",
        help="arms to run (default: all); random needs coevolve",
    )
    p.add_argument("--smoke", action="store_true", help="tiny configuration for CI")
    p.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch / XLA CPU threads (default 1: the machine is shared)",
    )
    p.add_argument("--json", metavar="FILE", help="write every number and the provenance")
    p.add_argument("--plot", metavar="FILE.png", help="write the per-iteration figure")
    p.add_argument("--quiet", action="store_true", help="print only the summary")
    p.add_argument(
        "--warm-cache",
        metavar="DIR",
        help="TRL: keep the warm start here and reuse it (a run started beside "
        "this one with the same settings reads it instead of training again)",
    )
    p.add_argument("--merge", nargs="+", metavar="RUN.json",
                   help="run nothing: join the seeds of these records (same stack, arms and "
                   "settings), print the outcome, write --json / --plot")  # fmt: skip
    for cls, prefix in ((Settings, ""), (models.ModelConfig, "")):
        for f in dataclasses.fields(cls):
            value = f.default
            p.add_argument(f"--{prefix}{f.name.replace('_', '-')}", type=type(value),
                           default=None, metavar=type(value).__name__.upper(),
                           help=f"(frozen: {value})")  # fmt: skip
    return p


def configs(args: argparse.Namespace) -> tuple[Settings, models.ModelConfig]:
    s, m = Settings(), models.ModelConfig()
    if args.smoke:
        s = dataclasses.replace(s, **SMOKE["settings"])
        m = dataclasses.replace(m, **SMOKE["model"])
    over = {k: v for k, v in vars(args).items() if v is not None}
    s = dataclasses.replace(s, **{f.name: over[f.name] for f in dataclasses.fields(Settings)
                                  if f.name in over})  # fmt: skip
    m = dataclasses.replace(m, **{f.name: over[f.name] for f in dataclasses.fields(m)
                                  if f.name in over})  # fmt: skip
    return s, m


def provenance(argv: Sequence[str], stack: str) -> dict[str, Any]:
    def git(*a: str) -> str | None:
        try:
            return subprocess.run(["git", *a], cwd=ROOT, capture_output=True, text=True,
                                  check=True, timeout=20).stdout.strip()  # fmt: skip
        except (OSError, subprocess.SubprocessError):
            return None

    status = git("status", "--porcelain", "--untracked-files=no", "--", "examples/r_zero",
                 "zero_stacks", "zero_jax", "zero_torch", "zero_text")  # fmt: skip
    pkgs = ["numpy", "scipy", "torch", "transformers", "trl"] if stack == "trl" else [
        "numpy", "scipy", "jax", "flax", "optax", "google-tunix", "transformers"]  # fmt: skip
    versions: dict[str, str | None] = {"python": platform.python_version()}
    for pkg in pkgs:
        try:
            versions[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            versions[pkg] = None
    return {
        "git_revision": git("rev-parse", "HEAD"),
        "git_dirty": None if status is None else bool(status),
        "versions": versions,
        "timestamp_utc": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "argv": list(argv),
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count()},
        "load_average_start": list(os.getloadavg()),
    }


def set_threads(stack: str, threads: int) -> None:
    """One thread by default: on a shared 2-core machine a second torch thread made a
    warm-start step 40 times slower in tuning (spinning against other processes)."""
    if stack == "trl":
        import torch

        torch.set_num_threads(threads)
    elif threads == 1:
        os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                              "intra_op_parallelism_threads=1")  # fmt: skip


# ------------------------------------------------------------------ outcome


def final(seed: dict[str, Any], arm: str, metric: str) -> float:
    return float(seed["arms"][arm][-1]["eval"][metric])


def outcome(result: dict[str, Any]) -> dict[str, Any]:
    """Per-arm means after the last iteration; the pre-registered paired test."""
    seeds, arms = result["seeds"], result["arms"]
    out: dict[str, Any] = {"primary_metric": PRIMARY, "per_arm": {}}
    for metric in (PRIMARY, SECONDARY):
        out["per_arm"][metric] = {"warm": float(np.mean([s["warm"][metric] for s in seeds]))}
        for arm in arms:
            out["per_arm"][metric][arm] = float(np.mean([final(s, arm, metric) for s in seeds]))
    if {"coevolve", "fixed_challenger"} <= set(arms) and len(seeds) >= 2:
        from scipy import stats

        diff = [final(s, "coevolve", PRIMARY) - final(s, "fixed_challenger", PRIMARY)
                for s in seeds]  # fmt: skip
        gain = [final(s, "coevolve", PRIMARY) - s["warm"][PRIMARY] for s in seeds]
        p = (float(stats.wilcoxon(diff, alternative="two-sided").pvalue)
             if any(d != 0 for d in diff) else 1.0)  # fmt: skip
        out["primary"] = {
            "seeds": [s["seed"] for s in seeds],
            "difference": diff,
            "mean": float(np.mean(diff)),
            "wilcoxon_p": p,
            "coevolve_minus_warm": gain,
            "met": bool(np.mean(diff) > 0 and p < ALPHA and np.mean(gain) > 0),
        }
    return out


def outcome_text(o: dict[str, Any]) -> str:
    lines = []
    for metric, row in o["per_arm"].items():
        lines.append(f"{metric:>7}: " + "  ".join(f"{a} {v:.3f}" for a, v in row.items()))
    if "primary" in o:
        p = o["primary"]
        lines.append(
            f"primary ({PRIMARY}, pooled, after the last iteration): coevolve - "
            f"fixed_challenger {p['mean']:+.3f}, two-sided Wilcoxon p = {p['wilcoxon_p']:.3g};"
            f" coevolve - warm start {np.mean(p['coevolve_minus_warm']):+.3f}: "
            f"{'MET' if p['met'] else 'NOT MET'}")  # fmt: skip
    return "\n".join(lines)


# ------------------------------------------------------------------ plot

COLORS = {"coevolve": "C0", "fixed_challenger": "C1", "no_band": "C2", "random": "C7",
          "truth": "C3"}  # fmt: skip


def plot(result: dict[str, Any], path: str) -> None:
    """Per iteration: each arm's greedy accuracy and pass@1 (mean of seeds thick, seeds
    thin), label accuracy of the kept votes, the pool's mean vote share and its distinct
    BLEU clusters, the Challenger's reward; the primary paired differences by seed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    seeds, arms = result["seeds"], result["arms"]
    n_it = result["settings"]["iterations"]
    its = np.arange(n_it + 1)
    fig, axes = plt.subplots(2, 4, figsize=(19, 8.5))

    def series(arm: str, get: Any, warm: Any = None) -> np.ndarray:
        rows = []
        for s in seeds:
            vals = [get(r) for r in s["arms"][arm]]
            rows.append(([warm(s)] if warm else []) + vals)
        return np.array(rows, dtype=float)

    panels = [
        (axes[0, 0], "greedy", "greedy accuracy, frozen eval carts (pooled)"),
        (axes[0, 1], "pass@1", "sampled pass@1, frozen eval carts (pooled)"),
    ]
    for ax, metric, title in panels:
        for arm in arms:
            y = series(arm, lambda r, m=metric: r["eval"][m], lambda s, m=metric: s["warm"][m])
            for row in y:
                ax.plot(its, row, color=COLORS[arm], lw=0.5, alpha=0.3)
            ax.plot(its, y.mean(0), color=COLORS[arm], lw=2.2, marker="o", label=arm)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("iteration (0: warm start)")
        ax.set_xticks(its)
    x1 = np.arange(1, n_it + 1)
    small = [
        (axes[0, 2], lambda r: r["dataset"].get("label_accuracy_kept", np.nan),
         "label accuracy of the kept questions' votes"),
        (axes[0, 3], lambda r: r["dataset"].get("share_mean", np.nan),
         "mean vote share of the pool's questions"),
        (axes[1, 0], lambda r: r["dataset"].get("clusters", np.nan) / max(1, r["dataset"][
            "distinct"]), "distinct BLEU clusters / distinct questions in the pool"),
        (axes[1, 2], lambda r: np.mean(r["challenger"]["reward"][-5:]) if "challenger" in r
         else np.nan, "Challenger reward (last 5 steps of each phase)"),
    ]  # fmt: skip
    for ax, get, title in small:
        for arm in arms:
            y = series(arm, get)
            ax.plot(x1, np.nanmean(y, 0) if np.isfinite(y).any() else y[0], color=COLORS[arm],
                    lw=2, marker="o", label=arm)  # fmt: skip
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("iteration")
        ax.set_xticks(x1)
    ax = axes[1, 1]  # where the pool's questions sit: the vote-share histogram
    votes = result["settings"]["votes"]
    centers = np.arange(1, votes + 1) / votes
    for arm, it, style in (("fixed_challenger", n_it - 1, "-"), ("coevolve", 0, ":"),
                           ("coevolve", n_it - 1, "-")):  # fmt: skip
        if arm not in arms:
            continue
        h = np.sum([s["arms"][arm][it]["dataset"].get("share_hist", [0] * votes) for s in seeds],
                   axis=0).astype(float)  # fmt: skip
        ax.plot(centers, h / max(h.sum(), 1), color=COLORS[arm], ls=style, marker="o", lw=2,
                label=f"{arm}, iteration {it + 1}")  # fmt: skip
    ax.axvspan(result["settings"]["band_low"], result["settings"]["band_high"], color="k",
               alpha=0.07)  # fmt: skip
    ax.set_title("vote share p of the pool's questions (shaded: band)", fontsize=10)
    ax.set_xlabel("majority share of the Solver's votes")
    ax.set_ylabel("share of answered questions")
    ax.legend(fontsize=8)
    ax = axes[1, 3]
    o = outcome(result)
    if "primary" in o:
        p = o["primary"]
        x = np.arange(len(p["seeds"]))
        ax.bar(x, p["difference"], color=["C0" if d > 0 else "C3" for d in p["difference"]])
        ax.axhline(p["mean"], color="k", lw=1.2)
        ax.axhline(0, color="k", lw=0.5)
        ax.set_xticks(x)
        ax.set_xticklabels([str(s) for s in p["seeds"]], fontsize=8)
        ax.set_title(f"coevolve - fixed_challenger, final {PRIMARY}, by seed\nmean "
                     f"{p['mean']:+.3f} (black), two-sided Wilcoxon p = {p['wilcoxon_p']:.3g}",
                     fontsize=10)  # fmt: skip
        ax.set_xlabel("seed")
    else:
        ax.set_axis_off()
    for a in axes.flat:
        a.grid(alpha=0.3)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", ncol=len(arms), frameon=False, fontsize=11)
    st = result["settings"]
    plural = "s" * (len(seeds) != 1)
    fig.suptitle(f"{result['stack']}: {len(seeds)} seed{plural}, {n_it} iterations (Challenger "
                 f"{st['challenger_steps']} steps, pool {st['pool']}, {st['votes']} votes at "
                 f"T={st['vote_temperature']}, Solver {st['solver_steps']} steps); thin: seeds, "
                 "thick: mean", y=0.945, fontsize=10)  # fmt: skip
    fig.tight_layout(rect=(0, 0, 1, 0.92))
    fig.savefig(path, dpi=90)
    plt.close(fig)


# ------------------------------------------------------------------ main


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    argv = sys.argv[1:] if argv is None else list(argv)
    p = parser()
    args = p.parse_args(argv)
    if args.merge:
        return merge(args.merge, args.json, args.plot)
    fresh = [s for s in args.seeds if s >= FRESH_FROM]
    if fresh and not args.fresh:
        p.error(f"seeds {fresh} are fresh (>= {FRESH_FROM}), kept for the pre-registered run; "
                "pass --fresh to use them")  # fmt: skip
    if "random" in args.arms and "coevolve" not in args.arms:
        p.error("the random arm copies the coevolve arm's reward rate: run it with coevolve")
    set_threads(args.stack, args.threads)
    if args.stack == "tunix":  # every phase builds a new GRPOLearner: compile each program once
        import atexit
        import shutil
        import tempfile

        import jax

        cache = tempfile.mkdtemp(prefix="r-zero-xla-")
        atexit.register(shutil.rmtree, cache, ignore_errors=True)  # this run's programs only
        jax.config.update("jax_compilation_cache_dir", cache)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    s, m = configs(args)
    prov = provenance(argv, args.stack)
    log = (lambda x: None) if args.quiet else (lambda x: print(x, flush=True))
    arms = [a for a in ARMS if a in args.arms]
    start = time.perf_counter()
    records: list[dict[str, Any]] = []
    result: dict[str, Any] = {}

    def save(done: bool) -> None:
        """The record so far (written after every seed, so a stopped run keeps its seeds)."""
        prov["load_average_now"] = list(os.getloadavg())
        result.update({
            "stack": args.stack,
            "provenance": prov,
            "settings": dataclasses.asdict(s),
            "model": dataclasses.asdict(m),
            "frozen": s == Settings() and m == models.ModelConfig(),
            "arms": arms,
            "seeds": records,
            "complete": done,
            "wall_time_s": round(time.perf_counter() - start, 1),
        })  # fmt: skip
        result["outcome"] = outcome(result)
        if args.json:
            Path(args.json).parent.mkdir(parents=True, exist_ok=True)
            Path(args.json).write_text(json.dumps(result, indent=1) + "\n")

    for seed in args.seeds:
        t = time.perf_counter()
        challenger, solver = models.warm_roles(args.stack, m, args.warm_cache)
        warm_s = round(time.perf_counter() - t, 1)
        log(f"seed {seed}: warm start {warm_s} s")
        rec = run_arms(challenger, solver, s, seed, arms, log)
        rec["warm_start_s"] = warm_s
        records.append(rec)
        save(False)
    save(True)
    print(outcome_text(result["outcome"]))
    print(f"{len(records)} seeds x {len(arms)} arms in {result['wall_time_s']:.0f} s")
    if args.plot:
        plot(result, args.plot)
    return result


def merge(paths: Sequence[str], json_path: str | None, plot_path: str | None) -> dict[str, Any]:
    """One record from several runs of the same configuration (e.g. seeds run in two
    processes side by side): seeds joined in the given order, each run's provenance kept."""
    runs = [json.loads(Path(x).read_text()) for x in paths]
    same = ("stack", "arms", "settings", "model")
    for r in runs[1:]:
        for k in same:
            if r[k] != runs[0][k]:
                raise SystemExit(f"{k} differs between {paths[0]} and the other records")
    result = {k: runs[0][k] for k in (*same, "frozen")}
    result["provenance"] = [r["provenance"] for r in runs]
    result["seeds"] = [s for r in runs for s in r["seeds"]]
    result["wall_time_s"] = [r["wall_time_s"] for r in runs]
    result["merged_from"] = [Path(x).name for x in paths]
    result["outcome"] = outcome(result)
    print(outcome_text(result["outcome"]))
    if json_path:
        Path(json_path).write_text(json.dumps(result, indent=1) + "\n")
    if plot_path:
        plot(result, plot_path)
    return result


if __name__ == "__main__":
    main()
