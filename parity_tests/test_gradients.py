"""Gradients: hint_delta through jax.grad equals torch autograd, is exactly zero
at masked positions and finite for all-masked rows; the contract's ``detached`` and
``differentiable_in`` hold for every function (zero JAX gradient and
``requires_grad == False`` in torch for detached outputs)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import zero_jax
from zero_contracts import CONTRACTS

from .cases import BUILDERS, Config
from .tester import call

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


def _float_args(name: str, arrays: dict) -> list[str]:
    spec = CONTRACTS[name]
    return [a.name for a in spec.args if arrays.get(a.name) is not None
            and np.asarray(arrays[a.name]).dtype.kind == "f"]


GRAD_CASES = [n for n, c in CONTRACTS.items() if any(a.kind in ("float", "real") for a in c.args)]


def _inputs(name: str):
    cfg = Config(batch=6, float_dtype="float64", pattern="dense", id_dtype="int64")
    for seed in range(20):  # a draw with a non-empty float argument
        arrays, hypers = BUILDERS[name](np.random.default_rng(seed), cfg)
        if all(np.asarray(arrays[n]).size for n in _float_args(name, arrays)):
            return arrays, hypers
    raise AssertionError(name)


@pytest.mark.parametrize("name", GRAD_CASES)
def test_gradients_follow_the_contract(name):
    """``detached`` outputs (from the contract) have a zero JAX gradient in every float
    argument and ``requires_grad == False`` in torch; the others are differentiable in
    exactly ``differentiable_in``, with JAX's gradient equal to torch autograd's."""
    spec = CONTRACTS[name]
    arrays, hypers = _inputs(name)
    floats = _float_args(name, arrays)
    assert floats, name
    for arg in floats:

        def loss(x, arg=arg):
            outs = call(zero_jax, spec, {**arrays, arg: x}, hypers)
            outs = outs if isinstance(outs, tuple) else (outs,)
            kept = [o for o in outs if jnp.issubdtype(o.dtype, jnp.floating)]
            total = sum(jnp.sum(jnp.where(jnp.isfinite(o), o, 0) * 0.7) for o in kept)
            return total + 0.0 * jnp.sum(x)  # a bool output (the band): no float path

        g = np.asarray(jax.grad(loss)(jnp.asarray(arrays[arg])))
        t_in = {k: (None if v is None else torch.tensor(v)) for k, v in arrays.items()}
        t_arg = torch.tensor(arrays[arg], requires_grad=True)
        outs = call(zero_torch, spec, {**t_in, arg: t_arg}, hypers)
        outs = outs if isinstance(outs, tuple) else (outs,)
        if spec.detached or arg not in spec.differentiable_in:
            np.testing.assert_array_equal(g, 0.0, err_msg=f"{name}: d/d{arg}")
            assert not any(o.requires_grad for o in outs), (name, arg)
            continue
        kept = [o for o in outs if o.dtype.is_floating_point]
        total = sum((torch.where(torch.isfinite(o), o, 0) * 0.7).sum() for o in kept)
        total.backward()
        np.testing.assert_allclose(g, t_arg.grad.numpy(), rtol=1e-12, atol=1e-12)
        assert np.any(g != 0), (name, arg)


def test_vote_outputs_have_zero_jax_gradient_through_alpha():
    a = jnp.array([[1, 1, 0], [2, 0, 2]])
    fmt = a > 0
    g = jax.grad(lambda al: zero_jax.solver_rewards(a, fmt, 3, al).sum())(0.9)
    assert float(g) == 0.0


@pytest.mark.parametrize("x64", [False, True], ids=["x64-off", "x64-on"])
@pytest.mark.parametrize("how", ["eager", "jit", "checked"])
def test_masked_non_finite_log_probs_never_matter(x64, how):
    """Issue 35's reproducer: NaN and -inf log-probs at masked positions (padding) gave
    [nan, 1.5] in zero_jax and ValueError in zero_torch; they change no value, raise
    nothing, and their gradient is exactly 0 (the others' as without them)."""
    b = np.array([[1.0, np.nan], [2.0, 3.0]], np.float32)
    h = np.array([[0.0, -np.inf], [1.0, 1.0]], np.float32)
    m = np.array([[True, False], [True, True]])
    fn = {"eager": zero_jax.hint_delta, "jit": jax.jit(zero_jax.hint_delta),
          "checked": zero_jax.checked(zero_jax.hint_delta)}[how]
    with jax.enable_x64(x64):
        np.testing.assert_array_equal(np.asarray(fn(b, h, m)), [1.0, 1.5])
        gb, gh = jax.grad(lambda x, y: fn(x, y, m).sum(), argnums=(0, 1))(b, h)
    np.testing.assert_array_equal(np.asarray(gb), [[1.0, 0.0], [0.5, 0.5]])
    np.testing.assert_array_equal(np.asarray(gh), [[-1.0, 0.0], [-0.5, -0.5]])
    tb = torch.tensor(b, requires_grad=True)
    th = torch.tensor(h, requires_grad=True)
    out = zero_torch.hint_delta(tb, th, torch.tensor(m))
    np.testing.assert_array_equal(out.detach().numpy(), [1.0, 1.5])
    out.sum().backward()
    np.testing.assert_array_equal(tb.grad.numpy(), [[1.0, 0.0], [0.5, 0.5]])
    np.testing.assert_array_equal(th.grad.numpy(), [[-1.0, 0.0], [-0.5, -0.5]])
