"""The label-free toolkit against the published code it reproduces.

Each oracle below is our own transcription of a published function (repository, file
and function in its docstring), written from reading it; where the published function
is a plain function installed here (TRL's ``get_soft_overlong_punishment``, Tunix's
``compute_rloo_advantages``) it is called directly.  Both twins are compared, on random
batches and on the edge cases where the published code is undefined or differs (said
in each test).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from decimal import Decimal, getcontext
from fractions import Fraction

import jax
import numpy as np
import pytest

import zero_jax
from zero_contracts import ADVANTAGE_PRESETS

from .tester import from_torch, to_torch

torch = pytest.importorskip("torch", reason="the published torch code runs on torch")
import zero_torch  # noqa: E402

TWINS = ("torch", "jax")
RLOO = ADVANTAGE_PRESETS["rloo"]
TRL = ADVANTAGE_PRESETS["trl"]


def run(twin: str, name: str, *arrays, **hypers):
    """``name`` of one twin on NumPy arrays; NumPy results (a tuple for VoteMetrics)."""
    if twin == "torch":
        out = getattr(zero_torch, name)(
            *(a if a is None or isinstance(a, int) else to_torch(np.asarray(a)) for a in arrays),
            **hypers,
        )  # a Python int (num_answers, k) stays one: a 1-element tensor is no count
        convert = from_torch
    else:
        out = getattr(zero_jax, name)(*arrays, **hypers)
        convert = np.asarray
    if isinstance(out, tuple):
        return tuple(float(convert(o)) for o in out)
    return convert(out)


def float32_of(x: Fraction) -> np.float32:
    """The float32 nearest to an exact rational (ties to even), by exact comparison."""
    f = np.float32(float(x))
    candidates = [np.nextafter(f, np.float32(-np.inf)), f, np.nextafter(f, np.float32(np.inf))]
    return min(candidates, key=lambda c: (abs(Fraction(float(c)) - x), int(c.view(np.int32)) & 1))


# ----------------------------------------------------------------------- RLOO


def _nanstd(x: torch.Tensor, dim=None, exact_correction: bool = False) -> torch.Tensor:
    """huggingface/trl ``trl/trainer/utils.py``: ``nanstd`` (Bessel-corrected, NaN-aware;
    NaN for fewer than two values).  Its correction ``count / (count - 1)`` divides two
    int64 tensors, which torch does in float32: a float64 std is off by up to ~3e-8
    relative (so the comparisons with it allow 1e-7); ``exact_correction`` divides in
    the tensor's dtype instead."""
    mean = torch.nanmean(x, dim=dim, keepdim=True)
    variance = torch.nanmean((x - mean) ** 2, dim=dim, keepdim=True)
    count = torch.sum(~torch.isnan(x), dim=dim, keepdim=True)
    if exact_correction:
        count = count.to(x.dtype)
    variance = variance * torch.where(count > 1, count / (count - 1),
                                      torch.full_like(count / 1.0, float("nan")))
    std = torch.sqrt(variance)
    return std if dim is None else std.squeeze(dim)


def trl_rloo(rewards_per_func: torch.Tensor, weights: torch.Tensor, n: int,
             normalize_advantages: bool = False) -> torch.Tensor:
    """huggingface/trl 1.16 ``trl/trainer/rloo_trainer.py``, ``RLOOTrainer.
    _generate_and_score_completions``, the advantage block: weighted ``nansum`` of the
    reward functions, a completion with every reward None unscorable (NaN), the
    leave-one-out baseline over the group's scorable siblings, with
    ``normalize_advantages`` (default False) the batch's ``(A - nanmean) / (nanstd +
    1e-4)`` over the scorable ones, ``nan_to_num`` last."""
    unscorable = torch.isnan(rewards_per_func).all(dim=1)
    rewards = (rewards_per_func * weights.unsqueeze(0)).nansum(dim=1)
    rewards[unscorable] = torch.nan
    grouped = rewards.view(-1, n)
    count = (~torch.isnan(grouped)).sum(dim=1, keepdim=True)
    total = torch.nansum(grouped, dim=1, keepdim=True)
    if n > 1:
        advantages = rewards - ((total - grouped) / (count - 1)).view(-1)
    else:
        advantages = torch.zeros_like(rewards)
    if normalize_advantages:
        advantages = (advantages - torch.nanmean(advantages)) / (_nanstd(advantages) + 1e-4)
    return torch.nan_to_num(advantages, nan=0.0)


def verl_rloo(scores: np.ndarray, index: list) -> np.ndarray:
    """volcengine/verl ``verl/trainer/ppo/core_algos.py``: ``compute_rloo_outcome_advantage``
    (one score per response; groups by prompt index): ``r n / (n - 1) - mean n / (n - 1)``
    for a group of n > 1, the raw score for a group of one."""
    groups = defaultdict(list)
    for i, idx in enumerate(index):
        groups[idx].append(scores[i])
    out = scores.copy()
    for i, idx in enumerate(index):
        n = len(groups[idx])
        if n > 1:
            mean = np.mean(groups[idx])
            out[i] = scores[i] * n / (n - 1) - mean * n / (n - 1)
    return out


def verl_rloo_vectorized(scores: np.ndarray, index: list) -> np.ndarray:
    """volcengine/verl ``verl/trainer/ppo/core_algos.py``:
    ``compute_rloo_vectorized_outcome_advantage`` (registered as "rloo_vectorized"): with
    ``c`` the size of a response's group and ``S`` its sum, ``(c r - S) / max(c - 1, 1)``,
    times ``c > 1`` (a group of one gets 0)."""
    _, inv = np.unique(np.asarray(index), return_inverse=True)
    c = np.bincount(inv)[inv].astype(scores.dtype)
    total = np.bincount(inv, weights=scores)[inv]
    return (c * scores - total) / np.maximum(c - 1, 1) * (c > 1)


def _grouped(rng, g, n, dtype=np.float64, missing=0.0):
    """``[g, n]`` rewards of three kinds (binary, normal, all equal) with ``missing`` of the
    entries NaN (TRL's None rewards)."""
    kind = rng.integers(0, 3, (g, 1))
    r = np.where(kind == 0, rng.integers(0, 2, (g, n)),
                 np.where(kind == 1, rng.normal(size=(g, n)), 0.5)).astype(dtype)
    return np.where(rng.random((g, n)) < missing, np.nan, r).astype(dtype)


@pytest.mark.parametrize("twin", TWINS)
@pytest.mark.parametrize("seed", range(3))
def test_rloo_equals_trl_rloo_trainer(twin, seed):
    """TRL's RLOOTrainer (``trl_rloo``) against ``multi_reward_advantages`` with the "rloo"
    preset: the same weighted sum of several reward functions, unscorable completions
    (every reward None) out of the baseline with advantage 0, a group with a single
    scorable completion 0 (TRL's 0/0 NaN, zeroed).  Equal in float64 to rounding; groups
    whose scorable rewards are all equal are exactly 0 here (TRL: a rounding residue)."""
    rng = np.random.default_rng(seed)
    g, n, f = 40, int(rng.choice([2, 4, 8])), 3
    per_func = np.stack([_grouped(rng, g, n, missing=0.3) for _ in range(f)], -1)
    per_func[0, :, :] = np.nan  # a group with no scorable completion
    per_func[1, 1:, :] = np.nan  # a group with one
    weights = rng.choice([1.0, 0.5, 2.0, -1.0], f)
    want = trl_rloo(torch.tensor(per_func.reshape(-1, f)), torch.tensor(weights), n).numpy()
    got = run(twin, "multi_reward_advantages", per_func, weights, ~np.isnan(per_func), **RLOO)
    np.testing.assert_allclose(got.reshape(-1), want, rtol=1e-12, atol=1e-12)
    assert np.all(got[:2] == 0.0)
    # TRL's default reward_weights (all ones) is weights=None
    ones = trl_rloo(torch.tensor(per_func.reshape(-1, f)), torch.ones(f, dtype=torch.float64), n)
    unweighted = run(twin, "multi_reward_advantages", per_func, None, ~np.isnan(per_func), **RLOO)
    np.testing.assert_allclose(unweighted.reshape(-1), ones.numpy(), rtol=1e-12, atol=1e-12)
    # TRL in float32 agrees to float32 rounding
    want32 = trl_rloo(torch.tensor(per_func.reshape(-1, f), dtype=torch.float32),
                      torch.tensor(weights, dtype=torch.float32), n).numpy()
    got32 = run(twin, "multi_reward_advantages", per_func.astype(np.float32),
                weights.astype(np.float32), ~np.isnan(per_func), **RLOO)
    assert got32.dtype == np.float32
    np.testing.assert_allclose(got32.reshape(-1), want32, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("twin", TWINS)
def test_rloo_with_normalize_advantages_is_normalize_then_sum(twin):
    """TRL's ``RLOOTrainer`` with ``normalize_advantages=True`` standardises the RLOO
    advantages over the batch: that is ``multi_reward_advantages(aggregation=
    "normalize_then_sum")`` with the leave-one-out baseline unscaled and TRL's eps 1e-4
    (groups of two or more scorable completions; TRL leaves a lone scorable completion's
    NaN out of the batch statistics, where its 0 counts here)."""
    rng = np.random.default_rng(11)
    per_func = np.stack([_grouped(rng, 30, 4) for _ in range(2)], -1)
    weights = np.array([1.0, 0.5])
    want = trl_rloo(torch.tensor(per_func.reshape(-1, 2)), torch.tensor(weights), 4,
                    normalize_advantages=True).numpy()
    got = run(twin, "multi_reward_advantages", (per_func * weights).sum(-1, keepdims=True),
              None, None, aggregation="normalize_then_sum", scale="none",
              baseline="leave_one_out", eps=1e-4)
    np.testing.assert_allclose(got.reshape(-1), want, rtol=1e-7, atol=1e-7)


@pytest.mark.parametrize("twin", TWINS)
def test_rloo_equals_verl_except_singletons(twin):
    """verl's ``compute_rloo_outcome_advantage`` on groups of uneven sizes (prompt
    indices): equal to ``group_advantages(**RLOO)`` for every group of two or more.
    verl differs for a single-response group: it keeps the raw score (no baseline),
    where the "rloo" preset gives 0 (no other sample, no baseline, no signal);
    ``singleton="raw"`` reproduces verl there too."""
    rng = np.random.default_rng(7)
    sizes = [1, 2, 3, 5, 8, 1, 4]
    scores = np.concatenate([rng.normal(size=s) for s in sizes])
    index = [f"p{i}" for i, s in enumerate(sizes) for _ in range(s)]
    want = verl_rloo(scores, index)
    width = max(sizes)
    r = np.zeros((len(sizes), width))
    m = np.zeros((len(sizes), width), bool)
    start = 0
    for i, s in enumerate(sizes):
        r[i, :s], m[i, :s] = scores[start:start + s], True
        start += s
    got = run(twin, "group_advantages", r, m, **RLOO)[m]
    single = np.repeat(np.array(sizes) == 1, sizes)
    np.testing.assert_allclose(got[~single], want[~single], rtol=1e-12, atol=1e-12)
    assert np.all(got[single] == 0.0) and np.all(want[single] == scores[single])
    raw = run(twin, "group_advantages", r, m, **{**RLOO, "singleton": "raw"})[m]
    np.testing.assert_allclose(raw, want, rtol=1e-12, atol=1e-12)
    # verl's "rloo_vectorized" gives a lone response 0, as the preset does.
    np.testing.assert_allclose(got, verl_rloo_vectorized(scores, index), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("twin", TWINS)
@pytest.mark.parametrize("n", [1, 2, 4, 16])
def test_rloo_equals_tunix_rloo_estimator(twin, n):
    """Tunix 0.1.7 ``tunix/rl/algo_core.py``: ``compute_rloo_advantages``, registered as the
    "rloo" advantage estimator (called directly): ``r - (sum - r) / (n - 1)``, zeros for
    fewer than two generations."""
    algo_core = pytest.importorskip("tunix.rl.algo_core", reason="needs the [tunix] extra")
    import jax.numpy as jnp

    rewards = _grouped(np.random.default_rng(n), 30, n)
    want = np.asarray(algo_core.compute_rloo_advantages(jnp.asarray(rewards.reshape(-1)), n))
    got = run(twin, "group_advantages", rewards, None, **RLOO)
    equal = (rewards == rewards[:, :1]).all(-1)
    np.testing.assert_allclose(got[~equal].reshape(-1), want.reshape(rewards.shape)[~equal]
                               .reshape(-1), rtol=1e-12, atol=1e-12)
    assert np.all(got[equal] == 0.0)  # Tunix: 0 up to a rounding residue
    np.testing.assert_allclose(want.reshape(rewards.shape)[equal], 0.0, atol=1e-15)


@pytest.mark.parametrize("twin", TWINS)
@pytest.mark.parametrize("odd", [0.0, 0.95])
def test_rloo_float32_nemo_rl_case_is_exact(twin, odd):
    """NVIDIA-NeMo/RL PR #4161: a float32 group of 7 x 0.35 and one other reward.  The
    leave-one-out differences of the seven identical rewards are exactly 0, so the
    advantages are the exact values rounded once to float32: (0.35 - odd) / 7 for the
    seven, odd - 0.35 for the other (NeMo-RL's singleton keeps -0.35).  With the group's
    std scaling no residue is ever divided (NeMo-RL divided one by its ~1.6e-4
    leave-one-out std: about 4000x): within a few float32 ulps of the exact values.  All
    eight equal: exactly 0."""
    r = np.array([[0.35] * 7 + [odd]], np.float32)
    exact = [Fraction(float(x)) for x in r[0]]
    total = sum(exact)
    loo = [x - (total - x) / 7 for x in exact]
    got = run(twin, "group_advantages", r, None, **RLOO)
    assert got.dtype == np.float32
    assert got[0].tolist() == [float(float32_of(a)) for a in loo]
    assert float(got[0, 7]) == float(np.float32(odd) - np.float32(0.35))
    # scale="group": the differences over the group's std (ddof 1) + eps, exact to rounding
    getcontext().prec = 60
    mean = total / 8
    var = sum((x - mean) ** 2 for x in exact) / 7
    std = Decimal(var.numerator) / Decimal(var.denominator)
    den = Fraction(std.sqrt()) + Fraction(1e-6)
    scaled = run(twin, "group_advantages", r, None, **{**RLOO, "scale": "group", "eps": 1e-6})
    want = np.array([float(float32_of(a / den)) for a in loo], np.float32)
    np.testing.assert_allclose(scaled[0], want, rtol=4 * np.finfo(np.float32).eps, atol=0)
    assert abs(float(scaled[0, 7])) < 3.0  # no amplification
    flat = np.full((1, 8), 0.35, np.float32)
    assert np.all(run(twin, "group_advantages", flat, None, **RLOO) == 0.0)
    if twin == "jax":  # JAX's default: no float64, the sums carried as float32 pairs
        import jax

        with jax.enable_x64(False):
            got = run(twin, "group_advantages", r, None, **RLOO)
            assert np.all(run(twin, "group_advantages", flat, None, **RLOO) == 0.0)
        for g, a in zip(got[0].tolist(), loo, strict=True):  # float32's rounding (ties too)
            assert abs(Fraction(g) - a) <= abs(Fraction(float(np.spacing(np.float32(g))))) / 2


@pytest.mark.parametrize("twin", TWINS)
@pytest.mark.parametrize("x64", [False, True])
def test_rloo_float64_differences_do_not_cancel(twin, x64):
    """Float64 rewards whose leave-one-out differences are far below the rounding of the
    group's sum: seven 0.35 and the next float64 above it; a 1e6 offset with one reward
    0.0625 higher.  ``(S - r_i) / (n - 1)`` loses them (seven 0s; -0.0089285714784...),
    the pairwise differences give the exact values rounded once.  JAX with x64 off
    holds the rewards as float32 and must give float32's rounding of their values."""
    import jax

    rows = [[0.35] * 7 + [float(np.nextafter(0.35, 1.0))], [1e6 + 0.0625] + [1e6] * 7,
            [-3.0, 2.0 ** -40, 1.0, 1.0 + 2.0 ** -52, 7.0, 7.0, -3.0, 0.5]]
    for k, row in enumerate(rows):
        wide = twin == "torch" or x64  # else JAX holds the rewards as float32
        exact = [Fraction(float(x if wide else np.float32(x))) for x in row]
        total = sum(exact)
        loo = [x - (total - x) / 7 for x in exact]
        with jax.enable_x64(x64):
            got = run(twin, "group_advantages", np.array([row]), None, **RLOO)
        assert got.dtype == (np.float64 if wide else np.float32)
        want = [float(a) if wide else float(float32_of(a)) for a in loo]
        if k < 2:  # every difference exact: the exact values rounded once
            assert got[0].tolist() == want, row
        else:  # a generic group: the differences' own rounding, a few ulps
            eps = np.finfo(got.dtype).eps
            np.testing.assert_allclose(got[0], want, rtol=4 * eps, atol=0)


# ------------------------------------------------------------- multi-reward


def trl_multi_objective(rewards_per_func: torch.Tensor, weights: torch.Tensor, n: int,
                        aggregation: str, scale_rewards: str = "group",
                        exact_correction: bool = False) -> torch.Tensor:
    """huggingface/trl 1.16 ``trl/trainer/grpo_trainer.py``, ``GRPOTrainer.
    _generate_and_score_completions``, the ``multi_objective_aggregation`` branches
    ("sum_then_normalize" with ``scale_rewards``; "normalize_then_sum", GDPO: each reward
    normalised in its group by its std + 1e-4, weighted ``nansum``, then the batch's
    ``(x - nanmean) / (nanstd + 1e-4)``), then ``nan_to_num``."""

    def trl_nanstd(x, dim=None):
        return _nanstd(x, dim, exact_correction)

    unscorable = torch.isnan(rewards_per_func).all(dim=1)
    if aggregation == "sum_then_normalize":
        rewards = (rewards_per_func * weights.unsqueeze(0)).nansum(dim=1)
        rewards[unscorable] = torch.nan
        mean = torch.nanmean(rewards.view(-1, n), dim=1).repeat_interleave(n)
        if scale_rewards == "batch":
            std = trl_nanstd(rewards).expand_as(rewards) if rewards.numel() > 1 else (
                torch.zeros_like(rewards))
        elif n > 1:
            std = trl_nanstd(rewards.view(-1, n), dim=1).repeat_interleave(n)
        else:
            std = torch.zeros_like(rewards)
        advantages = rewards - mean
        if scale_rewards != "none":
            advantages = advantages / (std + 1e-4)
    else:
        f = rewards_per_func.shape[1]
        grouped = rewards_per_func.view(-1, n, f)
        mean_k = torch.nanmean(grouped, dim=1, keepdim=True)
        std_k = trl_nanstd(grouped, dim=1).unsqueeze(1) if n > 1 else torch.zeros_like(mean_k)
        reward_k = ((grouped - mean_k) / (std_k + 1e-4)).view(-1, f)
        rewards = (reward_k * weights.unsqueeze(0)).nansum(dim=1)
        rewards[unscorable] = torch.nan
        std = trl_nanstd(rewards).expand_as(rewards) if rewards.numel() > 1 else (
            torch.zeros_like(rewards))
        advantages = (rewards - torch.nanmean(rewards)) / (std + 1e-4)
    return torch.nan_to_num(advantages, nan=0.0)


PRESET_OF_SCALE = {"group": "trl", "batch": "trl_batch", "none": "dr_grpo"}


@pytest.mark.parametrize("twin", TWINS)
@pytest.mark.parametrize(("aggregation", "scale"), [
    ("sum_then_normalize", "group"), ("sum_then_normalize", "batch"),
    ("sum_then_normalize", "none"), ("normalize_then_sum", "group")])
@pytest.mark.parametrize("n", [1, 2, 8])
def test_multi_reward_equals_trl_multi_objective_aggregation(twin, aggregation, scale, n):
    """TRL's two ``multi_objective_aggregation`` names with ``reward_weights`` and None
    rewards (NaN: masked here) against ``multi_reward_advantages`` with the matching TRL
    preset; GDPO's normalize_then_sum uses TRL's group std whatever ``scale_rewards``.
    On groups whose rewards vary: equal to rounding (1e-12) to TRL's arithmetic done in
    float64 throughout, and within 1e-7 of TRL as it stands (its ``nanstd`` takes the
    Bessel correction in float32, see ``_nanstd``).  Where TRL divides an exact 0 by
    1e-4 (all-equal groups of these dyadic rewards, single samples) both give 0."""
    rng = np.random.default_rng(n)
    g, f = 24, 3
    per_func = np.stack([_grouped(rng, g, n, missing=0.2) for _ in range(f)], -1)
    per_func[0] = np.round(per_func[0] * 4) / 4  # dyadic: a constant group cancels exactly
    per_func[3, :, :] = np.nan  # an unscorable group
    weights = rng.choice([1.0, 0.5, 2.0, 0.0], f)
    rows, w = torch.tensor(per_func.reshape(-1, f)), torch.tensor(weights)
    want = trl_multi_objective(rows, w, n, aggregation, scale).numpy().reshape(g, n)
    same_math = trl_multi_objective(rows, w, n, aggregation, scale, exact_correction=True)
    preset = ADVANTAGE_PRESETS[PRESET_OF_SCALE[scale]]
    got = run(twin, "multi_reward_advantages", per_func, weights, ~np.isnan(per_func),
              aggregation=aggregation, **preset)
    np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-7)
    np.testing.assert_allclose(got, same_math.numpy().reshape(g, n), rtol=1e-12, atol=1e-12)
    assert np.all(got[3] == 0.0)
    if n == 1:
        assert np.all(got == 0.0)


# ------------------------------------------------------------ self-certainty


def intuitor_self_certainty(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """sunblaze-ucb/Intuitor ``open-r1-intuitor/src/open_r1/intuitor_trainer.py``:
    ``_get_per_token_self_certainty`` (``logsumexp(logits) - logits.mean()`` per token)
    then ``_get_advantage_from_sce`` (sum over the completion mask / its length, 0 for
    an empty completion)."""
    per_token = torch.logsumexp(logits, dim=-1) - logits.mean(dim=-1)
    lengths = mask.sum(dim=1, dtype=torch.long)
    out = torch.zeros(logits.shape[0], dtype=per_token.dtype)
    valid = lengths > 0
    total = torch.where(mask, per_token, 0.0).sum(dim=1)
    out[valid] = total[valid] / lengths[valid].to(per_token.dtype)
    return out


def verl_entropy(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """volcengine/verl ``verl/utils/torch_functional.py`` (as in Intuitor's verl fork):
    ``entropy_from_logits`` (``logsumexp - sum softmax * logits``) per token, averaged over
    each response's tokens (0 for an empty one)."""
    p = torch.nn.functional.softmax(logits, dim=-1)
    per_token = torch.logsumexp(logits, dim=-1) - torch.sum(p * logits, dim=-1)
    lengths = mask.sum(dim=1)
    return torch.where(mask, per_token, 0.0).sum(dim=1) / lengths.clamp(min=1)


def _logits(seed, dtype=np.float64):
    rng = np.random.default_rng(seed)
    b, t, v = 6, 7, 50
    logits = rng.normal(size=(b, t, v)) * rng.choice([0.5, 3.0, 20.0], (b, 1, 1))
    logits += rng.choice([0.0, -30.0, 200.0], (b, 1, 1))  # a common offset per row
    mask = rng.random((b, t)) < 0.7
    mask[0] = False  # an empty completion
    return logits.astype(dtype), mask


@pytest.mark.parametrize("twin", TWINS)
@pytest.mark.parametrize("seed", range(3))
def test_self_certainty_equals_intuitor(twin, seed):
    """Intuitor's per-token ``logsumexp - mean`` (the paper's KL(U || p) plus log V),
    averaged over the completion: float64 to rounding (the offsets of up to 200 cancel in
    ``logsumexp - mean``; both twins avoid the cancellation), float32 to float32 rounding
    of the logits' scale, bfloat16 computed in float32 (Intuitor's bfloat16 logsumexp is
    itself off by a bfloat16 ulp of the offset)."""
    logits, mask = _logits(seed)
    want = intuitor_self_certainty(torch.tensor(logits), torch.tensor(mask)).numpy()
    got = run(twin, "self_certainty", logits, mask)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-10)
    assert got[0] == 0.0
    got32 = run(twin, "self_certainty", logits.astype(np.float32), mask)
    assert got32.dtype == np.float32
    np.testing.assert_allclose(got32, want, rtol=1e-5, atol=1e-5 * np.abs(logits).max())
    bf16 = to_torch(logits.astype(np.float32)).to(torch.bfloat16)
    want16 = intuitor_self_certainty(bf16.to(torch.float64), torch.tensor(mask)).numpy()
    got16 = run(twin, "self_certainty", from_torch(bf16), mask)
    assert str(got16.dtype) == "bfloat16"
    np.testing.assert_allclose(got16.astype(np.float64), want16, rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("twin", TWINS)
@pytest.mark.parametrize("seed", range(3))
def test_token_entropy_equals_verl_entropy_from_logits(twin, seed):
    """verl's ``entropy_from_logits`` averaged over the response (the EM-RL / RENT reward
    is its negative): equal in float64.  A near-deterministic token (entropy ~1e-28) is
    within 1e-16 of its entropy in both twins, and within 1e-12 relative in the torch
    twin, where ``logsumexp - sum p l`` leaves a residue of the logits' rounding."""
    logits, mask = _logits(seed)
    want = verl_entropy(torch.tensor(logits), torch.tensor(mask)).numpy()
    got = run(twin, "token_entropy", logits, mask)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)
    assert got[0] == 0.0
    peaked = np.zeros((1, 1, 4))
    peaked[0, 0, 0] = 70.0  # p = 1 - 3e^-70: H = 3 e^-70 (1 + 70) to first order
    exact = 3 * math.exp(-70) * 71
    h = float(run(twin, "token_entropy", peaked, np.ones((1, 1), bool))[0])
    assert abs(h - exact) <= 1e-16
    if twin == "torch":  # its docstring's claim: relative accuracy near 0
        assert abs(h - exact) <= 1e-12 * exact


def _extended_oracle(row: np.ndarray) -> tuple[float, float]:
    """(self-certainty, entropy) of one token's logits in NumPy's extended precision
    (64-bit significand here), shifted by the max so nothing cancels:
    ``log sum e + mean(max - x)`` and ``log1p(R) + sum e (max - x) / (1 + R)``, ``R`` the
    sum of ``e = exp(x - max)`` without one maximum."""
    x = row.astype(np.float64).astype(np.longdouble)
    top = x.max()
    e = np.exp(x - top)
    rest = e.sum() - np.longdouble(1) if np.sum(x == top) > 1 else e[x != top].sum()
    sc = np.log(e.sum()) + np.mean(top - x)
    h = np.log1p(rest) + np.sum(e * (top - x)) / (1 + rest)
    return float(sc), float(h)


def _hard_tokens(dtype) -> list[np.ndarray]:
    """Tokens where a shortcut loses digits: sharply peaked (entropy ~2e-6 in float32,
    ~1e-14 in float64), tied and nearly tied maxima, large common offsets (the
    unshifted ``logsumexp - mean`` cancels), and an ordinary spread."""
    wide = np.dtype(dtype) == np.float64
    peak = 35.0 if wide else 20.0
    one = np.zeros(50)
    one[3] = peak
    two = one.copy()
    two[9] = peak
    near = one.copy()
    near[9] = peak - 2.0**-20
    ramp = 0.01 * np.arange(7)
    tokens = [one, two, near, 1000 + ramp, 80 + ramp, -1000 + ramp, 60 + 0.5 * ramp,
              np.random.default_rng(7).normal(size=1000) * 3, np.full(5, 3.0)]
    if wide:
        tokens += [1e6 + ramp, np.r_[70.0, np.zeros(3)]]
    return [np.asarray(t, dtype) for t in tokens]


@pytest.mark.parametrize("twin, dtype, x64", [
    (twin, dtype, x64) for twin in TWINS for x64 in (False, True)
    for dtype in (np.float32, np.float64, "bfloat16", np.float16)
    if not (twin == "jax" and dtype == np.float64 and not x64)  # JAX holds no float64 then
])
def test_logits_rewards_are_accurate_to_their_dtype_on_hard_tokens(twin, dtype, x64):
    """Each hard token alone, and all of them padded into one batch with a mask: both
    rewards within 4 ulps of the output dtype of the extended-precision value of the
    logits as given (half precision: of its own rounding, computed in float32; float16's
    subnormal outputs to its smallest step), in both
    twins, and in zero_jax eagerly and under ``vmap``.  Before, zero_jax's entropy lost
    ~5 % on the peaked float32 token and its self-certainty 116 float32 ulps at the
    offset 1000 (74 at 80); the torch twin's float64 baseline had cancelled likewise."""
    import jax
    import jax.numpy as jnp

    jdtype = jnp.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)
    tokens = [t.astype(jdtype) for t in _hard_tokens(np.float64 if dtype == np.float64
                                                      else np.float32)]
    width = max(t.size for t in tokens)
    logits = np.zeros((len(tokens), 2, width), jdtype)
    mask = np.zeros((len(tokens), 2), bool)
    for i, t in enumerate(tokens):
        logits[i, 1, : t.size] = t
        logits[i, 1, t.size:] = t.min() - 200  # padding far below: e = 0
        logits[i, 0] = np.nan  # a masked token that would poison the row if read
        mask[i, 1] = True
    ulp = np.finfo(jdtype).eps
    tiny = float(np.finfo(jdtype).smallest_subnormal)  # float16 holds 2e-6 as a subnormal
    with jax.enable_x64(x64):
        for name, k in (("self_certainty", 0), ("token_entropy", 1)):
            want = np.array([_extended_oracle(np.asarray(row[1]))[k] for row in logits])
            got = run(twin, name, logits, mask).astype(np.float64)
            np.testing.assert_allclose(got, want, rtol=4 * ulp, atol=tiny, err_msg=name)
            if twin == "jax":
                rows = jax.vmap(getattr(zero_jax, name))(logits[:, None], mask[:, None])
                np.testing.assert_allclose(np.asarray(rows[:, 0]).astype(np.float64), want,
                                           rtol=4 * ulp, atol=tiny, err_msg=name)


# --------------------------------------------------------------- TTRL metrics


def ttrl_test_time_train_metrics(solutions: list[int], truth: int) -> tuple[list[float], dict]:
    """PRIME-RL/TTRL ``verl/verl/utils/reward_score/ttrl/ttt_metrics.py``:
    ``test_time_train_metrics`` with answers already extracted (``auto_extract``) and
    verified by equality (``auto_verify``): the ``Counter`` majority (its first-counted
    answer on ties), hit rate, reward hit rate, majority ratio."""
    label, count = Counter(solutions).most_common(1)[0]
    rewards = [float(s == label) for s in solutions]
    true_rewards = [float(s == truth) for s in solutions]
    return rewards, {
        "label_accuracy": 1.0 if label == truth else 0.0,
        "reward_accuracy": sum(r == t for r, t in zip(rewards, true_rewards, strict=True))
        / len(rewards),
        "majority_ratio": count / len(solutions),
        f"pass@{len(solutions)}": 1.0 if sum(true_rewards) >= 1 else 0.0,
    }


def ttrl_post_reward_accuracy(solutions: list[int], truth: int, pred_rewards) -> float:
    """TTRL ``ttt_metrics.py``: ``post_test_time_train_metrics``' ``post_reward_accuracy``
    (the trained samples' pseudo rewards against their true rewards)."""
    true_rewards = [float(s == truth) for s in solutions]
    return sum(p == t for p, t in zip(pred_rewards, true_rewards, strict=True)) / len(
        pred_rewards)


def _unique_majority(row) -> bool:
    counts = Counter(row).most_common(2)
    return len(counts) == 1 or counts[0][1] > counts[1][1]


def _votes(rng, b, k, k_s, alphabet=4):
    """Rows whose K answers and first K_s answers both have a unique majority (where
    TTRL's Counter and the contract's smallest-id rule agree; ties are tested apart)."""
    rows = []
    while len(rows) < b:
        row = rng.integers(0, alphabet, k).tolist()
        if _unique_majority(row) and _unique_majority(row[:k_s]):
            rows.append(row)
    return np.array(rows)


@pytest.mark.parametrize("twin", TWINS)
@pytest.mark.parametrize(("k", "trained"), [(8, None), (16, 4), (5, 5)])
def test_vote_metrics_mean_ttrl_metrics(twin, k, trained):
    """TTRL's ``TTRLRewardManager._compute_ttrl_reward`` votes on all ``n_votes_per_prompt``
    answers, rewards the first ``n_samples_per_prompt`` and logs the prompt means of
    ``test_time_train_metrics``: ``label_accuracy``, ``majority_ratio`` and (over all K
    answers) ``reward_accuracy`` match ours with ``trained=None``; with ``trained`` our
    reward accuracy is TTRL's ``post_reward_accuracy`` on the trained samples.  maj@K_s
    is TTRL's label accuracy of a vote on the trained samples, pass@K its pass@K."""
    rng = np.random.default_rng(k)
    b = 64
    k_s = k if trained is None else trained
    answers = _votes(rng, b, k, k_s)
    truth = np.where(rng.random(b) < 0.6, answers[:, 0], rng.integers(0, 4, b))
    per_prompt = [ttrl_test_time_train_metrics(answers[i].tolist(), int(truth[i]))
                  for i in range(b)]
    maj = [ttrl_test_time_train_metrics(answers[i, :k_s].tolist(), int(truth[i]))[1]
           ["label_accuracy"] for i in range(b)]
    got = run(twin, "vote_metrics", answers, truth, 4, trained=trained)
    assert got[0] == pytest.approx(np.mean([m["label_accuracy"] for _, m in per_prompt]),
                                   abs=1e-12)
    assert got[2] == pytest.approx(np.mean([m["majority_ratio"] for _, m in per_prompt]),
                                   abs=1e-12)
    if trained is None:
        want_reward = np.mean([m["reward_accuracy"] for _, m in per_prompt])
    else:
        want_reward = np.mean([ttrl_post_reward_accuracy(answers[i, :k_s].tolist(),
                                                         int(truth[i]), per_prompt[i][0][:k_s])
                               for i in range(b)])
    assert got[1] == pytest.approx(want_reward, abs=1e-12)
    assert got[3] == pytest.approx(np.mean(maj), abs=1e-12)
    correct = answers == truth[:, None]
    pass_k = run(twin, "pass_at_k", correct, k)
    np.testing.assert_array_equal(pass_k, [m[f"pass@{k}"] for _, m in per_prompt])


@pytest.mark.parametrize("twin", TWINS)
def test_vote_metrics_ties_break_to_the_smallest_id_not_the_first_seen(twin):
    """Where TTRL's ``Counter.most_common`` takes the first-counted answer of a tie, the
    contract takes the smallest id (the same vote as ``consensus``): a row 2, 2, 0, 0
    votes 0 here and 2 in TTRL."""
    answers = np.array([[2, 2, 0, 0]])
    _, ttrl = ttrl_test_time_train_metrics(answers[0].tolist(), 2)
    assert ttrl["label_accuracy"] == 1.0
    got = run(twin, "vote_metrics", answers, np.array([2]), 3)
    assert got[0] == 0.0 and got[2] == 0.5


# ------------------------------------------------------------------ pass@k


def human_eval_pass_at_k(n: int, c: int, k: int) -> float:
    """openai/human-eval ``human_eval/evaluation.py``: ``estimate_pass_at_k``'s
    ``estimator``: 1 when ``n - c < k``, else ``1 - prod(1 - k / arange(n - c + 1, n + 1))``."""
    if n - c < k:
        return 1.0
    return float(1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))


@pytest.mark.parametrize("twin", TWINS)
@pytest.mark.parametrize("n", [1, 2, 10, 100, 257, 1024, 4096])
def test_pass_at_k_equals_human_eval_and_the_exact_binomials(twin, n):
    """Every count of correct samples ``c`` of ``n`` up to 4,096, for several ``k``: within
    5e-14 (relative) of the exact ``1 - C(n - c, k) / C(n, k)`` (rational arithmetic),
    which human-eval's product meets too (its rounding grows with ``c``: 3e-14 at 4,096),
    and within 1e-12 of that product.  Both twins' sums of logarithms are within a few
    ulps (zero_jax's were 29 off at n = 257, k = 100, c = 1, from XLA's float64
    ``log1p``)."""
    cs = np.unique(np.linspace(0, n, min(n + 1, 200)).astype(int))
    correct = np.arange(n)[None, :] < cs[:, None]
    for k in sorted({1, min(2, n), max(1, n // 10), max(1, n // 2), min(100, n), n}):
        got = run(twin, "pass_at_k", correct, k)
        assert got.dtype == np.float64
        exact = [1.0 if n - c < k else (math.comb(n, k) - math.comb(n - c, k)) / math.comb(n, k)
                 for c in cs.tolist()]
        np.testing.assert_allclose(got, exact, rtol=2e-15 if twin == "jax" else 8e-16, atol=0)
        published = [human_eval_pass_at_k(n, int(c), k) for c in cs]
        np.testing.assert_allclose(got, published, rtol=0, atol=1e-12)


@pytest.mark.parametrize("twin", TWINS)
def test_k_and_trained_beyond_the_data_raise(twin):
    """pass@k of more samples than were drawn, or more trained answers than votes, is a
    mistake in the call (the contract's messages, at trace time in JAX)."""
    with pytest.raises(ValueError, match="k must be <= the number of samples N=3, got k=4"):
        run(twin, "pass_at_k", np.ones((2, 3), bool), k=4)
    with pytest.raises(ValueError, match="trained must be <= the number of answers K=3, "
                                         "got trained=5"):
        run(twin, "vote_metrics", np.zeros((2, 3), np.int64), np.zeros(2, np.int64), 2,
            trained=5)


# ---------------------------------------------------------------- DAPO Eq. 13


@pytest.mark.parametrize("twin", TWINS)
@pytest.mark.parametrize(("max_length", "cache"), [(100, 20), (4096, 512), (16, 0), (10, 10),
                                                   (20, 3), (0, 0)])
def test_overlong_penalty_equals_trl_soft_overlong_punishment(twin, max_length, cache):
    """TRL 1.16 ``trl/rewards/other_rewards.py``: ``get_soft_overlong_punishment``
    (called directly) on completions of every length from 0 to past ``max_length``:
    exactly equal, including ``cache = 0`` (a hard -1 beyond the limit) and TRL's own
    example (90 tokens of 100 with a cache of 20: -0.5)."""
    from trl.rewards import get_soft_overlong_punishment

    lengths = np.arange(0, max_length + 40)
    want = get_soft_overlong_punishment(max_length, cache)([[1] * int(n) for n in lengths])
    got = run(twin, "overlong_penalty", lengths, max_length=max_length, cache=cache)
    assert got.dtype == np.float64
    assert got.tolist() == want
    if (max_length, cache) == (100, 20):
        assert got[90] == -0.5


@pytest.mark.parametrize("twin", TWINS)
@pytest.mark.parametrize("x64", [False, True])
@pytest.mark.parametrize(("max_length", "cache"), [(10, 0.3), (3, 1e-9), (100, 20.5),
                                                   (7.5, 2.25), (4096, 0.1)])
def test_overlong_penalty_of_a_fractional_cache_keeps_eq_13s_boundaries(twin, x64, max_length,
                                                                         cache):
    """DAPO Eq. 13 with a cache that is not an integer: 0 up to ``L_max - L_cache``,
    exactly -1 at ``L_max`` and beyond, and within [-1, 0] between (``L_max - L_cache``
    rounded first had put 10 tokens of 10 at -1.0000006 and 3 of 3 with a cache of 1e-9
    at 0 in float32), against exact rationals."""
    from fractions import Fraction

    lengths = np.arange(0, int(max_length) + 3)
    with jax.enable_x64(x64):
        got = run(twin, "overlong_penalty", lengths, max_length=max_length, cache=cache)
    tol = 1e-6 if twin == "jax" and not x64 else 1e-15
    top, band = Fraction(max_length), Fraction(cache)
    for n, value in zip(lengths.tolist(), got.tolist(), strict=True):
        exact = 0 if n <= top - band else (top - band - n) / band if n <= top else -1
        assert -1 <= value <= 0
        if exact in (0, -1) and (n <= top - band - 1 or n >= top):
            assert value == exact, (n, value)  # a length clear of the rounding of L_max - L_cache
        else:
            assert abs(value - float(exact)) <= tol, (n, value, exact)


# ------------------------------------------------------------- dynamic sampling


def verl_filter_groups(rewards: list[float], uids: list[str]) -> dict[str, bool]:
    """volcengine/verl ``recipe/dapo/dapo_ray_trainer.py``, ``RayDAPOTrainer.fit`` with
    ``filter_groups.enable``: a prompt is kept when ``np.std`` of its sequence rewards is
    > 0 or it has a single response."""
    by_uid = defaultdict(list)
    for uid, r in zip(uids, rewards, strict=True):
        by_uid[uid].append(r)
    return {uid: bool(np.std(v) > 0 or len(v) == 1) for uid, v in by_uid.items()}


@pytest.mark.parametrize("twin", TWINS)
def test_informative_groups_equals_verl_filter_groups_and_where_it_differs(twin):
    """verl's DAPO ``filter_groups`` on random binary and real groups: equal wherever a
    group has two or more responses.  Where it differs: verl keeps a single-response group
    (no variance, no GRPO signal: dropped here), keeps an all-equal group of rewards such
    as 0.1 whose ``np.std`` rounds above 0 (dropped here: the comparison is exact), and
    drops distinct rewards whose variance underflows (kept here)."""
    rng = np.random.default_rng(3)
    g, n = 50, 6
    r = np.where(rng.random((g, 1)) < 0.5, rng.integers(0, 2, (g, n)),
                 np.round(rng.normal(size=(g, n)), 1)).astype(np.float64)
    uids = [f"u{i}" for i in range(g) for _ in range(n)]
    want = verl_filter_groups(r.reshape(-1).tolist(), uids)
    got = run(twin, "informative_groups", r, None)
    assert got.tolist() == [want[f"u{i}"] for i in range(g)]
    edge = np.array([[0.1, 0.1, 0.1], [0.0, 1e-170, 0.0], [0.5, 0.0, 0.0]])
    mask = np.array([[True] * 3, [True] * 3, [True, False, False]])
    verl = verl_filter_groups([0.1] * 3 + [0.0, 1e-170, 0.0] + [0.5], ["a"] * 3 + ["b"] * 3
                              + ["c"])
    assert verl == {"a": True, "b": False, "c": True}
    assert run(twin, "informative_groups", edge, mask).tolist() == [False, True, False]


# ------------------------------------------------------------ AZR learnability


def azr_learnability(accuracy: float) -> float:
    """LeapLabTHU/Absolute-Zero-Reasoner ``absolute_zero_reasoner/rewards/
    reward_managers.py``: the proposer's accuracy reward with
    ``generation_accuracy_convertion == 'one_minus'``: ``1 - acc if acc > 0 else 0``
    (so 0 at acc = 1 too), acc the mean of the solver's rollouts."""
    return (1 - accuracy) if accuracy > 0 else 0.0


@pytest.mark.parametrize("twin", TWINS)
def test_learnability_equals_azr_one_minus(twin):
    """AZR's r_propose on every solve rate of 1 to 8 rollouts and random ones: exactly
    equal in float64; float32 solve rates give AZR's value rounded once."""
    rates = sorted({Fraction(c, n) for n in range(1, 9) for c in range(n + 1)})
    s = np.array([float(x) for x in rates] + np.random.default_rng(0).random(50).tolist())
    want = [azr_learnability(float(x)) for x in s]
    assert run(twin, "learnability_reward", s).tolist() == want
    s32 = s.astype(np.float32)
    got32 = run(twin, "learnability_reward", s32)
    assert got32.tolist() == [float(np.float32(azr_learnability(float(x)))) for x in s32]


_ROUTE_CASES = [  # dtype, the overflowing logit's spread, the tiny sum's floor, rtol
    (np.float32, 100.0, -80.0, 1e-5),
    (np.float64, 800.0, -701.0, 1e-12),
    ("bfloat16", 100.0, -80.0, 1e-2),  # computed in float32, rounded once to the dtype
    (np.float16, 100.0, -80.0, 2e-3),
]


@pytest.mark.parametrize("dtype, spread, floor, tol", _ROUTE_CASES)
def test_self_certainty_both_routes_of_the_jax_kernel(dtype, spread, floor, tol):
    """zero_jax sums the exponentials unshifted and falls back to the max shift when a
    kept token's sum overflows (a logit above ~88 in float32, ~709 in float64) or falls
    below 1e-20 (all of its logits far below 0).  Both routes equal Intuitor's code,
    eagerly and under vmap.  The route is one per call, and masked-out tokens do not
    decide it: a masked non-finite token leaves the rows as they were.

    ``tiny``: a kept token whose sum is a normal number below 1e-20 while 49 of its 50
    exponentials fall under the smallest normal number (XLA flushes them to 0): about
    2 % of its sum, so the unshifted route alone would be 0.02 off (float32 / float64;
    half precision rounds the difference away, its overflow case still decides)."""
    import jax
    import jax.numpy as jnp

    dtype = jnp.bfloat16 if dtype == "bfloat16" else dtype
    logits, mask = _logits(0)
    logits = np.clip(logits, -40, 60).astype(dtype)  # every token on the unshifted route
    far = logits.copy()
    far[2, 3, 7] = far[2, 3, 0] + spread  # one kept token's sum overflows
    low = logits.copy()
    low[2, 3] -= 300  # one kept token's sum underflows (0 in float32, ~1e-110 in float64)
    tiny = logits.copy()
    tiny[2, 3] = floor - 7.6  # exp flushed to 0: below the smallest normal number
    tiny[2, 3, 0] = floor  # the token's sum: exp(floor), a normal number below 1e-20
    assert mask[2, 3]
    for x in (logits, far, low, tiny):
        want = intuitor_self_certainty(torch.tensor(x.astype(np.float64)), torch.tensor(mask))
        got = np.asarray(zero_jax.self_certainty(x, mask)).astype(np.float64)
        atol = min(tol, 1e-5) * np.abs(x.astype(np.float64)).max()
        np.testing.assert_allclose(got, want.numpy(), rtol=tol, atol=atol)
        rows = jax.vmap(zero_jax.self_certainty)(x[:, None], mask[:, None])[:, 0]
        np.testing.assert_allclose(np.asarray(rows).astype(np.float64), got, rtol=tol, atol=atol)
    hidden = logits.copy()
    masked = np.argwhere(~mask[1:])[0] + (1, 0)  # a masked token of a row with kept ones
    hidden[masked[0], masked[1], 5] = np.inf
    np.testing.assert_array_equal(np.asarray(zero_jax.self_certainty(hidden, mask)),
                                  np.asarray(zero_jax.self_certainty(logits, mask)))


@pytest.mark.parametrize("x64", [False, True], ids=["x64-off", "x64-on"])
@pytest.mark.parametrize("fn", ["self_certainty", "token_entropy"])
def test_a_row_s_logits_never_change_another_row(fn, x64):
    """An invalid logit (inf, NaN) or a large offset in one row leaves the other rows
    bit for bit as in the clean call, eagerly and under vmap: self_certainty's route is
    chosen for the whole call, and its shifted route keeps every token in range on its
    unshifted value (a valid row moved by 1 ulp before)."""
    import jax

    f = getattr(zero_jax, fn)
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    mask = np.ones((3, 4), bool)
    with jax.enable_x64(x64):
        clean = np.asarray(f(x, mask))
        for change in (np.inf, np.nan, "offset"):
            bad = x.copy()
            if change == "offset":
                bad[1] += 1000
            else:
                bad[1, 2, 3] = change
            for got in (np.asarray(f(bad, mask)),
                        np.asarray(jax.vmap(f)(np.stack([x, bad]), np.stack([mask, mask])))[1]):
                np.testing.assert_array_equal(got[[0, 2]], clean[[0, 2]], err_msg=str(change))
                assert np.isnan(got[1]) == (change != "offset")
