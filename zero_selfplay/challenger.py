"""The Challenger: a categorical policy over cart templates, in Flax NNX.

R-Zero's Challenger is a language model that writes questions.  Here it chooses
one of the domain's templates (task, number of items, price range, quantity
range) per proposal and the domain draws a cart from it; the template id doubles
as the proposal's *cluster* id for the repetition penalty (dense ids in
``[0, NUM_TEMPLATES)``, passed to ``challenger_rewards`` as ``num_clusters``).

Two optional constraints are the levers the feasibility study pointed at:

* ``eval_range``: only templates whose carts look like evaluation carts;
* ``quota``: a per-task quota -- a fixed share of every batch must be deduction
  templates and the rest abduction templates, so the policy cannot starve (or
  flood) a task.

Both act as masks on the logits, so the policy gradient is taken under the
distribution that actually produced each proposal.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

from zero_selfplay.domain import IN_EVAL_RANGE, NUM_TEMPLATES, TEMPLATE_TASK

__all__ = ["TemplatePolicy", "allowed_templates", "log_prob", "propose"]


class TemplatePolicy(nnx.Module):
    """Logits over the templates; zeros (uniform) at the start."""

    def __init__(self, num_templates: int = NUM_TEMPLATES):
        self.logits = nnx.Param(jnp.zeros((num_templates,), jnp.float32))

    def __call__(self) -> jax.Array:
        return self.logits[...]


def allowed_templates(batch: int, *, eval_range: bool, quota: float | None) -> np.ndarray:
    """Bool ``[batch, NUM_TEMPLATES]``: which templates each proposal slot may use.

    ``quota`` is the share of deduction slots (the first ``round(quota * batch)``
    slots); ``None`` lets the policy choose the task freely.
    """
    allowed = np.ones((batch, NUM_TEMPLATES), bool)
    if eval_range:
        allowed &= IN_EVAL_RANGE[None, :]
    if quota is not None:
        if not 0.0 <= quota <= 1.0:
            raise ValueError(f"quota must lie in [0, 1], got {quota}")
        slot_task = (np.arange(batch) >= round(quota * batch)).astype(np.int32)
        allowed &= TEMPLATE_TASK[None, :] == slot_task[:, None]
    return allowed


def _masked(logits: jax.Array, allowed: jax.Array) -> jax.Array:
    return jax.nn.log_softmax(jnp.where(allowed, logits[None, :], -1e9), axis=-1)


def propose(logits: jax.Array, allowed: jax.Array, key: jax.Array) -> jax.Array:
    """One template id per row of ``allowed``, int32 ``[batch]``."""
    return jax.random.categorical(key, _masked(logits, allowed), axis=-1).astype(jnp.int32)


def log_prob(logits: jax.Array, allowed: jax.Array, ids: jax.Array) -> jax.Array:
    """Log-probability of each proposal under the masked policy, ``[batch]``."""
    logp = _masked(logits, allowed)
    return jnp.take_along_axis(logp, ids[:, None], axis=-1)[:, 0]


def probabilities(logits: jax.Array, allowed: np.ndarray) -> np.ndarray:
    """The policy's average distribution over templates across proposal slots."""
    return np.asarray(jnp.exp(_masked(jnp.asarray(logits), jnp.asarray(allowed))).mean(0))
