"""DAPO's reward shaping and dynamic sampling, PyTorch reference (Yu et al., 2025,
arXiv:2503.14476, §3.2 and §3.4).  Mirrors ``zero_jax.dapo``."""

from __future__ import annotations

import torch

from zero_torch import _checks as _c
from zero_torch._checks import Real

__all__ = ["informative_groups", "overlong_penalty"]


@torch.no_grad()
def overlong_penalty(lengths: torch.Tensor, max_length: Real, cache: Real) -> torch.Tensor:
    """DAPO's soft punishment of responses that run into the length limit.

    ``R_i = 0 if L_i <= L_max - L_cache; (L_max - L_cache - L_i) / L_cache if <= L_max; -1
    beyond``

    DAPO: An Open-Source LLM Reinforcement Learning System at Scale (Qiying Yu et al., 2025),
    §3.4, Eq. 13 (soft overlong punishment), https://arxiv.org/abs/2503.14476.  Output ``[B]``:
    float64 (float32 in JAX with x64 off); detached (no gradient).

    ``lengths`` ``[B]``: response lengths in tokens (integers >= 0, else ValueError);
    ``max_length`` (``L_max``) and ``cache`` (``L_cache``, the soft band) are real
    numbers >= 0 with ``cache <= max_length``.  The penalty falls linearly from 0 at
    ``L_max - L_cache`` to -1 at ``L_max`` and is -1 beyond; with ``cache = 0`` it
    is a hard -1 beyond ``L_max``.  Computed in float64 as TRL's
    ``get_soft_overlong_punishment`` computes it in Python.  Add it to the task
    reward (DAPO adds it to the rule-based reward).

    >>> import torch, zero_torch
    >>> zero_torch.overlong_penalty(torch.tensor([70, 80, 90, 100, 101]), 100, 20).tolist()
    [0.0, 0.0, -0.5, -1.0, -1.0]
    """
    (n,) = _c.arrays("overlong_penalty", lengths)
    h = _c.hypers("overlong_penalty", max_length=max_length, cache=cache)
    _c.data_checks("overlong_penalty", lengths=n)
    top, band = h["max_length"], h["cache"]
    length = n.to(torch.float64)  # exact up to 2**53 tokens
    # measured from L_max (exact for integers): a fractional cache moves no boundary,
    # and ((L_max - L) - L_cache) / L_cache stays in [-1, 0]
    gap = top - length
    ramp = (gap - band) / band if band > 0 else torch.zeros_like(length)
    zero, minus_one = torch.zeros_like(length), torch.full_like(length, -1.0)
    return torch.where(gap >= band, zero, torch.where(gap >= 0, ramp, minus_one))


@torch.no_grad()
def informative_groups(rewards: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """DAPO's dynamic sampling: the groups whose kept rewards are not all equal.

    ``keep_g = max_i r_gi > min_i r_gi over the kept entries``

    DAPO: An Open-Source LLM Reinforcement Learning System at Scale (Qiying Yu et al., 2025),
    §3.2, dynamic sampling (verl's filter_groups), https://arxiv.org/abs/2503.14476.  Output
    ``[G]``: bool; detached (no gradient).

    A group whose kept rewards are all equal (all correct, all wrong; also a group of
    one kept sample or none) has zero advantage under GRPO and teaches nothing:
    dynamic sampling drops it and samples more.  The comparison is exact in the
    rewards' dtype (verl's ``np.std(...) > 0`` can keep an all-equal group of
    non-dyadic rewards such as 0.1 through rounding).  Non-finite kept rewards raise
    ValueError.

    >>> import torch, zero_torch
    >>> r = torch.tensor([[1.0, 0.0, 1.0], [1.0, 1.0, 1.0], [0.0, 0.0, 0.5]])
    >>> m = torch.tensor([[True, True, True], [True, True, True], [True, True, False]])
    >>> zero_torch.informative_groups(r, m).tolist()
    [True, False, False]
    """
    r, m = _c.arrays("informative_groups", rewards, mask)
    if m is None:
        m = torch.ones_like(r, dtype=torch.bool)
    _c.data_checks("informative_groups", rewards=r, mask=m)
    inf = torch.tensor(float("inf"), dtype=r.dtype, device=r.device)
    hi = torch.where(m, r, -inf).amax(-1)
    lo = torch.where(m, r, inf).amin(-1)
    return hi > lo
