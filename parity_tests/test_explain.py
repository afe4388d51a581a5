"""The explanation page (``zero-lab --html``) in a real browser.

The page is generated once by the CLI in a subprocess that cannot import torch or
selenium (the ``lab`` extra is enough), then opened from disk in headless Chromium
(Debian's ``chromium`` and ``chromium-driver``, which ``.ci/run`` installs) with no
network, and driven with Selenium:

- each section's loop is stepped with the keyboard (Next / Previous), the cells of
  each stage appear at that stage, and the worked batch's numbers equal the problem
  texts' values and ``zero_jax`` called here on the inputs the page displays;
- every control is moved to several positions (at least five per reward) and the
  displayed score is compared with ``zero_jax`` on the inputs the controls display,
  both the printed text (three decimals) and the full float in ``data-value``;
- the Lab figures and summary are the run the same CLI call printed (``--json``: every
  step of every lab's target probability); the threshold is drawn at ``PASS_PROB``;
- at 1280 x 800 and at 400 x 800: no horizontal page overflow, no two text boxes
  overlap, no text box lower than 11 px (a 9.5 px font), every control labelled; a
  screenshot of each section;
- any JavaScript error or blocked load in the console fails the test.

Screenshots go to pytest's temporary directory; with ``ZERO_EXPLAIN_SHOTS=docs/explain``
the 1280-wide ones are also written there (the pictures the README links).
"""

from __future__ import annotations

import base64
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import numpy as np
import pytest

import zero_jax
from parity_tests.cases import f64
from zero_lab import LABS, PASS_PROB, get_lab

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
    pytest.skip(
        "needs Debian's chromium and chromium-driver (.ci/run installs them)",
        allow_module_level=True,
    )
webdriver = pytest.importorskip("selenium.webdriver", reason="needs selenium (extra 'dev')")
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SECTIONS = ("challenger", "pseudo", "proposer", "mm")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
WIDE, NARROW = (1280, 800), (400, 800)

GENERATE = textwrap.dedent(
    """
    import importlib.abc, sys
    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name.split(".")[0] in {"torch", "selenium"}:
                raise ImportError("blocked for the test: " + name)
    sys.meta_path.insert(0, Block())
    from zero_lab.cli import main
    sys.exit(main(["--json", "--html", sys.argv[1]]))
    """
)


# --------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """``(path, stdout)`` of one ``zero-lab --json --html`` run (torch and selenium blocked)."""
    path = tmp_path_factory.mktemp("explain") / "explain.html"
    proc = subprocess.run(
        [sys.executable, "-c", GENERATE, str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert path.is_file() and json.loads(proc.stdout)["passed"]
    return path, proc.stdout


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    return tmp_path_factory.mktemp("shots")


@pytest.fixture(scope="module")
def browser():
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    profile = tempfile.mkdtemp(prefix="zero-explain-chromium-")
    for flag in (*FLAGS, f"--user-data-dir={profile}"):
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    driver.set_script_timeout(30)
    yield driver
    driver.quit()


def console_errors(driver) -> list[dict]:
    """Console entries at level SEVERE since the last call (JS errors, blocked loads)."""
    return [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def open_page(driver, path, size=WIDE):
    driver.set_window_size(*size)
    driver.get(path.as_uri())
    WebDriverWait(driver, 20).until(
        lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "true"
    )


@pytest.fixture
def page(browser, generated):
    """The page freshly opened at 1280 x 800; the test fails on any console error."""
    console_errors(browser)  # drop what earlier tests left
    open_page(browser, generated[0])
    yield browser
    errors = console_errors(browser)
    assert not errors, errors


# --------------------------------------------------------------------------- helpers
# Controls are moved with the keyboard, one WebDriver call each; the page is read back
# in one script call per position.
def by_id(driver, cid):
    return driver.find_element(By.ID, cid)


def set_range(driver, cid, index, lo=0):
    """Move a range input (minimum ``lo``) to ``index``: Home, then arrow keys."""
    by_id(driver, cid).send_keys(Keys.HOME + Keys.ARROW_RIGHT * (index - lo))


def set_check(driver, cid, on):
    el = by_id(driver, cid)
    if el.is_selected() != bool(on):
        el.send_keys(Keys.SPACE)


def set_select(driver, cid, position):
    """Pick a select's option at ``position`` (options 0, 1, 2, ...): Home, then arrows."""
    by_id(driver, cid).send_keys(Keys.HOME + Keys.ARROW_DOWN * position)


READ = """
return Object.fromEntries(arguments[0].map(id => {
  const e = document.getElementById(id);
  const v = e.type === 'checkbox' ? String(e.checked) : e.tagName === 'SELECT' ? e.value : null;
  return [id, [v === null ? e.textContent.trim() : v, e.getAttribute('data-value')]];
}));
"""


def read(driver, ids):
    """``{id: (text, data-value)}`` of the elements (a select's value, a box's state)."""
    return driver.execute_script(READ, list(ids))


def shown(vals, cid) -> float:
    """The value a control displays next to it (its axis label), as a float."""
    return float(vals[cid + "-out"][0])


def check(vals, cid, expected):
    """The displayed score (printed text and full ``data-value``) equals ``expected``."""
    text, value = vals[cid]
    expected = float(expected)
    assert float(value) == pytest.approx(expected, rel=1e-12, abs=1e-12), (cid, value, expected)
    assert abs(float(text) - expected) <= 5e-4 + 1e-12, (cid, text, expected)



def i64(x):
    return np.asarray(x, dtype=np.int64)


def flags(x):
    return np.asarray(x, dtype=bool)


RNG = np.random.default_rng(21)


# --------------------------------------------------------------------------- self-contained
def test_page_loads_nothing_from_outside(page, generated):
    html = generated[0].read_text(encoding="utf-8")
    assert "Content-Security-Policy" in html and "default-src 'none'" in html
    for pattern in (r"<script[^>]+src=", r"<link\b", r"<img\b", r"@import", r"url\(", r"<iframe"):
        assert not re.search(pattern, html, re.I), pattern
    resources = page.execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name)"
    )
    assert resources == []
    assert page.execute_script("return document.querySelectorAll('section.family').length") == 4


def test_the_console_check_catches_an_error(browser, generated):
    """The guard every other test relies on: an uncaught error reaches the log."""
    console_errors(browser)
    open_page(browser, generated[0])
    browser.execute_script("setTimeout(() => { throw new Error('planted by the test'); }, 0)")
    WebDriverWait(browser, 5).until(lambda d: d.execute_script("return true"))
    errors = []
    for _ in range(20):
        errors += console_errors(browser)
        if errors:
            break
        browser.execute_script("return new Promise(r => setTimeout(r, 50))")
    assert any("planted by the test" in e["message"] for e in errors), errors


# --------------------------------------------------------------------------- the loops
VISIBILITY = """
const loop = arguments[0];
return [...loop.querySelectorAll('[data-from]')].map(
  e => [parseInt(e.dataset.from), getComputedStyle(e).visibility]);
"""

WORKED = """
return [...arguments[0].querySelectorAll('table')].map(t => [...t.querySelectorAll('tbody tr')]
  .map(tr => Object.fromEntries([...tr.querySelectorAll('td[data-col]')].map(td => [
    td.dataset.col,
    {text: td.textContent.trim(),
     values: [...td.querySelectorAll('.v')].map(v => parseFloat(v.dataset.value))}]))));
"""


@pytest.mark.parametrize("sid", SECTIONS)
def test_the_loop_steps_through_its_four_stages(page, sid):
    loop = page.find_element(By.CSS_SELECTOR, f"#{sid} .loop")
    prev = loop.find_element(By.CSS_SELECTOR, "button.prev")
    nxt = loop.find_element(By.CSS_SELECTOR, "button.next")
    status = loop.find_element(By.CSS_SELECTOR, ".status")
    names = ["Active model", "Frozen evaluator", "Feedback", "Filtering"]
    assert not prev.is_enabled()
    for stage, name in enumerate(names):
        assert status.text == f"Step {stage + 1} of 4: {name}"
        cells = page.execute_script(VISIBILITY, loop)
        assert {f for f, _ in cells} == {0, 1, 2, 3}
        for frm, vis in cells:
            assert vis == ("visible" if frm <= stage else "hidden"), (stage, frm)
        texts = loop.find_elements(By.CSS_SELECTOR, "[data-stage-text]")
        assert [t.is_displayed() for t in texts] == [i == stage for i in range(4)]
        if stage < 3:
            nxt.send_keys(Keys.ENTER)  # keyboard activation of the focused button
    assert not nxt.is_enabled()
    prev.send_keys(Keys.ENTER)
    assert status.text == "Step 3 of 4: Feedback"
    loop.find_element(By.CSS_SELECTOR, '[data-goto="0"]').click()
    assert status.text == "Step 1 of 4: Active model"
    loop.find_element(By.CSS_SELECTOR, '[data-goto="3"]').click()
    check_worked(sid, page.execute_script(WORKED, loop))


def _ids(text):
    return [int(x) for x in text.split()]


def _close(got, want):
    np.testing.assert_allclose(
        np.asarray(got, float), np.asarray(want, float), rtol=1e-12, atol=1e-12
    )


def check_worked(sid, tables):
    """The worked batch against the problem texts and zero_jax on the displayed inputs."""
    if sid == "challenger":
        (rows,) = tables
        answers = i64([_ids(r["answers"]["text"]) for r in rows])
        clusters = i64([int(r["template"]["text"]) for r in rows])
        valid = flags([r["format"]["text"] == "valid" for r in rows])
        labels, p = zero_jax.consensus(answers, 10)
        r = zero_jax.challenger_rewards(p, clusters, valid, 1.0)
        assert [int(x["majority"]["text"]) for x in rows] == labels.tolist()
        _close([x["p"]["values"][0] for x in rows], p)
        _close([x["u"]["values"][0] for x in rows], zero_jax.uncertainty_reward(p))
        assert [int(x["size"]["text"]) for x in rows] == zero_jax.cluster_sizes(clusters).tolist()
        _close([x["reward"]["values"][0] for x in rows], r)
        adv = zero_jax.group_advantages(r[None])[0]
        _close([x["advantage"]["values"][0] for x in rows], adv)
        band = zero_jax.curriculum_mask(p).tolist()
        assert [x["band"]["text"] == "kept" for x in rows] == band
        # 107: p = 0.5 with two copies in a batch of four gives 0.5; invalid format gives 0
        assert float(p[0]) == 0.5 and int(zero_jax.cluster_sizes(clusters)[0]) == 2
        assert float(r[0]) == 0.5 and not bool(valid[1]) and float(r[1]) == 0.0
    elif sid == "pseudo":
        (rows,) = tables
        old = i64([_ids(x["old"]["text"]) for x in rows])
        fresh = i64([_ids(x["fresh"]["text"]) for x in rows])
        labels, p = zero_jax.consensus(old, 10)
        assert [int(x["label"]["values"][0]) for x in rows] == labels.tolist()
        _close([x["p"]["values"][0] for x in rows], p)
        r = zero_jax.pseudo_rewards(fresh, labels)
        _close([x["reward"]["values"] for x in rows], r)
        revote, _ = zero_jax.consensus(fresh, 10)
        assert [int(x["revote"]["text"].split(":")[0].split()[-1]) for x in rows] == revote.tolist()
        keep = zero_jax.curriculum_mask(p, 0.25, 0.75).tolist()
        assert [x["band"]["text"] == "kept" for x in rows] == keep
        adv = np.asarray(zero_jax.group_advantages(r))
        for x, a, k in zip(rows, adv, keep, strict=True):
            if k:
                _close(x["advantage"]["values"], a)
            else:
                assert x["advantage"]["text"] == "not trained"
        # 108: votes [1, 1, 0, 0] tie to 0 with consistency 0.5; label 1 vs [2, 2, 1] -> [0, 0, 1]
        assert old[0].tolist() == [1, 1, 0, 0] and labels[0] == 0 and float(p[0]) == 0.5
        assert labels[1] == 1 and fresh[1].tolist() == [2, 2, 1] and r[1].tolist() == [0, 0, 1]
        assert keep == [True, True, False, True]  # both edges, 0.75 (B) and 0.25 (D), kept
    elif sid == "proposer":
        (rows,) = tables

        def logps(text):
            vals = [None if t == "pad" else float(t) for t in text.split()]
            return [RNG.normal() if v is None else v for v in vals], [v is not None for v in vals]

        base, mask = zip(*(logps(x["base"]["text"]) for x in rows), strict=True)
        hinted, mask_h = zip(*(logps(x["hinted"]["text"]) for x in rows), strict=True)
        assert mask == mask_h
        delta = zero_jax.hint_delta(f64(base), f64(hinted), flags(mask))
        _close([x["delta"]["values"][0] for x in rows], delta)
        lengths = i64([int(x["length"]["text"].split()[0]) for x in rows])
        share = f64([float(x["share"]["text"]) for x in rows])
        valid = flags([x["format"]["text"] == "valid" for x in rows])
        r = zero_jax.proposer_rewards(delta, lengths, share, valid)
        _close([x["reward"]["values"][0] for x in rows], r)
        _close([x["advantage"]["values"][0] for x in rows], zero_jax.group_advantages(r[None])[0])
        # 109: shifts [2, 1] give 1.5; an empty row gives 0; invalid: -1 - share
        assert float(delta[0]) == pytest.approx(1.5) and float(delta[2]) == 0.0
        assert not any(mask[2]) and float(r[3]) == pytest.approx(-1.0 - float(share[3]))
    else:
        coder, solver = tables
        e = flags([x["renders"]["text"] == "yes" for x in coder])
        syn = flags([x["syntax"]["text"] == "yes" for x in coder])

        def score(t):
            return float("nan") if t == "—" else float(t)

        s = f64([score(x["easy"]["text"]) for x in coder])
        c = f64([score(x["consistency"]["text"]) for x in coder])
        rc = zero_jax.coder_rewards(e, s, c, syn)
        _close([x["reward"]["values"][0] for x in coder], rc)
        _close([x["advantage"]["values"][0] for x in coder], zero_jax.group_advantages(rc[None])[0])
        answers = i64([_ids(x["answers"]["text"]) for x in solver])
        fmt = flags([[ch == "✓" for ch in x["formatted"]["text"].split()] for x in solver])
        silver, _ = zero_jax.consensus(answers, 10)
        assert [int(x["silver"]["text"]) for x in solver] == silver.tolist()
        rs = zero_jax.solver_rewards(answers, fmt, 10, 0.9)
        _close([x["reward"]["values"] for x in solver], rs)
        # 113: easy 0.8, c 0.5 -> 2.3; render and syntax failure -> -0.15;
        # agreeing unformatted -> 0.9, formatted disagreeing -> 0.1
        assert float(rc[0]) == pytest.approx(2.3) and float(s[0]) == 0.8 and float(c[0]) == 0.5
        assert float(rc[1]) == pytest.approx(-0.15) and not bool(e[1]) and bool(syn[1])
        assert float(rs[0, 0]) == pytest.approx(0.9) and not bool(fmt[0, 0])
        assert float(rs[0, 2]) == pytest.approx(0.1) and bool(fmt[0, 2])


# --------------------------------------------------------------------------- controls
def test_challenger_controls(page):
    # (B, |C|, malformed copies, p index, strength index, valid); the first three are
    # the problem's example (0.5), with a malformed copy (still 0.5) and gated (0)
    positions = [(4, 2, 0, 10, 4, True), (4, 2, 1, 10, 4, True), (4, 2, 0, 10, 4, False)]
    for _ in range(5):
        b = int(RNG.integers(1, 9))
        n = int(RNG.integers(1, b + 1))
        positions.append(
            (
                b,
                n,
                int(RNG.integers(0, n)),
                int(RNG.integers(0, 21)),
                int(RNG.integers(0, 9)),
                bool(RNG.random() < 0.8),
            )
        )
    controls = ["ch-B-out", "ch-n-out", "ch-m-out", "ch-p-out", "ch-lam-out", "ch-valid"]
    for pos in positions:
        b, n, m, pi, li, valid = pos
        set_range(page, "ch-B", b, lo=1)
        set_range(page, "ch-n", n, lo=1)
        set_range(page, "ch-m", m)
        set_range(page, "ch-p", pi)
        set_range(page, "ch-lam", li)
        set_check(page, "ch-valid", valid)
        vals = read(page, [*controls, "ch-r", "ch-u"])
        b, n, m = (int(shown(vals, k)) for k in ("ch-B", "ch-n", "ch-m"))
        p, lam = shown(vals, "ch-p"), shown(vals, "ch-lam")
        assert (b, n, m, vals["ch-valid"][0]) == (pos[0], pos[1], pos[2], str(valid).lower())
        # the batch the controls describe: row 0, n - 1 copies of its template (the
        # first m malformed), every other row on a template of its own
        ids = RNG.permutation(np.arange(-50, 50))[: b - n + 1]
        clusters = [int(ids[0])] * n + [int(x) for x in ids[1:]]
        consistency = [p, *RNG.uniform(0, 1, b - 1)]
        ok = [valid] + [i > m for i in range(1, b)]
        want = zero_jax.challenger_rewards(f64(consistency), i64(clusters), flags(ok), lam)[0]
        check(vals, "ch-r", want)
        check(vals, "ch-u", zero_jax.uncertainty_reward(f64([p]))[0])
        if pos[:5] == (4, 2, 0, 10, 4):
            assert vals["ch-r"][0] == ("0.5" if valid else "0")  # 107


def test_pseudo_label_controls(page):
    votes = [[1, 1, 0, 0], [3, 3, 2, 2], [0, 1, 2, 3], [2, 2, 2, 2], [1, 1, 1, 2]]
    votes += [RNG.integers(0, 4, 4).tolist() for _ in range(2)]
    ids = [f"ps-v{i}" for i in range(4)] + [f"ps-f{j}" for j in range(3)]
    outs = ["ps-label", "ps-p", "ps-frozen", "ps-r0", "ps-r1", "ps-r2", "ps-revote"]
    for v in votes:
        fresh = [2, 2, 1] if v == [1, 1, 1, 2] else RNG.integers(0, 4, 3).tolist()
        for cid, x in zip(ids, v + fresh, strict=True):
            set_select(page, cid, x)
        vals = read(page, ids + outs)
        assert [int(vals[c][0]) for c in ids] == v + fresh
        label, p = zero_jax.consensus(i64([v]), 10)
        check(vals, "ps-label", label[0])
        check(vals, "ps-p", p[0])
        check(vals, "ps-frozen", label[0])
        want = zero_jax.pseudo_rewards(i64([fresh]), label)[0]
        for j in range(3):
            check(vals, f"ps-r{j}", want[j])
        revote, _ = zero_jax.consensus(i64([fresh]), 10)
        assert f"would make {int(revote[0])} the label" in vals["ps-revote"][0]
        if v == [1, 1, 0, 0]:
            assert (vals["ps-label"][0], vals["ps-p"][0]) == ("0", "0.5")  # 108
        if v == [1, 1, 1, 2]:  # 108: against frozen label 1, [2, 2, 1] earns [0, 0, 1]
            assert [vals[f"ps-r{j}"][0] for j in range(3)] == ["0", "0", "1"]


DOTS = """return [...document.querySelectorAll('#ps-band-chart circle')]
  .map(c => [parseFloat(c.dataset.p), c.dataset.kept === 'true']);"""


def test_band_controls(page):
    # (low, high, probe) indices on the 0.05 grid: the edges 0.25 / 0.75 are kept
    positions = [(5, 15, 5), (5, 15, 15), (6, 14, 15), (5, 15, 16), (0, 20, 0), (14, 6, 10)]
    positions += [tuple(int(x) for x in RNG.integers(0, 21, 3)) for _ in range(2)]
    ids = ["ps-low-out", "ps-high-out", "ps-probe-out", "ps-kept", "ps-inband", "ps-band-msg"]
    votes = [int(v[0]) for v in read(page, [f"ps-v{i}" for i in range(4)]).values()]
    _, pv = zero_jax.consensus(i64([votes]), 10)
    for pos in positions:
        set_range(page, "ps-low", pos[0])
        set_range(page, "ps-high", pos[1])
        set_range(page, "ps-probe", pos[2])
        vals = read(page, ids)
        low, high, p = (shown(vals, k) for k in ("ps-low", "ps-high", "ps-probe"))
        grid, dots = zip(*page.execute_script(DOTS), strict=True)
        if low > high:
            with pytest.raises(ValueError) as err:
                zero_jax.curriculum_mask(f64([p]), low, high)
            assert str(err.value) in vals["ps-band-msg"][0]
            assert not any(dots)
            continue
        assert vals["ps-band-msg"][0] == ""
        want = bool(zero_jax.curriculum_mask(f64([p]), low, high)[0])
        assert tuple(vals["ps-kept"]) == ("kept" if want else "dropped", str(want).lower())
        assert list(dots) == zero_jax.curriculum_mask(f64(grid), low, high).tolist()
        inband = bool(zero_jax.curriculum_mask(pv, low, high)[0])
        assert vals["ps-inband"][0] == ("kept" if inband else "dropped")
        if pos[:2] == (5, 15) and pos[2] in (5, 15):
            assert want  # 108: both 0.25 and 0.75 are in the band


def test_hint_delta_controls(page):
    # (shift indices on -1 .. 3 by 0.5, mask): [2, 1] with the third token padding -> 1.5
    positions = [((6, 4, 2), (1, 1, 0)), ((6, 4, 2), (0, 0, 0)), ((0, 8, 3), (1, 1, 1))]
    positions += [
        (tuple(int(x) for x in RNG.integers(0, 9, 3)), tuple(int(x) for x in RNG.integers(0, 2, 3)))
        for _ in range(3)
    ]
    legends = page.execute_script(
        "return [...document.querySelectorAll('fieldset.token legend')].map(l => l.textContent)"
    )
    base = [float(re.search(r"log p = (-?[\d.]+)", t).group(1)) for t in legends]
    ids = [f"hd-s{t}-out" for t in range(3)] + [f"hd-m{t}" for t in range(3)] + ["hd-delta"]
    for shift_idx, mask in positions:
        for t in range(3):
            set_range(page, f"hd-s{t}", shift_idx[t])
            set_check(page, f"hd-m{t}", mask[t])
        vals = read(page, ids)
        assert [vals[f"hd-m{t}"][0] == "true" for t in range(3)] == [bool(m) for m in mask]
        shifts = [shown(vals, f"hd-s{t}") for t in range(3)]
        hinted = [b - s for b, s in zip(base, shifts, strict=True)]
        check(vals, "hd-delta", zero_jax.hint_delta(f64([base]), f64([hinted]), flags([mask]))[0])
        if (shift_idx, mask) == ((6, 4, 2), (1, 1, 0)):
            assert vals["hd-delta"][0] == "1.5"  # 109
        if not any(mask):
            assert vals["hd-delta"][0] == "0"  # an empty answer gives 0


def test_proposer_controls(page):
    # (delta index on -1 .. 3 by 0.25, length index on 0 .. 3000 by 100, share index, valid)
    positions = [(10, 2, 0, True), (14, 1, 10, False), (8, 9, 5, True), (16, 30, 20, True)]
    positions += [
        (
            int(RNG.integers(0, 17)),
            int(RNG.integers(0, 31)),
            int(RNG.integers(0, 21)),
            bool(RNG.random() < 0.7),
        )
        for _ in range(3)
    ]
    ids = ["pr-delta-out", "pr-len-out", "pr-share-out", "pr-valid", "pr-r"]
    for pos in positions:
        set_range(page, "pr-delta", pos[0])
        set_range(page, "pr-len", pos[1])
        set_range(page, "pr-share", pos[2])
        set_check(page, "pr-valid", pos[3])
        vals = read(page, ids)
        d, n, s = (shown(vals, k) for k in ("pr-delta", "pr-len", "pr-share"))
        valid = vals["pr-valid"][0] == "true"
        assert valid == pos[3]
        want = zero_jax.proposer_rewards(f64([d]), i64([int(n)]), f64([s]), flags([valid]))[0]
        check(vals, "pr-r", want)
        if pos == (14, 1, 10, False):  # 109: delta 2.5 ignored, -1 - share 0.5
            assert vals["pr-r"][0] == "-1.5"
        if pos == (8, 9, 5, True):  # delta 1, 900 characters (0.21), share 0.25
            assert vals["pr-r"][0] == "0.54"


def test_coder_controls(page):
    # (executed, syntax error, easy index, consistency index): 2.3 and -0.15 from 113
    positions = [
        (True, False, 16, 10),
        (False, True, 16, 10),
        (True, False, 20, 20),
        (False, False, 3, 7),
        (True, True, 0, 0),
    ]
    positions += [
        (
            bool(RNG.random() < 0.6),
            bool(RNG.random() < 0.3),
            int(RNG.integers(0, 21)),
            int(RNG.integers(0, 21)),
        )
        for _ in range(3)
    ]
    ids = ["cd-exec", "cd-syntax", "cd-easy-out", "cd-c-out", "cd-r"]
    for pos in positions:
        set_check(page, "cd-exec", pos[0])
        set_check(page, "cd-syntax", pos[1])
        set_range(page, "cd-easy", pos[2])
        set_range(page, "cd-c", pos[3])
        vals = read(page, ids)
        e, x = vals["cd-exec"][0] == "true", vals["cd-syntax"][0] == "true"
        assert (e, x) == pos[:2]
        s, c = shown(vals, "cd-easy"), shown(vals, "cd-c")
        check(vals, "cd-r", zero_jax.coder_rewards(flags([e]), f64([s]), f64([c]), flags([x]))[0])
        if pos == (True, False, 16, 10):
            assert vals["cd-r"][0] == "2.3"
        if pos[:2] == (False, True):
            assert vals["cd-r"][0] == "-0.15"


def test_solver_controls(page):
    # (answers, formatted, alpha index): the first is 113's example at alpha = 0.9
    positions = [
        ([2, 2, 1, 2], [0, 1, 1, 1], 9),
        ([3, 3, 2, 2], [1, 1, 1, 1], 9),
        ([0, 1, 2, 3], [0, 0, 0, 0], 5),
        ([1, 1, 1, 1], [1, 0, 1, 0], 10),
    ]
    positions += [
        (RNG.integers(0, 4, 4).tolist(), RNG.integers(0, 2, 4).tolist(), int(RNG.integers(0, 11)))
        for _ in range(3)
    ]
    ids = [f"sv-a{k}" for k in range(4)] + [f"sv-f{k}" for k in range(4)]
    outs = ["sv-alpha-out", "sv-silver"] + [f"sv-r{k}" for k in range(4)]
    for answers, fmt, ai in positions:
        for k in range(4):
            set_select(page, f"sv-a{k}", answers[k])
            set_check(page, f"sv-f{k}", fmt[k])
        set_range(page, "sv-alpha", ai)
        vals = read(page, ids + outs)
        a = [int(vals[f"sv-a{k}"][0]) for k in range(4)]
        v = [vals[f"sv-f{k}"][0] == "true" for k in range(4)]
        assert (a, v) == (answers, [bool(f) for f in fmt])
        alpha = shown(vals, "sv-alpha")
        want = zero_jax.solver_rewards(i64([a]), flags([v]), 10, alpha)[0]
        for k in range(4):
            check(vals, f"sv-r{k}", want[k])
        check(vals, "sv-silver", zero_jax.consensus(i64([a]), 10)[0][0])
        if (answers, fmt, ai) == ([2, 2, 1, 2], [0, 1, 1, 1], 9):
            assert [vals[f"sv-r{k}"][0] for k in range(4)] == ["0.9", "1", "0.1", "1"]


# --------------------------------------------------------------------------- the Lab
def test_lab_figures_are_the_run_the_cli_printed(page, generated):
    printed = {lab["name"]: lab for lab in json.loads(generated[1])["labs"]}
    assert list(printed) == list(LABS)
    summary = page.execute_script(
        "return [...document.querySelectorAll('table.summary tbody tr')]"
        ".map(tr => [...tr.cells].map(c => c.textContent))"
    )
    assert [row[0] for row in summary] == list(LABS)
    for row, (name, lab) in zip(summary, printed.items(), strict=True):
        verdict = "PASS" if lab["passed"] else "FAIL"
        assert row[3:] == [
            f"{lab['p0']:.3f}",
            f"{lab['p_final']:.3f}",
            f"{lab['gain']:+.3f}",
            verdict,
        ]
        fig = page.find_element(By.CSS_SELECTOR, f'figure.lab[data-lab="{name}"]')
        span = fig.find_element(By.CSS_SELECTOR, ".verdict")
        assert span.text.startswith(verdict + ":")
        assert float(span.get_attribute("data-p0")) == lab["p0"]
        assert float(span.get_attribute("data-final")) == lab["p_final"]
        # the drawn trajectory, read back through the chart's own grid lines
        grid = sorted(
            float(g.get_attribute("y1")) for g in fig.find_elements(By.CSS_SELECTOR, "line.grid")
        )
        top, bottom = grid[0], grid[-1]  # p = 1 at the top, p = 0 at the bottom
        pts = fig.find_element(By.CSS_SELECTOR, "polyline.target").get_attribute("points")
        drawn = [(bottom - float(pt.split(",")[1])) / (bottom - top) for pt in pts.split()]
        tol = 0.05 / (bottom - top) + 1e-9  # coordinates are printed to 0.1
        assert len(drawn) == 61 == len(lab["target_probs"])
        np.testing.assert_allclose(drawn, lab["target_probs"], rtol=0, atol=tol)
        y = float(fig.find_element(By.CSS_SELECTOR, "line.threshold").get_attribute("y1"))
        assert (bottom - y) / (bottom - top) == pytest.approx(PASS_PROB, abs=tol)
        others = fig.find_elements(By.CSS_SELECTOR, "polyline.other")
        assert len(others) == get_lab(name).num_actions - 1


# --------------------------------------------------------------------------- layout
LAYOUT = """
const out = {overlaps: [], small: [], unlabelled: [], boxes: 0};
const boxes = [];
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
while (walker.nextNode()) {
  const node = walker.currentNode;
  const el = node.parentElement;
  if (!node.textContent.trim() || el.closest('script, style, title, desc')) continue;
  if (!el.checkVisibility({visibilityProperty: true, opacityProperty: true})) continue;
  const range = document.createRange();
  range.selectNodeContents(node);
  for (const r of range.getClientRects()) {
    if (r.width < 1 || r.height < 1) continue;
    boxes.push({r, text: node.textContent.trim().slice(0, 40)});
    if (r.height < 11) out.small.push([node.textContent.trim().slice(0, 40), r.height]);
  }
}
out.boxes = boxes.length;
for (let i = 0; i < boxes.length; i++) {
  for (let j = i + 1; j < boxes.length; j++) {
    const a = boxes[i].r, b = boxes[j].r;
    const dx = Math.min(a.right, b.right) - Math.max(a.left, b.left);
    const dy = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
    if (dx > 2 && dy > 2) out.overlaps.push([boxes[i].text, boxes[j].text, dx, dy]);
  }
}
for (const c of document.querySelectorAll('input, select, button, output')) {
  const named = c.labels && c.labels.length || c.getAttribute('aria-label') ||
    c.getAttribute('aria-labelledby') || (c.tagName === 'BUTTON' && c.textContent.trim()) ||
    (c.tagName === 'OUTPUT' && c.closest('.ctl'));
  if (!named) out.unlabelled.push(c.id || c.outerHTML.slice(0, 60));
}
out.scroll = [document.documentElement.scrollWidth, window.innerWidth];
return out;
"""


def test_the_layout_check_catches_overlaps_and_small_text(page):
    """The guard of the layout test: planted overlapping, tiny text is reported."""
    page.execute_script(
        "const d = document.createElement('div'); d.textContent = 'planted words';"
        "d.style = 'position:absolute; top:30px; left:30px; font-size:7px';"
        "document.body.appendChild(d);"
        "const e = document.createElement('div'); e.textContent = 'more planted words';"
        "e.style = 'position:absolute; top:30px; left:40px; font-size:20px';"
        "document.body.appendChild(e);"
    )
    report = page.execute_script(LAYOUT)
    assert any("planted words" in a and "planted words" in b for a, b, *_ in report["overlaps"])
    assert any(text == "planted words" for text, _ in report["small"])


def _save_png(data: bytes, path: Path, smaller: bool) -> None:
    if smaller:  # a palette PNG is a third of the size and looks the same
        from PIL import Image

        Image.open(io.BytesIO(data)).convert("RGB").quantize(256).save(path, optimize=True)
    else:
        path.write_bytes(data)


@pytest.mark.parametrize("size", [WIDE, NARROW], ids=["1280x800", "400x800"])
def test_layout_and_screenshots(page, generated, shots, size):
    open_page(page, generated[0], size)
    for nxt in page.find_elements(By.CSS_SELECTOR, ".loop [data-goto='3']"):
        nxt.click()  # every column shown
    report = page.execute_script(LAYOUT)
    assert report["boxes"] > 300
    assert report["scroll"][0] <= report["scroll"][1], report["scroll"]
    assert not report["overlaps"], report["overlaps"][:10]
    assert not report["small"], report["small"][:10]
    assert not report["unlabelled"], report["unlabelled"]
    if size == WIDE:  # at 1280 every column of every worked table is in view
        clipped = page.execute_script(
            "return [...document.querySelectorAll('.table-wrap')]"
            ".filter(w => w.scrollWidth > w.clientWidth + 1).map(w => w.textContent.slice(0, 60))"
        )
        assert not clipped, clipped
    # no scroll bar while capturing: a capture beyond the viewport drops it and would
    # re-flow the page under the measured clip
    page.execute_script(
        "const s = document.createElement('style');"
        "s.textContent = 'html { scrollbar-width: none; }'; document.head.appendChild(s);"
    )
    out_dir = os.environ.get("ZERO_EXPLAIN_SHOTS")
    for sid in SECTIONS:
        section = by_id(page, sid)
        box = page.execute_script(
            "const r = arguments[0].getBoundingClientRect();"
            "return {x: r.left + scrollX, y: r.top + scrollY, width: r.width, height: r.height}",
            section,
        )
        shot = page.execute_cdp_cmd(
            "Page.captureScreenshot",
            {"format": "png", "captureBeyondViewport": True, "clip": {**box, "scale": 1}},
        )
        data = base64.b64decode(shot["data"])
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
        name = f"{sid}-{size[0]}.png"
        (shots / name).write_bytes(data)
        if out_dir and size == WIDE:
            Path(out_dir).mkdir(parents=True, exist_ok=True)
            _save_png(data, Path(out_dir) / f"{sid}.png", smaller=True)
