"""The bench's targets, read from the results (``bench.report`` prints them).

A target is met only when what it compares was measured and passed; without data it is
"not measured", never met.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

MET, NOT_MET, NOT_MEASURED = "met", "not met", "not measured"


def target(name: str, what: str, issue: Any, criteria: dict[str, bool | None],
           details: dict[str, Any] | None = None) -> dict[str, Any]:
    """A target: ``criteria`` maps a short name to met / not met / ``None`` (not measured)."""
    vals = list(criteria.values())
    status = NOT_MEASURED if not vals or None in vals else MET if all(vals) else NOT_MET
    return {"name": name, "what": what, "issue": issue, "status": status,
            "met": {MET: True, NOT_MET: False}.get(status), "details": details or {}}


def geomean(xs: Iterable[float]) -> float | None:
    vals = [x for x in xs if x and x > 0]
    return math.exp(sum(map(math.log, vals)) / len(vals)) if vals else None


def ratios(grid: dict[str, Any], other: str, base: str = "jax", stat: str = "median_us",
           min_b: int = 4096) -> list[float]:
    """``other``'s time over ``base``'s on each row of the grid with B >= ``min_b``."""
    out = []
    for row in grid.get("rows", []):
        b = row["backends"]
        if row["B"] >= min_b and other in b and base in b:
            out.append(b[other][stat] / b[base][stat])
    return out


def logits_rates(row: dict[str, Any]) -> dict[str, float]:
    """Read rates (bytes / median time) of the call, the exp pass and the copy, GB/s."""
    return {n: row["bytes"] / row[n]["median_us"] / 1e3 for n in ("call", "exp_pass", "copy")}


def evaluate(grid: dict[str, Any] | None, step: dict[str, Any] | None) -> list[dict[str, Any]]:
    grid = grid if grid and not grid["meta"]["quick"] else {}
    step = step if step and not step.get("quick") else {}
    out = []
    g = geomean(ratios(grid, "torch"))
    out.append(target("jax_5x_faster_than_torch_at_scale",
                      "geometric mean of torch eager time / zero_jax eager time >= 5 over the "
                      "rows at B >= 4,096", "", {"5x": None if g is None else g >= 5},
                      {"geomean": g}))
    share = step.get("variants", {}).get("jax_in_step", {}).get("rewards_share")
    out.append(target("rewards_under_0.1%_of_the_grpo_step",
                      "zero_jax's rewards at most 0.1 % of the jitted GRPO step",
                      "", {"share": None if share is None else share <= 0.001},
                      {"share_%": None if share is None else 100 * share}))
    rows = {r["key"]: r for r in grid.get("rows", []) if "self_" in r["fn"] or "token_" in r["fn"]}
    speed = [r["backends"]["torch"]["median_us"] / r["backends"]["jax"]["median_us"]
             for r in rows.values() if {"jax", "torch"} <= set(r["backends"])]
    out.append(target("logits_3x_faster_than_torch",
                      "self_certainty and token_entropy at [8, 1,024, 32,768] (float32, "
                      "bfloat16): zero_jax at least 3x the torch twin (eager)", "",
                      {"3x": min(speed) >= 3 if speed else None},
                      {"range": [min(speed), max(speed)] if speed else None}))
    fracs = []
    for row in grid.get("logits", []):
        r = logits_rates(row)
        fracs.append(r["call"] / min(r["copy"], r["exp_pass"]))
    out.append(target("logits_read_at_0.75_of_a_copy",
                      "the logits reductions read the logits at >= 0.75 of a copy's read rate, "
                      "or of one jitted sum(exp) pass's where that pass is slower", "",
                      {"0.75": min(fracs) >= 0.75 if fracs else None},
                      {"range": [min(fracs), max(fracs)] if fracs else None}))
    return out
