"""The numbers of the explanation page, all computed with ``zero_jax``'s public API.

Two kinds of data, per paper family:

- **worked batches**: the problem texts' small examples (p = 0.5 with two copies in
  a batch of four gives 0.5; votes [1, 1, 0, 0] give label 0 at consistency 0.5;
  token shifts [2, 1] give delta 1.5; easy = 0.8, c = 0.5 gives 2.3; ...) pushed
  through the loop's stages, one library call per stage;
- **control grids**: every position of the page's controls, evaluated once with the
  library (flattened into the batch axis where a reward is row-wise, ``jax.vmap`` over
  whole batches where it is not, a Python loop over hyper-parameters so that each one
  reaches the library as the Python float a user would pass).  The page only looks
  these values up; it never computes a score.

Every slider moves along an axis of decimals (``Axis``): the float a position stands
for is the nearest double to its label (``float("0.35")``), the same number a test
gets by reading the label off the page.  Tables travel to the page palette-encoded
(``encode``): the distinct values once, then one fixed-width base-64 index per cell.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import jax
import numpy as np

import zero_jax

__all__ = [
    "ALPHABET",
    "CHALLENGER_B_MAX",
    "HINT_BASE_LOGP",
    "Axis",
    "axes",
    "build",
    "challenger_batch",
    "challenger_combos",
    "encode",
    "hint_inputs",
]

#: Digits of the palette indices in ``encode`` (a cell is ``width`` of these).
ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_"

#: Largest batch the challenger's controls offer.
CHALLENGER_B_MAX = 8
#: The unassisted answer's token log-probabilities without the hint (hint-delta controls).
HINT_BASE_LOGP = (-1.2, -1.5, -1.1)


@dataclass(frozen=True)
class Axis:
    """A slider's positions: decimals from ``start`` by ``step``, ``size`` of them."""

    start: str
    step: str
    size: int

    @property
    def labels(self) -> list[str]:
        d0, ds = Decimal(self.start), Decimal(self.step)
        return [str(d0 + i * ds) for i in range(self.size)]

    @property
    def values(self) -> list[float]:
        return [float(s) for s in self.labels]

    def to_json(self) -> dict[str, Any]:
        return {"labels": self.labels, "values": self.values}


def axes() -> dict[str, Axis]:
    """Every slider axis of the page, by name (``family.control``)."""
    unit = Axis("0.00", "0.05", 21)
    return {
        "challenger.p": unit,
        "challenger.strength": Axis("0.00", "0.25", 9),
        "band.edge": unit,
        "band.p": unit,
        "hint.shift": Axis("-1.0", "0.5", 9),
        "proposer.delta": Axis("-1.00", "0.25", 17),
        "proposer.length": Axis("0", "100", 31),
        "proposer.share": unit,
        "coder.easy": unit,
        "coder.consistency": unit,
        "solver.alpha": Axis("0.0", "0.1", 11),
    }


# --------------------------------------------------------------------------- encoding
def encode(values: Any) -> dict[str, Any]:
    """Palette-encode a table: ``{"u": distinct values, "w": width, "s": indices, "n": cells}``.

    ``u`` holds plain Python numbers or bools (JSON turns a float into its shortest
    round-trip decimal, which JavaScript parses to the same double).
    """
    flat = np.asarray(values).ravel()
    palette, inverse = np.unique(flat, return_inverse=True)
    width = 1
    while len(ALPHABET) ** width < len(palette):
        width += 1
    digits = np.empty((flat.size, width), dtype=np.int64)
    rest = inverse.astype(np.int64)
    for j in range(width - 1, -1, -1):
        digits[:, j] = rest % len(ALPHABET)
        rest //= len(ALPHABET)
    chars = np.array(list(ALPHABET))[digits]
    return {"u": palette.tolist(), "w": width, "s": "".join(chars.ravel().tolist()), "n": flat.size}


def _list(x: Any) -> list[Any]:
    return np.asarray(x).tolist()


# Inputs are built as NumPy arrays (the library takes them as they are); a jnp
# conversion of every differently shaped list would compile a kernel of its own.
def _f64(x: Any) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


def _i64(x: Any) -> np.ndarray:
    return np.asarray(x, dtype=np.int64)


def _bool(x: Any) -> np.ndarray:
    return np.asarray(x, dtype=np.bool_)


# --------------------------------------------------------------------------- R-Zero 107
def _challenger_worked() -> dict[str, Any]:
    answers = [[3, 3, 5, 5], [1, 1, 2, 2], [4, 4, 4, 4], [2, 2, 2, 6]]
    clusters = [7, 7, 3, 5]
    valid = [True, False, True, True]
    labels, p = zero_jax.consensus(_i64(answers), 7)
    u = zero_jax.uncertainty_reward(p)
    sizes = zero_jax.cluster_sizes(_i64(clusters))
    r = zero_jax.challenger_rewards(p, _i64(clusters), _bool(valid), 1.0)
    adv = zero_jax.group_advantages(r[None, :])[0]
    band = zero_jax.curriculum_mask(p)
    return {
        "answers": answers,
        "clusters": clusters,
        "valid": valid,
        "strength": 1.0,
        "labels": _list(labels),
        "p": _list(p),
        "u": _list(u),
        "sizes": _list(sizes),
        "B": len(clusters),
        "reward": _list(r),
        "advantage": _list(adv),
        "band": _list(band),
    }


def challenger_batch(
    b: int, copies: int, malformed: int, p: float, valid: bool
) -> tuple[list[float], list[int], list[bool]]:
    """The batch a position of the challenger controls stands for.

    Row 0 is the proposal the controls describe (consistency ``p``, format ``valid``);
    rows ``1 .. copies - 1`` share its template (cluster 0), the first ``malformed`` of
    them failing the format check; every other row has a template of its own.  The
    other rows' consistency is 0.5 (it does not enter row 0's reward).
    """
    consistency = [p] + [0.5] * (b - 1)
    clusters = [0] * copies + list(range(1, b - copies + 1))
    flags = [valid] + [i > malformed for i in range(1, b)]
    return consistency, clusters, flags


def challenger_combos() -> list[tuple[int, int, int]]:
    """``(B, copies, malformed copies)`` in table order."""
    return [
        (b, n, m) for b in range(1, CHALLENGER_B_MAX + 1) for n in range(1, b + 1) for m in range(n)
    ]


def _challenger_grid(ax: dict[str, Axis]) -> dict[str, Any]:
    ps, strengths = ax["challenger.p"].values, ax["challenger.strength"].values
    combos = challenger_combos()
    # reward[combo, strength, valid, p]: row 0 of the batch each position stands for,
    # one vmapped call per batch size over every other control (strength traced)
    reward = np.empty((len(combos), len(strengths), 2, len(ps)))
    rewards = jax.vmap(zero_jax.challenger_rewards)
    for b in range(1, CHALLENGER_B_MAX + 1):
        rows = [(i, n, m) for i, (bb, n, m) in enumerate(combos) if bb == b]
        states = list(itertools.product(rows, strengths, (False, True), ps))
        batches = [challenger_batch(b, n, m, p, v) for (_, n, m), _, v, p in states]
        out = rewards(
            _f64([x[0] for x in batches]),
            _i64([x[1] for x in batches]),
            _bool([x[2] for x in batches]),
            _f64([lam for _, lam, _, _ in states]),
        )
        first = np.asarray(out)[:, 0].reshape(len(rows), len(strengths), 2, len(ps))
        for (i, _, _), block in zip(rows, first, strict=True):
            reward[i] = block
    return {
        "combos": [list(x) for x in combos],
        "reward": encode(reward),
        "uncertainty": encode(np.asarray(zero_jax.uncertainty_reward(_f64(ps)))),
    }


# --------------------------------------------------------------------------- R-Zero 108
def _pseudo_worked() -> dict[str, Any]:
    old = [[1, 1, 0, 0], [1, 1, 1, 2], [3, 3, 3, 3], [0, 1, 2, 3]]
    fresh = [[0, 2, 0], [2, 2, 1], [3, 3, 0], [0, 1, 0]]
    labels, p = zero_jax.consensus(_i64(old), 4)
    keep = zero_jax.curriculum_mask(p, 0.25, 0.75)
    r = zero_jax.pseudo_rewards(_i64(fresh), labels)
    revote, _ = zero_jax.consensus(_i64(fresh), 4)
    wrong = zero_jax.pseudo_rewards(_i64(fresh), revote)
    adv = zero_jax.group_advantages(r)
    return {
        "old": old,
        "fresh": fresh,
        "labels": _list(labels),
        "p": _list(p),
        "keep": _list(keep),
        "reward": _list(r),
        "revote": _list(revote),
        "revote_reward": _list(wrong),
        "advantage": _list(adv),
    }


def _pseudo_grid(ax: dict[str, Axis]) -> dict[str, Any]:
    votes = list(itertools.product(range(4), repeat=4))
    labels, p = zero_jax.consensus(_i64(votes), 4)
    grid_p = ax["band.p"].values
    p_index = [grid_p.index(x) for x in _list(p)]  # exact: k / 4 is on the grid
    edges = ax["band.edge"].values
    masks = np.zeros((len(edges), len(edges), len(grid_p)), dtype=bool)
    errors: list[str | None] = []
    for (i, low), (j, high) in itertools.product(enumerate(edges), enumerate(edges)):
        try:
            masks[i, j] = np.asarray(zero_jax.curriculum_mask(_f64(grid_p), low, high))
            errors.append(None)
        except ValueError as e:  # the library's own message for low > high
            errors.append(str(e))
    fresh = list(itertools.product(range(4), repeat=3))
    rows = [f for _ in range(4) for f in fresh]
    frozen = [y for y in range(4) for _ in fresh]
    pseudo = zero_jax.pseudo_rewards(_i64(rows), _i64(frozen))
    revote, _ = zero_jax.consensus(_i64(fresh), 4)
    return {
        "label": encode(np.asarray(labels)),
        "p": encode(np.asarray(p)),
        "p_index": encode(np.asarray(p_index)),
        "mask": encode(masks),
        "errors": errors,
        "pseudo": encode(np.asarray(pseudo)),
        "revote": encode(np.asarray(revote)),
    }


# --------------------------------------------------------------------------- G-Zero 109
def _proposer_worked() -> dict[str, Any]:
    base = [[-0.4, -0.9, 0.0], [-0.5, -0.6, -0.7], [0.0, 0.0, 0.0], [-0.3, -0.4, 0.0]]
    hinted = [[-2.4, -1.9, 0.0], [-1.5, -1.6, -1.7], [0.0, 0.0, 0.0], [-2.8, -2.9, 0.0]]
    mask = [[True, True, False], [True, True, True], [False, False, False], [True, True, False]]
    lengths = [150, 900, 120, 100]
    clusters = [1, 2, 3, 1]
    valid = [True, True, True, False]
    sizes = _list(zero_jax.cluster_sizes(_i64(clusters)))
    share = [s / len(clusters) for s in sizes]  # the share clustering supplies upstream
    delta = zero_jax.hint_delta(_f64(base), _f64(hinted), _bool(mask))
    r = zero_jax.proposer_rewards(delta, _i64(lengths), _f64(share), _bool(valid))
    adv = zero_jax.group_advantages(r[None, :])[0]
    return {
        "base": base,
        "hinted": hinted,
        "mask": mask,
        "lengths": lengths,
        "clusters": clusters,
        "sizes": sizes,
        "share": share,
        "valid": valid,
        "delta": _list(delta),
        "reward": _list(r),
        "advantage": _list(adv),
    }


def hint_inputs(shifts: Sequence[float]) -> tuple[list[float], list[float]]:
    """Base and hinted log-probs of the hint-delta controls' answer for token shifts."""
    base = list(HINT_BASE_LOGP)
    return base, [b - s for b, s in zip(base, shifts, strict=True)]


def _proposer_grid(ax: dict[str, Axis]) -> dict[str, Any]:
    shifts = ax["hint.shift"].values
    states = list(
        itertools.product(shifts, shifts, shifts, itertools.product((False, True), repeat=3))
    )
    pairs = [hint_inputs(s[:3]) for s in states]
    delta = zero_jax.hint_delta(
        _f64([b for b, _ in pairs]), _f64([h for _, h in pairs]), _bool([s[3] for s in states])
    )
    d, lengths = ax["proposer.delta"].values, ax["proposer.length"].values
    shares = ax["proposer.share"].values
    # reward[valid, share, delta, length]
    grid = list(itertools.product((False, True), shares, d, lengths))
    r = zero_jax.proposer_rewards(
        _f64([g[2] for g in grid]),
        _i64([int(g[3]) for g in grid]),
        _f64([g[1] for g in grid]),
        _bool([g[0] for g in grid]),
    )
    return {"delta": encode(np.asarray(delta)), "reward": encode(np.asarray(r))}


# --------------------------------------------------------------------------- MM-Zero 113
def _mm_worked() -> dict[str, Any]:
    executed = [True, False, True, False]
    nan = float("nan")  # a failed render has no visual scores; the reward ignores them
    easy = [0.8, nan, 1.0, nan]
    consistency = [0.5, nan, 1.0, nan]
    syntax = [False, True, False, False]
    coder = zero_jax.coder_rewards(_bool(executed), _f64(easy), _f64(consistency), _bool(syntax))
    answers = [[2, 2, 5, 2], [3, 1, 1, 3]]
    fmt = [[False, True, True, True], [True, True, False, True]]
    silver, _ = zero_jax.consensus(_i64(answers), 6)
    solver = zero_jax.solver_rewards(_i64(answers), _bool(fmt), 6, 0.9)
    return {
        "executed": executed,
        "easy": easy,
        "consistency": consistency,
        "syntax": syntax,
        "coder": _list(coder),
        "coder_advantage": _list(zero_jax.group_advantages(coder[None, :])[0]),
        "answers": answers,
        "format": fmt,
        "silver": _list(silver),
        "alpha": 0.9,
        "solver": _list(solver),
        "solver_advantage": _list(zero_jax.group_advantages(solver)),
    }


def _mm_grid(ax: dict[str, Axis]) -> dict[str, Any]:
    easy, cons = ax["coder.easy"].values, ax["coder.consistency"].values
    # coder[executed, syntax, easy, consistency]
    grid = list(itertools.product((False, True), (False, True), easy, cons))
    coder = zero_jax.coder_rewards(
        _bool([g[0] for g in grid]),
        _f64([g[2] for g in grid]),
        _f64([g[3] for g in grid]),
        _bool([g[1] for g in grid]),
    )
    answers = list(itertools.product(range(4), repeat=4))
    formats = list(itertools.product((False, True), repeat=4))
    rows = [a for a in answers for _ in formats]
    flags = [f for _ in answers for f in formats]
    # solver[answers, formats, alpha, k]
    per_alpha = [
        np.asarray(zero_jax.solver_rewards(_i64(rows), _bool(flags), 4, alpha))
        for alpha in ax["solver.alpha"].values
    ]
    solver = np.stack(per_alpha, axis=1)
    silver, _ = zero_jax.consensus(_i64(answers), 4)
    return {
        "coder": encode(np.asarray(coder)),
        "solver": encode(solver),
        "silver": encode(np.asarray(silver)),
    }


def build() -> dict[str, Any]:
    """Worked batches and control tables of the four sections (JSON-ready, float64)."""
    ax = axes()
    with jax.enable_x64(True):
        return {
            "axes": {k: a.to_json() for k, a in ax.items()},
            "challenger": {"worked": _challenger_worked(), "grid": _challenger_grid(ax)},
            "pseudo": {"worked": _pseudo_worked(), "grid": _pseudo_grid(ax)},
            "proposer": {"worked": _proposer_worked(), "grid": _proposer_grid(ax)},
            "mm": {"worked": _mm_worked(), "grid": _mm_grid(ax)},
        }
