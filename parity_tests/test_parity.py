"""Randomized cross-framework parity (hypothesis): zero_jax (x64 on) against
zero_torch and an independent NumPy oracle, over bucketed shapes (so that the JAX
side compiles once per bucket, not once per example), float32 / float64 inputs,
tie-heavy and large answer alphabets, arbitrary cluster ids and random masks."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zero_jax

from . import cases as oracle

torch = pytest.importorskip("torch", reason="parity needs the torch twin")
import zero_torch  # noqa: E402

BATCH = st.sampled_from([1, 2, 7, 16, 33, 64])
GROUP = st.sampled_from([1, 2, 3, 8, 16])
FLOAT = st.sampled_from([np.float32, np.float64])
ALPHABET = st.sampled_from([1, 2, 3, 5, 1000, 1_000_000])
SEED = st.integers(0, 2**32 - 1)
TOL = {np.dtype(np.float32): 1e-6, np.dtype(np.float64): 1e-12}


def same(jax_out, torch_out, expected=None):
    """Values and dtypes equal across frameworks (and to the oracle when given)."""
    j = np.asarray(jax_out)
    t = torch_out.numpy()
    assert j.dtype == t.dtype, (j.dtype, t.dtype)
    if j.dtype.kind == "f":
        np.testing.assert_allclose(j, t, rtol=0, atol=TOL[j.dtype])
        if expected is not None:
            np.testing.assert_allclose(j, expected, rtol=0, atol=TOL[j.dtype])
    else:
        np.testing.assert_array_equal(j, t)
        if expected is not None:
            np.testing.assert_array_equal(j, expected)


def unit_scores(rng, b, dtype, k=None):
    """Consistencies with many exact vote shares (ties with band edges) and random ones."""
    k = k or int(rng.integers(1, 17))
    shares = rng.integers(0, k + 1, size=b) / k
    noise = rng.random(b)
    return np.where(rng.random(b) < 0.5, shares, noise).astype(dtype)


def cluster_ids(rng, b):
    kind = rng.integers(0, 4)
    if kind == 0:  # few dense clusters: many duplicates
        return rng.integers(0, 3, size=b)
    if kind == 1:  # negative and sparse
        return rng.choice(np.array([-7, -1, 0, 13, 10**6]), size=b)
    if kind == 2:  # beyond int32
        return rng.choice(np.array([2**31 + 5, -(2**40), 2**62, 3]), size=b)
    return rng.integers(-(2**63), 2**63 - 1, size=b, dtype=np.int64)


def T(x):
    return torch.from_numpy(np.ascontiguousarray(x))


@given(b=BATCH, dtype=FLOAT, seed=SEED)
def test_uncertainty(b, dtype, seed):
    p = unit_scores(np.random.default_rng(seed), b, dtype)
    want = oracle.uncertainty_reward(p)
    same(zero_jax.uncertainty_reward(p), zero_torch.uncertainty_reward(T(p)), want)


@given(b=BATCH, dtype=FLOAT, seed=SEED, strength=st.sampled_from([0.0, 0.5, 1.0, 2.5]))
def test_challenger(b, dtype, seed, strength):
    rng = np.random.default_rng(seed)
    p = unit_scores(rng, b, dtype)
    c = cluster_ids(rng, b).astype(np.int64)
    v = rng.random(b) < 0.7
    expected = oracle.challenger_rewards(p, c, v, strength)
    same(
        zero_jax.challenger_rewards(p, c, v, strength),
        zero_torch.challenger_rewards(T(p), T(c), T(v), strength),
        expected,
    )


@given(b=BATCH, dtype=FLOAT, seed=SEED, n=st.sampled_from([1, 3, 40]))
def test_challenger_dense_ids(b, dtype, seed, n):
    rng = np.random.default_rng(seed)
    p = unit_scores(rng, b, dtype)
    c = rng.integers(0, n, size=b)
    v = rng.random(b) < 0.7
    expected = oracle.challenger_rewards(p, c, v)
    j = zero_jax.challenger_rewards(p, c, v, num_clusters=n)
    same(j, zero_torch.challenger_rewards(T(p), T(c), T(v), num_clusters=n), expected)
    same(zero_jax.challenger_rewards(p, c, v), zero_torch.challenger_rewards(T(p), T(c), T(v)))


def sizes_agree(c, expected):
    """Cluster sizes equal in both twins and to ``expected`` (int32 in JAX, int64 in
    torch, as the contract says)."""
    np.testing.assert_array_equal(np.asarray(zero_jax.cluster_sizes(c)), expected)
    np.testing.assert_array_equal(zero_torch.cluster_sizes(T(c)).numpy(), expected)


@settings(max_examples=30)
@given(b=st.sampled_from([129, 200, 256, 257, 1000]), seed=SEED)
def test_cluster_sizes_of_arbitrary_ids_above_the_pairwise_size(b, seed):
    """Past 128 ids the JAX sizes come from hashing rounds; exact whatever the ids."""
    rng = np.random.default_rng(seed)
    c = cluster_ids(rng, b).astype(np.int64)
    _, inverse, counts = np.unique(c, return_inverse=True, return_counts=True)
    sizes_agree(c, counts[inverse])
    p = unit_scores(rng, b, np.float64)
    v = rng.random(b) < 0.7
    expected = oracle.challenger_rewards(p, c, v)
    j = zero_jax.challenger_rewards(p, c, v)
    same(j, zero_torch.challenger_rewards(T(p), T(c), T(v)), expected)


def _murmur_slot(ids: np.ndarray, bits: int) -> np.ndarray:
    """Round one's slot of each id (murmur3's 64-bit finaliser with seed 0, top bits)."""
    x = ids.view(np.uint64)
    with np.errstate(over="ignore"):
        x = (x ^ (x >> np.uint64(33))) * np.uint64(0xFF51AFD7ED558CCD)
        x = (x ^ (x >> np.uint64(33))) * np.uint64(0xC4CEB9FE1A85EC53)
        x = x ^ (x >> np.uint64(33))
    return (x >> np.uint64(64 - bits)).astype(np.int64)


@pytest.mark.parametrize("distinct", [2, 60, 300])
def test_cluster_sizes_when_every_id_shares_one_slot_in_round_one(distinct):
    """Ids chosen so that all of them hash to one slot in the first round, for any
    table of up to 2^12 slots (the kernel uses 4 per id, 4,096 here): only one id can
    settle there, and the later rounds must still give every id its exact size."""
    b = 600
    bits = 12
    rng = np.random.default_rng(distinct)
    found: list[np.ndarray] = []
    while sum(len(f) for f in found) < distinct:
        cand = rng.integers(-(2**63), 2**63 - 1, size=1 << 16, dtype=np.int64)
        found.append(cand[_murmur_slot(cand, bits) == 7])
    pool = np.concatenate(found)[:distinct]
    c = rng.choice(pool, size=b)
    assert len(np.unique(_murmur_slot(c, bits))) == 1
    _, inverse, counts = np.unique(c, return_inverse=True, return_counts=True)
    sizes_agree(c, counts[inverse])


@given(b=BATCH, k=GROUP, n=ALPHABET, seed=SEED)
def test_consensus_and_pseudo_rewards(b, k, n, seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, min(n, 3) if rng.random() < 0.5 else n, size=(b, k))
    labels, p = oracle.consensus(a)
    jl, jp = zero_jax.consensus(a, n)
    tl, tp = zero_torch.consensus(T(a), n)
    same(jl, tl, labels)
    same(jp, tp, p)
    fresh = rng.integers(0, min(n, 4), size=(b, k))
    same(
        zero_jax.pseudo_rewards(fresh, jl),
        zero_torch.pseudo_rewards(T(fresh), tl),
        oracle.pseudo_rewards(fresh, labels),
    )


@given(b=BATCH, k=GROUP, dtype=FLOAT, seed=SEED)
def test_curriculum_mask(b, k, dtype, seed):
    rng = np.random.default_rng(seed)
    p = unit_scores(rng, b, dtype, k)
    low, high = sorted(rng.choice([0.0, 0.25, 0.3, 0.5, 0.75, 0.8, 1.0], size=2))
    same(
        zero_jax.curriculum_mask(p, low, high),
        zero_torch.curriculum_mask(T(p), low, high),
        oracle.curriculum_mask(p, low, high),
    )


@given(b=BATCH, t=st.sampled_from([1, 5, 32]), dtype=FLOAT, seed=SEED)
def test_hint_delta(b, t, dtype, seed):
    rng = np.random.default_rng(seed)
    base = -rng.exponential(size=(b, t)).astype(dtype)
    hinted = -rng.exponential(size=(b, t)).astype(dtype)
    mask = rng.random((b, t)) < rng.random()
    mask[0] = False  # an all-masked row
    expected = oracle.hint_delta(base, hinted, mask)
    j = zero_jax.hint_delta(base, hinted, mask)
    same(j, zero_torch.hint_delta(T(base), T(hinted), T(mask)), expected)


@given(b=BATCH, dtype=FLOAT, seed=SEED)
def test_proposer(b, dtype, seed):
    rng = np.random.default_rng(seed)
    delta = rng.normal(size=b).astype(dtype)
    lengths = rng.integers(0, 600, size=b)
    share = (rng.integers(1, b + 1, size=b) / b).astype(dtype)
    valid = rng.random(b) < 0.6
    expected = oracle.proposer_rewards(delta, lengths, share, valid)
    same(
        zero_jax.proposer_rewards(delta, lengths, share, valid),
        zero_torch.proposer_rewards(T(delta), T(lengths), T(share), T(valid)),
        expected,
    )


@given(b=BATCH, dtype=FLOAT, seed=SEED)
def test_coder(b, dtype, seed):
    rng = np.random.default_rng(seed)
    executed = rng.random(b) < 0.6
    easy = unit_scores(rng, b, dtype)
    c = unit_scores(rng, b, dtype)
    easy[~executed] = np.nan  # failed renders carry no visual scores
    syntax = rng.random(b) < 0.3
    expected = oracle.coder_rewards(executed, easy, c, syntax)
    same(
        zero_jax.coder_rewards(executed, easy, c, syntax),
        zero_torch.coder_rewards(T(executed), T(easy), T(c), T(syntax)),
        expected,
    )


@given(b=BATCH, k=GROUP, n=ALPHABET, seed=SEED, alpha=st.sampled_from([0.0, 0.3, 0.9, 1.0]))
def test_solver(b, k, n, seed, alpha):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, min(n, 3) if rng.random() < 0.5 else n, size=(b, k))
    fmt = rng.random((b, k)) < 0.5
    expected = oracle.solver_rewards(a, fmt, alpha=alpha)
    same(
        zero_jax.solver_rewards(a, fmt, n, alpha),
        zero_torch.solver_rewards(T(a), T(fmt), n, alpha),
        expected,
    )


@settings(max_examples=12)  # each example compiles 8 kernels; the matrix covers the rest
@given(b=BATCH, k=GROUP, n=st.sampled_from([1, 2, 3, 5, 17]), seed=SEED)
def test_every_voting_method_agrees(b, k, n, seed):
    a = np.random.default_rng(seed).integers(0, n, size=(b, k))
    labels, p = oracle.consensus(a)
    for method in ("one_hot", "segment_sum", "pairwise", "auto"):
        jl, jp = zero_jax.consensus(a, n, method=method)
        tl, tp = zero_torch.consensus(T(a), n, method=method)
        same(jl, tl, labels)
        same(jp, tp, p)
        fmt = a % 2 == 0
        same(
            zero_jax.solver_rewards(a, fmt, n, method=method),
            zero_torch.solver_rewards(T(a), T(fmt), n, method=method),
            oracle.solver_rewards(a, fmt),
        )


def test_int32_answers_give_the_contract_dtypes():
    a = np.array([[3, 1, 3], [0, 0, 2]], np.int32)
    labels, p = zero_jax.consensus(jnp.asarray(a), 4)
    assert labels.dtype == jnp.int64 and p.dtype == jnp.float64
    np.testing.assert_array_equal(labels, [3, 0])


def test_huge_answer_vocabulary_with_auto_method():
    """10 million answer ids at B=1024, K=8: "auto" never builds a [B, num_answers] table."""
    a = np.random.default_rng(3).integers(0, 10_000_000, size=(1024, 8))
    a[::3, :4] = a[::3, 4:]  # plenty of ties
    labels, p = oracle.consensus(a)
    jl, jp = zero_jax.consensus(a, 10_000_000)
    np.testing.assert_array_equal(jl, labels)
    np.testing.assert_array_equal(jp, p)
    fmt = a % 2 == 0
    np.testing.assert_allclose(
        zero_jax.solver_rewards(a, fmt, 10_000_000), oracle.solver_rewards(a, fmt), atol=1e-12
    )


@pytest.mark.parametrize("k", [3, 5, 7, 10])
def test_vote_shares_are_correctly_rounded_and_band_edges_agree(k):
    """p = top / K exactly as NumPy and torch divide (XLA would multiply by 1/K and
    land one ulp off, e.g. 3/5 -> 0.6000000000000001), so shares on a band edge
    (R-Zero's upstream band is [0.3, 0.8] with K = 10) stay inside in both twins."""
    rng = np.random.default_rng(k)
    a = np.stack([np.where(np.arange(k) < t, 0, 1 + np.arange(k)) for t in range(1, k + 1)])
    a = np.concatenate([a, rng.integers(0, 3, size=(50, k))])
    _, want = oracle.consensus(a)
    _, jp = zero_jax.consensus(a, k + 1)
    _, tp = zero_torch.consensus(T(a), k + 1)
    np.testing.assert_array_equal(np.asarray(jp), want)
    np.testing.assert_array_equal(tp.numpy(), want)
    for low, high in ((0.3, 0.8), (0.2, 0.6), (1 / 3, 2 / 3), (0.25, 0.75)):
        jm = zero_jax.curriculum_mask(jp, low, high)
        np.testing.assert_array_equal(
            np.asarray(jm), zero_torch.curriculum_mask(tp, low, high).numpy()
        )
        np.testing.assert_array_equal(np.asarray(jm), (want >= low) & (want <= high))


def test_shares_and_length_penalty_are_correctly_rounded():
    b = 10
    p = np.full(b, 0.5)
    ids = np.array([0, 0, 0, 1, 1, 2, 3, 3, 3, 3])
    v = np.ones(b, bool)
    expected = oracle.challenger_rewards(p, ids, v, 1.0)
    np.testing.assert_array_equal(np.asarray(zero_jax.challenger_rewards(p, ids, v)), expected)
    lengths = np.arange(200, 200 + 10 * 37, 37)
    delta = np.zeros(b)
    expected = oracle.proposer_rewards(delta, lengths, delta, v)
    np.testing.assert_array_equal(
        np.asarray(zero_jax.proposer_rewards(delta, lengths, delta, v)), expected
    )


def test_one_hot_vote_over_a_wide_alphabet_stays_within_the_table_rule():
    """``method="one_hot"`` with K = 5000 samples and num_answers = 2**22: the table
    (B x num_answers = 4M) is within the documented limit, but a [B, K, num_answers]
    comparison is 2e10 entries (XLA asked for 86 GB); the vote is the oracle's."""
    rng = np.random.default_rng(5)
    a = rng.integers(0, 2**22, size=(1, 5000))
    a[0, :7] = 123_456  # the only id drawn more than twice (the next is at most 2)
    labels, p = oracle.consensus(a)
    assert labels.tolist() == [123_456]
    for method in ("one_hot", "segment_sum"):
        jl, jp = zero_jax.consensus(a, 2**22, method=method)
        assert jl.tolist() == labels.tolist(), method
        np.testing.assert_allclose(jp, p, rtol=1e-6)
    tl, _ = zero_torch.consensus(T(a), 2**22, method="one_hot")
    assert tl.tolist() == labels.tolist()


@pytest.mark.parametrize("mask_shape", [(2, 1), (1,), (1, 1), (3,), (1, 3), (2, 3)])
def test_masked_mean_with_a_broadcast_mask(mask_shape):
    """A mask broadcast along the last axis keeps (or drops) every t of its rows: the
    count is of the broadcast mask (torch counted the unbroadcast one: a sum, T x the
    mean)."""
    values = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 7.0]])
    mask = np.random.default_rng(sum(mask_shape)).random(mask_shape) < 0.6
    full = np.broadcast_to(mask, values.shape)
    want = np.where(full, values, 0).sum(-1) / np.maximum(full.sum(-1), 1)
    same(zero_jax.masked_mean(values, mask), zero_torch.masked_mean(T(values), T(mask)), want)


def test_uncertainty_is_exact_and_the_challenger_clamp_is_met():
    """u = 1 - 2|p - 1/2| computed as 2 min(p, 1 - p) is exact for every float p in
    [0, 1]: 0.2 gives 2 * 0.2 (it gave 0.39999998), and an uncertainty equal to the
    repetition penalty (p = 1/6, share 1/3) is clamped to exactly 0 (3e-8 was left)."""
    p = np.array([0.2, 1 / 6, 0.5, 0.5, 0.9], np.float32)
    ids = np.array([5, 0, 1, 1, 7])
    valid = np.ones(5, bool)
    for dtype in (np.float32, np.float64):
        q = p.astype(dtype)
        want = 2 * np.minimum(q, 1 - q)  # exact: 1 - q is exact for q >= 1/2
        same(zero_jax.uncertainty_reward(q), zero_torch.uncertainty_reward(T(q)), want)
        assert want[0] == dtype(2) * q[0]
        b = np.array([0.2, 1 / 6, 1 / 6], dtype)
        c = np.array([4, 0, 1])
        out = zero_jax.challenger_rewards(b, c, np.ones(3, bool))
        same(out, zero_torch.challenger_rewards(T(b), T(c), T(np.ones(3, bool))))
        assert np.asarray(out)[1:].tolist() == [0.0, 0.0]
    same(zero_jax.challenger_rewards(p, ids, valid),
         zero_torch.challenger_rewards(T(p), T(ids), T(valid)))
