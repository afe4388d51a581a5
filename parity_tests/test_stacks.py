"""zero_stacks: the Tunix / TRL reward functions equal the core functions on the same
answers, every bad input is a clear error, our Tunix advantage estimator equals
Tunix's own where that one is defined, and both examples train for a few steps."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

import zero_jax
import zero_text
import zero_torch
from zero_stacks import _common
from zero_stacks import trl as ztrl
from zero_stacks import tunix as ztunix

ROOT = Path(__file__).resolve().parents[1]
STACKS = [pytest.param(ztunix, id="tunix"), pytest.param(ztrl, id="trl")]


def _batch(seed: int = 0, b: int = 6, k: int = 5):
    """B prompts x K replies mixing agreeing, disagreeing, unboxed and formatted replies."""
    rng = np.random.default_rng(seed)
    forms = [
        "<think>so</think> the answer is \\boxed{{{}}}",
        "\\boxed{{{}}}",
        "it is {} (no box)",
        "<think>hmm</think>\\boxed{{ {} }}.",
        "<think>ok</think>\n\\boxed{{{}}}",
    ]
    rows = []
    for _ in range(b):
        vals = rng.integers(0, 3, size=k)
        rows.append([forms[rng.integers(len(forms))].format(v) for v in vals])
    prompts = [f"question {i}" for i in range(b) for _ in range(k)]
    return prompts, rows, [c for row in rows for c in row]


def _core_pseudo(rows, lib, **group):
    ids, n = zero_text.group_answers(rows, **group)
    if lib is zero_jax:
        labels, p = zero_jax.consensus(ids, n)
        return np.asarray(zero_jax.pseudo_rewards(ids, labels)), np.asarray(p), ids, n
    t = torch.from_numpy(ids)
    labels, p = zero_torch.consensus(t, n)
    return zero_torch.pseudo_rewards(t, labels).numpy(), p.numpy(), ids, n


def _lib(stack):
    return zero_jax if stack is ztunix else zero_torch


# ------------------------------------------------------------------ solver


@pytest.mark.parametrize("stack", STACKS)
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("unparseable", ["distinct", "bucket"])
def test_solver_online_equals_core(stack, seed, unparseable):
    prompts, rows, completions = _batch(seed)
    k = len(rows[0])
    got = stack.solver_reward(k, unparseable=unparseable)(prompts, completions)
    want, _, _, _ = _core_pseudo(rows, _lib(stack), unparseable=unparseable)
    assert isinstance(got, list) and all(type(x) is float for x in got)
    np.testing.assert_array_equal(np.reshape(got, want.shape), want)


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
        got = stack.solver_reward(4)(prompts, completions)
        # group 1: "2" wins 2 of 4; group 2: a 2-2 tie goes to "7", seen first.
        assert got == [1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 1.0]


@pytest.mark.parametrize("stack", STACKS)
@pytest.mark.parametrize("fmt", ["r_zero", "mm_zero"])
def test_solver_format_term_equals_solver_rewards(stack, fmt):
    prompts, rows, completions = _batch(7)
    k = len(rows[0])
    got = stack.solver_reward(k, alpha=0.8, format=fmt)(prompts, completions)
    ids, n = zero_text.group_answers(rows)
    check = {
        "r_zero": zero_text.r_zero_solver_format_ok,
        "mm_zero": zero_text.mm_zero_solver_format_ok,
    }
    flags = check[fmt](completions).reshape(ids.shape)
    if stack is ztunix:
        want = np.asarray(zero_jax.solver_rewards(ids, flags, n, 0.8))
    else:
        want = zero_torch.solver_rewards(torch.from_numpy(ids), torch.from_numpy(flags), n, 0.8)
        want = want.numpy()
    np.testing.assert_array_equal(np.reshape(got, want.shape), want)
    assert flags.any() and not flags.all()  # the batch exercises both branches


@pytest.mark.parametrize("stack", STACKS)
def test_solver_band_zeroes_rows_outside(stack):
    prompts, rows, completions = _batch(3, b=12)
    k = len(rows[0])
    got = np.reshape(
        stack.solver_reward(k, band=True, low=0.6, high=0.8)(prompts, completions), (12, k)
    )
    pseudo, p, _, _ = _core_pseudo(rows, _lib(stack))
    keep = np.asarray(
        _lib(stack).curriculum_mask(p if stack is ztunix else torch.from_numpy(p), 0.6, 0.8)
    )
    assert keep.any() and not keep.all()
    np.testing.assert_array_equal(got[keep], pseudo[keep])
    np.testing.assert_array_equal(got[~keep], 0.0)
    # Both edges are kept: p = 0.6 (3 of 5) is inside.
    assert np.any(p == 0.6) and np.all(keep[p == 0.6])


@pytest.mark.parametrize("stack", STACKS)
def test_solver_frozen_labels(stack):
    prompts, rows, completions = _batch(5)
    k = len(rows[0])
    labels = ["1", 2, "\\boxed{0}", "$1$", "2.", "0"]
    column = [lab for lab in labels for _ in range(k)]
    got = np.reshape(
        stack.solver_reward(k, labels_column="answer")(prompts, completions, answer=column), (6, k)
    )
    # By hand: normalised box content equals the normalised label.
    want = np.array(
        [
            [
                float(
                    zero_text.normalize_answer(zero_text.extract_boxed(c) or "")
                    == zero_text.normalize_answer(zero_text.extract_boxed(str(lab)) or str(lab))
                )
                for c in row
            ]
            for row, lab in zip(rows, labels, strict=True)
        ]
    )
    np.testing.assert_array_equal(got, want)
    # And by the core: pseudo_rewards against the label's id in a shared namespace.
    ids, _ = zero_text.group_answers(
        [
            ["\\boxed{" + str(lab).strip("$.") + "}", *row]
            for lab, row in zip(["1", "2", "0", "1", "2", "0"], rows, strict=True)
        ]
    )
    core = np.asarray(zero_jax.pseudo_rewards(ids[:, 1:], ids[:, 0]))
    np.testing.assert_array_equal(got, core)
    assert 0 < got.mean() < 1


@pytest.mark.parametrize("stack", STACKS)
def test_solver_frozen_labels_with_band(stack):
    prompts = ["a"] * 2 + ["b"] * 2
    completions = ["\\boxed{1}", "\\boxed{2}", "\\boxed{1}", "\\boxed{1}"]
    reward = stack.solver_reward(2, labels_column="y", consistency_column="p", band=True)
    got = reward(prompts, completions, y=["1", "1", "1", "1"], p=[0.5, 0.5, 0.9, 0.9])
    assert got == [1.0, 0.0, 0.0, 0.0]  # the second prompt's frozen share 0.9 is out of band


def test_solver_chat_completions_and_tunix_num_generations():
    chat = [
        [{"role": "assistant", "content": "\\boxed{4}"}],
        [{"role": "assistant", "content": "\\boxed{5}"}],
        [{"role": "assistant", "content": "\\boxed{4}"}],
    ]
    got = ztrl.solver_reward(3)([["hi"]] * 3, chat)
    assert got == [1.0, 0.0, 1.0]
    # Tunix fills a num_generations parameter from its GRPOConfig; the factory may omit it.
    assert ztunix.solver_reward()(["p"] * 3, ["\\boxed{1}"] * 3, num_generations=3) == [1.0] * 3


# ------------------------------------------------------------- challenger etc.


@pytest.mark.parametrize("stack", STACKS)
def test_challenger_equals_core(stack):
    batch = zero_text.load_example_batch()
    outputs, replies = batch["challenger_outputs"], batch["solver_replies"]
    questions = [zero_text.extract_tag(o, "question") or o for o in outputs]
    valid = zero_text.r_zero_challenger_format_ok(outputs)
    by_question = {q: r for q, r, v in zip(questions, replies, valid, strict=True) if v}
    asked = []

    def solver(qs, k):
        asked.append(list(qs))
        return [by_question[q][:k] for q in qs]

    got = stack.challenger_reward(solver, 2, num_samples=5)(["ask"] * len(outputs), outputs)
    assert asked == [[q for q, v in zip(questions, valid, strict=True) if v]]  # invalid: not asked
    clusters, _ = zero_text.bleu_clusters(questions, threshold=0.5)
    ids, n = zero_text.group_answers([r for r, v in zip(replies, valid, strict=True) if v])
    _, p_valid = zero_jax.consensus(ids, n)
    p = np.zeros(len(outputs))
    p[valid] = np.asarray(p_valid)
    want = np.asarray(zero_jax.challenger_rewards(p, clusters, valid))
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    assert got[-1] == 0.0 and max(got) > 0  # output 7 is malformed


@pytest.mark.parametrize("stack", STACKS)
def test_proposer_equals_core(stack):
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
        return base, hinted, mask

    got = stack.proposer_reward(logprobs, 2)(["p"] * 2 + ["q"] * 2, texts)
    valid = zero_text.g_zero_proposer_format_ok(texts)
    questions = [zero_text.extract_tag(x, "question") for x in texts]
    _, shares = zero_text.bleu_clusters(questions, threshold=0.5)
    delta = np.zeros(4)
    delta[valid] = np.asarray(zero_jax.hint_delta(base, hinted, mask))
    lengths = np.array([3, 250, 0, 2])
    want = np.asarray(zero_jax.proposer_rewards(delta, lengths, shares, valid))
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    assert got[2] == -1 - shares[2]


@pytest.mark.parametrize("stack", STACKS)
def test_coder_equals_core(stack):
    feedback = [
        _common.CoderFeedback(True, 0.5, 0.25, False),
        {
            "executed": False,
            "easy_accuracy": float("nan"),
            "consistency": float("nan"),
            "syntax_error": True,
        },
        (True, 1.0, 0.9, True),
        _common.CoderFeedback(False, 0.0, 0.0, False),
    ]
    got = stack.coder_reward(lambda codes: feedback, 2)(["a", "a", "b", "b"], ["c"] * 4)
    want = np.asarray(
        zero_jax.coder_rewards(
            np.array([True, False, True, False]),
            np.array([0.5, np.nan, 1.0, 0.0]),
            np.array([0.25, np.nan, 0.9, 0.0]),
            np.array([False, True, True, False]),
        )
    )
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    np.testing.assert_allclose(got, [1.75, -0.15, 2.05, -0.1], atol=1e-12)


# ------------------------------------------------------------------- errors


def _solver(stack, **kw):
    return stack.solver_reward(2, **kw)


BAD_CALLS = [
    # (factory kwargs, call args, call kwargs, error type, message fragment)
    ({}, (["p"] * 3, ["\\boxed{1}"] * 3), {}, ValueError, "not a multiple of num_generations=2"),
    ({}, (["p"] * 2, []), {}, ValueError, "completions is empty"),
    ({}, (["p"] * 3, ["\\boxed{1}"] * 4), {}, ValueError, "prompts has 3 entries"),
    ({}, (["p", "q"], ["\\boxed{1}"] * 2), {}, ValueError, "not one repeated prompt"),
    ({}, (["p"] * 2, "\\boxed{1}"), {}, TypeError, "completions must be a list"),
    ({}, (["p"] * 2, ["\\boxed{1}", 3]), {}, TypeError, "completions[1]"),
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


@pytest.mark.parametrize("stack", STACKS)
@pytest.mark.parametrize("factory, args, kwargs, exc, fragment", BAD_CALLS)
def test_solver_bad_inputs(stack, factory, args, kwargs, exc, fragment):
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
        ({"alpha": 0.9, "format": "gsm8k"}, ValueError, "format must be"),
        ({"low": 0.8, "high": 0.2}, ValueError, "need low <= high"),
        ({"band": True, "labels_column": "answer"}, ValueError, "needs consistency_column"),
    ],
)
def test_solver_bad_options(kwargs, exc, fragment):
    with pytest.raises(exc) as info:
        ztrl.solver_reward(**kwargs)
    assert fragment in str(info.value)


def test_num_generations_unknown_is_a_clear_error():
    with pytest.raises(ValueError, match="num_generations is not known"):
        ztrl.solver_reward()(["p"] * 2, ["a", "b"])


def test_callable_rewards_bad_returns():
    q = "<question>What is 1+1?</question> \\boxed{2}"
    with pytest.raises(ValueError, match="5 replies per question"):
        ztrl.challenger_reward(lambda qs, k: [["\\boxed{2}"]] * len(qs), 1, num_samples=5)(
            ["p"], [q]
        )
    with pytest.raises(ValueError, match="rows of replies"):
        ztrl.challenger_reward(lambda qs, k: [], 1, num_samples=2)(["p"], [q])
    with pytest.raises(TypeError, match="solver must be a callable"):
        ztrl.challenger_reward("not callable", 1)
    with pytest.raises(ValueError, match="num_samples must be an int >= 1"):
        ztrl.challenger_reward(lambda qs, k: [], 1, num_samples=0)
    with pytest.raises(ValueError, match="execute returned 1 results for 2"):
        ztrl.coder_reward(lambda codes: [(True, 1.0, 0.5, False)], 2)(["p"] * 2, ["a", "b"])
    with pytest.raises(ValueError, match="lacks the field 'syntax_error'"):
        ztrl.coder_reward(
            lambda codes: [{"executed": True, "easy_accuracy": 1.0, "consistency": 0.5}], 1
        )(["p"], ["a"])
    hinted = "<question>q</question><hint>h</hint>"
    with pytest.raises(ValueError, match=r"one row per well-formed proposal"):
        ztrl.proposer_reward(lambda q, h: (np.zeros((2, 3)),) * 2 + (np.ones((2, 3), bool),), 1)(
            ["p"], [hinted]
        )
    with pytest.raises(TypeError, match="must return a tuple"):
        ztrl.proposer_reward(lambda q, h: None, 1)(["p"], [hinted])


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
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
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
