"""Strings to answer ids (the costly step from strings to advantages) on a GRPO batch, side
by side in one run with the naive loop of stack rewards (math-verify ``parse`` + ``verify``
per comparison): ``python -m bench.strings`` (256 x 16 replies of about 1 KB), ``--quick``.
Claims: identical ids on the non-adversarial replies, the ratio of the times, a batch with
1 % adversarial replies within the clean one's time plus the limit (cold caches).
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import random
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from fractions import Fraction
from functools import partial
from typing import Any

import numpy as np

import zero_text
from bench import output
from bench.targets import target

# fmt: off
ADVERSARIAL = [  # towers (Math-Verify issue #65 and relatives), powers that stall SymPy
    r"\dfrac{5^{\left(5^{\left(5^{\left(5^5\right)}\right)} - 4\right)} - 5}{16}",
    r"5^{5^{5^{5^{5}}}}", r"(10^{10})!", r"\frac{1}{3^{3^{3^{3}}}}",
    r"(x+1)^{999999}", r"(x+2)^{999998}"]
WORDS = ("first we note that the total splits into two parts so each part is counted once "
         "then we check the boundary case and simplify the expression step by step").split()
#: Forms of one answer, filled with str.format: an integer n, a fraction p/q, and the
#: symbolic kinds k sqrt(m) (s = k*k*m, r = k*m), p pi / q, a x + b, the interval (a, b).
INTEGER = r"{n}|{n}.0|\frac{{{d}}}{{2}}|${n}$|{n}.|{t}/3|{n}.00|\text{{{n}}}|{n} \text{{ units}}"
FRACTION = (r"\frac{{{p}}}{{{q}}}|{p}/{q}|\dfrac{{{d}}}{{{e}}}|$\frac{{{p}}}{{{q}}}$"
            r"|\tfrac{{{p}}}{{{q}}}")
SYMBOLIC = [
    r"{k}\sqrt{{{m}}}|\sqrt{{{s}}}|\frac{{{r}}}{{\sqrt{{{m}}}}}|${k}\sqrt{{{m}}}$",
    r"\frac{{{p}\pi}}{{{q}}}|\frac{{{p}}}{{{q}}}\pi|{p}\pi/{q}|\dfrac{{{p}\pi}}{{{q}}}",
    r"{a}x+{b}|{b}+{a}x|{a}x + {b}|${a}x+{b}$",
    r"({a},{b})|({a}, {b})|\left({a}, {b}\right)|$({a},{b})$",
]
# fmt: on


@dataclass(frozen=True)
class Config:
    prompts: int = 256
    completions: int = 16
    chars: int = 1000  # length of each completion's reasoning, about
    adversarial: float = 0.01
    repeats: int = 3  # timed calls of our side (min and median reported)
    timeout: float = 1.0  # group_answers' limit
    seed: int = 0
    symbolic: float = 0.0  # share of prompts with a symbolic answer


MIXED_SYMBOLIC = 0.15
QUICK = Config(prompts=16, completions=8, chars=400, adversarial=0.02, repeats=1)


def forms(template: str, **values: int) -> list[str]:
    return [f.format(**values) for f in template.split("|")]


def integer_forms(n: int) -> list[str]:
    return forms(INTEGER, n=n, d=2 * n, t=3 * n)


def symbolic_families(rng: random.Random) -> tuple[str, list[list[str]]]:
    kind = rng.randrange(4)
    if kind == 0:
        k, m = rng.randint(2, 6), rng.choice([2, 3, 5, 6, 7])
        args = [(k, m), (k + 1, m), (k, {3: 5, 7: 10}.get(m, m + 1)), (1, m)]
        values = [dict(k=k, m=m, s=k * k * m, r=k * m) for k, m in args]
    elif kind == 1:
        p, q = rng.choice([(1, 2), (1, 3), (1, 4), (1, 6), (2, 3), (3, 4), (5, 6)])
        values = [dict(p=p, q=q) for p, q in [(p, q), (p, q + 1), (p + 1, q), (2 * p, q)]]
    else:
        a = rng.randint(1, 5) if kind == 2 else rng.randint(-5, 3)
        b = rng.randint(1, 9) if kind == 2 else a + rng.randint(1, 6)
        values = [dict(a=a, b=b) for a, b in [(a, b), (a, b + 1), (a + 1, b), (a, 2 * b + 2)]]
    families = [forms(SYMBOLIC[kind], **v) for v in values]
    return families[0][0], families


def prompt_answers(rng: random.Random, symbolic: float) -> tuple[str, list[list[str]]]:
    if rng.random() < symbolic:
        return symbolic_families(rng)
    if rng.random() < 0.8:
        n = rng.randint(2, 999)
        return str(n), [integer_forms(w) for w in (n, n + 1, n - 1, 2 * n, n + 10)]
    q = rng.choice([2, 3, 4, 5, 8, 16, 7, 12])
    v = Fraction(rng.choice([i for i in range(1, 3 * q) if math.gcd(i, q) == 1]), q)
    families = []
    for w in (v, v + 1, 1 / v, v + Fraction(1, q)):
        p, q_ = w.numerator, w.denominator
        extra = [f"{float(w):g}", f"{float(w):.4f}"] if (w * 10**4).denominator == 1 else []
        families.append(forms(FRACTION, p=p, q=q_, d=2 * p, e=2 * q_) + extra)
    return "", families


def completion(rng: random.Random, answer: str | None, chars: int) -> str:
    parts: list[str] = []
    while sum(map(len, parts)) < chars:
        a, b = rng.randint(2, 99), rng.randint(2, 99)
        parts.append(" ".join(rng.sample(WORDS, 8)) + f", so ${a} + {b} = {a + b}$.")
    text = "<think>" + " ".join(parts) + "</think> "
    if rng.random() < 0.1:  # an intermediate box: the last one counts
        text = text.replace("so $", "so $\\boxed{" + str(rng.randint(1, 9)) + "}$, $", 1)
    endings = {
        None: "So I cannot decide; the answer is unclear.",
        "<cut>": "The answer is \\boxed{\\frac{1}{",
    }  # cut off inside the box
    return text + endings.get(answer, f"The answer is \\boxed{{{answer}}}.")  # fmt: skip


def make_batch(cfg: Config) -> dict[str, Any]:
    """Clean and adversarial replies (same shape), and where the adversarial ones sit."""
    rng = random.Random(cfg.seed)
    replies = []
    for _ in range(cfg.prompts):
        _, families = prompt_answers(rng, cfg.symbolic)
        row = []
        for _ in range(cfg.completions):
            u = rng.random()
            family = families[0] if u < 0.65 else rng.choice(families[1:])
            answer = None if u < 0.03 else "<cut>" if u < 0.05 else rng.choice(family)
            row.append(completion(rng, answer, cfg.chars))
        replies.append(row)
    count = max(1, round(cfg.adversarial * cfg.prompts * cfg.completions))
    cells = sorted(rng.sample(range(cfg.prompts * cfg.completions), count))
    spots = [(c // cfg.completions, c % cfg.completions) for c in cells]
    adversarial = [list(row) for row in replies]
    for i, (b, k) in enumerate(spots):
        adversarial[b][k] = completion(rng, ADVERSARIAL[i % len(ADVERSARIAL)], cfg.chars)
    return {"clean": replies, "adversarial": adversarial, "spots": spots}


def without(rows: list[list[Any]], spots: list[tuple[int, int]]) -> list[list[Any]]:
    return [[x for k, x in enumerate(row) if (b, k) not in spots] for b, row in enumerate(rows)]


def relabel(rows: list[list[int]]) -> list[list[int]]:
    return [zero_text.first_seen_labels(np.asarray(r, dtype=np.int64)).tolist() for r in rows]


def naive_group(rows: list[list[str]]) -> list[list[int]]:
    # greedy first-seen ids, math-verify parse + verify (both ways) per comparison
    import math_verify as mv
    import math_verify.parser

    logging.getLogger("math_verify").setLevel(logging.CRITICAL)
    for name in ("parse_latex_cached", "parse_expr_cached"):  # start cold, as ours does
        getattr(getattr(math_verify.parser, name, None), "cache_clear", lambda: None)()

    def same(a: str, b: str) -> bool:
        pa, pb = mv.parse("\\boxed{" + a + "}"), mv.parse("\\boxed{" + b + "}")
        return bool(pa and pb and (mv.verify(pa, pb) or mv.verify(pb, pa)))

    out = []
    for row in rows:
        answers = [zero_text.normalize_answer(zero_text.extract_boxed(r) or "") for r in row]
        reps: list[str] = []
        labels = []  # a representative's index, or a fresh one past K for no answer
        for k, answer in enumerate(answers):
            found = (
                next((i for i, r in enumerate(reps) if same(r, answer)), None) if answer else None
            )
            if answer and found is None:
                found = len(reps)
                reps.append(answer)
            labels.append(found if answer else len(row) + k)
        out.append(relabel([labels])[0])
    return out


def cold(processes: int) -> None:  # fresh helpers (empty answer caches), started untimed
    zero_text.close_math_workers()
    zero_text.group_answers([["\\boxed{x}", "\\boxed{y}"]], equivalence="math", processes=processes)


def timed(fn: Callable[[], Any], before: Callable[[], None] = lambda: None) -> tuple[float, Any]:
    before()
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def grouping(cfg: Config) -> dict[str, Any]:
    data = make_batch(cfg)
    clean, rows, spots = data["clean"], data["adversarial"], data["spots"]
    runs = {"clean": (clean, 1), "ours": (rows, 1), "ours_2_processes": (rows, 2)}
    seconds: dict[str, list[float]] = {name: [] for name in runs}
    out: dict[str, Any] = {}
    for _ in range(cfg.repeats):
        for name, (replies, p) in runs.items():
            call = partial(zero_text.group_answers, replies, equivalence="math", processes=p)
            t, out[name] = timed(partial(call, timeout=cfg.timeout), partial(cold, p))
            seconds[name].append(t)
    naive, naive_ids = timed(partial(naive_group, without(rows, spots)))
    ids = {name: out[name].ids.tolist() for name in runs}
    med = {name: statistics.median(v) for name, v in seconds.items()}
    kept = relabel(without(ids["ours"], spots))
    return {
        "seconds": seconds, "median": med, "naive": naive, "cut_off": out["ours"].cut_off,
        "ratio": naive / med["ours"], "ratio_2_processes": naive / med["ours_2_processes"],
        "overhead": med["ours"] - med["clean"],
        "same_ids": kept == relabel(naive_ids) and ids["ours"] == ids["ours_2_processes"],
        "adversarial_change_no_other_id": kept == relabel(without(ids["clean"], spots)),
    }  # fmt: skip


def run(cfg: Config, *, quick: bool = False) -> dict[str, Any]:
    """Both paths on the numeric batch and the MATH-like one; every number of the JSON."""
    load_before = os.getloadavg()
    warm = make_batch(Config(prompts=8, completions=cfg.completions, chars=200, seed=cfg.seed + 1))
    cold(1)  # starts the fork server: a cost of the first call in a process, not of a batch
    zero_text.group_answers(warm["clean"], equivalence="math")
    naive_group(warm["clean"][:4])
    numeric = grouping(cfg)
    mixed = grouping(replace(cfg, symbolic=MIXED_SYMBOLIC, seed=cfg.seed + 2))
    return {"case": "strings", "config": asdict(cfg), "quick": quick, "numeric": numeric,
            "mixed": mixed, "replies": cfg.prompts * cfg.completions, "cores": os.cpu_count(),
            "adversarial_replies": len(make_batch(cfg)["spots"]), "load_before": load_before,
            "same_ids": numeric["same_ids"] and mixed["same_ids"],
            "load_after": os.getloadavg()}  # fmt: skip


def headline(result: dict[str, Any]) -> list[str]:
    """The bullet of the bench summary in the README."""
    same = "identical ids" if result["same_ids"] else "**different ids**"
    return [f"- Strings to answer ids (`python -m bench.strings`, {result['replies']:,} "
            f"replies): math grouping **{result['numeric']['ratio']:.1f}x** faster than the "
            f"naive math-verify loop, {same}."]  # fmt: skip


def targets(result: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The case's two targets (not measured without a full run)."""
    num = result["numeric"] if result is not None and not result.get("quick") else None
    fast = max(num["ratio"], num["ratio_2_processes"]) if num else 0.0
    within = num["overhead"] <= result["config"]["timeout"] if num and result else None
    return [
        target("math_grouping_5x_faster_than_naive", "`group_answers(equivalence=\"math\")` at "
               "least 5x faster than the naive math-verify loop, identical ids", "strings",
               {"5x": fast >= 5 if num else None, "same ids": num and num["same_ids"]},
               {"ratio": round(fast, 2)} if num else {}),
        target("adversarial_batch_within_normal_plus_limit", "a batch with 1 % adversarial "
               "replies takes at most its normal time plus the limit", "strings",
               {"within": within}, {"overhead_s": round(num["overhead"], 3)} if num else {}),
    ]  # fmt: skip


def markdown(result: dict[str, Any], results_dir: str = "results") -> str:
    """The section of bench/RESULTS.md for one result of :func:`run`."""
    cfg, load = result["config"], (result["load_before"][0], result["load_after"][0])
    lines = [
        f"`python -m bench.strings`: {cfg['prompts']} prompts x {cfg['completions']} "
        f"completions ({result['adversarial_replies']} adversarial) against the naive "
        f"math-verify loop in one run, cold caches, medians of {cfg['repeats']} interleaved "
        f"rounds, load average {load[0]:.2f} before and {load[1]:.2f} after.",
        "", "| batch | ours, 1 / 2 processes | naive loop | ratio, 1 / 2 | without adversarial |",
        "|---|---|---|---|---|",
    ]  # fmt: skip
    for name, r in (("numeric", result["numeric"]), ("mixed", result["mixed"])):
        m = r["median"]
        lines.append(f"| {name} | {m['ours']:.2f} s / {m['ours_2_processes']:.2f} s | "
                     f"{r['naive']:.2f} s | **{r['ratio']:.1f}x** / "
                     f"**{r['ratio_2_processes']:.1f}x** | {m['clean']:.2f} s |")  # fmt: skip
    num = result["numeric"]
    lines += [
        "",
        f"- Identical ids: **{'yes' if result['same_ids'] else 'NO'}**; the adversarial "
        f"replies change no other id: {'yes' if num['adversarial_change_no_other_id'] else 'NO'}"
        f", {num['cut_off']} cut off, +{num['overhead']:.2f} s (limit {cfg['timeout']:g} s).",
    ]  # fmt: skip
    lines += [f"- Target `{t['name']}`: {t['status']} {t['details']}" for t in targets(result)]
    return "\n".join([*lines, f"- Raw numbers in `{results_dir}/strings.json`."]) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.strings", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="16 x 8 completions (seconds)")
    output.add_arguments(parser, "strings.json")
    args = parser.parse_args(argv)
    out_dir = output.directory(args, quick=args.quick)
    result = run(QUICK if args.quick else Config(), quick=args.quick)
    (out_dir / "strings.json").write_text(json.dumps(result, indent=1) + "\n")
    output.finish(out_dir)
    print(markdown(result))
    return 0 if result["same_ids"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
