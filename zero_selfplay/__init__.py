"""R-Zero co-evolution on generated cart arithmetic (needs the ``selfplay`` extra).

A Challenger (a policy over cart templates) and a Solver (a chain model in Flax
NNX) co-evolve with the library's own R-Zero rewards; see ``loop.py`` for the
rounds and ``python -m zero_selfplay --help`` for the command line.  The names
below are loaded from ``zero_selfplay.loop`` on first use, so importing the
package (as ``python -m zero_selfplay`` does) does not import flax.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["ARMS", "SMOKE", "Arm", "Config", "Phases", "compiled_phases", "run", "run_seed"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(importlib.import_module("zero_selfplay.loop"), name)
    raise AttributeError(f"module 'zero_selfplay' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
