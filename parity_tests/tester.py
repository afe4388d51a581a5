"""RewardTester: one battery that every public function of the contract table runs.

For a function name and a configuration (x64 on / off, batch size, integer id
dtype and pattern, float dtype, voting method, transform) it builds valid inputs
(``cases.BUILDERS``), computes the expected output with the NumPy oracle
(``cases``), runs zero_jax (eager on NumPy input, ``jit``, ``vmap`` over a
stack of two batches) and zero_torch, and checks dtypes (from the contract's
output rule) and values: exact for bool / integer outputs, within a few units in
the last place of the output dtype for floats.  Where the documented limits say
an input cannot be represented (64-bit ids with x64 off, labels wider than the
returned integer type) it checks for the ``ValueError`` instead.

Every list of functions is derived from ``zero_contracts.CONTRACTS``; a contract
without a builder fails ``test_matrix.py``.
"""

from __future__ import annotations

import itertools
import math
import random
from typing import Any

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np

from zero_contracts import CONTRACTS, MAX_TABLE, Contract

from . import cases as oracle
from .cases import (
    BATCHES,
    BUILDERS,
    EXTRA_BATCHES,
    FLOAT_DTYPES,
    ID_DTYPES,
    METHODS,
    PATTERNS,
    TRANSFORMS,
    Config,
    Inputs,
    np_dtype,
)


#: Which axes of the matrix matter for each function (others are left at defaults).
def axes(contract: Contract) -> dict[str, tuple[Any, ...]]:
    kinds = {a.kind for a in contract.args}
    out: dict[str, tuple[Any, ...]] = {
        "x64": (True, False),
        "batch": BATCHES + EXTRA_BATCHES.get(contract.name, ()),
        "transform": TRANSFORMS,
    }
    if "float" in kinds or "real" in kinds:
        out["float_dtype"] = FLOAT_DTYPES
    if "int" in kinds or contract.name == "masked_mean":
        out["id_dtype"] = ID_DTYPES
        out["pattern"] = PATTERNS
    if any(h.name == "method" for h in contract.hypers):
        out["method"] = METHODS
    return out


def configs(name: str, thorough: bool = False) -> list[Config]:
    """The configurations to run for ``name``.

    The fast (CI) selection is a seeded covering design: as many configurations as
    the longest axis has values (at least 6), in which every value of every axis
    appears at least once, every (x64, transform) pair appears, and the other values
    are shuffled independently, so that each run pairs them differently from the
    next function's.  ``thorough`` runs the whole product of the axes.
    """
    ax = axes(CONTRACTS[name])
    keys = list(ax)
    if thorough:
        combos = itertools.product(*(ax[k] for k in keys))
        return [Config(**dict(zip(keys, c, strict=True)), seed=i) for i, c in enumerate(combos)]
    rnd = random.Random(f"matrix-{name}")
    pairs = list(itertools.product(ax["x64"], ax["transform"]))
    n = max(len(pairs), *(len(v) for v in ax.values()))
    columns: dict[str, list[Any]] = {}
    for key in keys:
        # every value once, then seeded draws (the largest batch, slow to check, once)
        fill = [v for v in ax[key] if key != "batch" or v < 65537]
        column = list(ax[key]) + [rnd.choice(fill) for _ in range(n - len(ax[key]))]
        rnd.shuffle(column)
        columns[key] = column
    rnd.shuffle(pairs)
    pairs += [rnd.choice(pairs) for _ in range(n - len(pairs))]
    columns["x64"] = [p[0] for p in pairs]
    columns["transform"] = [p[1] for p in pairs]
    return [Config(**{k: columns[k][i] for k in keys}, seed=i) for i in range(n)]


# ---------------------------------------------------------------------- expectations


def _canonical(dt: np.dtype, x64: bool) -> np.dtype:
    if x64:
        return np.dtype(dt)
    return np.dtype(jax.dtypes.canonicalize_dtype(dt))


def expected_jax_dtypes(contract: Contract, arrays: dict, x64: bool) -> tuple[np.dtype, ...]:
    rule = contract.output
    fl = np.dtype(np.float64 if x64 else np.float32)
    it = np.dtype(np.int64 if x64 else np.int32)
    if rule.startswith("same:"):
        return (_canonical(arrays[rule[5:]].dtype, x64),)
    if rule.startswith("mean:"):  # float values keep their dtype, integers give the float
        dt = _canonical(arrays[rule[5:]].dtype, x64)
        return (dt if jnp.issubdtype(dt, jnp.floating) else fl,)
    if rule.startswith("promote:"):
        a, b = rule[8:].split(",")
        return (np.dtype(jnp.result_type(_canonical(arrays[a].dtype, x64),
                                         _canonical(arrays[b].dtype, x64))),)
    if rule == "vote":
        return (_canonical(arrays["answers"].dtype, x64), np.dtype(np.int32))
    if rule.startswith("carry:"):  # (the promoted dtype, the carried argument's dtype)
        a, b = rule[6:].split(",")
        da, db = _canonical(arrays[a].dtype, x64), _canonical(arrays[b].dtype, x64)
        return (np.dtype(jnp.result_type(da, db)), db)
    return {
        "float": (fl,),
        "labels": (it, fl),
        "bool": (np.dtype(bool),),
        "count": (np.dtype(np.int32),),
        "metrics": (fl,) * 4,  # the four scalars of VoteMetrics
    }[rule]


def expected_torch_dtypes(contract: Contract, arrays: dict) -> tuple[np.dtype, ...]:
    import torch

    rule = contract.output
    if rule.startswith("same:"):
        return (np.dtype(arrays[rule[5:]].dtype),)
    if rule.startswith("mean:"):
        dt = np.dtype(arrays[rule[5:]].dtype)
        return (dt if jnp.issubdtype(dt, jnp.floating) else np.dtype(np.float64),)
    if rule.startswith("promote:"):
        a, b = rule[8:].split(",")
        ta, tb = (to_torch(arrays[x][:1]).dtype for x in (a, b))
        return (torch_to_np(torch.promote_types(ta, tb)),)
    if rule == "vote":
        return (np.dtype(arrays["answers"].dtype), np.dtype(np.int64))
    if rule.startswith("carry:"):
        a, b = rule[6:].split(",")
        ta, tb = (to_torch(arrays[x][:1]).dtype for x in (a, b))
        return (torch_to_np(torch.promote_types(ta, tb)), np.dtype(arrays[b].dtype))
    return {
        "float": (np.dtype(np.float64),),
        "labels": (np.dtype(np.int64), np.dtype(np.float64)),
        "bool": (np.dtype(bool),),
        "count": (np.dtype(np.int64),),
        "metrics": (np.dtype(np.float64),) * 4,
    }[rule]


def shared_error(contract: Contract, arrays: dict, hypers: dict) -> str | None:
    """The ValueError both twins must raise for this input (a documented limit), or None."""
    method = hypers.get("method")
    if method in ("one_hot", "segment_sum"):
        a = arrays["answers"]
        alphabet = min(hypers["num_answers"], int(np.iinfo(a.dtype).max) + 1)
        if a.shape[0] * alphabet > MAX_TABLE:
            return "counts into a \\[B, num_answers\\] table"
    return None


def jax_error(contract: Contract, arrays: dict, hypers: dict, x64: bool) -> str | None:
    """The ValueError message zero_jax must raise for this input, or None."""
    shared = shared_error(contract, arrays, hypers)
    if shared is not None:
        return shared
    if not x64:
        for arg in contract.args:
            x = arrays.get(arg.name)
            if x is None or x.dtype.kind not in "iu" or x.dtype.itemsize != 8 or not x.size:
                continue
            narrow = np.iinfo(np.int32 if x.dtype.kind == "i" else np.uint32)
            if x.min() < narrow.min or x.max() > narrow.max:
                return f"{arg.name} has values outside the"
    return None


# ---------------------------------------------------------------------- framework I/O


def to_torch(x: np.ndarray):
    import torch

    if x.dtype == np_dtype("bfloat16"):
        return torch.from_numpy(x.astype(np.float32)).to(torch.bfloat16)
    return torch.from_numpy(np.ascontiguousarray(x).reshape(x.shape))  # 0-d stays 0-d


def torch_to_np(dtype) -> np.dtype:
    import torch

    if dtype == torch.bfloat16:
        return np_dtype("bfloat16")
    return np.dtype(torch.empty((), dtype=dtype).numpy().dtype)


def from_torch(t) -> np.ndarray:
    import torch

    if t.dtype == torch.bfloat16:
        return t.to(torch.float32).numpy().astype(np_dtype("bfloat16"))
    return t.numpy()


def as_tuple(x) -> tuple:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def call(module, contract: Contract, arrays: dict, hypers: dict):
    fn = getattr(module, contract.name)
    positional = [arrays[a.name] for a in contract.args]
    keyword = {}
    for h in contract.hypers:
        if h.name in hypers:
            keyword[h.name] = hypers[h.name]
    return fn(*positional, **keyword)


def run_jax(zero_jax, contract: Contract, arrays: dict, hypers: dict, transform: str):
    names = [a.name for a in contract.args]
    if transform == "eager":  # NumPy input through the boundary conversion
        return [np.asarray(o) for o in as_tuple(call(zero_jax, contract, arrays, hypers))]
    device = {k: (None if v is None else jnp.asarray(v)) for k, v in arrays.items()}
    present = [n for n in names if device.get(n) is not None]

    def fn(*xs):
        got = dict(zip(present, xs, strict=True))
        return call(zero_jax, contract, {n: got.get(n) for n in names}, hypers)

    if transform == "jit":
        return [np.asarray(o) for o in as_tuple(jax.jit(fn)(*(device[n] for n in present)))]
    if transform.startswith("sharded"):  # 8 host devices
        from jax.sharding import AxisType

        mode = transform.removeprefix("sharded_")
        kind = AxisType.Auto if mode == "auto" else AxisType.Explicit
        mesh = jax.make_mesh((len(jax.devices()),), ("batch",), axis_types=(kind,))
        where = placements(contract, arrays, mode, mesh)
        xs = [jax.device_put(device[n], where[n]) for n in present]
        with jax.set_mesh(mesh):
            outs = as_tuple(jax.jit(fn)(*xs))
        return [np.asarray(o) for o in outs]
    stacked = [jnp.stack([device[n], device[n]]) for n in present]
    outs = as_tuple(jax.vmap(fn)(*stacked))
    result = []
    for o in outs:
        o = np.asarray(o)
        np.testing.assert_array_equal(o[0], o[1])  # the two copies agree exactly
        result.append(np.asarray(o[0]))  # a 0-d output stays an array
    return result


def placements(contract: Contract, arrays: dict, mode: str, mesh: Any) -> dict[str, Any]:
    """The ``NamedSharding`` of each present argument on a 1-axis ``mesh`` ("batch").

    ``auto`` / ``explicit``: every argument's batch axis sharded (an argument without
    one, weights [R], replicated); ``explicit_even`` / ``_odd``: only the even / odd
    arguments' (the others as the host gave them, so one call mixes shardings);
    ``explicit_last``: the last axis of every argument of rank >= 2 that divides
    evenly (a row's samples, a group's members, a token's vocabulary split over the
    devices)."""
    from jax.sharding import NamedSharding, PartitionSpec

    names = [a.name for a in contract.args]
    ndev = mesh.devices.size
    batch = contract.args[0].shape[0] if contract.args[0].shape else None
    out = {}
    for n in names:
        if arrays.get(n) is None:
            continue
        x, shape = np.asarray(arrays[n]), contract.arg(n).shape
        if mode == "explicit_last":
            last = x.ndim >= 2 and x.shape[-1] % ndev == 0
            spec = PartitionSpec(*((None,) * (x.ndim - 1) + ("batch",) if last else ()))
        else:
            on_batch = shape is None or (len(shape) > 0 and shape[0] == batch)
            if mode in ("explicit_even", "explicit_odd"):
                on_batch = on_batch and names.index(n) % 2 == (mode == "explicit_odd")
            spec = PartitionSpec("batch") if on_batch else PartitionSpec()
        out[n] = NamedSharding(mesh, spec)
    return out


def run_torch(zero_torch, contract: Contract, arrays: dict, hypers: dict):
    t = {k: (None if v is None else to_torch(v)) for k, v in arrays.items()}
    return [from_torch(o) for o in as_tuple(call(zero_torch, contract, t, hypers))]


def expected_values(contract: Contract, arrays: dict, hypers: dict,
                    twin: str = "jax") -> list[np.ndarray]:
    fn = getattr(oracle, contract.name)
    draws = oracle.DRAWS.get(contract.name)  # a random function: given the twin's draws
    extra = {} if draws is None else {"uniforms": draws(twin, arrays)}
    return [np.asarray(o) for o in as_tuple(fn(**arrays, **hypers, **extra))]


def ulps(dt: np.dtype) -> float:
    return float(ml_dtypes.finfo(dt).eps)


def compare(got: np.ndarray, want: np.ndarray, dtype: np.dtype, where: str, scale=None) -> None:
    """Exact for integers and bools; a few ulps of ``dtype`` (relative) for floats."""
    assert got.dtype == dtype, f"{where}: dtype {got.dtype}, expected {dtype}"
    if dtype.kind in "biu":
        if want.dtype == object or want.dtype.kind in "iu":
            g = got.astype(object) if got.dtype.kind in "iu" else got
            bad = [i for i, (x, y) in enumerate(zip(g.ravel().tolist(), want.ravel().tolist(),
                                                    strict=True)) if x != y]
            assert not bad, f"{where}: {len(bad)} wrong, first at {bad[0]}: {g.ravel()[bad[0]]} "\
                f"!= {want.ravel()[bad[0]]}"
        else:
            np.testing.assert_array_equal(got, want, err_msg=where)
        return
    g = got.astype(np.float64)
    w = want.astype(np.float64)
    # the oracle rounded once to dtype is the exact answer; allow a few ulps for the
    # library's float32 intermediates
    wr = w.astype(dtype).astype(np.float64)
    both_nan = np.isnan(g) & np.isnan(wr)
    mag = np.maximum(np.abs(wr), 1.0 if scale is None else scale)
    tol = 4 * ulps(dtype) * mag
    with np.errstate(invalid="ignore"):
        ok = both_nan | (g == wr) | (np.abs(g - wr) <= tol)
    if not ok.all():
        i = int(np.flatnonzero(~ok.ravel())[0])
        raise AssertionError(
            f"{where}: {int((~ok).sum())} values off, first at {i}: got {g.ravel()[i]!r}, "
            f"expected {wr.ravel()[i]!r} (oracle {w.ravel()[i]!r})"
        )


def _spread_scale(r: np.ndarray, m: np.ndarray, hypers: dict, top=None) -> np.ndarray:
    """Per group ``[G, 1]``: max |r| (or ``top``) over what divides ``r - b`` (the
    group's or the batch's std + eps, or 1 unscaled), times 2 for the leave-one-out
    factor n / (n - 1).  The rounding of ``r - b`` in the dtype is relative to |r|, then
    divided: float32 rewards 0.84 and 0.75 with ddof 0 lose 12 ulps in any float32
    computation of their advantages."""
    r = np.where(m, r, 0.0)
    if top is None:
        top = np.abs(r).max(-1, keepdims=True)
    how, ddof, eps = hypers.get("scale", "group"), hypers.get("ddof", 1), hypers.get("eps", 1e-6)
    if how == "none":
        return 2 * top
    axis = -1 if how == "group" else (-2, -1)
    n = m.sum(axis, keepdims=True)
    mean = r.sum(axis, keepdims=True) / np.maximum(n, 1)
    sq = np.where(m, (r - mean) ** 2, 0.0).sum(axis, keepdims=True)
    den = np.sqrt(sq / np.maximum(n - ddof, 1)) + float(eps)
    return 2 * top / np.where(den > 0, den, 1.0)  # a zero spread gives exact zeros


def _advantage_scale(contract: Contract, arrays: dict, hypers: dict) -> np.ndarray | float | None:
    r = arrays["rewards"].astype(np.float64)
    mask = arrays.get("mask")
    m = np.ones(r.shape, bool) if mask is None else np.asarray(mask)
    if not np.isfinite(np.where(m, r, 0.0)).all():
        return None  # invalid data: the poisoned rows are NaN, the others as they are
    if contract.name == "group_advantages":
        return _spread_scale(r, m, hypers)
    w = np.ones(r.shape[-1]) if arrays.get("weights") is None else arrays["weights"].astype(
        np.float64)
    kept = m.any(-1)
    terms = np.where(m, r, 0.0) * w
    if hypers.get("aggregation", "sum_then_normalize") == "sum_then_normalize":
        top = np.abs(terms).sum(-1).max(-1, keepdims=True)  # the rounding of the sums
        return _spread_scale(terms.sum(-1), kept, hypers, top)
    per_reward = [_spread_scale(r[..., k], m[..., k], hypers) for k in range(r.shape[-1])]
    carried = sum(abs(float(wk)) * c for wk, c in zip(w, per_reward, strict=True))
    options = {k: v for k, v in hypers.items() if k != "aggregation"}
    sums = (np.stack([oracle.group_advantages(r[..., k], m[..., k], **options)
                      for k in range(r.shape[-1])], -1) * w).sum(-1)
    top = float(np.max(np.where(kept, carried + np.abs(sums), 0.0), initial=1.0))
    batch = {**hypers, "scale": "group"}  # one group: the whole batch
    return float(_spread_scale(sums.reshape(1, -1), kept.reshape(1, -1), batch, top).item())


def _role_baseline_scale(arrays: dict, hypers: dict) -> float:
    """Moving baselines: the largest reward or baseline, times the depth of JAX's
    associative scan (each level rounds once; the twins compose the updates in a tree,
    the oracle in sequence), times ``1 / (1 - decay)`` (a decay rounded to float32,
    0.999 off by 6e-8, moves a baseline that averages ~1 / (1 - decay) rewards by
    that many times its rounding)."""
    r = arrays["rewards"].astype(np.float64)
    b = arrays["baselines"].astype(np.float64)
    mask = arrays.get("mask")
    kept = np.ones(r.shape, bool) if mask is None else np.asarray(mask)
    values = np.concatenate([np.where(kept & np.isfinite(r), np.abs(r), 0.0),
                             np.where(np.isfinite(b), np.abs(b), 0.0)])
    top = max(1.0, float(values.max(initial=0.0)))
    decay = float(hypers.get("decay", 0.95))
    memory = 1.0 if decay in (0.0, 1.0) else min(r.shape[0], 1 / (1 - decay))
    return top * (8 + 2 * math.log2(r.shape[0] + 1) + memory)


def tolerance_scale(contract: Contract, arrays: dict, hypers: dict | None = None):
    """Magnitude that float errors scale with (the inputs of a difference or mean): a
    float, a per-group array, or None (the output's own magnitude)."""
    if contract.name in ("hint_delta",):
        kept = np.asarray(arrays["mask"])  # a masked log-prob may be anything
        m = max((float(np.max(np.abs(arrays[k].astype(np.float64)[kept & np.isfinite(
            arrays[k].astype(np.float64))]), initial=0)) for k in ("base_logp", "hinted_logp")),
            default=1.0)
        return max(1.0, m)
    if contract.name == "proposer_rewards":
        d = arrays["delta"].astype(np.float64)
        return max(1.0, float(np.nanmax(np.abs(d), initial=0)))
    if contract.name in ("group_advantages", "multi_reward_advantages") and hypers is not None:
        return _advantage_scale(contract, arrays, hypers)
    if contract.name == "role_baseline_advantages" and hypers is not None:
        return _role_baseline_scale(arrays, hypers)
    if contract.name in ("self_certainty", "token_entropy"):
        # per row: the largest kept logit's magnitude (logsumexp - mean of logits with a
        # common offset of 200 loses the offset's last digits unless computed shifted,
        # which a kernel reading the logits once cannot do)
        logits = np.abs(arrays["logits"].astype(np.float64))
        kept = np.where(np.asarray(arrays["mask"])[..., None] & np.isfinite(logits), logits, 0)
        return np.maximum(kept.max((-2, -1), initial=0.0), 1.0)
    return None


class RewardTester:
    """Runs one function through one configuration of the matrix."""

    def __init__(self, name: str):
        self.contract = CONTRACTS[name]
        self.build = BUILDERS[name]

    def inputs(self, cfg: Config) -> Inputs:
        rng = np.random.default_rng([cfg.seed, cfg.batch, len(self.contract.name)])
        return self.build(rng, cfg)

    def check_jax(self, cfg: Config) -> None:
        import pytest

        import zero_jax

        arrays, hypers = self.inputs(cfg)
        where = f"zero_jax.{self.contract.name}[{cfg.label()}]"
        with jax.enable_x64(cfg.x64):
            error = jax_error(self.contract, arrays, hypers, cfg.x64)
            if error is not None:
                if cfg.transform != "eager" and "outside the" in error:
                    return  # the values are not visible once they are JAX arrays
                with pytest.raises(ValueError, match=error):
                    if cfg.transform == "eager":
                        call(zero_jax, self.contract, arrays, hypers)
                    else:
                        run_jax(zero_jax, self.contract, arrays, hypers, cfg.transform)
                return
            got = run_jax(zero_jax, self.contract, arrays, hypers, cfg.transform)
            dtypes = expected_jax_dtypes(self.contract, arrays, cfg.x64)
        want = expected_values(self.contract, arrays, hypers)
        scale = tolerance_scale(self.contract, arrays, hypers)
        for i, (g, w, dt) in enumerate(zip(got, want, dtypes, strict=True)):
            compare(g, w, dt, f"{where} output {i}", scale)

    def check_torch(self, cfg: Config) -> None:
        import pytest

        import zero_torch

        arrays, hypers = self.inputs(cfg)
        where = f"zero_torch.{self.contract.name}[{cfg.label()}]"
        error = shared_error(self.contract, arrays, hypers)
        if error is not None:
            with pytest.raises(ValueError, match=error):
                run_torch(zero_torch, self.contract, arrays, hypers)
            return
        got = run_torch(zero_torch, self.contract, arrays, hypers)
        dtypes = expected_torch_dtypes(self.contract, arrays)
        want = expected_values(self.contract, arrays, hypers, twin="torch")
        scale = tolerance_scale(self.contract, arrays, hypers)
        for i, (g, w, dt) in enumerate(zip(got, want, dtypes, strict=True)):
            compare(g, w, dt, f"{where} output {i}", scale)
