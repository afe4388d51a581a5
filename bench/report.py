"""Aggregation of the raw timings, the targets of issue 5, the aligned table, and
the plots (throughput against B per function and backend; JAX speed-up over torch).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from bench import cases as C

__all__ = ["assemble", "markdown", "plots", "render_markdown", "summary", "table"]

LABELS = {
    "jax": "jax",
    "jax_bare": "jax bare",
    "jax_sync": "jax sync",
    "jax_thp": "jax+THP",
    "torch": "torch",
    "torch_compile": "torch.compile",
    "numpy": "numpy",
}
#: consensus / solver_rewards at num_answers = 1M count as "as fast as" at 16 within this.
SAME_SPEED = 1.15
#: Issue 13: the public call within this factor of its bare kernel at B in BARE_BATCHES.
BARE_TARGET = 1.15
BARE_BATCHES = (256, 4096, 65536)


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


def assemble(
    *, grid, backends, samples, first, faults, errors, dispatch, copies, rss, meta, contended=None,
    paired=None,
) -> dict:
    pre = [s for c in copies for s in c["prealloc_s"]]
    alloc = [s for c in copies for s in c["alloc_s"]]
    copy_bytes = copies[0]["bytes"] if copies else 1
    copy = {
        "bytes": copy_bytes,
        "prealloc_GBps": copy_bytes / float(np.median(pre)) / 1e9 if pre else None,
        "alloc_GBps": copy_bytes / float(np.median(alloc)) / 1e9 if alloc else None,
        "prealloc_GBps_range": [copy_bytes / max(pre) / 1e9, copy_bytes / min(pre) / 1e9]
        if pre
        else None,
        "what": "NumPy float32 copy of 16M elements (64 MiB); bytes read + written / time",
    }
    rows = []
    for case in grid:
        nbytes = _io_bytes(case)
        row: dict[str, Any] = {
            "key": case.key,
            "fn": case.fn,
            "variant": case.variant,
            "family": case.family,
            "B": case.B,
            "K": case.K,
            "n": case.n,
            "T": case.T,
            "elementwise": case.elementwise,
            "bytes": nbytes,
            "backends": {},
        }
        for b in backends:
            if b in samples.get(case.key, {}):
                st = stats(samples[case.key][b])
                # Workers live across rounds: only round 1's first call traces and compiles.
                f = float(first[case.key][b][0])
                st["first_call_ms"] = f * 1e3
                st["compile_ms"] = max(f * 1e3 - st["median_us"] / 1e3, 0.0)
                st["GBps"] = nbytes / st["median_us"] / 1e3
                st["page_faults_per_call"] = float(np.median(faults[case.key][b]))
                if contended is not None:
                    # rounds whose chunk stayed contended after its retries
                    st["contended_rounds"] = int((contended.get(case.key) or {}).get(b, 0))
                row["backends"][b] = st
            elif b in errors.get(case.key, {}):
                row["backends"][b] = {"error": errors[case.key][b]}
        jx = row["backends"].get("jax", {}).get("median_us")
        jmin = row["backends"].get("jax", {}).get("min_us")
        for b in ("torch", "torch_compile", "numpy"):
            other = row["backends"].get(b, {}).get("median_us")
            row[f"speedup_vs_{b}"] = other / jx if (jx and other) else None
            best = row["backends"].get(b, {}).get("min_us")
            row[f"best_speedup_vs_{b}"] = best / jmin if (jmin and best) else None
        bare = row["backends"].get("jax_bare", {})
        ratios = (paired or {}).get(case.key)
        if ratios:
            # timed side by side in one process: the median of the per-pair ratios
            row["public_over_bare"] = float(np.median(ratios))
            row["best_public_over_bare"] = jmin / bare["min_us"]
        elif jx and bare.get("median_us"):
            row["public_over_bare"] = jx / bare["median_us"]
            row["best_public_over_bare"] = jmin / bare["min_us"]
        js = row["backends"].get("jax_sync", {}).get("median_us")
        tt = row["backends"].get("torch", {}).get("median_us")
        if js and tt:
            row["sync_speedup_vs_torch"] = tt / js
        if jx and copy["prealloc_GBps"]:
            row["jax_frac_of_copy"] = row["backends"]["jax"]["GBps"] / copy["prealloc_GBps"]
        thp = row["backends"].get("jax_thp", {}).get("GBps")
        if thp and copy["prealloc_GBps"]:
            row["jax_thp_frac_of_copy"] = thp / copy["prealloc_GBps"]
        rows.append(row)
    disp = {}
    for b, runs in dispatch.items():
        disp[b] = {}
        for key in runs[0]:
            vals = [r[key] for r in runs if isinstance(r.get(key), float)]
            disp[b][key] = float(np.median(vals)) * 1e6 if vals else runs[0][key]
    result = {
        "meta": meta,
        "copy_bandwidth": copy,
        "rows": rows,
        "dispatch_us_B8": disp,
        "rss": rss,
    }
    result["targets"] = targets(result)
    return result


def _io_bytes(case: C.Case) -> int:
    """Input + output bytes at the case's shape (from the dtypes of a tiny build)."""
    small = C.Case(case.fn, 8, case.K, case.n, case.T, case.ids)
    args, _ = C.build(small)
    per_row = sum(a.nbytes for a in args if isinstance(a, np.ndarray)) // 8
    return per_row * case.B + C.output_nbytes(case)


# -------------------------------------------------------------------------- targets


def _geomean(xs: Iterable[float]) -> float | None:
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def targets(result: dict) -> list[dict[str, Any]]:
    rows = result["rows"]
    copy_bw = result["copy_bandwidth"]["prealloc_GBps"]
    out = []

    # 1. JAX faster than torch at every B >= 4096 (arbitrary-id challenger excluded).
    t1 = [r for r in rows if r["B"] >= 4096 and r["family"] != "challenger_rewards[arbitrary]"]
    t1 = [r for r in t1 if r.get("speedup_vs_torch")]
    slow = [(r["key"], round(r["speedup_vs_torch"], 2)) for r in t1 if r["speedup_vs_torch"] <= 1]
    gm = _geomean(r["speedup_vs_torch"] for r in t1)
    if t1:
        worst = min(t1, key=lambda r: r["speedup_vs_torch"])
        out.append(
            {
                "target": 1,
                "what": "jax faster than torch eager at every B >= 4096; geomean >= 5x",
                "met": not slow and gm is not None and gm >= 5,
                "rows": len(t1),
                "geomean_speedup": gm,
                "min_speedup": [worst["key"], worst["speedup_vs_torch"]],
                "rows_not_faster": slow,
            }
        )
        best = [r for r in t1 if r.get("best_speedup_vs_torch")]
        if best:
            out[-1]["best_geomean_speedup"] = _geomean(r["best_speedup_vs_torch"] for r in best)
            out[-1]["best_rows_not_faster"] = [
                (r["key"], round(r["best_speedup_vs_torch"], 2))
                for r in best
                if r["best_speedup_vs_torch"] <= 1
            ]
        sync = [r for r in t1 if r.get("sync_speedup_vs_torch")]
        if sync:
            out[-1]["sync_geomean_speedup"] = _geomean(r["sync_speedup_vs_torch"] for r in sync)
            out[-1]["sync_rows_not_faster"] = [
                (r["key"], round(r["sync_speedup_vs_torch"], 2))
                for r in sync
                if r["sync_speedup_vs_torch"] <= 1
            ]

    # 2. challenger: dense ids beat torch everywhere; arbitrary within 1.5x up to 65536.
    dense = [r for r in rows if r["family"] == "challenger_rewards[dense]"]
    arb = [r for r in rows if r["family"] == "challenger_rewards[arbitrary]"]
    if dense or arb:
        dense_ok = all((r.get("speedup_vs_torch") or 0) > 1 for r in dense)
        arb_ok = all((r.get("speedup_vs_torch") or 0) >= 1 / 1.5 for r in arb if r["B"] <= 65536)
        out.append(
            {
                "target": 2,
                "what": "challenger: dense ids beat torch at every B; arbitrary ids within "
                "1.5x of torch at B <= 65536",
                "met": dense_ok and arb_ok,
                "dense_speedup": {r["B"]: r.get("speedup_vs_torch") for r in dense},
                "arbitrary_speedup": {r["B"]: r.get("speedup_vs_torch") for r in arb},
                "dense_best_speedup": {r["B"]: r.get("best_speedup_vs_torch") for r in dense},
                "arbitrary_best_speedup": {r["B"]: r.get("best_speedup_vs_torch") for r in arb},
            }
        )

    # 3. bandwidth at B = 16M (elementwise) and for the largest hint_delta shapes.
    big = [r for r in rows if r["elementwise"] and r["B"] == C.BIG and "jax_frac_of_copy" in r]
    hint = [r for r in rows if r["fn"] == "hint_delta" and r["B"] * (r["T"] or 0) >= 2**25]
    if big or hint:
        frac = {r["family"]: r["jax_frac_of_copy"] for r in big}
        faults = {
            r["family"]: {
                b: r["backends"][b].get("page_faults_per_call")
                for b in ("jax", "jax_thp", "torch", "numpy")
                if b in r["backends"] and "error" not in r["backends"][b]
            }
            for r in big
        }
        thp = {r["family"]: r.get("jax_thp_frac_of_copy") for r in big}
        hfrac = {}
        for r in hint:
            if "jax" in r["backends"] and copy_bw:
                read = r["bytes"] - C.output_nbytes(C.Case(r["fn"], r["B"], T=r["T"]))
                gbps = read / r["backends"]["jax"]["median_us"] / 1e3
                hfrac[r["key"]] = gbps / copy_bw
        out.append(
            {
                "target": 3,
                "what": "elementwise >= 0.5 of copy bandwidth at B=16M; hint_delta >= 0.4 "
                "(bytes of its three inputs)",
                "met": bool(frac)
                and all(v >= 0.5 for v in frac.values())
                and all(v >= 0.4 for v in hfrac.values()),
                "copy_GBps": copy_bw,
                "fraction_at_16M": frac,
                "fraction_at_16M_with_THP": thp,
                "page_faults_per_call_at_16M": faults,
                "hint_delta_fraction": hfrac,
            }
        )

    # 4. vote at num_answers = 1M: as fast as at 16, memory independent of num_answers.
    pairs = []
    by_key = {(r["fn"], r["B"], r["K"], r["n"]): r for r in rows}
    for (fn, b, k, n), r in by_key.items():
        if fn in ("consensus", "solver_rewards") and n == 1_000_000 and b >= 4096:
            r16 = by_key.get((fn, b, k, 16))
            jt, j16 = r["backends"].get("jax"), (r16 or {}).get("backends", {}).get("jax")
            if jt and j16 and "median_us" in jt and "median_us" in j16:
                pairs.append((r["key"], jt["median_us"] / j16["median_us"]))
    mem = [m for m in result["rss"] if m.get("backend") == "jax" and "extra_MiB" in m]
    mem_ok = True
    for fn in ("consensus", "solver_rewards"):
        per = {(m["B"], m["K"]): [] for m in mem if m["fn"] == fn}
        for m in mem:
            if m["fn"] == fn:
                per[(m["B"], m["K"])].append(m["extra_MiB"] or 0.0)
        for vals in per.values():
            if len(vals) > 1 and max(vals) > min(vals) + 16:
                mem_ok = False
    if pairs or mem:
        out.append(
            {
                "target": 4,
                "what": f"vote at n=1M within {SAME_SPEED}x of n=16 (B >= 4096); peak memory "
                "independent of n (within 16 MiB)",
                "met": mem_ok and all(v <= SAME_SPEED for _, v in pairs),
                "time_ratio_1M_over_16": dict(pairs),
                "jax_extra_MiB": [
                    (m["fn"], m["B"], m["K"], m["n"], round(m["extra_MiB"] or 0, 1)) for m in mem
                ],
            }
        )

    # 5. eager dispatch at B = 8.
    disp = result["dispatch_us_B8"].get("jax", {})
    if disp:
        ew = {k: v for k, v in disp.items() if k in C.ELEMENTWISE and isinstance(v, float)}
        out.append(
            {
                "target": 5,
                "what": "eager jax call at B=8 <= 30 us for the elementwise functions",
                "met": bool(ew) and all(v <= 30 for v in ew.values()),
                "jax_us": ew,
            }
        )
        sync = result["dispatch_us_B8"].get("jax_sync", {})
        if sync:
            out[-1]["jax_sync_us"] = {k: v for k, v in sync.items() if k in ew}

    # 6. (issue 13) the public call within 1.15x of its bare kernel.
    bare = [r for r in rows if r["B"] in BARE_BATCHES and r.get("public_over_bare")]
    if bare:
        worst = max(bare, key=lambda r: r["public_over_bare"])
        out.append(
            {
                "target": 6,
                "what": f"public jax call within {BARE_TARGET}x of a bare jitted kernel of the "
                f"same math at B in {{{', '.join(f'{b:,}' for b in BARE_BATCHES)}}}",
                "met": all(r["public_over_bare"] <= BARE_TARGET for r in bare),
                "rows": len(bare),
                "geomean_public_over_bare": _geomean(r["public_over_bare"] for r in bare),
                "max_public_over_bare": [worst["key"], worst["public_over_bare"]],
                "rows_above_target": [
                    (r["key"], round(r["public_over_bare"], 2))
                    for r in bare
                    if r["public_over_bare"] > BARE_TARGET
                ],
                "best_rows_above_target": [
                    (r["key"], round(r["best_public_over_bare"], 2))
                    for r in bare
                    if (r.get("best_public_over_bare") or 0) > BARE_TARGET
                ],
            }
        )
    return out


# ---------------------------------------------------------------------------- table


def _fmt(v: float | None, digits: int = 3) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    if v >= 1000:
        return f"{v:,.0f}"
    return f"{v:.{digits}g}"


def table(result: dict) -> str:
    """The markdown table, aligned (one row per function, variant and B)."""
    backends = result["meta"]["backends"]
    head = ["function", "variant", "B"]
    head += [f"{LABELS[b]} µs" for b in backends]
    head += ["torch/jax", "best-of"]
    bare = "jax_bare" in backends
    if bare:
        head += ["jax/bare"]
    head += ["jax GB/s", "of copy"]
    thp = "jax_thp" in backends
    if thp:
        head += ["+THP of copy"]
    head += ["jax compile ms"]
    lines = [head]
    for r in result["rows"]:
        cells = [r["fn"], r["variant"] or "", f"{r['B']:,}"]
        for b in backends:
            st = r["backends"].get(b)
            if st is None:
                cells.append("-")
            elif "error" in st:
                cells.append("fails")
            else:
                spread = (st["p75_us"] - st["p25_us"]) / st["median_us"] * 50
                mark = " †" if st.get("contended_rounds") else ""
                cells.append(f"{_fmt(st['median_us'])} ±{spread:.0f}%{mark}")
        jx = r["backends"].get("jax", {})
        sp = r.get("speedup_vs_torch")
        cells.append(f"{sp:.2f}x" if sp else "-")
        bs = r.get("best_speedup_vs_torch")
        cells.append(f"{bs:.2f}x" if bs else "-")
        if bare:
            pb = r.get("public_over_bare")
            cells.append(f"{pb:.2f}x" if pb else "-")
        cells.append(_fmt(jx.get("GBps")))
        cells.append(f"{r['jax_frac_of_copy']:.2f}" if "jax_frac_of_copy" in r else "-")
        if thp:
            cells.append(f"{r['jax_thp_frac_of_copy']:.2f}" if "jax_thp_frac_of_copy" in r else "")
        cells.append(_fmt(jx.get("compile_ms")))
        lines.append(cells)
    widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
    right = set(range(2, len(head)))

    def fmt(line):
        cells = [
            c.rjust(w) if i in right else c.ljust(w)
            for i, (c, w) in enumerate(zip(line, widths, strict=True))
        ]
        return "| " + " | ".join(cells) + " |"

    sep = (
        "|"
        + "|".join(
            ("-" * (w + 1) + ":") if i in right else "-" * (w + 2) for i, w in enumerate(widths)
        )
        + "|"
    )
    return "\n".join([fmt(lines[0]), sep, *(fmt(x) for x in lines[1:])])


def summary(result: dict) -> str:
    copy = result["copy_bandwidth"]
    out = [
        f"copy bandwidth (NumPy, 64 MiB, read + write): {_fmt(copy['prealloc_GBps'])} GB/s "
        f"into a preallocated buffer, {_fmt(copy['alloc_GBps'])} GB/s allocating",
    ]
    errs = {
        (r["key"], b): st["error"]
        for r in result["rows"]
        for b, st in r["backends"].items()
        if "error" in st
    }
    for (key, b), e in list(errs.items())[:12]:
        out.append(f"{LABELS[b]} fails on {key}: {e}")
    out.append("dispatch overhead per eager call at B=8 (µs):")
    for b, d in result["dispatch_us_B8"].items():
        parts = [f"{k} {_fmt(v)}" for k, v in d.items() if isinstance(v, float)]
        out.append(f"  {LABELS.get(b, b)}: " + ", ".join(parts))
    if result["rss"]:
        out.append("peak memory of one call (MiB above the RSS before it):")
        for m in result["rss"]:
            if "error" in m:
                out.append(f"  {m}")
                continue
            out.append(
                f"  {m['backend']:<6} {m['fn']:<15} B={m['B']:<6} K={m['K']:<3} "
                f"n={m['n']:<9,} extra {_fmt(m['extra_MiB'])} MiB "
                f"(inputs {_fmt(m['input_MiB'])} MiB), call {_fmt(m['call_s'] * 1e3)} ms"
            )
    for t in result["targets"]:
        status = "MET" if t["met"] else "NOT MET"
        details = {k: v for k, v in t.items() if k not in ("target", "what", "met")}
        out.append(f"target {t['target']} ({t['what']}): {status} {_short(details)}")
    return "\n".join(out)


def rounded(x: Any, digits: int = 5) -> Any:
    """``x`` with every float rounded to ``digits`` significant digits (smaller JSON)."""
    if isinstance(x, float):
        return float(f"{x:.{digits}g}") if math.isfinite(x) else None
    if isinstance(x, dict):
        return {k: rounded(v, digits) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [rounded(v, digits) for v in x]
    return x


def _short(d: Any) -> str:
    if isinstance(d, float):
        return f"{d:.3g}"
    if isinstance(d, dict):
        return "{" + ", ".join(f"{k}: {_short(v)}" for k, v in d.items()) + "}"
    if isinstance(d, (list, tuple)):
        return "[" + ", ".join(_short(v) for v in d) + "]"
    return str(d)


# ---------------------------------------------------------------------------- plots


def plots(result: dict, out: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = result["rows"]
    backends = result["meta"]["backends"]
    colors = {
        "jax": "C0",
        "jax_bare": "C7",
        "jax_sync": "C4",
        "jax_thp": "C9",
        "torch": "C3",
        "torch_compile": "C1",
        "numpy": "C2",
    }
    styles = ["-", "--", ":", "-."]
    markers = ["o", "s", "^", "v", "D", "x"]
    fns = [f for f in C.FUNCTIONS if any(r["fn"] == f for r in rows)]
    ncol = 4
    nrow = math.ceil(len(fns) / ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(16, 3.6 * nrow), squeeze=False)
    for ax, fn in zip(axes.flat, fns, strict=False):
        fams = list(dict.fromkeys(r["family"] for r in rows if r["fn"] == fn))
        for vi, fam in enumerate(fams):
            fr = [r for r in rows if r["family"] == fam]
            for b in backends:
                pts = [
                    (r["B"], r["B"] / r["backends"][b]["median_us"] * 1e6)
                    for r in fr
                    if "median_us" in r["backends"].get(b, {})
                ]
                if not pts:
                    continue
                xs, ys = zip(*pts, strict=True)
                label = LABELS[b] if vi == 0 else None
                ax.plot(
                    xs,
                    ys,
                    color=colors[b],
                    ls=styles[vi % len(styles)],
                    marker=markers[vi % len(markers)],
                    ms=3,
                    lw=1,
                    label=label,
                )
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(fn, fontsize=9)
        ax.set_xlabel("B", fontsize=8)
        ax.set_ylabel("rows / s", fontsize=8)
        ax.tick_params(labelsize=7)
        variants = [f.split("[", 1)[1].rstrip("]") for f in fams if "[" in f]
        if len(variants) > 1:
            note = "  ".join(
                f"{styles[i % len(styles)]}{markers[i % len(markers)]} {v}"
                for i, v in enumerate(variants)
            )
            ax.text(0.01, 0.01, note, transform=ax.transAxes, fontsize=5.5, va="bottom")
        ax.grid(alpha=0.3, which="both")
    for ax in list(axes.flat)[len(fns) :]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=7)
    fig.suptitle("Throughput against batch size (each backend in its own process)", fontsize=11)
    fig.tight_layout()
    p1 = out / "throughput.png"
    fig.savefig(p1, dpi=64, pil_kwargs={"optimize": True})
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(11, 6))
    fams = list(dict.fromkeys(r["family"] for r in rows))
    cmap = plt.get_cmap("tab20")
    for i, fam in enumerate(fams):
        pts = [(r["B"], r["speedup_vs_torch"]) for r in rows if r["family"] == fam]
        pts = [p for p in pts if p[1]]
        if pts:
            xs, ys = zip(*pts, strict=True)
            ax.plot(
                xs,
                ys,
                marker=markers[i % 6],
                ms=4,
                lw=1,
                color=cmap(i % 20),
                label=fam,
                ls=styles[(i // 20) % 4],
            )
    ax.axhline(1, color="k", lw=1)
    ax.axhline(5, color="k", lw=0.8, ls="--")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("B")
    ax.set_ylabel("torch eager time / jax time")
    ax.set_title("JAX speed-up over the torch twin (>1: JAX faster; dashed: 5x)")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=6, ncol=2, loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.tight_layout()
    p2 = out / "ratio.png"
    fig.savefig(p2, dpi=64, pil_kwargs={"optimize": True})
    plt.close(fig)
    return [p1, p2]


# ------------------------------------------------------------------------- markdown

#: Default output of ``python -m bench.report --markdown``.
RESULTS_MD = Path(__file__).resolve().parent / "RESULTS.md"
#: A chunk (one function family in one round) counts as contended in the caveats when other
#: processes kept at least this many cores busy during it (the JSON lists every chunk > 0.3).
CONTENDED_CORES = 1.0

_KEY_LABELS = {
    "rows": "rows compared",
    "geomean_speedup": "geometric mean of torch/jax, medians",
    "min_speedup": "lowest row (medians)",
    "rows_not_faster": "rows at or below 1x (medians)",
    "best_geomean_speedup": "geometric mean of torch/jax, best loops",
    "best_rows_not_faster": "rows at or below 1x (best loops)",
    "sync_geomean_speedup": "geometric mean of torch/jax sync, medians",
    "sync_rows_not_faster": "rows at or below 1x (jax sync)",
    "dense_speedup": "dense ids, torch/jax by B (medians)",
    "arbitrary_speedup": "arbitrary ids, torch/jax by B (medians)",
    "dense_best_speedup": "dense ids, torch/jax by B (best loops)",
    "arbitrary_best_speedup": "arbitrary ids, torch/jax by B (best loops)",
    "copy_GBps": "copy bandwidth, GB/s",
    "fraction_at_16M": "jax fraction of the copy at B = 16M",
    "fraction_at_16M_with_THP": "jax+THP fraction of the copy at B = 16M",
    "page_faults_per_call_at_16M": "page faults per call at B = 16M",
    "hint_delta_fraction": "hint_delta fraction of the copy (bytes of its inputs)",
    "time_ratio_1M_over_16": "jax time at n = 1M / time at n = 16 (medians)",
    "jax_extra_MiB": "jax peak memory above the RSS before the call, MiB (fn, B, K, n)",
    "jax_us": "jax eager call at B = 8, µs",
    "jax_sync_us": "jax sync eager call at B = 8, µs",
    "geomean_public_over_bare": "geometric mean of jax/bare, medians",
    "max_public_over_bare": "highest row (medians)",
    "rows_above_target": "rows above the target (medians)",
    "best_rows_above_target": "rows above the target (best loops)",
}


def _num(v: Any) -> str:
    """A JSON number or numeric key for prose: 3 significant digits, thousands separated."""
    if isinstance(v, str) and v.isdigit():
        v = int(v)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, int):
        return f"{v:,}"
    return _fmt(v)


def _inline(v: Any) -> str:
    if isinstance(v, dict):
        return ", ".join(f"{_num(k)}: {_inline(x)}" for k, x in v.items()) or "none"
    if isinstance(v, (list, tuple)):
        if not v:
            return "none"
        if all(isinstance(x, (list, tuple)) and x for x in v):
            return "; ".join(
                (" ".join(_num(y) for y in x[:-1]) + f": {_num(x[-1])}")
                if len(x) > 1
                else _num(x[0])
                for x in v
            )
        return ", ".join(_num(x) for x in v)
    return _num(v)


def _target_lines(t: dict[str, Any]) -> list[str]:
    status = "met" if t.get("met") else "not met"
    out = [f"**{t.get('target', '?')}. {t.get('what', '')}: {status}.**", ""]
    for k, v in t.items():
        if k in ("target", "what", "met"):
            continue
        label = _KEY_LABELS.get(k, k.replace("_", " "))
        if isinstance(v, dict) and any(isinstance(x, dict) for x in v.values()):
            out.append(f"- {label}:")
            out += [f"  - {_num(kk)}: {_inline(x)}" for kk, x in v.items()]
        else:
            out.append(f"- {label}: {_inline(v)}")
    out.append("")
    return out


def headline(result: dict) -> list[str]:
    """The few lines a reader needs first: JAX against the torch twin, and the caveat."""
    rows = result["rows"]
    t1 = next((t for t in _targets_of(result) if t.get("target") == 1), None)
    big = [r for r in rows if r["B"] >= 4096 and r.get("speedup_vs_torch")]
    med_all = [r["speedup_vs_torch"] for r in rows if r.get("speedup_vs_torch")]
    out = []
    if t1 and t1.get("geomean_speedup"):
        parts = [f"**{_fmt(t1['geomean_speedup'])}x** on medians"]
        if t1.get("best_geomean_speedup"):
            parts.append(f"{_fmt(t1['best_geomean_speedup'])}x on the best loops")
        if t1.get("sync_geomean_speedup"):
            parts.append(f"{_fmt(t1['sync_geomean_speedup'])}x with `jax sync`")
        out.append(
            f"- JAX against the torch twin (eager), geometric mean of torch time / JAX time over "
            f"the {t1['rows']} rows with B ≥ 4,096 (arbitrary-id challenger excluded): "
            + ", ".join(parts)
            + "."
        )
    if med_all:
        slow = [r for r in rows if r.get("speedup_vs_torch") and r["speedup_vs_torch"] <= 1]
        line = (
            f"- Median of the per-row ratio: {_fmt(float(np.median(med_all)))}x over all "
            f"{len(med_all)} rows"
        )
        if big:
            big_median = float(np.median([r["speedup_vs_torch"] for r in big]))
            line += f", {_fmt(big_median)}x at B ≥ 4,096"
        line += f"; JAX slower or equal on {len(slow)} rows"
        small = sum(1 for r in slow if r["B"] < 4096)
        out.append(line + (f" ({small} of them below B = 4,096)." if slow else "."))
    t6 = next((t for t in _targets_of(result) if t.get("target") == 6), None)
    if t6 and t6.get("geomean_public_over_bare"):
        worst = t6.get("max_public_over_bare") or ["?", None]
        out.append(
            f"- Public `zero_jax` call over a bare `jax.jit` of the same math, {t6['rows']} rows "
            f"at B ∈ {{{', '.join(f'{b:,}' for b in BARE_BATCHES)}}}: geometric mean "
            f"**{t6['geomean_public_over_bare']:.2f}x**, highest {worst[1]:.2f}x "
            f"(`{worst[0]}`); {len(t6.get('rows_above_target') or [])} rows above "
            f"{BARE_TARGET}x."
        )
    contended = _contended(result)
    if contended:
        cores = [c["foreign_cores"] for c in contended]
        out.append(
            f"- Caveat: this run was contended ({len(contended)} of {_chunks(result)} "
            f"chunks ran while other processes kept {_num(min(cores))}-{_num(max(cores))} of "
            f"the {result['meta'].get('machine', {}).get('cpus', '?')} cores busy); medians "
            "are noisy, the best-of column is the least disturbed measure (see Caveats)."
        )
    c = result["meta"].get("contention") or {}
    if c.get("chunks_still_contended"):
        out.append(
            f"- Caveat: {c['chunks_still_contended']} of {c.get('chunks_timed', '?')} timed "
            "chunks still ran while other processes used the cores after their repeats "
            "(cells marked †); their medians are not for quoting (see Caveats)."
        )
    return out


def step_headline(step: dict | None) -> list[str]:
    """One line: the three GRPO step variants and the rewards' share of each."""
    if not step or not step.get("variants"):
        return []
    parts = []
    for v in step["variants"].values():
        st = v.get("step_us", {}).get("median_us")
        share = v.get("rewards_share")
        if st is None or share is None:
            continue
        parts.append(f"{v.get('label', '?')} {_fmt(st / 1e3)} ms ({100 * share:.2g} % rewards)")
    return ["- GRPO step (`python -m bench.step`), medians: " + "; ".join(parts) + "."]


def _targets_of(result: dict) -> list[dict[str, Any]]:
    """The targets as recorded in the JSON (recomputed only for a JSON without them)."""
    return result["targets"] if "targets" in result else targets(result)


def _contended(result: dict) -> list[dict[str, Any]]:
    gate = result["meta"].get("quiet_gate") or {}
    chunks = gate.get("chunks_still_contended") or []
    return [c for c in chunks if c.get("foreign_cores", 0) >= CONTENDED_CORES]


def _chunks(result: dict) -> int:
    fams = {r["family"] for r in result["rows"]}
    return len(fams) * int(result["meta"].get("rounds", 1))


_METHOD = """\
`bench/` times every public reward on the CPU in up to six configurations ("backends"):

- `jax`: `zero_jax`, jitted, x64 on (so that the outputs have the dtypes torch returns),
  steady state after warm-up, every call ending in `block_until_ready`;
- `jax sync`: the same with `jax_cpu_enable_async_dispatch=False` (no hand-off to XLA's
  runtime thread), and `jax+THP`: the same started with
  `GLIBC_TUNABLES=glibc.malloc.hugetlb=1` (large batches only); both are process-wide
  settings of the user, not of the library, and show what the default pays for;
- `torch`: the `zero_torch` twin, eager, and `torch.compile`: the same under `torch.compile`
  with default settings;
- `numpy`: a vectorized NumPy implementation written for the bench (`bench/numpy_impl.py`,
  checked against `zero_jax` in `parity_tests/test_bench.py`);
- `jax bare`: a plain `jax.jit` of the same math per function, written for the bench with
  no validation (`bench/bare.py`, checked against `zero_jax` in
  `parity_tests/test_bench_bare.py`), at B ≤ 65,536. It is timed in the `jax` process,
  side by side with the public call on the same inputs: pairs of equal timed loops in
  alternating order (public then bare, bare then public). `jax/bare` is the median of the
  per-pair ratios: what the public call's own machinery costs, with the machine's drift
  and the process's memory state common to both.

Each backend runs in its own long-lived subprocess (JAX and torch in one process distort
each other's timings on a small machine). The backends take turns per function family in
a rotating order, over several rounds of short timed loops; before each family a quiet
gate waits (within a budget) until other processes leave the cores. Each chunk (one
backend on one family in one round) is watched: the machine's busy CPU time minus that of
the bench's own processes, over the chunk's wall time, is what other processes used; a
chunk above 0.3 cores is repeated (a bounded number of times, within a time budget) and
only the last attempt counts. Every chunk's attempts are in `meta.contention` of the JSON;
a cell marked † still ran contended after its repeats. Inputs are NumPy arrays drawn
from fixed seeds (`bench/cases.py`) and tie-heavy: vote shares on a coarse grid, few
distinct answers per question, repeated cluster ids (dense or random 62-bit), 0/1 rewards
for `group_advantages`; floats are float32, ids int64.

A cell is the median time of one call and ± the half inter-quartile spread of the timed
loops, relative to the median. `torch/jax` is the ratio of the medians, `best-of` the
ratio of each backend's fastest loop (the least disturbed). `jax GB/s` counts every input
read once and every output written once; `of copy` divides it by the bandwidth of a NumPy
copy into a preallocated buffer measured in the same run. `jax compile ms` is the first
call minus a steady call (trace, lower, compile)."""

_COMMANDS = """\
```bash
python -m bench                     # full run: bench/results/latest.json and the PNGs
python -m bench --quick             # one-minute subset (what CI's smoke test runs)
python -m bench.report              # print the text table and summary of latest.json
python -m bench.report --markdown   # regenerate this file from latest.json and bleu.json
python -m bench.bleu                # BLEU clustering bench: bench/results/bleu.json
python -m bench.step                # GRPO step bench: bench/results/step.json, step.png
```

`python -m bench` does not rewrite this file: after a full run, regenerate it with
`python -m bench.report --markdown` and commit both (a test checks that they agree)."""


def _shapes(rows: list[dict]) -> list[str]:
    out = []
    for fn in dict.fromkeys(r["fn"] for r in rows):
        fr = [r for r in rows if r["fn"] == fn]
        dims = []
        for dim in ("K", "n", "T"):
            vals = sorted({r[dim] for r in fr if r.get(dim) is not None})
            if vals:
                dims.append(f"{dim} ∈ {{{', '.join(_num(v) for v in vals)}}}")
        bs = sorted({r["B"] for r in fr})
        out.append(
            f"`{fn}`: B ∈ {{{', '.join(_num(b) for b in bs)}}}" + "".join(f", {d}" for d in dims)
        )
    return out


def _versions(meta: dict) -> str:
    merged: dict[str, str] = {}
    for vs in (meta.get("versions") or {}).values():
        for k, v in vs.items():
            merged.setdefault(k, str(v))
    return ", ".join(f"{k} {v}" for k, v in merged.items())


def _run_lines(result: dict) -> list[str]:
    meta = result["meta"]
    m = meta.get("machine") or {}
    copy = result.get("copy_bandwidth") or {}
    labels = ", ".join(f"`{LABELS.get(b, b)}`" for b in meta.get("backends", []))
    out = [
        f"- Command: `{meta.get('command', 'python -m bench').strip()}`"
        + (" (quick subset)" if meta.get("quick") else ""),
        f"- Started {meta.get('started', '?')} (machine's local time), "
        f"{_num(meta.get('duration_s'))} s in all, of which "
        f"{_num((meta.get('quiet_gate') or {}).get('waited_s', 0.0))} s waiting for quiet cores",
        f"- {_num(meta.get('rounds'))} rounds of {_num(meta.get('repeats_per_round'))} timed loops "
        f"of about {_num(meta.get('target_ms_per_loop'))} ms per case and backend; "
        f"backends {labels}; JAX x64 {'on' if meta.get('jax_x64') else 'off'}",
        f"- Machine: {m.get('cpus', '?')} × {m.get('cpu', '?')}, {_num(m.get('mem_GiB'))} GiB, "
        f"`{m.get('platform', '?')}`, transparent huge pages "
        f"`{m.get('transparent_hugepage', '?')}`",
        f"- Python {m.get('python', '?')}; {_versions(meta)}",
    ]
    if "loadavg_start" in meta:
        out.append(
            "- Load average (1, 5, 15 min) at the start "
            f"{', '.join(_num(x) for x in meta['loadavg_start'])}, at the end "
            f"{', '.join(_num(x) for x in meta.get('loadavg_end', []))}"
        )
    if copy.get("prealloc_GBps"):
        rng = copy.get("prealloc_GBps_range") or []
        out.append(
            f"- Copy bandwidth ({copy.get('what', 'NumPy copy')}): "
            f"**{_num(copy['prealloc_GBps'])} GB/s** into a preallocated buffer"
            + (f" (loops from {_num(rng[0])} to {_num(rng[1])})" if len(rng) == 2 else "")
            + f", {_num(copy.get('alloc_GBps'))} GB/s allocating"
        )
    out.append("- Shapes:")
    out += [f"  - {s}" for s in _shapes(result["rows"])]
    return out


def _contention_lines(result: dict) -> list[str]:
    """What the per-chunk contention detector saw, and what it repeated."""
    c = result["meta"].get("contention")
    if not c:
        return []
    still = [x for x in c.get("chunks", []) if x.get("contended")]
    line = (
        f"- Contention detector (other processes above {_num(c.get('threshold_cores'))} cores "
        f"over a timed chunk): {_num(c.get('chunks_retried', 0))} of "
        f"{_num(c.get('chunks_timed', 0))} chunks repeated, {_num(c.get('retries', 0))} "
        f"repeats in all ({_num(c.get('retry_time_s', 0.0))} s, at most "
        f"{_num(c.get('max_retries_per_chunk'))} per chunk within "
        f"{_num(c.get('retry_budget_s'))} s); "
    )
    if not still:
        return [line + "every counted chunk ran uncontended."]
    cores = [a["foreign_cores"] for x in still for a in x["attempts"][-1:]]
    line += (
        f"**{len(still)} chunks still ran contended** after their repeats (other processes on "
        f"{_num(min(cores))}-{_num(max(cores))} cores; their cells are marked †, "
        "`meta.contention.chunks` lists every attempt)."
    )
    return [line]


def _caveat_lines(result: dict) -> list[str]:
    meta = result["meta"]
    out = _contention_lines(result)
    contended = _contended(result)
    if contended:
        rounds: dict[str, list[dict]] = {}
        for c in contended:
            head, _, fam = c["chunk"].partition(" ")
            num, _, fam = fam.partition(" ")
            rounds.setdefault(f"{head} {num}", []).append({**c, "family": fam})
        nfam = len({r["family"] for r in result["rows"]})
        cores = [c["foreign_cores"] for c in contended]
        out.append(
            f"- **This run was contended.** {len(contended)} of {_chunks(result)} chunks (one "
            f"function family in one round) ran while other processes kept "
            f"{_num(min(cores))}-{_num(max(cores))} of the {meta['machine'].get('cpus', '?')} "
            "cores busy, the quiet gate having given up waiting for them "
            "(`meta.quiet_gate` in the JSON lists every chunk):"
        )
        for rnd, cs in rounds.items():
            names = ", ".join(f"`{c['family']}`" for c in cs)
            what = "all families" if len(cs) == nfam else names
            out.append(f"  - {rnd}: {len(cs)} of {nfam}, {what}")
        spread = [
            r
            for r in result["rows"]
            if "median_us" in r["backends"].get("torch", {})
            and (r["backends"]["torch"]["p75_us"] - r["backends"]["torch"]["p25_us"])
            / r["backends"]["torch"]["median_us"]
            * 50
            > 100
        ]
        out.append(
            "- Multi-threaded backends suffer most (an OpenMP parallel region waits for a "
            f"descheduled thread): {len(spread)} of {len(result['rows'])} torch cells spread "
            "by more than ±100 %. Medians of such rows are inflated and the median ratio "
            "`torch/jax` flatters JAX; the `best-of` column is the least disturbed, read it "
            "where the two disagree. A rerun on a quiet machine gives cleaner medians."
        )
    if meta.get("quick"):
        out.append("- Quick run: a subset of the grid with shorter loops; not for reading ratios.")
    if meta.get("compile_ms_note"):
        out.append(f"- Compile times: {meta['compile_ms_note']}.")
    errs = [
        f"`{LABELS.get(b, b)}` on `{r['key']}`: {st['error']}"
        for r in result["rows"]
        for b, st in r["backends"].items()
        if "error" in st
    ]
    if errs:
        out.append("- Failed cells (`fails` in the table): " + "; ".join(errs))
    return out or ["- None recorded: the quiet gate found every chunk quiet."]


def _dispatch_lines(result: dict) -> list[str]:
    disp = result.get("dispatch_us_B8") or {}
    if not disp:
        return []
    bks = list(disp)
    keys = list(dict.fromkeys(k for d in disp.values() for k in d))
    head = ["call", *(f"{LABELS.get(b, b)} µs" for b in bks)]
    out = ["| " + " | ".join(head) + " |", "|---" + "|---:" * len(bks) + "|"]
    for k in keys:
        name = k.lstrip("_").replace("_", " ") if k.startswith("_") else f"`{k}`"
        cells = [_num(disp[b][k]) if isinstance(disp[b].get(k), float) else "-" for b in bks]
        out.append("| " + " | ".join([name, *cells]) + " |")
    return out


def _rss_lines(result: dict) -> list[str]:
    rss = result.get("rss") or []
    if not rss:
        return []
    out = [
        "| backend | function | B | K | n | extra MiB | inputs MiB | call ms |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for m in rss:
        if "error" in m:
            out.append(f"| {m.get('backend')} | {m.get('fn')} | | | | fails: {m['error']} | | |")
            continue
        out.append(
            f"| {m['backend']} | `{m['fn']}` | {_num(m['B'])} | {_num(m['K'])} | {_num(m['n'])} "
            f"| {_num(m['extra_MiB'])} | {_num(m['input_MiB'])} | {_num(m['call_s'] * 1e3)} |"
        )
    return out


def _limits_lines(result: dict) -> list[str]:
    """JAX's CPU runtime as the limit: each case with JAX's defaults and with the user-side
    setting, each in its own process, interleaved (``runtime_limits`` of the JSON)."""
    lim = result.get("runtime_limits") or {}
    if not lim:
        return []
    out = [
        "Each case timed in a process with JAX's defaults and in one with the setting, "
        "interleaved, in the same run (`bench/limits.py`; µs per call, median ± half the "
        "inter-quartile spread).",
        "",
        "| limit | case | JAX defaults µs | with the setting µs | defaults / setting "
        "| page faults per call (defaults, setting) |",
        "|---|---|---:|---:|---:|---:|",
    ]

    def cell(st: dict | None) -> str:
        if not st:
            return "-"
        spread = (st["p75_us"] - st["p25_us"]) / st["median_us"] * 50
        return f"{_fmt(st['median_us'])} ±{spread:.0f}%"

    for name, block in lim.items():
        for row in block.get("rows", []):
            d, st = row.get("default"), row.get("setting")
            ratio = row.get("default_over_setting")
            pf = (
                f"{_num((d or {}).get('page_faults_per_call'))}, "
                f"{_num((st or {}).get('page_faults_per_call'))}"
            )
            out.append(
                f"| {name.replace('_', ' ')} | `{row['key']}` | {cell(d)} | {cell(st)} | "
                + (f"{ratio:.2f}x" if ratio else "-")
                + f" | {pf} |"
            )
    out.append("")
    for name, block in lim.items():
        out.append(
            f"- {name.replace('_', ' ')}: removes the {block.get('removes', '?')}; "
            f"setting: `{block.get('setting', '?')}`"
        )
    return out


def _step_lines(step: dict) -> list[str]:
    """The GRPO step bench (``python -m bench.step``, ``step.json``)."""
    meta = step.get("meta", {})
    cfg = meta.get("config", {})
    variants = step.get("variants", {})
    out = [
        f"`{meta.get('command', 'python -m bench.step').strip()}` (started "
        f"{meta.get('started', '?')}, {_num(meta.get('duration_s'))} s"
        + (", quick configuration" if meta.get("quick") else "")
        + f"): one GRPO update of {_num(cfg.get('prompts'))} prompts × "
        f"{_num(cfg.get('samples'))} samples (answer ids in an alphabet of "
        f"{_num(cfg.get('num_answers'))}), a linear policy head {_num(cfg.get('hidden'))} → "
        f"{_num(cfg.get('vocab'))} over {_num(cfg.get('T'))} tokens per sample, log-probs "
        "gathered at the sampled tokens, Adam (optax). The rewards are consensus, "
        "pseudo-rewards, the band (`curriculum_mask`) and group advantages. The variants run "
        f"interleaved in one process, {_num(cfg.get('steps'))} steps each.",
        "",
        "| variant | step ms | rewards µs | rewards' share of the step | step / in-jit step |",
        "|---|---:|---:|---:|---:|",
    ]
    base = (variants.get("jax_in_step") or {}).get("step_us", {}).get("median_us")
    for name, v in variants.items():
        st = v.get("step_us", {})
        rw = v.get("rewards_us", {})
        if not st:
            continue
        spread = (st["p75_us"] - st["p25_us"]) / st["median_us"] * 50
        rspread = (rw["p75_us"] - rw["p25_us"]) / rw["median_us"] * 50 if rw.get("median_us") else 0
        share = v.get("rewards_share")
        rel = f"{st['median_us'] / base:.3f}x" if base else "-"
        out.append(
            f"| {v.get('label', name)} | {_fmt(st['median_us'] / 1e3)} ±{spread:.0f}% "
            f"| {_fmt(rw.get('median_us'))} ±{rspread:.0f}% "
            f"| {f'{100 * share:.2f} %' if share is not None else '-'} "
            f"| {rel} |"
        )
    upd = step.get("update_only_us")
    if upd:
        out.append(
            f"| update alone (advantages given, on the device) | {_fmt(upd['median_us'] / 1e3)} "
            "| - | - | " + (f"{upd['median_us'] / base:.3f}x" if base else "-") + " |"
        )
    out += ["", *[f"- {note}" for note in step.get("notes", [])]]
    c = meta.get("contention") or {}
    if c:
        out.append(
            f"- Contention: {_num(c.get('contended_steps', 0))} of {_num(c.get('steps', 0))} "
            f"timed steps ran while other processes used more than "
            f"{_num(c.get('threshold_cores'))} cores; {_num(c.get('retries', 0))} repeated."
        )
    out.append(
        f"- Machine: {meta.get('machine', {}).get('cpus', '?')} × "
        f"{meta.get('machine', {}).get('cpu', '?')}; raw samples in `step.json`, plot "
        "`step.png`"
    )
    return out


def _bleu_lines(bleu: dict) -> list[str]:
    zt = float(np.median(bleu["zero_text_seconds"]))
    pub = float(np.median(bleu["published_seconds"]))
    same = "the same partition" if bleu.get("same_partition") else "**different partitions**"
    return [
        f"`python -m bench.bleu` clusters {_num(bleu['n'])} generated challenger questions "
        "(templated word problems, some of them light edits of earlier ones) at BLEU threshold "
        f"{_num(bleu['threshold'])} with `zero_text.bleu_clusters` and with the published code "
        f"path (NLTK `sentence_bleu` for each of the {_num(bleu['pairs'])} pairs, then "
        "scikit-learn's agglomerative clustering), in one process, and checks that the "
        "partitions agree.",
        "",
        f"- `zero_text`: {_num(zt)} s (median of {len(bleu['zero_text_seconds'])} calls); "
        f"published path: {_num(pub)} s (median of {len(bleu['published_seconds'])})",
        f"- Speed-up **{_num(bleu['speedup'])}x** ({_num(bleu.get('first_call_speedup'))}x on "
        f"the first, cold call); {same}, {_num(bleu['clusters'])} clusters",
        f"- Python {bleu.get('python', '?')} on {bleu.get('machine', '?')}; raw numbers in "
        "`bleu.json`",
    ]


def markdown(
    result: dict,
    *,
    bleu: dict | None = None,
    step: dict | None = None,
    results_dir: str = "results",
) -> str:
    """The results document, ``bench/RESULTS.md``: method, commands, the run's metadata and
    caveats, the table, dispatch and memory, the targets, the plots and the BLEU bench.
    Every number comes from ``result`` (latest.json) or ``bleu`` (bleu.json); fixed prose
    describes the method only.  ``results_dir``: the JSON / PNG directory, relative to the
    document."""
    meta = result["meta"]
    rd = results_dir.rstrip("/")
    extra = [f"`{rd}/{n}.json`" for n, d in (("bleu", bleu), ("step", step)) if d]
    sources = f"`{rd}/latest.json`" + "".join(
        f"{', ' if i < len(extra) - 1 else ' and '}{e}" for i, e in enumerate(extra)
    )
    out = [
        "# Bench results",
        "",
        f"<!-- Generated by `python -m bench.report --markdown` from {sources}; do not edit. -->",
        "",
        f"Generated by `python -m bench.report --markdown` from {sources} (one run of "
        f"`{meta.get('command', 'python -m bench').strip()}` started {meta.get('started', '?')}). "
        "Do not edit by hand: rerun the bench and regenerate.",
        "",
        *headline(result),
        *step_headline(step),
        "",
        "## How the bench measures",
        "",
        _METHOD,
        "",
        "## Commands",
        "",
        _COMMANDS,
        "",
        "## This run",
        "",
        *_run_lines(result),
        "",
        "## Caveats",
        "",
        *_caveat_lines(result),
        "",
        "## Results",
        "",
        "Times in µs per call (median ± half the inter-quartile spread); `-`: not run at this "
        "shape; `+THP of copy`: the `jax+THP` bandwidth as a fraction of the copy.",
        "",
        table(result),
        "",
    ]
    disp = _dispatch_lines(result)
    if disp:
        out += ["### Dispatch overhead: one eager call at B = 8", "", *disp, ""]
    lim = _limits_lines(result)
    if lim:
        out += ["### Runtime limits: JAX's defaults and the user-side settings", "", *lim, ""]
    rss = _rss_lines(result)
    if rss:
        out += [
            "### Peak memory of one call",
            "",
            "Peak RSS above the RSS before the call, in a fresh subprocess per row.",
            "",
            *rss,
            "",
        ]
    tg = _targets_of(result)
    if tg:
        out += [
            "## Targets (issue 5)",
            "",
            "As computed by `bench.report.targets` and recorded in the JSON.",
            "",
        ]
        for t in tg:
            out += _target_lines(t)
    out += [
        "## Plots",
        "",
        f"- [`{rd}/throughput.png`]({rd}/throughput.png): rows per second against B, per "
        "function and backend",
        f"- [`{rd}/ratio.png`]({rd}/ratio.png): torch time / JAX time against B, per "
        "function family (> 1: JAX faster; dashed: 5x)",
        "",
        f"![throughput]({rd}/throughput.png)",
        "",
        f"![torch / jax]({rd}/ratio.png)",
        "",
    ]
    if step:
        out += ["## Rewards inside a GRPO step (issue 13)", "", *_step_lines(step), ""]
        out += [f"![step]({rd}/step.png)", ""]
    if bleu:
        out += ["## BLEU repetition clustering (issue 4)", "", *_bleu_lines(bleu), ""]
    return "\n".join(out).rstrip("\n") + "\n"


def render_markdown(json_path: Path, out: Path = RESULTS_MD) -> str:
    """``markdown`` of ``json_path`` (and the ``bleu.json`` beside it, if any), with links
    relative to ``out``'s directory."""
    import json
    import os

    result = json.loads(json_path.read_text())
    bleu_path = json_path.parent / "bleu.json"
    bleu = json.loads(bleu_path.read_text()) if bleu_path.exists() else None
    step_path = json_path.parent / "step.json"
    step = json.loads(step_path.read_text()) if step_path.exists() else None
    rel = os.path.relpath(json_path.resolve().parent, out.resolve().parent)
    return markdown(result, bleu=bleu, step=step, results_dir=Path(rel).as_posix())


def main(argv: list[str] | None = None) -> int:
    """``python -m bench.report [latest.json] [--markdown [PATH]] [--check]``: print the
    table and summary again, or write the Markdown document (default bench/RESULTS.md)."""
    import argparse
    import json

    ap = argparse.ArgumentParser(prog="python -m bench.report", description=main.__doc__)
    ap.add_argument(
        "json",
        nargs="?",
        type=Path,
        default=Path(__file__).resolve().parent / "results" / "latest.json",
        help="results of `python -m bench` (default bench/results/latest.json)",
    )
    ap.add_argument(
        "--markdown",
        nargs="?",
        type=Path,
        const=RESULTS_MD,
        default=None,
        metavar="PATH",
        help="write the Markdown document to PATH (default bench/RESULTS.md)",
    )
    ap.add_argument(
        "--check",
        action="store_true",
        help="with --markdown: write nothing, exit 1 if PATH differs from the generated text",
    )
    args = ap.parse_args(argv)
    if args.markdown is None:
        result = json.loads(args.json.read_text())
        print(table(result))
        print()
        print(summary(result))
        return 0
    text = render_markdown(args.json, args.markdown)
    if args.check:
        current = args.markdown.read_text() if args.markdown.exists() else None
        if current != text:
            print(f"{args.markdown} is stale: run python -m bench.report --markdown")
            return 1
        print(f"{args.markdown} is up to date")
        return 0
    args.markdown.write_text(text)
    print(f"wrote {args.markdown}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
