"""Command line, summary line, JSON record and plot shared by the two stack examples
(``tunix_grpo.py`` and ``trl_grpo.py``); each example supplies its ``run``.

``python examples/grpo_cli.py RECORD.json PLOT.png`` redraws the plot of a run from its
JSON record (``--json``), without training again.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

#: The modules each example imports, and the extra of ``pyproject.toml`` that installs them.
NEEDS = {
    "trl": {m: "trl" for m in ("torch", "transformers", "datasets", "trl")},
    "tunix": {m: "tunix" for m in ("flax", "optax", "tunix")},
}
#: ``--plot`` draws with matplotlib, which the ``lab`` extra installs.
PLOT_NEEDS = {"matplotlib": "lab"}


def parser(description: str = "") -> argparse.ArgumentParser:
    """The options shared by both examples."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--steps", type=int, default=20, help="GRPO steps (default 20)")
    p.add_argument("--num-generations", type=int, default=8, metavar="G",
                   help="completions sampled per prompt: the GRPO group (default 8)")
    p.add_argument("--prompts-per-step", type=int, default=4, metavar="N",
                   help="prompts per GRPO step (default 4)")
    p.add_argument("--lr", type=float, default=1e-3, help="learning rate (default 1e-3)")
    p.add_argument("--seed", type=int, default=0, help="seed of the model and the prompts")
    p.add_argument("--alpha", type=float,
                   help="add the format term: alpha * agreement + (1 - alpha) * has a box")
    p.add_argument("--band", type=float, nargs=2, metavar=("LOW", "HIGH"),
                   help="train only on prompts whose vote share is in [LOW, HIGH]")
    p.add_argument("--json", metavar="PATH", help="write the run record here")
    p.add_argument("--plot", metavar="PATH", help="write a reward plot (PNG) here")
    return p  # fmt: skip


def require(stack: str, doc: str | None = None, argv: list[str] | None = None) -> None:
    """Parse the command line (so ``--help`` needs no extra) and exit with one line naming
    the install command when a module the run needs is missing; call it before the
    example's heavy imports, so nothing trains (or even loads) first."""
    args = parser((doc or "").split("\n")[0]).parse_args(argv)
    needs = {**NEEDS[stack], **(PLOT_NEEDS if args.plot else {})}
    missing = {m: x for m, x in needs.items() if importlib.util.find_spec(m) is None}
    if missing:
        extras = ",".join(sorted(set(missing.values())))
        pin = "-c constraints.txt " if "trl" in missing.values() else ""  # the CPU torch
        raise SystemExit(
            f"{stack}_grpo.py needs {', '.join(missing)} (the [{extras}] "
            f"extra{'s' * (',' in extras)}): run pip install {pin}\".[{extras}]\" in the "
            "zero-rewards checkout"
        )


def plot(result: dict[str, Any], path: str, window: int = 10) -> None:
    """Reward per step, its moving average and the (never rewarded) accuracy; the legend
    sits under the axes, off the curves."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    r = np.asarray(result["reward_mean"])
    fig, ax = plt.subplots(figsize=(7, 3.8))
    ax.plot(np.arange(1, r.size + 1), r, lw=0.8, alpha=0.5, color="C0", label="reward, per step")
    if r.size >= window:
        ma = np.convolve(r, np.ones(window) / window, mode="valid")
        ax.plot(np.arange(window, r.size + 1), ma, lw=2, color="C0",
                label=f"reward, {window}-step mean")  # fmt: skip
        acc = np.convolve(result["accuracy"], np.ones(window) / window, mode="valid")
        ax.plot(np.arange(window, r.size + 1), acc, lw=1.5, ls="--", color="C2",
                label=f"accuracy vs the true sum (never rewarded), {window}-step mean")  # fmt: skip
    ax.set_xlabel("GRPO step")
    ax.set_ylabel("reward / accuracy")
    ax.set_xlim(0, r.size + 1)
    ax.set_ylim(-0.02, 1.02)
    ax.grid(alpha=0.3)
    ax.set_title(f"{result['stack']}: {result['reward']}", fontsize=9)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.17), ncol=3,
              frameon=False, handlelength=1.8, columnspacing=1.2)  # fmt: skip
    fig.savefig(path, dpi=120, bbox_inches="tight")
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
    args = parser(description).parse_args(argv)
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


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1].startswith("-"):
        sys.exit("usage: python examples/grpo_cli.py RECORD.json PLOT.png (redraw a run's plot)")
    if importlib.util.find_spec("matplotlib") is None:
        sys.exit('grpo_cli.py needs matplotlib (the [lab] extra): run pip install ".[lab]" in '
                 "the zero-rewards checkout")  # fmt: skip
    plot(json.loads(Path(sys.argv[1]).read_text()), sys.argv[2])
