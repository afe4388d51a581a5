"""The matrix with the batch sharded over 8 host devices (a subprocess, since the
device count is fixed at start-up), on explicit and auto meshes: every public
function, every voting method, x64 on and off, against the NumPy oracle; then every
reproducer of the call-path issue inside a jit under an Auto, an Explicit and again
an Auto mesh (the same hyper-parameter values under both kinds).

XLA's compile is most of this test's time: the matrix's calls with one x64 setting on
one kind of mesh (every function, configuration and placement) run inside one jit,
each call's outputs checked on their own, and the inner-axes cases of one mesh inside
one jit (4 compiles where there were 280 and 36)."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np

SCRIPT = textwrap.dedent(
    """
    import jax
    assert len(jax.devices()) == 8, jax.devices()
    from zero_contracts import CONTRACTS
    from parity_tests.test_matrix_sharded import check_sharded, sharded_cases
    cases = [case for name in CONTRACTS for case in sharded_cases(name)]
    done = check_sharded(cases)
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

def sharded_cases(name: str) -> list[tuple[str, Any]]:
    """The sharded matrix's configurations of ``name``: x64 on and off and every voting
    method (x64 alternating over them), each on a matrix configuration of ``name``
    (ids, pattern, dtype) at a batch that divides over 8 devices (128, 4096)."""
    from zero_contracts import CONTRACTS

    from .tester import axes, configs

    methods = axes(CONTRACTS[name]).get("method", ("auto",))
    wanted = [(x64, "auto") for x64 in (True, False)] if len(methods) == 1 else [
        (i % 2 == 0, m) for i, m in enumerate(methods)]
    base = configs(name)
    out = []
    for i, (x64, method) in enumerate(wanted):
        cfg = base[i % len(base)]
        ids = cfg.id_dtype
        if not x64 and ids.endswith("64"):  # 64-bit ids need x64 (the matrix checks the error)
            ids = ids[:-2] + "32"
        out.append((name, dataclasses.replace(cfg, x64=x64, method=method, id_dtype=ids,
                                              batch=(128, 4096)[i % 2], transform="eager")))
    return out


#: tester.run_jax's sharded placements: every argument's batch axis (Auto and Explicit
#: meshes), the even or the odd arguments' (one call mixes shardings), the last axis
PLACEMENTS = ("auto", "explicit", "explicit_even", "explicit_odd", "explicit_last")


def check_sharded(cases: list[tuple[str, Any]]) -> int:
    """``RewardTester(name).check_jax`` of each ``(name, cfg)`` under every
    ``sharded_<placement>`` transform; the number of checks.  The calls with one x64
    setting on one kind of mesh run inside one jit (placements as in
    ``tester.run_jax``), each call's outputs checked on their own; a case that must
    raise runs apart."""
    import jax

    from . import tester

    jobs: dict[tuple[bool, str], list[tuple[Any, Any, dict, dict]]] = {}
    done = 0
    for name, cfg in cases:
        check = tester.RewardTester(name)
        cfgs = [dataclasses.replace(cfg, transform=f"sharded_{p}") for p in PLACEMENTS]
        inputs = [check.inputs(c) for c in cfgs]
        arrays, hypers = inputs[0]
        with jax.enable_x64(cfg.x64):
            error = tester.jax_error(check.contract, arrays, hypers, cfg.x64)
        if error is not None or any(_bits(i) != _bits(inputs[0]) for i in inputs[1:]):
            for c in cfgs:  # an error to raise, or inputs built for one placement
                check.check_jax(c)
        else:
            for c in cfgs:
                kind = "auto" if c.transform == "sharded_auto" else "explicit"
                jobs.setdefault((cfg.x64, kind), []).append((check, c, arrays, hypers))
        done += len(cfgs)
    for (x64, kind), todo in jobs.items():
        with jax.enable_x64(x64):
            results = _run_on_one_mesh(kind, todo)
            dtypes = [tester.expected_jax_dtypes(check.contract, arrays, x64)
                      for check, _, arrays, _ in todo]
        for (check, c, arrays, hypers), outs, dts in zip(todo, results, dtypes, strict=True):
            want = tester.expected_values(check.contract, arrays, hypers)
            scale = tester.tolerance_scale(check.contract, arrays, hypers)
            where = f"zero_jax.{check.contract.name}[{c.label()}]"
            for i, (g, w, dt) in enumerate(zip(outs, want, dts, strict=True)):
                tester.compare(np.asarray(g), w, dt, f"{where} output {i}", scale)
    return done


def _run_on_one_mesh(kind: str, todo: list[tuple[Any, Any, dict, dict]]) -> list[tuple]:
    """Every job's function on its arguments placed on one 8-device mesh of ``kind``
    (``tester.run_jax``'s placements), all inside one jit."""
    import jax
    from jax.sharding import AxisType

    import zero_jax

    from . import tester

    ndev = len(jax.devices())
    mesh = jax.make_mesh((ndev,), ("batch",), axis_types=(
        AxisType.Auto if kind == "auto" else AxisType.Explicit,))

    def place(check: Any, cfg: Any, arrays: dict) -> list[Any]:
        where = tester.placements(check.contract, arrays, cfg.transform.removeprefix("sharded_"),
                                  mesh)
        # from NumPy: placing a JAX array would compile a reshard
        return [jax.device_put(np.asarray(arrays[n]), where[n]) for n in where]

    def every_call(placed: list[list[Any]]) -> list[tuple]:
        outs = []
        for (check, _, arrays, hypers), xs in zip(todo, placed, strict=True):
            got = iter(xs)
            args = {a.name: None if arrays.get(a.name) is None else next(got)
                    for a in check.contract.args}
            outs.append(tester.as_tuple(tester.call(zero_jax, check.contract, args, hypers)))
        return outs

    placed = [place(check, cfg, arrays) for check, cfg, arrays, _ in todo]
    with jax.set_mesh(mesh):
        return jax.jit(every_call)(placed)


def _bits(inputs: tuple[dict, dict]) -> tuple:
    """Hyper-parameters and arrays, bit for bit."""
    arrays, hypers = inputs
    return hypers, {k: None if x is None else (x.dtype, x.shape, x.tobytes())
                    for k, x in arrays.items()}


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
    from zero_contracts import CONTRACTS

    matrix = 5 * sum(len(sharded_cases(name)) for name in CONTRACTS)
    assert count >= matrix, stdout


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
        methods = ("segment_sum", "pairwise", "one_hot", "auto")
        # lone samples kept by verl's rule (singleton="raw"): group 0 keeps one sample;
        # rewards of groups of one, three rewards each, no mask
        raw = dict(baseline="leave_one_out", singleton="raw")
        lone = m4.copy()
        lone[0] = False
        lone[0, 0] = True
        ones = rng.normal(size=(4, 1, 3)).astype(np.float32)
        unsharded_raw = (zj.group_advantages(r4, lone, **raw),
                         zj.multi_reward_advantages(ones, **raw))

        def inner(ids, r, answers, m, logits, lmask, r4s, ones):  # every jitted case: one compile
            return (jax.vmap(zj.cluster_sizes)(ids),
                    zj.group_advantages(r, **zj.ADVANTAGE_PRESETS["rloo"]),
                    [zj.consensus(answers, 3, method=method) for method in methods],
                    zj.vote_metrics(answers, truth, 3, trained=3),
                    zj.group_advantages(r4, m, **rloo_batch),
                    jax.vmap(zj.self_certainty)(logits, lmask),
                    zj.group_advantages(r4s, lone, **raw),
                    zj.multi_reward_advantages(ones, **raw))

        for kind in (AxisType.Explicit, AxisType.Auto):
            mesh = jax.make_mesh((4,), ("a",), axis_types=(kind,), devices=jax.devices()[:4])
            with jax.set_mesh(mesh):
                put = lambda x, *spec: jax.device_put(x, NamedSharding(mesh, P(*spec)))
                # inside one jit:
                # - a vmap over groups sharded on the mesh, hashed cluster sizes inside
                # - a group's samples split over the devices: the leave-one-out baseline
                # - a row's K answers split over the devices, by every voting method,
                #   and the first 3 of them voted again (3 does not divide over 4 devices)
                # - the mask sharded, the rewards as the host gave them (float32 RLOO's
                #   two-sum scan, with a batch-wide scale)
                # - a vmap over groups whose rows (not the vmapped axis) are sharded
                # - lone samples: groups sharded, the mask as the host gave it or none
                got_sizes, got_loo, votes, metrics, adv, cert, lone_adv, ones_adv = jax.jit(
                    inner)(put(ids, "a"), put(r, None, "a"), put(answers, None, "a"),
                           put(m4, "a"), put(logits, None, "a"), put(lmask, None, "a"),
                           put(r4, "a"), put(ones, "a"))
                for got, want in zip((lone_adv, ones_adv), unsharded_raw, strict=True):
                    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6,
                                               atol=1e-6)
                assert np.array_equal(np.asarray(got_sizes), sizes), (x64, kind)
                np.testing.assert_allclose(np.asarray(got_loo), loo, rtol=1e-6, atol=1e-6)
                for method, (labels, share) in zip(methods, votes, strict=True):
                    assert np.array_equal(np.asarray(labels), counts.argmax(1)), (x64, kind,
                                                                                 method)
                    np.testing.assert_allclose(np.asarray(share), counts.max(1) / K)
                assert [float(x) for x in metrics] == [float(x) for x in unsharded[1]], (
                    x64, kind)
                np.testing.assert_allclose(np.asarray(adv), np.asarray(unsharded[0]), rtol=1e-6,
                                           atol=1e-6)  # a batch-wide sum, in another order
                np.testing.assert_allclose(np.asarray(cert), certainty, rtol=1e-6)
                # an eager vmap over groups sharded on the mesh
                got = jax.vmap(lambda p, i, v: zj.challenger_rewards(p, i, v, 0.5))(
                    put(p, "a"), put(ids, "a"), put(valid, "a"))
                want = np.maximum(0, 1 - 0.5 * sizes / B)
                np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
                done += 1
    print("inner-cases", done)
    """
)


def test_inner_axes_sharded_on_explicit_and_auto_meshes():
    """Sharded along the axis a reward reduces over (a vmapped group of arbitrary ids,
    the samples of a group, a row's answers): equal to NumPy, x64 off and on."""
    stdout = _on_eight_devices(INNER, 300)
    assert stdout.split("inner-cases")[-1].strip() == "4", stdout
