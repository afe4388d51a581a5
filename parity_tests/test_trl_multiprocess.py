"""Group rewards on two TRL processes equal one process's, bit for bit.

Two plain child processes (``trl_multiprocess_child.py``) join a gloo group through a
``file://`` rendezvous (no network), and TRL's ``GRPOTrainer`` trains a tiny GPT-2 for two
steps and evaluates once, with groups split between the processes (training: 6
completions per process in groups of 4, the middle group split; evaluation: one group of
6, 3 on each process).  Every reward call is recorded on both processes.  Here, in one
ordinary process, the same rewards are called on the whole batch (process 0's
completions, then process 1's, TRL's order); the two processes' returned rewards,
joined, must equal these, and so must what they logged through ``log_metric``
(per-completion diagnostics joined in the same order; whole-batch diagnostics logged
once, by process 0).  The children are ended by their PIDs if they overrun.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

pytest.importorskip("trl", reason="needs the [trl] extra (CI installs it)")

from zero_stacks import trl as zt  # noqa: E402

from . import trl_multiprocess_child as child  # noqa: E402

# two processes, each generating and training: both cores
pytestmark = pytest.mark.alone

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 300  # seconds for both children together (about 40 s on an idle machine)
#: TTRL's diagnostics of the whole batch (the others are logged per completion)
WHOLE_BATCH = {"label_accuracy", "reward_accuracy", "majority_ratio", "maj"}


def _run_two(argv: list[str], cwd: Path) -> list[str]:
    """Run ``argv + [rank]`` ... as two processes (rank 0 and 1), each ended by its PID if
    it outlives the bounded wait; return their logs after both exited with status 0."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1",
           "TOKENIZERS_PARALLELISM": "false", "OMP_NUM_THREADS": "1"}  # fmt: skip
    children = [
        subprocess.Popen(
            [sys.executable, *[str(rank) if a == "{rank}" else a for a in argv]],
            cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            start_new_session=True,
        )
        for rank in range(2)
    ]  # fmt: skip
    logs = []
    try:
        for proc in children:
            out, _ = proc.communicate(timeout=TIMEOUT)
            logs.append(out)
    finally:
        for proc in children:  # only the processes this test started, by PID
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
    for proc, log in zip(children, logs, strict=False):
        assert proc.returncode == 0, log[-4000:]
    return logs


def _run_children(tmp_path: Path) -> list[str]:
    argv = ["-m", "parity_tests.trl_multiprocess_child", "{rank}", str(tmp_path / "rendezvous"),
            str(tmp_path)]  # fmt: skip
    return _run_two(argv, ROOT)


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_two_trl_processes_give_one_process_rewards(tmp_path):
    logs = _run_children(tmp_path)
    assert all("trl-multiprocess-ok" in log for log in logs), logs
    ranks = [_records(tmp_path / f"rank{r}.jsonl") for r in range(2)]
    assert [len(r) for r in ranks] == [len(ranks[0])] * 2
    names = list(child.make_rewards(child.TRAIN_G))
    # two training steps and one evaluation, every reward called on each process
    assert len(ranks[0]) == 3 * len(names)
    rewards = {g: child.make_rewards(g) for g in (child.TRAIN_G, child.EVAL_G)}
    split_seen = {"train": 0, "eval": 0}
    for a, b in zip(*ranks, strict=True):
        assert (a["name"], a["mode"]) == (b["name"], b["mode"])
        g = child.TRAIN_G if a["mode"] == "train" else child.EVAL_G
        n = len(a["completions"])
        assert n == len(b["completions"]) and n % g, "a group must be split"
        split_seen[a["mode"]] += 1
        logged: dict[str, list[float]] = {}
        one = child.call(
            a["name"],
            rewards[g][a["name"]],
            a["prompts"] + b["prompts"],
            a["completions"] + b["completions"],
            {
                "answer": a["answer"] + b["answer"],
                "completion_ids": a["completion_ids"] + b["completion_ids"],
                "log_metric": lambda k, v, logged=logged: logged.setdefault(k, []).append(v),
            },
        )
        where = f"{a['name']} ({a['mode']})"
        assert a["out"] + b["out"] == one, where  # bit for bit (JSON keeps every float)
        for metric, values in logged.items():
            if metric.split("/")[1].split("@")[0] in WHOLE_BATCH:  # logged once, by process 0
                assert a["logged"][metric] == values and metric not in b["logged"], where
            else:  # per-completion diagnostics, joined in TRL's order
                joined = a["logged"].get(metric, []) + b["logged"].get(metric, [])
                assert joined == values, (where, metric)
        assert set(a["logged"]) | set(b["logged"]) == set(logged), where
    assert split_seen["train"] == 2 * len(names) and split_seen["eval"] == len(names)
    # the recorded calls exercised what they are meant to
    first = {r["name"]: r for r in ranks[0][: len(names)]}
    assert "zero_solver/label_accuracy" in first["vote_math"]["logged"]
    assert "zero_challenger/solver_share" in first["challenger"]["logged"]
    trained = json.loads((tmp_path / "trained0.json").read_text())
    assert trained["steps"] == 2


def test_a_split_group_without_a_process_group_says_what_to_change():
    """Inside a GRPOTrainer (its bound log_metric) on one process, a call holding part of
    a group is an error naming the two fixes."""

    class Trainer:
        num_generations = 4
        num_generations_eval = 4
        model = SimpleNamespace(training=True)

        def _log_metric(self, name: str, value: float) -> None:
            pass

    reward = zt.SolverReward(4)
    with pytest.raises(ValueError, match=r"split between processes.*init_process_group"):
        reward(["p"] * 6, ["\\boxed{1}"] * 6, log_metric=Trainer()._log_metric)


def _docs_block() -> str:
    text = (ROOT / "docs" / "stacks.md").read_text(encoding="utf-8")
    section = text[text.index("## TRL: several processes") :]
    start = section.index("```python\n") + len("```python\n")
    return section[start : section.index("```", start)]


def test_the_docs_multi_process_recipe_runs_as_written(tmp_path):
    """docs/stacks.md's two-process TRL script, as written, run as two plain processes
    (``python train.py RANK RENDEZVOUS``): both train and print the same first-step
    parse rate and reward, which TRL averaged over both processes."""
    (tmp_path / "train.py").write_text(_docs_block())
    logs = _run_two(["train.py", "{rank}", str(tmp_path / "rendezvous")], tmp_path)
    last = [log.strip().splitlines()[-1].split() for log in logs]
    assert [words[0] for words in last] == ["0", "1"], logs
    assert last[0][1:] == last[1][1:] and last[0][1:3] == ["parse", "rate"], last
    assert 0.0 <= float(last[0][3]) <= 1.0 and 0.0 <= float(last[0][5]) <= 1.0
