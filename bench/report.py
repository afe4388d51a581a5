"""``python -m bench.report``: print, document or plot the results of a bench run.

  python -m bench.report [JSON]            # the table, the summary and the targets
  python -m bench.report --markdown        # bench/RESULTS.md and the README summary
  python -m bench.report --markdown --check  # exit 1 if either is stale
  python -m bench.report --plots           # redraw the PNGs beside JSON

``JSON`` defaults to the committed ``bench/results/latest.json``; the separately-run
cases' JSON files beside it are read too.  The work lives in :mod:`bench.aggregate`
(raw timings to rows), :mod:`bench.targets` (the targets), :mod:`bench.tables` and
:mod:`bench.render` (text, with the prose in :mod:`bench.templates`) and
:mod:`bench.plots`.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from bench import extras, output, render, separate
from bench.render import RESULTS_MD, markdown, render_markdown, summary
from bench.tables import results as table

__all__ = ["RESULTS_MD", "main", "markdown", "render_markdown", "summary", "table"]

LATEST = output.COMMITTED / "latest.json"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.report", description=__doc__.split("\n")[0])
    ap.add_argument(
        "json",
        nargs="?",
        type=Path,
        default=LATEST,
        help="results of `python -m bench` (default: the committed bench/results/latest.json)",
    )
    ap.add_argument(
        "--markdown",
        nargs="?",
        type=Path,
        const=False,
        default=None,
        metavar="PATH",
        help="write the Markdown document to PATH (default: bench/RESULTS.md for the committed "
        "results, which also updates the README's bench summary; else RESULTS.md beside JSON)",
    )
    ap.add_argument(
        "--check",
        action="store_true",
        help="with --markdown: write nothing, exit 1 if a file differs from the generated text",
    )
    ap.add_argument("--plots", action="store_true", help="redraw the grid's PNGs beside JSON")
    args = ap.parse_args(argv)
    if not args.json.exists():
        raise SystemExit(f"{args.json} does not exist: run python -m bench first")
    if args.plots:
        extras.require("python -m bench.report --plots", {"matplotlib": "matplotlib"})
        from bench import plots

        for path in plots.plots(json.loads(args.json.read_text()), args.json.parent):
            print(f"wrote {path}")
    if args.markdown is None:
        if not args.plots:
            result = json.loads(args.json.read_text())
            print(table(result))
            print()
            print(summary(result, render.all_targets(result, separate.load(args.json.parent))))
        return 0
    files = render.documents(args.json, args.markdown or None)
    if args.check:
        stale = [
            p
            for p, text in files.items()
            if not p.exists() or p.read_text(encoding="utf-8") != text
        ]
        for p in stale:
            print(f"{p} is stale: run python -m bench.report --markdown")
        if not stale:
            print(f"{', '.join(str(p) for p in files)} up to date")
        return 1 if stale else 0
    for p, text in files.items():
        p.write_text(text, encoding="utf-8")
        print(f"wrote {p}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
