"""The bench's logits rows (``bench/logits.py``, ``bench/cases.py``): the reference passes
compute what they are named for and the plain jit what the public call computes, on the
bench's own inputs; the logits are built in a reusable page-aligned buffer that JAX
aliases; every backend gets the same bfloat16 bits; the side-by-side timing rotates its
loops.  No timing thresholds."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
import torch

import zero_jax
from bench import cases as C
from bench import logits, worker

SMALL = [C.Case(fn, 3, T=40, V=300, kind=k) for fn in C.LOGITS_FUNCTIONS for k in C.LOGITS_DTYPES]


def test_the_grid_has_the_issue_shape_in_both_dtypes():
    full = [c for c in C.full_grid() if C.is_logits(c)]
    assert {(c.fn, c.kind) for c in full} == {
        (fn, k) for fn in C.LOGITS_FUNCTIONS for k in ("float32", "bfloat16")
    }
    assert all((c.B, c.T, c.V) == C.LOGITS_SHAPE == (8, 1024, 32768) for c in full)
    big = C.Case("self_certainty", 8, T=1024, V=32768, kind="float32")
    assert C.logits_nbytes(big) == 2**30
    assert C.logits_nbytes(C.Case("token_entropy", 8, T=1024, V=32768, kind="bfloat16")) == 2**29
    # the quick grid holds small logits of every function and dtype
    quick = [c for c in C.quick_grid() if C.is_logits(c)]
    assert len(quick) == 4 and all(C.logits_nbytes(c) <= 2**23 for c in quick)


@pytest.mark.parametrize("case", SMALL, ids=lambda c: c.key)
def test_inputs_masks_and_reference_passes(case):
    x, mask = C.build(case)[0]
    assert x.shape == (3, 40, 300) and x.dtype.name == case.kind and mask.dtype == bool
    assert 0.6 < mask.mean() < 0.95 and np.isfinite(x.astype(np.float32)).all()
    wide = x.astype(np.float32)
    jx, jm = jnp.asarray(x), jnp.asarray(mask)
    ps = logits.passes(case.fn)
    assert list(ps) == list(logits.PASSES)
    np.testing.assert_array_equal(
        np.asarray(ps["max_pass"](jx, jm)).astype(np.float32), wide.max(-1)
    )
    np.testing.assert_allclose(ps["exp_pass"](jx, jm), np.exp(wide).sum(-1), rtol=1e-5)
    # the plain jit is the public call's math (x64 on, as in the bench)
    want = getattr(zero_jax, case.fn)(jx, jm)
    got = ps["plain_jit"](jx, jm)
    assert got.dtype == want.dtype == x.dtype
    tol = 1e-5 if case.kind == "float32" else 2**-7
    np.testing.assert_allclose(
        np.asarray(got, np.float32), np.asarray(want, np.float32), rtol=tol, atol=tol
    )
    with pytest.raises(ValueError, match="not a logits reduction"):
        logits.passes("uncertainty_reward")


def test_arena_reuses_one_aligned_buffer_that_jax_aliases():
    arena = C.Arena()
    case = C.Case("self_certainty", 2, T=16, V=64, kind="float32")
    (x, _), _ = C.build(case, arena)
    assert x.ctypes.data % C.Arena.ALIGN == 0 and arena.nbytes >= x.nbytes
    np.testing.assert_array_equal(x, C.build(case)[0][0])  # the same values without it
    first = arena.nbytes
    (y, _), _ = C.build(C.Case("token_entropy", 2, T=16, V=64, kind="bfloat16"), arena)
    assert y.ctypes.data == x.ctypes.data and arena.nbytes == first  # smaller: reused
    assert jax.device_put(y).unsafe_buffer_pointer() == y.ctypes.data  # no copy
    z = arena.empty((4, first), np.float32)  # larger: a new buffer
    assert arena.nbytes >= z.nbytes > first


def test_backends_get_the_same_bfloat16_bits():
    (x, mask), _ = C.build(C.Case("self_certainty", 2, T=8, V=32, kind="bfloat16"))
    t = worker.Backend("torch").convert(x)
    assert t.dtype == torch.bfloat16 and t.data_ptr() == x.ctypes.data  # no copy
    np.testing.assert_array_equal(t.float().numpy(), x.astype(np.float32))
    assert worker.Backend("numpy").convert(x) is x


def test_run_cases_times_the_passes_beside_the_public_call():
    sent = []
    case = C.Case("token_entropy", 2, T=8, V=64, kind="bfloat16")
    backend = worker.Backend("jax")
    worker.run_cases(backend, [{**case.to_json(), "passes": True}], 2, 1e-4, sent.append)
    (msg,) = sent
    res = msg["result"]
    assert "error" not in res and len(res["samples_s"]) == 2
    assert set(res["passes"]) == set(logits.PASSES)
    assert all(
        len(m["samples_s"]) == 2 and m["inner"] == res["inner"] for m in res["passes"].values()
    )
    # and the torch backend refuses them (they are JAX passes)
    sent.clear()
    worker.run_cases(
        worker.Backend("torch"), [{**case.to_json(), "passes": True}], 1, 1e-4, sent.append
    )
    assert "no reference passes" in sent[0]["result"]["error"]


def test_the_passes_that_disturb_the_next_call_run_after_the_others(monkeypatch):
    """``plain_jit`` page-faults a float32 copy of half-precision logits on every call;
    timed in the rotation it always ran just before the public call.  It is timed after
    the side-by-side loops of the call and the other passes, in loops as long."""
    log: list[str] = []
    real = logits.passes("self_certainty")

    def logged(name):
        def f(*args):
            log.append(name)
            return real[name](*args)

        return f

    monkeypatch.setattr(logits, "passes", lambda fn: {n: logged(n) for n in logits.PASSES})
    backend = worker.Backend("jax")
    case = C.Case("self_certainty", 2, T=8, V=64, kind="bfloat16")
    args = [backend.convert(x) for x in C.build(case)[0]]
    public = backend.call(case, args, {})
    res = worker.measure_with_passes(
        backend, case, lambda: (log.append("call"), public())[1], args, 3, 1e-4
    )
    assert logits.AFTER == ("plain_jit",)
    first_plain = log.index("plain_jit")
    assert "plain_jit" not in log[:first_plain] and set(log[first_plain:]) == {"plain_jit"}
    # its first and warm calls, then 3 loops as long as the call's (no sizing call)
    assert res["passes"]["plain_jit"]["inner"] == res["inner"]
    assert log.count("plain_jit") == 2 + 3 * res["inner"]
    assert set(res["passes"]) == set(logits.PASSES)


def test_side_by_side_rotates_the_loops():
    log: list[str] = []
    calls = {name: (lambda n=name: log.append(n)) for name in "abc"}
    out = worker.measure_side_by_side(calls, 3, 1e-4)
    inner = out["a"]["inner"]
    assert log[:7] == ["a", "a", "b", "b", "c", "c", "a"]  # two first calls each, sizing
    loops = [log[7 + i * inner] for i in range(9)]
    assert loops == ["a", "b", "c", "b", "c", "a", "c", "a", "b"]
    assert all(len(m["samples_s"]) == 3 and m["inner"] == inner for m in out.values())


def test_copy_of_the_logits_bytes_and_peak_memory_of_a_logits_case():
    res = worker.copy_bandwidth(1, 1e-4, size=1024, logits_bytes=2**20)
    assert res["logits"]["bytes"] == 2**20 and len(res["logits"]["prealloc_s"]) == 1
    assert "logits" not in worker.copy_bandwidth(1, 1e-4, size=1024)
    m = worker.rss("numpy", C.Case("self_certainty", 2, T=16, V=64, kind="float32"))
    assert m["key"] == "self_certainty[float32,T=16,V=64]@B=2" and m["variant"].startswith(
        "float32"
    )
    assert m["input_MiB"] == pytest.approx((2 * 16 * 64 * 4 + 2 * 16) / 2**20)
    assert m["call_s"] > 0 and m["peak_MiB"] > 0


def test_numpy_bfloat16_dtype_is_ml_dtypes():
    # the builders hand ml_dtypes' bfloat16 to every backend (JAX reads it natively)
    (x, _), _ = C.build(C.Case("self_certainty", 1, T=2, V=8, kind="bfloat16"))
    assert x.dtype == np.dtype(ml_dtypes.bfloat16)
