"""The Lab: every lab passes on both backends with identical trajectories, and
deliberately wrong reward functions make it fail (the evidence that it checks
something); the CLI runs end to end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jax.numpy as jnp
import numpy as np
import pytest

import zero_jax
from zero_lab import (
    FUNCTION_NAMES,
    LABS,
    MIN_GAIN,
    PASS_PROB,
    LabResult,
    cli,
    get_lab,
    padded,
)
from zero_lab import jax_backend as jax_lab

ROOT = Path(__file__).resolve().parents[1]
NAMES = list(LABS)


# --------------------------------------------------------------------------- mistakes
# Each builder receives the array namespace (jax.numpy or torch), the package whose
# functions it may reuse (zero_jax or zero_torch) and returns replacements for
# ``run(..., functions=...)``.  Written once for both backends.


def _f64(xp, x):
    return xp.asarray(x, dtype=xp.float64)


def _sizes(xp, clusters, weight):
    """Cluster size of each row, counting only the rows where ``weight`` is True."""
    return ((clusters[:, None] == clusters[None, :]) & weight[None, :]).sum(-1)


def _counts(xp, answers, num_answers):
    return (answers[..., None] == xp.arange(num_answers)).sum(-2)


def _largest_id_consensus(xp):
    def consensus(answers, num_answers):
        counts = _counts(xp, answers, num_answers)
        labels = num_answers - 1 - xp.argmax(xp.flip(counts, (-1,)), -1)
        return labels, _f64(xp, xp.amax(counts, -1)) / answers.shape[-1]

    return consensus


def _challenger_with(xp, uncertainty, valid_only=False, gate=True):
    def challenger_rewards(c, clusters, valid, strength=1.0):
        weight = valid if valid_only else xp.ones_like(valid)
        share = _f64(xp, _sizes(xp, clusters, weight)) / _f64(xp, weight.sum())
        r = uncertainty(c) - strength * share
        r = xp.where(r > 0, r, 0.0)
        return r * valid if gate else r

    return challenger_rewards


def _triangle(c):
    return 1 - 2 * abs(c - 0.5)


CHALLENGER_MISTAKES = {
    "no format gate": lambda xp, pkg: {
        "challenger_rewards": _challenger_with(xp, _triangle, gate=False)
    },
    "clusters counted among valid rows only": lambda xp, pkg: {
        "challenger_rewards": _challenger_with(xp, _triangle, valid_only=True)
    },
    "no repetition penalty": lambda xp, pkg: {
        "challenger_rewards": lambda c, k, v, s=1.0: pkg.challenger_rewards(c, k, v, 0.0)
    },
    "p instead of the triangle (both functions)": lambda xp, pkg: {
        "uncertainty_reward": lambda c: c,
        "challenger_rewards": _challenger_with(xp, lambda c: c),
    },
    "p instead of the triangle (uncertainty_reward only)": lambda xp, pkg: {
        "uncertainty_reward": lambda c: c
    },
    "p instead of the triangle (challenger_rewards only)": lambda xp, pkg: {
        "challenger_rewards": _challenger_with(xp, lambda c: c)
    },
    "difficulty 1 - p instead of the triangle": lambda xp, pkg: {
        "uncertainty_reward": lambda c: 1 - c,
        "challenger_rewards": _challenger_with(xp, lambda c: 1 - c),
    },
}

PSEUDO_MISTAKES = {
    "labels refreshed from fresh answers": lambda xp, pkg: {
        "pseudo_rewards": lambda a, labels: pkg.pseudo_rewards(a, pkg.consensus(a, 10)[0])
    },
    "exclusive band": lambda xp, pkg: {
        "curriculum_mask": lambda c, low=0.25, high=0.75: (c > low) & (c < high)
    },
    "band [0.3, 0.8]": lambda xp, pkg: {
        "curriculum_mask": lambda c, low=0.25, high=0.75: pkg.curriculum_mask(c, 0.3, 0.8)
    },
    "no band": lambda xp, pkg: {"curriculum_mask": lambda c, low=0.25, high=0.75: c >= 0},
    "ties to the largest id": lambda xp, pkg: {"consensus": _largest_id_consensus(xp)},
}


def _other_reply(xp, pkg):
    own, _ = padded(get_lab("proposer"), "own_logp")
    return {"hint_delta": lambda b, h, m: pkg.hint_delta(b, _f64(xp, own), m)}


PROPOSER_MISTAKES = {
    "no length penalty": lambda xp, pkg: {
        "proposer_rewards": lambda d, n, s, v: pkg.proposer_rewards(d, 0 * n, s, v)
    },
    "no cluster penalty": lambda xp, pkg: {
        "proposer_rewards": lambda d, n, s, v: pkg.proposer_rewards(d, n, 0 * s, v)
    },
    "invalid proposals keep delta and length": lambda xp, pkg: {
        "proposer_rewards": lambda d, n, s, v: pkg.proposer_rewards(d, n, s, v | True) - 1.0 * ~v
    },
    "length in tokens (chars // 4)": lambda xp, pkg: {
        "proposer_rewards": lambda d, n, s, v: pkg.proposer_rewards(d, n // 4, s, v)
    },
    "delta sign flipped": lambda xp, pkg: {"hint_delta": lambda b, h, m: pkg.hint_delta(h, b, m)},
    "mask ignored": lambda xp, pkg: {"hint_delta": lambda b, h, m: (b - h).mean(-1)},
    "sum instead of mean": lambda xp, pkg: {
        "hint_delta": lambda b, h, m: xp.where(m, b - h, 0.0).sum(-1)
    },
    "hinted side scored on a different reply": _other_reply,
}


def _coder_with(xp, difficulty):
    def coder_rewards(e, s, c, x):
        return xp.where(e, 1 + s + difficulty(c), -0.1) - 0.05 * x

    return coder_rewards


CODER_MISTAKES = {
    "easy accuracy capped at 0.5": lambda xp, pkg: {
        "coder_rewards": lambda e, s, c, x: pkg.coder_rewards(e, xp.where(s > 0.5, 0.5, s), c, x)
    },
    "binary difficulty 1[0 < c < 1]": lambda xp, pkg: {
        "coder_rewards": _coder_with(xp, lambda c: 1.0 * ((c > 0) & (c < 1)))
    },
    "raw consistency as difficulty": lambda xp, pkg: {
        "coder_rewards": _coder_with(xp, lambda c: c)
    },
    "no syntax penalty": lambda xp, pkg: {
        "coder_rewards": lambda e, s, c, x: pkg.coder_rewards(e, s, c, x & False)
    },
}


def _solver_with(xp, formatted_only=False, largest=False):
    def solver_rewards(answers, fmt, num_answers, alpha=0.9):
        onehot = answers[..., None] == xp.arange(num_answers)
        counts = onehot.sum(-2)
        if formatted_only:
            counts = xp.where(fmt.any(-1)[:, None], (onehot & fmt[..., None]).sum(-2), counts)
        if largest:
            labels = num_answers - 1 - xp.argmax(xp.flip(counts, (-1,)), -1)
        else:
            labels = xp.argmax(counts, -1)
        agree = _f64(xp, answers == labels[:, None])
        return alpha * agree + (1 - alpha) * _f64(xp, fmt)

    return solver_rewards


SOLVER_MISTAKES = {
    "format as a gate": lambda xp, pkg: {
        "solver_rewards": lambda a, f, n, alpha=0.9: pkg.solver_rewards(a, f, n, alpha) * f
    },
    "ties to the largest id": lambda xp, pkg: {"solver_rewards": _solver_with(xp, largest=True)},
    "majority over formatted answers only": lambda xp, pkg: {
        "solver_rewards": _solver_with(xp, formatted_only=True)
    },
    "alpha on format instead of agreement": lambda xp, pkg: {
        "solver_rewards": lambda a, f, n, alpha=0.9: pkg.solver_rewards(a, f, n, 1 - alpha)
    },
}

MISTAKES = {
    "challenger": CHALLENGER_MISTAKES,
    "pseudo_labels": PSEUDO_MISTAKES,
    "proposer": PROPOSER_MISTAKES,
    "coder": CODER_MISTAKES,
    "solver": SOLVER_MISTAKES,
}
CASES = [(lab, m) for lab, ms in MISTAKES.items() for m in ms]


# --------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def jax_results() -> dict[str, LabResult]:
    return {name: jax_lab.run(name) for name in NAMES}


@pytest.fixture(scope="module")
def torch_backend():
    pytest.importorskip("torch", reason="the PyTorch twin needs torch (extra 'torch')")
    import torch

    import zero_torch
    from zero_lab import torch_backend

    return torch, zero_torch, torch_backend


@pytest.fixture(scope="module")
def torch_results(torch_backend) -> dict[str, LabResult]:
    return {name: torch_backend[2].run(name) for name in NAMES}


# --------------------------------------------------------------------------- passing
def test_the_five_labs_use_reward_functions_of_the_papers():
    assert NAMES == ["challenger", "pseudo_labels", "proposer", "coder", "solver"]
    used = {f for lab in LABS.values() for f in lab.functions}
    # FUNCTION_NAMES: the contract table's functions of the R-Zero, G-Zero and MM-Zero
    # modules (a Lab for a new reward is optional, see CONTRIBUTING.md).
    assert used <= set(FUNCTION_NAMES)
    assert len(used) == 9 and "group_advantages" not in FUNCTION_NAMES
    for lab in LABS.values():
        assert all(rec["meaning"] for rec in lab.records)
        assert 0 <= lab.target < lab.num_actions
        assert lab.answer and lab.question and lab.description


@pytest.mark.parametrize("name", NAMES)
def test_lab_passes_on_jax(jax_results, name):
    res = jax_results[name]
    n = get_lab(name).num_actions
    assert res.probs.shape == (61, n) and res.probs.dtype == np.float64
    np.testing.assert_allclose(res.probs[0], np.full(n, 1 / n), rtol=0, atol=1e-15)
    np.testing.assert_allclose(res.probs.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert res.p_final > PASS_PROB and res.gain > MIN_GAIN and res.passed, res


@pytest.mark.parametrize("name", NAMES)
def test_lab_passes_on_torch(torch_results, name):
    res = torch_results[name]
    assert res.probs.shape == (61, get_lab(name).num_actions)
    assert res.passed, res


@pytest.mark.parametrize("name", NAMES)
def test_jax_and_torch_trajectories_agree(jax_results, torch_results, name):
    np.testing.assert_allclose(
        jax_results[name].probs, torch_results[name].probs, rtol=0, atol=1e-10
    )


def test_target_rewards_by_hand():
    """The target's reward, read off the records with pencil and paper."""
    r = {name: jax_lab.rewards(name) for name in NAMES}
    assert r["challenger"][2] == pytest.approx(1 - 1 / 8)  # u = 1, unique among 8
    assert r["pseudo_labels"][2] == pytest.approx(1.0)  # every kept question matched
    assert r["proposer"][3] == pytest.approx(1.0 - 0.1)  # delta 1, short hint, share .1
    assert r["coder"][4] == pytest.approx(1 + 1.0 + 0.4)  # renders, easy 1, c = .4
    assert r["solver"][1] == pytest.approx(0.9 + 0.1 / 5)  # always agrees, 1/5 formatted
    for name in NAMES:  # and it is the unique best action
        lab = get_lab(name)
        others = np.delete(r[name], lab.target)
        assert r[name][lab.target] > others.max()


# --------------------------------------------------------------------------- failing
@pytest.mark.parametrize("name", NAMES)
def test_every_lab_has_at_least_two_mistakes(name):
    assert len(MISTAKES[name]) >= 2


@pytest.mark.parametrize(("name", "mistake"), CASES)
def test_mistake_fails_on_jax(name, mistake):
    res = jax_lab.run(name, functions=MISTAKES[name][mistake](jnp, zero_jax))
    assert not res.passed, f"{name} passed despite: {mistake} (p_final {res.p_final:.3f})"


@pytest.mark.parametrize(("name", "mistake"), CASES)
def test_mistake_fails_on_torch(torch_backend, name, mistake):
    torch, zero_torch, torch_lab = torch_backend
    res = torch_lab.run(name, functions=MISTAKES[name][mistake](torch, zero_torch))
    assert not res.passed, f"{name} passed despite: {mistake} (p_final {res.p_final:.3f})"


def test_functions_accepts_a_module_or_a_partial_mapping(jax_results):
    same = jax_lab.run("challenger", functions=zero_jax)
    np.testing.assert_array_equal(same.probs, jax_results["challenger"].probs)
    partial = jax_lab.run("coder", functions={"coder_rewards": zero_jax.coder_rewards})
    np.testing.assert_array_equal(partial.probs, jax_results["coder"].probs)


def test_bad_arguments_raise_value_error():
    with pytest.raises(ValueError, match="unknown lab 'nope'"):
        jax_lab.run("nope")
    with pytest.raises(ValueError, match="unknown names"):
        jax_lab.run("solver", functions={"solver_reward": zero_jax.solver_rewards})
    with pytest.raises(ValueError, match="steps"):
        jax_lab.run("solver", steps=-1)
    with pytest.raises(ValueError, match="shape"):
        jax_lab.run("coder", functions={"coder_rewards": lambda e, s, c, x: s[:3]})


def test_bad_arguments_raise_value_error_on_torch(torch_backend):
    torch_lab = torch_backend[2]
    with pytest.raises(ValueError, match="unknown lab"):
        torch_lab.run("Challenger")
    with pytest.raises(ValueError, match="learning_rate"):
        torch_lab.run("solver", learning_rate=float("nan"))


def test_steps_and_learning_rate_are_honoured():
    res = jax_lab.run("solver", steps=3, learning_rate=0.1)
    assert res.probs.shape == (4, 5)
    assert not res.passed  # three small steps cannot get there


def test_pass_rule_on_hand_made_trajectories():
    ok = LabResult.from_probs("x", [[0.25] * 4, [0.05, 0.05, 0.1, 0.8]], target=3)
    assert ok.passed and ok.p0 == 0.25 and ok.p_final == 0.8
    low = LabResult.from_probs("x", [[0.25] * 4, [0.1, 0.1, 0.1, 0.7]], target=3)
    assert not low.passed  # 0.7 <= 0.72
    small_gain = LabResult.from_probs("x", [[0.5, 0.5], [0.25, 0.75]], target=1)
    assert not small_gain.passed  # gain 0.25 <= 0.3
    with pytest.raises(ValueError):
        LabResult.from_probs("x", [[0.5, 0.5]], target=2)


# --------------------------------------------------------------------------- CLI
def _fake_runner(passed_names):
    def run(name):
        n = get_lab(name).num_actions
        final = np.full(n, 0.0)
        final[get_lab(name).target if name in passed_names else 0] = 1.0
        return LabResult.from_probs(name, [np.full(n, 1 / n), final], get_lab(name).target)

    return run


def test_cli_exit_status_reflects_failures(capsys):
    everything = _fake_runner(set(NAMES))
    assert cli.main([], runner=everything) == 0
    capsys.readouterr()
    assert cli.main([], runner=_fake_runner(set(NAMES) - {"proposer"})) == 1
    rows = [line.split() for line in capsys.readouterr().out.splitlines()]
    verdicts = {row[0]: row[-1] for row in rows if row and row[0] in NAMES and len(row) > 5}
    assert verdicts == {name: "FAIL" if name == "proposer" else "PASS" for name in NAMES}
    assert cli.main(["--lab", "coder", "--json"], runner=_fake_runner(set())) == 1
    payload = json.loads(capsys.readouterr().out)
    assert payload["passed"] is False and [x["name"] for x in payload["labs"]] == ["coder"]


def test_cli_uses_load_runner_for_other_backends(monkeypatch):
    seen = []

    def fake_load(backend):
        seen.append(backend)
        return _fake_runner(set(NAMES))

    monkeypatch.setattr(cli, "load_runner", fake_load)
    assert cli.main(["--backend", "torch", "--lab", "solver"], runner=lambda name: 1 / 0) == 0
    assert seen == ["torch"]


def test_load_runner_picks_the_backend_module(torch_backend):
    assert cli.BACKENDS == ("jax", "torch")
    assert cli.load_runner("jax") is jax_lab.run
    assert cli.load_runner("torch") is torch_backend[2].run
    with pytest.raises(ValueError, match="unknown backend 'numpy'"):
        cli.load_runner("numpy")


def _python(*args, env=None):
    return subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, **(env or {})},
    )


def test_cli_table_and_plot(tmp_path):
    png = tmp_path / "lab.png"
    proc = _python("-m", "zero_lab", "--plot", str(png))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("lab "))
    for col in ("target action", "p0", "p_final", "gain", "pass"):
        assert col in lines[header]
    rows = lines[header + 2 : header + 2 + len(NAMES)]
    assert [row.split()[0] for row in rows] == NAMES
    assert all(row.rstrip().endswith("PASS") for row in rows)
    for name in NAMES:  # one line per lab on what it teaches
        assert any(line.startswith(f"{name}: ") for line in lines)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000


def test_cli_json_on_torch(torch_backend):
    proc = _python("-m", "zero_lab", "--backend", "torch", "--json")
    assert proc.returncode == 0, proc.stderr
    payload = json.loads(proc.stdout)
    assert payload["backend"] == "torch" and payload["passed"] is True
    assert [x["name"] for x in payload["labs"]] == NAMES
    assert all(len(x["target_probs"]) == 61 for x in payload["labs"])


def test_imports_stay_apart_and_x64_stays_local(torch_backend):
    code = (
        "import sys, zero_lab, zero_lab.cli\n"
        "assert 'jax' not in sys.modules and 'torch' not in sys.modules\n"
        "from zero_lab import torch_backend\n"
        "assert torch_backend.run('solver').passed and 'jax' not in sys.modules\n"
        "import jax\n"
        "from zero_lab import jax_backend\n"
        "res = jax_backend.run('challenger')\n"
        "assert res.passed and res.probs.dtype.name == 'float64'\n"
        "assert not jax.config.jax_enable_x64\n"
        "print('ok')\n"
    )
    proc = _python("-c", code, env={"JAX_ENABLE_X64": "0"})
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr
