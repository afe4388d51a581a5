"""The README's runnable examples produce the values the seed formulas give."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import jax.numpy as jnp
import numpy as np
import pytest

from . import cases as oracle

ROOT = Path(__file__).resolve().parents[1]


def load(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_end_to_end_strings_to_advantages():
    out = load("end_to_end").run()
    # Facts of the shipped batch, readable in the fixture itself.
    assert out["clusters"][0] == out["clusters"][1]  # the two near-duplicate questions
    assert len(set(out["clusters"].tolist())) == 7
    assert out["valid"].tolist() == [True] * 7 + [False]  # output 7 never closes <question>
    assert out["consistency"][6] == 1.0  # every reply to question 6 agrees
    # Every number equals the independent oracle on the same ids.
    labels, p = oracle.consensus(out["answer_ids"])
    np.testing.assert_array_equal(out["labels"], labels)
    np.testing.assert_array_equal(out["consistency"], p)
    np.testing.assert_allclose(
        out["challenger_rewards"],
        oracle.challenger_rewards(p, out["clusters"], out["valid"]),
        atol=1e-6,
    )
    np.testing.assert_array_equal(out["band"], oracle.curriculum_mask(p))
    rewards = oracle.pseudo_rewards(out["answer_ids"], labels)
    np.testing.assert_array_equal(out["pseudo_rewards"], rewards)
    train = out["band"] & out["valid"]
    mean = rewards.mean(1, keepdims=True)
    std = rewards.std(1, ddof=1, keepdims=True)
    expected = np.where(train[:, None], (rewards - mean) / (std + 1e-6), 0.0)
    np.testing.assert_allclose(out["advantages"], expected, atol=1e-5)


def test_end_to_end_with_math_equivalence_groups_more():
    pytest.importorskip("math_verify", reason="math equivalence needs the math extra")
    exact = load("end_to_end").run()
    math = load("end_to_end").run("math")
    # 15, \$15 and 15.00 are one answer under math equivalence, three strings otherwise.
    assert exact["consistency"][0] == 0.4 and math["consistency"][0] == 0.8


def test_jit_optax_step_rewards_and_update():
    ex = load("jit_optax_step")
    logits = jnp.zeros(ex.NUM_TEMPLATES)
    state = ex.optimizer.init(logits)
    templates = jnp.array([0, 0, 1, 2, 3, 4, 5, 5])
    answers = jnp.array(
        [[1, 1, 2, 2, 0], [0] * 5, [1, 2, 3, 1, 1], [4, 4, 5, 5, 6]] + [[0, 1, 0, 1, 0]] * 4
    )
    valid = jnp.array([True] * 6 + [False, True])
    new_logits, _, rewards = ex.update(logits, state, templates, answers, valid)
    _, p = oracle.consensus(np.asarray(answers))
    want = oracle.challenger_rewards(p, np.asarray(templates), np.asarray(valid))
    np.testing.assert_allclose(rewards, want, atol=1e-12)
    # One SGD step from zero logits: d loss / d logits = -mean_i A_i (e_{t_i} - 1/6).
    adv = (want - want.mean()) / (want.std(ddof=1) + 1e-6)
    onehot = np.eye(ex.NUM_TEMPLATES)[np.asarray(templates)]
    grad = -np.mean(adv[:, None] * (onehot - 1 / ex.NUM_TEMPLATES), axis=0)
    np.testing.assert_allclose(new_logits, -0.5 * grad, atol=1e-12)


def test_examples_run_as_scripts():
    for name in ("end_to_end", "jit_optax_step"):
        out = subprocess.run(
            [sys.executable, str(ROOT / "examples" / f"{name}.py")],
            capture_output=True,
            text=True,
            cwd=ROOT,
        )
        assert out.returncode == 0, out.stderr[-2000:]
