"""The logits rows' limits: what one pass over the same logits costs on this machine.

``self_certainty`` and ``token_entropy`` reduce ``[B, T, V]`` logits to ``[B]``: the
work is reading the logits and one exponential per logit.  Beside each such row the
``jax`` worker times, side by side with the public call on the same device buffers
(:func:`bench.worker.measure_side_by_side`):

- ``max_pass``: a jitted ``max`` over V, reading the logits once and doing nothing
  else (what a read-only pass over them costs);
- ``exp_pass``: a jitted ``sum(exp(x))`` over V (in float32 for half-precision
  logits, as the library computes): one read and one exponential per logit, the least
  work any kernel that evaluates ``exp`` once per logit can do;
- ``plain_jit``: the obvious jitted formula a user would write
  (``jax.nn.logsumexp(x) - mean(x)``; ``-sum(softmax(x) * log_softmax(x))``) with the
  masked mean over T, for comparison with the library's kernel.

``max_pass`` and ``exp_pass`` are timed side by side with the public call (the order
rotating, so a drift of the machine falls on all); ``plain_jit`` is timed after them, in
loops of its own (:data:`AFTER`).  On half-precision logits it materialises the float32
logits, a GiB page-faulted and unmapped on every call, and in the rotation it always ran
just before the public call: that call's median rose from 103 to 144 ms (bfloat16
self_certainty, this machine), and the exp pass's from 84 to 104 ms.

The numpy worker also copies as many bytes as the largest logits of the grid into a
preallocated buffer (:func:`bench.worker.copy_bandwidth`): bytes copied / time is the
read rate the logits rows are compared with.  ``parity_tests/test_bench_logits.py``
checks the passes' values against NumPy and ``plain_jit`` against the public call.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

__all__ = ["AFTER", "PASSES", "passes"]

#: The reference passes, in report order, with what each measures.
PASSES = {
    "max_pass": "jitted max over V (one read of the logits, no exponential)",
    "exp_pass": "jitted sum(exp(x)) over V (one read, one exponential per logit)",
    "plain_jit": "the obvious jitted formula with the masked mean (no validation)",
}

#: The passes timed after the side-by-side loops of the others (they disturb the call
#: timed next: see the module docstring).
AFTER = ("plain_jit",)


@functools.cache
def passes(fn: str) -> dict[str, Callable[..., Any]]:
    """The jitted passes beside ``fn`` (a logits reduction), each called as
    ``f(logits, mask)`` (imports JAX on first use; one jit object each per process)."""
    import jax
    import jax.numpy as jnp

    def wide(x: Any) -> Any:
        return x if x.dtype == jnp.float64 else x.astype(jnp.float32)

    def max_pass(logits: Any, mask: Any) -> Any:
        return jnp.max(logits, axis=-1)

    def exp_pass(logits: Any, mask: Any) -> Any:
        return jnp.sum(jnp.exp(wide(logits)), axis=-1)

    def masked_mean(per_token: Any, mask: Any, dtype: Any) -> Any:
        m = mask.astype(per_token.dtype)
        total = jnp.sum(per_token * m, axis=-1)
        return (total / jnp.maximum(jnp.sum(m, axis=-1), 1)).astype(dtype)

    def self_certainty(logits: Any, mask: Any) -> Any:
        x = wide(logits)
        per_token = jax.nn.logsumexp(x, axis=-1) - jnp.mean(x, axis=-1)
        return masked_mean(per_token, mask, logits.dtype)

    def token_entropy(logits: Any, mask: Any) -> Any:
        log_p = jax.nn.log_softmax(wide(logits), axis=-1)
        per_token = -jnp.sum(jnp.exp(log_p) * log_p, axis=-1)
        return masked_mean(per_token, mask, logits.dtype)

    plain = {"self_certainty": self_certainty, "token_entropy": token_entropy}
    if fn not in plain:
        raise ValueError(f"{fn!r} is not a logits reduction")
    return {
        "max_pass": jax.jit(max_pass),
        "exp_pass": jax.jit(exp_pass),
        "plain_jit": jax.jit(plain[fn]),
    }
