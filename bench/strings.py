"""Strings to advantages: one GRPO batch of raw completions through ``zero_text`` and
``zero_jax``, side by side with the path stack reward functions run today (math-verify
``parse`` + ``verify`` for every comparison, or for every completion against a label).

    python -m bench.strings                 # 256 prompts x 16 completions of about 1 KB
    python -m bench.strings --quick         # 16 x 8 (seconds; tests, CI)
    python -m bench.strings --update-committed   # the committed full result

The batch: numeric final answers (integers, fractions) boxed in the mixed forms models
write (``3``, ``3.0``, ``\\frac{6}{2}``, ``$3$``, ``6/2``, ``3.``, ``3 \\text{ units}``,
...), right or wrong, some replies with no or an unclosed box, and 1 % adversarial replies
(Math-Verify issue #65's tower and its relatives), each after a chain of reasoning of about
1 KB. A second, MATH-like batch (15 % of the prompts with radicals, multiples of pi, linear
expressions or intervals, which math-verify itself must read) is timed for the math
grouping only. Timed on our side: extraction,
grouping (exact and math), votes (``consensus``), rewards (``pseudo_rewards``,
``solver_rewards``, frozen-label rewards) and advantages (``group_advantages``). Timed on
the naive side, on the same batch without the adversarial replies (they would stop it):
a grouping loop that parses per comparison and verifies against each earlier
representative, and a per-completion parse + verify against the label. Both groupings
must give identical ids on the non-adversarial replies; the ratio of the times is the
claim. Writes ``strings.json`` to ``--out DIR`` (default: a directory in the temporary
directory, never a tracked file; ``--update-committed`` writes bench/results/, see
:mod:`bench.output`); :func:`markdown` renders the report's section from it.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from fractions import Fraction
from typing import Any

import numpy as np

import zero_text
from bench import output

#: The answers that make math-verify run for ever (issue #65 and relatives).
ADVERSARIAL = [
    r"\dfrac{5^{\left(5^{\left(5^{\left(5^5\right)}\right)} - 4\right)} - 5}{16}",
    r"5^{5^{5^{5^{5}}}}",
    r"9^{9^{9^{9}}}",
    r"(10^{10})!",
    r"2^{10^{100}} + 1",
    r"\frac{1}{3^{3^{3^{3}}}}",
]

WORDS = (
    "first we note that the total splits into two parts so each part is counted once "
    "then we check the boundary case and simplify the expression step by step which "
    "gives the value below after cancelling the common factor in both terms"
).split()


@dataclass(frozen=True)
class Config:
    prompts: int = 256
    completions: int = 16
    chars: int = 1000  # length of each completion's reasoning, about
    adversarial: float = 0.01
    repeats: int = 3  # repeats of our side (median reported)
    timeout: float = 1.0  # group_answers' per-step limit
    seed: int = 0
    symbolic: float = 0.0  # share of prompts with a symbolic answer (radicals, pi, x, intervals)


#: Share of symbolic answers in the second, MATH-like batch (math grouping only).
MIXED_SYMBOLIC = 0.15

QUICK = Config(prompts=16, completions=8, chars=400, adversarial=0.02, repeats=1)


# --------------------------------------------------------------------------- the batch


def integer_forms(n: int) -> list[str]:
    k = 2 if n % 3 else 3
    return [
        str(n), f"{n}.0", f"\\frac{{{2 * n}}}{{2}}", f"${n}$", f"{n}.",
        f"\\dfrac{{{k * n}}}{{{k}}}", f"{3 * n}/3", f"{n}.00", f"\\text{{{n}}}",
        f"{n} \\text{{ units}}", f"$${n}$$",
    ]


def fraction_forms(value: Fraction) -> list[str]:
    p, q = value.numerator, value.denominator
    forms = [f"\\frac{{{p}}}{{{q}}}", f"{p}/{q}", f"\\dfrac{{{2 * p}}}{{{2 * q}}}",
             f"$\\frac{{{p}}}{{{q}}}$", f"\\tfrac{{{p}}}{{{q}}}"]
    decimal = float(value)
    if (value * 10**4).denominator == 1:  # a terminating decimal with at most 4 places
        forms += [f"{decimal:g}", f"{decimal:.4f}"]
    return forms


def radical_forms(k: int, m: int) -> list[str]:
    """Forms of k * sqrt(m) (m square-free)."""
    head = "" if k == 1 else str(k)
    return [f"{head}\\sqrt{{{m}}}", f"\\sqrt{{{k * k * m}}}", f"{head} \\sqrt{{{m}}}".strip(),
            f"\\frac{{{k * m}}}{{\\sqrt{{{m}}}}}", f"${head}\\sqrt{{{m}}}$"]


def pi_forms(p: int, q: int) -> list[str]:
    """Forms of p * pi / q."""
    head = "" if p == 1 else str(p)
    return [f"\\frac{{{head}\\pi}}{{{q}}}", f"\\frac{{{p}}}{{{q}}}\\pi",
            f"\\dfrac{{{head}\\pi}}{{{q}}}", f"{head}\\pi/{q}"]


def linear_forms(a: int, b: int) -> list[str]:
    """Forms of a x + b."""
    ax = "x" if a == 1 else f"{a}x"
    return [f"{ax}+{b}", f"{b}+{ax}", f"{ax} + {b}", f"${ax}+{b}$"]


def interval_forms(a: int, b: int) -> list[str]:
    return [f"({a},{b})", f"({a}, {b})", f"\\left({a}, {b}\\right)", f"$({a},{b})$"]


def symbolic_families(rng: random.Random) -> tuple[str, list[list[str]]]:
    """A symbolic label and its answer families: the correct forms, then wrong answers of
    the same kind (the mistakes a solver makes), each in several forms."""
    kind = rng.randrange(4)
    if kind == 0:
        k, m = rng.randint(2, 6), rng.choice([2, 3, 5, 6, 7])
        wrong = [(k + 1, m), (k, m + 1 if m + 1 not in (4, 8, 9) else m + 2), (1, m)]
        return f"{k}\\sqrt{{{m}}}", [radical_forms(k, m)] + [radical_forms(*w) for w in wrong]
    if kind == 1:
        p, q = rng.choice([(1, 2), (1, 3), (1, 4), (1, 6), (2, 3), (3, 4), (5, 6)])
        wrong = [(p, q + 1), (p + 1, q), (2 * p, q)]
        label = pi_forms(p, q)[0]
        return label, [pi_forms(p, q)] + [pi_forms(*w) for w in wrong]
    if kind == 2:
        a, b = rng.randint(1, 5), rng.randint(1, 9)
        wrong = [(a, b + 1), (a + 1, b), (a, 2 * b)]
        return linear_forms(a, b)[0], [linear_forms(a, b)] + [linear_forms(*w) for w in wrong]
    a = rng.randint(-5, 3)
    b = a + rng.randint(1, 6)
    wrong = [(a, b + 1), (a - 1, b), (b, b + 2)]
    return f"({a},{b})", [interval_forms(a, b)] + [interval_forms(*w) for w in wrong]


def reasoning(rng: random.Random, chars: int) -> str:
    out: list[str] = []
    size = 0
    while size < chars:
        words = rng.sample(WORDS, 8)
        a, b = rng.randint(2, 99), rng.randint(2, 99)
        sentence = " ".join(words) + f", so ${a} + {b} = {a + b}$ and {a} x {b} = {a * b}."
        out.append(sentence)
        size += len(sentence) + 1
    return " ".join(out)


def prompt_answers(rng: random.Random, symbolic: float) -> tuple[str, list[list[str]]]:
    """The label of one prompt and answer families: [correct forms, wrong forms ...].

    A numeric answer (an integer for 80 % of them, else a fraction) unless the prompt is
    one of the ``symbolic`` share."""
    if rng.random() < symbolic:
        return symbolic_families(rng)
    if rng.random() < 0.8:
        n = rng.randint(2, 999)
        wrong = [n + 1, n - 1, 2 * n, n + 10]
        return str(n), [integer_forms(n)] + [integer_forms(w) for w in wrong]
    q = rng.choice([2, 3, 4, 5, 8, 16, 7, 12])
    p = rng.choice([i for i in range(1, 3 * q) if math.gcd(i, q) == 1])
    value = Fraction(p, q)
    wrong = [value + 1, 1 / value, Fraction(p + 1, q)]
    label = f"\\frac{{{p}}}{{{q}}}"
    return label, [fraction_forms(value)] + [fraction_forms(w) for w in wrong]


def completion(rng: random.Random, answer: str | None, chars: int) -> str:
    text = "<think>" + reasoning(rng, chars) + "</think> "
    if rng.random() < 0.1:  # an intermediate box: the last one counts
        text = text.replace("so $", "so $\\boxed{" + str(rng.randint(1, 9)) + "}$, $", 1)
    if answer is None:
        return text + "So I cannot decide; the answer is unclear."
    if answer == "<cut>":  # generation cut off inside the box
        return text + "The answer is \\boxed{\\frac{1}{"
    return text + f"The answer is \\boxed{{{answer}}}."


def make_batch(cfg: Config) -> dict[str, Any]:
    """Clean and adversarial replies (same shape), labels, and where the adversarial sit."""
    rng = random.Random(cfg.seed)
    replies: list[list[str]] = []
    labels: list[str] = []
    for _ in range(cfg.prompts):
        label, families = prompt_answers(rng, cfg.symbolic)
        labels.append(label)
        row = []
        for _ in range(cfg.completions):
            u = rng.random()
            if u < 0.03:
                answer: str | None = None
            elif u < 0.05:
                answer = "<cut>"
            elif u < 0.65:
                answer = rng.choice(families[0])
            else:
                answer = rng.choice(rng.choice(families[1:]))
            row.append(completion(rng, answer, cfg.chars))
        replies.append(row)
    count = max(1, round(cfg.adversarial * cfg.prompts * cfg.completions))
    cells = rng.sample(range(cfg.prompts * cfg.completions), count)
    spots = sorted((c // cfg.completions, c % cfg.completions) for c in cells)
    adversarial = [list(row) for row in replies]
    for i, (b, k) in enumerate(spots):
        adversarial[b][k] = completion(rng, ADVERSARIAL[i % len(ADVERSARIAL)], cfg.chars)
    return {"clean": replies, "adversarial": adversarial, "labels": labels, "spots": spots}


# --------------------------------------------------------------------------- naive path


def _math_verify() -> tuple[Callable[..., Any], Callable[..., Any]]:
    import math_verify

    logging.getLogger("math_verify").setLevel(logging.CRITICAL)
    return math_verify.parse, math_verify.verify


def naive_group(rows: list[list[str]]) -> list[list[int]]:
    """Greedy first-seen ids, math-verify parse + verify (either direction) per comparison.

    The loop a stack reward writes: every new answer is parsed and verified against each
    earlier representative of its row, with math-verify's own (main-thread) time-outs.
    Rows may be ragged (the adversarial replies are left out: they would stop it).
    """
    parse, verify = _math_verify()
    out = []
    for row in rows:
        answers = []
        for reply in row:
            boxed = zero_text.extract_boxed(reply)
            answers.append(zero_text.normalize_answer(boxed) if boxed is not None else "")
        reps: list[tuple[str, int]] = []
        ids = [0] * len(row)
        skipped, next_id = [], 0
        for k, answer in enumerate(answers):
            if not answer:
                skipped.append(k)
                continue
            found = None
            for rep, rep_id in reps:
                pa, pb = parse("\\boxed{" + rep + "}"), parse("\\boxed{" + answer + "}")
                if pa and pb and (verify(pa, pb) or verify(pb, pa)):
                    found = rep_id
                    break
            if found is None:
                found, next_id = next_id, next_id + 1
                reps.append((answer, found))
            ids[k] = found
        for k in skipped:
            ids[k], next_id = next_id, next_id + 1
        out.append(ids)
    return out


def naive_label_rewards(rows: list[list[str]], labels: list[str]) -> list[list[float]]:
    """Per completion: math-verify parse of the whole completion, verify against the label."""
    parse, verify = _math_verify()
    out = []
    for row, label in zip(rows, labels, strict=True):
        gold = parse("$" + label + "$")
        out.append([float(verify(gold, parse(reply))) for reply in row])
    return out


# --------------------------------------------------------------------------- our path


def _block(x: Any) -> Any:
    return x.block_until_ready() if hasattr(x, "block_until_ready") else x


def timed(fn: Callable[[], Any], repeats: int) -> tuple[list[float], Any]:
    times, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = _block(fn())
        times.append(time.perf_counter() - start)
    return times, out


def relabel(ids: list[int]) -> list[int]:
    return zero_text.first_seen_labels(np.asarray(ids, dtype=np.int64)).tolist()


def ordinary_ids(ids: np.ndarray, spots: list[tuple[int, int]]) -> list[list[int]]:
    """Each row's ids without the adversarial replies, renumbered in first-seen order."""
    drop: dict[int, set[int]] = {}
    for b, k in spots:
        drop.setdefault(b, set()).add(k)
    return [
        relabel([v for k, v in enumerate(row) if k not in drop.get(b, set())])
        for b, row in enumerate(ids.tolist())
    ]


def _forget_naive() -> None:
    """Empty math-verify's own caches in this process (the naive path starts cold too)."""
    import math_verify.parser

    for name in ("parse_latex_cached", "parse_expr_cached"):
        cached = getattr(math_verify.parser, name, None)
        if cached is not None and hasattr(cached, "cache_clear"):
            cached.cache_clear()


def grouping_case(cfg: Config) -> dict[str, Any]:
    """Math grouping only, ours (1 and 2 helpers) against the naive loop, cold caches."""
    from zero_text import _mathpool

    data = make_batch(cfg)
    rows, spots = data["adversarial"], data["spots"]
    drop: dict[int, set[int]] = {}
    for b, k in spots:
        drop.setdefault(b, set()).add(k)
    ordinary = [
        [r for k, r in enumerate(row) if k not in drop.get(b, set())] for b, row in enumerate(rows)
    ]
    seconds: dict[str, list[float]] = {"group_math": [], "group_math_2_processes": []}
    ids: dict[str, Any] = {}
    for name, processes in (("group_math", 1), ("group_math_2_processes", 2)):
        for _ in range(cfg.repeats):
            _mathpool.forget(processes)
            one, (ids[name], _) = timed(
                lambda p=processes: zero_text.group_answers(
                    rows, equivalence="math", timeout=cfg.timeout, processes=p
                ),
                1,
            )
            seconds[name] += one
    zero_text.group_answers([["\\boxed{1}"]], equivalence="math")  # back to one helper
    _forget_naive()
    start = time.perf_counter()
    naive_ids = naive_group(ordinary)
    naive_seconds = time.perf_counter() - start
    med = {name: statistics.median(values) for name, values in seconds.items()}
    return {
        "config": asdict(cfg),
        "seconds": seconds,
        "median_seconds": med,
        "naive_seconds": naive_seconds,
        "ratios": {name: naive_seconds / value for name, value in med.items()},
        "same_ids": ordinary_ids(ids["group_math"], spots) == [relabel(r) for r in naive_ids]
        and ids["group_math"].tolist() == ids["group_math_2_processes"].tolist(),
    }


def run(cfg: Config, *, quick: bool = False) -> dict[str, Any]:
    """Time both paths on one batch; every number of the result JSON.

    Fairness: both paths first see a small warm-up batch (another seed), so imports and
    parser start-up are paid by neither; before every timed call of either path the
    cached answers are dropped (the helpers' and math-verify's own caches), so each
    call meets the batch's strings for the first time, as a training step does.
    """
    import jax

    import zero_jax
    from zero_text import _mathpool

    data = make_batch(cfg)
    clean, adversarial, labels, spots = (
        data["clean"], data["adversarial"], data["labels"], data["spots"]
    )
    drop: dict[int, set[int]] = {}
    for b, k in spots:
        drop.setdefault(b, set()).add(k)
    ordinary = [
        [r for k, r in enumerate(row) if k not in drop.get(b, set())]
        for b, row in enumerate(adversarial)
    ]
    limit = cfg.timeout
    load_before = os.getloadavg() if hasattr(os, "getloadavg") else None

    # Start the helper processes (once per process; not a cost of any batch), then warm
    # both paths up on a small batch of another seed.
    start = time.perf_counter()
    zero_text.group_answers([["\\boxed{\\sqrt{4}}", "\\boxed{2}"]], equivalence="math")
    pool_start = time.perf_counter() - start
    warm = make_batch(Config(prompts=8, completions=cfg.completions, chars=200, seed=cfg.seed + 1))
    for processes in (2, 1):
        zero_text.group_answers(warm["clean"], equivalence="math", processes=processes)
    naive_group(warm["clean"][:4])
    shape = (cfg.prompts, cfg.completions)
    _block(zero_jax.pseudo_rewards(np.zeros(shape, np.int64), np.zeros(shape[0], np.int64)))

    def timed_cold(fn: Callable[[], Any], processes: int = 1) -> tuple[list[float], Any]:
        times, out = [], None
        for _ in range(cfg.repeats):
            _mathpool.forget(processes)
            one, out = timed(fn, 1)
            times += one
        return times, out

    seconds: dict[str, list[float]] = {}

    def extract() -> list[list[str]]:
        out = []
        for row in adversarial:
            answers = []
            for reply in row:
                boxed = zero_text.extract_boxed(reply)
                answers.append(zero_text.normalize_answer(boxed) if boxed is not None else "")
            out.append(answers)
        return out

    def grouped(rows: list[list[str]], processes: int = 1) -> Callable[[], Any]:
        return lambda: zero_text.group_answers(
            rows, equivalence="math", timeout=limit, processes=processes
        )

    seconds["extract"], _ = timed(extract, cfg.repeats)
    seconds["group_exact"], (exact_ids, _) = timed(
        lambda: zero_text.group_answers(adversarial), cfg.repeats
    )
    seconds["group_math_clean"], (clean_ids, _) = timed_cold(grouped(clean))
    seconds["group_math"], (ids, num) = timed_cold(grouped(adversarial))
    seconds["group_math_2_processes"], (ids2, _) = timed_cold(grouped(adversarial, 2), 2)
    zero_text.group_answers([["\\boxed{1}"]], equivalence="math")  # back to one helper
    labelled = [
        [f"\\boxed{{{label}}}", *row] for label, row in zip(labels, adversarial, strict=True)
    ]

    def label_rewards() -> Any:
        lab_ids, _ = zero_text.group_answers(labelled, equivalence="math", timeout=limit)
        return zero_jax.pseudo_rewards(lab_ids[:, 1:], lab_ids[:, 0])

    seconds["label_rewards"], our_label_rewards = timed_cold(label_rewards)
    seconds["format"], fmt = timed(
        lambda: zero_text.r_zero_solver_format_ok(np.array(adversarial)), cfg.repeats
    )

    # The jitted stages: a first call compiles, then the warm calls are timed.
    answers = jax.numpy.asarray(ids)

    def votes() -> Any:
        return zero_jax.consensus(answers, num)[0]

    winners = _block(votes())

    def rewards() -> Any:
        return zero_jax.pseudo_rewards(answers, winners)

    pseudo = _block(rewards())

    def solver() -> Any:
        return zero_jax.solver_rewards(answers, fmt, num)

    def advantages() -> Any:
        return zero_jax.group_advantages(pseudo)

    for first_call in (solver, advantages):  # compile
        _block(first_call())
    jit_repeats = max(cfg.repeats, 5)
    seconds["votes"], _ = timed(votes, jit_repeats)
    seconds["rewards"], _ = timed(rewards, jit_repeats)
    seconds["solver_rewards"], _ = timed(solver, jit_repeats)
    seconds["advantages"], _ = timed(advantages, jit_repeats)

    def pipeline() -> Any:
        grouped_ids, n = zero_text.group_answers(adversarial, equivalence="math", timeout=limit)
        a = jax.numpy.asarray(grouped_ids)
        won, _ = zero_jax.consensus(a, n)
        return zero_jax.group_advantages(zero_jax.pseudo_rewards(a, won))

    seconds["pipeline"], _ = timed_cold(pipeline)

    # The naive path, once, on the same batch without the adversarial replies.
    _forget_naive()
    start = time.perf_counter()
    naive_ids = naive_group(ordinary)
    naive_group_seconds = time.perf_counter() - start
    _forget_naive()
    start = time.perf_counter()
    naive_rewards = naive_label_rewards(ordinary, labels)
    naive_label_seconds = time.perf_counter() - start

    same_ids = ordinary_ids(ids, spots) == [relabel(r) for r in naive_ids]
    same_parallel = ids.tolist() == ids2.tolist()
    # The adversarial replies change no other reply's id (same replies, same ids).
    unaffected = ordinary_ids(clean_ids, spots) == ordinary_ids(ids, spots)
    ours_rewards = np.asarray(our_label_rewards).tolist()
    ours_ordinary = [
        [v for k, v in enumerate(row) if k not in drop.get(b, set())]
        for b, row in enumerate(ours_rewards)
    ]
    pairs = [
        (x, y) for r1, r2 in zip(ours_ordinary, naive_rewards, strict=True)
        for x, y in zip(r1, r2, strict=True)
    ]
    label_agreement = sum(x == y for x, y in pairs) / len(pairs)
    flat_ordinary = [r for row in ordinary for r in row]
    label_differences = [
        {"box": zero_text.extract_boxed(reply), "ours": x, "naive": y}
        for reply, (x, y) in zip(flat_ordinary, pairs, strict=True)
        if x != y
    ]

    med = {name: statistics.median(values) for name, values in seconds.items()}
    ratio_group = naive_group_seconds / med["group_math"]
    ratio_group_2 = naive_group_seconds / med["group_math_2_processes"]
    ratio_label = naive_label_seconds / med["label_rewards"]
    overhead = med["group_math"] - med["group_math_clean"]
    reply_chars = [len(r) for row in adversarial for r in row]
    mixed = grouping_case(replace(cfg, symbolic=MIXED_SYMBOLIC, seed=cfg.seed + 2))
    targets = {
        "math_grouping_5x_faster_than_naive": {
            "goal": ">= 5x with identical ids (1 helper process; 2 helpers on 2 cores)",
            "value": ratio_group,
            "value_2_processes": ratio_group_2,
            "met": None if quick else bool(max(ratio_group, ratio_group_2) >= 5 and same_ids),
        },
        "adversarial_batch_within_normal_plus_limit": {
            "goal": f"<= normal time + {limit:g} s",
            "value": overhead,
            "met": None if quick else bool(overhead <= limit),
        },
    }
    return {
        "case": "strings",
        "config": asdict(cfg),
        "quick": quick,
        "replies": cfg.prompts * cfg.completions,
        "reply_chars_mean": statistics.fmean(reply_chars),
        "adversarial_replies": len(spots),
        "distinct_answers_per_row_mean": statistics.fmean(len(set(r)) for r in exact_ids.tolist()),
        "math_groups_per_row_mean": statistics.fmean(len(set(r)) for r in ids.tolist()),
        "pool_start_seconds": pool_start,
        "seconds": seconds,
        "median_seconds": med,
        "naive_seconds": {"group_math": naive_group_seconds, "label_rewards": naive_label_seconds},
        "ratios": {
            "group_math": ratio_group,
            "group_math_2_processes": ratio_group_2,
            "label_rewards": ratio_label,
        },
        "same_ids": same_ids,
        "same_ids_2_processes": same_parallel,
        "adversarial_change_no_other_id": unaffected,
        "label_reward_agreement": label_agreement,
        "label_reward_differences": {
            "ours_1_naive_0": sum(d["ours"] > d["naive"] for d in label_differences),
            "ours_0_naive_1": sum(d["ours"] < d["naive"] for d in label_differences),
            "examples": label_differences[:5],
        },
        "adversarial_overhead_seconds": overhead,
        "mixed": mixed,
        "targets": targets,
        "load_before": load_before,
        "load_after": os.getloadavg() if hasattr(os, "getloadavg") else None,
        "cores": os.cpu_count(),
        "python": sys.version.split()[0],
        "machine": platform.machine(),
    }


# --------------------------------------------------------------------------- report


def _fmt(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds * 1e6:.0f} µs"


def headline(result: dict[str, Any]) -> list[str]:
    """The bullet of bench/RESULTS.md's first screen."""
    ratio = result["ratios"]["group_math"]
    return [
        f"- From strings to advantages (`python -m bench.strings`, {result['replies']:,} "
        f"replies): math-equivalent grouping **{ratio:.1f}x** faster than the naive "
        "math-verify loop, "
        + ("identical ids." if result["same_ids"] else "**different ids**.")
    ]


def targets(result: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The case's two targets of issue 18 (not measured without a full run)."""
    from bench.targets import target

    full = result is not None and not result.get("quick")
    out = []
    for name, what in (
        ("math_grouping_5x_faster_than_naive",
         "`group_answers(equivalence=\"math\")` at least 5x faster than the naive "
         "math-verify grouping on a realistic GRPO batch, with identical ids"),
        ("adversarial_batch_within_normal_plus_limit",
         "a batch with 1 % adversarial replies takes at most its normal time plus the "
         "per-comparison limit"),
    ):
        got = (result or {}).get("targets", {}).get(name, {}) if full else {}
        details = {"value": round(got["value"], 3)} if "value" in got else {}
        out.append(target(name, what, 18, {name: got.get("met") if full else None}, details))
    return out


def markdown(result: dict[str, Any], results_dir: str = "results") -> str:
    """The section of bench/RESULTS.md for one result of :func:`run` (a table, notes)."""
    cfg = result["config"]
    med, naive, ratios = result["median_seconds"], result["naive_seconds"], result["ratios"]
    mixed = result["mixed"]
    limit = cfg["timeout"]
    lines = [
        f"`python -m bench.strings` runs one GRPO batch of {cfg['prompts']} prompts x "
        f"{cfg['completions']} completions (about {result['reply_chars_mean']:.0f} characters "
        f"each; numeric answers boxed in mixed forms, {result['adversarial_replies']} "
        "adversarial replies such as Math-Verify issue #65's tower) from raw strings to "
        "advantages. The naive path is what stack reward functions run today, on the same "
        "batch without the adversarial replies (which would stop it). Each call of either "
        "path starts with empty answer caches.",
        "",
        "| stage | zero-rewards | naive path | ratio |",
        "|---|---|---|---|",
        f"| extraction (`extract_boxed` + `normalize_answer`) | {_fmt(med['extract'])} | | |",
        f"| grouping, exact | {_fmt(med['group_exact'])} | | |",
        f"| grouping, `equivalence=\"math\"` | {_fmt(med['group_math'])} | "
        f"{_fmt(naive['group_math'])} (parse + verify per comparison) | "
        f"**{ratios['group_math']:.1f}x** |",
        f"| same, 2 helper processes (`processes=2`) | {_fmt(med['group_math_2_processes'])} | | "
        f"**{ratios['group_math_2_processes']:.1f}x** |",
        f"| same, a MATH-like batch ({100 * mixed['config']['symbolic']:.0f} % symbolic "
        f"answers) | {_fmt(mixed['median_seconds']['group_math'])} "
        f"({_fmt(mixed['median_seconds']['group_math_2_processes'])} with 2) | "
        f"{_fmt(mixed['naive_seconds'])} | {mixed['ratios']['group_math']:.1f}x "
        f"({mixed['ratios']['group_math_2_processes']:.1f}x) |",
        f"| frozen-label rewards (math) | {_fmt(med['label_rewards'])} | "
        f"{_fmt(naive['label_rewards'])} (parse + verify per completion) | "
        f"{ratios['label_rewards']:.1f}x |",
        f"| format check (`r_zero_solver_format_ok`) | {_fmt(med['format'])} | | |",
        f"| votes (`consensus`) | {_fmt(med['votes'])} | | |",
        f"| rewards (`pseudo_rewards` / `solver_rewards`) | {_fmt(med['rewards'])} / "
        f"{_fmt(med['solver_rewards'])} | | |",
        f"| advantages (`group_advantages`) | {_fmt(med['advantages'])} | | |",
        f"| strings to advantages, total | {_fmt(med['pipeline'])} | | |",
        "",
        "- Identical ids on the non-adversarial replies: "
        f"**{'yes' if result['same_ids'] and mixed['same_ids'] else 'NO'}** (both batches)"
        f" (and the adversarial replies change no other id: "
        f"{'yes' if result['adversarial_change_no_other_id'] else 'NO'})"
        f"; frozen-label rewards agree on {100 * result['label_reward_agreement']:.1f} % of "
        "completions: the naive path reads the whole completion with math-verify's own "
        "extractor, which misses a box such as `\\boxed{12.}` and grades an earlier number "
        f"instead ({result['label_reward_differences']['ours_1_naive_0']} correct replies it "
        f"scores 0, {result['label_reward_differences']['ours_0_naive_1']} the other way).",
        f"- The adversarial replies cost {_fmt(max(0.0, result['adversarial_overhead_seconds']))} "
        f"over the same batch without them (limit {limit:g} s per step); math-verify alone "
        "takes 20 s per such reply in the main thread and never returns in a worker thread.",
        f"- Helper processes started once in {_fmt(result['pool_start_seconds'])} (not counted "
        "above); medians of "
        f"{len(result['seconds']['group_math'])} runs of our side, one naive run.",
    ]
    if result["quick"]:
        lines.append("- Quick run: a smoke test of the code path; no target is assessed.")
    else:
        for name, target in result["targets"].items():
            verdict = {True: "met", False: "**not met**", None: "not assessed"}[target["met"]]
            lines.append(f"- Target `{name}` ({target['goal']}): {target['value']:.2f}, {verdict}")
    lines.append(f"- Raw numbers in `{results_dir}/strings.json`.")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.strings", description=" ".join(__doc__.split("\n\n")[0].split())
    )
    parser.add_argument("--quick", action="store_true", help="16 x 8 completions (seconds)")
    parser.add_argument("--prompts", type=int, help="prompts in the batch (default 256)")
    parser.add_argument("--completions", type=int, help="completions per prompt (default 16)")
    parser.add_argument("--repeats", type=int, help="runs of our side (default 3)")
    output.add_arguments(parser, "strings.json")
    parser.add_argument("--markdown", action="store_true", help="also print the report fragment")
    args = parser.parse_args(argv)
    out_dir = output.directory(args, quick=args.quick)
    cfg = QUICK if args.quick else Config()
    overrides = {
        k: v for k, v in (("prompts", args.prompts), ("completions", args.completions),
                          ("repeats", args.repeats)) if v is not None
    }
    if overrides:
        cfg = Config(**{**asdict(cfg), **overrides})
    out = out_dir / "strings.json"
    result = run(cfg, quick=args.quick)
    out.write_text(json.dumps(result, indent=2) + "\n")
    output.finish(out_dir)
    med = result["median_seconds"]
    print(
        f"{cfg.prompts} x {cfg.completions}: math grouping {_fmt(med['group_math'])} vs naive "
        f"{_fmt(result['naive_seconds']['group_math'])} ({result['ratios']['group_math']:.1f}x), "
        f"identical ids: {result['same_ids']}; adversarial overhead "
        f"{_fmt(result['adversarial_overhead_seconds'])}; wrote {out}"
    )
    if args.markdown:
        print(markdown(result))
    ok = result["same_ids"] and result["same_ids_2_processes"] and result["mixed"]["same_ids"]
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
