"""R-Zero rewards, PyTorch reference (problems 107 and 108).  Mirrors
``zero_jax.r_zero``; see there for the equations in full."""

from __future__ import annotations

import torch

from zero_torch import _checks as _c
from zero_torch.primitives import VOTE_METHODS, cluster_sizes, majority_vote

__all__ = [
    "challenger_rewards",
    "consensus",
    "curriculum_mask",
    "pseudo_rewards",
    "uncertainty_reward",
]


def _consistency(consistency: torch.Tensor) -> torch.Tensor:
    p = _c.floating("consistency", consistency, 1, "[B]")
    _c.nonempty("consistency", p, "[B]")
    _c.unit("consistency", p)
    return p


def _answers(answers: torch.Tensor) -> torch.Tensor:
    a = _c.integer("answers", answers, 2, "[B, K]")
    _c.nonempty("answers", a, "[B, K]")
    return a


@torch.no_grad()
def uncertainty_reward(consistency: torch.Tensor) -> torch.Tensor:
    """``1 - 2|p - 1/2|`` of float ``[B]`` consistency in [0, 1]; same dtype, detached."""
    p = _consistency(consistency)
    return 1 - 2 * (p - 0.5).abs()


@torch.no_grad()
def challenger_rewards(
    consistency: torch.Tensor,
    clusters: torch.Tensor,
    valid: torch.Tensor,
    strength: float = 1.0,
    *,
    num_clusters: int | None = None,
) -> torch.Tensor:
    """``valid * max(0, 1 - 2|p - 1/2| - strength * |C_i| / B)``, detached, dtype of p.

    ``|C_i|`` counts every proposal of the batch with proposal i's cluster id,
    invalid ones included.  Ids are arbitrary integers, or dense in
    ``[0, num_clusters)`` when ``num_clusters`` is given.
    """
    p = _consistency(consistency)
    c = _c.integer("clusters", clusters, 1, "[B]")
    _c.same_shape("clusters", c, "consistency", p)
    v = _c.boolean("valid", valid, 1, "[B]")
    _c.same_shape("valid", v, "consistency", p)
    strength = _c.scalar("strength", strength, 0.0, None, "a finite number >= 0")
    if num_clusters is not None:
        num_clusters = _c.static_count("num_clusters", num_clusters)
        in_range = (c >= 0) & (c < num_clusters)
        _c.require(in_range, f"clusters must lie in [0, num_clusters={num_clusters})")
    share = cluster_sizes(c, num_clusters).to(p.dtype) / p.shape[0]
    reward = (1 - 2 * (p - 0.5).abs() - strength * share).clamp(min=0)
    return torch.where(v, reward, torch.zeros_like(reward))


@torch.no_grad()
def consensus(
    answers: torch.Tensor, num_answers: int, *, method: str = "auto"
) -> tuple[torch.Tensor, torch.Tensor]:
    """Majority label (long ``[B]``, smallest id wins ties) and its vote share
    (float64 ``[B]``) over all K answers of each row of long ``[B, K]`` ids."""
    a = _answers(answers)
    num_answers = _c.static_count("num_answers", num_answers)
    method = _c.method("method", method, VOTE_METHODS)
    _c.require((a >= 0) & (a < num_answers), f"answers must lie in [0, num_answers={num_answers})")
    labels, top = majority_vote(a, num_answers, method)
    return labels.long(), top.to(torch.float64) / a.shape[1]


def curriculum_mask(
    consistency: torch.Tensor, low: float = 0.25, high: float = 0.75
) -> torch.Tensor:
    """bool ``[B]``: ``low <= p <= high``, both boundaries kept."""
    p = _consistency(consistency)
    low = _c.scalar("low", low, 0.0, 1.0, "in [0, 1]")
    high = _c.scalar("high", high, 0.0, 1.0, "in [0, 1]")
    if low > high:
        raise ValueError(f"need 0 <= low <= high <= 1, got low={low!r} > high={high!r}")
    return (p >= low) & (p <= high)


@torch.no_grad()
def pseudo_rewards(answers: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """float64 ``[B, K]``: ``1[a_ij == y_i]`` against frozen labels ``[B]`` (no re-vote)."""
    a = _answers(answers)
    y = _c.integer("labels", labels, 1, "[B]")
    _c.same_batch("labels", y, "answers", a)
    return (a == y[:, None]).to(torch.float64)
