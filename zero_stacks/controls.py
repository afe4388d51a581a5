"""EMPO and the spurious-reward controls as stack rewards.

Four rewards in the stacks' signature ``reward(prompts, completions, **kwargs) ->
list[float]`` (see :class:`zero_stacks.base.StackReward`), each computed by the
library's public functions from the completions' ``\\boxed{}`` answers
(:func:`zero_text.group_answers`):

* :class:`EmpoReward`: EMPO's semantic-cluster reward (``semantic_cluster_rewards``,
  the answers grouped by ``equivalence``, ``"math"`` for math-verify as EMPO does),
  times its entropy filter (``semantic_entropy_filter``);
* :class:`RandomReward`: a 0/1 coin per completion (``random_rewards``) at a fixed
  rate or at the mean of another reward on the same batch (``matched_to``);
* :class:`FormatReward`: 1 for a completion with a parsed answer
  (``format_rewards``);
* :class:`WrongLabelReward`: agreement with the most voted wrong answer of the
  group, the truth read from a dataset column (``wrong_label_rewards``).

Each exists stack-neutral (the classes above, which cannot be called) and bound to a
library: ``TrlEmpoReward`` ... compute with :mod:`zero_torch` (for TRL's
``GRPOTrainer``; give ``num_generations`` at construction, TRL does not pass it),
``TunixEmpoReward`` ... with :mod:`zero_jax` (for Tunix).  The library is imported
when a bound reward is first called, so importing this module imports neither torch
nor JAX.  The rewards hold only their options, so they pickle and print.
"""

from __future__ import annotations

import importlib
import numbers
import zlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from zero_stacks._answers import Equivalence, frozen_answers, online_answers, parsed
from zero_stacks._backend import Backend, floats
from zero_stacks._batch import Batch
from zero_stacks._checks import check_answer_options, check_bool, check_unit
from zero_stacks.base import StackReward

__all__ = [
    "EmpoReward",
    "FormatReward",
    "RandomReward",
    "TrlEmpoReward",
    "TrlFormatReward",
    "TrlRandomReward",
    "TrlWrongLabelReward",
    "TunixEmpoReward",
    "TunixFormatReward",
    "TunixRandomReward",
    "TunixWrongLabelReward",
    "WrongLabelReward",
]


class _Library:
    """A stack module's ``BACKEND``, imported when a reward first asks for it."""

    def __init__(self, module: str) -> None:
        self.module = module

    def __get__(self, obj: object, owner: type | None = None) -> Backend:
        backend: Backend = importlib.import_module(self.module).BACKEND
        return backend


def _bound(reward: StackReward) -> None:
    """The neutral classes cannot compute: name the bound ones."""
    if type(reward).backend is None:
        name = type(reward).__name__
        raise TypeError(
            f"{name} is stack-neutral: use zero_stacks.controls.Trl{name} (zero_torch) or "
            f"zero_stacks.controls.Tunix{name} (zero_jax)"
        )


class EmpoReward(StackReward):
    """EMPO's reward: the share of the group in the completion's semantic cluster.

    Each completion's ``\\boxed{}`` answer is grouped with the others of its prompt
    by :func:`zero_text.group_answers` (``equivalence``: ``"exact"`` after
    normalisation, or ``"math"``, math-verify, as EMPO's math reward does;
    ``unparseable``, ``timeout``, ``processes`` as there).  A completion earns
    ``semantic_cluster_rewards`` (its cluster's share of the ``num_generations``
    completions; 0 without a parsed answer, which counts in the group, as in EMPO's
    code), and every completion of a prompt earns 0 when ``filter`` is on and
    ``semantic_entropy_filter(ids, max_entropy)`` drops the prompt (default: only a
    prompt whose answers all differ, EMPO's ``H < log K``).
    """

    __name__ = "zero_empo"

    unparseable: Any
    equivalence: Equivalence
    timeout: float
    processes: int
    filter: bool
    max_entropy: float

    def __init__(
        self,
        num_generations: int | None = None,
        *,
        unparseable: Any = "distinct",
        equivalence: Equivalence = "exact",
        timeout: float = 1.0,
        processes: int = 1,
        filter: bool = True,
        max_entropy: float = 1.0,
    ) -> None:
        _bound(self)
        super().__init__(num_generations)
        check_answer_options(unparseable, equivalence, timeout, processes)
        self._set(
            unparseable=unparseable,
            equivalence=equivalence,
            timeout=timeout,
            processes=processes,
            filter=check_bool(filter, "filter"),
            max_entropy=check_unit(max_entropy, "max_entropy"),
        )

    def compute(self, batch: Batch) -> np.ndarray:
        groups = batch.groups()
        answers = online_answers(
            groups, self.unparseable, self.equivalence, timeout=self.timeout,
            processes=self.processes,
        )
        answered = parsed(batch.texts, self.unparseable).reshape(answers.ids.shape)
        rewards = np.asarray(self.run("semantic_cluster_rewards", answers.ids, answered))
        if self.filter:
            keep = np.asarray(self.run("semantic_entropy_filter", answers.ids, self.max_entropy))
            rewards = np.where(keep[:, None], rewards, np.zeros_like(rewards))
        return rewards


class RandomReward(StackReward):
    """A 0/1 coin per completion (the spurious-rewards "random" control).

    The coin comes up 1 with probability ``rate``, or, with ``matched_to`` (another
    reward function with values in [0, 1]), with that reward's mean on the same call,
    the matched-rate coin a label-free method is compared with.  ``formatted=True``
    gives a coin only to completions with a parsed answer (the "formatted random"
    variant EMPO's code has).  The coins are ``random_rewards`` seeded by ``seed``
    and the call's completion texts: the same batch gets the same coins, another
    batch others, with no state kept between calls.
    """

    __name__ = "zero_random"
    grouped = False

    rate: float
    seed: int
    matched_to: Any
    formatted: bool
    unparseable: Any

    def __init__(
        self,
        num_generations: int | None = None,
        *,
        rate: float = 0.5,
        seed: int = 0,
        matched_to: Any = None,
        formatted: bool = False,
        unparseable: Any = "distinct",
    ) -> None:
        _bound(self)
        super().__init__(num_generations)
        if matched_to is not None and not callable(matched_to):
            raise TypeError(f"matched_to must be a reward function, got {type(matched_to)}")
        check_answer_options(unparseable, "exact", 1.0, 1)
        self._set(
            rate=check_unit(rate, "rate"),
            seed=_seed(seed),
            matched_to=matched_to,
            formatted=check_bool(formatted, "formatted"),
            unparseable=unparseable,
        )

    def __call__(
        self,
        prompts: Sequence[Any],
        completions: Sequence[Any],
        num_generations: int | None = None,
        **kwargs: Any,
    ) -> list[float]:
        batch = self.batch(prompts, completions, num_generations, kwargs)
        rate = self.rate
        if self.matched_to is not None:
            other = np.asarray(self.matched_to(prompts, completions, **_passed(
                num_generations, kwargs)), np.float64).reshape(1, -1)
            every = np.repeat(np.asarray([[True]]), other.shape[1], axis=1)
            mean = self.run("masked_mean", other, every)  # the library's mean
            rate = check_unit(float(np.asarray(mean).reshape(-1)[0]),
                              "the mean of matched_to's rewards")
        return floats(self._coins(batch, rate))

    def compute(self, batch: Batch) -> np.ndarray:
        return self._coins(batch, self.rate)

    def _coins(self, batch: Batch, rate: float) -> np.ndarray:
        # the seed of the coins: a CRC of the reward's seed and the call's texts
        text = "\0".join([str(self.seed), *batch.texts])
        seed = np.asarray(zlib.crc32(text.encode("utf-8", "surrogatepass")), dtype="uint32")
        mask = np.repeat(np.asarray([True]), len(batch.texts))
        if self.formatted:
            mask = parsed(batch.texts, self.unparseable)
        return np.asarray(self.run("random_rewards", seed, mask, rate))


def _seed(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        raise TypeError(f"seed must be an int >= 0, got {value!r}")
    return int(value)


def _passed(num_generations: int | None, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    return dict(kwargs) if num_generations is None else {**kwargs,
                                                        "num_generations": num_generations}


class FormatReward(StackReward):
    """1 for a completion with a parsed ``\\boxed{}`` answer, else 0 (the format-only
    control): ``format_rewards`` of what ``unparseable``'s policy counts as parsed."""

    __name__ = "zero_format"
    grouped = False

    unparseable: Any

    def __init__(self, num_generations: int | None = None, *, unparseable: Any = "distinct"):
        _bound(self)
        super().__init__(num_generations)
        check_answer_options(unparseable, "exact", 1.0, 1)
        self._set(unparseable=unparseable)

    def compute(self, batch: Batch) -> np.ndarray:
        return np.asarray(self.run("format_rewards", parsed(batch.texts, self.unparseable)))


class WrongLabelReward(StackReward):
    """Agreement with the most voted wrong answer of the prompt's group (the
    "incorrect label" control): ``wrong_label_rewards`` with the truth read from
    ``truth_column`` (``"4"``, ``4`` or text with a ``\\boxed{}``) and compared with
    the answers by ``equivalence``.  A completion without a parsed answer earns 0 and
    is never the label (it is given the truth's id)."""

    __name__ = "zero_wrong_label"

    truth_column: str
    unparseable: Any
    equivalence: Equivalence
    timeout: float
    processes: int

    def __init__(
        self,
        num_generations: int | None = None,
        *,
        truth_column: str = "answer",
        unparseable: Any = "distinct",
        equivalence: Equivalence = "exact",
        timeout: float = 1.0,
        processes: int = 1,
    ) -> None:
        _bound(self)
        super().__init__(num_generations)
        if not isinstance(truth_column, str) or not truth_column:
            raise TypeError(f"truth_column must be a column name, got {truth_column!r}")
        check_answer_options(unparseable, equivalence, timeout, processes)
        self._set(truth_column=truth_column, unparseable=unparseable, equivalence=equivalence,
                  timeout=timeout, processes=processes)

    def compute(self, batch: Batch) -> np.ndarray:
        answers = frozen_answers(
            batch.groups(), batch.column(self.truth_column), self.truth_column,
            self.unparseable, self.equivalence, timeout=self.timeout, processes=self.processes,
        )
        truth = np.asarray(answers.labels)  # frozen_answers always reads them
        answered = parsed(batch.texts, self.unparseable).reshape(answers.ids.shape)
        ids = np.where(answered, answers.ids, truth[:, None])
        return np.asarray(self.run("wrong_label_rewards", ids, truth))


_TRL, _TUNIX = _Library("zero_stacks.trl"), _Library("zero_stacks.tunix")


class TrlEmpoReward(EmpoReward):
    """:class:`EmpoReward` computed with zero_torch (TRL)."""

    backend = _TRL  # type: ignore[assignment]


class TrlRandomReward(RandomReward):
    """:class:`RandomReward` computed with zero_torch (TRL)."""

    backend = _TRL  # type: ignore[assignment]


class TrlFormatReward(FormatReward):
    """:class:`FormatReward` computed with zero_torch (TRL)."""

    backend = _TRL  # type: ignore[assignment]


class TrlWrongLabelReward(WrongLabelReward):
    """:class:`WrongLabelReward` computed with zero_torch (TRL)."""

    backend = _TRL  # type: ignore[assignment]


class TunixEmpoReward(EmpoReward):
    """:class:`EmpoReward` computed with zero_jax (Tunix)."""

    backend = _TUNIX  # type: ignore[assignment]


class TunixRandomReward(RandomReward):
    """:class:`RandomReward` computed with zero_jax (Tunix)."""

    backend = _TUNIX  # type: ignore[assignment]


class TunixFormatReward(FormatReward):
    """:class:`FormatReward` computed with zero_jax (Tunix)."""

    backend = _TUNIX  # type: ignore[assignment]


class TunixWrongLabelReward(WrongLabelReward):
    """:class:`WrongLabelReward` computed with zero_jax (Tunix)."""

    backend = _TUNIX  # type: ignore[assignment]
