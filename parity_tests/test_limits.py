"""Every reproducer of the trust issue (defect classes 1-10 of issue 9), run as a
user would: JAX's default configuration (x64 off) unless the case needs x64, the
exact answer checked against an independent computation, or the documented
ValueError / TypeError in both twins."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import zero_jax
from zero_contracts import MAX_TABLE

from . import cases as oracle

torch = pytest.importorskip("torch", reason="the reproducers compare both twins")
import zero_torch  # noqa: E402

# ------------------------------------------------- 1. Python ints beyond the dtype


def test_challenger_above_128_proposals_with_x64_off(x64_off):
    p = jnp.full(200, 0.5)
    ids = jnp.arange(200) % 7
    out = zero_jax.challenger_rewards(p, ids, jnp.ones(200, bool))
    want = oracle.challenger_rewards(np.full(200, 0.5), np.arange(200) % 7, np.ones(200, bool))
    np.testing.assert_allclose(out, want, rtol=0, atol=1e-7)
    assert out.dtype == jnp.float32


def test_uint32_pairwise_vote_with_x64_off(x64_off):
    a = np.array([[5, 5, 7, 7, 7, 1, 2, 3]], np.uint32)
    labels, p = zero_jax.consensus(a, 2**28)
    assert labels.tolist() == [7] and p.tolist() == [0.375]
    t_labels, t_p = zero_torch.consensus(torch.from_numpy(a), 2**28)
    assert t_labels.tolist() == [7] and t_p.tolist() == [0.375]


def test_range_check_with_num_answers_beyond_the_id_dtype(x64_off):
    a = jnp.array([[5, 5, 2**31 - 1]], jnp.int32)
    labels, p = zero_jax.checked(zero_jax.consensus)(a, 2**31)
    assert labels.tolist() == [5]
    np.testing.assert_allclose(p, [2 / 3])


def test_uint64_answers_with_a_huge_alphabet_under_x64():
    with jax.enable_x64(True):
        big = 2**62 + 9
        a = np.array([[big, 3, big, 2**62 + 1]], np.uint64)
        labels, p = zero_jax.checked(zero_jax.consensus)(a, 2**62 + 10)
        assert labels.dtype == jnp.int64 and labels.tolist() == [big] and p.tolist() == [0.5]
        r = zero_jax.solver_rewards(a, np.ones(a.shape, bool), 2**62 + 10)
        assert r.tolist() == [[1.0, 0.1, 1.0, 0.1]]
        # pseudo-labels compared exactly across uint64 answers and int64 labels
        r = zero_jax.pseudo_rewards(a, labels)
        assert r.tolist() == [[1.0, 0.0, 1.0, 0.0]]
    t_labels, _ = zero_torch.consensus(torch.from_numpy(a), 2**62 + 10)
    assert t_labels.tolist() == [big]
    r = zero_torch.pseudo_rewards(torch.from_numpy(a), t_labels)
    assert r.tolist() == [[1.0, 0.0, 1.0, 0.0]]


def test_pseudo_rewards_never_equate_distinct_ids_across_dtypes(x64_off):
    a = np.array([[4294967295, 7]], np.uint32)  # would wrap to -1 as int32
    y = np.array([-1], np.int32)
    assert zero_jax.pseudo_rewards(a, y).tolist() == [[0.0, 0.0]]
    assert zero_torch.pseudo_rewards(torch.from_numpy(a), torch.from_numpy(y)).tolist() == [
        [0.0, 0.0]
    ]
    with jax.enable_x64(True):
        a = np.array([[2**63 + 5, 2**53 + 1]], np.uint64)
        y = np.array([2**53], np.int64)  # equal to 2**53 + 1 through a float64
        assert zero_jax.pseudo_rewards(a, y).tolist() == [[0.0, 0.0]]
    assert zero_torch.pseudo_rewards(torch.from_numpy(a), torch.from_numpy(y)).tolist() == [
        [0.0, 0.0]
    ]


# ---------------------------------------------- 2. integer arithmetic in narrow ids


@pytest.mark.parametrize("method", ["segment_sum", "one_hot", "pairwise"])
def test_int8_ids_vote_exactly(x64_off, method):
    rng = np.random.default_rng(0)
    a = (rng.integers(0, 3, (5000, 8)) * 5).astype("int8")
    want_labels, want_top = oracle.vote(a)
    labels, p = zero_jax.consensus(a, 16, method=method)
    np.testing.assert_array_equal(labels, want_labels)
    np.testing.assert_array_equal(p, (want_top / 8).astype(np.float32))
    labels, _ = zero_jax.consensus(a, 200, method=method)  # alphabet beyond int8
    np.testing.assert_array_equal(labels, want_labels)
    t_labels, _ = zero_torch.consensus(torch.from_numpy(a), 200, method=method)
    np.testing.assert_array_equal(t_labels.numpy(), want_labels)


def test_counting_vote_refuses_an_absurd_table_in_both_twins():
    a = np.zeros((4, 3), np.int64)
    n = MAX_TABLE  # 4 * MAX_TABLE entries
    for fn in (
        lambda: zero_jax.consensus(a, n, method="one_hot"),
        lambda: zero_torch.consensus(torch.from_numpy(a), n, method="segment_sum"),
    ):
        with pytest.raises(ValueError, match="method='pairwise'"):
            fn()
    assert zero_jax.consensus(a, n, method="pairwise")[0].tolist() == [0, 0, 0, 0]


# ------------------------------------------------ 3. counts in low-precision floats


def test_float16_challenger_keeps_the_penalty_at_large_batch(x64_off):
    b = 65536
    p = np.full(b, 0.5, np.float16)
    ids = np.arange(b) % 2  # two clusters: share 1/2
    want = np.full(b, 0.5, np.float16)
    np.testing.assert_array_equal(zero_jax.challenger_rewards(p, ids, np.ones(b, bool)), want)
    got = zero_torch.challenger_rewards(
        torch.from_numpy(p), torch.from_numpy(ids), torch.ones(b, dtype=torch.bool)
    )
    np.testing.assert_array_equal(got.numpy(), want)


@pytest.mark.parametrize("groups", [8192, 16384])
def test_float16_batch_advantages(x64_off, groups):
    rng = np.random.default_rng(1)
    r = rng.normal(size=(groups, 8)).astype(np.float16)
    want = oracle.group_advantages(r, scale="batch").astype(np.float16)
    got = np.asarray(zero_jax.group_advantages(r, scale="batch"))
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=2e-3, atol=2e-3)
    tgot = zero_torch.group_advantages(torch.from_numpy(r), scale="batch").numpy()
    np.testing.assert_allclose(tgot.astype(np.float64), want, rtol=2e-3, atol=2e-3)
    assert np.isfinite(got).all() and np.abs(got).max() < 10


# -------------------------------------------------- 4. checked and jit caches


def test_checked_and_a_plain_jitted_step_in_both_orders(x64_off):
    bad, good = jnp.array([[0, 5]]), jnp.array([[0, 1]])
    step = jax.jit(lambda a: zero_jax.consensus(a, 3))
    with pytest.raises(ValueError, match=r"answers must lie in \[0, num_answers=3\)"):
        zero_jax.checked(step)(bad)
    assert step(good)[0].tolist() == [0]  # the plain step is unaffected

    step2 = jax.jit(lambda a: zero_jax.consensus(a, 3))
    assert step2(good)[0].tolist() == [0]
    with pytest.raises(ValueError, match=r"answers must lie in \[0, num_answers=3\)"):
        zero_jax.checked(step2)(bad)
    assert zero_jax.checked(step2)(good)[0].tolist() == [0]


def test_checked_whole_training_step_with_grad(x64_off):
    def loss(logits, answers, valid):
        _, p = zero_jax.consensus(answers, 4)
        r = zero_jax.challenger_rewards(p, jnp.arange(p.shape[0]) % 2, valid)
        return -jnp.sum(r * jax.nn.log_softmax(logits))

    step = jax.jit(jax.grad(loss))
    logits = jnp.zeros(3)
    g = step(logits, jnp.array([[0, 1], [1, 1], [2, 3]]), jnp.ones(3, bool))
    assert np.isfinite(np.asarray(g)).all()
    with pytest.raises(ValueError, match="answers must lie in"):
        zero_jax.checked(step)(logits, jnp.array([[0, 1], [1, 9], [2, 3]]), jnp.ones(3, bool))


# ------------------------------------------------------------ 5. explicit sharding
# (test_matrix_sharded.py runs every function and method on 8 host devices)

# ---------------------------------------------------------- 6. unsigned ids in torch


@pytest.mark.parametrize("dtype", [torch.uint8, torch.uint16, torch.uint32, torch.uint64])
def test_torch_accepts_unsigned_ids_exactly(dtype):
    a = torch.tensor([[3, 3, 1], [0, 2, 2]], dtype=dtype)
    labels, p = zero_torch.consensus(a, 4)
    assert labels.tolist() == [3, 2]
    for m in ("one_hot", "segment_sum", "pairwise"):
        assert zero_torch.majority_vote(a, 4, m)[0].tolist() == [3, 2]
    ids = torch.tensor([1, 5, 1, 9], dtype=dtype)
    assert zero_torch.cluster_sizes(ids).tolist() == [2, 1, 2, 1]
    r = zero_torch.challenger_rewards(torch.full((4,), 0.5), ids, torch.ones(4, dtype=torch.bool))
    np.testing.assert_allclose(r.numpy(), [0.5, 0.75, 0.5, 0.75])
    n = zero_torch.proposer_rewards(
        torch.zeros(2), torch.tensor([250, 0], dtype=dtype), torch.zeros(2),
        torch.ones(2, dtype=torch.bool),
    )
    np.testing.assert_allclose(n.numpy(), [-0.015, 0.0], atol=1e-7)


def test_torch_uint64_ids_beyond_int64_keep_their_identity():
    ids = torch.tensor([2**64 - 1, 2**63, 2**64 - 1, 5], dtype=torch.uint64)
    assert zero_torch.cluster_sizes(ids).tolist() == [2, 1, 2, 1]
    with pytest.raises(ValueError, match="answers must lie in"):
        zero_torch.consensus(ids.reshape(2, 2), 10)


# ------------------------------------------------------------- 7. silent aliasing


def test_wide_numpy_ids_with_x64_off_raise_a_clear_error(x64_off):
    ids = np.array([2**40, 2**40 + 1, 3, 3], np.int64)
    with pytest.raises(ValueError, match="clusters has values outside the int32 range.*x64"):
        zero_jax.challenger_rewards(np.full(4, 0.5), ids, np.ones(4, bool))
    with pytest.raises(ValueError, match="answers has values outside the int32"):
        zero_jax.consensus(ids.reshape(2, 2), 10)
    # within range, int64 NumPy ids are exact with x64 off
    ok = np.array([2**31 - 1, -(2**31), 2**31 - 1, 0], np.int64)
    assert zero_jax.cluster_sizes(ok).tolist() == [2, 1, 2, 1]


def test_labels_beyond_int32_raise_with_x64_off(x64_off):
    a = np.array([[1, 2]], np.uint32)
    with pytest.raises(ValueError, match="num_answers=4294967296 allows labels beyond"):
        zero_jax.consensus(a, 2**32)
    assert zero_jax.consensus(a, 2**31)[0].tolist() == [1]


# ------------------------------------------------------------ 8. non-finite rewards


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_rewards_raise(bad):
    r = np.array([[1.0, bad], [0.0, 1.0]])
    with pytest.raises(ValueError, match="rewards must be finite"):
        zero_torch.group_advantages(torch.from_numpy(r))
    with pytest.raises(ValueError, match="rewards must be finite"):
        zero_jax.checked(zero_jax.group_advantages)(r)
    # a masked non-finite reward is ignored
    m = np.array([[True, False], [True, True]])
    want = oracle.group_advantages(np.where(m, r, 0.0), m)
    np.testing.assert_allclose(
        zero_torch.group_advantages(torch.from_numpy(r), torch.from_numpy(m)).numpy(), want
    )
    np.testing.assert_allclose(zero_jax.checked(zero_jax.group_advantages)(r, m), want)


# ------------------------------------------------------------ 9. empty token axis


def test_hint_delta_with_no_tokens_is_zero():
    for b in (1, 3):
        z = np.zeros((b, 0))
        np.testing.assert_array_equal(zero_jax.hint_delta(z, z, z.astype(bool)), np.zeros(b))
        t = torch.zeros(b, 0, requires_grad=True)
        out = zero_torch.hint_delta(t, t, torch.zeros(b, 0, dtype=torch.bool))
        assert out.tolist() == [0.0] * b
    g = jax.grad(lambda x: zero_jax.hint_delta(x, x, jnp.zeros((2, 0), bool)).sum())(
        jnp.zeros((2, 0))
    )
    assert g.shape == (2, 0)
    with pytest.raises(ValueError, match="non-empty"):
        zero_jax.hint_delta(np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 3), bool))


# ------------------------------------------------ MM-Zero: the published 0.1


def test_solver_format_weight_is_the_published_decimal():
    a = np.array([[1, 1, 2]])
    v = np.array([[False, True, True]])
    with jax.enable_x64(True):
        got = zero_jax.solver_rewards(a, v, 3).tolist()
    assert got == [[0.9, 1.0, 0.1]]
    assert zero_torch.solver_rewards(torch.from_numpy(a), torch.from_numpy(v), 3).tolist() == [
        [0.9, 1.0, 0.1]
    ]
    assert 1 - 0.9 != 0.1  # the binary complement the published code does not use
