"""Rendering: bench/RESULTS.md, the README's bench summary and the console summary of a
run, from the results (``latest.json`` and the separately-run cases' JSON).  Numbers
come from the results and the targets (:mod:`bench.targets`), the tables from
:mod:`bench.tables`, the prose from :mod:`bench.templates`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from bench import output, separate, tables
from bench import targets as TG
from bench import templates as T
from bench.tables import LABELS, fmt, inline, num, spread

__all__ = [
    "LABELS",
    "RESULTS_MD",
    "README_MD",
    "all_targets",
    "documents",
    "markdown",
    "plot_names",
    "readme_block",
    "render_markdown",
    "summary",
    "update_readme",
    "write_documents",
]

#: A chunk counts as contended in the caveats when other processes kept at least this many
#: cores busy during it (the JSON lists every chunk above 0.3).
CONTENDED_CORES = 1.0

#: The committed document, and the README whose bench summary it shares.
RESULTS_MD = Path(__file__).resolve().parent / "RESULTS.md"
README_MD = Path(__file__).resolve().parent.parent / "README.md"


# ---------------------------------------------------------------------- this run


def _rows(n: int) -> str:
    return f"{n} row" if n == 1 else f"{n} rows"


def _contended(result: dict[str, Any]) -> list[dict[str, Any]]:
    gate = result["meta"].get("quiet_gate") or {}
    chunks = gate.get("chunks_still_contended") or []
    return [c for c in chunks if c.get("foreign_cores", 0) >= CONTENDED_CORES]


def _chunks(result: dict[str, Any]) -> int:
    fams = {r["family"] for r in result["rows"]}
    return len(fams) * int(result["meta"].get("rounds", 1))


def _shapes(rows: list[dict[str, Any]]) -> list[str]:
    from bench.cases import BENCHES, DIMS

    out = []
    for fn in dict.fromkeys(r["fn"] for r in rows):
        fr = [r for r in rows if r["fn"] == fn]
        dims = []
        for dim in DIMS:
            vals = sorted({r[dim] for r in fr if r.get(dim) is not None})
            if vals:
                dims.append(f"{dim} ∈ {{{', '.join(num(v) for v in vals)}}}")
        kinds = list(dict.fromkeys(r["kind"] for r in fr if r.get("kind")))
        if kinds:
            dims.append(", ".join(f"`{k}`" for k in kinds))
        bs = sorted({r["B"] for r in fr})
        entry = BENCHES.get(fn)
        note = f" ({entry.note})" if entry is not None and entry.note else ""
        out.append(
            f"`{fn}`: B ∈ {{{', '.join(num(b) for b in bs)}}}"
            + "".join(f", {d}" for d in dims)
            + note
        )
    return out


def _versions(meta: dict[str, Any]) -> str:
    merged: dict[str, str] = {}
    for b, vs in (meta.get("versions") or {}).items():
        if b in LABELS:
            for k, v in vs.items():
                merged.setdefault(k, str(v))
    return ", ".join(f"{k} {v}" for k, v in merged.items())


def _command(meta: dict[str, Any]) -> str:
    return str(meta.get("command", "python -m bench")).strip()


def _run_lines(result: dict[str, Any]) -> list[str]:
    meta = result["meta"]
    m = meta.get("machine") or {}
    copy = result.get("copy_bandwidth") or {}
    out = [
        T.RUN_COMMAND.format(
            command=_command(meta), quick=" (quick subset)" if meta.get("quick") else ""
        ),
        T.RUN_STARTED.format(
            started=meta.get("started", "?"),
            duration=num(meta.get("duration_s")),
            waited=num((meta.get("quiet_gate") or {}).get("waited_s", 0.0)),
        ),
        T.RUN_LOOPS.format(
            rounds=num(meta.get("rounds")),
            repeats=num(meta.get("repeats_per_round")),
            ms=num(meta.get("target_ms_per_loop")),
            backends=", ".join(f"`{LABELS[b]}`" for b in tables.backends(result)),
            x64="on" if meta.get("jax_x64") else "off",
        ),
        T.RUN_MACHINE.format(
            cpus=m.get("cpus", "?"),
            cpu=m.get("cpu", "?"),
            mem=num(m.get("mem_GiB")),
            platform=m.get("platform", "?"),
            thp=m.get("transparent_hugepage", "?"),
            poll=(
                "" if m.get("guest_halt_poll_ns") is None
                else T.RUN_POLL.format(ns=m["guest_halt_poll_ns"])
            ),
        ),
        T.RUN_VERSIONS.format(python=m.get("python", "?"), versions=_versions(meta)),
    ]
    if "loadavg_start" in meta:
        out.append(
            T.RUN_LOAD.format(
                start=", ".join(num(x) for x in meta["loadavg_start"]),
                end=", ".join(num(x) for x in meta.get("loadavg_end", [])),
            )
        )
    if copy.get("prealloc_GBps"):
        rng = copy.get("prealloc_GBps_range") or []
        out.append(
            T.RUN_COPY.format(
                what=copy.get("what", "NumPy copy"),
                gbps=num(copy["prealloc_GBps"]),
                range=f" (loops from {num(rng[0])} to {num(rng[1])})" if len(rng) == 2 else "",
                alloc=num(copy.get("alloc_GBps")),
            )
        )
    big = copy.get("logits") or {}
    if big.get("read_GBps"):
        rng = big.get("read_GBps_range") or []
        out.append(
            T.RUN_COPY_LOGITS.format(
                what=big.get("what", "NumPy copy"),
                gbps=num(big["read_GBps"]),
                range=f" (loops from {num(rng[0])} to {num(rng[1])})" if len(rng) == 2 else "",
            )
        )
    peaks = meta.get("peak_rss_MiB") or {}
    if peaks:
        out.append(
            T.RUN_PEAK_RSS.format(
                workers=", ".join(f"`{LABELS.get(b, b)}` {num(round(v))}" for b, v in peaks.items())
            )
        )
    out.append(T.RUN_SHAPES)
    out += [f"  - {s}" for s in _shapes(result["rows"])]
    return out


def _caveat_lines(result: dict[str, Any]) -> list[str]:
    meta = result["meta"]
    out = []
    c = meta.get("contention")
    if c:
        line = T.CAVEAT_DETECTOR.format(
            threshold=num(c.get("threshold_cores")),
            retried=num(c.get("chunks_retried", 0)),
            timed=num(c.get("chunks_timed", 0)),
            retries=num(c.get("retries", 0)),
            seconds=num(c.get("retry_time_s", 0.0)),
            per_chunk=num(c.get("max_retries_per_chunk")),
            budget=num(c.get("retry_budget_s")),
        )
        still = [x for x in c.get("chunks", []) if x.get("contended")]
        if not still:
            out.append(line + T.CAVEAT_DETECTOR_QUIET)
        else:
            cores = [a["foreign_cores"] for x in still for a in x["attempts"][-1:]]
            out.append(
                line
                + T.CAVEAT_DETECTOR_STILL.format(
                    n=len(still), lo=num(min(cores)), hi=num(max(cores))
                )
            )
    contended = _contended(result)
    if contended:
        rounds: dict[str, list[dict[str, Any]]] = {}
        for ch in contended:
            head, _, fam = ch["chunk"].partition(" ")
            number, _, fam = fam.partition(" ")
            rounds.setdefault(f"{head} {number}", []).append({**ch, "family": fam})
        nfam = len({r["family"] for r in result["rows"]})
        cores = [ch["foreign_cores"] for ch in contended]
        out.append(
            T.CAVEAT_CONTENDED.format(
                n=len(contended),
                chunks=_chunks(result),
                lo=num(min(cores)),
                hi=num(max(cores)),
                cpus=(meta.get("machine") or {}).get("cpus", "?"),
            )
        )
        for rnd, cs in rounds.items():
            names = ", ".join(f"`{x['family']}`" for x in cs)
            out.append(
                f"  - {rnd}: {len(cs)} of {nfam}, {'all families' if len(cs) == nfam else names}"
            )
        noisy = [
            r
            for r in result["rows"]
            if "median_us" in r["backends"].get("torch", {})
            and spread(r["backends"]["torch"]) > 100
        ]
        out.append(T.CAVEAT_SPREAD.format(n=len(noisy), rows=len(result["rows"])))
    if meta.get("quick"):
        out.append(T.CAVEAT_QUICK)
    retired = [b for b in meta.get("backends", []) if b not in LABELS]
    if retired:
        out.append(T.CAVEAT_RETIRED.format(names=", ".join(f"`{b}`" for b in retired)))
    errs = [
        f"`{LABELS[b]}` on `{r['key']}`: {st['error']}"
        for r in result["rows"]
        for b, st in r["backends"].items()
        if b in LABELS and "error" in st
    ]
    if errs:
        out.append(T.CAVEAT_FAILED.format(cells="; ".join(errs)))
    return out or [T.CAVEAT_NONE]


# ------------------------------------------------------------------------ targets


def all_targets(result: dict[str, Any], loaded: list[separate.Loaded]) -> list[dict[str, Any]]:
    """The grid's targets (recomputed from the result) and every case's, in order."""
    out = TG.evaluate(result)
    for item in loaded:
        if item.module is not None:
            out += item.call("targets", item.result, default=[]) or []
    return out


def _criteria(t: dict[str, Any]) -> str:
    crit = t.get("criteria") or {}
    if len(crit) == 1:
        return next(iter(crit.values()))
    return "; ".join(f"{k}: {v}" for k, v in crit.items())


def _targets_table(tgs: list[dict[str, Any]]) -> list[str]:
    out = [T.TARGETS_HEAD, "|---|---|---:|---|---|"]
    for t in tgs:
        status = t["status"] if t["status"] != TG.MET else "**met**"
        out.append(f"| `{t['name']}` | {t['what']} | {t['issue']} | {status} | {_criteria(t)} |")
    return out


def _target_details(tgs: list[dict[str, Any]]) -> list[str]:
    out: list[str] = []
    for t in tgs:
        out += [f"**`{t['name']}`: {t['what']}: {t['status']}.**", ""]
        crit = t.get("criteria") or {}
        if len(crit) > 1:
            out += [f"- criterion {k}: {v}" for k, v in crit.items()]
        for k, v in (t.get("details") or {}).items():
            if isinstance(v, dict) and any(isinstance(x, dict) for x in v.values()):
                out.append(f"- {k}:")
                out += [f"  - {num(kk)}: {inline(x)}" for kk, x in v.items()]
            elif _sentences(v):
                out.append(f"- {k}:")
                out += [f"  - {num(kk)}: {inline(x)}" for kk, x in v.items()]
            else:
                out.append(f"- {k}: {inline(v)}")
        out.append("")
    return out


def _sentences(v: Any) -> bool:
    """A dict whose values are sentences (listed one per line, not inline)."""
    return isinstance(v, dict) and any(isinstance(x, str) and " " in x for x in v.values())


# ----------------------------------------------------------------------- headline


def _headline(
    result: dict[str, Any], tgs: list[dict[str, Any]], *, brief: bool = False
) -> list[str]:
    """The lines a reader needs first (``brief``: without the per-row median line)."""
    by = {t["name"]: t for t in tgs}
    rows = result["rows"]
    out = []
    gm = by["jax_over_torch_geomean"]["details"]
    ahead = by["jax_ahead_of_torch"]["details"]
    if gm.get("geometric mean, medians"):
        behind = len(ahead.get("rows at or below 1x (medians)") or [])
        failed = ahead.get("rows where zero_jax failed") or []
        out.append(
            T.HEADLINE_TORCH.format(
                geomean=fmt(gm["geometric mean, medians"]),
                rows=gm["rows compared"],
                best=fmt(gm.get("geometric mean, best loops")),
                ahead=ahead["rows compared"] - behind,
                compared=ahead["rows compared"],
                failed=f"; zero_jax failed on {len(failed)}" if failed else "",
            )
        )
    med_all = [r["speedup_vs_torch"] for r in rows if r.get("speedup_vs_torch")]
    big = [r["speedup_vs_torch"] for r in rows if r["B"] >= 4096 and r.get("speedup_vs_torch")]
    if med_all and not brief:
        slow = [r for r in rows if r.get("speedup_vs_torch") and r["speedup_vs_torch"] <= 1]
        small = sum(1 for r in slow if r["B"] < 4096)
        out.append(
            T.HEADLINE_MEDIAN.format(
                all=fmt(float(np.median(med_all))),
                rows=len(med_all),
                big=fmt(float(np.median(big))) if big else "-",
                slow=len(slow),
                small=f" ({small} of them below B = 4,096)" if slow else "",
            )
        )
    ov = by["public_over_plain_jit"]
    if ov["status"] == TG.NOT_MEASURED:
        out.append(T.HEADLINE_NO_OVERHEAD)
    else:
        d = ov["details"]
        key, worst = d["highest public / plain (medians of pair ratios)"]
        out.append(
            T.HEADLINE_OVERHEAD.format(
                rows=d["rows compared"],
                geomean=f"{d['geometric mean public / plain']:.2f}",
                worst=f"{worst:.2f}",
                key=key,
                above=_rows(len(d["rows above the target"])),
                target=TG.OVERHEAD_TARGET,
            )
        )
    out += _logits_headline(result, by)
    contended = _contended(result)
    if contended:
        cores = [c["foreign_cores"] for c in contended]
        out.append(
            T.HEADLINE_CONTENDED.format(
                n=len(contended),
                chunks=_chunks(result),
                lo=num(min(cores)),
                hi=num(max(cores)),
                cpus=(result["meta"].get("machine") or {}).get("cpus", "?"),
            )
        )
    c = result["meta"].get("contention") or {}
    if c.get("chunks_still_contended"):
        out.append(
            T.HEADLINE_STILL_CONTENDED.format(
                n=c["chunks_still_contended"], chunks=c.get("chunks_timed", "?")
            )
        )
    return out


def _span(xs: list[float | None], digits: str = ".2f") -> str:
    """``lo-hi`` of the measured values (one value when they agree), ``-`` without any."""
    vals = [f"{x:{digits}}" for x in sorted(x for x in xs if x is not None)]
    if not vals:
        return "-"
    return vals[0] if vals[0] == vals[-1] else f"{vals[0]}-{vals[-1]}"


def _logits_headline(result: dict[str, Any], by: dict[str, dict[str, Any]]) -> list[str]:
    """One line on the logits reductions at the issue's shape (none without such rows)."""
    rows = [r for r in TG.logits_rows(result) if r["backends"].get("jax", {}).get("median_us")]
    if not rows:
        return []
    lg = [r.get("logits") or {} for r in rows]
    compiled = _span([r.get("speedup_vs_torch_compile") for r in rows], ".1f")
    held = sum(1 for r in rows if TG.read_rate_held(r))
    return [
        T.HEADLINE_LOGITS.format(
            shape="["
            + ", ".join(f"{d:,}" for d in (rows[0]["B"], rows[0]["T"], rows[0]["V"]))
            + "]",
            torch=_span([r.get("speedup_vs_torch") for r in rows], ".1f"),
            speedup=f"{TG.LOGITS_SPEEDUP:g}",
            compiled="" if compiled == "-" else T.HEADLINE_LOGITS_COMPILE.format(span=compiled),
            read=_span([x.get("read_frac_of_copy") for x in lg]),
            fraction=TG.READ_FRACTION,
            held=held,
            rows=len(rows),
            exp=_span([x.get("exp_pass_read_frac_of_copy") for x in lg]),
            over=_span([x.get("jax_over_exp_pass") for x in lg]),
        )
    ]


def _targets_line(tgs: list[dict[str, Any]]) -> str:
    met = [t for t in tgs if t["status"] == TG.MET]
    rest = []
    for status in (TG.NOT_MET, TG.NOT_MEASURED):
        names = [f"`{t['name']}`" for t in tgs if t["status"] == status]
        if names:
            rest.append(f"{len(names)} {status} ({', '.join(names)})")
    return T.HEADLINE_TARGETS.format(
        met=len(met), total=len(tgs), rest=("; " + "; ".join(rest)) if rest else ""
    )


def _case_headlines(loaded: list[separate.Loaded]) -> list[str]:
    out = []
    for item in loaded:
        if item.ran:
            out += item.call("headline", item.result, default=[]) or []
        else:
            out.append(f"- {item.case.title}: not run (`{item.case.command}`).")
    return out


# ------------------------------------------------------------------------ document


def plot_names(result: dict[str, Any]) -> list[str]:
    """The PNGs :func:`bench.plots.plots` draws for ``result`` (decided by its data)."""
    along_b = [r for r in result["rows"] if "logits" not in r]
    names = ["throughput.png", "ratio.png"] if along_b else []
    if any(r["backends"].get("jax", {}).get("median_us") for r in result["rows"] if "logits" in r):
        names.append("logits.png")
    if (result.get("overhead") or {}).get("rows"):
        names.append("overhead.png")
    return names


def _plots(result: dict[str, Any], rd: str) -> list[str]:
    names = plot_names(result)
    out = [f"- [`{rd}/{n}`]({rd}/{n}): {T.PLOTS[n]}" for n in names]
    for n in names:
        out += ["", f"![{n[:-4]}]({rd}/{n})"]
    return out


def _separate_sections(loaded: list[separate.Loaded], rd: str) -> list[str]:
    out: list[str] = []
    for item in loaded:
        out += [f"## {item.case.title}", ""]
        if item.ran:
            out.append(str(item.call("markdown", item.result, rd)).strip("\n"))
        else:
            out.append(
                T.NOT_RUN.format(
                    command=item.case.command,
                    summary=item.case.summary,
                    file=f"{rd}/{item.case.file}",
                )
            )
        out.append("")
    return out


def _sources(loaded: list[separate.Loaded], rd: str) -> str:
    files = [f"`{rd}/latest.json`"] + [f"`{rd}/{i.case.file}`" for i in loaded if i.result]
    return files[0] if len(files) == 1 else ", ".join(files[:-1]) + " and " + files[-1]


def markdown(
    result: dict[str, Any],
    loaded: list[separate.Loaded] | None = None,
    *,
    results_dir: str = "results",
) -> str:
    """The results document: every number from ``result`` (latest.json) and the
    separately-run cases in ``loaded``; ``results_dir``: the JSON / PNG directory,
    relative to the document."""
    loaded = loaded if loaded is not None else []
    rd = results_dir.rstrip("/") or "."
    meta = result["meta"]
    tgs = all_targets(result, loaded)
    text = T.DOCUMENT.substitute(
        sources=_sources(loaded, rd),
        command=_command(meta),
        started=meta.get("started", "?"),
        quick_note=", quick subset" if meta.get("quick") else "",
        headline="\n".join([*_headline(result, tgs), *_case_headlines(loaded), _targets_line(tgs)]),
        targets="\n".join(_targets_table(tgs)),
        method=T.METHOD,
        commands=T.COMMANDS,
        run="\n".join(_run_lines(result)),
        caveats="\n".join(_caveat_lines(result)),
        table=tables.results(result),
        logits="\n".join(tables.logits(result)),
        overhead="\n".join(tables.overhead(result)),
        dispatch="\n".join(tables.dispatch(result)),
        limits="\n".join(tables.limits(result)),
        rss="\n".join(tables.rss(result)),
        plots="\n".join(_plots(result, rd)),
        separate="\n".join(_separate_sections(loaded, rd)).strip("\n"),
        details="\n".join(_target_details(tgs)).strip("\n"),
    )
    while "\n\n\n" in text:
        text = text.replace("\n\n\n", "\n\n")
    return text.rstrip("\n") + "\n"


def render_markdown(json_path: Path, out: Path = RESULTS_MD) -> str:
    """:func:`markdown` of ``json_path`` and the separately-run cases beside it, with
    links relative to ``out``'s directory."""
    result = json.loads(json_path.read_text())
    loaded = separate.load(json_path.parent)
    rel = os.path.relpath(json_path.resolve().parent, out.resolve().parent)
    return markdown(result, loaded, results_dir=Path(rel).as_posix())


# -------------------------------------------------------------------------- README


def readme_block(result: dict[str, Any], loaded: list[separate.Loaded]) -> str:
    """The README's bench summary: the headline numbers of the committed results and
    every target they leave unmet or unmeasured."""
    tgs = all_targets(result, loaded)
    meta = result["meta"]
    c = meta.get("contention") or {}
    contention = (
        f"{num(c.get('chunks_still_contended', 0))} of {num(c.get('chunks_timed', 0))} timed "
        "chunks contended"
        if c
        else "contention not recorded"
    )
    lines = [*_headline(result, tgs, brief=True), *_case_headlines(loaded)]
    unmet = [f"`{t['name']}` ({t['what']})" for t in tgs if t["status"] == TG.NOT_MET]
    unmeasured = [f"`{t['name']}`" for t in tgs if t["status"] == TG.NOT_MEASURED]
    if unmet:
        lines.append(T.README_TARGETS.format(names="; ".join(unmet)))
    if unmeasured:
        lines.append(T.README_NOT_MEASURED.format(names=", ".join(unmeasured)))
    if not unmet and not unmeasured:
        lines.append(T.README_ALL_MET)
    return T.README.substitute(
        begin=T.README_BEGIN,
        end=T.README_END,
        command=_command(meta),
        started=meta.get("started", "?"),
        contention=contention,
        lines="\n".join(lines),
    )


def update_readme(text: str, block: str) -> str:
    """``text`` (the README) with its bench summary replaced by ``block``."""
    start, end = text.find(T.README_BEGIN), text.find(T.README_END)
    if start < 0 or end < start:
        raise ValueError("README.md has no bench summary markers in its Benchmarks section")
    return text[:start] + block + text[end + len(T.README_END) :]


def documents(json_path: Path, doc: Path | None = None) -> dict[Path, str]:
    """The files generated from ``json_path`` (and the cases beside it), with their text:
    the document ``doc`` (default: bench/RESULTS.md for the committed results, else
    RESULTS.md beside the JSON) and, when that is the committed document, the README
    with its bench summary regenerated."""
    committed = output.is_committed(json_path.parent)
    if doc is None:
        doc = RESULTS_MD if committed else json_path.parent / "RESULTS.md"
    files = {doc: render_markdown(json_path, doc)}
    if committed and doc.resolve() == RESULTS_MD:
        block = readme_block(json.loads(json_path.read_text()), separate.load(json_path.parent))
        files[README_MD] = update_readme(README_MD.read_text(encoding="utf-8"), block)
    return files


def write_documents(results: Path) -> list[Path]:
    """Write :func:`documents` of ``results/latest.json`` (nothing without one)."""
    latest = results / "latest.json"
    if not latest.exists():
        return []
    files = documents(latest)
    for path, text in files.items():
        path.write_text(text, encoding="utf-8")
    return list(files)


# ------------------------------------------------------------------------- console


def summary(result: dict[str, Any], tgs: list[dict[str, Any]] | None = None) -> str:
    """Copy bandwidth, failures, dispatch, peak memory and the targets, as text."""
    copy = result["copy_bandwidth"]
    out = [
        f"copy bandwidth (NumPy, 64 MiB, read + write): {fmt(copy['prealloc_GBps'])} GB/s "
        f"into a preallocated buffer, {fmt(copy['alloc_GBps'])} GB/s allocating",
    ]
    errs = [
        (r["key"], b, st["error"])
        for r in result["rows"]
        for b, st in r["backends"].items()
        if "error" in st
    ]
    for key, b, e in errs[:12]:
        out.append(f"{LABELS.get(b, b)} fails on {key}: {e}")
    out.append("dispatch overhead per eager call at B=8 (µs):")
    for b, d in result["dispatch_us_B8"].items():
        parts = [f"{k} {fmt(v)}" for k, v in d.items() if isinstance(v, float)]
        out.append(f"  {LABELS.get(b, b)}: " + ", ".join(parts))
    for r in (result.get("overhead") or {}).get("rows", []):
        out.append(f"overhead {r['key']}: public / plain jit {r['public_over_plain']:.2f}x")
    for r in result["rows"]:
        lg = r.get("logits") or {}
        if lg.get("read_GBps"):
            ps = lg.get("passes") or {}
            passes = ", ".join(f"{k} {fmt(v['median_us'] / 1e3)} ms" for k, v in ps.items())
            out.append(
                f"logits {r['key']}: jax {fmt(r['backends']['jax']['median_us'] / 1e3)} ms, "
                f"read {fmt(lg['read_GBps'])} GB/s = {fmt(lg.get('read_frac_of_copy'))} of the "
                f"copy's; {passes}"
            )
    for m in result.get("rss") or []:
        if "error" in m:
            out.append(f"peak memory: {m}")
            continue
        out.append(
            f"peak memory {m['backend']:<6} {m['fn']:<15} {tables.rss_variant(m):<22} "
            f"B={m['B']:<6} extra {fmt(m['extra_MiB'])} MiB "
            f"(inputs {fmt(m['input_MiB'])} MiB), call {fmt(m['call_s'] * 1e3)} ms"
        )
    for t in tgs if tgs is not None else TG.evaluate(result):
        crit = ", ".join(f"{k}: {v}" for k, v in t["criteria"].items())
        out.append(f"target {t['name']} ({t['what']}): {t['status'].upper()} [{crit}]")
    return "\n".join(out)
