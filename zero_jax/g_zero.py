"""G-Zero rewards: the hint-delta of an unassisted answer and the proposer reward
built on it.

From *G-Zero: Self-Play for Open-Ended Generation from Zero Data* (Huang et al.,
2026, https://arxiv.org/abs/2605.09959), Section 3.1 Eq. 3 and Section 3.2 Eq. 5.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from jax import lax

from zero_jax import _checks as _c
from zero_jax.primitives import exact_div, mean_kept

__all__ = ["hint_delta", "proposer_rewards"]


@_c.kernel("hint_delta")
def _hint_delta(base: jax.Array, hinted: jax.Array, mask: jax.Array) -> jax.Array:
    _c.data_checks("hint_delta", base_logp=base, hinted_logp=hinted)
    dtype = jnp.result_type(base, hinted)
    return mean_kept(base.astype(dtype) - hinted.astype(dtype), mask)


def hint_delta(base_logp: Any, hinted_logp: Any, mask: Any) -> jax.Array:
    """Mean per-token log-probability shift of one response when a hint is added.

    ``delta = sum_t m_t (log p_t - log p^h_t) / max(1, sum_t m_t)``.  Both passes
    score the same unassisted response tokens (hint tokens excluded), aligned
    position by position; a row with no kept token (or ``T = 0``) gives 0.  A
    probability-shift proxy, not a KL divergence or a measured quality gain.

    Args:
      base_logp: float ``[B, T]`` log-probs without the hint.
      hinted_logp: float ``[B, T]`` log-probs of the same tokens with the hint.
      mask: bool ``[B, T]``, True on response tokens.

    Returns:
      ``[B]`` in the promoted dtype of the two log-prob inputs.  Differentiable in
      both; masked positions get exactly zero gradient and all-masked rows a zero
      gradient.

    >>> import jax.numpy as jnp, zero_jax
    >>> base = jnp.array([[-1.0, -2.0, -9.0]]); hinted = jnp.array([[-0.5, -1.0, 0.0]])
    >>> zero_jax.hint_delta(base, hinted, jnp.array([[True, True, False]])).tolist()
    [-0.75]
    """
    base, hinted, m = _c.arrays("hint_delta", base_logp, hinted_logp, mask)
    return _hint_delta(base, hinted, m)


@_c.kernel("proposer_rewards")
def _proposer(
    delta: jax.Array, lengths: jax.Array, share: jax.Array, valid: jax.Array
) -> jax.Array:
    _c.data_checks(
        "proposer_rewards", delta=delta, hint_lengths=lengths, cluster_share=share, valid=valid
    )
    out = jnp.result_type(delta, share)
    dtype = _c.compute_dtype(out)
    delta, share = delta.astype(dtype), share.astype(dtype)
    excess = jnp.maximum(lengths.astype(dtype) - 200, 0)
    length_penalty = exact_div(0.03 * excess, 100)
    reward = jnp.where(valid, delta - length_penalty, -1) - share
    return lax.stop_gradient(reward.astype(out))


def proposer_rewards(delta: Any, hint_lengths: Any, cluster_share: Any, valid: Any) -> jax.Array:
    """G-Zero proposer reward: hint-delta minus length and repetition penalties.

    ``r = delta - 0.03 max(L - 200, 0) / 100 - s`` for a well-formed proposal and
    ``r = -1 - s`` otherwise (delta and length ignored, repetition kept), with ``L``
    the hint length in characters and ``s`` its cluster share.  Negative rewards
    are kept.

    Args:
      delta: float ``[B]`` hint-deltas (see :func:`hint_delta`).
      hint_lengths: integer ``[B]`` hint lengths in characters.
      cluster_share: float ``[B]`` in ``[0, 1]``, cluster size / batch size.
      valid: bool ``[B]`` format flags.

    Returns:
      ``[B]`` in the promoted dtype of ``delta`` and ``cluster_share`` (half
      precision is computed in float32 and rounded once); gradient-free.

    >>> import jax.numpy as jnp, zero_jax
    >>> r = zero_jax.proposer_rewards(jnp.array([0.5, 0.5]), jnp.array([300, 10]),
    ...                               jnp.array([0.25, 0.5]), jnp.array([True, False]))
    >>> [round(x, 4) for x in r.tolist()]
    [0.22, -1.5]
    """
    d, n, s, v = _c.arrays("proposer_rewards", delta, hint_lengths, cluster_share, valid)
    return _proposer(d, n, s, v)
