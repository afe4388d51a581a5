"""One backend per process: ``python -m bench`` runs each backend in a one-process pool
(JAX and torch in one process distort each other's timings on a small machine).

Backends: ``jax`` (``zero_jax`` called eagerly, x64 on so that the outputs have the
dtypes torch returns; every call ends in ``block_until_ready``), which also times
``jax_jit`` (the same call traced inside a user's ``jax.jit``, as in a training step)
side by side on the same buffers; ``jax_sync`` (the eager call with
``jax_cpu_enable_async_dispatch`` off, a process-wide setting of the user); ``torch``
(``zero_torch``, eager); ``torch_compile`` (``torch.compile`` of the same functions,
default settings); ``numpy`` (the tests' oracle, ``parity_tests/cases.py``).
"""

from __future__ import annotations

import gc
import os
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

import numpy as np

from bench import grid

BACKENDS = ("jax", "jax_sync", "torch", "torch_compile", "numpy")
#: A steady call this long (s) or longer is timed once per round (no loop).
SLOW_S = 0.5
# torch's OpenMP threads wait passively (OMP_WAIT_POLICY=PASSIVE, set before torch loads):
# with the default policy on a shared 2-core machine (load average 9.7), ``consensus`` at
# B = 64 took 2.7-127 ms per call against 0.1 ms passively (bench/README.md).

NAME = ""
LIB: Any = None
COMPILED: dict[str, Callable[..., Any]] = {}


def start(name: str) -> None:
    """Pool initializer: import and configure the backend ``name`` in this process."""
    global NAME, LIB
    NAME = name
    if name.startswith("jax"):
        import jax

        jax.config.update("jax_enable_x64", True)
        if name == "jax_sync":
            jax.config.update("jax_cpu_enable_async_dispatch", False)
        import zero_jax as LIB
    elif name.startswith("torch"):
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # see the note above start()
        import zero_torch as LIB
    else:
        import parity_tests.cases as LIB


def versions() -> dict[str, str]:
    mods = ("numpy", "jax", "jaxlib", "torch")
    out = {m: sys.modules[m].__version__ for m in mods if m in sys.modules}
    if "torch" in sys.modules:
        out["torch_threads"] = str(sys.modules["torch"].get_num_threads())
    return out


def calls(case: grid.Case) -> dict[str, Callable[[], Any]]:
    """The timed calls of ``case`` in this backend, inputs already in its arrays."""
    args, kwargs = grid.build(case)
    f = getattr(LIB, case.fn)
    if NAME.startswith("jax"):
        import jax

        a = [jax.device_put(x) if isinstance(x, np.ndarray) else x for x in args]
        out = {NAME: lambda: jax.block_until_ready(f(*a, **kwargs))}
        if NAME == "jax":
            where = [i for i, x in enumerate(a) if isinstance(x, jax.Array)]
            rest = [None if i in where else x for i, x in enumerate(a)]

            def step(*xs: Any) -> Any:
                full = list(rest)
                for i, x in zip(where, xs, strict=True):
                    full[i] = x
                return f(*full, **kwargs)

            # one jit per case for the whole run (a later round's first call is warm)
            jitted, xs = COMPILED.setdefault(case.key, jax.jit(step)), [a[i] for i in where]
            out["jax_jit"] = lambda: jax.block_until_ready(jitted(*xs))
        return out
    if NAME.startswith("torch"):
        import torch

        def tensor(x: Any) -> Any:
            if not isinstance(x, np.ndarray):
                return x
            if x.dtype.name == "bfloat16":  # the same bits, no copy
                return torch.from_numpy(x.view(np.uint16)).view(torch.bfloat16)
            return torch.from_numpy(x)

        a = [tensor(x) for x in args]
        if NAME == "torch_compile":
            f = COMPILED.setdefault(case.fn, torch.compile(f))
        return {NAME: lambda: f(*a, **kwargs)}
    return {NAME: lambda: f(*args, **kwargs)}


def measure(
    named: dict[str, Callable[[], Any]], repeats: int, target_s: float, warm: bool = False
) -> dict[str, dict[str, Any]]:
    """Each call's first call (trace, compile) and a warm one (``warm``: the calls ran in
    an earlier round, so the first call is the warm one), then ``repeats`` loops of about
    ``target_s`` each, the calls' loops interleaved in a rotating order; a sample is a
    loop's time per call.  A call of :data:`SLOW_S` or more is timed once (its warm call)."""
    out: dict[str, dict[str, Any]] = {}
    inner = {}
    for name, f in named.items():
        t0 = time.perf_counter()
        f()
        t1 = time.perf_counter()
        if not warm:
            f()
        one = time.perf_counter() - (t0 if warm else t1)
        out[name] = {"first_s": t1 - t0, "samples": [one] if one >= SLOW_S else []}
        inner[name] = max(1, min(100_000, int(target_s / max(one, 1e-7))))
    names = [n for n in named if not out[n]["samples"]]
    gc.disable()
    try:
        for r in range(repeats):
            for name in names[r % max(len(names), 1) :] + names[: r % max(len(names), 1)]:
                f, n = named[name], inner[name]
                t0 = time.perf_counter()
                for _ in range(n):
                    f()
                out[name]["samples"].append((time.perf_counter() - t0) / n)
    finally:
        gc.enable()
    return out


def run(keys: list[str], quick: bool, repeats: int, target_s: float,
        warm: bool = False) -> list[dict[str, Any]]:
    """Time the cases ``keys`` (of :func:`bench.grid.cases`) in this process's backend."""
    by_key = {c.key: c for c in grid.cases(quick)}
    results = []
    for key in keys:
        try:
            results.append({"key": key, **measure(calls(by_key[key]), repeats, target_s, warm)})
        except Exception as e:  # noqa: BLE001 - reported in the results, the run goes on
            traceback.print_exc()
            results.append({"key": key, "error": f"{type(e).__name__}: {str(e)[:200]}"})
        gc.collect()
    return results
