"""The torch twin under ``torch.compile`` (inductor, dynamic shapes), the way a TRL or
verl user compiles a reward step: the same values as eager.  The voting functions are
called with torch's default int64 ids and a ``num_answers`` that changes between calls
(each batch's number of distinct answers), which makes it a symbol of the compiled
graph: the counting table's width must stay a size inductor can compile."""

from __future__ import annotations

import warnings

import pytest

torch = pytest.importorskip("torch", reason="the torch twin")
import zero_torch  # noqa: E402

ANSWERS = torch.tensor([[2, 1, 1, 2, 0], [0, 0, 2, 1, 0], [3, 3, 1, 0, 3]])  # int64, K = 5
TRUTH = torch.tensor([1, 0, 3])
FORMAT = ANSWERS >= 1


def step(answers, truth, fmt, num_answers):
    labels, share = zero_torch.consensus(answers, num_answers)
    _, top = zero_torch.majority_vote(answers, num_answers)
    solver = zero_torch.solver_rewards(answers, fmt, num_answers)
    metrics = zero_torch.vote_metrics(answers, truth, num_answers, trained=3)
    return labels, share, top, solver, *metrics


def test_voting_compiles_with_a_num_answers_that_changes():
    torch._dynamo.reset()
    compiled = torch.compile(step, dynamic=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for n in (4, 5, 7):  # below K = 5 ("auto" counts into a [B, n] table) and above
            got = compiled(ANSWERS, TRUTH, FORMAT, n)
            want = step(ANSWERS, TRUTH, FORMAT, n)
            for g, w in zip(got, want, strict=True):
                assert g.dtype == w.dtype and torch.equal(g, w), (n, g, w)
    assert want[0].tolist() == [1, 0, 3] and want[1].tolist() == [0.4, 0.6, 0.6]
