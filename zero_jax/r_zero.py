"""R-Zero rewards: challenger uncertainty with a repetition penalty, majority-vote
pseudo-labels, the informative band and solver rewards.

From *R-Zero: Self-Evolving Reasoning LLM from Zero Data* (Huang et al., 2025,
https://arxiv.org/abs/2508.05004), Sections 2.2-2.4.  Each public function converts
its arrays and validates its hyper-parameters, then runs one jitted kernel that
checks kinds and shapes while it traces (contracts in :mod:`zero_contracts`).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from jax import lax
from jax.typing import ArrayLike

from zero_jax import _checks as _c
from zero_jax._checks import Index
from zero_jax.primitives import cluster_shares, exact_div, ids_equal, vote

__all__ = [
    "challenger_rewards",
    "challenger_rewards_published",
    "consensus",
    "curriculum_mask",
    "pseudo_rewards",
    "uncertainty_reward",
]


def _triangle(p: jax.Array) -> jax.Array:
    """``1 - 2 |p - 1/2|`` as ``2 min(p, 1 - p)``: exact for every float ``p`` in [0, 1]
    (``1 - p`` is exact for ``p >= 1/2``), where the first form rounds (0.2 gave
    0.39999998, and a share equal to the uncertainty left 3e-8 above the clamp)."""
    return 2 * jnp.minimum(p, 1 - p)


def uncertainty_reward(consistency: Any) -> jax.Array:
    """Triangular uncertainty of a self-consistency score.

    ``u_i = 1 - 2 |p_i - 1/2|``

    R-Zero: Self-Evolving Reasoning LLM from Zero Data (Chengsong Huang et al.,
    2025), §2.2, uncertainty reward, https://arxiv.org/abs/2508.05004.  Output
    ``[B]``: the dtype of ``consistency``; detached (no gradient).

    1 when the solver splits evenly, 0 when it is unanimous (right or wrong:
    agreement is not accuracy).  A score outside [0, 1] (or NaN) gives NaN.

    Args:
      consistency: float ``[B]``, values in ``[0, 1]``.

    Returns:
      ``[B]`` in the dtype of ``consistency`` (half precision computed in float32).

    >>> import jax.numpy as jnp, zero_jax
    >>> zero_jax.uncertainty_reward(jnp.array([0.5, 0.75, 1.0])).tolist()
    [1.0, 0.5, 0.0]
    """
    (p,) = _c.arrays("uncertainty_reward", consistency)
    return _uncertainty(p)


@_c.kernel("uncertainty_reward")
def _uncertainty(p: jax.Array) -> jax.Array:
    bad = _c.invalid("uncertainty_reward", consistency=p)
    u = _triangle(p.astype(_c.compute_dtype(p.dtype)))
    return lax.stop_gradient(_c.poison(u, bad["consistency"]).astype(p.dtype))


def challenger_rewards(
    consistency: Any,
    clusters: Any,
    valid: Any,
    strength: ArrayLike = 1.0,
    *,
    num_clusters: Index | None = None,
) -> jax.Array:
    """R-Zero challenger reward: uncertainty minus a repetition penalty, format-gated.

    ``r_i = v_i max(0, 1 - 2 |p_i - 1/2| - strength |C_i| / B)``

    R-Zero: Self-Evolving Reasoning LLM from Zero Data (Chengsong Huang et al.,
    2025), §2.2, uncertainty, repetition penalty and format gate,
    https://arxiv.org/abs/2508.05004.  Output ``[B]``: the dtype of
    ``consistency``; detached (no gradient).

    ``|C_i|`` counts the proposals of the whole batch (valid or not) that share
    proposal ``i``'s cluster id, and ``B`` is the batch size: invalid rows stay in
    the denominator, only the reward is gated.  A row with an invalid score or
    cluster id gives NaN; the other rows count it in ``B``, and in its cluster when
    only its score is invalid (an invalid cluster id matches no valid one).

    Args:
      consistency: float ``[B]`` in ``[0, 1]``, the solver's self-consistency.
      clusters: integer ``[B]`` cluster ids; any integers (negative, sparse, 64-bit).
      valid: bool ``[B]``, the format gate.
      strength: repetition-penalty weight ``>= 0`` (a number or a traced scalar).
      num_clusters: optional static int; when given, ids must be dense in
        ``[0, num_clusters)`` (as ``zero_text.bleu_clusters`` returns) and sizes are
        one bincount, ``O(B + num_clusters)``, instead of hashing rounds.

    Returns:
      ``[B]`` in the dtype of ``consistency`` (half precision computed in float32).

    >>> import jax.numpy as jnp, zero_jax
    >>> p = jnp.array([0.5, 0.5, 0.75, 1.0])
    >>> ids = jnp.array([0, 0, 1, 2]); valid = jnp.array([True, True, True, False])
    >>> zero_jax.challenger_rewards(p, ids, valid).tolist()
    [0.5, 0.5, 0.25, 0.0]
    """
    p, c, v = _c.arrays("challenger_rewards", consistency, clusters, valid)
    h = _c.hypers("challenger_rewards", strength=strength, num_clusters=num_clusters)
    return _challenger(p, c, v, **h)


@_c.kernel("challenger_rewards")
def _challenger(
    p: jax.Array,
    clusters: jax.Array,
    valid: jax.Array,
    strength: float | jax.Array,
    num_clusters: int | None,
) -> jax.Array:
    bad = _c.invalid(
        "challenger_rewards",
        consistency=p, clusters=clusters, strength=strength, num_clusters=num_clusters,
    )
    dtype = _c.compute_dtype(p.dtype)  # counts and B never pass through float16
    known, share = cluster_shares(clusters, num_clusters, dtype)
    reward = jnp.maximum(0, _triangle(p.astype(dtype)) - jnp.asarray(strength, dtype) * share)
    reward = jnp.where(valid, reward, 0)
    rows = bad["consistency"] | ~known | _c.hyper_rules(bad)
    return lax.stop_gradient(_c.poison(reward, rows).astype(p.dtype))


def consensus(
    answers: Any, num_answers: Index, *, method: str = "auto"
) -> tuple[jax.Array, jax.Array]:
    """Majority-vote pseudo-label and self-consistency of each question's K answers.

    ``y_i = argmax_c n_ic (smallest id on ties), p_i = max_c n_ic / K``

    R-Zero: Self-Evolving Reasoning LLM from Zero Data (Chengsong Huang et al.,
    2025), §2.3, majority-vote pseudo-labels, https://arxiv.org/abs/2508.05004.
    Output ``([B], [B])``: int64 labels, float64 shares (int32 / float32 in JAX
    with x64 off); detached (no gradient).

    ``n_ic`` counts the K answers of row ``i`` equal to ``c``; all K answers count.
    With ids assigned in order of first appearance (as ``zero_text.group_answers``
    does) the smallest-id tie is the first-seen tie.  A row holding an id outside
    ``[0, num_answers)`` gives label -1 and share NaN, whatever the method.

    Args:
      answers: integer ``[B, K]`` answer ids in ``[0, num_answers)``.
      num_answers: static size of the answer alphabet.
      method: ``"auto"`` (default), ``"one_hot"``, ``"segment_sum"`` (both count over
        ``[B, num_answers]``) or ``"pairwise"`` (``[B, K, K]``, independent of
        ``num_answers``).  ``"auto"`` counts only when ``num_answers < K``.

    Returns:
      ``(labels, consistency)``; with x64 off, a ``num_answers`` whose labels int32
      cannot hold is a ``ValueError``.

    >>> import jax.numpy as jnp, zero_jax
    >>> labels, p = zero_jax.consensus(jnp.array([[2, 1, 1, 0]]), 3)
    >>> labels.tolist(), p.tolist()
    ([1], [0.5])
    """
    (a,) = _c.arrays("consensus", answers)
    h = _c.hypers("consensus", num_answers=num_answers, method=method)
    return _consensus(a, **h)


@_c.kernel("consensus")
def _consensus(answers: jax.Array, num_answers: int, method: str) -> tuple[jax.Array, jax.Array]:
    _c.label_range(answers, num_answers)
    bad = _c.invalid("consensus", answers=answers, num_answers=num_answers)
    labels, top = vote(answers, num_answers, method)
    consistency = exact_div(top.astype(_c.float_dtype()), answers.shape[-1])
    rows = jnp.any(bad["answers"], axis=-1)
    return (
        _c.poison(labels.astype(_c.int_dtype()), rows),
        lax.stop_gradient(_c.poison(consistency, rows)),
    )


def curriculum_mask(consistency: Any, low: ArrayLike = 0.25, high: ArrayLike = 0.75) -> jax.Array:
    """Informative band: keep the questions whose vote share lies in [low, high].

    ``keep_i = low <= p_i <= high``

    R-Zero: Self-Evolving Reasoning LLM from Zero Data (Chengsong Huang et al.,
    2025), §2.4, informative band, https://arxiv.org/abs/2508.05004.  Output
    ``[B]``: bool; detached (no gradient).

    Both edges are kept.  An invalid score (outside [0, 1], NaN) is never kept, and
    traced edges out of range or out of order keep nothing.

    Args:
      consistency: float ``[B]`` in ``[0, 1]``.
      low, high: band edges with ``0 <= low <= high <= 1`` (numbers or traced
        scalars), compared in the dtype of ``consistency``.

    Returns:
      bool ``[B]``.

    >>> import jax.numpy as jnp, zero_jax
    >>> zero_jax.curriculum_mask(jnp.array([0.2, 0.25, 0.5, 0.75, 0.8])).tolist()
    [False, True, True, True, False]
    """
    (p,) = _c.arrays("curriculum_mask", consistency)
    h = _c.hypers("curriculum_mask", low=low, high=high)
    return _band(p, **h)


@_c.kernel("curriculum_mask")
def _band(p: jax.Array, low: float | jax.Array, high: float | jax.Array) -> jax.Array:
    bad = _c.invalid("curriculum_mask", consistency=p, low=low, high=high)
    keep = (p >= jnp.asarray(low, p.dtype)) & (p <= jnp.asarray(high, p.dtype))
    return keep & ~bad["consistency"] & ~_c.hyper_rules(bad)


def pseudo_rewards(answers: Any, labels: Any) -> jax.Array:
    """Agreement of fresh answers with frozen pseudo-labels.

    ``r_ij = 1[a_ij = y_i]``

    R-Zero: Self-Evolving Reasoning LLM from Zero Data (Chengsong Huang et al.,
    2025), §2.3, solver reward against frozen pseudo-labels,
    https://arxiv.org/abs/2508.05004.  Output ``[B, K]``: float64 (float32 in JAX
    with x64 off); detached (no gradient).

    Compared exactly whatever the two integer dtypes.  ``labels`` come from an
    earlier vote; the fresh answers are never re-voted (that would move the
    training target).  Any integers are valid ids (a label of -1 matches nothing
    but an answer of -1).

    Args:
      answers: integer ``[B, K]`` fresh answer ids.
      labels: integer ``[B]`` frozen labels.

    Returns:
      ``[B, K]`` of 0.0 / 1.0.

    >>> import jax.numpy as jnp, zero_jax
    >>> zero_jax.pseudo_rewards(jnp.array([[3, 1, 3]]), jnp.array([3])).tolist()
    [[1.0, 0.0, 1.0]]
    """
    a, y = _c.arrays("pseudo_rewards", answers, labels)
    return _pseudo(a, y)


@_c.kernel("pseudo_rewards")
def _pseudo(answers: jax.Array, labels: jax.Array) -> jax.Array:
    return ids_equal(answers, labels[..., None]).astype(_c.float_dtype())


def challenger_rewards_published(
    consistency: Any,
    clusters: Any,
    valid: Any,
    *,
    num_clusters: Index | None = None,
) -> jax.Array:
    """R-Zero challenger reward as its published code trains it: unclipped, -1 when invalid.

    ``r_i = min(p_i, 1 - p_i) - |C_i| / B if v_i, else -1 - |C_i| / B``

    R-Zero: Self-Evolving Reasoning LLM from Zero Data (Chengsong Huang et al., 2025),
    published code: examples/reward_function/caller_penalty.py (compute_score),
    https://arxiv.org/abs/2508.05004.  Output ``[B]``: the dtype of ``consistency``;
    detached (no gradient).

    What R-Zero's questioner is trained with (github.com/Chengsong-Huang/R-Zero,
    ``examples/reward_function/caller_penalty.py``), which differs from the paper's
    :func:`challenger_rewards` in three ways: the uncertainty is ``min(p, 1 - p)``
    (at most 1/2, half the paper's ``1 - 2 |p - 1/2|``), the cluster share is
    subtracted with weight 1 and never clipped at 0 (rewards lie in [-2, 1/2]), and
    an invalid proposal (no ``<question>`` or no box) earns ``-1 - |C_i| / B``
    instead of 0.  ``|C_i| / B`` counts every proposal of the batch, invalid ones
    included (the published code clusters them too, as empty questions).  ``p`` is
    the caller's: the published solver service divides the top vote count by all
    its samples, empty answers included, and sends -1 when it failed to score a
    question, which the published code then pays ``-1 - |C_i| / B``: pass such a row
    as invalid.  The score of an invalid row is never read (it may be NaN); a valid
    row with a score outside [0, 1] or NaN, or a row with an invalid cluster id,
    gives NaN.

    Args:
      consistency: float ``[B]``, in ``[0, 1]`` where ``valid``.
      clusters: integer ``[B]`` cluster ids; any integers (negative, sparse, 64-bit).
      valid: bool ``[B]``: the proposal has a question and an answer.
      num_clusters: optional static int; ids dense in ``[0, num_clusters)`` (as
        :func:`challenger_rewards`).

    Returns:
      ``[B]`` in the dtype of ``consistency`` (half precision computed in float32).

    >>> import jax.numpy as jnp, zero_jax
    >>> p = jnp.array([0.5, 0.75, 1.0, 0.5])
    >>> ids = jnp.array([0, 1, 2, 2]); valid = jnp.array([True, True, True, False])
    >>> zero_jax.challenger_rewards_published(p, ids, valid).tolist()
    [0.25, 0.0, -0.5, -1.5]
    """
    p, c, v = _c.arrays("challenger_rewards_published", consistency, clusters, valid)
    h = _c.hypers("challenger_rewards_published", num_clusters=num_clusters)
    return _challenger_published(p, c, v, **h)


@_c.kernel("challenger_rewards_published")
def _challenger_published(
    p: jax.Array, clusters: jax.Array, valid: jax.Array, num_clusters: int | None
) -> jax.Array:
    bad = _c.invalid(
        "challenger_rewards_published",
        consistency=p, clusters=clusters, valid=valid, num_clusters=num_clusters,
    )
    dtype = _c.compute_dtype(p.dtype)
    known, share = cluster_shares(clusters, num_clusters, dtype)
    x = p.astype(dtype)
    reward = jnp.where(valid, jnp.minimum(x, 1 - x), -1) - share
    return lax.stop_gradient(_c.poison(reward, bad["consistency"] | ~known).astype(p.dtype))
