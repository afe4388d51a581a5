"""The batch a stack hands a reward function, checked once.

Layout (Tunix and TRL alike): ``completions`` holds ``B * G`` items, the
``G = num_generations`` completions of prompt ``b`` at positions ``b*G .. b*G+G-1``,
and ``prompts`` (and every dataset column passed as a keyword) is repeated to the
same length.  A completion is a ``str`` or, as TRL passes conversational data, a
list of chat messages (``{"role": ..., "content": ...}``) whose last ``content`` is
the text that is scored.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from zero_stacks._checks import check_count

__all__ = ["Batch", "completion_text", "resolve_num_generations"]


def completion_text(completion: object, index: int) -> str:
    """The text of one completion: a ``str``, or the last message of a chat list."""
    if isinstance(completion, str):
        return str(completion)  # a NumPy string too
    if isinstance(completion, Sequence) and completion and isinstance(completion[-1], Mapping):
        content = completion[-1].get("content")
        if isinstance(content, str):
            return content
    raise TypeError(
        f"completions[{index}] must be a str or a list of chat messages whose last "
        f"'content' is a str, got {type(completion).__name__}"
    )


def resolve_num_generations(bound: int | None, passed: object, default: int | None = None) -> int:
    """The group size of one call: the reward's own, the stack's (Tunix passes its
    ``GRPOConfig.num_generations``), or both when they agree; ``default`` (a reward
    that scores each completion alone) when neither is known."""
    if passed is None:
        if bound is None and default is not None:
            return default
        if bound is None:
            raise ValueError(
                "num_generations is not known: give it to the reward "
                "(e.g. SolverReward(num_generations=8)); TRL does not pass it"
            )
        return bound
    passed = check_count(passed, "num_generations")
    if bound is not None and passed != bound:
        raise ValueError(
            f"num_generations={passed} passed by the stack differs from "
            f"num_generations={bound} given to the reward"
        )
    return passed


def _sequence(value: object, name: str) -> Sequence[Any]:
    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray)):
        raise TypeError(f"{name} must be a list, got {type(value).__name__}")
    return value  # type: ignore[return-value]


def _same(a: object, b: object) -> bool:
    out = a == b
    if isinstance(out, np.ndarray):  # NumPy elements compare elementwise
        return bool(out.all())
    return bool(out)


def _groups(values: Sequence[Any], size: int) -> list[list[Any]]:
    return [list(values[start : start + size]) for start in range(0, len(values), size)]


def _constant_groups(values: Sequence[Any], size: int, what: str) -> list[Any]:
    """The first value of each group; ``ValueError`` when a group holds another."""
    firsts = []
    for start, group in zip(range(0, len(values), size), _groups(values, size), strict=True):
        for value in group:
            if not _same(value, group[0]):
                raise ValueError(
                    f"{what} varies inside the group of num_generations={size} completions "
                    f"starting at {start} ({group[0]!r} vs {value!r}): one value per prompt "
                    f"expected, and each prompt's completions in one contiguous group"
                )
        firsts.append(group[0])
    return firsts


@dataclasses.dataclass(frozen=True)
class Batch:
    """One checked call: completion texts, group size and the dataset columns.

    Build it with :meth:`check`.  ``texts`` are the scored strings, in the stack's
    order; ``columns`` are the keyword arguments the stack passed (TRL: every
    dataset column plus its own entries; Tunix: the batch's other fields).
    """

    texts: tuple[str, ...]
    num_generations: int
    columns: Mapping[str, Any]

    @classmethod
    def check(
        cls,
        prompts: object,
        completions: object,
        num_generations: int,
        columns: Mapping[str, Any],
    ) -> Batch:
        """Validate the layout and read the texts.

        ``TypeError`` when ``prompts`` / ``completions`` are not lists or a
        completion has no text; ``ValueError`` when there are no completions, their
        number is not a multiple of ``num_generations``, ``prompts`` has another
        length, or the prompts of one group differ (the completions are not in
        contiguous groups per prompt).
        """
        if isinstance(completions, (str, bytes)) or not isinstance(
            completions, (Sequence, np.ndarray)
        ):
            raise TypeError(
                f"completions must be a list of completions, got {type(completions).__name__}"
            )
        texts = tuple(completion_text(c, i) for i, c in enumerate(completions))
        n = len(texts)
        if n == 0:
            raise ValueError("completions is empty: need at least one group of num_generations")
        if n % num_generations:
            raise ValueError(
                f"got {n} completions, not a multiple of num_generations={num_generations}"
            )
        if isinstance(prompts, (str, bytes)) or not isinstance(prompts, (Sequence, np.ndarray)):
            raise TypeError(f"prompts must be a list of prompts, got {type(prompts).__name__}")
        if len(prompts) != n:
            raise ValueError(f"prompts has {len(prompts)} entries but completions has {n}")
        _constant_groups(
            _sequence(prompts, "prompts"), num_generations, "the prompt (not one repeated prompt)"
        )
        return cls(texts, num_generations, dict(columns))

    @property
    def num_groups(self) -> int:
        """``B``, the number of prompts."""
        return len(self.texts) // self.num_generations

    def groups(self) -> list[list[str]]:
        """The texts as ``B`` lists of ``G`` (one per prompt)."""
        return _groups(self.texts, self.num_generations)

    def column(self, name: str) -> list[Any]:
        """Dataset column ``name``, one value per prompt.

        ``ValueError`` when it was not passed, has another length than the
        completions, or varies inside a group; ``TypeError`` when it is no list.
        """
        if name not in self.columns:
            have = ", ".join(sorted(k for k in self.columns if not k.startswith("_"))) or "none"
            raise ValueError(f"column {name!r} was not passed to the reward (columns: {have})")
        values = _sequence(self.columns[name], f"column {name!r}")
        if len(values) != len(self.texts):
            raise ValueError(
                f"column {name!r} has {len(values)} entries but completions has {len(self.texts)}"
            )
        return _constant_groups(values, self.num_generations, f"column {name!r}")

    def part(self, groups: slice) -> Batch:
        """The batch of the groups ``groups`` (a slice of group indices, step 1): their
        texts, and every column of one value per completion cut the same way (other
        entries, such as TRL's ``log_metric``, are kept)."""
        size = self.num_generations
        cut = slice(groups.start * size, groups.stop * size)
        n = len(self.texts)
        columns = {
            name: value[cut]
            if isinstance(value, (Sequence, np.ndarray))
            and not isinstance(value, (str, bytes))
            and len(value) == n
            else value
            for name, value in self.columns.items()
        }
        return Batch(self.texts[cut], size, columns)
