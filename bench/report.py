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

__all__ = ["assemble", "plots", "summary", "table"]

LABELS = {
    "jax": "jax",
    "jax_sync": "jax sync",
    "jax_thp": "jax+THP",
    "torch": "torch",
    "torch_compile": "torch.compile",
    "numpy": "numpy",
}
#: consensus / solver_rewards at num_answers = 1M count as "as fast as" at 16 within this.
SAME_SPEED = 1.15


def _stats(xs: list[float]) -> dict[str, float]:
    a = np.asarray(xs) * 1e6
    return {
        "median_us": float(np.median(a)),
        "p25_us": float(np.percentile(a, 25)),
        "p75_us": float(np.percentile(a, 75)),
        "min_us": float(np.min(a)),
        "n": int(a.size),
    }


def assemble(
    *, grid, backends, samples, first, faults, errors, dispatch, copies, rss, meta
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
                st = _stats(samples[case.key][b])
                # Workers live across rounds: only round 1's first call traces and compiles.
                f = float(first[case.key][b][0])
                st["first_call_ms"] = f * 1e3
                st["compile_ms"] = max(f * 1e3 - st["median_us"] / 1e3, 0.0)
                st["GBps"] = nbytes / st["median_us"] / 1e3
                st["page_faults_per_call"] = float(np.median(faults[case.key][b]))
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
                cells.append(f"{_fmt(st['median_us'])} ±{spread:.0f}%")
        jx = r["backends"].get("jax", {})
        sp = r.get("speedup_vs_torch")
        cells.append(f"{sp:.2f}x" if sp else "-")
        bs = r.get("best_speedup_vs_torch")
        cells.append(f"{bs:.2f}x" if bs else "-")
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


def main(argv: list[str] | None = None) -> None:
    """``python -m bench.report [latest.json]``: print the table and summary again."""
    import json
    import sys

    args = sys.argv[1:] if argv is None else argv
    path = Path(args[0]) if args else Path(__file__).resolve().parent / "results" / "latest.json"
    result = json.loads(path.read_text())
    print(table(result))
    print()
    print(summary(result))


if __name__ == "__main__":
    main()
