"""The Solver: a chain ("scratchpad") model over cart items, in Flax NNX.

Both tasks are answered by a chain of ``n`` small steps (``n`` items), each
emitting one vocabulary id:

* deduction: start from 0 and *add* one item's ``price * quantity`` per step; the
  last running total is the answer;
* abduction: start from the shown total and *subtract* one visible item per step,
  leaving the hidden item's line total; a final *divide* step reads that
  remainder and the hidden field's partner and emits the hidden field.

Sampling draws every step from the model's softmax *and* visits the items in a
fresh random order per sample, so two samples of one cart pass through different
intermediate values: their mistakes are less correlated than a one-step
network's systematic error, and a majority of K samples can beat the greedy
answer (argmax steps, items in the cart's own order).  That gap is what R-Zero's
majority-vote pseudo-labels feed on.

All functions are pure and traceable: the self-play loop calls them inside
``jit`` and ``lax.scan`` with parameters split from the module by ``nnx.split``.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from flax import nnx

from zero_selfplay.domain import ABDUCTION, FIELD_MAX, N_MAX, PRICE, VOCAB, Carts

__all__ = [
    "ChainSolver",
    "Trace",
    "accuracy",
    "rollout",
    "line_totals",
    "picked_logp",
    "picked_step_logp",
    "sample_answers",
    "step_kl",
    "step_log_probs",
    "teacher_trace",
    "trace_logp",
]

ADD, SUB, DIV = 0, 1, 2  # step kinds
KINDS = 3


class ChainSolver(nnx.Module):
    """One chain step: ``(kind, state, x, y) -> logits over the vocabulary``.

    Add / subtract steps read the running value and one item's price ``x`` and
    quantity ``y``; the divide step reads the remainder and the partner ``y``.
    Every input has its own embedding per step kind; a residual MLP follows.
    """

    def __init__(self, *, dim: int = 64, hidden: int = 128, rngs: nnx.Rngs):
        self.emb_s = nnx.Embed(KINDS * VOCAB, dim, rngs=rngs)
        self.emb_x = nnx.Embed(KINDS * (FIELD_MAX + 1), dim, rngs=rngs)
        self.emb_y = nnx.Embed(KINDS * (FIELD_MAX + 1), dim, rngs=rngs)
        self.hidden1 = nnx.Linear(dim, hidden, rngs=rngs)
        self.hidden2 = nnx.Linear(hidden, hidden, rngs=rngs)
        self.out = nnx.Linear(hidden, VOCAB, rngs=rngs)

    def __call__(self, kind, state, x, y) -> jax.Array:
        f = FIELD_MAX + 1
        h = (
            self.emb_s(kind * VOCAB + jnp.clip(state, 0, VOCAB - 1))
            + self.emb_x(kind * f + jnp.clip(x, 0, FIELD_MAX))
            + self.emb_y(kind * f + jnp.clip(y, 0, FIELD_MAX))
        )
        h = nnx.gelu(self.hidden1(h))
        h = h + nnx.gelu(self.hidden2(h))
        return self.out(h)


class Trace(NamedTuple):
    """Every step of a batch of chains (``[M, steps]`` each) and the answers ``[M]``.

    Step ``t`` of a row is active when ``t < n`` (its cart's number of items): a
    deduction cart takes ``n`` add steps, an abduction cart ``n - 1`` subtract
    steps and then the divide step.  The answer is the last active step's token.
    """

    kind: jax.Array
    state: jax.Array
    x: jax.Array
    y: jax.Array
    token: jax.Array
    active: jax.Array
    answer: jax.Array
    item: jax.Array  # the cart slot each step visits (the hidden slot for a divide step)


def _excluded(c: Carts) -> jax.Array:
    """Slots no add / subtract step visits: padding and the hidden item."""
    slots = jnp.arange(N_MAX)[None, :]
    hidden = (c.task[:, None] == ABDUCTION) & (slots == c.missing[:, None])
    return (slots >= c.n[:, None]) | hidden


def item_order(c: Carts, key: jax.Array | None) -> jax.Array:
    """The order in which the steps visit the items, ``[M, N_MAX]``.

    ``key=None`` keeps the cart's own order (greedy decoding); otherwise every row
    gets its own random permutation of its visited items.  Excluded slots go last.
    """
    excluded = _excluded(c).astype(jnp.float32)
    if key is None:
        noise = jnp.arange(N_MAX, dtype=jnp.float32)[None, :] / N_MAX
    else:
        noise = jax.random.uniform(key, excluded.shape, jnp.float32)
    return jnp.argsort(noise + 2 * excluded, axis=1).astype(jnp.int32)


def _partner(c: Carts) -> jax.Array:
    rows = jnp.arange(c.n.shape[0])
    return jnp.where(
        c.field == PRICE, c.quantity[rows, c.missing], c.price[rows, c.missing]
    ).astype(jnp.int32)


class _Layout(NamedTuple):
    kind: jax.Array  # [M, steps]
    x: jax.Array
    y: jax.Array
    line: jax.Array  # price * quantity of an add / subtract step, else 0
    divide: jax.Array  # the divide step of an abduction row
    active: jax.Array
    start: jax.Array  # [M]: 0 for deduction, the shown total for abduction
    item: jax.Array  # [M, steps]: the slot each step visits


def _layout(c: Carts, order: jax.Array, steps: int) -> _Layout:
    i32 = jnp.int32
    abd = (c.task == ABDUCTION)[:, None]
    price = jnp.take_along_axis(c.price, order, axis=1)[:, :steps].astype(i32)
    quantity = jnp.take_along_axis(c.quantity, order, axis=1)[:, :steps].astype(i32)
    t = jnp.arange(steps)[None, :]
    visible = (c.n - abd[:, 0].astype(c.n.dtype))[:, None]
    arith = t < visible
    divide = abd & (t == visible)
    kind = jnp.where(divide, DIV, jnp.where(abd, SUB, ADD)).astype(i32)
    x = jnp.where(divide, 0, price)
    y = jnp.where(divide, _partner(c)[:, None], quantity)
    line = jnp.where(arith, price * quantity, 0)
    start = jnp.where(abd[:, 0], c.total, 0).astype(i32)
    item = jnp.where(divide, c.missing[:, None], order[:, :steps]).astype(i32)
    return _Layout(kind, x, y, line, divide, arith | divide, start, item)


def rollout(model: ChainSolver, c: Carts, key: jax.Array | None, steps: int = N_MAX) -> Trace:
    """One chain per cart: sampled in a random item order, or greedy (``key=None``).

    ``steps`` (static) must be at least the largest ``n`` in ``c``.
    """
    greedy = key is None
    if greedy:
        lay = _layout(c, item_order(c, None), steps)
        keys = jnp.zeros((steps,), jnp.uint32)  # unused placeholders
    else:
        order_key, sub = jax.random.split(key)
        lay = _layout(c, item_order(c, order_key), steps)
        keys = jax.random.split(sub, steps)

    def body(s, xs):
        kind, x, y, act, k = xs
        logits = model(kind, s, x, y)
        if greedy:
            tok = jnp.argmax(logits, axis=-1).astype(jnp.int32)
        else:
            tok = jax.random.categorical(k, logits, axis=-1).astype(jnp.int32)
        return jnp.where(act, tok, s), (s, tok)

    xs = (lay.kind.T, lay.x.T, lay.y.T, lay.active.T, keys)
    answer, (states, tokens) = jax.lax.scan(body, lay.start, xs)
    return Trace(lay.kind, states.T, lay.x, lay.y, tokens.T, lay.active, answer, lay.item)


def teacher_trace(c: Carts, key: jax.Array, steps: int = N_MAX) -> Trace:
    """The correct chain of each cart in a random item order (supervised targets)."""
    lay = _layout(c, item_order(c, key), steps)
    sign = jnp.where(c.task == ABDUCTION, -1, 1)[:, None]
    after = lay.start[:, None] + sign * jnp.cumsum(lay.line, axis=1)
    before = after - sign * lay.line
    token = jnp.where(lay.divide, c.answer[:, None], after).astype(jnp.int32)
    return Trace(lay.kind, before.astype(jnp.int32), lay.x, lay.y, token, lay.active,
                 c.answer.astype(jnp.int32), lay.item)  # fmt: skip


def step_log_probs(model: ChainSolver, t: Trace) -> jax.Array:
    """Log-softmax over the vocabulary at every step of ``t``, ``[M, steps, VOCAB]``."""
    return jax.nn.log_softmax(model(t.kind, t.state, t.x, t.y).astype(jnp.float32), axis=-1)


def picked_step_logp(logp: jax.Array, t: Trace) -> jax.Array:
    """Log-probability of each step's token, ``[M, steps]`` (0 on inactive steps)."""
    picked = jnp.take_along_axis(logp, jnp.clip(t.token, 0, VOCAB - 1)[..., None], axis=-1)
    return jnp.where(t.active, picked[..., 0], 0.0)


def picked_logp(logp: jax.Array, t: Trace) -> jax.Array:
    """Log-probability of each chain's tokens, summed over active steps, ``[M]``."""
    return jnp.sum(picked_step_logp(logp, t), axis=-1)


def trace_logp(model: ChainSolver, t: Trace) -> jax.Array:
    """Log-probability of each chain's tokens under ``model``, summed over active steps."""
    return picked_logp(step_log_probs(model, t), t)


def step_kl(logp: jax.Array, ref_logp: jax.Array, t: Trace) -> jax.Array:
    """Exact ``KL(model || reference)`` over the vocabulary, summed over active steps, ``[M]``."""
    kl = jnp.sum(jnp.exp(logp) * (logp - ref_logp), axis=-1)
    return jnp.sum(jnp.where(t.active, kl, 0.0), axis=-1)


def line_totals(t: Trace, n_slots: int = N_MAX) -> tuple[jax.Array, jax.Array]:
    """The line total each sampled chain implies for every cart slot, ``[M, n_slots]``.

    An add step's implied line total is ``token - state`` and a subtract step's
    ``state - token``; it is put at the slot the step visited.  Returns the
    implied values and a mask of the slots some add / subtract step visited
    (padding, the hidden slot of an abduction cart and the divide step have none).
    """
    arith = t.active & (t.kind != DIV)
    delta = jnp.where(t.kind == SUB, t.state - t.token, t.token - t.state)
    onehot = jax.nn.one_hot(t.item, n_slots, dtype=jnp.int32) * arith[..., None]
    value = jnp.sum(onehot * delta[..., None], axis=1)
    return value.astype(jnp.int32), jnp.sum(onehot, axis=1) > 0


def repeat(c: Carts, k: int) -> Carts:
    """Each cart ``k`` times in a row (``[B] -> [B * k]``)."""
    return Carts(*(jnp.repeat(x, k, axis=0) for x in c))


def sample_answers(
    model: ChainSolver, c: Carts, key: jax.Array, k: int, steps: int = N_MAX
) -> tuple[Trace, jax.Array]:
    """``k`` sampled chains per cart: their trace ``[B * k, ...]`` and answers ``[B, k]``."""
    t = rollout(model, repeat(c, k), key, steps)
    return t, t.answer.reshape(-1, k)


def accuracy(
    model: ChainSolver, c: Carts, key: jax.Array, k: int, vote, steps: int = N_MAX
) -> dict[str, jax.Array]:
    """Greedy, sampled (mean over ``k`` samples) and majority-of-``k`` accuracy.

    ``vote`` is the rewards module's ``consensus`` (majority, smallest-id ties).
    """
    truth = c.answer.astype(jnp.int32)
    greedy = rollout(model, c, None, steps).answer
    _, answers = sample_answers(model, c, key, k, steps)
    labels, _ = vote(answers, VOCAB)
    return {
        "greedy": jnp.mean(greedy == truth),
        "sampled": jnp.mean(answers == truth[:, None]),
        "majority": jnp.mean(labels == truth),
    }
