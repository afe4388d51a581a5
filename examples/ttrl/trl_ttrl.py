"""TTRL inside TRL: label-free GRPO with the library's rewards on a warm-started GPT-2.

Each seed splits the 225 prompts ``what is a + b ?`` (a, b in 1..15) into 112 labelled
pairs, 56 unlabelled RL prompts and 57 held-out prompts (``ttrl_common.py``).  A 2-layer
GPT-2 built from a config (nothing is downloaded) learns the labelled pairs by
full-batch AdamW, first on the true answers, then against soft noisy labels, which leaves
it unsure: its sampled answers are right less often than its majority.  Then TRL's
``GRPOTrainer`` trains a copy per arm on the RL prompts with one reward:
``zero_stacks.trl.SolverReward`` voting online (``majority``), the same in the vote-share
band (``band``), a coin with the majority arm's reward rate (``random``), the true sum
(``truth``), and the majority vote on a randomly initialised model (``no_prior``).
Every evaluation number (sampled pass@1, maj@8, greedy accuracy) and every training
diagnostic (``VoteDiagnostics``: label accuracy, reward accuracy, majority ratio)
comes from the library (zero_torch).

    python examples/ttrl/trl_ttrl.py --seeds 0 1 2 --json run.json --plot run.png
"""

from __future__ import annotations

import copy
import os
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from typing import Any

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import ttrl_common as tc  # noqa: E402  (examples/ttrl/ttrl_common.py, beside this script)

#: The configuration frozen for the pre-registered run (examples/ttrl/PREREGISTRATION.md).
FROZEN = tc.Config()
DESCRIPTION = __doc__.split("\n")[0]

if __name__ == "__main__":  # the extra (and --help) are checked before the imports below
    tc.require("trl", sys.argv[1:], FROZEN, DESCRIPTION)

import torch  # noqa: E402
from datasets import Dataset  # noqa: E402
from transformers import GPT2Config, GPT2LMHeadModel, TrainerCallback  # noqa: E402
from transformers.trainer_callback import PrinterCallback  # noqa: E402
from transformers.utils import logging as hf_logging  # noqa: E402
from trl import GRPOConfig, GRPOTrainer  # noqa: E402

from zero_stacks import trl as zt  # noqa: E402

BACKEND = zt.BACKEND  # zero_torch


def build_model(cfg: tc.Config, seed: int) -> GPT2LMHeadModel:
    torch.manual_seed(seed)
    config = GPT2Config(
        vocab_size=len(tc.words(cfg.spelling)),
        n_positions=16,
        n_embd=cfg.dim,
        n_layer=cfg.layers,
        n_head=cfg.heads,
        resid_pdrop=cfg.dropout,
        embd_pdrop=cfg.dropout,
        attn_pdrop=cfg.dropout,
        bos_token_id=1,
        eos_token_id=2,
        pad_token_id=0,
    )
    model = GPT2LMHeadModel(config)
    model.generation_config.pad_token_id = 0
    return model


def warm_start(model: GPT2LMHeadModel, cfg: tc.Config, pairs: list[tuple[int, int]]) -> None:
    """Full-batch AdamW: ``clean_steps`` on the true answers, then ``noisy_steps`` against
    the soft noisy labels (``tc.NOISE``), dropout on."""
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.sft_lr, weight_decay=cfg.weight_decay)
    model.train()
    for noisy, steps in ((False, cfg.clean_steps), (True, cfg.noisy_steps)):
        ids, target, weight = (torch.from_numpy(x) for x in
                               tc.warm_start_targets(pairs, cfg.spelling, noisy))  # fmt: skip
        ids = ids.long()
        for _ in range(steps):
            logp = torch.log_softmax(model(ids).logits[:, :-1].float(), -1)
            nll = -(target[:, 1:] * logp).sum(-1).sum(-1)
            loss = (nll * weight).sum() / len(pairs)
            opt.zero_grad()
            loss.backward()
            opt.step()
    model.eval()


@torch.no_grad()
def sample(model: GPT2LMHeadModel, cfg: tc.Config, pairs: list[tuple[int, int]], n: int,
           greedy: bool, generator: torch.Generator) -> list[list[str]]:  # fmt: skip
    """``n`` completions of each prompt at ``cfg.temperature`` (or greedy), dropout off:
    each prompt once through the model, its key-value cache repeated ``n`` times."""
    was_training = model.training
    model.eval()
    out = model(torch.from_numpy(tc.prompt_ids(pairs, cfg.spelling)).long(), use_cache=True)
    cache = out.past_key_values
    cache.batch_repeat_interleave(n)
    last = out.logits[:, -1].float().repeat_interleave(n, 0)
    tokens = []
    for t in range(cfg.max_tokens):
        if greedy:
            nxt = last.argmax(-1, keepdim=True)
        else:
            nxt = torch.multinomial(torch.softmax(last / cfg.temperature, -1), 1,
                                    generator=generator)  # fmt: skip
        tokens.append(nxt)
        if t + 1 < cfg.max_tokens:
            out = model(nxt, past_key_values=cache, use_cache=True)
            cache, last = out.past_key_values, out.logits[:, -1].float()
    model.train(was_training)
    texts = tc.decode(torch.cat(tokens, 1).numpy(), cfg.spelling)
    return [texts[i : i + n] for i in range(0, len(texts), n)]


def evaluate(model: GPT2LMHeadModel, cfg: tc.Config, split: tc.Split, seed: int,
             step: int) -> dict[str, Any]:  # fmt: skip
    """Sampled pass@1, maj@8 (``eval_samples`` per prompt) and greedy accuracy on the RL
    and held-out prompts, by the library."""
    gen = torch.Generator().manual_seed(seed * 100_003 + step)
    out: dict[str, Any] = {"step": step}
    for where, pairs in (("rl", split.rl), ("held", split.held)):
        truths = [tc.truth(p) for p in pairs]
        sampled = sample(model, cfg, pairs, cfg.eval_samples, False, gen)
        greedy = [g[0] for g in sample(model, cfg, pairs, 1, True, gen)]
        out[where] = {
            **tc.answer_metrics(BACKEND, sampled, truths),
            "greedy": tc.greedy_accuracy(BACKEND, greedy, truths),
        }
    return out


def train_arm(arm: str, model: GPT2LMHeadModel, cfg: tc.Config, split: tc.Split, seed: int,
              first_eval: dict[str, Any], rates: list[float] | None,
              log: Callable[[str], None]) -> dict[str, Any]:  # fmt: skip
    start = time.perf_counter()
    G = cfg.num_generations
    reward = tc.arm_reward(zt.SolverReward, arm, cfg, seed, rates, num_generations=G)
    train = tc.TrainLog(BACKEND, zt.VoteDiagnostics(G, truth_column="answer"), cfg)
    evals = [first_eval]

    def rewards(prompts, completions, answer, **kwargs):
        out = reward(prompts, completions, answer=answer, **kwargs)
        train.record(prompts, completions, answer, out)
        return out

    rewards.__name__ = getattr(reward, "__name__", arm)

    class Evaluate(TrainerCallback):
        def on_step_end(self, args, state, control, **kwargs):
            if state.global_step % cfg.eval_every == 0 or state.global_step == cfg.steps:
                evals.append(evaluate(kwargs["model"], cfg, split, seed, state.global_step))
                log(train.eval_line(seed, arm, evals[-1], time.perf_counter() - start))

    order = tc.rl_order(seed, cfg.steps, cfg.prompts_per_step, len(split.rl))
    data = Dataset.from_dict({"prompt": [tc.prompt(split.rl[i]) for i in order],
                              "answer": [tc.truth(split.rl[i]) for i in order]})  # fmt: skip
    with tempfile.TemporaryDirectory() as out_dir, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        args = GRPOConfig(
            output_dir=out_dir,
            max_steps=cfg.steps,
            per_device_train_batch_size=cfg.prompts_per_step * G,  # counts completions
            num_generations=G,
            max_completion_length=cfg.max_tokens,
            learning_rate=cfg.lr,
            lr_scheduler_type="constant",
            beta=0.0,
            temperature=cfg.temperature,
            disable_dropout=True,
            gradient_checkpointing=False,
            scale_rewards="group",
            logging_steps=10**9,
            save_strategy="no",
            report_to="none",
            use_cpu=True,
            seed=seed,
            disable_tqdm=True,
            shuffle_dataset=False,
        )
        trainer = GRPOTrainer(
            model=model,
            reward_funcs=[rewards],
            args=args,
            train_dataset=data,
            processing_class=tc.tokenizer_for(cfg.spelling),
            callbacks=[Evaluate()],
        )
        trainer.remove_callback(PrinterCallback)
        trainer.train()
    seconds = round(time.perf_counter() - start, 1)
    return {"evals": evals, "train": train.curves, "wall_time_s": seconds}


def run_seed(seed: int, cfg: tc.Config, arms: list[str],
             log: Callable[[str], None]) -> dict[str, Any]:  # fmt: skip
    """Warm start once, then every arm from a copy of it (``no_prior`` from a fresh
    random initialisation), the random arm after the majority arm whose rates it copies."""
    hf_logging.set_verbosity_error()
    start = time.perf_counter()
    split = tc.split(seed)
    out: dict[str, Any] = {"seed": seed, "arms": {}}
    if set(arms) - {"no_prior"}:
        warm = build_model(cfg, seed)
        warm_start(warm, cfg, split.sft)
        out["warm_start_s"] = round(time.perf_counter() - start, 1)
        first = evaluate(warm, cfg, split, seed, 0)
        log(
            f"seed {seed}: warm start in {out['warm_start_s']} s, rl pass@1 "
            f"{first['rl']['pass@1']:.3f} maj@8 {first['rl']['maj@8']:.3f} greedy "
            f"{first['rl']['greedy']:.3f}; held pass@1 {first['held']['pass@1']:.3f}"
        )
    for arm in arms:
        if arm == "no_prior":
            model = build_model(cfg, seed)
            model.eval()
            first_eval = evaluate(model, cfg, split, seed, 0)
        else:
            model, first_eval = copy.deepcopy(warm), first
        rates = out["arms"]["majority"]["train"]["reward_mean"] if arm == "random" else None
        out["arms"][arm] = train_arm(arm, model, cfg, split, seed, first_eval, rates, log)
    out["wall_time_s"] = round(time.perf_counter() - start, 1)
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    packages = ("torch", "transformers", "trl", "jax")
    return tc.main("trl", FROZEN, DESCRIPTION, run_seed, packages, argv)


if __name__ == "__main__":
    main()
