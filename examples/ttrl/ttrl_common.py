"""The framework-neutral half of the TTRL experiment (``trl_ttrl.py``, ``tunix_ttrl.py``).

Task: ``what is a + b ?`` with ``a, b`` in 1..15.  Each seed splits the 225 pairs into
112 labelled pairs (the supervised warm start), 56 unlabelled RL prompts (GRPO trains on
these, TTRL's setting: the prompts trained on are the prompts evaluated) and 57 held-out
prompts (evaluation only).  This module holds what both stacks share: the split, the
vocabulary and the answer spelling, the warm start's targets, the order of the RL
prompts, the arms, the evaluation metrics (computed by the library from sampled
answers), the pre-registered outcome and its test, the provenance of a run, the command
line with its fresh-seed guard, and the plot.  It imports neither stack.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import importlib.metadata as md
import importlib.util
import json
import os
import platform
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

import zero_text

# ------------------------------------------------------------------ task and split

LOW, HIGH = 1, 15
PAIRS = [(a, b) for a in range(LOW, HIGH + 1) for b in range(LOW, HIGH + 1)]
SPLIT_SIZES = {"sft": 112, "rl": 56, "held": 57}
#: Soft label noise of the second warm-start phase: weight of the target ``a + b + offset``.
NOISE = {0: 0.5, -1: 0.125, 1: 0.125, -2: 0.125, 2: 0.125}
#: Answers the vocabulary can spell: every sum, and the noisy targets around them.
ANSWERS = range(2 * LOW - 2, 2 * HIGH + 3)

#: Tuning seeds are 0-99; seeds from FRESH_FROM on are kept for the pre-registered run.
TUNING = range(100)
FRESH_FROM = 300

ARMS = ("majority", "band", "random", "truth", "no_prior")
ARM_HELP = {
    "majority": "online majority vote of the group (zero_stacks SolverReward, TTRL / R-Zero)",
    "band": "the same vote, only groups whose vote share is in [0.25, 0.75] "
    "(SolverReward(band=True), curriculum_mask)",
    "random": "a 0/1 coin per completion whose rate at step t is the majority arm's mean "
    "reward at step t of the same seed (the Spurious-Rewards control)",
    "truth": "1 when the answer is the true sum (SolverReward(labels_column='answer')): the "
    "ceiling",
    "no_prior": "the majority reward on a randomly initialised model: the collapse control",
}
SPELLINGS = ("token", "digits")


@dataclasses.dataclass(frozen=True)
class Split:
    """The pairs of one seed: supervised, unlabelled RL prompts, held-out prompts."""

    sft: list[tuple[int, int]]
    rl: list[tuple[int, int]]
    held: list[tuple[int, int]]


def split(seed: int) -> Split:
    """The seed's 112 / 56 / 57 split of the 225 pairs (a permutation of ``seed``)."""
    order = np.random.default_rng([seed, 0]).permutation(len(PAIRS))
    pairs = [PAIRS[i] for i in order]
    a, b = SPLIT_SIZES["sft"], SPLIT_SIZES["sft"] + SPLIT_SIZES["rl"]
    return Split(sft=pairs[:a], rl=pairs[a:b], held=pairs[b:])


def prompt(pair: tuple[int, int]) -> str:
    return f"what is {pair[0]} + {pair[1]} ?"


def truth(pair: tuple[int, int]) -> str:
    """The true answer, as the ``answer`` column holds it (monitoring and the truth arm)."""
    return str(pair[0] + pair[1])


def rl_order(seed: int, steps: int, per_step: int, num_prompts: int) -> list[int]:
    """Indices into the RL prompts for ``steps`` batches of ``per_step``: shuffled epochs
    (every prompt once per epoch), the same order for every arm of a seed."""
    rng = np.random.default_rng([seed, 1])
    out: list[int] = []
    while len(out) < steps * per_step:
        out.extend(rng.permutation(num_prompts).tolist())
    return out[: steps * per_step]


# ------------------------------------------------------------------ vocabulary

SPECIALS = ["<pad>", "<s>", "</s>"]
PROMPT_WORDS = ["what", "is", "+", "?", *map(str, range(LOW, HIGH + 1))]
#: With the digit spelling a box is ``\\boxed{`` + digits + ``}``; ``##`` marks a word the
#: decoder glues to the previous one (the WordPiece convention), so ids decode to
#: ``\\boxed{12}``.
OPEN, DIGIT, CLOSE = "\\boxed{", "##{}", "##}"


def words(spelling: str) -> list[str]:
    """The vocabulary: pad 0, bos 1, eos 2, the prompt words, then the answer words."""
    if spelling == "token":
        answer_words = [f"\\boxed{{{v}}}" for v in ANSWERS]
    elif spelling == "digits":
        answer_words = [OPEN, *(DIGIT.format(d) for d in range(10)), CLOSE]
    else:
        raise ValueError(f"spelling must be one of {SPELLINGS}, got {spelling!r}")
    return [*SPECIALS, *PROMPT_WORDS, *answer_words]


def answer_words(value: int, spelling: str) -> list[str]:
    """The completion that answers ``value``, ending with ``</s>``."""
    if spelling == "token":
        return [f"\\boxed{{{value}}}", "</s>"]
    return [OPEN, *(DIGIT.format(c) for c in str(value)), CLOSE, "</s>"]


def prompt_words(pair: tuple[int, int]) -> list[str]:
    """The prompt as both stacks feed it: ``<s>`` then the words."""
    return ["<s>", *prompt(pair).split()]


def max_completion(spelling: str) -> int:
    return max(len(answer_words(v, spelling)) for v in ANSWERS)


def warm_start_targets(
    pairs: Sequence[tuple[int, int]], spelling: str, noisy: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Token ids ``[N, T]``, target distributions ``[N, T, V]`` and row weights ``[N]`` of
    the supervised warm start.

    ``target[i, t]`` is what position ``t`` should hold (predicted from ``t - 1``): zero
    on the prompt, the answer's words and ``</s>`` after it.  Clean: one row per pair,
    the true answer.  Noisy: the answer is spread over ``a + b + offset`` with the
    weights of :data:`NOISE`; with one word per answer that is a soft label on the
    answer word (one row per pair), with digits one row per pair and offset, weighted.
    The weighted cross-entropy summed over rows, divided by the number of pairs, is the
    loss.  Rows are right-padded with ``<pad>`` (no target there).
    """
    vocab = words(spelling)
    index = {w: i for i, w in enumerate(vocab)}
    offsets = NOISE if noisy else {0: 1.0}
    rows: list[tuple[list[int], dict[int, dict[int, float]], float]] = []
    for pair in pairs:
        head = [index[w] for w in prompt_words(pair)]
        true = [index[w] for w in answer_words(pair[0] + pair[1], spelling)]
        if spelling == "token":  # one row: the soft label on the answer word
            soft = {index[answer_words(pair[0] + pair[1] + o, spelling)[0]]: w
                    for o, w in offsets.items()}  # fmt: skip
            rows.append((head + true, {len(head): soft, len(head) + 1: {true[1]: 1.0}}, 1.0))
            continue
        for offset, weight in offsets.items():
            tail = [index[w] for w in answer_words(pair[0] + pair[1] + offset, spelling)]
            rows.append((head + tail, {len(head) + j: {t: 1.0} for j, t in enumerate(tail)},
                         weight))  # fmt: skip
    width = max(len(r[0]) for r in rows)
    ids = np.zeros((len(rows), width), dtype=np.int32)
    target = np.zeros((len(rows), width, len(vocab)), dtype=np.float32)
    for i, (r, dists, _) in enumerate(rows):
        ids[i, : len(r)] = r
        for t, dist in dists.items():
            for token, w in dist.items():
                target[i, t, token] = w
    return ids, target, np.array([r[2] for r in rows], dtype=np.float32)


def tokenizer_for(spelling: str) -> Any:
    """A whitespace word-level Hugging Face tokenizer over :func:`words`, built in memory
    (nothing downloaded): ``<s>`` prepended, ``##`` words glued to the previous one when
    decoding.  TRL uses it, and Tunix through its adapter for HF tokenizers."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = {w: i for i, w in enumerate(words(spelling))}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<pad>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 1)])
    tok.decoder = decoders.WordPiece(prefix="##", cleanup=False)
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="<pad>", bos_token="<s>", eos_token="</s>"
    )


def prompt_ids(pairs: Sequence[tuple[int, int]], spelling: str) -> np.ndarray:
    """``[B, 7]`` token ids of the prompts (all prompts have the same length)."""
    index = {w: i for i, w in enumerate(words(spelling))}
    return np.array([[index[w] for w in prompt_words(p)] for p in pairs], dtype=np.int32)


def decode(ids: np.ndarray, spelling: str) -> list[str]:
    """Completion token ids ``[N, T]`` to text, cut at the first ``</s>`` (or ``<pad>``),
    words joined as the stacks' tokenizer joins them (``##`` glued)."""
    vocab = words(spelling)
    out = []
    for row in np.asarray(ids):
        text = ""
        for t in row.tolist():
            if t in (0, 2):  # <pad>, </s>
                break
            w = vocab[t]
            text += w[2:] if w.startswith("##") else (" " if text else "") + w
        out.append(text)
    return out


# ------------------------------------------------------------------ evaluation


def boxed(answer: str) -> str:
    """The truth as a reply, so that :func:`zero_text.group_answers` parses it like one."""
    return f"\\boxed{{{answer}}}"


def answer_metrics(
    backend: Any, completions: Sequence[Sequence[str]], truths: Sequence[str], group: int = 8
) -> dict[str, float]:
    """Sampled pass@1 and maj@``group`` of each prompt's ``n`` completions, by the library.

    The ``n`` completions of a prompt are cut into ``n / group`` groups; each group and
    the truth form one :func:`zero_text.group_answers` row (truth last), so equal
    answers share an id.  pass@1 is the library's ``pass_at_k(correct, 1)`` over all
    ``n`` samples of a prompt, averaged over prompts; maj@``group`` is
    ``vote_metrics(...).label_accuracy`` of the groups (the share of groups whose
    majority is the truth); ``majority_ratio`` is the winning answer's share.
    ``backend`` is ``zero_stacks.trl.BACKEND`` (zero_torch) or
    ``zero_stacks.tunix.BACKEND`` (zero_jax).
    """
    n = len(completions[0])
    if n % group:
        raise ValueError(f"{n} completions per prompt are not groups of {group}")
    rows = [
        [*c[i : i + group], boxed(t)]
        for c, t in zip(completions, truths, strict=True)
        for i in range(0, n, group)
    ]
    ids, num_answers = zero_text.group_answers(rows)
    answers, true_ids = ids[:, :group], ids[:, group]
    correct = (answers == true_ids[:, None]).reshape(len(truths), n)
    votes = backend.run("vote_metrics", np.ascontiguousarray(answers), true_ids, num_answers)
    out = {
        "pass@1": float(np.mean(backend.run("pass_at_k", correct, 1))),
        f"maj@{group}": float(votes.label_accuracy),
        "majority_ratio": float(votes.majority_ratio),
    }
    if n >= group:
        out[f"pass@{group}"] = float(np.mean(backend.run("pass_at_k", correct, group)))
    return out


def greedy_accuracy(backend: Any, completions: Sequence[str], truths: Sequence[str]) -> float:
    """Share of prompts whose greedy completion boxes the true sum (``pass_at_k`` with one
    sample is its correctness)."""
    ids, _ = zero_text.group_answers(
        [[c, boxed(t)] for c, t in zip(completions, truths, strict=True)]
    )
    correct = ids[:, :1] == ids[:, 1:]
    return float(np.mean(backend.run("pass_at_k", correct, 1)))


def band_share(
    backend: Any, completions: Sequence[str], group: int, low: float, high: float
) -> float:
    """Share of the step's groups inside the vote-share band: ``consensus`` then
    ``curriculum_mask``, as ``SolverReward(band=True)`` gates them."""  # fmt: skip
    rows = [list(completions[i : i + group]) for i in range(0, len(completions), group)]
    ids, num_answers = zero_text.group_answers(rows)
    _, share = backend.run("consensus", ids, num_answers)
    return float(np.mean(backend.run("curriculum_mask", np.asarray(share), low, high)))


class CoinReward:
    """The ``random`` arm's reward: an independent 0/1 coin per completion.

    At step ``t`` (counted by calls) the coin comes up 1 with probability ``rates[t]``,
    the majority arm's mean reward at step ``t`` of the same seed, so both arms pay the
    same share of completions at every step while this one ignores the answers.
    """

    __name__ = "coin"

    def __init__(self, rates: Sequence[float], seed: int) -> None:
        self.rates = [float(r) for r in rates]
        self.rng = np.random.default_rng([seed, 2])
        self.calls = 0

    def __call__(self, prompts: Sequence[Any], completions: Sequence[Any],
                 **kwargs: Any) -> list[float]:  # fmt: skip
        rate = self.rates[min(self.calls, len(self.rates) - 1)]
        self.calls += 1
        return (self.rng.random(len(completions)) < rate).astype(float).tolist()


def arm_reward(solver_reward: Callable[..., Any], arm: str, cfg: Config, seed: int,
               rates: Sequence[float] | None, **bound: Any) -> Callable[..., Any]:  # fmt: skip
    """The reward of ``arm``: the stack's ``SolverReward`` class (``bound`` holds the options
    the stack does not pass itself, e.g. TRL's ``num_generations``), or the coin."""
    if arm in ("majority", "no_prior"):
        return solver_reward(**bound)
    if arm == "band":
        return solver_reward(**bound, band=True, low=cfg.band_low, high=cfg.band_high)
    if arm == "truth":
        return solver_reward(**bound, labels_column="answer")
    if arm == "random":
        if rates is None:
            raise ValueError("the random arm needs the majority arm's reward rates")
        return CoinReward(rates, seed)
    raise ValueError(f"arm must be one of {ARMS}, got {arm!r}")


TRAIN_KEYS = ("reward_mean", "label_accuracy", "reward_accuracy", "majority_ratio",
              "band_share", "pass@1")  # fmt: skip


class TrainLog:
    """Each GRPO step's rewards and diagnostics against the hidden truth, by the library:
    the vote metrics of the stack's ``VoteDiagnostics``, the share of groups inside the
    band and the step's sampled pass@1."""

    def __init__(self, backend: Any, diagnostics: Any, cfg: Config) -> None:
        self.backend, self.diagnostics, self.cfg = backend, diagnostics, cfg
        self.curves: dict[str, list[float]] = {k: [] for k in TRAIN_KEYS}

    def record(self, prompts: Sequence[str], completions: Sequence[str],
               answers: Sequence[str], rewards: Sequence[float]) -> None:  # fmt: skip
        G, cfg = self.cfg.num_generations, self.cfg
        votes = self.diagnostics.metrics(list(prompts), list(completions), answer=list(answers))
        self.curves["reward_mean"].append(float(np.mean(rewards)))
        for k in ("label_accuracy", "reward_accuracy", "majority_ratio"):
            self.curves[k].append(votes["votes/" + k])
        self.curves["band_share"].append(
            band_share(self.backend, completions, G, cfg.band_low, cfg.band_high))  # fmt: skip
        groups = [list(completions[i : i + G]) for i in range(0, len(completions), G)]
        pass1 = answer_metrics(self.backend, groups, list(answers)[::G], G)["pass@1"]
        self.curves["pass@1"].append(pass1)

    def eval_line(self, seed: int, arm: str, e: dict[str, Any], seconds: float) -> str:
        """One evaluation point as the run log prints it."""
        label = np.mean(self.curves["label_accuracy"][-self.cfg.eval_every :])
        return (f"  seed {seed} {arm:<9} step {e['step']:4d}  rl pass@1 {e['rl']['pass@1']:.3f}"
                f" maj@8 {e['rl']['maj@8']:.3f} greedy {e['rl']['greedy']:.3f} | held pass@1 "
                f"{e['held']['pass@1']:.3f} | label acc {label:.3f}  {seconds:5.1f}s")  # fmt: skip


# ------------------------------------------------------------------ configuration


@dataclasses.dataclass(frozen=True)
class Config:
    """One stack's configuration; the defaults are the configuration frozen for the
    pre-registered run (the same in both stacks)."""

    spelling: str = "token"  # one word per boxed answer ("digits": \\boxed{ digits })
    # model: GPT-2 shape (learned positions, tied embeddings, pre-norm blocks)
    layers: int = 2
    dim: int = 64
    heads: int = 2
    dropout: float = 0.1  # during the warm start only
    # warm start: full-batch AdamW on the 112 labelled pairs
    sft_lr: float = 2e-3
    weight_decay: float = 1.0
    clean_steps: int = 1000  # cross-entropy on the true answer and </s>
    noisy_steps: int = 2000  # then against the soft noisy label (NOISE)
    # GRPO on the 56 RL prompts
    steps: int = 200
    prompts_per_step: int = 8
    num_generations: int = 8
    lr: float = 3e-5  # constant, Adam(W) without weight decay, gradient norm clipped at 1
    temperature: float = 1.0
    max_tokens: int = 4
    band_low: float = 0.25
    band_high: float = 0.75
    # evaluation: sampled answers per prompt, every eval_every steps
    eval_every: int = 25
    eval_samples: int = 64


#: A configuration small enough for CI (a few steps of every arm).
SMOKE_CHANGES = dict(clean_steps=30, noisy_steps=10, steps=3, eval_every=2, eval_samples=8)


# ------------------------------------------------------------------ outcome and test

ALPHA = 0.05
ALTERNATIVE = "greater"  # one-sided Wilcoxon: majority - random > 0
MIN_SHARE_OF_TRUTH = 0.5


def _final(seed: dict, arm: str, where: str, metric: str) -> float:
    return float(seed["arms"][arm]["evals"][-1][where][metric])


def _first(seed: dict, arm: str, where: str, metric: str) -> float:
    return float(seed["arms"][arm]["evals"][0][where][metric])


def paired(
    seeds: list[dict],
    arm: str,
    control: str,
    where: str,
    metric: str,
    alternative: str = "two-sided",
) -> dict[str, Any]:
    """Per-seed ``arm - control`` of the final ``metric`` on ``where`` prompts, its mean
    and SciPy's Wilcoxon signed-rank p-value."""  # fmt: skip
    from scipy import stats

    diff = np.array([_final(s, arm, where, metric) - _final(s, control, where, metric)
                     for s in seeds])  # fmt: skip
    p = (float(stats.wilcoxon(diff, alternative=alternative).pvalue)
         if len(diff) > 1 and np.any(diff != 0) else 1.0)  # fmt: skip
    return {"seeds": [s["seed"] for s in seeds], "difference": diff.tolist(),
            "mean": float(diff.mean()), "wilcoxon_p": p, "alternative": alternative}  # fmt: skip


def gains(seeds: list[dict], arm: str, where: str, metric: str) -> list[float]:
    """Per seed: final minus first evaluation (the warm start) of one arm."""
    return [_final(s, arm, where, metric) - _first(s, arm, where, metric) for s in seeds]


METRICS = ("pass@1", "greedy", "maj@8")


def outcome(result: dict) -> dict[str, Any]:
    """The pre-registered outcome and the secondary outcomes of a run."""
    seeds, arms = result["seeds"], result["arms"]
    out: dict[str, Any] = {}
    if {"majority", "random", "truth"} <= set(arms):
        primary = paired(seeds, "majority", "random", "rl", "pass@1", ALTERNATIVE)
        g_maj = float(np.mean(gains(seeds, "majority", "rl", "pass@1")))
        g_truth = float(np.mean(gains(seeds, "truth", "rl", "pass@1")))
        checks = {
            "mean_difference_positive": primary["mean"] > 0,
            "p_below_alpha": primary["wilcoxon_p"] < ALPHA,
            "truth_gain_positive": g_truth > 0,
            "majority_gain_at_least_half_truth": g_maj >= MIN_SHARE_OF_TRUTH * g_truth,
        }
        out["primary"] = {
            **primary,
            "majority_gain": g_maj,
            "truth_gain": g_truth,
            "majority_share_of_truth_gain": g_maj / g_truth if g_truth else None,
            **checks,
            "met": bool(all(checks.values())),
        }
    per_arm: dict[str, Any] = {}
    for arm in arms:
        per_arm[arm] = {
            f"{where}/{metric}": {
                "first": [_first(s, arm, where, metric) for s in seeds],
                "final": [_final(s, arm, where, metric) for s in seeds],
                "mean_gain": float(np.mean(gains(seeds, arm, where, metric))),
            }
            for where in ("rl", "held")
            for metric in METRICS
        }
        train = [s["arms"][arm]["train"] for s in seeds]
        for key in ("label_accuracy", "reward_accuracy", "majority_ratio", "reward_mean",
                    "band_share"):  # fmt: skip
            curves = np.array([t[key] for t in train], dtype=float)
            k = max(1, curves.shape[1] // 10)
            per_arm[arm][f"train/{key}"] = {
                "first_tenth": float(curves[:, :k].mean()),
                "last_tenth": float(curves[:, -k:].mean()),
            }
    out["per_arm"] = per_arm
    if "random" in arms:
        out["secondary_vs_random"] = {
            f"{arm}-random {where}/{metric}": paired(seeds, arm, "random", where, metric)
            for arm in ("majority", "band", "truth") if arm in arms
            for where in ("rl", "held") for metric in METRICS
        }  # fmt: skip
    return out


def outcome_text(o: dict) -> str:
    lines = []
    if "primary" in o:
        p = o["primary"]
        lines.append("primary: majority - random, sampled pass@1 on the RL prompts after "
                     "training, by seed")  # fmt: skip
        lines.append("  seed " + " ".join(f"{s:>7d}" for s in p["seeds"]))
        lines.append("  diff " + " ".join(f"{d:+.4f}" for d in p["difference"]))
        lines.append(f"  mean {p['mean']:+.4f}, Wilcoxon ({p['alternative']}) p = "
                     f"{p['wilcoxon_p']:.4f}")  # fmt: skip
        share = p["majority_share_of_truth_gain"]
        share = "-" if share is None else f"{share:.3f}"
        lines.append(
            f"  gain over the warm start: majority {p['majority_gain']:+.4f}, truth "
            f"{p['truth_gain']:+.4f} (majority / truth {share})"
        )
        lines.append(
            f"  criterion (mean > 0, p < {ALPHA}, truth gain > 0, majority gain >= "
            f"{MIN_SHARE_OF_TRUTH} x truth gain): {'MET' if p['met'] else 'NOT MET'}"
        )
    head = f"{'arm':<9}" + "".join(f"{w + ' ' + m:>16}" for w in ("rl", "held") for m in METRICS)
    lines.append(head + "   label acc first/last tenth")
    for arm, v in o["per_arm"].items():
        cells = "".join(
            f"{np.mean(v[f'{w}/{m}']['first']):>7.3f}->{np.mean(v[f'{w}/{m}']['final']):.3f}"
            for w in ("rl", "held") for m in METRICS
        )  # fmt: skip
        la = v["train/label_accuracy"]
        lines.append(f"{arm:<9}{cells}   {la['first_tenth']:.3f} / {la['last_tenth']:.3f}")
    return "\n".join(lines)


# ------------------------------------------------------------------ provenance, JSON


def provenance(argv: Sequence[str] | None, packages: Sequence[str]) -> dict[str, Any]:
    """Git revision (and whether tracked files under the experiment's code differ from
    it), versions, UTC timestamp, command line.  Taken when the run starts."""
    root = Path(__file__).resolve().parents[2]

    def git(*args: str) -> str | None:
        try:
            return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True,
                                  check=True, timeout=20).stdout.strip()  # fmt: skip
        except (OSError, subprocess.SubprocessError):
            return None

    paths = ["examples/ttrl", "zero_stacks", "zero_jax", "zero_torch", "zero_text"]
    status = git("status", "--porcelain", "--untracked-files=no", "--", *paths)
    versions = {"python": platform.python_version()}
    for pkg in ("zero-rewards", "numpy", "scipy", *packages):
        try:
            versions[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            versions[pkg] = None
    return {
        "git_revision": git("rev-parse", "HEAD"),
        "git_dirty": None if status is None else bool(status),
        "versions": versions,
        "timestamp_utc": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "argv": None if argv is None else list(argv),
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count()},
    }


def write_json(result: dict, path: str) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps({**result, "outcome": outcome(result)}, indent=1) + "\n")


# ------------------------------------------------------------------ command line

NEEDS = {
    "trl": {m: "trl" for m in ("torch", "transformers", "trl")},
    "tunix": {m: "tunix" for m in ("flax", "optax", "tunix", "transformers")},
}


def parser(stack: str, frozen: Config, description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=f"python examples/ttrl/{stack}_ttrl.py",
        description=description,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="arms:\n"
        + "\n".join(f"  {a:<9} {h}" for a, h in ARM_HELP.items())
        + "\n\nWithout overrides every setting is the configuration frozen for the "
        "pre-registered run (examples/ttrl/PREREGISTRATION.md).",
    )
    p.add_argument("--seeds", type=int, nargs="+", default=[0], metavar="SEED",
                   help=f"run seeds (default 0; tuning: 0-99; seeds >= {FRESH_FROM} need "
                        "--fresh)")  # fmt: skip
    p.add_argument(
        "--fresh",
        action="store_true",
        help=f"allow fresh seeds >= {FRESH_FROM} (the pre-registered run only)",
    )
    p.add_argument("--arms", nargs="+", choices=ARMS, default=list(ARMS), metavar="ARM",
                   help="arms to run (default: all, in this order: " + ", ".join(ARMS)
                   + "); random needs majority (it copies its reward rate)")  # fmt: skip
    p.add_argument("--smoke", action="store_true",
                   help="tiny configuration for CI: " + ", ".join(
                       f"{k}={v}" for k, v in SMOKE_CHANGES.items()))  # fmt: skip
    p.add_argument(
        "--jobs",
        type=int,
        default=1,
        metavar="N",
        help="run the seeds in N worker processes of one thread each (default 1: "
        "in this process); every seed still runs alone from its own seed",
    )
    p.add_argument("--json", metavar="FILE", help="write every number and the provenance here")
    p.add_argument("--plot", metavar="FILE.png", help="write the figure here (needs matplotlib)")
    p.add_argument("--quiet", action="store_true", help="print only the summary")
    for field in dataclasses.fields(Config):
        value = getattr(frozen, field.name)
        kind = type(value)
        p.add_argument("--" + field.name.replace("_", "-"), type=kind, default=None,
                       choices=SPELLINGS if field.name == "spelling" else None,
                       metavar=None if field.name == "spelling" else kind.__name__.upper(),
                       help=f"(frozen: {value})")  # fmt: skip
    return p


def parse(stack: str, frozen: Config, description: str,
          argv: Sequence[str] | None) -> argparse.Namespace:  # fmt: skip
    """Parse the command line and refuse fresh seeds without ``--fresh`` (and the random
    arm without the majority arm whose rates it copies)."""
    p = parser(stack, frozen, description)
    args = p.parse_args(argv)
    fresh = [s for s in args.seeds if s >= FRESH_FROM]
    if fresh and not args.fresh:
        p.error(f"seeds {fresh} are fresh (>= {FRESH_FROM}), kept for the pre-registered run; "
                "pass --fresh to use them")  # fmt: skip
    if "random" in args.arms and "majority" not in args.arms:
        p.error("the random arm copies the majority arm's reward rate: run it with majority")
    if args.jobs < 1:
        p.error(f"--jobs must be at least 1, got {args.jobs}")
    return args


#: What a worker process of ``--jobs`` sets before it imports torch or JAX: one thread.
ONE_THREAD = {
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",
}


def _run_in_worker(run_seed: Callable[..., dict[str, Any]], seed: int, cfg: Config,
                   arms: list[str], quiet: bool) -> dict[str, Any]:  # fmt: skip
    log = (lambda s: None) if quiet else (lambda s: print(s, flush=True))
    return run_seed(seed, cfg, arms, log)


def run_seeds(run_seed: Callable[..., dict[str, Any]], seeds: Sequence[int], cfg: Config,
              arms: list[str], jobs: int, quiet: bool) -> list[dict[str, Any]]:  # fmt: skip
    """Every seed's record, in the order of ``seeds``: here, or with ``jobs > 1`` in fresh
    (spawned) worker processes of one thread each, one seed at a time per worker."""
    if jobs == 1 or len(seeds) == 1:
        return [_run_in_worker(run_seed, s, cfg, arms, quiet) for s in seeds]
    import concurrent.futures
    import multiprocessing

    saved = {k: os.environ.get(k) for k in ONE_THREAD}
    os.environ.update(ONE_THREAD)  # inherited by the workers at spawn, not used here
    try:
        with concurrent.futures.ProcessPoolExecutor(
            min(jobs, len(seeds)), mp_context=multiprocessing.get_context("spawn")
        ) as pool:
            futures = [pool.submit(_run_in_worker, run_seed, s, cfg, arms, quiet) for s in seeds]
            return [f.result() for f in futures]
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def require(stack: str, argv: Sequence[str] | None, frozen: Config, description: str) -> None:
    """Parse the command line (``--help`` and the fresh-seed guard need no extra), then
    exit with one line naming the install command when a module of the stack's extra
    (or matplotlib, for ``--plot``) is missing."""
    args = parse(stack, frozen, description, argv)
    needs = {**NEEDS[stack], **({"matplotlib": "lab"} if args.plot else {})}
    missing = {m: x for m, x in needs.items() if importlib.util.find_spec(m) is None}
    if missing:
        extras = ",".join(sorted(set(missing.values())))
        pin = "-c constraints.txt " if "trl" in missing.values() else ""
        raise SystemExit(
            f"{stack}_ttrl.py needs {', '.join(missing)} (the [{extras}] "
            f'extra{"s" * ("," in extras)}): run pip install {pin}".[{extras}]" in the '
            "zero-rewards checkout"
        )


def main(
    stack: str,
    frozen: Config,
    description: str,
    run_seed: Callable[..., dict[str, Any]],
    packages: Sequence[str],
    argv: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Parse, guard the fresh seeds, run every seed, print the outcome, write JSON / plot."""
    import sys
    import time

    argv = sys.argv[1:] if argv is None else list(argv)
    args = parse(stack, frozen, description, argv)
    arms = [a for a in ARMS if a in args.arms]
    cfg = dataclasses.replace(frozen, **(SMOKE_CHANGES if args.smoke else {}))
    changes = {f.name: getattr(args, f.name) for f in dataclasses.fields(Config)
               if getattr(args, f.name) is not None}  # fmt: skip
    cfg = dataclasses.replace(cfg, **changes)
    prov = provenance(argv, packages)
    log = (lambda s: None) if args.quiet else (lambda s: print(s, flush=True))
    log(f"config: {dataclasses.asdict(cfg)}")
    start = time.perf_counter()
    seeds = run_seeds(run_seed, args.seeds, cfg, arms, args.jobs, args.quiet)
    result = {
        "stack": stack,
        "provenance": prov,
        "config": dataclasses.asdict(cfg),
        "frozen": dataclasses.asdict(frozen) == dataclasses.asdict(cfg),
        "arms": arms,
        "jobs": args.jobs,
        "seeds": seeds,
        "wall_time_s": round(time.perf_counter() - start, 1),
    }
    print(outcome_text(outcome(result)))
    print(f"{len(seeds)} seeds x {len(arms)} arms in {result['wall_time_s']:.0f} s")
    if args.json:
        write_json(result, args.json)
    if args.plot:
        plot(result, args.plot)
    return result


# ------------------------------------------------------------------ plot

COLORS = {"majority": "C0", "band": "C2", "random": "C7", "truth": "C3", "no_prior": "C4"}
#: The band arm keeps almost every group, so its curves lie on the majority arm's: dashed.
STYLES = {"band": "--"}


def plot(result: dict, path: str) -> None:
    """Per arm over GRPO steps (mean of the seeds thick, each seed thin): sampled pass@1 on
    the RL prompts and on the held-out prompts, label accuracy of the training votes;
    the primary paired differences by seed; maj@8 and greedy accuracy on the RL
    prompts.  One legend for the arms, above the panels."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    seeds, arms = result["seeds"], result["arms"]
    fig, axes = plt.subplots(2, 3, figsize=(15, 8.6))
    panels = [
        (axes[0, 0], "rl", "pass@1", "sampled pass@1, RL prompts (trained on, unlabelled)"),
        (axes[0, 1], "held", "pass@1", "sampled pass@1, held-out prompts"),
        (axes[1, 0], "rl", "maj@8", "maj@8, RL prompts"),
        (axes[1, 1], "rl", "greedy", "greedy accuracy, RL prompts"),
    ]
    for ax, where, metric, title in panels:
        for arm in arms:
            steps = [e["step"] for e in seeds[0]["arms"][arm]["evals"]]
            ys = np.array([[e[where][metric] for e in s["arms"][arm]["evals"]] for s in seeds])
            for y in ys:
                ax.plot(steps, y, color=COLORS[arm], lw=0.6, alpha=0.3)
            ax.plot(steps, ys.mean(0), color=COLORS[arm], lw=2.2, marker="o", ms=3, label=arm,
                    ls=STYLES.get(arm, "-"))  # fmt: skip
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("GRPO step")
        ax.set_ylabel(metric)
    ax = axes[0, 2]
    window = max(1, result["config"]["steps"] // 20)
    for arm in arms:
        curves = np.array([s["arms"][arm]["train"]["label_accuracy"] for s in seeds], float)
        for c in curves:
            ax.plot(np.arange(1, c.size + 1), _smooth(c, window), color=COLORS[arm], lw=0.6,
                    alpha=0.3)  # fmt: skip
        ax.plot(np.arange(1, curves.shape[1] + 1), _smooth(curves.mean(0), window),
                color=COLORS[arm], lw=2.2, ls=STYLES.get(arm, "-"))  # fmt: skip
    ax.set_title(f"label accuracy of the training votes ({window}-step mean)", fontsize=10)
    ax.set_xlabel("GRPO step")
    ax.set_ylabel("share of groups whose majority is the truth")
    ax = axes[1, 2]
    o = outcome(result)
    if "primary" in o:
        p = o["primary"]
        x = np.arange(len(p["seeds"]))
        ax.bar(x, p["difference"], color=["C0" if d > 0 else "C3" for d in p["difference"]])
        ax.axhline(p["mean"], color="k", lw=1.2)
        ax.axhline(0, color="k", lw=0.5)
        ax.set_xticks(x)
        ax.set_xticklabels([str(s) for s in p["seeds"]], fontsize=8)
        verdict = "met" if p["met"] else "not met"
        ax.set_title(f"majority - random, final RL pass@1 by seed\nmean {p['mean']:+.3f} "
                     f"(black line), one-sided Wilcoxon p = {p['wilcoxon_p']:.3g}\n"
                     f"pre-registered criterion {verdict}", fontsize=10)  # fmt: skip
        ax.set_xlabel("seed")
        ax.set_ylabel("paired difference in pass@1")
    else:
        ax.set_axis_off()
    for ax in axes.flat:
        ax.grid(alpha=0.3)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", ncol=len(arms), frameon=False,
               fontsize=11, bbox_to_anchor=(0.5, 0.995))  # fmt: skip
    cfg = result["config"]
    fig.suptitle(f"{result['stack']}: {len(seeds)} seeds ({seeds[0]['seed']}-"
                 f"{seeds[-1]['seed']}), {cfg['steps']} GRPO steps of {cfg['prompts_per_step']}"
                 f" prompts x {cfg['num_generations']}; thin lines: seeds, thick: mean",
                 y=0.955, fontsize=10)  # fmt: skip
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _smooth(y: np.ndarray, window: int) -> np.ndarray:
    """Trailing mean over ``window`` steps (shorter at the start)."""
    c = np.cumsum(np.insert(np.asarray(y, float), 0, 0.0))
    idx = np.arange(1, len(y) + 1)
    lo = np.maximum(0, idx - window)
    return (c[idx] - c[lo]) / (idx - lo)


if __name__ == "__main__":
    import sys

    if len(sys.argv) not in (2, 3) or sys.argv[1].startswith("-"):
        sys.exit("usage: python examples/ttrl/ttrl_common.py RECORD.json [PLOT.png]: print the "
                 "outcome of a run (its --json record) and redraw its figure")  # fmt: skip
    record = json.loads(Path(sys.argv[1]).read_text())
    print(outcome_text(outcome(record)))
    if len(sys.argv) == 3:
        if importlib.util.find_spec("matplotlib") is None:
            sys.exit('drawing needs matplotlib (the [lab] extra): run pip install ".[lab]" in '
                     "the zero-rewards checkout")  # fmt: skip
        plot(record, sys.argv[2])
