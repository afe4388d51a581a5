"""With x64 disabled (JAX's default) every function returns JAX's canonical types
(float32 / int32) and emits no warning, not even for int64 / float64 NumPy input.
Warnings are errors in this module (the equivalent of ``pytest -W error``)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import zero_jax

from . import cases as oracle

pytestmark = [pytest.mark.filterwarnings("error"), pytest.mark.usefixtures("x64_off")]


def test_canonical_dtypes_and_values_without_x64():
    rng = np.random.default_rng(0)
    answers = rng.integers(0, 3, size=(9, 5))  # int64 NumPy input
    p64 = rng.random(9)  # float64 NumPy input
    labels, p = zero_jax.consensus(answers, 3)
    assert labels.dtype == jnp.int32 and p.dtype == jnp.float32
    want_labels, want_p = oracle.consensus(answers)
    np.testing.assert_array_equal(labels, want_labels)
    np.testing.assert_allclose(p, want_p, atol=1e-6)
    for method in ("one_hot", "segment_sum", "pairwise"):
        np.testing.assert_array_equal(zero_jax.consensus(answers, 3, method=method)[0], labels)

    checks = {
        "pseudo_rewards": (zero_jax.pseudo_rewards(answers, labels), jnp.float32),
        "solver_rewards": (zero_jax.solver_rewards(answers, answers > 0, 3), jnp.float32),
        "uncertainty_reward": (zero_jax.uncertainty_reward(p64), jnp.float32),
        "challenger_rewards": (
            zero_jax.challenger_rewards(p64, np.arange(9) % 2**40, p64 > 0.3),
            jnp.float32,
        ),
        "curriculum_mask": (zero_jax.curriculum_mask(p64), jnp.bool_),
        "hint_delta": (
            zero_jax.hint_delta(-np.ones((9, 4)), -np.ones((9, 4)), np.ones((9, 4), bool)),
            jnp.float32,
        ),
        "proposer_rewards": (
            zero_jax.proposer_rewards(p64, np.arange(9) * 60, p64 / 2, p64 > 0.5),
            jnp.float32,
        ),
        "coder_rewards": (zero_jax.coder_rewards(p64 > 0.5, p64, p64, p64 < 0.2), jnp.float32),
        "group_advantages": (zero_jax.group_advantages(p64.reshape(3, 3)), jnp.float32),
    }
    for name, (out, dtype) in checks.items():
        assert out.dtype == dtype, name
    np.testing.assert_allclose(
        checks["solver_rewards"][0], oracle.solver_rewards(answers, answers > 0), atol=1e-6
    )
    np.testing.assert_allclose(
        checks["proposer_rewards"][0],
        oracle.proposer_rewards(p64, np.arange(9) * 60, p64 / 2, p64 > 0.5),
        atol=1e-6,
    )


def test_float32_scores_keep_float32_and_jit_works_without_x64():
    p = jnp.asarray([0.25, 0.5, 0.75], jnp.float32)
    out = jax.jit(lambda p: zero_jax.challenger_rewards(p, jnp.array([1, 1, 2]), p > 0, 0.5))(p)
    assert out.dtype == jnp.float32
    np.testing.assert_allclose(
        out, oracle.challenger_rewards(np.asarray(p), [1, 1, 2], [1, 1, 1], 0.5), atol=1e-6
    )
