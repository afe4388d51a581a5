"""Tables, the pre-registered outcome (paired test), JSON with provenance, and the plot."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

__all__ = ["diagnostics_table", "outcome", "outcome_text", "paired", "plot", "provenance", "table",
           "write_json"]

TASKS = ("deduction", "abduction")


def _greedy(ev: dict, task: str) -> float:
    return float(ev[task]["greedy"])


def _totals(rounds: list[dict]) -> tuple[int, int, int]:
    accepted = int(sum(r["accepted"] for r in rounds))
    invalid = int(sum(r["invalid"] for r in rounds))
    proposed = int(sum(np.sum(r["task_count"]) for r in rounds))
    return accepted, invalid, proposed


def table(result: dict) -> str:
    """Per arm and seed: greedy accuracy before -> after on both frozen sets, counts."""
    lines = [
        f"{'arm':<10}{'seed':>5}  {'deduction (greedy)':<20}{'abduction (greedy)':<20}"
        f"{'accepted':>12}{'invalid':>12}",
    ]
    for arm in result["arms"]:
        gains = {t: [] for t in TASKS}
        for s in result["seeds"]:
            rounds = s["arms"][arm]["rounds"]
            cells = []
            for t in TASKS:
                before, after = _greedy(s["base"], t), _greedy(rounds[-1]["eval"], t)
                gains[t].append(after - before)
                cells.append(f"{before:.3f} -> {after:.3f}")
            acc, inv, prop = _totals(rounds)
            lines.append(
                f"{arm:<10}{s['seed']:>5}  {cells[0]:<20}{cells[1]:<20}"
                f"{f'{acc}/{prop}':>12}{f'{inv}/{prop}':>12}"
            )
        d, a = np.mean(gains["deduction"]), np.mean(gains["abduction"])
        lines.append(f"{arm:<10}{'mean':>5}  {f'gain {d:+.3f}':<20}{f'gain {a:+.3f}':<20}")
    return "\n".join(lines)


def _label_accuracy(rounds: list[dict]) -> tuple[np.ndarray, np.ndarray]:
    count = np.sum([r["bin_count"] for r in rounds], axis=0)
    right = np.sum([r["bin_correct"] for r in rounds], axis=0)
    return count, right


def diagnostics_table(result: dict) -> str:
    """Per arm (mean over seeds): final greedy / sampled / majority accuracy; share of
    the kept questions whose majority vote is right (whether or not the arm trains
    on votes); share of questions by task and by number of items; and the vote-label
    accuracy by vote share for the first arm."""
    lines = [
        f"{'arm':<10} {'deduction g/s/m':<19} {'abduction g/s/m':<19} {'vote acc kept':>14}"
        f"  {'ded share':>9}  items 2..6 share"
    ]
    base = result["seeds"]
    for label, evs in [("base", [s["base"] for s in base])]:
        cells = [_gsm(evs, t) for t in TASKS]
        lines.append(f"{label:<10} {cells[0]:<19} {cells[1]:<19}")
    for arm in result["arms"]:
        rounds = [r for s in base for r in s["arms"][arm]["rounds"]]
        finals = [s["arms"][arm]["rounds"][-1]["eval"] for s in base]
        cells = [_gsm(finals, t) for t in TASKS]
        kept = sum(r["accepted"] for r in rounds)
        right = sum(r["accepted_label_correct"] for r in rounds)
        tasks = np.sum([r["task_count"] for r in rounds], axis=0)
        items = np.sum([r["items_count"] for r in rounds], axis=0)
        share = " ".join(f"{x:.2f}" for x in items[2:] / max(items.sum(), 1))
        lines.append(
            f"{arm:<10} {cells[0]:<19} {cells[1]:<19} {right / max(kept, 1):>14.3f}"
            f"  {tasks[0] / max(tasks.sum(), 1):>9.2f}  {share}"
        )
    main = result["arms"][0]
    count, right = _label_accuracy([r for s in base for r in s["arms"][main]["rounds"]])
    k = len(count)
    lines.append("")
    lines.append(f"vote-label accuracy by vote share ({result['arms'][0]}, all seeds and rounds):")
    lines.append("  share  " + " ".join(f"{(i + 1) / k:>5.2f}" for i in range(k)))
    lines.append("  count  " + " ".join(f"{int(c):>5d}" for c in count))
    lines.append("  acc    " + " ".join(
        f"{r / c:>5.2f}" if c else "    -" for r, c in zip(right, count, strict=True)))  # fmt: skip
    return "\n".join(lines)


def _gsm(evs: list[dict], task: str) -> str:
    g, s, m = (np.mean([e[task][x] for e in evs]) for x in ("greedy", "sampled", "majority"))
    return f"{g:.3f}/{s:.3f}/{m:.3f}"


#: The pre-registered test (see PREREGISTRATION.md): co-evolution minus seed-only,
#: final greedy deduction accuracy, paired by seed.
ALPHA = 0.05  # two-sided Wilcoxon signed-rank p-value must be below this
MIN_GAIN = 0.02  # and the mean paired difference at least this
MAX_ABDUCTION_DROP = 0.02  # and co-evolution's mean abduction change at least -this
BOOTSTRAP = 10_000  # resamples of the seeds for the percentile 95% interval
BOOTSTRAP_SEED = 0


def _final(seed: dict, arm: str, task: str, kind: str = "greedy") -> float:
    return float(seed["arms"][arm]["rounds"][-1]["eval"][task][kind])


def paired(result: dict, arm: str = "coevolve", control: str = "seed_only",
           task: str = "deduction") -> dict[str, Any]:
    """Per-seed paired differences ``arm - control`` of final greedy accuracy, their
    mean, a two-sided Wilcoxon signed-rank p-value (SciPy) and a bootstrap 95% interval."""
    from scipy import stats

    seeds = result["seeds"]
    diff = np.array([_final(s, arm, task) - _final(s, control, task) for s in seeds])
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    boots = diff[rng.integers(0, len(diff), (BOOTSTRAP, len(diff)))].mean(1)
    lo, hi = np.percentile(boots, [2.5, 97.5])
    p = float(stats.wilcoxon(diff).pvalue) if len(diff) > 1 and np.any(diff != 0) else 1.0
    return {
        "seeds": [s["seed"] for s in seeds],
        "difference": diff.tolist(),
        "mean": float(diff.mean()),
        "ci95": [float(lo), float(hi)],
        "wilcoxon_p": p,
    }


def outcome(result: dict) -> dict[str, Any]:
    """The pre-registered outcome, with the diagnostics that explain it."""
    seeds = result["seeds"]
    arms = result["arms"]
    out: dict[str, Any] = {}
    if "coevolve" in arms and "seed_only" in arms:
        primary = paired(result)
        abd = [_final(s, "coevolve", "abduction") - s["base"]["abduction"]["greedy"]
               for s in seeds]  # fmt: skip
        checks = {
            "p_below_alpha": primary["wilcoxon_p"] < ALPHA,
            "mean_gain_at_least": primary["mean"] >= MIN_GAIN,
            "abduction_drop_within": float(np.mean(abd)) >= -MAX_ABDUCTION_DROP,
        }
        out["primary"] = {**primary, "coevolve_abduction_change": abd,
                          "coevolve_abduction_mean_change": float(np.mean(abd)),
                          "abduction_vs_seed_only": paired(result, task="abduction"),
                          **checks, "met": bool(all(checks.values()))}  # fmt: skip
    for arm in arms:
        rounds = [[s["arms"][arm]["rounds"][r] for s in seeds]
                  for r in range(len(seeds[0]["arms"][arm]["rounds"]))]  # fmt: skip
        out.setdefault("per_arm", {})[arm] = {
            "deduction_gain": [_final(s, arm, "deduction") - s["base"]["deduction"]["greedy"]
                               for s in seeds],  # fmt: skip
            "abduction_gain": [_final(s, arm, "abduction") - s["base"]["abduction"]["greedy"]
                               for s in seeds],  # fmt: skip
            "kept_label_accuracy_by_round": [
                float(sum(x["accepted_label_correct"] for x in rs)
                      / max(sum(x["accepted"] for x in rs), 1)) for rs in rounds],  # fmt: skip
            "majority_minus_greedy_by_round": [
                float(np.mean([x["eval"]["deduction"]["majority"] - x["eval"]["deduction"]["greedy"]
                               for x in rs])) for rs in rounds],  # fmt: skip
        }
    out["base_majority_minus_greedy"] = float(np.mean(
        [s["base"]["deduction"]["majority"] - s["base"]["deduction"]["greedy"] for s in seeds]))
    out["seconds"] = result["seconds"]
    return out


def outcome_text(o: dict) -> str:
    lines = []
    if "primary" in o:
        p = o["primary"]
        lines.append("primary: coevolve - seed_only, final greedy deduction accuracy, by seed")
        lines.append("  seeds " + " ".join(f"{s:>6d}" for s in p["seeds"]))
        lines.append("  diff  " + " ".join(f"{d:+.3f}" for d in p["difference"]))
        lines.append(f"  mean {p['mean']:+.4f}  95% CI [{p['ci95'][0]:+.4f}, {p['ci95'][1]:+.4f}]"
                     f"  Wilcoxon p = {p['wilcoxon_p']:.4f}")  # fmt: skip
        abd = p["coevolve_abduction_mean_change"]
        lines.append(f"  coevolve abduction change: mean {abd:+.4f}")
        verdict = "MET" if p["met"] else "NOT MET"
        lines.append(f"  criterion (p < {ALPHA}, mean >= {MIN_GAIN:+.2f}, abduction >= "
                     f"{-MAX_ABDUCTION_DROP:+.2f}): {verdict}")  # fmt: skip
    lines.append(f"{'arm':<10} {'ded gain':>9} {'abd gain':>9}  kept-label acc by round"
                 "   majority-greedy gap by round")  # fmt: skip
    lines.append(f"{'base':<10} {'':>9} {'':>9}  {'':<24}  {o['base_majority_minus_greedy']:.3f}")
    for arm, v in o["per_arm"].items():
        acc = " ".join(f"{x:.3f}" for x in v["kept_label_accuracy_by_round"])
        gap = " ".join(f"{x:.3f}" for x in v["majority_minus_greedy_by_round"])
        lines.append(f"{arm:<10} {np.mean(v['deduction_gain']):>+9.3f} "
                     f"{np.mean(v['abduction_gain']):>+9.3f}  {acc:<24}  {gap}")  # fmt: skip
    return "\n".join(lines)


def provenance(argv: list[str] | None = None) -> dict[str, Any]:
    """Git revision (and whether tracked files of the packages differ from it), versions
    and a UTC timestamp.  Call it when a run starts: other work may commit meanwhile."""
    import datetime
    import importlib.metadata as md
    import platform
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parent

    def git(*args: str) -> str | None:
        try:
            return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True,
                                  check=True, timeout=20).stdout.strip()  # fmt: skip
        except (OSError, subprocess.SubprocessError):
            return None

    dirty = {}
    for name in ("zero_selfplay", "zero_jax"):
        status = git("status", "--porcelain", "--untracked-files=no", "--", str(root.parent / name))
        dirty[name] = None if status is None else bool(status)
    versions = {"python": platform.python_version()}
    for pkg in ("zero-rewards", "jax", "jaxlib", "flax", "optax", "numpy", "scipy"):
        try:
            versions[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            versions[pkg] = None
    return {
        "git_revision": git("rev-parse", "HEAD"),
        "git_dirty": dirty,  # tracked files changed against HEAD, per package
        "versions": versions,
        "timestamp_utc": datetime.datetime.now(datetime.UTC).isoformat(
            timespec="seconds"),
        "argv": argv,
        "machine": {"platform": platform.platform(), "cpus": __import__("os").cpu_count()},
    }


def write_json(result: dict, path: str, prov: dict[str, Any] | None = None) -> None:
    """Write a run with its provenance (taken now unless given) and its outcome."""
    with open(path, "w") as f:
        json.dump({"provenance": prov or provenance(), **result, "outcome": outcome(result)},
                  f, indent=1)  # fmt: skip


def plot(result: dict, path: str) -> None:
    """Headline: per-seed paired differences.  Then, per arm and round: greedy accuracy
    on both sets, kept-label accuracy, the majority-vs-greedy gap (one legend for the
    arms, above the panels); and the calibration of the first arm: label accuracy
    against calibrated reliability (or against the vote share, for runs that recorded
    no reliability)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    seeds, arms = result["seeds"], result["arms"]
    o = outcome(result)
    fig, axes = plt.subplots(2, 3, figsize=(16, 9))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    arm_color = {arm: colors[i % len(colors)] for i, arm in enumerate(arms)}
    ax = axes[0, 0]
    if "primary" in o:
        p = o["primary"]
        x = np.arange(len(p["seeds"]))
        ax.bar(x, p["difference"], color=["#4c72b0" if d > 0 else "#c44e52"
                                          for d in p["difference"]])  # fmt: skip
        ax.axhspan(*p["ci95"], color="grey", alpha=0.25, label="bootstrap 95% interval")
        ax.axhline(p["mean"], color="k", lw=1.5, label=f"mean {p['mean']:+.3f}")
        ax.axhline(MIN_GAIN, color="#dd8452", ls="--", lw=1.5,
                   label=f"bar of the pre-registered test, {MIN_GAIN:+.2f}")  # fmt: skip
        ax.axhline(0, color="k", lw=0.5)
        ax.set_xticks(x)
        ax.set_xticklabels([str(s) for s in p["seeds"]])
        ax.set_title(f"coevolve \u2212 seed_only, final greedy deduction\n"
                     f"per seed (Wilcoxon p = {p['wilcoxon_p']:.3g})")  # fmt: skip
        ax.set_xlabel("seed")
        ax.set_ylabel("paired difference in accuracy")
        top = max(max(p["difference"]), p["ci95"][1], MIN_GAIN)
        ax.set_ylim(min(0.0, min(p["difference"]) * 1.1), top * 1.45)  # room for the legend
        ax.legend(fontsize=8, loc="upper left")
    for ax, task in zip((axes[0, 1], axes[0, 2]), TASKS, strict=True):
        for arm in arms:
            curves = np.array([[_greedy(s["base"], task)]
                               + [_greedy(r["eval"], task) for r in s["arms"][arm]["rounds"]]
                               for s in seeds])  # fmt: skip
            ax.plot(np.arange(curves.shape[1]), curves.mean(0), marker="o",
                    color=arm_color[arm], label=arm)  # fmt: skip
        ax.set_title(f"{task}: greedy accuracy, mean of {len(seeds)} seeds")
        ax.set_xlabel("round (0 = base model)")
        ax.set_ylabel("greedy accuracy on the evaluation set")
    for ax, key, title, ylabel in (
        (axes[1, 0], "kept_label_accuracy_by_round", "accuracy of the kept vote labels",
         "share of kept labels that are right"),
        (axes[1, 1], "majority_minus_greedy_by_round", "deduction: majority-of-K minus greedy",
         "majority accuracy minus greedy accuracy"),
    ):  # fmt: skip
        for arm in arms:
            ys = o["per_arm"][arm][key]
            if key == "majority_minus_greedy_by_round":
                ys = [o["base_majority_minus_greedy"], *ys]
                xs = np.arange(len(ys))
            else:
                xs = np.arange(1, len(ys) + 1)
            ax.plot(xs, ys, marker="o", color=arm_color[arm], label=arm)
        ax.set_title(f"{title}, all seeds")
        ax.set_xlabel("round (0 = base model)" if xs[0] == 0 else "round")
        ax.set_ylabel(ylabel)
    for ax in (*axes[0, 1:], *axes[1, :2]):
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    _plot_calibration(axes[1, 2], result)
    for ax in axes.flat:
        ax.grid(alpha=0.3)
    handles, labels = axes[0, 1].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", ncol=len(arms), fontsize=11,
               frameon=False, bbox_to_anchor=(0.5, 1.0))  # fmt: skip
    fig.tight_layout(rect=(0, 0, 1, 0.955))
    fig.savefig(path, dpi=100)
    plt.close(fig)


#: Calibration bins with fewer labels than this are left out of the plot (too noisy).
MIN_BIN_LABELS = 20


def _plot_calibration(ax: Any, result: dict) -> None:
    seeds, main = result["seeds"], result["arms"][0]
    rounds = len(seeds[0]["arms"][main]["rounds"])
    calibrated = "reliability_count" in seeds[0]["arms"][main]["rounds"][0]
    count_key, right_key = (("reliability_count", "reliability_correct") if calibrated
                            else ("bin_count", "bin_correct"))  # fmt: skip
    for r in range(rounds):
        rs = [s["arms"][main]["rounds"][r] for s in seeds]
        count = np.sum([x[count_key] for x in rs], axis=0)
        right = np.sum([x[right_key] for x in rs], axis=0)
        ok = count >= MIN_BIN_LABELS
        k = len(count)
        # reliability bins are [i/k, (i+1)/k); vote shares are (i+1)/k exactly
        x = (np.arange(k) + 0.5) / k if calibrated else (np.arange(k) + 1) / k
        ax.plot(x[ok], (right / np.maximum(count, 1))[ok], marker="o", label=f"round {r + 1}")
    ax.plot([0, 1], [0, 1], ls=":", color="k", lw=1, label="perfect calibration")
    cfg = result["config"]
    if calibrated and cfg.get("band") == "calibrated":
        ax.axvline(cfg["threshold"], color="grey", ls="--", lw=1,
                   label=f"kept from {cfg['threshold']}")  # fmt: skip
    elif not calibrated and "band_low" in cfg:
        ax.axvspan(cfg["band_low"], cfg["band_high"], color="grey", alpha=0.15, label="band")
    what = "calibrated reliability" if calibrated else "vote share of the majority answer"
    task = "deduction labels" if calibrated else "labels"
    ax.set_title(f"{main}: are the {task} right?\n"
                 f"(all seeds; bins of at least {MIN_BIN_LABELS} labels)")  # fmt: skip
    ax.set_xlabel(what + (" (bin centre)" if calibrated else ""))
    ax.set_ylabel("share of labels that are right")
    ax.set_xlim(0, 1.02)
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize=8, loc="upper left")
