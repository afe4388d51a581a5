"""DAPO's soft overlong punishment as a stack reward (stack-neutral part)."""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from zero_stacks._batch import Batch
from zero_stacks._checks import check_callable
from zero_stacks.base import StackReward

__all__ = ["CountTokens", "OverlongPenalty"]

#: ``count_tokens(text) -> int``: the length of one completion in tokens.
CountTokens = Callable[[str], int]


def _ids_lengths(ids: object, n: int) -> np.ndarray:
    """int64 ``[n]`` lengths of the stack's ``completion_ids`` (one id list each)."""
    if isinstance(ids, (str, bytes)) or not hasattr(ids, "__len__"):
        raise TypeError(
            f"completion_ids must be a list of {n} token-id lists, got {type(ids).__name__}"
        )
    rows: Sequence[Any] = ids  # type: ignore[assignment]
    if len(rows) != n:
        raise ValueError(f"completion_ids has {len(rows)} entries but completions has {n}")
    lengths = np.zeros(n, dtype=np.int64)
    for i, row in enumerate(rows):
        if isinstance(row, (str, bytes)) or not hasattr(row, "__len__"):
            raise TypeError(
                f"completion_ids[{i}] must be a list of token ids, got {type(row).__name__}"
            )
        lengths[i] = len(row)
    return lengths


class OverlongPenalty(StackReward):
    """DAPO's soft overlong punishment of completions that run into the length limit.

    The reward is :func:`overlong_penalty` of each completion's length ``L`` in
    tokens (DAPO Eq. 13): 0 up to ``max_length - cache``, then falling linearly to
    -1 at ``max_length``, and -1 beyond; ``cache = 0`` is a hard -1 beyond
    ``max_length``.  Add it to the task reward as one more reward function (TRL:
    ``reward_funcs=[task, OverlongPenalty(...)]``; DAPO adds it to the rule-based
    reward).  ``max_length`` and ``cache`` are checked by the library when the
    reward is built (real numbers >= 0, ``cache <= max_length``).

    The length is ``count_tokens(text)`` when you give ``count_tokens``, else the
    length of the stack's ``completion_ids`` entry (TRL passes the generated token
    ids to every reward function, so its lengths are exact; this then equals
    ``trl.rewards.get_soft_overlong_punishment(max_length, cache)``).  Tunix passes
    only the texts: give ``count_tokens`` there (a tokenizer's count of the decoded
    text, which may differ from the generated count by a token where the text
    tokenizes differently).

    Each completion is scored alone: ``num_generations`` is not needed.
    """

    __name__ = "zero_overlong"
    grouped = False

    max_length: float
    cache: float
    count_tokens: CountTokens | None

    def __init__(
        self,
        max_length: float,
        cache: float,
        *,
        count_tokens: CountTokens | None = None,
    ) -> None:
        super().__init__(None)
        if count_tokens is not None:
            check_callable(count_tokens, "count_tokens", "(text) -> int")
        self.run("overlong_penalty", np.zeros(1, dtype=np.int64), max_length, cache)  # checks
        self._set(max_length=max_length, cache=cache, count_tokens=count_tokens)

    def lengths(self, batch: Batch) -> np.ndarray:
        """int64 ``[n]`` completion lengths in tokens."""
        if self.count_tokens is None:
            if "completion_ids" not in batch.columns:
                raise ValueError(
                    "completion_ids was not passed to the reward (TRL passes it; Tunix "
                    "passes only texts): give count_tokens, e.g. a tokenizer's count"
                )
            return _ids_lengths(batch.columns["completion_ids"], len(batch.texts))
        lengths = np.zeros(len(batch.texts), dtype=np.int64)
        for i, text in enumerate(batch.texts):
            length = self.count_tokens(text)
            if isinstance(length, bool) or not isinstance(length, numbers.Integral):
                raise TypeError(f"count_tokens must return an int, got {length!r}")
            if length < 0:
                raise ValueError(f"count_tokens must return an int >= 0, got {length!r}")
            lengths[i] = int(length)
        return lengths

    def compute(self, batch: Batch) -> np.ndarray:
        return np.asarray(
            self.run("overlong_penalty", self.lengths(batch), self.max_length, self.cache)
        )
