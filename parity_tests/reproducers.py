"""The reproducers of the call-path issue (issue 17), each with the answer or error the
issue specifies, runnable in every place users call the library: eagerly, inside a
user's ``jit`` where a hyper-parameter is first seen (two different jitted steps
reusing it), under ``vmap``, and inside ``jit`` under Auto and Explicit meshes (one
process with several devices, or several processes).

``parity_tests/test_call_path.py`` runs them in one process with x64 off and on;
``test_matrix_sharded.py`` on 8 host devices; ``test_multiprocess.py`` in two
``jax.distributed`` processes.  Expected values are written out from the issue's text
and the formulas, not computed by the library.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import zero_jax

_FRESH = itertools.count(1)


def fresh(x: float) -> float:
    """``x`` moved a little: a hyper-parameter value no earlier call has seen."""
    return x + next(_FRESH) * 1e-7


@dataclasses.dataclass
class Case:
    name: str
    fn: Callable[..., Any]  # of the arrays; hyper-parameters are closed over
    arrays: tuple[np.ndarray, ...]
    want: tuple[np.ndarray, ...] | None = None
    error: tuple[type[BaseException], str] | None = None
    float_tol: float = 1e-6


def _p8() -> np.ndarray:
    return np.linspace(0, 1, 8)


def cases() -> list[Case]:
    nan = np.nan
    low, high = fresh(0.3), fresh(0.7)
    p8 = _p8()
    r = np.array([[1.0, 2.0, 4.0], [3.0, 3.0, 0.0]])
    r_mean = r.mean(-1, keepdims=True)
    r_std = r.std(-1, ddof=1, keepdims=True)
    strength = fresh(0.5)
    share = np.array([2, 2, 1, 1]) / 4
    return [
        Case(
            "curriculum_mask in two jitted steps",
            lambda p: zero_jax.curriculum_mask(p, low, high) & (p > 0),
            (p8,),
            ((p8 >= low) & (p8 <= high) & (p8 > 0),),
        ),
        Case(
            "consensus with -1 ids",
            lambda a: zero_jax.consensus(a, 4),
            (np.array([[-1, -1, 2, 0], [1, 1, 2, 0]]),),
            (np.array([-1, 1]), np.array([nan, 0.5])),
        ),
        Case(
            "consensus with ids >= num_answers",
            lambda a: zero_jax.consensus(a, 2),
            (np.array([[3, 3, 3, 3], [0, 1, 1, 0]]),),
            (np.array([-1, 0]), np.array([nan, 0.5])),
        ),
        Case(
            "challenger with an id >= num_clusters",
            lambda p, c, v: zero_jax.challenger_rewards(p, c, v, num_clusters=2),
            (np.full(4, 0.5), np.array([0, 0, 1, 2]), np.ones(4, bool)),
            (np.array([0.5, 0.5, 0.75, nan]),),
        ),
        Case(
            "uncertainty of invalid scores",
            zero_jax.uncertainty_reward,
            (np.array([1.5, -0.1, nan, 0.25]),),
            (np.array([nan, nan, nan, 0.5]),),
        ),
        Case(
            "challenger with a 0-d NumPy strength",
            lambda p, c, v: zero_jax.challenger_rewards(p, c, v, np.asarray(strength)),
            (np.full(4, 0.5), np.array([0, 0, 1, 2]), np.ones(4, bool)),
            (1 - strength * share,),
        ),
        Case(
            "group_advantages with a 0-d NumPy eps",
            lambda r: zero_jax.group_advantages(r, eps=np.asarray(0.0)),
            (r,),
            (np.where([[True], [True]], (r - r_mean) / r_std, 0),),
        ),
        Case(
            "group_advantages with ddof=2**31",
            lambda r: zero_jax.group_advantages(r, ddof=2**31),
            (r,),
            (np.zeros_like(r),),  # every group has at most ddof samples
        ),
        Case(
            "group_advantages(scale='batch') with ddof=2**31",
            lambda r: zero_jax.group_advantages(r, scale="batch", ddof=2**31, eps=1.0),
            (r,),
            ((r - r_mean) / (np.sqrt(((r - r.mean()) ** 2).sum()) + 1.0),),
        ),
        Case(
            "checked inside the step",
            lambda p: zero_jax.checked(zero_jax.uncertainty_reward)(p) * 2,
            (np.array([0.5, 0.75, 1.0, 0.0]),),
            (np.array([2.0, 1.0, 0.0, 0.0]),),
        ),
        Case(
            "checked nested in checked",
            zero_jax.checked(lambda p: zero_jax.checked(zero_jax.uncertainty_reward)(p)),
            (np.array([0.5, 0.75, 1.0, 0.0]),),
            (np.array([1.0, 0.5, 0.0, 0.0]),),
        ),
    ]


def wide_ids_case() -> tuple[jax.Array, jax.Array]:
    """int64 JAX ids made while x64 is on (the caller switches it off afterwards)."""
    with jax.enable_x64(True):
        return jnp.array([[2**40, 0]], jnp.int64), jnp.array([0], jnp.int64)


# ------------------------------------------------------------------------ running


def _stack(x: np.ndarray) -> np.ndarray:
    return np.stack([x, x])


def run(case: Case, mode: str, mesh: Any = None) -> list[np.ndarray]:
    """The case's outputs (NumPy) in ``mode``: "eager", "jit", "vmap" or "mesh" (inside
    ``jit`` under ``jax.set_mesh(mesh)``, inputs sharded over the mesh's first axis
    when their batch divides, else replicated)."""
    if mode == "eager":
        outs = case.fn(*case.arrays)
    elif mode == "jit":
        outs = jax.jit(case.fn)(*case.arrays)
        again = jax.jit(lambda *a: case.fn(*a))(*case.arrays)  # another step, same values
        for x, y in zip(_tuple(outs), _tuple(again), strict=True):
            np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    elif mode == "vmap":
        outs = jax.vmap(case.fn)(*(_stack(a) for a in case.arrays))
        outs = [np.asarray(o)[1] for o in _tuple(outs)]
    elif mode == "mesh":
        outs = _on_mesh(case, mesh)
    else:
        raise ValueError(mode)
    return [_gather(o) for o in _tuple(outs)]


def _on_mesh(case: Case, mesh: Any) -> Any:
    from jax.sharding import NamedSharding, PartitionSpec

    axis = mesh.axis_names[0]
    size = mesh.shape[axis]
    xs = []
    for a in case.arrays:
        spec = PartitionSpec(axis) if a.shape[0] % size == 0 else PartitionSpec()
        sharding = NamedSharding(mesh, spec)
        if jax.process_count() > 1:
            xs.append(jax.make_array_from_callback(a.shape, sharding, lambda i, a=a: a[i]))
        else:
            xs.append(jax.device_put(jnp.asarray(a), sharding))
    with jax.set_mesh(mesh):
        return jax.jit(case.fn)(*xs)


def _gather(x: Any) -> np.ndarray:
    if isinstance(x, jax.Array) and not x.is_fully_addressable:
        from jax.experimental import multihost_utils

        return np.asarray(multihost_utils.process_allgather(x, tiled=True))
    return np.asarray(x)


def _tuple(x: Any) -> tuple[Any, ...]:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def check(case: Case, got: list[np.ndarray], x64: bool, where: str = "") -> None:
    """Exact for ints and bools (NaN positions too); floats within ``case.float_tol``."""
    assert case.want is not None
    for i, (g, w) in enumerate(zip(got, case.want, strict=True)):
        label = f"{case.name} {where} output {i}"
        if w.dtype.kind in "biu":
            np.testing.assert_array_equal(g, w, err_msg=label)
            continue
        tol = case.float_tol if x64 else max(case.float_tol, 1e-6)
        np.testing.assert_allclose(g.astype(np.float64), w, rtol=tol, atol=tol, err_msg=label)


def run_all(modes: tuple[str, ...], x64: bool, mesh: Any = None) -> int:
    """Every case in every mode; returns how many ran (for the callers' counts)."""
    done = 0
    with jax.enable_x64(x64):
        for case in cases():
            for mode in modes:
                check(case, run(case, mode, mesh), x64, f"[{mode}, x64={x64}]")
                done += 1
        # 64-bit JAX ids that the x64 setting cannot hold raise like NumPy ids
        ids, labels = wide_ids_case()
        if x64:
            got = zero_jax.pseudo_rewards(ids, labels)
            np.testing.assert_array_equal(np.asarray(got), [[0.0, 1.0]])
        else:
            try:
                zero_jax.pseudo_rewards(ids, labels)
            except ValueError as e:
                assert "answers has values outside the int32 range" in str(e), e
            else:
                raise AssertionError("int64 ids beyond int32 with x64 off must raise")
        done += 1
        # the same NumPy ids handed to a user's jitted step wrapped in checked()
        step = zero_jax.checked(jax.jit(lambda a, y: zero_jax.pseudo_rewards(a, y) * 2))
        wide, label = np.array([[2**40, 0]], np.int64), np.array([0], np.int64)
        with jax.set_mesh(mesh) if mesh is not None else contextlib.nullcontext():
            if x64:
                np.testing.assert_array_equal(_gather(step(wide, label)), [[0.0, 2.0]])
            else:
                try:
                    step(wide, label)
                except ValueError as e:
                    assert "args[0] has values outside the int32 range" in str(e), e
                else:
                    raise AssertionError("checked(jit) must refuse int64 ids beyond int32")
        done += 1
    return done
