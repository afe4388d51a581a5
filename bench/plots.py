"""The grid's plots, small multiples so that every panel stays readable:

- ``throughput.png``: rows per second against B, one panel per function family
  (function and variant), one line per backend (at most six), one legend for all;
- ``ratio.png``: torch eager time / JAX time against B, one panel per function, one
  line per variant (at most six), a legend per panel below its curves;
- ``logits.png`` (when the run has logits rows): the logits reductions, which run at
  one shape rather than along B, as ms per call of every backend beside the copy of the
  same bytes and the reference passes (:mod:`bench.logits`), one panel per row, the
  targets dotted;
- ``overhead.png`` (when the run has the overhead report): public call / plain jit per
  row, one bar each, the target dashed.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from bench import render, tables
from bench import targets as TG

__all__ = ["COLORS", "plots"]

COLORS = {
    "jax": "C0",
    "jax_sync": "C4",
    "jax_thp": "C9",
    "torch": "C3",
    "torch_compile": "C1",
    "numpy": "C2",
}
_MARKERS = ["o", "s", "^", "v", "D", "x"]


def _order(result: dict[str, Any]) -> list[str]:
    from bench import cases as C

    fns = list(dict.fromkeys(r["fn"] for r in result["rows"]))
    known = [f for f in C.FUNCTIONS if f in fns]
    return known + [f for f in fns if f not in known]


def _log2_axis(ax: Any) -> None:
    from matplotlib.ticker import FuncFormatter, NullFormatter

    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.grid(alpha=0.3, which="both")
    ax.tick_params(labelsize=8)
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())


def _along_b(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows drawn against B (all but the logits reductions, in ``logits.png``)."""
    return [r for r in result["rows"] if "logits" not in r]


def throughput(result: dict[str, Any], path: Path) -> Path:
    import matplotlib.pyplot as plt

    rows = _along_b(result)
    backends = [b for b in result["meta"].get("backends", []) if b in COLORS]
    fams = [
        fam
        for fn in _order(result)
        for fam in dict.fromkeys(r["family"] for r in rows if r["fn"] == fn)
    ]
    ncol = 6 if len(fams) > 12 else 4
    nrow = math.ceil(len(fams) / ncol)
    height = 2.6 * nrow + 0.8  # inches: the panels and a header for the title and legend
    fig, axes = plt.subplots(nrow, ncol, figsize=(3.1 * ncol, height), squeeze=False)
    for ax, fam in zip(axes.flat, fams, strict=False):
        fr = [r for r in rows if r["family"] == fam]
        for b in backends:
            pts = [
                (r["B"], r["B"] / r["backends"][b]["median_us"] * 1e6)
                for r in fr
                if "median_us" in r["backends"].get(b, {})
            ]
            if pts:
                xs, ys = zip(*pts, strict=True)
                ax.plot(xs, ys, color=COLORS[b], marker="o", ms=3, lw=1.2, label=tables.LABELS[b])
        _log2_axis(ax)
        # a long family (function and variant) on two lines, so that titles do not overlap
        title = fam if len(fam) <= 34 else fam.replace("[", "\n[", 1)
        ax.set_title(title, fontsize=9 if title == fam else 8)
    for ax in list(axes.flat)[len(fams) :]:
        ax.axis("off")
    for ax in axes[:, 0]:
        ax.set_ylabel("rows / s", fontsize=8)
    for ax in axes[-1, :]:
        ax.set_xlabel("B", fontsize=8)
    handles = [
        plt.Line2D([], [], color=COLORS[b], marker="o", ms=4, lw=1.5, label=tables.LABELS[b])
        for b in backends
    ]
    fig.suptitle(
        "Throughput against batch size, per function and variant (each backend in its own "
        "process; higher is faster)",
        fontsize=11,
        y=1 - 0.12 / height,
    )
    fig.legend(
        handles=handles,
        loc="upper center",
        ncol=len(handles),
        fontsize=10,
        frameon=False,
        bbox_to_anchor=(0.5, 1 - 0.3 / height),
    )
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.7 / height))
    fig.savefig(path, dpi=60, pil_kwargs={"optimize": True})
    plt.close(fig)
    return path


def ratio(result: dict[str, Any], path: Path) -> Path:
    import matplotlib.pyplot as plt
    from matplotlib.ticker import LogLocator

    rows = _along_b(result)
    fns = [
        f for f in _order(result) if any(r["fn"] == f and r.get("speedup_vs_torch") for r in rows)
    ]
    ncol = 5 if len(fns) > 8 else 4
    nrow = max(1, math.ceil(len(fns) / ncol))
    fig, axes = plt.subplots(nrow, ncol, figsize=(3.4 * ncol, 3.2 * nrow + 0.6), squeeze=False)
    for ax, fn in zip(axes.flat, fns, strict=False):
        fams = list(dict.fromkeys(r["family"] for r in rows if r["fn"] == fn))
        for i, fam in enumerate(fams):
            pts = [(r["B"], r["speedup_vs_torch"]) for r in rows if r["family"] == fam]
            pts = [p for p in pts if p[1]]
            if not pts:
                continue
            xs, ys = zip(*pts, strict=True)
            label = fam[len(fn) + 1 : -1] if "[" in fam else fn
            ax.plot(xs, ys, marker=_MARKERS[i % 6], ms=4, lw=1.2, color=f"C{i}", label=label)
        ax.axhline(1, color="k", lw=1)
        ax.axhline(TG.GEOMEAN_TARGET, color="k", lw=0.8, ls="--")
        _log2_axis(ax)
        lo, hi = ax.get_ylim()
        ax.set_ylim(min(lo, 0.8), max(hi, 1.25 * TG.GEOMEAN_TARGET))
        if ax.get_ylim()[1] / ax.get_ylim()[0] < 200:  # few decades: label 1, 2, 5, 10, ...
            ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.set_title(fn, fontsize=10)
        if len(fams) > 1:
            ax.legend(
                fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=2, frameon=False
            )
    for ax in list(axes.flat)[len(fns) :]:
        ax.axis("off")
    for ax in axes[:, 0]:
        ax.set_ylabel("torch time / jax time", fontsize=8)
    fig.suptitle(
        "zero_jax speed-up over the torch twin (eager) against B (> 1: JAX faster; solid: 1x, "
        "dashed: 5x)",
        fontsize=11,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=72, pil_kwargs={"optimize": True})
    plt.close(fig)
    return path


#: The bars of a logits panel: (label, color), top to bottom.
_LOGITS_BARS = (
    ("copy", "0.55"),
    ("max pass", "0.75"),
    ("exp pass", "C9"),
    ("jax", COLORS["jax"]),
    ("plain jit", "C4"),
    ("torch.compile", COLORS["torch_compile"]),
    ("torch", COLORS["torch"]),
    ("numpy", COLORS["numpy"]),
)


def _logits_bars(r: dict[str, Any]) -> list[tuple[str, float | None]]:
    lg = r["logits"]
    ps = lg.get("passes") or {}

    def ms(st: dict[str, Any] | None) -> float | None:
        return st["median_us"] / 1e3 if st and "median_us" in st else None

    b = r["backends"]
    values = {
        "copy": lg.get("copy_ms"),
        "max pass": ms(ps.get("max_pass")),
        "exp pass": ms(ps.get("exp_pass")),
        "jax": ms(b.get("jax")),
        "plain jit": ms(ps.get("plain_jit")),
        "torch.compile": ms(b.get("torch_compile")),
        "torch": ms(b.get("torch")),
        "numpy": ms(b.get("numpy")),
    }
    return [(label, values[label]) for label, _ in _LOGITS_BARS]


def logits(result: dict[str, Any], path: Path) -> Path:
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    rows = [r for r in result["rows"] if "logits" in r]
    ncol = 2 if len(rows) > 1 else 1
    nrow = math.ceil(len(rows) / ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(6.4 * ncol, 2.9 * nrow + 0.7), squeeze=False)
    colors = dict(_LOGITS_BARS)
    for ax, r in zip(axes.flat, rows, strict=False):
        bars = _logits_bars(r)
        y = list(range(len(bars)))
        vals = [v or 0.0 for _, v in bars]
        ax.barh(y, vals, color=[colors[label] for label, _ in bars])
        ax.set_yticks(y, [label for label, _ in bars], fontsize=8)
        ax.invert_yaxis()
        ax.set_xscale("log")
        shown = [v for v in vals if v > 0]
        if shown:
            ax.set_xlim(min(shown) / 1.6, max(shown) * 4)
        for yi, (_, v) in zip(y, bars, strict=True):
            text = f" {tables.fmt(v)} ms" if v else " not run"
            ax.text(v or min(shown or [1.0]) / 1.5, yi, text, va="center", fontsize=7)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        copy_ms = r["logits"].get("copy_ms")
        torch_ms = (r["backends"].get("torch") or {}).get("median_us")
        if copy_ms:
            ax.axvline(copy_ms / TG.READ_FRACTION, color="k", lw=0.9, ls=":")
        if torch_ms:
            ax.axvline(torch_ms / 1e3 / TG.LOGITS_SPEEDUP, color="C3", lw=0.9, ls=":")
        ax.set_title(f"{r['fn']} [{r['variant']}], B = {r['B']:,}", fontsize=9)
        ax.grid(alpha=0.3, axis="x", which="both")
        ax.tick_params(axis="x", labelsize=8)
    for ax in list(axes.flat)[len(rows) :]:
        ax.axis("off")
    for ax in axes[-1, :]:
        ax.set_xlabel("ms per call (log scale; shorter is faster)", fontsize=8)
    fig.suptitle(
        "Logits reductions against the copy of the same bytes and one pass over them "
        f"(dotted black: copy time / {TG.READ_FRACTION:g}; dotted red: torch / "
        f"{TG.LOGITS_SPEEDUP:g})",
        fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=72, pil_kwargs={"optimize": True})
    plt.close(fig)
    return path


def overhead(result: dict[str, Any], path: Path) -> Path:
    import matplotlib.pyplot as plt

    rows = (result.get("overhead") or {}).get("rows") or []
    fig, ax = plt.subplots(figsize=(8, 0.32 * len(rows) + 1.4))
    y = list(range(len(rows)))
    vals = [r["public_over_plain"] for r in rows]
    colors = ["C3" if v > TG.OVERHEAD_TARGET else "C0" for v in vals]
    ax.barh(y, vals, color=colors)
    ax.set_yticks(y, [r["key"] for r in rows], fontsize=8)
    ax.invert_yaxis()
    ax.axvline(1, color="k", lw=1)
    ax.axvline(TG.OVERHEAD_TARGET, color="k", lw=1, ls="--")
    naive = [(yi, r["public_over_naive"]) for yi, r in zip(y, rows, strict=True)
             if "public_over_naive" in r]  # fmt: skip
    right = dict(naive)
    for yi, v in zip(y, vals, strict=True):  # the label right of the bar and of the cross
        ax.text(max(v, right.get(yi, 0)), yi, f"  {v:.2f}x", va="center", fontsize=8)
    if naive:
        ax.plot([v for _, v in naive], [yi for yi, _ in naive], "kx", ms=5)
    ax.set_xlim(0, max([*vals, *(v for _, v in naive), TG.OVERHEAD_TARGET]) * 1.2)
    ax.set_xlabel(
        "bars: public call / plain jax.jit of the same math (median of per-round ratios)"
        + ("\ncrosses: public call / the naive formula (not a target)" if naive else "")
    )
    ax.set_title(f"Overhead report (dashed: the target, {TG.OVERHEAD_TARGET}x)", fontsize=10)
    ax.grid(alpha=0.3, axis="x")
    fig.tight_layout()
    fig.savefig(path, dpi=72, pil_kwargs={"optimize": True})
    plt.close(fig)
    return path


def plots(result: dict[str, Any], out: Path) -> list[Path]:
    """Draw every plot ``result`` has data for (:func:`bench.render.plot_names`) into
    ``out``; returns the paths."""
    import matplotlib

    matplotlib.use("Agg")
    draw = {
        "throughput.png": throughput,
        "ratio.png": ratio,
        "logits.png": logits,
        "overhead.png": overhead,
    }
    return [draw[name](result, out / name) for name in render.plot_names(result)]
