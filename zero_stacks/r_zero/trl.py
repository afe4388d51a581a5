"""The R-Zero loop's TRL backend: a Hugging Face causal LM trained by ``GRPOTrainer``.

``TrlRole(model, tokenizer, max_tokens=...)`` is one role (Challenger or Solver) of
:mod:`zero_stacks.r_zero.loop`: sampling with ``model.generate`` and GRPO with TRL's
``GRPOTrainer`` on one reward function of :mod:`zero_stacks.trl` (``zero_torch``).  The
model stays on its device (move it to a GPU first to train there); TRL runs on the CPU
only when CUDA is absent.
"""

from __future__ import annotations

import copy
import tempfile
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from zero_stacks import trl as rewards

__all__ = ["TrlRole"]


class TrlRole:
    """One role as a TRL policy.

    ``model``: a ``transformers`` causal LM; ``tokenizer``: its tokenizer (its pad and eos
    tokens are used); ``max_tokens``: completion length; ``prompt``: how the loop's plain
    prompt (``"new deduction"``, a question) is written for this model (an instruction, a
    chat template; default: as it is); ``grpo_options``: more ``GRPOConfig`` fields.
    Prompts of different token lengths are left-padded, which shifts the positions of a
    model with learned absolute positions (GPT-2): give such a model prompts of one length
    (the cart domain does)."""

    rewards = rewards

    def __init__(self, model: Any, tokenizer: Any, *, max_tokens: int,
                 prompt: Callable[[str], str] | None = None,
                 grpo_options: Mapping[str, Any] | None = None) -> None:  # fmt: skip
        self.model, self.tokenizer, self.max_tokens = model, tokenizer, max_tokens
        self.prompt = prompt
        self.tokenizer.padding_side = "left"
        self.grpo_options = dict(grpo_options or {})

    def copy(self) -> TrlRole:
        return TrlRole(copy.deepcopy(self.model), self.tokenizer, max_tokens=self.max_tokens,
                       prompt=self.prompt, grpo_options=self.grpo_options)  # fmt: skip

    def _texts(self, prompts: Sequence[str]) -> list[str]:
        return [self.prompt(p) if self.prompt else p for p in prompts]

    def sample(self, prompts: Sequence[str], n: int, temperature: float | None,
               seed: int, chunk: int = 1024) -> list[list[str]]:  # fmt: skip
        """``n`` completions per prompt (greedy when ``temperature`` is None), decoded
        without special tokens (the completion stops at eos)."""
        import torch

        torch.manual_seed(seed)
        was_training = self.model.training
        self.model.eval()
        texts: list[str] = []
        per = max(1, chunk // n)
        with torch.no_grad():
            for i in range(0, len(prompts), per):
                enc = self.tokenizer(self._texts(prompts[i : i + per]), return_tensors="pt",
                                     padding=True).to(self.model.device)  # fmt: skip
                options: dict[str, Any] = {"do_sample": False}
                if temperature is not None:
                    options = {"do_sample": True, "temperature": temperature, "top_k": 0,
                               "top_p": 1.0}  # fmt: skip
                out = self.model.generate(
                    **enc, max_new_tokens=self.max_tokens, num_return_sequences=n,
                    pad_token_id=self.tokenizer.pad_token_id,
                    eos_token_id=self.tokenizer.eos_token_id, **options)  # fmt: skip
                texts += self.tokenizer.batch_decode(out[:, enc["input_ids"].shape[1]:],
                                                     skip_special_tokens=True)  # fmt: skip
        self.model.train(was_training)
        texts = [t.strip() for t in texts]
        return [texts[j : j + n] for j in range(0, len(texts), n)]

    def train(self, prompts: Sequence[str], columns: Mapping[str, Sequence[Any]],
              reward: Callable[..., list[float]], *, prompts_per_step: int, generations: int,
              lr: float, temperature: float, seed: int) -> None:  # fmt: skip
        """GRPO over ``prompts`` in order, ``prompts_per_step`` prompts a step."""
        import torch
        from datasets import Dataset
        from transformers.trainer_callback import PrinterCallback
        from transformers.utils import logging as hf_logging
        from trl import GRPOConfig, GRPOTrainer

        hf_logging.set_verbosity_error()
        steps = len(prompts) // prompts_per_step
        data = Dataset.from_dict({"prompt": self._texts(prompts), **{k: list(v) for k, v in
                                                              columns.items()}})  # fmt: skip
        cuda = torch.cuda.is_available()
        with tempfile.TemporaryDirectory() as out_dir, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            args = GRPOConfig(**{
                "output_dir": out_dir,
                "max_steps": steps,
                "per_device_train_batch_size": prompts_per_step * generations,
                "num_generations": generations,
                "max_completion_length": self.max_tokens,
                "learning_rate": lr,
                "lr_scheduler_type": "constant",
                "beta": 0.0,
                "temperature": temperature,
                "disable_dropout": True,
                "scale_rewards": "group",
                "logging_steps": 10**9,
                "save_strategy": "no",
                "report_to": "none",
                "use_cpu": not cuda,
                "bf16": cuda and torch.cuda.is_bf16_supported(),
                "seed": seed,
                "disable_tqdm": True,
                "shuffle_dataset": False,
                **self.grpo_options,
            })  # fmt: skip
            trainer = GRPOTrainer(model=self.model, reward_funcs=[reward], args=args,
                                  train_dataset=data, processing_class=self.tokenizer)  # fmt: skip
            trainer.remove_callback(PrinterCallback)
            trainer.train()
        self.model.eval()
