"""group_advantages: JAX == torch, presets equal the published formulas (written
here the way verl, Tunix and TRL compute them), and degenerate groups (zero
variance, single sample, fully masked) give zeros, never NaN."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import zero_jax

torch = pytest.importorskip("torch", reason="advantage parity needs the torch twin")
import zero_torch  # noqa: E402


def verl_reference(scores, mask, eps=1e-6):
    """verl's compute_grpo_outcome_advantage on the kept entries (group ids = rows)."""
    out = torch.zeros_like(scores)
    for g in range(scores.shape[0]):
        kept = scores[g][mask[g]]
        if kept.numel() == 1:
            mean, std = torch.tensor(0.0, dtype=scores.dtype), torch.tensor(1.0, dtype=scores.dtype)
        else:
            mean, std = torch.mean(kept), torch.std(kept)
        out[g][mask[g]] = (kept - mean) / (std + eps)
    return out


def trl_reference(rewards, scale):
    """TRL GRPOTrainer._generate_and_score_completions advantage block."""
    g = rewards.shape[1]
    flat = rewards.reshape(-1)
    mean = flat.view(-1, g).mean(dim=1).repeat_interleave(g, dim=0)
    if scale == "batch":
        std = flat.std().expand_as(flat)
    else:
        std = flat.view(-1, g).std(dim=1).repeat_interleave(g, dim=0)
    adv = flat - mean
    if scale != "none":
        adv = adv / (std + 1e-4)
    return adv.view_as(rewards)


def tunix_reference(rewards):
    """Tunix grpo compute_advantages."""
    g = rewards.shape[1]
    flat = rewards.reshape(-1)
    mean = flat.reshape(-1, g).mean(axis=-1).repeat(g)
    std = flat.reshape(-1, g).std(axis=-1, ddof=1).repeat(g)
    return ((flat - mean) / (std + 1e-6)).reshape(rewards.shape)


def distinct_rewards(seed, g=6, n=5, dtype=np.float64):
    return np.random.default_rng(seed).normal(size=(g, n)).astype(dtype)


@pytest.mark.parametrize("seed", range(4))
def test_presets_reproduce_published_formulas(seed):
    r = distinct_rewards(seed)
    rt = torch.tensor(r)
    presets = zero_jax.ADVANTAGE_PRESETS
    np.testing.assert_allclose(
        zero_jax.group_advantages(r, **presets["tunix"]),
        tunix_reference(jnp.asarray(r)),
        atol=1e-12,
    )
    for name, scale in (("trl", "group"), ("trl_batch", "batch"), ("dr_grpo", "none")):
        want = trl_reference(rt, scale).numpy()
        np.testing.assert_allclose(zero_jax.group_advantages(r, **presets[name]), want, atol=1e-12)
        np.testing.assert_allclose(
            zero_torch.group_advantages(rt, **zero_torch.ADVANTAGE_PRESETS[name]).numpy(),
            want,
            atol=1e-12,
        )
    # verl with ragged groups (mask), including single-sample groups.
    mask = np.random.default_rng(seed).random(r.shape) < 0.7
    mask[0] = [True, False, False, False, False]
    want = verl_reference(rt, torch.tensor(mask)).numpy()
    got = zero_jax.group_advantages(r, mask, **presets["verl"])
    np.testing.assert_allclose(got, want, atol=1e-12)
    assert float(got[0, 0]) == pytest.approx(r[0, 0] / (1 + 1e-6))


def test_degenerate_groups_give_exact_zeros_never_nan():
    r = np.array(
        [
            [0.1, 0.1, 0.1, 0.1],  # zero variance (float32 residue would blow up)
            [0.7, 0.2, 0.3, 0.9],  # single kept sample
            [1.0, 2.0, 3.0, 4.0],  # fully masked
            [1.0, 0.0, 1.0, 0.0],  # ordinary
        ],
        np.float32,
    )
    mask = np.array([[1, 1, 1, 1], [0, 1, 0, 0], [0, 0, 0, 0], [1, 1, 1, 1]], bool)
    for scale in ("group", "batch", "none"):
        for ddof in (0, 1):
            j = np.asarray(zero_jax.group_advantages(r, mask, scale=scale, ddof=ddof))
            t = zero_torch.group_advantages(
                torch.tensor(r), torch.tensor(mask), scale=scale, ddof=ddof
            )
            assert np.all(np.isfinite(j))
            np.testing.assert_array_equal(j[:3], 0.0)
            np.testing.assert_allclose(j, t.numpy(), atol=1e-6)
            assert np.all(np.abs(j[3]) > 0)
    # Groups of one sample without a mask.
    np.testing.assert_array_equal(zero_jax.group_advantages(r[:, :1]), 0.0)


def test_masked_rows_take_no_part_in_the_baseline():
    r = np.array([[1.0, 0.0, 100.0]])
    mask = np.array([[True, True, False]])
    got = np.asarray(zero_jax.group_advantages(r, mask, scale="none"))
    np.testing.assert_array_equal(got, [[0.5, -0.5, 0.0]])
    got = np.asarray(zero_jax.group_advantages(r, mask))
    np.testing.assert_allclose(
        got, [[0.5 / (np.sqrt(0.5) + 1e-6), -0.5 / (np.sqrt(0.5) + 1e-6), 0]]
    )


@given(
    g=st.sampled_from([1, 3, 8]),
    n=st.sampled_from([1, 2, 4, 16]),
    dtype=st.sampled_from([np.float32, np.float64]),
    seed=st.integers(0, 2**32 - 1),
    scale=st.sampled_from(["group", "batch", "none"]),
    ddof=st.sampled_from([0, 1]),
    singleton=st.sampled_from(["zero", "raw"]),
)
def test_jax_torch_parity(g, n, dtype, seed, scale, ddof, singleton):
    rng = np.random.default_rng(seed)
    r = np.round(rng.normal(size=(g, n)), int(rng.integers(0, 3))).astype(dtype)
    mask = rng.random((g, n)) < rng.random()
    kw = {"scale": scale, "ddof": ddof, "singleton": singleton}
    j = np.asarray(zero_jax.group_advantages(r, mask, **kw))
    t = zero_torch.group_advantages(torch.tensor(r), torch.tensor(mask), **kw).numpy()
    assert j.dtype == t.dtype == dtype
    assert np.all(np.isfinite(j))
    np.testing.assert_allclose(
        j,
        t,
        rtol=1e-5 if dtype == np.float32 else 1e-12,
        atol=1e-5 if dtype == np.float32 else 1e-12,
    )
    np.testing.assert_array_equal(j[~mask], 0.0)


@pytest.mark.parametrize("scale", ["group", "batch", "none"])
def test_large_narrow_batches_agree_with_torch(scale):
    """2^18 groups of 4 (the shape of a large GRPO batch) give the values of the torch
    twin, and of the same groups computed in a small batch, for every degenerate-group
    rule."""
    g = 2**18
    rng = np.random.default_rng(7)
    r = np.round(rng.normal(size=(g, 4)), 1)
    r[: g // 4] = 0.5  # zero-variance groups
    mask = rng.random((g, 4)) < 0.6
    for ddof, singleton in ((1, "zero"), (0, "raw"), (1, "raw")):
        kw = {"scale": scale, "ddof": ddof, "singleton": singleton}
        j = np.asarray(zero_jax.group_advantages(r, mask, **kw))
        t = zero_torch.group_advantages(torch.tensor(r), torch.tensor(mask), **kw).numpy()
        np.testing.assert_allclose(j, t, rtol=1e-12, atol=1e-12)
        rows = np.asarray(zero_jax.group_advantages(r[:1000], mask[:1000], **kw))
        if scale != "batch":  # batch std differs between a slice and the whole batch
            np.testing.assert_allclose(j[:1000], rows, rtol=1e-12, atol=1e-12)
