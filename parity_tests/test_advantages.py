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


def _exact_advantages(r, baseline, ddof=1, eps=1e-6):
    """Group advantages of float32 rewards in float64 (exact to ~1e-16 relative)."""
    x = r.astype(np.float64)
    n = x.shape[-1]
    base = x.mean(-1, keepdims=True)
    if baseline == "leave_one_out":
        base = (x.sum(-1, keepdims=True) - x) / (n - 1)
    std = np.sqrt(((x - x.mean(-1, keepdims=True)) ** 2).sum(-1, keepdims=True) / (n - ddof))
    return (x - base) / (std + eps)


@pytest.mark.parametrize("baseline", ["mean", "leave_one_out"])
@pytest.mark.parametrize("twin", ["jax", "torch"])
def test_a_common_offset_costs_no_accuracy(twin, baseline):
    """float32 rewards 1e6 + N(0, 1) (a reward model's scores, lengths) and rewards one
    ulp apart: summed as they are, the mean and std lost ~10 % of the advantages and the
    sign of nearly equal rewards; by a corrected two-pass mean they are within a few
    float32 ulps of the exact advantages."""
    rng = np.random.default_rng(5)
    offset = (1e6 + rng.normal(size=(8, 16))).astype(np.float32)
    ulps = np.array([[1.0, np.nextafter(np.float32(1), np.float32(2))],
                     [3.0, np.nextafter(np.float32(3), np.float32(0))]], np.float32)
    outlier = np.concatenate([[[1e6]], rng.normal(size=(1, 15))], 1).astype(np.float32)
    for r in (offset, ulps, -offset, outlier):
        if twin == "jax":
            got = np.asarray(zero_jax.group_advantages(r, baseline=baseline))
        else:
            got = zero_torch.group_advantages(torch.from_numpy(r), baseline=baseline).numpy()
        np.testing.assert_allclose(got, _exact_advantages(r, baseline), rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("x64", [False, True])
@pytest.mark.parametrize("baseline", ["mean", "leave_one_out"])
@pytest.mark.parametrize("twin", ["jax", "torch"])
def test_rewards_of_any_finite_size_are_standardised(twin, baseline, x64):
    """float32 rewards of 1e20 (squared: beyond float32) gave an infinite std and every
    advantage 0 in both twins; rewards near the float32 maximum made the leave-one-out
    differences overflow to NaN; rewards 1e-20 apart (squared: flushed to 0) divided by
    a zero std.  Each group is now computed times a power of two: exact advantages
    (float64 oracle) with ``eps = 0``, group and batch scaling, and without scaling."""
    import jax

    top = float(np.finfo(np.float32).max)
    groups = [
        np.array([[1e20, -1e20, 0, 0], [3e20, 1e20, 2e20, 0]], np.float32),
        np.array([[0.6 * top, -0.6 * top, 0.6 * top, -0.6 * top, 0, 0]], np.float32),
        np.array([[1e-20, 2e-20, 3e-20, 5e-20], [1e-19, 0, 0, 0]], np.float32),
    ]
    for r in groups:
        x = r.astype(np.float64)  # float64 holds these squares
        n = x.shape[-1]
        base = x.mean(-1, keepdims=True) if baseline == "mean" else (
            (x.sum(-1, keepdims=True) - x) / (n - 1))
        for scale in ("group", "batch", "none"):
            if twin == "jax":
                with jax.enable_x64(x64):
                    got = np.asarray(zero_jax.group_advantages(
                        r, scale=scale, eps=0.0, baseline=baseline)).astype(np.float64)
            else:
                got = zero_torch.group_advantages(
                    torch.from_numpy(r), scale=scale, eps=0.0, baseline=baseline).double().numpy()
            std = {"group": x.std(-1, ddof=1, keepdims=True), "batch": x.std(ddof=1),
                   "none": 1.0}[scale]
            want = (x - base) / std
            assert np.all(np.isfinite(got)), (r, scale, got)
            np.testing.assert_allclose(got, want, rtol=3e-6, atol=0, err_msg=f"{r} {scale}")


def test_multi_reward_advantages_in_float64_with_x64_on_as_torch():
    """The weighted sum of float32 rewards is not a float32: with x64 on zero_jax computes
    it in float64, as the torch twin does (they differed by 0.07 on 1e6 + N(0, 1))."""
    import jax

    rng = np.random.default_rng(6)
    r = (1e6 + rng.normal(size=(4, 8, 2))).astype(np.float32)
    w = np.array([1.0, 0.5], np.float32)
    with jax.enable_x64(True):
        for aggregation in ("sum_then_normalize", "normalize_then_sum"):
            want = zero_torch.multi_reward_advantages(
                torch.from_numpy(r), torch.from_numpy(w), aggregation=aggregation).numpy()
            got = zero_jax.multi_reward_advantages(r, w, aggregation=aggregation)
            assert got.dtype == np.float32
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, atol=1e-7)
