"""GRPO / RLOO group advantages and their multi-reward aggregation, PyTorch reference
(DeepSeekMath, arXiv:2402.03300; RLOO, arXiv:2402.14740; GDPO, arXiv:2601.05242).
Mirrors ``zero_jax.advantages``; presets and constants live in :mod:`zero_contracts`."""

from __future__ import annotations

import math

import torch

from zero_contracts import ADVANTAGE_PRESETS
from zero_torch import _checks as _c
from zero_torch._checks import Index, Real

__all__ = ["ADVANTAGE_PRESETS", "group_advantages", "multi_reward_advantages"]


def _moments(
    r: torch.Tensor, m: torch.Tensor, ddof: int, dim: int | tuple[int, ...] = -1
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Kept count, ``r - mean`` and std over ``dim``, by a corrected two-pass: the
    deviations from a first, rounded mean are summed again, so that a common offset
    costs no accuracy.  The callers scale the rewards into (-1, 1) first (:func:`_unit`)."""
    zero = torch.zeros((), dtype=r.dtype)
    ddof = min(ddof, r.numel())  # a larger ddof changes no result (and may not fit int64)
    n = m.sum(dim, keepdim=True).to(r.dtype)
    first = torch.where(m, r, zero).sum(dim, keepdim=True) / n.clamp(min=1)
    d = torch.where(m, r - first, zero)
    dev = d - d.sum(dim, keepdim=True) / n.clamp(min=1)
    sq = torch.where(m, dev**2, zero).sum(dim, keepdim=True)
    return n, dev, torch.sqrt(sq / (n - ddof).clamp(min=1))


def _advantages(
    r: torch.Tensor,
    m: torch.Tensor,
    scale: str,
    ddof: int,
    eps: float,
    singleton: str,
    baseline: str,
) -> torch.Tensor:
    """Advantages of validated rewards ``[G, N]`` (finite where kept), in their dtype."""
    ddof = min(ddof, r.numel())  # a larger ddof changes no result (and may not fit int64)
    zero = torch.zeros((), dtype=r.dtype)
    r = torch.where(m, r, zero)  # a masked entry is never read
    inf = torch.tensor(float("inf"), dtype=r.dtype)
    hi = torch.where(m, r, -inf).amax(-1, keepdim=True)
    lo = torch.where(m, r, inf).amin(-1, keepdim=True)
    # computed on the rewards times a power of two: no overflow or underflow, same bits
    unit = _unit(hi.amax(-2, keepdim=True), lo.amin(-2, keepdim=True)) if scale == "batch" else (
        _unit(hi, lo)
    )
    r = r * unit
    n, dev, std = _moments(r, m, ddof)
    single = n == 1
    if baseline == "leave_one_out":
        # r_i minus the mean of the other n - 1 kept rewards is n / (n - 1) (r_i - mean):
        # O(G N) memory, from the corrected two-pass deviations
        adv = dev * n / (n - 1).clamp(min=1)
    else:
        adv = dev
    if scale == "batch":
        _, _, std = _moments(r, m, ddof, dim=(-2, -1))
    if singleton == "raw":  # verl: a lone sample keeps its reward (baseline 0, std 1)
        adv = torch.where(single, r, adv)
        std = torch.where(single, unit, std)  # 1 in the rewards' units, under any scale
    if scale != "none":
        adv = adv / (std + eps * unit)
    else:
        adv = adv / unit
    degenerate = hi == lo  # all kept rewards equal, a single one, or none
    if scale == "group":
        degenerate = degenerate | (n <= ddof)
    if singleton == "raw":
        degenerate = degenerate & ~single
    return torch.where(m & ~degenerate, adv, zero)


def _unit(hi: torch.Tensor, lo: torch.Tensor) -> torch.Tensor:
    """``2^-k`` with ``2^(k-1) <= max |r| < 2^k`` for float32 / float64 rewards whose max
    is ``hi`` and min ``lo`` (1 when there are none), ``k`` clipped so that ``2^k`` and
    ``2^-k`` are normal floats: the rewards times it lie in (-1, 1), where no mean,
    leave-one-out difference or sum of squares overflows or flushes to 0 (float32
    rewards of 1e20 gave an infinite std and advantages 0).  A power of two scales
    exactly, so elsewhere the result is the same.  ``k`` is ``log2``'s, corrected by
    exact comparisons with powers of two (``torch.frexp`` and bit casts do not compile
    correctly under ``torch.compile``)."""
    top = torch.maximum(hi, -lo)
    bias = 127 if top.dtype == torch.float32 else 1023
    ok = (top > 0) & (top < math.inf)
    x = torch.where(ok, top, torch.ones_like(top))
    two = torch.tensor(2.0, dtype=top.dtype)
    k = torch.floor(torch.log2(x)) + 1
    k = k + (x >= two**k).to(k.dtype) - (x < two ** (k - 1)).to(k.dtype)
    k = torch.where(ok, k.clamp(min=1 - bias, max=bias - 1), torch.zeros_like(k))
    return two ** (-k)


@torch.no_grad()
def group_advantages(
    rewards: torch.Tensor,
    mask: torch.Tensor | None = None,
    *,
    scale: str = "group",
    ddof: Index = 1,
    eps: Real = 1e-6,
    singleton: str = "zero",
    baseline: str = "mean",
) -> torch.Tensor:
    """GRPO / RLOO advantages of groups of rewards, never NaN on valid data.

    ``A_gi = (r_gi - b_gi) / (std + eps), or r_gi - b_gi; b = mean_g or the leave-one-out
    mean``

    DeepSeekMath: Pushing the Limits of Mathematical Reasoning in Open Language Models (Zhihong
    Shao et al., 2024), §4.1.2, outcome supervision (group-normalised advantages),
    https://arxiv.org/abs/2402.03300.  Output ``[G, N]``: the dtype of ``rewards``; detached (no
    gradient).

    Masked entries get 0 and are left out of every mean, sum and std; groups whose
    kept rewards are all equal get exactly 0; a single-sample group gets 0, or
    ``r / (1 + eps)`` with ``singleton="raw"`` (verl; its std is 1 under any
    ``scale``); with group scaling a group of at most ``ddof`` samples gets 0.
    ``baseline="leave_one_out"`` is RLOO
    (arXiv:2402.14740): ``b_gi = (S_g - r_gi) / (n_g - 1)`` over the ``n_g`` kept
    rewards, computed as ``n_g (r_gi - mean_g) / (n_g - 1)`` in float64 and rounded
    once (O(G N) memory);
    ``ADVANTAGE_PRESETS["rloo"]`` is TRL's, Tunix's and verl's (``rloo_vectorized``;
    verl's ``rloo`` keeps a lone sample's reward: add ``singleton="raw"``) RLOO.  Non-finite kept
    rewards raise ValueError.  Half precision is computed in float32.

    >>> import torch, zero_torch
    >>> r = torch.tensor([[1.0, 0.0], [1.0, 1.0]], dtype=torch.float64)
    >>> [[round(x, 6) for x in row] for row in zero_torch.group_advantages(r, eps=0.0).tolist()]
    [[0.707107, -0.707107], [0.0, 0.0]]
    >>> loo = zero_torch.group_advantages(torch.tensor([[1.0, 0.0, 0.0, 1.0]]),
    ...                                   **zero_torch.ADVANTAGE_PRESETS["rloo"])
    >>> [round(x, 4) for x in loo[0].tolist()]
    [0.6667, -0.6667, -0.6667, 0.6667]
    """
    r, m = _c.arrays("group_advantages", rewards, mask)
    h = _c.hypers(
        "group_advantages", scale=scale, ddof=ddof, eps=eps, singleton=singleton,
        baseline=baseline,
    )
    if m is None:
        m = torch.ones_like(r, dtype=torch.bool)
    _c.data_checks("group_advantages", rewards=r, mask=m)
    out = r.dtype
    # counts and sums of half precision run in float32; leave-one-out in float64
    work = torch.float64 if h["baseline"] == "leave_one_out" else _c.compute_dtype(out)
    adv = _advantages(
        r.to(work), m, h["scale"], h["ddof"], h["eps"], h["singleton"], h["baseline"]
    )
    return adv.to(out)


@torch.no_grad()
def multi_reward_advantages(
    rewards: torch.Tensor,
    weights: torch.Tensor | None = None,
    mask: torch.Tensor | None = None,
    *,
    aggregation: str = "sum_then_normalize",
    scale: str = "group",
    ddof: Index = 1,
    eps: Real = 1e-6,
    singleton: str = "zero",
    baseline: str = "mean",
) -> torch.Tensor:
    """Advantages of several rewards per sample, weighted and aggregated.

    ``sum_then_normalize: A(sum_k w_k r_k); normalize_then_sum: batchnorm(sum_k w_k A(r_k))``

    GDPO: Group reward-Decoupled Normalization Policy Optimization for Multi-reward RL
    Optimization (Shih-Yang Liu et al., 2026), §3, decoupled normalization (TRL's
    multi_objective_aggregation), https://arxiv.org/abs/2601.05242.  Output ``[G, N]``: the
    dtype of ``rewards``; detached (no gradient).

    ``rewards[g, i, k]`` is reward ``k`` of sample ``i`` of group ``g``; ``weights``
    (``[R]``, default all ones) weight them; ``mask`` (``[G, N, R]``) keeps entries,
    and a sample is kept when any of its entries is (a masked entry counts 0 in a
    weighted sum, like TRL's ``nansum`` of a missing reward).  The options are those
    of :func:`group_advantages`.

    * ``"sum_then_normalize"`` (TRL's default): the advantages of the weighted sum
      ``s_gi = sum_k w_k r_gik``.
    * ``"normalize_then_sum"`` (GDPO): the advantages of each reward in its group,
      weighted and summed, then standardised over the batch's kept samples,
      ``(s - mean) / (std + eps)`` with the same ``ddof`` and ``eps`` (0 when all
      kept sums are equal).  With ``ADVANTAGE_PRESETS["trl"]`` both equal TRL's.

    Computed in float64 and rounded once.  Non-finite kept rewards or weights raise
    ValueError; masked samples get 0.

    >>> import torch, zero_torch
    >>> r = torch.tensor([[[1.0, 0.0], [0.0, 0.0], [1.0, 1.0]]])  # 1 group, 3 samples, 2 rewards
    >>> a = zero_torch.multi_reward_advantages(r, torch.tensor([1.0, 2.0]), eps=0.0)
    >>> [round(x, 4) for x in a[0].tolist()]  # the advantages of the sums 1, 0, 3
    [-0.2182, -0.8729, 1.0911]
    """
    r, w, m = _c.arrays("multi_reward_advantages", rewards, weights, mask)
    h = _c.hypers(
        "multi_reward_advantages", aggregation=aggregation, scale=scale, ddof=ddof, eps=eps,
        singleton=singleton, baseline=baseline,
    )
    if m is None:
        m = torch.ones_like(r, dtype=torch.bool)
    _c.data_checks("multi_reward_advantages", rewards=r, weights=w, mask=m)
    out = r.dtype
    r64 = torch.where(m, r.to(torch.float64), torch.zeros((), dtype=torch.float64))
    w64 = torch.ones(r.shape[-1], dtype=torch.float64, device=r.device) if w is None else (
        w.to(torch.float64)
    )
    kept = m.any(-1)
    options = (h["scale"], h["ddof"], h["eps"], h["singleton"], h["baseline"])
    if h["aggregation"] == "sum_then_normalize":
        return _advantages((r64 * w64).sum(-1), kept, *options).to(out)
    per_reward = [_advantages(r64[..., k], m[..., k], *options) for k in range(r.shape[-1])]
    s = (torch.stack(per_reward, -1) * w64).sum(-1)
    flat, keep = s.reshape(1, -1), kept.reshape(1, -1)
    inf = torch.tensor(float("inf"), dtype=torch.float64)
    hi, lo = torch.where(keep, flat, -inf).amax(), torch.where(keep, flat, inf).amin()
    unit = _unit(hi, lo)
    _, dev, std = _moments(flat * unit, keep, h["ddof"])
    equal = hi == lo
    z = dev / (std + h["eps"] * unit)
    z = torch.where(keep & ~equal, z, torch.zeros((), dtype=torch.float64))
    return z.reshape(s.shape).to(out)
