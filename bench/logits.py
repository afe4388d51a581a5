"""The logits reductions against what one pass over the same logits costs here.

``self_certainty`` and ``token_entropy`` reduce ``[B, T, V]`` logits to ``[B]``: the work
is reading the logits and one exponential per logit.  In the ``jax`` worker, side by side
(interleaved loops, :func:`bench.worker.measure`) on the same buffers:

- ``call``: the public ``zero_jax`` call;
- ``exp_pass``: a jitted ``sum(exp(x))`` over V (in float32 for bfloat16 logits, as the
  library computes): one read and one exponential per logit, the least work of any kernel
  that evaluates each exponential once;
- ``copy``: a NumPy copy of the logits' bytes into a preallocated buffer: bytes / time is
  the read rate of this machine's memory, the ceiling for any pass.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bench import grid, worker


def compare(key: str, quick: bool, repeats: int, target_s: float,
            warm: bool = False) -> dict[str, Any]:
    """Run in the ``jax`` worker: the three timings of the logits case ``key``."""
    import jax
    import jax.numpy as jnp

    case = next(c for c in grid.cases(quick) if c.key == key)
    (x, mask), _ = grid.build(case)
    into = np.empty_like(x)
    into.fill(0)  # touch the destination's pages before timing
    dx, dmask = jax.device_put(x), jax.device_put(mask)
    f = getattr(worker.LIB, case.fn)
    exp_pass = worker.COMPILED.setdefault("exp_pass", jax.jit(
        lambda v: jnp.sum(jnp.exp(v.astype(jnp.float32)), axis=-1)))
    calls = {
        "call": lambda: jax.block_until_ready(f(dx, dmask)),
        "exp_pass": lambda: jax.block_until_ready(exp_pass(dx)),
        "copy": lambda: np.copyto(into, x),
    }
    return {"key": key, "bytes": x.nbytes, **worker.measure(calls, repeats, target_s, warm)}
