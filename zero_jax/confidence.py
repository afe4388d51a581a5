"""Label-free rewards from a policy's own logits: Intuitor's self-certainty and the
mean token entropy of EM-RL / RENT.

From *Learning to Reason without External Rewards* (Zhao et al., 2025,
https://arxiv.org/abs/2505.19590) and *The Unreasonable Effectiveness of Entropy
Minimization in LLM Reasoning* (Agarwal et al., 2025, https://arxiv.org/abs/2505.15134).
Both reduce ``[B, T, V]`` logits to one number per response in the torch twin's
cancellation-free forms, reading the logits in fused passes: self-certainty in one
(the exponentials summed unshifted beside the mean, with a max-shifted fallback), the
entropy in four (the max, the sum below it, the full sum, the spread); half precision
is accumulated in float32. Memory: float32 and float64 logits need no temporary
of their size; for half precision XLA on the CPU fuses the conversion to float32 into
the passes at many shapes (bfloat16 ``[8, 1024, 32768]``) and at others materialises it
once (float16, or bfloat16 with a small batch): at most one float32 copy of the logits,
never a shifted or exponentiated one (``parity_tests/test_logits_memory.py``).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from jax import lax

from zero_jax import _checks as _c
from zero_jax.primitives import mean_kept

__all__ = ["self_certainty", "token_entropy"]


def _after(value: jax.Array, reduced: jax.Array) -> jax.Array:
    """``value``, made to depend on the reduction ``reduced`` (``+ 0 * reduced``; 0 for
    finite values, and NaN only where ``reduced`` already is).  Two sums of the same
    logits that do not depend on each other become one multi-output fusion, which XLA
    on the CPU runs with a logits-sized temporary per output at many shapes (measured
    at [2, 1024, 32768] float32: 256 MiB to 1 GiB, 2-6x slower); chained this way,
    each sum reads the logits in its own pass with no temporary."""
    return value + 0 * reduced[..., None]


def _top(logits: jax.Array) -> tuple[jax.Array, jax.Array]:
    """``(x, max_v l)`` with ``x`` the logits in the compute dtype (the conversion is
    fused into each pass).  The max is taken in the logits' own dtype (exact, and for
    half precision one conversion fewer: about 20 % of a bfloat16 call, measured at
    [8, 1024, 32768])."""
    dtype = _c.compute_dtype(logits.dtype)
    return logits.astype(dtype), jnp.max(logits, axis=-1, keepdims=True).astype(dtype)


def self_certainty(logits: Any, mask: Any) -> jax.Array:
    """Intuitor's self-certainty of each response: its mean KL(U || p) + log V.

    ``sc_i = sum_t m_it (logsumexp_v l_itv - mean_v l_itv) / max(1, sum_t m_it)``

    Learning to Reason without External Rewards (Xuandong Zhao et al., 2025), §3,
    self-certainty (the published code's logsumexp - mean),
    https://arxiv.org/abs/2505.19590.  Output ``[B]``: the dtype of ``logits``;
    detached (no gradient).

    Per token, ``logsumexp(l) - mean(l) = KL(U || softmax(l)) + log V``: 0 for a
    uniform distribution, large for a confident one; the published code omits the
    constant ``log V``, and so does this.  Averaged over the kept tokens; a row with
    none (or ``T = 0``) gives 0.  A row with a non-finite logit at a kept token
    gives NaN.

    Args:
      logits: float ``[B, T, V]`` (float16, bfloat16, float32, float64).
      mask: bool ``[B, T]``, True on the response's tokens.

    Returns:
      ``[B]`` (half precision computed in float32 and rounded once).

    >>> import jax.numpy as jnp, zero_jax
    >>> logits = jnp.log(jnp.array([[[0.25, 0.25, 0.25, 0.25], [0.7, 0.1, 0.1, 0.1]]]))
    >>> [round(x, 4) for x in zero_jax.self_certainty(logits, jnp.array([[True, True]])).tolist()]
    [1.6012]
    """
    x, m = _c.arrays("self_certainty", logits, mask)
    return _self_certainty(x, m)


@_c.kernel("self_certainty")
def _self_certainty(logits: jax.Array, mask: jax.Array) -> jax.Array:
    _c.invalid("self_certainty", logits=logits, mask=mask)  # raises under checked
    per_token = _unshifted(lax.stop_gradient(logits), mask)  # the contract has V >= 1
    return _poisoned_mean(per_token, mask).astype(logits.dtype)


#: Below this a token's unshifted sum of exponentials takes the max-shifted route: with
#: terms under the smallest normal number flushed to zero, 2^31 such terms stay below
#: 1e-8 of the sum in float32 (and far less in float64).
_TINY_SUM = 1e-20

#: The unshifted route keeps ``|log sum exp x| <= 4 log V``: see :func:`_unshifted`.
_OFFSET_POWER = 4


def _unshifted(logits: jax.Array, mask: jax.Array) -> jax.Array:
    """``logsumexp(x) - mean(x)`` over V in one fused pass that sums ``exp(x)``
    unshifted and ``x`` (half precision in float32; see the module docstring for where
    XLA fuses that conversion), instead of three (max, shifted sum, mean).

    The unshifted difference ``L - mean`` (``L = log sum exp x``) is accurate while
    ``|L|`` is small next to the result, which is at least ``log V`` (it is
    ``KL(U || p) + log V``).  So the whole call takes the max-shifted route
    (:func:`_shifted`) when a kept token's sum is outside ``[max(1e-20, V^-4),
    V^4]``: ``|L| <= 4 log V`` keeps the rounding of the two terms within about 5
    ulps of the result (``1000 + 0.01 * arange(7)`` lost 116 float32 ulps, 74 at
    offset 80).  That also covers a logit above ~88 in float32 (~709 in float64), all
    of a token's logits below about -46, and a non-finite logit.  Masked tokens never
    decide it (under ``vmap`` every element takes the shifted route: :func:`_route`),
    and on the shifted route the tokens in range keep their unshifted value: a row's
    result never depends on the other rows.

    The check reads only the sum, folded into the pass's one output as arithmetic,
    ``+ 0 * log(sum - low) + 0 * log(high - sum)``, which is 0 in range and NaN
    otherwise: a comparison or select after the reductions, or a second use of the
    mean, splits XLA's CPU fusion and for half precision materialises the float32
    logits (bfloat16 [8, 1024, 32768]: 1 GiB, 130 -> 420 ms).  Measured side by side,
    [8, 1024, 32768]: bfloat16 126 -> 108 ms (medians of 30) against the shifted
    route; float32 and float16 unchanged (111 / 112 ms, 437 / 427 ms)."""
    dtype = _c.compute_dtype(logits.dtype)
    x = logits.astype(dtype)
    v = float(x.shape[-1])
    low = max(_TINY_SUM, v**-_OFFSET_POWER)
    high = min(v**_OFFSET_POWER, float(jnp.finfo(dtype).max))
    total = jnp.sum(jnp.exp(x), axis=-1)
    in_range = 0.0 * jnp.log(total - low) + 0.0 * jnp.log(high - total)  # 0, or NaN
    fast = jnp.log(total) - jnp.mean(x, axis=-1) + in_range
    every_kept_in_range = jnp.all(jnp.isfinite(fast) | ~mask)
    out: jax.Array = _route(every_kept_in_range, logits, fast)
    return out


@jax.custom_batching.custom_vmap
def _route(every_kept_in_range: jax.Array, logits: jax.Array, fast: jax.Array) -> jax.Array:
    """``fast``, or the shifted route when a kept token is out of range."""
    out: jax.Array = lax.cond(every_kept_in_range, lambda _, f: f, _shifted, logits, fast)
    return out


@_route.def_vmap
def _route_vmapped(
    axis_size: int, in_batched: list[bool], _: jax.Array, logits: jax.Array, fast: jax.Array
) -> tuple[jax.Array, bool]:
    """Under ``vmap`` the shifted route for every element.  ``lax.cond`` would run both
    routes there and select with a predicate that carries no sharding, which an
    Explicit mesh refuses when the logits are sharded on another axis; the shifted
    route keeps every in-range token's ``fast`` value, so each element's kept tokens
    are what the cond gives."""
    axes = tuple(0 if b else None for b in in_batched[1:])
    return jax.vmap(_shifted, in_axes=axes, axis_size=axis_size)(logits, fast), True


def _shifted(logits: jax.Array, fast: jax.Array) -> jax.Array:
    """``log sum exp(x - max) + mean(max - x)`` per token, as the torch twin computes
    it: two non-negative terms, so nothing cancels at any offset.  A token whose
    unshifted value ``fast`` is in range keeps it, so that each token's value (and so
    each row's) is the same whichever route the call takes."""
    x, top = _top(logits)
    log_sum = jnp.log(jnp.sum(jnp.exp(x - top), axis=-1))
    top = _after(top, log_sum)
    shifted = log_sum + jnp.mean(top - x, axis=-1)
    return jnp.where(jnp.isfinite(fast), fast, shifted)


def _poisoned_mean(per_token: jax.Array, mask: jax.Array) -> jax.Array:
    """The masked mean over T, NaN for a row with a non-finite kept token.  A token's
    value is non-finite exactly when one of its logits is (``exp(l - max) <= 1`` cannot
    overflow), so this is the contract's rule without another pass over the logits."""
    rows = jnp.any(~jnp.isfinite(per_token) & mask, axis=-1)
    return _c.poison(mean_kept(per_token, mask), rows)


def token_entropy(logits: Any, mask: Any) -> jax.Array:
    """Mean token entropy of each response under its own logits.

    ``H_i = sum_t m_it (-sum_v p_itv log p_itv) / max(1, sum_t m_it)``

    The Unreasonable Effectiveness of Entropy Minimization in LLM Reasoning (Shivam
    Agarwal et al., 2025), §3, token-level entropy (the EM-RL / RENT reward),
    https://arxiv.org/abs/2505.15134.  Output ``[B]``: the dtype of ``logits``;
    detached (no gradient).

    ``p = softmax(l)`` per token, in nats; the reward of EM-RL and RENT is its
    negative.  Averaged over the kept tokens; a row with none (or ``T = 0``) gives 0.
    A row with a non-finite logit at a kept token gives NaN.

    Args:
      logits: float ``[B, T, V]`` (float16, bfloat16, float32, float64).
      mask: bool ``[B, T]``, True on the response's tokens.

    Returns:
      ``[B]`` (half precision computed in float32 and rounded once).

    >>> import jax.numpy as jnp, zero_jax
    >>> logits = jnp.log(jnp.array([[[0.25, 0.25, 0.25, 0.25], [0.7, 0.1, 0.1, 0.1]]]))
    >>> [round(x, 4) for x in zero_jax.token_entropy(logits, jnp.array([[True, False]])).tolist()]
    [1.3863]
    """
    x, m = _c.arrays("token_entropy", logits, mask)
    return _token_entropy(x, m)


@_c.kernel("token_entropy")
def _token_entropy(logits: jax.Array, mask: jax.Array) -> jax.Array:
    _c.invalid("token_entropy", logits=logits, mask=mask)  # raises under checked
    per_token = _entropy(lax.stop_gradient(logits))
    return _poisoned_mean(per_token, mask).astype(logits.dtype)


def _entropy(logits: jax.Array) -> jax.Array:
    """``-sum_v p_v log p_v`` per token as the torch twin computes it,
    ``log1p(R) + sum_v e_v (max - x_v) / (1 + R)`` with ``e = exp(x - max)`` and ``R``
    the sum of ``e`` without one maximum: two non-negative terms, and ``log Z``
    accurate for a sharply peaked token (``log`` of a rounded ``1 + R`` lost ~5 % of
    a 2e-6 entropy in float32).

    Three passes after the max: ``u``, the sum of the ``e`` below 1 (``min(e, (1 - e)
    2^25)`` is ``e`` for every float32 ``e < 1`` and 0 at 1; ``2^54`` for float64),
    then ``Z = sum e`` and the spread.  The number of ties at the max is
    ``round(Z - u)``, so ``R = u + round(Z - u) - 1`` is ``u`` itself when the max is
    unique.  No compare or select, and no count beside ``u`` in one pass: both made XLA
    on the CPU materialise the logits (2-3 float32 copies at [3, 1021, 32768])."""
    x, top = _top(logits)
    big = 2.0**25 if x.dtype == jnp.float32 else 2.0**54
    e = jnp.exp(x - top)
    below = jnp.sum(jnp.minimum(e, (1 - e) * big), axis=-1)
    top_z = _after(top, below)
    total = jnp.sum(jnp.exp(x - top_z), axis=-1)
    top_s = _after(top, total)
    spread = jnp.sum(jnp.exp(x - top_s) * (top_s - x), axis=-1)
    rest = below + (jnp.round(total - below) - 1)
    out: jax.Array = jnp.log1p(rest) + spread / (1 + rest)
    return out
