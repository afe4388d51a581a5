"""The contract table is the source of the docs: every public docstring of both twins
starts with the contract's header (summary, equation, paper, output dtype rule,
detached or differentiable), and the README's function table is the one rendered
from the contracts (``python -m zero_contracts.docs`` prints both)."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

import zero_jax
from zero_contracts import CONTRACTS, OUTPUT_RULES, PAPERS
from zero_contracts.docs import docstring_header, function_table, normalized

torch = pytest.importorskip("torch", reason="the torch twin's docstrings are checked too")
import zero_torch  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("package", [zero_jax, zero_torch], ids=["jax", "torch"])
@pytest.mark.parametrize("name", list(CONTRACTS))
def test_docstring_starts_with_the_contract_header(package, name):
    doc = inspect.getdoc(getattr(package, name)) or ""
    header = docstring_header(name)
    assert doc.splitlines()[0] == CONTRACTS[name].summary, f"{package.__name__}.{name}"
    assert normalized(doc).startswith(normalized(header)), (
        f"{package.__name__}.{name}: the docstring must start with\n{header}"
    )


def test_readme_function_table_is_rendered_from_the_contracts():
    readme = (ROOT / "README.md").read_text()
    assert function_table() in readme, "README's table differs: python -m zero_contracts.docs"


def test_every_contract_field_is_consistent():
    for spec in CONTRACTS.values():
        assert spec.paper in PAPERS
        rule = spec.output.partition(":")[0]
        assert rule in OUTPUT_RULES, spec.name
        names = {a.name for a in spec.args}
        if ":" in spec.output:
            assert set(spec.output.partition(":")[2].split(",")) <= names, spec.name
        assert spec.detached == (not spec.differentiable_in), spec.name
        assert set(spec.differentiable_in) <= {a.name for a in spec.args if a.kind in
                                                ("float", "real")}, spec.name
        reals = {h.name for h in spec.hypers if h.kind == "real"}
        for order in spec.constraints:
            assert {order.low, order.high} <= reals, spec.name
        for arg in spec.args:
            if arg.where:
                assert spec.arg(arg.where).kind == "bool", (spec.name, arg.name)
            if arg.value == "ids":
                assert arg.bound in {h.name for h in spec.hypers}, (spec.name, arg.name)


@pytest.mark.parametrize("name", list(CONTRACTS))
def test_the_printed_header_fits_a_docstring(name):
    """CONTRIBUTING pastes what `python -m zero_contracts.docs` prints: the same text,
    its prose within 96 columns (a 4-space indent in ruff's 100; the equation and a URL
    are never broken)."""
    from zero_contracts.docs import wrapped_header

    text = wrapped_header(name)
    assert normalized(text) == normalized(docstring_header(name))
    for line in text.splitlines():
        assert len(line) <= 96 or line.startswith("``") or " " not in line.strip(), line


@pytest.mark.parametrize("name", sorted({CONTRACTS[n].module for n in CONTRACTS}))
def test_jax_examples_print_the_same_with_x64_on(name):
    """CI runs the ``>>>`` examples with JAX's default x64 off; each prints values that
    do not depend on that setting (CONTRIBUTING), so they hold with x64 on as well."""
    import doctest
    import importlib

    import jax

    module = importlib.import_module(f"zero_jax.{name}")
    with jax.enable_x64(True):
        result = doctest.testmod(module, verbose=False, report=True)
    assert result.attempted > 0 and result.failed == 0, result


def test_every_markdown_code_fence_closes_on_a_line_of_its_own():
    """A closing fence followed by text is not a fence: the block runs on over the
    prose and headings after it."""
    import subprocess

    root = Path(__file__).resolve().parents[1]
    files = subprocess.run(
        ["git", "ls-files", "*.md"], cwd=root, capture_output=True, text=True, check=True
    ).stdout.split()
    assert files
    for name in files:
        inside = False
        for number, line in enumerate((root / name).read_text().splitlines(), 1):
            fence = line.strip()
            if fence.startswith("```"):
                assert not inside or fence == "```", f"{name}:{number}: {line!r}"
                inside = not inside
        assert not inside, f"{name}: a code block is not closed"
