"""Gradients: hint_delta through jax.grad equals torch autograd, is exactly zero
at masked positions and finite for all-masked rows; every detached output has a
zero JAX gradient and ``requires_grad == False`` in torch."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import zero_jax

torch = pytest.importorskip("torch", reason="gradient parity needs the torch twin")
import zero_torch  # noqa: E402


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_hint_delta_gradients_match_autograd(dtype):
    rng = np.random.default_rng(0)
    base = -rng.exponential(size=(6, 9)).astype(dtype)
    hinted = -rng.exponential(size=(6, 9)).astype(dtype)
    mask = rng.random((6, 9)) < 0.5
    mask[2] = False
    weights = rng.normal(size=6).astype(dtype)

    def loss(b, h):
        return jnp.sum(zero_jax.hint_delta(b, h, mask) * weights)

    gb, gh = jax.grad(loss, argnums=(0, 1))(base, hinted)
    tb = torch.tensor(base, requires_grad=True)
    th = torch.tensor(hinted, requires_grad=True)
    (zero_torch.hint_delta(tb, th, torch.tensor(mask)) * torch.tensor(weights)).sum().backward()
    tol = 1e-6 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(np.asarray(gb), tb.grad.numpy(), atol=tol)
    np.testing.assert_allclose(np.asarray(gh), th.grad.numpy(), atol=tol)
    # Independent check: d delta_i / d base_it = m_it / max(1, n_i), and minus that for hinted.
    n = np.maximum(mask.sum(1, keepdims=True), 1)
    expected = mask * weights[:, None] / n
    np.testing.assert_allclose(np.asarray(gb), expected, atol=tol)
    np.testing.assert_allclose(np.asarray(gh), -expected, atol=tol)
    assert np.all(np.asarray(gb)[~mask] == 0) and np.all(np.asarray(gh)[~mask] == 0)
    assert np.all(np.isfinite(np.asarray(gb)))


def test_all_masked_rows_return_zero_with_zero_finite_gradient():
    base = jnp.full((3, 4), -2.0)
    mask = jnp.zeros((3, 4), bool)
    out = zero_jax.hint_delta(base, base * 3, mask)
    np.testing.assert_array_equal(out, 0.0)
    g = jax.grad(lambda b: zero_jax.hint_delta(b, b * 3, mask).sum())(base)
    np.testing.assert_array_equal(g, 0.0)


def _detached_cases(xp, grad_input):
    """Each detached output as a function of one float input."""
    p = grad_input
    b = p.shape[0]
    ids = xp["int"]([1, 1, 2, 5][:b])
    valid = xp["bool"]([True, False, True, True][:b])
    return {
        "uncertainty_reward": lambda z: z.uncertainty_reward(p),
        "challenger_rewards": lambda z: z.challenger_rewards(p, ids, valid),
        "proposer_rewards": lambda z: z.proposer_rewards(p, ids * 100, p / 4, valid),
        "coder_rewards": lambda z: z.coder_rewards(valid, p, p, ~valid),
        "group_advantages": lambda z: z.group_advantages(p.reshape(2, 2)),
    }


def test_detached_outputs_have_zero_jax_gradient():
    p0 = jnp.array([0.2, 0.5, 0.6, 0.9])
    xp = {"int": lambda x: jnp.asarray(x), "bool": lambda x: jnp.asarray(x)}
    names = _detached_cases(xp, p0).keys()
    for name in names:

        def f(p, name=name):
            return jnp.sum(_detached_cases(xp, p)[name](zero_jax))

        g = jax.grad(f)(p0)
        np.testing.assert_array_equal(g, 0.0, err_msg=name)


def test_detached_outputs_do_not_require_grad_in_torch():
    p = torch.tensor([0.2, 0.5, 0.6, 0.9], requires_grad=True)
    xp = {"int": torch.tensor, "bool": torch.tensor}
    for name, fn in _detached_cases(xp, p).items():
        out = fn(zero_torch)
        assert out.requires_grad is False, name
    a = torch.tensor([[1, 1, 0]])
    assert zero_torch.consensus(a, 2)[1].requires_grad is False
    assert zero_torch.solver_rewards(a, a == 1, 2).requires_grad is False
    assert zero_torch.pseudo_rewards(a, torch.tensor([1])).requires_grad is False


def test_vote_outputs_have_zero_jax_gradient_through_alpha():
    a = jnp.array([[1, 1, 0], [2, 0, 2]])
    fmt = a > 0
    g = jax.grad(lambda al: zero_jax.solver_rewards(a, fmt, 3, al).sum())(0.9)
    assert float(g) == 0.0
