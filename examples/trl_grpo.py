"""TRL ``GRPOTrainer`` training on the CPU with the R-Zero solver reward (zero_torch).

The policy is a tiny randomly initialised GPT-2 (built from a config) with a
word-level tokenizer built in-process, so nothing is downloaded.  The words are
those of ``examples/tunix_grpo.py``: one per boxed answer ``\\boxed{1}`` ..
``\\boxed{9}``, the digits and the words of the prompts ``what is a + b ?``.  Each
prompt is sampled ``G`` times; the reward of a completion is 1 when its last boxed
answer equals the majority answer of its own group (R-Zero's pseudo-label, voted
online), else 0, computed by
``zero_stacks.trl.SolverReward``.  TRL computes the advantages itself; every step
checks that ``zero_torch.group_advantages`` with ``ADVANTAGE_PRESETS["trl"]``
(``zero_stacks.trl.group_advantages``) reproduces them.

Run (needs ``pip install -e ".[trl]"``)::

    python examples/trl_grpo.py --steps 200 --json examples/results/trl_grpo.json \\
        --plot examples/results/trl_grpo.png
"""

from __future__ import annotations

import os
import tempfile
import time
import warnings
from typing import Any

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import grpo_cli  # noqa: E402  (examples/grpo_cli.py, beside this script)

if __name__ == "__main__":  # the extras (and --help) are checked before the imports below
    grpo_cli.require("trl", __doc__)

import numpy as np  # noqa: E402
import torch  # noqa: E402
from datasets import Dataset  # noqa: E402
from tokenizers import Tokenizer, decoders, models, pre_tokenizers  # noqa: E402
from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast  # noqa: E402
from transformers.trainer_callback import PrinterCallback  # noqa: E402
from transformers.utils import logging as hf_logging  # noqa: E402
from trl import GRPOConfig, GRPOTrainer  # noqa: E402

import zero_text  # noqa: E402
import zero_torch  # noqa: E402
from zero_stacks import trl as zt  # noqa: E402

#: Special tokens first, then words (the same words as examples/tunix_grpo.py).
BOXES = [f"\\boxed{{{d}}}" for d in range(1, 10)]  # one word per boxed answer 1..9
WORDS = ["<pad>", "<s>", "</s>", *BOXES, *map(str, range(1, 10)), "what", "is", "+", "?"]
PROMPTS = [f"what is {a} + {b} ?" for a in range(1, 5) for b in range(1, 5)]


def word_tokenizer() -> PreTrainedTokenizerFast:
    """A whitespace word-level tokenizer over :data:`WORDS`, built in memory."""
    vocab = {w: i for i, w in enumerate(WORDS)}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<pad>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.decoder = decoders.WordPiece(prefix="##", cleanup=False)  # joins words with spaces
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="<pad>", bos_token="<s>", eos_token="</s>"
    )


def accuracy(prompts: list[str], completions: list[str]) -> float:
    """Share of completions whose boxed answer is the true sum (a diagnostic only:
    the reward never sees it)."""
    truth = [str(sum(int(w) for w in str(p).split() if w.isdigit())) for p in prompts]
    got = [zero_text.extract_boxed(c) for c in completions]
    return float(np.mean([g == t for g, t in zip(got, truth, strict=True)]))


def has_box(texts: list[str]) -> np.ndarray:
    """Format check for the toy vocabulary: the completion has a non-empty box."""
    return np.array([bool(zero_text.extract_boxed(t)) for t in texts])


def _show(options: dict[str, Any]) -> str:
    return ", ".join(f"{k}={getattr(v, '__name__', v)!s}" for k, v in options.items())


def run(
    steps: int = 4,
    num_generations: int = 8,
    prompts_per_step: int = 4,
    learning_rate: float = 1e-3,
    max_tokens: int = 6,
    seed: int = 0,
    alpha: float | None = None,
    band: tuple[float, float] | None = None,
    verbose: bool = True,
) -> dict[str, Any]:
    """Train for ``steps`` GRPO steps and return the record written to ``--json``.

    ``alpha`` adds the format term (``alpha * agree + (1 - alpha) * has_box``);
    ``band=(low, high)`` keeps only prompts whose vote share lies in the band.
    """
    start = time.perf_counter()
    torch.manual_seed(seed)
    hf_logging.set_verbosity_error()
    tokenizer = word_tokenizer()
    config = GPT2Config(
        vocab_size=len(WORDS),
        n_positions=32,
        n_embd=32,
        n_layer=2,
        n_head=2,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    model = GPT2LMHeadModel(config)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    before = [p.detach().clone() for p in model.parameters()]

    options: dict[str, Any] = {}
    if alpha is not None:  # the toy vocabulary cannot spell <think>: the format is "has a box"
        options.update(alpha=alpha, format=has_box)
    if band is not None:
        options.update(band=True, low=band[0], high=band[1])
    solver = zt.SolverReward(num_generations, **options)  # TRL does not pass num_generations
    last: dict[str, Any] = {}

    def reward(prompts, completions, **kwargs):
        out = solver(prompts, completions, **kwargs)
        last.update(rewards=out, prompts=list(prompts), completions=list(completions))
        return out

    reward.__name__ = solver.__name__
    record: dict[str, list[float]] = {
        "reward_mean": [],
        "parseable": [],
        "accuracy": [],
        "max_abs_diff_vs_trl_advantages": [],
    }

    class Trainer(GRPOTrainer):
        """GRPOTrainer that compares its advantages with zero_torch's after each rollout."""

        def _generate_and_score_completions(self, inputs):
            out = super()._generate_and_score_completions(inputs)
            rewards = torch.tensor(last["rewards"], dtype=torch.float32)
            ours = zt.group_advantages(rewards, num_generations, self.scale_rewards)
            diff = (ours - out["advantages"].detach().cpu().float()).abs().max()
            completions = last["completions"]
            record["reward_mean"].append(float(rewards.mean()))
            record["parseable"].append(
                float(np.mean([zero_text.extract_boxed(c) not in (None, "") for c in completions]))
            )
            record["accuracy"].append(accuracy(last["prompts"], completions))
            record["max_abs_diff_vs_trl_advantages"].append(float(diff))
            if verbose:
                print(
                    f"step {len(record['reward_mean']):4d}/{steps}  reward_mean "
                    f"{rewards.mean():.3f}  parseable {record['parseable'][-1]:.2f}  "
                    f"accuracy {record['accuracy'][-1]:.2f}  "
                    f"{time.perf_counter() - start:6.1f}s  e.g. {completions[0]!r}",
                    flush=True,
                )
            return out

    rng = np.random.default_rng(seed)
    prompts = [PROMPTS[i] for i in rng.integers(len(PROMPTS), size=steps * prompts_per_step)]
    with tempfile.TemporaryDirectory() as out_dir, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        args = GRPOConfig(
            output_dir=out_dir,
            max_steps=steps,
            per_device_train_batch_size=prompts_per_step * num_generations,
            num_generations=num_generations,
            max_completion_length=max_tokens,
            learning_rate=learning_rate,
            lr_scheduler_type="constant",
            beta=0.0,
            temperature=1.0,
            scale_rewards="group",
            logging_steps=1,
            save_strategy="no",
            report_to="none",
            use_cpu=True,
            seed=seed,
            disable_tqdm=True,
            shuffle_dataset=False,
        )
        trainer = Trainer(
            model=model,
            reward_funcs=[reward],
            args=args,
            train_dataset=Dataset.from_dict({"prompt": prompts}),
            processing_class=tokenizer,
        )
        trainer.remove_callback(PrinterCallback)  # one progress line per step is ours
        trainer.train()
    changed = any(
        not torch.equal(a, b.detach()) for a, b in zip(before, model.parameters(), strict=True)
    )
    return {
        "stack": "trl",
        "steps": len(record["reward_mean"]),
        "reward_mean": record["reward_mean"],
        "parseable": record["parseable"],
        "accuracy": record["accuracy"],
        "params_changed": bool(changed),
        "advantage_estimator": "TRL GRPOTrainer (scale_rewards='group')",
        "advantage_preset": dict(zero_torch.ADVANTAGE_PRESETS[zt.TRL_PRESETS["group"]]),
        "max_abs_diff_vs_trl_advantages": max(
            record["max_abs_diff_vs_trl_advantages"], default=0.0
        ),
        "reward": f"zero_stacks.trl.SolverReward({_show(options)}) (R-Zero, online votes)",
        "config": {
            "num_generations": num_generations,
            "prompts_per_step": prompts_per_step,
            "learning_rate": learning_rate,
            "optimizer": "adamw (TRL default)",
            "max_tokens": max_tokens,
            "vocab": WORDS,
            "model": "GPT2LMHeadModel(n_layer=2, n_embd=32, n_head=2), random init",
            "seed": seed,
        },
        "last_completions": last.get("completions", [])[:num_generations],
        "versions": {"torch": torch.__version__, "trl": _version("trl")},
        "wall_time_s": round(time.perf_counter() - start, 2),
    }


def _version(dist: str) -> str:
    from importlib.metadata import version

    return version(dist)


def main(argv: list[str] | None = None) -> None:
    def detail(result: dict[str, Any]) -> str:
        return f"max |advantage - TRL's| = {result['max_abs_diff_vs_trl_advantages']:.2e}"

    grpo_cli.main(run, "trl", detail, __doc__.split("\n")[0], argv)


if __name__ == "__main__":
    main()
