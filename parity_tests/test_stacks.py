"""zero_stacks: the Tunix / TRL rewards give the issue-18 reproducers' right values,
equal the core functions (zero_text + zero_jax / zero_torch called here directly) on
random batches, hand out only numbers the library computed (no formula in
zero_stacks), pickle and deep-copy, reject bad input clearly; our Tunix estimator
equals Tunix's own where that one is defined, and both examples train a few steps."""

from __future__ import annotations

import ast
import copy
import json
import os
import pickle
import subprocess
import sys
import warnings
from decimal import Decimal
from pathlib import Path
from typing import Any

import jax
import numpy as np
import pytest
import torch

import zero_jax
import zero_stacks
import zero_text
import zero_torch
from parity_tests import cases as oracle
from parity_tests.test_text_published import mathruler_extract_boxed_content, r_zero_vote
from zero_contracts import VoteMetrics
from zero_stacks import trl as ztrl
from zero_stacks import tunix as ztunix

ROOT = Path(__file__).resolve().parents[1]
STACKS = [pytest.param(ztunix, zero_jax, id="tunix"), pytest.param(ztrl, zero_torch, id="trl")]
POLICIES = ["distinct", "bucket", "r_zero"]


def core(lib, fn, *args, **kwargs):
    """``lib.fn`` on NumPy arrays (as tensors for zero_torch), NumPy result(s) back."""
    if lib is zero_torch:
        args = tuple(torch.from_numpy(a) if isinstance(a, np.ndarray) else a for a in args)
    out = getattr(lib, fn)(*args, **kwargs)
    if isinstance(out, tuple):
        return tuple(np.asarray(o) for o in out)
    return np.asarray(out)


def weight(alpha: float) -> float:
    """``1 - alpha`` exact in decimal (what the library promises; 0.9 -> 0.1)."""
    return float(Decimal(1) - Decimal(repr(alpha)))


def parsed(reply: str, policy: str) -> bool:
    """Does a reply carry an answer?  zero_text's documented rule for "distinct" /
    "bucket" (a complete box, non-empty once normalised); for "r_zero" published
    R-Zero's: mathruler's extractor gives a non-empty string ("None" for no box)."""
    if policy == "r_zero":
        return mathruler_extract_boxed_content(reply) != ""
    box = zero_text.extract_boxed(reply)
    return box is not None and zero_text.normalize_answer(box) != ""


def chat(texts):
    """TRL's conversational completions: one assistant message each."""
    return [[{"role": "assistant", "content": t}] for t in texts]


# ------------------------------------------------------------------ reproducers


@pytest.mark.parametrize("stack, lib", STACKS)
def test_group_without_an_answer_pays_nobody(stack, lib):
    """Issue 18, reproducer 1: no parsed answer in a group -> 0 for all its completions
    (the old code paid the first completion, chosen by position)."""
    replies = ["no", "answer", "here", "\\boxed{}"]
    assert stack.SolverReward(num_generations=4)(["q"] * 4, replies) == [0.0] * 4
    assert stack.SolverReward(num_generations=1)(["q"], ["no box"]) == [0.0]
    assert stack.SolverReward(num_generations=4, alpha=0.9)(["q"] * 4, replies) == [0.0] * 4
    thought = ["<think>x</think>\\boxed{}"] * 3  # format ok, no answer: still 0
    assert stack.SolverReward(3, alpha=0.9)(["q"] * 3, thought) == [0.0] * 3
    # Next to a group with an answer, in any order.
    got = stack.SolverReward(2)(["a", "a", "b", "b"], ["\\boxed{ }", "x", "y", "\\boxed{7}"])
    assert got == [0.0, 0.0, 0.0, 1.0]
    # Published R-Zero (unparseable="r_zero"): a missing box is the answer "None", which
    # wins here; the empty box is skipped.  A group of empty boxes has no label (p = 0).
    label, p = r_zero_vote(replies, lambda a, b: a == b)
    assert (label, p) == ("None", 0.75)
    r_zero = stack.SolverReward(4, unparseable="r_zero")
    assert r_zero(["q"] * 4, replies) == [1.0, 1.0, 1.0, 0.0]
    assert r_zero_vote(["\\boxed{}"] * 4, lambda a, b: a == b) == ("", 0.0)
    assert r_zero(["q"] * 4, ["\\boxed{}", "\\boxed{ }", "\\boxed{}", "\\boxed{}"]) == [0.0] * 4


@pytest.mark.parametrize("stack, lib", STACKS)
def test_hint_length_in_characters(stack, lib):
    """Issue 18, reproducer 2: a 450-character one-word hint costs
    0.03 * (450 - 200) / 100 = 0.075 (G-Zero: len(hint), target 200)."""
    hint = "a" * 450
    text = f"<question>What is 2+2?</question><hint>{hint}</hint>"
    zeros = (np.zeros((1, 3)), np.zeros((1, 3)), np.ones((1, 3), dtype=bool))
    got = stack.ProposerReward(lambda q, h: zeros, 1)(["p"], [text])
    delta, share = 0.0, 1.0  # equal log-probs; the only proposal is its own cluster
    assert got == pytest.approx([delta - 0.03 * (len(hint) - 200) / 100 - share], abs=1e-15)
    assert got == pytest.approx([-1.075], abs=1e-15)
    # Another count (e.g. a tokenizer's) still plugs in.
    words = stack.ProposerReward(lambda q, h: zeros, 1, hint_length=lambda h: len(h.split()))
    assert words(["p"], [text]) == [-1.0]


@pytest.mark.parametrize("stack, lib", STACKS)
def test_frozen_label_format_term_is_the_library_decimal(stack, lib):
    """Issue 18, reproducer 3: 1 - alpha is the library's exact decimal."""
    reward = stack.SolverReward(num_generations=1, alpha=0.9, labels_column="answer")
    assert reward(["q"], ["<think>x</think>\\boxed{3}"], answer=["4"]) == [0.1]
    assert reward(["q"], ["<think>x</think>\\boxed{4}"], answer=["4"]) == [1.0]
    assert reward(["q"], ["\\boxed{4}"], answer=["4"]) == [0.9]
    assert reward(["q"], ["no box"], answer=["4"]) == [0.0]


def test_tunix_float32_rewards_are_the_library_decimals():
    """With x64 off (JAX's default, the Tunix example's setting) zero_jax computes in
    float32; the list holds the shortest decimals of those float32 numbers."""
    text = "<question>q</question><hint>" + "a" * 450 + "</hint>"
    zeros = (np.zeros((1, 3)), np.zeros((1, 3)), np.ones((1, 3), dtype=bool))
    with jax.enable_x64(False):
        frozen = ztunix.SolverReward(1, alpha=0.9, labels_column="answer")
        got = frozen(["q"], ["<think>x</think>\\boxed{3}"], answer=["4"])
        proposer = ztunix.ProposerReward(lambda q, h: zeros, 1)(["p"], [text])
        want = zero_jax.proposer_rewards(np.zeros(1), np.array([450]), np.ones(1), np.ones(1, bool))
    assert got == [0.1] and proposer == [-1.075]
    assert np.asarray(want).dtype == np.float32
    assert np.float32(proposer[0]) == np.asarray(want)[0]  # the same float32


# ----------------------------------------------------- pickle, deepcopy, __name__


def solver_fn(questions, k):  # module-level callables pickle by reference
    return [["\\boxed{1}"] * (k - 1) + ["\\boxed{2}"] for _ in questions]


def logprobs_fn(questions, hints):
    m = len(questions)
    base = np.linspace(-2.0, -1.0, 3 * m).reshape(m, 3)
    return base, base + 0.25, np.ones((m, 3), dtype=bool)


def execute_fn(codes):
    return [zero_stacks.CoderFeedback(len(c) % 2 == 0, 0.5, 0.25, False) for c in codes]


def has_box(texts):
    return np.array([zero_text.extract_boxed(t) is not None for t in texts])


def same_lower(a, b):
    return a.lower() == b.lower()


def every_reward(stack):
    """(reward, prompts, completions, columns) for each reward class and main option."""
    solver_batch = (["p"] * 3 + ["q"] * 3, ["\\boxed{1}", "\\boxed{2}", "\\boxed{1}"] * 2)
    cols = {"answer": ["2"] * 3 + ["1"] * 3, "p": [0.5] * 3 + [0.9] * 3}
    challenger = ["<question>What is 1+1?</question> \\boxed{2}", "no question"]
    proposer = ["<question>What is 1+1?</question><hint>add</hint>", "<question>x</question>"]
    return [
        (stack.SolverReward(3), *solver_batch, {}),
        (
            stack.SolverReward(3, alpha=0.8, format=has_box, equivalence=same_lower),
            *solver_batch,
            {},
        ),
        (
            stack.SolverReward(3, labels_column="answer", alpha=0.9, format="mm_zero"),
            *solver_batch,
            cols,
        ),
        (
            stack.SolverReward(3, labels_column="answer", consistency_column="p", band=True),
            *solver_batch,
            cols,
        ),
        (stack.ChallengerReward(solver_fn, 2, num_samples=4), ["a", "a"], challenger, {}),
        (stack.ChallengerReward(solver_fn, 1, strength=0.5), ["a", "b"], challenger, {}),
        (stack.ProposerReward(logprobs_fn, 2), ["a", "a"], proposer, {}),
        (stack.ProposerReward(logprobs_fn, 1, hint_length=len), ["a", "b"], proposer, {}),
        (stack.CoderReward(execute_fn, 2), ["a", "a"], ["print(1)", "x"], {}),
        (stack.CoderReward(execute_fn), ["a", "a"], ["print(1)", "x"], {"num_generations": 2}),
    ]


NAMES = {
    "SolverReward": "zero_solver",
    "ChallengerReward": "zero_challenger",
    "ProposerReward": "zero_proposer",
    "CoderReward": "zero_coder",
}


@pytest.mark.parametrize("stack, lib", STACKS)
def test_rewards_pickle_deepcopy_and_carry_a_name(stack, lib):
    for reward, prompts, completions, columns in every_reward(stack):
        assert reward.__name__ == NAMES[type(reward).__name__]
        assert type(reward).__module__ == stack.__name__
        want = reward(prompts, completions, **columns)
        for twin in (pickle.loads(pickle.dumps(reward)), copy.deepcopy(reward)):
            assert type(twin) is type(reward) and twin is not reward
            assert twin.options == reward.options and repr(twin) == repr(reward)
            assert twin.__name__ == reward.__name__
            assert twin(prompts, completions, **columns) == want
    assert "labels_column='answer'" in repr(stack.SolverReward(2, labels_column="answer"))


def test_reward_options_are_fixed_and_the_neutral_classes_need_a_stack():
    reward = ztrl.SolverReward(2, alpha=0.5)
    with pytest.raises(AttributeError, match="build a new reward"):
        reward.alpha = 2.0
    with pytest.raises(TypeError, match=r"zero_stacks\.trl\.SolverReward"):
        zero_stacks.SolverReward(2)
    assert issubclass(ztunix.SolverReward, zero_stacks.SolverReward)
    assert issubclass(ztrl.CoderReward, zero_stacks.StackReward)


# ----------------------------------------------- adapters equal the core functions


FORMS = [
    "<think>so</think> the answer is \\boxed{{{}}}",
    "\\boxed{{{}}}",
    "<think>hmm</think>\\boxed{{ {} }}.",
    "<think>ok</think>\n\\boxed{{{}}}",
    "it is {} (no box)",  # no box ("None" under r_zero)
    "<think>x</think>\\boxed{{}} {}",  # empty box
    "\\boxed{{ {}",  # unclosed box ("None" under r_zero)
]
NO_ANSWER = [4, 5, 6]  # the forms without a zero_text answer


def random_batch(seed: int, b: int, g: int):
    """B groups of G replies: mixed groups, groups of one answer, and groups (at least
    two) with no answer at all, one of them of empty boxes only."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(b):
        vals = rng.integers(0, 3, size=g)
        if i == 0:
            forms = rng.choice(NO_ANSWER, size=g)
        elif i == 1:
            forms = np.full(g, 5)
        else:
            forms = rng.integers(0, len(FORMS), size=g)
        rows.append([FORMS[f].format(v) for f, v in zip(forms, vals, strict=True)])
    order = rng.permutation(b)
    return [rows[i] for i in order]


def core_solver(lib, rows, policy, *, alpha=None, labels=None, band=None, consistency=None):
    """The solver reward from zero_text + the core library, called here directly."""
    texts = [t for row in rows for t in row]
    g = len(rows[0])
    flags = zero_text.r_zero_solver_format_ok(texts).reshape(-1, g)
    if labels is None:
        ids, n = zero_text.group_answers(rows, unparseable=policy)
        label, p = core(lib, "consensus", ids, n)
        if alpha is None:
            scores = core(lib, "pseudo_rewards", ids, label)
        else:
            scores = core(lib, "solver_rewards", ids, flags, n, alpha)
    else:
        boxed = [["\\boxed{" + lab + "}", *row] for lab, row in zip(labels, rows, strict=True)]
        ids, n = zero_text.group_answers(boxed, unparseable=policy)
        agree = core(lib, "pseudo_rewards", ids[:, 1:], ids[:, 0])
        scores = agree if alpha is None else alpha * agree + weight(alpha) * flags
        p = np.asarray(consistency)
    answered = np.array([any(parsed(t, policy) for t in row) for row in rows])
    keep = answered if band is None else answered & oracle.curriculum_mask(p, *band)
    return np.where(keep[:, None], scores, 0.0)


@pytest.mark.parametrize("stack, lib", STACKS)
@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("g", [1, 3, 5])
def test_solver_equals_core_on_random_batches(stack, lib, policy, g):
    b = 7
    for seed in range(2):
        rows = random_batch(seed + 10 * g, b, g)
        texts = [t for row in rows for t in row]
        prompts = [f"question {i}" for i in range(b) for _ in range(g)]
        completions = chat(texts) if seed else texts  # conversational, then plain
        answered = np.array([any(parsed(t, policy) for t in row) for row in rows])
        assert (~answered).sum() >= (2 if policy != "r_zero" else 1)

        online = stack.SolverReward(g, unparseable=policy)(prompts, completions)
        np.testing.assert_array_equal(np.reshape(online, (b, g)), core_solver(lib, rows, policy))

        for alpha in (0.9, 0.7):
            got = stack.SolverReward(g, unparseable=policy, alpha=alpha)(prompts, completions)
            want = core_solver(lib, rows, policy, alpha=alpha)
            np.testing.assert_array_equal(np.reshape(got, (b, g)), want)

        band = (0.3, 0.7)
        got = stack.SolverReward(g, unparseable=policy, band=True, low=band[0], high=band[1])
        want = core_solver(lib, rows, policy, band=band)
        np.testing.assert_array_equal(np.reshape(got(prompts, completions), (b, g)), want)

        # Frozen labels, given in the forms a dataset holds them.
        rng = np.random.default_rng(seed)
        clean = [str(v) for v in rng.integers(0, 3, size=b)]
        given = [[f"${c}$", int(c), f"so \\boxed{{{c}}}", c][i % 4] for i, c in enumerate(clean)]
        share = rng.choice([0.2, 0.5, 0.75, 0.9], size=b)
        columns = {
            "answer": [lab for lab in given for _ in range(g)],
            "p": [float(s) for s in share for _ in range(g)],
        }
        for alpha in (None, 0.9, 0.35):
            reward = stack.SolverReward(g, unparseable=policy, labels_column="answer", alpha=alpha)
            got = np.reshape(reward(prompts, completions, **columns), (b, g))
            want = core_solver(lib, rows, policy, alpha=alpha, labels=clean)
            np.testing.assert_array_equal(got, want)
        reward = stack.SolverReward(
            g, unparseable=policy, labels_column="answer", consistency_column="p", band=True
        )
        got = np.reshape(reward(prompts, completions, **columns), (b, g))
        want = core_solver(lib, rows, policy, labels=clean, band=(0.25, 0.75), consistency=share)
        np.testing.assert_array_equal(got, want)


def test_solver_online_known_values():
    prompts = ["p"] * 4 + ["q"] * 4
    completions = [
        "\\boxed{2}",
        "\\boxed{3}",
        "\\boxed{ 2 }",
        "none",
        "\\boxed{7}",
        "\\boxed{8}",
        "\\boxed{8}",
        "\\boxed{7}",
    ]
    for stack in (ztunix, ztrl):
        got = stack.SolverReward(4)(prompts, completions)
        # group 1: "2" wins 2 of 4; group 2: a 2-2 tie goes to "7", seen first.
        assert got == [1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 1.0]


def test_solver_chat_prompts_and_tunix_num_generations():
    got = ztrl.SolverReward(3)(
        [[{"role": "user", "content": "hi"}]] * 3, chat(["\\boxed{4}", "\\boxed{5}", "\\boxed{4}"])
    )
    assert got == [1.0, 0.0, 1.0]
    # Tunix fills a num_generations parameter from its GRPOConfig; the reward may omit it.
    assert ztunix.SolverReward()(["p"] * 3, ["\\boxed{1}"] * 3, num_generations=3) == [1.0] * 3


@pytest.mark.parametrize("stack, lib", STACKS)
@pytest.mark.parametrize("policy", ["distinct", "r_zero"])
def test_challenger_equals_core(stack, lib, policy):
    batch = zero_text.load_example_batch()
    outputs, replies = batch["challenger_outputs"], batch["solver_replies"]
    valid = zero_text.r_zero_challenger_format_ok(outputs)
    questions = [  # the clustering key: "" for a malformed output (published R-Zero)
        (zero_text.extract_tag(o, "question") or "") if v else ""
        for o, v in zip(outputs, valid, strict=True)
    ]
    k = len(replies[0])
    # One well-formed question whose replies hold no answer: its consistency is 0.
    mute = int(np.flatnonzero(valid)[0])
    replies = [["no box"] * k if i == mute else r for i, r in enumerate(replies)]
    by_question = {q: r for q, r, v in zip(questions, replies, valid, strict=True) if v}
    asked = []

    def solver(qs, n):
        asked.append(list(qs))
        return [by_question[q][:n] for q in qs]

    reward = stack.ChallengerReward(solver, 2, num_samples=k, unparseable=policy)
    got = reward(["ask"] * len(outputs), chat(outputs))
    assert asked == [[q for q, v in zip(questions, valid, strict=True) if v]]  # invalid: not asked
    clusters, _ = zero_text.bleu_clusters(questions, threshold=0.5)
    rows = [r for r, v in zip(replies, valid, strict=True) if v]
    ids, n = zero_text.group_answers(rows, unparseable=policy)
    _, p_valid = core(lib, "consensus", ids, n)
    answered = np.array([any(parsed(t, policy) for t in row) for row in rows])
    p = np.zeros(len(outputs))
    p[valid] = np.where(answered, p_valid, 0.0)
    want = core(lib, "challenger_rewards", p, clusters, valid, 1.0)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(got, oracle.challenger_rewards(p, clusters, valid), atol=1e-12)
    assert got[-1] == 0.0 and max(got) > 0  # output 7 is malformed
    if policy == "distinct":
        assert got[mute] == 0.0  # p = 0: 1 - 2|0 - 1/2| = 0
    else:  # R-Zero: "no box" is the answer "None", all agree: p = 1
        assert p[mute] == 1.0


Q1 = "What is the sum of the first ten positive integers?"


@pytest.mark.parametrize("stack, lib", STACKS)
def test_a_malformed_duplicate_stays_out_of_the_valid_questions_cluster(stack, lib):
    """Published R-Zero clusters a malformed output as the question "" and published
    G-Zero as the fixed key "__INVALID__": alone either way, so a truncated or
    placeholder copy of a well-formed question does not raise that question's share.
    Four outputs, all alone: shares 1/4."""
    texts = [
        f"<question>{Q1}</question> \\boxed{{55}}",
        f"<question>{Q1} Let",  # cut off: no </question>, not well formed
        "<question>How many primes are there below twenty?</question> \\boxed{8}",
        "<question>Compute seven times eight.</question> \\boxed{56}",
    ]
    reward = stack.ChallengerReward(
        lambda qs, k: [["\\boxed{1}", "\\boxed{2}"]] * len(qs), 4, num_samples=2
    )
    # p = 1/2 for every asked question: 1 - 2|p - 1/2| - 1/4; 0 for the malformed one
    assert reward(["p"] * 4, chat(texts)) == [0.75, 0.0, 0.75, 0.75]

    proposals = [
        f"<question>{Q1}</question><hint>Use the formula n(n+1)/2.</hint>",
        f"<question>{Q1}</question><hint>[your hint]</hint>",  # placeholder: malformed
        "<question>How many primes are there below twenty?</question><hint>List them.</hint>",
        "<question>Compute seven times eight.</question><hint>Multiply.</hint>",
    ]

    def logprobs(questions, hints):  # delta = 0 for every well-formed proposal
        return (
            np.zeros((len(questions), 3)),
            np.zeros((len(questions), 3)),
            np.ones((len(questions), 3), dtype=bool),
        )

    # G-Zero: delta - share for a well-formed proposal, -1 - share for a malformed one
    got = stack.ProposerReward(logprobs, 4)(["p"] * 4, chat(proposals))
    assert got == [-0.25, -1.25, -0.25, -0.25]


@pytest.mark.parametrize("stack, lib", STACKS)
def test_proposer_equals_core(stack, lib):
    rng = np.random.default_rng(0)
    texts = [
        "<question>What is 2+2?</question><hint>add the numbers</hint>",
        "<question>What is 2+2?</question><hint>" + "word " * 250 + "</hint>",
        "<question>Name a prime above 10.</question> no hint",
        "<question>How many sides has a cube?</question><hint>count faces</hint>",
    ]
    t = 6
    base = rng.normal(size=(3, t))
    hinted = rng.normal(size=(3, t))
    mask = rng.random((3, t)) < 0.7

    def logprobs(questions, hints):
        assert len(questions) == 3 and hints[0] == "add the numbers"
        if stack is ztrl:  # tensors of the stack's library (with grad) are fine too
            return torch.tensor(base, requires_grad=True), torch.tensor(hinted), torch.tensor(mask)
        return base, hinted, mask

    got = stack.ProposerReward(logprobs, 2)(["p"] * 2 + ["q"] * 2, chat(texts))
    valid = zero_text.g_zero_proposer_format_ok(texts)
    questions = [
        zero_text.extract_tag(x, "question") if v else "" for x, v in zip(texts, valid, strict=True)
    ]
    hints = [zero_text.extract_tag(x, "hint") or "" for x in texts]
    _, shares = zero_text.bleu_clusters(questions, threshold=0.5)
    delta = np.zeros(4)
    delta[valid] = core(lib, "hint_delta", base, hinted, mask)
    lengths = np.array([len(h) if v else 0 for h, v in zip(hints, valid, strict=True)])
    assert lengths.tolist() == [15, 1249, 0, 11]  # characters of the stripped hint
    want = core(lib, "proposer_rewards", delta, lengths, shares, valid)
    np.testing.assert_array_equal(got, want)
    want = oracle.proposer_rewards(delta, lengths, shares, valid)
    np.testing.assert_allclose(got, want, atol=1e-12)
    assert got[2] == -1 - shares[2]


@pytest.mark.parametrize("stack, lib", STACKS)
def test_coder_equals_core(stack, lib):
    feedback = [
        zero_stacks.CoderFeedback(True, 0.5, 0.25, False),
        {
            "executed": False,
            "easy_accuracy": float("nan"),
            "consistency": float("nan"),
            "syntax_error": True,
        },
        (True, 1.0, 0.9, True),
        zero_stacks.CoderFeedback(False, 0.0, 0.0, False),
    ]
    got = stack.CoderReward(lambda codes: feedback, 2)(["a", "a", "b", "b"], ["c"] * 4)
    args = (
        np.array([True, False, True, False]),
        np.array([0.5, np.nan, 1.0, 0.0]),
        np.array([0.25, np.nan, 0.9, 0.0]),
        np.array([False, True, True, False]),
    )
    np.testing.assert_array_equal(got, core(lib, "coder_rewards", *args))
    np.testing.assert_allclose(got, [1.75, -0.15, 2.05, -0.1], atol=1e-12)
    assert got[1] == -0.15  # the published constant, not -0.1 - 0.05 in binary


# ------------------------------------------------- no reward formula in zero_stacks


@pytest.mark.parametrize("stack, lib", STACKS)
def test_every_number_is_one_the_library_returned(stack, lib, monkeypatch):
    """Replace each reward function of the library with one returning random numbers:
    a reward hands out exactly those (or 0 for a group it gates off), so nothing is
    computed after the library call."""
    returned = {}

    def fake(name):
        real = getattr(lib, name)

        def fn(*args, **kwargs):
            shape = np.asarray(real(*args, **kwargs)).shape
            out = np.random.default_rng(len(returned)).random(shape)
            returned[name] = out
            return torch.from_numpy(out) if lib is zero_torch else jax.numpy.asarray(out)

        return fn

    def fake_votes(*args, **kwargs):
        lib.vote_metrics.__wrapped_real__(*args, **kwargs)  # the call must be valid
        out = VoteMetrics(*np.random.default_rng(len(returned)).random(4))
        returned["vote_metrics"] = out
        wrap = torch.tensor if lib is zero_torch else jax.numpy.asarray
        return VoteMetrics(*(wrap(v) for v in out))

    for name in (
        "pseudo_rewards",
        "solver_rewards",
        "solver_rewards_frozen",
        "challenger_rewards",
        "proposer_rewards",
        "coder_rewards",
        "overlong_penalty",
        "group_advantages",
        "multi_reward_advantages",
    ):
        monkeypatch.setattr(lib, name, fake(name))
    fake_votes.__wrapped_real__ = lib.vote_metrics
    monkeypatch.setattr(lib, "vote_metrics", fake_votes)
    prompts = ["p"] * 3 + ["q"] * 3 + ["r"] * 3
    texts = ["\\boxed{1}", "<think>a</think>\\boxed{2}", "\\boxed{1}", "x", "y", "z"] + [
        "\\boxed{3}"
    ] * 3
    gate = np.repeat([True, False, True], 3)  # the middle group has no answer

    got = stack.SolverReward(3)(prompts, texts)
    np.testing.assert_array_equal(got, np.where(gate, returned["pseudo_rewards"].ravel(), 0))
    got = stack.SolverReward(3, alpha=0.9)(prompts, texts)
    np.testing.assert_array_equal(got, np.where(gate, returned["solver_rewards"].ravel(), 0))
    frozen = stack.SolverReward(3, labels_column="y", alpha=0.9)
    got = frozen(prompts, texts, y=["1"] * 9)
    assert returned["solver_rewards_frozen"].shape == (3, 3)  # the labels given, not voted
    np.testing.assert_array_equal(got, np.where(gate, returned["solver_rewards_frozen"].ravel(), 0))
    questions = ["<question>What is 1+1?</question> \\boxed{2}", "<question>2+2?</question>"]
    got = stack.ChallengerReward(solver_fn, 1, num_samples=3)(["a", "b"], questions)
    np.testing.assert_array_equal(got, returned["challenger_rewards"])
    got = stack.ProposerReward(logprobs_fn, 1)(["a"], ["<question>q</question><hint>h</hint>"])
    np.testing.assert_array_equal(got, returned["proposer_rewards"])
    got = stack.CoderReward(execute_fn, 1)(["a", "b"], ["ab", "c"])
    np.testing.assert_array_equal(got, returned["coder_rewards"])

    # The label-free adapters: DAPO's overlong penalty, the vote diagnostics, and the
    # stacks' advantages.
    got = stack.OverlongPenalty(100, 20, count_tokens=len)(["a"] * 3, ["x" * 90, "y", "z" * 99])
    np.testing.assert_array_equal(got, returned["overlong_penalty"])
    diagnostics = stack.VoteDiagnostics(3, truth_column="y")
    columns = {"y": ["1"] * 9}
    if stack is ztrl:
        logged = {}
        zeros = diagnostics(prompts, texts, log_metric=logged.__setitem__, **columns)
        assert zeros == [0.0] * 9
        values = list(logged.values())
    else:
        values = [v for v, _ in diagnostics(prompts, texts, **columns).values()]
    assert values == list(returned["vote_metrics"])
    rewards = np.random.default_rng(1).random(12)
    if stack is ztunix:
        for preset in ("tunix", "rloo"):
            got = ztunix.AdvantageEstimator(preset=preset)(rewards, 4)
            np.testing.assert_array_equal(got, returned["group_advantages"].ravel())
    else:
        per_func = torch.from_numpy(rewards.reshape(6, 2))
        for trainer in ("grpo", "rloo"):
            got = ztrl.trainer_advantages(per_func, 3, trainer=trainer, reward_weights=[1.0, 0.5])
            np.testing.assert_array_equal(got, returned["multi_reward_advantages"].ravel())
        got = ztrl.group_advantages(per_func[:, 0].contiguous(), 3)
        np.testing.assert_array_equal(got, returned["group_advantages"].ravel())


#: The only arithmetic in zero_stacks' code, reviewed: batch layout and counts, never a
#: reward.  A new expression fails the test below until it is reviewed and added here.
REVIEWED_ARITHMETIC = {
    "_answers.py": {
        "'\\\\boxed{' + answer",  # a frozen label as a boxed answer
        "'\\\\boxed{' + answer + '}'",
        "Literal['exact', 'math'] | Callable[[str, str], bool]",  # type aliases
        "Literal['r_zero', 'mm_zero'] | Callable[[Sequence[str]], Any]",
    },
    "_batch.py": {
        "start + size",
        "n % num_generations",
        "len(self.texts) // self.num_generations",
        "groups.start * size",  # Batch.part: group indices -> completion indices
        "groups.stop * size",
    },
    "challenger.py": {"int(clusters.max()) + 1", "valid & mine"},  # well-formed and ours
    "proposer.py": {"valid & mine"},
    "roles.py": {"r.size % g"},  # the Tunix estimator's batch check
    "solver.py": {
        "keep & np.asarray(inside, dtype=bool)",  # a gate: answered and inside the band
        # the groups a process's slice overlaps, and the slice inside them
        "part.start // size",
        "-(-part.stop // size)",
        "-part.stop // size",
        "-part.stop",
        "first * size",
        "part.start - offset",
        "part.stop - offset",
    },
    "trl.py": {
        "rewards.numel() % g",
        "count % g",
        "len(completions) % current",  # a group split between processes
        "[None] * world",  # all_gather_object's output list
        "start + len(shares[rank][1])",  # this process's slice of the gathered batch
    },
    "tunix.py": {"r.size % g"},
    "verl/__init__.py": {
        "[0.0] * len(texts)",  # the rewards' list, filled group by group
        "[None] * n",
        "set(options) - set(VOTE_OPTIONS)",  # unknown option names
    },
    "verl/managers.py": {
        "lengths - 1",  # the last valid response token holds the score
        "-response_ids.shape[-1]",  # the response part of the attention mask
        "prompts * n",  # responses in flight (the reward worker's limit)
        "[uid] * self.group_size",
    },
    "votes.py": {"prefix + name"},  # a metric's logged name
}
#: Array functions zero_stacks may call: building, selecting and converting arrays
#: (``isnan``: which of TRL's rewards are None, the mask handed to the library).
ARRAY_CALLS = {
    "array", "asarray", "ascontiguousarray", "concatenate", "flatnonzero", "repeat",
    "where", "zeros", "zeros_like", "issubdtype", "from_numpy", "float64", "int64",
    "bool_", "floating", "ndarray", "Tensor", "as_tensor", "isnan", "bfloat16", "int16",
    "arange", "tensor", "float32",  # verl: the [B, response_length] reward tensor's layout
}  # fmt: skip
#: Functions handed to a stack, never called in zero_stacks: Tunix's metric_fns return
#: ``(value, aggregation)`` and Tunix aggregates a metric over its buffered values.
HANDED_TO_THE_STACK = {("tunix.py", "np.mean")}
#: Methods that would compute a number.
MATH_METHODS = {
    "mean", "sum", "std", "var", "prod", "cumsum", "clip", "exp", "log", "sqrt", "abs",
    "round", "dot", "matmul", "minimum", "maximum", "softmax", "float_power", "power",
}  # fmt: skip


def test_no_reward_formula_in_zero_stacks():
    """How "no formula in zero_stacks" is checked: every arithmetic expression of its
    code is listed and must be a reviewed layout / count expression; NumPy / JAX /
    torch are used only to build and select arrays; no float constant but the
    options' defaults.  With the test above (outputs are exactly what the library
    returned) this leaves no place for a formula."""
    found: dict[str, set[str]] = {}
    handed = set()
    # zero_stacks/r_zero is a training loop (its arithmetic: diagnostics, the cart domain's
    # checker); test_r_zero_loop.py's spy tests check that its rewards and votes are the
    # library's.
    paths = [*(ROOT / "zero_stacks").glob("*.py"), *(ROOT / "zero_stacks" / "verl").glob("*.py")]
    for path in sorted(paths):
        tree = ast.parse(path.read_text())
        annotations = set()  # type hints such as ``int | None`` are no arithmetic
        called = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
        for node in ast.walk(tree):
            for hint in (getattr(node, "annotation", None), getattr(node, "returns", None)):
                if hint is not None:
                    annotations.update(id(n) for n in ast.walk(hint))
        for node in ast.walk(tree):
            name = path.relative_to(ROOT / "zero_stacks").as_posix()
            if (name, ast.unparse(node)) in HANDED_TO_THE_STACK:
                assert id(node) not in called, (name, ast.unparse(node))
                handed.add((name, ast.unparse(node)))
                continue
            if id(node) in annotations:
                continue
            if isinstance(node, (ast.BinOp, ast.AugAssign)):
                found.setdefault(name, set()).add(ast.unparse(node))
            if isinstance(node, ast.UnaryOp) and not isinstance(node.operand, ast.Constant):
                if isinstance(node.op, (ast.USub, ast.UAdd, ast.Invert)):
                    found.setdefault(name, set()).add(ast.unparse(node))
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                if node.value.id in {"np", "jnp", "torch", "jax"}:
                    assert node.attr in ARRAY_CALLS, (name, ast.unparse(node))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                assert node.func.attr not in MATH_METHODS, (name, ast.unparse(node))
            if isinstance(node, ast.Constant) and isinstance(node.value, float):
                assert node.value in {0.0, 0.25, 0.5, 0.75, 1.0}, (name, node.value)
    assert found == REVIEWED_ARITHMETIC
    assert handed == HANDED_TO_THE_STACK


# ------------------------------------------------------------------- errors


def _solver(stack, **kw):
    return stack.SolverReward(2, **kw)


BAD_CALLS = [
    # (factory kwargs, call args, call kwargs, error type, message fragment)
    ({}, (["p"] * 3, ["\\boxed{1}"] * 3), {}, ValueError, "not a multiple of num_generations=2"),
    ({}, (["p"] * 2, []), {}, ValueError, "completions is empty"),
    ({}, (["p"] * 3, ["\\boxed{1}"] * 4), {}, ValueError, "prompts has 3 entries"),
    ({}, (["p", "q"], ["\\boxed{1}"] * 2), {}, ValueError, "not one repeated prompt"),
    ({}, (["p"] * 2, "\\boxed{1}"), {}, TypeError, "completions must be a list"),
    ({}, (["p"] * 2, ["\\boxed{1}", 3]), {}, TypeError, "completions[1]"),
    ({}, (["p"] * 2, [[{"role": "assistant"}]] * 2), {}, TypeError, "completions[0]"),
    ({}, ("pp", ["a", "b"]), {}, TypeError, "prompts must be a list"),
    ({}, (["p"] * 2, ["a", "b"]), {"num_generations": 3}, ValueError, "differs"),
    ({"labels_column": "answer"}, (["p"] * 2, ["a", "b"]), {}, ValueError, "'answer' was not"),
    (
        {"labels_column": "answer"},
        (["p"] * 2, ["a", "b"]),
        {"answer": ["1"]},
        ValueError,
        "has 1 entries",
    ),
    (
        {"labels_column": "answer"},
        (["p"] * 2, ["a", "b"]),
        {"answer": ["1", "2"]},
        ValueError,
        "varies inside the group",
    ),
    (
        {"labels_column": "answer"},
        (["p"] * 2, ["a", "b"]),
        {"answer": "11"},
        TypeError,
        "must be a list",
    ),
    (
        {"labels_column": "answer"},
        (["p"] * 2, ["a", "b"]),
        {"answer": ["", ""]},
        ValueError,
        "no usable answer",
    ),
    (
        {"labels_column": "answer"},
        (["p"] * 2, ["a", "b"]),
        {"answer": ["\\boxed{}"] * 2},
        ValueError,
        "no usable answer",
    ),
    (
        {"labels_column": "answer"},
        (["p"] * 2, ["a", "b"]),
        {"answer": [1.5, 1.5]},
        TypeError,
        "answer strings",
    ),
    (
        {"labels_column": "y", "consistency_column": "c", "band": True},
        (["p"] * 2, ["a", "b"]),
        {"y": ["1", "1"], "c": [1.5, 1.5]},
        ValueError,
        "must lie in [0, 1]",
    ),
    (
        {"alpha": 0.9, "format": lambda t: [1] * len(t)},
        (["p"] * 2, ["a", "b"]),
        {},
        ValueError,
        "format callable must return bool",
    ),
]


@pytest.mark.parametrize("stack, lib", STACKS)
@pytest.mark.parametrize("factory, args, kwargs, exc, fragment", BAD_CALLS)
def test_solver_bad_inputs(stack, lib, factory, args, kwargs, exc, fragment):
    with pytest.raises(exc) as info:
        _solver(stack, **factory)(*args, **kwargs)
    assert fragment in str(info.value)


@pytest.mark.parametrize(
    "kwargs, exc, fragment",
    [
        ({"num_generations": 0}, ValueError, "num_generations must be an int >= 1"),
        ({"num_generations": 2.0}, TypeError, "num_generations must be an int"),
        ({"unparseable": "drop"}, ValueError, "unparseable"),
        ({"equivalence": "fuzzy"}, ValueError, "equivalence"),
        ({"alpha": 1.5}, ValueError, "alpha must lie in [0, 1]"),
        ({"alpha": float("nan")}, ValueError, "alpha must lie in [0, 1]"),
        ({"alpha": "0.9"}, TypeError, "alpha must be a number"),
        ({"alpha": 0.9, "format": "gsm8k"}, ValueError, "format must be"),
        ({"format": 3}, TypeError, "format must be a name or a callable"),
        ({"low": 0.8, "high": 0.2}, ValueError, "need low <= high"),
        ({"band": "yes"}, TypeError, "band must be True or False"),
        ({"labels_column": 3}, TypeError, "labels_column must be a column name"),
        ({"band": True, "labels_column": "answer"}, ValueError, "needs consistency_column"),
    ],
)
def test_solver_bad_options(kwargs, exc, fragment):
    with pytest.raises(exc) as info:
        ztrl.SolverReward(**kwargs)
    assert fragment in str(info.value)


def test_num_generations_unknown_is_a_clear_error():
    with pytest.raises(ValueError, match="num_generations is not known"):
        ztrl.SolverReward()(["p"] * 2, ["a", "b"])


def test_callable_rewards_bad_options_and_returns():
    q = "<question>What is 1+1?</question> \\boxed{2}"
    with pytest.raises(ValueError, match="5 replies per question"):
        ztrl.ChallengerReward(lambda qs, k: [["\\boxed{2}"]] * len(qs), 1, num_samples=5)(
            ["p"], [q]
        )
    with pytest.raises(ValueError, match="rows of replies"):
        ztrl.ChallengerReward(lambda qs, k: [], 1, num_samples=2)(["p"], [q])
    with pytest.raises(TypeError, match="solver must be a callable"):
        ztrl.ChallengerReward("not callable", 1)
    with pytest.raises(ValueError, match="num_samples must be an int >= 1"):
        ztrl.ChallengerReward(lambda qs, k: [], 1, num_samples=0)
    with pytest.raises(ValueError, match="strength must be a number >= 0"):
        ztrl.ChallengerReward(lambda qs, k: [], 1, strength=-1)
    with pytest.raises(ValueError, match="threshold"):
        ztrl.ChallengerReward(lambda qs, k: [], 1, threshold=-0.5)
    with pytest.raises(ValueError, match="execute returned 1 results for 2"):
        ztrl.CoderReward(lambda codes: [(True, 1.0, 0.5, False)], 2)(["p"] * 2, ["a", "b"])
    with pytest.raises(ValueError, match="lacks the field 'syntax_error'"):
        ztrl.CoderReward(
            lambda codes: [{"executed": True, "easy_accuracy": 1.0, "consistency": 0.5}], 1
        )(["p"], ["a"])
    with pytest.raises(TypeError, match="execute must be a callable"):
        ztrl.CoderReward(None)
    hinted = "<question>q</question><hint>h</hint>"
    with pytest.raises(ValueError, match=r"one row per well-formed proposal"):
        ztrl.ProposerReward(lambda q, h: (np.zeros((2, 3)),) * 2 + (np.ones((2, 3), bool),), 1)(
            ["p"], [hinted]
        )
    with pytest.raises(TypeError, match="must return a tuple"):
        ztrl.ProposerReward(lambda q, h: None, 1)(["p"], [hinted])
    with pytest.raises(TypeError, match="hint_length must be a callable"):
        ztrl.ProposerReward(logprobs_fn, hint_length=200)
    with pytest.raises(TypeError, match="hint_length must return an int"):
        ztrl.ProposerReward(logprobs_fn, 1, hint_length=lambda h: 2.5)(["p"], [hinted])


# -------------------------------------------------------------- advantages


def test_tunix_estimator_equals_tunix_grpo_and_is_zero_when_degenerate():
    pytest.importorskip("tunix", reason="needs the [tunix] extra (CI installs it)")
    from tunix.rl import algo_core, function_registry
    from tunix.rl.grpo import grpo_learner

    name = ztunix.register_advantage_estimator()
    ours = function_registry.get_advantage_estimator(name)
    theirs = function_registry.get_advantage_estimator("grpo")
    assert theirs is algo_core.compute_advantages
    assert grpo_learner.GRPOConfig(num_generations=4, advantage_estimator=name)
    rng = np.random.default_rng(0)
    for g in (2, 4, 8):
        rewards = rng.normal(size=6 * g)
        np.testing.assert_allclose(
            ours(rewards=rewards, num_generations=g),
            theirs(rewards=rewards, num_generations=g),
            rtol=1e-12,
            atol=1e-12,
        )
        binary = rng.integers(0, 2, size=6 * g).astype(np.float64)
        want = theirs(rewards=binary, num_generations=g)
        got = ours(rewards=binary, num_generations=g)
        spread = np.repeat(binary.reshape(-1, g).std(axis=1) > 0, g)
        np.testing.assert_allclose(got[spread], want[spread], rtol=1e-12, atol=1e-12)
        assert np.all(got[~spread] == 0.0)
    # Degenerate: all-equal groups give exactly 0; Tunix's gives NaN for groups of one.
    flat = np.array([3.0, 3.0, 3.0, 1.0, 1.0, 1.0])
    assert np.all(ours(rewards=flat, num_generations=3) == 0.0)
    single = np.array([0.5, 1.0, -2.0])
    with warnings.catch_warnings(record=True):  # numpy warns about ddof=1 of one sample
        warnings.simplefilter("always")
        nan = theirs(rewards=single, num_generations=1)
    assert np.isnan(nan).all()
    got = ours(rewards=single, num_generations=1)
    assert np.all(got == 0.0) and not np.isnan(got).any()


def test_tunix_reward_manager_calls_the_rewards():
    """Tunix's own reward manager fills num_generations from GRPOConfig (it reads the
    reward's call signature) and logs each reward under its __name__."""
    pytest.importorskip("tunix", reason="needs the [tunix] extra (CI installs it)")
    from tunix.rl.grpo.grpo_learner import GRPOConfig
    from tunix.rl.reward_manager import SequenceRewardManager

    rewards = [ztunix.SolverReward(), ztunix.SolverReward(labels_column="answer", alpha=0.9)]
    manager = SequenceRewardManager(rewards, GRPOConfig(num_generations=3))
    prompts = ["p"] * 3 + ["q"] * 3
    completions = ["\\boxed{1}", "\\boxed{2}", "\\boxed{1}", "no", "box", "here"]
    out = manager(prompts, completions, answer=np.array(["2"] * 3 + ["1"] * 3))
    online = [1.0, 0.0, 1.0, 0.0, 0.0, 0.0]
    frozen = [0.0, 0.9, 0.0, 0.0, 0.0, 0.0]
    np.testing.assert_array_equal(out["rewards"], np.add(online, frozen))
    np.testing.assert_array_equal(out["log_metrics"]["rewards/zero_solver"][0], frozen)


def test_tunix_group_advantages_bad_inputs():
    with pytest.raises(ValueError, match="flat"):
        ztunix.group_advantages(np.zeros(5), 2)
    with pytest.raises(TypeError, match="floats"):
        ztunix.group_advantages(np.zeros(4, dtype=np.int64), 2)
    with pytest.raises(ValueError, match="preset"):
        ztunix.group_advantages(np.zeros(4), 2, preset="ppo")


def _trl_formula(rewards: torch.Tensor, g: int, scale: str) -> torch.Tensor:
    """GRPOTrainer's advantage lines (trl 1.16, sum_then_normalize, one process)."""
    mean = rewards.view(-1, g).mean(dim=1).repeat_interleave(g)
    if scale == "batch":
        std = rewards.std().expand_as(rewards)
    else:
        std = rewards.view(-1, g).std(dim=1).repeat_interleave(g)
    adv = rewards - mean
    return adv if scale == "none" else adv / (std + 1e-4)


@pytest.mark.parametrize("scale", ["group", "batch", "none"])
def test_trl_preset_reproduces_trl(scale):
    gen = torch.Generator().manual_seed(0)
    rewards = torch.rand(24, generator=gen, dtype=torch.float64)
    got = ztrl.group_advantages(rewards, 4, scale)
    torch.testing.assert_close(got, _trl_formula(rewards, 4, scale), rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="scale_rewards"):
        ztrl.group_advantages(rewards, 4, "std")
    if scale != "batch":  # GRPOConfig reads True as "group" and False as "none"
        flag = scale == "group"
        torch.testing.assert_close(ztrl.group_advantages(rewards, 4, flag), got, rtol=0, atol=0)


def test_trl_bfloat16_logprobs_give_the_tunix_twin_s_rewards():
    """A bfloat16 policy's log-probs (torch tensors in TRL, JAX arrays in Tunix) are
    rewarded like any float: the same values give the same rewards in both stacks."""
    import jax.numpy as jnp

    texts = [
        "<question>What is 1+1?</question><hint>add them</hint>",
        "<question>Name a colour</question><hint>sky</hint>",
    ]
    gen = torch.Generator().manual_seed(3)
    base, hinted = (torch.randn(2, 5, generator=gen).bfloat16() for _ in range(2))
    mask = torch.ones(2, 5, dtype=torch.bool)
    got = ztrl.ProposerReward(lambda q, h: (base, hinted, mask), 2)(["p"] * 2, texts)
    as_jax = [jnp.asarray(t.float().numpy(), jnp.bfloat16) for t in (base, hinted)]
    want = ztunix.ProposerReward(lambda q, h: (*as_jax, mask.numpy()), 2)(["p"] * 2, texts)
    np.testing.assert_array_equal(got, want)  # bfloat16 results, bit for bit


@pytest.mark.parametrize("stack, lib", STACKS)
def test_invalid_data_raises_the_same_error_in_both_stacks(stack, lib):
    """Tunix's reward manager sums rewards with nansum, so a NaN reward would become an
    ordinary 0.0: the Tunix rewards raise on invalid data, as the TRL ones do."""
    texts = [
        "<question>What is 1+1?</question><hint>add them</hint>",
        "<question>Name a colour</question><hint>sky</hint>",
    ]

    def logprobs(questions, hints):
        base = np.full((len(questions), 3), -1.0)
        base[0, 1] = -np.inf
        return base, np.full((len(questions), 3), -0.5), np.ones((len(questions), 3), bool)

    with pytest.raises(ValueError, match="^base_logp must be finite where mask$"):
        stack.ProposerReward(logprobs, 2)(["p", "p"], texts)
    feedback = [zero_stacks.CoderFeedback(True, 1.5, 0.5, False)] * 2
    with pytest.raises(ValueError, match=r"^easy_accuracy must lie in \[0, 1\] where executed$"):
        stack.CoderReward(lambda codes: feedback, 2)(["a", "a"], ["c", "c"])


class _Model:
    training = True


class _GRPOTrainer:
    """What a reward can reach of TRL's GRPOTrainer: ``log_metric`` is its bound method,
    and TRL's own rule picks the group size (``num_generations`` in training,
    ``num_generations_eval`` in evaluation, by ``model.training``)."""

    def __init__(self, num_generations: int, num_generations_eval: int) -> None:
        self.num_generations, self.num_generations_eval = num_generations, num_generations_eval
        self.model = _Model()
        self.logged: list[tuple[str, float]] = []

    def _log_metric(self, name: str, value: float) -> None:
        self.logged.append((name, value))


def test_trl_rewards_vote_over_the_trainer_s_eval_groups():
    answers = ["1", "1", "2", "3", "2", "2", "2", "4"]
    completions = [f"\\boxed{{{a}}}" for a in answers]
    trainer = _GRPOTrainer(4, 8)
    call = {"prompts": ["a"] * 8, "completions": completions, "log_metric": trainer._log_metric}
    four, eight = ztrl.SolverReward(num_generations=4), ztrl.SolverReward(num_generations=8)
    by_four = four(prompts=["a"] * 8, completions=completions)
    by_eight = eight(prompts=["a"] * 8, completions=completions)
    assert by_four == [1.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0]  # two votes of four
    assert by_eight == [0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0]  # the group's vote: 2
    assert four(**call) == by_four  # training: groups of num_generations
    trainer.model.training = False
    assert four(**call) == by_eight  # evaluation: groups of num_generations_eval
    with pytest.raises(
        ValueError,
        match="num_generations=8 given to the reward differs from GRPOConfig.num_generations=4",
    ):
        eight(**call)


def test_trl_vote_diagnostics_in_smaller_eval_groups_count_every_reply():
    """trained=3 fits the training groups of 4 but not evaluation groups of 2
    (num_generations_eval): evaluate() raised; every reply of such a group is trained."""
    trainer = _GRPOTrainer(4, 2)
    trainer.model.training = False
    completions = ["\\boxed{1}", "\\boxed{2}"] * 4
    votes = ztrl.VoteDiagnostics(4, trained=3)
    votes(
        prompts=["a", "a", "b", "b", "c", "c", "d", "d"],
        completions=completions,
        log_metric=trainer._log_metric,
        answer=["1"] * 8,
    )
    logged = dict(trainer.logged)
    assert logged["votes/maj@2"] == 1.0 and logged["votes/majority_ratio"] == 0.5
    assert logged["votes/label_accuracy"] == 1.0 and logged["votes/reward_accuracy"] == 1.0
    trainer.model.training, trainer.logged = True, []
    votes(
        prompts=["a"] * 4 + ["b"] * 4,
        completions=completions,
        log_metric=trainer._log_metric,
        answer=["1"] * 8,
    )
    assert "votes/maj@3" in dict(trainer.logged)  # training: trained as given


# ------------------------------------------------------------ layering


def test_stack_modules_do_not_import_the_stacks_and_the_library_not_them():
    code = (
        "import sys, zero_jax, zero_torch, zero_text\n"
        "assert not {'zero_stacks', 'tunix', 'trl'} & set(sys.modules), 'library'\n"
        "import zero_stacks.tunix, zero_stacks.trl\n"
        "assert not {'tunix', 'trl'} & set(sys.modules), 'zero_stacks'\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-2000:]


# ------------------------------------------------------------ the examples


def test_examples_train_a_few_steps(tmp_path):
    pytest.importorskip("tunix", reason="needs the [tunix] extra (CI installs it)")
    pytest.importorskip("trl", reason="needs the [trl] extra (CI installs it)")
    # one thread each: the two runs share CI's two cores, where a second torch / XLA
    # thread only spins against the other run
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
           "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"}
    procs = {}
    for name in ("tunix_grpo", "trl_grpo"):  # both at once: each is mostly start-up time
        procs[name] = subprocess.Popen(
            [
                sys.executable,
                str(ROOT / "examples" / f"{name}.py"),
                "--steps",
                "3",
                "--num-generations",
                "4",
                "--json",
                str(tmp_path / f"{name}.json"),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env=env,
        )
    # Meanwhile: TRL names our rewards by __name__ and calls them synchronously.
    from trl.trainer.utils import get_callable_name, is_async_callable

    for reward, *_ in every_reward(ztrl):
        assert get_callable_name(reward) == reward.__name__ and not is_async_callable(reward)
    for name, proc in procs.items():
        stdout, stderr = proc.communicate(timeout=900)
        assert proc.returncode == 0, (name, stderr[-3000:])
        assert stdout.count("step ") >= 3, stdout  # one progress line per step
        record = json.loads((tmp_path / f"{name}.json").read_text())
        assert record["steps"] == 3
        assert len(record["reward_mean"]) == 3
        assert all(0.0 <= r <= 1.0 for r in record["reward_mean"])
        assert record["params_changed"] is True
        assert record["wall_time_s"] > 0
    tunix = json.loads((tmp_path / "tunix_grpo.json").read_text())
    assert tunix["advantage_estimator"] == ztunix.ESTIMATOR_NAME
    assert tunix["max_abs_diff_vs_tunix_grpo"] < 1e-5  # float32 advantages inside Tunix
    trl = json.loads((tmp_path / "trl_grpo.json").read_text())
    assert trl["advantage_preset"] == zero_torch.ADVANTAGE_PRESETS["trl"]
    assert trl["max_abs_diff_vs_trl_advantages"] < 1e-5  # ADVANTAGE_PRESETS["trl"] == TRL's


@pytest.mark.parametrize("stack, lib", STACKS)
def test_coder_scores_may_be_none_where_they_are_not_read(stack, lib):
    """An unexecuted program has no visual scores: None is accepted there (read as
    absent), and refused for an executed one."""
    feedback = [(False, None, None, True), (True, 0.5, 0.25, False)]
    got = stack.CoderReward(lambda codes: feedback, 2)(["a", "a"], ["c", "c"])
    np.testing.assert_array_equal(got, [-0.15, 1.75])
    with pytest.raises(TypeError):
        stack.CoderReward(lambda codes: [(True, None, 0.5, False)] * 2, 2)(["a", "a"], ["c"] * 2)


class _TwoProcesses:
    """``torch.distributed`` as one process of two sees it (this process is ``rank``):
    ``all_gather_object`` hands back ``other``'s share beside this process's."""

    def __init__(self, rank: int, other: tuple) -> None:
        self.rank, self.other, self.gathers = rank, other, 0

    def is_available(self) -> bool:
        return True

    def is_initialized(self) -> bool:
        return True

    def get_world_size(self) -> int:
        return 2

    def get_rank(self) -> int:
        return self.rank

    def all_gather_object(self, out: list, share: object) -> None:
        self.gathers += 1
        out[self.rank], out[1 - self.rank] = share, self.other


@pytest.mark.parametrize("rank", [0, 1])
def test_every_number_is_one_the_library_returned_on_several_processes(rank, monkeypatch):
    """The TRL rewards' multi-process path (one gather, the whole batch, this process's
    slice) and the diagnostics they log: with the library's functions replaced by ones
    returning random numbers, a process's rewards are that process's slice of exactly
    what the library returned (None where ``unscored=None`` leaves a group unscored), and
    every logged share is one the library returned."""
    returned: dict[str, Any] = {}

    def fake(name):
        real = getattr(zero_torch, name)

        def fn(*args, **kwargs):
            out = real(*args, **kwargs)
            rng = np.random.default_rng(len(returned))
            if isinstance(out, tuple):  # consensus: keep the labels, replace the shares
                out = (out[0], torch.from_numpy(rng.random(tuple(out[1].shape))))
            else:
                out = torch.from_numpy(rng.random(tuple(out.shape)))
            returned[name] = out
            return out

        return fn

    for name in ("pseudo_rewards", "consensus", "challenger_rewards"):
        monkeypatch.setattr(zero_torch, name, fake(name))
    # the whole batch: three groups of 4, this process's 6 completions and the other's
    prompts = ["p"] * 4 + ["q"] * 4 + ["r"] * 4
    texts = ["\\boxed{1}", "\\boxed{2}", "\\boxed{1}", "x", "y", "z", "w", "v"] + [
        "\\boxed{3}"
    ] * 4  # the middle group (split between the processes) has no answer
    answer = ["1"] * 12
    part = slice(6 * rank, 6 * rank + 6)
    other = slice(6 - 6 * rank, 12 - 6 * rank)
    share = (prompts[other], texts[other], {"answer": answer[other]})
    dist = _TwoProcesses(rank, share)
    monkeypatch.setattr(ztrl, "distributed", dist)
    trainer = _GRPOTrainer(4, 4)
    call = {"prompts": prompts[part], "completions": texts[part], "answer": answer[part],
            "log_metric": trainer._log_metric}  # fmt: skip
    # the library is called on the groups this process's completions belong to (0, 1 or
    # 1, 2), of which they are entries 0-5 or 2-7
    mine = slice(2 * rank, 2 * rank + 6)
    gate = np.repeat([True, False, True], 4)[4 * rank : 4 * rank + 8]

    got = ztrl.SolverReward(4, unscored=None, truth_column="answer")(**call)
    assert dist.gathers == 1
    want = returned["pseudo_rewards"].numpy().ravel()
    assert got == [float(v) if k else None for v, k in zip(want, gate, strict=True)][mine]
    shares = np.repeat(returned["consensus"][1].numpy(), 4)[mine]
    logged = [v for n, v in trainer.logged if n == "zero_solver/vote_share"]
    assert logged == [float(v) for v in shares]
    truth = [n for n, _ in trainer.logged if n.startswith("zero_solver/label")]
    assert truth == (["zero_solver/label_accuracy"] if rank == 0 else [])  # logged once

    questions = [f"<question>q{i % 5}</question> \\boxed{{1}}" for i in range(12)]
    dist.other = (prompts[other], questions[other], {})
    trainer.logged.clear()
    got = ztrl.ChallengerReward(solver_fn, 4, num_samples=3)(
        prompts=prompts[part], completions=questions[part], log_metric=trainer._log_metric
    )
    np.testing.assert_array_equal(got, returned["challenger_rewards"].numpy()[part])
    logged = [v for n, v in trainer.logged if n == "zero_challenger/solver_share"]
    assert logged == [float(v) for v in returned["consensus"][1].numpy()]  # its 6 questions


def test_async_callables_give_the_library_s_numbers(monkeypatch):
    """An async solver / logprobs / execute makes an async TRL reward whose numbers are
    the library's, as with the plain callable."""
    import asyncio

    async def solver(questions, k):
        return solver_fn(questions, k)

    async def logprobs(questions, hints):
        return logprobs_fn(questions, hints)

    async def execute(codes):
        return execute_fn(codes)

    questions = ["<question>What is 1+1?</question> \\boxed{2}", "<question>2+2?</question>"]
    proposals = ["<question>q</question><hint>h</hint>", "<question>r</question>"]
    pairs = [
        (
            ztrl.ChallengerReward(solver, 1, num_samples=3),
            ztrl.ChallengerReward(solver_fn, 1, num_samples=3),
            questions,
        ),
        (ztrl.ProposerReward(logprobs, 1), ztrl.ProposerReward(logprobs_fn, 1), proposals),
        (ztrl.CoderReward(execute, 1), ztrl.CoderReward(execute_fn, 1), ["ab", "c"]),
    ]
    for reward, plain, texts in pairs:
        assert asyncio.run(reward(["a", "b"], texts)) == plain(["a", "b"], texts)
        assert pickle.loads(pickle.dumps(plain)) is not None
        assert type(copy.deepcopy(reward)) is type(reward)


def test_a_share_that_cannot_be_sent_is_an_error_on_every_process(monkeypatch):
    """An error building a process's share is raised after the gather, on every process
    (none is left waiting in a collective): here, and where the other process failed."""
    trainer = _GRPOTrainer(4, 4)
    call = {"prompts": ["p"] * 2, "log_metric": trainer._log_metric}
    dist = _TwoProcesses(0, (["p"] * 2, ["\\boxed{1}"] * 2, {}))
    monkeypatch.setattr(ztrl, "distributed", dist)
    with pytest.raises(ValueError, match="process 0 could not pass its completions"):
        ztrl.SolverReward(4)(completions=3, **call)  # not a list
    assert dist.gathers == 1
    dist.other = TypeError("completions[1] ...")
    with pytest.raises(ValueError, match="process 1 could not pass its completions"):
        ztrl.SolverReward(4)(completions=["\\boxed{1}"] * 2, **call)
    assert dist.gathers == 2
    # rewards of each completion alone gather nothing
    assert ztrl.OverlongPenalty(4, 2)(completions=["a"] * 2, completion_ids=[[1]] * 2, **call)
    assert ztrl.CoderReward(execute_fn, 4)(completions=["ab"] * 2, **call)
    assert dist.gathers == 2


def test_unscored_option():
    texts = ["x", "y", "\\boxed{1}", "\\boxed{1}"]
    assert ztrl.SolverReward(2, unscored=None)(["p", "p", "q", "q"], texts) == [
        None, None, 1.0, 1.0,
    ]  # fmt: skip
    assert ztrl.SolverReward(2)(["p", "p", "q", "q"], texts) == [0.0, 0.0, 1.0, 1.0]
    with pytest.raises(ValueError, match="unscored=None.*needs a number"):
        ztunix.SolverReward(2, unscored=None)
    for bad in (1.0, True, "0"):
        with pytest.raises(ValueError, match="unscored must be 0.0 or None"):
            ztrl.SolverReward(2, unscored=bad)
