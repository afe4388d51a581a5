"""TRL ``GRPOTrainer`` training on the CPU with the R-Zero solver reward (zero_torch).

The policy is a tiny randomly initialised GPT-2 (built from a config) with a
word-level tokenizer built in-process, so nothing is downloaded.  The words are
those of ``examples/tunix_grpo.py``: one per boxed answer ``\\boxed{1}`` ..
``\\boxed{9}``, the digits and the words of the prompts ``what is a + b ?``.  Each
prompt is sampled ``G`` times; the reward of a completion is 1 when its last boxed
answer equals the majority answer of its own group (R-Zero's pseudo-label, voted
online), else 0, computed by
``zero_stacks.trl.solver_reward``.  TRL computes the advantages itself; every step
checks that ``zero_torch.group_advantages`` with ``ADVANTAGE_PRESETS["trl"]``
(``zero_stacks.trl.group_advantages``) reproduces them.

Run (needs ``pip install -e ".[trl]"``)::

    python examples/trl_grpo.py --steps 200 --json examples/results/trl_grpo.json \\
        --plot examples/results/trl_grpo.png
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

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
    solver = zt.solver_reward(num_generations, **options)  # TRL does not pass num_generations
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
        "reward": f"zero_stacks.trl.solver_reward({_show(options)}) (R-Zero, online votes)",
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


def plot(result: dict[str, Any], path: str, window: int = 10) -> None:
    """Reward per step and its moving average."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    r = np.asarray(result["reward_mean"])
    fig, ax = plt.subplots(figsize=(6, 3.2))
    ax.plot(np.arange(1, r.size + 1), r, lw=0.8, alpha=0.5, label="reward mean per step")
    if r.size >= window:
        ma = np.convolve(r, np.ones(window) / window, mode="valid")
        ax.plot(np.arange(window, r.size + 1), ma, lw=2, label=f"{window}-step average")
        acc = np.convolve(result["accuracy"], np.ones(window) / window, mode="valid")
        ax.plot(
            np.arange(window, r.size + 1),
            acc,
            lw=1.5,
            ls="--",
            label="accuracy (true sum; not rewarded), average",
        )
    ax.set_xlabel("GRPO step")
    ax.set_ylabel("reward / accuracy")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(f"{result['stack']}: {result['reward']}", fontsize=8)
    ax.legend(fontsize=7, loc="center right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--num-generations", type=int, default=8)
    parser.add_argument("--prompts-per-step", type=int, default=4)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--alpha", type=float, help="add the format term with this alpha")
    parser.add_argument("--band", type=float, nargs=2, metavar=("LOW", "HIGH"))
    parser.add_argument("--json", metavar="PATH", help="write the run record here")
    parser.add_argument("--plot", metavar="PATH", help="write a reward plot (PNG) here")
    args = parser.parse_args(argv)
    result = run(
        steps=args.steps,
        num_generations=args.num_generations,
        prompts_per_step=args.prompts_per_step,
        learning_rate=args.lr,
        seed=args.seed,
        alpha=args.alpha,
        band=tuple(args.band) if args.band else None,
    )
    r = result["reward_mean"]
    k = max(1, len(r) // 5)
    print(
        f"trl: {result['steps']} steps in {result['wall_time_s']} s, reward mean "
        f"first {k}: {np.mean(r[:k]):.3f}, last {k}: {np.mean(r[-k:]):.3f}, "
        f"params_changed={result['params_changed']}, "
        f"max |advantage - TRL's| = {result['max_abs_diff_vs_trl_advantages']:.2e}"
    )
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
    if args.plot:
        plot(result, args.plot)


if __name__ == "__main__":
    main()
