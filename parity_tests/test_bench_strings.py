"""Smoke test of ``python -m bench.strings --quick``: the structure of its JSON, the
identical-ids claim (our grouping against the naive math-verify loop on the same
replies), the report fragment, and that the default output is not a tracked file.
Timings are not checked: they are noisy, and claimed by the full bench only."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

pytest.importorskip("math_verify", reason="the naive path and equivalence='math' need it")

import zero_text as zt  # noqa: E402
from bench import strings  # noqa: E402


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    assert strings.main(["--quick", "--out", str(out)]) == 0
    zt.close_math_workers()
    return json.loads((out / "strings.json").read_text())


def test_quick_run_structure_and_identical_ids(quick):
    cfg = strings.QUICK
    assert quick["quick"] is True and quick["case"] == "strings"
    assert quick["replies"] == cfg.prompts * cfg.completions
    assert quick["adversarial_replies"] >= 1
    for batch in ("numeric", "mixed"):
        result = quick[batch]
        assert set(result["seconds"]) == {"clean", "ours", "ours_2_processes"}
        assert all(len(v) == cfg.repeats and min(v) > 0 for v in result["seconds"].values())
        assert result["naive"] > 0 and result["ratio"] > 0
        assert result["same_ids"] is True  # fast grouping == naive loop on ordinary replies
        assert result["adversarial_change_no_other_id"] is True
    assert quick["same_ids"] is True
    assert all(t["status"] == "not measured" for t in strings.targets(quick))
    text = strings.markdown(quick)
    assert text.startswith("`python -m bench.strings`") and "| numeric |" in text


def test_full_run_states_each_target(quick):
    full = dict(quick, quick=False)
    targets = strings.targets(full)
    assert [t["name"] for t in targets] == [
        "math_grouping_5x_faster_than_naive",
        "adversarial_batch_within_normal_plus_limit",
    ]
    assert all(t["status"] != "not measured" for t in targets)
    assert strings.markdown(full).count("- Target `") == 2


def test_default_output_is_not_in_the_repository():
    from bench import output

    root = Path(strings.__file__).resolve().parents[1]
    assert not output.scratch().resolve().is_relative_to(root)


def test_batch_is_realistic_and_deterministic():
    cfg = strings.QUICK
    a, b = strings.make_batch(cfg), strings.make_batch(cfg)
    assert a == b
    rows = a["clean"]
    assert len(rows) == cfg.prompts and all(len(r) == cfg.completions for r in rows)
    boxed = [zt.extract_boxed(r) for row in rows for r in row]
    assert sum(x is None for x in boxed) >= 1  # some replies have no (complete) box
    forms = {zt.normalize_answer(x) for x in boxed if x}
    assert any("frac" in f for f in forms) and any(f.endswith(".0") for f in forms)
    for b_, k in a["spots"]:
        assert a["adversarial"][b_][k] != rows[b_][k]
        assert any(t in a["adversarial"][b_][k] for t in ("5^", "9^", "!", "10^", "3^", "x+"))
    # integer forms are equal for math-verify; the naive loop agrees on a tiny row
    row = [strings.completion(random.Random(0), f, 50) for f in strings.integer_forms(12)]
    assert strings.naive_group([row]) == [[0] * len(row)]
    mixed = strings.make_batch(strings.Config(prompts=40, symbolic=1.0))
    forms = {zt.normalize_answer(zt.extract_boxed(r) or "") for row in mixed["clean"] for r in row}
    assert any("sqrt" in f for f in forms) and any("pi" in f for f in forms)
