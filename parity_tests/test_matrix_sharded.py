"""The matrix with the batch sharded over 8 host devices (a subprocess, since the
device count is fixed at start-up), on explicit and auto meshes: every public
function, every voting method, x64 on and off, against the NumPy oracle; then every
reproducer of the call-path issue inside a jit under an Auto, an Explicit and again
an Auto mesh (the same hyper-parameter values under both kinds)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

SCRIPT = textwrap.dedent(
    """
    import dataclasses, itertools, jax
    assert len(jax.devices()) == 8, jax.devices()
    from zero_contracts import CONTRACTS
    from parity_tests.tester import RewardTester, configs
    done = 0
    for name in CONTRACTS:
        seen = set()
        for cfg in configs(name):
            if cfg.batch not in (128, 4096) or cfg.transform != "eager":
                continue
            key = (cfg.x64, cfg.method)
            if key in seen:
                continue
            seen.add(key)
            for kind in ("sharded_explicit", "sharded_auto", "sharded_explicit_even",
                         "sharded_explicit_odd", "sharded_explicit_last"):
                RewardTester(name).check_jax(dataclasses.replace(cfg, transform=kind))
                done += 1
    from jax.sharding import AxisType
    from parity_tests import reproducers
    meshes = [jax.make_mesh((4,), ("batch",), axis_types=(kind,), devices=jax.devices()[:4])
              for kind in (AxisType.Auto, AxisType.Explicit, AxisType.Auto)]
    for x64 in (False, True):
        for mesh in meshes:
            done += reproducers.run_all(("mesh",), x64, mesh)
    print("sharded-cases", done)
    """
)


def _on_eight_devices(script: str, timeout: float) -> str:
    """``script``'s output, run in a fresh Python with 8 host devices."""
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8")
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=root, env=env, capture_output=True, text=True,
        timeout=timeout,
    )
    assert out.returncode == 0, out.stderr[-4000:]
    return out.stdout


def test_matrix_sharded_on_explicit_and_auto_meshes():
    stdout = _on_eight_devices(SCRIPT, 600)
    count = int(stdout.split("sharded-cases")[-1])
    assert count >= 5 * 13, stdout


INNER = textwrap.dedent(
    """
    import jax, numpy as np
    assert len(jax.devices()) == 8, jax.devices()
    from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
    import zero_jax as zj
    rng = np.random.default_rng(3)
    G, B, N, K = 4, 200, 16, 8
    done = 0
    for x64 in (False, True):
        jax.config.update("jax_enable_x64", x64)
        ids = rng.integers(-5, 5, (G, B)).astype(np.int32) * 7919  # arbitrary ids, B > 128
        sizes = np.stack([(row[:, None] == row[None, :]).sum(1) for row in ids])
        p, valid = np.full((G, B), 0.5, np.float32), np.ones((G, B), bool)
        r = rng.normal(size=(2, N)).astype(np.float32)
        loo = r - (r.sum(-1, keepdims=True, dtype=np.float64) - r) / (N - 1)
        answers = rng.integers(0, 3, (N, K)).astype(np.int32)
        counts = np.stack([np.bincount(a, minlength=3) for a in answers])
        r4, m4 = rng.normal(size=(4, N)).astype(np.float32), rng.random((4, N)) < 0.7
        truth = rng.integers(0, 3, N)
        rloo_batch = dict(baseline="leave_one_out", scale="batch")
        unsharded = (zj.group_advantages(r4, m4, **rloo_batch),
                     zj.vote_metrics(answers, truth, 3, trained=3))
        # two groups of logits [8, 4, 16]; the second one's offset takes the shifted route
        logits = rng.normal(size=(2, 8, 4, 16)).astype(np.float32) + np.array([0, 500])[
            :, None, None, None].astype(np.float32)
        lmask = rng.random((2, 8, 4)) < 0.8
        certainty = np.stack([np.asarray(zj.self_certainty(logits[g], lmask[g])) for g in (0, 1)])
        for kind in (AxisType.Explicit, AxisType.Auto):
            mesh = jax.make_mesh((4,), ("a",), axis_types=(kind,), devices=jax.devices()[:4])
            with jax.set_mesh(mesh):
                put = lambda x, *spec: jax.device_put(x, NamedSharding(mesh, P(*spec)))
                # a vmap over groups sharded on the mesh, hashed cluster sizes inside
                got = jax.jit(jax.vmap(zj.cluster_sizes))(put(ids, "a"))
                assert np.array_equal(np.asarray(got), sizes), (x64, kind)
                got = jax.vmap(lambda p, i, v: zj.challenger_rewards(p, i, v, 0.5))(
                    put(p, "a"), put(ids, "a"), put(valid, "a"))
                want = np.maximum(0, 1 - 0.5 * sizes / B)
                np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
                # a group's samples split over the devices: the leave-one-out baseline
                got = jax.jit(lambda r: zj.group_advantages(r, **zj.ADVANTAGE_PRESETS["rloo"]))(
                    put(r, None, "a"))
                np.testing.assert_allclose(np.asarray(got), loo, rtol=1e-6, atol=1e-6)
                # a row's K answers split over the devices, by every voting method
                for method in ("segment_sum", "pairwise", "one_hot", "auto"):
                    labels, share = jax.jit(lambda a: zj.consensus(a, 3, method=method))(
                        put(answers, None, "a"))
                    assert np.array_equal(np.asarray(labels), counts.argmax(1)), (x64, kind)
                    np.testing.assert_allclose(np.asarray(share), counts.max(1) / K)
                # ... and the first 3 of them voted again (3 does not divide over 4 devices)
                got = jax.jit(lambda a: zj.vote_metrics(a, truth, 3, trained=3))(
                    put(answers, None, "a"))
                assert [float(x) for x in got] == [float(x) for x in unsharded[1]], (x64, kind)
                # the mask sharded, the rewards as the host gave them (float32 RLOO's
                # two-sum scan, with a batch-wide scale)
                got = jax.jit(lambda m: zj.group_advantages(r4, m, **rloo_batch))(put(m4, "a"))
                np.testing.assert_allclose(np.asarray(got), np.asarray(unsharded[0]), rtol=1e-6,
                                           atol=1e-6)  # a batch-wide sum, in another order
                # a vmap over groups whose rows (not the vmapped axis) are sharded
                got = jax.jit(jax.vmap(zj.self_certainty))(
                    put(logits, None, "a"), put(lmask, None, "a"))
                np.testing.assert_allclose(np.asarray(got), certainty, rtol=1e-6)
                done += 1
    print("inner-cases", done)
    """
)


def test_inner_axes_sharded_on_explicit_and_auto_meshes():
    """Sharded along the axis a reward reduces over (a vmapped group of arbitrary ids,
    the samples of a group, a row's answers): equal to NumPy, x64 off and on."""
    stdout = _on_eight_devices(INNER, 300)
    assert stdout.split("inner-cases")[-1].strip() == "4", stdout
