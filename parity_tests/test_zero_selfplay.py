"""zero_selfplay: the cart domain, determinism, and that the loop's rewards come
from the library (a spy is injected in place of the ``zero_jax`` module)."""

from __future__ import annotations

import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest

pytest.importorskip("flax")
pytest.importorskip("optax")

import zero_jax  # noqa: E402
from zero_selfplay import domain as D  # noqa: E402
from zero_selfplay.__main__ import main  # noqa: E402
from zero_selfplay.loop import SMOKE, run  # noqa: E402

#: SHA-256 of the frozen evaluation sets; a change here means every published
#: number was measured on different carts.
EVAL_FINGERPRINTS = {
    "deduction": "d68f0b96f5c60c9631333c3a9bed18306a64c05ebbe60af1264f55368c09b9a7",
    "abduction": "8825aa97986c6ab345aba522fe840dc918d621c8253844f6bbf95d3af47ffef9",
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
    assert not D.well_formed(overflow)[0]  # total outside the answer vocabulary
    # abduction: hide the price of item 0 (quantity 2); others sum to 20.
    abd = _cart([3, 4], [2, 5], D.ABDUCTION, 26, missing=0, field=D.PRICE)
    assert D.well_formed(abd)[0] and D.solve(abd)[0] == 3
    zero = _cart([3, 4], [0, 5], D.ABDUCTION, 20, missing=0, field=D.PRICE)
    assert not D.well_formed(zero)[0]  # x * 0 = 0: every price fits, no unique answer
    inexact = _cart([3, 4], [2, 5], D.ABDUCTION, 27, missing=0, field=D.PRICE)
    assert not D.well_formed(inexact)[0]  # 7 / 2 is not an integer
    negative = _cart([3, 4], [2, 5], D.ABDUCTION, 10, missing=0, field=D.PRICE)
    assert not D.well_formed(negative)[0]


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
    held = {k for c in a.values() for k in D._keys(c)}
    assert not held & set(D._keys(s0))
    assert np.all(D.well_formed(s0))


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
    assert _strip(outs[0]) == _strip(outs[1])
    assert (tmp_path / "plot.png").stat().st_size > 10_000
    text = capsys.readouterr().out
    assert "coevolve" in text and "->" in text and "3_headline" in text


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
    out = run((5,), SMOKE, ("coevolve",), rewards=spy)["seeds"][0]
    assert {n for n, _ in spy.calls} == set(Spy.NAMES)  # every reward was looked up
    chal = [kw for n, kw in spy.calls if n == "challenger_rewards"]
    assert chal and all(kw.get("num_clusters") == D.NUM_TEMPLATES for kw in chal)
    last = out["arms"]["coevolve"]["rounds"][-1]
    assert last["eval"] == out["base"]  # no pseudo-reward, no Solver update
    policy = np.asarray(last["policy"])
    usable = policy > 0
    assert np.allclose(policy[usable], policy[usable][0])  # Challenger still uniform
