"""The bench's targets, each named by what it measures, evaluated from a result.

A target is one or more criteria.  Each criterion is met, not met, or not measured
(nothing to compare: a quick run without those rows, a backend left out, an older
result without that report).  A target is *met* only when every criterion was measured
and met, *not met* when any measured criterion failed, and otherwise *not measured*:
a target is never reported met without data.

:func:`evaluate` gives the targets of a ``python -m bench`` result; separately-run
cases add their own (``targets(result)`` of their module, see :mod:`bench.separate`),
built with :func:`target`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

from bench import cases as C

__all__ = [
    "GRID_TARGETS",
    "MET",
    "NOT_MEASURED",
    "NOT_MET",
    "evaluate",
    "geomean",
    "logits_rows",
    "status_of",
    "target",
]

MET, NOT_MET, NOT_MEASURED = "met", "not met", "not measured"

#: zero_jax ahead of torch: rows from this batch size up (issue 17).
AHEAD_MIN_B = 4096
#: Issue 5: geometric mean of torch / jax at B >= 4,096 at least this.
GEOMEAN_TARGET = 5.0
#: Issue 5: the vote at num_answers = 1M within this factor of its time at 16.
SAME_SPEED = 1.15
#: Issue 17: the public call at most this factor of a plain jit of the same math.
OVERHEAD_TARGET = 1.25
#: Issue 5: elementwise rewards at B = 16M at least this fraction of the copy bandwidth,
#: hint_delta's largest shapes at least ``HINT_FRACTION`` (bytes of its three inputs).
COPY_FRACTION, HINT_FRACTION = 0.5, 0.4
#: Issue 5: an eager call at B = 8 of an elementwise reward at most this many µs.
DISPATCH_US = 30.0
#: Issue 19: the logits reductions at the issue's shape at least this many times faster
#: than the eager torch twin, and reading the logits at least ``READ_FRACTION`` of the
#: rate at which a NumPy copy of as many bytes reads them (same run), or, on a row where
#: the exponentials rather than the memory bound it (one jitted sum(exp) pass alone reads
#: below that fraction), at least ``READ_FRACTION`` of that exp pass's rate.
LOGITS_SPEEDUP, READ_FRACTION = 3.0, 0.75


def status_of(parts: Iterable[bool | None]) -> str:
    """Met if every criterion was measured and met; not met if any measured one
    failed; otherwise (nothing, or only part, measured) not measured."""
    parts = list(parts)
    if any(p is False for p in parts):
        return NOT_MET
    if parts and all(p is True for p in parts):
        return MET
    return NOT_MEASURED


def target(
    name: str,
    what: str,
    issue: int | str,
    criteria: dict[str, bool | None],
    details: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A target as the JSON and the report hold it.  ``criteria``: a short name per
    criterion and whether it was met (``None``: not measured); ``details``: measured
    values keyed by what they are, in reading order."""
    status = status_of(criteria.values())
    return {
        "name": name,
        "what": what,
        "issue": issue,
        "status": status,
        "met": {MET: True, NOT_MET: False}.get(status),
        "criteria": {
            k: {True: MET, False: NOT_MET, None: NOT_MEASURED}[v] for k, v in criteria.items()
        },
        "details": details or {},
    }


def geomean(xs: Iterable[float | None]) -> float | None:
    vals = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in vals) / len(vals)) if vals else None


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 3)


def _jax_failed(row: dict[str, Any]) -> bool:
    return "error" in row["backends"].get("jax", {})


# ----------------------------------------------------------------------- the targets


def jax_ahead_of_torch(result: dict[str, Any]) -> dict[str, Any]:
    rows = [r for r in result["rows"] if r["B"] >= AHEAD_MIN_B]
    compared = [r for r in rows if r.get("speedup_vs_torch")]
    failed = [r["key"] for r in rows if _jax_failed(r)]
    behind = [(r["key"], _r(r["speedup_vs_torch"])) for r in compared if r["speedup_vs_torch"] <= 1]
    ok = None if not compared and not failed else not behind and not failed
    details: dict[str, Any] = {"rows compared": len(compared)}
    if compared:
        worst = min(compared, key=lambda r: r["speedup_vs_torch"])
        details["lowest torch / jax (medians)"] = [worst["key"], _r(worst["speedup_vs_torch"])]
        details["rows at or below 1x (medians)"] = behind
        best = [r for r in compared if r.get("best_speedup_vs_torch")]
        details["rows at or below 1x (best loops)"] = [
            (r["key"], _r(r["best_speedup_vs_torch"]))
            for r in best
            if r["best_speedup_vs_torch"] <= 1
        ]
    if failed:
        details["rows where zero_jax failed"] = failed
    return target(
        "jax_ahead_of_torch",
        f"zero_jax faster than the torch twin (eager) on every row at B >= {AHEAD_MIN_B:,}",
        17,
        {"every row ahead": ok},
        details,
    )


def jax_over_torch_geomean(result: dict[str, Any]) -> dict[str, Any]:
    rows = [
        r
        for r in result["rows"]
        if r["B"] >= AHEAD_MIN_B
        and r["family"] != "challenger_rewards[arbitrary]"
        and r.get("speedup_vs_torch")
    ]
    gm = geomean(r["speedup_vs_torch"] for r in rows)
    details: dict[str, Any] = {"rows compared": len(rows), "geometric mean, medians": _r(gm)}
    best = geomean(r.get("best_speedup_vs_torch") for r in rows)
    if best:
        details["geometric mean, best loops"] = _r(best)
    sync = geomean(r.get("sync_speedup_vs_torch") for r in rows)
    if sync:
        details["geometric mean, jax sync"] = _r(sync)
    return target(
        "jax_over_torch_geomean",
        f"geometric mean of torch / jax time >= {GEOMEAN_TARGET:g}x at B >= {AHEAD_MIN_B:,} "
        "(arbitrary-id challenger excluded)",
        5,
        {"geometric mean": None if gm is None else gm >= GEOMEAN_TARGET},
        details,
    )


def challenger_vs_torch(result: dict[str, Any]) -> dict[str, Any]:
    dense = [r for r in result["rows"] if r["family"] == "challenger_rewards[dense]"]
    arb = [
        r
        for r in result["rows"]
        if r["family"] == "challenger_rewards[arbitrary]" and r["B"] <= 65536
    ]
    dense_sp = [r.get("speedup_vs_torch") for r in dense]
    arb_sp = [r.get("speedup_vs_torch") for r in arb]
    return target(
        "challenger_vs_torch",
        "challenger: dense ids faster than torch at every B; arbitrary ids within 1.5x of "
        "torch at B <= 65,536",
        5,
        {
            "dense ids": all(s > 1 for s in dense_sp) if dense_sp and all(dense_sp) else None,
            "arbitrary ids": all(s >= 1 / 1.5 for s in arb_sp) if arb_sp and all(arb_sp) else None,
        },
        {
            "dense ids, torch / jax by B (medians)": {
                r["B"]: _r(r.get("speedup_vs_torch")) for r in dense
            },
            "arbitrary ids, torch / jax by B (medians)": {
                r["B"]: _r(r.get("speedup_vs_torch")) for r in arb
            },
            "dense ids, torch / jax by B (best loops)": {
                r["B"]: _r(r.get("best_speedup_vs_torch")) for r in dense
            },
            "arbitrary ids, torch / jax by B (best loops)": {
                r["B"]: _r(r.get("best_speedup_vs_torch")) for r in arb
            },
        },
    )


def bandwidth_vs_copy(result: dict[str, Any]) -> dict[str, Any]:
    rows = result["rows"]
    copy_bw = (result.get("copy_bandwidth") or {}).get("prealloc_GBps")
    big = [r for r in rows if r["elementwise"] and r["B"] == C.BIG and "jax_frac_of_copy" in r]
    frac = {r["family"]: _r(r["jax_frac_of_copy"]) for r in big}
    hint = {}
    for r in rows:
        if r["fn"] != "hint_delta" or r["B"] * (r.get("T") or 0) < 2**25 or not copy_bw:
            continue
        jax = r["backends"].get("jax", {})
        if "median_us" in jax:
            read = r["bytes"] - C.output_nbytes(C.Case("hint_delta", r["B"], T=r["T"]))
            hint[r["key"]] = _r(read / jax["median_us"] / 1e3 / copy_bw)
    details: dict[str, Any] = {"copy bandwidth, GB/s": _r(copy_bw)}
    if frac:
        details["jax fraction of the copy at B = 16M"] = frac
        thp = {r["family"]: _r(r.get("jax_thp_frac_of_copy")) for r in big}
        if any(thp.values()):
            details["jax+THP fraction of the copy at B = 16M"] = thp
        details["page faults per call at B = 16M"] = {
            r["family"]: {
                b: r["backends"][b].get("page_faults_per_call")
                for b in ("jax", "jax_thp", "torch", "numpy")
                if "median_us" in r["backends"].get(b, {})
            }
            for r in big
        }
    if hint:
        details["hint_delta fraction of the copy (bytes of its inputs)"] = hint
    return target(
        "bandwidth_vs_copy",
        f"elementwise rewards at B = 16M >= {COPY_FRACTION} of the copy bandwidth; "
        f"hint_delta's largest shapes >= {HINT_FRACTION} (bytes of its three inputs)",
        5,
        {
            "elementwise at 16M": all(v >= COPY_FRACTION for v in frac.values()) if frac else None,
            "hint_delta": all(v >= HINT_FRACTION for v in hint.values()) if hint else None,
        },
        details,
    )


def vote_independent_of_alphabet(result: dict[str, Any]) -> dict[str, Any]:
    rows = result["rows"]
    by_key = {(r["fn"], r["B"], r.get("K"), r.get("n")): r for r in rows}
    pairs = {}
    for (fn, b, k, n), r in by_key.items():
        if fn in ("consensus", "solver_rewards") and n == 1_000_000 and b >= AHEAD_MIN_B:
            r16 = by_key.get((fn, b, k, 16))
            jt = r["backends"].get("jax", {})
            j16 = (r16 or {}).get("backends", {}).get("jax", {})
            if "median_us" in jt and "median_us" in j16:
                pairs[r["key"]] = _r(jt["median_us"] / j16["median_us"])
    mem = [
        m
        for m in result.get("rss") or []
        if m.get("backend") == "jax"
        and m.get("fn") in ("consensus", "solver_rewards")
        and m.get("extra_MiB") is not None
    ]
    spans = {}
    for m in mem:
        spans.setdefault((m["fn"], m["B"], m["K"]), []).append(m["extra_MiB"])
    spans = {k: v for k, v in spans.items() if len(v) > 1}
    mem_ok = all(max(v) <= min(v) + 16 for v in spans.values()) if spans else None
    return target(
        "vote_independent_of_alphabet",
        f"the vote at num_answers = 1M within {SAME_SPEED}x of its time at 16 (B >= 4,096); "
        "peak memory independent of num_answers (within 16 MiB)",
        5,
        {
            "time": all(v <= SAME_SPEED for v in pairs.values()) if pairs else None,
            "memory": mem_ok,
        },
        {
            "jax time at n = 1M / time at n = 16 (medians)": pairs,
            "jax peak memory above the RSS before the call, MiB (fn, B, K, n)": [
                (m["fn"], m["B"], m["K"], m["n"], _r(m["extra_MiB"])) for m in mem
            ],
        },
    )


def eager_call_at_B8(result: dict[str, Any]) -> dict[str, Any]:
    streaming = C.streaming_families()
    disp = (result.get("dispatch_us_B8") or {}).get("jax", {})
    ew = {k: _r(v) for k, v in disp.items() if k in streaming and isinstance(v, float)}
    details: dict[str, Any] = {"jax eager call at B = 8, µs": ew}
    sync = (result.get("dispatch_us_B8") or {}).get("jax_sync", {})
    if sync:
        details["jax sync eager call at B = 8, µs"] = {
            k: _r(v) for k, v in sync.items() if k in ew and isinstance(v, float)
        }
    return target(
        "eager_call_at_B8",
        f"an eager zero_jax call at B = 8 <= {DISPATCH_US:g} µs for the elementwise rewards",
        5,
        {"elementwise": all(v <= DISPATCH_US for v in ew.values()) if ew else None},
        details,
    )


def public_over_plain_jit(result: dict[str, Any]) -> dict[str, Any]:
    block = result.get("overhead") or {}
    rows = [r for r in block.get("rows", []) if r["B"] >= AHEAD_MIN_B]
    details: dict[str, Any] = {"rows compared": len(rows)}
    if rows:
        worst = max(rows, key=lambda r: r["public_over_plain"])
        details["highest public / plain (medians of pair ratios)"] = [
            worst["key"],
            _r(worst["public_over_plain"]),
        ]
        details["geometric mean public / plain"] = _r(geomean(r["public_over_plain"] for r in rows))
        details["rows above the target"] = [
            (r["key"], _r(r["public_over_plain"]))
            for r in rows
            if r["public_over_plain"] > OVERHEAD_TARGET
        ]
    return target(
        "public_over_plain_jit",
        f"the public zero_jax call at most {OVERHEAD_TARGET}x a plain jax.jit of the same "
        f"math at B >= {AHEAD_MIN_B:,} (overhead report)",
        17,
        {
            "every row": all(r["public_over_plain"] <= OVERHEAD_TARGET for r in rows)
            if rows
            else None
        },
        details,
    )


def logits_rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows of the logits reductions at the issue's shape (``C.LOGITS_SHAPE``)."""
    return [
        r
        for r in result["rows"]
        if r["fn"] in C.LOGITS_FUNCTIONS and (r["B"], r.get("T"), r.get("V")) == C.LOGITS_SHAPE
    ]


def _every(rows: list[dict[str, Any]], ok: Callable[[dict[str, Any]], bool | None]) -> bool | None:
    """False if a row failed (``None`` from ``ok`` is a row without data); True if every
    row passed; None without rows or when some lack data."""
    verdicts = [ok(r) for r in rows]
    if any(v is False for v in verdicts):
        return False
    return True if verdicts and all(v is True for v in verdicts) else None


def _shape() -> str:
    return "[" + ", ".join(f"{d:,}" for d in C.LOGITS_SHAPE) + "]"


def logits_vs_torch(result: dict[str, Any]) -> dict[str, Any]:
    rows = logits_rows(result)

    def ok(r: dict[str, Any]) -> bool | None:
        if _jax_failed(r):
            return False
        sp = r.get("speedup_vs_torch")
        return None if sp is None else sp >= LOGITS_SPEEDUP

    details: dict[str, Any] = {
        "rows": len(rows),
        "torch / jax (medians)": {r["key"]: _r(r.get("speedup_vs_torch")) for r in rows},
        "torch / jax (best loops)": {r["key"]: _r(r.get("best_speedup_vs_torch")) for r in rows},
        "torch.compile / jax (medians)": {
            r["key"]: _r(r.get("speedup_vs_torch_compile")) for r in rows
        },
    }
    failed = [r["key"] for r in rows if _jax_failed(r)]
    if failed:
        details["rows where zero_jax failed"] = failed
    return target(
        "logits_vs_torch",
        f"self_certainty and token_entropy at {_shape()} (float32, bfloat16): zero_jax at "
        f"least {LOGITS_SPEEDUP:g}x the torch twin (eager)",
        19,
        {"every logits row": _every(rows, ok)},
        details,
    )


def read_rate_held(r: dict[str, Any]) -> bool | None:
    """Whether logits row ``r`` meets the read-rate criterion (None: not measured).

    Against the copy's read rate; on a row bound by the exponentials (one jitted
    sum(exp) pass, the least work any kernel evaluating ``exp`` once per logit does,
    reads below ``READ_FRACTION`` of the copy's rate) against that pass's rate instead.
    """
    lg = r.get("logits") or {}
    frac = lg.get("read_frac_of_copy")
    if frac is None:
        return None
    if frac >= READ_FRACTION:
        return True
    exp_frac, over = lg.get("exp_pass_read_frac_of_copy"), lg.get("jax_over_exp_pass")
    if exp_frac is None or over is None:
        return None if exp_frac is None and over is None and not lg.get("passes") else False
    return exp_frac < READ_FRACTION and 1 / over >= READ_FRACTION


def _which_held(r: dict[str, Any]) -> str:
    """In words: whether the read-rate criterion held for row ``r``, against the copy or,
    where the exponentials bound it (one exp pass alone below the criterion), against
    that exp pass."""
    lg = r.get("logits") or {}
    frac = lg.get("read_frac_of_copy")
    if frac is None:
        return "not measured"
    if frac >= READ_FRACTION:
        return f"read rate held ({frac:.2f} of the copy's)"
    head = f"read rate not held ({frac:.2f} of the copy's)"
    exp_frac, over = lg.get("exp_pass_read_frac_of_copy"), lg.get("jax_over_exp_pass")
    if exp_frac is None or over is None:
        return head + "; exp pass not measured"
    if exp_frac < READ_FRACTION:
        verdict = "held" if 1 / over >= READ_FRACTION else "not held"
        return (
            f"{head}; bound by the exponentials: one sum(exp) pass alone reads at "
            f"{exp_frac:.2f} of the copy's rate, and the call takes {over:.2f}x that pass "
            f"({verdict} against the exp pass: {1 / over:.2f} of its rate)"
        )
    return (
        f"{head}, and not bound by the exponentials: one sum(exp) pass alone reads at "
        f"{exp_frac:.2f} of the copy's rate; the call takes {over:.2f}x that pass"
    )


def logits_read_rate(result: dict[str, Any]) -> dict[str, Any]:
    rows = logits_rows(result)

    def ok(r: dict[str, Any]) -> bool | None:
        return False if _jax_failed(r) else read_rate_held(r)

    copy = (result.get("copy_bandwidth") or {}).get("logits") or {}

    def by_row(field: str, scale: float = 1.0) -> dict[str, float | None]:
        out = {}
        for r in rows:
            v = (r.get("logits") or {}).get(field)
            out[r["key"]] = None if v is None else _r(v * scale)
        return out

    def pass_ms(name: str) -> dict[str, float | None]:
        out = {}
        for r in rows:
            st = ((r.get("logits") or {}).get("passes") or {}).get(name)
            out[r["key"]] = _r(st["median_us"] / 1e3) if st else None
        return out

    jax_ms = {
        r["key"]: _r(r["backends"]["jax"]["median_us"] / 1e3)
        for r in rows
        if "median_us" in r["backends"].get("jax", {})
    }
    details: dict[str, Any] = {
        "which held": {r["key"]: _which_held(r) for r in rows},
        "copy read rate, GB/s (bytes copied / time)": _r(copy.get("read_GBps")),
        "copy of the logits' bytes, ms": by_row("copy_ms"),
        "jax read rate / the copy's": by_row("read_frac_of_copy"),
        "jax, ms": jax_ms,
        "exp pass (jitted sum(exp(x)) over V), ms": pass_ms("exp_pass"),
        "exp pass read rate / the copy's": by_row("exp_pass_read_frac_of_copy"),
        "jax / exp pass": by_row("jax_over_exp_pass"),
        "max pass (jitted max over V, read only), ms": pass_ms("max_pass"),
        "plain jit of the formula, ms": pass_ms("plain_jit"),
    }
    return target(
        "logits_read_rate",
        f"self_certainty and token_entropy at {_shape()}: zero_jax reads the logits at "
        f">= {READ_FRACTION:g} of a NumPy copy's read rate (same run), or, where the "
        f"exponentials bound it, >= {READ_FRACTION:g} of one jitted sum(exp) pass's",
        19,
        {"every logits row": _every(rows, ok)},
        details,
    )


#: The targets of a ``python -m bench`` result, in report order.
GRID_TARGETS: tuple[Callable[[dict[str, Any]], dict[str, Any]], ...] = (
    jax_ahead_of_torch,
    public_over_plain_jit,
    jax_over_torch_geomean,
    challenger_vs_torch,
    bandwidth_vs_copy,
    vote_independent_of_alphabet,
    eager_call_at_B8,
    logits_vs_torch,
    logits_read_rate,
)


def evaluate(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The targets of a ``python -m bench`` result (``latest.json``), recomputed from
    its rows, overhead report, dispatch table and peak memory."""
    return [t(result) for t in GRID_TARGETS]
