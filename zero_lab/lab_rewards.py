"""Each lab's per-action rewards, written once for both backends.

A lab (see ``zero_lab.records``) computes one reward per action from its fixed feedback
records with the problem's reward functions. The recipes below only call those
functions and a few array operations, which each backend supplies as an :class:`Ops`
(``zero_jax`` arrays in ``zero_lab.jax_backend``, torch tensors in
``zero_lab.torch_backend``), so the two backends cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from zero_lab.records import Lab, padded

Functions = Mapping[str, Callable[..., Any]]


@dataclass(frozen=True)
class Ops:
    """The array operations a recipe needs, in one framework (all in float64 / int64)."""

    f64: Callable[[Any], Any]
    i64: Callable[[Any], Any]
    bool_: Callable[[Any], Any]
    minimum: Callable[[Any, Any], Any]
    maximum: Callable[[Any, Any], Any]


def _challenger(f: Functions, lab: Lab, o: Ops) -> Any:
    consistency = o.f64(lab.column("consistency"))
    reward = f["challenger_rewards"](
        consistency,
        o.i64(lab.column("cluster")),
        o.bool_(lab.column("valid")),
        lab.params["strength"],
    )
    return o.minimum(o.f64(reward), o.f64(f["uncertainty_reward"](consistency)))


def _pseudo_labels(f: Functions, lab: Lab, o: Ops) -> Any:
    p = lab.params
    labels, consistency = f["consensus"](o.i64(lab.column("old_votes")), p["num_answers"])
    keep = o.f64(f["curriculum_mask"](consistency, p["low"], p["high"]))
    agree = o.f64(f["pseudo_rewards"](o.i64(lab.column("fresh")), labels))
    return (keep[:, None] * agree).sum(0) / o.maximum(o.f64(1.0), keep.sum())


def _proposer(f: Functions, lab: Lab, o: Ops) -> Any:
    base, mask = padded(lab, "base_logp")
    hinted, _ = padded(lab, "hinted_logp")
    delta = f["hint_delta"](o.f64(base), o.f64(hinted), o.bool_(mask))
    return f["proposer_rewards"](
        delta,
        o.i64(lab.column("hint_chars")),
        o.f64(lab.column("cluster_share")),
        o.bool_(lab.column("valid")),
    )


def _coder(f: Functions, lab: Lab, o: Ops) -> Any:
    return f["coder_rewards"](
        o.bool_(lab.column("executed")),
        o.f64(lab.column("easy_accuracy")),
        o.f64(lab.column("consistency")),
        o.bool_(lab.column("syntax_error")),
    )


def _solver(f: Functions, lab: Lab, o: Ops) -> Any:
    p = lab.params
    per_answer = f["solver_rewards"](
        o.i64(lab.column("answers")),
        o.bool_(lab.column("format_valid")),
        p["num_answers"],
        p["alpha"],
    )
    return o.f64(per_answer).mean(0)


RECIPES: dict[str, Callable[[Functions, Lab, Ops], Any]] = {
    "challenger": _challenger,
    "pseudo_labels": _pseudo_labels,
    "proposer": _proposer,
    "coder": _coder,
    "solver": _solver,
}


def lab_rewards(lab: Lab, fns: Functions, ops: Ops) -> Any:
    """Lab ``lab``'s float64 ``[num_actions]`` rewards from ``fns``; ValueError on a wrong shape."""
    r = ops.f64(RECIPES[lab.name](fns, lab, ops))
    if tuple(r.shape) != (lab.num_actions,):
        raise ValueError(
            f"lab {lab.name!r}: the rewards must have shape ({lab.num_actions},), one per "
            f"action; the functions produced {tuple(r.shape)}"
        )
    return r
