"""The public call path of zero_jax: hyper-parameters given as Python numbers reach
the kernels as cached JAX scalars (or, at their defaults, as constants of the compiled
kernel), which must change neither a value nor a dtype, under either x64 setting, and
never recompile when a value changes."""

from __future__ import annotations

from decimal import Decimal

import jax
import jax.numpy as jnp
import numpy as np

import zero_jax
from zero_jax import advantages, mm_zero, r_zero

ANSWERS = np.array([[4, 4, 2], [1, 2, 3]])
FORMAT = np.array([[False, True, True], [True, False, True]])


def _solver_oracle(alpha: float, dtype) -> np.ndarray:
    """alpha * agree + (1 - alpha) * format, 1 - alpha in decimal, in ``dtype``."""
    agree = np.array([[1, 1, 0], [1, 0, 0]], bool)  # labels 4 and 1 (smallest-id tie)
    beta = float(Decimal("1") - Decimal(repr(alpha)))
    a, b = dtype(alpha), dtype(beta)
    return a * agree.astype(dtype) + b * FORMAT.astype(dtype)


def test_solver_alpha_exact_in_both_x64_settings_in_any_order():
    for alpha in (0.9, 0.7, 1.0, 0.0, 0.35):
        for x64 in (False, True, False):
            with jax.enable_x64(x64):
                dtype = np.float64 if x64 else np.float32
                got = zero_jax.solver_rewards(jnp.asarray(ANSWERS), jnp.asarray(FORMAT), 5, alpha)
                assert got.dtype == dtype
                np.testing.assert_array_equal(np.asarray(got), _solver_oracle(alpha, dtype))


def test_default_alpha_equals_explicit_alpha():
    a, v = jnp.asarray(ANSWERS), jnp.asarray(FORMAT)
    default = zero_jax.solver_rewards(a, v, 5)
    for given in (0.9, np.float64(0.9), 0.9000000000000000222):
        np.testing.assert_array_equal(zero_jax.solver_rewards(a, v, 5, given), default)
    # a traced alpha has no decimal complement: 1 - alpha in the float dtype
    traced = jax.jit(lambda al: zero_jax.solver_rewards(a, v, 5, al))(0.9)
    np.testing.assert_allclose(traced, default, rtol=1e-15)


def test_eps_and_band_values_exact_in_both_x64_settings():
    r = np.array([[1.0, 0.0, 0.5], [2.0, 2.0, 1.0]], np.float32)
    p = np.array([0.1, 0.25, 0.3, 0.7, 0.75, 0.9], np.float32)
    for x64 in (True, False, True):
        with jax.enable_x64(x64):
            # float64 rewards with x64 on: an eps rounded through float32 would show
            dtype, tol = (np.float64, 1e-14) if x64 else (np.float32, 4e-7)
            for eps in (1e-6, 0.5, 0.1):
                got = zero_jax.group_advantages(jnp.asarray(r.astype(dtype)), eps=eps)
                mean = r.mean(-1, keepdims=True, dtype=np.float64)
                std = r.std(-1, ddof=1, keepdims=True, dtype=np.float64)
                want = ((r - mean) / (std + dtype(eps))).astype(dtype)
                assert got.dtype == dtype
                np.testing.assert_allclose(got, want, rtol=tol, atol=0)
            for low, high in ((0.25, 0.75), (0.3, 0.7), (0.1, 0.3)):
                got = zero_jax.curriculum_mask(jnp.asarray(p), low, high)
                want = (p >= np.float32(low)) & (p <= np.float32(high))
                np.testing.assert_array_equal(got, want)
            for strength in (1.0, 0.5, 2, 0.0):
                got = zero_jax.challenger_rewards(
                    jnp.asarray(p[:4]), jnp.asarray([0, 0, 1, 2]), jnp.ones(4, bool), strength
                )
                u = 1 - 2 * np.abs(p[:4].astype(np.float64) - 0.5)
                share = np.array([2, 2, 1, 1]) / 4
                want = np.maximum(0, u - strength * share).astype(np.float32)
                np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


def test_changing_a_python_hyper_parameter_never_recompiles():
    p = jnp.linspace(0.0, 1.0, 53, dtype=jnp.float32)  # a shape no other test uses
    r = jnp.ones((7, 5), jnp.float32).at[:, 0].set(0.0)
    a, v = jnp.zeros((11, 3), jnp.int32), jnp.ones((11, 3), bool)
    ids = (p > 0.5).astype(jnp.int32)
    runs = (
        (r_zero._band, lambda x: zero_jax.curriculum_mask(p, x, 0.9)),
        (advantages._advantages, lambda x: zero_jax.group_advantages(r, eps=x)),
        (mm_zero._solver, lambda x: zero_jax.solver_rewards(a, v, 4, x)),
        (r_zero._challenger, lambda x: zero_jax.challenger_rewards(p, ids, p > 0.2, x)),
    )
    for kernel, run in runs:
        run(0.15)  # one trace for a non-default Python value
        size = kernel._cache_size()
        for x in (0.2, 0.3, 0.35, 0.4):
            run(x)
        assert kernel._cache_size() == size, kernel
