"""group_advantages: JAX == torch, presets equal the published formulas (written
here the way verl, Tunix and TRL compute them), and degenerate groups (zero
variance, single sample, fully masked) give zeros, never NaN."""

from __future__ import annotations

import functools

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
        if scale != "batch":  # batch std differs between a slice and the whole batch
            rows = np.asarray(zero_jax.group_advantages(r[:1000], mask[:1000], **kw))
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


# ------------------------------------------------- finite for every option (issue 35)


def _edge_batches() -> list[tuple[np.ndarray, np.ndarray]]:
    """[4, 3] rewards and masks at the edges of every rule: lone samples of 0 (a batch
    std of 0), one kept sample in the whole batch, a batch of equal rewards, lone
    samples beside real groups, empty and all-equal groups, and random rewards."""
    full = np.ones((4, 3), bool)
    first = np.zeros((4, 3), bool)
    first[:, 0] = True
    one = np.zeros((4, 3), bool)
    one[0, 0] = True
    mixed_r = np.array([[5.0, 9, 9], [1, 2, 3], [7, 7, 7], [2, 2, 2]])
    mixed_m = np.array([[1, 0, 0], [1, 1, 1], [0, 0, 0], [1, 1, 1]], bool)
    rng = np.random.default_rng(35)
    return [
        (np.zeros((4, 3)), first),
        (np.ones((4, 3)), one),
        (np.ones((4, 3)), full),
        (np.full((4, 3), 0.7), first),
        (mixed_r, mixed_m),
        (np.round(rng.normal(size=(4, 3)), 2), rng.random((4, 3)) < 0.7),
        (np.round(rng.normal(size=(4, 3)), 2), full),
    ]


_PRESET_EPS = sorted({float(p["eps"]) for p in zero_jax.ADVANTAGE_PRESETS.values()})
OPTIONS = [
    {"scale": s, "singleton": o, "baseline": b, "eps": e, "ddof": d}
    for s in ("group", "batch", "none")
    for o in ("zero", "raw")
    for b in ("mean", "leave_one_out")
    for e in sorted({0.0, 1e-6, *_PRESET_EPS})
    for d in (0, 1, 2)
]


@pytest.mark.parametrize("x64", [False, True], ids=["x64-off", "x64-on"])
def test_every_option_is_finite_and_agrees_with_the_oracle(x64):
    """Every scale x singleton x baseline x eps (0 and the presets' values) x ddof, on
    valid data at the edges: finite in both twins and in multi_reward_advantages (both
    aggregations), and equal to the oracle written from the published definitions
    (which is finite there too).  eps = 0 with scale="batch" and singleton="raw" gave
    NaN / inf (a lone sample divided by a batch std of 0).  The edge batches run in a
    user's jit under vmap, eps traced: one jit holds every static option (one compile
    of them all, about a third of the time of one compile per option)."""
    import jax

    batches = _edge_batches()
    rs = np.stack([r for r, _ in batches]).astype(np.float32)
    ms = np.stack([m for _, m in batches])
    statics = sorted({tuple((k, v) for k, v in kw.items() if k != "eps") for kw in OPTIONS})

    def run(r, m, eps, static):
        static = dict(static)
        one = zero_jax.group_advantages(r, m, eps=eps, **static)
        multi = [zero_jax.multi_reward_advantages(r[..., None], None, m[..., None],
                                                  aggregation=a, eps=eps, **static)
                 for a in ("sum_then_normalize", "normalize_then_sum")]
        return one, *multi

    def every_option(r, m, eps):
        return [jax.vmap(functools.partial(run, static=s), in_axes=(0, 0, None))(r, m, eps)
                for s in statics]

    with jax.enable_x64(x64):
        fn = jax.jit(every_option)  # one compile, every static option and eps
        for eps in sorted({kw["eps"] for kw in OPTIONS}):
            for static, outs in zip(statics, fn(rs, ms, eps), strict=True):
                kw = {**dict(static), "eps": eps}
                _check_option(kw, batches, [np.asarray(o) for o in outs])


def _check_option(kw, batches, outs):
    from . import cases
    from .tester import compare

    for i, (r, m) in enumerate(batches):
        want = cases.group_advantages(r, m, **kw)
        assert np.all(np.isfinite(want)), ("oracle", kw, r, m)
        t = zero_torch.group_advantages(torch.tensor(r), torch.tensor(m), **kw).numpy()
        for out in (t, *(o[i] for o in outs)):
            assert np.all(np.isfinite(out)), (kw, r, m, out)
        scale = np.maximum(np.abs(r).max(), 1.0) * 4
        for o, what in zip(outs[:2], ("group_advantages", "multi_reward_advantages"), strict=True):
            compare(o[i], want.astype(np.float32), np.dtype(np.float32),
                    f"{what} {kw} batch {i}", scale)
        np.testing.assert_allclose(t, want, rtol=1e-12, atol=1e-12, err_msg=str(kw))


@pytest.mark.parametrize("x64", [False, True], ids=["x64-off", "x64-on"])
@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_lone_samples_under_batch_scaling_are_finite(x64, jit):
    """The issue's reproducers: lone samples with scale="batch", singleton="raw" are
    r / (1 + eps), as with scale="group" (they gave NaN, inf and 1e6)."""
    import jax

    kw = {"scale": "batch", "singleton": "raw"}
    for r, eps, want in ((np.zeros((2, 1)), 0.0, [[0.0], [0.0]]),
                         (np.ones((1, 1)), 0.0, [[1.0]]),
                         (np.ones((1, 1)), 1e-6, [[1 / (1 + 1e-6)]])):
        with jax.enable_x64(x64):
            fn = zero_jax.group_advantages
            fm = zero_jax.multi_reward_advantages
            if jit:
                got = jax.jit(lambda x, e: zero_jax.group_advantages(x, eps=e, **kw))(
                    jnp.asarray(r), eps)
                multi = jax.jit(lambda x, e: zero_jax.multi_reward_advantages(x, eps=e, **kw))(
                    jnp.asarray(r)[..., None], eps)
            else:
                got = fn(r, eps=eps, **kw)
                multi = fm(r[..., None], eps=eps, **kw)
            group = fn(r, eps=eps, scale="group", singleton="raw")
        t = zero_torch.group_advantages(torch.tensor(r), eps=eps, **kw).numpy()
        tm = zero_torch.multi_reward_advantages(torch.tensor(r)[..., None], eps=eps, **kw)
        for out in (got, multi, t, tm.numpy()):
            np.testing.assert_allclose(np.asarray(out, np.float64), want, rtol=1e-7)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(group))


# ------------------------------------------------------ RLOO memory (issue 35)


def test_leave_one_out_builds_no_group_squared_temporary():
    """RLOO was [G, N, N] differences (float64 in torch): N = 16,384 needed 2 GiB.  The
    jaxpr of the JAX kernel, x64 off and on, holds no value with N * N elements, and
    the torch twin runs G = 1, N = 16,384 with its peak traced allocation O(N)."""
    import jax

    n = 4096
    r = np.random.default_rng(1).normal(size=(2, n)).astype(np.float32)
    for x64 in (False, True):
        with jax.enable_x64(x64):
            hlo = jax.jit(lambda x: zero_jax.group_advantages(
                x, **zero_jax.ADVANTAGE_PRESETS["rloo"])).lower(jnp.asarray(r)).as_text()
        assert f"{n}x{n}" not in hlo and str(n * n) not in hlo
        assert f"2x{n}x" in hlo or f"2x{n}>" in hlo  # the text does name the shapes
    big = torch.tensor(np.random.default_rng(2).normal(size=(1, 16384)))
    peak = _torch_peak_elements(lambda: zero_torch.group_advantages(
        big, **zero_torch.ADVANTAGE_PRESETS["rloo"]))
    assert peak <= 4 * 16384, f"a torch temporary of {peak} elements"
    want = (big - (big.sum(-1, keepdim=True) - big) / (16384 - 1)).numpy()
    got = zero_torch.group_advantages(big, **zero_torch.ADVANTAGE_PRESETS["rloo"]).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


def _torch_peak_elements(fn) -> int:
    """The largest tensor any torch operation returns while ``fn`` runs."""
    from torch.overrides import TorchFunctionMode

    peak = [0]

    class Watch(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            for o in out if isinstance(out, (tuple, list)) else (out,):
                if isinstance(o, torch.Tensor):
                    peak[0] = max(peak[0], o.numel())
            return out

    with Watch():
        fn()
    return peak[0]
