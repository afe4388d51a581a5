"""MM-Zero rewards, PyTorch reference (Li et al., 2026, arXiv:2603.09206,
Sections 2.5-2.6).  Mirrors ``zero_jax.mm_zero``."""

from __future__ import annotations

import torch

from zero_contracts import complement_weight
from zero_torch import _checks as _c
from zero_torch._checks import Index, Real
from zero_torch.primitives import vote

__all__ = ["coder_rewards", "solver_rewards", "solver_rewards_frozen"]


@torch.no_grad()
def coder_rewards(
    executed: torch.Tensor,
    easy_accuracy: torch.Tensor,
    consistency: torch.Tensor,
    syntax_error: torch.Tensor,
) -> torch.Tensor:
    """MM-Zero coder reward: execution and visual feedback minus error penalties.

    ``r_i = 1_e [1 + s_i + min(c_i, 1 - c_i)] - 0.1 1_not_e - 0.05 1_syntax``

    MM-Zero: Self-Evolving Multi-Model Vision Language Models From Zero Data (Zongxia Li et al.,
    2026), §2.5, Eqs. 7 and 11-12 (execution and visual feedback),
    https://arxiv.org/abs/2603.09206.  Output ``[B]``: the promoted dtype of ``easy_accuracy``
    and ``consistency``; detached (no gradient).

    Visual scores of unexecuted rows are ignored (may be NaN); no cap on ``s``;
    both error penalties can add up.  Output dtype: promoted dtype of the floats.

    >>> import torch, zero_torch
    >>> nan = float("nan")
    >>> r = zero_torch.coder_rewards(torch.tensor([True, False]), torch.tensor([0.8, nan]),
    ...                              torch.tensor([0.5, nan]), torch.tensor([False, True]))
    >>> [round(x, 4) for x in r.tolist()]
    [2.3, -0.15]
    """
    e, s, c, x = _c.arrays("coder_rewards", executed, easy_accuracy, consistency, syntax_error)
    _c.data_checks("coder_rewards", executed=e, easy_accuracy=s, consistency=c)
    out = torch.result_type(s, c)
    dtype = _c.compute_dtype(out)
    s, c = s.to(dtype), c.to(dtype)
    success = 1 + s + torch.minimum(c, 1 - c)
    # an unexecuted render with a syntax error earns the constant -0.15 (-0.1 - 0.05 in
    # binary is -0.15000000000000002)
    failed = torch.where(x, torch.full_like(s, -0.15), torch.full_like(s, -0.1))
    reward = torch.where(e, success - 0.05 * x.to(dtype), failed)
    return reward.to(out)


@torch.no_grad()
def solver_rewards(
    answers: torch.Tensor,
    format_valid: torch.Tensor,
    num_answers: Index,
    alpha: Real = 0.9,
    *,
    method: str = "auto",
) -> torch.Tensor:
    """MM-Zero solver reward: agreement with the silver majority plus a format bonus.

    ``r_ij = alpha 1[a_ij = y_i] + (1 - alpha) v_ij``

    MM-Zero: Self-Evolving Multi-Model Vision Language Models From Zero Data (Zongxia Li et al.,
    2026), §2.6, Eqs. 13-14 (silver-answer reward), https://arxiv.org/abs/2603.09206.  Output
    ``[B, K]``: float64 (float32 in JAX with x64 off); detached (no gradient).

    The majority counts all K answers of the row, ties to the smallest id; format
    is an additive bonus, not a gate.  ``1 - alpha`` is taken in decimal, as the
    published code writes it (``alpha = 0.9`` gives exactly ``0.1``).

    >>> import torch, zero_torch
    >>> a = torch.tensor([[4, 4, 2]]); v = torch.tensor([[False, True, True]])
    >>> zero_torch.solver_rewards(a, v, num_answers=5).tolist()
    [[0.9, 1.0, 0.1]]
    """
    a, v = _c.arrays("solver_rewards", answers, format_valid)
    h = _c.hypers("solver_rewards", num_answers=num_answers, alpha=alpha, method=method)
    _c.data_checks("solver_rewards", answers=a, num_answers=h["num_answers"])
    ids = _c.as_int64(a)
    labels, _ = vote(ids, h["num_answers"], h["method"], _c.id_max(a))
    agree = (ids == labels[:, None]).to(torch.float64)
    w: float = h["alpha"]  # a Python float
    return w * agree + complement_weight(w) * v.to(torch.float64)


@torch.no_grad()
def solver_rewards_frozen(
    answers: torch.Tensor,
    format_valid: torch.Tensor,
    labels: torch.Tensor,
    alpha: Real = 0.9,
) -> torch.Tensor:
    """MM-Zero solver reward against frozen labels plus a format bonus.

    ``r_ij = alpha 1[a_ij = y_i] + (1 - alpha) v_ij, y_i given``

    MM-Zero: Self-Evolving Multi-Model Vision Language Models From Zero Data (Zongxia Li
    et al., 2026), §2.6, Eqs. 13-14 (silver-answer reward) with the label frozen,
    https://arxiv.org/abs/2603.09206.  Output ``[B, K]``: float64 (float32 in JAX with x64
    off); detached (no gradient).

    No vote: ids and labels are any integers, compared exactly; ``1 - alpha`` is
    taken in decimal.

    >>> import torch, zero_torch
    >>> a = torch.tensor([[4, 4, 2]]); v = torch.tensor([[False, True, True]])
    >>> zero_torch.solver_rewards_frozen(a, v, torch.tensor([2])).tolist()
    [[0.0, 0.1, 1.0]]
    """
    a, v, y = _c.arrays("solver_rewards_frozen", answers, format_valid, labels)
    h = _c.hypers("solver_rewards_frozen", alpha=alpha)
    agree = _c.ids_equal(a, y[:, None]).to(torch.float64)
    w: float = h["alpha"]  # a Python float
    return w * agree + complement_weight(w) * v.to(torch.float64)
