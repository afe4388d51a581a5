"""bench/RESULTS.md is generated: ``python -m bench.report --markdown`` from the committed
bench/results/latest.json (and bleu.json) must reproduce it byte for byte, so that the
document cannot drift from the generator or the JSON.  No benchmarking here."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from bench import report

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
LATEST = RESULTS / "latest.json"
DOC = ROOT / "bench" / "RESULTS.md"


@pytest.fixture(scope="module")
def result() -> dict:
    return json.loads(LATEST.read_text())


@pytest.fixture(scope="module")
def doc() -> str:
    return DOC.read_text()


def test_committed_document_is_the_generated_one(doc):
    assert report.render_markdown(LATEST, DOC) == doc, (
        "bench/RESULTS.md is stale: run python -m bench.report --markdown and commit it"
    )
    assert report.RESULTS_MD == DOC


def _table_rows(doc: str) -> dict[tuple[str, str, str], list[str]]:
    rows = {}
    for line in doc.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| ") and len(cells) > 6 and cells[1] != "variant":
            rows[(cells[0], cells[1], cells[2])] = cells
    return rows


def test_document_has_a_table_row_for_every_case(result, doc):
    rows = _table_rows(doc)
    fns = {r["fn"] for r in result["rows"]}
    assert fns <= {k[0] for k in rows}
    for r in result["rows"]:
        cells = rows.get((r["fn"], r["variant"] or "", f"{r['B']:,}"))
        assert cells is not None, r["key"]
        jax = r["backends"]["jax"]["median_us"]
        assert cells[3].startswith(report._fmt(jax) + " ±"), (r["key"], cells[3])
        assert f"{r['speedup_vs_torch']:.2f}x" in cells, r["key"]


def test_document_sections(result, doc):
    for head in ("## How the bench measures", "## Commands", "## This run", "## Caveats"):
        assert head in doc
    for head in ("## Results", "## Targets (issue 5)", "## Plots"):
        assert head in doc
    assert "python -m bench.report --markdown" in doc
    assert "python -m bench --quick" in doc
    for png in sorted(RESULTS.glob("*.png")):
        assert f"(results/{png.name})" in doc
    for t in result["targets"]:
        assert f"**{t['target']}. {t['what']}: {'met' if t['met'] else 'not met'}.**" in doc
    assert result["meta"]["started"] in doc
    if (RESULTS / "bleu.json").exists():
        assert "## BLEU repetition clustering" in doc


def test_contention_caveat_only_when_recorded(result):
    quiet = copy.deepcopy(result)
    quiet["meta"]["quiet_gate"]["chunks_still_contended"] = []
    quiet["meta"].pop("compile_ms_note", None)
    text = report.markdown(quiet)
    assert "This run was contended" not in text
    assert "Caveat:" not in text
    assert "None recorded" in text or "every counted chunk ran uncontended" in text
    loud = report.markdown(result)
    assert ("This run was contended" in loud) == bool(report._contended(result))


def test_cli_writes_and_checks(tmp_path, capsys):
    out = tmp_path / "RESULTS.md"
    assert report.main([str(LATEST), "--markdown", str(out)]) == 0
    assert out.read_text() == report.render_markdown(LATEST, out)
    assert report.main([str(LATEST), "--markdown", str(out), "--check"]) == 0
    out.write_text(out.read_text() + "edited by hand\n")
    assert report.main([str(LATEST), "--markdown", str(out), "--check"]) == 1
    capsys.readouterr()
