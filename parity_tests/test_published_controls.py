"""EMPO, the spurious-reward controls and URLVR's diagnostics against their published code.

Each ``published_*`` function below is our own transcription of the published
function named in its docstring (repository, path, commit), written from reading it,
with the answer extraction and the equivalence checker (math-verify, an NLI model)
replaced by plain string equality: those parts are the caller's here (they give the
cluster / answer ids), and the tests are about what the published code does with
them.  Both twins are compared on random groups and on the edge cases where the
published code differs (said in each test).  The point-biserial correlation is
compared with ``scipy.stats.pointbiserialr``.

TTRL's ``urlvr-dev`` branch is not in the snapshot of PRIME-RL/TTRL available here
(main at 3e2cc93 has no URLVR code); the collapse step is checked against the paper's
definition (arXiv:2603.08660 §5: the training step at which the reward accuracy of a
majority-vote run first falls below 1%).
"""

from __future__ import annotations

import functools
import math
import random
from collections import Counter

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.stats

import zero_jax

from .tester import from_torch, to_torch

torch = pytest.importorskip("torch")
import zero_torch  # noqa: E402

TWINS = ("torch", "jax")
EMPO = "QingyangZhang/EMPO@c5eccd400ba7a7a1685dedf25eab03780aad855f"
SPURIOUS = "ruixin31/Rethink_RLVR@33b9f85d5b099fabade71f562e75db719f5feaf2"


def run(twin: str, name: str, *arrays, **hypers) -> np.ndarray:
    if twin == "torch":
        out = getattr(zero_torch, name)(*(to_torch(np.asarray(a)) for a in arrays), **hypers)
        return from_torch(out)
    return np.asarray(getattr(zero_jax, name)(*arrays, **hypers))


# ------------------------------------------------------------------------ EMPO


def published_semantic_ids(predictions: list[str]) -> list[int]:
    """EMPO ``trl/src/open_r1/semantic_uncertainty.py::get_semantic_ids_by_rule``: each
    unassigned prediction opens the next id and pulls in every later one the rule calls
    equivalent (rule: string equality here)."""
    ids = [-1] * len(predictions)
    next_id = 0
    for i, a in enumerate(predictions):
        if ids[i] == -1:
            ids[i] = next_id
            for j in range(i + 1, len(predictions)):
                if a == predictions[j]:
                    ids[j] = next_id
            next_id += 1
    return ids


def published_empo_math_reward(predictions: list[str]) -> list[float]:
    """EMPO ``trl/src/open_r1/rewards.py::get_empo_math_reward`` (one group): shares of
    the clusters (np.bincount / n), entropy -(p log p).sum() in numpy float64, and
    ``reward = probabilities[id]`` (0.0 for an empty prediction) if
    ``total_entropy < math.log(n_generations)``, else 0.0 for the whole group."""
    ids = published_semantic_ids(predictions)
    n = len(ids)
    probabilities = np.bincount(ids) / n
    total_entropy = -(probabilities * np.log(probabilities)).sum()
    rewards = []
    for index in range(n):
        if total_entropy < math.log(n):
            rewards.append(0.0 if predictions[index] == "" else float(probabilities[ids[index]]))
        else:
            rewards.append(0.0)
    return rewards


def published_verl_entropy_reward(answers: list[str]) -> list[float]:
    """EMPO ``verl-empo/verl/utils/reward_score/empo/compute_metrics.py``:
    ``post_semantic_cluster`` (an empty answer is a cluster of its own; the others join
    the first cluster whose first member is equal) and ``reward_type == 'entropy'``:
    ``rewards = frequencies`` (the thresholding there is commented out)."""
    n = len(answers)
    cluster = [-1] * n
    counts: list[int] = []
    reps: list[str] = []
    for i, a in enumerate(answers):
        if a == "":
            cluster[i] = len(counts)
            counts.append(1)
            reps.append(a)
            continue
        for j in range(len(counts)):
            if reps[j] == "":
                continue
            if a == answers[cluster.index(j)]:
                cluster[i] = j
                counts[j] += 1
                break
        else:
            cluster[i] = len(counts)
            counts.append(1)
            reps.append(a)
    return [counts[c] / n for c in cluster]


def _groups(rng: random.Random, k: int, count: int) -> list[list[str]]:
    """Groups of k predictions: a few distinct answers, empty ones, all-distinct and
    all-equal groups."""
    out = []
    for g in range(count):
        kind = g % 4
        if kind == 0:
            out.append([str(i) for i in range(k)])  # all different: the filter's case
        elif kind == 1:
            out.append(["42"] * k)
        else:
            out.append([rng.choice(["1", "2", "3", "", "17"]) for _ in range(k)])
    return out


def _empo_twin(twin: str, groups: list[list[str]]) -> np.ndarray:
    ids = np.array([published_semantic_ids(g) for g in groups], np.int64)
    answered = np.array([[p != "" for p in g] for g in groups])
    rewards = run(twin, "semantic_cluster_rewards", ids, answered)
    keep = run(twin, "semantic_entropy_filter", ids)
    return rewards * keep[:, None]


@pytest.mark.parametrize("twin", TWINS)
@pytest.mark.parametrize("k", [1, 2, 4, 5, 8, 12, 16])
def test_empo_reward_and_filter_equal_the_published_trl_reward(twin, k):
    groups = _groups(random.Random(k), k, 40)
    want = np.array([published_empo_math_reward(g) for g in groups])
    np.testing.assert_array_equal(_empo_twin(twin, groups), want)


@pytest.mark.parametrize("twin", TWINS)
@pytest.mark.parametrize("k", [3, 6, 7, 10, 14])
def test_empo_filter_is_exact_where_the_published_numpy_entropy_rounds_below_log_k(twin, k):
    """For these K, numpy's -(p log p).sum() of K singletons rounds below math.log(K),
    so the published code keeps (and pays 1/K to) a group whose answers all differ,
    which its threshold is there to drop (and with its recipes' K = 7 it drops nothing).
    The library compares exactly: every other group as published, all-distinct ones
    dropped."""
    p = np.bincount(np.arange(k)) / k
    assert -(p * np.log(p)).sum() < math.log(k)  # the rounding, as published
    groups = _groups(random.Random(k), k, 40)
    want = np.array([published_empo_math_reward(g) for g in groups])
    distinct = np.array([len(set(g)) == k for g in groups])
    assert distinct[0] and (want[0] == 1 / k).all()  # group 0: K different answers
    got = _empo_twin(twin, groups)
    np.testing.assert_array_equal(got[~distinct], want[~distinct])
    np.testing.assert_array_equal(got[distinct], 0.0)


@pytest.mark.parametrize("twin", TWINS)
def test_empo_reward_equals_the_published_verl_entropy_reward(twin):
    """verl-empo pays every response its cluster's share, empty answers included (each
    its own cluster): all answered, ids from the same clustering."""
    rng = random.Random(7)
    groups = [[rng.choice(["a", "b", "", "c"]) for _ in range(8)] for _ in range(50)]
    ids = []
    for g in groups:  # the verl clustering as ids: empties alone, the rest by equality
        seen: dict[str, int] = {}
        row = []
        for i, a in enumerate(g):
            key = f"\0{i}" if a == "" else a
            row.append(seen.setdefault(key, len(seen)))
        ids.append(row)
    got = run(twin, "semantic_cluster_rewards", np.array(ids), np.ones((50, 8), bool))
    want = np.array([published_verl_entropy_reward(g) for g in groups])
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("twin", TWINS)
def test_entropy_filter_threshold_is_a_fraction_of_log_k(twin):
    """max_entropy < 1 is the paper's threshold in nats divided by log K: compared with
    -(p log p).sum() < max_entropy log K where no group is within rounding of the edge."""
    rng = np.random.default_rng(0)
    ids = rng.integers(0, 4, (300, 8))
    for t in (0.2, 0.45, 0.66, 0.9):
        want = []
        for row in ids:
            p = np.bincount(row) / 8
            p = p[p > 0]
            h = float(-(p * np.log(p)).sum())
            assert abs(h - t * math.log(8)) > 1e-9
            want.append(h < t * math.log(8))
        np.testing.assert_array_equal(run(twin, "semantic_entropy_filter", ids, t), want)


# ----------------------------------------------------------------- Spurious Rewards


def published_random_reward_fn(rate: float) -> int:
    """Rethink_RLVR ``code/ttrl/verifier/auto_verify.py::random_reward_fn``."""
    return int(random.random() < rate)


def published_format_reward_fn(model_answer: str) -> float:
    """Rethink_RLVR ``code/ttrl/verifier/qwen/qwen_eval.py::format_reward_fn`` after its
    ``extract_answer``: 1.0 for a non-empty extracted answer."""
    return 1.0 if model_answer else 0.0


def published_incorrect_label(preds: list[str], answer: str) -> str | None:
    """Rethink_RLVR ``code/scripts/relabel_data_based_on_mv_labels.py::get_mv_labels``
    with ``filter='incorrect'``, ``mv_order=0``: the most common non-empty prediction
    (Counter.most_common: ties to the first seen) is the label; the prompt is kept
    (returned) only if that label is wrong."""
    preds = [p for p in preds if p]
    sorted_preds = [p for p, _ in Counter(preds).most_common()]
    majority = sorted_preds[0] if sorted_preds else ""
    return None if majority == answer else majority


def published_math_reward(answer: str, label: str) -> float:
    """``qwen_reward_fn`` against the (wrong) label, with ``grade_answer`` as equality."""
    return 1.0 if answer == label else 0.0


@pytest.mark.parametrize("twin", TWINS)
def test_wrong_label_rewards_equal_the_published_incorrect_arm_on_its_prompts(twin):
    rng = random.Random(3)
    groups, truths = [], []
    for _ in range(400):
        k = rng.choice([1, 3, 8])
        groups.append([rng.choice(["5", "7", "9", "11"]) for _ in range(k)])
        truths.append(rng.choice(["5", "7", "13"]))
    checked = 0
    for g, t in zip(groups, truths, strict=True):
        label = published_incorrect_label(g, t)
        ids: dict[str, int] = {}  # ids in order of first appearance, the truth last
        row = [ids.setdefault(a, len(ids)) for a in g]
        truth = ids.setdefault(t, len(ids))
        got = run(twin, "wrong_label_rewards", np.array([row]), np.array([truth]))[0]
        if label is None:  # the published arm drops the prompt; here: the top wrong one
            wrong = [a for a in g if a != t]
            if not wrong:
                np.testing.assert_array_equal(got, 0.0)
            else:
                top = max(wrong.count(a) for a in wrong)
                runner = next(a for a in g if a != t and wrong.count(a) == top)
                np.testing.assert_array_equal(got, [float(a == runner) for a in g])
            continue
        checked += 1
        np.testing.assert_array_equal(got, [published_math_reward(a, label) for a in g])
    assert checked > 100


@pytest.mark.parametrize("twin", TWINS)
def test_format_rewards_equal_the_published_format_reward(twin):
    extracted = ["12", "", "x + 1", "", "0"]
    want = [published_format_reward_fn(a) for a in extracted]
    got = run(twin, "format_rewards", np.array([a != "" for a in extracted]))
    np.testing.assert_array_equal(got, want)


def _binomial_ok(hits: int, n: int, rate: float) -> bool:
    """Within 5 standard deviations of a Bernoulli(rate) count (exact at 0 and 1)."""
    if rate in (0.0, 1.0):
        return hits == n * rate
    return abs(hits - n * rate) <= 5 * math.sqrt(n * rate * (1 - rate))


@functools.cache
def _published_coins(rate: float, n: int) -> int:
    random.seed(0)
    return sum(published_random_reward_fn(rate) for _ in range(n))


@pytest.mark.parametrize("twin", TWINS)
@pytest.mark.parametrize("rate", [0.0, 0.01, 0.5, 0.8, 1.0])
def test_random_rewards_have_the_published_coin_rate(twin, rate):
    """The published coin is Bernoulli(rate); so is each twin's, for a given seed, and
    only the masked-in responses get a coin."""
    n = 100_000
    assert _binomial_ok(_published_coins(rate, n), n, rate)
    mask = np.arange(n) % 10 != 0
    got = run(twin, "random_rewards", np.asarray(12345), mask, rate=rate)
    assert set(np.unique(got).tolist()) <= {0.0, 1.0}
    assert (got[~mask] == 0).all()
    assert _binomial_ok(int(got[mask].sum()), int(mask.sum()), rate)


def test_random_rewards_are_reproducible_and_independent():
    """Same seed: the same coins, eagerly, jitted, vmapped, with x64 on or off, and for
    a typed key; other seeds: other coins, independent of each other."""
    mask = np.ones(4096, bool)
    base = np.asarray(zero_jax.random_rewards(np.asarray(7), mask, 0.5))
    for x64 in (False, True):
        with jax.enable_x64(x64):
            np.testing.assert_array_equal(zero_jax.random_rewards(7, mask, 0.5), base)
            step = jax.jit(lambda s, r: zero_jax.random_rewards(s, mask, r))
            np.testing.assert_array_equal(step(jnp.asarray(7), 0.5), base)
            stacked = jax.vmap(lambda s: zero_jax.random_rewards(s, mask, 0.5))(
                jnp.array([7, 8]))
            np.testing.assert_array_equal(stacked[0], base)
    other = np.asarray(zero_jax.random_rewards(8, mask, 0.5))
    # two fair coins agree on about half the responses
    assert _binomial_ok(int((other == base).sum()), 4096, 0.5)
    key = jax.random.key(3)
    a = zero_jax.random_rewards(key, mask, 0.5)
    np.testing.assert_array_equal(jax.jit(lambda k: zero_jax.random_rewards(k, mask, 0.5))(key), a)
    b = zero_jax.random_rewards(jax.random.split(key)[0], mask, 0.5)
    assert _binomial_ok(int((np.asarray(a) == np.asarray(b)).sum()), 4096, 0.5)
    t = torch.ones(4096, dtype=torch.bool)
    np.testing.assert_array_equal(zero_torch.random_rewards(7, t), zero_torch.random_rewards(
        torch.tensor(7), t))
    g = torch.Generator().manual_seed(7)
    np.testing.assert_array_equal(zero_torch.random_rewards(g, t), zero_torch.random_rewards(7, t))
    assert not torch.equal(zero_torch.random_rewards(g, t), zero_torch.random_rewards(7, t))


def test_matched_rate_follows_a_traced_mean_inside_a_jitted_step():
    """The TTRL example's random arm: a coin whose rate is the majority arm's mean
    reward, computed in the same jitted step."""
    mask = np.ones(100_000, bool)
    step = jax.jit(lambda key, r: zero_jax.random_rewards(key, mask, jnp.mean(r)))
    for mean in (0.1, 0.625):
        r = np.where(np.arange(64) < mean * 64, 1.0, 0.0)
        coins = step(jax.random.key(1), r)
        assert _binomial_ok(int(coins.sum()), 100_000, float(r.mean()))
    bad = step(jax.random.key(1), np.array([0.5, 2.0]))  # a mean outside [0, 1]
    assert np.isnan(np.asarray(bad)).all()


# ------------------------------------------------------------------------ URLVR


@pytest.mark.parametrize("twin", TWINS)
def test_point_biserial_equals_scipy(twin):
    rng = np.random.default_rng(5)
    for b in (2, 3, 17, 256, 4096):
        t = rng.random(b) < 0.4
        t[0], t[-1] = True, False
        for x in (rng.normal(size=b), t + rng.normal(size=b) * 0.5,
                  rng.integers(0, 9, b) / 8, np.where(t, 0.9, 0.1)):
            want = scipy.stats.pointbiserialr(t, x).statistic
            got = float(run(twin, "point_biserial", x.astype(np.float64), t))
            assert got == pytest.approx(want, rel=1e-12, abs=1e-12), (b, got, want)


@pytest.mark.parametrize("twin", TWINS)
def test_point_biserial_is_nan_where_scipy_is_undefined(twin):
    """A constant truth or proxy: scipy gives NaN (with a warning); so do the twins."""
    cases = [(np.array([0.2, 0.9, 0.4]), np.array([True, True, True])),
             (np.array([0.2, 0.9, 0.4]), np.array([False, False, False])),
             (np.full(5, 0.3), np.array([True, False, True, False, True])),
             (np.array([0.7]), np.array([True]))]
    for x, t in cases:
        with np.errstate(all="ignore"), pytest.warns(Warning) if len(x) > 1 else _nothing():
            want = scipy.stats.pointbiserialr(t, x).statistic if len(x) > 1 else np.nan
        assert np.isnan(want)
        assert np.isnan(float(run(twin, "point_biserial", x, t)))


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def published_model_collapse_step(reward_accuracy: list[float]) -> int:
    """URLVR §5: Model Collapse Step = min { t : Reward Accuracy(t) < 1% } (-1 here when
    the run never collapses)."""
    return next((t for t, acc in enumerate(reward_accuracy) if acc < 0.01), -1)


@pytest.mark.parametrize("twin", TWINS)
def test_collapse_step_is_the_model_collapse_step(twin):
    rng = np.random.default_rng(9)
    for _ in range(50):
        n = int(rng.integers(0, 300))
        peak = int(rng.integers(1, 60))
        steps = np.arange(n)
        acc = np.clip(np.where(steps < peak, 0.4 + 0.5 * steps / peak,
                               0.9 - (steps - peak) / rng.uniform(20, 400)), 0, 1)
        acc = np.round(acc + rng.normal(size=n) * 0.01, 4)
        want = published_model_collapse_step(acc.tolist())
        assert int(run(twin, "collapse_step", acc)) == want


def test_collapse_step_of_vote_metrics_logged_over_a_run():
    """The diagnostic as the recipe uses it: reward accuracy from vote_metrics at each
    step of a toy run whose majority drifts away from the truth, vmapped over runs."""
    k, b, steps = 8, 64, 40
    rng = np.random.default_rng(0)
    truth = rng.integers(0, 5, b)
    curves = []
    for run_id in range(3):
        accs = []
        for s in range(steps):
            drift = min(1.0, s / (10 + 10 * run_id))  # share of answers that go wrong
            wrong = rng.random((b, k)) < drift
            answers = np.where(wrong, (truth[:, None] + 1) % 5, truth[:, None])
            m = zero_jax.vote_metrics(answers, truth, 5)
            accs.append(float(m.reward_accuracy))
        curves.append(accs)
    curves_arr = np.array(curves, np.float32)
    got = jax.vmap(lambda v: zero_jax.collapse_step(v, 0.01))(curves_arr)
    want = [published_model_collapse_step(c) for c in curves]
    np.testing.assert_array_equal(np.asarray(got), want)
    assert all(w > 0 for w in want)
