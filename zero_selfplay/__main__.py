"""``python -m zero_selfplay``: every arm on tuning seeds, the tables, JSON and plot.

Seeds ``>= 200`` are fresh seeds, kept for the pre-registered run: the command line
refuses them unless ``--fresh`` is given.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time

from zero_selfplay import report
from zero_selfplay.loop import ARMS, FRESH_FROM, SMOKE, Config, run

_OVERRIDES = (
    ("rounds", int), ("solver_steps", int), ("solver_lr", float), ("challenger_lr", float),
    ("band_low", float), ("band_high", float), ("strength", float), ("proposals", int),
    ("labels", str), ("band", str), ("threshold", float), ("kl", float),
    ("challenger_reward", str), ("votes", int), ("group", int), ("solver_batch", int),
    ("eval_samples", int), ("abduce_share", float),
)  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m zero_selfplay",
        description="R-Zero Challenger/Solver co-evolution on cart arithmetic, with controls.",
    )
    p.add_argument("--seeds", type=int, nargs="+", default=None,
                   help=f"run seeds (default 0 1 2, with --smoke 0; tuning: 0-99; seeds >= "
                        f"{FRESH_FROM} need --fresh)")  # fmt: skip
    p.add_argument("--fresh", action="store_true",
                   help=f"allow fresh seeds >= {FRESH_FROM} (the pre-registered run only)")
    p.add_argument("--arms", nargs="+", choices=list(ARMS), default=list(ARMS))
    p.add_argument("--smoke", action="store_true", help="tiny configuration (CI smoke test)")
    p.add_argument("--json", metavar="FILE", help="write the full results as JSON")
    p.add_argument("--plot", metavar="FILE.png", help="write accuracy and label-quality plots")
    p.add_argument("--quiet", action="store_true", help="print only the tables")
    for name, kind in _OVERRIDES:
        p.add_argument("--" + name.replace("_", "-"), type=kind, default=None)
    p.add_argument(
        "--eval-range",
        action=argparse.BooleanOptionalAction,
        help="keep the Challenger to templates inside the evaluation range",
    )
    for flag, text in (("abduce", "turn kept deduction carts into abduction carts"),
                       ("weight_advantages", "scale advantages by the calibrated reliability"),
                       ("step_rewards", "per-step rewards from per-item labels")):
        p.add_argument("--" + flag.replace("_", "-"), action=argparse.BooleanOptionalAction,
                       help=text)  # fmt: skip
    p.add_argument(
        "--quota",
        metavar="SHARE|free",
        help="share of deduction proposals in [0, 1], or 'free' (no quota)",
    )
    args = p.parse_args(argv)
    if args.seeds is None:
        args.seeds = [0] if args.smoke else [0, 1, 2]
    fresh = [s for s in args.seeds if s >= FRESH_FROM]
    if fresh and not args.fresh:
        p.error(f"seeds {fresh} are fresh (>= {FRESH_FROM}), kept for the pre-registered run; "
                "pass --fresh to use them")  # fmt: skip

    cfg = SMOKE if args.smoke else Config()
    changes = {
        name: getattr(args, name)
        for name in [n for n, _ in _OVERRIDES] + ["eval_range", "abduce", "weight_advantages",
                                                       "step_rewards"]
        if getattr(args, name) is not None
    }
    if args.quota is not None:
        changes["quota"] = None if args.quota == "free" else float(args.quota)
    cfg = dataclasses.replace(cfg, **changes)
    log = None if args.quiet else (lambda s: print(s, flush=True))
    if log:
        log(f"config: {dataclasses.asdict(cfg)}")
    prov = report.provenance(sys.argv[1:] if argv is None else argv)
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
