"""zero_stacks.roles: SPIRAL's per-role moving baselines carried between a stack's
steps (TRL through zero_torch, Tunix through zero_jax), against the published update
(transcribed in ``test_published_self_play``)."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from zero_stacks.roles import RoleAdvantageEstimator, RoleBaselines

from .test_published_self_play import spiral_player_rewards, spiral_steps

torch = pytest.importorskip("torch", reason="the TRL side computes with zero_torch")


@pytest.mark.parametrize("library", ["zero_torch", "zero_jax"])
def test_role_baselines_follow_spirals_actor_across_steps(library):
    rng = np.random.default_rng(11)
    steps = spiral_steps(rng, 6, 5)
    want, last = spiral_player_rewards(steps, 0.95)
    baselines = RoleBaselines(2, library=library)
    for games, shaped in zip(steps, want, strict=True):
        rewards = np.array([g[p] for g in games for p in (0, 1)])
        roles = np.tile([0, 1], len(games))
        if library == "zero_torch":
            got = baselines(torch.tensor(rewards), torch.tensor(roles))
            assert isinstance(got, torch.Tensor) and got.dtype == torch.float64
            np.testing.assert_array_equal(got.numpy(), shaped)  # float64, the same order
        else:
            got = baselines(rewards.astype(np.float32), roles)
            assert isinstance(got, np.ndarray) and got.dtype == np.float32
            np.testing.assert_allclose(got, shaped, rtol=0, atol=2e-6)
    np.testing.assert_allclose(baselines.baselines, last, rtol=0, atol=2e-6)
    restored = pickle.loads(pickle.dumps(baselines))
    np.testing.assert_array_equal(restored.baselines, baselines.baselines)
    baselines.reset()
    assert baselines.baselines.tolist() == [0.0, 0.0]


@pytest.mark.parametrize("library", ["zero_torch", "zero_jax"])
def test_invalid_data_raises_and_leaves_the_baselines(library):
    baselines = RoleBaselines(2, decay=0.5, library=library)
    baselines(np.array([1.0, -1.0]), np.array([0, 1]))
    before = baselines.baselines.copy()
    with pytest.raises(ValueError, match="roles"):
        baselines(np.array([1.0, 1.0]), np.array([0, 2]))
    with pytest.raises(ValueError, match="rewards"):
        baselines(np.array([np.nan, 1.0]), np.array([0, 1]))
    np.testing.assert_array_equal(baselines.baselines, before)
    # dropped entries may hold anything
    got = baselines(np.array([np.nan, 1.0]), np.array([9, 1]), np.array([False, True]))
    assert np.asarray(got).tolist() == [0.0, 1.0 - before[1]]


def test_tunix_estimator_reads_roles_from_the_layout():
    rewards = np.array([1.0, 0.0, 0.5, 0.5, -1.0, 1.0, 0.0, 0.0], np.float32)  # 4 prompts x 2
    est = RoleAdvantageEstimator(2, decay=0.5)
    assert est.roles(8, 2).tolist() == [0, 0, 1, 1, 0, 0, 1, 1]
    got = est(rewards=rewards, num_generations=2)
    # role 0: prompts 0 and 2 -> 1, 0, -1, 1; role 1: prompts 1 and 3 -> .5, .5, 0, 0
    b0 = [0.0, 0.5, 0.25, -0.375]
    b1 = [0.0, 0.25, 0.375, 0.1875]
    want = [1 - b0[0], 0 - b0[1], 0.5 - b1[0], 0.5 - b1[1],
            -1 - b0[2], 1 - b0[3], 0 - b1[2], 0 - b1[3]]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-7)
    np.testing.assert_allclose(est.baselines, [0.3125, 0.09375], rtol=0, atol=1e-7)
    samples = RoleAdvantageEstimator(2, layout="samples")
    assert samples.roles(4, 2).tolist() == [0, 1, 0, 1]
    custom = RoleAdvantageEstimator(3, layout=lambda n, g: np.zeros(n, int))
    assert custom.roles(4, 2).tolist() == [0, 0, 0, 0]
    twin = copy.deepcopy(est)
    assert twin.__name__ == "zero_rewards_rae" and twin.baselines.tolist() == est.baselines.tolist()
    with pytest.raises(ValueError, match="num_generations"):
        est(rewards=rewards[:3], num_generations=2)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"num_roles": 0}, "num_roles"),
        ({"num_roles": 2, "decay": 1.5}, "decay"),
        ({"num_roles": 2, "decay": True}, "decay"),
        ({"num_roles": 2, "library": "numpy"}, "library"),
    ],
)
def test_options_are_checked_at_construction(kwargs, match):
    with pytest.raises((TypeError, ValueError), match=match):
        RoleBaselines(**kwargs)
    with pytest.raises(ValueError, match="layout"):
        RoleAdvantageEstimator(2, layout="rows")


def test_tunix_registration():
    pytest.importorskip("tunix", reason="needs the tunix extra")
    from tunix.rl import function_registry

    from zero_stacks.roles import register_role_advantage_estimator

    est = register_role_advantage_estimator(2, "zero_rewards_rae_test", decay=0.5)
    fn = function_registry.get_advantage_estimator("zero_rewards_rae_test")
    out = fn(rewards=np.array([1.0, 1.0, 0.0, 0.0]), num_generations=2)  # as GRPOLearner calls
    np.testing.assert_allclose(out, [1.0, 0.5, 0.0, 0.0], rtol=0, atol=1e-7)
    assert est.baselines.tolist() == [0.75, 0.0]
