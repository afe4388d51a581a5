"""``python -m zero_selfplay``: every arm on tuning seeds, the tables, JSON and plot.

Seeds ``>= 200`` are fresh seeds, kept for the pre-registered run: the command line
refuses them unless ``--fresh`` is given.  The ``selfplay`` extra (flax, optax,
matplotlib) is checked before anything imports it: without it the command prints one
line naming the install command and exits with status 1.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import sys
import time
from collections.abc import Sequence

#: Every ``Config`` field the command line can override: type and help text.
_OVERRIDES: dict[str, tuple[type, str]] = {
    "rounds": (int, "Challenger/Solver rounds"),
    "proposals": (int, "questions the Challenger proposes, and the Solver votes on, per round"),
    "votes": (int, "Solver samples per question for the vote, K"),
    "labels": (str, "pseudo-labels from per-item votes ('item') or from R-Zero's majority of "
                    "final answers ('cart')"),
    "band": (str, "keep a question when its calibrated reliability is >= --threshold "
                  "('calibrated') or its vote share is in [--band-low, --band-high] ('share')"),
    "threshold": (float, "least calibrated reliability kept, with --band calibrated"),
    "band_low": (float, "lower edge of the vote-share band (kept), with --band share"),
    "band_high": (float, "upper edge of the vote-share band (kept), with --band share"),
    "solver_steps": (int, "GRPO updates of the Solver per round"),
    "solver_batch": (int, "questions per Solver update"),
    "group": (int, "fresh Solver samples per question: the GRPO group"),
    "solver_lr": (float, "Adam learning rate of the Solver"),
    "kl": (float, "weight of the exact per-step KL to the Solver at the start of the round"),
    "abduce_share": (float, "share of each update's questions drawn from derived abduction "
                            "carts, with --abduce"),
    "challenger_lr": (float, "Adam learning rate of the Challenger"),
    "challenger_reward": (str, "pay the Challenger R-Zero's uncertainty times the label's "
                               "calibrated reliability ('reliable') or the uncertainty alone"),
    "strength": (float, "weight of the repetition penalty in challenger_rewards"),
    "eval_samples": (int, "samples per evaluation cart for the sampled and majority accuracies"),
}  # fmt: skip
_CHOICES = {
    "labels": ("item", "cart"),
    "band": ("calibrated", "share"),
    "challenger_reward": ("reliable", "uncertainty"),
}
_SWITCHES = {
    "eval_range": "keep the Challenger to templates inside the evaluation range",
    "abduce": "turn kept deduction carts into abduction carts (the voted total shown)",
    "weight_advantages": "scale advantages by the calibrated reliability",
    "step_rewards": "per-step rewards from per-item labels; needs --labels item",
}


def _require(*modules: str) -> None:
    """Exit with one line naming the install command when a module of the extra is missing."""
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        raise SystemExit(
            f"python -m zero_selfplay needs {', '.join(missing)} (the [selfplay] extra): "
            'run pip install ".[selfplay]" in the zero-rewards checkout'
        )


def _default(name: str, cfg: object, smoke: object) -> str:
    def show(value: object) -> str:
        if isinstance(value, bool):
            return "on" if value else "off"
        return "free" if value is None else str(value)

    value, tiny = getattr(cfg, name), getattr(smoke, name)
    return f"default {show(value)}" + ("" if tiny == value else f"; --smoke: {show(tiny)}")


def parser() -> argparse.ArgumentParser:
    """The command line (every option has a help text; defaults are ``Config()``'s)."""
    from zero_selfplay.loop import ARMS, FRESH_FROM, SMOKE, Config

    cfg = Config()
    p = argparse.ArgumentParser(
        prog="python -m zero_selfplay",
        description="R-Zero Challenger/Solver co-evolution on cart arithmetic, with controls. "
        "Without overrides every setting is the configuration frozen for the pre-registered "
        "run (zero_selfplay/PREREGISTRATION.md).",
    )
    p.add_argument("--seeds", type=int, nargs="+", default=None, metavar="SEED",
                   help=f"run seeds (default 0 1 2, with --smoke 0; tuning: 0-99; seeds >= "
                        f"{FRESH_FROM} need --fresh)")  # fmt: skip
    p.add_argument("--fresh", action="store_true",
                   help=f"allow fresh seeds >= {FRESH_FROM} (the pre-registered run only)")
    p.add_argument("--arms", nargs="+", choices=list(ARMS), default=list(ARMS), metavar="ARM",
                   help="arms to run (default: all): coevolve (the method), seed_only (the "
                        "control), oracle (true labels), uniform (untrained Challenger), "
                        "no_band (every well-formed question kept)")  # fmt: skip
    p.add_argument("--smoke", action="store_true", help="tiny configuration (CI smoke test)")
    p.add_argument("--json", metavar="FILE", help="write the full results as JSON")
    p.add_argument("--plot", metavar="FILE.png", help="write the figure (needs matplotlib)")
    p.add_argument("--quiet", action="store_true", help="print only the tables")
    for name, (kind, text) in _OVERRIDES.items():
        metavar = None if name in _CHOICES else {int: "N", float: "X"}[kind]
        p.add_argument("--" + name.replace("_", "-"), type=kind, default=None, metavar=metavar,
                       choices=_CHOICES.get(name), help=f"{text} ({_default(name, cfg, SMOKE)})")
    for name, text in _SWITCHES.items():
        p.add_argument("--" + name.replace("_", "-"), action=argparse.BooleanOptionalAction,
                       help=f"{text} ({_default(name, cfg, SMOKE)})")  # fmt: skip
    p.add_argument(
        "--quota",
        metavar="SHARE|free",
        help=f"share of deduction proposals in [0, 1], or 'free' (no quota) "
        f"({_default('quota', cfg, SMOKE)})",
    )
    return p


def main(argv: Sequence[str] | None = None) -> int:
    _require("flax", "optax")
    from zero_selfplay import report
    from zero_selfplay.loop import FRESH_FROM, SMOKE, Config, run

    p = parser()
    args = p.parse_args(argv)
    if args.plot:
        _require("matplotlib")  # before the run, not after it
    if args.seeds is None:
        args.seeds = [0] if args.smoke else [0, 1, 2]
    fresh = [s for s in args.seeds if s >= FRESH_FROM]
    if fresh and not args.fresh:
        p.error(f"seeds {fresh} are fresh (>= {FRESH_FROM}), kept for the pre-registered run; "
                "pass --fresh to use them")  # fmt: skip

    cfg = SMOKE if args.smoke else Config()
    changes = {
        name: getattr(args, name)
        for name in [*_OVERRIDES, *_SWITCHES]
        if getattr(args, name) is not None
    }
    if args.quota is not None:
        if args.quota == "free":
            changes["quota"] = None
        else:
            try:
                changes["quota"] = float(args.quota)
            except ValueError:
                p.error(f"--quota must be a share in [0, 1] or 'free', got {args.quota!r}")
    cfg = dataclasses.replace(cfg, **changes)
    log = None if args.quiet else (lambda s: print(s, flush=True))
    if log:
        log(f"config: {dataclasses.asdict(cfg)}")
    prov = report.provenance(sys.argv[1:] if argv is None else list(argv))
    t0 = time.perf_counter()
    result = run(tuple(args.seeds), cfg, tuple(args.arms), log=log)
    print()
    print(report.table(result))
    print()
    print(report.diagnostics_table(result))
    print()
    print(report.outcome_text(report.outcome(result)))
    if args.json:
        report.write_json(result, args.json, prov)
    if args.plot:
        report.plot(result, args.plot)
    print(f"\n{len(args.seeds)} seeds x {len(args.arms)} arms in {time.perf_counter() - t0:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
