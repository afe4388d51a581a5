"""Pulling the final answer out of a reply and putting it in a canonical form."""

from __future__ import annotations

import re

__all__ = ["extract_boxed", "normalize_answer", "extract_tag"]

# ``\boxed`` followed by optional whitespace and an opening brace.
_BOXED_OPEN = re.compile(r"\\boxed\s*\{")


def extract_boxed(text: str) -> str | None:
    """Content of the last ``\\boxed{...}`` in ``text``, or None.

    Rules:

    * The last occurrence of ``\\boxed{`` wins (a model that boxes an
      intermediate result and then a final one is graded on the final one).
      Whitespace between ``\\boxed`` and ``{`` is accepted (``\\boxed {4}``
      is valid LaTeX). ``\\fbox`` and the brace-less form ``\\boxed 4`` are
      not recognised.
    * Braces are matched with a depth counter, so nested groups survive:
      ``\\boxed{\\frac{1}{2}}`` gives ``\\frac{1}{2}``. A backslash escapes the
      next character, so ``\\{`` and ``\\}`` (literal braces, e.g. in set
      notation or ``\\left\\{``) do not change the depth.
    * If that last box never closes (e.g. the generation was cut off), the
      result is None: we do not fall back to an earlier box.
    * The content is returned with surrounding whitespace stripped; it may be
      the empty string for ``\\boxed{}`` (callers decide what that means;
      :func:`zero_text.group_answers` treats it as unparseable).

    Args:
        text: one raw model reply.

    Returns:
        The stripped box content, or None when there is no complete box.

    Raises:
        TypeError: if ``text`` is not a ``str``.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    opens = list(_BOXED_OPEN.finditer(text))
    if not opens:
        return None
    start = opens[-1].end()
    depth = 1
    i = start
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return text[start:i].strip()
        i += 1
    return None


_TEXT_WRAPPERS = re.compile(r"\\(?:text|textbf|textrm|mathrm|mbox)\s*\{([^{}]*)\}")
_LEFT_RIGHT = re.compile(r"\\(?:left|right)(?:\.|(?![A-Za-z]))")
_THIN_SPACES = re.compile(r"\\[!,;:]")
_WHITESPACE = re.compile(r"\s+")


def normalize_answer(s: str) -> str:
    """A light, purely textual canonical form of an extracted answer.

    Steps, in order (no arithmetic, no case folding, no unit handling):

    1. strip surrounding whitespace;
    2. remove math delimiters wrapping the whole answer (``$x$``, ``$$x$$``;
       left alone when ``$`` also occurs inside, as in ``$1$ or $2$``);
    3. unwrap ``\\text{...}``, ``\\textbf{...}``, ``\\textrm{...}``,
       ``\\mathrm{...}`` and ``\\mbox{...}`` whose content has no braces
       (``5\\text{ cm}`` -> ``5 cm``);
    4. drop the sizing commands ``\\left`` / ``\\right``, together with the
       invisible delimiter ``.`` when it follows them (but not ``\\leftarrow``,
       ``\\rightarrow``, ...), and the spacing commands
       ``\\!``, ``\\,``, ``\\;``, ``\\:``;
    5. collapse every whitespace run to one space and strip again;
    6. drop one trailing period (``"12."`` -> ``"12"``; an ellipsis ``..``
       is kept), then strip.

    So ``" $\\left( 1,\\!2 \\right)$. "`` becomes ``"( 1,2 )"``. Answers that
    differ in any other way stay different; use ``equivalence="math"`` in
    :func:`zero_text.group_answers` for mathematical equivalence.

    Args:
        s: an answer string, typically the output of :func:`extract_boxed`.

    Returns:
        The normalised string (possibly empty).

    Raises:
        TypeError: if ``s`` is not a ``str``.
    """
    if not isinstance(s, str):
        raise TypeError(f"s must be a str, got {type(s).__name__}")
    out = s.strip()
    lead = len(out) - len(out.lstrip("$"))
    trail = len(out) - len(out.rstrip("$"))
    wrap = min(lead, trail)
    if wrap and len(out) > 2 * wrap and "$" not in out[wrap:-wrap]:
        out = out[wrap:-wrap].strip()
    previous = None
    while previous != out:  # nested wrappers such as \text{\textbf{x}}
        previous = out
        out = _TEXT_WRAPPERS.sub(r"\1", out)
    out = _LEFT_RIGHT.sub("", out)
    out = _THIN_SPACES.sub("", out)
    out = _WHITESPACE.sub(" ", out).strip()
    if out.endswith(".") and not out.endswith(".."):
        out = out[:-1].rstrip()
    return out


def extract_tag(text: str, tag: str) -> str | None:
    """Stripped content of the last ``<tag>...</tag>`` block of ``text``, or None.

    Matching is non-greedy and spans newlines, as in the published
    ``re.findall(r"<question>(.*?)</question>", text, re.DOTALL)``; the last
    block is used, like the published challenger parsing (``questions[-1]``).
    The content may be the empty string.

    Args:
        text: one raw model output.
        tag: tag name without brackets, e.g. ``"question"`` or ``"hint"``.

    Raises:
        TypeError: if ``text`` or ``tag`` is not a ``str``.
        ValueError: if ``tag`` is empty or contains ``<``, ``>`` or ``/``.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    if not isinstance(tag, str):
        raise TypeError(f"tag must be a str, got {type(tag).__name__}")
    if not tag or any(c in tag for c in "<>/"):
        raise ValueError(f"tag must be a bare tag name, got {tag!r}")
    name = re.escape(tag)
    blocks = re.findall(rf"<{name}>(.*?)</{name}>", text, re.DOTALL)
    if not blocks:
        return None
    return blocks[-1].strip()
