"""The bench's bare kernels (``bench/bare.py``: plain ``jax.jit`` of the same math, no
validation) give the outputs of the public ``zero_jax`` functions, so that the bench's
public / bare ratio compares like with like.  No timing here."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

import zero_jax
from bench import bare
from bench import cases as C

CASES = [
    *[C.Case(f, b) for f in ("uncertainty_reward", "curriculum_mask") for b in (7, 4096)],
    *[C.Case(f, b) for f in ("proposer_rewards", "coder_rewards") for b in (7, 4096)],
    *[C.Case("challenger_rewards", b, ids="dense") for b in (5, 300, 4096)],
    *[C.Case("challenger_rewards", b, ids="arbitrary") for b in (64, 300, 4096)],
    *[
        C.Case(f, 200, K=k, n=n)
        for f in ("consensus", "solver_rewards")
        for k in (1, 8, 16)
        for n in (16, 1024, 1_000_000)
    ],
    *[
        C.Case(f, 4096, K=k, n=n)
        for f in ("consensus", "solver_rewards")
        for k, n in ((8, 16), (16, 1_000_000))
    ],
    *[C.Case("pseudo_rewards", b, K=k) for b in (200, 4096) for k in (8, 16)],
    *[C.Case("group_advantages", b, K=k) for b in (200, 4096) for k in (1, 8, 16)],
    *[C.Case("hint_delta", b, T=t) for b, t in ((40, 64), (256, 512))],
]


def _check(got, want, name):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (name, got.dtype, want.dtype)
    assert got.shape == want.shape, (name, got.shape, want.shape)
    if got.dtype.kind == "f":
        tol = 1e-6 if got.dtype == np.float32 else 1e-12
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=name)
    else:
        np.testing.assert_array_equal(got, want, err_msg=name)


def test_every_public_function_has_a_bare_kernel():
    assert set(C.FUNCTIONS) <= set(bare.__all__)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.key)
def test_bare_kernel_equals_zero_jax(case):
    args, kwargs = C.build(case)
    jargs = [jnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    want = getattr(zero_jax, case.fn)(*jargs, **kwargs)
    got = getattr(bare, case.fn)(*jargs, **kwargs)
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            _check(g, w, case.key)
    else:
        _check(got, want, case.key)


def test_bare_group_advantages_with_a_mask():
    rng = np.random.default_rng(0)
    r = jnp.asarray((rng.random((64, 8)) < 0.5).astype(np.float32))
    m = jnp.asarray(rng.random((64, 8)) < 0.7)
    _check(bare.group_advantages(r, m), zero_jax.group_advantages(r, m), "masked")


def test_paired_timing_alternates_and_pairs_the_loops():
    """``measure_paired`` times public and bare loops of the same length in alternating
    order, and its ratios are the per-pair quotients of those loops."""
    from bench.worker import measure_paired

    log: list[str] = []
    res = measure_paired(lambda: log.append("p"), lambda: log.append("b"), 4, 1e-4)
    inner = res["inner"]
    assert res["bare"]["inner"] == inner
    # two first calls each, one sizing call, then 4 pairs in the order pb, bp, pb, bp
    assert log[:5] == ["p", "p", "b", "b", "p"]
    loops = [log[5 + i * inner] for i in range(8)]
    assert loops == ["p", "b", "b", "p", "p", "b", "b", "p"]
    assert len(log) == 5 + 8 * inner
    assert len(res["samples_s"]) == len(res["bare"]["samples_s"]) == 4
    want = [p / b for p, b in zip(res["samples_s"], res["bare"]["samples_s"], strict=True)]
    np.testing.assert_allclose(res["pair_ratios"], want)
