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


def hint_delta(base_logp: Any, hinted_logp: Any, mask: Any) -> jax.Array:
    """Mean per-token log-probability shift of a response when a hint is added.

    ``delta_i = sum_t m_it (log p_it - log p^h_it) / max(1, sum_t m_it)``

    G-Zero: Self-Play for Open-Ended Generation from Zero Data (Chengsong Huang et
    al., 2026), §3.1, Eq. 3 (Hint-delta), https://arxiv.org/abs/2605.09959.  Output
    ``[B]``: the promoted dtype of ``base_logp`` and ``hinted_logp``;
    differentiable in ``base_logp``, ``hinted_logp``.

    Both passes score the same unassisted response tokens (hint tokens excluded),
    aligned position by position; a row with no kept token (or ``T = 0``) gives 0.
    A probability-shift proxy, not a KL divergence or a measured quality gain.
    A masked position's log-probs are never read (they may be NaN or -inf): its
    gradient is exactly 0, all-masked rows get a zero gradient.  A row with a
    non-finite log-prob at a kept position gives NaN.

    Args:
      base_logp: float ``[B, T]`` log-probs without the hint.
      hinted_logp: float ``[B, T]`` log-probs of the same tokens with the hint.
      mask: bool ``[B, T]``, True on response tokens.

    Returns:
      ``[B]``.

    >>> import jax.numpy as jnp, zero_jax
    >>> base = jnp.array([[-1.0, -2.0, -9.0]]); hinted = jnp.array([[-0.5, -1.0, 0.0]])
    >>> zero_jax.hint_delta(base, hinted, jnp.array([[True, True, False]])).tolist()
    [-0.75]
    """
    base, hinted, m = _c.arrays("hint_delta", base_logp, hinted_logp, mask)
    return _hint_delta(base, hinted, m)


@_c.kernel("hint_delta")
def _hint_delta(base: jax.Array, hinted: jax.Array, mask: jax.Array) -> jax.Array:
    bad = _c.invalid("hint_delta", base_logp=base, hinted_logp=hinted, mask=mask)
    dtype = jnp.result_type(base, hinted)
    acc = _c.compute_dtype(dtype)  # half precision: the difference too, rounded once
    # a masked position is replaced before any arithmetic (its NaN / -inf never enters
    # a difference), so its value and its gradient (exactly 0) never matter
    zero = jnp.zeros((), acc)
    diff = jnp.where(mask, base.astype(acc), zero) - jnp.where(mask, hinted.astype(acc), zero)
    delta = mean_kept(diff, mask).astype(dtype)
    return _c.poison(delta, jnp.any(bad["base_logp"] | bad["hinted_logp"], axis=-1))


def proposer_rewards(delta: Any, hint_lengths: Any, cluster_share: Any, valid: Any) -> jax.Array:
    """G-Zero proposer reward: hint-delta minus length and repetition penalties.

    ``r_i = delta_i - 0.03 max(L_i - 200, 0) / 100 - s_i if valid, else -1 - s_i``

    G-Zero: Self-Play for Open-Ended Generation from Zero Data (Chengsong Huang et
    al., 2026), §3.2, Eq. 5 (proposer reward), https://arxiv.org/abs/2605.09959.
    Output ``[B]``: the promoted dtype of ``delta`` and ``cluster_share``; detached
    (no gradient).

    ``L`` is the hint length in characters and ``s`` its cluster share.  An invalid
    proposal ignores its delta and length but keeps its repetition penalty.
    Negative rewards are kept.  A row whose delta (where valid) is not finite,
    whose length (where valid) is negative or whose share is outside [0, 1] gives NaN.

    Args:
      delta: float ``[B]`` hint-deltas (see :func:`hint_delta`).
      hint_lengths: integer ``[B]`` hint lengths in characters.
      cluster_share: float ``[B]`` in ``[0, 1]``, cluster size / batch size.
      valid: bool ``[B]`` format flags.

    Returns:
      ``[B]`` (half precision computed in float32 and rounded once).

    >>> import jax.numpy as jnp, zero_jax
    >>> r = zero_jax.proposer_rewards(jnp.array([0.5, 0.5]), jnp.array([300, 10]),
    ...                               jnp.array([0.25, 0.5]), jnp.array([True, False]))
    >>> [round(x, 4) for x in r.tolist()]
    [0.22, -1.5]
    """
    d, n, s, v = _c.arrays("proposer_rewards", delta, hint_lengths, cluster_share, valid)
    return _proposer(d, n, s, v)


@_c.kernel("proposer_rewards")
def _proposer(
    delta: jax.Array, lengths: jax.Array, share: jax.Array, valid: jax.Array
) -> jax.Array:
    bad = _c.invalid(
        "proposer_rewards", delta=delta, hint_lengths=lengths, cluster_share=share, valid=valid
    )
    out = jnp.result_type(delta, share)
    dtype = _c.compute_dtype(out)
    delta, share = delta.astype(dtype), share.astype(dtype)
    excess = jnp.maximum(lengths.astype(dtype) - 200, 0)
    length_penalty = exact_div(0.03 * excess, 100)
    reward = jnp.where(valid, delta - length_penalty, -1) - share
    rows = bad["delta"] | bad["hint_lengths"] | bad["cluster_share"]
    return lax.stop_gradient(_c.poison(reward, rows).astype(out))
