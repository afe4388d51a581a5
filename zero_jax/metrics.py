"""Evaluation and training diagnostics of label-free RL: the unbiased pass@k and
TTRL's vote metrics.

pass@k from *Evaluating Large Language Models Trained on Code* (Chen et al., 2021,
https://arxiv.org/abs/2107.03374); the vote diagnostics from *TTRL: Test-Time
Reinforcement Learning* (Zuo et al., 2025, https://arxiv.org/abs/2504.16084), which tell
whether majority-vote training is healthy when a truth exists for monitoring.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from jax import lax

from zero_contracts import VoteMetrics
from zero_contracts import messages as msg
from zero_jax import _checks as _c
from zero_jax._checks import Index
from zero_jax.primitives import _gather, ids_equal, vote

__all__ = ["VoteMetrics", "pass_at_k", "vote_metrics"]


def pass_at_k(correct: Any, k: Index) -> jax.Array:
    """Unbiased pass@k of each question from n samples, c of them correct.

    ``pass@k_i = 1 - C(n - c_i, k) / C(n, k), c_i = sum_j correct_ij``

    Evaluating Large Language Models Trained on Code (Mark Chen et al., 2021), §2.1,
    the unbiased pass@k estimator, https://arxiv.org/abs/2107.03374.  Output ``[B]``:
    float64 (float32 in JAX with x64 off); detached (no gradient).

    The chance that k samples drawn without replacement from the n hold a correct
    one, ``1 - prod_{i=n-c+1}^{n} (1 - k / i)`` (1 when ``n - c < k``), computed as
    ``-expm1`` of a sum of ``log1p`` terms (no overflow, no cancellation, for any n),
    once per possible count c.

    Args:
      correct: bool ``[B, n]``, which samples of each question are correct.
      k: static int, ``1 <= k <= n``.

    Returns:
      ``[B]`` in [0, 1].

    >>> import jax.numpy as jnp, zero_jax
    >>> correct = jnp.array([[True, False, False, False], [False] * 4])
    >>> [round(x, 4) for x in zero_jax.pass_at_k(correct, 2).tolist()]
    [0.5, 0.0]
    """
    (c,) = _c.arrays("pass_at_k", correct)
    h = _c.hypers("pass_at_k", k=k)
    return _pass_at_k(c, **h)


@_c.kernel("pass_at_k")
def _pass_at_k(correct: jax.Array, k: int) -> jax.Array:
    n = correct.shape[-1]
    if k > n:
        raise ValueError(msg.K_TOO_LARGE.format(n=n, k=k))
    dtype = _c.float_dtype()
    # pass@k for each possible count c = 0..n, then one lookup per row: the log of the
    # product over the c largest i of (1 - k / i), a running sum from i = n down; a
    # factor i <= k is <= 0 (a draw of k then holds a correct sample): -inf, pass@k 1
    i = jnp.arange(n, 0, -1).astype(dtype)
    logs = jnp.where(i > k, _log_one_minus(k, i), -jnp.inf)
    table = jnp.concatenate([jnp.zeros((1,), dtype), -jnp.expm1(jnp.cumsum(logs))])
    # one gather per row; under an Explicit mesh the rows' sharding is the counts'
    counts = jnp.sum(correct, axis=-1, dtype=jnp.int32)
    return table.at[counts].get(out_sharding=jax.typeof(counts).sharding,
                                mode="promise_in_bounds")  # counts lie in [0, n]


def _log_one_minus(k: int, i: jax.Array) -> jax.Array:
    """``log(1 - k / i)`` to a few ulps from an accurate ``log`` (Goldberg's
    ``log1p(x) = log(u) x / (u - 1)``, ``x = -k / i``, ``u = (i - k) / i``): XLA's
    float64 ``log1p`` is up to 128 ulps off on ``[-0.99, 0]`` (its ``log`` within 1),
    which put pass@k 29 ulps off (n = 257, k = 100, c = 1).  ``u`` is not written
    ``1 + x``: XLA folds ``(1 + x) - 1`` to ``x``.  Read where ``i > k`` only."""
    x = -k / i
    u = (i - k) / i
    return jnp.where(u == 1, x, jnp.log(u) * x / (u - 1))


def vote_metrics(
    answers: Any,
    truth: Any,
    num_answers: Index,
    *,
    trained: Index | None = None,
    method: str = "auto",
) -> VoteMetrics:
    """TTRL's diagnostics of majority-vote training against a held-back truth.

    ``label_acc = mean_i 1[y_i = t_i], reward_acc = mean_ij 1[1[a_ij = y_i] = 1[a_ij = t_i]],
    ratio = mean_i n_i / K, maj@K_s = mean_i 1[y^s_i = t_i]``

    TTRL: Test-Time Reinforcement Learning (Yuxin Zuo et al., 2025), §4, the training
    diagnostics (label and reward accuracy, majority ratio),
    https://arxiv.org/abs/2504.16084.  Output ``4 x []``: float64 scalars (float32 in
    JAX with x64 off); detached (no gradient).

    ``y`` is the majority over all K answers of each question (the vote; ties: the
    smallest id) and ``t`` its truth, used only to monitor.  The pseudo reward of
    answer j is ``1[a_ij = y_i]`` and its true reward ``1[a_ij = t_i]``; TTRL votes on
    more samples than it trains on, so ``reward_accuracy`` and ``maj_at_k`` (the
    majority of the trained answers against the truth) read the first ``trained``
    answers of each row (all K by default).  Falling reward accuracy while the
    majority ratio climbs is the collapse these numbers catch.  An answer id outside
    ``[0, num_answers)`` makes all four NaN.

    Args:
      answers: integer ``[B, K]`` answer ids in ``[0, num_answers)``.
      truth: integer ``[B]`` true answer ids (any integers; one that no answer has,
        e.g. -1, counts as wrong).
      num_answers: static size of the answer alphabet.
      trained: static number of leading answers trained on, ``<= K`` (default K).
      method: voting method, as in :func:`zero_jax.consensus`.

    Returns:
      ``VoteMetrics(label_accuracy, reward_accuracy, majority_ratio, maj_at_k)``.

    >>> import jax.numpy as jnp, zero_jax
    >>> a = jnp.array([[1, 1, 2, 0], [3, 3, 3, 1]]); truth = jnp.array([1, 1])
    >>> m = zero_jax.vote_metrics(a, truth, num_answers=4, trained=2)
    >>> [round(float(x), 4) for x in m]
    [0.5, 0.5, 0.625, 0.5]
    """
    a, t = _c.arrays("vote_metrics", answers, truth)
    h = _c.hypers("vote_metrics", num_answers=num_answers, trained=trained, method=method)
    return VoteMetrics(*_vote_metrics(a, t, **h))


@_c.kernel("vote_metrics")
def _vote_metrics(
    answers: jax.Array, truth: jax.Array, num_answers: int, trained: int | None, method: str
) -> tuple[jax.Array, ...]:
    k = answers.shape[-1]
    trained = k if trained is None else trained
    if trained > k:
        raise ValueError(msg.TRAINED_TOO_LARGE.format(k=k, trained=trained))
    bad = _c.invalid("vote_metrics", answers=answers, num_answers=num_answers)
    dtype = _c.float_dtype()
    answers = _gather(answers, last=True)[0]  # the first `trained` samples of every row
    labels, top = vote(answers, num_answers, method)
    sub_labels, _ = vote(answers[..., :trained], num_answers, method)
    fresh = answers[..., :trained]
    pseudo = ids_equal(fresh, labels[..., None])
    true = ids_equal(fresh, truth[..., None])
    out = (
        jnp.mean(ids_equal(labels, truth), dtype=dtype),
        jnp.mean(pseudo == true, dtype=dtype),
        jnp.mean(top.astype(dtype) / k),
        jnp.mean(ids_equal(sub_labels, truth), dtype=dtype),
    )
    broken = jnp.any(bad["answers"])
    return tuple(lax.stop_gradient(_c.poison(x, broken)) for x in out)
