"""Aggregation: the raw timings of one ``python -m bench`` run (samples per case and
backend, the paired plain-jit loops, dispatch, copy bandwidth, peak memory) become the
result that ``latest.json`` stores: one row per case with per-backend statistics and
ratios (a logits row also with its reference passes and read rate, ``row["logits"]``),
the overhead report, the copy bandwidth and the dispatch table.  No targets and no text
here (:mod:`bench.targets`, :mod:`bench.render`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from bench import cases as C

__all__ = ["assemble", "dumps", "rounded", "stats"]

#: Backends the ratio columns compare zero_jax with.
OTHERS = ("torch", "torch_compile", "numpy")


def stats(xs: list[float]) -> dict[str, float]:
    """Median, quartiles, minimum and count of times in seconds, in µs."""
    a = np.asarray(xs) * 1e6
    return {
        "median_us": float(np.median(a)),
        "p25_us": float(np.percentile(a, 25)),
        "p75_us": float(np.percentile(a, 75)),
        "min_us": float(np.min(a)),
        "n": int(a.size),
    }


def _copy(copies: list[dict[str, Any]]) -> dict[str, Any]:
    pre = [s for c in copies for s in c["prealloc_s"]]
    alloc = [s for c in copies for s in c["alloc_s"]]
    nbytes = copies[0]["bytes"] if copies else 1
    out: dict[str, Any] = {
        "bytes": nbytes,
        "prealloc_GBps": nbytes / float(np.median(pre)) / 1e9 if pre else None,
        "alloc_GBps": nbytes / float(np.median(alloc)) / 1e9 if alloc else None,
        "prealloc_GBps_range": [nbytes / max(pre) / 1e9, nbytes / min(pre) / 1e9] if pre else None,
        "what": "NumPy float32 copy of 16M elements (64 MiB); bytes read + written / time",
    }
    big = [c["logits"] for c in copies if c.get("logits")]
    if big:
        size = big[0]["bytes"]
        times = [s for c in big for s in c["prealloc_s"]]
        out["logits"] = {
            "bytes": size,
            "read_GBps": size / float(np.median(times)) / 1e9,
            "read_GBps_range": [size / max(times) / 1e9, size / min(times) / 1e9],
            "median_ms": float(np.median(times)) * 1e3,
            "what": f"NumPy copy of {size / 2**20:,.0f} MiB (the largest logits of the grid) "
            "into a preallocated buffer; bytes copied (read) / time",
        }
    return out


def _backend_stats(
    samples: list[float], first: list[float], faults: list[float], nbytes: int, contended: int
) -> dict[str, Any]:
    st: dict[str, Any] = stats(samples)
    # Workers live across rounds: only round 1's first call traces and compiles.
    f = float(first[0])
    st["first_call_ms"] = f * 1e3
    st["compile_ms"] = max(f * 1e3 - st["median_us"] / 1e3, 0.0)
    st["GBps"] = nbytes / st["median_us"] / 1e3
    st["page_faults_per_call"] = float(np.median(faults))
    st["contended_rounds"] = contended  # rounds whose chunk stayed contended after repeats
    return st


def _row(case: C.Case, backends: list[str], raw: Mapping[str, Any], copy: Mapping[str, Any]):
    copy_bw = copy.get("prealloc_GBps")
    nbytes = C.io_bytes(case)
    row: dict[str, Any] = {
        "key": case.key,
        "fn": case.fn,
        "variant": case.variant,
        "family": case.family,
        "B": case.B,
        **case.dims(),
        "ids": case.ids,
        "kind": case.kind,
        "elementwise": case.elementwise,
        "bytes": nbytes,
        "backends": {},
    }
    key = case.key
    for b in backends:
        if b in raw["samples"].get(key, {}):
            row["backends"][b] = _backend_stats(
                raw["samples"][key][b],
                raw["first"][key][b],
                raw["faults"][key][b],
                nbytes,
                int((raw["contended"].get(key) or {}).get(b, 0)),
            )
        elif b in raw["errors"].get(key, {}):
            row["backends"][b] = {"error": raw["errors"][key][b]}
    jax = row["backends"].get("jax", {})
    for b in OTHERS:
        other = row["backends"].get(b, {})
        med, best = other.get("median_us"), other.get("min_us")
        row[f"speedup_vs_{b}"] = med / jax["median_us"] if med and jax.get("median_us") else None
        row[f"best_speedup_vs_{b}"] = best / jax["min_us"] if best and jax.get("min_us") else None
    sync = row["backends"].get("jax_sync", {}).get("median_us")
    torch = row["backends"].get("torch", {}).get("median_us")
    if sync and torch:
        row["sync_speedup_vs_torch"] = torch / sync
    if jax.get("GBps") and copy_bw:
        row["jax_frac_of_copy"] = jax["GBps"] / copy_bw
    thp = row["backends"].get("jax_thp", {}).get("GBps")
    if thp and copy_bw:
        row["jax_thp_frac_of_copy"] = thp / copy_bw
    if C.is_logits(case):
        row["logits"] = _logits(case, jax, raw["passes"].get(key) or {}, copy.get("logits"))
    return row


def _logits(
    case: C.Case,
    jax: Mapping[str, Any],
    passes: Mapping[str, list[float]],
    copy: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """A logits row's read rate against the copy's, and its reference passes
    (:mod:`bench.logits`) with the JAX time over each."""
    nbytes = C.logits_nbytes(case)
    out: dict[str, Any] = {
        "bytes": nbytes,
        "passes": {name: stats(xs) for name, xs in passes.items() if xs},
    }
    copy_read = (copy or {}).get("read_GBps")
    if copy_read:
        out["copy_read_GBps"] = copy_read
        out["copy_ms"] = nbytes / copy_read / 1e6  # the copy's time for these bytes
    med = jax.get("median_us")
    if med:
        out["read_GBps"] = nbytes / med / 1e3
        if copy_read:
            out["read_frac_of_copy"] = out["read_GBps"] / copy_read
    for name, st in out["passes"].items():
        if med:
            out[f"jax_over_{name}"] = med / st["median_us"]
        if copy_read:
            out[f"{name}_read_frac_of_copy"] = nbytes / st["median_us"] / 1e3 / copy_read
    return out


def _overhead(rows: list[dict[str, Any]], plain: Mapping[str, Mapping[str, list[float]]]):
    """The overhead report: per paired case, public and plain statistics and the median
    of the per-pair ratios public / plain (the two timed side by side in one process)."""
    from bench import overhead

    out = []
    for row in rows:
        p = plain.get(row["key"])
        jax = row["backends"].get("jax", {})
        if not p or not p.get("ratios") or "median_us" not in jax:
            continue
        st = stats(p["samples_s"])
        item = {
            "key": row["key"],
            "fn": row["fn"],
            "variant": row["variant"],
            "B": row["B"],
            "public_us": {k: jax[k] for k in ("median_us", "p25_us", "p75_us", "min_us")},
            "plain_us": st,
            "public_over_plain": float(np.median(p["ratios"])),
            "best_public_over_plain": jax["min_us"] / st["min_us"],
            "pairs": len(p["ratios"]),
        }
        if p.get("naive_ratios"):
            item["naive_us"] = stats(p["naive_samples_s"])
            item["public_over_naive"] = float(np.median(p["naive_ratios"]))
        out.append(item)
    return {
        "what": "public zero_jax call / a plain jax.jit of the same math (and / the naive "
        "formula), timed side by side in the jax worker on the same device buffers (medians "
        "of per-round ratios)",
        "functions": list(overhead.FUNCTIONS),
        "min_B": overhead.MIN_B,
        "rows": out,
    }


def assemble(
    *,
    grid: list[C.Case],
    backends: list[str],
    samples: Mapping[str, Mapping[str, list[float]]],
    first: Mapping[str, Mapping[str, list[float]]],
    faults: Mapping[str, Mapping[str, list[float]]],
    errors: Mapping[str, Mapping[str, str]],
    dispatch: Mapping[str, list[dict[str, Any]]],
    copies: list[dict[str, Any]],
    rss: list[dict[str, Any]],
    meta: dict[str, Any],
    contended: Mapping[str, Mapping[str, int]] | None = None,
    plain: Mapping[str, Mapping[str, list[float]]] | None = None,
    passes: Mapping[str, Mapping[str, list[float]]] | None = None,
) -> dict[str, Any]:
    """The result of one run (everything ``latest.json`` holds but the targets).
    ``plain``: per paired case key, ``samples_s`` of the plain jit and ``ratios``;
    ``passes``: per logits case key, the samples of each reference pass."""
    copy = _copy(copies)
    raw = {
        "samples": samples,
        "first": first,
        "faults": faults,
        "errors": errors,
        "contended": contended or {},
        "passes": passes or {},
    }
    rows = [_row(case, backends, raw, copy) for case in grid]
    disp: dict[str, dict[str, Any]] = {}
    for b, runs in dispatch.items():
        disp[b] = {}
        for key in runs[0]:
            vals = [r[key] for r in runs if isinstance(r.get(key), float)]
            disp[b][key] = float(np.median(vals)) * 1e6 if vals else runs[0][key]
    result: dict[str, Any] = {
        "meta": meta,
        "copy_bandwidth": copy,
        "rows": rows,
        "dispatch_us_B8": disp,
        "rss": rss,
    }
    if plain is not None:
        result["overhead"] = _overhead(rows, plain)
    return result


def rounded(x: Any, digits: int = 5) -> Any:
    """``x`` with every float rounded to ``digits`` significant digits (smaller JSON)."""
    if isinstance(x, float):
        return float(f"{x:.{digits}g}") if math.isfinite(x) else None
    if isinstance(x, dict):
        return {k: rounded(v, digits) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [rounded(v, digits) for v in x]
    return x


def dumps(result: dict[str, Any]) -> str:
    """``result`` as the text of ``latest.json``: rounded, indented, one line per row
    (small and still diffable)."""
    rest = {k: v for k, v in result.items() if k != "rows"}
    text = json.dumps(rounded(rest), indent=1)
    body = ",\n  ".join(json.dumps(rounded(r)) for r in result.get("rows", []))
    return text[: text.rindex("}")].rstrip() + ',\n "rows": [\n  ' + body + "\n ]\n}\n"
