"""zero_selfplay: the cart domain, the format gate, held-out evaluation, per-item
votes, calibration, the paired test, determinism, and that the loop's rewards come
from the library (a spy is injected in place of the ``zero_jax`` module)."""

from __future__ import annotations

import dataclasses
import itertools
import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest

pytest.importorskip("flax")
pytest.importorskip("optax")
from flax import nnx  # noqa: E402

import zero_jax  # noqa: E402
from zero_selfplay import domain as D  # noqa: E402
from zero_selfplay import labels as L  # noqa: E402
from zero_selfplay import loop, report  # noqa: E402
from zero_selfplay import solver as S  # noqa: E402
from zero_selfplay.__main__ import main  # noqa: E402
from zero_selfplay.loop import SMOKE, run  # noqa: E402

#: SHA-256 of the frozen evaluation sets; a change here means every published
#: number was measured on different carts.
EVAL_FINGERPRINTS = {
    "deduction": "b496f1b145ec48f1092001e61c0a7c2397961240c29749b20f771d4d76f38a7d",
    "abduction": "9dc28df05a6d33056a62317c49b964f1fb6f49a9708e21e3e5f19304d469ce96",
}


def _cart(price, quantity, task, total, missing=0, field=D.PRICE, answer=0) -> D.Carts:
    n = len(price)
    pad = [0] * (D.N_MAX - n)
    arrays = ([price + pad], [quantity + pad], [n], [task], [missing], [field], [total], [answer])
    return D.Carts(*(np.asarray(a, np.int32) for a in arrays))


# ----------------------------------------------------------------------- domain
def test_well_formed_rules():
    ok = _cart([3, 4], [2, 5], D.DEDUCTION, 26)
    assert D.well_formed(ok)[0] and D.solve(ok)[0] == 26
    overflow = _cart([15, 15], [9, 9], D.DEDUCTION, 270)
    assert not D.well_formed(overflow)[0]  # 2 * 15 * 9 >= VOCAB: may leave the vocabulary
    # abduction: hide the price of item 0 (quantity 2); others sum to 20.
    abd = _cart([3, 4], [2, 5], D.ABDUCTION, 26, missing=0, field=D.PRICE)
    assert D.well_formed(abd)[0] and D.solve(abd)[0] == 3
    zero = _cart([3, 4], [0, 5], D.ABDUCTION, 20, missing=0, field=D.PRICE)
    assert not D.well_formed(zero)[0]  # x * 0 = 0: every price fits, no unique answer
    big = _cart([3, 4], [2, 5], D.ABDUCTION, D.VOCAB, missing=0, field=D.PRICE)
    assert not D.well_formed(big)[0]  # the shown total is not a vocabulary id
    field = _cart([3, 16], [2, 5], D.DEDUCTION, 86)
    assert not D.well_formed(field)[0]  # a field outside 0..FIELD_MAX


def test_format_check_never_computes_the_answer(monkeypatch):
    # An inconsistent abduction cart (7 / 2 is no integer, 10 < 20 leaves a negative
    # remainder) is still well *formed*: whether a total is right is arithmetic.
    for total in (27, 10, 0, D.VOCAB - 1):
        assert D.well_formed(_cart([3, 4], [2, 5], D.ABDUCTION, total))[0]
    # The gate reads neither the stored answer nor, for deduction, the stored total,
    # and it never calls the solver of the domain.
    monkeypatch.setattr(D, "solve", lambda c: pytest.fail("the format gate solved a cart"))
    c = D.sample_carts(jax.random.key(1), jnp.arange(2048) % D.NUM_TEMPLATES)
    c = D.Carts(*(np.asarray(x) for x in c))
    gate = np.asarray(D.well_formed(c))
    rng = np.random.default_rng(0)
    scrambled_answer = D.Carts(*c[:-1], rng.integers(-500, 500, len(c)).astype(np.int32))
    assert np.array_equal(np.asarray(D.well_formed(scrambled_answer)), gate)
    ded = c.task == D.DEDUCTION
    other_total = np.where(ded, rng.integers(-500, 500, len(c)), c.total).astype(np.int32)
    moved = D.Carts(*c[:6], other_total, c.answer)
    assert np.array_equal(np.asarray(D.well_formed(moved)), gate)
    # an abduction cart passes with any shown total inside the vocabulary
    abd = (c.task == D.ABDUCTION) & gate
    shown = rng.integers(0, D.VOCAB, len(c)).astype(np.int32)
    lied = D.Carts(*c[:6], np.where(abd, shown, c.total).astype(np.int32), c.answer)
    assert np.asarray(D.well_formed(lied))[abd].all()
    # jitted too: the traced gate never reaches the answer either
    assert np.array_equal(np.asarray(jax.jit(D.well_formed)(scrambled_answer)), gate)


def test_generated_abduction_answers_are_unique_and_correct():
    ids = jnp.arange(4096) % D.NUM_TEMPLATES
    c = D.sample_carts(jax.random.key(0), ids)
    c = D.Carts(*(np.asarray(x) for x in c))
    valid = np.asarray(D.well_formed(c))
    assert 0.5 < valid.mean() < 1.0  # some templates do produce ill-formed carts
    assert np.array_equal(np.asarray(D.solve(c))[valid], c.answer[valid])
    abd = np.flatnonzero(valid & (c.task == D.ABDUCTION))
    assert len(abd) > 500
    x = np.arange(D.VOCAB)
    for i in abd:
        price, quantity = c.price[i].copy(), c.quantity[i].copy()
        hits = []
        for v in x:  # brute force over the whole vocabulary
            if c.field[i] == D.PRICE:
                price[c.missing[i]] = v
            else:
                quantity[c.missing[i]] = v
            if int(np.sum(price * quantity)) == c.total[i]:
                hits.append(v)
        assert hits == [c.answer[i]]
    # an ill-formed abduction cart with a zero partner has many solutions
    zero = np.flatnonzero(~valid & (c.task == D.ABDUCTION) & (c.total < D.VOCAB))
    assert len(zero) > 0


def test_eval_sets_frozen_and_held_out():
    a, b = D.eval_sets(), D.eval_sets()
    for task in ("deduction", "abduction"):
        assert len(a[task]) >= 256
        assert D.fingerprint(a[task]) == D.fingerprint(b[task]) == EVAL_FINGERPRINTS[task]
        assert np.all(D.well_formed(a[task]))
        assert np.all(a[task].task == (D.DEDUCTION if task == "deduction" else D.ABDUCTION))
    s0, s1 = D.seed_set(0, 256), D.seed_set(1, 256)
    assert D.fingerprint(s0) != D.fingerprint(s1)  # the seed set follows the run seed
    assert D.fingerprint(D.seed_set(0, 256)) == D.fingerprint(s0)
    cal = D.calibration_set(0, 128, 256)
    held = {k for c in a.values() for k in D._keys(c)}
    assert not held & set(D._keys(s0))
    assert not held & set(D._keys(cal))
    assert not set(D._keys(s0)) & set(D._keys(cal))  # calibration is held out from the base
    assert np.all(D.well_formed(s0)) and np.all(D.well_formed(cal))


def test_held_out_matches_exact_identity():
    hashes = jnp.asarray(D.eval_hashes())
    held = {k for c in D.eval_sets().values() for k in D._keys(c)}
    ids = jnp.arange(8192) % D.NUM_TEMPLATES
    c = D.sample_carts(jax.random.key(3), ids)
    flag = np.asarray(jax.jit(D.held_out)(c, hashes))
    exact = np.array([k in held for k in D._keys(D.Carts(*(np.asarray(x) for x in c)))])
    assert exact.sum() > 50  # small carts do collide with the evaluation set
    assert np.array_equal(flag, exact)
    # item order does not matter: an evaluation cart with its items reversed is held out
    ev = D.eval_sets()["abduction"]
    slot = np.arange(D.N_MAX)[None, :]
    n = ev.n[:, None]
    order = np.where(slot < n, n - 1 - slot, slot)
    rows = np.arange(len(ev))[:, None]
    flipped = D.Carts(ev.price[rows, order], ev.quantity[rows, order], ev.n, ev.task,
                      (ev.n - 1 - ev.missing).astype(np.int32), ev.field, ev.total,
                      ev.answer)  # fmt: skip
    assert D.fingerprint(flipped) != D.fingerprint(ev)
    assert np.asarray(D.held_out(_jax(flipped), hashes)).all()
    assert np.array_equal(D.solve(flipped), ev.answer)


def _jax(c: D.Carts) -> D.Carts:
    return D.Carts(*(jnp.asarray(x) for x in c))


def test_no_arm_trains_on_an_evaluation_cart():
    # an untrained Solver's labels are unreliable: open the band so questions are kept
    cfg = dataclasses.replace(SMOKE, proposals=512, votes=4, threshold=0.0)
    ph = loop.Phases(cfg)
    solver = nnx.merge(ph.solver_def, ph.init_solver(0))
    seed = _jax(D.seed_set(0, cfg.seed_size))
    calib = _jax(D.calibration_set(0, cfg.calib_size, cfg.seed_size))
    held = {k for c in D.eval_sets().values() for k in D._keys(c)}
    chal = ph.init_challenger()
    total_held = 0
    question_set = jax.jit(ph.question_set)  # arms are traced flags: one compile
    for name in ("coevolve", "no_band", "oracle", "seed_only"):
        flags = loop._flags(loop.ARMS[name], cfg)
        q = question_set(chal, solver, seed, calib, jax.random.key(7), flags)
        keep = np.asarray(q["keep"])
        kept = D.Carts(*(np.asarray(x)[keep] for x in q["carts"]))
        assert len(kept) > 0
        assert not held & set(D._keys(kept)), name
        total_held += int(np.asarray(q["held"]).sum())
    assert total_held > 0  # proposals did hit the evaluation set and were dropped


# ------------------------------------------------------------------- labels
def test_line_totals_of_correct_chains_are_the_line_totals():
    c = _jax(D.seed_set(4, 256))
    trace = S.teacher_trace(c, jax.random.key(0), 4)
    value, visited = S.line_totals(trace)
    live = np.arange(D.N_MAX)[None, :] < np.asarray(c.n)[:, None]
    hidden = (np.asarray(c.task) == D.ABDUCTION)[:, None] & (
        np.arange(D.N_MAX)[None, :] == np.asarray(c.missing)[:, None])
    want_visited = live & ~hidden
    assert np.array_equal(np.asarray(visited), want_visited)
    lines = np.asarray(c.price) * np.asarray(c.quantity)
    assert np.array_equal(np.asarray(value)[want_visited], lines[want_visited])


def _slipped_chains(c: D.Carts, k: int, slips: list[tuple[int, int, int]]) -> S.Trace:
    """``k`` correct chains per cart (cart-major rows, each in its own item order), then
    for each ``(sample, slot, d)`` that chain slips by ``+d`` on the step that visits
    cart slot ``slot`` and carries the slip on to its answer."""
    t = S.teacher_trace(S.repeat(c, k), jax.random.key(5), 4)
    token, state, item = np.array(t.token), np.array(t.state), np.asarray(t.item)
    for sample, slot, d in slips:
        for row in range(sample, token.shape[0], k):
            step = int(np.flatnonzero(item[row] == slot)[0])
            token[row, step:] += d
            state[row, step + 1:] += d
    answer = token[np.arange(token.shape[0]), np.asarray(c.n.repeat(k)) - 1]
    return S.Trace(t.kind, jnp.asarray(state), t.x, t.y, jnp.asarray(token), t.active,
                   jnp.asarray(answer), t.item)  # fmt: skip


def test_item_votes_outvote_slips_a_cart_majority_cannot():
    # carts of 4 items; 5 chains each; chains 0, 1, 2 each slip once, on different
    # items: 3 of 5 final answers are total + 1, but no item loses its majority.
    c = D.seed_set(6, 400)
    c = _jax(c.take(np.flatnonzero((c.n == 4) & (c.task == D.DEDUCTION))))
    k = 5
    trace = _slipped_chains(c, k, [(0, 0, 1), (1, 1, 1), (2, 3, 1)])
    answers = trace.answer.reshape(-1, k)
    truth = np.asarray(c.total)
    cart = L.vote(zero_jax, trace, answers, c.task, "cart")
    item = L.vote(zero_jax, trace, answers, c.task, "item")
    assert np.array_equal(np.asarray(cart.label), truth + 1)  # the majority is wrong
    assert np.allclose(np.asarray(cart.consistency), 3 / 5)
    assert np.array_equal(np.asarray(item.label), truth)  # per-item votes are right
    assert np.allclose(np.asarray(item.score), 4 / 5)  # each slipped item keeps 4 of 5


def test_step_advantages_blame_only_the_slipped_step():
    c = D.seed_set(9, 400)
    c = _jax(c.take(np.flatnonzero((c.n == 3) & (c.task == D.DEDUCTION))[:20]))
    k = 4
    trace = _slipped_chains(c, k, [(0, 1, 2)])  # chain 0 adds 2 too many on slot 1
    truth_items = np.where(np.arange(D.N_MAX)[None, :] < 3,
                           np.asarray(c.price) * np.asarray(c.quantity), 0)  # fmt: skip
    final = jnp.zeros((len(c), k))
    adv = np.asarray(L.step_advantages(zero_jax, trace, jnp.asarray(truth_items), final,
                                       jnp.ones(len(c), bool)))  # fmt: skip
    item = np.asarray(trace.item)
    on_slot1 = (item == 1) & np.asarray(trace.active)
    # rewards of slot 1 over the 4 chains: [0, 1, 1, 1]; mean .75, std (ddof 1) .5
    want = np.where(on_slot1, np.where(np.arange(len(adv))[:, None] % k == 0, -1.5, 0.5), 0.0)
    np.testing.assert_allclose(adv, want, atol=1e-4)


def test_calibration_fit_matches_scipy():
    from scipy.optimize import minimize

    rng = np.random.default_rng(0)
    n = 600
    score = rng.integers(1, 11, n) / 10
    task = rng.integers(0, 2, n)
    w_true = np.array([[0.5, 3.0], [-0.5, 1.5]])
    p = 1 / (1 + np.exp(-(w_true[task, 0] + w_true[task, 1] * (2 * score - 1))))
    right = rng.random(n) < p
    got = np.asarray(L.fit_calibration(jnp.asarray(score, jnp.float32), jnp.asarray(right),
                                       jnp.asarray(task)))  # fmt: skip
    for t in (0, 1):
        x = np.stack([np.ones(n), 2 * score - 1], 1)[task == t]
        y = right[task == t].astype(float)

        def nll(w, x=x, y=y):
            z = x @ w
            return np.sum(np.logaddexp(0, z) - y * z) + 0.5 * w @ w  # ridge 1.0

        ref = minimize(nll, np.zeros(2), method="BFGS", options={"gtol": 1e-9}).x
        np.testing.assert_allclose(got[t], ref, atol=2e-3)
    rel = np.asarray(L.reliability(jnp.asarray(got), jnp.asarray([0.2, 1.0]), jnp.asarray([0, 0])))
    assert rel[0] < rel[1]  # more agreement, more trust


def test_derived_abduction_label_is_right_iff_the_total_is():
    c = D.seed_set(8, 256)
    c = _jax(c.take(np.flatnonzero(c.task == D.DEDUCTION)))
    truth = np.asarray(c.total)
    for shown, right in ((truth, True), (truth + 1, False)):
        new, label = L.derive_abduction(c, jnp.asarray(shown), jax.random.key(2))
        assert np.all(np.asarray(new.task) == D.ABDUCTION)
        assert np.array_equal(np.asarray(new.total), shown)
        hidden = np.where(np.asarray(new.field) == D.PRICE,
                          np.asarray(c.price)[np.arange(len(c)), np.asarray(new.missing)],
                          np.asarray(c.quantity)[np.arange(len(c)), np.asarray(new.missing)])
        assert np.array_equal(np.asarray(label), hidden)  # the hidden field was visible
        ok = np.asarray(D.well_formed(new))
        assert ok.mean() > 0.9  # only zero partners are ill-formed; nothing else is checked
        assert np.all((np.asarray(new.answer) == np.asarray(label))[ok] == right)


# --------------------------------------------------------------------- report
def _fake_result(diffs: list[float]) -> dict:
    def ev(g):
        return {t: {"greedy": g, "sampled": g, "majority": g} for t in ("deduction", "abduction")}

    def arm(g):
        return {"rounds": [{"eval": ev(g), "accepted": 1, "accepted_label_correct": 1}]}

    seeds = [{"seed": i, "base": ev(0.5),
              "arms": {"coevolve": arm(0.5 + d), "seed_only": arm(0.5)}}
             for i, d in enumerate(diffs)]  # fmt: skip
    return {"seeds": seeds, "arms": ["coevolve", "seed_only"], "seconds": 1.0}


def test_paired_test_matches_an_exact_sign_flip_enumeration():
    diffs = [0.031, -0.012, 0.024, 0.047, 0.005, 0.019, -0.003, 0.038, 0.026, 0.011]
    out = report.paired(_fake_result(diffs))
    d = np.array(out["difference"])
    np.testing.assert_allclose(d, diffs, atol=1e-12)
    # exact two-sided Wilcoxon signed-rank p by enumerating all 2^10 sign patterns
    ranks = np.argsort(np.argsort(np.abs(d))) + 1
    w_obs = ranks[d > 0].sum()
    mean_w = ranks.sum() / 2
    stats_all = np.array([sum(r for r, s in zip(ranks, signs, strict=True) if s)
                          for signs in itertools.product((0, 1), repeat=len(d))])  # fmt: skip
    p_exact = np.mean(np.abs(stats_all - mean_w) >= abs(w_obs - mean_w))
    assert out["wilcoxon_p"] == pytest.approx(p_exact, abs=1e-12)
    assert out["mean"] == pytest.approx(np.mean(diffs))
    lo, hi = out["ci95"]
    assert lo < np.mean(diffs) < hi and lo > -0.01 and hi < 0.04
    o = report.outcome(_fake_result(diffs))["primary"]
    assert o["p_below_alpha"] and o["mean_gain_at_least"] is False and not o["met"]


def test_cli_refuses_fresh_seeds_without_the_flag(capsys):
    with pytest.raises(SystemExit):
        main(["--smoke", "--seeds", "3", str(loop.FRESH_FROM), "--quiet"])
    assert "--fresh" in capsys.readouterr().err


# ------------------------------------------------------------------- layering
def test_selfplay_sits_above_the_library_and_uses_its_public_api():
    import ast
    import pathlib
    import subprocess
    import sys

    root = pathlib.Path(D.__file__).resolve().parent
    for path in sorted(root.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith("zero_jax."), (path.name, node.module)
                if node.module == "zero_jax":
                    assert all(a.name in zero_jax.__all__ for a in node.names), path.name
            if isinstance(node, ast.Import):
                assert all(a.name == "zero_jax" or not a.name.startswith("zero_jax.")
                           for a in node.names), path.name  # fmt: skip
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                if node.value.id == "zero_jax":
                    assert node.attr in zero_jax.__all__, (path.name, node.attr)
    # the library never loads the application
    code = "import sys, zero_jax; print(any(m.startswith('zero_selfplay') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    lib = pathlib.Path(zero_jax.__file__).resolve().parent
    assert not any("zero_selfplay" in p.read_text() for p in lib.rglob("*.py"))


# ------------------------------------------------------------------------- loop
def _strip(result: dict) -> str:
    def clean(x):
        if isinstance(x, dict):
            return {k: clean(v) for k, v in x.items() if "seconds" not in k}
        if isinstance(x, list):
            return [clean(v) for v in x]
        return x

    return json.dumps(clean(result), sort_keys=True)


def test_cli_smoke_is_deterministic(tmp_path, capsys):
    outs = []
    for i in range(2):
        path = tmp_path / f"run{i}.json"
        argv = ["--smoke", "--seeds", "5", "--arms", "coevolve", "seed_only", "--quiet",
                "--json", str(path)]  # fmt: skip
        if i == 0:
            argv += ["--plot", str(tmp_path / "plot.png")]
        assert main(argv) == 0
        outs.append(json.loads(path.read_text()))
    prov = outs[0].pop("provenance")
    outs[1].pop("provenance")
    assert len(prov["git_revision"] or "x" * 40) == 40 and prov["timestamp_utc"].endswith("+00:00")
    assert prov["versions"]["jax"] == jax.__version__
    assert _strip(outs[0]) == _strip(outs[1])
    assert (tmp_path / "plot.png").stat().st_size > 10_000
    text = capsys.readouterr().out
    assert "coevolve" in text and "->" in text and "Wilcoxon" in text


class Spy:
    """Records every reward call (made while the jitted phases trace) and delegates."""

    NAMES = ("consensus", "curriculum_mask", "pseudo_rewards", "challenger_rewards",
             "group_advantages")  # fmt: skip

    def __init__(self, override=None):
        self.calls: list[tuple[str, dict]] = []
        self.override = override or {}

    def __getattr__(self, name):
        if name not in self.NAMES:
            raise AttributeError(name)
        real = self.override.get(name, getattr(zero_jax, name))

        def wrapper(*args, **kwargs):
            self.calls.append((name, kwargs))
            return real(*args, **kwargs)

        return wrapper


def test_loop_takes_every_reward_from_the_library():
    # Zero the two rewards that drive learning: if the loop took its training signal
    # from anywhere else, the Solver or the Challenger would still move.
    def zeros_like_answers(answers, labels):
        return jnp.zeros(answers.shape, jnp.float32)

    def zeros_like_consistency(consistency, clusters, valid, strength=1.0, *, num_clusters=None):
        return jnp.zeros(consistency.shape, jnp.float32)

    spy = Spy({"pseudo_rewards": zeros_like_answers,
               "challenger_rewards": zeros_like_consistency})  # fmt: skip
    # no KL anchor here: at the anchor its gradient is only zero up to rounding
    cfg = dataclasses.replace(SMOKE, kl=0.0)
    out = run((5,), cfg, ("coevolve",), rewards=spy)["seeds"][0]
    assert {n for n, _ in spy.calls} == set(Spy.NAMES)  # every reward was looked up
    chal = [kw for n, kw in spy.calls if n == "challenger_rewards"]
    assert chal and all(kw.get("num_clusters") == D.NUM_TEMPLATES for kw in chal)
    last = out["arms"]["coevolve"]["rounds"][-1]
    assert last["eval"] == out["base"]  # no pseudo-reward, no Solver update
    policy = np.asarray(last["policy"])
    usable = policy > 0
    assert np.allclose(policy[usable], policy[usable][0])  # Challenger still uniform
