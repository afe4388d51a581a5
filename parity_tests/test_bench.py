"""The bench's entry points run on a tiny grid and RESULTS.md is a function of the JSON.
No timing is asserted: timings are noisy and claimed by the committed run only."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import parity_tests.cases as oracle
import zero_jax
from bench import __main__ as runner
from bench import bleu, grid, output, report, step, targets

ROOT = Path(__file__).resolve().parents[1]


def test_every_family_is_a_public_reward_and_builds_for_the_oracle():
    quick = grid.cases(quick=True)
    assert len({c.key for c in quick}) == len(quick)
    for case in quick:
        assert case.fn in zero_jax.__all__ and hasattr(oracle, case.fn), case.key
        args, kwargs = grid.build(case)
        again, _ = grid.build(case)
        arrays = [a for a in args if isinstance(a, np.ndarray)]
        arrays_again = [a for a in again if isinstance(a, np.ndarray)]
        assert arrays and all(np.array_equal(a, b, equal_nan=True)
                              for a, b in zip(arrays, arrays_again, strict=True)), case.key
        if grid.runs_on("numpy", case):
            getattr(oracle, case.fn)(*args, **kwargs)  # the NumPy rows' function runs on it
    full = grid.cases()
    assert {c.fn for c in full} == {c.fn for c in quick}
    assert max(c.B for c in full) == max(grid.SIZES)


def _grid(out: Path) -> dict:
    return json.loads((out / "grid.json").read_text())


def test_quick_grid_runs_every_family_on_jax_torch_and_the_oracle(tmp_path):
    assert runner.main(["--quick", "--grid-only", "--out", str(tmp_path)]) == 0
    g = _grid(tmp_path)
    assert {r["family"] for r in g["rows"]} == set(grid.FAMILIES)
    for row in g["rows"]:
        assert not row["errors"], row["key"]
        case = next(c for c in grid.cases(quick=True) if c.key == row["key"])
        expected = {"jax", "jax_jit", "torch", "numpy"} - (
            set() if grid.runs_on("numpy", case) else {"numpy"})
        assert set(row["backends"]) == expected, row["key"]
        assert all(m["median_us"] >= m["min_us"] > 0 for m in row["backends"].values())
    assert len(g["logits"]) == 4 and all(r["copy"]["loops"] for r in g["logits"])
    assert len(g["rounds"]) == 1 and len(g["rounds"][0]["loadavg_start"]) == 3
    assert g["meta"]["machine"]["cpus"] >= 1
    assert (tmp_path / "RESULTS.md").exists()


def test_torch_compile_and_async_dispatch_off_run(tmp_path):
    args = ["--quick", "--only", "uncertainty", "--backends", "jax_sync,torch_compile"]
    assert runner.main([*args, "--out", str(tmp_path)]) == 0
    (row,) = _grid(tmp_path)["rows"]
    assert set(row["backends"]) == {"jax_sync", "torch_compile"} and not row["errors"]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """The step and BLEU commands on tiny inputs, beside a committed grid.json."""
    out = tmp_path_factory.mktemp("bench")
    assert step.main(["--quick", "--out", str(out)]) == 0
    assert bleu.main(["--n", "24", "--repeats", "1", "--out", str(out)]) == 0
    shutil.copy(output.COMMITTED / "grid.json", out / "grid.json")
    return out


def test_step_and_bleu_write_what_the_report_reads(run_dir):
    s = json.loads((run_dir / "step.json").read_text())
    assert set(s["variants"]) == {"jax_in_step", "torch_host", "numpy_host"}
    assert all(0 < v["rewards_share"] for v in s["variants"].values())
    b = json.loads((run_dir / "bleu.json").read_text())
    assert b["same_partition"] is True and b["n"] == 24
    text = (run_dir / "RESULTS.md").read_text()
    assert "Rewards inside a GRPO step" in text and "BLEU clusters" in text


def test_results_md_is_a_deterministic_function_of_the_json(run_dir):
    first = report.render(run_dir)
    assert report.render(run_dir) == first
    # quick step results assess no target; the grid's do
    status = {t["name"]: t["status"] for t in targets.evaluate(
        _grid(run_dir), json.loads((run_dir / "step.json").read_text()))}
    assert status["rewards_under_0.1%_of_the_grpo_step"] == targets.NOT_MEASURED
    assert status["jax_5x_faster_than_torch_at_scale"] != targets.NOT_MEASURED


def test_committed_results_md_is_current_and_short():
    assert report.main([str(output.COMMITTED), "--check"]) == 0
    assert len((ROOT / "bench" / "RESULTS.md").read_text().splitlines()) <= 150
    produced = {"grid.json", "step.json", "bleu.json", "strings.json"}
    assert {p.name for p in output.COMMITTED.iterdir()} <= produced


def test_runs_write_outside_the_repository_unless_asked():
    assert not output.scratch().resolve().is_relative_to(ROOT)
    with pytest.raises(SystemExit, match="quick run never replaces"):
        runner.main(["--quick", "--update-committed"])
