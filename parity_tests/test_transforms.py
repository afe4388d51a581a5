"""JAX transformations: eager == jit, vmap over a batch of groups == a Python loop,
traced hyper-parameters, and identical results when the batch is sharded over 8
host devices (in a subprocess, since the device count is fixed at start-up)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

import zero_jax


def close(a, b, msg=""):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype, msg
    if a.dtype.kind == "f":
        np.testing.assert_allclose(a, b, rtol=1e-14, atol=1e-15, err_msg=msg)
    else:
        np.testing.assert_array_equal(a, b, err_msg=msg)


def _inputs(seed=0, g=5, b=12, k=6, t=7):
    rng = np.random.default_rng(seed)
    return {
        "p": rng.integers(0, k + 1, size=(g, b)) / k,
        "clusters": rng.choice(np.array([-3, 4, 2**40]), size=(g, b)),
        "valid": rng.random((g, b)) < 0.7,
        "answers": rng.integers(0, 4, size=(g, b, k)),
        "fmt": rng.random((g, b, k)) < 0.5,
        "base": -rng.exponential(size=(g, b, t)),
        "hinted": -rng.exponential(size=(g, b, t)),
        "mask": rng.random((g, b, t)) < 0.5,
        "lengths": rng.integers(0, 500, size=(g, b)),
        "rewards": rng.normal(size=(g, b, k)),
    }


def _all(x):
    """Every public reward of one group (a tuple of arrays)."""
    labels, p = zero_jax.consensus(x["answers"], 4)
    return (
        zero_jax.uncertainty_reward(x["p"]),
        zero_jax.challenger_rewards(x["p"], x["clusters"], x["valid"], 0.7),
        labels,
        p,
        zero_jax.curriculum_mask(p, 0.3, 0.8),
        zero_jax.pseudo_rewards(x["answers"], labels),
        zero_jax.hint_delta(x["base"], x["hinted"], x["mask"]),
        zero_jax.proposer_rewards(x["p"], x["lengths"], x["p"] / 2, x["valid"]),
        zero_jax.coder_rewards(x["valid"], x["p"], x["p"], ~x["valid"]),
        zero_jax.solver_rewards(x["answers"], x["fmt"], 4, 0.8),
        zero_jax.group_advantages(x["rewards"], x["fmt"]),
    )


def test_eager_equals_jit_and_vmap_equals_loop():
    x = {k: jnp.asarray(v) for k, v in _inputs().items()}
    loop = [_all({k: v[g] for k, v in x.items()}) for g in range(5)]
    jitted = jax.jit(jax.vmap(_all))(x)
    # XLA may fuse an inlined kernel differently (e.g. fold a constant
    # hyper-parameter), so floats agree to a few ulps, integers and bools exactly.
    for i, out in enumerate(jax.vmap(_all)(x)):
        for g in range(5):
            close(out[g], loop[g][i], f"vmap output {i}")
            close(jitted[i][g], loop[g][i], f"jit output {i}")


def test_traced_hyper_parameters_match_python_floats():
    x = {k: jnp.asarray(v[0]) for k, v in _inputs(1).items()}

    @jax.jit
    def traced(strength, low, high, alpha):
        return (
            zero_jax.challenger_rewards(x["p"], x["clusters"], x["valid"], strength),
            zero_jax.curriculum_mask(x["p"], low, high),
            zero_jax.solver_rewards(x["answers"], x["fmt"], 4, alpha),
        )

    got = traced(0.3, 0.25, 0.5, 0.6)
    want = (
        zero_jax.challenger_rewards(x["p"], x["clusters"], x["valid"], 0.3),
        zero_jax.curriculum_mask(x["p"], 0.25, 0.5),
        zero_jax.solver_rewards(x["answers"], x["fmt"], 4, 0.6),
    )
    for a, b in zip(got, want, strict=True):
        close(a, b)


SHARDED = textwrap.dedent(
    """
    import jax, numpy as np
    jax.config.update("jax_enable_x64", True)
    from jax.sharding import NamedSharding, PartitionSpec as P
    import zero_jax
    from parity_tests.test_transforms import _inputs, _all, close
    assert len(jax.devices()) == 8, jax.devices()
    from jax.sharding import AxisType
    x = {k: v[0] for k, v in _inputs(2, g=1, b=64).items()}
    plain = jax.jit(_all)(x)
    for kind in (AxisType.Explicit, AxisType.Auto):
        mesh = jax.make_mesh((8,), ("batch",), axis_types=(kind,))
        spec = NamedSharding(mesh, P("batch"))
        sharded = {k: jax.device_put(v, spec) for k, v in x.items()}
        dist = jax.jit(_all)(sharded)
        for i, (a, b) in enumerate(zip(plain, dist)):
            close(a, b, f"{kind} output {i}")
        print("sharded-ok", kind, len(dist[0].sharding.device_set))
    """
)


def test_sharded_batch_gives_identical_results():
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8")
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run(
        [sys.executable, "-c", SHARDED],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.count("sharded-ok") == 2, out.stdout
