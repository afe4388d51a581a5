"""The import graph, read statically from the sources (every ``import``, including the
ones inside functions): the library (zero_contracts, zero_text, zero_jax, zero_torch)
is the ground floor and imports no application; zero_contracts needs only the standard
library; each twin stays off the other framework; the top-level packages form layers
without cycles; and no library module reaches a module by a name string."""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: The project's top-level packages from the bottom up; a module may import its own
#: layer or a lower one, never a higher one.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("zero_contracts",),
    ("zero_text", "zero_jax", "zero_torch"),
    ("zero_lab", "zero_selfplay", "zero_stacks"),
    ("bench", "examples"),
    ("parity_tests",),
)
LIBRARY = ("zero_contracts", "zero_text", "zero_jax", "zero_torch")
#: Imports that go up a layer on purpose: the bench's NumPy rows time the tests' oracle
#: (the project's one NumPy implementation).
UPWARD = {("bench", "parity_tests.cases")}
APPLICATIONS = ("zero_lab", "zero_selfplay", "zero_stacks", "bench", "examples", "parity_tests")
PROJECT = tuple(p for layer in LAYERS for p in layer)
LAYER_OF = {p: i for i, layer in enumerate(LAYERS) for p in layer}

#: Third-party roots each library package must not import, beyond the applications.
FORBIDDEN_FRAMEWORKS = {
    "zero_contracts": (),  # checked more strictly below: standard library only
    "zero_text": ("jax", "jaxlib", "flax", "optax", "torch"),
    "zero_jax": ("torch",),
    "zero_torch": ("jax", "jaxlib", "flax", "optax"),
}

#: Calls that import a module from a name string.
DYNAMIC_IMPORTS = ("import_module", "__import__", "find_spec", "spec_from_file_location")


@dataclass(frozen=True)
class Import:
    """One imported module name, where it is imported (module, file and line)."""

    module: str
    importer: str
    path: str
    line: int

    @property
    def root(self) -> str:
        return self.module.split(".")[0]

    def __str__(self) -> str:
        return f"{self.importer} ({self.path}:{self.line}) imports {self.module}"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(source: str, module: str, is_package: bool, path: str = "<string>") -> list[Import]:
    """Every module ``source`` imports, anywhere in it (function bodies included),
    with relative imports resolved against ``module``."""
    found = []
    for node in ast.walk(ast.parse(source, filename=path)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                base = base if is_package else base[:-1]
                base = base[: len(base) - (node.level - 1)]
                prefix = ".".join(base)
                target = f"{prefix}.{node.module}" if node.module else prefix
            else:
                target = node.module or ""
            names = [target]
        else:
            continue
        found += [Import(name, module, path, node.lineno) for name in names]
    return found


def dynamic_imports_of(source: str) -> list[tuple[int, str]]:
    """Calls such as ``importlib.import_module(...)`` or ``__import__(...)``: line and name.
    ``find_spec("third_party")`` with a literal name outside the project is an
    availability check of an optional dependency that imports nothing, and is allowed."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            fn = node.func
            name = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")
            if name == "find_spec" and node.args and isinstance(node.args[0], ast.Constant):
                target = str(node.args[0].value).split(".")[0]
                if target not in PROJECT:
                    continue
            if name in DYNAMIC_IMPORTS:
                found.append((node.lineno, name))
    return found


def sources(package: str) -> Iterator[Path]:
    yield from sorted((ROOT / package).rglob("*.py"))


@pytest.fixture(scope="module")
def graph() -> dict[str, list[Import]]:
    """Top-level package -> every import made by its modules."""
    out: dict[str, list[Import]] = {}
    for package in PROJECT:
        assert (ROOT / package).is_dir(), f"top-level package {package} not found"
        out[package] = [
            imp
            for path in sources(package)
            for imp in imports_of(
                path.read_text(encoding="utf-8"),
                module_name(path),
                path.name == "__init__.py",
                str(path.relative_to(ROOT)),
            )
        ]
    return out


def _report(what: str, offenders: list[Import]) -> str:
    return f"{what}:\n  " + "\n  ".join(map(str, offenders))


# --------------------------------------------------------------------------- scanner
def test_the_scanner_sees_local_and_relative_imports():
    source = (
        "import os, numpy.linalg as la\n"
        "from . import sibling\n"
        "from ..other import thing\n"
        "def f():\n"
        "    import zero_lab.cli\n"
        "    from zero_stacks import trl\n"
        "class C:\n"
        "    def g(self):\n"
        "        return importlib.import_module('zero_lab')\n"
    )
    got = {i.module for i in imports_of(source, "pkg.sub.mod", is_package=False)}
    assert got == {"os", "numpy.linalg", "pkg.sub", "pkg.other", "zero_lab.cli", "zero_stacks"}
    got = {i.module for i in imports_of("from .a import b\n", "pkg.sub", is_package=True)}
    assert got == {"pkg.sub.a"}
    assert dynamic_imports_of(source) == [(9, "import_module")]
    private = "import zero_jax, zero_jax.r_zero\nfrom zero_torch import _checks, consensus\n"
    assert private_uses(private) == [(1, "zero_jax.r_zero"), (2, "zero_torch._checks")]


def test_every_project_package_has_a_layer():
    tops = {p.name for p in ROOT.iterdir() if p.is_dir() and any(p.glob("*.py"))}
    assert tops <= set(PROJECT), f"new top-level packages without a layer: {tops - set(PROJECT)}"


# --------------------------------------------------------------------------- library
@pytest.mark.parametrize("package", LIBRARY)
def test_the_library_imports_no_application(graph, package):
    bad = [i for i in graph[package] if i.root in APPLICATIONS]
    assert not bad, _report(f"{package} is library code and must not import an application", bad)


def test_zero_contracts_imports_only_the_standard_library(graph):
    allowed = set(sys.stdlib_module_names) | {"__future__", "zero_contracts"}
    bad = [i for i in graph["zero_contracts"] if i.root not in allowed]
    assert not bad, _report("zero_contracts must import only the standard library", bad)


@pytest.mark.parametrize("package", [p for p in LIBRARY if FORBIDDEN_FRAMEWORKS[p]])
def test_each_library_package_stays_off_the_other_framework(graph, package):
    bad = [i for i in graph[package] if i.root in FORBIDDEN_FRAMEWORKS[package]]
    forbidden = ", ".join(FORBIDDEN_FRAMEWORKS[package])
    assert not bad, _report(f"{package} must not import {forbidden}", bad)


@pytest.mark.parametrize("package", LIBRARY)
def test_the_library_reaches_no_module_by_a_name_string(package):
    bad = [
        f"{module_name(path)} ({path.relative_to(ROOT)}:{line}) calls {name}"
        for path in sources(package)
        for line, name in dynamic_imports_of(path.read_text(encoding="utf-8"))
    ]
    assert not bad, f"{package} must import modules statically, not by name:\n  " + "\n  ".join(
        bad
    )


# --------------------------------------------------------------------------- applications
#: Application modules allowed to reach into a library package's private parts, and why.
PRIVATE_USE: dict[str, str] = {}


def private_uses(source: str) -> list[tuple[int, str]]:
    """Imports below a library package's public surface: ``import zero_jax.r_zero``,
    ``from zero_jax.primitives import ...``, ``from zero_jax import _checks``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [
                (node.lineno, alias.name)
                for alias in node.names
                if alias.name.split(".")[0] in LIBRARY and "." in alias.name
            ]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            root = node.module.split(".")[0]
            if root not in LIBRARY:
                continue
            if "." in node.module:
                found.append((node.lineno, node.module))
            found += [
                (node.lineno, f"{node.module}.{alias.name}")
                for alias in node.names
                if alias.name.startswith("_")
            ]
    return found


@pytest.mark.parametrize("package", APPLICATIONS[:-1])  # the tests may look inside
def test_applications_use_the_public_api_of_the_library(package):
    bad = [
        f"{module_name(path)} ({path.relative_to(ROOT)}:{line}) imports {name}"
        for path in sources(package)
        if module_name(path) not in PRIVATE_USE
        for line, name in private_uses(path.read_text(encoding="utf-8"))
    ]
    assert not bad, (
        f"{package} must use the library's public API (`import zero_jax`, "
        "`from zero_contracts import CONTRACTS`), not its modules:\n  " + "\n  ".join(bad)
    )


def test_the_private_use_list_is_current():
    for module in PRIVATE_USE:
        path = ROOT / (module.replace(".", "/") + ".py")
        assert private_uses(path.read_text(encoding="utf-8")), f"{module} no longer needs it"


# --------------------------------------------------------------------------- layers
def test_no_import_goes_up_a_layer(graph):
    bad = [
        i
        for package, imps in graph.items()
        for i in imps
        if i.root in LAYER_OF and LAYER_OF[i.root] > LAYER_OF[package]
        and (package, i.module) not in UPWARD
    ]
    layers = " < ".join("{" + ", ".join(layer) + "}" for layer in LAYERS)
    assert not bad, _report(f"imports from a lower layer to a higher one ({layers})", bad)


def test_no_cycles_between_top_level_packages(graph):
    edges: dict[str, dict[str, Import]] = {p: {} for p in PROJECT}
    for package, imps in graph.items():
        for i in imps:
            if i.root in edges and i.root != package and (package, i.module) not in UPWARD:
                edges[package].setdefault(i.root, i)

    def cycle_from(start: str) -> list[str] | None:
        stack = [(start, [start])]
        while stack:
            node, path = stack.pop()
            for nxt in edges[node]:
                if nxt == start:
                    return [*path, start]
                if nxt not in path:
                    stack.append((nxt, [*path, nxt]))
        return None

    for package in PROJECT:
        cycle = cycle_from(package)
        assert cycle is None, (
            "import cycle between top-level packages: "
            + " -> ".join(cycle)
            + "\n  "
            + "\n  ".join(str(edges[a][b]) for a, b in zip(cycle, cycle[1:], strict=False))
        )
