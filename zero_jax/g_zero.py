"""G-Zero rewards (problem 109): the hint-delta of an unassisted answer and the
proposer reward built on it."""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
from jax import lax

from zero_jax import _checks as _c
from zero_jax.primitives import exact_div, masked_mean

__all__ = ["hint_delta", "proposer_rewards"]


@functools.partial(jax.jit, static_argnames=("checked",))
def _hint_delta(base, hinted, mask, checked):
    _c.check(checked, jnp.isfinite(base), "base_logp must be finite")
    _c.check(checked, jnp.isfinite(hinted), "hinted_logp must be finite")
    dtype = jnp.result_type(base, hinted)
    return masked_mean(base.astype(dtype) - hinted.astype(dtype), mask)


def hint_delta(base_logp: Any, hinted_logp: Any, mask: Any) -> jax.Array:
    """Mean per-token log-probability shift of one response when a hint is added.

    ``delta = sum_t m_t (log p_t - log p^h_t) / max(1, sum_t m_t)``.  Both passes
    score the same unassisted response tokens (hint tokens excluded), aligned
    position by position; a row with no kept token gives 0.  A probability-shift
    proxy, not a KL divergence or a measured quality gain.

    Args:
      base_logp: float ``[B, T]`` log-probs without the hint.
      hinted_logp: float ``[B, T]`` log-probs of the same tokens with the hint.
      mask: bool ``[B, T]``, True on response tokens.

    Returns:
      ``[B]`` in the promoted dtype of the two log-prob inputs.  Differentiable in
      both; masked positions get exactly zero gradient and all-masked rows a zero
      gradient.
    """
    base = _c.floating("base_logp", base_logp, 2, "[B, T]")
    _c.nonempty("base_logp", base[:, :1], "[B, T] with B >= 1")
    hinted = _c.floating("hinted_logp", hinted_logp, 2, "[B, T]")
    _c.same_shape("hinted_logp", hinted, "base_logp", base)
    m = _c.boolean("mask", mask, 2, "[B, T]")
    _c.same_shape("mask", m, "base_logp", base)
    return _hint_delta(base, hinted, m, _c.checking())


@functools.partial(jax.jit, static_argnames=("checked",))
def _proposer(delta, lengths, share, valid, checked):
    dtype = jnp.result_type(delta, share)
    delta, share = delta.astype(dtype), share.astype(dtype)
    _c.check(checked, jnp.isfinite(delta) | ~valid, "delta must be finite")
    _c.check(checked, (lengths >= 0) | ~valid, "hint_lengths must be >= 0")
    _c.check(checked, (share >= 0) & (share <= 1), "cluster_share must lie in [0, 1]")
    length_penalty = exact_div(0.03 * jnp.maximum(lengths.astype(dtype) - 200, 0), 100)
    reward = jnp.where(valid, delta - length_penalty, -1) - share
    return lax.stop_gradient(reward)


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
      ``[B]`` in the promoted dtype of ``delta`` and ``cluster_share``; gradient-free.
    """
    d = _c.floating("delta", delta, 1, "[B]")
    _c.nonempty("delta", d, "[B]")
    n = _c.integer("hint_lengths", hint_lengths, 1, "[B]")
    _c.same_shape("hint_lengths", n, "delta", d)
    s = _c.floating("cluster_share", cluster_share, 1, "[B]")
    _c.same_shape("cluster_share", s, "delta", d)
    v = _c.boolean("valid", valid, 1, "[B]")
    _c.same_shape("valid", v, "delta", d)
    return _proposer(d, n, s, v, _c.checking())
