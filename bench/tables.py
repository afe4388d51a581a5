"""The Markdown tables of the results (the grid, the logits reductions against the
machine's limits, the overhead report, dispatch, runtime limits, peak memory) and the
number formats every rendered line uses.  Backends of
older results that the bench no longer runs are left out.
"""

from __future__ import annotations

import math
from typing import Any

from bench import targets as TG
from bench import templates as T

__all__ = [
    "LABELS",
    "backends",
    "dispatch",
    "fmt",
    "inline",
    "limits",
    "logits",
    "num",
    "overhead",
    "results",
    "rss",
    "spread",
]

#: The backends the bench runs, in table order, with their column labels.  Backends of
#: older results that the bench no longer runs (``jax_bare``) are left out of the tables.
LABELS = {
    "jax": "jax",
    "jax_sync": "jax sync",
    "jax_thp": "jax+THP",
    "torch": "torch",
    "torch_compile": "torch.compile",
    "numpy": "numpy",
}
#: Dispatch entries of older results under their current names (the same measurement),
#: and the ones the bench no longer takes (zero_jax's private validation step alone).
DISPATCH_RENAMED = {
    "_jax_bare_jit_call": "_plain_jit_call",
    "_jax_block_until_ready": "_block_until_ready",
}
DISPATCH_RETIRED = {"_jax_validate_floating"}


# ------------------------------------------------------------------------ numbers


def fmt(v: float | None, digits: int = 3) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    if v >= 1000:
        return f"{v:,.0f}"
    return f"{v:.{digits}g}"


def num(v: Any) -> str:
    """A JSON number or numeric key for prose: 3 significant digits, thousands separated."""
    if isinstance(v, str) and v.isdigit():
        v = int(v)
    if v is None:
        return "-"
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, int):
        return f"{v:,}"
    return fmt(v)


def inline(v: Any) -> str:
    if isinstance(v, dict):
        return ", ".join(f"{num(k)}: {inline(x)}" for k, x in v.items()) or "none"
    if isinstance(v, (list, tuple)):
        if not v:
            return "none"
        if all(isinstance(x, (list, tuple)) and x for x in v):
            return "; ".join(
                (" ".join(num(y) for y in x[:-1]) + f": {num(x[-1])}") if len(x) > 1 else num(x[0])
                for x in v
            )
        if len(v) == 2 and isinstance(v[0], str):
            return f"{v[0]}: {num(v[1])}"
        return ", ".join(num(x) for x in v)
    return num(v)


def spread(st: dict[str, Any]) -> float:
    return (st["p75_us"] - st["p25_us"]) / st["median_us"] * 50


def backends(result: dict[str, Any]) -> list[str]:
    return [b for b in result["meta"].get("backends", []) if b in LABELS]


# -------------------------------------------------------------------------- table


def results(result: dict[str, Any]) -> str:
    """The Markdown table, aligned (one row per function, variant and B)."""
    shown = backends(result)
    head = ["function", "variant", "B", *(f"{LABELS[b]} µs" for b in shown)]
    head += ["torch/jax", "best-of", "jax GB/s", "of copy"]
    thp = "jax_thp" in shown
    if thp:
        head += ["+THP of copy"]
    head += ["jax compile ms"]
    lines = [head]
    for r in result["rows"]:
        cells = [r["fn"], r["variant"] or "", f"{r['B']:,}"]
        for b in shown:
            st = r["backends"].get(b)
            if st is None:
                cells.append("-")
            elif "error" in st:
                cells.append("fails")
            else:
                mark = " †" if st.get("contended_rounds") else ""
                cells.append(f"{fmt(st['median_us'])} ±{spread(st):.0f}%{mark}")
        jx = r["backends"].get("jax", {})
        sp, bs = r.get("speedup_vs_torch"), r.get("best_speedup_vs_torch")
        cells += [f"{sp:.2f}x" if sp else "-", f"{bs:.2f}x" if bs else "-"]
        cells.append(fmt(jx.get("GBps")))
        cells.append(f"{r['jax_frac_of_copy']:.2f}" if "jax_frac_of_copy" in r else "-")
        if thp:
            cells.append(f"{r['jax_thp_frac_of_copy']:.2f}" if "jax_thp_frac_of_copy" in r else "")
        cells.append(fmt(jx.get("compile_ms")))
        lines.append(cells)
    return _aligned(lines, right_from=2)


def _aligned(lines: list[list[str]], right_from: int) -> str:
    widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]

    def fmt(line: list[str]) -> str:
        cells = [
            c.rjust(w) if i >= right_from else c.ljust(w)
            for i, (c, w) in enumerate(zip(line, widths, strict=True))
        ]
        return "| " + " | ".join(cells) + " |"

    sep = (
        "|"
        + "|".join(
            ("-" * (w + 1) + ":") if i >= right_from else "-" * (w + 2)
            for i, w in enumerate(widths)
        )
        + "|"
    )
    return "\n".join([fmt(lines[0]), sep, *(fmt(x) for x in lines[1:])])


def _ms(st: dict[str, Any] | None) -> str:
    if not st or "median_us" not in st:
        return "fails" if st and "error" in st else "-"
    return f"{fmt(st['median_us'] / 1e3)} ±{spread(st):.0f}%"


def logits(result: dict[str, Any]) -> list[str]:
    """The logits reductions beside the reference passes and the copy of the same run:
    ms per call, the read rate of the logits and the JAX time over the exp pass."""
    rows = [r for r in result["rows"] if "logits" in r]
    if not rows:
        return [T.NOT_MEASURED]
    copy = (result.get("copy_bandwidth") or {}).get("logits") or {}
    others = [b for b in ("torch", "torch_compile", "numpy") if b in backends(result)]
    head = ["function", "variant", "B", "jax ms", "plain jit ms", "max pass ms", "exp pass ms"]
    head += ["copy ms", *(f"{LABELS[b]} ms" for b in others), "torch/jax"]
    head += ["jax GB/s read", "of copy read", "exp pass of copy read", "jax / exp pass"]
    lines = [head]
    for r in rows:
        lg = r["logits"]
        ps = lg.get("passes") or {}
        copy_ms = lg.get("copy_ms")
        cells = [r["fn"], r["variant"], f"{r['B']:,}", _ms(r["backends"].get("jax"))]
        cells += [_ms(ps.get(n)) for n in ("plain_jit", "max_pass", "exp_pass")]
        cells.append(fmt(copy_ms))
        cells += [_ms(r["backends"].get(b)) for b in others]
        sp = r.get("speedup_vs_torch")
        cells.append(f"{sp:.2f}x" if sp else "-")
        cells.append(fmt(lg.get("read_GBps")))
        for field in ("read_frac_of_copy", "exp_pass_read_frac_of_copy"):
            cells.append(f"{lg[field]:.2f}" if lg.get(field) is not None else "-")
        over = lg.get("jax_over_exp_pass")
        cells.append(f"{over:.2f}x" if over else "-")
        lines.append(cells)
    intro = T.LOGITS_INTRO.format(
        copy=fmt(copy.get("read_GBps")),
        mib=num(round(copy["bytes"] / 2**20)) if copy.get("bytes") else "-",
        target=TG.READ_FRACTION,
        inverse=f"{1 / TG.READ_FRACTION:.2f}",
        speedup=f"{TG.LOGITS_SPEEDUP:g}",
    )
    return [intro, "", _aligned(lines, right_from=2)]


def overhead(result: dict[str, Any]) -> list[str]:
    block = result.get("overhead") or {}
    rows = block.get("rows") or []
    if not rows:
        return [T.NOT_MEASURED]
    pairs = sorted({r["pairs"] for r in rows})
    naive = any("public_over_naive" in r for r in rows)
    head = ["function", "variant", "B", "public µs", "plain jit µs", "public / plain", "best loops"]
    lines = [head + (["naive formula µs", "public / naive"] if naive else [])]
    for r in rows:
        pub, pl = r["public_us"], r["plain_us"]
        line = [
            r["fn"],
            r["variant"] or "",
            f"{r['B']:,}",
            f"{fmt(pub['median_us'])} ±{spread(pub):.0f}%",
            f"{fmt(pl['median_us'])} ±{spread(pl):.0f}%",
            f"{r['public_over_plain']:.2f}x",
            f"{r['best_public_over_plain']:.2f}x",
        ]
        if naive:
            nv = r.get("naive_us")
            line += (
                [f"{fmt(nv['median_us'])} ±{spread(nv):.0f}%", f"{r['public_over_naive']:.2f}x"]
                if nv
                else ["-", "-"]
            )
        lines.append(line)
    intro = T.OVERHEAD_INTRO.format(
        pairs="-".join(str(p) for p in (pairs[0], pairs[-1]) if p) if len(pairs) > 1 else pairs[0],
        target=TG.OVERHEAD_TARGET,
    )
    return [intro, "", _aligned(lines, right_from=2)]


def dispatch(result: dict[str, Any]) -> list[str]:
    disp = {
        b: {DISPATCH_RENAMED.get(k, k): v for k, v in d.items() if k not in DISPATCH_RETIRED}
        for b, d in (result.get("dispatch_us_B8") or {}).items()
        if b in LABELS
    }
    if not disp:
        return [T.NOT_MEASURED]
    bks = list(disp)
    keys = list(dict.fromkeys(k for d in disp.values() for k in d))
    head = ["call", *(f"{LABELS[b]} µs" for b in bks)]
    out = ["| " + " | ".join(head) + " |", "|---" + "|---:" * len(bks) + "|"]
    for k in keys:
        name = k.lstrip("_").replace("_", " ") if k.startswith("_") else f"`{k}`"
        cells = [num(disp[b][k]) if isinstance(disp[b].get(k), float) else "-" for b in bks]
        out.append("| " + " | ".join([name, *cells]) + " |")
    return out


def rss(result: dict[str, Any]) -> list[str]:
    rss = result.get("rss") or []
    if not rss:
        return [T.NOT_MEASURED]
    out = [
        T.RSS_INTRO,
        "",
        "| backend | function | variant | B | extra MiB | inputs MiB | call ms |",
        "|---|---|---|---:|---:|---:|---:|",
    ]
    for m in rss:
        variant = rss_variant(m)
        if "error" in m:
            out.append(
                f"| {m.get('backend')} | `{m.get('fn')}` | {variant} | {num(m.get('B'))} "
                f"| fails: {m['error']} | | |"
            )
            continue
        out.append(
            f"| {m['backend']} | `{m['fn']}` | {variant} | {num(m['B'])} "
            f"| {num(m['extra_MiB'])} | {num(m['input_MiB'])} | {num(m['call_s'] * 1e3)} |"
        )
    return out


def rss_variant(m: dict[str, Any]) -> str:
    """The variant label of a peak-memory row (older results hold only K and n)."""
    if m.get("variant") is not None:
        return str(m["variant"])
    from bench.cases import Case

    try:
        return Case.from_json(m).variant
    except (KeyError, TypeError):
        return "?"


def limits(result: dict[str, Any]) -> list[str]:
    lim = result.get("runtime_limits") or {}
    if not lim:
        return [T.NOT_MEASURED]
    out = [
        T.LIMITS_INTRO,
        "",
        "| limit | case | JAX defaults µs | with the setting µs | defaults / setting "
        "| page faults per call (defaults, setting) |",
        "|---|---|---:|---:|---:|---:|",
    ]

    def cell(st: dict[str, Any] | None) -> str:
        return f"{fmt(st['median_us'])} ±{spread(st):.0f}%" if st else "-"

    for name, block in lim.items():
        for row in block.get("rows", []):
            d, st = row.get("default"), row.get("setting")
            ratio = row.get("default_over_setting")
            pf = (
                f"{num((d or {}).get('page_faults_per_call'))}, "
                f"{num((st or {}).get('page_faults_per_call'))}"
            )
            out.append(
                f"| {name.replace('_', ' ')} | `{row['key']}` | {cell(d)} | {cell(st)} | "
                + (f"{ratio:.2f}x" if ratio else "-")
                + f" | {pf} |"
            )
    out.append("")
    for name, block in lim.items():
        out.append(
            T.LIMITS_SETTING.format(
                name=name.replace("_", " "),
                removes=block.get("removes", "?"),
                setting=block.get("setting", "?"),
            )
        )
    return out
