"""Package contracts: the nine seed functions with the seed signatures in both
packages, explicit ``__all__``, and imports that do not drag in the other framework."""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import zero_jax

ROOT = Path(__file__).resolve().parents[1]

# name -> positional parameters with defaults, exactly as in the seed problems.
SEED_SIGNATURES = {
    "uncertainty_reward": [("consistency", None)],
    "challenger_rewards": [
        ("consistency", None),
        ("clusters", None),
        ("valid", None),
        ("strength", 1.0),
    ],
    "consensus": [("answers", None), ("num_answers", None)],
    "curriculum_mask": [("consistency", None), ("low", 0.25), ("high", 0.75)],
    "pseudo_rewards": [("answers", None), ("labels", None)],
    "hint_delta": [("base_logp", None), ("hinted_logp", None), ("mask", None)],
    "proposer_rewards": [
        ("delta", None),
        ("hint_lengths", None),
        ("cluster_share", None),
        ("valid", None),
    ],
    "coder_rewards": [
        ("executed", None),
        ("easy_accuracy", None),
        ("consistency", None),
        ("syntax_error", None),
    ],
    "solver_rewards": [
        ("answers", None),
        ("format_valid", None),
        ("num_answers", None),
        ("alpha", 0.9),
    ],
}


def positional(fn):
    out = []
    for p in inspect.signature(fn).parameters.values():
        if p.kind is p.POSITIONAL_OR_KEYWORD:
            out.append((p.name, None if p.default is p.empty else p.default))
    return out


@pytest.mark.parametrize("name", sorted(SEED_SIGNATURES))
def test_seed_signatures_in_both_packages(name):
    zero_torch = pytest.importorskip("zero_torch", reason="needs torch")
    for pkg in (zero_jax, zero_torch):
        assert name in pkg.__all__
        assert positional(getattr(pkg, name)) == SEED_SIGNATURES[name], pkg.__name__
    assert inspect.signature(getattr(zero_jax, name)).parameters.keys() == (
        inspect.signature(getattr(zero_torch, name)).parameters.keys()
    )


def test_both_packages_export_the_same_names():
    zero_torch = pytest.importorskip("zero_torch", reason="needs torch")
    assert set(zero_jax.__all__) - {"checked"} == set(zero_torch.__all__)
    for pkg in (zero_jax, zero_torch):
        assert all(hasattr(pkg, n) for n in pkg.__all__)


BLOCK = textwrap.dedent(
    """
    import importlib.abc, sys
    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name.split(".")[0] in {blocked!r}:
                raise ImportError("blocked for the test: " + name)
    sys.meta_path.insert(0, Block())
    import {module}
    print("imported", {module}.__name__)
    """
)


@pytest.mark.parametrize(
    "module,blocked",
    [("zero_torch", {"jax", "jaxlib"}), ("zero_jax", {"torch"}), ("zero_text", {"jax", "torch"})],
)
def test_imports_without_the_other_framework(module, blocked):
    if module == "zero_torch":
        pytest.importorskip("torch", reason="needs torch")
    code = BLOCK.format(blocked=blocked, module=module)
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert f"imported {module}" in out.stdout


def test_importing_zero_jax_leaves_x64_alone():
    code = "import jax, zero_jax; print(jax.config.jax_enable_x64)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.stdout.strip() == "False", out.stderr


def test_one_version_string():
    """pyproject reads the version from zero_contracts/_version.py; every package re-exports it."""
    import importlib.metadata
    import importlib.util

    import zero_contracts

    packages = [zero_contracts, zero_jax]
    if importlib.util.find_spec("torch") is not None:
        import zero_torch

        packages.append(zero_torch)
    installed = importlib.metadata.version("zero-rewards")
    assert {p.__name__: p.__version__ for p in packages} == dict.fromkeys(
        (p.__name__ for p in packages), installed
    )


def test_the_dev_extra_is_composed_of_every_other_extra():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    composed = [r for r in extras["dev"] if r.startswith(f"{project['name']}[")]
    assert len(composed) == 1, extras["dev"]
    included = set(composed[0].split("[", 1)[1].rstrip("]").split(","))
    # verl pins transformers below the trl extra's floor: its own venv (docs/verl.md).
    assert included == set(extras) - {"dev", "verl"}


def test_ci_runs_exactly_the_readme_test_command():
    readme = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    command = next(line for line in readme if line.endswith("bash run-tests.sh"))
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()
    assert ci[-1] == command
    script = (ROOT / "run-tests.sh").read_text(encoding="utf-8")
    steps = [line for line in script.splitlines() if line and not line.startswith((" ", "#"))]
    for step in ('pip install -q --no-compile -c constraints.txt -e ".[dev]"', "ruff check .",
                 "mypy", 'pytest -q -n 2 --dist worksteal -m "not alone"'):
        assert step in steps, step
    assert "parity_tests/test_stacks_verl.py" in script


def test_the_alone_step_runs_every_test_marked_alone():
    """The last pytest step runs the `alone` tests on their files only (collecting
    the whole suite again costs seconds); every module that marks a test `alone` must
    be among them, or its tests would run in neither step."""
    script = (ROOT / "run-tests.sh").read_text(encoding="utf-8")
    step = re.search(r"^pytest -q -m alone (.+)$", script, re.M)
    assert step, "run-tests.sh runs `pytest -q -m alone <files>`"
    listed = set(step.group(1).split())
    marking = {f"parity_tests/{p.name}" for p in (ROOT / "parity_tests").glob("test_*.py")
               if re.search(r"mark\.alone\b", p.read_text(encoding="utf-8"))}
    assert listed == marking
