"""Inline SVG of one Lab run: every action's probability over the training steps,
the target's drawn thick, and the pass threshold dashed."""

from __future__ import annotations

from html import escape

from zero_lab.records import Lab
from zero_lab.result import PASS_PROB, LabResult

__all__ = ["lab_chart"]

_W, _H = 520, 320
_LEFT, _RIGHT, _TOP, _BOTTOM = 56, 18, 36, 46


def _x(step: float, steps: int) -> float:
    return _LEFT + (_W - _LEFT - _RIGHT) * step / max(steps, 1)


def _y(p: float) -> float:
    return _TOP + (_H - _TOP - _BOTTOM) * (1.0 - p)


def _points(values: list[float], steps: int) -> str:
    return " ".join(f"{_x(i, steps):.1f},{_y(v):.1f}" for i, v in enumerate(values))


def lab_chart(result: LabResult, lab: Lab, chart_id: str) -> str:
    """An ``<svg>`` (role img, with a title and a text description) of ``result``."""
    steps = result.probs.shape[0] - 1
    target = result.target_probs.tolist()
    title = f"Lab {lab.name}: probability of the target action over {steps} steps"
    desc = (
        f"The target action, {lab.target_action.label}, starts at {result.p0:.3f} and ends at "
        f"{result.p_final:.3f} after {steps} steps (gain {result.gain:+.3f}); the pass "
        f"threshold is {PASS_PROB}. Verdict: {'PASS' if result.passed else 'FAIL'}."
    )
    parts = [
        f'<svg class="lab-chart" viewBox="0 0 {_W} {_H}" role="img" '
        f'aria-labelledby="{chart_id}-t {chart_id}-d" data-lab="{escape(lab.name)}">',
        f'<title id="{chart_id}-t">{escape(title)}</title>',
        f'<desc id="{chart_id}-d">{escape(desc)}</desc>',
    ]
    for p in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = _y(p)
        parts.append(
            f'<line class="grid" x1="{_LEFT}" x2="{_W - _RIGHT}" y1="{y:.1f}" y2="{y:.1f}"/>'
        )
        parts.append(
            f'<text class="tick" x="{_LEFT - 8}" y="{y + 5:.1f}" text-anchor="end">{p:g}</text>'
        )
    for s in range(0, steps + 1, 10 if steps >= 20 else 1):
        x = _x(s, steps)
        parts.append(
            f'<text class="tick" x="{x:.1f}" y="{_H - _BOTTOM + 20}" '
            f'text-anchor="middle">{s}</text>'
        )
    parts.append(
        f'<text class="axis" x="{(_LEFT + _W - _RIGHT) / 2:.0f}" y="{_H - 6}" '
        'text-anchor="middle">gradient step</text>'
    )
    parts.append('<text class="axis" x="8" y="18">probability of the action</text>')
    for a in range(result.probs.shape[1]):
        if a != result.target:
            parts.append(
                f'<polyline class="other" points="{_points(result.probs[:, a].tolist(), steps)}"/>'
            )
    yt = _y(PASS_PROB)
    parts.append(
        f'<line class="threshold" x1="{_LEFT}" x2="{_W - _RIGHT}" y1="{yt:.1f}" y2="{yt:.1f}"/>'
    )
    parts.append(
        f'<text class="threshold-label" x="{_LEFT + 8}" y="{yt - 7:.1f}">'
        f"pass threshold {PASS_PROB}</text>"
    )
    parts.append(f'<polyline class="target" points="{_points(target, steps)}"/>')
    xe, ye = _x(steps, steps), _y(target[-1])
    parts.append(f'<circle class="target-dot" cx="{xe:.1f}" cy="{ye:.1f}" r="4"/>')
    label_y = ye - 10 if target[-1] < 0.95 else ye + 20
    parts.append(
        f'<text class="end-label" x="{xe - 8:.1f}" y="{label_y:.1f}" text-anchor="end">'
        f"{result.p_final:.3f}</text>"
    )
    parts.append("</svg>")
    return "".join(parts)
