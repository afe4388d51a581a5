"""Root pytest set-up for the doctests of the library packages (``pytest -q`` collects
the ``>>>`` examples of zero_contracts, zero_jax, zero_torch and zero_text; see
``[tool.pytest.ini_options]``).

The examples show what a user sees with JAX's defaults, so each one runs with x64
off even though ``parity_tests/conftest.py`` turns it on for the suite.  Without
torch (an optional extra) the zero_torch modules are not collected.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent
LIBRARY = ("zero_contracts", "zero_jax", "zero_torch", "zero_text")

collect_ignore = [] if importlib.util.find_spec("torch") else ["zero_torch"]


@pytest.fixture(autouse=True)
def _library_doctests_with_jax_defaults(request: pytest.FixtureRequest) -> Iterator[None]:
    path = Path(request.node.path)
    if not path.is_relative_to(ROOT) or path.relative_to(ROOT).parts[0] not in LIBRARY:
        yield
        return
    import jax

    with jax.enable_x64(False):
        yield
