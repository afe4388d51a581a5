"""Stack-neutral reward functions in the ``reward(prompts, completions, **kwargs)`` form.

Everything here is NumPy + :mod:`zero_text`; the numbers come from a
:class:`Backend`, which :mod:`zero_stacks.tunix` fills with :mod:`zero_jax` and
:mod:`zero_stacks.trl` with :mod:`zero_torch`.  Users call the stack modules;
this module holds the one implementation they share.

Batch layout (Tunix and TRL alike): ``completions`` holds ``B * G`` items, the
``G = num_generations`` completions of prompt ``b`` at positions ``b*G .. b*G+G-1``,
and ``prompts`` (and every dataset column passed as a keyword) is repeated to the
same length.  A completion is a ``str`` or, as TRL passes conversational data, a
list of chat messages whose last ``content`` is the text.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, NamedTuple

import numpy as np

import zero_text

__all__ = [
    "Backend",
    "CoderFeedback",
    "RewardFn",
    "challenger_reward",
    "coder_reward",
    "proposer_reward",
    "solver_reward",
]

#: The reward-function type both stacks call.
RewardFn = Callable[..., list[float]]

Equivalence = Literal["exact", "math"] | Callable[[str, str], bool]
FormatCheck = Literal["r_zero", "mm_zero"] | Callable[[Sequence[str]], Any]

_FORMATS: dict[str, Callable[[Sequence[str]], np.ndarray]] = {
    "r_zero": zero_text.r_zero_solver_format_ok,
    "mm_zero": zero_text.mm_zero_solver_format_ok,
}


@dataclasses.dataclass(frozen=True)
class Backend:
    """The core library a stack module computes with.

    ``lib`` is :mod:`zero_jax` or :mod:`zero_torch`; ``to_array`` turns a NumPy
    array into the library's array type and ``to_numpy`` turns a result back.
    Only NumPy-array arguments are converted; Python scalars (``num_answers``,
    ``alpha``, ...) are passed as they are.
    """

    name: str
    lib: Any
    to_array: Callable[[np.ndarray], Any]
    to_numpy: Callable[[Any], np.ndarray]

    def run(self, fn: str, *args: Any, **kwargs: Any) -> Any:
        """Call ``lib.<fn>`` on converted arguments and return NumPy result(s)."""
        conv = [self.to_array(a) if isinstance(a, np.ndarray) else a for a in args]
        out = getattr(self.lib, fn)(*conv, **kwargs)
        if isinstance(out, tuple):
            return tuple(self.to_numpy(o) for o in out)
        return self.to_numpy(out)


class CoderFeedback(NamedTuple):
    """What an MM-Zero coder's program earned, as ``coder_rewards`` reads it.

    ``executed``: the program ran and rendered; ``easy_accuracy``: share of easy
    questions the solver answered correctly on the rendering (ignored when not
    executed); ``consistency``: the solver's majority share on the hard question
    (ignored when not executed); ``syntax_error``: the program did not parse.
    """

    executed: bool
    easy_accuracy: float
    consistency: float
    syntax_error: bool


# ---------------------------------------------------------------- batch checks


def completion_text(completion: object, index: int) -> str:
    """The text of one completion: a ``str``, or the last message of a chat list."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Sequence) and completion and isinstance(completion[-1], Mapping):
        content = completion[-1].get("content")
        if isinstance(content, str):
            return content
    raise TypeError(
        f"completions[{index}] must be a str or a list of chat messages whose last "
        f"'content' is a str, got {type(completion).__name__}"
    )


def texts_of(completions: object) -> list[str]:
    """All completion texts; ``TypeError`` unless ``completions`` is a sequence."""
    if isinstance(completions, (str, bytes)) or not isinstance(completions, Sequence):
        raise TypeError(
            f"completions must be a list of completions, got {type(completions).__name__}"
        )
    return [completion_text(c, i) for i, c in enumerate(completions)]


def check_num_generations(value: object, name: str = "num_generations") -> int:
    """A count such as a group size: an ``int >= 1`` (``TypeError`` / ``ValueError``
    naming ``name`` otherwise)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int >= 1, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{name} must be an int >= 1, got {value}")
    return int(value)


def resolve_num_generations(bound: int | None, passed: object) -> int:
    """The group size of one call: the factory's, the stack's (Tunix passes its
    ``GRPOConfig.num_generations``), or both when they agree."""
    if passed is None and bound is None:
        raise ValueError(
            "num_generations is not known: give it to the reward factory "
            "(e.g. solver_reward(num_generations=8)); TRL does not pass it"
        )
    if passed is None:
        return bound  # type: ignore[return-value]
    passed = check_num_generations(passed)
    if bound is not None and passed != bound:
        raise ValueError(
            f"num_generations={passed} passed by the stack differs from "
            f"num_generations={bound} given to the reward factory"
        )
    return passed


def check_batch(prompts: object, completions: object, num_generations: int) -> list[str]:
    """Validate the batch layout and return the completion texts.

    ``ValueError`` when the number of completions is zero or not a multiple of
    ``num_generations``, when ``prompts`` has another length, or when the prompts
    of one group differ (completions are not in contiguous groups per prompt).
    """
    texts = texts_of(completions)
    n = len(texts)
    if n == 0:
        raise ValueError("completions is empty: need at least one group of num_generations")
    if n % num_generations:
        raise ValueError(
            f"got {n} completions, not a multiple of num_generations={num_generations}"
        )
    if isinstance(prompts, (str, bytes)) or not isinstance(prompts, Sequence):
        raise TypeError(f"prompts must be a list of prompts, got {type(prompts).__name__}")
    if len(prompts) != n:
        raise ValueError(f"prompts has {len(prompts)} entries but completions has {n}")
    for start in range(0, n, num_generations):
        first = prompts[start]
        for j in range(start + 1, start + num_generations):
            if not _same(prompts[j], first):
                raise ValueError(
                    f"prompts[{start}:{start + num_generations}] are not one repeated prompt "
                    f"(prompts[{j}] differs from prompts[{start}]): completions must come in "
                    f"contiguous groups of num_generations={num_generations} per prompt"
                )
    return texts


def _same(a: object, b: object) -> bool:
    out = a == b
    if isinstance(out, np.ndarray):  # NumPy elements compare elementwise
        return bool(out.all())
    return bool(out)


def column(kwargs: Mapping[str, Any], name: str, n: int, num_generations: int) -> list[Any]:
    """Dataset column ``name`` (one value per completion), constant within each group;
    returns one value per group.  ``ValueError`` when missing, of another length, or
    varying inside a group."""
    if name not in kwargs:
        have = ", ".join(sorted(k for k in kwargs if not k.startswith("_"))) or "none"
        raise ValueError(f"column {name!r} was not passed to the reward (columns: {have})")
    values = kwargs[name]
    if isinstance(values, (str, bytes)) or not isinstance(values, (Sequence, np.ndarray)):
        raise TypeError(f"column {name!r} must be a list, got {type(values).__name__}")
    if len(values) != n:
        raise ValueError(f"column {name!r} has {len(values)} entries but completions has {n}")
    out = []
    for start in range(0, n, num_generations):
        first = values[start]
        for j in range(start + 1, start + num_generations):
            if not _same(values[j], first):
                raise ValueError(
                    f"column {name!r} varies inside the group of completions "
                    f"{start}..{start + num_generations - 1} ({values[start]!r} vs "
                    f"{values[j]!r}): one value per prompt expected"
                )
        out.append(first)
    return out


def label_text(value: object, row: int, name: str) -> str:
    """A frozen label as an answer string: ``"4"``, ``4`` or ``"... \\boxed{4}"``."""
    if isinstance(value, bool) or not isinstance(value, (str, numbers.Integral)):
        raise TypeError(
            f"column {name!r} must hold answer strings (or ints), "
            f"got {type(value).__name__} for prompt {row}"
        )
    text = str(value)
    boxed = zero_text.extract_boxed(text)
    answer = zero_text.normalize_answer(boxed if boxed is not None else text)
    if not answer:
        raise ValueError(f"column {name!r} has no usable answer for prompt {row}: {value!r}")
    return answer


def unit_floats(values: Sequence[Any], name: str) -> np.ndarray:
    """float64 ``[B]`` in [0, 1] (``TypeError`` / ``ValueError`` naming ``name``)."""
    out = np.empty(len(values), dtype=np.float64)
    for i, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise TypeError(f"{name} must hold numbers, got {type(v).__name__} at {i}")
        if not (math.isfinite(float(v)) and 0.0 <= float(v) <= 1.0):
            raise ValueError(f"{name} must lie in [0, 1], got {v!r} at {i}")
        out[i] = float(v)
    return out


def _format_flags(check: FormatCheck, texts: Sequence[str]) -> np.ndarray:
    if isinstance(check, str):
        if check not in _FORMATS:
            raise ValueError(f'format must be "r_zero", "mm_zero" or a callable, got {check!r}')
        return _FORMATS[check](texts)
    if not callable(check):
        raise TypeError(f"format must be a name or a callable, got {type(check).__name__}")
    flags = np.asarray(check(texts))
    if flags.dtype != np.bool_ or flags.shape != (len(texts),):
        raise ValueError(
            f"format callable must return bool [{len(texts)}], "
            f"got {flags.dtype} {list(flags.shape)}"
        )
    return flags


def _named(fn: Callable[..., list[float]], name: str) -> RewardFn:
    fn.__name__ = fn.__qualname__ = name  # TRL and Tunix log rewards under __name__
    return fn


def _check_unit(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number in [0, 1], got {type(value).__name__}")
    if not 0.0 <= float(value) <= 1.0:
        raise ValueError(f"{name} must lie in [0, 1], got {value!r}")
    return float(value)


def _check_options(unparseable: Any, equivalence: Any) -> None:
    """Let zero_text reject a bad ``unparseable`` / ``equivalence`` at factory time
    (with its own messages, so policies added there work here unchanged)."""
    zero_text.group_answers([["\\boxed{0}"]], unparseable=unparseable, equivalence=equivalence)


def _flat(values: np.ndarray) -> list[float]:
    return [float(v) for v in np.asarray(values, dtype=np.float64).reshape(-1)]


# ------------------------------------------------------------------ the solver


@dataclasses.dataclass(frozen=True)
class SolverArrays:
    """What the solver reward computes from: answer ids and, when frozen, labels."""

    answers: np.ndarray  # int64 [B, K]
    num_answers: int
    labels: np.ndarray | None  # int64 [B] (frozen labels) or None (vote online)
    consistency: np.ndarray | None  # float64 [B] (frozen) or None
    format_valid: np.ndarray | None  # bool [B, K] or None (no format term)


def solver_arrays(
    texts: Sequence[str],
    num_generations: int,
    kwargs: Mapping[str, Any],
    *,
    labels_column: str | None,
    consistency_column: str | None,
    unparseable: Any,
    equivalence: Equivalence,
    format: FormatCheck | None,
) -> SolverArrays:
    """Strings to the integer / bool arrays of the solver reward.

    Online (``labels_column=None``): ids of each group's answers, numbered by first
    appearance (:func:`zero_text.group_answers`).  Frozen: each group is prefixed with
    its label (as ``\\boxed{label}``) so that the label and the replies share one id
    namespace and one equivalence; the label gets id 0.
    """
    n = len(texts)
    rows = [list(texts[s : s + num_generations]) for s in range(0, n, num_generations)]
    labels = consistency = None
    if labels_column is None:
        ids, num_answers = zero_text.group_answers(
            rows, unparseable=unparseable, equivalence=equivalence
        )
    else:
        frozen = column(kwargs, labels_column, n, num_generations)
        answers = [label_text(v, b, labels_column) for b, v in enumerate(frozen)]
        ids, num_answers = zero_text.group_answers(
            [["\\boxed{" + a + "}", *row] for a, row in zip(answers, rows, strict=True)],
            unparseable=unparseable,
            equivalence=equivalence,
        )
        labels, ids = ids[:, 0].copy(), np.ascontiguousarray(ids[:, 1:])
        if consistency_column is not None:
            consistency = unit_floats(
                column(kwargs, consistency_column, n, num_generations),
                f"column {consistency_column!r}",
            )
    fmt = None
    if format is not None:
        fmt = _format_flags(format, texts).reshape(len(rows), num_generations)
    return SolverArrays(ids, num_answers, labels, consistency, fmt)


def solver_scores(
    arrays: SolverArrays,
    backend: Backend,
    *,
    band: bool,
    low: float,
    high: float,
    alpha: float | None,
) -> np.ndarray:
    """float ``[B, K]`` solver rewards from the core functions of ``backend``.

    Online labels without a format term: ``pseudo_rewards(ids, consensus(ids))``;
    with ``alpha``: ``solver_rewards(ids, format_valid, num_answers, alpha)`` (the
    MM-Zero solver reward).  Frozen labels: ``pseudo_rewards(ids, labels)``, plus
    ``(1 - alpha) * format_valid`` after scaling by ``alpha`` when given.  With
    ``band``, rows whose consistency lies outside ``[low, high]``
    (``curriculum_mask``) get all-zero rewards, hence zero advantage.
    """
    ids = arrays.answers
    if arrays.labels is None:
        labels, consistency = backend.run("consensus", ids, arrays.num_answers)
        if alpha is None:
            scores = backend.run("pseudo_rewards", ids, labels)
        else:
            scores = backend.run(
                "solver_rewards", ids, arrays.format_valid, arrays.num_answers, alpha
            )
    else:
        consistency = arrays.consistency
        scores = backend.run("pseudo_rewards", ids, arrays.labels)
        if alpha is not None:
            if arrays.format_valid is None:
                raise ValueError("alpha needs format_valid (the format flags)")
            scores = alpha * scores + (1 - alpha) * arrays.format_valid.astype(scores.dtype)
    if band:
        keep = backend.run("curriculum_mask", np.asarray(consistency), low, high)
        scores = np.where(np.asarray(keep, dtype=bool)[:, None], scores, 0.0)
    return np.asarray(scores)


def solver_reward(
    backend: Backend,
    num_generations: int | None = None,
    *,
    labels_column: str | None = None,
    consistency_column: str | None = None,
    unparseable: Any = "distinct",
    equivalence: Equivalence = "exact",
    band: bool = False,
    low: float = 0.25,
    high: float = 0.75,
    alpha: float | None = None,
    format: FormatCheck = "r_zero",
) -> RewardFn:
    """The R-Zero / MM-Zero solver reward as a stack reward function.

    Each completion's ``\\boxed{}`` answer is extracted and grouped per prompt
    (:func:`zero_text.group_answers`, options ``unparseable`` and ``equivalence``
    as there).  The reward of a completion is 1 when its answer equals the
    prompt's pseudo-label, else 0:

    * ``labels_column=None`` (default): the label is voted online, the majority of
      the prompt's own ``num_generations`` completions (``consensus``; ties to the
      answer seen first);
    * ``labels_column="answer"``: the label is read from that dataset column
      (frozen labels voted earlier, R-Zero's way); a value may be ``"4"``, ``4``
      or text with a ``\\boxed{}``; an empty / unparseable label is a
      ``ValueError``.

    ``alpha``: ``None`` (default) for the pure pseudo-label reward; a float in
    [0, 1] adds the format term, ``alpha * agree + (1 - alpha) * format_ok``
    (MM-Zero's ``solver_rewards``); ``format`` picks the check: ``"r_zero"``
    (``<think>...</think>`` then a box), ``"mm_zero"`` (think block, then only the
    box) or a callable ``texts -> bool [n]``.

    ``band=True`` keeps the informative band ``low <= p <= high``
    (``curriculum_mask``, both edges kept): prompts outside it get 0 for every
    completion, so GRPO gives them zero advantage.  ``p`` is the online vote share,
    or with frozen labels the ``consistency_column`` value (required then).

    ``num_generations`` may be left out where the stack passes it (Tunix does,
    from its ``GRPOConfig``); TRL does not, so give it there.
    """
    bound = None if num_generations is None else check_num_generations(num_generations)
    _check_options(unparseable, equivalence)
    low, high = _check_unit("low", low), _check_unit("high", high)
    if low > high:
        raise ValueError(f"need low <= high, got low={low!r} > high={high!r}")
    if alpha is not None:
        alpha = _check_unit("alpha", alpha)
        if isinstance(format, str) and format not in _FORMATS:
            raise ValueError(f'format must be "r_zero", "mm_zero" or a callable, got {format!r}')
    if band and labels_column is not None and consistency_column is None:
        raise ValueError(
            "band=True with frozen labels (labels_column) needs consistency_column, "
            "the vote share each label was frozen with"
        )

    def reward(
        prompts: Sequence[Any],
        completions: Sequence[Any],
        num_generations: int | None = None,
        **kwargs: Any,
    ) -> list[float]:
        g = resolve_num_generations(bound, num_generations)
        texts = check_batch(prompts, completions, g)
        arrays = solver_arrays(
            texts,
            g,
            kwargs,
            labels_column=labels_column,
            consistency_column=consistency_column if band else None,
            unparseable=unparseable,
            equivalence=equivalence,
            format=format if alpha is not None else None,
        )
        return _flat(solver_scores(arrays, backend, band=band, low=low, high=high, alpha=alpha))

    return _named(reward, "zero_solver")


# -------------------------------------------------------------- the challenger


def _solver_replies(solver: Callable[..., Any], questions: list[str], k: int) -> list[list[str]]:
    replies = solver(questions, k)
    if isinstance(replies, (str, bytes)) or not isinstance(replies, Sequence):
        raise TypeError(
            f"solver must return a list of {len(questions)} lists of {k} replies, "
            f"got {type(replies).__name__}"
        )
    if len(replies) != len(questions):
        raise ValueError(
            f"solver returned {len(replies)} rows of replies for {len(questions)} questions"
        )
    rows = []
    for i, row in enumerate(replies):
        if isinstance(row, (str, bytes)) or not isinstance(row, Sequence) or len(row) != k:
            raise ValueError(f"solver must return {k} replies per question; row {i} is {row!r}")
        for j, r in enumerate(row):
            if not isinstance(r, str):
                raise TypeError(f"solver reply [{i}][{j}] must be a str, got {type(r).__name__}")
        rows.append(list(row))
    return rows


def challenger_reward(
    backend: Backend,
    solver: Callable[[list[str], int], Sequence[Sequence[str]]],
    num_generations: int | None = None,
    *,
    num_samples: int = 10,
    strength: float = 1.0,
    threshold: float = 0.5,
    unparseable: Any = "distinct",
    equivalence: Equivalence = "exact",
) -> RewardFn:
    """The R-Zero challenger reward as a stack reward function.

    Completions are proposed questions (``<question>...</question>`` plus a
    ``\\boxed{}`` answer, :func:`zero_text.r_zero_challenger_format_ok`).  For every
    well-formed one, ``solver(questions, num_samples)`` must return
    ``num_samples`` reply strings per question (your current solver model,
    sampled); their majority share is the consistency ``p``.  The reward is
    ``challenger_rewards(p, clusters, valid, strength)``: ``1 - 2|p - 1/2|`` minus
    ``strength`` times the share of the batch in the question's BLEU cluster
    (:func:`zero_text.bleu_clusters` over all questions of the call, ``threshold``
    0.5 as published), floored at 0, and 0 for malformed outputs (the format
    gate; they are not sent to the solver but stay in the cluster denominator).
    """
    bound = None if num_generations is None else check_num_generations(num_generations)
    if not callable(solver):
        raise TypeError(f"solver must be a callable (questions, k) -> replies, got {solver!r}")
    num_samples = check_num_generations(num_samples, "num_samples")
    _check_options(unparseable, equivalence)
    if isinstance(strength, bool) or not isinstance(strength, numbers.Real) or strength < 0:
        raise ValueError(f"strength must be a number >= 0, got {strength!r}")

    def reward(
        prompts: Sequence[Any],
        completions: Sequence[Any],
        num_generations: int | None = None,
        **kwargs: Any,
    ) -> list[float]:
        g = resolve_num_generations(bound, num_generations)
        texts = check_batch(prompts, completions, g)
        valid = zero_text.r_zero_challenger_format_ok(texts)
        questions = [zero_text.extract_tag(t, "question") or t for t in texts]
        clusters, _ = zero_text.bleu_clusters(questions, threshold=threshold)
        consistency = np.zeros(len(texts), dtype=np.float64)
        idx = np.flatnonzero(valid)
        if idx.size:
            rows = _solver_replies(solver, [questions[i] for i in idx], num_samples)
            ids, num_answers = zero_text.group_answers(
                rows, unparseable=unparseable, equivalence=equivalence
            )
            _, p = backend.run("consensus", ids, num_answers)
            consistency[idx] = p
        scores = backend.run(
            "challenger_rewards",
            consistency,
            clusters,
            valid,
            float(strength),
            num_clusters=int(clusters.max()) + 1,
        )
        return _flat(scores)

    return _named(reward, "zero_challenger")


# ---------------------------------------------------------------- the proposer


def proposer_reward(
    backend: Backend,
    logprobs: Callable[[list[str], list[str]], tuple[Any, Any, Any]],
    num_generations: int | None = None,
    *,
    count_tokens: Callable[[str], int] | None = None,
    threshold: float = 0.5,
) -> RewardFn:
    """The G-Zero proposer reward as a stack reward function.

    Completions carry ``<question>...</question>`` and ``<hint>...</hint>``
    (:func:`zero_text.g_zero_proposer_format_ok`).  For the well-formed ones,
    ``logprobs(questions, hints)`` returns ``(base_logp, hinted_logp, mask)``,
    float / float / bool ``[m, T]``, the per-token log-probs of the solver's
    answer tokens without and with the hint (what ``hint_delta`` averages);
    ``count_tokens(hint)`` gives a hint's length in tokens (default: whitespace
    words; pass your tokenizer's count to match the paper).  The reward is
    ``proposer_rewards(hint_delta(...), lengths, share, valid)``, ``share`` being
    the question's BLEU-cluster share over the call (``threshold`` 0.5); a
    malformed proposal gets ``-1 - share``.
    """
    bound = None if num_generations is None else check_num_generations(num_generations)
    if not callable(logprobs):
        raise TypeError(
            f"logprobs must be a callable (questions, hints) -> arrays, got {logprobs!r}"
        )
    count = count_tokens if count_tokens is not None else (lambda text: len(text.split()))

    def reward(
        prompts: Sequence[Any],
        completions: Sequence[Any],
        num_generations: int | None = None,
        **kwargs: Any,
    ) -> list[float]:
        g = resolve_num_generations(bound, num_generations)
        texts = check_batch(prompts, completions, g)
        valid = zero_text.g_zero_proposer_format_ok(texts)
        questions = [zero_text.extract_tag(t, "question") or t for t in texts]
        hints = [zero_text.extract_tag(t, "hint") or "" for t in texts]
        _, shares = zero_text.bleu_clusters(questions, threshold=threshold)
        delta = np.zeros(len(texts), dtype=np.float64)
        lengths = np.zeros(len(texts), dtype=np.int64)
        idx = np.flatnonzero(valid)
        if idx.size:
            out = logprobs([questions[i] for i in idx], [hints[i] for i in idx])
            if not (isinstance(out, tuple) and len(out) == 3):
                raise TypeError("logprobs must return a tuple (base_logp, hinted_logp, mask)")
            base, hinted, mask = (np.asarray(a) for a in out)
            if base.ndim != 2 or base.shape[0] != idx.size:
                raise ValueError(
                    f"logprobs must return [{idx.size}, T] arrays (one row per well-formed "
                    f"proposal), got base_logp of shape {list(base.shape)}"
                )
            delta[idx] = backend.run("hint_delta", base, hinted, mask)
            for i in idx:
                length = count(hints[i])
                if isinstance(length, bool) or not isinstance(length, numbers.Integral):
                    raise TypeError(f"count_tokens must return an int, got {length!r}")
                lengths[i] = int(length)
        scores = backend.run("proposer_rewards", delta, lengths, shares, valid)
        return _flat(scores)

    return _named(reward, "zero_proposer")


# ------------------------------------------------------------------- the coder


def _feedback(item: object, i: int) -> CoderFeedback:
    if isinstance(item, Mapping):
        try:
            item = CoderFeedback(**{f: item[f] for f in CoderFeedback._fields})
        except KeyError as exc:
            raise ValueError(f"execute()[{i}] lacks the field {exc.args[0]!r}") from None
    elif isinstance(item, tuple) and len(item) == 4:
        item = CoderFeedback(*item)
    else:
        raise TypeError(
            f"execute()[{i}] must be a CoderFeedback, a 4-tuple or a mapping, "
            f"got {type(item).__name__}"
        )
    return item


def coder_reward(
    backend: Backend,
    execute: Callable[[list[str]], Sequence[Any]],
    num_generations: int | None = None,
) -> RewardFn:
    """The MM-Zero coder reward as a stack reward function.

    ``execute(codes)`` runs each completion (a program that renders a figure) and
    returns one :class:`CoderFeedback` (or mapping / 4-tuple with its fields)
    per completion.  The reward is ``coder_rewards(executed, easy_accuracy,
    consistency, syntax_error)``: ``1 + easy + min(c, 1 - c)`` when executed,
    ``-0.1`` otherwise, ``-0.05`` more for a syntax error.
    """
    bound = None if num_generations is None else check_num_generations(num_generations)
    if not callable(execute):
        raise TypeError(f"execute must be a callable (codes) -> feedback, got {execute!r}")

    def reward(
        prompts: Sequence[Any],
        completions: Sequence[Any],
        num_generations: int | None = None,
        **kwargs: Any,
    ) -> list[float]:
        g = resolve_num_generations(bound, num_generations)
        texts = check_batch(prompts, completions, g)
        items = execute(texts)
        if isinstance(items, (str, bytes)) or not isinstance(items, Sequence):
            raise TypeError(f"execute must return a list, got {type(items).__name__}")
        if len(items) != len(texts):
            raise ValueError(f"execute returned {len(items)} results for {len(texts)} completions")
        fb = [_feedback(item, i) for i, item in enumerate(items)]
        executed = np.array([bool(f.executed) for f in fb])
        syntax = np.array([bool(f.syntax_error) for f in fb])
        easy = np.array([float(f.easy_accuracy) for f in fb], dtype=np.float64)
        consistency = np.array([float(f.consistency) for f in fb], dtype=np.float64)
        scores = backend.run("coder_rewards", executed, easy, consistency, syntax)
        return _flat(scores)

    return _named(reward, "zero_coder")
