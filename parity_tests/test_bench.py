"""The bench: ``python -m bench --quick`` runs end to end, writes outside the repository by
default (``git status`` stays clean) and reports targets without data as "not measured";
the grid registry builds every case; the NumPy implementation the bench times agrees
with zero_jax, so that its timings compare like with like.  No timing thresholds:
timings are noisy."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import jax.numpy as jnp
import numpy as np
import pytest

import zero_jax
import zero_torch
from bench import cases as C
from bench import numpy_impl, output, overhead
from bench import targets as TG

ROOT = Path(__file__).resolve().parent.parent

SMALL = [
    C.Case("uncertainty_reward", 300),
    C.Case("curriculum_mask", 300),
    C.Case("proposer_rewards", 300),
    C.Case("coder_rewards", 300),
    C.Case("challenger_rewards", 300, ids="dense"),
    *[C.Case("challenger_rewards", b, ids="arbitrary") for b in (64, 300, 4096)],
    *[
        C.Case(f, 200, K=k, n=n)
        for f in ("consensus", "solver_rewards")
        for k in (1, 8, 16)
        for n in (16, 1024, 1_000_000)
    ],
    *[C.Case("pseudo_rewards", 200, K=k) for k in (8, 16)],
    *[C.Case("group_advantages", 200, K=k) for k in (1, 8, 16)],
    *[C.Case("group_advantages", 200, K=k, kind="rloo") for k in (1, 2, 8)],
    C.Case("hint_delta", 40, T=64),
    *[
        C.Case("multi_reward_advantages", 100, K=k, R=r, kind=a)
        for a in ("sum_then_normalize", "normalize_then_sum")
        for k, r in ((8, 2), (8, 3), (1, 2))
    ],
    *[
        C.Case(fn, 3, T=t, V=300, kind=d)
        for fn in C.LOGITS_FUNCTIONS
        for t in (0, 40)
        for d in C.LOGITS_DTYPES
    ],
    *[C.Case("pass_at_k", 300, K=k) for k in (4, 16, 1024)],
    *[C.Case("vote_metrics", 300, K=k, n=16) for k in (2, 16)],
    C.Case("overlong_penalty", 300),
    *[C.Case("informative_groups", 300, K=k) for k in (1, 8)],
    C.Case("learnability_reward", 300),
]


def _check(got, want, name):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (name, got.dtype, want.dtype)
    assert got.shape == want.shape, (name, got.shape, want.shape)
    if got.dtype.name == "bfloat16":  # one rounding of the same float32 value, or the next
        tol = 2**-7
        np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=tol)
    elif got.dtype.kind == "f":
        # logits: a sum of 300 terms in another order
        tol = 1e-6 if got.dtype == np.float32 else 1e-12
        rtol = 4 * tol if "V=" in name else tol
        np.testing.assert_allclose(got, want, rtol=rtol, atol=tol, err_msg=name)
    else:
        np.testing.assert_array_equal(got, want, err_msg=name)


@pytest.mark.parametrize("case", SMALL, ids=lambda c: c.key)
def test_numpy_implementation_agrees_with_zero_jax(case):
    args, kwargs = C.build(case)
    want = getattr(zero_jax, case.fn)(
        *[jnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args], **kwargs
    )
    got = getattr(numpy_impl, case.fn)(*args, **kwargs)
    if isinstance(want, tuple):
        for g, w in zip(got, want, strict=True):
            _check(g, w, case.key)
    else:
        _check(got, want, case.key)


def test_the_registry_covers_public_functions_with_distinct_cases():
    assert C.FUNCTIONS and set(C.FUNCTIONS) == set(C.BENCHES)
    for fn in C.FUNCTIONS:
        assert fn in zero_jax.__all__ and fn in zero_torch.__all__, fn
        entry = C.BENCHES[fn]
        assert entry.full and entry.quick and entry.dispatch, fn
        assert all(c.B == 8 for c in entry.dispatch), fn
    for grid in (C.full_grid(), C.quick_grid(), C.dispatch_cases()):
        keys = [c.key for c in grid]
        assert len(keys) == len(set(keys))
        assert {c.fn for c in grid} == set(C.FUNCTIONS)
    # every quick function has a B >= 4,096 row, so that the quick run compares with torch
    # (but hint_delta's and the logits reductions', whose size is in T and V)
    along_t = {"hint_delta", *C.LOGITS_FUNCTIONS}
    assert {c.fn for c in C.quick_grid() if c.B >= 4096} >= set(C.FUNCTIONS) - along_t
    # the functions of issue 19 are all timed, RLOO and both aggregations included
    new = {"multi_reward_advantages", "self_certainty", "token_entropy", "pass_at_k"}
    new |= {"vote_metrics", "overlong_penalty", "informative_groups", "learnability_reward"}
    assert new <= set(C.FUNCTIONS)
    full = C.full_grid()
    assert {c.kind for c in full if c.fn == "multi_reward_advantages"} == {
        "sum_then_normalize",
        "normalize_then_sum",
    }
    assert {c.R for c in full if c.fn == "multi_reward_advantages"} == {2, 3}
    rloo = [c for c in full if c.fn == "group_advantages" and c.kind == "rloo"]
    assert {c.B for c in rloo} == {c.B for c in full if c.fn == "group_advantages" and not c.kind}
    assert C.build(rloo[0])[1] == dict(zero_jax.ADVANTAGE_PRESETS["rloo"]) == C.RLOO
    # the new functions run at the usual batch sizes (B >= 4,096 rows to compare with torch)
    for fn in new - set(C.LOGITS_FUNCTIONS):
        assert {c.B for c in full if c.fn == fn} >= {4096, 65536}, fn


def test_grid_specs_multiply_out_and_cases_round_trip():
    cases = C._grid(
        "consensus", [{"K": (8, 16), "n": 16, "B": (256, 4096)}, {"B": 7, "K": 1, "n": 2}]
    )
    assert [c.key for c in cases] == [
        "consensus[K=8,n=16]@B=256",
        "consensus[K=8,n=16]@B=4096",
        "consensus[K=16,n=16]@B=256",
        "consensus[K=16,n=16]@B=4096",
        "consensus[K=1,n=2]@B=7",
    ]
    for case in C.full_grid():
        assert C.Case.from_json(case.to_json()) == case
    assert C.Case("consensus", 4, K=8, n=1_000_000).variant == "K=8,n=1M"
    multi = C.Case("multi_reward_advantages", 4, K=8, R=3, kind="normalize_then_sum")
    assert multi.variant == "normalize_then_sum,K=8,R=3"
    assert C.Case("self_certainty", 8, T=1024, V=32768, kind="bfloat16").family == (
        "self_certainty[bfloat16,T=1024,V=32768]"
    )
    # results written before a dimension or the kind existed read back as None
    assert C.Case.from_json({"fn": "consensus", "B": 4, "K": 8, "n": 16}).kind is None
    with pytest.raises(ValueError, match="not a public function"):
        C.register("no_such_reward", full=[], quick=[], dispatch=[], out_bytes=lambda c: 0)


def test_io_bytes_count_inputs_and_outputs():
    case = C.Case("group_advantages", 4096, K=8)
    args, _ = C.build(case)
    assert C.io_bytes(case) == args[0].nbytes + C.output_nbytes(case) == 2 * 4 * 4096 * 8
    # an input that does not grow with B (weights [R]) counts once
    multi = C.Case("multi_reward_advantages", 4096, K=8, R=3, kind="sum_then_normalize")
    assert C.io_bytes(multi) == 4 * 4096 * 8 * 3 + 4 * 3 + C.output_nbytes(multi)
    big = C.Case("self_certainty", 8, T=1024, V=32768, kind="float32")
    assert C.io_bytes(big) == 2**30 + 8 * 1024 + 4 * 8  # logits, mask, output
    streaming = C.streaming_families()
    assert "challenger_rewards[dense]" in streaming and "uncertainty_reward" in streaming
    assert "overlong_penalty" in streaming and "learnability_reward" in streaming
    assert (
        "challenger_rewards[arbitrary]" not in streaming and "consensus[K=8,n=16]" not in streaming
    )


def _tree_digest(root: Path) -> dict[str, str]:
    """A digest of every file the repository tracks in bench/ and of README.md (the files
    a bench run could overwrite)."""
    files = [p for p in (root / "bench").rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    files.append(root / "README.md")
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in files}


def _git_status(root: Path) -> str | None:
    if shutil.which("git") is None or not (root / ".git").exists():
        return None
    proc = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return proc.stdout if proc.returncode == 0 else None


def test_quick_run_writes_outside_the_repository_and_reports_without_data_as_not_measured(
    tmp_path,
):
    backends = "jax,numpy"
    if importlib.util.find_spec("torch") is not None:
        backends = "jax,torch,numpy"
    before, status = _tree_digest(ROOT), _git_status(ROOT)
    env = {**os.environ, "TMPDIR": str(tmp_path)}  # the default scratch directory lives here
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "--quick", "--backends", backends],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert _tree_digest(ROOT) == before, "a quick run changed files of the repository"
    assert _git_status(ROOT) == status
    out = tmp_path / output.scratch().name
    result = json.loads((out / "latest.json").read_text())
    assert {"meta", "copy_bandwidth", "rows", "dispatch_us_B8", "rss", "targets"} <= set(result)
    assert result["meta"]["quick"] is True
    assert result["copy_bandwidth"]["prealloc_GBps"] > 0
    assert {r["fn"] for r in result["rows"]} == set(C.FUNCTIONS)
    for row in result["rows"]:
        for b in backends.split(","):
            if b != "numpy" or hasattr(numpy_impl, row["fn"]):
                assert row["backends"][b]["median_us"] > 0, (row["key"], b)
        assert row["bytes"] > 0
    assert result["dispatch_us_B8"]["jax"]["uncertainty_reward"] > 0
    # the overhead report: every covered quick case, timed against its plain jit
    paired = {r["key"] for r in result["overhead"]["rows"]}
    assert paired == {c.key for c in C.quick_grid() if overhead.covers(c)} != set()
    assert all(
        r["public_over_plain"] > 0 and r["plain_us"]["median_us"] > 0
        for r in result["overhead"]["rows"]
    )
    # targets: named, with a status each; a quick grid has no B = 16M row, so the bandwidth
    # target is not measured (never met without data), in the JSON and in the printed summary
    by = {t["name"]: t for t in result["targets"]}
    assert set(by) == {t.__name__ for t in TG.GRID_TARGETS}
    assert all(t["status"] in (TG.MET, TG.NOT_MET, TG.NOT_MEASURED) for t in by.values())
    assert by["bandwidth_vs_copy"]["status"] == TG.NOT_MEASURED
    assert by["vote_independent_of_alphabet"]["status"] != TG.MET  # no n=16 / n=1M pair
    line = next(x for x in proc.stdout.splitlines() if x.startswith("target bandwidth_vs_copy"))
    assert "NOT MEASURED" in line
    assert by["public_over_plain_jit"]["status"] != TG.NOT_MEASURED
    # every timed chunk's contention is recorded, with its repeats
    contention = result["meta"]["contention"]
    assert contention["chunks_timed"] == len(contention["chunks"]) > 0
    for chunk in contention["chunks"]:
        assert len(chunk["attempts"]) == chunk["retries"] + 1
        assert chunk["retries"] <= contention["max_retries_per_chunk"]
    # the runtime limits: JAX's defaults against the user-side settings
    limits = result["runtime_limits"]
    assert set(limits) == {"async_dispatch", "huge_pages"}
    for block in limits.values():
        for row in block["rows"]:
            assert row["default"]["median_us"] > 0 and row["setting"]["median_us"] > 0
    for png in ("throughput.png", "ratio.png", "logits.png", "overhead.png"):
        assert (out / png).stat().st_size > 0
    # the logits rows: the reference passes beside the public call, the copy of as many
    # bytes, peak memory; their targets need the shape, not the quick one
    copy = result["copy_bandwidth"]["logits"]
    assert copy["read_GBps"] > 0
    assert copy["bytes"] == max(C.logits_nbytes(c) for c in C.quick_grid() if C.is_logits(c))
    logits_rows = [r for r in result["rows"] if r["fn"] in C.LOGITS_FUNCTIONS]
    assert len(logits_rows) == 4
    for row in logits_rows:
        lg = row["logits"]
        assert set(lg["passes"]) == {"max_pass", "exp_pass", "plain_jit"}
        assert lg["read_frac_of_copy"] > 0 and lg["jax_over_exp_pass"] > 0
    assert by["logits_vs_torch"]["status"] == TG.NOT_MEASURED
    assert by["logits_read_rate"]["status"] == TG.NOT_MEASURED
    assert {m["fn"] for m in result["rss"] if "error" not in m} >= {"consensus", "self_certainty"}
    assert set(result["meta"]["peak_rss_MiB"]) >= set(backends.split(","))
    assert "### Logits reductions against the machine's limits" in (out / "RESULTS.md").read_text()
    doc = (out / "RESULTS.md").read_text()
    assert "(./latest.json)" not in doc and "`./latest.json`" in doc
    assert "| `bandwidth_vs_copy` |" in doc and "quick subset" in doc
    assert "| function" in proc.stdout


def test_a_quick_run_never_writes_the_committed_results(capsys):
    from bench.__main__ import main

    before = _tree_digest(ROOT)
    with pytest.raises(SystemExit, match="never replaces the committed results"):
        main(["--quick", "--update-committed"])
    with pytest.raises(SystemExit, match="never replaces the committed results"):
        main(["--quick", "--out", str(output.COMMITTED)])
    with pytest.raises(SystemExit, match="the committed results are the whole grid"):
        main(["--update-committed", "--only", "consensus"])
    assert _tree_digest(ROOT) == before


def test_missing_extras_end_with_one_line_naming_the_install(monkeypatch):
    from bench import extras
    from bench.__main__ import main

    real = importlib.util.find_spec
    monkeypatch.setattr(
        extras.importlib.util,
        "find_spec",
        lambda name, *a: None if name in ("torch", "matplotlib") else real(name, *a),
    )
    with pytest.raises(SystemExit) as info:
        main(["--quick"])
    message = str(info.value)
    assert "\n" not in message and 'pip install -e ".[bench]"' in message
    assert "torch" in message and "matplotlib" in message
    # without torch backends and plots, nothing is missing: the check passes
    assert extras.missing({"numpy": "numpy"}) == []
    monkeypatch.setattr(
        output, "directory", lambda *a, **k: (_ for _ in ()).throw(SystemExit("ran"))
    )
    with pytest.raises(SystemExit, match="ran"):
        main(["--quick", "--backends", "jax,numpy", "--no-plot"])
