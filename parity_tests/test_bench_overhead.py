"""The overhead report's hand-written versions (``bench/overhead.py``, no validation): the
plain jit of the same math gives the public ``zero_jax`` outputs on the bench's inputs and
on invalid and extreme ones (NaN / -1 included), the naive formula on the bench's inputs,
so that each ratio compares the stated work (x64 on, as the bench and conftest.py set
it); and the paired timing rotates its loops.  No timing thresholds."""

from __future__ import annotations

import jax
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
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=name, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want, err_msg=name)


def test_the_report_covers_a_few_representative_functions():
    assert set(overhead.FUNCTIONS) <= set(C.FUNCTIONS)
    assert {c.fn for c in CASES} == set(overhead.FUNCTIONS)
    assert all(c.B >= overhead.MIN_B for c in CASES)
    assert not overhead.covers(C.Case("consensus", 256, K=8, n=16))
    assert not overhead.covers(C.Case("challenger_rewards", 4096, ids="arbitrary"))
    assert not overhead.covers(C.Case("solver_rewards", 4096, K=8, n=16))


def _same(got, want, name):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            _check(g, w, name)
    else:
        _check(got, want, name)


@pytest.mark.parametrize("version", ["plain", "naive"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.key)
def test_both_versions_equal_zero_jax_on_the_bench_inputs(case, version):
    args, kwargs = C.build(case)
    jargs = [jnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    want = getattr(zero_jax, case.fn)(*jargs, **kwargs)
    got = getattr(overhead, version)(case.fn)(*jargs, **kwargs)
    _same(got, want, case.key)


def _edges():
    """Invalid and extreme inputs for each covered function: (fn, args, kwargs)."""
    nan, inf = np.nan, np.inf
    p = np.array([0.0, 0.25, 0.5, 1.0, 1.5, -0.1, nan, 5e-324, 1 - 2**-53, 0.2])
    yield "uncertainty_reward", [p], {}
    ids = np.array([0, 1, 1, 3, -1, 4, 2, 2, 0, 1])
    valid = np.array([True, True, False, True, True, True, True, False, True, True])
    for strength in (1.0, 0.0, 2.5, -1.0, nan, inf):  # traced: poison, not a raise
        strength = jnp.asarray(strength)
        yield "challenger_rewards", [p, ids, valid, strength], {"num_clusters": 4}
    answers = np.array([[0, 0, 1, 2], [-1, -1, 2, 0], [3, 3, 3, 3], [1, 2, 2, 1], [2, 2, 2, 1]])
    yield "consensus", [answers, 3], {}
    rewards = np.array(
        [
            [1e300, -1e300, 0.0, 1.0],
            [1e-300, 2e-300, 3e-300, 0.0],
            [1e6 + 1, 1e6, 1e6 - 1, 1e6],
            [0.35, 0.35, 0.35, 0.35],
            [1.0, nan, 0.0, 1.0],
            [inf, 0.0, 1.0, 1.0],
            [-inf, -inf, 0.0, 0.0],
            [5e-324, 0.0, 0.0, 0.0],
            [np.finfo(np.float64).max, 0.0, -np.finfo(np.float64).max, 1.0],
        ]
    )
    yield "group_advantages", [rewards], {}
    yield "group_advantages", [rewards[:, :1]], {}


@pytest.mark.parametrize(
    "fn, args, kwargs", list(_edges()), ids=lambda v: v if isinstance(v, str) else ""
)
def test_plain_jit_equals_zero_jax_on_invalid_and_extreme_inputs(fn, args, kwargs):
    """The same math includes the invalid-data rule (NaN / -1) and the conventions at
    extreme values, so the ratio is not flattered by skipping them."""
    jargs = [jnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    if fn == "challenger_rewards":  # strength traced, as in a user's step (else it raises)
        *arrays, strength = jargs
        public = jax.jit(lambda s: zero_jax.challenger_rewards(*arrays, s, **kwargs))
        want = public(strength)
    else:
        want = getattr(zero_jax, fn)(*jargs, **kwargs)
    got = overhead.plain(fn)(*jargs, **kwargs)
    _same(got, want, fn)
    outs = want if isinstance(want, tuple) else (want,)
    flat = np.concatenate([np.ravel(np.asarray(w, float)) for w in outs])
    assert np.isnan(flat).any() or fn == "group_advantages" and args[0].shape[1] == 1, fn


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


def test_paired_timing_rotates_three_ways_with_the_naive_formula():
    """With ``naive``, the rounds rotate ABC, BCA, CAB and each reference gets its own
    per-round ratios."""
    from bench.worker import measure_paired

    log: list[str] = []
    res = measure_paired(
        lambda: log.append("p"), lambda: log.append("j"), 3, 1e-4, lambda: log.append("n")
    )
    inner = res["inner"]
    assert log[:7] == ["p", "p", "j", "j", "n", "n", "p"]
    loops = [log[7 + i * inner] for i in range(9)]
    assert loops == ["p", "j", "n", "j", "n", "p", "n", "p", "j"]
    for name, key in (("plain", "pair_ratios"), ("naive", "naive_ratios")):
        want = [a / b for a, b in zip(res["samples_s"], res[name]["samples_s"], strict=True)]
        np.testing.assert_allclose(res[key], want)
