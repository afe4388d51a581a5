"""Every zero_text check runs in linear time on adversarial model output.

Format gates, answer extraction and normalisation run on untrusted text; the
published rules are backtracking regular expressions, and the first version
of this package inherited a cubic one (``"<think>" + "</think> \\boxed{" *
800`` took a second, 8x per doubling). For each function and several
adversarial shapes (each one a blow-up of some backtracking formulation), a
1 MB reply must take well under a second, and doubling the input may at most
multiply the time by 2.5 (a quadratic would give 4). Timings are the best of
three CPU (process) times, so that other jobs on a shared machine barely move
them, and a failed comparison is measured again before it counts.

The linear normalisation is also checked against the definition it replaces:
the wrapper substitution repeated until nothing changes.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zero_text as zt

MB = 1_000_000
LIMIT_SECONDS = 0.5
MAX_DOUBLING_RATIO = 2.5
TIMING_FLOOR = 0.05  # below this the ratio is timer noise; the absolute bound still holds


def repeat(unit: str, size: int, head: str = "", tail: str = "") -> str:
    """``head`` + ``unit`` repeated to about ``size`` characters + ``tail``."""
    return head + unit * max(1, size // len(unit)) + tail


def nested(open_: str, close: str, size: int, middle: str = "x") -> str:
    depth = max(1, size // (len(open_) + len(close)))
    return open_ * depth + middle + close * depth


# shape name -> builder of a text of about `size` characters
Builder = Callable[[int], str]
SOLVER_SHAPES: dict[str, Builder] = {
    "issue reproducer": lambda n: repeat("</think> \\boxed{", n, head="<think>"),
    "boxes, no closing brace": lambda n: repeat("\\boxed{", n, head="<think></think>"),
    "closing tags only": lambda n: repeat("</think>", n, head="<think>"),
    "space run, no bracket": lambda n: repeat(" ", n, head="<think>", tail="x"),
    "space runs around slashes": lambda n: repeat(" / ", n, head="<think>"),
    "think tags and spaces": lambda n: repeat("</think>   ", n, head="<think>", tail="}x"),
    "boxes then prose": lambda n: repeat("</think>\\boxed{}", n, head="<think>", tail="x"),
}
TAG_SHAPES: dict[str, Builder] = {
    "opening tags only": lambda n: repeat("<question>", n),
    "opening hint tags": lambda n: repeat("<hint><question>", n, head="<question>q</question>"),
    "unclosed question": lambda n: repeat("x", n, head="<question>", tail="<hint>h</hint>"),
    "placeholder brackets": lambda n: repeat(
        "[ your ", n, head="<hint>h</hint><question>", tail="</question>"
    ),
    "placeholder words": lambda n: repeat(
        "your question   ", n, head="<hint>h</hint><question>", tail="</question>"
    ),
    "placeholder spaces": lambda n: repeat(
        " ", n, head="<hint>h</hint><question>your", tail="question</question>"
    ),
    "boxes": lambda n: repeat("\\boxed{", n, head="<question>q</question>"),
}
BOX_SHAPES: dict[str, Builder] = {
    "boxes": lambda n: repeat("\\boxed{", n),
    "boxes with spaces": lambda n: repeat("\\boxed ", n),
    "backslashes": lambda n: repeat("\\", n, head="\\boxed{"),
    "opening braces": lambda n: repeat("{", n, head="\\boxed{"),
    "deep box": lambda n: nested("{", "}", n, middle="1") + "\\boxed{" + nested("{", "}", n),
}
NORMALIZE_SHAPES: dict[str, Builder] = {
    "nested wrappers": lambda n: nested("\\text{", "}", n),
    "nested wrappers with text": lambda n: nested("\\text{a", "}", n, middle=""),
    "nested wrappers with spaces": lambda n: nested("\\mbox { ", "}", n),
    "flat wrappers": lambda n: repeat("\\text{\\textbf{}}", n),
    "wrappers doomed by a brace": lambda n: repeat("\\text{a{", n),
    "joined commands": lambda n: repeat("\\te\\text{x}t{y}", n),
    "command chain": lambda n: repeat("\\text", n // 2) + repeat("{}", n // 2),
    "dollars": lambda n: repeat("$", n),
    "sizing commands": lambda n: repeat("\\left.\\right", n),
    "whitespace": lambda n: repeat(" \t", n, head="a", tail="b."),
}


def best_time(fn: Callable[[str], object], text: str, runs: int = 3) -> float:
    """Best of ``runs`` CPU times (process time: other jobs' load does not count)."""
    best = float("inf")
    for _ in range(runs):
        start = time.process_time()
        fn(text)
        best = min(best, time.process_time() - start)
    return best


def assert_linear(fn: Callable[[str], object], build: Builder, attempts: int = 3) -> None:
    """1 MB in under LIMIT_SECONDS, and at most MAX_DOUBLING_RATIO from 0.5 MB to 1 MB.

    A super-linear cost fails every attempt; a measurement disturbed by other
    jobs (cache contention moves even CPU time) gets re-measured.
    """
    half_text, full_text = build(MB // 2), build(MB)
    for _ in range(attempts):
        half = best_time(fn, half_text)
        full = best_time(fn, full_text)
        fast = full < LIMIT_SECONDS
        linear = full <= TIMING_FLOOR or full / max(half, 1e-9) <= MAX_DOUBLING_RATIO
        if fast and linear:
            return
    assert fast, f"1 MB took {full:.3f} s"
    raise AssertionError(
        f"doubling the input multiplied the time by {full / half:.2f} "
        f"({half:.4f} s -> {full:.4f} s)"
    )


BOXED_SHAPES: dict[str, Builder] = {
    **BOX_SHAPES,
    "boxed nested wrappers": lambda n: "\\boxed{" + nested("\\text{a", "}", n, middle="") + "}",
}


def one(check: Callable) -> Callable[[str], object]:
    return lambda text: check([text])


def grouped(policy: str) -> Callable[[str], object]:
    return lambda text: zt.group_answers([[text]], unparseable=policy)


FUNCTIONS: list[tuple[str, Callable[[str], object], dict[str, Builder]]] = [
    ("r_zero_solver", one(zt.r_zero_solver_format_ok), SOLVER_SHAPES),
    ("mm_zero_solver", one(zt.mm_zero_solver_format_ok), SOLVER_SHAPES),
    ("challenger", one(zt.r_zero_challenger_format_ok), TAG_SHAPES),
    ("g_zero", one(zt.g_zero_proposer_format_ok), TAG_SHAPES),
    ("extract_tag", lambda text: zt.extract_tag(text, "question"), TAG_SHAPES),
    ("extract_boxed", zt.extract_boxed, BOX_SHAPES),
    ("normalize_answer", zt.normalize_answer, NORMALIZE_SHAPES),
    *[(f"group_answers {p}", grouped(p), BOXED_SHAPES) for p in ("distinct", "bucket", "r_zero")],
]
CASES = [
    (f"{name}: {shape}", fn, build)
    for name, fn, shapes in FUNCTIONS
    for shape, build in shapes.items()
]


@pytest.mark.parametrize(("name", "fn", "build"), CASES, ids=[c[0] for c in CASES])
def test_one_megabyte_adversarial_reply_is_linear(name, fn, build):
    assert_linear(fn, build)


def test_the_issue_reproducer_is_instant():
    reply = "<think>" + "</think> \\boxed{" * 800
    start = time.perf_counter()
    assert zt.r_zero_solver_format_ok([reply]).tolist() == [False]
    assert time.perf_counter() - start < 0.05


# --------------------------------------------------------------------------- equivalence


WRAPPERS = re.compile(r"\\(?:text|textbf|textrm|mathrm|mbox)\s*\{([^{}]*)\}")


def unwrap_by_definition(s: str) -> str:
    """The rule as first written (quadratic on deep nesting): substitute until fixed."""
    previous = None
    while previous != s:
        previous = s
        s = WRAPPERS.sub(r"\1", s)
    return s


NORMALIZE_FRAGMENTS = [
    "\\text",
    "\\textbf",
    "\\textrm",
    "\\mathrm",
    "\\mbox",
    "\\te",
    "xt",
    "t",
    "bf",
    "\\",
    "{",
    "}",
    "{}",
    " ",
    "\n",
    "a",
    "$",
    ".",
    "\\left",
    "\\right",
    "\\,",
]


@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(NORMALIZE_FRAGMENTS), max_size=40).map("".join))
def test_linear_unwrapping_equals_the_repeated_substitution(text):
    from zero_text.answers import _unwrap_text_commands

    assert _unwrap_text_commands(text) == unwrap_by_definition(text)


def test_unwrapping_examples():
    from zero_text.answers import _unwrap_text_commands

    cases = {
        "\\te\\text{x}t{y}": "y",  # a removal joins a new command
        "\\text{a{b}c}": "\\text{a{b}c}",  # a brace that stays blocks the wrapper
        "\\text{a\\text{b}c}": "abc",
        "\\text{\\frac{1}{2}}": "\\text{\\frac{1}{2}}",
        "\\mbox {\\textbf{\\text{deep}}}": "deep",
        "\\text{unclosed \\text{x}": "\\text{unclosed x",
    }
    for raw, expected in cases.items():
        assert unwrap_by_definition(raw) == expected
        assert _unwrap_text_commands(raw) == expected


@settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.sampled_from(["{", "}", "\\", "\\{", "\\}", "a", "é", " "]), max_size=60).map(
        "".join
    ),
    st.booleans(),
)
def test_vectorised_brace_matching_equals_the_scan(body, escapes):
    # extract_boxed scans the first characters in Python and hands a box still open
    # to NumPy; both must find the same closing brace (on long bodies too)
    from zero_text.answers import _group_end, _scan_group_end, _vector_group_end

    for text in (body, "x" * 300 + body, body * 12):
        expected = _scan_group_end(text, escapes=escapes, limit=len(text))
        assert _vector_group_end(text, escapes=escapes) == expected
        assert _group_end(text, escapes=escapes) == expected
