"""The G-Zero proposer reward as a stack reward (stack-neutral part)."""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

import numpy as np

import zero_text
from zero_stacks._answers import cluster_keys
from zero_stacks._batch import Batch
from zero_stacks._checks import check_callable, check_threshold
from zero_stacks.base import StackReward, Steps, run_steps

__all__ = ["LogProbs", "ProposerReward"]

#: ``logprobs(questions, hints) -> (base_logp, hinted_logp, mask)``, float / float /
#: bool ``[m, T]``: the solver's answer-token log-probs without and with the hint.
LogProbs = Callable[[list[str], list[str]], tuple[Any, Any, Any]]


class ProposerReward(StackReward):
    """G-Zero proposer reward: hints that move the solver, short and not repeated.

    Completions carry ``<question>...</question>`` and ``<hint>...</hint>``
    (:func:`zero_text.g_zero_proposer_format_ok`).  For the well-formed ones,
    ``logprobs(questions, hints)`` returns ``(base_logp, hinted_logp, mask)``,
    float / float / bool ``[m, T]`` (NumPy arrays, or arrays of the stack's
    library): the per-token log-probs of the solver's answer tokens without and
    with the hint, which :func:`hint_delta` averages.

    The reward is :func:`proposer_rewards` of that delta, the hint length, the
    question's BLEU-cluster share over the call (:func:`zero_text.bleu_clusters`,
    ``threshold`` 0.5) and the format flag:
    ``delta - 0.03 max(L - 200, 0) / 100 - share``, and ``-1 - share`` for a
    malformed proposal, which is clustered alone (published G-Zero's fixed
    ``"__INVALID__"`` key), so its share is ``1 / N`` and it never raises a
    well-formed question's.  ``L`` is the hint's length in characters, ``len(hint)``
    of the stripped hint, as in published G-Zero; ``hint_length`` (a callable
    ``hint -> int``) replaces the count, e.g. with a tokenizer's, but the target
    200 and the slope stay the library's.

    ``logprobs`` may be ``async``: in TRL the reward is then an async reward
    function.  Where the stack passes ``log_metric`` (TRL), the reward logs
    ``zero_proposer/format_rate``.
    """

    __name__ = "zero_proposer"

    logprobs: LogProbs
    hint_length: Callable[[str], int]
    threshold: float

    def __init__(
        self,
        logprobs: LogProbs,
        num_generations: int | None = None,
        *,
        hint_length: Callable[[str], int] = len,
        threshold: float = 0.5,
    ) -> None:
        super().__init__(num_generations)
        check_callable(logprobs, "logprobs", "(questions, hints) -> arrays")
        check_callable(hint_length, "hint_length", "(hint) -> int")
        self._set(logprobs=logprobs, hint_length=hint_length, threshold=check_threshold(threshold))

    def compute(self, batch: Batch) -> np.ndarray:
        return np.asarray(run_steps(self.compute_steps(batch, slice(0, len(batch.texts)))))

    def compute_steps(self, batch: Batch, part: slice) -> Steps:
        """The rewards of ``batch.texts[part]``: BLEU shares over the whole batch,
        ``logprobs`` asked about the well-formed proposals of ``part`` only."""
        texts = list(batch.texts)
        valid = zero_text.g_zero_proposer_format_ok(texts)
        questions = cluster_keys(texts, valid)
        hints = [zero_text.extract_tag(t, "hint") or "" for t in texts]
        _, shares = zero_text.bleu_clusters(questions, threshold=self.threshold)
        delta = np.zeros(len(texts), dtype=np.float64)
        lengths = np.zeros(len(texts), dtype=np.int64)
        mine = np.zeros(len(texts), dtype=bool)
        mine[part] = True
        asked = np.flatnonzero(valid & mine)
        if asked.size:
            out = yield self.logprobs, ([questions[i] for i in asked], [hints[i] for i in asked])
            if not (isinstance(out, tuple) and len(out) == 3):
                raise TypeError("logprobs must return a tuple (base_logp, hinted_logp, mask)")
            base, hinted, mask = (self.numpy(a) for a in out)
            if base.ndim != 2 or base.shape[0] != asked.size:
                raise ValueError(
                    f"logprobs must return [{asked.size}, T] arrays (one row per well-formed "
                    f"proposal), got base_logp of shape {list(base.shape)}"
                )
            delta[asked] = self.run("hint_delta", base, hinted, mask)
            for i in asked:
                length = self.hint_length(hints[i])
                if isinstance(length, bool) or not isinstance(length, numbers.Integral):
                    raise TypeError(f"hint_length must return an int, got {length!r}")
                lengths[i] = int(length)
        rewards = self.run("proposer_rewards", delta, lengths, shares, valid)
        log = batch.columns.get("log_metric")
        if callable(log):
            for flag in valid[part]:
                log("zero_proposer/format_rate", float(flag))
        return np.asarray(rewards)[part]
