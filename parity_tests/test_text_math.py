"""``equivalence="math"``: bounded in time in any thread, and the same ids as math-verify.

Oracles: math-verify itself, called in this process (``parse`` of
``\\boxed{answer}``, ``verify`` in either direction, as the naive grouping loop
of the stack rewards does), on answers whose evaluation is bounded. The time
bounds are checked against the failure they guard against (math-verify's
5-second alarms in the main thread, a process that never returns in a worker
thread), with a margin for a loaded machine; speed is claimed in
``bench/strings.py``, not here.
"""

from __future__ import annotations

import json
import logging
import os
import random
import subprocess
import sys
import textwrap
import threading
import time
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import zero_text as zt
import zero_text._mathpool as mathpool
from parity_tests.cases import box
from zero_text._fastmath import (
    fast_equivalent,
    number_value,
    plain_summary,
    summary_verdict,
    tame,
)

math_verify = pytest.importorskip("math_verify", reason="math_verify backs equivalence='math'")

ROOT = Path(__file__).resolve().parents[1]
TOWER = r"\dfrac{5^{\left(5^{\left(5^{\left(5^5\right)}\right)} - 4\right)} - 5}{16}"
MARGIN = 1.5  # seconds allowed for a loaded machine on top of limit + normal time


def verify_naive(a: str, b: str) -> bool:
    """The naive check: math-verify parse + verify, either direction, in this process."""
    pa = math_verify.parse("\\boxed{" + a + "}", parsing_timeout=None)
    pb = math_verify.parse("\\boxed{" + b + "}", parsing_timeout=None)
    if not pa or not pb:
        return False
    return any(
        math_verify.verify(g, t, timeout_seconds=None) for g, t in ((pa, pb), (pb, pa))
    )


def naive_ids(rows: list[list[str]]) -> list[list[int]]:
    """The grouping loop before this module: greedy first-seen ids, one check per pair."""
    out = []
    for row in rows:
        reps: list[tuple[str, int]] = []
        seen: dict[str, int] = {}
        ids, skipped, next_id = [0] * len(row), [], 0
        for k, reply in enumerate(row):
            boxed = zt.extract_boxed(reply)
            answer = zt.normalize_answer(boxed) if boxed is not None else ""
            if not answer:
                skipped.append(k)
                continue
            found = seen.get(answer)
            if found is None:
                found = next((i for r, i in reps if verify_naive(r, answer)), None)
            if found is None:
                found, next_id = next_id, next_id + 1
                reps.append((answer, found))
            seen[answer] = ids[k] = found
        for k in skipped:
            ids[k], next_id = next_id, next_id + 1
        out.append(ids)
    return out


@pytest.fixture(scope="module", autouse=True)
def _quiet_math_verify():
    logging.getLogger("math_verify").setLevel(logging.CRITICAL)
    yield


@pytest.fixture(scope="module", autouse=True)
def _end_helpers():
    yield
    zt.close_math_workers()


@pytest.fixture
def warm_pool():
    """Helper processes already running (their start is not 'normal time')."""
    zt.group_answers([[box(r"\sqrt{4}"), box("2")]], equivalence="math")


def alive(pid: int) -> bool:
    stat = Path(f"/proc/{pid}/stat")
    if stat.exists():
        try:
            return stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
        except (OSError, IndexError):
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def wait_gone(pids: list[int], seconds: float = 10.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        left = [p for p in pids if alive(p)]
        if not left:
            return []
        time.sleep(0.05)
    return [p for p in pids if alive(p)]


def pool_pids() -> list[int]:
    pool = mathpool._POOL
    assert pool is not None
    return list(pool._pool_manager.worker_manager.workers)  # pebble's workers, by pid


# --------------------------------------------------------------------------- fast path


def number_forms(value: Fraction, rng: random.Random) -> list[str]:
    """Ways a model writes ``value``: integer, decimals, fractions (reduced or not)."""
    n, d = value.numerator, value.denominator
    k = rng.randint(1, 4)
    forms = [f"{n * k}/{d * k}", f"\\frac{{{n * k}}}{{{d * k}}}", f"-\\dfrac{{{-n}}}{{{d}}}"]
    forms += [f"\\tfrac{{{-n * k}}}{{{-d * k}}}", f"\\frac{{{n}}}{{{d}}}"]
    if d == 1:
        forms += [str(n), f"{n}.0", f"{n}.000"]
    forms += [f"{float(value):.{places}f}" for places in (1, 2, 3, 6, 7)]
    return forms


def test_fast_path_agrees_with_math_verify():
    rng = random.Random(7)
    values = {Fraction(rng.randint(-40, 40), rng.choice([1, 1, 2, 3, 4, 8, 16, 7, 1000]))
              for _ in range(40)}
    values |= {Fraction(10**12 + 7), Fraction(123456789, 1000), Fraction(1, 128)}
    strings = sorted({s for v in values for s in number_forms(v, rng)})
    strings += ["3.0000004", "2.9999996", "0.333333", "0.3333333", "0.000001", "0", "-0"]
    pairs = [(a, b) for a in strings for b in strings if a < b]
    rng.shuffle(pairs)
    by_value: dict[Fraction, list[str]] = {}
    for s in strings:
        parsed = number_value(s)
        if parsed is not None:
            by_value.setdefault(parsed[0], []).append(s)
    equal_pairs = [(a, b) for ss in by_value.values() for a in ss for b in ss if a < b]
    rng.shuffle(equal_pairs)
    checked = {True: 0, False: 0}
    for a, b in equal_pairs[:150] + pairs[:250]:
        verdict = fast_equivalent(a, b)
        if verdict is None:
            continue
        assert verdict == verify_naive(a, b), (a, b)
        checked[verdict] += 1
    assert checked[True] > 100 and checked[False] > 100  # both verdicts exercised


@pytest.mark.parametrize(
    ("a", "b"),
    [("3", "3.0000004"), ("0.333333", r"\frac{1}{3}"), ("0.0078125", r"\frac{1}{128}"),
     ("3.14159265", "3.14159266"), ("2\\frac{1}{2}", "2.5"), ("1,000", "1000"), ("1e3", "1000")],
)
def test_fast_path_leaves_rounding_and_other_forms_to_math_verify(a, b):
    assert fast_equivalent(a, b) is None


def test_number_value_grammar():
    assert number_value("-12") == (Fraction(-12), False)
    assert number_value("2.50") == (Fraction(5, 2), True)
    assert number_value(r"-\frac{-6}{4}") == (Fraction(3, 2), False)
    assert number_value("6/-4") == (Fraction(-3, 2), False)
    for text in ["03", "+3", "1/0", r"\frac{1}{0}", "1.2345678", "1 000", "3.", ".5", "1" * 31]:
        assert number_value(text) is None, text


HELPER_FORMS = [
    "12", "12 units", r"12 \text{ cm}", r"\frac{24}{2}", "13", "1,000", "1000",
    r"2\frac{1}{2}", "2.5", "0.5", r"\frac{1}{3}", "0.333333", r"10\%", "0.1",
    r"2\sqrt{2}", r"\sqrt{8}", "2.828427", r"\frac{\pi}{4}", r"0.25\pi", r"\pi",
    r"\sqrt{2}", "x+1", "(1,2)", r"\sin(1)",
]


def test_read_summaries_give_verify_s_verdict():
    """Pairs settled from what the helpers read (exact rationals, values clearly apart)
    against math-verify itself."""
    summaries = {a: mathpool.read(a, probe=True) for a in HELPER_FORMS}
    decided = {True: 0, False: 0}
    for i, a in enumerate(HELPER_FORMS):
        for b in HELPER_FORMS[i + 1 :]:
            verdict = summary_verdict(summaries[a], summaries[b])
            if verdict is not None:
                assert verdict == verify_naive(a, b), (a, b)
                decided[verdict] += 1
            assert mathpool.compare(a, b) == verify_naive(a, b), (a, b)
    assert decided[True] >= 5 and decided[False] >= 60, decided
    # values within the margin go to verify itself: 1/3 and 0.333333 are equal for it
    assert summary_verdict(summaries[r"\frac{1}{3}"], summaries["0.333333"]) is None
    assert mathpool.read("}{", probe=False) is None  # nothing parsed


def test_plain_summaries_agree_with_what_the_helpers_read():
    """Integers and fractions exactly as read; decimals by value only (conservative)."""
    for n in ["0", "-0", "7", "-12", "1000", "123456789012345678901234567890", r"\frac{6}{2}",
              r"-\frac{-6}{4}", "6/-4", r"\dfrac{1}{3}", r"\tfrac{-2}{8}", "3.0", "2.50", "0.5"]:
        exact, numbers, strings = plain_summary(n)
        read = mathpool.read(n, probe=False)
        assert exact is None or exact == read[0], n
        assert numbers == read[1] and set(strings) <= set(read[2]), n
    assert plain_summary("3 units") is None and plain_summary("x") is None


def test_plain_numbers_start_no_process():
    zt.close_math_workers()
    rows = [[box(a) for a in ("3", "3.0", r"\frac{6}{2}", "$3$", "4", "0.5", "1/2")]]
    ids, _ = zt.group_answers(rows, equivalence="math")
    assert ids.tolist() == [[0, 0, 0, 0, 1, 2, 2]]
    assert mathpool._POOL is None  # settled by the fast path alone


# --------------------------------------------------------------------------- ids


ORDINARY = [
    ["3", "3.0", r"\frac{6}{2}", "$3$", "4", r"\sqrt{9}", "6/2", "3.5"],
    [r"\frac{1}{2}", "0.5", "1/2", r"\dfrac{2}{4}", "0.50", "2", r"\frac{1}{3}", "0.333333"],
    [r"\sqrt{2}", r"\frac{2}{\sqrt{2}}", r"2\sqrt{2}", r"\sqrt{8}", "1.414", "x+1", "1+x", "2"],
    ["(1,2)", r"(1, 2)", "[1,2]", r"\{1,2\}", r"10\%", "0.1", r"\frac{1}{10}", r"\pi"],
    ["x=3", "3", "y=3", r"\text{3}", "-3", "3.00", r"\frac{9}{3}", r"3\text{ cm}"],
]


def test_ids_equal_the_naive_grouping(warm_pool):
    rng = random.Random(3)
    rows = []
    for answers in ORDINARY:
        for _ in range(2):
            picked = [rng.choice(answers) for _ in range(8)]
            rows.append([box(a) for a in picked] + ["no box here"])
    ids, num = zt.group_answers(rows, equivalence="math")
    assert ids.tolist() == naive_ids(rows)
    assert num == max(len(set(r)) for r in ids.tolist())


def test_parallel_rows_give_the_same_ids(warm_pool):
    rows = [[box(a) for a in answers] for answers in ORDINARY]
    one, _ = zt.group_answers(rows, equivalence="math", processes=1)
    two, _ = zt.group_answers(rows, equivalence="math", processes=2)
    assert one.tolist() == two.tolist()
    zt.group_answers([[box("1")]], equivalence="math", processes=1)  # back to one helper


class LocalPool:
    """Runs each request at once in this process and records it (no helper processes)."""

    def __init__(self):
        self.requests: list[tuple] = []

    def schedule(self, fn, args, timeout=None):
        from concurrent.futures import Future

        self.requests.append((fn.__name__, *args))
        future: Future = Future()
        future.set_result(fn(*args))
        return future


def test_work_asked_of_math_verify(monkeypatch):
    """Pairs of plain numbers never reach math-verify; each distinct answer is read at
    most once and each distinct pair compared at most once per call."""
    pool = LocalPool()
    monkeypatch.setattr(mathpool, "get_pool", lambda processes: pool)
    row = ["3", "3", "3.0", r"\frac{6}{2}", r"\sqrt{9}", r"\sqrt{9}", "x+1", "1+x", "x+1", "5"]
    ids, _ = zt.group_answers([[box(a) for a in row]] * 2, equivalence="math")
    assert ids.tolist() == [[0, 0, 0, 0, 0, 0, 1, 1, 1, 2]] * 2
    reads = [r[1] for r in pool.requests if r[0] == "read"]
    reads += [a for r in pool.requests if r[0] == "read_all" for a in r[1]]
    pairs = [r[1:] for r in pool.requests if r[0] == "compare"]
    # each answer once per call for both rows; plain numbers are read here (plain_summary)
    assert sorted(reads) == sorted([r"\sqrt{9}", "x+1", "1+x"])
    # "5" is a plain number, but "x+1" is not: that pair needs math-verify
    # 5 and x+1 are not settled from their readings (x+1 has a variable)
    assert sorted(pairs) == sorted(
        [("3", r"\sqrt{9}"), ("3", "x+1"), ("1+x", "3"), ("1+x", "x+1"), ("5", "x+1")]
    )
    for a, b in pairs:  # never a pair of plain numbers
        assert fast_equivalent(a, b) is None


# --------------------------------------------------------------------------- time limits


def timed(fn) -> tuple[float, object]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def in_thread(fn, wait: float) -> tuple[float, object]:
    out: list[object] = []
    worker = threading.Thread(target=lambda: out.append(fn()), daemon=True)
    start = time.perf_counter()
    worker.start()
    worker.join(wait)
    assert not worker.is_alive(), f"group_answers did not return within {wait:.1f} s"
    return time.perf_counter() - start, out[0]


ROWS = {
    "tower second": [box("3"), box(TOWER), box(r"\sqrt{9}"), box("3.0")],
    "tower first": [box(TOWER), box("3"), box(r"\sqrt{9}"), box("3.0")],
}


def ordinary_ids(row_ids: list[int], row: list[str]) -> list[int]:
    kept = [i for i, reply in zip(row_ids, row, strict=True) if TOWER not in reply]
    return zt.first_seen_labels(np.array(kept)).tolist()


@pytest.mark.parametrize("where", ["main thread", "worker thread"])
@pytest.mark.parametrize("name", list(ROWS))
def test_issue_65_answer_is_bounded(warm_pool, where, name):
    limit = 0.5
    row = ROWS[name]
    ordinary = [r for r in row if TOWER not in r]
    normal, (plain, _) = timed(lambda: zt.group_answers([ordinary], equivalence="math"))

    def call():
        return zt.group_answers([row], equivalence="math", timeout=limit)

    budget = limit + normal + MARGIN
    if where == "main thread":
        elapsed, result = timed(call)
    else:
        elapsed, result = in_thread(call, budget + 5)
    ids = result.ids
    assert elapsed < budget, f"{elapsed:.2f} s > limit {limit} + normal {normal:.2f} + margin"
    tower_at = next(i for i, r in enumerate(row) if TOWER in r)
    row_ids = ids.tolist()[0]
    assert row_ids.count(row_ids[tower_at]) == 1  # the tower is in no group but its own
    assert ordinary_ids(row_ids, row) == plain.tolist()[0] == [0, 0, 0]
    assert row_ids[tower_at] == 1 and result.cut_off == 1  # unparseable: after the answers


STALLS = [rf"(x+{i})^{{{1000000 - i}}}" for i in range(1, 7)]  # each stalls SymPy


@pytest.mark.parametrize("unparseable", ["distinct", "bucket"])
@pytest.mark.parametrize("where", ["main thread", "worker thread"])
def test_stalling_replies_cost_one_limit_per_call(warm_pool, where, unparseable):
    """Issue 35.4: six replies that stall SymPy cost the call one limit, not six; they are
    grouped as unparseable and counted in ``cut_off``."""
    assert not any(tame(a) for a in STALLS)
    limit = 1.0
    row = [box(a) for a in STALLS] + [box("12"), box("12.0"), "no box"]
    normal, _ = timed(lambda: zt.group_answers([row[6:]], equivalence="math"))

    def call():
        return zt.group_answers([row], equivalence="math", timeout=limit, unparseable=unparseable)

    budget = limit + normal + 2 * MARGIN
    if where == "main thread":
        elapsed, out = timed(call)
    else:
        elapsed, out = in_thread(call, budget + 10)
    assert elapsed < budget, f"{elapsed:.2f} s for 6 stalls, limit {limit}"
    ids, num = out
    assert out.cut_off == 6 and out.ids is ids and out.num_answers == num
    if unparseable == "distinct":  # each undecided reply alone, after the parsed answers
        assert ids.tolist() == [[1, 2, 3, 4, 5, 6, 0, 0, 7]]
    else:  # with the replies that have no answer, one id created at the first of them
        assert ids.tolist() == [[0, 0, 0, 0, 0, 0, 1, 1, 0]]
    again = zt.group_answers([[box(r"\sqrt{4}"), box("2"), box("x+1"), box("1+x")]],
                             equivalence="math")
    assert again.ids.tolist() == [[0, 0, 1, 1]] and again.cut_off == 0  # the pool recovered


def test_math_equivalent_is_bounded(warm_pool, monkeypatch):
    assert zt.math_equivalent(r"\frac{1}{2}", "0.5")
    assert zt.math_equivalent(r"\sqrt{4}", "2")
    assert not zt.math_equivalent("3", "4")
    assert zt.math_equivalent("$12$.", "12")
    elapsed, same = timed(lambda: zt.math_equivalent(TOWER, "3", timeout=0.5))
    assert same is False and elapsed < 0.5 + MARGIN


def test_a_huge_timeout_means_no_practical_limit(warm_pool):
    """Beyond threading.TIMEOUT_MAX (~9.2e9 s) the queue wait raised OverflowError."""
    assert zt.math_equivalent("x+1", "1+x", timeout=1e10)
    assert zt.math_equivalent("x+1", "1+x", timeout=10**400)  # no float holds it
    ids, _ = zt.group_answers([[box("x+1"), box("1+x"), box("x")]], equivalence="math",
                              timeout=np.float64(1e300))
    assert ids.tolist() == [[0, 0, 1]]


def test_limit_and_processes_are_checked():
    for bad in (0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="timeout"):
            zt.group_answers([[box("1")]], equivalence="math", timeout=bad)
    with pytest.raises(TypeError, match="timeout"):
        zt.group_answers([[box("1")]], equivalence="math", timeout="1")
    with pytest.raises(ValueError, match="processes"):
        zt.group_answers([[box("1")]], equivalence="math", processes=0)
    with pytest.raises(TypeError, match="processes"):
        zt.group_answers([[box("1")]], equivalence="math", processes=1.5)
    with pytest.raises(ValueError, match="timeout"):
        zt.math_equivalent("1", "2", timeout=0)


def test_missing_extra_is_named(monkeypatch):
    monkeypatch.setitem(sys.modules, "math_verify", None)
    with pytest.raises(ImportError, match=r"zero-rewards\[math\]"):
        zt.math_equivalent("1", "2")


# --------------------------------------------------------------------------- processes


def test_close_math_workers_ends_the_helpers():
    zt.group_answers([[box(r"\sqrt{4}"), box("2")]], equivalence="math")
    pids = pool_pids()
    assert pids and all(alive(p) for p in pids)
    zt.close_math_workers()
    assert wait_gone(pids) == []
    assert mathpool._POOL is None


def run_script(tmp_path: Path, body: str, timeout: float = 120) -> dict:
    script = tmp_path / "script.py"  # a file, so that spawned processes can import it
    script.write_text(textwrap.dedent(body))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=timeout,
        env=env, cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


COMMON = r"""
import json, os, sys
import zero_text as zt
import zero_text._mathpool as mp

def box(a):
    return "\\boxed{" + a + "}"

ROWS = [[box(r"\sqrt{4}"), box("2"), box("x+1"), box("1+x"), box("3")]]
EXPECTED = [[0, 0, 1, 1, 2]]

def pids():
    return list(mp._POOL._pool_manager.worker_manager.workers)
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_fork_child_and_interpreter_exit_leave_no_process(tmp_path):
    out = run_script(tmp_path, COMMON + r"""
def main():
    assert zt.group_answers(ROWS, equivalence="math")[0].tolist() == EXPECTED
    parent = pids()
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # a fork (e.g. a data loader) after the pool started: it makes its own
        ok = zt.group_answers(ROWS, equivalence="math")[0].tolist() == EXPECTED
        os.write(write, json.dumps({"ok": ok, "pids": pids()}).encode())
        os._exit(0)  # no atexit handlers: its helpers see their pipes close
    os.close(write)
    report = json.loads(os.read(read, 10000))
    os.waitpid(child, 0)
    again = zt.group_answers(ROWS, equivalence="math")[0].tolist() == EXPECTED
    print(json.dumps({"parent": parent, "same": pids() == parent, "again": again, **report}))

if __name__ == "__main__":
    main()
""")
    assert out["ok"] and out["again"] and out["same"]
    assert not set(out["pids"]) & set(out["parent"])
    assert wait_gone(out["pids"]) == []  # the child's helpers, after os._exit
    assert wait_gone(out["parent"]) == []  # the parent's, after a normal exit


def test_a_daemonic_worker_gets_a_clear_error(tmp_path):
    out = run_script(tmp_path, COMMON + r"""
import multiprocessing as mp_

def work(_):
    try:
        zt.group_answers(ROWS, equivalence="math")
    except RuntimeError as exc:
        return str(exc)
    return "no error"

if __name__ == "__main__":
    with mp_.get_context("spawn").Pool(1) as workers:  # daemonic processes
        print(json.dumps({"error": workers.apply(work, (0,))}))
""")
    assert "daemonic" in out["error"]
