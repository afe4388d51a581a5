"""Cart arithmetic: the task family the Challenger writes and the Solver answers.

A cart holds ``n`` items, each a (price, quantity) pair of small non-negative
integers.  Two tasks are posed on a cart:

* **deduction** -- every field is shown; the answer is the total
  ``sum_i price_i * quantity_i``;
* **abduction** -- the total is shown together with every field but one (the
  price or the quantity of one item); the answer is the hidden field.

Every answer is an id of one finite vocabulary ``0 .. VOCAB - 1``.  A cart is
*well formed* (the format gate, :func:`well_formed`) when its shape is right and
its answer is bound to fit the vocabulary, judged from the visible fields and
never by working the answer out: every field lies in ``0 .. FIELD_MAX``; a
deduction cart's bound ``n * max(price) * max(quantity)`` is below ``VOCAB``; an
abduction cart shows a total inside the vocabulary and a non-zero partner for its
hidden field (``x * 0 = r`` has no unique solution).  Whether the shown total is
consistent with the visible fields is *not* checked: that would be an arithmetic
verifier, which a self-play loop without ground truth does not have.

The Challenger does not write carts token by token: it picks a *template* (task,
number of items, price range, quantity range) and the domain draws a cart from
it.  Wide templates overflow the vocabulary and templates that allow a zero
quantity can hide a price behind a zero, so a policy can propose ill-formed work.

The evaluation sets (``EVAL_SIZE`` deduction and ``EVAL_SIZE`` abduction carts)
are drawn with NumPy from the constant ``EVAL_SEED``, which no run seed touches,
so every run and every seed is scored on the same carts.  The labelled seed set
of a run (the only ground truth the base model sees) and its calibration slice
are drawn from the run seed, from the same distribution, with every cart that
also occurs in an evaluation set removed.  Generated carts are checked against
the evaluation sets inside the jitted loop (:func:`held_out`), so no arm ever
trains on an evaluation cart.
"""

from __future__ import annotations

import hashlib
import itertools
from dataclasses import dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

__all__ = [
    "ABDUCTION",
    "DEDUCTION",
    "EVAL_RANGE",
    "EVAL_SIZE",
    "FIELD_MAX",
    "N_MAX",
    "NUM_TEMPLATES",
    "TEMPLATES",
    "VOCAB",
    "Carts",
    "Template",
    "calibration_set",
    "cart_hash",
    "eval_hashes",
    "eval_sets",
    "fingerprint",
    "held_out",
    "sample_carts",
    "seed_set",
    "solve",
    "well_formed",
]

DEDUCTION, ABDUCTION = 0, 1
TASK_NAMES = ("deduction", "abduction")
PRICE, QUANTITY = 0, 1  # which field of the chosen item an abduction cart hides

N_MAX = 6  # most items on any cart
VOCAB = 192  # answer ids 0 .. VOCAB - 1
FIELD_MAX = 15  # largest price or quantity any template can draw
EVAL_SIZE = 2048  # carts per task in each frozen evaluation set (>= 256 required)
EVAL_SEED = 20250806  # NumPy seed of the evaluation sets; never a run seed


@dataclass(frozen=True)
class Template:
    """What the Challenger chooses: a task and the ranges a cart is drawn from."""

    task: int
    n_items: int
    price: tuple[int, int]  # inclusive range
    quantity: tuple[int, int]  # inclusive range

    @property
    def name(self) -> str:
        t = "ded" if self.task == DEDUCTION else "abd"
        (pl, ph), (ql, qh) = self.price, self.quantity
        return f"{t}/n{self.n_items}/p{pl}-{ph}/q{ql}-{qh}"


#: The distribution of the evaluation and seed carts.
EVAL_RANGE = {"n_items": (2, 3, 4), "price": (1, 9), "quantity": (1, 5)}

_N_ITEMS = (2, 3, 4, 5, 6)
_PRICES = ((1, 5), (1, 9), (1, 15))
_QUANTITIES = ((1, 5), (0, 5), (1, 9))

#: Every template, in a fixed order; a template's index is its dense cluster id.
TEMPLATES: tuple[Template, ...] = tuple(
    Template(task, n, p, q)
    for task, n, p, q in itertools.product((DEDUCTION, ABDUCTION), _N_ITEMS, _PRICES, _QUANTITIES)
)
NUM_TEMPLATES = len(TEMPLATES)


def _in_eval_range(t: Template) -> bool:
    lo, hi = EVAL_RANGE["price"]
    qlo, qhi = EVAL_RANGE["quantity"]
    return (
        t.n_items in EVAL_RANGE["n_items"]
        and lo <= t.price[0] <= t.price[1] <= hi
        and qlo <= t.quantity[0] <= t.quantity[1] <= qhi
    )


#: Integer table ``[NUM_TEMPLATES, 6]``: task, n_items, price lo/hi, quantity lo/hi.
TEMPLATE_TABLE = np.array(
    [(t.task, t.n_items, *t.price, *t.quantity) for t in TEMPLATES], dtype=np.int32
)
TEMPLATE_TASK = TEMPLATE_TABLE[:, 0]
TEMPLATE_ITEMS = TEMPLATE_TABLE[:, 1]
#: Templates whose carts all look like evaluation carts (the "eval range" lever).
IN_EVAL_RANGE = np.array([_in_eval_range(t) for t in TEMPLATES])


class Carts(NamedTuple):
    """A batch of carts (a pytree of arrays with leading shape ``[B]``).

    ``price``/``quantity`` are ``[B, N_MAX]`` with zeros past ``n``; an abduction
    cart's hidden field is still stored (it is the answer) but the Solver never
    reads it.  ``answer`` is the ground truth, which the self-play loop uses only
    for diagnostics and for the oracle / seed-only arms.
    """

    price: jax.Array
    quantity: jax.Array
    n: jax.Array
    task: jax.Array
    missing: jax.Array  # index of the item with a hidden field (abduction)
    field: jax.Array  # PRICE or QUANTITY: which of its fields is hidden
    total: jax.Array
    answer: jax.Array

    def __len__(self) -> int:
        return int(self.n.shape[0])

    def take(self, idx) -> Carts:
        return Carts(*(x[idx] for x in self))


def _assemble(xp, price, quantity, n, task, missing, field) -> tuple:
    """Zero the slots past ``n`` and compute the total and the true answer."""
    slots = xp.arange(N_MAX)[None, :]
    live = slots < n[:, None]
    price = xp.where(live, price, 0)
    quantity = xp.where(live, quantity, 0)
    total = xp.sum(price * quantity, axis=1)
    rows = xp.arange(price.shape[0])
    hidden = xp.where(field == PRICE, price[rows, missing], quantity[rows, missing])
    answer = xp.where(task == DEDUCTION, total, hidden)
    return price, quantity, total, answer


def sample_carts(key: jax.Array, template_ids: jax.Array) -> Carts:
    """Draw one cart per template id (traceable; used inside the jitted loop)."""
    tab = jnp.asarray(TEMPLATE_TABLE)[template_ids]
    b = template_ids.shape[0]
    kp, kq, km, kf = jax.random.split(key, 4)
    price = jax.random.randint(kp, (b, N_MAX), tab[:, 2:3], tab[:, 3:4] + 1, dtype=jnp.int32)
    quantity = jax.random.randint(kq, (b, N_MAX), tab[:, 4:5], tab[:, 5:6] + 1, dtype=jnp.int32)
    n = tab[:, 1]
    missing = jax.random.randint(km, (b,), 0, n, dtype=jnp.int32)
    field = jax.random.randint(kf, (b,), 0, 2, dtype=jnp.int32)
    task = tab[:, 0]
    price, quantity, total, answer = _assemble(jnp, price, quantity, n, task, missing, field)
    i32 = jnp.int32
    return Carts(
        price.astype(i32), quantity.astype(i32), n.astype(i32), task.astype(i32),
        missing.astype(i32), field.astype(i32), total.astype(i32), answer.astype(i32),
    )  # fmt: skip


def _numpy_carts(rng: np.random.Generator, size: int, task: int) -> Carts:
    lo, hi = EVAL_RANGE["price"]
    qlo, qhi = EVAL_RANGE["quantity"]
    n = rng.choice(np.asarray(EVAL_RANGE["n_items"]), size=size)
    price = rng.integers(lo, hi + 1, size=(size, N_MAX))
    quantity = rng.integers(qlo, qhi + 1, size=(size, N_MAX))
    missing = rng.integers(0, n)
    field = rng.integers(0, 2, size=size)
    tasks = np.full(size, task)
    price, quantity, total, answer = _assemble(np, price, quantity, n, tasks, missing, field)
    if task == DEDUCTION:  # a deduction cart hides nothing
        missing, field = np.zeros_like(missing), np.zeros_like(field)
    arrays = (price, quantity, n, tasks, missing, field, total, answer)
    return Carts(*(np.asarray(a, dtype=np.int32) for a in arrays))


def _concat(parts: list[Carts]) -> Carts:
    return Carts(*(np.concatenate(xs) for xs in zip(*parts, strict=True)))


def _keys(c: Carts) -> list[bytes]:
    """A canonical identity per cart (item order and padding do not matter)."""
    out = []
    for i in range(len(c)):
        n = int(c.n[i])
        items = list(zip(c.price[i, :n].tolist(), c.quantity[i, :n].tolist(), strict=True))
        hidden = (items[int(c.missing[i])], int(c.field[i])) if c.task[i] == ABDUCTION else None
        out.append(repr((int(c.task[i]), sorted(items), hidden)).encode())
    return out


def eval_sets() -> dict[str, Carts]:
    """The frozen evaluation sets: ``EVAL_SIZE`` deduction and abduction carts each.

    Drawn from ``EVAL_SEED`` with NumPy, so they are identical for every run and
    every run seed (see :func:`fingerprint`).
    """
    rng = np.random.default_rng(EVAL_SEED)
    return {
        "deduction": _numpy_carts(rng, EVAL_SIZE, DEDUCTION),
        "abduction": _numpy_carts(rng, EVAL_SIZE, ABDUCTION),
    }


def _draw_held_out(rng: np.random.Generator, counts, held: set[bytes]) -> Carts:
    parts = []
    for task, want in counts:
        got: list[Carts] = []
        have = 0
        while have < want:
            c = _numpy_carts(rng, want, task)
            keys = _keys(c)
            keep = np.array([k not in held for k in keys])
            # no duplicates inside the set either
            first = np.array([k not in set(keys[:i]) for i, k in enumerate(keys)])
            c = c.take(np.flatnonzero(keep & first)[: want - have])
            held |= set(_keys(c))
            got.append(c)
            have += len(c)
        parts.append(_concat(got))
    return _concat(parts)


def _eval_keys() -> set[bytes]:
    return {k for c in eval_sets().values() for k in _keys(c)}


def seed_set(seed: int, size: int) -> Carts:
    """A labelled seed set of ``size`` carts (half of each task) for run ``seed``.

    Same distribution as the evaluation sets, with every cart that also occurs in
    an evaluation set removed (and redrawn), so evaluation stays held out.
    """
    rng = np.random.default_rng([seed, 7])
    return _draw_held_out(rng, ((DEDUCTION, size // 2), (ABDUCTION, size - size // 2)),
                          _eval_keys())  # fmt: skip


def calibration_set(seed: int, size: int, seed_size: int) -> Carts:
    """The labelled calibration slice of run ``seed`` (half of each task).

    Held out from the base model: disjoint from the evaluation sets and from the
    seed set of the same run (``seed_size`` carts), so label accuracy measured on
    it is what the Solver does on carts it was not fitted to.
    """
    held = _eval_keys() | set(_keys(seed_set(seed, seed_size)))
    rng = np.random.default_rng([seed, 11])
    return _draw_held_out(rng, ((DEDUCTION, size // 2), (ABDUCTION, size - size // 2)), held)


def solve(c: Carts) -> jax.Array:
    """The answer implied by the *visible* fields (``-1`` when there is none).

    Deduction: the total.  Abduction: ``(total - others) / partner`` when the
    partner field is non-zero and divides the remainder exactly.
    """
    xp = np if isinstance(c.price, np.ndarray) else jnp
    rows = xp.arange(c.price.shape[0])
    slots = xp.arange(N_MAX)[None, :]
    live = slots < c.n[:, None]
    others = xp.where(live & (slots != c.missing[:, None]), c.price * c.quantity, 0).sum(axis=1)
    partner = xp.where(c.field == PRICE, c.quantity[rows, c.missing], c.price[rows, c.missing])
    rest = c.total - others
    safe = xp.where(partner == 0, 1, partner)
    exact = (partner != 0) & (rest >= 0) & (rest % safe == 0)
    abduced = xp.where(exact, rest // safe, -1)
    return xp.where(c.task == DEDUCTION, c.total, abduced)


def well_formed(c: Carts) -> jax.Array:
    """The format gate: shape and vocabulary bounds from visible fields only.

    It never works out the answer and never checks that a shown total is right:
    a deduction cart passes when ``n * max(price) * max(quantity) < VOCAB`` (the
    total is bound to be a vocabulary id), an abduction cart when its shown total
    is a vocabulary id and the partner of its hidden field is non-zero.  The
    ``answer`` field is never read.
    """
    xp = np if isinstance(c.price, np.ndarray) else jnp
    rows = xp.arange(c.price.shape[0])
    live = xp.arange(N_MAX)[None, :] < c.n[:, None]
    fields_ok = xp.all(
        ~live | ((c.price >= 0) & (c.price <= FIELD_MAX) & (c.quantity >= 0)
                 & (c.quantity <= FIELD_MAX)), axis=1)  # fmt: skip
    shape_ok = (c.n >= 1) & (c.n <= N_MAX) & fields_ok
    hidden_price = c.field == PRICE
    visible_price = xp.where(live & ~((c.task == ABDUCTION)[:, None] & hidden_price[:, None]
                                      & (xp.arange(N_MAX)[None, :] == c.missing[:, None])),
                             c.price, 0)  # fmt: skip
    bound = c.n * xp.max(visible_price, axis=1) * xp.max(xp.where(live, c.quantity, 0), axis=1)
    deduction_ok = bound < VOCAB
    partner = xp.where(hidden_price, c.quantity[rows, c.missing], c.price[rows, c.missing])
    abduction_ok = (c.total >= 0) & (c.total < VOCAB) & (partner != 0)
    return shape_ok & xp.where(c.task == DEDUCTION, deduction_ok, abduction_ok)


_HASH_MUL = 0x01000193  # FNV prime; uint32 arithmetic wraps


def cart_hash(c: Carts) -> jax.Array:
    """A uint32 hash of each cart's identity, traceable (same identity as ``_keys``).

    Items are sorted, so item order and padding do not matter; an abduction cart
    adds its hidden item and field.  Equal carts always hash equal; a collision
    only makes :func:`held_out` drop a cart it did not need to drop.
    """
    xp = np if isinstance(c.price, np.ndarray) else jnp
    live = xp.arange(N_MAX)[None, :] < c.n[:, None]
    code = xp.where(live, c.price * (FIELD_MAX + 1) + c.quantity, 1023).astype(xp.uint32)
    code = xp.sort(code, axis=1)
    rows = xp.arange(c.price.shape[0])
    abd = c.task == ABDUCTION
    hidden = xp.where(abd, (c.price[rows, c.missing] * (FIELD_MAX + 1)
                            + c.quantity[rows, c.missing]) * 2 + c.field, 2047)  # fmt: skip
    cols = [c.task, *(code[:, i] for i in range(N_MAX)), hidden]
    h = xp.full(c.n.shape, 0x811C9DC5, xp.uint32)
    for x in cols:
        h = (h ^ x.astype(xp.uint32)) * xp.uint32(_HASH_MUL)
    return h


def eval_hashes() -> np.ndarray:
    """Sorted uint32 hashes of every evaluation cart (both tasks)."""
    return np.sort(np.concatenate([cart_hash(c) for c in eval_sets().values()]))


def held_out(c: Carts, hashes: jax.Array) -> jax.Array:
    """True where a cart is (or hashes like) an evaluation cart: never train on it."""
    h = cart_hash(c)
    i = jnp.clip(jnp.searchsorted(hashes, h), 0, hashes.shape[0] - 1)
    return hashes[i] == h


def fingerprint(c: Carts) -> str:
    """SHA-256 of a cart set's arrays (to show a set is frozen)."""
    h = hashlib.sha256()
    for a in c:
        h.update(np.ascontiguousarray(np.asarray(a, dtype=np.int32)).tobytes())
    return h.hexdigest()
