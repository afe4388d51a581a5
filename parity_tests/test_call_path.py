"""The public call path where users call it (issue 17): every reproducer gives the
specified answer or error eagerly, inside a user's ``jit`` where its hyper-parameter
is first seen, and under ``vmap``, with x64 off and on (meshes: test_matrix_sharded.py,
processes: test_multiprocess.py); hyper-parameters in every accepted form; no module of
zero_jax keeps a JAX value, and none imports a private JAX module."""

from __future__ import annotations

import ast
import sys
import types
from decimal import Decimal
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import zero_jax

from . import reproducers

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("x64", [False, True], ids=["x64-off", "x64-on"])
def test_every_reproducer_eager_in_jit_and_under_vmap(x64):
    assert reproducers.run_all(("jit", "eager", "vmap"), x64) == 3 * len(reproducers.cases()) + 2


@pytest.mark.parametrize("x64", [False, True], ids=["x64-off", "x64-on"])
def test_hyper_parameters_in_every_form(x64):
    """Python numbers, NumPy scalars, 0-d NumPy and JAX arrays and traced values all
    give the same answer; static ints accept NumPy ints and 0-d integer arrays."""
    p = np.array([0.5, 0.5, 0.75, 1.0])
    c, v = np.array([0, 0, 1, 2]), np.ones(4, bool)
    with jax.enable_x64(x64):
        want = np.asarray(zero_jax.challenger_rewards(p, c, v, 0.5))
        forms = (np.float64(0.5), np.float32(0.5), np.asarray(0.5), jnp.asarray(0.5),
                 np.int64(0) + 0.5)
        for s in forms:
            np.testing.assert_array_equal(zero_jax.challenger_rewards(p, c, v, s), want)
        traced = jax.jit(lambda s: zero_jax.challenger_rewards(p, c, v, s))(0.5)
        np.testing.assert_array_equal(traced, want)
        for n in (np.int64(3), np.asarray(3), jnp.asarray(3)):
            labels, _ = zero_jax.consensus(np.array([[2, 1, 1]]), n)
            assert labels.tolist() == [1]
        with pytest.raises(TypeError, match="num_answers must be a Python int"):
            jax.jit(lambda n: zero_jax.consensus(jnp.array([[2, 1, 1]]), n))(3)
        with pytest.raises(TypeError, match="strength must be a real scalar"):
            zero_jax.challenger_rewards(p, c, v, np.array([0.5]))
        with pytest.raises(TypeError, match="strength must be a real scalar"):
            zero_jax.challenger_rewards(p, c, v, True)


def test_hyper_parameter_forms_agree_between_the_twins():
    """A 0-d bfloat16 value (JAX, NumPy or ml_dtypes scalar), an int beyond the float64
    range and an ``np.str_`` option: accepted, or refused with the same error, by both
    twins; a traced complex or bool value is refused as the eager one is."""
    torch = pytest.importorskip("torch", reason="compares with the torch twin")
    import ml_dtypes

    import zero_torch

    p = np.array([0.1, 0.3, 0.5, 0.75, 1.0])
    want = [False, False, True, True, False]  # low = bfloat16(0.3) = 0.30078125
    for low in (jnp.asarray(0.3, jnp.bfloat16), np.asarray(0.3, ml_dtypes.bfloat16),
                ml_dtypes.bfloat16(0.3)):
        assert zero_jax.curriculum_mask(p, low, 0.75).tolist() == want
        assert jax.jit(lambda lo: zero_jax.curriculum_mask(p, lo, 0.75))(low).tolist() == want
        if not isinstance(low, jax.Array):
            assert zero_torch.curriculum_mask(torch.tensor(p), low, 0.75).tolist() == want
    lengths = np.array([5, 18, 25])
    assert zero_jax.overlong_penalty(lengths, 2**64, 5).tolist() == [0.0, 0.0, 0.0]
    assert zero_torch.overlong_penalty(torch.tensor(lengths), 2**64, 5).tolist() == [0.0] * 3
    for twin, n in ((zero_jax, lengths), (zero_torch, torch.tensor(lengths))):
        with pytest.raises(ValueError, match="max_length must be a finite number >= 0, got inf"):
            twin.overlong_penalty(n, 2**2000, 5)  # type: ignore[attr-defined]
    r = np.array([[1.0, 2.0, 3.0], [1.0, 1.0, 2.0]])
    np.testing.assert_allclose(
        zero_jax.group_advantages(r, scale=np.str_("batch")),
        zero_torch.group_advantages(torch.tensor(r), scale=np.str_("batch")).numpy(), rtol=1e-6,
    )
    c, v = np.array([0, 1, 1, 2, 3]), np.ones(5, bool)
    for s, got in ((jnp.asarray(1 + 1j, jnp.complex64), "complex64"), (True, "bool")):
        with pytest.raises(TypeError, match=f"strength must be a real scalar, got traced {got}"):
            jax.jit(lambda s: zero_jax.challenger_rewards(p, c, v, s))(s)


def test_64_bit_jax_ids_with_x64_off_are_checked_then_narrowed():
    """JAX int64 / uint64 ids made while x64 was on and used with it off: in range they
    give the answers of the same NumPy ids (they were passed on 64-bit, and split or
    overflowed in the kernels); out of range they raise; traced by a jit or vmap, where
    their values cannot be checked, they raise saying to narrow them first."""
    with jax.enable_x64(True):
        ids, big = jnp.array([0, 1, 1, 2]), jnp.arange(200) % 5
        answers, uids = jnp.array([[0, 1, 1], [2, 2, 0]]), jnp.array([0, 1, 1, 2], jnp.uint64)
        wide = jnp.array([[2**32 + 1, 1, 1]])
    with jax.enable_x64(False):
        for x in (ids, big, uids):
            np.testing.assert_array_equal(
                zero_jax.cluster_sizes(x), zero_jax.cluster_sizes(np.asarray(x))
            )
        assert zero_jax.cluster_sizes(ids, 3).tolist() == [1, 2, 2, 1]
        p, valid = jnp.full(4, 0.5), jnp.ones(4, bool)
        assert zero_jax.challenger_rewards(p, ids, valid, num_clusters=3).tolist() == [
            0.75, 0.5, 0.5, 0.75
        ]
        for n in (3, 2**31):
            labels, counts = zero_jax.majority_vote(answers, n)
            assert (labels.tolist(), counts.tolist()) == ([1, 2], [2, 2])
        with pytest.raises(ValueError, match="answers has values outside the int32 range"):
            zero_jax.majority_vote(wide, 3)
        placements = (
            lambda a: jax.jit(lambda a: zero_jax.majority_vote(a, 3))(a),
            lambda a: jax.vmap(lambda a: zero_jax.majority_vote(a[None], 3))(a),
            lambda a: zero_jax.checked(jax.jit(lambda a: zero_jax.majority_vote(a, 3)))(a),
        )
        for place in placements:
            for a in (wide, answers):
                traced = r"answers \(int64\) is traced by a jit"
                if place is placements[2] and a is wide:  # checked sees the values first
                    traced = r"args\[0\] has values outside the int32 range"
                with pytest.raises(ValueError, match=traced):
                    place(a)


def test_checked_checks_64_bit_numpy_arguments_of_a_user_step():
    """With x64 off, JAX narrows 64-bit NumPy arguments of the user's jit to 32 bits
    before any reward sees them (four distinct hashes counted as two pairs): checked
    checks their range first, naming the argument; in-range ones give the plain answer."""
    with jax.enable_x64(False):
        step = jax.jit(lambda p, ids, valid: zero_jax.challenger_rewards(p, ids, valid))
        p, valid = np.full(4, 0.5, np.float32), np.ones(4, bool)
        wide = np.array([2**32 + 1, 1, 5, 2**33 + 5])
        with pytest.raises(ValueError, match=r"args\[1\] has values outside the int32 range"):
            zero_jax.checked(step)(p, wide, valid)
        with pytest.raises(ValueError, match=r"kwargs\['ids'\] has values outside the uint32"):
            zero_jax.checked(step)(p, ids=wide.astype(np.uint64) << 3, valid=valid)
        ids = np.array([7, 1, 7, -2**31])
        assert zero_jax.checked(step)(p, ids, valid).tolist() == [0.5, 0.75, 0.5, 0.75]
        # what is not an integer array passes: a typed PRNG key, a dtype, floats; and
        # around a plain function an argument may never reach JAX (a NumPy seed)
        keyed = jax.jit(lambda p, key, dtype: zero_jax.uncertainty_reward(p).astype(dtype)
                        + 0 * jax.random.uniform(key), static_argnums=2)
        got = zero_jax.checked(keyed)(p, jax.random.key(0), np.float32)
        assert got.tolist() == [1.0] * 4

        def seeded(p, seed):
            return zero_jax.uncertainty_reward(p) + np.random.default_rng(seed).random(4) * 0

        assert zero_jax.checked(seeded)(p, np.int64(2**40)).tolist() == [1.0] * 4


def test_static_ints_too_large_for_their_use():
    """A static int beyond what its use can hold raises a ValueError naming it, or gives
    the exact answer."""
    a = np.array([[2, 1, 1, 0]])
    with jax.enable_x64(False):
        assert zero_jax.consensus(a, 2**32)[0].tolist() == [1]  # int32 ids fit int32 labels
        with pytest.raises(ValueError, match="num_answers=4294967296"):
            zero_jax.consensus(a.astype(np.uint32), 2**32)  # uint32 ids may not
        assert zero_jax.majority_vote(a, 2**70)[0].tolist() == [1]  # labels in a's dtype
    with jax.enable_x64(True):
        assert zero_jax.consensus(a, 2**66)[0].tolist() == [1]
        with pytest.raises(ValueError, match="num_answers=73786976294838206464"):
            zero_jax.consensus(a.astype(np.uint64), 2**66)
    with pytest.raises(ValueError, match="num_clusters must be <= 268435456"):
        zero_jax.cluster_sizes(np.array([0, 1]), num_clusters=2**40)
    r = np.array([[1.0, 2.0, 4.0]])
    for ddof in (2**31, 2**63, 10**30):
        np.testing.assert_array_equal(zero_jax.group_advantages(r, ddof=ddof), 0.0)
    # a ddof beyond the batch gives the answer of ddof = B (batch std over one) in both
    # twins; torch raised OverflowError beyond int64
    torch = pytest.importorskip("torch")
    import zero_torch

    r = np.array([[1.0, 0.0, 0.5]])
    for fn, x in (("group_advantages", r), ("multi_reward_advantages", r[..., None])):
        want = np.asarray(getattr(zero_torch, fn)(torch.from_numpy(x), ddof=3, scale="batch"))
        for ddof in (2**63, 2**64, 10**30):
            got = getattr(zero_torch, fn)(torch.from_numpy(x), ddof=ddof, scale="batch")
            np.testing.assert_array_equal(np.asarray(got), want)
            np.testing.assert_allclose(
                getattr(zero_jax, fn)(x, ddof=ddof, scale="batch"), want, rtol=1e-6
            )


def _solver_oracle(alpha: float, dtype) -> np.ndarray:
    """alpha * agree + (1 - alpha) * format, 1 - alpha in decimal, in ``dtype``."""
    fmt = np.array([[False, True, True], [True, False, True]])
    agree = np.array([[1, 1, 0], [1, 0, 0]], bool)  # labels 4 and 1 (smallest-id tie)
    beta = float(Decimal("1") - Decimal(repr(alpha)))
    return dtype(alpha) * agree.astype(dtype) + dtype(beta) * fmt.astype(dtype)


def test_solver_alpha_exact_in_both_x64_settings_in_any_order():
    answers = np.array([[4, 4, 2], [1, 2, 3]])
    fmt = np.array([[False, True, True], [True, False, True]])
    for alpha in (0.9, 0.7, 1.0, 0.0, 0.35, np.float64(0.9), np.asarray(0.7)):
        for x64 in (False, True, False):
            with jax.enable_x64(x64):
                dtype = np.float64 if x64 else np.float32
                got = zero_jax.solver_rewards(jnp.asarray(answers), jnp.asarray(fmt), 5, alpha)
                assert got.dtype == dtype
                np.testing.assert_array_equal(got, _solver_oracle(float(alpha), dtype))


def test_changing_a_hyper_parameter_never_recompiles():
    """A Python float reaches the kernel as a plain jit argument: a new value is a new
    argument, not a new trace."""
    from zero_jax import advantages, mm_zero, r_zero

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
        run(0.15)
        size = kernel._cache_size()
        for x in (0.2, 0.3, 0.35, 0.4):
            run(x)
        assert kernel._cache_size() == size, kernel


def _jax_values(obj, seen, path):
    """Paths of JAX arrays or tracers reachable from ``obj`` through containers."""
    if id(obj) in seen:
        return []
    seen.add(id(obj))
    if isinstance(obj, (jax.Array, jax.core.Tracer)):
        return [path]
    found = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            found += _jax_values(k, seen, f"{path}[{k!r}]") + _jax_values(v, seen, f"{path}.{k}")
    elif isinstance(obj, (list, tuple, set, frozenset)):
        for i, v in enumerate(obj):
            found += _jax_values(v, seen, f"{path}[{i}]")
    elif hasattr(obj, "__dict__") and not isinstance(obj, (types.ModuleType, type)):
        found += _jax_values(vars(obj), seen, path)
    if callable(obj) and hasattr(obj, "cache_info") and hasattr(obj, "__wrapped__"):
        pass  # functools caches: keyed by plain values only (checked by review)
    if isinstance(obj, types.FunctionType):
        for cell in obj.__closure__ or ():
            try:
                found += _jax_values(cell.cell_contents, seen, f"{path}<closure>")
            except ValueError:  # an empty cell
                pass
    return found


def test_no_module_of_zero_jax_holds_a_jax_value_after_any_calls():
    reproducers.run_all(("jit", "eager", "vmap"), False)
    reproducers.run_all(("jit", "vmap"), True)
    jax.jit(lambda s: zero_jax.group_advantages(jnp.ones((2, 3)), eps=s))(0.5)
    zero_jax.checked(jax.jit(zero_jax.uncertainty_reward))(jnp.array([0.5]))
    found = []
    for name, module in sorted(sys.modules.items()):
        if name == "zero_jax" or name.startswith("zero_jax."):
            for attr, value in vars(module).items():
                found += _jax_values(value, set(), f"{name}.{attr}")
    assert found == []


def test_zero_jax_imports_no_private_jax_module():
    for path in sorted((ROOT / "zero_jax").glob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            for n in names:
                assert "._src" not in n and not n.startswith("jaxlib"), (path.name, n)
        assert "jax._src" not in path.read_text(), path.name


def test_real_hyper_parameters_beyond_float32_with_x64_off():
    """A finite value that float32 cannot hold became inf inside the kernel and poisoned
    every output (eps is not even read with scale='none'): refused by name with x64
    off; with x64 on it is an ordinary value, as in the torch twin."""
    r = np.array([[1.0, 0.0, 0.5]])
    calls = (
        ("eps", lambda v: zero_jax.group_advantages(r, scale="none", eps=v), [[0.5, -0.5, 0.0]]),
        ("max_length", lambda v: zero_jax.overlong_penalty(np.array([0, 5]), v, 1.0), [0, 0]),
        ("strength", lambda v: zero_jax.challenger_rewards(
            np.array([0.5, 0.25]), np.array([3, 9]), np.array([True, False]), v), [0, 0]),
    )
    for name, call, want in calls:
        for value in (1e39, 10**39):
            with jax.enable_x64(False):
                with pytest.raises(ValueError, match=f"{name}=1e\\+39 is beyond the float32"):
                    call(value)
            with jax.enable_x64(True):
                np.testing.assert_array_equal(call(value), want)
    with jax.enable_x64(False):
        # float32's largest value, as it prints, is no overflow
        assert zero_jax.overlong_penalty(np.array([0, 5]), 3.4028235e38, 1.0).tolist() == [0, 0]


def test_checked_jit_lets_static_numpy_ints_through():
    """A static argument reaches the function as it is (jax.jit narrows only the
    traced ones): a NumPy int64 num_answers beyond int32 is valid there, with x64 off
    as with it; a traced one beyond int32 is still refused."""
    with jax.enable_x64(False):
        _static_numpy_ints()


def _static_numpy_ints() -> None:
    a = np.array([[1, 1, 2], [2, 2, 0]])
    want = zero_jax.consensus(a, 2**40)
    for step, call in (
        (jax.jit(zero_jax.consensus, static_argnums=1), lambda f: f(a, np.int64(2**40))),
        (jax.jit(zero_jax.consensus, static_argnames="num_answers"),
         lambda f: f(a, num_answers=np.int64(2**40))),
    ):
        for got, w in zip(call(zero_jax.checked(step)), want, strict=True):
            np.testing.assert_array_equal(np.asarray(got), np.asarray(w))
    traced = zero_jax.checked(jax.jit(lambda a, n: zero_jax.consensus(a, 5)[0] + n))
    with pytest.raises(ValueError, match=r"args\[1\] has values outside the int32 range"):
        traced(a, np.int64(2**40))


@pytest.mark.parametrize("x64", [False, True])
def test_any_python_real_is_a_hyper_parameter_in_both_twins(x64):
    from fractions import Fraction

    zero_torch = pytest.importorskip("zero_torch", reason="needs torch")
    torch = pytest.importorskip("torch", reason="needs torch")
    p, c, v = np.array([0.5, 0.25]), np.array([0, 1]), np.ones(2, bool)
    with jax.enable_x64(x64):
        got = zero_jax.challenger_rewards(p, c, v, Fraction(1, 2))
        band = jax.jit(lambda p: zero_jax.curriculum_mask(p, Fraction(1, 4), Fraction(3, 4)))
        mask = band(np.linspace(0, 1, 5))
    twin = zero_torch.challenger_rewards(
        torch.tensor(p), torch.tensor(c), torch.tensor(v), Fraction(1, 2)
    )
    np.testing.assert_allclose(np.asarray(got), twin.numpy(), rtol=1e-7)
    np.testing.assert_allclose(np.asarray(got), [0.75, 0.25], rtol=1e-7)
    np.testing.assert_array_equal(np.asarray(mask), [False, True, True, True, False])


def test_traced_hyper_parameters_match_python_floats():
    """Real hyper-parameters first seen inside a user's jit give the Python float's answer."""
    rng = np.random.default_rng(1)
    p, c = rng.integers(0, 7, size=12) / 6, rng.choice(np.array([-3, 4, 2**40]), size=12)
    v, answers = rng.random(12) < 0.7, rng.integers(0, 4, size=(12, 6))
    fmt = rng.random((12, 6)) < 0.5

    def calls(strength, low, high, alpha):
        return (
            zero_jax.challenger_rewards(p, c, v, strength),
            zero_jax.curriculum_mask(p, low, high),
            zero_jax.solver_rewards(answers, fmt, 4, alpha),
        )

    got = jax.jit(calls)(0.3, 0.25, 0.5, 0.6)
    for a, b in zip(got, calls(0.3, 0.25, 0.5, 0.6), strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-14, atol=1e-15)
