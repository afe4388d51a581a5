"""The bench: ``python -m bench --quick`` runs end to end and writes the JSON (no
timing thresholds: timings are noisy), and the NumPy implementation the bench
times agrees with zero_jax, so that its timings compare like with like."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import jax.numpy as jnp
import numpy as np
import pytest

import zero_jax
from bench import cases as C
from bench import numpy_impl

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
    C.Case("hint_delta", 40, T=64),
]


def _check(got, want, name):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (name, got.dtype, want.dtype)
    if got.dtype.kind == "f":
        tol = 1e-6 if got.dtype == np.float32 else 1e-12
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=name)
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


def test_quick_run_writes_the_json(tmp_path):
    backends = "jax,jax_bare,numpy"
    if importlib.util.find_spec("torch") is not None:
        backends = "jax,jax_bare,torch,numpy"
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "--quick", "--out", str(tmp_path), "--backends", backends],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads((tmp_path / "latest.json").read_text())
    assert {"meta", "copy_bandwidth", "rows", "dispatch_us_B8", "rss", "targets"} <= set(result)
    assert result["meta"]["quick"] is True
    assert result["copy_bandwidth"]["prealloc_GBps"] > 0
    fns = {r["fn"] for r in result["rows"]}
    assert fns == set(C.FUNCTIONS)
    for row in result["rows"]:
        for b in backends.split(","):
            assert row["backends"][b]["median_us"] > 0, (row["key"], b)
        assert row["bytes"] > 0
    assert result["dispatch_us_B8"]["jax"]["uncertainty_reward"] > 0
    assert {1, 2, 4, 5, 6} <= {t["target"] for t in result["targets"]}
    assert all(row["public_over_bare"] > 0 for row in result["rows"])
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
    assert (tmp_path / "throughput.png").stat().st_size > 0
    assert (tmp_path / "ratio.png").stat().st_size > 0
    assert "| function" in proc.stdout
