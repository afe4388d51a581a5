"""Where a bench command writes: a scratch directory outside the repository by default
(a run leaves ``git status`` clean), ``--out DIR``, or the committed ``bench/results/``
with ``--update-committed`` (which also regenerates ``bench/RESULTS.md``)."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

COMMITTED = Path(__file__).resolve().parent / "results"


def scratch() -> Path:
    return Path(tempfile.gettempdir()) / "zero-rewards-bench"


def add_arguments(ap: argparse.ArgumentParser, what: str) -> None:
    group = ap.add_mutually_exclusive_group()
    group.add_argument("--out", type=Path, metavar="DIR",
                       help=f"directory for {what} (default: {scratch()})")
    group.add_argument("--update-committed", action="store_true",
                       help="write bench/results/ and regenerate bench/RESULTS.md (full runs)")


def directory(opts: argparse.Namespace, *, quick: bool = False) -> Path:
    out = COMMITTED if opts.update_committed else (opts.out or scratch())
    if quick and out.resolve() == COMMITTED:
        raise SystemExit("a quick run never replaces the committed results: drop "
                         "--update-committed")
    out.mkdir(parents=True, exist_ok=True)
    return out


def finish(out: Path) -> list[Path]:
    """Regenerate the results document from the JSON files in ``out``."""
    from bench import report

    return [report.write(out)]
