"""Loader for the small end-to-end example batch shipped with the package."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

__all__ = ["load_example_batch"]


def load_example_batch() -> dict[str, Any]:
    """Read ``zero_text/fixtures/example_batch.json``.

    Returns:
        A dict with

        * ``"challenger_outputs"``: list of 8 raw challenger outputs, each
          meant to hold ``<question>...</question>`` and a ``\\boxed{}``
          answer (one is deliberately malformed, two ask nearly the same
          question);
        * ``"solver_replies"``: 8 rows of K=5 raw solver replies (row b
          answers question b), mixing agreement, disagreement, a numerically
          equal but textually different answer, and unparseable replies;
        * ``"description"``: a sentence saying what the batch is for.
    """
    path = resources.files("zero_text").joinpath("fixtures", "example_batch.json")
    with path.open("r", encoding="utf-8") as handle:
        data: dict[str, Any] = json.load(handle)
    outputs = data["challenger_outputs"]
    replies = data["solver_replies"]
    if len(outputs) != len(replies) or any(len(row) != len(replies[0]) for row in replies):
        raise ValueError("example_batch.json is malformed: expected B outputs and B x K replies")
    return data
