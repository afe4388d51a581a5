"""The four sections of the explanation page as HTML: the worked loop (static, from
``zero_lab.explain_data``), the controls (filled in by the page's script from the
embedded tables), the convention people trip on, and the Lab run."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from html import escape, unescape
from typing import Any

from zero_lab.explain_data import CHALLENGER_B_MAX, HINT_BASE_LOGP
from zero_lab.explain_svg import lab_chart
from zero_lab.records import get_lab
from zero_lab.result import MIN_GAIN, PASS_PROB, LabResult

__all__ = ["SECTIONS", "STAGES", "fmt", "sections"]

#: The loop's four stages, in every section.
STAGES = ("Active model", "Frozen evaluator", "Feedback", "Filtering")


def fmt(v: float) -> str:
    """A score as the page prints it: at most three decimals, no trailing zeros."""
    if math.isnan(v):
        return "—"
    s = f"{v:.3f}".rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


# --------------------------------------------------------------------------- worked loop
@dataclass(frozen=True)
class Col:
    """One column of a worked table: revealed at ``stage``, named ``key`` (the cells'
    ``data-col``); ``head`` and ``cells`` are HTML."""

    stage: int
    key: str
    head: str
    cells: Sequence[str]


def num(v: float, key: str) -> str:
    return f'<span class="v" data-key="{key}" data-value="{v!r}">{fmt(v)}</span>'


def ids(xs: Iterable[int]) -> str:
    return '<span class="ids">' + " ".join(str(x) for x in xs) + "</span>"


def flag(ok: bool, yes: str, no: str) -> str:
    return f'<span class="{"yes" if ok else "no"}">{escape(yes if ok else no)}</span>'


def _plain(html: str) -> str:
    """A header's text without markup, for the narrow layout's per-cell labels."""
    text = re.sub(r"<sup>h</sup>", "\u02b0", html)
    text = re.sub(r"<sub>(.*?)</sub>", r"_\1", text)
    return escape(unescape(re.sub(r"<[^>]+>", "", text)))


def _table(caption: str, rows: Sequence[str], cols: Sequence[Col], stage: int = 0) -> str:
    head = "".join(
        f'<th scope="col" data-from="{c.stage}" data-col="{c.key}">'
        f'<span class="badge">{c.stage + 1}</span> {c.head}</th>'
        for c in cols
    )
    body = []
    for i, row in enumerate(rows):
        cells = "".join(
            f'<td data-from="{c.stage}" data-col="{c.key}" data-label="{_plain(c.head)}">'
            f"{c.cells[i]}</td>"
            for c in cols
        )
        body.append(f'<tr><th scope="row">{row}</th>{cells}</tr>')
    return (
        f'<div class="table-wrap" data-from="{stage}"><table>'
        f'<caption>{caption}</caption><thead><tr><th scope="col">row</th>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


def _loop(family: str, texts: Sequence[str], tables: Sequence[str]) -> str:
    tabs = "".join(
        f'<li><button type="button" class="stage-tab" data-goto="{i}" '
        f'aria-controls="{family}-loop">{i + 1}. {name}</button></li>'
        for i, name in enumerate(STAGES)
    )
    paras = "".join(
        f'<p class="stage-text" data-stage-text="{i}">{t}</p>' for i, t in enumerate(texts)
    )
    return (
        f'<div class="loop" id="{family}-loop" data-stage="0">'
        f'<ol class="stages" aria-label="Stages of the loop">{tabs}</ol>'
        f'<div class="stage-texts">{paras}</div>{"".join(tables)}'
        '<div class="stepper">'
        '<button type="button" class="prev" data-step="-1">&larr; Previous</button>'
        f'<p class="status" aria-live="polite">Step 1 of {len(STAGES)}: {STAGES[0]}</p>'
        '<button type="button" class="next" data-step="1">Next &rarr;</button>'
        "</div></div>"
    )


# --------------------------------------------------------------------------- controls
def slider(cid: str, label: str, axis: str, value: int, size: int, extra: str = "") -> str:
    """A range input over the positions of ``axis`` (0 .. size - 1) with its value shown."""
    return (
        f'<div class="ctl"><label for="{cid}">{label}</label>'
        f'<input type="range" id="{cid}" min="0" max="{size - 1}" step="1" value="{value}" '
        f'data-axis="{axis}"{extra}>'
        f'<output id="{cid}-out" for="{cid}" class="ctl-value"></output></div>'
    )


def int_slider(cid: str, label: str, lo: int, hi: int, value: int) -> str:
    return (
        f'<div class="ctl"><label for="{cid}">{label}</label>'
        f'<input type="range" id="{cid}" min="{lo}" max="{hi}" step="1" value="{value}">'
        f'<output id="{cid}-out" for="{cid}" class="ctl-value"></output></div>'
    )


def checkbox(cid: str, label: str, checked: bool) -> str:
    return (
        f'<div class="ctl ctl-check"><input type="checkbox" id="{cid}"'
        f'{" checked" if checked else ""}><label for="{cid}">{label}</label></div>'
    )


def select(cid: str, label: str, options: Sequence[int], value: int) -> str:
    opts = "".join(
        f'<option value="{o}"{" selected" if o == value else ""}>{o}</option>' for o in options
    )
    return f'<label class="pick" for="{cid}">{label}<select id="{cid}">{opts}</select></label>'


def score(cid: str, label: str, big: bool = True) -> str:
    cls = "score" if big else "score small"
    return (
        f'<div class="{cls}"><span class="score-label" id="{cid}-l">{label}</span> '
        f'<output id="{cid}" aria-labelledby="{cid}-l" aria-live="polite"></output></div>'
    )


def panel(title: str, fn: str, body: str, note: str = "") -> str:
    note_html = f'<p class="note">{note}</p>' if note else ""
    return f'<div class="panel"><h4>{title} <code>{fn}</code></h4>{note_html}{body}</div>'


# --------------------------------------------------------------------------- Lab
def _lab_block(results: Mapping[str, LabResult], names: Sequence[str]) -> str:
    figs = []
    for name in names:
        lab = get_lab(name)
        res = results.get(name)
        if res is None:
            figs.append(
                f'<figure class="lab"><figcaption><strong>{escape(name)}</strong>: not run in '
                f"this invocation (run <code>zero-lab --html PATH</code> without "
                f"<code>--lab</code> to include it).</figcaption></figure>"
            )
            continue
        verdict = "PASS" if res.passed else "FAIL"
        figs.append(
            f'<figure class="lab" data-lab="{escape(name)}">{lab_chart(res, lab, "chart-" + name)}'
            f"<figcaption><p><strong>{escape(name)}</strong> (problem {lab.problem}): "
            f"{escape(lab.description)} Thick line: the target action "
            f"<em>{escape(lab.target_action.label)}</em>; thin grey lines: the other "
            f"{lab.num_actions - 1} actions; dashed: the pass threshold. "
            f'<span class="verdict {verdict.lower()}" data-p0="{res.p0!r}" '
            f'data-final="{res.p_final!r}">{verdict}: {res.p0:.3f} &rarr; {res.p_final:.3f} '
            f"(gain {res.gain:+.3f})</span></p>"
            f'<p class="teaches"><strong>{escape(lab.question)}</strong> {escape(lab.answer)}</p>'
            "</figcaption></figure>"
        )
    rule = (
        f"A lab trains a categorical policy from uniform logits for 60 steps of "
        f"<code>optax.sgd(0.5)</code> on the exact expected reward; it passes when the "
        f"target ends above {PASS_PROB} after rising by more than {MIN_GAIN}."
    )
    count = "one" if len(names) == 1 else "many"
    return (
        f'<h3>The Lab</h3><p class="lab-rule">{rule}</p>'
        f'<div class="labs {count}">{"".join(figs)}</div>'
    )


def _section(
    family: str,
    kicker: str,
    title: str,
    equation: str,
    trip: str,
    loop: str,
    controls: str,
    lab: str,
) -> str:
    return (
        f'<section class="family" id="{family}" aria-labelledby="{family}-title">'
        f'<p class="kicker">{kicker}</p><h2 id="{family}-title">{title}</h2>'
        f'<p class="eq">{equation}</p>'
        f'<aside class="trip" aria-label="The convention people trip on">'
        f"<h3>The convention people trip on</h3>{trip}</aside>"
        f"<h3>The loop, step by step</h3>{loop}"
        f"<h3>Move the controls</h3>"
        f'<p class="note">Each score below is the value zero_jax returned for exactly these '
        f"inputs when this page was generated; the controls choose among them.</p>"
        f'<div class="panels">{controls}</div>{lab}</section>'
    )


# --------------------------------------------------------------------------- 107
def _challenger(data: Mapping[str, Any], results: Mapping[str, LabResult]) -> str:
    w = data["worked"]
    rows = [f"Q{i + 1}" for i in range(w["B"])]
    table = _table(
        f"The challenger's batch: B = {w['B']} proposals, strength &lambda; = "
        f"{w['strength']:g}, K = 4 solver samples each",
        rows,
        [
            Col(0, "template", "template", [str(c) for c in w["clusters"]]),
            Col(0, "format", "format", [flag(v, "valid", "malformed") for v in w["valid"]]),
            Col(1, "answers", "solver answers", [ids(a) for a in w["answers"]]),
            Col(1, "majority", "majority", [str(x) for x in w["labels"]]),
            Col(1, "p", "<var>p</var>", [num(x, f"p-{i}") for i, x in enumerate(w["p"])]),
            Col(
                2,
                "u",
                "1 &minus; 2|<var>p</var> &minus; &frac12;|",
                [num(x, f"u-{i}") for i, x in enumerate(w["u"])],
            ),
            Col(2, "size", "|<var>C</var>|", [str(x) for x in w["sizes"]]),
            Col(
                2,
                "reward",
                "reward <var>r</var>",
                [num(x, f"reward-{i}") for i, x in enumerate(w["reward"])],
            ),
            Col(
                3,
                "advantage",
                "advantage",
                [num(x, f"adv-{i}") for i, x in enumerate(w["advantage"])],
            ),
            Col(3, "band", "band (to the solver)", [flag(b, "kept", "dropped") for b in w["band"]]),
        ],
    )
    texts = [
        "The challenger, the model being trained, writes a batch of questions. Upstream, "
        "the caller marks Q2 malformed and groups the questions by template (the cluster "
        "ids are its input): Q1 and Q2 share template 7. (From raw strings, "
        "<code>zero_stacks</code> clusters with BLEU and, like the published code, puts a "
        "malformed output in a cluster of its own.)",
        "The solver is frozen for this round. It answers every question four times; "
        "<code>consensus</code> takes the majority (a tie goes to the smallest id) and the "
        "consistency <var>p</var>, the share of samples that agree with it.",
        "<code>uncertainty_reward</code> maps <var>p</var> to 1 &minus; 2|<var>p</var> &minus; "
        "&frac12;|, which is 1 at an even split and 0 when the solver is unanimous. "
        "<code>challenger_rewards</code> subtracts &lambda;|<var>C</var>|/<var>B</var>, "
        "counting template copies over all four rows (malformed Q2 included), floors at 0 and "
        "zeroes malformed rows: Q1 earns 1 &minus; 2/4 = 0.5, Q2 earns 0.",
        "<code>group_advantages</code> centres the batch's rewards and divides by their "
        "standard deviation: the challenger's GRPO step moves toward Q1 and Q4. Questions "
        "with <var>p</var> inside the band [0.25, 0.75] go on to train the solver (next "
        "section); the unanimous Q3 does not.",
    ]
    b_max = CHALLENGER_B_MAX
    controls = panel(
        "One proposal in its batch:",
        "challenger_rewards",
        int_slider("ch-B", "batch size <var>B</var>", 1, b_max, 4)
        + int_slider("ch-n", "proposals on its template |<var>C</var>| (itself included)", 1, 4, 2)
        + int_slider("ch-m", "of those copies, malformed", 0, 1, 0)
        + slider("ch-p", "its consistency <var>p</var>", "challenger.p", 10, 21)
        + slider("ch-lam", "strength &lambda;", "challenger.strength", 4, 9)
        + checkbox("ch-valid", "it passes the format check", True)
        + '<div class="strip" id="ch-strip" aria-hidden="true"></div>'
        + score("ch-r", "reward <var>r</var> =")
        + score("ch-u", "uncertainty 1 &minus; 2|<var>p</var> &minus; &frac12;| =", big=False)
        + '<p class="term" id="ch-pen"></p>',
        "Its reward, with the rest of the batch fixed. The malformed copies change "
        "nothing: they still count in |<var>C</var>| and in <var>B</var>.",
    ) + panel(
        "The reward against <var>p</var>:",
        "uncertainty_reward",
        '<svg class="plot" id="ch-plot" viewBox="0 0 420 270" role="img" '
        'aria-label="reward and uncertainty against consistency p"></svg>'
        '<p class="legend"><span class="key key-a"></span> reward at the settings on the '
        'left <span class="key key-b"></span> uncertainty alone; the dot is the current '
        "<var>p</var>.</p>",
        "Hardest is not most useful: the curve peaks at an even split and falls to 0 "
        "when the solver is unanimous, whether it is right or wrong.",
    )
    trip = (
        "<p><strong>Agreement is not accuracy.</strong> <var>p</var> only says how many of "
        "the frozen solver's samples agree with their own majority; nothing checks that "
        "the majority is right. A question everyone answers the same way, correctly or "
        "not, has <var>p</var> = 1 and earns nothing.</p>"
        "<p><strong>Malformed rows stay in the denominator.</strong> The repetition "
        "penalty counts a template's copies over all <var>B</var> proposals, malformed "
        "ones included, and divides by <var>B</var>; the format check only zeroes the "
        "malformed row's own reward. <strong>Format is a gate here</strong> (a malformed "
        "question earns exactly 0); for the MM-Zero solver it is a bonus.</p>"
    )
    return _section(
        "challenger",
        "R-Zero &middot; problem 107 &middot; challenger",
        "The challenger: uncertainty, repetition and the format gate",
        "<var>r<sub>i</sub></var> = <var>v<sub>i</sub></var> &middot; max(0, 1 &minus; "
        "2|<var>p<sub>i</sub></var> &minus; &frac12;| &minus; &lambda;|<var>C<sub>i</sub></var>|"
        "/<var>B</var>)",
        trip,
        _loop("challenger", texts, [table]),
        controls,
        _lab_block(results, ["challenger"]),
    )


# --------------------------------------------------------------------------- 108
def _pseudo(data: Mapping[str, Any], results: Mapping[str, LabResult]) -> str:
    w = data["worked"]
    rows = ["A", "B", "C", "D"]
    keep = w["keep"]
    table = _table(
        "Four questions: K = 4 old votes each, then 3 fresh answers; band [0.25, 0.75]",
        rows,
        [
            Col(0, "old", "old votes", [ids(v) for v in w["old"]]),
            Col(
                1,
                "label",
                "frozen label",
                [
                    f'<span class="v" data-key="label-{i}" data-value="{y}">{y}</span>'
                    for i, y in enumerate(w["labels"])
                ],
            ),
            Col(1, "p", "<var>p</var>", [num(x, f"p-{i}") for i, x in enumerate(w["p"])]),
            Col(2, "fresh", "fresh answers", [ids(v) for v in w["fresh"]]),
            Col(
                2,
                "reward",
                "pseudo-rewards",
                [
                    '<span class="ids">'
                    + " ".join(num(x, f"reward-{i}-{j}") for j, x in enumerate(r))
                    + "</span>"
                    for i, r in enumerate(w["reward"])
                ],
            ),
            Col(
                2,
                "revote",
                "re-voted instead (wrong)",
                [
                    f'<span class="muted">label {y}: <span class="ids">'
                    + " ".join(fmt(x) for x in r)
                    + "</span></span>"
                    for y, r in zip(w["revote"], w["revote_reward"], strict=True)
                ],
            ),
            Col(3, "band", "in the band", [flag(k, "kept", "dropped") for k in keep]),
            Col(
                3,
                "advantage",
                "advantages",
                [
                    '<span class="ids">'
                    + " ".join(num(x, f"adv-{i}-{j}") for j, x in enumerate(a))
                    + "</span>"
                    if k
                    else '<span class="muted">not trained</span>'
                    for i, (a, k) in enumerate(zip(w["advantage"], keep, strict=True))
                ],
            ),
        ],
    )
    texts = [
        "In an earlier round the solver answered each question four times. Equal answers "
        "share an id (<code>zero_text.group_answers</code>); these ids are the old votes.",
        "<code>consensus</code> turns the old votes into a label and a consistency, once, "
        "and the label is stored with the question. A's votes [1, 1, 0, 0] are a 2&ndash;2 "
        "tie: the smaller id, 0, wins, at <var>p</var> = 0.5.",
        "The solver now being trained answers again. <code>pseudo_rewards</code> pays 1 for "
        "a fresh answer equal to the frozen label: against B's label 1, the answers "
        "[2, 2, 1] earn [0, 0, 1]. Re-voting the fresh answers would have made 2 the label "
        "and paid the two answers the old majority rejected.",
        "<code>curriculum_mask</code> keeps the questions with 0.25 &le; <var>p</var> &le; "
        "0.75, both edges included: B (<var>p</var> = 0.75) and D (<var>p</var> = 0.25) "
        "stay, the unanimous C is dropped and its rewards never train. "
        "<code>group_advantages</code> turns each kept question's rewards into advantages.",
    ]
    votes = "".join(
        select(f"ps-v{i}", f"vote {i + 1}", range(4), v) for i, v in enumerate([1, 1, 1, 2])
    )
    fresh = "".join(
        select(f"ps-f{i}", f"answer {i + 1}", range(4), v) for i, v in enumerate([2, 2, 1])
    )
    controls = (
        panel(
            "Old votes to a frozen label:",
            "consensus",
            f'<div class="picks" role="group" aria-label="old votes">{votes}</div>'
            + score("ps-label", "frozen label =")
            + score("ps-p", "consistency <var>p</var> =", big=False)
            + score("ps-inband", "in the band set in the next panel:", big=False),
            "Answer ids 0&ndash;3, four votes. Ties go to the smallest id.",
        )
        + panel(
            "The informative band:",
            "curriculum_mask",
            slider("ps-low", "lower edge", "band.edge", 5, 21)
            + slider("ps-high", "upper edge", "band.edge", 15, 21)
            + '<svg class="plot band" id="ps-band-chart" viewBox="0 0 420 110" role="img" '
            'aria-label="which consistencies the band keeps"></svg>'
            + slider("ps-probe", "a question with consistency <var>p</var>", "band.p", 5, 21)
            + score("ps-kept", "is")
            + '<p class="error" id="ps-band-msg" aria-live="polite"></p>',
            "Filled dots are kept. Both edges are inside the band.",
        )
        + panel(
            "Fresh answers against the frozen label:",
            "pseudo_rewards",
            f'<div class="picks" role="group" aria-label="fresh answers">{fresh}</div>'
            + score("ps-frozen", "frozen label, from the old votes =", big=False)
            + '<div class="rewards">'
            + "".join(score(f"ps-r{j}", f"answer {j + 1}:", big=False) for j in range(3))
            + "</div>"
            + '<p class="term" id="ps-revote"></p>',
            "Change the fresh answers: the label does not move.",
        )
    )
    trip = (
        "<p><strong>Labels are frozen.</strong> The label is the old votes' majority, taken "
        "once. Fresh answers are scored against it and never voted on again: a policy "
        "whose own answers set the label would be chasing a target it moves.</p>"
        "<p><strong>The band keeps both edges.</strong> 0.25 &le; <var>p</var> &le; 0.75, so "
        "with four votes both four different answers (<var>p</var> = 0.25) and three of "
        "four (<var>p</var> = 0.75) stay in. <strong>Ties go to the smallest id</strong>: "
        "with ids numbered by first appearance, the answer seen first.</p>"
    )
    return _section(
        "pseudo",
        "R-Zero &middot; problem 108 &middot; solver",
        "Pseudo-labels and the informative band",
        "<var>y&#771;<sub>i</sub></var> = argmax<sub><var>c</var></sub> "
        "<var>n<sub>ic</sub></var>, &nbsp; <var>p<sub>i</sub></var> = max<sub><var>c</var></sub> "
        "<var>n<sub>ic</sub></var>/<var>K</var>, &nbsp; <var>m<sub>i</sub></var> = "
        "1[&ell; &le; <var>p<sub>i</sub></var> &le; <var>u</var>], &nbsp; "
        "<var>r<sub>ij</sub></var> = 1[<var>a<sub>ij</sub></var> = <var>y&#771;<sub>i</sub></var>]",
        trip,
        _loop("pseudo", texts, [table]),
        controls,
        _lab_block(results, ["pseudo_labels"]),
    )


# --------------------------------------------------------------------------- 109
def _proposer(data: Mapping[str, Any], results: Mapping[str, LabResult]) -> str:
    w = data["worked"]
    rows = [f"P{i + 1}" for i in range(len(w["lengths"]))]

    def logps(values: Sequence[float], mask: Sequence[bool]) -> str:
        return (
            '<span class="ids">'
            + " ".join(
                f"{v:g}" if m else '<span class="muted">pad</span>'
                for v, m in zip(values, mask, strict=True)
            )
            + "</span>"
        )

    table = _table(
        "Four proposals (B = 4); the answer has up to three tokens",
        rows,
        [
            Col(0, "length", "hint length <var>L</var>", [f"{n} chars" for n in w["lengths"]]),
            Col(0, "format", "format", [flag(v, "valid", "malformed") for v in w["valid"]]),
            Col(0, "share", "share <var>s</var>", [f"{s:g}" for s in w["share"]]),
            Col(
                1,
                "base",
                "log <var>p</var> (no hint)",
                [logps(b, m) for b, m in zip(w["base"], w["mask"], strict=True)],
            ),
            Col(
                1,
                "hinted",
                "log <var>p</var><sup>h</sup> (hint)",
                [logps(h, m) for h, m in zip(w["hinted"], w["mask"], strict=True)],
            ),
            Col(2, "delta", "&delta;", [num(x, f"delta-{i}") for i, x in enumerate(w["delta"])]),
            Col(
                2,
                "reward",
                "reward <var>r</var>",
                [num(x, f"reward-{i}") for i, x in enumerate(w["reward"])],
            ),
            Col(
                3,
                "advantage",
                "advantage",
                [num(x, f"adv-{i}") for i, x in enumerate(w["advantage"])],
            ),
        ],
    )
    texts = [
        "The proposer, the model being trained, writes a question and a hint. Upstream: "
        "the hint's length in characters, a format check (P4 fails it) and BLEU clusters "
        "(P1 and P4 share a template, so each has share <var>s</var> = 2/4).",
        "The frozen solver answers each question without the hint. That one answer is "
        "then scored twice, token by token: with the plain context (log <var>p</var>) and "
        "with the hint added (log <var>p</var><sup>h</sup>). Padding is masked out; P3's "
        "answer is empty.",
        "<code>hint_delta</code> averages log <var>p</var> &minus; log <var>p</var><sup>h</sup> "
        "over the answer's tokens: P1's shifts [2, 1] give &delta; = 1.5, P3's empty answer "
        "gives 0. <code>proposer_rewards</code> takes off 0.03 per 100 characters beyond 200 "
        "(P2: 0.21) and the cluster share.",
        "A malformed proposal pays &minus;1 &minus; <var>s</var>: P4's &delta; of 2.5 and its "
        "length are ignored, its share is not. Negative rewards are kept; "
        "<code>group_advantages</code> ranks the batch for the proposer's update.",
    ]
    tokens = []
    for t, b in enumerate(HINT_BASE_LOGP):
        tokens.append(
            f'<fieldset class="token"><legend>token {t + 1} (log <var>p</var> = {b:g})</legend>'
            + slider(
                f"hd-s{t}",
                "shift log <var>p</var> &minus; log <var>p</var><sup>h</sup>",
                "hint.shift",
                (6, 4, 2)[t],
                9,
            )
            + checkbox(f"hd-m{t}", "part of the answer", t < 2)
            + f'<p class="term" id="hd-lp{t}"></p></fieldset>'
        )
    controls = panel(
        "One answer, two contexts:",
        "hint_delta",
        "".join(tokens) + '<svg class="plot" id="hd-chart" viewBox="0 0 420 150" role="img" '
        'aria-label="per-token shifts and their mean"></svg>' + score("hd-delta", "&delta; ="),
        "Unticked tokens are padding: they leave the mean, and an answer with no token gives 0.",
    ) + panel(
        "The proposer's reward:",
        "proposer_rewards",
        slider("pr-delta", "hint-delta &delta;", "proposer.delta", 10, 17)
        + slider("pr-len", "hint length <var>L</var> (characters)", "proposer.length", 2, 31)
        + slider("pr-share", "cluster share <var>s</var>", "proposer.share", 0, 21)
        + checkbox("pr-valid", "the proposal passes the format check", True)
        + score("pr-r", "reward <var>r</var> =")
        + '<svg class="plot" id="pr-plot" viewBox="0 0 420 260" role="img" '
        'aria-label="reward against hint length"></svg>'
        + '<p class="legend">The reward against the hint length at the other settings; '
        "flat up to 200 characters.</p>",
        "Untick the format check: &delta; and <var>L</var> stop mattering, <var>s</var> "
        "still does.",
    )
    trip = (
        "<p><strong>&delta; compares one answer with itself.</strong> Both passes score the "
        "same unassisted answer tokens, aligned position by position; scoring the hinted "
        "model's own reply on the hinted side measures something else.</p>"
        "<p><strong>A malformed proposal still pays its repetition penalty</strong>: "
        "&minus;1 replaces &delta; and the length term, and the cluster share is "
        "subtracted as usual. <strong>Length is in characters</strong>, free up to 200, "
        "and rewards may be negative.</p>"
    )
    return _section(
        "proposer",
        "G-Zero &middot; problem 109 &middot; proposer",
        "Hint-delta and the proposer's reward",
        "&delta; = &Sigma;<sub><var>t</var></sub> <var>m<sub>t</sub></var>(log "
        "<var>p<sub>t</sub></var> &minus; log <var>p<sub>t</sub><sup>h</sup></var>) / "
        "max(1, &Sigma;<sub><var>t</var></sub> <var>m<sub>t</sub></var>), &nbsp; <var>r</var> = "
        "&delta; &minus; 0.03 max(<var>L</var> &minus; 200, 0)/100 &minus; <var>s</var>",
        trip,
        _loop("proposer", texts, [table]),
        controls,
        _lab_block(results, ["proposer"]),
    )


# --------------------------------------------------------------------------- 113
def _mm(data: Mapping[str, Any], results: Mapping[str, LabResult]) -> str:
    w = data["worked"]
    rows = [f"C{i + 1}" for i in range(len(w["executed"]))]
    what = ["draws the figure", "a stray bracket", "draws a trivial figure", "crashes at runtime"]
    shown = list(zip(w["easy"], w["consistency"], strict=True))
    coder = _table(
        "The coder's four programs",
        rows,
        [
            Col(0, "program", "program", [escape(x) for x in what]),
            Col(0, "renders", "renders", [flag(e, "yes", "no") for e in w["executed"]]),
            Col(0, "syntax", "syntax error", [flag(not x, "no", "yes") for x in w["syntax"]]),
            Col(1, "easy", "easy accuracy <var>s</var>", [fmt(s) for s, _ in shown]),
            Col(1, "consistency", "consistency <var>c</var>", [fmt(c) for _, c in shown]),
            Col(
                2,
                "reward",
                "reward <var>r<sub>C</sub></var>",
                [num(x, f"coder-{i}") for i, x in enumerate(w["coder"])],
            ),
            Col(
                3,
                "advantage",
                "advantage",
                [num(x, f"coder-adv-{i}") for i, x in enumerate(w["coder_advantage"])],
            ),
        ],
    )
    rendered = [rows[i] for i, e in enumerate(w["executed"]) if e]
    solver = _table(
        f"The solver on the rendered images ({', '.join(rendered)}): K = 4 answers, "
        f"&alpha; = {w['alpha']:g}",
        [f"image {r}" for r in rendered],
        [
            Col(3, "answers", "answers", [ids(a) for a in w["answers"]]),
            Col(
                3,
                "formatted",
                "formatted",
                [
                    '<span class="ids">'
                    + " ".join("&#10003;" if f else "&#10007;" for f in fs)
                    + "</span>"
                    for fs in w["format"]
                ],
            ),
            Col(3, "silver", "silver label", [str(y) for y in w["silver"]]),
            Col(
                3,
                "reward",
                "reward <var>r<sub>S</sub></var>",
                [
                    '<span class="ids">'
                    + " ".join(num(x, f"solver-{i}-{j}") for j, x in enumerate(r))
                    + "</span>"
                    for i, r in enumerate(w["solver"])
                ],
            ),
        ],
        stage=3,
    )
    texts = [
        "The coder, the model being trained, writes programs that render a figure, and "
        "each is run: C2 has a syntax error, C4 crashes at runtime, C1 and C3 render.",
        "Frozen solvers look at each rendered image: <var>s</var> is their accuracy on "
        "easy questions about it, <var>c</var> the consistency of their answers to a hard "
        "one. A failed render has no image and no scores (&mdash;; the reward ignores them).",
        "<code>coder_rewards</code>: a render earns 1 + <var>s</var> + min(<var>c</var>, 1 "
        "&minus; <var>c</var>), so C1 (<var>s</var> = 0.8, <var>c</var> = 0.5) earns 2.3 and "
        "the too-easy C3 gets no difficulty credit; a failure earns &minus;0.1 and a syntax "
        "error costs 0.05 more, so C2 earns &minus;0.15.",
        "Only rendered images go on to the solver. It answers four times per image; the "
        "silver label is the majority of all four (ties: smallest id), and "
        "<code>solver_rewards</code> pays &alpha; = 0.9 for agreeing plus 0.1 for the format: "
        "agreeing unformatted earns 0.9, a formatted disagreement 0.1.",
    ]
    answers = "".join(
        '<div class="sample">'
        + select(f"sv-a{k}", f"answer {k + 1}", range(4), a)
        + checkbox(f"sv-f{k}", "formatted", f)
        + score(f"sv-r{k}", "reward", big=False)
        + "</div>"
        for k, (a, f) in enumerate(zip([2, 2, 1, 2], [False, True, True, True], strict=True))
    )
    controls = panel(
        "The coder's reward:",
        "coder_rewards",
        checkbox("cd-exec", "the program renders", True)
        + checkbox("cd-syntax", "it has a syntax error", False)
        + slider("cd-easy", "easy-question accuracy <var>s</var>", "coder.easy", 16, 21)
        + slider("cd-c", "hard-question consistency <var>c</var>", "coder.consistency", 10, 21)
        + score("cd-r", "reward <var>r<sub>C</sub></var> =")
        + '<p class="term" id="cd-ignored" aria-live="polite"></p>'
        + '<svg class="plot" id="cd-plot" viewBox="0 0 420 260" role="img" '
        'aria-label="coder reward against consistency c"></svg>'
        + '<p class="legend">The reward against <var>c</var>: the difficulty credit '
        "min(<var>c</var>, 1 &minus; <var>c</var>) peaks at an even split.</p>",
        "Both penalties can apply at once.",
    ) + panel(
        "The solver's reward, K = 4 answers:",
        "solver_rewards",
        f'<div class="samples">{answers}</div>'
        + slider("sv-alpha", "weight &alpha; on agreement", "solver.alpha", 9, 11)
        + score("sv-silver", "silver label (majority of all four) ="),
        "Untick a format box: that answer loses 1 &minus; &alpha;, it keeps its agreement.",
    )
    trip = (
        "<p><strong>Format is additive for the solver, a gate for the R-Zero "
        "challenger.</strong> <var>r<sub>S</sub></var> = &alpha;&middot;agree + (1 &minus; "
        "&alpha;)&middot;format, so an unformatted answer that agrees still earns &alpha; "
        "and a formatted one that disagrees earns 1 &minus; &alpha;. The silver label "
        "counts all <var>K</var> answers, formatted or not.</p>"
        "<p><strong>The coder's penalties add up</strong>: a failed render earns &minus;0.1 "
        "whatever its visual scores, and a syntax error takes 0.05 more on top. Difficulty "
        "is the continuous min(<var>c</var>, 1 &minus; <var>c</var>) and easy accuracy is "
        "not capped.</p>"
    )
    return _section(
        "mm",
        "MM-Zero &middot; problem 113 &middot; coder and solver",
        "Coder execution feedback and the solver's silver label",
        "<var>r<sub>C</sub></var> = 1<sub><var>e</var></sub>[1 + <var>s</var> + "
        "min(<var>c</var>, 1 &minus; <var>c</var>)] &minus; "
        "0.1&middot;1<sub>&not;<var>e</var></sub> &minus; 0.05&middot;1<sub>syntax</sub>, "
        "&nbsp; <var>r<sub>S</sub></var> = "
        "&alpha;&middot;1[<var>a</var> = <var>y&#771;</var>] + (1 &minus; &alpha;)<var>v</var>",
        trip,
        _loop("mm", texts, [coder, solver]),
        controls,
        _lab_block(results, ["coder", "solver"]),
    )


#: (section id, title for the navigation), in page order.
SECTIONS = (
    ("challenger", "R-Zero challenger"),
    ("pseudo", "R-Zero pseudo-labels and band"),
    ("proposer", "G-Zero hint-delta / proposer"),
    ("mm", "MM-Zero coder / solver"),
)


def sections(data: Mapping[str, Any], results: Mapping[str, LabResult]) -> str:
    """The four sections' HTML."""
    return (
        _challenger(data["challenger"], results)
        + _pseudo(data["pseudo"], results)
        + _proposer(data["proposer"], results)
        + _mm(data["mm"], results)
    )
