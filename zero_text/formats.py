"""Format gates of the published rewards, vectorised over a batch of outputs.

Each check takes n strings and returns a bool array [n]. The rules follow the
reference implementations; where we deliberately differ, the docstring says
so.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np

from ._validation import as_str_list
from .answers import extract_boxed, extract_tag

__all__ = [
    "r_zero_challenger_format_ok",
    "r_zero_solver_format_ok",
    "mm_zero_solver_format_ok",
    "g_zero_proposer_format_ok",
]

# R-Zero's format_reward (the EasyR1 math pattern): fullmatch, DOTALL.
_R_ZERO_SOLVER = re.compile(r"<think>.*</think>.*\\boxed\{.*\}.*", re.DOTALL)
# MM-Zero solver reward: fullmatch, DOTALL, after squeezing spaces around < > /.
_MM_ZERO_SOLVER = re.compile(r"<think>.*?</think>\s*\\boxed\{.*?\}\s*$", re.DOTALL)
_MM_ZERO_SQUEEZE = re.compile(r"\s*(<|>|/)\s*")


def _flags(texts: Sequence[str], ok: Callable[[str], bool]) -> np.ndarray:
    """Validate ``texts`` and apply the per-text rule ``ok``: bool ``[n]``."""
    items = as_str_list(texts, "texts")
    return np.fromiter((ok(t) for t in items), dtype=bool, count=len(items))


def _nonempty_tag(text: str, tag: str) -> bool:
    content = extract_tag(text, tag)
    return content is not None and content != ""


def r_zero_challenger_format_ok(texts: Sequence[str]) -> np.ndarray:
    """R-Zero challenger (question generator) output is usable.

    True when both hold:

    * the last ``<question>...</question>`` block (non-greedy, across lines)
      is non-empty after stripping, as in the published
      ``re.findall(r"<question>(.*?)</question>", text, re.DOTALL)[-1].strip()``;
    * the text has a complete, non-empty ``\\boxed{...}`` answer somewhere
      (:func:`zero_text.extract_boxed`).

    Difference from the reference: its box extractor (mathruler) returns the
    *string* ``"None"`` when no box exists, which passes its emptiness test, so
    the published code in effect accepts a question with no boxed answer. We
    require a real box, the documented intent.

    Args:
        texts: n raw challenger outputs.

    Returns:
        bool array [n].
    """
    return _flags(texts, lambda t: _nonempty_tag(t, "question") and bool(extract_boxed(t)))


def r_zero_solver_format_ok(texts: Sequence[str]) -> np.ndarray:
    """R-Zero solver format reward: ``<think>...</think>`` then a ``\\boxed{...}``.

    Exactly the published rule: ``re.fullmatch(r"<think>.*</think>.*\\\\boxed\\{.*\\}.*",
    text, re.DOTALL)``. The text must start with ``<think>`` (no leading
    whitespace), contain ``</think>`` and, after it, ``\\boxed{`` followed
    later by a ``}``; anything may follow. Brace balance is not checked.

    Args:
        texts: n raw solver replies.

    Returns:
        bool array [n].
    """
    return _flags(texts, lambda t: _R_ZERO_SOLVER.fullmatch(t) is not None)


def mm_zero_solver_format_ok(texts: Sequence[str]) -> np.ndarray:
    """MM-Zero solver format reward: think block, then only a final box.

    Mirrors the published reward: first whitespace around every ``<``, ``>``
    and ``/`` is removed (``re.sub(r"\\s*(<|>|/)\\s*", r"\\1", text)``, added
    there for models that emit ``< think >``), then the whole text must match
    ``<think>.*?</think>\\s*\\\\boxed\\{.*?\\}\\s*$`` with ``re.DOTALL``
    (``fullmatch``). So the reply starts with ``<think>``, some ``</think>`` is
    followed only by whitespace and a ``\\boxed{`` ... ``}`` that ends the
    reply (trailing whitespace allowed); prose after the box fails.

    Args:
        texts: n raw solver replies.

    Returns:
        bool array [n].
    """
    return _flags(
        texts, lambda t: _MM_ZERO_SOLVER.fullmatch(_MM_ZERO_SQUEEZE.sub(r"\1", t)) is not None
    )


def g_zero_proposer_format_ok(texts: Sequence[str]) -> np.ndarray:
    """G-Zero proposer output has both a question and a hint.

    True when the last ``<question>...</question>`` block and the last
    ``<hint>...</hint>`` block both exist and are non-empty after stripping
    (same non-greedy, multi-line matching as the R-Zero challenger rule).
    No answer box is required.

    Args:
        texts: n raw proposer outputs.

    Returns:
        bool array [n].
    """
    return _flags(texts, lambda t: _nonempty_tag(t, "question") and _nonempty_tag(t, "hint"))
