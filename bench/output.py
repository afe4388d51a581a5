"""Where the bench writes: outside the repository unless asked.

Every bench command (``python -m bench``, ``bench.step``, ``bench.bleu`` and the
separately-run cases) writes its JSON and plots to a scratch directory by default,
``$TMPDIR/zero-rewards-bench`` (so that a run, quick or full, leaves ``git status``
clean), to ``--out DIR`` when given, and to the committed ``bench/results/`` only with
``--update-committed``, which also regenerates ``bench/RESULTS.md`` and the README's
bench summary from the committed results.  A quick run never writes the committed
results.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

__all__ = ["COMMITTED", "add_arguments", "directory", "finish", "is_committed", "scratch"]

#: The committed results (read by bench/RESULTS.md and the README).
COMMITTED = Path(__file__).resolve().parent / "results"


def scratch() -> Path:
    """The default output directory: outside the repository, reused by every run."""
    return Path(tempfile.gettempdir()) / "zero-rewards-bench"


def add_arguments(ap: argparse.ArgumentParser, what: str) -> None:
    """``--out DIR`` and ``--update-committed`` (mutually exclusive)."""
    group = ap.add_mutually_exclusive_group()
    group.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="DIR",
        help=f"directory for {what} (default: {scratch()}, outside the repository)",
    )
    group.add_argument(
        "--update-committed",
        action="store_true",
        help="write the committed results in bench/results/ and regenerate bench/RESULTS.md "
        "and the README's bench summary (a full run on a quiet machine only)",
    )


def is_committed(path: Path) -> bool:
    return path.resolve() == COMMITTED


def directory(opts: argparse.Namespace, *, quick: bool = False) -> Path:
    """The output directory of a run with options ``opts`` (see :func:`add_arguments`),
    created; a quick run into the committed results is refused."""
    out = COMMITTED if opts.update_committed else (opts.out or scratch())
    if quick and is_committed(out):
        raise SystemExit(
            "a quick run never replaces the committed results in bench/results/: "
            "drop --update-committed (or --out) to write to a scratch directory"
        )
    out.mkdir(parents=True, exist_ok=True)
    return out


def finish(out: Path) -> list[Path]:
    """After a run wrote ``out``: regenerate the results document beside it (the
    committed ``bench/RESULTS.md`` and the README's bench summary when ``out`` is
    ``bench/results/``, else ``out/RESULTS.md``); returns the files written."""
    from bench import render

    return render.write_documents(out)
