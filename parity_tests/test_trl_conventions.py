"""TRL 1.16's reward conventions inside ``GRPOTrainer`` steps (one process): a reward
returning ``None`` (``SolverReward(unscored=None)``), diagnostics through
``log_metric``, and async callables (an async solver, ``logprobs`` or ``execute``
makes an async reward, which TRL awaits in its event loop next to its other async
rewards)."""

from __future__ import annotations

import asyncio
import math
import tempfile
import warnings
from typing import Any

import numpy as np
import pytest
import torch

pytest.importorskip("trl", reason="needs the [trl] extra (CI installs it)")

from datasets import Dataset  # noqa: E402
from tokenizers import Tokenizer, decoders, models, pre_tokenizers  # noqa: E402
from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast  # noqa: E402
from transformers.utils import logging as hf_logging  # noqa: E402
from trl import GRPOConfig, GRPOTrainer  # noqa: E402
from trl.trainer.utils import is_async_callable  # noqa: E402

import zero_text  # noqa: E402
from zero_stacks import trl as zt  # noqa: E402

BOXES = [f"\\boxed{{{d}}}" for d in range(1, 5)]
WORDS = ["<pad>", "<s>", "</s>", *BOXES, "1", "2", "3", "4", "what", "is", "+", "?"]
G = 4
ASYNC_REWARDS = 3  # challenger, proposer, coder: each waits until all three have started


def tokenizer() -> PreTrainedTokenizerFast:
    tok = Tokenizer(models.WordLevel(vocab={w: i for i, w in enumerate(WORDS)}, unk_token="<pad>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.decoder = decoders.WordPiece(prefix="##", cleanup=False)
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="<pad>", bos_token="<s>", eos_token="</s>"
    )


class Rendezvous:
    """The async callables meet here: each waits (bounded) until all have started, which
    only happens when TRL runs them concurrently; records the loop they ran in."""

    def __init__(self) -> None:
        self.barrier: asyncio.Barrier | None = None
        self.loops: list[asyncio.AbstractEventLoop] = []

    async def meet(self) -> None:
        if self.barrier is None:  # made in the loop that awaits it (TRL's)
            self.barrier = asyncio.Barrier(ASYNC_REWARDS)
        self.loops.append(asyncio.get_running_loop())
        await asyncio.wait_for(self.barrier.wait(), timeout=30)


MEET = Rendezvous()


async def solver(questions: list[str], k: int) -> list[list[str]]:
    await MEET.meet()
    return [["\\boxed{1}"] * (k - 1) + ["\\boxed{2}"] for _ in questions]


async def logprobs(questions: list[str], hints: list[str]) -> tuple[Any, Any, Any]:
    await MEET.meet()
    m = len(questions)
    return np.full((m, 2), -2.0), np.full((m, 2), -1.0), np.ones((m, 2), dtype=bool)


async def execute(codes: list[str]) -> list[zt.CoderFeedback]:
    await MEET.meet()
    return [zt.CoderFeedback(True, 0.5, 0.25, False) for _ in codes]


def wrap(name: str, reward: Any, form: Any) -> Any:
    """An async reward function showing ``reward`` the policy's text in the form it reads."""

    async def fn(prompts: list[str], completions: list[str], **kwargs: Any) -> Any:
        return await reward(prompts=prompts, completions=[form(c) for c in completions], **kwargs)

    fn.__name__ = name
    return fn


def test_none_log_metric_and_async_callables_inside_grpo_trainer():
    hf_logging.set_verbosity_error()
    torch.manual_seed(0)
    tok = tokenizer()
    model = GPT2LMHeadModel(
        GPT2Config(vocab_size=len(WORDS), n_positions=32, n_embd=16, n_layer=1, n_head=2,
                   bos_token_id=1, eos_token_id=2, pad_token_id=0)
    )  # fmt: skip
    model.generation_config.pad_token_id = 0

    solver_reward = zt.SolverReward(G, unscored=None, truth_column="answer")
    seen: dict[str, Any] = {}

    def solver_fn(prompts: list[str], completions: list[str], **kwargs: Any) -> Any:
        # the first group's replies carry no box: the reward does not score that group
        texts = ["no answer"] * G + list(completions[G:])
        seen["texts"] = texts
        return solver_reward(prompts=prompts, completions=texts, **kwargs)

    solver_fn.__name__ = "solver"
    challenger = zt.ChallengerReward(solver, G, num_samples=3)
    proposer = zt.ProposerReward(logprobs, G)
    coder = zt.CoderReward(execute, G)
    assert isinstance(challenger, zt.AsyncChallengerReward)
    assert isinstance(proposer, zt.AsyncProposerReward)
    assert isinstance(coder, zt.AsyncCoderReward)
    assert all(is_async_callable(r) for r in (challenger, proposer, coder))
    assert not is_async_callable(zt.ChallengerReward(lambda q, k: [], G))
    funcs = [
        solver_fn,
        wrap("challenger", challenger, lambda c: f"<question>{c}</question> \\boxed{{1}}"),
        wrap("proposer", proposer, lambda c: f"<question>{c}</question><hint>h</hint>"),
        coder,  # TRL sees the reward object itself and awaits it
    ]
    captured: dict[str, Any] = {}

    class Trainer(GRPOTrainer):
        def _calculate_rewards(self, *args: Any) -> torch.Tensor:
            captured["per_func"] = out = super()._calculate_rewards(*args)
            return out

        def _generate_and_score_completions(self, inputs: Any) -> Any:
            out = super()._generate_and_score_completions(inputs)
            captured["advantages"] = out["advantages"].detach().clone()
            return out

    prompts = [f"what is {a} + {b} ?" for a, b in [(1, 1), (1, 2), (2, 2), (1, 3)]]
    data = Dataset.from_dict({"prompt": prompts, "answer": ["2", "3", "4", "4"]})
    with tempfile.TemporaryDirectory() as out_dir, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        args = GRPOConfig(
            output_dir=out_dir, max_steps=1, per_device_train_batch_size=2 * G,
            num_generations=G, max_completion_length=4, beta=0.0, logging_steps=1,
            save_strategy="no", report_to="none", use_cpu=True, seed=0, disable_tqdm=True,
        )  # fmt: skip
        trainer = Trainer(
            model=model, reward_funcs=funcs, args=args, train_dataset=data,
            processing_class=tok,
        )  # fmt: skip
        trainer.train()

    # None: the unscored group reaches TRL as NaN (its "not scored") and nothing else does
    per_func = captured["per_func"]
    assert torch.isnan(per_func[:G, 0]).all() and not torch.isnan(per_func[G:]).any()
    assert not torch.isnan(per_func[:, 1:]).any()
    # TRL's advantages leave the None out of the baseline, as trainer_advantages does
    want = zt.trainer_advantages(per_func, G, scale_rewards="group")
    torch.testing.assert_close(captured["advantages"], want, atol=1e-5, rtol=0)
    log = trainer.state.log_history[0]
    assert math.isclose(log["rewards/solver/mean"], float(per_func[G:, 0].mean()), abs_tol=1e-6)

    # log_metric: the rewards' own diagnostics, averaged by TRL over the step
    texts = seen["texts"]
    parse_rate = np.mean([zero_text.extract_boxed(t) not in (None, "") for t in texts])
    assert math.isclose(log["zero_solver/parse_rate"], parse_rate, abs_tol=1e-6)
    for name in ("vote_share", "label_accuracy", "reward_accuracy", "majority_ratio", "maj@4"):
        assert 0.0 <= log[f"zero_solver/{name}"] <= 1.0, name
    assert log["zero_challenger/format_rate"] == 1.0 and log["zero_proposer/format_rate"] == 1.0
    assert math.isclose(log["zero_challenger/solver_share"], 2 / 3, abs_tol=1e-6)

    # async: the three callables ran concurrently, in TRL's event loop
    assert len(MEET.loops) == ASYNC_REWARDS and set(MEET.loops) == {trainer.async_loop}
