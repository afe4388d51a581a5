"""``python -m bench.step --quick`` (the GRPO step bench, tiny configuration) runs end
to end and writes its JSON and plot where it is told, and its module renders its section
of the report (a separately-run case).  No timing thresholds: timings are noisy."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench import render, separate, step
from bench import targets as TG

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("torch") is None or importlib.util.find_spec("optax") is None,
    reason="the step bench compares zero_jax with zero_torch and updates with optax",
)


def test_quick_step_writes_the_json(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "bench.step", "--quick", "--out", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads((tmp_path / "step.json").read_text())
    assert set(result["variants"]) == set(step.LABELS)
    cfg = result["meta"]["config"]
    assert cfg["prompts"] == step.QUICK.prompts and cfg["num_answers"] >= 1
    for v in result["variants"].values():
        assert v["step_us"]["median_us"] > 0
        assert v["rewards_us"]["median_us"] > 0
        assert 0 < v["rewards_share"]
        assert len(v["samples_s"]) == cfg["steps"]
    assert result["update_only_us"]["median_us"] > 0
    c = result["meta"]["contention"]
    assert c["steps"] == len(c["chunks"]) == cfg["steps"] * (len(step.LABELS) + 2)
    assert all("foreign_cores" in x and "retries" in x for x in c["chunks"])
    assert (tmp_path / "step.png").stat().st_size > 0
    assert "| (a) zero_jax inside the jitted update" in proc.stdout

    # the report's section, from a results directory holding latest.json and step.json
    latest = json.loads((ROOT / "bench" / "results" / "latest.json").read_text())
    (tmp_path / "latest.json").write_text(json.dumps(latest))
    loaded = separate.load(tmp_path)
    text = render.markdown(latest, loaded, results_dir="results")
    assert "## Rewards inside a GRPO step\n\n`python -m bench.step --quick" in text
    for label in step.LABELS.values():
        assert f"| {label} |" in text
    assert "![step](results/step.png)" in text
    # a quick configuration is no GRPO step: its share is not the target's measure
    (t,) = step.targets(result)
    assert t["status"] == TG.NOT_MEASURED
