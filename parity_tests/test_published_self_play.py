"""Issue 39: the published-code modes, frozen solver labels and role baselines against
the code they reproduce.

Each oracle below is our own transcription of the published function, written from
reading it at the commit named:

* R-Zero, github.com/Chengsong-Huang/R-Zero @ 5699329d018d79535b7910abdedf5a6eebf355fd:
  ``examples/reward_function/caller_penalty.py`` (``compute_score``, the tail of
  ``cluster_share_per_problem``), ``scripts/solver_train.sh`` and
  ``question_evaluate/upload.py`` (the band);
* Absolute Zero, github.com/LeapLabTHU/Absolute-Zero-Reasoner @
  a82124e514e27692aa9860c5ee21dbf9d81e3bc5:
  ``absolute_zero_reasoner/rewards/reward_managers.py`` (the generation reward) and
  ``absolute_zero_reasoner/configs/azr_ppo_trainer.yaml`` (its defaults); the remap is
  the subject of that repository's issue #37;
* SPIRAL, github.com/spiral-rl/spiral @ a02d0ed8d11c57e0ee4a4096e9881866d69a052b:
  ``train_spiral.py`` (``SelfPlayActor.prepare_trajectories``) and ``spiral/utils.py``
  (``EMA``);
* prime-rl, github.com/PrimeIntellect-ai/prime-rl @ 1ada1077b08dd9c72d440b7cdcf9dca55287c59c:
  ``src/prime_rl/orchestrator/algo/rae.py`` (``RAEAlgorithm.score_group``, PR #3136).
"""

from __future__ import annotations

from collections import Counter, defaultdict

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import zero_jax
from zero_contracts import BAND_PRESETS

from .tester import from_torch, to_torch

torch = pytest.importorskip("torch", reason="both twins are compared")
import zero_torch  # noqa: E402

TWINS = ("torch", "jax")


def run(twin: str, name: str, *arrays, **hypers):
    """``name`` of one twin on NumPy arrays (JAX with x64 on); NumPy result(s)."""
    if twin == "torch":
        out = getattr(zero_torch, name)(*(None if a is None else to_torch(np.asarray(a))
                                          for a in arrays), **hypers)
        convert = from_torch
    else:
        with jax.enable_x64(True):
            out = getattr(zero_jax, name)(*arrays, **hypers)
        convert = np.asarray
    return tuple(convert(o) for o in out) if isinstance(out, tuple) else convert(out)


# --------------------------------------------------------------------- R-Zero


def r_zero_cluster_shares(labels):
    """caller_penalty.py, ``cluster_share_per_problem`` after the clustering: each
    problem's cluster size over the number of problems (all of them, the empty
    questions of invalid proposals included)."""
    total = len(labels)
    cluster_size = Counter(labels)
    cluster_ratio = {lab: sz / total for lab, sz in cluster_size.items()}
    return [cluster_ratio[lab] for lab in labels]


def r_zero_compute_score(final_results, penalty):
    """caller_penalty.py, the loop at the end of ``compute_score``."""
    scores = []
    for i in range(len(final_results)):
        final_score = (
            min(final_results[i]["score"], 1 - final_results[i]["score"])
            if final_results[i]["question"]
            else -1
        ) - penalty[i]
        scores.append({"overall": final_score, "format": 1 if final_results[i]["question"] else 0,
                       "accuracy": penalty[i]})
    return scores


def r_zero_batch(rng, b):
    """Proposals as the published service returns them: a question with its vote share
    (top count over its 10 samples), or an invalid one: no question, score -1."""
    valid = rng.random(b) < 0.75
    score = rng.integers(0, 11, b) / 10
    results = [{"question": f"q{i}" if v else "", "score": float(s) if v else -1}
               for i, (v, s) in enumerate(zip(valid, score, strict=True))]
    labels = rng.integers(0, max(1, b // 3), b)  # AgglomerativeClustering's 0..k-1
    return results, labels


@pytest.mark.parametrize("twin", TWINS)
def test_r_zero_published_challenger_reward(twin):
    rng = np.random.default_rng(39)
    for b in (1, 2, 7, 16, 64, 257):
        results, labels = r_zero_batch(rng, b)
        penalty = r_zero_cluster_shares(labels.tolist())
        want = np.array([s["overall"] for s in r_zero_compute_score(results, penalty)])
        p = np.array([r["score"] for r in results])
        valid = np.array([bool(r["question"]) for r in results])
        for hypers in ({}, {"num_clusters": int(labels.max()) + 1}):
            got = run(twin, "challenger_rewards_published", p, labels, valid, **hypers)
            np.testing.assert_array_equal(got, want)  # float64: the same roundings
        if twin == "jax":  # x64 off: float32, within its rounding
            got32 = np.asarray(zero_jax.challenger_rewards_published(
                p.astype(np.float32), labels.astype(np.int32), valid))
            assert got32.dtype == np.float32
            np.testing.assert_allclose(got32, want, rtol=0, atol=4e-7)


def test_r_zero_published_differs_from_the_paper_form_as_documented():
    """Half the paper's uncertainty, the share subtracted unclipped (below 0), and
    ``-1 - share`` instead of 0 for an invalid proposal."""
    p = np.array([0.5, 0.9, 0.5, 0.3])
    ids = np.array([0, 0, 1, 2])
    valid = np.array([True, True, True, False])
    with jax.enable_x64(True):
        paper = np.asarray(zero_jax.challenger_rewards(p, ids, valid))
        code = np.asarray(zero_jax.challenger_rewards_published(p, ids, valid))
    np.testing.assert_allclose(paper, [0.5, 0.0, 0.75, 0.0], atol=1e-15)
    np.testing.assert_allclose(code, [0.0, -0.4, 0.25, -1.25], atol=1e-15)


def test_r_zero_published_band_preset_is_the_scripts_filter():
    """scripts/solver_train.sh runs ``upload.py --max_score 0.8 --min_score 0.3``,
    whose filter is ``score >= min_score and score <= max_score``; the scores are
    top counts over 1 to 10 non-empty answers (question_evaluate/evaluate.py)."""
    min_score, max_score = 0.3, 0.8
    scores = sorted({c / n for n in range(1, 11) for c in range(0, n + 1)})
    want = [s >= min_score and s <= max_score for s in scores]
    band = BAND_PRESETS["r_zero_published"]
    assert band == {"low": 0.3, "high": 0.8}
    assert BAND_PRESETS["r_zero_paper"] == {"low": 0.25, "high": 0.75}  # the defaults
    p = np.array(scores)
    assert run("torch", "curriculum_mask", p, **band).tolist() == want
    assert run("jax", "curriculum_mask", p, **band).tolist() == want
    with jax.enable_x64(False):  # float32 scores against float32 edges
        assert np.asarray(zero_jax.curriculum_mask(p, **band)).tolist() == want
    assert zero_jax.BAND_PRESETS is zero_torch.BAND_PRESETS is BAND_PRESETS


# -------------------------------------------------------------- Absolute Zero


def azr_generation_reward(accuracy, format_score, code_validity=True,
                          conversion="one_minus"):
    """reward_managers.py: ``_get_problem_generator_rewards_and_valid_programs`` (an
    invalid program is given accuracy 1.0; ``generation_accuracy_convertion``) and the
    generation branch of the training reward (format, then ``acc_reward > 0``; every
    intrinsic reward disabled, as in azr_ppo_trainer.yaml, so ``_combine_rewards`` with
    no components returns ``acc``)."""
    if not code_validity:
        accuracy = 1.0
    if conversion == "one_minus":
        acc_reward = (1 - accuracy) if accuracy > 0 else 0.0
    elif conversion == "inverse":
        acc_reward = 1 - accuracy
    else:
        raise ValueError(conversion)
    if format_score > 0:
        if acc_reward > 0:
            return acc_reward
        return -0.5
    return -1.0


@pytest.mark.parametrize("twin", TWINS)
def test_azr_published_proposer_reward(twin):
    """Solve rates as the published code estimates them (the mean of 1 to 8 binary
    rollouts), valid and invalid programs, good and bad formats."""
    rates, formats, validity = [], [], []
    for n in range(1, 9):
        for c in range(n + 1):
            for fmt in (0.0, 1.0):
                for ok in (True, False):
                    rates.append(sum([1.0] * c + [0.0] * (n - c)) / n)
                    formats.append(fmt)
                    validity.append(ok)
    want = np.array([azr_generation_reward(s, f, v)
                     for s, f, v in zip(rates, formats, validity, strict=True)])
    # the caller passes what the published code scores: rate 1 for a program that does
    # not run, and anything (never read) for a bad format
    s = np.array([r if ok else 1.0 for r, ok in zip(rates, validity, strict=True)])
    fmt = np.array(formats) > 0
    s = np.where(fmt, s, np.nan)
    np.testing.assert_array_equal(run(twin, "learnability_reward_published", s, fmt), want)
    # the paper's Eq. 4 agrees wherever the published code pays 1 - s
    inside = fmt & (want > 0)
    paper = run(twin, "learnability_reward", np.where(fmt, s, 0.5))
    np.testing.assert_array_equal(paper[inside], want[inside])
    assert set(paper[fmt & ~inside].tolist()) == {0.0}  # the code pays -0.5 there


# --------------------------------------------------------------------- SPIRAL


class SpiralEMA:
    """spiral/utils.py ``EMA`` as published."""

    def __init__(self, decay: float):
        assert 0.0 < decay < 1.0, "Decay must be between 0 and 1"
        self.decay = decay
        self.value = 0.0

    def update(self, x: float) -> float:
        if self.value is None:
            self.value = x
        else:
            self.value = self.decay * self.value + (1 - self.decay) * x
        return self.value

    def get(self) -> float:
        return self.value


def spiral_player_rewards(steps, gamma=0.95, reward_scaling=1.0):
    """train_spiral.py: the actor keeps ``role_baseline_ema`` across steps; each step's
    games are prepared in order, players 0 then 1, each reward shaped by its role's
    baseline read before the update."""
    role_baseline_ema = {0: SpiralEMA(gamma), 1: SpiralEMA(gamma)}
    out = []
    for games in steps:
        shaped = []
        for rewards in games:
            for player_id in [0, 1]:
                player_reward = rewards[player_id] * reward_scaling
                baseline = role_baseline_ema[player_id].get()
                role_baseline_ema[player_id].update(player_reward)
                player_reward -= baseline
                shaped.append(player_reward)
        out.append(shaped)
    return out, [role_baseline_ema[0].get(), role_baseline_ema[1].get()]


def spiral_steps(rng, steps, games):
    """Zero-sum outcomes (win / loss / draw) with a first-mover edge."""
    out = []
    for _ in range(steps):
        first = rng.choice([1.0, -1.0, 0.0], size=games, p=[0.6, 0.3, 0.1])
        out.append([{0: float(w), 1: float(-w)} for w in first])
    return out


@pytest.mark.parametrize("twin", TWINS)
def test_spiral_role_baselines_step_by_step(twin):
    rng = np.random.default_rng(2506)
    for gamma in (0.95, 0.5, 0.999):
        steps = spiral_steps(rng, 5, 6)
        want, last = spiral_player_rewards(steps, gamma)
        baselines = np.zeros(2)
        for games, shaped in zip(steps, want, strict=True):
            rewards = np.array([g[p] for g in games for p in (0, 1)])
            roles = np.tile([0, 1], len(games))
            adv, baselines = run(twin, "role_baseline_advantages", rewards, roles, baselines,
                                 num_roles=2, decay=gamma)
            if twin == "torch":  # the same float64 operations in the same order
                np.testing.assert_array_equal(adv, shaped)
            else:  # the same updates composed in a tree
                np.testing.assert_allclose(adv, shaped, rtol=0, atol=1e-14)
        np.testing.assert_allclose(baselines, last, rtol=0, atol=1e-14)


@pytest.mark.parametrize("x64", [True, False])
def test_spiral_role_baselines_carried_through_a_jitted_scan(x64):
    """The functional form: baselines in, new baselines out, so a run of steps is one
    ``lax.scan`` inside ``jit`` (the actor's EMA objects become the carry)."""
    rng = np.random.default_rng(7)
    steps = spiral_steps(rng, 12, 8)
    want, last = spiral_player_rewards(steps)
    rewards = np.array([[g[p] for g in games for p in (0, 1)] for games in steps])
    roles = np.tile([0, 1], 8)

    @jax.jit
    def run_all(r):
        def step(b, r_t):
            adv, b = zero_jax.role_baseline_advantages(r_t, roles, b, num_roles=2)
            return b, adv

        return jax.lax.scan(step, jnp.zeros(2, r.dtype), r)

    with jax.enable_x64(x64):
        b, adv = run_all(rewards)
        tol = 1e-14 if x64 else 2e-6
        np.testing.assert_allclose(np.asarray(adv), np.array(want), rtol=0, atol=tol)
        np.testing.assert_allclose(np.asarray(b), last, rtol=0, atol=tol)


def prime_rl_rae(traces, decay):
    """prime-rl ``RAEAlgorithm.score_group``: per rollout in order, advantage against
    the agent's baseline (default 0), then the baseline moves."""
    baselines: dict[str, float] = defaultdict(float)
    advantages = []
    for agent, reward in traces:
        baseline = baselines[agent]
        advantages.append(reward - baseline)
        baselines[agent] = decay * baseline + (1.0 - decay) * reward
    return advantages, baselines


@pytest.mark.parametrize("twin", TWINS)
def test_prime_rl_rae_with_three_agents_and_dropped_traces(twin):
    """prime-rl's RAE keyed by agent name; traces the caller drops (a mask) neither
    read nor move a baseline."""
    rng = np.random.default_rng(3136)
    names = ["proposer", "solver", "judge"]
    b = 40
    roles = rng.integers(0, 3, b)
    rewards = np.round(rng.normal(size=b), 3)
    keep = rng.random(b) < 0.8
    traces = [(names[k], float(r)) for k, r, m in zip(roles, rewards, keep, strict=True) if m]
    want, baselines = prime_rl_rae(traces, 0.9)
    junk_rewards = np.where(keep, rewards, np.nan)
    junk_roles = np.where(keep, roles, 7)
    adv, new = run(twin, "role_baseline_advantages", junk_rewards, junk_roles, np.zeros(3), keep,
                   num_roles=3, decay=0.9)
    np.testing.assert_allclose(adv[keep], want, rtol=0, atol=1e-14)
    assert (adv[~keep] == 0).all()
    np.testing.assert_allclose(new, [baselines[n] for n in names], rtol=0, atol=1e-14)


# ----------------------------------------------------- MM-Zero, frozen labels


@pytest.mark.parametrize("twin", TWINS)
def test_frozen_solver_rewards_are_solver_rewards_with_the_voted_label(twin):
    rng = np.random.default_rng(14)
    for k in (1, 3, 8):
        answers = rng.integers(0, 4, (50, k))
        valid = rng.random((50, k)) < 0.6
        labels, _ = run(twin, "consensus", answers, num_answers=4)
        for alpha in (0.9, 0.35, 0.0, 1.0):
            voted = run(twin, "solver_rewards", answers, valid, num_answers=4, alpha=alpha)
            frozen = run(twin, "solver_rewards_frozen", answers, valid, labels, alpha=alpha)
            np.testing.assert_array_equal(frozen, voted)


@pytest.mark.parametrize("twin", TWINS)
def test_frozen_solver_rewards_equal_the_former_appended_label_workaround(twin):
    """zero_stacks/solver.py used to append each frozen label G + 1 times and vote:
    the label then wins every row, and the original columns give the same numbers."""
    rng = np.random.default_rng(18)
    answers = rng.integers(0, 5, (30, 4))
    valid = rng.random((30, 4)) < 0.5
    labels = rng.integers(0, 5, 30)  # often not the row's majority
    extra = np.repeat(labels[:, None], 5, axis=1)
    padded = run(twin, "solver_rewards", np.concatenate([answers, extra], 1),
                 np.concatenate([valid, np.zeros(extra.shape, bool)], 1), num_answers=5,
                 alpha=0.9)[:, :4]
    got = run(twin, "solver_rewards_frozen", answers, valid, labels, alpha=0.9)
    np.testing.assert_array_equal(got, padded)
    assert got[0].tolist() == [0.9 * (a == labels[0]) + 0.1 * v
                               for a, v in zip(answers[0], valid[0], strict=True)]


# ------------------------------------------ prime-rl hierarchical GRPO (context)


def prime_rl_hierarchical_grpo(episodes, episode_agents=("solver",)):
    """prime-rl ``HierarchicalGRPOAlgorithm.score_group`` (PR #3138): peers keyed by
    (agent, episode id for the episode-scoped agents, else None); advantage = reward
    minus the peers' mean, no scaling."""
    peers = defaultdict(list)
    for episode_id, rollouts in episodes:
        for agent, reward in rollouts:
            scoped = agent in episode_agents
            peers[(agent, episode_id if scoped else None)].append((episode_id, agent, reward))
    advantages = {}
    for members in peers.values():
        baseline = sum(r for _, _, r in members) / len(members)
        for episode_id, agent, reward in members:
            advantages.setdefault((episode_id, agent), []).append(reward - baseline)
    return advantages


@pytest.mark.parametrize("twin", TWINS)
def test_hierarchical_grpo_is_group_advantages_on_groups_laid_out_per_role(twin):
    """The stateless per-role comparison needs no new function: solver attempts grouped
    per proposed problem, the proposals in one group, ``scale="none"`` (ragged groups
    by a mask; a group of one gets 0 as in prime-rl)."""
    rng = np.random.default_rng(3138)
    n_episodes, attempts = 6, 4
    episodes = []
    for e in range(n_episodes):
        solved = rng.integers(0, 2, attempts).astype(float).tolist()
        k = int(rng.integers(1, attempts + 1))  # some attempts failed to return
        episodes.append((e, [("proposer", float(np.round(rng.random(), 2)))]
                         + [("solver", s) for s in solved[:k]]))
    want = prime_rl_hierarchical_grpo(episodes)
    solver = np.zeros((n_episodes, attempts))
    kept = np.zeros((n_episodes, attempts), bool)
    for e, rollouts in episodes:
        rewards = [r for agent, r in rollouts if agent == "solver"]
        solver[e, : len(rewards)] = rewards
        kept[e, : len(rewards)] = True
    proposals = np.array([[rollouts[0][1] for _, rollouts in episodes]])
    options = {"scale": "none", "singleton": "zero"}
    got_solver = run(twin, "group_advantages", solver, kept, **options)
    got_proposer = run(twin, "group_advantages", proposals, None, **options)
    for e, _ in episodes:
        n = int(kept[e].sum())
        np.testing.assert_allclose(got_solver[e, :n], want[(e, "solver")], rtol=0, atol=1e-15)
        np.testing.assert_allclose(got_proposer[0, e], want[(e, "proposer")][0], rtol=0,
                                   atol=1e-15)
