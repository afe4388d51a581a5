"""The overhead report's plain versions (``bench/overhead.py``: a plain ``jax.jit`` of the
same math, no validation) give the public ``zero_jax`` outputs on the bench's inputs, so
that the ratio public / plain compares the same work (x64 on, as the bench and
conftest.py set it); and the paired timing alternates its loops.  No timing thresholds."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

import zero_jax
from bench import cases as C
from bench import overhead

#: The covered cases of the quick grid and the smallest covered B of the full grid.
CASES = [c for c in C.quick_grid() if overhead.covers(c)] + [
    c for c in C.full_grid() if overhead.covers(c) and c.B == overhead.MIN_B
]


def _check(got, want, name):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (name, got.dtype, want.dtype)
    assert got.shape == want.shape, (name, got.shape, want.shape)
    if got.dtype.kind == "f":
        tol = 1e-6 if got.dtype == np.float32 else 1e-12  # a division may round differently
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=name)
    else:
        np.testing.assert_array_equal(got, want, err_msg=name)


def test_the_report_covers_a_few_representative_functions():
    assert set(overhead.FUNCTIONS) <= set(C.FUNCTIONS)
    assert {c.fn for c in CASES} == set(overhead.FUNCTIONS)
    assert all(c.B >= overhead.MIN_B for c in CASES)
    assert not overhead.covers(C.Case("consensus", 256, K=8, n=16))
    assert not overhead.covers(C.Case("challenger_rewards", 4096, ids="arbitrary"))
    assert not overhead.covers(C.Case("solver_rewards", 4096, K=8, n=16))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.key)
def test_plain_jit_equals_zero_jax(case):
    args, kwargs = C.build(case)
    jargs = [jnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    want = getattr(zero_jax, case.fn)(*jargs, **kwargs)
    got = overhead.plain(case.fn)(*jargs, **kwargs)
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            _check(g, w, case.key)
    else:
        _check(got, want, case.key)


def test_paired_timing_alternates_and_pairs_the_loops():
    """``measure_paired`` times public and plain loops of the same length in alternating
    order, and its ratios are the per-pair quotients of those loops."""
    from bench.worker import measure_paired

    log: list[str] = []
    res = measure_paired(lambda: log.append("p"), lambda: log.append("j"), 4, 1e-4)
    inner = res["inner"]
    assert res["plain"]["inner"] == inner
    # two first calls each, one sizing call, then 4 pairs in the order pj, jp, pj, jp
    assert log[:5] == ["p", "p", "j", "j", "p"]
    loops = [log[5 + i * inner] for i in range(8)]
    assert loops == ["p", "j", "j", "p", "p", "j", "j", "p"]
    assert len(log) == 5 + 8 * inner
    assert len(res["samples_s"]) == len(res["plain"]["samples_s"]) == 4
    want = [p / b for p, b in zip(res["samples_s"], res["plain"]["samples_s"], strict=True)]
    np.testing.assert_allclose(res["pair_ratios"], want)
