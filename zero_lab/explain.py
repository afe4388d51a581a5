"""The explanation page: ``zero-lab --html PATH`` writes one self-contained HTML file.

One section per paper family (R-Zero challenger; R-Zero pseudo-labels and band;
G-Zero hint-delta / proposer; MM-Zero coder / solver), each with

- the loop, step by step: the problem texts' worked batch through the stages active
  model -> frozen evaluator -> feedback -> filtering, with Previous / Next;
- controls (labelled range inputs, check boxes and selects, all keyboard operable)
  over the quantities the rewards depend on, and the scores they give;
- the convention people trip on, in a few sentences;
- the Lab: every action's probability over the training steps, target drawn thick,
  pass threshold dashed, from the run the CLI printed in the same invocation.

**Where the numbers come from: precomputed with zero_jax, not a JavaScript port.**
Every score on the page is a value ``zero_jax``'s public functions returned when the
page was generated: the worked batches are rendered as text, and every position of
every control is evaluated over its grid (``zero_lab.explain_data``: batched along
the reward's row axis, ``jax.vmap`` over whole batches for the challenger, whose
penalty couples rows) and embedded as palette-encoded tables.  The script only
turns control positions into a table index.  We chose this over a JS port because
the project's rule is that applications never write a reward formula again: a port
would be a third implementation of nine rewards (ties to the smallest id, the floor
at 0, the decimal ``1 - alpha``, masked means ...) that a test could only hold to
``zero_jax`` at the positions it visits, and it would drift silently when the
library changes.  Tables cannot drift: regenerating the page re-asks the library.
The price is discrete controls (every slider moves along an axis of decimals, see
``explain_data.axes``) and about 0.4 MB of data; the browser test
(``parity_tests/test_explain.py``) still checks the displayed numbers against
``zero_jax`` called independently on the inputs the controls display.

The page loads nothing at view time (inline CSS, script and SVG; a Content Security
Policy forbids any other source).  Building it needs only the ``lab`` extra (jax,
numpy, optax, matplotlib); it takes about ten seconds, most of it compilation.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from html import escape
from importlib import resources
from pathlib import Path
from typing import Any

import jax

import zero_jax
from zero_lab import explain_data
from zero_lab.explain_sections import SECTIONS, fmt, sections
from zero_lab.records import get_lab
from zero_lab.result import MIN_GAIN, PASS_PROB, LabResult

__all__ = ["build_page", "page_data", "write_html"]

_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
    "img-src data:; base-uri 'none'; form-action 'none'"
)


def _asset(name: str) -> str:
    return resources.files("zero_lab").joinpath("explain_assets", name).read_text("utf-8")


def page_data(built: dict[str, Any] | None = None) -> dict[str, Any]:
    """The JSON the page's script reads: axes and control tables (no worked batches)."""
    built = explain_data.build() if built is None else built
    shifts = explain_data.axes()["hint.shift"].values
    base = explain_data.HINT_BASE_LOGP
    return {
        "alphabet": explain_data.ALPHABET,
        "axes": built["axes"],
        "challenger": built["challenger"]["grid"],
        "pseudo": built["pseudo"]["grid"],
        "proposer": built["proposer"]["grid"],
        "mm": built["mm"]["grid"],
        "hint_base_logp": list(base),
        "hint_hinted_labels": [[f"{round(b - s, 6):g}" for s in shifts] for b in base],
    }


def _summary(results: Sequence[LabResult], backend: str) -> str:
    rows = []
    for r in results:
        lab = get_lab(r.name)
        verdict = "PASS" if r.passed else "FAIL"
        rows.append(
            f"<tr><td>{escape(r.name)}</td><td>{lab.problem}</td>"
            f"<td>{escape(lab.target_action.label)}</td><td>{r.p0:.3f}</td>"
            f"<td>{r.p_final:.3f}</td><td>{r.gain:+.3f}</td>"
            f'<td class="verdict {verdict.lower()}">{verdict}</td></tr>'
        )
    return (
        '<div class="summary-wrap"><table class="summary"><caption>The Lab run of this '
        f"invocation ({escape(backend)} backend): pass when the target ends above "
        f"{PASS_PROB} and rose by more than {MIN_GAIN}</caption><thead><tr><th>lab</th>"
        "<th>problem</th><th>target action</th><th>p0</th><th>p_final</th><th>gain</th>"
        f"<th>pass</th></tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def build_page(results: Sequence[LabResult], backend: str = "jax") -> str:
    """The whole page as one HTML string.

    Args:
      results: the Lab results to draw (those the CLI printed); labs not among them
        are named as not run.
      backend: the backend that produced ``results`` (shown on the page).
    """
    built = explain_data.build()
    data = json.dumps(page_data(built), separators=(",", ":"), allow_nan=False)
    data = data.replace("<", "\\u003c")  # never a closing tag inside the script element
    by_name = {r.name: r for r in results}
    nav = "".join(f'<li><a href="#{sid}">{escape(title)}</a></li>' for sid, title in SECTIONS)
    provenance = (
        f"Every score on this page is zero_jax {escape(zero_jax.__version__)}'s own "
        f"(jax {escape(jax.__version__)}, float64), computed when the page was generated "
        "for every position of its controls; the page's script only looks "
        "them up. Nothing is loaded from the network."
    )
    body = (
        '<div class="wrap"><header>'
        "<h1>zero-rewards, step by step</h1>"
        '<p class="lede">The rewards of R-Zero, G-Zero and MM-Zero, one paper family per '
        "section: walk through each loop on a small worked batch (the problem texts' own "
        "examples), move the controls to see what each term does to the score, and see "
        "the Lab policy learn its target under the correct rewards.</p>"
        f'<nav aria-label="Sections"><ul>{nav}</ul></nav>'
        f'<p class="provenance">{provenance}</p>'
        f"{_summary(results, backend)}</header>"
        f"<main>{sections(built, by_name)}</main>"
        "<footer><p>Generated by <code>zero-lab --html</code>. Scores are printed with at "
        f"most three decimals (e.g. {fmt(2.3)}, {fmt(-0.15)}); each value element carries "
        "the full float64 in its <code>data-value</code> attribute.</p></footer></div>"
    )
    return (
        "<!doctype html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">'
        "<title>zero-rewards: the rewards, step by step</title>"
        f"<style>{_asset('page.css')}</style></head>"
        f"<body>{body}"
        f'<script type="application/json" id="zero-data">{data}</script>'
        f"<script>{_asset('page.js')}</script></body></html>\n"
    )


def write_html(results: Sequence[LabResult], path: str | Path, backend: str = "jax") -> None:
    """Write the explanation page for ``results`` to ``path`` (UTF-8)."""
    Path(path).write_text(build_page(results, backend), encoding="utf-8")
