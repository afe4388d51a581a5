"""Evaluation and training diagnostics, PyTorch reference: the unbiased pass@k estimator
(Chen et al., 2021, arXiv:2107.03374) and TTRL's majority-vote diagnostics (Zuo et al.,
2025, arXiv:2504.16084).  Mirrors ``zero_jax.metrics``."""

from __future__ import annotations

import torch

from zero_contracts import VoteMetrics
from zero_torch import _checks as _c
from zero_torch._checks import Index
from zero_torch.primitives import vote

__all__ = ["VoteMetrics", "pass_at_k", "vote_metrics"]


def _pass_rate(n: int, c: int, k: int) -> float:
    """``1 - C(n - c, k) / C(n, k)`` as ``-expm1(sum_{i=n-c+1}^{n} log1p(-k / i))``.

    Every term has the same sign, so the sum keeps its relative accuracy for any ``n``
    (no cancellation, no binomial overflow), and ``-expm1`` keeps it for pass rates near
    0 as near 1."""
    if n - c < k:
        return 1.0
    if c == 0:
        return 0.0
    i = torch.arange(n - c + 1, n + 1, dtype=torch.float64)
    return float(-torch.expm1(torch.log1p(-k / i).sum()))


@torch.no_grad()
def pass_at_k(correct: torch.Tensor, k: Index) -> torch.Tensor:
    """Unbiased pass@k of each question from n samples, c of them correct.

    ``pass@k_i = 1 - C(n - c_i, k) / C(n, k), c_i = sum_j correct_ij``

    Evaluating Large Language Models Trained on Code (Mark Chen et al., 2021), §2.1, the unbiased
    pass@k estimator, https://arxiv.org/abs/2107.03374.  Output ``[B]``: float64 (float32 in JAX
    with x64 off); detached (no gradient).

    ``correct`` ``[B, N]`` bool: which of a question's ``n = N`` samples are correct;
    ``k`` (``1 <= k <= N``, else ValueError) is static.  The probability that ``k``
    of the samples drawn without replacement contain a correct one: 1 when
    ``n - c < k``.  Computed as a sum of logarithms of the factors of
    ``prod_{i=n-c+1}^{n} (1 - k / i)`` (human-eval's ``estimate_pass_at_k``), accurate
    to a few ulps for any ``n`` (1024 and beyond).

    >>> import torch, zero_torch
    >>> correct = torch.tensor([[True, False, False, False], [False] * 4])
    >>> zero_torch.pass_at_k(correct, 2).tolist()  # 1 - C(3, 2) / C(4, 2)
    [0.5, 0.0]
    """
    (ok,) = _c.arrays("pass_at_k", correct)
    h = _c.hypers("pass_at_k", k=k)
    n = ok.shape[1]
    _c.k_at_most_samples(h["k"], n)
    counts, index = torch.unique(ok.sum(-1), return_inverse=True)
    table = [_pass_rate(n, int(c), h["k"]) for c in counts.tolist()]
    rates = torch.tensor(table, dtype=torch.float64, device=ok.device)
    return rates[index]


def _typed(labels: torch.Tensor, answers: torch.Tensor) -> torch.Tensor:
    """int64 vote labels back in the answers' integer type (uint64 bit for bit)."""
    return labels.view(torch.uint64) if answers.dtype == torch.uint64 else labels


@torch.no_grad()
def vote_metrics(
    answers: torch.Tensor,
    truth: torch.Tensor,
    num_answers: Index,
    *,
    trained: Index | None = None,
    method: str = "auto",
) -> VoteMetrics:
    """TTRL's diagnostics of majority-vote training against a held-back truth.

    ``label_acc = mean_i 1[y_i = t_i], reward_acc = mean_ij 1[1[a_ij = y_i] = 1[a_ij = t_i]],
    ratio = mean_i n_i / K, maj@K_s = mean_i 1[y^s_i = t_i]``

    TTRL: Test-Time Reinforcement Learning (Yuxin Zuo et al., 2025), §4, the training
    diagnostics (label and reward accuracy, majority ratio), https://arxiv.org/abs/2504.16084.
    Output ``4 x []``: float64 scalars (float32 in JAX with x64 off); detached (no gradient).

    ``answers`` ``[B, K]``: answer ids in ``[0, num_answers)`` of ``K = K_v`` votes
    per question; ``truth`` ``[B]``: the true answer ids (any integers, for
    monitoring only: it never enters a reward).  ``y_i`` is the majority over all
    ``K`` votes (smallest id on ties) and ``n_i`` its count; the first
    ``K_s = trained`` answers (default ``K``, at most ``K``) are the trained ones,
    rewarded with ``pseudo_rewards(answers[:, :K_s], y)``.  Returns
    ``zero_contracts.VoteMetrics``:

    * ``label_accuracy``: share of questions whose voted label is the truth (TTRL's
      ``label_accuracy``, the hit rate);
    * ``reward_accuracy``: share of the trained answers whose pseudo reward equals
      their true reward (TTRL's ``reward_accuracy``; with ``trained < K`` its
      ``post_reward_accuracy`` on the trained samples);
    * ``majority_ratio``: mean share of the ``K`` votes the winning label got;
    * ``maj_at_k``: share of questions whose majority over the ``K_s`` trained answers
      is the truth (maj@K_s).

    The TTRL recipe: sample ``K_v`` answers per question, vote on all of them
    (:func:`consensus`), train on ``K_s <= K_v`` of them with ``pseudo_rewards``, and log
    these four numbers; a falling reward accuracy (TTRL issue #29) or a majority ratio
    near 1 with a low label accuracy (lucky or wrong consensus, #35) is the sign that the
    pseudo labels stopped teaching.

    >>> import torch, zero_torch
    >>> answers = torch.tensor([[1, 1, 2, 1], [0, 2, 2, 0]])
    >>> m = zero_torch.vote_metrics(answers, torch.tensor([1, 2]), 3, trained=2)
    >>> [round(float(x), 4) for x in m]
    [0.5, 0.5, 0.625, 0.5]
    """
    a, t = _c.arrays("vote_metrics", answers, truth)
    h = _c.hypers("vote_metrics", num_answers=num_answers, trained=trained, method=method)
    b, k = a.shape
    k_s = k if h["trained"] is None else h["trained"]
    _c.trained_at_most_answers(k_s, k)
    _c.data_checks("vote_metrics", answers=a, num_answers=h["num_answers"])
    ids, id_max = _c.as_int64(a), _c.id_max(a)
    labels, top = vote(ids, h["num_answers"], h["method"], id_max)
    sub = ids[:, :k_s]
    sub_labels, _ = vote(sub, h["num_answers"], h["method"], id_max)
    true_answer = _c.ids_equal(a[:, :k_s], t[:, None])
    pseudo = sub == labels[:, None]

    def share(hits: torch.Tensor, total: int) -> torch.Tensor:
        count = hits.sum(dtype=torch.int64).to(torch.float64)
        return count / torch.tensor(float(total), dtype=torch.float64, device=a.device)

    return VoteMetrics(
        label_accuracy=share(_c.ids_equal(_typed(labels, a), t), b),
        reward_accuracy=share(pseudo == true_answer, b * k_s),
        majority_ratio=share(top, b * k),
        maj_at_k=share(_c.ids_equal(_typed(sub_labels, a), t), b),
    )
