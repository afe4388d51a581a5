"""Separately-run cases: benches with their own command and their own JSON in the
results directory, each rendered into bench/RESULTS.md by its own module.

A case module (``bench/<name>.py``, run as ``python -m bench.<name>``) writes
``<results>/<name>.json`` (through :mod:`bench.output`: ``--out`` / ``--update-committed``)
and offers, without importing anything heavy at module level:

- ``markdown(result: dict, results_dir: str) -> str``: its section's body (Markdown,
  no heading; ``results_dir`` is the JSON / PNG directory relative to the document);
- optionally ``headline(result: dict) -> list[str]``: bullet lines for the top of the
  document;
- optionally ``targets(result: dict | None) -> list[dict]``: its targets, built with
  :func:`bench.targets.target` (given ``None`` when the case has not been run, so that
  its targets read "not measured").

Adding a case is one :class:`Separate` entry in :data:`CASES`; a case whose module or
JSON is absent is reported "not run" with the command that runs it.
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = ["CASES", "Loaded", "Separate", "load"]


@dataclass(frozen=True)
class Separate:
    """One separately-run case: ``bench.<name>`` writes ``<name>.json``."""

    name: str
    title: str
    command: str
    #: what it measures, for the "not run" line
    summary: str

    @property
    def module(self) -> str:
        return f"bench.{self.name}"

    @property
    def file(self) -> str:
        return f"{self.name}.json"


#: The separately-run cases, in the document's order.
CASES: tuple[Separate, ...] = (
    Separate(
        "step",
        "Rewards inside a GRPO step",
        "python -m bench.step",
        "what the rewards cost inside a jitted GRPO update, against the torch twin and "
        "NumPy on the host",
    ),
    Separate(
        "strings",
        "Strings to advantages on a realistic GRPO batch",
        "python -m bench.strings",
        "extraction, grouping, votes, rewards and advantages of a GRPO batch of replies "
        "against the naive math-verify path",
    ),
    Separate(
        "bleu",
        "BLEU repetition clustering",
        "python -m bench.bleu",
        "zero_text.bleu_clusters against the published NLTK + scikit-learn loop",
    ),
)


@dataclass(frozen=True)
class Loaded:
    """A case with its module (``None`` if absent) and its result (``None`` if not run)."""

    case: Separate
    module: ModuleType | None
    result: dict[str, Any] | None

    @property
    def ran(self) -> bool:
        return self.module is not None and self.result is not None

    def call(self, attr: str, *args: Any, default: Any = None) -> Any:
        fn = getattr(self.module, attr, None) if self.module is not None else None
        return fn(*args) if fn is not None else default


def _module(name: str) -> ModuleType | None:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        if e.name == name:  # the case's module itself is absent (not one of its imports)
            return None
        raise


def load(results: Path, cases: tuple[Separate, ...] = CASES) -> list[Loaded]:
    """Every case with its module and the JSON in ``results`` (if present)."""
    out = []
    for case in cases:
        path = results / case.file
        result = json.loads(path.read_text()) if path.exists() else None
        out.append(Loaded(case, _module(case.module), result))
    return out
