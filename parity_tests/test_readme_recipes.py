"""docs/recipes.md's label-free recipes run as written (each Python block in a fresh
namespace, with JAX's defaults), and their claims hold."""

from __future__ import annotations

import re
from pathlib import Path

import jax
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]


def _blocks() -> list[str]:
    text = (ROOT / "docs" / "recipes.md").read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)


def test_the_section_has_the_four_recipes():
    assert len(_blocks()) == 4


@pytest.mark.parametrize("index", range(4))
def test_recipe_runs_as_written(index, capsys):
    with jax.enable_x64(False):
        namespace: dict = {}
        exec(compile(_blocks()[index], f"docs/recipes.md recipe {index + 1}", "exec"), namespace)
    if index == 1:  # the TTRL diagnostics: a healthy vote on a majority-right policy
        m = namespace["m"]
        assert float(m.label_accuracy) > 0.9 and 0.4 < float(m.majority_ratio) < 0.7
        assert "label acc" in capsys.readouterr().out
    if index == 3:
        assert namespace["keep"].tolist() == [True, False]
        want = np.array([0.0, -0.8, -1.0, 0.0], np.float32)  # (400 - 480) / 100 ...
        np.testing.assert_array_equal(np.asarray(namespace["length_reward"][0]), want)
