"""zero-rewards inside verl (PyTorch): majority-vote group rewards and frozen-label scores.

Rewards are computed by :mod:`zero_torch` (with :mod:`zero_text` reading the answers),
through :class:`zero_stacks.solver.SolverReward`, the same object :mod:`zero_stacks.trl`
uses; nothing here writes a reward formula.

* :func:`compute_score` / :func:`compute_score_batch`: verl's ``compute_score``
  signatures for **frozen labels** (R-Zero's labels voted earlier, or a dataset's
  answers): ``1[answer == ground_truth]``, optionally MM-Zero's format term (``alpha``)
  and R-Zero's band (``band=True`` reads the vote share from ``extra_info``).  One
  response at a time, so verl's own managers call them (``naive`` in both registries,
  the legacy ``batch`` with :func:`compute_score_batch`); pass the options as
  ``custom_reward_function.reward_kwargs``.
* :class:`VoteRewardManager` (verl's reward loop, the registry 0.9's trainer uses) and
  :class:`VoteBatchRewardManager` (the legacy ``verl.workers.reward_manager`` registry,
  whole batches): **online votes**, R-Zero / TTRL.  A response's reward depends on the
  other responses to its prompt, which verl marks with one ``uid`` per prompt
  (``non_tensor_batch["uid"]``); the managers group by it.  Both are registered under
  the name ``"zero_vote"`` in their registry when first touched; both take
  :class:`SolverReward`'s options (``unparseable``, ``equivalence``, ``timeout``,
  ``processes``, ``band``, ``low``, ``high``, ``alpha``, ``format``).

:func:`vote_rewards` is the stack-neutral part of both managers (texts and uids in,
rewards out).  Importing this module does not import verl; the two manager classes
import it when first accessed (``zero_stacks.verl.VoteRewardManager``), which is what
verl's ``source=importlib`` loading with ``module.path=pkg://zero_stacks.verl`` does.
See docs/verl.md for configurations and what verl's reward loop cannot do.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

from zero_stacks import solver
from zero_stacks._answers import Equivalence, FormatCheck
from zero_stacks.trl import BACKEND

__all__ = [
    "REGISTRY_NAME",
    "SolverReward",
    "VoteBatchRewardManager",
    "VoteRewardManager",
    "compute_score",
    "compute_score_batch",
    "solver_options",
    "vote_rewards",
]

#: The name both managers are registered under (``reward.reward_manager.name``).
REGISTRY_NAME = "zero_vote"

#: The :class:`SolverReward` options a vote manager takes (frozen labels are
#: :func:`compute_score`'s job: the managers vote online).
VOTE_OPTIONS = (
    "unparseable",
    "equivalence",
    "timeout",
    "processes",
    "band",
    "low",
    "high",
    "alpha",
    "format",
)


class SolverReward(solver.SolverReward):
    """:class:`zero_stacks.solver.SolverReward` (R-Zero / MM-Zero solver) with zero_torch."""

    backend = BACKEND


def solver_options(options: Mapping[str, Any], where: str) -> SolverReward:
    """The online-vote :class:`SolverReward` of a manager's options; a ``TypeError``
    naming ``where`` (the config key) for an option it does not take."""
    unknown = sorted(set(options) - set(VOTE_OPTIONS))
    if unknown:
        raise TypeError(
            f"{where}: unknown option(s) {unknown}; a vote manager takes {list(VOTE_OPTIONS)} "
            "(frozen labels: use zero_stacks.verl.compute_score)"
        )
    return SolverReward(**dict(options))


def vote_rewards(reward: SolverReward, texts: Sequence[str], uids: Sequence[Any]) -> list[float]:
    """Each text's online-vote reward, its group being the texts that share its uid.

    Groups need not be contiguous nor of one size (verl reorders a batch to balance
    tokens; validation may sample another ``n``): the groups of each size go to
    ``reward`` in one call.  Each group votes with its texts sorted (ties of the vote
    go to the answer seen first, as in R-Zero's ``Counter.most_common``, and "first"
    must not depend on where verl put a response: ``balance_batch`` reorders the
    batch, and the reward loop receives a group's responses in no defined order), so
    a group's rewards depend only on its texts."""
    if len(texts) != len(uids):
        raise ValueError(f"got {len(texts)} texts but {len(uids)} uids")
    groups: dict[Any, list[int]] = {}
    for i, uid in enumerate(uids):
        groups.setdefault(uid, []).append(i)
    by_size: dict[int, list[list[int]]] = {}
    for members in groups.values():
        members.sort(key=lambda i: texts[i])
        by_size.setdefault(len(members), []).append(members)
    out = [0.0] * len(texts)
    for size, rows in by_size.items():
        order = [i for row in rows for i in row]
        prompts = [uids[i] for i in order]
        scores = reward(prompts, [texts[i] for i in order], num_generations=size)
        for i, score in zip(order, scores, strict=True):
            out[i] = score
    return out


# ------------------------------------------------------------ frozen labels


@functools.lru_cache(maxsize=64)
def _frozen_reward(
    unparseable: Any,
    equivalence: Equivalence,
    timeout: float,
    alpha: float | None,
    format: FormatCheck,
    band: bool,
    low: float,
    high: float,
) -> SolverReward:
    return SolverReward(
        labels_column="label",
        consistency_column="consistency" if band else None,
        unparseable=unparseable,
        equivalence=equivalence,
        timeout=timeout,
        band=band,
        low=low,
        high=high,
        alpha=alpha,
        format=format,
    )


def _consistency(extra: object, key: str, row: int) -> Any:
    if not isinstance(extra, Mapping) or key not in extra:
        raise ValueError(
            f"band=True reads the vote share the label was frozen with from "
            f"extra_info[{key!r}], missing for response {row}"
        )
    return extra[key]


def compute_score_batch(
    data_sources: Sequence[Any],
    solution_strs: Sequence[str],
    ground_truths: Sequence[Any],
    extra_infos: Sequence[Any] | None = None,
    *,
    unparseable: Any = "distinct",
    equivalence: Equivalence = "exact",
    timeout: float = 1.0,
    alpha: float | None = None,
    format: FormatCheck = "r_zero",
    band: bool = False,
    low: float = 0.25,
    high: float = 0.75,
    consistency_key: str = "consistency",
) -> list[float]:
    """Frozen-label solver rewards of a batch, in the signature of verl's ``batch``
    reward manager (``compute_score(data_sources=, solution_strs=, ground_truths=,
    extra_infos=, **reward_kwargs)``).

    Each response is its own group of one with its ``ground_truth`` as the frozen
    label (``"4"``, ``4`` or text with a ``\\boxed{}``), scored by
    :class:`SolverReward` with ``labels_column``: ``1[answer == label]`` from
    ``zero_torch.pseudo_rewards``, or with ``alpha`` the format term of
    ``zero_torch.solver_rewards_frozen``; ``band=True`` zeroes a response whose
    ``extra_info[consistency_key]`` (the vote share its label was frozen with) lies
    outside ``[low, high]`` (``zero_torch.curriculum_mask``).  An empty or
    unparseable label is a ``ValueError``.  ``data_sources`` is not read.
    """
    n = len(solution_strs)
    if len(ground_truths) != n:
        raise ValueError(f"got {n} solution_strs but {len(ground_truths)} ground_truths")
    reward = _frozen_reward(unparseable, equivalence, timeout, alpha, format, band, low, high)
    columns: dict[str, Any] = {"label": list(ground_truths)}
    if band:
        extras = list(extra_infos) if extra_infos is not None else [None] * n
        columns["consistency"] = [
            _consistency(e, consistency_key, i) for i, e in enumerate(extras)
        ]
    prompts = [str(i) for i in range(n)]
    return reward(prompts, list(solution_strs), 1, **columns)


def compute_score(
    data_source: Any,
    solution_str: str,
    ground_truth: Any,
    extra_info: Any = None,
    *,
    unparseable: Any = "distinct",
    equivalence: Equivalence = "exact",
    timeout: float = 1.0,
    alpha: float | None = None,
    format: FormatCheck = "r_zero",
    band: bool = False,
    low: float = 0.25,
    high: float = 0.75,
    consistency_key: str = "consistency",
    reward_router_address: Any = None,
    reward_model_tokenizer: Any = None,
) -> float:
    """Frozen-label solver reward of one response, in verl's ``compute_score``
    signature (``naive`` / ``dapo`` managers of both registries): :func:`compute_score_batch`
    of one response.  ``reward_router_address`` / ``reward_model_tokenizer`` (verl
    passes them when a reward model runs) are not read."""
    del reward_router_address, reward_model_tokenizer
    return compute_score_batch(
        [data_source],
        [solution_str],
        [ground_truth],
        [extra_info],
        unparseable=unparseable,
        equivalence=equivalence,
        timeout=timeout,
        alpha=alpha,
        format=format,
        band=band,
        low=low,
        high=high,
        consistency_key=consistency_key,
    )[0]


# ------------------------------------------------------------ the managers (import verl)


def __getattr__(name: str) -> Any:
    if name in ("VoteRewardManager", "VoteBatchRewardManager"):
        from zero_stacks.verl import managers

        return getattr(managers, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

