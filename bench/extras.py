"""The bench's own dependencies, checked before any work: a missing one ends the
command with one line naming what to install (no traceback).

The bench runs from a checkout of the repository; ``pip install -e ".[bench]"``
installs everything every bench command needs (torch, matplotlib, optax,
math-verify, nltk, scikit-learn).
"""

from __future__ import annotations

import importlib.util

__all__ = ["INSTALL", "missing", "require"]

INSTALL = 'pip install -e ".[bench]"'


def missing(modules: dict[str, str]) -> list[str]:
    """The distribution names of the ``modules`` (import name -> distribution) that
    cannot be imported."""
    out = []
    for module, dist in modules.items():
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            out.append(dist)
    return out


def require(command: str, modules: dict[str, str]) -> None:
    """Exit with one line if any of ``modules`` is missing."""
    absent = missing(modules)
    if absent:
        raise SystemExit(
            f"{command} needs {', '.join(absent)} ({'is' if len(absent) == 1 else 'are'} "
            f"not installed): {INSTALL} (from the repository root)"
        )
