"""Format gates of the published rewards, vectorised over a batch of outputs.

Each check takes n strings (any iterable of ``str``, or a NumPy array of
strings of any shape, e.g. the ``[B, K]`` replies of a batch) and returns a
bool array of the same shape ([n] for a list). The rules follow the
reference implementations (repository and file named in each docstring);
where we deliberately differ, the docstring says so. Every check runs in time
linear in the length of the text: the published rules are written as regular
expressions that backtrack (``.*`` three times in a ``fullmatch`` is cubic),
and here they are restated with ``str.find`` and patterns that cannot
backtrack, with the same accept / reject result on every string.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np

from ._validation import as_str_array
from .answers import _tag_blocks, extract_boxed

__all__ = [
    "r_zero_challenger_format_ok",
    "r_zero_solver_format_ok",
    "mm_zero_solver_format_ok",
    "g_zero_proposer_format_ok",
]

# The published solver rewards first apply re.sub(r"\s*(<|>|/)\s*", r"\1", text),
# which deletes every whitespace run touching a "<", ">" or "/" (quadratic on a long
# run of spaces). The same deletion in linear time: a run right after one of those
# characters, or a whole run (starting at the text start or after a non-space) right
# before one; a match can only start at the start of a run.
_SQUEEZE = re.compile(r"(?<=[<>/])\s+|(?<!\s)\s+(?=[<>/])")
# MM-Zero: after the closing think tag, only whitespace before the box opens.
_THINK_THEN_BOX = re.compile(r"</think>\s*\\boxed\{")
_THINK, _END_THINK, _BOX = "<think>", "</think>", "\\boxed{"

# G-Zero's placeholder test (regex module, IGNORECASE): \s and the letter classes
# spelled out as that module matches them (Unicode White_Space; simple case folding,
# so "s" also matches U+017F and "i" also matches U+0130).
_WS = r"[\t\n\x0b\x0c\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
_FOLD = {"s": "sS\u017f", "i": "iI\u0130"}


def _word(word: str) -> str:
    """``word`` as a case-insensitive pattern, letter by letter."""
    return "".join(f"[{_FOLD.get(c, c + c.upper())}]" for c in word)


def _any_word(*words: str) -> str:
    return "(?:" + "|".join(map(_word, words)) + ")"


_PLACEHOLDER = re.compile(
    rf"\[{_WS}*{_word('your')}{_WS}+{_any_word('question', 'hint', 'problem', 'answer')}\b"
    rf"|\b{_word('your')}{_WS}+{_any_word('question', 'hint', 'problem')}{_WS}+{_word('here')}\b"
)


def _flags(texts: Sequence[str] | np.ndarray, ok: Callable[[str], bool]) -> np.ndarray:
    """Validate ``texts`` and apply the per-text rule ``ok``: bool of the input's shape."""
    items, shape = as_str_array(texts, "texts")
    return np.fromiter((ok(t) for t in items), dtype=bool, count=len(items)).reshape(shape)


def _squeeze(text: str) -> str:
    """The published ``re.sub(r"\\s*(<|>|/)\\s*", r"\\1", text)``, in linear time."""
    return _SQUEEZE.sub("", text)


def _last_block(text: str, tag: str) -> str:
    """Stripped last ``<tag>...</tag>`` block, or "" when there is none."""
    blocks = _tag_blocks(text, tag)
    return blocks[-1].strip() if blocks else ""


def _r_zero_solver_ok(text: str) -> bool:
    # fullmatch(r"<think>.*</think>.*\\boxed\{.*\}.*", DOTALL): take the earliest
    # closing tag after the opening one, the earliest box after it, then any "}".
    s = _squeeze(text)
    if not s.startswith(_THINK):
        return False
    think = s.find(_END_THINK, len(_THINK))
    if think < 0:
        return False
    box = s.find(_BOX, think + len(_END_THINK))
    return box >= 0 and s.find("}", box + len(_BOX)) >= 0


def _mm_zero_solver_ok(text: str) -> bool:
    # fullmatch(r"<think>.*?</think>\s*\\boxed\{.*?\}\s*$", DOTALL): the reply ends with
    # "}" plus whitespace, and the earliest "</think>" + whitespace + "\boxed{" after the
    # opening tag opens before that final "}".
    s = _squeeze(text)
    if not s.startswith(_THINK):
        return False
    last = len(s.rstrip()) - 1
    if last < 0 or s[last] != "}":
        return False
    box = _THINK_THEN_BOX.search(s, len(_THINK))
    return box is not None and box.end() <= last


def _g_zero_ok(text: str) -> bool:
    question, hint = _last_block(text, "question"), _last_block(text, "hint")
    return bool(
        question
        and hint
        and _PLACEHOLDER.search(question) is None
        and _PLACEHOLDER.search(hint) is None
    )


def r_zero_challenger_format_ok(texts: Sequence[str] | np.ndarray) -> np.ndarray:
    """R-Zero challenger (question generator) output is usable.

    True when both hold:

    * the last ``<question>...</question>`` block (non-greedy, across lines)
      is non-empty after stripping, as in the published
      ``re.findall(r"<question>(.*?)</question>", text, re.DOTALL)[-1].strip()``
      (R-Zero ``examples/reward_function/caller_penalty.py``);
    * the last box is complete and non-empty (:func:`zero_text.extract_boxed`).

    Difference from the reference, kept on purpose: its box test is
    ``mathruler``'s ``extract_boxed_content(text)`` being non-empty, and that
    function returns the *string* ``"None"`` when there is no box or the last
    ``\\boxed{`` never closes, so the published code accepts a question with
    no (complete) boxed answer. We require a real box, the documented intent.
    Box extraction also follows :func:`zero_text.extract_boxed` (whitespace
    before ``{`` allowed, ``\\{`` / ``\\}`` literal) where mathruler takes the
    last literal ``\\boxed{`` and counts every brace.

    Args:
        texts: n raw challenger outputs.

    Returns:
        bool array [n] (the shape of ``texts`` for a NumPy array).
    """
    return _flags(texts, lambda t: bool(_last_block(t, "question") and extract_boxed(t)))


def r_zero_solver_format_ok(texts: Sequence[str] | np.ndarray) -> np.ndarray:
    """R-Zero solver format reward: ``<think>...</think>`` then a ``\\boxed{...}``.

    Exactly the published rule (R-Zero ``examples/reward_function/math.py``,
    from EasyR1): whitespace around every ``<``, ``>`` and ``/`` is deleted
    first (``re.sub(r"\\s*(<|>|/)\\s*", r"\\1", text)``, so ``< think >`` and
    ``</think >`` count), then ``re.fullmatch(r"<think>.*</think>.*\\\\boxed\\{.*\\}.*",
    text, re.DOTALL)``. So the text must start with ``<think>`` (leading
    whitespace only if a ``<`` follows it, which the deletion removes),
    contain ``</think>`` and, after it, ``\\boxed{`` followed later by a ``}``;
    anything may follow. Brace balance is not checked.

    Args:
        texts: n raw solver replies.

    Returns:
        bool array [n] (the shape of ``texts`` for a NumPy array).
    """
    return _flags(texts, _r_zero_solver_ok)


def mm_zero_solver_format_ok(texts: Sequence[str] | np.ndarray) -> np.ndarray:
    """MM-Zero solver format reward: think block, then only a final box.

    Mirrors the published reward (MM-Zero
    ``MM-zero_final/reward_function/cot_val_solver.py``): first whitespace
    around every ``<``, ``>`` and ``/`` is removed (``re.sub(r"\\s*(<|>|/)\\s*",
    r"\\1", text)``, added there for models that emit ``< think >``), then the
    whole text must match ``<think>.*?</think>\\s*\\\\boxed\\{.*?\\}\\s*$`` with
    ``re.DOTALL`` (``fullmatch``). So the reply starts with ``<think>``, some
    ``</think>`` is followed only by whitespace and a ``\\boxed{`` ... ``}``
    that ends the reply (trailing whitespace allowed); prose after the box
    fails.

    Args:
        texts: n raw solver replies.

    Returns:
        bool array [n] (the shape of ``texts`` for a NumPy array).
    """
    return _flags(texts, _mm_zero_solver_ok)


def g_zero_proposer_format_ok(texts: Sequence[str] | np.ndarray) -> np.ndarray:
    """G-Zero proposer output has a real question and a real hint.

    Exactly the published parser (G-Zero ``g_zero/parse.py``, ``extract_qh``):
    the last ``<question>...</question>`` and the last ``<hint>...</hint>``
    block (non-greedy, across lines) both exist and are non-empty after
    stripping, and neither is an echo of the prompt template, i.e. neither
    contains ``[your question|hint|problem|answer`` (whitespace allowed after
    the bracket) or ``your question|hint|problem here`` as whole words, in
    any case. No answer box is required.

    The published pattern runs on the third-party ``regex`` module; its
    whitespace and case-insensitive letters are reproduced exactly here, and
    its word boundaries (``\\b``) follow Python's ``re``, which differs from
    ``regex`` only next to combining marks and a few symbols that ``regex``
    counts as letters (e.g. circled letters).

    Args:
        texts: n raw proposer outputs.

    Returns:
        bool array [n] (the shape of ``texts`` for a NumPy array).
    """
    return _flags(texts, _g_zero_ok)
