"""The worked examples of problems 107, 108, 109 and 113, in both frameworks."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

import zero_jax

torch = pytest.importorskip("torch", reason="the reference twin needs torch")
import zero_torch  # noqa: E402

BACKENDS = {
    "jax": (zero_jax, lambda x, dtype=None: jnp.asarray(x, dtype=dtype)),
    "torch": (zero_torch, lambda x, dtype=None: torch.tensor(x, dtype=dtype)),
}


@pytest.fixture(params=sorted(BACKENDS))
def backend(request):
    return BACKENDS[request.param]


def f64(x):
    return np.asarray(x, dtype=np.float64)


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
