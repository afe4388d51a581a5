"""One of two TRL processes for ``test_trl_multiprocess.py`` (also the home of the reward
set both sides build).

``python -m parity_tests.trl_multiprocess_child RANK INIT_FILE OUT_DIR``: joins a
2-process gloo group through ``file://INIT_FILE`` (no network), builds a tiny GPT-2
from a config and a word-level tokenizer in memory (no downloads), and runs TRL's
``GRPOTrainer`` for two training steps (``per_device_train_batch_size=6``,
``num_generations=4``: the middle group of each step is split between the processes)
and one evaluation (``per_device_eval_batch_size=3``, ``num_generations_eval=6``: the
only group is split).  Each reward call is recorded to ``OUT_DIR/rank{RANK}.jsonl``:
what TRL passed, what the reward returned and what it logged through ``log_metric``.
"""

from __future__ import annotations

import json
import os
import sys
import types
import warnings
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np

BOXES = [f"\\boxed{{{d}}}" for d in range(1, 7)]
WORDS = ["<pad>", "<s>", "</s>", *BOXES, *map(str, range(1, 7)), "what", "is", "+", "?", "so"]
PROMPTS = [f"what is {a} + {b} ?" for a in range(1, 4) for b in range(1, 4)]
TRAIN_G, EVAL_G = 4, 6


def solver(questions: list[str], k: int) -> list[list[str]]:
    """A deterministic stand-in for a sampled solver: k boxed replies per question."""
    return [[f"\\boxed{{{(len(q) + j * len(q) % 3) % 3}}}" for j in range(k)] for q in questions]


def as_question(completion: str) -> str:
    """The policy's text as an R-Zero challenger output (question tags and a box)."""
    return f"<question>what is {completion} ?</question> \\boxed{{1}}"


def make_rewards(g: int) -> dict[str, Any]:
    """The rewards under test, by record name, for groups of ``g``."""
    from zero_stacks import trl as zt

    return {
        "vote_math": zt.SolverReward(g, equivalence="math", truth_column="answer"),
        "band_r_zero": zt.SolverReward(g, band=True, low=0.5, high=1.0, unparseable="r_zero"),
        "frozen_bucket_none": zt.SolverReward(
            g, labels_column="answer", unparseable="bucket", unscored=None
        ),
        "votes": zt.VoteDiagnostics(g, truth_column="answer"),
        "challenger": zt.ChallengerReward(solver, g, num_samples=3),
        "overlong": zt.OverlongPenalty(5, 2),
    }


def call(name: str, reward: Any, prompts: list, completions: list, kwargs: dict) -> Any:
    """How the recorded calls reach a reward (the challenger sees questions)."""
    if name == "challenger":
        completions = [as_question(c) for c in completions]
    return reward(prompts=prompts, completions=completions, **kwargs)


def main() -> None:
    rank, init_file, out_dir = int(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE="2", LOCAL_WORLD_SIZE="2")
    import torch
    from torch import distributed

    torch.set_num_threads(1)
    distributed.init_process_group(
        "gloo",
        init_method=f"file://{init_file}",
        rank=rank,
        world_size=2,
        timeout=timedelta(seconds=120),
    )
    world = distributed.group.WORLD

    from datasets import Dataset
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast
    from transformers.utils import logging as hf_logging
    from trl import GRPOConfig, GRPOTrainer

    hf_logging.set_verbosity_error()
    tok = Tokenizer(models.WordLevel(vocab={w: i for i, w in enumerate(WORDS)}, unk_token="<pad>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.decoder = decoders.WordPiece(prefix="##", cleanup=False)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="<pad>", bos_token="<s>", eos_token="</s>"
    )
    torch.manual_seed(0)
    config = GPT2Config(
        vocab_size=len(WORDS), n_positions=32, n_embd=16, n_layer=1, n_head=2,
        bos_token_id=1, eos_token_id=2, pad_token_id=0,
    )  # fmt: skip
    model = GPT2LMHeadModel(config)
    model.generation_config.pad_token_id = 0

    records = (out_dir / f"rank{rank}.jsonl").open("w")
    rewards = make_rewards(TRAIN_G)

    def recorder(name: str, reward: Any) -> Any:
        def fn(prompts: list, completions: list, **kwargs: Any) -> Any:
            trainer = kwargs["log_metric"].__self__
            logged: dict[str, list[float]] = {}

            def log_metric(self: Any, metric: str, value: float) -> None:
                logged.setdefault(metric, []).append(value)
                trainer._log_metric(metric, value)

            # a bound method of the trainer, as TRL's own log_metric is
            kwargs["log_metric"] = types.MethodType(log_metric, trainer)
            out = call(name, reward, prompts, completions, kwargs)
            mode = "train" if trainer.model.training else "eval"
            row = {
                "name": name, "mode": mode, "prompts": list(prompts),
                "completions": list(completions), "answer": list(kwargs["answer"]),
                "completion_ids": [list(map(int, c)) for c in kwargs["completion_ids"]],
                "out": out, "logged": logged,
            }  # fmt: skip
            records.write(json.dumps(row) + "\n")
            records.flush()
            return out

        fn.__name__ = name
        return fn

    answers = [str(int(p.split()[2]) + int(p.split()[4])) for p in PROMPTS]
    data = {"prompt": PROMPTS, "answer": answers}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        args = GRPOConfig(
            output_dir=str(out_dir / f"trainer{rank}"),
            max_steps=2,
            per_device_train_batch_size=6,
            num_generations=TRAIN_G,
            per_device_eval_batch_size=3,
            num_generations_eval=EVAL_G,
            max_completion_length=5,
            learning_rate=1e-3,
            beta=0.0,
            logging_steps=1,
            save_strategy="no",
            report_to="none",
            use_cpu=True,
            seed=0,
            disable_tqdm=True,
            dataloader_num_workers=0,
        )
        trainer = GRPOTrainer(
            model=model,
            reward_funcs=[recorder(n, r) for n, r in rewards.items()],
            args=args,
            train_dataset=Dataset.from_dict(data),
            eval_dataset=Dataset.from_dict({k: v[:1] for k, v in data.items()}),
            processing_class=tokenizer,
        )
        # accelerate took the process group this process made, not one of its own
        assert trainer.accelerator.num_processes == 2, trainer.accelerator.num_processes
        assert trainer.accelerator.process_index == rank
        assert distributed.group.WORLD is world
        trainer.train()
        metrics = trainer.evaluate()
    records.close()
    logged = {k: v for k, v in trainer.state.log_history[0].items() if k.startswith("zero_")}
    (out_dir / f"trained{rank}.json").write_text(
        json.dumps({"steps": trainer.state.global_step, "eval": metrics, "first_log": logged})
    )
    assert np.isfinite(metrics["eval_loss"]) if "eval_loss" in metrics else True
    distributed.destroy_process_group()
    print("trl-multiprocess-ok", rank, flush=True)


if __name__ == "__main__":
    main()
