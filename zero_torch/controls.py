"""Spurious-reward controls, PyTorch reference (Shao et al., 2025, arXiv:2506.10947,
§3).  Mirrors ``zero_jax.controls``."""

from __future__ import annotations

import torch

from zero_torch import _checks as _c
from zero_torch._checks import Real

__all__ = ["format_rewards", "random_rewards", "wrong_label_rewards"]


@torch.no_grad()
def random_rewards(
    key: int | torch.Tensor | torch.Generator, mask: torch.Tensor, rate: Real = 0.5
) -> torch.Tensor:
    """Spurious-reward control: a seeded 0/1 coin per response at a given rate.

    ``r_i = m_i 1[u_i < rate], u_i ~ U[0, 1) float32 drawn from key``

    Spurious Rewards: Rethinking Training Signals in RLVR (Rulin Shao et al., 2025), §3,
    random reward (the published code's random_reward_fn),
    https://arxiv.org/abs/2506.10947.  Output ``[B]``: float64 (float32 in JAX with x64
    off); detached (no gradient).

    ``key``: an integer seed (a Python int or a 0-d integer tensor; the same seed
    gives the same coins) or a ``torch.Generator`` on ``mask``'s device (drawn from,
    so it advances).  The draws are ``torch.rand`` in float32, so the coins differ
    from zero_jax's for the same seed.  ``mask`` ``[B]`` (bool): False for responses
    that get no coin.  ``rate`` in [0, 1]; for a coin matched to another reward pass
    its mean (``rate=float(majority_rewards.mean())``).  Compared in float32.

    >>> import torch, zero_torch
    >>> m = torch.ones(1000, dtype=torch.bool)
    >>> r = zero_torch.random_rewards(0, m, 0.25)
    >>> bool((r == zero_torch.random_rewards(0, m, 0.25)).all()), 0.2 < float(r.mean()) < 0.3
    (True, True)
    """
    generator = key if isinstance(key, torch.Generator) else None
    if generator is not None:
        key = torch.zeros((), dtype=torch.int64, device=mask.device if isinstance(
            mask, torch.Tensor) else None)
    elif isinstance(key, int) and not isinstance(key, bool):
        key = torch.tensor(key, device=mask.device if isinstance(mask, torch.Tensor) else None)
    s, m = _c.arrays("random_rewards", key, mask)
    h = _c.hypers("random_rewards", rate=rate)
    if generator is None:
        generator = torch.Generator(device=m.device).manual_seed(int(s))
    u = torch.rand(m.shape, generator=generator, dtype=torch.float32, device=m.device)
    coin = m & (u < torch.tensor(h["rate"], dtype=torch.float32, device=m.device))
    return coin.to(torch.float64)


@torch.no_grad()
def format_rewards(format_valid: torch.Tensor) -> torch.Tensor:
    """Spurious-reward control: 1 for a response whose answer could be extracted.

    ``r_i = 1[f_i]``

    Spurious Rewards: Rethinking Training Signals in RLVR (Rulin Shao et al., 2025), §3,
    format reward (the published code's format_reward_fn),
    https://arxiv.org/abs/2506.10947.  Output ``[B]``: float64 (float32 in JAX with x64
    off); detached (no gradient).

    ``format_valid`` ``[B]`` (bool): the extractor found a non-empty answer.

    >>> import torch, zero_torch
    >>> zero_torch.format_rewards(torch.tensor([True, False])).tolist()
    [1.0, 0.0]
    """
    (f,) = _c.arrays("format_rewards", format_valid)
    return f.to(torch.float64)


@torch.no_grad()
def wrong_label_rewards(answers: torch.Tensor, truth: torch.Tensor) -> torch.Tensor:
    """Spurious-reward control: agreement with the group's most voted wrong answer.

    ``r_ij = 1[a_ij = w_i], w_i = argmax_{c != t_i} n_ic (smallest id on ties)``

    Spurious Rewards: Rethinking Training Signals in RLVR (Rulin Shao et al., 2025), §3,
    incorrect reward (agreement with a wrong majority label),
    https://arxiv.org/abs/2506.10947.  Output ``[B, K]``: float64 (float32 in JAX with
    x64 off); detached (no gradient).

    ``answers`` ``[B, K]`` and ``truth`` ``[B]``: integer ids (compared exactly across
    dtypes).  The label of a row is its most voted answer other than the truth; a
    row whose answers are all the truth pays 0.

    >>> import torch, zero_torch
    >>> a = torch.tensor([[4, 4, 7, 7, 7], [1, 1, 1, 1, 1]])
    >>> zero_torch.wrong_label_rewards(a, torch.tensor([7, 1])).tolist()
    [[1.0, 1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0]]
    """
    a, t = _c.arrays("wrong_label_rewards", answers, truth)
    wide = _c.as_int64(a)  # order-preserving except uint64 >= 2**63 (handled below)
    out = torch.zeros(a.shape, dtype=torch.float64, device=a.device)
    for i in range(a.shape[0]):  # obviously correct: one row at a time
        wrong = ~_c.ids_equal(a[i], t[i])
        if not bool(wrong.any()):
            continue
        same = _c.ids_equal(a[i][:, None], a[i][None, :])
        counts = torch.where(wrong, same.sum(-1), torch.zeros_like(wrong, dtype=torch.int64))
        top = counts.max()
        candidates = [j for j in range(a.shape[1]) if bool(wrong[j]) and int(counts[j]) == top]
        if a.dtype == torch.uint64:
            j = min(candidates, key=lambda c: int(wide[i, c]) % 2**64)
        else:
            j = min(candidates, key=lambda c: int(wide[i, c]))
        out[i] = same[j].to(torch.float64)
    return out
