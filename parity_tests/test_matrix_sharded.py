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
            for kind in ("sharded_explicit", "sharded_auto"):
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


def test_matrix_sharded_on_explicit_and_auto_meshes():
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8")
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=root, env=env, capture_output=True, text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-4000:]
    count = int(out.stdout.split("sharded-cases")[-1])
    assert count >= 2 * 13, out.stdout
