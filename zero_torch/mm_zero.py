"""MM-Zero rewards, PyTorch reference (problem 113).  Mirrors ``zero_jax.mm_zero``."""

from __future__ import annotations

import torch

from zero_torch import _checks as _c
from zero_torch.primitives import VOTE_METHODS, majority_vote

__all__ = ["coder_rewards", "solver_rewards"]


@torch.no_grad()
def coder_rewards(
    executed: torch.Tensor,
    easy_accuracy: torch.Tensor,
    consistency: torch.Tensor,
    syntax_error: torch.Tensor,
) -> torch.Tensor:
    """``1_e [1 + s + min(c, 1 - c)] - 0.1 * 1_{not e} - 0.05 * 1_syntax``, detached.

    Visual scores of unexecuted rows are ignored (may be NaN); no cap on ``s``;
    both error penalties can add up.  Output dtype: promoted dtype of the floats.
    """
    e = _c.boolean("executed", executed, 1, "[B]")
    _c.nonempty("executed", e, "[B]")
    s = _c.floating("easy_accuracy", easy_accuracy, 1, "[B]")
    _c.same_shape("easy_accuracy", s, "executed", e)
    c = _c.floating("consistency", consistency, 1, "[B]")
    _c.same_shape("consistency", c, "executed", e)
    x = _c.boolean("syntax_error", syntax_error, 1, "[B]")
    _c.same_shape("syntax_error", x, "executed", e)
    _c.unit("easy_accuracy", s, where=e)
    _c.unit("consistency", c, where=e)
    dtype = torch.result_type(s, c)
    s, c = s.to(dtype), c.to(dtype)
    success = 1 + s + torch.minimum(c, 1 - c)
    return torch.where(e, success, torch.full_like(s, -0.1)) - 0.05 * x.to(dtype)


@torch.no_grad()
def solver_rewards(
    answers: torch.Tensor,
    format_valid: torch.Tensor,
    num_answers: int,
    alpha: float = 0.9,
    *,
    method: str = "auto",
) -> torch.Tensor:
    """float64 ``[B, K]``: ``alpha * 1[a == majority] + (1 - alpha) * format_valid``.

    The majority counts all K answers of the row, ties to the smallest id; format
    is an additive bonus, not a gate.
    """
    a = _c.integer("answers", answers, 2, "[B, K]")
    _c.nonempty("answers", a, "[B, K]")
    v = _c.boolean("format_valid", format_valid, 2, "[B, K]")
    _c.same_shape("format_valid", v, "answers", a)
    num_answers = _c.static_count("num_answers", num_answers)
    alpha = _c.scalar("alpha", alpha, 0.0, 1.0, "in [0, 1]")
    method = _c.method("method", method, VOTE_METHODS)
    _c.require((a >= 0) & (a < num_answers), f"answers must lie in [0, num_answers={num_answers})")
    labels, _ = majority_vote(a, num_answers, method)
    agree = (a == labels[:, None]).to(torch.float64)
    return alpha * agree + (1 - alpha) * v.to(torch.float64)
