"""Command line, summary line, JSON record and plot shared by the two stack examples
(``tunix_grpo.py`` and ``trl_grpo.py``); each example supplies its ``run``."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np


def plot(result: dict[str, Any], path: str, window: int = 10) -> None:
    """Reward per step and its moving average."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    r = np.asarray(result["reward_mean"])
    fig, ax = plt.subplots(figsize=(6, 3.2))
    ax.plot(np.arange(1, r.size + 1), r, lw=0.8, alpha=0.5, label="reward mean per step")
    if r.size >= window:
        ma = np.convolve(r, np.ones(window) / window, mode="valid")
        ax.plot(np.arange(window, r.size + 1), ma, lw=2, label=f"{window}-step average")
        acc = np.convolve(result["accuracy"], np.ones(window) / window, mode="valid")
        ax.plot(
            np.arange(window, r.size + 1),
            acc,
            lw=1.5,
            ls="--",
            label="accuracy (true sum; not rewarded), average",
        )
    ax.set_xlabel("GRPO step")
    ax.set_ylabel("reward / accuracy")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(f"{result['stack']}: {result['reward']}", fontsize=8)
    ax.legend(fontsize=7, loc="center right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(
    run: Callable[..., dict[str, Any]],
    stack: str,
    detail: Callable[[dict[str, Any]], str],
    description: str,
    argv: list[str] | None = None,
) -> None:
    """Parse the shared options, ``run`` the example, print one summary line and
    write the JSON record / plot when asked; ``detail(result)`` ends the line."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--num-generations", type=int, default=8)
    parser.add_argument("--prompts-per-step", type=int, default=4)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--alpha", type=float, help="add the format term with this alpha")
    parser.add_argument("--band", type=float, nargs=2, metavar=("LOW", "HIGH"))
    parser.add_argument("--json", metavar="PATH", help="write the run record here")
    parser.add_argument("--plot", metavar="PATH", help="write a reward plot (PNG) here")
    args = parser.parse_args(argv)
    result = run(
        steps=args.steps,
        num_generations=args.num_generations,
        prompts_per_step=args.prompts_per_step,
        learning_rate=args.lr,
        seed=args.seed,
        alpha=args.alpha,
        band=tuple(args.band) if args.band else None,
    )
    r = result["reward_mean"]
    k = max(1, len(r) // 5)
    print(
        f"{stack}: {result['steps']} steps in {result['wall_time_s']} s, reward mean "
        f"first {k}: {np.mean(r[:k]):.3f}, last {k}: {np.mean(r[-k:]):.3f}, "
        f"params_changed={result['params_changed']}, {detail(result)}"
    )
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
    if args.plot:
        plot(result, args.plot)
