"""``python -m zero_selfplay``: every arm on seeds 100-102, the table, JSON and plot."""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time

from zero_selfplay import report
from zero_selfplay.loop import ARMS, SMOKE, Config, run

_OVERRIDES = (
    ("rounds", int), ("solver_steps", int), ("solver_lr", float), ("challenger_lr", float),
    ("band_low", float), ("band_high", float), ("strength", float), ("proposals", int),
)  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m zero_selfplay",
        description="R-Zero Challenger/Solver co-evolution on cart arithmetic, with controls.",
    )
    p.add_argument("--seeds", type=int, nargs="+", default=[100, 101, 102])
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
    p.add_argument(
        "--quota",
        metavar="SHARE|free",
        help="share of deduction proposals in [0, 1], or 'free' (no quota)",
    )
    args = p.parse_args(argv)

    cfg = SMOKE if args.smoke else Config()
    changes = {
        name: getattr(args, name)
        for name in [n for n, _ in _OVERRIDES] + ["eval_range"]
        if getattr(args, name) is not None
    }
    if args.quota is not None:
        changes["quota"] = None if args.quota == "free" else float(args.quota)
    cfg = dataclasses.replace(cfg, **changes)
    log = None if args.quiet else (lambda s: print(s, flush=True))
    if log:
        log(f"config: {dataclasses.asdict(cfg)}")
    t0 = time.perf_counter()
    result = run(tuple(args.seeds), cfg, tuple(args.arms), log=log)
    print()
    print(report.table(result))
    print()
    print(report.diagnostics_table(result))
    print()
    print(report.acceptance_text(report.acceptance(result)))
    if args.json:
        report.write_json(result, args.json)
    if args.plot:
        report.plot(result, args.plot)
    print(f"\n{len(args.seeds)} seeds x {len(args.arms)} arms in {time.perf_counter() - t0:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
