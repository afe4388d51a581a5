"""zero_stacks' label-free adapters against the stacks' own code: the Tunix RLOO
estimator through Tunix's registry against Tunix's "rloo", the TRL advantage presets
against transcriptions of GRPOTrainer's / RLOOTrainer's advantage blocks, the overlong
penalty against TRL's ``get_soft_overlong_punishment``, the vote diagnostics against
TTRL's metrics on the answer strings, each called the way the stack calls it (TRL's
``_calculate_rewards``, Tunix's reward manager and metric_fns signature); and the
solver's math-verify ``timeout`` / ``processes`` reaching ``zero_text``."""

from __future__ import annotations

import copy
import pickle
import warnings
from collections import defaultdict
from types import SimpleNamespace

import jax
import numpy as np
import pytest
import torch

import zero_jax
import zero_text
import zero_torch
from parity_tests.test_published_label_free import (
    trl_multi_objective,
    trl_rloo,
    ttrl_post_reward_accuracy,
    ttrl_test_time_train_metrics,
)
from zero_contracts import ADVANTAGE_PRESETS, VoteMetrics
from zero_stacks import trl as ztrl
from zero_stacks import tunix as ztunix

STACKS = [pytest.param(ztunix, zero_jax, id="tunix"), pytest.param(ztrl, zero_torch, id="trl")]


def twins(obj):
    return [pickle.loads(pickle.dumps(obj)), copy.deepcopy(obj)]


def token_count(text: str) -> int:  # a module-level count_tokens pickles
    return len(text.split())


# ------------------------------------------------------------ Tunix: RLOO estimator


def test_tunix_rloo_estimator_equals_tunix_rloo_through_the_registry():
    """``register_advantage_estimator(preset="rloo")`` -> "zero_rewards_rloo", looked up
    in Tunix's registry as GRPOLearner does, against Tunix's own "rloo"
    (``algo_core.compute_rloo_advantages``): equal where the group's rewards differ,
    exactly 0 (Tunix: a rounding residue) where they are all equal and for one
    generation, never NaN; "zero_rewards_grpo" stays registered beside it."""
    pytest.importorskip("tunix", reason="needs the [tunix] extra (CI installs it)")
    from tunix.rl import algo_core, function_registry
    from tunix.rl.grpo import grpo_learner

    rloo = ztunix.register_advantage_estimator(preset="rloo")
    grpo = ztunix.register_advantage_estimator()
    assert (rloo, grpo) == (ztunix.RLOO_ESTIMATOR_NAME, ztunix.ESTIMATOR_NAME)
    assert (rloo, grpo) == ("zero_rewards_rloo", "zero_rewards_grpo")
    ours = function_registry.get_advantage_estimator(rloo)
    theirs = function_registry.get_advantage_estimator("rloo")
    assert theirs is algo_core.compute_rloo_advantages
    assert isinstance(ours, ztunix.AdvantageEstimator) and ours.__name__ == rloo
    assert function_registry.get_advantage_estimator(grpo).preset == "tunix"
    assert grpo_learner.GRPOConfig(num_generations=4, advantage_estimator=rloo)
    rng = np.random.default_rng(3)
    for g in (2, 3, 8):
        normal = rng.normal(size=10 * g)
        np.testing.assert_allclose(
            ours(rewards=normal, num_generations=g),
            np.asarray(theirs(rewards=normal, num_generations=g)),
            rtol=1e-12,
            atol=1e-12,
        )
        binary = rng.integers(0, 2, size=10 * g).astype(np.float64)
        binary[:g] = 1.0  # at least one all-equal group
        got = ours(rewards=binary, num_generations=g)
        want = np.asarray(theirs(rewards=binary, num_generations=g))
        spread = np.repeat(binary.reshape(-1, g).std(axis=1) > 0, g)
        np.testing.assert_allclose(got[spread], want[spread], rtol=1e-12, atol=1e-12)
        assert np.all(got[~spread] == 0.0) and not np.isnan(got).any()
        np.testing.assert_allclose(want[~spread], 0.0, atol=1e-12)
    single = np.array([0.5, 1.0, -2.0])
    assert ours(rewards=single, num_generations=1).tolist() == [0.0] * 3
    assert np.asarray(theirs(rewards=single, num_generations=1)).tolist() == [0.0] * 3
    # JAX's default float32 (x64 off), as in a Tunix run
    with jax.enable_x64(False):
        normal = rng.normal(size=32).astype(np.float32)
        got = ours(rewards=normal, num_generations=4)
        want = np.asarray(theirs(rewards=jax.numpy.asarray(normal), num_generations=4))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_tunix_estimators_are_objects_like_the_rewards():
    estimator = ztunix.AdvantageEstimator(preset="rloo")
    rewards = np.random.default_rng(0).normal(size=12)
    want = estimator(rewards, 4)
    for twin in twins(estimator):
        assert type(twin) is ztunix.AdvantageEstimator and twin.__name__ == "zero_rewards_rloo"
        assert (
            repr(twin)
            == repr(estimator)
            == ("zero_stacks.tunix.AdvantageEstimator('zero_rewards_rloo', preset='rloo')")
        )
        np.testing.assert_array_equal(twin(rewards, 4), want)
    assert estimator.options == dict(zero_jax.ADVANTAGE_PRESETS["rloo"])
    scaled = ztunix.AdvantageEstimator("mine", preset="rloo", scale="group", eps=1e-6)
    assert scaled.__name__ == "mine" and scaled.options["scale"] == "group"
    np.testing.assert_array_equal(
        scaled(rewards, 4),
        np.asarray(
            zero_jax.group_advantages(
                rewards.reshape(3, 4),
                **{**ADVANTAGE_PRESETS["rloo"], "scale": "group", "eps": 1e-6},
            )
        ).reshape(-1),
    )
    assert ztunix.AdvantageEstimator(preset="verl").__name__ == "zero_rewards_verl"
    assert ztunix.AdvantageEstimator().__name__ == ztunix.ESTIMATOR_NAME
    with pytest.raises(ValueError, match="preset must be one of"):
        ztunix.AdvantageEstimator(preset="ppo")
    with pytest.raises(ValueError, match="scale"):  # the library checks the options at once
        ztunix.AdvantageEstimator(preset="rloo", scale="row")
    with pytest.raises(ValueError, match="name must be a non-empty str"):
        ztunix.AdvantageEstimator("")


# ------------------------------------------------------------ TRL: advantage presets


def per_func_rewards(rng, groups: int, n: int, funcs: int, missing: float) -> np.ndarray:
    """``[groups * n, funcs]`` rewards as TRL's ``rewards_per_func``: binary, normal and
    constant groups, some entries NaN (None); one group unscorable, one with a single
    scorable completion."""
    kind = rng.integers(0, 3, (groups, 1, funcs))
    r = np.where(
        kind == 0,
        rng.integers(0, 2, (groups, n, funcs)),
        np.where(kind == 1, rng.normal(size=(groups, n, funcs)), 0.25),
    ).astype(np.float64)
    r[rng.random(r.shape) < missing] = np.nan
    r[0] = np.nan
    r[1, 1:] = np.nan
    return r.reshape(groups * n, funcs)


@pytest.mark.parametrize("n", [1, 2, 4, 8])
def test_trl_rloo_preset_reproduces_rloo_trainer(n):
    """RLOOTrainer (normalize_advantages=False, beta=0): the weighted nansum of several
    reward functions with None rewards, leave-one-out over the scorable siblings."""
    rng = np.random.default_rng(n)
    per_func = per_func_rewards(rng, 30, n, 3, missing=0.25)
    weights = [1.0, 0.5, -2.0]
    rows = torch.from_numpy(per_func)
    want = trl_rloo(rows, torch.tensor(weights, dtype=torch.float64), n)
    got = ztrl.trainer_advantages(rows, n, trainer="rloo", reward_weights=weights)
    torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)
    assert torch.all(got[: 2 * n] == 0.0)  # unscorable group, single scorable completion
    assert ztrl.advantage_options("rloo") == {
        "aggregation": "sum_then_normalize",
        **ADVANTAGE_PRESETS["rloo"],
    }
    # TRL's own dtypes (float32 rewards and weights): to float32 rounding
    rows32, w32 = rows.float(), torch.tensor(weights)
    got32 = ztrl.trainer_advantages(rows32, n, trainer="rloo", reward_weights=w32)
    assert got32.dtype == torch.float32
    torch.testing.assert_close(got32, trl_rloo(rows32, w32, n), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    ("aggregation", "scale"),
    [
        ("sum_then_normalize", "group"),
        ("sum_then_normalize", "batch"),
        ("sum_then_normalize", "none"),
        ("normalize_then_sum", "group"),
        ("normalize_then_sum", "none"),  # TRL ignores scale_rewards there
        (None, True),
        (None, False),
    ],
)
@pytest.mark.parametrize("n", [1, 4])
def test_trl_grpo_presets_reproduce_multi_objective_aggregation(aggregation, scale, n):
    """GRPOTrainer with ``reward_weights`` and both ``multi_objective_aggregation`` values:
    equal to TRL's arithmetic done in float64 (1e-12) and within 1e-7 of TRL's code as it
    stands (its nanstd takes the Bessel factor in float32)."""
    rng = np.random.default_rng(n)
    per_func = per_func_rewards(rng, 20, n, 3, missing=0.2)
    rows, weights = torch.from_numpy(per_func), torch.tensor([1.0, 0.5, 2.0], dtype=torch.float64)
    name = aggregation or "sum_then_normalize"
    scale_name = {True: "group", False: "none"}.get(scale, scale)
    exact = trl_multi_objective(rows, weights, n, name, scale_name, exact_correction=True)
    as_is = trl_multi_objective(rows, weights, n, name, scale_name)
    got = ztrl.trainer_advantages(
        rows,
        n,
        scale_rewards=scale,
        multi_objective_aggregation=aggregation,
        reward_weights=weights,
    )
    torch.testing.assert_close(got, exact, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(got, as_is, rtol=1e-7, atol=1e-7)
    options = ztrl.advantage_options(scale_rewards=scale, multi_objective_aggregation=aggregation)
    preset = "trl" if name == "normalize_then_sum" else ztrl.TRL_PRESETS[scale_name]
    assert options == {"aggregation": name, **ADVANTAGE_PRESETS[preset]}
    # One reward function, as a flat tensor: the single-reward helper agrees.
    flat = rows[:, 1].contiguous()
    if name == "sum_then_normalize" and not torch.isnan(flat).any():
        torch.testing.assert_close(
            ztrl.trainer_advantages(flat, n, scale_rewards=scale),
            ztrl.group_advantages(flat, n, scale_name),
            rtol=0,
            atol=0,
        )


def test_trl_advantage_options_reject_what_the_trainers_do_not_have():
    rows = torch.zeros(8, 2)
    with pytest.raises(ValueError, match="RLOOTrainer has no scale_rewards"):
        ztrl.advantage_options("rloo", scale_rewards="group")
    with pytest.raises(ValueError, match="RLOOTrainer has no multi_objective_aggregation"):
        ztrl.advantage_options("rloo", multi_objective_aggregation="normalize_then_sum")
    with pytest.raises(ValueError, match="trainer must be one of"):
        ztrl.advantage_options("ppo")
    with pytest.raises(ValueError, match="scale_rewards must be one of"):
        ztrl.advantage_options(scale_rewards="std")
    with pytest.raises(ValueError, match="multi_objective_aggregation must be one of"):
        ztrl.advantage_options(multi_objective_aggregation="sum")
    with pytest.raises(ValueError, match="reward_weights has 3 entries for 2"):
        ztrl.trainer_advantages(rows, 4, reward_weights=[1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="not a positive multiple of num_generations=3"):
        ztrl.trainer_advantages(rows, 3)
    for empty in (torch.zeros(0, 2), torch.zeros(0)):  # torch's reshape raised first
        with pytest.raises(ValueError, match="has 0 rows, not a positive multiple"):
            ztrl.trainer_advantages(empty, 4)
    with pytest.raises(ValueError, match="no reward function"):
        ztrl.trainer_advantages(torch.zeros(4, 0), 4)
    with pytest.raises(TypeError, match="must be floats"):
        ztrl.trainer_advantages(torch.zeros(8, 2, dtype=torch.int64), 4)
    with pytest.raises(TypeError, match="torch.Tensor"):
        ztrl.trainer_advantages(np.zeros((8, 2)), 4)
    with pytest.raises(ValueError):  # an infinite reward: the library refuses it
        ztrl.trainer_advantages(torch.tensor([[1.0], [float("inf")]]), 2)


# ------------------------------------------------------------ overlong penalty


@pytest.mark.parametrize(("max_length", "cache"), [(100, 20), (16, 0), (10, 10), (4096, 512)])
def test_overlong_penalty_equals_trl_soft_overlong_punishment(max_length, cache):
    """From the ``completion_ids`` TRL passes: exactly TRL's reward, float for float; the
    Tunix class with a token count gives the same numbers."""
    from trl.rewards import get_soft_overlong_punishment

    lengths = list(range(0, max_length + 30, max(1, max_length // 60)))
    ids = [[7] * n for n in lengths]
    texts = [" ".join(["w"] * n) for n in lengths]
    want = get_soft_overlong_punishment(max_length, cache)(ids)
    reward = ztrl.OverlongPenalty(max_length, cache)
    prompts = ["p"] * len(ids)
    assert reward(prompts=prompts, completions=texts, completion_ids=ids) == want
    tensors = [torch.tensor(i, dtype=torch.long) for i in ids]  # any sized rows
    assert (
        reward(
            prompts, [[{"role": "assistant", "content": t}] for t in texts], completion_ids=tensors
        )
        == want
    )
    counted = ztrl.OverlongPenalty(max_length, cache, count_tokens=token_count)
    assert counted(prompts, texts) == want
    tunix = ztunix.OverlongPenalty(max_length, cache, count_tokens=token_count)
    assert tunix(prompts, texts) == want  # x64 on here: float64, exactly
    with jax.enable_x64(False):
        got32 = tunix(prompts, texts)
    np.testing.assert_array_equal(np.float32(got32), np.float32(want))
    for twin in twins(reward) + twins(tunix):
        assert twin.__name__ == "zero_overlong" and twin.options["max_length"] == max_length
    assert twins(reward)[0](prompts, texts, completion_ids=ids) == want


def test_overlong_penalty_inside_tunix_reward_manager():
    """Tunix's reward manager hands the texts (and its num_generations); the penalty is
    logged under its __name__ and added to the other rewards."""
    pytest.importorskip("tunix", reason="needs the [tunix] extra (CI installs it)")
    from tunix.rl.grpo.grpo_learner import GRPOConfig
    from tunix.rl.reward_manager import SequenceRewardManager

    penalty = ztunix.OverlongPenalty(6, 2, count_tokens=token_count)
    manager = SequenceRewardManager([ztunix.SolverReward(), penalty], GRPOConfig(num_generations=2))
    completions = ["\\boxed{1}", "a b c d \\boxed{1}", "\\boxed{2} a b c d e f", "\\boxed{3}"]
    out = manager(["p", "p", "q", "q"], completions)
    np.testing.assert_array_equal(
        out["log_metrics"]["rewards/zero_overlong"][0], [0.0, -0.5, -1.0, 0.0]
    )
    np.testing.assert_array_equal(out["rewards"], [1.0, 0.5, 0.0, 0.0])


def test_overlong_penalty_bad_inputs():
    with pytest.raises(ValueError, match="count_tokens is required with Tunix"):
        ztunix.OverlongPenalty(100, 20)
    with pytest.raises(ValueError, match="completion_ids was not passed"):
        ztrl.OverlongPenalty(100, 20)(["p"], ["text"])
    for stack in (ztrl, ztunix):  # the library's checks, at construction
        with pytest.raises(ValueError, match="need cache <= max_length"):
            stack.OverlongPenalty(10, 20, count_tokens=len)
        with pytest.raises(ValueError, match="cache must be a finite number >= 0"):
            stack.OverlongPenalty(10, -1, count_tokens=len)
        with pytest.raises(TypeError, match="max_length must be a real scalar"):
            stack.OverlongPenalty("10", 1, count_tokens=len)
        with pytest.raises(TypeError, match="count_tokens must be a callable"):
            stack.OverlongPenalty(10, 1, count_tokens=3)
        with pytest.raises(TypeError, match="count_tokens must return an int"):
            stack.OverlongPenalty(10, 1, count_tokens=lambda t: 2.0)(["p"], ["x"])
        with pytest.raises(ValueError, match="count_tokens must return an int >= 0"):
            stack.OverlongPenalty(10, 1, count_tokens=lambda t: -1)(["p"], ["x"])
    reward = ztrl.OverlongPenalty(10, 2)
    with pytest.raises(ValueError, match="completion_ids has 1 entries but completions has 2"):
        reward(["p", "p"], ["a", "b"], completion_ids=[[1]])
    with pytest.raises(TypeError, match=r"completion_ids\[1\] must be a list of token ids"):
        reward(["p", "p"], ["a", "b"], completion_ids=[[1], 5])
    with pytest.raises(TypeError, match="completion_ids must be a list"):
        reward(["p"], ["a"], completion_ids="ab")


# ------------------------------------------------------------ vote diagnostics


FORMS = ["\\boxed{{{}}}", "so the answer is \\boxed{{ {} }}.", "<think>x</think>\\boxed{{${}$}}"]


def read(reply: str) -> str | None:
    """zero_text's documented answer: the normalised content of a complete box."""
    box = zero_text.extract_boxed(reply)
    answer = None if box is None else zero_text.normalize_answer(box)
    return answer or None


def unique_majority(row) -> bool:
    counts = sorted(((row.count(a), a) for a in set(row)), reverse=True)
    return len(counts) == 1 or counts[0][0] > counts[1][0]


def vote_batch(rng, b: int, g: int, k_s: int):
    """Rows of replies in mixed forms (some without an answer) whose majority over all
    ``g`` and over the first ``k_s`` is unique (where TTRL's Counter and the library's
    smallest-id rule agree), and a truth column in the forms datasets hold it."""
    rows, answers = [], []
    while len(rows) < b:
        values = rng.integers(0, 4, g)
        forms = rng.integers(0, len(FORMS) + 1, g)  # the last: no box
        replies = [
            FORMS[f].format(v) if f < len(FORMS) else f"it is {v}"
            for f, v in zip(forms, values, strict=True)
        ]
        read_row = [read(r) or f"<unparsed {j}>" for j, r in enumerate(replies)]
        if unique_majority(read_row) and unique_majority(read_row[:k_s]):
            rows.append(replies)
            answers.append(read_row)
    truth = [
        a[0] if rng.random() < 0.6 and not a[0].startswith("<") else str(rng.integers(0, 4))
        for a in answers
    ]
    given = [[f"${t}$", t, f"so \\boxed{{{t}}}"][i % 3] for i, t in enumerate(truth)]
    given = [
        int(t) if i % 5 == 4 and t.isdigit() else v
        for i, (t, v) in enumerate(zip(truth, given, strict=True))
    ]
    return rows, answers, truth, given


def ttrl_means(answers, truth, k_s):
    """The prompt means of TTRL's metrics on the answer strings (transcribed in
    test_published_label_free): votes on all K, trained on the first K_s."""
    per = [ttrl_test_time_train_metrics(a, t) for a, t in zip(answers, truth, strict=True)]
    reward = [
        ttrl_post_reward_accuracy(a[:k_s], t, rewards[:k_s])
        for a, t, (rewards, _) in zip(answers, truth, per, strict=True)
    ]
    maj = [
        ttrl_test_time_train_metrics(a[:k_s], t)[1]["label_accuracy"]
        for a, t in zip(answers, truth, strict=True)
    ]
    return [
        np.mean([m["label_accuracy"] for _, m in per]),
        np.mean(reward),
        np.mean([m["majority_ratio"] for _, m in per]),
        np.mean(maj),
    ]


@pytest.mark.parametrize("stack, lib", STACKS)
@pytest.mark.parametrize(("g", "trained"), [(6, None), (8, 3), (1, None)])
def test_vote_diagnostics_equal_ttrl_metrics_on_the_strings(stack, lib, g, trained):
    rng = np.random.default_rng(g)
    b = 24
    k_s = trained or g
    rows, answers, truth, given = vote_batch(rng, b, g, k_s)
    prompts = [f"q{i}" for i in range(b) for _ in range(g)]
    completions = [r for row in rows for r in row]
    columns = {"answer": [t for t in given for _ in range(g)]}
    diagnostics = stack.VoteDiagnostics(g, trained=trained)
    want = ttrl_means(answers, truth, k_s)
    names = [
        "votes/label_accuracy",
        "votes/reward_accuracy",
        "votes/majority_ratio",
        f"votes/maj@{k_s}",
    ]
    got = diagnostics.metrics(prompts, completions, **columns)
    assert list(got) == names
    np.testing.assert_allclose(list(got.values()), want, rtol=0, atol=1e-12)
    assert 0.0 < got["votes/label_accuracy"] < 1.0  # the batch has both kinds
    if stack is ztrl:  # a reward function: logs through TRL's log_metric, returns zeros
        logged = []
        out = diagnostics(
            prompts,
            completions,
            log_metric=lambda n, v: logged.append((n, v)),
            trainer_state=None,
            **columns,
        )
        assert out == [0.0] * len(completions) and logged == list(got.items())
    else:  # a Tunix metric_fns entry, called as the learner calls it
        out = diagnostics(
            prompts=prompts,
            completions=completions,
            advantages=np.zeros(len(prompts)),
            rewards=np.zeros(len(prompts)),
            **{k: np.array(v) for k, v in columns.items()},
        )
        assert list(out) == names
        assert [v for v, _ in out.values()] == list(got.values())
        assert all(op is np.mean for _, op in out.values())
    for twin in twins(diagnostics):
        assert (
            twin.__name__ == "zero_votes" and twin.metrics(prompts, completions, **columns) == got
        )


@pytest.mark.parametrize("stack, lib", STACKS)
def test_vote_diagnostics_read_the_solver_rewards_vote(stack, lib):
    """The truth is grouped after the replies, so the vote (ties to the answer seen first)
    is the one SolverReward pays; the reward accuracy is the share of the solver's
    rewards that equal the true ones.  A truth placed first would decide this tie."""
    prompts = ["p"] * 4 + ["q"] * 4
    completions = [
        "\\boxed{3}",
        "\\boxed{4}",
        "\\boxed{4}",
        "\\boxed{3}",
        "\\boxed{1}",
        "\\boxed{1}",
        "\\boxed{2}",
        "no box",
    ]
    truth = ["4"] * 4 + ["1"] * 4
    paid = stack.SolverReward(4)(prompts, completions)
    assert paid == [1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0]  # "3" wins the tie
    true = [float(read(c) == t) for c, t in zip(completions, truth, strict=True)]
    got = stack.VoteDiagnostics(4).metrics(prompts, completions, answer=truth)
    assert got == {
        "votes/label_accuracy": 0.5,
        "votes/reward_accuracy": np.mean(np.equal(paid, true)),
        "votes/majority_ratio": 0.5,
        "votes/maj@4": 0.5,
    }
    # With a truth equivalent only under math-verify (the fast path of plain numbers).
    got = stack.VoteDiagnostics(2, equivalence="math", prefix="").metrics(
        ["p", "p"], ["\\boxed{\\frac{1}{2}}", "\\boxed{0.5}"], answer=["1/2", "1/2"]
    )
    assert got == {
        "label_accuracy": 1.0,
        "reward_accuracy": 1.0,
        "majority_ratio": 1.0,
        "maj@2": 1.0,
    }


def test_vote_diagnostics_with_trl_calculate_rewards():
    """TRL 1.16's own ``GRPOTrainer._calculate_rewards`` (on a stand-in trainer holding
    only what it reads) calls the solver reward, the overlong penalty and the
    diagnostics with its keywords; the diagnostics reach TRL's pending metrics and add a
    column of zeros."""
    pytest.importorskip("trl", reason="needs the [trl] extra (CI installs it)")
    from accelerate import Accelerator
    from trl import GRPOTrainer
    from trl.trainer.utils import get_callable_name

    funcs = [ztrl.SolverReward(2), ztrl.OverlongPenalty(4, 2), ztrl.VoteDiagnostics(2)]
    trainer = SimpleNamespace(
        accelerator=Accelerator(cpu=True),
        args=SimpleNamespace(report_to=[]),
        state=SimpleNamespace(global_step=0),
        reward_funcs=funcs,
        reward_processing_classes=[None] * 3,
        reward_func_names=[get_callable_name(f) for f in funcs],
        environments=None,
        _pending_metrics=defaultdict(list),
        _pending_extra_logs=defaultdict(list),
    )
    trainer._log_metric = GRPOTrainer._log_metric.__get__(trainer)
    trainer._log_completion_extra = GRPOTrainer._log_completion_extra.__get__(trainer)
    inputs = [
        {"prompt": p, "answer": a} for p, a in [("p", "1"), ("p", "1"), ("q", "5"), ("q", "5")]
    ]
    completions = ["\\boxed{1}", "\\boxed{2}", "\\boxed{3}", "\\boxed{3}"]
    ids = [[1, 2], [1, 2, 3], [1], [1, 2, 3, 4, 5]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = GRPOTrainer._calculate_rewards(
            trainer, inputs, [x["prompt"] for x in inputs], completions, ids
        )
    assert trainer.reward_func_names == ["zero_solver", "zero_overlong", "zero_votes"]
    np.testing.assert_array_equal(
        got.numpy(), [[1.0, 0.0, 0.0], [0.0, -0.5, 0.0], [1.0, 0.0, 0.0], [1.0, -1.0, 0.0]]
    )
    assert dict(trainer._pending_metrics) == {
        # the solver's own diagnostics, one value per completion (TRL averages them)
        "zero_solver/parse_rate": [1.0, 1.0, 1.0, 1.0],
        "zero_solver/vote_share": [0.5, 0.5, 1.0, 1.0],
        "votes/label_accuracy": [0.5],
        "votes/reward_accuracy": [0.5],
        "votes/majority_ratio": [0.75],
        "votes/maj@2": [0.5],
    }


def test_vote_diagnostics_bad_inputs():
    with pytest.raises(ValueError, match="num_generations is required"):
        ztunix.VoteDiagnostics()
    with pytest.raises(ValueError, match="trained=5 exceeds num_generations=4"):
        ztrl.VoteDiagnostics(4, trained=5)
    with pytest.raises(TypeError, match="truth_column must be a column name"):
        ztrl.VoteDiagnostics(4, truth_column=None)
    with pytest.raises(ValueError, match="unparseable"):
        ztrl.VoteDiagnostics(4, unparseable="drop")
    with pytest.raises(TypeError, match="prefix must be a str"):
        ztrl.VoteDiagnostics(4, prefix=1)
    diagnostics = ztrl.VoteDiagnostics(2)
    with pytest.raises(ValueError, match="log_metric was not passed"):
        diagnostics(["p", "p"], ["\\boxed{1}"] * 2, answer=["1", "1"])
    with pytest.raises(ValueError, match="column 'answer' was not passed"):
        diagnostics.metrics(["p", "p"], ["\\boxed{1}"] * 2)
    with pytest.raises(ValueError, match="no usable answer"):
        diagnostics.metrics(["p", "p"], ["\\boxed{1}"] * 2, answer=["", ""])
    with pytest.raises(ValueError, match="varies inside the group"):
        diagnostics.metrics(["p", "p"], ["\\boxed{1}"] * 2, answer=["1", "2"])
    with pytest.raises(ValueError):  # trained beyond the stack's group: the library says so
        ztrl.VoteDiagnostics(trained=3).metrics(["p", "p"], ["a", "b"], 2, answer=["1"] * 2)


# ------------------------------------------------------------ math-verify options


@pytest.mark.parametrize("stack, lib", STACKS)
def test_solver_and_challenger_pass_timeout_and_processes_to_group_answers(stack, lib, monkeypatch):
    """``timeout`` and ``processes`` reach every ``zero_text.group_answers`` call that
    groups replies (the vote, frozen labels, the challenger's solver replies); the ids
    and so the rewards are those of the defaults on ordinary answers."""
    seen = []
    real = zero_text.group_answers

    def spy(replies, **kwargs):
        seen.append(kwargs)
        return real(replies, **kwargs)

    prompts = ["p"] * 3 + ["q"] * 3
    replies = ["\\boxed{0.5}", "\\boxed{\\frac{1}{2}}", "\\boxed{2}"]
    replies += ["\\boxed{3}", "x", "\\boxed{3}"]
    plain = stack.SolverReward(3, equivalence="math")(prompts, replies)
    monkeypatch.setattr(zero_text, "group_answers", spy)
    reward = stack.SolverReward(3, equivalence="math", timeout=0.5, processes=2)
    assert "timeout=0.5, processes=2" in repr(reward)
    assert reward(prompts, replies) == plain == [1.0, 1.0, 0.0, 1.0, 0.0, 1.0]
    frozen = stack.SolverReward(3, labels_column="y", equivalence="math", timeout=0.5, processes=2)
    assert frozen(prompts, replies, y=["1/2"] * 3 + ["3"] * 3) == plain
    challenger = stack.ChallengerReward(
        lambda qs, k: [["\\boxed{1}"] * k for _ in qs],
        1,
        num_samples=2,
        equivalence="math",
        timeout=0.5,
        processes=2,
    )
    challenger(["a"], ["<question>What is 1?</question> \\boxed{1}"])
    grouping = [kw for kw in seen if kw.get("equivalence") == "math"]
    assert len(grouping) >= 4  # construction checks, vote, frozen labels, challenger
    assert all(kw["timeout"] == 0.5 and kw["processes"] == 2 for kw in grouping)
    for twin in twins(reward):
        assert twin.options["timeout"] == 0.5 and twin.options["processes"] == 2


@pytest.mark.parametrize(
    ("kwargs", "exc", "fragment"),
    [
        ({"timeout": 0}, ValueError, "timeout must be a finite number of seconds > 0"),
        ({"timeout": "1"}, TypeError, "timeout must be a number of seconds"),
        ({"processes": 0}, ValueError, "processes must be >= 1"),
        ({"processes": 1.5}, TypeError, "processes must be an int"),
    ],
)
def test_math_options_are_checked_at_construction(kwargs, exc, fragment):
    for build in (
        lambda: ztrl.SolverReward(2, equivalence="math", **kwargs),
        lambda: ztunix.ChallengerReward(len, 2, equivalence="math", **kwargs),
        lambda: ztrl.VoteDiagnostics(2, **kwargs),
    ):
        with pytest.raises(exc, match=fragment):
            build()


def test_vote_metrics_fields_keep_their_names():
    """The backend keeps the library's NamedTuple (VoteMetrics) when converting."""
    m = ztrl.BACKEND.run("vote_metrics", np.array([[0, 0, 1]]), np.array([0]), 2)
    assert isinstance(m, VoteMetrics) and float(m.majority_ratio) == pytest.approx(2 / 3)
