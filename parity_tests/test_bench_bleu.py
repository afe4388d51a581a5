"""Smoke test of ``python -m bench.bleu``: on a small batch the published pipeline
(NLTK double loop + scikit-learn) and zero_text give the same partition, and the
JSON carries the side-by-side timings (no threshold on them: timings are noisy)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("nltk", reason="the published pipeline needs nltk")
pytest.importorskip("sklearn", reason="the published pipeline needs scikit-learn")

from bench import bleu  # noqa: E402


def test_bench_bleu_small_batch(tmp_path):
    assert bleu.main(["--n", "96", "--repeats", "2", "--out", str(tmp_path)]) == 0
    result = json.loads((tmp_path / "bleu.json").read_text())
    assert result["same_partition"] is True
    assert result["n"] == 96 and result["pairs"] == 96 * 95 // 2
    assert len(result["zero_text_seconds"]) == 2 and result["published_seconds"][0] > 0
    # The generated batch has near-duplicates, so some clusters hold several questions.
    assert 1 < result["clusters"] < 96
    # its section of the report, rendered by its own module
    text = bleu.markdown(result, "results")
    assert "96 generated challenger questions" in text and "the same partition" in text
    assert bleu.headline(result)[0].startswith("- BLEU repetition clustering")


def test_generated_questions_are_deterministic():
    assert bleu.questions(50) == bleu.questions(50)
    assert len(set(bleu.questions(200))) > 100
