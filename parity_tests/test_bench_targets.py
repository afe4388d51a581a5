"""The bench's targets on synthetic results (``bench/targets.py``): a target is met only
when everything it compares was measured and passed, not met when a measured part
failed, and "not measured" when there is nothing (or only part) to compare, never met
without data.  No benchmarking here."""

from __future__ import annotations

import copy

import pytest

from bench import step
from bench import targets as TG


def _row(fn, B, jax_us, torch_us=None, *, variant="", family=None, elementwise=False, **dims):
    backends = {"jax": {"median_us": jax_us, "min_us": jax_us, "GBps": 1.0}}
    if torch_us is not None:
        backends["torch"] = {"median_us": torch_us, "min_us": torch_us}
    key = f"{family or fn}@B={B}"
    return {
        "key": key,
        "fn": fn,
        "variant": variant,
        "family": family or fn,
        "B": B,
        "elementwise": elementwise,
        "bytes": 8 * B,
        "backends": backends,
        "speedup_vs_torch": torch_us / jax_us if torch_us else None,
        "best_speedup_vs_torch": torch_us / jax_us if torch_us else None,
        **dims,
    }


def _result(rows, **extra):
    return {
        "meta": {"backends": ["jax", "torch"], "quick": False},
        "copy_bandwidth": {"prealloc_GBps": 10.0},
        "rows": rows,
        "dispatch_us_B8": {},
        "rss": [],
        **extra,
    }


def _by(result):
    return {t["name"]: t for t in TG.evaluate(result)}


def test_status_rule():
    assert TG.status_of([]) == TG.NOT_MEASURED
    assert TG.status_of([None]) == TG.NOT_MEASURED
    assert TG.status_of([True, None]) == TG.NOT_MEASURED  # part measured: not met yet
    assert TG.status_of([True, True]) == TG.MET
    assert TG.status_of([True, False, None]) == TG.NOT_MET
    t = TG.target("x", "what", 1, {"a": True, "b": None})
    assert t["status"] == TG.NOT_MEASURED and t["met"] is None
    assert t["criteria"] == {"a": TG.MET, "b": TG.NOT_MEASURED}


def test_no_data_is_never_met():
    empty = _by(_result([]))
    assert set(empty) == {t.__name__ for t in TG.GRID_TARGETS}
    for t in empty.values():
        assert t["status"] == TG.NOT_MEASURED and t["met"] is None, t["name"]
    # rows without torch (a jax-only quick run): nothing compared with torch
    alone = _by(_result([_row("uncertainty_reward", 4096, 10.0)]))
    assert alone["jax_ahead_of_torch"]["status"] == TG.NOT_MEASURED
    assert alone["jax_over_torch_geomean"]["status"] == TG.NOT_MEASURED


def test_jax_ahead_of_torch_on_every_row_from_4096():
    rows = [
        _row("uncertainty_reward", 256, 10.0, 5.0),  # behind, but below B = 4,096
        _row("uncertainty_reward", 4096, 10.0, 60.0),
        _row("challenger_rewards", 4096, 10.0, 20.0, family="challenger_rewards[arbitrary]"),
    ]
    by = _by(_result(rows))
    assert by["jax_ahead_of_torch"]["status"] == TG.MET
    assert by["jax_ahead_of_torch"]["details"]["rows compared"] == 2
    # the geometric mean leaves the arbitrary-id challenger out: 6x from one row
    assert by["jax_over_torch_geomean"]["status"] == TG.MET
    assert by["jax_over_torch_geomean"]["details"]["geometric mean, medians"] == 6.0
    slow = _by(_result([*rows, _row("consensus", 65536, 10.0, 9.0)]))
    assert slow["jax_ahead_of_torch"]["status"] == TG.NOT_MET
    assert slow["jax_ahead_of_torch"]["details"]["rows at or below 1x (medians)"] == [
        ("consensus@B=65536", 0.9)
    ]
    failed = _result([*rows, _row("consensus", 65536, 10.0)])
    failed["rows"][-1]["backends"]["jax"] = {"error": "ValueError: x"}
    assert _by(failed)["jax_ahead_of_torch"]["status"] == TG.NOT_MET


def test_public_over_plain_jit():
    def ov(*ratios):
        rows = [
            {"key": f"f@B={4096 * (i + 1)}", "B": 4096 * (i + 1), "public_over_plain": r}
            for i, r in enumerate(ratios)
        ]
        return _by(_result([], overhead={"rows": rows}))["public_over_plain_jit"]

    assert ov()["status"] == TG.NOT_MEASURED
    assert _by(_result([]))["public_over_plain_jit"]["status"] == TG.NOT_MEASURED  # old JSON
    assert ov(1.0, 1.25)["status"] == TG.MET
    t = ov(1.0, 1.3)
    assert t["status"] == TG.NOT_MET
    assert t["details"]["rows above the target"] == [("f@B=8192", 1.3)]
    assert t["details"]["highest public / plain (medians of pair ratios)"] == ["f@B=8192", 1.3]


def test_vote_needs_both_time_and_memory():
    def vote(n, us, K=8, B=4096):
        return _row("consensus", B, us, family=f"consensus[K={K},n={n}]", K=K, n=n)

    mem = [
        {"backend": "jax", "fn": "consensus", "B": 4096, "K": 8, "n": n, "extra_MiB": 1.0}
        for n in (16, 1_000_000)
    ]
    only_memory = _by(_result([vote(1_000_000, 10.0)], rss=mem))["vote_independent_of_alphabet"]
    assert only_memory["status"] == TG.NOT_MEASURED  # the quick run's case: no n=16 row
    assert only_memory["criteria"] == {"time": TG.NOT_MEASURED, "memory": TG.MET}
    both = _by(_result([vote(16, 10.0), vote(1_000_000, 11.0)], rss=mem))
    assert both["vote_independent_of_alphabet"]["status"] == TG.MET
    slow = _by(_result([vote(16, 10.0), vote(1_000_000, 12.0)], rss=mem))
    assert slow["vote_independent_of_alphabet"]["status"] == TG.NOT_MET
    big = copy.deepcopy(mem)
    big[1]["extra_MiB"] = 40.0
    grows = _by(_result([], rss=big))["vote_independent_of_alphabet"]
    assert grows["status"] == TG.NOT_MET and grows["criteria"]["time"] == TG.NOT_MEASURED


def test_bandwidth_and_dispatch():
    big = _row("uncertainty_reward", 16 * 1048576, 10.0, elementwise=True)
    big["jax_frac_of_copy"] = 0.6
    by = _by(_result([big]))
    # elementwise measured and met, hint_delta not measured: not met is not claimed, nor met
    assert by["bandwidth_vs_copy"]["criteria"] == {
        "elementwise at 16M": TG.MET,
        "hint_delta": TG.NOT_MEASURED,
    }
    assert by["bandwidth_vs_copy"]["status"] == TG.NOT_MEASURED
    big["jax_frac_of_copy"] = 0.3
    assert _by(_result([big]))["bandwidth_vs_copy"]["status"] == TG.NOT_MET
    disp = {"jax": {"uncertainty_reward": 12.0, "consensus[K=8,n=16]": 90.0}}
    assert _by(_result([], dispatch_us_B8=disp))["eager_call_at_B8"]["status"] == TG.MET
    disp["jax"]["curriculum_mask"] = 31.0
    assert _by(_result([], dispatch_us_B8=disp))["eager_call_at_B8"]["status"] == TG.NOT_MET


@pytest.mark.parametrize(
    ("result", "status"),
    [
        (None, TG.NOT_MEASURED),
        (
            {"meta": {"quick": True}, "variants": {"jax_in_step": {"rewards_share": 1e-4}}},
            TG.NOT_MEASURED,
        ),
        (
            {
                "meta": {},
                "variants": {
                    "jax_in_step": {"rewards_share": 9e-4, "rewards_us": {"median_us": 5.0}}
                },
            },
            TG.MET,
        ),
        (
            {
                "meta": {},
                "variants": {
                    "jax_in_step": {"rewards_share": 2e-3, "rewards_us": {"median_us": 5.0}}
                },
            },
            TG.NOT_MET,
        ),
    ],
)
def test_rewards_share_of_step(result, status):
    (t,) = step.targets(result)
    assert t["name"] == "rewards_share_of_step" and t["status"] == status


def _logits_row(fn, kind, jax_ms, torch_ms, *, exp_ms=None, copy_GBps=10.0, shape=None):
    shape = shape or (8, 1024, 32768)
    b, t, v = shape
    nbytes = b * t * v * (4 if kind == "float32" else 2)
    family = f"{fn}[{kind},T={t},V={v}]"
    torch_us = None if torch_ms is None else torch_ms * 1e3
    row = _row(fn, b, jax_ms * 1e3, torch_us, family=family, T=t, V=v, kind=kind)
    read = nbytes / (jax_ms * 1e6)
    lg = {"bytes": nbytes, "copy_read_GBps": copy_GBps, "read_GBps": read}
    lg["read_frac_of_copy"] = read / copy_GBps
    lg["passes"] = {}
    if exp_ms is not None:
        lg["passes"]["exp_pass"] = {"median_us": exp_ms * 1e3}
        lg["exp_pass_read_frac_of_copy"] = nbytes / (exp_ms * 1e6) / copy_GBps
        lg["jax_over_exp_pass"] = jax_ms / exp_ms
    row["logits"] = lg
    return row


def test_logits_targets_need_the_issue_shape_and_say_which_criterion_held():
    # 1 GiB of float32 at 10 GB/s copies in 107 ms: 0.75 of its read rate is 143 ms
    fast = [
        _logits_row("self_certainty", "float32", 130.0, 500.0, exp_ms=110.0),
        _logits_row("token_entropy", "bfloat16", 60.0, 400.0, exp_ms=50.0),
    ]
    by = _by(_result(fast))
    assert by["logits_vs_torch"]["status"] == TG.MET
    assert by["logits_read_rate"]["status"] == TG.MET
    held = by["logits_read_rate"]["details"]["which held"]
    assert all(v.startswith("read rate held") for v in held.values())
    # slower than 3x torch on one row: not met, whatever the read rate
    slow = [*fast, _logits_row("token_entropy", "float32", 150.0, 400.0, exp_ms=120.0)]
    t = _by(_result(slow))
    assert t["logits_vs_torch"]["status"] == TG.NOT_MET
    assert t["logits_vs_torch"]["details"]["torch / jax (medians)"][slow[-1]["key"]] == 2.667
    # the copy's read rate decides, except on a row bound by the exponentials (one exp
    # pass alone below the criterion), where the exp pass's rate does
    assert t["logits_read_rate"]["status"] == TG.NOT_MET
    bound = _logits_row("self_certainty", "float32", 210.0, 5000.0, exp_ms=180.0)
    free = _logits_row("self_certainty", "bfloat16", 200.0, 5000.0, exp_ms=40.0)
    r = _by(_result([bound, free]))["logits_read_rate"]
    assert r["status"] == TG.NOT_MET  # the free row misses the copy's rate
    words = r["details"]["which held"]
    assert words[bound["key"]].startswith("read rate not held (0.51 of the copy's); bound by the")
    assert "takes 1.17x that pass (held against the exp pass: 0.86 of its rate)" in words[
        bound["key"]]
    assert "not bound by the exponentials" in words[free["key"]]
    assert r["details"]["jax / exp pass"] == {bound["key"]: 1.167, free["key"]: 5.0}
    assert _by(_result([bound]))["logits_read_rate"]["status"] == TG.MET
    # bound by the exponentials but over 1 / 0.75 of the exp pass: not met
    slow_bound = _logits_row("token_entropy", "float32", 250.0, 5000.0, exp_ms=180.0)
    s = _by(_result([slow_bound]))["logits_read_rate"]
    assert s["status"] == TG.NOT_MET
    assert "(not held against the exp pass: 0.72 of its rate)" in s["details"]["which held"][
        slow_bound["key"]]
    # the quick grid's small logits: nothing at the issue's shape, not measured
    small = _logits_row("self_certainty", "float32", 1.0, 10.0, exp_ms=0.5, shape=(8, 64, 4096))
    q = _by(_result([small]))
    assert q["logits_vs_torch"]["status"] == q["logits_read_rate"]["status"] == TG.NOT_MEASURED
    # without the copy of the logits' bytes (or the torch twin) the rows are not measured
    blind = _logits_row("self_certainty", "float32", 100.0, None)
    del blind["logits"]["read_frac_of_copy"]
    b = _by(_result([blind]))
    assert b["logits_vs_torch"]["status"] == b["logits_read_rate"]["status"] == TG.NOT_MEASURED
    assert b["logits_read_rate"]["details"]["which held"] == {blind["key"]: "not measured"}
    # zero_jax failing on a logits row fails both
    broken = _logits_row("self_certainty", "float32", 100.0, 500.0)
    broken["backends"]["jax"] = {"error": "MemoryError: x"}
    f = _by(_result([broken, *fast]))
    assert f["logits_vs_torch"]["status"] == f["logits_read_rate"]["status"] == TG.NOT_MET


def test_jax_ahead_of_torch_covers_the_new_rows_and_the_vote_memory_only_votes():
    rows = [
        _row("uncertainty_reward", 4096, 10.0, 60.0),
        _row("multi_reward_advantages", 65536, 10.0, 9.0, family="multi[normalize_then_sum]"),
    ]
    t = _by(_result(rows))["jax_ahead_of_torch"]
    assert t["status"] == TG.NOT_MET and t["details"]["rows compared"] == 2
    # the logits rows (B = 8) are the logits target's, not this one's
    logit = _logits_row("self_certainty", "float32", 100.0, 50.0)
    assert _by(_result([rows[0], logit]))["jax_ahead_of_torch"]["status"] == TG.MET
    # peak memory of the logits reductions does not enter the vote's alphabet criterion
    mem = [
        {"backend": "jax", "fn": f, "B": 8, "K": None, "n": None, "extra_MiB": x}
        for f, x in (("self_certainty", 10.0), ("self_certainty", 600.0))
    ]
    assert _by(_result([], rss=mem))["vote_independent_of_alphabet"]["criteria"]["memory"] == (
        TG.NOT_MEASURED
    )
