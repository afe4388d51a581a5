"""The MM-Zero coder reward as a stack reward (stack-neutral part)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from zero_stacks._batch import Batch
from zero_stacks._checks import check_callable
from zero_stacks.base import StackReward, Steps, run_steps

__all__ = ["CoderFeedback", "CoderReward", "Execute"]


class CoderFeedback(NamedTuple):
    """What an MM-Zero coder's program earned, as :func:`coder_rewards` reads it.

    ``executed``: the program ran and rendered; ``easy_accuracy``: share of easy
    questions the solver answered correctly on the rendering (ignored when not
    executed, where it may be None); ``consistency``: the solver's majority share on
    the hard question (ignored when not executed, where it may be None);
    ``syntax_error``: the program did not parse.
    """

    executed: bool
    easy_accuracy: float | None
    consistency: float | None
    syntax_error: bool


def _score(value: float | None, executed: bool) -> float:
    """A visual score as a float; None (no score) only where it is not read."""
    if value is None and not executed:
        return float("nan")
    return float(value)  # type: ignore[arg-type]  # None when executed: a TypeError


#: ``execute(codes)``: one :class:`CoderFeedback` (or mapping / 4-tuple) per program.
Execute = Callable[[list[str]], Sequence[Any]]


def _feedback(item: object, i: int) -> CoderFeedback:
    if isinstance(item, Mapping):
        try:
            return CoderFeedback(**{f: item[f] for f in CoderFeedback._fields})
        except KeyError as exc:
            raise ValueError(f"execute()[{i}] lacks the field {exc.args[0]!r}") from None
    if isinstance(item, tuple) and len(item) == 4:
        return CoderFeedback(*item)
    raise TypeError(
        f"execute()[{i}] must be a CoderFeedback, a 4-tuple or a mapping, got {type(item).__name__}"
    )


class CoderReward(StackReward):
    """MM-Zero coder reward: programs that render figures the solver can use.

    ``execute(codes)`` runs each completion (a program that renders a figure) and
    returns one :class:`CoderFeedback` (or a mapping / 4-tuple with its fields)
    per completion.  The reward is :func:`coder_rewards` of those fields:
    ``1 + easy + min(c, 1 - c)`` when executed, ``-0.1`` otherwise, and ``-0.05``
    more for a syntax error.  ``execute`` may be ``async``: in TRL the reward is then
    an async reward function.  Each completion is scored alone (the reward takes any
    number of completions; ``num_generations`` is only checked against the stack's).
    """

    __name__ = "zero_coder"
    grouped = False

    execute: Execute

    def __init__(self, execute: Execute, num_generations: int | None = None) -> None:
        super().__init__(num_generations)
        self._set(execute=check_callable(execute, "execute", "(codes) -> feedback"))

    def compute(self, batch: Batch) -> np.ndarray:
        return np.asarray(run_steps(self.compute_steps(batch, slice(0, len(batch.texts)))))

    def compute_steps(self, batch: Batch, part: slice) -> Steps:
        texts = list(batch.texts[part])
        items = yield self.execute, (texts,)
        if isinstance(items, (str, bytes)) or not isinstance(items, Sequence):
            raise TypeError(f"execute must return a list, got {type(items).__name__}")
        if len(items) != len(texts):
            raise ValueError(f"execute returned {len(items)} results for {len(texts)} completions")
        fb = [_feedback(item, i) for i, item in enumerate(items)]
        return np.asarray(
            self.run(
                "coder_rewards",
                np.array([bool(f.executed) for f in fb]),
                np.array([_score(f.easy_accuracy, f.executed) for f in fb], dtype=np.float64),
                np.array([_score(f.consistency, f.executed) for f in fb], dtype=np.float64),
                np.array([bool(f.syntax_error) for f in fb]),
            )
        )
