"""The invalid-data axis of the matrix: every function x every data rule of its
contract x x64 on / off x voting method x eager / jit / vmap.

Valid inputs from the matrix builders are broken in a few entries (some where the
rule's gate holds, some where it does not and nothing may change).  Then:

* the plain zero_jax path poisons exactly what the NumPy oracle (``cases``, written
  from the contract's rule) poisons: NaN / -1 rows, valid rows exact;
* ``zero_jax.checked`` around the same call (one of eager / jit / vmap per case, spread
  over the three; every placement of ``checked`` is tested below) raises ``ValueError``
  with the message zero_torch raises for the same data;
* a real hyper-parameter out of range raises eagerly in both twins when it is a
  Python value, and poisons (plain) or raises the torch message (checked) when it is
  traced.
"""

from __future__ import annotations

import dataclasses
import functools
import random
import zlib
from typing import Any

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import zero_jax
from zero_contracts import CONTRACTS, Contract

from . import cases
from .tester import (
    BUILDERS,
    as_tuple,
    call,
    compare,
    expected_jax_dtypes,
    expected_values,
    run_torch,
    tolerance_scale,
)

torch = pytest.importorskip("torch", reason="checked must raise the torch twin's message")
import zero_torch  # noqa: E402

B = 16
TRANSFORMS = ("eager", "jit", "vmap")


def rules(spec: Contract) -> list[tuple[str, str]]:
    """Every data rule of a contract: ``("arg", name)``, ``("hyper", name)``, ``("order", low)``."""
    out = [("arg", a.name) for a in spec.args if a.value is not None]
    out += [("hyper", h.name) for h in spec.hypers if h.kind == "real"]
    out += [("order", o.low) for o in spec.constraints]
    return out


def _methods(spec: Contract) -> tuple[str, ...]:
    return cases.METHODS if any(h.name == "method" for h in spec.hypers) else ("auto",)


CASES = [
    (name, kind, target, x64, method)
    for name, spec in CONTRACTS.items()
    for kind, target in rules(spec)
    for x64 in (True, False)
    for method in _methods(spec)
]


def _ids(case: tuple[Any, ...]) -> str:
    name, kind, target, x64, method = case
    return f"{name}-{kind}:{target}-x64={'on' if x64 else 'off'}-{method}"


# ------------------------------------------------------------------- breaking data


def _config(spec: Contract, kind: str, target: str, x64: bool, method: str, seed: int):
    rnd = random.Random(seed)
    signed = ("int8", "int16", "int32") + (("int64",) if x64 else ())
    id_dtype = rnd.choice(signed + ("uint8", "uint32"))
    if kind == "arg" and spec.arg(target).value == "nonneg":
        id_dtype = rnd.choice(signed)  # a negative length needs a signed dtype
    float_dtype = rnd.choice(cases.FLOAT_DTYPES if x64 else cases.FLOAT_DTYPES[:3])
    # "dense" ids give the bounded rules (num_answers = 3, num_clusters = 6)
    return cases.Config(x64=x64, batch=B, id_dtype=id_dtype, pattern="dense",
                        float_dtype=float_dtype, method=method, seed=seed)


def _bad_values(arg, x: np.ndarray, hypers: dict) -> list[Any]:
    if arg.value == "unit":
        return [1.5, -0.1, np.nan, np.inf]
    if arg.value == "finite":
        return [np.inf, -np.inf, np.nan]
    if arg.value == "nonneg":
        return [-1, -7]
    bound = hypers[arg.bound]
    info = np.iinfo(x.dtype)
    out = [v for v in (bound, bound + 3, int(info.max)) if bound <= v <= info.max]
    if info.min < 0:
        out += [-1, int(info.min)]
    return out


def break_inputs(spec: Contract, kind: str, target: str, arrays: dict, hypers: dict,
                 rng: np.random.Generator) -> tuple[dict, dict]:
    arrays, hypers = dict(arrays), dict(hypers)
    if kind == "hyper":
        h = spec.hyper(target)
        choices = [np.nan] + ([h.lo - 0.5] if h.lo is not None else [])
        choices += [h.hi + 0.5] if h.hi is not None else []
        hypers[target] = float(rng.choice(choices))
        return arrays, hypers
    if kind == "order":
        order = next(o for o in spec.constraints if o.low == target)
        hypers[order.low], hypers[order.high] = 0.8, 0.2
        return arrays, hypers
    arg = spec.arg(target)
    x = arrays[target].copy()
    values = _bad_values(arg, x, hypers)
    gate = np.asarray(arrays[arg.where]) if arg.where else np.ones(x.shape, bool)
    # a gate of fewer axes (mask [B, T] of logits [B, T, V]) covers the trailing ones
    gate = np.broadcast_to(gate.reshape(gate.shape + (1,) * (x.ndim - gate.ndim)), x.shape)
    gate = gate.ravel()
    flat = x.reshape(-1)
    on = np.flatnonzero(gate)
    off = np.flatnonzero(~gate)
    picks = list(rng.choice(on, size=min(len(on), 3), replace=False)) if len(on) else []
    picks += list(rng.choice(off, size=min(len(off), 2), replace=False)) if len(off) else []
    for i in picks:
        v = values[int(rng.integers(len(values)))]
        flat[i] = np.asarray(v).astype(np.float64).astype(x.dtype) if x.dtype.kind in "fV" \
            else np.asarray(v).astype(x.dtype)
    arrays[target] = flat.reshape(x.shape)
    return arrays, hypers


def inputs(name: str, kind: str, target: str, x64: bool, method: str) -> tuple[dict, dict]:
    """Valid inputs of a matrix builder with some entries broken (seeded by the case)."""
    spec = CONTRACTS[name]
    base = zlib.crc32(f"{name}-{kind}-{target}-{x64}-{method}".encode())
    for seed in range(base, base + 50):  # a draw whose broken argument has entries
        cfg = _config(spec, kind, target, x64, method, seed)
        rng = np.random.default_rng(seed)
        arrays, hypers = BUILDERS[name](rng, cfg)
        if kind == "arg":
            arg = spec.arg(target)
            gate = arrays[arg.where] if arg.where else np.ones(1, bool)
            if arrays.get(target) is None or arrays[target].size == 0 or not np.any(gate):
                continue
        if name == "group_advantages" and kind == "arg":
            hypers["scale"] = str(rng.choice(["group", "batch", "none"]))
        return break_inputs(spec, kind, target, arrays, hypers, rng)
    raise AssertionError(f"no usable draw for {name} {target}")


# ---------------------------------------------------------------------- running


def runner(spec: Contract, hypers: dict, transform: str, traced: set[str]):
    """The public call under ``transform`` as a function of the arrays (NumPy), which
    returns a thunk running it on them.  The hyper-parameters in ``traced`` are passed
    as arguments of the user's jitted / vmapped function (so they are traced); the
    others are its Python constants.  The jitted / vmapped function is built once, so
    arrays of the same shapes and dtypes reuse one compilation (plain and checked)."""
    names = [a.name for a in spec.args]
    hyper_names = sorted(traced)

    def fn(present, *xs):
        got = dict(zip(present + hyper_names, xs, strict=True))
        hs = {**hypers, **{h: got[h] for h in hyper_names}}
        return call(zero_jax, spec, {n: got.get(n) for n in names}, hs)

    transformed = {"jit": jax.jit, "vmap": jax.vmap}.get(transform)
    compiled: dict[tuple[str, ...], Any] = {}

    def on(arrays: dict):
        if transform == "eager":
            return lambda: call(zero_jax, spec, arrays, hypers)
        present = [n for n in names if arrays.get(n) is not None]
        if transform == "vmap":  # two stacked copies (the arrays stacked on the host)
            values = [jnp.asarray(np.stack([arrays[n]] * 2)) for n in present]
            values += [jnp.stack([jnp.asarray(hypers[h])] * 2) for h in hyper_names]
        else:
            values = [jnp.asarray(arrays[n]) for n in present]
            values += [jnp.asarray(hypers[h]) for h in hyper_names]
        key = tuple(present)
        if key not in compiled:
            compiled[key] = transformed(functools.partial(fn, present))
        f = compiled[key]
        return lambda: f(*values)

    return on


def _outputs(run, transform: str) -> list[np.ndarray]:
    """The outputs of a thunk as NumPy arrays; of a vmapped one, the first copy once
    the two copies are checked to agree exactly (poison included)."""
    got = [np.asarray(o) for o in as_tuple(run())]
    if transform == "vmap":
        for o in got:
            np.testing.assert_array_equal(o[0], o[1])
        got = [np.asarray(o[0]) for o in got]  # a 0-d output stays an array
    return got


def torch_message(name: str, arrays: dict, hypers: dict) -> str:
    with pytest.raises(ValueError) as err:
        run_torch(zero_torch, CONTRACTS[name], arrays, hypers)
    return str(err.value)


@pytest.mark.parametrize(("name", "kind", "target", "x64", "method"), CASES,
                         ids=[_ids(c) for c in CASES])
def test_invalid_data_poisons_the_plain_path_and_raises_under_checked(
    name, kind, target, x64, method
):
    """One broken draw, eager / jit / vmap in turn (the transforms share the draw, the
    torch message and the oracle)."""
    spec = CONTRACTS[name]
    arrays, hypers = inputs(name, kind, target, x64, method)
    message = torch_message(name, arrays, hypers)
    want = expected_values(spec, arrays, hypers)
    assert any(_poisoned(w) for w in want), "the broken entries must poison a row"
    traced = {target} if kind == "hyper" else set()
    if kind == "order":
        order = next(o for o in spec.constraints if o.low == target)
        traced = {order.low, order.high}
    checked_on = checked_transform(name, kind, target, x64, method, bool(traced))
    for transform in TRANSFORMS:
        where = f"zero_jax.{name}[{kind}:{target}, {transform}]"
        with jax.enable_x64(x64):
            if traced and transform == "eager":  # a Python value: both twins raise at once
                with pytest.raises(ValueError) as err:
                    call(zero_jax, spec, arrays, hypers)
                assert str(err.value) == message, where
                continue
            run = runner(spec, hypers, transform, traced)(arrays)
            got = _outputs(run, transform)
            dtypes = expected_jax_dtypes(spec, arrays, x64)
            if transform == checked_on:
                with pytest.raises(ValueError) as err:
                    jax.block_until_ready(zero_jax.checked(run)())
                assert str(err.value) == message, where
        for i, (g, w, dt) in enumerate(zip(got, want, dtypes, strict=True)):
            compare(g, w, dt, f"{where} output {i}", tolerance_scale(spec, arrays))


def checked_transform(name: str, kind: str, target: str, x64: bool, method: str,
                      traced: bool) -> str:
    """The transform whose call also runs under ``checked`` for this case: one per case,
    spread over eager / jit / vmap by the case's hash (a traced hyper-parameter is a
    Python value eagerly, where both twins raise at once).  ``checked`` in every
    placement is tested below; here each rule's message."""
    options = TRANSFORMS[1:] if traced else TRANSFORMS
    return options[zlib.crc32(f"{name}-{kind}-{target}-{x64}-{method}".encode()) % len(options)]


def test_checked_runs_every_transform_across_the_cases():
    seen = {checked_transform(*case, case[1] != "arg") for case in CASES}
    assert seen == set(TRANSFORMS)


def _poisoned(w: np.ndarray) -> bool:
    if w.dtype == object or w.dtype.kind in "iu":
        return bool(np.any(np.asarray(w.astype(object) == -1, bool))) or bool(
            w.dtype.kind == "u" and np.any(w == np.iinfo(w.dtype).max)
        )
    if w.dtype == bool:
        return True  # a bool output keeps no invalid entry (checked against the oracle)
    return bool(np.isnan(w.astype(np.float64)).any())


# ------------------------------------------------------- placements of checked


def test_checked_inside_a_jitted_step_reports_where_to_put_it():
    """Inside jax.jit the failed check stops the call with JAX's runtime error, whose
    text carries the torch message and says where to put ``checked`` instead."""
    p = jnp.array([0.5, 1.5])
    step = jax.jit(lambda p: zero_jax.checked(zero_jax.uncertainty_reward)(p) * 2)
    np.testing.assert_array_equal(step(jnp.array([0.5, 1.0])), [2.0, 0.0])
    hint = r"jax.jit, lax.scan, lax.cond.*put zero_jax.checked around the outermost"
    with pytest.raises(Exception, match=r"consistency must lie in \[0, 1\].*" + hint):
        jax.block_until_ready(step(p))


@pytest.mark.parametrize("placement", ["vmap_inside", "grad_inside", "nested", "checked_jit",
                                       "checked_vmap", "checked_scan", "scan_inside"])
def test_checked_in_every_placement_gives_plain_results_and_raises(placement):
    p_ok = jnp.array([[0.5, 0.75], [0.25, 1.0]])
    p_bad = p_ok.at[1, 1].set(1.5)
    ch = zero_jax.checked

    def reward(p):
        return zero_jax.challenger_rewards(p, jnp.array([0, 1]), p > 0, 0.5)

    runs = {
        "vmap_inside": lambda p: jax.vmap(ch(reward))(p),
        "grad_inside": lambda p: jax.grad(lambda q: ch(zero_jax.hint_delta)(
            -q, q, q > 0).sum())(p),
        "nested": ch(lambda p: jnp.stack([ch(reward)(p[0]), ch(ch(reward))(p[1])])),
        "checked_jit": ch(jax.jit(jax.vmap(reward))),
        "checked_vmap": ch(jax.vmap(reward)),
        "checked_scan": ch(lambda p: jax.lax.scan(lambda c, x: (c, reward(x)), 0.0, p)[1]),
        "scan_inside": lambda p: jax.lax.scan(lambda c, x: (c, ch(reward)(x)), 0.0, p)[1],
    }
    plain = {
        "grad_inside": lambda p: jax.grad(lambda q: zero_jax.hint_delta(-q, q, q > 0).sum())(p),
    }.get(placement, lambda p: jax.vmap(reward)(p))
    run = runs[placement]
    np.testing.assert_array_equal(run(p_ok), plain(p_ok))
    bad = p_bad if placement != "grad_inside" else p_ok.at[0, 0].set(jnp.inf)
    message = "consistency must lie in [0, 1]" if placement != "grad_inside" else (
        "base_logp must be finite where mask")
    with pytest.raises(Exception) as err:
        jax.block_until_ready(run(bad))
    assert message in str(err.value)
    if placement != "scan_inside":  # outside a staged trace: the ValueError itself
        assert err.type is ValueError and str(err.value) == message


def test_bfloat16_breaks_are_visible():
    """bfloat16 inputs poison like the others (their NaN survives the float32 compute)."""
    p = np.array([0.5, 2.0], ml_dtypes.bfloat16)
    out = np.asarray(zero_jax.uncertainty_reward(p)).astype(np.float32)
    assert out[0] == 1.0 and np.isnan(out[1])


def test_the_case_list_covers_every_rule_of_every_contract():
    seen = {(c[0], c[1], c[2]) for c in CASES}
    for name, spec in CONTRACTS.items():
        for kind, target in rules(spec):
            assert (name, kind, target) in seen
    assert dataclasses.is_dataclass(cases.Config)


# ------------------------------------------- non-finite at a masked position


def masked_args(spec: Contract) -> list[str]:
    """The float arguments whose entries a bool argument (``where``) can drop."""
    return [a.name for a in spec.args if a.where and a.kind in ("float", "real")]


VALUES = ("nan", "inf", "-inf")

MASKED_CASES = [
    (name, target, x64)
    for name, spec in CONTRACTS.items()
    for target in masked_args(spec)
    for x64 in (True, False)
]


def _dropped(spec: Contract, target: str, arrays: dict) -> np.ndarray:
    """Where ``target``'s entries are dropped by its gate (broadcast to its shape)."""
    x, gate = arrays[target], np.asarray(arrays[spec.arg(target).where])
    if gate.ndim < x.ndim:  # a [B, T] mask of [B, T, V] logits
        gate = gate.reshape(gate.shape + (1,) * (x.ndim - gate.ndim))
    return ~np.broadcast_to(gate, x.shape)


def masked_inputs(name: str, target: str, x64: bool) -> tuple[dict, dict, dict]:
    """Valid inputs with some dropped entries (clean), the same with every dropped
    entry of ``target`` non-finite (filled in by the caller), and the hypers."""
    spec = CONTRACTS[name]
    base = zlib.crc32(f"masked-{name}-{target}-{x64}".encode())
    for seed in range(base, base + 200):
        cfg = _config(spec, "arg", target, x64, "auto", seed)
        rng = np.random.default_rng(seed)
        arrays, hypers = BUILDERS[name](rng, cfg)
        x = arrays.get(target)
        gate = arrays.get(spec.arg(target).where)
        if x is None or gate is None or x.dtype.kind not in "fV" or x.size == 0:
            continue
        dropped = _dropped(spec, target, arrays)
        if dropped.any() and (~dropped).any():
            return arrays, hypers, {"dropped": dropped}
    raise AssertionError(f"no draw of {name} with dropped and kept {target} entries")


def _fill(arrays: dict, target: str, dropped: np.ndarray, value: str) -> dict:
    dirty = dict(arrays)
    x = arrays[target].copy()
    x[dropped] = np.asarray(float(value)).astype(np.float64).astype(x.dtype)
    dirty[target] = x
    return dirty


@pytest.mark.parametrize(("name", "target", "x64"), MASKED_CASES,
                         ids=[f"{c[0]}-{c[1]}-x64={'on' if c[2] else 'off'}"
                              for c in MASKED_CASES])
def test_a_non_finite_value_at_a_masked_position_never_matters(name, target, x64):
    """A mask is a promise: NaN, +inf or -inf at every position it drops changes no
    output (plain eager / jit / vmap, under ``checked``, in zero_torch), raises nothing,
    and leaves the gradient finite, equal to the clean one and exactly 0 there.

    Each value in turn against the clean draw's results, computed once per transform
    (one compilation serves the clean and the three dirty calls)."""
    spec = CONTRACTS[name]
    clean, hypers, info = masked_inputs(name, target, x64)
    dropped = info["dropped"]
    dirty = {value: _fill(clean, target, dropped, value) for value in VALUES}
    # the oracle keeps the promise too
    oracle = expected_values(spec, clean, hypers)
    for value, arrays in dirty.items():
        for w, c in zip(expected_values(spec, arrays, hypers), oracle, strict=True):
            np.testing.assert_array_equal(w, c, err_msg=f"oracle: {target}={value} masked")
    differentiable = target in spec.differentiable_in
    with jax.enable_x64(x64):
        for transform in TRANSFORMS:
            on = runner(spec, hypers, transform, set())
            want = [np.asarray(o) for o in as_tuple(on(clean)())]
            for value, arrays in dirty.items():
                run = on(arrays)
                got = [np.asarray(o) for o in as_tuple(run())]
                checked = [np.asarray(o) for o in as_tuple(zero_jax.checked(run)())]
                where = f"{name} ({transform}): {target}={value} masked"
                for g, c, w in zip(got, checked, want, strict=True):
                    np.testing.assert_array_equal(g, w, err_msg=where)
                    np.testing.assert_array_equal(c, w, err_msg=f"checked, {where}")
        if differentiable:
            grad = _jax_gradient(spec, clean, hypers, target)
            for value, arrays in dirty.items():
                _check_gradient(_jax_gradient(spec, arrays, hypers, target), grad, dropped,
                                f"{name} ({value} masked)", target)
    t_want = run_torch(zero_torch, spec, clean, hypers)
    t_grad = _torch_gradient(spec, clean, hypers, target) if differentiable else None
    for value, arrays in dirty.items():
        t_got = run_torch(zero_torch, spec, arrays, hypers)
        for g, w in zip(t_got, t_want, strict=True):
            np.testing.assert_array_equal(g, w, err_msg=f"zero_torch.{name}: {target}={value}")
        if t_grad is not None:
            _check_gradient(_torch_gradient(spec, arrays, hypers, target), t_grad, dropped,
                            f"zero_torch.{name} ({value} masked)", target)


def _jax_gradient(spec, arrays, hypers, target):
    def loss(x):
        return jnp.sum(call(zero_jax, spec, {**arrays, target: x}, hypers).astype(jnp.float32))

    return np.asarray(jax.grad(loss)(jnp.asarray(arrays[target]))).astype(np.float64)


def _torch_gradient(spec, arrays, hypers, target):
    from .tester import to_torch

    t = {k: (None if v is None else to_torch(v)) for k, v in arrays.items()}
    t[target] = t[target].clone().requires_grad_(True)
    call(zero_torch, spec, t, hypers).float().sum().backward()
    return t[target].grad.float().numpy().astype(np.float64)


def _check_gradient(g, want, dropped, who, target):
    """The gradient on dirty data: finite, 0 at the dropped entries, the clean one."""
    assert np.all(np.isfinite(g)), f"{who}: non-finite gradient of {target}"
    assert np.all(g[dropped] == 0), f"{who}: gradient at a masked {target}"
    np.testing.assert_array_equal(g, want, err_msg=f"{who}: gradient of {target}")


def test_every_masked_argument_is_on_the_masked_axis():
    seen = {(c[0], c[1]) for c in MASKED_CASES}
    assert ("hint_delta", "base_logp") in seen and ("hint_delta", "hinted_logp") in seen
    assert ("masked_mean", "values") in seen and ("self_certainty", "logits") in seen
    for name in ("group_advantages", "multi_reward_advantages", "informative_groups"):
        assert (name, "rewards") in seen
