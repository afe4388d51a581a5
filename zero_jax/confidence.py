"""Label-free rewards from a policy's own logits: Intuitor's self-certainty and the
mean token entropy of EM-RL / RENT.

From *Learning to Reason without External Rewards* (Zhao et al., 2025,
https://arxiv.org/abs/2505.19590) and *The Unreasonable Effectiveness of Entropy
Minimization in LLM Reasoning* (Agarwal et al., 2025, https://arxiv.org/abs/2505.15134).
Both reduce ``[B, T, V]`` logits to one number per response; the kernels read the logits
in a few fused passes (max, sum of exponentials, one more sum; self-certainty sums the
exponentials unshifted beside the mean in one pass and skips the max), with half
precision accumulated in float32. Memory: float32 and float64 logits need no temporary
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


def _logsumexp(logits: jax.Array) -> tuple[jax.Array, jax.Array]:
    """``(l, logsumexp_v l)`` with ``l`` in the compute dtype (the conversion is fused
    into each pass over the logits; XLA keeps these passes free of logits-sized
    temporaries only when each reads ``l`` itself, so nothing shifted is shared).
    The max is taken in the logits' own dtype (exact, and for half precision one
    conversion fewer: about 20 % of a bfloat16 call, measured at [8, 1024, 32768])."""
    dtype = _c.compute_dtype(logits.dtype)
    x = logits.astype(dtype)
    top = jnp.max(logits, axis=-1, keepdims=True).astype(dtype)
    return x, top[..., 0] + jnp.log(jnp.sum(jnp.exp(x - top), axis=-1))


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


def _unshifted(logits: jax.Array, mask: jax.Array) -> jax.Array:
    """``logsumexp(x) - mean(x)`` over V in one fused pass that sums ``exp(x)``
    unshifted and ``x`` (half precision in float32; see the module docstring for where
    XLA fuses that conversion), instead of three (max, shifted sum, mean). A sum of
    positive terms has the same relative rounding at any scale, so the result is the
    shifted one's to rounding while the sum stays a normal finite number.

    When a kept token's sum is not in ``[1e-20, inf)`` (a logit above ~88 in float32 or
    ~709 in float64, all of a token's logits below about -46, or a non-finite logit),
    the whole call takes the max-shifted route; masked tokens never decide it (under
    ``vmap`` both routes run, as ``lax.cond`` does there).  The check is folded into the
    pass's one output as arithmetic, ``+ 0 * log(sum - 1e-20)``, which is 0 for a sum in
    range and NaN otherwise: a comparison or select after the reductions splits XLA's
    CPU fusion in two, and for half precision materialises the float32 logits.
    Measured side by side, [8, 1024, 32768]: bfloat16 126 -> 108 ms (medians of 30);
    float32 and float16 unchanged (111 / 112 ms, 437 / 427 ms)."""
    dtype = _c.compute_dtype(logits.dtype)
    x = logits.astype(dtype)
    total = jnp.sum(jnp.exp(x), axis=-1)
    in_range = 0.0 * jnp.log(total - _TINY_SUM)  # 0, or NaN: sum below 1e-20 or inf
    fast = jnp.log(total) - jnp.mean(x, axis=-1) + in_range

    def shifted_by_max(logits: jax.Array, _: jax.Array) -> jax.Array:
        x, lse = _logsumexp(logits)
        return lse - jnp.mean(x, axis=-1)

    every_kept_in_range = jnp.all(jnp.isfinite(fast) | ~mask)
    out: jax.Array = lax.cond(every_kept_in_range, lambda _, f: f, shifted_by_max, logits, fast)
    return out


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
    x, lse = _logsumexp(lax.stop_gradient(logits))
    log_p = x - lse[..., None]  # -sum p log p
    per_token = -jnp.sum(jnp.exp(log_p) * log_p, axis=-1)
    return _poisoned_mean(per_token, mask).astype(logits.dtype)
