"""The R-Zero loop (zero_stacks.r_zero): the cart domain, every number from the library
(spies on fake roles), and a smoke run of every arm inside TRL and inside Tunix."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

import zero_jax
import zero_torch
from zero_stacks import trl as ztrl
from zero_stacks import tunix as ztunix
from zero_stacks.r_zero import ARMS, Settings, carts, loop, run_arms

ROOT = Path(__file__).resolve().parents[1]

# ------------------------------------------------------------------ the domain


def test_parse_and_truth_on_known_questions():
    c = carts.parse("3 x 4 + 2 x 1")
    assert c == carts.Cart(((3, 4), (2, 1))) and carts.truth(c) == 14
    a = carts.parse("3 x ? + 2 x 1 = 14")
    assert a is not None and a.hidden == (0, 1) and carts.truth(a) == 4
    assert carts.truth(carts.parse("? x 4 = 36")) == 9
    # consistent in shape, but no quantity in 1..4 makes 3 x q = 13: well formed, no truth
    inconsistent = carts.parse("3 x ? = 13")
    assert inconsistent is not None and carts.truth(inconsistent) is None
    for bad in ["", "3 x", "3 x 4 +", "3 x 4 = 12", "? x ? = 4", "10 x 1", "3 x 5", "0 x 1",
                "3 x 4 + 1 x 1 + 1 x 1 + 1 x 1", "3 + 4", "3 x 4 x 2", "? x 4", "3 x ? = 999",
                "3 x 4 + x 1"]:  # fmt: skip
        assert carts.parse(bad) is None, bad
    assert carts.parse(None) is None


def test_question_text_round_trips_and_prompts_have_one_width():
    rng = np.random.default_rng(0)
    widths = set()
    for _ in range(300):
        cart = carts.draw(rng, carts.KINDS[int(rng.integers(2))])
        q = carts.question_text(cart)
        assert carts.parse(q) == cart and carts.truth(cart) is not None
        widths.add(len(carts.solver_prompt(q).split()))
        out = carts.challenger_text(cart)
        assert carts.questions_of([out]) == [q]
    assert widths == {carts.QUESTION_WIDTH + 1}
    tok = carts.tokenizer()
    ids = tok(carts.solver_prompt("3 x 4"))["input_ids"]
    assert ids[0] == 1 and 0 not in ids  # <s> first, every word known (none is <pad>)


def test_eval_carts_are_frozen_per_seed_and_generated_copies_are_blanked():
    a, b = carts.eval_carts(5, 32), carts.eval_carts(5, 32)
    assert a == b and a != carts.eval_carts(6, 32)
    keys = [carts.question_text(c) for c in a]
    assert len(set(keys)) == 64 and [c.kind for c in a] == ["deduction"] * 32 + ["abduction"] * 32
    copy = carts.challenger_text(a[3])
    fresh = "<question> 1 x 1 + 1 x 1 + 1 x 1 </question> \\boxed{3}"
    assert carts.key(carts.questions_of([fresh])[0] or "") not in set(keys)  # a fresh cart
    gated = loop._blank_outside([copy, fresh, "<question> 3 x </question> \\boxed{1}"], set(keys))
    assert gated == ["", fresh, ""]


def test_settings_refuse_fewer_than_four_votes():
    with pytest.raises(ValueError, match="votes"):
        Settings(votes=2)
    with pytest.raises(ValueError, match="random"):
        run_arms(None, None, Settings(), 0, ["random"])  # type: ignore[arg-type]


# ------------------------------------------------------------------ fake roles and spies


class FakeRole:
    """A role without a model: seeded replies; ``train`` feeds the reward GRPO-shaped
    batches and keeps what it returned."""

    def __init__(self, rewards, kind: str, seed: int = 0) -> None:
        self.rewards, self.kind = rewards, kind
        self.rng = np.random.default_rng(seed)
        self.trained: list[list[float]] = []
        self.columns: list[dict] = []

    def reply(self) -> str:
        r = self.rng.random()
        if self.kind == "solver":
            return "no answer" if r < 0.1 else f"\\boxed{{{int(self.rng.integers(3))}}}"
        if r < 0.15:
            return "<question> 3 x </question> \\boxed{1}"  # not a cart
        cart = carts.draw(self.rng, carts.KINDS[int(self.rng.integers(2))], items=1)
        return carts.challenger_text(cart)

    def sample(self, prompts, n, temperature, seed):
        return [[self.reply() for _ in range(n)] for _ in prompts]

    def train(self, prompts, columns, reward, *, prompts_per_step, generations, lr,
              temperature, seed):  # fmt: skip
        for t in range(len(prompts) // prompts_per_step):
            rows = range(t * prompts_per_step, (t + 1) * prompts_per_step)
            batch = [prompts[i] for i in rows for _ in range(generations)]
            cols = {k: [v[i] for i in rows for _ in range(generations)] for k, v in
                    columns.items()}  # fmt: skip
            if self.kind == "solver":  # every reply answers, so SolverReward gates no group
                texts = [f"\\boxed{{{int(self.rng.integers(3))}}}" for _ in batch]
            else:
                texts = [self.reply() for _ in batch]
            self.trained.append(reward(batch, texts, **cols))
            self.columns.append(cols)

    def copy(self):
        return self


LIBS = [(ztrl, zero_torch, "torch"), (ztunix, zero_jax, "jax")]


class Spies:
    """Each library function the loop reaches replaced by one returning random values of
    the real shape (after the real call, which must accept the arguments)."""

    NAMES = ("consensus", "curriculum_mask", "challenger_rewards", "pseudo_rewards",
             "pass_at_k", "vote_metrics")  # fmt: skip

    def __init__(self, lib, monkeypatch) -> None:
        self.lib, self.out = lib, {n: [] for n in self.NAMES}
        self.rng = np.random.default_rng(99)
        for name in self.NAMES:
            monkeypatch.setattr(lib, name, self.fake(name, getattr(lib, name)))

    def fake(self, name, real):
        def fn(*args, **kwargs):
            got = real(*args, **kwargs)
            if name == "consensus":
                labels = np.asarray(got[0])
                fake = (self.rng.integers(0, int(args[1]), labels.shape).astype(labels.dtype),
                        self.rng.random(labels.shape).astype(np.float32))  # fmt: skip
            elif name == "curriculum_mask":
                fake = self.rng.random(np.asarray(got).shape) < 0.5
            elif name == "vote_metrics":
                fake = type(got)(*(np.float32(self.rng.random()) for _ in got))
                self.out[name].append(fake)
                return type(got)(*(_array(self.lib, v) for v in fake))
            else:
                fake = self.rng.random(np.asarray(got).shape).astype(np.float32)
            self.out[name].append(fake)
            if isinstance(fake, tuple):
                return tuple(_array(self.lib, v) for v in fake)
            return _array(self.lib, fake)

        return fn


def _array(lib, value):
    if lib is zero_torch:
        import torch

        return torch.as_tensor(np.asarray(value))
    import jax.numpy as jnp

    return jnp.asarray(value)


SPY_SETTINGS = Settings(iterations=1, challenger_steps=3, challenger_generations=4, votes=4,
                        pool=24, solver_steps=3, solver_prompts=2, solver_generations=4,
                        eval_per_kind=4, eval_samples=2)  # fmt: skip


@pytest.mark.parametrize("rewards,lib", [(r, lib) for r, lib, _ in LIBS],
                         ids=[n for *_, n in LIBS])  # fmt: skip
def test_every_reward_and_vote_is_one_the_library_returned(rewards, lib, monkeypatch):
    spies = Spies(lib, monkeypatch)
    s = SPY_SETTINGS
    challenger, solver = FakeRole(rewards, "challenger", 1), FakeRole(rewards, "solver", 2)
    eval_set = carts.eval_carts(0, s.eval_per_kind)
    keys = {carts.key(carts.question_text(c)) for c in eval_set}

    # challenger phase: each step's rewards are challenger_rewards' output, as returned
    loop.challenger_phase(challenger, solver, s, 0, keys)
    assert len(challenger.trained) == s.challenger_steps
    for got, fake in zip(challenger.trained, spies.out["challenger_rewards"], strict=True):
        np.testing.assert_array_equal(np.float32(got), np.asarray(fake, np.float32).ravel())
    # the votes behind them: one consensus call per step whose questions were well formed
    assert 0 < len(spies.out["consensus"]) <= s.challenger_steps

    # dataset phase: shares and labels from consensus, kept from curriculum_mask
    spies.out["consensus"].clear()
    pool, stats = loop.dataset_phase(challenger, solver, s, 1, keys, band=True)
    (labels, shares), = spies.out["consensus"]  # fmt: skip
    np.testing.assert_array_equal(pool.shares, shares)
    answered = np.array([lab is not None for lab in pool.labels])
    np.testing.assert_array_equal(pool.kept, answered & spies.out["curriculum_mask"][-1])
    assert stats["label_accuracy"] == pytest.approx(spies.out["vote_metrics"][-1].label_accuracy)
    assert pool.kept.any()

    # solver phase: every step's rewards are pseudo_rewards' output (frozen labels)
    before = len(spies.out["pseudo_rewards"])
    loop.solver_phase(solver, pool, s, 2, "coevolve", None)
    fakes = spies.out["pseudo_rewards"][before:]
    assert len(solver.trained) == s.solver_steps == len(fakes)
    for got, fake in zip(solver.trained, fakes, strict=True):
        np.testing.assert_array_equal(np.float32(got), np.asarray(fake, np.float32).ravel())
    kept_labels = {pool.labels[i] for i in np.flatnonzero(pool.kept)}
    assert {lab for cols in solver.columns for lab in cols["label"]} <= kept_labels

    # evaluation: the accuracies are the means of pass_at_k's outputs
    before = len(spies.out["pass_at_k"])
    e = loop.evaluate(solver, eval_set, s, 3)
    greedy, sampled = spies.out["pass_at_k"][before:]
    assert e["greedy"] == pytest.approx(float(np.mean(greedy)))
    assert e["pass@1"] == pytest.approx(float(np.mean(sampled)))


def test_truth_arm_trains_on_the_checker_and_random_on_the_coin(monkeypatch):
    s = SPY_SETTINGS
    solver = FakeRole(ztrl, "solver", 2)
    questions = ["3 x 4", "3 x ? = 13", "2 x 2"]
    pool = loop.Pool(questions, ["\\boxed{0}"] * 3, np.full(3, 0.5), np.array([True] * 3),
                     carts.truths(questions))  # fmt: skip
    loop.solver_phase(solver, pool, s, 0, "truth", None)
    seen = {lab for cols in solver.columns for lab in cols["label"]}
    assert seen <= {"\\boxed{12}", "\\boxed{4}"} and seen  # the inconsistent one is dropped
    coin = FakeRole(ztrl, "solver", 3)
    out = loop.solver_phase(coin, pool, s, 0, "random", [0.0, 1.0, 0.0])
    assert coin.trained[0] == [0.0] * 8 and coin.trained[1] == [1.0] * 8
    assert out["reward"] == [0.0, 1.0, 0.0]


def test_every_arm_runs_on_fake_roles():
    s = SPY_SETTINGS
    rec = run_arms(FakeRole(ztrl, "challenger", 1), FakeRole(ztrl, "solver", 2), s, 0, ARMS,
                   log=lambda x: None)  # fmt: skip
    assert list(rec["arms"]) == list(ARMS)
    assert "challenger" not in rec["arms"]["fixed_challenger"][0]
    assert all("challenger" in rec["arms"][a][0] for a in ARMS if a != "fixed_challenger")


# ------------------------------------------------------------------ the stacks


@pytest.mark.parametrize("stack", ["trl", "tunix"])
def test_every_arm_runs_a_few_steps_inside_the_stack(stack, tmp_path):
    """The command line in a fresh process (JAX's default x64 off, as users run it; the
    reused Tunix model of examples/ttrl indexes its cache with int32 and fails under x64)."""
    import os
    import subprocess

    needs = {"trl": ("torch", "trl"), "tunix": ("tunix", "flax")}[stack]
    for module in needs:
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed (the [{stack}] extra)")
    out = tmp_path / "run.json"
    argv = [sys.executable, str(ROOT / "examples/r_zero/r_zero.py"), "--stack", stack,
            "--smoke", "--seeds", "1", "--json", str(out), "--quiet"]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k != "JAX_ENABLE_X64"}
    done = subprocess.run(argv, cwd=ROOT, env={**env, "PYTHONPATH": str(ROOT),
                                               "TMPDIR": str(tmp_path)},
                          capture_output=True, text=True, timeout=900)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert not list(tmp_path.glob("r-zero-xla-*"))  # Tunix's compile cache goes at exit
    record = json.loads(out.read_text())
    assert record["arms"] == list(ARMS) and record["stack"] == stack
    seed = record["seeds"][0]
    for arm in ARMS:
        (it,) = seed["arms"][arm]
        assert 0 <= it["eval"]["greedy"] <= 1 and 0 <= it["eval"]["pass@1"] <= 1
        if arm != "fixed_challenger":
            rewards = it["challenger"]["reward"]
            assert len(rewards) == 2 and all(0 <= r <= 1 for r in rewards)
        assert it["dataset"]["written"] == 16
    assert record["provenance"]["git_revision"]


# ------------------------------------------------------------------ the README section


def _readme_commands() -> list[str]:
    """The shell lines of the ``bash`` blocks of examples/r_zero/README.md's first section
    ("R-Zero end to end"), which the lead copies into the project README."""
    text = (ROOT / "examples/r_zero/README.md").read_text(encoding="utf-8")
    section = text.split("\n## ")[0] if text.startswith("## ") else text.split("\n## ")[1]
    commands = []
    for block in section.split("```bash\n")[1:]:
        body = block.split("```")[0]
        commands += [line for line in body.splitlines() if line.strip()]
    return commands


def test_readme_section_runs_as_written(tmp_path):
    """Every command of the section, as written, from a checkout (the CPU smoke sizes)."""
    import os
    import shlex
    import subprocess

    if importlib.util.find_spec("trl") is None:
        pytest.skip("trl is not installed (the [trl] extra)")
    commands = _readme_commands()
    assert commands and all(c.startswith("python ") for c in commands)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for command in commands:
        args = [a.replace("/tmp/", f"{tmp_path}/") for a in shlex.split(command)[1:]]
        argv = [sys.executable, *args]  # the interpreter may itself live under /tmp
        done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=600)  # fmt: skip
        assert done.returncode == 0, f"{command}\n{done.stderr[-2000:]}"


def test_no_warm_start_cart_is_held_out():
    """The warm start's labelled carts avoid the held-out quarter every evaluation set
    comes from, so no seed's evaluation cart is trained on."""
    sys.path.insert(0, str(ROOT / "examples/r_zero"))
    import models

    labelled = {carts.question_text(c) for c in models.labelled_carts(0, 2000)}
    assert not any(carts.held_out(carts.parse(q)) for q in labelled)
    for seed in (0, 300):
        evals = carts.eval_carts(seed, 64)
        assert all(carts.held_out(c) for c in evals)
        assert not labelled & {carts.question_text(c) for c in evals}


# ------------------------------------------------------------------ the Solver phase


@pytest.mark.parametrize("stack", ["trl", "tunix"])
def test_the_solver_phase_trains_the_solver_on_labelled_questions(stack):
    """The smoke run's tiny Challenger writes no well-formed question, so its Solver phase
    has an empty pool: here the warm-started Solver (TRL's GRPOTrainer, Tunix's GRPOLearner)
    trains on a pool of carts (labels the majority's, the checker's, or a coin) through
    ``solver_phase``, as the loop calls it, and each step's reward comes back. x64 is on
    here (the suite's default; the smoke runs have it off): the Tunix model's cache write
    once mixed int64 and int32 indices there."""
    pytest.importorskip(stack, reason=f"needs the [{stack}] extra (CI installs it)")
    sys.path.insert(0, str(ROOT / "examples" / "r_zero"))
    try:
        import models
        from r_zero import SMOKE
    finally:
        sys.path.remove(str(ROOT / "examples" / "r_zero"))
    import dataclasses

    cfg = dataclasses.replace(models.ModelConfig(), **SMOKE["model"])
    s = dataclasses.replace(Settings(), **SMOKE["settings"])
    _, solver = models.warm_roles(stack, cfg)
    questions = [carts.question_text(c) for c in carts.eval_carts(7, 2)]
    truths = carts.truths(questions)
    labels = [carts.answer_text(t) for t in truths]
    kept = np.array([t is not None for t in truths])
    assert kept.any()
    pool = loop.Pool(questions, labels, np.full(len(questions), 0.5), kept, truths)
    for arm, rates in (("coevolve", None), ("truth", None), ("random", [0.5] * s.solver_steps)):
        out = loop.solver_phase(solver, pool, s, 5, arm, rates)
        assert out["questions"] == int(kept.sum()), arm
        assert len(out["reward"]) == s.solver_steps, (arm, out)
        assert all(0 <= r <= 1 for r in out["reward"]), (arm, out)
