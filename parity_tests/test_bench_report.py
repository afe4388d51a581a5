"""bench/RESULTS.md and the README's bench summary are generated: ``python -m
bench.report --markdown`` from the committed bench/results/ (latest.json and the
separately-run cases' JSON) must reproduce both byte for byte, so that neither can drift
from the generator or the data.  Also: separately-run cases render through their own
module or read "not run"; every committed PNG is in the document.  No benchmarking."""

from __future__ import annotations

import copy
import json
import shutil
import sys
import types
from pathlib import Path

import pytest

from bench import render, report, separate, tables
from bench import targets as TG

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


def test_committed_documents_are_the_generated_ones():
    files = render.documents(LATEST)
    assert set(files) == {DOC, ROOT / "README.md"}
    for path, text in files.items():
        assert path.read_text(encoding="utf-8") == text, (
            f"{path.name} is stale: run python -m bench.report --markdown and commit it"
        )
    assert render.RESULTS_MD == DOC


def _table_rows(doc: str) -> dict[tuple[str, str, str], list[str]]:
    """The rows of the main results table (µs), not of the sections after it."""
    rows = {}
    main = doc.split("\n## Results", 1)[1].split("\n### ", 1)[0]
    for line in main.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| ") and len(cells) > 9 and cells[1] != "variant":
            rows[(cells[0], cells[1], cells[2])] = cells
    return rows


def test_document_has_a_table_row_for_every_case(result, doc):
    rows = _table_rows(doc)
    for r in result["rows"]:
        cells = rows.get((r["fn"], r["variant"] or "", f"{r['B']:,}"))
        assert cells is not None, r["key"]
        jax = r["backends"]["jax"]["median_us"]
        assert cells[3].startswith(tables.fmt(jax) + " ±"), (r["key"], cells[3])
        assert f"{r['speedup_vs_torch']:.2f}x" in cells, r["key"]


def test_document_sections_and_targets(result, doc):
    for head in ("## Targets", "## How the bench measures", "## Commands", "## This run"):
        assert head in doc
    for head in (
        "## Caveats",
        "## Results",
        "### Overhead report",
        "## Plots",
        "## Target details",
    ):
        assert head in doc
    assert "python -m bench.report --markdown" in doc and "--update-committed" in doc
    assert result["meta"]["started"] in doc
    tgs = render.all_targets(result, separate.load(RESULTS))
    assert {t["name"] for t in TG.evaluate(result)} <= {t["name"] for t in tgs}
    for t in tgs:
        status = "**met**" if t["status"] == TG.MET else t["status"]
        assert f"| `{t['name']}` | {t['what']} | {t['issue']} | {status} |" in doc
        assert f"**`{t['name']}`: {t['what']}: {t['status']}.**" in doc
    for case in separate.CASES:
        assert f"## {case.title}" in doc


def test_every_committed_png_is_drawn_from_the_data_and_in_the_document(result, doc):
    pngs = {p.name for p in RESULTS.glob("*.png")}
    expected = set(render.plot_names(result))
    if (RESULTS / "step.json").exists():
        expected.add("step.png")
    assert pngs == expected
    for png in pngs:
        assert f"(results/{png})" in doc


def test_separate_cases_render_through_their_module_or_read_not_run(tmp_path, result, monkeypatch):
    shutil.copy(LATEST, tmp_path / "latest.json")
    fake = types.ModuleType("bench.fakecase")
    fake.markdown = lambda r, rd: f"Fake case: {r['ratio']}x ({rd}/fakecase.json)"
    fake.headline = lambda r: [f"- Fake case headline {r['ratio']}x."]
    fake.targets = lambda r: [
        TG.target(
            "fake_ratio", "fake ratio >= 5x", 18, {"ratio": None if r is None else r["ratio"] >= 5}
        )
    ]
    monkeypatch.setitem(sys.modules, "bench.fakecase", fake)
    cases = (
        separate.Separate("fakecase", "A fake case", "python -m bench.fakecase", "a fake thing"),
        separate.Separate("nomodule", "Absent", "python -m bench.nomodule", "nothing"),
    )
    loaded = separate.load(tmp_path, cases)
    assert [item.ran for item in loaded] == [False, False]
    text = render.markdown(result, loaded, results_dir=".")
    assert "Not run: `python -m bench.fakecase --update-committed` measures a fake thing" in text
    assert "Not run: `python -m bench.nomodule --update-committed`" in text
    assert "| `fake_ratio` | fake ratio >= 5x | 18 | not measured |" in text
    (tmp_path / "fakecase.json").write_text(json.dumps({"ratio": 7.5}))
    loaded = separate.load(tmp_path, cases)
    text = render.markdown(result, loaded, results_dir=".")
    assert "## A fake case\n\nFake case: 7.5x (./fakecase.json)" in text
    assert "- Fake case headline 7.5x." in text
    assert "| `fake_ratio` | fake ratio >= 5x | 18 | **met** |" in text
    assert "`./latest.json` and `./fakecase.json`" in text


def test_old_results_render_not_measured_for_the_overhead_report(result):
    assert "overhead" not in result or result["overhead"]["rows"]
    old = {k: v for k, v in result.items() if k != "overhead"}
    text = render.markdown(old)
    section = text.split("### Overhead report", 1)[1].split("###", 1)[0]
    assert "Not measured in this run." in section
    assert "| `public_over_plain_jit` |" in text and "| 17 | not measured |" in text
    assert "jax bare" not in text  # a retired backend of older results is left out


def test_contention_caveat_only_when_recorded(result):
    quiet = copy.deepcopy(result)
    quiet["meta"]["quiet_gate"]["chunks_still_contended"] = []
    quiet["meta"].get("contention", {})["chunks_still_contended"] = 0
    text = render.markdown(quiet)
    assert "This run was contended" not in text
    assert "Caveat:" not in text
    loud = copy.deepcopy(result)
    loud["meta"]["quiet_gate"]["chunks_still_contended"] = [
        {"chunk": "round 1 consensus[K=8,n=16]", "foreign_cores": 1.5, "waited_s": 0.0}
    ]
    assert "This run was contended" in render.markdown(loud)


def test_cli_writes_and_checks(tmp_path, capsys):
    shutil.copy(LATEST, tmp_path / "latest.json")
    out = tmp_path / "RESULTS.md"
    assert report.main([str(tmp_path / "latest.json"), "--markdown"]) == 0
    assert out.read_text() == render.render_markdown(tmp_path / "latest.json", out)
    assert "`./latest.json`" in out.read_text()
    assert report.main([str(tmp_path / "latest.json"), "--markdown", "--check"]) == 0
    out.write_text(out.read_text() + "edited by hand\n")
    assert report.main([str(tmp_path / "latest.json"), "--markdown", "--check"]) == 1
    assert report.main([str(LATEST), "--markdown", "--check"]) == 0
    assert report.main([str(tmp_path / "latest.json")]) == 0
    printed = capsys.readouterr().out
    assert "| function" in printed and "target public_over_plain_jit" in printed


def test_a_committed_run_regenerates_the_document_and_the_readme_summary(tmp_path, monkeypatch):
    from bench import output

    results = tmp_path / "bench" / "results"
    results.mkdir(parents=True)
    shutil.copy(LATEST, results / "latest.json")
    readme = tmp_path / "README.md"
    readme.write_text(
        f"# x\n\n## Benchmarks\n\n{render.T.README_BEGIN}\nold\n{render.T.README_END}\n\n## More\n"
    )
    monkeypatch.setattr(output, "COMMITTED", results)
    monkeypatch.setattr(render, "RESULTS_MD", tmp_path / "bench" / "RESULTS.md")
    monkeypatch.setattr(render, "README_MD", readme)
    assert output.finish(results) == [render.RESULTS_MD, readme]
    assert render.RESULTS_MD.read_text() == render.render_markdown(
        results / "latest.json", render.RESULTS_MD
    )
    text = readme.read_text()
    assert "\nold\n" not in text and text.startswith("# x\n") and text.endswith("\n\n## More\n")
    assert "[bench/RESULTS.md](bench/RESULTS.md)" in text
    unmet = [t["name"] for t in json.loads(LATEST.read_text())["targets"] if not t["met"]]
    assert all(f"`{name}`" in text for name in unmet), unmet  # each unmet target named
    # elsewhere, the document goes beside the JSON and the README is left alone
    other = tmp_path / "scratch"
    other.mkdir()
    shutil.copy(LATEST, other / "latest.json")
    assert output.finish(other) == [other / "RESULTS.md"]
    assert readme.read_text() == text


def test_readme_summary_names_every_unmet_target(result):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Benchmarks", 1)[1].split("\n## ", 1)[0]
    block = section.split(render.T.README_BEGIN, 1)[1].split(render.T.README_END, 1)[0]
    for t in render.all_targets(result, separate.load(RESULTS)):
        if t["status"] != TG.MET:
            assert f"`{t['name']}`" in block, t["name"]
    with pytest.raises(ValueError, match="no bench summary markers"):
        render.update_readme("# no markers\n", "x")


def _with_logits(result: dict) -> dict:
    """``result`` with two synthetic logits rows at the issue's shape and the copy of
    their bytes (as ``python -m bench`` now writes them)."""
    from bench import cases as C

    out = copy.deepcopy(result)
    out["rows"] = [r for r in out["rows"] if "logits" not in r]
    out["meta"]["peak_rss_MiB"] = {"jax": 1400.0, "numpy": 3100.0}
    out["copy_bandwidth"]["logits"] = {
        "bytes": 2**30,
        "read_GBps": 10.0,
        "read_GBps_range": [9.0, 11.0],
        "what": "NumPy copy of 1,024 MiB",
    }
    for kind, jax_ms, exp_ms in (("float32", 210.0, 120.0), ("bfloat16", 60.0, 50.0)):
        case = C.Case("self_certainty", 8, T=1024, V=32768, kind=kind)
        nbytes = C.logits_nbytes(case)
        st = {"median_us": jax_ms * 1e3, "p25_us": jax_ms * 1e3, "p75_us": jax_ms * 1e3}
        st["min_us"] = jax_ms * 1e3
        torch_st = {k: 10 * v for k, v in st.items()}
        out["rows"].append(
            {
                **case.to_json(),
                "key": case.key,
                "variant": case.variant,
                "family": case.family,
                "elementwise": False,
                "bytes": nbytes,
                "backends": {"jax": st, "torch": torch_st},
                "speedup_vs_torch": 10.0,
                "best_speedup_vs_torch": 10.0,
                "logits": {
                    "bytes": nbytes,
                    "copy_read_GBps": 10.0,
                    "copy_ms": nbytes / 1e7,
                    "read_GBps": nbytes / jax_ms / 1e6,
                    "read_frac_of_copy": nbytes / jax_ms / 1e7,
                    "passes": {"exp_pass": {**st, "median_us": exp_ms * 1e3}},
                    "exp_pass_read_frac_of_copy": nbytes / exp_ms / 1e7,
                    "jax_over_exp_pass": jax_ms / exp_ms,
                },
            }
        )
    return out


def test_logits_rows_render_a_table_a_headline_a_plot_and_words(result, tmp_path):
    from bench import plots

    res = _with_logits(result)
    text = render.markdown(res)
    section = text.split("### Logits reductions against the machine's limits", 1)[1]
    section = section.split("\n### ", 1)[0]
    assert "10 GB/s copying 1,024 MiB" in section
    lines = [x for x in section.splitlines() if x.startswith("| ")]
    head, *body = [[c.strip() for c in x.strip("|").split("|")] for x in lines]
    assert len(body) == 2
    f32 = dict(zip(head, body[0], strict=True))
    assert f32["variant"] == "float32,T=1024,V=32768" and f32["jax ms"] == "210 ±0%"
    # 1 GiB read in 210 ms against 10 GB/s; 210 ms over the 120 ms exp pass
    assert f32["of copy read"] == "0.51" and f32["jax / exp pass"] == "1.75x"
    assert f32["copy ms"] == "107" and f32["torch/jax"] == "10.00x" and f32["numpy ms"] == "-"
    assert "Logits reductions (`self_certainty`, `token_entropy` at [8, 1,024, 32,768]" in text
    assert "JAX **10.0x** the eager torch twin (target 3x);" in text  # no torch.compile data
    assert "at **0.51-0.89** of a copy's read rate;" in text
    assert ("(target 0.75 of the copy's rate, or of the exp pass's where that pass is below "
            "it: ") in text
    assert "held on 1 of 2 rows)" in text
    assert "read rate not held (0.51 of the copy's), and not bound by the exponentials" in text
    assert "read rate held (0.89 of the copy's)" in text
    assert "Peak RSS of the worker processes (MiB): `jax` 1,400, `numpy` 3,100" in text
    assert "| `logits_read_rate` |" in text and "| 19 | not met |" in text
    block = render.readme_block(res, [])
    assert "Logits reductions" in block and "`logits_read_rate`" in block
    plain = {**result, "rows": [r for r in result["rows"] if "logits" not in r]}
    assert "logits.png" in render.plot_names(res) and "logits.png" not in render.plot_names(plain)
    png = plots.logits(res, tmp_path / "logits.png")
    assert png.stat().st_size > 0
    # the logits rows are drawn in logits.png, not against B
    assert all("logits" not in r for r in plots._along_b(res))
