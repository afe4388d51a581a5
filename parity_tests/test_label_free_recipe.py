"""docs/label_free_recipe.md runs as written (its Python block, JAX's defaults) and
prints what the page says; the claims it reads from the output hold."""

from __future__ import annotations

import re
from pathlib import Path

import jax
import numpy as np

import zero_jax

PAGE = Path(__file__).resolve().parents[1] / "docs" / "label_free_recipe.md"


def _blocks(kind: str) -> list[str]:
    return re.findall(rf"```{kind}\n(.*?)```", PAGE.read_text(encoding="utf-8"), flags=re.DOTALL)


def test_the_recipe_runs_as_written_and_prints_what_the_page_shows(capsys):
    (code,) = _blocks("python")
    (shown,) = _blocks("text")
    with jax.enable_x64(False):
        namespace: dict = {}
        exec(compile(code, str(PAGE), "exec"), namespace)
    # the same lines; the numbers within rounding of another CPU's float32 reductions
    got, want = capsys.readouterr().out.splitlines(), shown.splitlines()
    assert [g.split()[0] for g in got] == [w.split()[0] for w in want]
    for g, w in zip(got, want, strict=True):
        gv, wv = (np.array(re.findall(r"[-+]?\d+\.?\d*", line), float) for line in (g, w))
        np.testing.assert_allclose(gv[:-1], wv[:-1], atol=0.05)  # accuracies, correlations
        assert (gv[-1] == -1) == (wv[-1] == -1) and abs(gv[-1] - wv[-1]) <= 2  # the step
    runs = namespace["runs"]
    final = {arm: float(logs["accuracy"][-1]) for arm, logs in runs.items()}
    assert final["empo"] > max(final["random"], final["format"])  # beats both controls
    corr = np.asarray(runs["empo"]["proxy_truth_corr"])
    assert corr[0] > 0.2 and abs(corr[-1]) < 0.1  # tracks correctness, then stops
    wrong = int(zero_jax.collapse_step(runs["wrong_label"]["reward_accuracy"], 0.01))
    assert wrong > 0 and int(zero_jax.collapse_step(runs["empo"]["reward_accuracy"])) == -1
