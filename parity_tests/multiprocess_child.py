"""One of the two ``jax.distributed`` processes of ``test_multiprocess.py``.

``python -m parity_tests.multiprocess_child PORT OUT.npz WHAT PROCESS_ID``: 2 CPU devices
in this process, gloo collectives, the coordinator on 127.0.0.1.  On a 4-device mesh
spanning both processes (Auto and Explicit axes, x64 off and on), WHAT ``step`` runs every
public function inside one user ``jit`` step on a global batch whose rows are split
between the processes (``jax.make_array_from_process_local_data``), gathers each output
(``multihost_utils.process_allgather``) and, in process 0, writes them to OUT.npz; WHAT
``reproducers`` runs every call-path reproducer on the same meshes (each raises on a
wrong answer).  Two runs, so that each test stays within the 30 s the issue allows.
"""

from __future__ import annotations

import sys
import time

import jax
import numpy as np


def main() -> None:
    port, out, what, process_id = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
    if what not in ("step", "reproducers"):
        raise SystemExit(f"WHAT must be step or reproducers, got {what!r}")
    jax.config.update("jax_num_cpu_devices", 2)
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    address = f"127.0.0.1:{port}"
    jax.distributed.initialize(
        coordinator_address=address, coordinator_bind_address=address, num_processes=2,
        process_id=process_id, initialization_timeout=60,
    )
    from jax.experimental import multihost_utils
    from jax.sharding import AxisType, NamedSharding, PartitionSpec

    import zero_jax
    from parity_tests import reproducers
    from parity_tests.multiprocess_cases import CASES, inputs

    assert jax.device_count() == 4 and jax.local_device_count() == 2, jax.devices()
    start = time.perf_counter()
    results: dict[str, np.ndarray] = {}
    ran = 0
    for x64 in (False, True):
        for kind in (AxisType.Auto, AxisType.Explicit):
            mesh = jax.make_mesh((4,), ("batch",), axis_types=(kind,))
            if what == "reproducers":
                ran += reproducers.run_all(("mesh",), x64, mesh)
                continue
            with jax.enable_x64(x64):
                calls, arguments = [], []
                for key in CASES:  # every function in ONE user step (one compile per mesh)
                    name, arrays, hypers, traced = inputs(key)
                    for a in arrays.values():
                        if a.ndim == 0 or a.shape[0] != 16:  # no batch axis: replicated
                            sharding, local = NamedSharding(mesh, PartitionSpec()), a
                        else:  # this process's rows of the global batch
                            half = a.shape[0] // 2
                            local = a[process_id * half:(process_id + 1) * half]
                            sharding = NamedSharding(mesh, PartitionSpec("batch"))
                        arguments.append(
                            jax.make_array_from_process_local_data(sharding, local, a.shape)
                        )
                    arguments += [np.asarray(hypers[h]) for h in sorted(traced)]
                    static = {k: v for k, v in hypers.items() if k not in traced}
                    calls.append((key, name, len(arrays), sorted(traced), static))

                def step(*xs, calls=calls):
                    outs, i = {}, 0
                    for key, name, count, traced, static in calls:
                        arrays, hs = xs[i:i + count], xs[i + count:i + count + len(traced)]
                        i += count + len(traced)
                        hs_by_name = dict(zip(traced, hs, strict=True))
                        out = getattr(zero_jax, name)(*arrays, **static, **hs_by_name)
                        outs[key] = out if isinstance(out, tuple) else (out,)
                    return outs

                with jax.set_mesh(mesh):
                    outs = jax.jit(step)(*arguments)
                flat = {f"{key}|x64={x64}|{kind.name}|{i}": o
                        for key, out in outs.items() for i, o in enumerate(out)}
                gathered = multihost_utils.process_allgather(flat, tiled=True)  # one gather
            results.update({k: np.asarray(v) for k, v in gathered.items()})
    if process_id == 0 and what == "step":
        np.savez(out, **results)
    multihost_utils.sync_global_devices("done")
    took = f"{time.perf_counter() - start:.1f}s"
    print("multiprocess-ok", len(results), "reproducers", ran, took)


if __name__ == "__main__":
    main()
