"""The base class of every stack reward: options, batch checks and the call.

A stack reward is a small callable object, as TRL's own rewards (``trl/rewards/``)
are: ``reward(prompts, completions, **kwargs) -> list[float]``, with a class-level
``__name__`` (TRL and Tunix log a reward under it), options fixed and checked at
construction, and nothing else in its state, so that it pickles (multiprocessing,
TRL's rollout workers), deep-copies and prints (``repr`` shows the options, for
config logs).  A reward that holds a callable you gave it (a solver, a log-prob
function, a format check) pickles when that callable does (a module-level function
or another such object; not a lambda).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Generator, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from zero_stacks._backend import Backend, floats
from zero_stacks._batch import Batch, resolve_num_generations
from zero_stacks._checks import check_count

__all__ = ["Batch", "StackReward", "Steps", "is_async", "run_steps", "run_steps_async"]

#: A reward's work as a generator: it yields ``(callable, args)`` where it needs a
#: callable of yours (a solver, ``logprobs``, ``execute``) and is sent its result, so
#: that one body serves a plain callable (:func:`run_steps`) and an ``async`` one
#: (:func:`run_steps_async`, awaited in the stack's event loop).
Steps = Generator[tuple[Callable[..., Any], tuple[Any, ...]], Any, Any]


def is_async(fn: object) -> bool:
    """Whether calling ``fn`` returns a coroutine (an ``async def`` function, or an
    object whose ``__call__`` is one), as TRL's ``is_async_callable`` reads it."""
    return inspect.iscoroutinefunction(fn) or (
        callable(fn) and inspect.iscoroutinefunction(fn.__call__)
    )


async def _awaited(value: Any) -> Any:
    return await value


def run_steps(steps: Steps) -> Any:
    """Run ``steps`` calling each requested callable; an awaitable it returns (an
    ``async`` callable given to a stack that calls rewards synchronously, as Tunix
    does) is run to completion with :func:`asyncio.run`."""
    try:
        fn, args = next(steps)
        while True:
            out = fn(*args)
            if inspect.isawaitable(out):
                out = asyncio.run(_awaited(out))
            fn, args = steps.send(out)
    except StopIteration as stop:
        return stop.value


async def run_steps_async(steps: Steps) -> Any:
    """Run ``steps`` in the running event loop, awaiting what the callables return."""
    try:
        fn, args = next(steps)
        while True:
            out = fn(*args)
            if inspect.isawaitable(out):
                out = await out
            fn, args = steps.send(out)
    except StopIteration as stop:
        return stop.value


class StackReward:
    """Base class: checks a batch, computes its rewards with one core library.

    ``reward(prompts, completions, num_generations=None, **kwargs)``:

    * ``completions``: ``B * G`` completions, ``str`` or chat message lists (the
      last message's ``content`` is scored), the ``G = num_generations``
      completions of each prompt contiguous;
    * ``prompts``: one per completion, constant inside each group;
    * ``num_generations``: the group size; Tunix passes its ``GRPOConfig`` value,
      TRL passes nothing, so give it at construction there (when both are given
      they must agree);
    * ``kwargs``: the dataset columns and other entries the stack forwards (a
      column holds one value per completion, constant inside each group); only the
      columns a reward names are read, the rest is ignored.

    Returns ``B * G`` Python floats, every one computed by the backend library
    (:mod:`zero_torch` in :mod:`zero_stacks.trl`, :mod:`zero_jax` in
    :mod:`zero_stacks.tunix`).  Layout errors are ``ValueError`` / ``TypeError``
    naming the argument.

    Subclasses set ``__name__``, take their options in ``__init__`` (through
    :meth:`_set`) and implement :meth:`compute`; a stack module binds ``backend``.
    """

    __name__: ClassVar[str] = "zero_reward"
    #: The core library; set by the stack subclasses (zero_stacks.trl / .tunix).
    backend: ClassVar[Backend | None] = None
    #: Whether the reward reads whole groups (votes, shares): then ``num_generations``
    #: must be known.  A reward of each completion alone (``OverlongPenalty``) sets
    #: False and takes groups of one when nobody gives a size.
    grouped: ClassVar[bool] = True

    num_generations: int | None

    def __init__(self, num_generations: int | None = None) -> None:
        if type(self).backend is None:
            raise TypeError(
                f"{type(self).__name__} is stack-neutral: use zero_stacks.trl."
                f"{type(self).__name__} (zero_torch) or zero_stacks.tunix."
                f"{type(self).__name__} (zero_jax)"
            )
        self._set(
            num_generations=None
            if num_generations is None
            else check_count(num_generations, "num_generations")
        )

    # ------------------------------------------------------------ the call

    def __call__(
        self,
        prompts: Sequence[Any],
        completions: Sequence[Any],
        num_generations: int | None = None,
        **kwargs: Any,
    ) -> list[float | None]:
        return run_steps(self.steps(prompts, completions, num_generations, kwargs))  # type: ignore[no-any-return]

    def steps(
        self,
        prompts: Sequence[Any],
        completions: Sequence[Any],
        num_generations: int | None,
        columns: Mapping[str, Any],
    ) -> Steps:
        """One call as :data:`Steps`: check the batch, compute, return the list."""
        batch = self.batch(prompts, completions, num_generations, columns)
        values = yield from self.compute_steps(batch, slice(0, len(batch.texts)))
        return self.finish(values)

    def compute_steps(self, batch: Batch, part: slice) -> Steps:
        """The rewards of the completions ``batch.texts[part]`` (float ``[len]``), as
        :data:`Steps`; the batch is the call's, or, on several processes, the global
        batch the processes' calls make together, of which ``part`` is this
        process's.  Default: :meth:`compute` of the whole batch, sliced."""
        return np.asarray(self.compute(batch)).reshape(-1)[part]
        yield  # pragma: no cover  (a generator with no request)

    def finish(self, values: Any) -> list[float | None]:
        """The list the stack receives from :meth:`compute_steps`' result."""
        return floats(values)  # type: ignore[return-value]

    def batch(
        self,
        prompts: Sequence[Any],
        completions: Sequence[Any],
        num_generations: int | None,
        columns: Mapping[str, Any],
    ) -> Batch:
        """The checked :class:`Batch` of one call (group size resolved)."""
        size = resolve_num_generations(
            self.num_generations, num_generations, None if self.grouped else 1
        )
        return Batch.check(prompts, completions, size if self.grouped else 1, columns)

    def compute(self, batch: Batch) -> np.ndarray:
        """float ``[B, G]`` (or ``[B * G]``) rewards of a checked batch."""
        raise NotImplementedError

    def run(self, fn: str, *args: Any, **kwargs: Any) -> Any:
        """Call ``fn`` of the backend library on NumPy arguments; NumPy back."""
        return type(self).backend.run(fn, *args, **kwargs)  # type: ignore[union-attr]

    def numpy(self, value: Any) -> np.ndarray:
        """A NumPy copy of an array you returned (NumPy, or the backend's type)."""
        return type(self).backend.to_numpy(value)  # type: ignore[union-attr]

    # ------------------------------------------------------------ options

    def _set(self, **options: Any) -> None:
        for name, value in options.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(
            f"{type(self).__name__} options are fixed when it is built (they are checked "
            f"then); build a new reward instead of setting {name!r}"
        )

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} options cannot be deleted")

    @property
    def options(self) -> Mapping[str, Any]:
        """The options the reward was built with, by name."""
        return dict(vars(self))

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={_show(v)}" for k, v in vars(self).items())
        return f"{type(self).__module__}.{type(self).__qualname__}({shown})"


def _show(value: object) -> str:
    if callable(value) and not isinstance(value, type) and hasattr(value, "__qualname__"):
        return f"{getattr(value, '__module__', '?')}.{value.__qualname__}"
    return repr(value)
