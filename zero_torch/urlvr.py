"""URLVR's diagnostics, PyTorch reference (He et al., 2026, arXiv:2603.08660, §4-5).
Mirrors ``zero_jax.urlvr``."""

from __future__ import annotations

import math

import torch

from zero_torch import _checks as _c
from zero_torch._checks import Index, Real

__all__ = ["collapse_step", "point_biserial"]


@torch.no_grad()
def point_biserial(proxy: torch.Tensor, truth: torch.Tensor) -> torch.Tensor:
    """Point-biserial correlation of a proxy reward with the true correctness.

    ``r_pb = (mean_{t=1} x - mean_{t=0} x) sqrt(n_1 n_0) / (n s_x), s_x the population
    std; NaN if x or t is constant``

    How Far Can Unsupervised RLVR Scale LLM Training? (Bingxiang He et al., 2026), §4,
    proxy-truth correlation of an intrinsic reward, https://arxiv.org/abs/2603.08660.
    Output ``[]``: float64 (float32 in JAX with x64 off); detached (no gradient).

    ``proxy`` ``[B]`` finite (else ValueError), ``truth`` ``[B]`` bool.  NaN, as scipy's
    ``pointbiserialr`` gives, when the truth or the proxy is constant (the
    correlation is undefined; 0 would look like a collapsed signal).

    >>> import torch, zero_torch
    >>> x = torch.tensor([1.0, 1.0, 0.0, 0.0])
    >>> round(float(zero_torch.point_biserial(x, torch.tensor([True, True, False, True]))), 4)
    0.5774
    """
    x, t = _c.arrays("point_biserial", proxy, truth)
    _c.data_checks("point_biserial", proxy=x, truth=t)
    x = x.to(torch.float64)
    n = x.shape[0]
    n1 = int(t.sum())
    mean = x.mean()
    sx = math.sqrt(float(((x - mean) ** 2).mean()))
    if n1 in (0, n) or bool(x.max() == x.min()):
        return torch.tensor(math.nan, dtype=torch.float64, device=x.device)
    m1, m0 = x[t].mean(), x[~t].mean()
    r = (m1 - m0) / sx * math.sqrt(n1 * (n - n1)) / n
    return r.clamp(-1, 1)


@torch.no_grad()
def collapse_step(
    values: torch.Tensor, threshold: Real = 0.01, *, patience: Index = 1
) -> torch.Tensor:
    """The first step of a run whose logged value falls below a threshold, or -1.

    ``step = min{t : v_s < threshold for t <= s < t + patience}, -1 if none``

    How Far Can Unsupervised RLVR Scale LLM Training? (Bingxiang He et al., 2026), §5,
    Model Collapse Step (first step the reward accuracy falls below 1%),
    https://arxiv.org/abs/2603.08660.  Output ``[]``: int counts (int32 in JAX, int64
    in torch); detached (no gradient).

    ``values`` ``[T]``: one logged value per step; the first step t where ``patience``
    consecutive values from t on are below ``threshold`` (compared in the values'
    float type, at least float32), -1 if none.  NaN is never below.

    >>> import torch, zero_torch
    >>> acc = torch.tensor([0.6, 0.7, 0.4, 0.005, 0.2, 0.0, 0.0])
    >>> int(zero_torch.collapse_step(acc)), int(zero_torch.collapse_step(acc, patience=2))
    (3, 5)
    """
    (v,) = _c.arrays("collapse_step", values)
    h = _c.hypers("collapse_step", threshold=threshold, patience=patience)
    x = v.to(_c.compute_dtype(v.dtype))
    low = (x < torch.tensor(h["threshold"], dtype=x.dtype)).tolist()
    k = h["patience"]
    for step in range(len(low) - k + 1):
        if all(low[step : step + k]):
            return torch.tensor(step, dtype=torch.int64, device=v.device)
    return torch.tensor(-1, dtype=torch.int64, device=v.device)
