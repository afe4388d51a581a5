"""Role-conditioned advantages for self-play in which one policy plays several roles.

From *SPIRAL: Self-Play on Zero-Sum Games Incentivizes Reasoning via Multi-Agent
Multi-Turn Reinforcement Learning* (Liu et al., 2025, https://arxiv.org/abs/2506.24119):
role-conditioned advantage estimation (RAE) keeps one moving-average baseline per
role, so that a structural edge of one role (the first mover, the challenger) is not
read as credit.  The function is pure: the baselines go in and the updated ones come
out, so it runs inside a jitted step and under ``lax.scan`` over steps.

A group-relative comparison per role (prime-rl's hierarchical GRPO: solver attempts
against the other attempts on the same problem, proposals against the other proposals
of the same source) is :func:`zero_jax.group_advantages` with ``scale="none"`` on
groups laid out per role.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from jax import lax
from jax.sharding import reshard
from jax.typing import ArrayLike

from zero_contracts import messages as msg
from zero_jax import _checks as _c
from zero_jax._checks import Index
from zero_jax.primitives import _gather

__all__ = ["role_baseline_advantages"]


def role_baseline_advantages(
    rewards: Any,
    roles: Any,
    baselines: Any,
    mask: Any = None,
    *,
    num_roles: Index,
    decay: ArrayLike = 0.95,
) -> tuple[jax.Array, jax.Array]:
    """SPIRAL's role-conditioned advantages: each role's reward minus its moving baseline.

    ``A_i = r_i - b_k, then b_k <- decay b_k + (1 - decay) r_i (k = role_i, in batch order)``

    SPIRAL: Self-Play on Zero-Sum Games Incentivizes Reasoning via Multi-Agent Multi-Turn
    Reinforcement Learning (Bo Liu et al., 2025), role-conditioned advantage estimation
    (RAE; its published train_spiral.py), https://arxiv.org/abs/2506.24119.  Output
    ``([B], [R])``: advantages in the promoted dtype of ``rewards`` and ``baselines``, new
    baselines in the dtype of ``baselines``; detached (no gradient).

    As the published trainer does (github.com/spiral-rl/spiral, ``train_spiral.py``
    ``prepare_trajectories`` with ``spiral/utils.py``'s ``EMA``): the entries are
    taken in batch order; each is scored against its role's baseline *before* its
    own reward updates it, then folded in with weight ``1 - decay``.  No
    normalisation (SPIRAL's learner uses the difference as the advantage).  Start
    with ``baselines = zeros(num_roles)`` (SPIRAL's EMA starts at 0) and carry the
    returned baselines to the next step.  ``decay = 1`` freezes the baselines,
    ``decay = 0`` makes each the role's last reward.  SPIRAL scales the reward
    (``reward_scaling``) before and discounts turns (``gamma``) after: do both
    outside.

    Entries the mask drops neither read nor move a baseline and get advantage 0.  A
    kept entry with a non-finite reward gives NaN, and so do the later entries of
    its role and its role's new baseline (they read it); a kept role id outside
    ``[0, num_roles)`` gives NaN on its row only; a non-finite baseline gives NaN
    to its role's rows and new baseline.

    Args:
      rewards: float ``[B]``, finite where ``mask``.
      roles: integer ``[B]`` role ids in ``[0, num_roles)`` where ``mask``.
      baselines: float ``[R]`` with ``R = num_roles``, finite: the baselines before
        this batch.
      mask: optional bool ``[B]``, the entries to use.
      num_roles: static number of roles.
      decay: weight of the old baseline in ``[0, 1]`` (a number or a traced scalar).

    Returns:
      ``(advantages [B], new_baselines [R])``; advantages in float32 for half
      precision inputs, rounded once.

    >>> import jax.numpy as jnp, zero_jax
    >>> adv, b = zero_jax.role_baseline_advantages(
    ...     jnp.array([1.0, -1.0, 1.0, -1.0]), jnp.array([0, 1, 0, 1]), jnp.zeros(2),
    ...     num_roles=2, decay=0.5)
    >>> adv.tolist(), b.tolist()
    ([1.0, -1.0, 0.5, -0.5], [0.75, -0.75])
    """
    r, k, b, m = _c.arrays("role_baseline_advantages", rewards, roles, baselines, mask)
    h = _c.hypers("role_baseline_advantages", num_roles=num_roles, decay=decay)
    return _role_baseline(r, k, b, m, **h)


def _then(
    first: tuple[jax.Array, jax.Array], second: tuple[jax.Array, jax.Array]
) -> tuple[jax.Array, jax.Array]:
    """The affine maps ``b -> a b + c`` of two stretches of the batch, composed in
    order (the first, then the second)."""
    a1, c1 = first
    a2, c2 = second
    return a1 * a2, a2 * c1 + c2


@_c.kernel("role_baseline_advantages")
def _role_baseline(
    rewards: jax.Array,
    roles: jax.Array,
    baselines: jax.Array,
    mask: jax.Array | None,
    num_roles: int,
    decay: float | jax.Array,
) -> tuple[jax.Array, jax.Array]:
    if baselines.shape[-1] != num_roles:
        raise ValueError(msg.ROLES_SHAPE.format(count=num_roles, got=tuple(baselines.shape)))
    # the scan runs along the batch: an explicitly sharded batch is gathered (one float
    # and one id per entry), and the advantages are sharded back like the rewards
    rewards, sharding = _gather(rewards)
    roles, _ = _gather(roles)
    if mask is not None:
        mask, _ = _gather(mask)
    baselines, _ = _gather(baselines)
    bad = _c.invalid(
        "role_baseline_advantages",
        rewards=rewards, roles=roles, baselines=baselines, mask=mask,
        num_roles=num_roles, decay=decay,
    )
    out = jnp.result_type(rewards, baselines)
    dtype = _c.compute_dtype(out)
    kept = jnp.ones(rewards.shape, bool) if mask is None else mask
    known = _c.in_range(roles, num_roles)
    role = jnp.where(known, roles, 0).astype(jnp.int32)
    r = rewards.astype(dtype)
    r = jnp.where(jnp.isfinite(r), r, jnp.nan)  # an infinity reaches later rows as NaN
    b0 = baselines.astype(dtype)
    b0 = jnp.where(jnp.isfinite(b0), b0, jnp.nan)
    g = jnp.asarray(decay, dtype)
    # entry i moves its own role's baseline: b -> g b + (1 - g) r_i; the others' stay
    own = (kept & known)[:, None] & (role[:, None] == jnp.arange(num_roles))
    a = jnp.where(own, g, jnp.ones((), dtype))
    c = jnp.where(own, (1 - g) * r[:, None], jnp.zeros((), dtype))
    a, c = lax.associative_scan(_then, (a, c), axis=0)
    after = a * b0 + c  # [B, R]: every baseline after entry i
    before = jnp.concatenate([b0[None], after[:-1]], axis=0)
    own_before = jnp.take_along_axis(before, role[:, None], axis=1)[:, 0]
    advantages = jnp.where(kept, r - own_before, jnp.zeros((), dtype))
    everything = _c.hyper_rules(bad)
    advantages = _c.poison(advantages, bad["roles"] | everything)
    new = _c.poison(after[-1], everything)
    advantages = advantages.astype(out)
    if sharding is not None:
        advantages = reshard(advantages, sharding)
    return lax.stop_gradient(advantages), lax.stop_gradient(new.astype(baselines.dtype))
