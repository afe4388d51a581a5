"""Tables, the pre-registered acceptance checks, JSON and the plot of a run."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from zero_selfplay.domain import N_MAX

__all__ = ["acceptance", "diagnostics_table", "plot", "table", "write_json"]

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


def acceptance(result: dict) -> dict[str, Any]:
    """The pre-registered checks of issue 6, computed from a run."""
    seeds = result["seeds"]
    arms = result["arms"]
    out: dict[str, Any] = {}
    gap = [s["base"]["deduction"]["majority"] - s["base"]["deduction"]["greedy"] for s in seeds]
    out["1_self_consistency_gap"] = {
        "majority_minus_greedy": gap, "met": bool(all(g >= 0.05 for g in gap)),
    }  # fmt: skip

    def gain(arm, task):
        return [
            _greedy(s["arms"][arm]["rounds"][-1]["eval"], task) - _greedy(s["base"], task)
            for s in seeds
        ]

    if "oracle" in arms:
        g = gain("oracle", "deduction")
        out["2_oracle_gain"] = {"deduction_gain": g, "mean": float(np.mean(g)),
                                "met": bool(np.mean(g) >= 0.04)}  # fmt: skip
    if "coevolve" in arms and "seed_only" in arms:
        ded, abd = gain("coevolve", "deduction"), gain("coevolve", "abduction")
        co = [_greedy(s["arms"]["coevolve"]["rounds"][-1]["eval"], "deduction") for s in seeds]
        so = [_greedy(s["arms"]["seed_only"]["rounds"][-1]["eval"], "deduction") for s in seeds]
        checks = {
            "every_seed_deduction_gain_ge_0.01": all(x >= 0.01 for x in ded),
            "beats_seed_only_every_seed": all(c > s for c, s in zip(co, so, strict=True)),
            "abduction_drop_le_0.02_every_seed": all(x >= -0.02 for x in abd),
        }
        out["3_headline"] = {
            "deduction_gain": ded, "abduction_gain": abd,
            "coevolve_deduction": co, "seed_only_deduction": so,
            **checks, "met": bool(all(checks.values())),
        }  # fmt: skip
    out["4_seconds"] = {"total": result["seconds"], "met": bool(result["seconds"] < 600)}
    return out


def acceptance_text(acc: dict) -> str:
    lines = []
    for name, v in acc.items():
        detail = {k: _fmt(x) for k, x in v.items() if k != "met"}
        lines.append(f"{name}: {'MET' if v['met'] else 'NOT MET'}  {detail}")
    return "\n".join(lines)


def _fmt(x):
    if isinstance(x, float):
        return round(x, 3)
    if isinstance(x, list):
        return [round(v, 3) for v in x]
    return x


def write_json(result: dict, path: str) -> None:
    with open(path, "w") as f:
        json.dump({**result, "acceptance": acceptance(result)}, f, indent=1)


def plot(result: dict, path: str) -> None:
    """Greedy accuracy per round for each arm (both sets), the label-accuracy curve
    by vote share, and where the Challenger's proposals went."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    seeds = result["seeds"]
    arms = result["arms"]
    fig, axes = plt.subplots(2, 2, figsize=(12, 8.5))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, task in zip(axes[0], TASKS, strict=True):
        for i, arm in enumerate(arms):
            curves = np.array([
                [_greedy(s["base"], task)]
                + [_greedy(r["eval"], task) for r in s["arms"][arm]["rounds"]]
                for s in seeds
            ])  # fmt: skip
            x = np.arange(curves.shape[1])
            for c in curves:
                ax.plot(x, c, color=colors[i % len(colors)], alpha=0.25, lw=1)
            ax.plot(x, curves.mean(0), color=colors[i % len(colors)], lw=2.2, marker="o",
                    label=arm)  # fmt: skip
        ax.set_title(f"{task}: greedy accuracy (mean of seeds; thin: each seed)")
        ax.set_xlabel("round (0 = base model)")
        ax.set_ylabel("greedy accuracy on the frozen set")
        ax.set_xticks(x)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    ax = axes[1, 0]
    main = arms[0]
    n_rounds = len(seeds[0]["arms"][main]["rounds"])
    for r in range(n_rounds):
        count, right = _label_accuracy([s["arms"][main]["rounds"][r] for s in seeds])
        k = len(count)
        share = (np.arange(k) + 1) / k
        ok = count > 0
        ax.plot(share[ok], (right / np.maximum(count, 1))[ok], marker="o",
                label=f"round {r + 1}")  # fmt: skip
    cfg = result["config"]
    ax.axvspan(cfg["band_low"], cfg["band_high"], color="grey", alpha=0.15, label="band")
    ax.plot([0, 1], [0, 1], ls=":", color="k", lw=1)
    ax.set_title(f"{main}: majority-label accuracy by vote share (all seeds)")
    ax.set_xlabel("vote share of the majority answer (consistency)")
    ax.set_ylabel("share of majority labels that are correct")
    ax.set_xlim(0, 1.02)
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax = axes[1, 1]
    width = 0.8 / max(len(arms), 1)
    labels = ["deduction"] + [f"{n} items" for n in range(2, N_MAX + 1)]
    for i, arm in enumerate(arms):
        rounds = [r for s in seeds for r in s["arms"][arm]["rounds"]]
        tasks = np.sum([r["task_count"] for r in rounds], axis=0)
        items = np.sum([r["items_count"] for r in rounds], axis=0)
        vals = np.concatenate([[tasks[0] / tasks.sum()], items[2:] / items.sum()])
        ax.bar(np.arange(len(vals)) + i * width, vals, width, label=arm,
               color=colors[i % len(colors)])  # fmt: skip
    ax.set_xticks(np.arange(len(labels)) + width * (len(arms) - 1) / 2)
    ax.set_xticklabels(labels)
    ax.set_title("share of solver-phase questions: deduction, and by number of items")
    ax.set_ylabel("share")
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
