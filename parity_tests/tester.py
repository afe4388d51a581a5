"""RewardTester: one battery that every public function of the contract table runs.

For a function name and a configuration (x64 on / off, batch size, integer id
dtype and pattern, float dtype, voting method, transform) it builds valid inputs
(``BUILDERS``), computes the expected output with the NumPy oracle
(``matrix_oracle``), runs zero_jax (eager on NumPy input, ``jit``, ``vmap`` over a
stack of two batches) and zero_torch, and checks dtypes (from the contract's
output rule) and values: exact for bool / integer outputs, within a few units in
the last place of the output dtype for floats.  Where the documented limits say
an input cannot be represented (64-bit ids with x64 off, labels wider than the
returned integer type) it checks for the ``ValueError`` instead.

Every list of functions is derived from ``zero_contracts.CONTRACTS``; a contract
without a builder fails ``test_matrix.py``.
"""

from __future__ import annotations

import dataclasses
import itertools
import random
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np

from zero_contracts import CONTRACTS, MAX_TABLE, SCALES, SINGLETONS, Contract

from . import matrix_oracle as oracle

ID_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
FLOAT_DTYPES = ("float16", "bfloat16", "float32", "float64")
BATCHES = (1, 128, 129, 4096, 65537)
#: Internal thresholds of single functions: group_advantages switches to its
#: column kernel at 2**18 groups of at most 16 samples.
EXTRA_BATCHES = {"group_advantages": (2**18 - 1, 2**18)}
PATTERNS = ("near_limits", "negative", "sparse", "all_equal", "all_distinct", "dense")
METHODS = ("auto", "one_hot", "segment_sum", "pairwise")
TRANSFORMS = ("eager", "jit", "vmap")


def np_dtype(name: str) -> np.dtype:
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


@dataclasses.dataclass(frozen=True)
class Config:
    x64: bool = True
    batch: int = 129
    id_dtype: str = "int64"
    pattern: str = "sparse"
    float_dtype: str = "float32"
    method: str = "auto"
    transform: str = "eager"
    seed: int = 0

    def label(self) -> str:
        return (
            f"x64={'on' if self.x64 else 'off'}-B{self.batch}-{self.id_dtype}-{self.pattern}"
            f"-{self.float_dtype}-{self.method}-{self.transform}"
        )


# ------------------------------------------------------------------------- values


def unit(rng: np.random.Generator, shape, dtype: str) -> np.ndarray:
    """Values in [0, 1]: exact vote shares (band edges), the ends, tiny and random."""
    dt = np_dtype(dtype)
    k = 8
    shares = rng.integers(0, k + 1, size=shape) / k
    info = ml_dtypes.finfo(dt)
    tiny = float(info.smallest_subnormal)
    special = rng.choice(np.array([0.0, 1.0, tiny, 1 - float(info.epsneg), 0.5]), shape)
    pick = rng.integers(0, 3, size=shape)
    out = np.where(pick == 0, shares, np.where(pick == 1, special, rng.random(shape)))
    return out.astype(dt)


def ids(rng: np.random.Generator, shape, dtype: str, pattern: str, x64: bool) -> np.ndarray:
    """Integer ids of ``dtype`` following ``pattern`` (any integers, for cluster ids)."""
    dt = np.dtype(dtype)
    info = np.iinfo(dt)
    lo, hi = int(info.min), int(info.max)
    n = int(np.prod(shape))
    if pattern == "near_limits":
        pool = [lo, lo + 1, hi - 1, hi, 0, 1]
    elif pattern == "negative":
        pool = [v for v in (-1, -7, -100, lo, lo + 3) if v >= lo] or [0, 1, 2]
    elif pattern == "sparse":
        pool = sorted({min(hi, v) for v in (0, 3, 97, 1000, 65_000, 10**9, 2**40, hi)})
    elif pattern == "all_equal":
        pool = [min(hi, 42)]
    elif pattern == "all_distinct":
        span = hi - lo + 1
        if span >= n:
            start = max(lo, min(0, hi - n + 1)) if lo < 0 else lo
            vals = np.arange(n, dtype=np.int64 if dt.kind == "i" else np.uint64) + np.asarray(
                start, np.int64 if dt.kind == "i" else np.uint64
            )
            return rng.permutation(vals).astype(dt).reshape(shape)
        pool = list(range(lo, hi + 1))
    else:  # dense: small non-negative ids
        pool = list(range(min(hi, 5) + 1))
    return np.asarray(rng.choice(np.array(pool, dtype=object), size=shape).tolist(), dt).reshape(
        shape
    )


def answer_ids(rng, shape, dtype: str, pattern: str, x64: bool) -> tuple[np.ndarray, int]:
    """Answer ids in ``[0, num_answers)`` and ``num_answers``, for voting functions."""
    dt = np.dtype(dtype)
    hi = int(np.iinfo(dt).max)
    label_limit = 2**63 if x64 else 2**31  # labels are int64 / int32
    if pattern == "near_limits":
        n = min(hi + 1, label_limit)
        pool = [n - 1, n - 2, 0, 1] if n > 2 else [0, 1]
    elif pattern == "all_equal":
        n, pool = 7, [6]
    elif pattern in ("sparse", "negative"):
        n = min(hi + 1, 10**9 if x64 else 2**31 - 1)
        pool = sorted({min(n - 1, v) for v in (0, 5, 97, 10**6, n - 1)})
    elif pattern == "all_distinct":
        n = min(hi + 1, 1000)
        k = shape[-1]
        offsets = rng.integers(0, n, size=(shape[0], 1))
        rows = (offsets + np.arange(k)) % n  # distinct within a row when n >= k
        return rows.astype(dt), n
    else:  # dense: a small alphabet with many ties
        n, pool = 3, [0, 1, 2]
    vals = rng.choice(np.array(pool, dtype=object), size=shape).tolist()
    return np.asarray(vals, dt).reshape(shape), n


# ----------------------------------------------------------------------- builders

Inputs = tuple[dict[str, Any], dict[str, Any]]  # (arrays, hyper-parameters)


def _fl(cfg: Config) -> str:
    return cfg.float_dtype


def build_uncertainty_reward(rng, cfg: Config) -> Inputs:
    return {"consistency": unit(rng, cfg.batch, _fl(cfg))}, {}


def build_challenger_rewards(rng, cfg: Config) -> Inputs:
    b = cfg.batch
    arrays = {
        "consistency": unit(rng, b, _fl(cfg)),
        "clusters": ids(rng, b, cfg.id_dtype, cfg.pattern, cfg.x64),
        "valid": rng.random(b) < 0.8,
    }
    hypers: dict[str, Any] = {"strength": float(rng.choice([0.0, 0.5, 1.0, 2.5]))}
    if cfg.pattern == "dense":
        hypers["num_clusters"] = 6
    return arrays, hypers


def build_consensus(rng, cfg: Config) -> Inputs:
    k = int(rng.choice([1, 5, 8]))
    a, n = answer_ids(rng, (cfg.batch, k), cfg.id_dtype, cfg.pattern, cfg.x64)
    return {"answers": a}, {"num_answers": n, "method": cfg.method}


def build_majority_vote(rng, cfg: Config) -> Inputs:
    return build_consensus(rng, cfg)


def build_solver_rewards(rng, cfg: Config) -> Inputs:
    arrays, hypers = build_consensus(rng, cfg)
    arrays["format_valid"] = rng.random(arrays["answers"].shape) < 0.7
    hypers["alpha"] = float(rng.choice([0.9, 0.6, 0.0, 1.0, 0.3]))
    hypers = {"num_answers": hypers["num_answers"], "alpha": hypers["alpha"],
              "method": hypers["method"]}
    return arrays, hypers


def build_curriculum_mask(rng, cfg: Config) -> Inputs:
    low, high = [(0.25, 0.75), (0.2, 0.6), (0.0, 1.0), (0.5, 0.5)][int(rng.integers(0, 4))]
    return {"consistency": unit(rng, cfg.batch, _fl(cfg))}, {"low": low, "high": high}


def build_pseudo_rewards(rng, cfg: Config) -> Inputs:
    k = int(rng.choice([1, 4, 8]))
    a = ids(rng, (cfg.batch, k), cfg.id_dtype, cfg.pattern, cfg.x64)
    # labels of another integer dtype: half of them one of the row's own answers
    # (when it fits that dtype), so that equality across dtypes is exercised
    other = str(rng.choice(ID_DTYPES))
    if not cfg.x64 and np.dtype(other).itemsize == 8:
        other = other.replace("64", "32")
    info = np.iinfo(other)
    y = ids(rng, cfg.batch, other, cfg.pattern, cfg.x64).astype(object)
    own = a[np.arange(cfg.batch), rng.integers(0, k, cfg.batch)].astype(object)
    fits = np.array([info.min <= v <= info.max for v in own.tolist()], bool)
    take = fits & (rng.random(cfg.batch) < 0.5)
    y = np.where(take, own, y)
    return {"answers": a, "labels": np.asarray(y.tolist(), other)}, {}


def build_hint_delta(rng, cfg: Config) -> Inputs:
    t = int(rng.choice([0, 1, 5]))
    dt = np_dtype(_fl(cfg))
    shape = (cfg.batch, t)
    scale = 30.0 if dt.itemsize == 2 else 1e4
    base = (-rng.random(shape) * scale).astype(dt)
    hinted = (-rng.random(shape) * scale).astype(dt)
    return {"base_logp": base, "hinted_logp": hinted, "mask": rng.random(shape) < 0.6}, {}


def build_proposer_rewards(rng, cfg: Config) -> Inputs:
    b = cfg.batch
    dt = np_dtype(_fl(cfg))
    lengths = ids(rng, b, cfg.id_dtype, "dense" if cfg.pattern == "negative" else cfg.pattern,
                  cfg.x64)
    valid = rng.random(b) < 0.7
    if np.iinfo(lengths.dtype).min < 0:
        lengths = np.where(valid & (lengths < 0), 0, lengths).astype(lengths.dtype)
    delta = np.where(valid, rng.normal(size=b) * 3, np.nan).astype(dt)
    return {
        "delta": delta,
        "hint_lengths": lengths,
        "cluster_share": unit(rng, b, _fl(cfg)),
        "valid": valid,
    }, {}


def build_coder_rewards(rng, cfg: Config) -> Inputs:
    b = cfg.batch
    e = rng.random(b) < 0.7
    s = np.where(e, unit(rng, b, _fl(cfg)).astype(np.float64), np.nan).astype(np_dtype(_fl(cfg)))
    c = np.where(e, unit(rng, b, _fl(cfg)).astype(np.float64), np.nan).astype(np_dtype(_fl(cfg)))
    return {"executed": e, "easy_accuracy": s, "consistency": c,
            "syntax_error": rng.random(b) < 0.3}, {}


def build_group_advantages(rng, cfg: Config) -> Inputs:
    n = int(rng.choice([1, 2, 8])) if cfg.batch < 2**18 - 1 else 8
    dt = np_dtype(_fl(cfg))
    g = cfg.batch
    kind = rng.integers(0, 3, size=(g, 1))
    r = np.where(kind == 0, rng.integers(0, 2, (g, n)),  # binary rewards: ties, all-equal
                 np.where(kind == 1, np.round(rng.normal(size=(g, n)), 2), 3.0))
    hypers = {
        "scale": str(rng.choice(SCALES)),
        "ddof": int(rng.choice([0, 1])),
        "eps": float(rng.choice([0.0, 1e-6, 1e-4])),
        "singleton": str(rng.choice(SINGLETONS)),
    }
    mask = rng.random((g, n)) < 0.8 if rng.random() < 0.5 else None
    return {"rewards": r.astype(dt), "mask": mask}, hypers


def build_cluster_sizes(rng, cfg: Config) -> Inputs:
    hypers = {"num_clusters": 6} if cfg.pattern == "dense" else {}
    return {"ids": ids(rng, cfg.batch, cfg.id_dtype, cfg.pattern, cfg.x64)}, hypers


def build_masked_mean(rng, cfg: Config) -> Inputs:
    t = int(rng.choice([0, 1, 6]))
    if rng.random() < 0.25:  # integer values are accepted too
        v = rng.integers(-50, 50, (cfg.batch, t)).astype(cfg.id_dtype if cfg.id_dtype in (
            "int16", "int32") else "int32")
    else:
        v = rng.normal(size=(cfg.batch, t)).astype(np_dtype(_fl(cfg)))
    return {"values": v, "mask": rng.random((cfg.batch, t)) < 0.5}, {}


BUILDERS: dict[str, Callable[[np.random.Generator, Config], Inputs]] = {
    name: globals()[f"build_{name}"] for name in CONTRACTS if f"build_{name}" in globals()
}

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


def configs(name: str, thorough: bool = False, per_value: int = 1) -> list[Config]:
    """The configurations to run for ``name``.

    The fast (CI) selection varies one axis at a time around seeded random choices
    of the others, so that every value of every axis is run at least ``per_value``
    times; ``thorough`` runs the whole product of the axes.
    """
    ax = axes(CONTRACTS[name])
    keys = list(ax)
    if thorough:
        combos = itertools.product(*(ax[k] for k in keys))
        return [Config(**dict(zip(keys, c, strict=True)), seed=i) for i, c in enumerate(combos)]
    rnd = random.Random(f"matrix-{name}")
    out: list[Config] = []
    for key in keys:
        for value in ax[key]:
            for _ in range(per_value):
                choice = {k: rnd.choice(ax[k]) for k in keys}
                if choice["batch"] >= 65537 and key != "batch":
                    choice["batch"] = rnd.choice((1, 128, 129, 4096))
                choice[key] = value
                out.append(Config(**choice, seed=len(out)))
    return out


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
        dt = _canonical(arrays[rule[5:]].dtype, x64)
        if not jnp.issubdtype(dt, jnp.floating):  # masked_mean of integers
            return (fl,)
        return (dt,)
    if rule.startswith("promote:"):
        a, b = rule[8:].split(",")
        return (np.dtype(jnp.result_type(_canonical(arrays[a].dtype, x64),
                                         _canonical(arrays[b].dtype, x64))),)
    if rule == "vote":
        return (_canonical(arrays["answers"].dtype, x64), np.dtype(np.int32))
    return {
        "float": (fl,),
        "labels": (it, fl),
        "bool": (np.dtype(bool),),
        "count": (np.dtype(np.int32),),
    }[rule]


def expected_torch_dtypes(contract: Contract, arrays: dict) -> tuple[np.dtype, ...]:
    import torch

    rule = contract.output
    if rule.startswith("same:"):
        dt = np.dtype(arrays[rule[5:]].dtype)
        return (dt if jnp.issubdtype(dt, jnp.floating) else np.dtype(np.float64),)
    if rule.startswith("promote:"):
        a, b = rule[8:].split(",")
        ta, tb = (to_torch(arrays[x][:1]).dtype for x in (a, b))
        return (torch_to_np(torch.promote_types(ta, tb)),)
    if rule == "vote":
        return (np.dtype(arrays["answers"].dtype), np.dtype(np.int64))
    return {
        "float": (np.dtype(np.float64),),
        "labels": (np.dtype(np.int64), np.dtype(np.float64)),
        "bool": (np.dtype(bool),),
        "count": (np.dtype(np.int64),),
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
    return torch.from_numpy(np.ascontiguousarray(x))


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
    if transform.startswith("sharded"):  # 8 host devices, batch axis sharded
        from jax.sharding import AxisType, NamedSharding, PartitionSpec

        kind = AxisType.Explicit if transform.endswith("explicit") else AxisType.Auto
        mesh = jax.make_mesh((len(jax.devices()),), ("batch",), axis_types=(kind,))
        spec = NamedSharding(mesh, PartitionSpec("batch"))
        xs = [jax.device_put(device[n], spec) for n in present]
        with jax.set_mesh(mesh):
            outs = as_tuple(jax.jit(fn)(*xs))
        return [np.asarray(o) for o in outs]
    stacked = [jnp.stack([device[n], device[n]]) for n in present]
    outs = as_tuple(jax.vmap(fn)(*stacked))
    result = []
    for o in outs:
        o = np.asarray(o)
        np.testing.assert_array_equal(o[0], o[1])  # the two copies agree exactly
        result.append(o[0])
    return result


def run_torch(zero_torch, contract: Contract, arrays: dict, hypers: dict):
    t = {k: (None if v is None else to_torch(v)) for k, v in arrays.items()}
    return [from_torch(o) for o in as_tuple(call(zero_torch, contract, t, hypers))]


def expected_values(contract: Contract, arrays: dict, hypers: dict) -> list[np.ndarray]:
    fn = getattr(oracle, contract.name)
    return [np.asarray(o) for o in as_tuple(fn(**arrays, **hypers))]


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


def tolerance_scale(contract: Contract, arrays: dict) -> float | None:
    """Magnitude that float errors scale with (the inputs of a difference or mean)."""
    if contract.name in ("hint_delta",):
        m = max((float(np.max(np.abs(arrays[k].astype(np.float64)), initial=0))
                 for k in ("base_logp", "hinted_logp")), default=1.0)
        return max(1.0, m)
    if contract.name == "proposer_rewards":
        d = arrays["delta"].astype(np.float64)
        return max(1.0, float(np.nanmax(np.abs(d), initial=0)))
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
        scale = tolerance_scale(self.contract, arrays)
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
        want = expected_values(self.contract, arrays, hypers)
        scale = tolerance_scale(self.contract, arrays)
        for i, (g, w, dt) in enumerate(zip(got, want, dtypes, strict=True)):
            compare(g, w, dt, f"{where} output {i}", scale)
