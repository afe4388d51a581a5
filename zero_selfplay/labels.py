"""Verifier-free pseudo-labels: per-item votes, calibration, abduction from deduction.

Everything here is traceable and takes the reward functions from a ``rewards``
object (the ``zero_jax`` module unless a test injects a spy), so every vote is
``consensus`` and every band is ``curriculum_mask``.

* **Per-item votes** (:func:`item_votes`).  A sampled deduction chain visits the
  items in its own random order and adds one line total per step, so every
  sample states a line total for every item (``token - state`` of the step that
  visited it).  ``consensus`` over the ``K`` samples of each *item* gives a
  per-item majority; the cart's label is the sum of the per-item majorities and
  its score the smallest per-item vote share.  A slip in one step of one sample
  then costs one vote on one item instead of the whole chain's answer.
* **Calibration** (:func:`fit_calibration`).  On a small labelled slice held out
  from the base model, a logistic curve of "label is right" against the score is
  fitted per task (Newton steps in a ``lax.scan``); :func:`reliability` turns a
  score into a calibrated probability that the label is right.
* **Abduction from confident deduction** (:func:`derive_abduction`).  A deduction
  cart with a voted total becomes an abduction cart: one visible field is hidden
  and the voted total is shown.  The hidden field was visible, so it is the label;
  the label is wrong exactly when the voted total was wrong (then the new cart
  states a false total).  No step here checks the arithmetic.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from zero_selfplay import domain as D
from zero_selfplay import solver as S

__all__ = [
    "Votes",
    "derive_abduction",
    "fit_calibration",
    "item_votes",
    "reliability",
    "step_advantages",
    "vote",
]

ITEM_IDS = 2 * D.VOCAB  # an implied line total v is voted on as id v + VOCAB


class Votes(NamedTuple):
    """Labels of a batch of carts from ``K`` sampled chains each (all ``[B]``).

    ``consistency`` is R-Zero's vote share of the final answers (the Challenger's
    uncertainty is built on it); ``score`` is what the calibration reads: the
    per-item score for per-item labels, else ``consistency``.  ``items`` holds the
    per-item majority line totals ``[B, N_MAX]`` (zeros for ``method="cart"``).
    """

    label: jax.Array
    consistency: jax.Array
    score: jax.Array
    items: jax.Array


def item_votes(
    rewards: Any, trace: S.Trace, k: int
) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array]:
    """Per-item majorities of ``k`` chains per cart (``trace`` rows are cart-major).

    Returns ``(cart_label, score, item_label, item_share)``: the sum of the
    per-item majority line totals (clipped to the vocabulary), the smallest
    per-item vote share over visited items, and the per-item majorities and
    shares ``[B, N_MAX]`` (unvisited slots: 0 and 1).
    """
    value, visited = S.line_totals(trace)
    b = value.shape[0] // k
    value = value.reshape(b, k, D.N_MAX)
    visited = visited.reshape(b, k, D.N_MAX)[:, 0]
    ids = jnp.clip(value + D.VOCAB, 0, ITEM_IDS - 1)
    per_item = jnp.swapaxes(ids, 1, 2).reshape(b * D.N_MAX, k)
    lab, share = rewards.consensus(per_item, ITEM_IDS)
    item_label = jnp.where(visited, lab.reshape(b, D.N_MAX).astype(jnp.int32) - D.VOCAB, 0)
    item_share = jnp.where(visited, share.reshape(b, D.N_MAX).astype(jnp.float32), 1.0)
    cart_label = jnp.clip(jnp.sum(item_label, axis=1), 0, D.VOCAB - 1).astype(jnp.int32)
    return cart_label, jnp.min(item_share, axis=1), item_label, item_share


def vote(rewards: Any, trace: S.Trace, answers: jax.Array, task: jax.Array, method: str) -> Votes:
    """Pseudo-labels of ``B`` carts from their ``[B, K]`` sampled answers and trace.

    ``method="cart"``: R-Zero's majority over final answers.  ``method="item"``:
    per-item votes for deduction carts; abduction carts (whose hidden field no
    step states per item) keep the majority over final answers.
    """
    label, consistency = rewards.consensus(answers, D.VOCAB)
    label = label.astype(jnp.int32)
    consistency = consistency.astype(jnp.float32)
    if method == "cart":
        return Votes(label, consistency, consistency, jnp.zeros((label.shape[0], D.N_MAX),
                                                                jnp.int32))  # fmt: skip
    if method != "item":
        raise ValueError(f"label method must be 'cart' or 'item', got {method!r}")
    item_label, item_score, items, _ = item_votes(rewards, trace, answers.shape[1])
    ded = task == D.DEDUCTION
    return Votes(
        jnp.where(ded, item_label, label),
        consistency,
        jnp.where(ded, item_score, consistency),
        items,
    )


def step_advantages(
    rewards: Any, trace: S.Trace, item_labels: jax.Array, final_adv: jax.Array, keep: jax.Array
) -> jax.Array:
    """Per-step GRPO advantages ``[B * K, steps]`` from per-item pseudo-labels.

    An add / subtract step is rewarded (``pseudo_rewards``) when the line total it
    implies equals its item's frozen per-item label; the ``K`` chains of a cart are
    the group of each item (``group_advantages``).  A divide step takes its
    chain's final-answer advantage ``final_adv`` ``[B, K]``.  ``keep`` ``[B]``
    masks questions out.
    """
    b, k = final_adv.shape
    value, visited = S.line_totals(trace)
    value = value.reshape(b, k, D.N_MAX)
    visited = visited.reshape(b, k, D.N_MAX)[:, 0] & keep[:, None]
    ids = jnp.swapaxes(jnp.clip(value + D.VOCAB, 0, ITEM_IDS - 1), 1, 2).reshape(b * D.N_MAX, k)
    labels = jnp.clip(item_labels + D.VOCAB, 0, ITEM_IDS - 1).reshape(-1)
    reward = rewards.pseudo_rewards(ids, labels)
    mask = jnp.broadcast_to(visited.reshape(-1, 1), reward.shape)
    adv = rewards.group_advantages(reward, mask).reshape(b, D.N_MAX, k)
    adv = jnp.swapaxes(adv, 1, 2).reshape(b * k, D.N_MAX)
    per_step = jnp.take_along_axis(adv, jnp.clip(trace.item, 0, D.N_MAX - 1), axis=1)
    arith = trace.active & (trace.kind != S.DIV)
    divide = trace.active & (trace.kind == S.DIV)
    return jnp.where(arith, per_step, jnp.where(divide, final_adv.reshape(-1, 1), 0.0))


def fit_calibration(
    score: jax.Array,
    correct: jax.Array,
    task: jax.Array,
    *,
    iters: int = 25,
    ridge: float = 1.0,
) -> jax.Array:
    """Logistic fits of ``P(label right | score)``, one per task: ``[2, 2]`` weights.

    Features are ``[1, 2 * score - 1]``; a ridge penalty keeps the weights finite
    when every label of the slice is right.  Newton steps run in ``lax.scan``.
    """
    x = jnp.stack([jnp.ones_like(score), 2.0 * score - 1.0], axis=1).astype(jnp.float32)
    y = correct.astype(jnp.float32)
    eye = jnp.eye(2, dtype=jnp.float32)

    def fit(weight):
        def step(w, _):
            p = jax.nn.sigmoid(x @ w)
            grad = x.T @ (weight * (p - y)) + ridge * w
            hess = x.T @ (x * (weight * p * (1 - p))[:, None]) + ridge * eye
            return w - jnp.linalg.solve(hess, grad), None

        w, _ = jax.lax.scan(step, jnp.zeros(2, jnp.float32), None, length=iters)
        return w

    return jnp.stack([fit((task == t).astype(jnp.float32)) for t in (D.DEDUCTION, D.ABDUCTION)])


def reliability(weights: jax.Array, score: jax.Array, task: jax.Array) -> jax.Array:
    """Calibrated probability that a label with this score (and task) is right."""
    w = weights[jnp.clip(task, 0, 1)]
    return jax.nn.sigmoid(w[:, 0] + w[:, 1] * (2.0 * score - 1.0))


def derive_abduction(
    c: D.Carts, shown_total: jax.Array, key: jax.Array
) -> tuple[D.Carts, jax.Array]:
    """Abduction carts made from deduction carts: hide one field, show ``shown_total``.

    Returns the new carts and their labels (the hidden field's value, which was
    visible on the deduction cart).  ``answer`` of the new carts is what their
    visible fields imply (:func:`domain.solve`, ``-1`` when nothing does): it is
    kept for diagnostics only and equals the label exactly when ``shown_total``
    is the true total.
    """
    km, kf = jax.random.split(key)
    b = c.n.shape[0]
    missing = jnp.minimum(
        jnp.floor(jax.random.uniform(km, (b,)) * c.n).astype(jnp.int32), c.n - 1
    )
    field = jax.random.randint(kf, (b,), 0, 2, dtype=jnp.int32)
    rows = jnp.arange(b)
    label = jnp.where(field == D.PRICE, c.price[rows, missing], c.quantity[rows, missing])
    task = jnp.full((b,), D.ABDUCTION, jnp.int32)
    new = D.Carts(c.price, c.quantity, c.n, task, missing, field,
                  shown_total.astype(jnp.int32), jnp.zeros((b,), jnp.int32))  # fmt: skip
    new = D.Carts(*new[:-1], D.solve(new).astype(jnp.int32))
    return new, label.astype(jnp.int32)
