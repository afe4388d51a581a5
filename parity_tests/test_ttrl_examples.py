"""The TTRL experiment (examples/ttrl): its shared half on known inputs, its command line,
and a few steps of every arm in both stacks (the CI smoke run)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

ROOT = Path(__file__).resolve().parents[1]
HERE = ROOT / "examples" / "ttrl"


def _common():
    spec = importlib.util.spec_from_file_location("ttrl_common", HERE / "ttrl_common.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["ttrl_common"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


tc = _common()


def _backends():
    from zero_stacks import tunix as zjax

    out = [zjax.BACKEND]
    if importlib.util.find_spec("torch") is not None:
        from zero_stacks import trl as ztorch

        out.append(ztorch.BACKEND)
    return out


# ------------------------------------------------------------------ task


@pytest.mark.parametrize("seed", [0, 7, 300])
def test_split_is_a_partition_of_the_225_pairs(seed):
    s = tc.split(seed)
    assert (len(s.sft), len(s.rl), len(s.held)) == (112, 56, 57)
    assert sorted(s.sft + s.rl + s.held) == sorted(tc.PAIRS) and len(tc.PAIRS) == 225
    assert tc.split(seed) == s  # the seed alone decides it
    assert tc.split(seed + 1).rl != s.rl


def test_rl_order_visits_every_prompt_once_per_epoch():
    order = tc.rl_order(3, steps=20, per_step=8, num_prompts=56)
    assert len(order) == 160
    for epoch in range(2):
        assert sorted(order[56 * epoch : 56 * (epoch + 1)]) == list(range(56))


@pytest.mark.parametrize("spelling", tc.SPELLINGS)
def test_answers_decode_to_boxes_in_both_tokenizers(spelling):
    index = {w: i for i, w in enumerate(tc.words(spelling))}
    assert tc.words(spelling)[:3] == ["<pad>", "<s>", "</s>"]
    rows = [[index[w] for w in tc.answer_words(v, spelling)] for v in tc.ANSWERS]
    ids = np.zeros((len(rows), 6), dtype=np.int64)  # right-padded with <pad>
    for i, r in enumerate(rows):
        ids[i, : len(r)] = r
    want = [f"\\boxed{{{v}}}" for v in tc.ANSWERS]
    assert tc.decode(ids, spelling) == want  # cut at </s>
    pytest.importorskip("transformers", reason="the tokenizer needs the [trl] or [tunix] extra")
    tok = tc.tokenizer_for(spelling)
    assert [tok.decode(r[:-1]) for r in rows] == want  # without the </s>
    pair = (12, 3)
    assert tok(tc.prompt(pair))["input_ids"] == tc.prompt_ids([pair], spelling)[0].tolist()


def test_warm_start_targets_soft_label_and_digit_rows():
    pairs = [(3, 4), (15, 15)]
    ids, target, weight = tc.warm_start_targets(pairs, "token", noisy=True)
    vocab = tc.words("token")
    assert ids.shape == (2, 9) and weight.tolist() == [1.0, 1.0]
    answer = target[0, 7]  # the word after the 7 prompt words
    assert answer[vocab.index("\\boxed{7}")] == 0.5
    assert [answer[vocab.index(f"\\boxed{{{v}}}")] for v in (5, 6, 8, 9)] == [0.125] * 4
    assert target[1, 8, vocab.index("</s>")] == 1.0 and target[:, :7].sum() == 0
    clean = tc.warm_start_targets(pairs, "token", noisy=False)[1]
    assert clean[1, 7, vocab.index("\\boxed{30}")] == 1.0 and clean.sum() == 4
    ids, target, weight = tc.warm_start_targets(pairs, "digits", noisy=True)
    assert ids.shape[0] == 10 and weight.reshape(2, 5).sum(1).tolist() == [1.0, 1.0]
    assert tc.decode(ids[:5, 7:], "digits") == ["\\boxed{7}", "\\boxed{6}", "\\boxed{8}",
                                                  "\\boxed{5}", "\\boxed{9}"]  # fmt: skip
    completion = (np.arange(ids.shape[1]) >= 7) & (ids != 0)  # after the 7 prompt words
    np.testing.assert_array_equal(target.sum(-1), completion.astype(np.float32))


# ------------------------------------------------------------------ metrics


@pytest.mark.parametrize("backend", _backends(), ids=lambda b: b.name)
def test_answer_metrics_on_a_known_batch(backend):
    truths = ["5", "7"]
    first = ["\\boxed{5}"] * 5 + ["\\boxed{4}"] * 3 + ["\\boxed{4}"] * 5 + ["\\boxed{5}"] * 3
    # "07" is not "7" under exact equivalence
    second = ["no box"] * 8 + ["\\boxed{7}", "\\boxed{7}", "\\boxed{07}"] + ["\\boxed{6}"] * 5
    m = tc.answer_metrics(backend, [first, second], truths)
    assert m["pass@1"] == pytest.approx((8 / 16 + 2 / 16) / 2)
    # groups of 8: [5 x5, 4 x3] right, [4 x5, 5 x3] wrong, [no box x8] wrong, [7 7 07 6 ...] wrong
    assert m["maj@8"] == pytest.approx(1 / 4)
    none = [stats.hypergeom(16, c, 8).pmf(0) for c in (8, 2)]  # no right one among 8 of 16
    assert m["pass@8"] == pytest.approx(1 - np.mean(none))
    assert tc.greedy_accuracy(backend, ["\\boxed{5}", "x \\boxed{7}"], truths) == 1.0
    assert tc.greedy_accuracy(backend, ["\\boxed{6}", "7"], truths) == 0.0


def test_metrics_are_the_library_s_numbers():
    """Replace the library functions the metrics call: their outputs come back unchanged."""
    from zero_stacks import tunix as zjax

    calls = []

    class Spy:
        name = "spy"

        def run(self, fn, *args, **kwargs):
            calls.append(fn)
            out = zjax.BACKEND.run(fn, *args, **kwargs)
            if fn == "pass_at_k":
                return np.full_like(out, 0.125)
            if fn == "vote_metrics":
                return type(out)(*[np.asarray(v) * 0 + 0.25 for v in out])
            if fn == "curriculum_mask":
                return np.array([True, False, False, False])
            return out

    texts = ["\\boxed{3}"] * 8
    m = tc.answer_metrics(Spy(), [texts, texts], ["3", "4"])
    assert m == {"pass@1": 0.125, "maj@8": 0.25, "majority_ratio": 0.25, "pass@8": 0.125}
    assert tc.greedy_accuracy(Spy(), ["\\boxed{3}"], ["3"]) == 0.125
    assert tc.band_share(Spy(), texts * 4, 8, 0.25, 0.75) == 0.25
    assert calls == ["vote_metrics", "pass_at_k", "pass_at_k", "pass_at_k", "consensus",
                     "curriculum_mask"]  # fmt: skip


def test_coin_reward_pays_the_matched_rate_at_each_step():
    coin = tc.CoinReward([0.0, 1.0, 0.25], seed=4)
    assert coin(["p"] * 8, ["c"] * 8) == [0.0] * 8
    assert coin(["p"] * 8, ["c"] * 8) == [1.0] * 8
    draws = np.concatenate([coin(["p"] * 64, ["c"] * 64) for _ in range(100)])
    assert abs(draws.mean() - 0.25) < 0.03 and set(draws.tolist()) == {0.0, 1.0}
    again = tc.CoinReward([0.0, 1.0, 0.25], seed=4)
    for _ in range(2):
        again(["p"] * 8, ["c"] * 8)
    assert again(["p"] * 64, ["c"] * 64) == draws[:64].tolist()


# ------------------------------------------------------------------ outcome


def _result(finals: dict[str, list[float]], first: float = 0.4) -> dict:
    """A run record with two evaluations per arm: ``first`` then the given finals."""
    arms = list(finals)
    seeds = []
    for i in range(len(finals[arms[0]])):
        arm_records = {}
        for arm in arms:
            evals = [
                {"step": s, **{w: {"pass@1": v, "greedy": v, "maj@8": v} for w in ("rl", "held")}}
                for s, v in ((0, first), (200, finals[arm][i]))
            ]
            train = {
                k: [0.5, 0.5]
                for k in (
                    "label_accuracy",
                    "reward_accuracy",
                    "majority_ratio",
                    "reward_mean",
                    "band_share",
                )
            }
            arm_records[arm] = {"evals": evals, "train": train}  # fmt: skip
        seeds.append({"seed": 300 + i, "arms": arm_records})
    return {"stack": "test", "arms": arms, "seeds": seeds, "config": {"steps": 2,
            "prompts_per_step": 8, "num_generations": 8}}  # fmt: skip


def test_outcome_met_and_missed():
    rng = np.random.default_rng(0)
    truth = list(0.4 + 0.15 + rng.normal(0, 0.01, 10))
    random = list(0.4 - 0.02 + rng.normal(0, 0.01, 10))
    good = list(0.4 + 0.10 + rng.normal(0, 0.01, 10))
    o = tc.outcome(_result({"majority": good, "random": random, "truth": truth}))["primary"]
    diff = np.array(good) - np.array(random)
    assert o["difference"] == pytest.approx(diff.tolist())
    assert o["wilcoxon_p"] == pytest.approx(stats.wilcoxon(diff, alternative="greater").pvalue)
    assert o["wilcoxon_p"] < 0.05 and o["met"]
    small = list(0.4 + 0.05 + rng.normal(0, 0.01, 10))  # beats random, under half of truth
    o = tc.outcome(_result({"majority": small, "random": random, "truth": truth}))["primary"]
    assert o["p_below_alpha"] and not o["majority_gain_at_least_half_truth"] and not o["met"]
    worse = list(0.4 - 0.05 + rng.normal(0, 0.01, 10))
    o = tc.outcome(_result({"majority": worse, "random": random, "truth": truth}))["primary"]
    assert o["wilcoxon_p"] > 0.5 and not o["met"]


# ------------------------------------------------------------------ command line


def _script(stack: str, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(HERE / f"{stack}_ttrl.py"), *args],
                          capture_output=True, text=True, cwd=ROOT, timeout=600,
                          env=env or {**os.environ, "PYTHONPATH": str(ROOT)})  # fmt: skip


@pytest.mark.parametrize("stack", ["trl", "tunix"])
def test_help_lists_the_arms_and_fresh_seeds_are_refused(stack, capsys):
    shown = _script(stack, "--help")
    assert shown.returncode == 0, shown.stderr[-2000:]
    for arm in tc.ARMS:
        assert f"  {arm} " in shown.stdout
    refused = _script(stack, "--seeds", "0", "300")
    assert refused.returncode == 2 and "seeds [300] are fresh" in refused.stderr
    # the other refusals in this process: the scripts refuse through this same parse
    for argv, message in ((["--arms", "random"], "with majority"),
                          (["--jobs", "0"], "--jobs must be at least 1")):  # fmt: skip
        with pytest.raises(SystemExit) as exit_:
            tc.parse(stack, tc.Config(), "", argv)
        assert exit_.value.code == 2 and message in capsys.readouterr().err


# ------------------------------------------------------------------ both stacks, every arm


def test_both_stacks_run_every_arm(tmp_path):
    pytest.importorskip("tunix", reason="needs the [tunix] extra (CI installs it)")
    pytest.importorskip("trl", reason="needs the [trl] extra (CI installs it)")
    # one thread each, as the workers of --jobs: two runs side by side on CI's two cores,
    # where a second torch / XLA thread only spins against the other run
    env = {**os.environ, "PYTHONPATH": str(ROOT), **tc.ONE_THREAD}
    # the TRL run also takes its two seeds in two worker processes (--jobs 2)
    seeds = {"tunix": ["1"], "trl": ["1", "2", "--jobs", "2"]}
    # both warm-start phases as long as the smoke's noisy one: Tunix compiles one scan, not two
    smaller = ["--clean-steps", str(tc.SMOKE_CHANGES["noisy_steps"])]
    procs = {
        stack: subprocess.Popen(
            [sys.executable, str(HERE / f"{stack}_ttrl.py"), "--smoke", *smaller, "--seeds",
             *seeds[stack], "--json", str(tmp_path / f"{stack}.json")],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env,
        )  # fmt: skip
        for stack in ("tunix", "trl")  # both at once: each is mostly start-up and compiling
    }
    for stack, proc in procs.items():
        try:
            stdout, stderr = proc.communicate(timeout=600)
        except subprocess.TimeoutExpired:
            for other in procs.values():  # only the processes this test started
                other.kill()
                other.communicate()
            raise
        assert proc.returncode == 0, (stack, stderr[-3000:])
        record = json.loads((tmp_path / f"{stack}.json").read_text())
        cfg = record["config"]
        assert record["stack"] == stack and record["arms"] == list(tc.ARMS)
        assert record["provenance"]["git_revision"] and record["provenance"]["versions"]
        assert [s["seed"] for s in record["seeds"]] == ([1, 2] if stack == "trl" else [1])
        assert record["jobs"] == (2 if stack == "trl" else 1)
        seed = record["seeds"][0]
        arms = seed["arms"]
        for arm, rec in arms.items():
            assert [e["step"] for e in rec["evals"]] == [0, 2, 3], (stack, arm)
            for key, curve in rec["train"].items():
                assert len(curve) == cfg["steps"] and all(0 <= v <= 1 for v in curve), key
            for e in rec["evals"]:
                for where in ("rl", "held"):
                    assert set(e[where]) >= {"pass@1", "maj@8", "greedy"}
        warm = [arms[a]["evals"][0] for a in ("majority", "band", "random", "truth")]
        assert all(w == warm[0] for w in warm)  # one warm start, evaluated once
        assert arms["no_prior"]["evals"][0] != warm[0]  # a fresh initialisation
        # the coin pays at the majority arm's rate, step by step: replayed, it gives the
        # random arm's rewards exactly
        coin = tc.CoinReward(arms["majority"]["train"]["reward_mean"], seed["seed"])
        n = cfg["prompts_per_step"] * cfg["num_generations"]
        replay = [float(np.mean(coin(["p"] * n, ["c"] * n))) for _ in range(cfg["steps"])]
        assert arms["random"]["train"]["reward_mean"] == replay
        # the truth arm's reward is the share of right answers of the step
        assert arms["truth"]["train"]["reward_mean"] == pytest.approx(
            arms["truth"]["train"]["pass@1"]
        )
        assert "primary" in record["outcome"] and "per_arm" in record["outcome"]
        assert stdout.count("criterion") == 1
    pytest.importorskip("matplotlib", reason="the figure needs the [lab] extra")
    png = tmp_path / "trl.png"
    drawn = subprocess.run([sys.executable, str(HERE / "ttrl_common.py"),
                            str(tmp_path / "trl.json"), str(png)], capture_output=True,
                           text=True, cwd=ROOT, env=env, timeout=120)  # fmt: skip
    assert drawn.returncode == 0, drawn.stderr[-2000:]
    assert png.stat().st_size > 20_000
