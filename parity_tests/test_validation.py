"""Bad input raises the same exception type in both frameworks, naming the argument;
zero_jax's checked mode raises the data-dependent errors with the torch message;
torch inputs are never modified."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

import zero_jax

torch = pytest.importorskip("torch", reason="validation parity needs the torch twin")
import zero_torch  # noqa: E402

F = [0.5, 0.25, 1.0]
IDS = [[0, 1], [1, 1], [2, 0]]
B3 = [True, False, True]
BK = [[True, False], [True, True], [False, False]]


def args(t):
    """Good arguments for every function, built with the array constructor ``t``."""
    f, i1, b = t(F), t([3, 3, 9]), t(B3)
    return {
        "uncertainty_reward": (f,),
        "challenger_rewards": (f, i1, b),
        "consensus": (t(IDS), 3),
        "curriculum_mask": (f,),
        "pseudo_rewards": (t(IDS), t([0, 1, 2])),
        "hint_delta": (t([[-1.0, -2.0]] * 3), t([[-1.5, -2.0]] * 3), t(BK)),
        "proposer_rewards": (f, t([100, 250, 400]), t([0.1, 0.2, 0.3]), b),
        "coder_rewards": (b, f, f, t([False, False, True])),
        "solver_rewards": (t(IDS), t(BK), 3),
        "group_advantages": (t([[1.0, 2.0], [3.0, 3.0]]),),
    }


def jx(x):
    return jnp.asarray(x)


def tt(x):
    return torch.tensor(x)


# (function, argument index, bad value builder, keyword overrides, exception type)
BAD = [
    # wrong dtype kind -> TypeError
    ("uncertainty_reward", 0, lambda t: t([1, 0]), TypeError, "consistency"),
    ("challenger_rewards", 1, lambda t: t([1.0, 2.0, 3.0]), TypeError, "clusters"),
    ("challenger_rewards", 2, lambda t: t([1, 0, 1]), TypeError, "valid"),
    ("consensus", 0, lambda t: t([[0.0, 1.0]]), TypeError, "answers"),
    ("pseudo_rewards", 1, lambda t: t([0.0, 1.0, 1.0]), TypeError, "labels"),
    ("hint_delta", 2, lambda t: t([[1, 0]] * 3), TypeError, "mask"),
    ("hint_delta", 0, lambda t: t([[1, 0]] * 3), TypeError, "base_logp"),
    ("proposer_rewards", 1, lambda t: t([1.0, 2.0, 3.0]), TypeError, "hint_lengths"),
    ("coder_rewards", 0, lambda t: t([1, 0, 1]), TypeError, "executed"),
    ("solver_rewards", 1, lambda t: t([[1, 0]] * 3), TypeError, "format_valid"),
    ("group_advantages", 0, lambda t: t([[1, 2]]), TypeError, "rewards"),
    # shapes and empty batches -> ValueError
    ("uncertainty_reward", 0, lambda t: t([[0.5]]), ValueError, "consistency"),
    ("uncertainty_reward", 0, lambda t: t(np.zeros(0)), ValueError, "consistency"),
    ("challenger_rewards", 1, lambda t: t([1, 2]), ValueError, "clusters"),
    ("challenger_rewards", 2, lambda t: t([True]), ValueError, "valid"),
    ("consensus", 0, lambda t: t(np.zeros((0, 3), np.int64)), ValueError, "answers"),
    ("consensus", 0, lambda t: t(np.zeros((3, 0), np.int64)), ValueError, "answers"),
    ("consensus", 0, lambda t: t([0, 1]), ValueError, "answers"),
    ("pseudo_rewards", 1, lambda t: t([0, 1]), ValueError, "labels"),
    ("hint_delta", 1, lambda t: t([[-1.0]] * 3), ValueError, "hinted_logp"),
    ("hint_delta", 2, lambda t: t([[True, False]] * 2), ValueError, "mask"),
    ("proposer_rewards", 2, lambda t: t([0.1]), ValueError, "cluster_share"),
    ("coder_rewards", 3, lambda t: t([True]), ValueError, "syntax_error"),
    ("solver_rewards", 1, lambda t: t([[True]] * 3), ValueError, "format_valid"),
    ("solver_rewards", 0, lambda t: t(np.zeros((0, 2), np.int64)), ValueError, "answers"),
    ("group_advantages", 0, lambda t: t([1.0, 2.0]), ValueError, "rewards"),
]

# Static hyper-parameters: (function, keyword overrides, exception, name in message)
BAD_PARAMS = [
    ("challenger_rewards", {"strength": -0.1}, ValueError, "strength"),
    ("challenger_rewards", {"strength": float("nan")}, ValueError, "strength"),
    ("challenger_rewards", {"strength": "1"}, TypeError, "strength"),
    ("challenger_rewards", {"num_clusters": 0}, ValueError, "num_clusters"),
    ("curriculum_mask", {"low": 0.8, "high": 0.2}, ValueError, "low"),
    ("curriculum_mask", {"low": -0.1}, ValueError, "low"),
    ("curriculum_mask", {"high": 1.5}, ValueError, "high"),
    ("solver_rewards", {"alpha": 1.2}, ValueError, "alpha"),
    ("solver_rewards", {"alpha": -0.2}, ValueError, "alpha"),
    ("solver_rewards", {"method": "vote"}, ValueError, "method"),
    ("consensus", {"method": "bogus"}, ValueError, "method"),
    ("group_advantages", {"scale": "std"}, ValueError, "scale"),
    ("group_advantages", {"ddof": -1}, ValueError, "ddof"),
    ("group_advantages", {"eps": -1e-6}, ValueError, "eps"),
]

# Data-dependent values: torch raises eagerly, zero_jax under zero_jax.checked.
BAD_VALUES = [
    ("uncertainty_reward", 0, lambda t: t([0.5, 1.5]), "consistency must lie in [0, 1]"),
    ("uncertainty_reward", 0, lambda t: t([0.5, float("nan")]), "consistency must lie in [0, 1]"),
    ("challenger_rewards", 0, lambda t: t([0.5, -0.1, 0.2]), "consistency must lie in [0, 1]"),
    ("curriculum_mask", 0, lambda t: t([0.5, float("inf"), 0.2]), "consistency must lie in [0, 1]"),
    ("consensus", 0, lambda t: t([[0, 3]]), "answers must lie in [0, num_answers=3)"),
    ("consensus", 0, lambda t: t([[-1, 0]]), "answers must lie in [0, num_answers=3)"),
    (
        "solver_rewards",
        0,
        lambda t: t([[0, 1], [5, 1], [0, 0]]),
        "answers must lie in [0, num_answers=3)",
    ),
    ("hint_delta", 0, lambda t: t([[-1.0, float("inf")]] * 3),
     "base_logp must be finite where mask"),
    ("hint_delta", 1, lambda t: t([[-1.0, float("nan")]] * 3),
     "hinted_logp must be finite where mask"),
    (
        "proposer_rewards",
        0,
        lambda t: t([float("nan"), 0.0, 0.0]),
        "delta must be finite where valid",
    ),
    (
        "proposer_rewards",
        1,
        lambda t: t([-1, 3, 0]),
        "hint_lengths must be >= 0 where valid",
    ),
    ("proposer_rewards", 2, lambda t: t([0.1, 1.5, 0.0]), "cluster_share must lie in [0, 1]"),
    (
        "coder_rewards",
        1,
        lambda t: t([1.5, 0.2, 0.2]),
        "easy_accuracy must lie in [0, 1] where executed",
    ),
    (
        "coder_rewards",
        2,
        lambda t: t([0.5, 0.2, float("nan")]),
        "consistency must lie in [0, 1] where executed",
    ),
]


def call(name, backend, t, index=None, bad=None, **kw):
    a = list(args(t)[name])
    if index is not None:
        a[index] = bad(t)
    return getattr(backend, name)(*a, **kw)


@pytest.mark.parametrize("name,index,bad,exc,arg", BAD, ids=lambda v: str(v)[:20])
def test_bad_input_same_exception_in_both_frameworks(name, index, bad, exc, arg):
    with pytest.raises(exc, match=arg):
        call(name, zero_torch, tt, index, bad)
    with pytest.raises(exc, match=arg):
        call(name, zero_jax, jx, index, bad)


@pytest.mark.parametrize("name,kw,exc,arg", BAD_PARAMS, ids=lambda v: str(v)[:20])
def test_bad_hyper_parameters(name, kw, exc, arg):
    with pytest.raises(exc, match=arg):
        call(name, zero_torch, tt, **kw)
    with pytest.raises(exc, match=arg):
        call(name, zero_jax, jx, **kw)


def test_num_answers_must_be_a_positive_int():
    for backend, t in ((zero_torch, tt), (zero_jax, jx)):
        with pytest.raises(TypeError, match="num_answers"):
            backend.consensus(t(IDS), 3.0)
        with pytest.raises(ValueError, match="num_answers"):
            backend.solver_rewards(t(IDS), t(BK), 0)


@pytest.mark.parametrize("name", sorted(args(tt)))
def test_torch_refuses_meta_tensors_by_name(name):
    """A tensor on the ``meta`` device has no values to validate or compute on: a
    ValueError naming it, never an opaque error from inside torch."""
    a = list(args(tt)[name])
    a[0] = a[0].to("meta")
    with pytest.raises(ValueError, match=rf"^{zero_torch_arg(name)} is on the meta device"):
        getattr(zero_torch, name)(*a)
    if name == "challenger_rewards":  # a real hyper-parameter too
        with pytest.raises(ValueError, match="^strength is on the meta device"):
            zero_torch.challenger_rewards(*args(tt)[name], torch.tensor(1.0, device="meta"))


def zero_torch_arg(name):
    from zero_contracts import CONTRACTS

    return CONTRACTS[name].args[0].name


def test_integer_hypers_refuse_bools_and_arrays_of_one_element():
    """A bool (Python, NumPy, 0-d array or tensor) is no count, and a 1-element array is
    no scalar: refused in both twins, not read as 1 / 2 (torch tensors of one element
    have ``__index__``, NumPy arrays of one element do not)."""
    rewards = [[1.0, 0.0, 2.0]]
    for backend, t in ((zero_torch, torch.tensor), (zero_jax, jnp.asarray)):
        for bad in (True, np.bool_(True), t(True), t([2]), t([[2]])):
            with pytest.raises(TypeError, match="ddof must be a Python int"):
                backend.group_advantages(t(rewards), ddof=bad)
            with pytest.raises(TypeError, match="num_answers must be a Python int"):
                backend.consensus(t(IDS), bad)
        with pytest.raises(TypeError, match="strength must be a real scalar"):
            backend.challenger_rewards(t([0.5]), t([0]), t([True]), t(True))


@pytest.mark.parametrize("name,index,bad,message", BAD_VALUES, ids=lambda v: str(v)[:20])
def test_value_checks_torch_eager_and_jax_checked_same_message(name, index, bad, message):
    with pytest.raises(ValueError) as torch_err:
        call(name, zero_torch, tt, index, bad)
    assert str(torch_err.value) == message
    checked = zero_jax.checked(lambda *a: getattr(zero_jax, name)(*a))
    a = list(args(jx)[name])
    a[index] = bad(jx)
    with pytest.raises(ValueError) as jax_err:
        checked(*a)
    assert str(jax_err.value) == message
    # The plain path cannot raise on data: it poisons (NaN) the rows the bad value touches
    # (the values are checked in test_invalid_data.py).
    outs = getattr(zero_jax, name)(*a)
    outs = [np.asarray(o) for o in (outs if isinstance(outs, tuple) else (outs,))]
    poisoned = [np.isnan(o).any() if o.dtype.kind == "f" else (o == -1).any() for o in outs
                if o.dtype != bool]
    assert all(poisoned) or all(o.dtype == bool for o in outs), (name, outs)


def test_checked_mode_checks_traced_hyper_parameters_and_passes_good_input():
    p = jnp.asarray(F)
    with pytest.raises(ValueError, match="strength must be a finite number >= 0"):
        zero_jax.checked(lambda s: zero_jax.challenger_rewards(p, jnp.array([1, 1, 2]), p > 0, s))(
            jnp.asarray(-1.0)
        )
    for name, a in args(jx).items():
        np.testing.assert_array_equal(
            np.asarray(zero_jax.checked(getattr(zero_jax, name))(*a)[0]),
            np.asarray(getattr(zero_jax, name)(*a)[0]),
        )


def test_dense_cluster_ids_out_of_range():
    p, v = torch.tensor(F), torch.tensor(B3)
    with pytest.raises(ValueError, match="clusters must lie in"):
        zero_torch.challenger_rewards(p, torch.tensor([0, 1, 3]), v, num_clusters=3)
    with pytest.raises(ValueError, match="clusters must lie in"):
        zero_jax.checked(zero_jax.challenger_rewards)(
            jnp.asarray(F), jnp.array([0, 1, 3]), jnp.asarray(B3), num_clusters=3
        )


def test_torch_inputs_are_never_modified():
    for name, a in args(tt).items():
        before = [x.clone() if isinstance(x, torch.Tensor) else x for x in a]
        getattr(zero_torch, name)(*a)
        for x, y in zip(a, before, strict=True):
            if isinstance(x, torch.Tensor):
                assert torch.equal(x, y), name
    # Also for the float16 path and non-contiguous views.
    big = torch.arange(12).reshape(3, 4) % 3
    view = big[:, ::2]
    snapshot = big.clone()
    zero_torch.consensus(view, 3)
    zero_torch.solver_rewards(view, view > 0, 3)
    assert torch.equal(big, snapshot)


def test_torch_outputs_stay_on_the_input_device():
    for name, a in args(tt).items():
        out = getattr(zero_torch, name)(*a)
        outs = out if isinstance(out, tuple) else (out,)
        assert all(o.device == a[0].device for o in outs), name


@pytest.mark.parametrize("name,index,bad,exc,arg", BAD, ids=lambda v: str(v)[:20])
def test_jax_checks_bad_arrays_on_every_call_eager_and_in_jit(name, index, bad, exc, arg):
    """JAX arrays are checked when the kernel traces: a failed check caches nothing, so
    the same bad call raises again, after a good call and inside a user's jit."""
    import jax

    f = getattr(zero_jax, name)
    call(name, zero_jax, jx)  # a good signature traced first
    a = list(args(jx)[name])
    a[index] = bad(jx)
    for _ in range(2):
        with pytest.raises(exc, match=arg):
            f(*a)
    slots = [i for i, x in enumerate(a) if isinstance(x, jax.Array)]

    def step(*xs):
        b = list(a)
        for i, x in zip(slots, xs, strict=True):
            b[i] = x
        return f(*b)

    with pytest.raises(exc, match=arg):
        jax.jit(step)(*[a[i] for i in slots])


def test_jax_validates_once_per_signature(monkeypatch):
    """Kinds and shapes are checked when the kernel traces: a repeated call (on JAX or
    NumPy input) runs no validation; only a new signature (dtype or shape) is checked."""
    from zero_jax import _checks

    seen = []
    real = _checks._check_arrays
    monkeypatch.setattr(_checks, "_check_arrays", lambda c, v: seen.append(c.name) or real(c, v))
    p = jnp.asarray([0.25, 0.5, 0.75], jnp.float32)
    want = zero_jax.uncertainty_reward(p)
    seen.clear()
    for _ in range(3):
        np.testing.assert_array_equal(zero_jax.uncertainty_reward(p), want)
        np.testing.assert_array_equal(zero_jax.uncertainty_reward(np.asarray(p)), want)
    assert seen == []
    fresh = jnp.full((41,), 0.5, jnp.float32)  # a shape no other test traces
    zero_jax.uncertainty_reward(fresh)
    assert seen == ["uncertainty_reward"]
    seen.clear()
    zero_jax.uncertainty_reward(fresh)
    zero_jax.uncertainty_reward(np.asarray(fresh))
    assert seen == []


# ------------------------------------------- messages naming the axis (issue 35)

AXIS_CASES = [
    # (function, positional arguments from an array constructor, exact message)
    ("multi_reward_advantages",
     lambda t: (t(np.zeros((1, 4, 2))), t(np.ones(3))),
     "weights [R] must have R = 2 like rewards [G, N, R] (shape (1, 4, 2)), got shape (3,)"),
    ("self_certainty",
     lambda t: (t(np.zeros((2, 3, 5))), t(np.ones((2, 4), bool))),
     "mask [B, T] must have T = 3 like logits [B, T, V] (shape (2, 3, 5)), got shape (2, 4)"),
    ("self_certainty",
     lambda t: (t(np.zeros((2, 3, 5))), t(np.ones((1, 3), bool))),
     "mask [B, T] must have B = 2 like logits [B, T, V] (shape (2, 3, 5)), got shape (1, 3)"),
    ("vote_metrics",
     lambda t: (t(np.zeros((2, 3), np.int32)), t(np.zeros(4, np.int32)), 3),
     "truth [B] must have B = 2 like answers [B, K] (shape (2, 3)), got shape (4,)"),
]


@pytest.mark.parametrize(("name", "build", "message"), AXIS_CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(AXIS_CASES)])
def test_shape_messages_name_the_axis(name, build, message):
    """Both twins, eagerly and inside a user's jit, name the axis that disagrees (they
    said "batch size" for the R and T axes)."""
    import jax

    with pytest.raises(ValueError) as err:
        getattr(zero_torch, name)(*build(torch.tensor))
    assert str(err.value) == message
    for x64 in (False, True):
        with jax.enable_x64(x64):
            with pytest.raises(ValueError) as err:
                getattr(zero_jax, name)(*build(np.asarray))
            assert str(err.value) == message
            arrays = [a for a in build(jnp.asarray) if not isinstance(a, int)]
            rest = [a for a in build(jnp.asarray) if isinstance(a, int)]
            with pytest.raises(ValueError) as err:
                jax.jit(lambda *xs, rest=rest: getattr(zero_jax, name)(*xs, *rest))(*arrays)
            assert str(err.value) == message


@pytest.mark.parametrize(("name", "build", "arg", "kind"), [
    ("overlong_penalty", lambda v: (v, 10.0, 2.0), "lengths", "values"),
    ("proposer_rewards", lambda v: (np.zeros(2), v, np.zeros(2), np.ones(2, bool)),
     "hint_lengths", "values"),
    ("masked_mean", lambda v: (v, np.ones(2, bool)), "values", "values"),
    ("cluster_sizes", lambda v: (v,), "ids", "ids"),
    ("pseudo_rewards", lambda v: (v[None], v), "answers", "ids"),
])
def test_wide_int64_values_get_the_message_of_their_kind(name, build, arg, kind):
    """With x64 off, int64 lengths or values beyond int32 get a message about values
    (they would wrap around), not the ids one ("distinct ids would merge")."""
    import jax

    v = np.array([2**40, 3], np.int64)
    with jax.enable_x64(False):
        with pytest.raises(ValueError) as err:
            getattr(zero_jax, name)(*build(v))
    text = str(err.value)
    assert text.startswith(f"{arg} has values outside the int32 range")
    if kind == "values":
        assert "wrap around" in text and "ids" not in text
    else:
        assert "distinct ids would merge" in text
