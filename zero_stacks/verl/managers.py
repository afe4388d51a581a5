"""verl reward managers paying online majority-vote rewards (imports verl).

Both managers read each response's text as verl's own managers do (the valid response
tokens, decoded with ``skip_special_tokens=True``), group responses by
``non_tensor_batch["uid"]`` and pay :func:`zero_stacks.verl.vote_rewards`, which calls
:class:`zero_stacks.verl.SolverReward` (zero_text + zero_torch) once per group size.

* :class:`VoteBatchRewardManager`, legacy registry (``verl.workers.reward_manager``):
  called on the whole batch, so every group is there.
* :class:`VoteRewardManager`, reward-loop registry
  (``verl.experimental.reward_loop.reward_manager``, the one verl 0.9's trainer
  uses): verl calls ``run_single`` on one response at a time, on a reward worker
  picked at random per response, while the other responses of the prompt are still
  being generated.  A response's ``run_single`` waits until the ``n`` responses of
  its ``uid`` have reached the same manager, then the group votes once and every
  waiting call returns its own reward.  The group meets only if all its responses
  reach one worker: the manager requires ``reward.num_workers=1`` (one reward worker
  process, an async Ray actor that runs all calls concurrently).  A group that is
  not complete within ``group_timeout`` seconds of a call raises ``TimeoutError`` in
  every waiting call (the default, an hour, must exceed a rollout step: a group's
  first response waits for its last one to be generated).

In both, a group votes with its texts sorted (:func:`zero_stacks.verl.vote_rewards`):
its rewards depend on its texts only, not on where verl put them.
"""

from __future__ import annotations

import asyncio
import math
from typing import Any

import torch
from omegaconf import OmegaConf
from verl import DataProto
from verl.experimental.reward_loop.reward_manager import register
from verl.experimental.reward_loop.reward_manager.base import RewardManagerBase
from verl.workers.reward_manager import register as register_legacy
from verl.workers.reward_manager.abstract import AbstractRewardManager

from zero_stacks.verl import REGISTRY_NAME, SolverReward, solver_options, vote_rewards

__all__ = ["IN_FLIGHT", "VoteBatchRewardManager", "VoteRewardManager"]

try:  # the concurrency of a Ray async actor, which verl does not set for its reward workers
    from ray._common.ray_constants import DEFAULT_MAX_CONCURRENCY_ASYNC as IN_FLIGHT
except ImportError:  # pragma: no cover - older Ray: the same documented default
    IN_FLIGHT = 1000


def _uids(data: DataProto) -> list[Any]:
    uids = data.non_tensor_batch.get("uid")
    if uids is None:
        raise ValueError(
            "non_tensor_batch has no 'uid': a vote groups the responses of one prompt by "
            "the uid verl's trainer gives each prompt before repeating it n times"
        )
    return list(uids)


def _config_get(config: Any, path: str, default: Any) -> Any:
    """``config``'s value at the dotted ``path`` (an OmegaConf config, as verl's), or
    ``default`` when a key on the way is missing or null."""
    value = OmegaConf.select(config, path, default=None)
    return default if value is None else value


@register_legacy(REGISTRY_NAME)
class VoteBatchRewardManager(AbstractRewardManager):
    """Online-vote rewards of a whole batch, legacy registry (``AbstractRewardManager``).

    ``VoteBatchRewardManager(tokenizer, num_examine, compute_score=None,
    reward_fn_key="data_source", **options)``, as verl's ``load_reward_manager``
    builds a legacy manager (``options``: ``reward_model.reward_kwargs``, those of
    :class:`SolverReward` except the frozen-label columns).  Called on a batch
    ``DataProto`` (``prompts``, ``responses``, ``attention_mask``, ``uid``), returns
    the float32 ``[B, response_length]`` reward tensor holding each reward at the
    last valid response token (``return_dict=True``: with ``reward_extra_info``
    ``{"score": [...]}``).  ``compute_score`` and ``num_examine`` are accepted and not
    used (the vote is the score; nothing is printed).
    """

    def __init__(
        self,
        tokenizer: Any,
        num_examine: int = 0,
        compute_score: Any = None,
        reward_fn_key: str = "data_source",
        **options: Any,
    ) -> None:
        self.tokenizer = tokenizer
        self.num_examine = num_examine
        self.reward_fn_key = reward_fn_key
        self.reward: SolverReward = solver_options(options, "reward_model.reward_kwargs")

    def __call__(self, data: DataProto, return_dict: bool = False) -> Any:
        from_rm = self._extract_reward_from_rm_scores(data, return_dict)
        if from_rm is not None:
            return from_rm
        prompt_length = data.batch["prompts"].shape[-1]
        lengths = data.batch["attention_mask"][:, prompt_length:].count_nonzero(dim=-1)
        responses = data.batch["responses"]
        texts = [
            self.tokenizer.decode(responses[i][: int(lengths[i])], skip_special_tokens=True)
            for i in range(len(data))
        ]
        scores = vote_rewards(self.reward, texts, _uids(data))
        reward_tensor = torch.zeros_like(responses, dtype=torch.float32)
        rows = torch.arange(len(data), device=responses.device)
        reward_tensor[rows, lengths - 1] = torch.tensor(
            scores, dtype=torch.float32, device=responses.device
        )
        if return_dict:
            return {"reward_tensor": reward_tensor, "reward_extra_info": {"score": scores}}
        return reward_tensor


class _Group:
    """The responses of one uid that have arrived, each with its caller's future."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.futures: list[asyncio.Future[float]] = []

    def fail(self, exc: BaseException) -> None:
        for future in self.futures:
            if not future.done():
                future.set_exception(exc)


@register(REGISTRY_NAME)
class VoteRewardManager(RewardManagerBase):
    """Online-vote rewards in verl's reward loop (``RewardManagerBase``), one response
    per ``run_single`` call; see the module docstring for how a group meets.

    Built by verl's ``load_reward_manager`` (``config``, ``tokenizer``,
    ``compute_score``, ...).  Reads from ``config``:

    * ``reward.reward_kwargs``: :class:`SolverReward`'s options (except the
      frozen-label columns), plus ``group_timeout`` (seconds, default 3600);
    * ``actor_rollout_ref.rollout.n``: the group size;
    * ``reward.num_workers``: must be 1 (``ValueError`` otherwise: verl sends each
      response to a random worker, so a group would be split between processes);
    * validation (``trainer.val_before_train``, ``trainer.test_freq > 0``) must sample
      as many responses per prompt (``rollout.val_kwargs.n == rollout.n``): verl does
      not tell a reward whether a response is from training or validation, so the
      group size must be one number (``ValueError`` otherwise);
    * ``data.train_batch_size`` (or ``gen_batch_size``) and, when validation runs,
      ``data.val_batch_size``: times ``n``, at most :data:`IN_FLIGHT` (1000), the calls
      a Ray async actor runs at once.  A waiting call holds one of them, so a larger
      batch could fill them all with calls whose groups' other responses are queued
      behind: a deadlock (``ValueError`` at construction instead).

    ``run_single`` returns ``{"reward_score": r, "reward_extra_info": {"score": r}}``.
    """

    def __init__(
        self,
        config: Any,
        tokenizer: Any,
        compute_score: Any = None,
        reward_router_address: Any = None,
        reward_model_tokenizer: Any = None,
    ) -> None:
        super().__init__(config, tokenizer, compute_score)
        options = dict(_config_get(config, "reward.reward_kwargs", None) or {})
        timeout = options.pop("group_timeout", 3600)
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
            raise TypeError(f"reward.reward_kwargs.group_timeout must be seconds, got {timeout!r}")
        if not (math.isfinite(timeout) and timeout > 0):
            raise ValueError(f"reward.reward_kwargs.group_timeout must be > 0, got {timeout!r}")
        self.reward: SolverReward = solver_options(options, "reward.reward_kwargs")
        self.group_timeout = float(timeout)
        self.group_size = self._group_size(config)
        self._pending: dict[Any, _Group] = {}

    @staticmethod
    def _group_size(config: Any) -> int:
        workers = _config_get(config, "reward.num_workers", None)
        if workers != 1:
            raise ValueError(
                f"{REGISTRY_NAME} needs reward.num_workers=1 (got {workers}): verl's reward "
                "loop sends each response to a reward worker picked at random, and a vote "
                "needs all n responses of a prompt in one worker"
            )
        n = _config_get(config, "actor_rollout_ref.rollout.n", None)
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ValueError(f"actor_rollout_ref.rollout.n must be an int >= 1, got {n!r}")
        val_n = _config_get(config, "actor_rollout_ref.rollout.val_kwargs.n", n)
        validates = bool(_config_get(config, "trainer.val_before_train", True)) or (
            _config_get(config, "trainer.test_freq", -1) > 0
        )
        if validates and val_n != n:
            raise ValueError(
                f"validation samples actor_rollout_ref.rollout.val_kwargs.n={val_n} responses "
                f"per prompt but training n={n}: verl's reward loop does not tell a reward "
                "which phase a response is from, so a vote's group size must be one number; "
                f"set val_kwargs.n={n}, or trainer.val_before_train=False and "
                "trainer.test_freq=-1"
            )
        batches = {
            "data.gen_batch_size or data.train_batch_size": _config_get(
                config, "data.gen_batch_size", _config_get(config, "data.train_batch_size", None)
            )
        }
        if validates:
            batches["data.val_batch_size"] = _config_get(config, "data.val_batch_size", None)
        for name, prompts in batches.items():
            if not isinstance(prompts, int) or prompts * n > IN_FLIGHT:
                raise ValueError(
                    f"{name}={prompts} prompts x n={n} responses can be waiting at once in "
                    f"the one reward worker, a Ray async actor that runs at most {IN_FLIGHT} "
                    "calls at a time (Ray's default, which verl keeps): a call waiting for "
                    "its group holds one, so more could leave every running call waiting "
                    f"for a response queued behind them; keep {name} * n <= {IN_FLIGHT} "
                    "(data.val_batch_size must be set when validation runs: unset, it is "
                    "the whole validation set)"
                )
        return n

    async def run_single(self, data: DataProto) -> dict[str, Any]:
        data = data[-1:]  # as verl's managers: a multi-turn trajectory is scored by its last output
        item = data[0]
        response_ids = item.batch["responses"]
        length = int(item.batch["attention_mask"][-response_ids.shape[-1] :].count_nonzero())
        valid = response_ids[:length]
        loop = asyncio.get_running_loop()
        text = await loop.run_in_executor(
            None, lambda: self.tokenizer.decode(valid, skip_special_tokens=True)
        )
        uid = _uids(data)[0]
        score = await self._vote(uid, text)
        return {"reward_score": score, "reward_extra_info": {"score": score}}

    async def _vote(self, uid: Any, text: str) -> float:
        """Wait for the group of ``uid``; the call completing it votes for all."""
        loop = asyncio.get_running_loop()
        group = self._pending.setdefault(uid, _Group())
        future: asyncio.Future[float] = loop.create_future()
        group.texts.append(text)
        group.futures.append(future)
        if len(group.texts) == self.group_size:
            del self._pending[uid]
            try:
                scores = await loop.run_in_executor(
                    None, vote_rewards, self.reward, group.texts, [uid] * self.group_size
                )
            except Exception as exc:  # every member of the group gets the error
                group.fail(exc)
            else:
                for waiting, score in zip(group.futures, scores, strict=True):
                    waiting.set_result(score)
        try:
            return await asyncio.wait_for(asyncio.shield(future), self.group_timeout)
        except TimeoutError:
            exc = TimeoutError(
                f"the group of uid {str(uid)!r} has {len(group.texts)} of {self.group_size} "
                f"responses after {self.group_timeout} s: the others never reached this "
                "reward manager (reward.num_workers must be 1; rollout.n and val_kwargs.n "
                "must be the group size; samples dropped before the reward split a group)"
            )
            if self._pending.get(uid) is group:
                del self._pending[uid]
            future.cancel()  # this call raises; the others of the group raise now too
            group.fail(exc)
            raise exc from None
