"""One backend per process: ``python -m bench.worker BACKEND`` serves timing commands
(JSON lines on stdin, answers as JSON lines on stdout), and
``python -m bench.worker rss BACKEND CASE_JSON`` measures the peak memory of one call
in a fresh process.

Backends: ``jax`` (zero_jax with x64 on, the contract dtypes; every call ends in
``block_until_ready``), ``jax_sync`` and ``jax_thp`` (the same with a user-side runtime
setting, :mod:`bench.limits`), ``torch`` (zero_torch eager), ``torch_compile``
(``torch.compile`` of the zero_torch functions, default settings) and ``numpy``
(:mod:`bench.numpy_impl`).  A case sent to ``jax`` with ``"pair_plain": true`` is timed
side by side with a plain ``jax.jit`` of the same math (:mod:`bench.overhead`,
:func:`measure_paired`); a logits case sent with ``"passes": true`` is timed side by side
with the reference passes over the same logits (:mod:`bench.logits`,
:func:`measure_side_by_side`; those of ``logits.AFTER`` after the others).  Inputs are
converted to the backend's arrays before timing and the NumPy originals dropped (a GiB
of logits is held once, not twice).  Only the public API of the library is used.
"""

from __future__ import annotations

import gc
import json
import os
import platform
import resource
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

import numpy as np

from bench import cases as C

BACKENDS = ("jax", "jax_sync", "jax_thp", "torch", "torch_compile", "numpy")
JAX_BACKENDS = ("jax", "jax_sync", "jax_thp")

#: The buffer this process builds the logits in (:class:`bench.cases.Arena`), and the
#: destination of the copy of as many bytes (``copy_bandwidth``): both allocated once.
ARENA, COPY_INTO = C.Arena(), C.Arena()

#: ``jax_sync`` is zero_jax with ``jax_cpu_enable_async_dispatch`` off (each call runs
#: on the calling thread instead of being handed to a runtime thread).
#: ``jax_thp`` is zero_jax in a process started with this environment: glibc then
#: asks for transparent huge pages for its large allocations (XLA's output buffers),
#: which the kernel here grants only on request (THP mode "madvise").
THP_ENV = {"GLIBC_TUNABLES": "glibc.malloc.hugetlb=1"}


class Backend:
    """Converts NumPy inputs and wraps a public function into a blocking call."""

    def __init__(self, name: str):
        self.name = name
        self.versions: dict[str, str] = {"numpy": np.__version__}
        self._compiled: dict[str, Callable[..., Any]] = {}
        if name in JAX_BACKENDS:
            import jax

            jax.config.update("jax_enable_x64", True)
            if name == "jax_sync":
                jax.config.update("jax_cpu_enable_async_dispatch", False)
            import zero_jax

            self.jax, self.lib = jax, zero_jax
            self.versions["jax"] = jax.__version__
            self.versions["jaxlib"] = getattr(sys.modules.get("jaxlib"), "__version__", "?")
        elif name in ("torch", "torch_compile"):
            import torch

            import zero_torch

            self.torch, self.lib = torch, zero_torch
            self.versions["torch"] = torch.__version__
            self.versions["torch_threads"] = str(torch.get_num_threads())
            if name == "torch_compile":
                dyn = torch._dynamo.config
                for attr in ("cache_size_limit", "recompile_limit"):
                    if hasattr(dyn, attr):
                        setattr(dyn, attr, 512)
                if hasattr(dyn, "accumulated_cache_size_limit"):
                    dyn.accumulated_cache_size_limit = 4096
                if hasattr(dyn, "accumulated_recompile_limit"):
                    dyn.accumulated_recompile_limit = 4096
        elif name == "numpy":
            from bench import numpy_impl

            self.lib = numpy_impl
        else:
            raise ValueError(f"unknown backend {name!r}")

    def convert(self, x: Any) -> Any:
        if not isinstance(x, np.ndarray):
            return x
        if self.name in JAX_BACKENDS:
            return self.jax.device_put(x)
        if self.name in ("torch", "torch_compile"):
            if x.dtype.name == "bfloat16":  # ml_dtypes' bfloat16: the same bits, no copy
                return self.torch.from_numpy(x.view(np.uint16)).view(self.torch.bfloat16)
            return self.torch.from_numpy(x)
        return x

    def function(self, fn: str) -> Callable[..., Any]:
        f = getattr(self.lib, fn)
        if self.name == "torch_compile":
            if fn not in self._compiled:
                self._compiled[fn] = self.torch.compile(f)
            return self._compiled[fn]
        return f

    def plain_call(
        self, case: C.Case, args: list[Any], kwargs: dict[str, Any], version: str = "plain"
    ) -> Callable[[], Any]:
        """A hand-written ``jax.jit`` of ``case``'s math (:mod:`bench.overhead`:
        ``version`` ``"plain"``, the same math, or ``"naive"``, the obvious formula) as a
        blocking call; JAX backends only.  ``args`` may be the very arrays a public call
        uses (already on the device), so that a paired timing reads the same buffers."""
        if self.name not in JAX_BACKENDS:
            raise ValueError(f"no plain jit for backend {self.name!r}")
        from bench import overhead

        f = {"plain": overhead.plain, "naive": overhead.naive}[version](case.fn)
        a = [self.convert(x) for x in args]
        block = self.jax.block_until_ready
        return lambda: block(f(*a, **kwargs))

    def call(self, case: C.Case, args: list[Any], kwargs: dict[str, Any]) -> Callable[[], Any]:
        f = self.function(case.fn)
        a = [self.convert(x) for x in args]
        if self.name in JAX_BACKENDS:
            block = self.jax.block_until_ready
            return lambda: block(f(*a, **kwargs))
        return lambda: f(*a, **kwargs)


def _timed(call: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    call()
    return max(time.perf_counter() - t0, 1e-7)


def _sized(call: Callable[[], Any], target_s: float) -> float:
    """A warm call, then the time of one steady call that sizes the loops: the warm
    call's own time when it alone is longer than a loop (a second-long call is not made
    twice to learn that its loops hold one call), else one more call's."""
    warm = _timed(call)
    return warm if warm >= target_s else _timed(call)


#: A steady call at least this long (s) is timed in one loop per round, not ``repeats``:
#: the torch twin on a GiB of logits takes seconds per call, and its ratio to JAX is
#: read from the rounds' samples.
SLOW_S = 1.0


def measure(call: Callable[[], Any], repeats: int, target_s: float) -> dict[str, Any]:
    """First call (trace/compile + run), then ``repeats`` timed loops of steady calls
    (one loop of one call when a call takes :data:`SLOW_S` or longer)."""
    t0 = time.perf_counter()
    call()
    first = time.perf_counter() - t0
    one = _sized(call, target_s)
    if one >= SLOW_S:
        repeats = 1
    inner = max(1, min(200_000, int(target_s / one)))
    samples = []
    faults0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    gc.disable()
    try:
        for _ in range(repeats):
            t0 = time.perf_counter()
            for _ in range(inner):
                call()
            samples.append((time.perf_counter() - t0) / inner)
    finally:
        gc.enable()
    faults = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults0) / (repeats * inner)
    return {"first_s": first, "samples_s": samples, "inner": inner, "faults_per_call": faults}


def measure_side_by_side(
    calls: dict[str, Callable[[], Any]],
    repeats: int,
    target_s: float,
    inner: int | None = None,
) -> dict[str, dict[str, Any]]:
    """The ``calls`` timed side by side: each one's first call and a warm one, then
    ``repeats`` rounds of one timed loop each, all loops of ``inner`` calls (default: as
    many as fill a loop of the first name's, sized as in :func:`_sized`), the order
    rotating from round to round (AB, BA, ... for two) so that a drift of the machine
    falls on all; per name, a measurement as :func:`measure`'s."""
    names = list(calls)
    out: dict[str, dict[str, Any]] = {}
    warm = 0.0
    for name in names:
        t0 = time.perf_counter()
        calls[name]()
        out[name] = {"first_s": time.perf_counter() - t0}
        t0 = time.perf_counter()
        calls[name]()
        warm = warm or time.perf_counter() - t0  # the first name's
    if inner is None:
        one = warm if warm >= target_s else _timed(calls[names[0]])
        inner = max(1, min(200_000, int(target_s / one)))
    samples: dict[str, list[float]] = {name: [] for name in names}
    faults = dict.fromkeys(names, 0)
    gc.disable()
    try:
        for i in range(repeats):
            shift = i % len(names)
            for name in names[shift:] + names[:shift]:
                f = calls[name]
                f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
                t0 = time.perf_counter()
                for _ in range(inner):
                    f()
                samples[name].append((time.perf_counter() - t0) / inner)
                faults[name] += resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0
    finally:
        gc.enable()
    for name in names:
        out[name].update(
            samples_s=samples[name],
            inner=inner,
            faults_per_call=faults[name] / (repeats * inner),
        )
    return out


def measure_paired(
    call: Callable[[], Any],
    plain: Callable[[], Any],
    repeats: int,
    target_s: float,
    naive: Callable[[], Any] | None = None,
) -> dict[str, Any]:
    """``call`` and ``plain`` (and ``naive`` when given) timed side by side
    (:func:`measure_side_by_side`): after the first calls, ``repeats`` rounds of timed
    loops of the same length, the order rotating (AB, BA, ... or ABC, BCA, CAB, ...);
    returns ``call``'s measurement with ``plain``'s in ``"plain"`` and the per-round
    ratios ``call / plain`` in ``"pair_ratios"`` (``naive``'s in ``"naive"`` and
    ``"naive_ratios"``)."""
    calls = {"call": call, "plain": plain} | ({"naive": naive} if naive else {})
    out = measure_side_by_side(calls, repeats, target_s)
    result = out["call"]
    for name, key in (("plain", "pair_ratios"), ("naive", "naive_ratios")):
        if name in out:
            result[name] = out[name]
            pairs = zip(result["samples_s"], out[name]["samples_s"], strict=True)
            result[key] = [a / b for a, b in pairs]
    return result


def run_cases(backend: Backend, specs: list[dict], repeats: int, target_s: float, send) -> None:
    """Time each case; a spec with ``"pair_plain": true`` (backend ``jax``) is timed
    side by side with a plain jit of the same math and the naive formula
    (:func:`measure_paired`)."""
    for spec in specs:
        case = C.Case.from_json(spec)
        result: dict[str, Any] = {"key": case.key}
        try:
            args, kwargs = C.build(case, ARENA)
            # one set of buffers for every call (and the plain jit or the passes); the
            # NumPy originals are dropped where the backend copied them
            args = [backend.convert(x) for x in args]
            call = backend.call(case, args, kwargs)
            if spec.get("pair_plain"):
                # 10x the pairs of 1/10 the length: the same time as two backends'
                # loops, and a median of ratios that a few disturbed loops cannot move
                plain = backend.plain_call(case, args, kwargs)
                naive = backend.plain_call(case, args, kwargs, "naive")
                result.update(measure_paired(call, plain, 10 * repeats, target_s / 10, naive))
            elif spec.get("passes"):
                result.update(measure_with_passes(backend, case, call, args, repeats, target_s))
            else:
                result.update(measure(call, repeats, target_s))
        except Exception as e:  # noqa: BLE001 - reported in the table, the run goes on
            result["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
            traceback.print_exc(file=sys.stderr)
        finally:
            call = plain = naive = args = kwargs = None
            gc.collect()
        send({"event": "case", "result": result})


def measure_with_passes(
    backend: Backend,
    case: C.Case,
    call: Callable[[], Any],
    args: list[Any],
    repeats: int,
    target_s: float,
) -> dict[str, Any]:
    """A logits case's public call side by side with the reference passes over the same
    device buffers (:mod:`bench.logits`; the passes of ``logits.AFTER`` timed after the
    others, side by side among themselves); returns the call's measurement with the
    passes' in ``"passes"`` (name -> measurement)."""
    if backend.name not in JAX_BACKENDS:
        raise ValueError(f"no reference passes for backend {backend.name!r}")
    from bench import logits

    block = backend.jax.block_until_ready
    calls: dict[str, Callable[[], Any]] = {"call": call}
    for name, f in logits.passes(case.fn).items():
        calls[name] = lambda f=f: block(f(*args))
    after = {name: calls.pop(name) for name in logits.AFTER}
    out = measure_side_by_side(calls, repeats, target_s)
    out.update(measure_side_by_side(after, repeats, target_s, out["call"]["inner"]))
    result = out.pop("call")
    result["passes"] = out
    return result


def dispatch(backend: Backend, repeats: int, target_s: float) -> dict[str, Any]:
    """Median time per eager call at B = 8, inputs already in the backend's arrays."""
    out: dict[str, Any] = {}
    for case in C.dispatch_cases():
        try:
            args, kwargs = C.build(case)
            m = measure(backend.call(case, args, kwargs), repeats, target_s)
            out[case.family] = float(np.median(m["samples_s"]))
        except Exception as e:  # noqa: BLE001
            out[case.family] = f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
    if backend.name in JAX_BACKENDS:
        out.update(_jax_dispatch_parts(backend, repeats, target_s))
    return out


def _jax_dispatch_parts(backend: Backend, repeats: int, target_s: float) -> dict[str, Any]:
    """Where an eager JAX call's time goes: a plain jitted function of the same shape
    (no validation) and ``block_until_ready`` of a ready array."""
    jax = backend.jax
    jnp = jax.numpy

    p = jax.device_put(np.full(8, 0.25, np.float32))
    plain = jax.jit(lambda x: 1 - 2 * jnp.abs(x - 0.5))

    def time_of(f):
        return float(np.median(measure(f, repeats, target_s)["samples_s"]))

    return {
        "_plain_jit_call": time_of(lambda: plain(p).block_until_ready()),
        "_block_until_ready": time_of(lambda: p.block_until_ready()),
    }


def copy_bandwidth(
    repeats: int, target_s: float, size: int = C.BIG, logits_bytes: int = 0
) -> dict[str, Any]:
    """NumPy copy of ``size`` float32 into a preallocated buffer, and an allocating copy;
    bandwidth counts bytes read + written (2 x the array).  With ``logits_bytes``, also
    the copy of that many bytes into a preallocated buffer (``"logits"``: the reference
    read rate of the logits rows, bytes copied / time; both buffers are kept for the
    process, :data:`ARENA` and :data:`COPY_INTO`, their pages touched before timing)."""
    src = np.random.default_rng(0).random(size, np.float32)
    dst = np.empty_like(src)
    pre = measure(lambda: np.copyto(dst, src), repeats, target_s)["samples_s"]
    alloc = measure(lambda: src.copy(), repeats, target_s)["samples_s"]
    nbytes = 2 * src.nbytes
    out: dict[str, Any] = {"bytes": nbytes, "prealloc_s": pre, "alloc_s": alloc}
    src = dst = None  # freed before the large copy
    if logits_bytes:
        # the arena the logits rows are built in, and a second buffer kept for the copy
        big = ARENA.empty((logits_bytes // 4,), np.float32)
        into = COPY_INTO.empty(big.shape, np.float32)
        out["logits"] = {
            "bytes": big.nbytes,
            "prealloc_s": measure(lambda: np.copyto(into, big), repeats, target_s)["samples_s"],
        }
        big = into = None
    return out


def status() -> dict[str, Any]:
    """This process's peak and current resident memory, MiB."""
    return {"peak_MiB": _status_kib("VmHWM") / 1024, "rss_MiB": _status_kib("VmRSS") / 1024}


def serve(name: str) -> None:
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # library chatter goes to stderr, the protocol keeps stdout
    sys.stdout = sys.stderr

    def send(msg: dict[str, Any]) -> None:
        proto.write(json.dumps(msg) + "\n")
        proto.flush()

    backend = Backend(name)
    send({"event": "ready", "versions": backend.versions, "pid": os.getpid()})
    for line in sys.stdin:
        cmd = json.loads(line)
        kind = cmd["cmd"]
        if kind == "quit":
            break
        if kind == "run":
            run_cases(backend, cmd["cases"], cmd["repeats"], cmd["target_s"], send)
            send({"event": "done"})
        elif kind == "dispatch":
            send(
                {"event": "dispatch", "result": dispatch(backend, cmd["repeats"], cmd["target_s"])}
            )
        elif kind == "copy":
            res = copy_bandwidth(
                cmd["repeats"], cmd["target_s"], logits_bytes=cmd.get("logits_bytes", 0)
            )
            send({"event": "copy", "result": res})
        elif kind == "status":
            send({"event": "status", "result": status()})
        else:
            send({"event": "error", "message": f"unknown command {kind!r}"})


# ----------------------------------------------------------------------------- rss


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


def _reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def rss(name: str, case: C.Case) -> dict[str, Any]:
    """Peak resident memory of one steady call of ``case`` (the votes over large
    alphabets, the logits reductions), measured as VmHWM after resetting it, minus VmRSS
    just before the call (the inputs, already in the backend's arrays, are not counted)."""
    fn = case.fn
    args, kwargs = C.build(case, C.Arena())  # aligned: jax.device_put aliases the logits
    input_mib = sum(x.nbytes for x in args if isinstance(x, np.ndarray)) / 2**20
    backend = Backend(name)
    if name == "jax":
        jax = backend.jax
        f = backend.function(fn)
        arrays = [backend.convert(x) for x in args if isinstance(x, np.ndarray)]
        rest = [x for x in args if not isinstance(x, np.ndarray)]
        args = []
        t0 = time.perf_counter()
        compiled = jax.jit(lambda *xs: f(*xs, *rest, **kwargs)).lower(*arrays).compile()
        compile_s = time.perf_counter() - t0

        def call():
            return jax.block_until_ready(compiled(*arrays))
    else:
        small = C.build(C.BENCHES[fn].dispatch[0])
        backend.call(case, *small)()  # load the kernels
        args = [backend.convert(x) for x in args]
        call = backend.call(case, args, kwargs)
        compile_s = 0.0
    gc.collect()
    ok = _reset_peak()
    before = _status_kib("VmRSS")
    t0 = time.perf_counter()
    out = call()
    first = time.perf_counter() - t0
    peak = _status_kib("VmHWM")
    del out
    t0 = time.perf_counter()
    call()
    second = time.perf_counter() - t0
    return {
        "backend": name,
        **case.to_json(),
        "key": case.key,
        "variant": case.variant,
        "rss_before_MiB": before / 1024,
        "peak_MiB": peak / 1024,
        "extra_MiB": (peak - before) / 1024 if ok else None,
        "call_s": min(first, second),
        "compile_s": compile_s,
        "peak_reset": ok,
        "input_MiB": input_mib,
        "python": platform.python_version(),
    }


def main(argv: list[str]) -> None:
    if argv and argv[0] == "rss":
        name, spec = argv[1], json.loads(argv[2])
        try:
            res = rss(name, C.Case.from_json(spec))
        except Exception as e:  # noqa: BLE001
            res = {"backend": name, **spec, "error": repr(e)[:300]}
        print(json.dumps(res))
        return
    if len(argv) != 1 or argv[0] not in BACKENDS:
        raise SystemExit(f"usage: python -m bench.worker {{{','.join(BACKENDS)}}}")
    serve(argv[0])


if __name__ == "__main__":
    main(sys.argv[1:])
