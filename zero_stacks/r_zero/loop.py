"""R-Zero's iterations, written once; a stack supplies the two roles' sampling and GRPO.

One iteration (:func:`iterate`):

1. **Challenger phase** (:func:`challenger_phase`): GRPO on the stack's
   ``ChallengerReward``.  Its ``solver`` callable is the frozen Solver sampling ``votes``
   answers per generated question at ``vote_temperature``; the library groups them
   (``zero_text.group_answers``, an unparseable reply is an answer of its own), takes the
   vote share (``consensus``), clusters the whole batch's questions by BLEU
   (``zero_text.bleu_clusters``) and gates the format.  Before the library sees a
   completion, a question that is not a cart (:func:`carts.parse`) or that equals a
   frozen evaluation question is blanked, so the library's format gate pays it 0.
2. **Dataset phase** (:func:`dataset_phase`): the Challenger writes a pool, the frozen
   Solver votes ``votes`` times on each question, ``consensus`` gives each its label and
   share, ``curriculum_mask`` keeps the band; the labels are frozen into a column.
3. **Solver phase** (:func:`solver_phase`): GRPO on the stack's ``SolverReward`` with the
   frozen labels (``labels_column="label"``).
4. **Evaluation** (:func:`evaluate`): greedy accuracy and sampled pass@1 on the seed's
   frozen evaluation carts, by the library (``pass_at_k``).

Arms (:data:`ARMS`) change one thing each: ``fixed_challenger`` skips phase 1,
``no_band`` keeps every answered question in phase 2, ``random`` pays the Solver a coin
at the ``coevolve`` arm's reward rate, ``truth`` labels the kept questions with the
checker's answer.  Every reward, vote, share, band and accuracy is a number returned by
``zero_text`` and the stack's library (``zero_torch`` for TRL, ``zero_jax`` for Tunix).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

import numpy as np

import zero_text
from zero_stacks.r_zero import carts

__all__ = [
    "ARMS",
    "ARM_HELP",
    "Role",
    "Settings",
    "challenger_phase",
    "dataset_phase",
    "evaluate",
    "iterate",
    "run_arms",
    "solver_phase",
]

ARMS = ("coevolve", "fixed_challenger", "no_band", "random", "truth")
ARM_HELP = {
    "coevolve": "R-Zero: Challenger and Solver trained in turn, majority labels in the band",
    "fixed_challenger": "the warm-start Challenger writes every pool (never trained)",
    "no_band": "as coevolve, every answered question kept (no curriculum_mask)",
    "random": "as coevolve, the Solver paid a 0/1 coin at the coevolve arm's reward rate",
    "truth": "as coevolve, the kept questions labelled with the checker's answer (ceiling)",
}


class Role(Protocol):
    """A causal LM in one stack, as the loop uses it.

    ``rewards`` is the stack's module of rewards (``zero_stacks.trl`` or
    ``zero_stacks.tunix``); ``sample`` returns ``n`` completions per prompt
    (``temperature=None``: greedy); ``train`` runs GRPO on ``prompts`` in order
    (``prompts_per_step`` per step, ``generations`` completions each) with one reward
    function and the dataset ``columns``; ``copy`` returns an independent copy."""

    rewards: Any

    def sample(self, prompts: Sequence[str], n: int, temperature: float | None,
               seed: int) -> list[list[str]]: ...  # fmt: skip

    def train(self, prompts: Sequence[str], columns: Mapping[str, Sequence[Any]],
              reward: Callable[..., list[float]], *, prompts_per_step: int, generations: int,
              lr: float, temperature: float, seed: int) -> None: ...  # fmt: skip

    def copy(self) -> Role: ...


@dataclasses.dataclass(frozen=True)
class Settings:
    """One run's budget and options (the defaults: the tuned configuration)."""

    iterations: int = 3
    # challenger phase
    challenger_steps: int = 15
    challenger_generations: int = 8  # completions per prompt ("new deduction", "new abduction")
    challenger_lr: float = 1e-4
    votes: int = 8  # Solver samples per generated question (>= 4)
    vote_temperature: float = 0.5
    bleu_threshold: float = 0.5
    # dataset phase
    pool: int = 128
    band_low: float = 0.25
    band_high: float = 0.75
    # solver phase
    solver_steps: int = 30
    solver_prompts: int = 8
    solver_generations: int = 8
    solver_lr: float = 5e-5
    temperature: float = 1.0  # rollout temperature of both roles, and of the pool
    # evaluation
    eval_per_kind: int = 64
    eval_samples: int = 8

    def __post_init__(self) -> None:
        if self.votes < 4:
            raise ValueError(f"votes must be at least 4 (two give a share of 0.5 or 1 only), "
                             f"got {self.votes}")  # fmt: skip
        for name in ("iterations", "pool", "solver_prompts", "eval_per_kind", "eval_samples"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")


# ------------------------------------------------------------------ pieces


def _blank_outside(texts: Sequence[str], eval_keys: set[str]) -> list[str]:
    """The loop's part of the format gate: an output whose question is not a cart, or is
    a frozen evaluation question, is replaced by ``""`` (no ``<question>``), which the
    library's ``r_zero_challenger_format_ok`` rejects (reward 0, a BLEU cluster alone)."""
    out = []
    for text, q in zip(texts, carts.questions_of(texts), strict=True):
        ok = q is not None and carts.parse(q) is not None and carts.key(q) not in eval_keys
        out.append(text if ok else "")
    return out


class VotingSolver:
    """``solver(questions, k)`` for ``ChallengerReward``: the frozen Solver's ``k``
    replies per question at the vote temperature (each call its own sampling seed)."""

    def __init__(self, solver: Role, temperature: float, seed: int) -> None:
        self.solver, self.temperature, self.seed, self.calls = solver, temperature, seed, 0

    def __call__(self, questions: list[str], k: int) -> list[list[str]]:
        self.calls += 1
        prompts = [carts.solver_prompt(q) for q in questions]
        return self.solver.sample(prompts, k, self.temperature, self.seed * 7919 + self.calls)


class Recorder:
    """Wraps a reward function: the mean reward of every call (one GRPO step)."""

    def __init__(self, reward: Callable[..., list[float]], before: Callable[..., Any] | None
                 = None) -> None:  # fmt: skip
        self.reward, self.before, self.means = reward, before, []
        self.__name__ = getattr(reward, "__name__", "reward")

    def __call__(self, prompts: Sequence[Any], completions: Sequence[Any],
                 **kwargs: Any) -> list[float]:  # fmt: skip
        texts = [c if isinstance(c, str) else c[-1]["content"] for c in completions]
        if self.before is not None:
            texts = self.before(texts)
        out = self.reward(list(prompts), texts, **kwargs)
        self.means.append(float(np.mean(out)))
        return out


class Coin:
    """The ``random`` arm's Solver reward: a 0/1 coin per completion, at step ``t`` with
    the ``coevolve`` arm's mean reward of its step ``t`` of the same iteration, drawn by
    the library's ``random_rewards`` (Spurious Rewards' random reward) from a seed that
    depends on the run's seed and the step only.

    (The pre-registered run of ``examples/r_zero`` drew this coin with NumPy; its JSON
    records the commit that reproduces it.)"""

    __name__ = "coin"

    def __init__(self, rates: Sequence[float], seed: int, backend: Any) -> None:
        self.rates = [float(r) for r in rates] or [0.0]
        self.seed, self.backend = int(seed), backend
        self.calls = 0

    def __call__(self, prompts: Sequence[Any], completions: Sequence[Any],
                 **kwargs: Any) -> list[float]:  # fmt: skip
        rate = self.rates[min(self.calls, len(self.rates) - 1)]
        key = (self.seed * 1_000_003 + 37 * 7919 + self.calls) % 2**31  # a 32-bit seed
        self.calls += 1
        mask = np.ones(len(completions), dtype=bool)
        return [float(x) for x in self.backend.run("random_rewards", key, mask, rate)]


def _library(role: Role) -> Any:
    return role.rewards.BACKEND


def _correct(replies: Sequence[Sequence[str]], answers: Sequence[int | None]) -> np.ndarray:
    """bool ``[B, n]``: which replies give the answer (``zero_text.group_answers`` of each
    row with the answer appended; a missing answer is an empty box, equal to nothing)."""
    rows = [[*r, carts.answer_text(a) or "\\boxed{}"] for r, a in zip(replies, answers,
                                                                     strict=True)]  # fmt: skip
    ids, _ = zero_text.group_answers(rows)
    has = np.array([a is not None for a in answers])
    return (ids[:, :-1] == ids[:, -1:]) & has[:, None]


def evaluate(solver: Role, eval_set: Sequence[carts.Cart], s: Settings, seed: int
             ) -> dict[str, float]:  # fmt: skip
    """Greedy accuracy and sampled pass@1 (``eval_samples`` at ``temperature``) on the
    frozen carts, pooled and per kind, by the library's ``pass_at_k``."""
    lib = _library(solver)
    prompts = [carts.solver_prompt(carts.question_text(c)) for c in eval_set]
    answers = [carts.truth(c) for c in eval_set]
    greedy = _correct(solver.sample(prompts, 1, None, seed), answers)
    sampled = _correct(solver.sample(prompts, s.eval_samples, s.temperature, seed + 1), answers)
    g = np.asarray(lib.run("pass_at_k", np.ascontiguousarray(greedy), 1), dtype=float)
    p = np.asarray(lib.run("pass_at_k", np.ascontiguousarray(sampled), 1), dtype=float)
    kinds = np.array([c.kind for c in eval_set])
    out = {"greedy": float(g.mean()), "pass@1": float(p.mean())}
    for k in carts.KINDS:
        out[f"greedy/{k}"] = float(g[kinds == k].mean())
        out[f"pass@1/{k}"] = float(p[kinds == k].mean())
    return out


def challenger_phase(challenger: Role, solver: Role, s: Settings, seed: int,
                     eval_keys: set[str]) -> dict[str, Any]:  # fmt: skip
    """GRPO on ``ChallengerReward`` against the frozen ``solver``; returns the per-step mean
    reward and the share of well-formed outputs (by the library's format gate)."""
    reward = challenger.rewards.ChallengerReward(
        VotingSolver(solver, s.vote_temperature, seed), s.challenger_generations,
        num_samples=s.votes, threshold=s.bleu_threshold)  # fmt: skip
    formed: list[float] = []

    def gate(texts: list[str]) -> list[str]:
        gated = _blank_outside(texts, eval_keys)
        formed.append(float(np.mean(zero_text.r_zero_challenger_format_ok(gated))))
        return gated

    rec = Recorder(reward, gate)
    prompts = [carts.challenger_prompt(k) for k in carts.KINDS] * s.challenger_steps
    challenger.train(prompts, {}, rec, prompts_per_step=len(carts.KINDS),
                     generations=s.challenger_generations, lr=s.challenger_lr,
                     temperature=s.temperature, seed=seed)  # fmt: skip
    return {"reward": rec.means, "well_formed": formed}


@dataclasses.dataclass
class Pool:
    """The dataset phase's questions (well-formed, not evaluation questions, distinct),
    their votes' labels and shares, and which the band kept."""

    questions: list[str]
    labels: list[str | None]
    shares: np.ndarray
    kept: np.ndarray
    truths: list[int | None]


def dataset_phase(challenger: Role, solver: Role, s: Settings, seed: int, eval_keys: set[str],
                  band: bool) -> tuple[Pool, dict[str, Any]]:  # fmt: skip
    """The Challenger writes ``pool`` outputs; the well-formed new questions are voted on by
    the frozen Solver; ``consensus`` labels them, ``curriculum_mask`` keeps the band."""
    lib = _library(solver)
    per = max(1, s.pool // len(carts.KINDS))
    texts = [t for row in challenger.sample([carts.challenger_prompt(k) for k in carts.KINDS],
                                            per, s.temperature, seed) for t in row]  # fmt: skip
    gated = _blank_outside(texts, eval_keys)
    formed = zero_text.r_zero_challenger_format_ok(gated)
    seen: dict[str, None] = {}
    for text, ok in zip(gated, formed, strict=True):
        if ok:
            seen.setdefault(carts.key(zero_text.extract_tag(text, "question") or ""), None)
    questions = list(seen)
    stats: dict[str, Any] = {"written": len(texts), "well_formed": float(np.mean(formed)),
                             "distinct": len(questions)}  # fmt: skip
    if not questions:
        empty = np.zeros(0)
        return Pool([], [], empty, empty.astype(bool), []), {**stats, "kept": 0}
    replies = solver.sample([carts.solver_prompt(q) for q in questions], s.votes,
                            s.vote_temperature, seed + 1)  # fmt: skip
    ids, num = zero_text.group_answers(replies)
    label_ids, shares = lib.run("consensus", ids, num)
    labels: list[str | None] = []  # the majority reply's box (None: no answer)
    for b, (row, lid) in enumerate(zip(replies, np.asarray(label_ids), strict=True)):
        inner = zero_text.extract_boxed(row[int(np.argmax(ids[b] == lid))])
        labels.append(None if inner is None else "\\boxed{" + inner + "}")
    answered = np.array([lab is not None for lab in labels])
    shares = np.asarray(shares, dtype=float)
    inside = np.asarray(lib.run("curriculum_mask", shares, s.band_low, s.band_high), bool)
    kept = answered & (inside if band else True)
    truths = carts.truths(questions)
    # diagnostics against the checker (never a training signal outside the truth arm)
    empty = "\\boxed{}"
    truth_rows = [[*r, carts.answer_text(t) or empty] for r, t in zip(replies, truths, strict=True)]
    tids, tnum = zero_text.group_answers(truth_rows)
    votes = lib.run("vote_metrics", np.ascontiguousarray(tids[:, :-1]),
                    np.ascontiguousarray(tids[:, -1]), tnum)  # fmt: skip
    pairs = zip(labels, truths, strict=True)
    correct_label = np.array([t is not None and lab == carts.answer_text(t) for lab, t in pairs])
    clusters, _ = zero_text.bleu_clusters(questions, threshold=s.bleu_threshold)
    hist, _ = np.histogram(shares[answered], bins=s.votes, range=(0.5 / s.votes, 1 + 0.5 /
                                                                   s.votes))  # fmt: skip
    stats.update(
        kept=int(kept.sum()),
        label_accuracy=float(votes.label_accuracy),
        label_accuracy_kept=float(correct_label[kept].mean()) if kept.any() else float("nan"),
        consistent=float(np.mean([t is not None for t in truths])),
        share_mean=float(shares[answered].mean()) if answered.any() else float("nan"),
        share_hist=hist.tolist(),
        clusters=int(np.unique(clusters).size),
        deduction=float(np.mean([q.count("?") == 0 for q in questions])),
        items=float(np.mean([(len(q.split("=")[0].split()) + 1) // 4 for q in questions])),
    )
    return Pool(questions, labels, shares, kept, truths), stats


def solver_phase(solver: Role, pool: Pool, s: Settings, seed: int, arm: str,
                 rates: Sequence[float] | None) -> dict[str, Any]:  # fmt: skip
    """GRPO on ``SolverReward`` against the frozen labels of the kept questions (the
    checker's answers in the ``truth`` arm; a coin in the ``random`` arm)."""
    if arm == "truth":
        pick = [i for i in np.flatnonzero(pool.kept) if pool.truths[i] is not None]
        labels = [carts.answer_text(pool.truths[i]) for i in pick]
    else:
        pick = list(np.flatnonzero(pool.kept))
        labels = [pool.labels[i] for i in pick]
    if not pick:
        return {"reward": [], "questions": 0}
    rng = np.random.default_rng([seed, 37, 3])
    order: list[int] = []
    while len(order) < s.solver_steps * s.solver_prompts:
        order.extend(rng.permutation(len(pick)).tolist())
    order = order[: s.solver_steps * s.solver_prompts]
    prompts = [carts.solver_prompt(pool.questions[pick[i]]) for i in order]
    columns = {"label": [labels[i] for i in order]}
    if arm == "random":
        reward: Callable[..., list[float]] = Coin(rates or [], seed, _library(solver))
    else:
        reward = solver.rewards.SolverReward(s.solver_generations, labels_column="label")
    rec = Recorder(reward)
    solver.train(prompts, columns, rec, prompts_per_step=s.solver_prompts,
                 generations=s.solver_generations, lr=s.solver_lr, temperature=s.temperature,
                 seed=seed)  # fmt: skip
    return {"reward": rec.means, "questions": len(pick)}


def iterate(arm: str, challenger: Role, solver: Role, s: Settings, seed: int, it: int,
            eval_set: Sequence[carts.Cart], rates: Sequence[float] | None
            ) -> dict[str, Any]:  # fmt: skip
    """One R-Zero iteration of ``arm``; both roles are changed in place."""
    eval_keys = {carts.key(carts.question_text(c)) for c in eval_set}
    step_seed = seed * 1000 + it * 10
    t0 = time.perf_counter()
    out: dict[str, Any] = {"iteration": it + 1}
    if arm != "fixed_challenger":
        out["challenger"] = challenger_phase(challenger, solver, s, step_seed, eval_keys)
    t1 = time.perf_counter()
    pool, out["dataset"] = dataset_phase(challenger, solver, s, step_seed + 1, eval_keys,
                                         band=arm != "no_band")  # fmt: skip
    t2 = time.perf_counter()
    out["solver"] = solver_phase(solver, pool, s, step_seed + 2, arm, rates)
    t3 = time.perf_counter()
    out["eval"] = evaluate(solver, eval_set, s, step_seed + 3)
    out["seconds"] = {
        "challenger": round(t1 - t0, 1),
        "dataset": round(t2 - t1, 1),
        "solver": round(t3 - t2, 1),
        "eval": round(time.perf_counter() - t3, 1),
    }
    return out


def run_arms(challenger: Role, solver: Role, s: Settings, seed: int, arms: Sequence[str],
             log: Callable[[str], None] = print) -> dict[str, Any]:  # fmt: skip
    """Every arm from copies of the same warm-started ``challenger`` and ``solver``:
    ``s.iterations`` iterations each, evaluated on the seed's frozen carts before the
    first and after every iteration.  ``random`` runs after ``coevolve`` (it copies its
    reward rates) and needs it."""
    unknown = [a for a in arms if a not in ARMS]
    if unknown:
        raise ValueError(f"arms must be among {ARMS}, got {unknown}")
    if "random" in arms and "coevolve" not in arms:
        raise ValueError("the random arm copies the coevolve arm's reward rates: run both")
    arms = [a for a in ARMS if a in arms]
    eval_set = carts.eval_carts(seed, s.eval_per_kind)
    start = time.perf_counter()
    warm = evaluate(solver, eval_set, s, seed * 1000 + 999)
    log(f"seed {seed}: warm start greedy {warm['greedy']:.3f} pass@1 {warm['pass@1']:.3f}")
    out: dict[str, Any] = {"seed": seed, "warm": warm, "arms": {}}
    for arm in arms:
        c, v = challenger.copy(), solver.copy()
        its = []
        for it in range(s.iterations):
            rates = (out["arms"]["coevolve"][it]["solver"]["reward"] if arm == "random"
                     else None)  # fmt: skip
            rec = iterate(arm, c, v, s, seed, it, eval_set, rates)
            its.append(rec)
            d, e = rec["dataset"], rec["eval"]
            ch = rec.get("challenger", {}).get("reward", [])
            log(f"  seed {seed} {arm:<16} it {it + 1}: greedy {e['greedy']:.3f} pass@1 "
                f"{e['pass@1']:.3f} | pool {d['distinct']} kept {d['kept']} label acc "
                f"{d.get('label_accuracy', float('nan')):.2f} share "
                f"{d.get('share_mean', float('nan')):.2f} | challenger reward "
                f"{np.mean(ch[-5:]) if ch else float('nan'):.3f} | {rec['seconds']}")  # fmt: skip
        out["arms"][arm] = its
    out["seconds"] = round(time.perf_counter() - start, 1)
    return out
