"""Every entry point checks its extra before importing it and exits with one line naming
the ``pip install`` command: no traceback, exit status 1.

The first test builds a real venv with only ``pip install .`` (the project without
extras, from a copy of the files the wheel is made of), runs each entry point there,
then adds the ``[lab]`` extra and runs the Lab for real (the check lets a complete
install through) while the commands that need more still name what is missing.  The
others hide matplotlib in the full environment to show that ``--plot`` is checked
before any training starts, not after it.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
EXTRAS = set(PROJECT["project"]["optional-dependencies"])
#: ``pip install ".[a,b]"`` (optionally with ``-c constraints.txt``), as the messages print it.
COMMAND = re.compile(r'pip install (?:-c constraints\.txt )?"\.\[([a-z,]+)\]" in the zero-rewards')


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return {**env, "JAX_PLATFORMS": "cpu", "PYTHONDONTWRITEBYTECODE": "1"}


def _run(args: list[str], cwd: Path, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run(
        args, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=timeout
    )


def assert_names_extras(proc: subprocess.CompletedProcess, *extras: str) -> None:
    """One line, no traceback, non-zero status, naming exactly ``extras``."""
    out = (proc.stdout + proc.stderr).strip()
    assert proc.returncode == 1, (proc.returncode, out[-3000:])
    assert "Traceback" not in out and len(out.splitlines()) == 1, out[-3000:]
    match = COMMAND.search(out)
    assert match, out
    named = match.group(1).split(",")
    assert sorted(named) == sorted(extras), out
    assert set(named) <= EXTRAS, out  # every extra named exists in pyproject.toml
    assert ("-c constraints.txt" in out) == bool({"torch", "trl"} & set(named)), out


@pytest.fixture(scope="module")
def bare(tmp_path_factory) -> tuple[Path, Path]:
    """(python of a venv holding only ``pip install .``, the copied sources)."""
    base = tmp_path_factory.mktemp("bare")
    src = base / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    for pattern in PROJECT["tool"]["setuptools"]["packages"]["find"]["include"]:
        package = pattern.rstrip("*")
        shutil.copytree(ROOT / package, src / package, ignore=skip)
    venv = base / "venv"
    made = _run([sys.executable, "-m", "venv", str(venv)], base, timeout=180)
    assert made.returncode == 0, made.stderr[-3000:]
    python = venv / "bin" / "python"
    pip = [str(python), "-m", "pip", "install", "-q", "--no-compile"]
    installed = _run([*pip, str(src)], base, timeout=600)
    assert installed.returncode == 0, installed.stderr[-3000:]
    return python, src


def test_each_entry_point_names_its_extra_in_a_bare_install(bare, tmp_path):
    python, src = bare
    bin_ = python.parent
    examples = ROOT / "examples"
    png = str(tmp_path / "plot.png")
    # 1. Only `pip install .`: jax, numpy, scipy.
    assert_names_extras(_run([str(bin_ / "zero-lab")], tmp_path), "lab")
    assert_names_extras(_run([str(bin_ / "zero-lab"), "--backend", "torch"], tmp_path), "torch")
    assert_names_extras(_run([str(python), "-m", "zero_selfplay", "--help"], tmp_path), "selfplay")
    for stack in ("trl", "tunix"):
        for script in (str(examples / f"{stack}_grpo.py"),
                       str(examples / "ttrl" / f"{stack}_ttrl.py")):  # fmt: skip
            assert_names_extras(_run([str(python), script], tmp_path), stack)
            assert_names_extras(_run([str(python), script, "--plot", png], tmp_path), stack, "lab")
    # the parser needs no extra: --help works everywhere it can
    ttrl = str(examples / "ttrl" / "tunix_ttrl.py")
    helps = (["zero-lab", "--help"], [str(examples / "trl_grpo.py"), "--help"], [ttrl, "--help"])
    for args in helps:
        cmd = [str(bin_ / args[0]), *args[1:]] if args[0] == "zero-lab" else [str(python), *args]
        shown = _run(cmd, tmp_path)
        assert shown.returncode == 0 and "--plot" in shown.stdout, shown.stderr[-3000:]

    # 2. With the [lab] extra: the Lab runs; what needs more still says what.
    added = _run(
        [str(python), "-m", "pip", "install", "-q", "--no-compile", f"{src}[lab]"],
        tmp_path,
        timeout=600,
    )
    assert added.returncode == 0, added.stderr[-3000:]
    page = tmp_path / "explain.html"
    lab = _run([str(bin_ / "zero-lab"), "--lab", "solver", "--plot", png, "--html", str(page)],
               tmp_path)  # fmt: skip
    assert lab.returncode == 0 and "PASS" in lab.stdout, lab.stderr[-3000:]
    assert Path(png).stat().st_size > 10_000
    # the explanation page needs nothing beyond [lab], and names no outside resource
    html = page.read_text(encoding="utf-8")
    assert "<svg" in html and "Move the controls" in html
    assert set(re.findall(r"https?://[^\s\"'<>)]+", html)) <= {"http://www.w3.org/2000/svg"}
    assert_names_extras(_run([str(bin_ / "zero-lab"), "--backend", "torch"], tmp_path), "torch")
    selfplay = _run([str(python), "-m", "zero_selfplay", "--help"], tmp_path)
    assert_names_extras(selfplay, "selfplay")
    assert "needs flax (" in selfplay.stderr  # optax came with [lab]
    assert_names_extras(_run([str(python), str(examples / "trl_grpo.py"), "--plot", png],
                             tmp_path), "trl")  # fmt: skip


# The full environment with matplotlib hidden (``sys.modules[name] = None`` makes both
# ``import`` and ``importlib.util.find_spec`` report it missing).
HIDE = "import runpy, sys; sys.modules['matplotlib'] = None; sys.argv = {argv!r}; "


def _hidden(code: str, tmp_path: Path) -> subprocess.CompletedProcess:
    env = {**_env(), "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=240)  # fmt: skip


def test_zero_lab_checks_matplotlib_before_running_a_lab(tmp_path):
    argv = ["zero-lab", "--plot", str(tmp_path / "p.png")]
    code = HIDE.format(argv=argv) + (
        "from zero_lab.cli import main\n"
        "try:\n    main(sys.argv[1:])\n"
        "finally:\n    assert 'zero_lab.jax_backend' not in sys.modules"
    )
    assert_names_extras(_hidden(code, tmp_path), "lab")


def test_selfplay_checks_matplotlib_before_the_run(tmp_path):
    if importlib.util.find_spec("flax") is None:  # find_spec: importing flax here is slow
        pytest.skip("needs the [selfplay] extra (CI installs it)")
    argv = ["zero_selfplay", "--smoke", "--plot", str(tmp_path / "p.png")]
    code = HIDE.format(argv=argv) + "runpy.run_module('zero_selfplay', run_name='__main__')"
    proc = _hidden(code, tmp_path)
    assert "config:" not in proc.stdout  # the run logs its configuration first: it never began
    assert_names_extras(proc, "selfplay")


@pytest.mark.parametrize("stack", ["trl", "tunix"])
def test_stack_examples_check_matplotlib_before_training(stack, tmp_path):
    if importlib.util.find_spec(stack) is None:
        pytest.skip(f"needs the [{stack}] extra (CI installs it)")
    script = str(ROOT / "examples" / f"{stack}_grpo.py")
    argv = [script, "--steps", "1", "--plot", str(tmp_path / "p.png")]
    code = HIDE.format(argv=argv) + (
        f"sys.path.insert(0, {str(ROOT / 'examples')!r}); "  # as `python script` would
        f"runpy.run_path({script!r}, run_name='__main__')"
    )
    proc = _hidden(code, tmp_path)
    assert "step " not in proc.stdout  # no training step was printed
    assert_names_extras(proc, "lab")
