"""The worked examples of problems 107, 108, 109 and 113, in both frameworks."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

import zero_jax
from parity_tests.cases import f64

torch = pytest.importorskip("torch", reason="the reference twin needs torch")
import zero_torch  # noqa: E402

BACKENDS = {
    "jax": (zero_jax, lambda x, dtype=None: jnp.asarray(x, dtype=dtype)),
    "torch": (zero_torch, lambda x, dtype=None: torch.tensor(x, dtype=dtype)),
}


@pytest.fixture(params=sorted(BACKENDS))
def backend(request):
    return BACKENDS[request.param]



def test_107_uncertainty_peaks_at_half_and_is_zero_when_unanimous(backend):
    z, t = backend
    out = z.uncertainty_reward(t([0.0, 0.25, 0.5, 0.75, 1.0]))
    np.testing.assert_allclose(f64(out), [0.0, 0.5, 1.0, 0.5, 0.0], atol=1e-12)


def test_107_two_duplicates_in_a_batch_of_four(backend):
    z, t = backend
    p = t([0.5, 0.5, 0.5, 0.5])
    out = z.challenger_rewards(p, t([7, 7, 1, 2]), t([True, True, True, True]))
    assert float(out[0]) == pytest.approx(0.5)
    assert float(out[1]) == pytest.approx(0.5)
    # An invalid format returns zero whatever its uncertainty.
    out = z.challenger_rewards(p, t([7, 7, 1, 2]), t([False, True, True, True]))
    assert float(out[0]) == 0.0


def test_107_invalid_rows_stay_in_the_cluster_denominator(backend):
    z, t = backend
    # Row 0 is valid; rows 1-3 are invalid copies of its cluster: |C_0| = 4, B = 4.
    out = z.challenger_rewards(
        t([0.5, 0.5, 0.5, 0.5]), t([3, 3, 3, 3]), t([True, False, False, False]), strength=0.5
    )
    np.testing.assert_allclose(f64(out), [0.5, 0, 0, 0], atol=1e-12)


def test_108_tie_goes_to_smallest_id(backend):
    z, t = backend
    labels, p = z.consensus(t([[1, 1, 0, 0]]), 2)
    assert int(labels[0]) == 0
    assert float(p[0]) == 0.5


def test_108_frozen_label_rewards(backend):
    z, t = backend
    out = z.pseudo_rewards(t([[2, 2, 1]]), t([1]))
    np.testing.assert_array_equal(f64(out), [[0.0, 0.0, 1.0]])


def test_108_band_keeps_both_boundaries(backend):
    z, t = backend
    out = z.curriculum_mask(t([0.2, 0.25, 0.5, 0.75, 0.8]))
    np.testing.assert_array_equal(np.asarray(out), [False, True, True, True, False])


def test_109_delta_of_token_shifts(backend):
    z, t = backend
    base = t([[2.0, 1.0, 0.0], [0.0, 0.0, 0.0]])
    hinted = t([[0.0, 0.0, 5.0], [1.0, 1.0, 1.0]])
    mask = t([[True, True, False], [False, False, False]])
    np.testing.assert_allclose(f64(z.hint_delta(base, hinted, mask)), [1.5, 0.0], atol=1e-12)


def test_109_proposer_valid_and_invalid(backend):
    z, t = backend
    out = z.proposer_rewards(
        t([1.5, 1.5, 0.2]), t([300, 300, 50]), t([0.25, 0.25, 0.0]), t([True, False, True])
    )
    # valid: 1.5 - 0.03 * 100 / 100 - 0.25; invalid: -1 - 0.25; short hint: no length term.
    np.testing.assert_allclose(f64(out), [1.22, -1.25, 0.2], atol=1e-6)


def test_113_coder_examples(backend):
    z, t = backend
    out = z.coder_rewards(t([True, False]), t([0.8, 0.3]), t([0.5, 0.9]), t([False, True]))
    np.testing.assert_allclose(f64(out), [2.3, -0.15], atol=1e-6)


def test_113_solver_examples(backend):
    z, t = backend
    answers = t([[4, 4, 5]])
    out = z.solver_rewards(answers, t([[False, True, True]]), 6, alpha=0.9)
    np.testing.assert_allclose(f64(out), [[0.9, 1.0, 0.1]], atol=1e-12)


def test_113_coder_penalties_are_the_published_decimals():
    """-0.1 - 0.05 is -0.15000000000000002 in binary; the paper's -0.15 is exact in
    float64 (torch, JAX with x64) and the float32 nearest to it otherwise."""
    import jax

    args = ([False, False, True], [0.0, 0.0, 0.8], [0.0, 0.0, 0.5], [True, False, True])
    want = [-0.15, -0.1, 2.25]  # executed with a syntax error: 1 + 0.8 + 0.5 - 0.05
    got = zero_torch.coder_rewards(*(torch.tensor(a, dtype=torch.float64) if i in (1, 2)
                                     else torch.tensor(a) for i, a in enumerate(args)))
    assert got.tolist()[:2] == want[:2]
    for x64, dtype in ((True, np.float64), (False, np.float32)):
        with jax.enable_x64(x64):
            got = zero_jax.coder_rewards(*(np.asarray(a, dtype) if i in (1, 2) else np.asarray(a)
                                           for i, a in enumerate(args)))
            np.testing.assert_array_equal(np.asarray(got)[:2], np.asarray(want[:2], dtype))
            np.testing.assert_allclose(np.asarray(got)[2], 2.25, rtol=1e-6)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_109_half_precision_delta_is_rounded_once(backend, dtype):
    """The per-token differences are taken in float32 too: ``6.125 - (-4.21875)`` and
    ``-7.65625 - (-2.3125)`` each rounded to bfloat16 made the mean 2.515625 in torch
    (exact mean 2.5); float16 gave 5.109375 in both twins (rounded once: 5.11328125)."""
    import ml_dtypes

    z, t = backend
    cases = {"bfloat16": ([[6.125, -7.65625]], [[-4.21875, -2.3125]]),
             "float16": ([[0.1441650390625, 8.875]], [[-2.421875, 1.2177734375]])}
    base, hinted = cases[dtype]
    exact = np.mean(np.subtract(base, hinted, dtype=np.float64))
    narrow = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.float16
    want = float(np.float64(exact).astype(narrow))
    typ = {"bfloat16": (jnp.bfloat16, torch.bfloat16), "float16": (jnp.float16, torch.float16)}
    half = typ[dtype][0 if z is zero_jax else 1]
    got = z.hint_delta(t(base, half), t(hinted, half), t([[True, True]]))
    assert float(got[0]) == want
