"""G-Zero rewards, PyTorch reference (problem 109).  Mirrors ``zero_jax.g_zero``."""

from __future__ import annotations

import torch

from zero_torch import _checks as _c
from zero_torch.primitives import masked_mean

__all__ = ["hint_delta", "proposer_rewards"]


def hint_delta(
    base_logp: torch.Tensor, hinted_logp: torch.Tensor, mask: torch.Tensor
) -> torch.Tensor:
    """``sum_t m_t (base_t - hinted_t) / max(1, sum_t m_t)`` per row of ``[B, T]``.

    Differentiable in both log-prob tensors (masked positions get zero gradient);
    an all-masked row returns 0.  Output dtype: promoted dtype of the two inputs.
    """
    base = _c.floating("base_logp", base_logp, 2, "[B, T]")
    _c.nonempty("base_logp", base[:, :1], "[B, T] with B >= 1")
    hinted = _c.floating("hinted_logp", hinted_logp, 2, "[B, T]")
    _c.same_shape("hinted_logp", hinted, "base_logp", base)
    m = _c.boolean("mask", mask, 2, "[B, T]")
    _c.same_shape("mask", m, "base_logp", base)
    _c.require(torch.isfinite(base), "base_logp must be finite")
    _c.require(torch.isfinite(hinted), "hinted_logp must be finite")
    dtype = torch.result_type(base, hinted)
    return masked_mean(base.to(dtype) - hinted.to(dtype), m)


@torch.no_grad()
def proposer_rewards(
    delta: torch.Tensor,
    hint_lengths: torch.Tensor,
    cluster_share: torch.Tensor,
    valid: torch.Tensor,
) -> torch.Tensor:
    """``delta - 0.03 max(L - 200, 0) / 100 - s`` if valid, else ``-1 - s``; detached.

    Delta and length of an invalid proposal are ignored (they may be anything);
    the cluster share ``s`` always counts.  Output dtype: promoted dtype of
    ``delta`` and ``cluster_share``.
    """
    d = _c.floating("delta", delta, 1, "[B]")
    _c.nonempty("delta", d, "[B]")
    n = _c.integer("hint_lengths", hint_lengths, 1, "[B]")
    _c.same_shape("hint_lengths", n, "delta", d)
    s = _c.floating("cluster_share", cluster_share, 1, "[B]")
    _c.same_shape("cluster_share", s, "delta", d)
    v = _c.boolean("valid", valid, 1, "[B]")
    _c.same_shape("valid", v, "delta", d)
    _c.require(torch.isfinite(d) | ~v, "delta must be finite")
    _c.require((n >= 0) | ~v, "hint_lengths must be >= 0")
    _c.unit("cluster_share", s)
    dtype = torch.result_type(d, s)
    d, s = d.to(dtype), s.to(dtype)
    length_penalty = 0.03 * (n.to(dtype) - 200).clamp(min=0) / 100
    return torch.where(v, d - length_penalty, torch.full_like(d, -1)) - s
