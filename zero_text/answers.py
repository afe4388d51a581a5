"""Pulling the final answer out of a reply and putting it in a canonical form.

Every function here runs in time linear in the length of its input, whatever
the input: model output is untrusted, and a regular expression that backtracks
can take minutes on a few kilobytes of degenerate text.
"""

from __future__ import annotations

import re

import numpy as np

__all__ = ["extract_boxed", "normalize_answer", "extract_tag"]

# ``\boxed`` followed by optional whitespace and an opening brace.
_BOXED_OPEN = re.compile(r"\\boxed\s*\{")
_BOXED = "\\boxed"
_OPEN, _CLOSE, _BACKSLASH = ord("{"), ord("}"), ord("\\")


_SCAN_FIRST = 256  # a typical box closes within this many characters


def _scan_group_end(body: str, *, escapes: bool, limit: int) -> int | None:
    """Index in ``body[:limit]`` of the ``}`` closing a group opened just before ``body``.

    Depth starts at 1; every ``{`` adds one and every ``}`` removes one; the
    first position where the depth reaches 0 is returned, None if it is not
    within the first ``limit`` characters. With ``escapes``, the character after
    a backslash is skipped (so ``\\{`` and ``\\}`` are literal).
    """
    depth = 1
    i = 0
    while i < limit:
        ch = body[i]
        if ch == "\\" and escapes:
            i += 2
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return None


def _vector_group_end(body: str, *, escapes: bool) -> int | None:
    """:func:`_scan_group_end` over all of ``body``, vectorised with NumPy.

    Works on the UTF-8 bytes (braces and backslashes are ASCII and never occur
    inside a multi-byte sequence): a brace is literal when an odd run of
    backslashes precedes it, and the depth is a cumulative sum, so the cost is
    linear with a small constant even for a megabyte of braces.
    """
    raw = body.encode("utf-8", "surrogatepass")
    if not raw:
        return None
    codes = np.frombuffer(raw, dtype=np.uint8)
    opens = codes == _OPEN
    closes = codes == _CLOSE
    if escapes:
        slash = codes == _BACKSLASH
        if slash.any():
            idx = np.arange(codes.size)
            last_other = np.maximum.accumulate(np.where(slash, -1, idx))
            run_before = np.zeros(codes.size, dtype=np.int64)
            run_before[1:] = idx[:-1] - last_other[:-1]  # backslashes right before i
            literal = (run_before & 1).astype(bool)
            opens &= ~literal
            closes &= ~literal
    depth = np.cumsum(opens.astype(np.int64) - closes.astype(np.int64))
    below = depth < 0  # steps are +-1, so the first negative entry is the -1
    first = int(np.argmax(below))
    if not below[first]:
        return None
    return len(raw[:first].decode("utf-8", "surrogatepass"))


def _group_end(body: str, *, escapes: bool) -> int | None:
    """Closing index of the group (see :func:`_scan_group_end`), linear time on any input.

    A short Python scan settles the usual case; a box still open after it is
    finished by the vectorised count.
    """
    limit = min(len(body), _SCAN_FIRST)
    end = _scan_group_end(body, escapes=escapes, limit=limit)
    if end is not None or limit == len(body):
        return end
    return _vector_group_end(body, escapes=escapes)


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

    Linear time in ``len(text)``.

    Args:
        text: one raw model reply.

    Returns:
        The stripped box content, or None when there is no complete box.

    Raises:
        TypeError: if ``text`` is not a ``str``.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    # Scan the ``\boxed`` occurrences from the end; the first one followed by
    # optional whitespace and ``{`` is the last box. The whitespace runs after
    # distinct occurrences are disjoint, so the scan is linear.
    at = len(text)
    while True:
        at = text.rfind(_BOXED, 0, at)
        if at < 0:
            return None
        opened = _BOXED_OPEN.match(text, at)
        if opened is not None:
            break
    start = opened.end()
    end = _group_end(text[start:], escapes=True)
    return None if end is None else text[start : start + end].strip()


def _published_boxed_content(text: str) -> str:
    """The box extractor of the published R-Zero code (``mathruler``), in linear time.

    ``mathruler.grader.extract_boxed_content``: the last literal ``\\boxed{``
    (no whitespace before the brace), braces counted without any escape
    handling, content stripped; the *string* ``"None"`` when there is no such
    box or it never closes (so a reply that boxes the word None reads the
    same as a reply with no box). Used by ``group_answers(...,
    unparseable="r_zero")``.
    """
    at = text.rfind(_BOXED + "{")
    if at < 0:
        return "None"
    start = at + len(_BOXED) + 1
    end = _group_end(text[start:], escapes=False)
    return "None" if end is None else text[start : start + end].strip()


# ---------------------------------------------------------------- normalisation

_TEXT_WRAPPERS = re.compile(r"\\(?:text|textbf|textrm|mathrm|mbox)\s*\{([^{}]*)\}")
_WRAPPER_OPEN = re.compile(r"\\(?:text|textbf|textrm|mathrm|mbox)\s*\{")
_WRAPPER_NAME_AT_END = re.compile(r"\\(?:text|textbf|textrm|mathrm|mbox)\Z")
_LONGEST_NAME = 7  # len("\\textbf")
_CMD = r"\\(?:text|textbf|textrm|mathrm|mbox)\s*\{"
_TOKEN = re.compile(r"(?P<openers>(?:" + _CMD + r")+)|(?P<close>\}+)|\{")
# Brace-free text (possessive: never backtracks) followed by an opener, taken in bulk.
_TEXT_THEN_OPENER = r"([^{}\\]*+(?:\\(?!" + _CMD[2:] + r")[^{}\\]*+)*+)(" + _CMD + ")"
_OPENER_RUN = re.compile(r"(?:" + _TEXT_THEN_OPENER + r")+")
_OPENER_PAIRS = re.compile(_TEXT_THEN_OPENER)
# An opener that may be removed: the brace-free, opener-free text after it ends
# at a closing brace or another opener, not at a bare "{" (which would doom it).
_LIVE_OPENER = re.compile(_CMD + r"(?=[^{}\\]*+(?:\\(?!" + _CMD[2:] + r")[^{}\\]*+)*+(?:\}|\\))")
_LEFT_RIGHT = re.compile(r"\\(?:left|right)(?:\.|(?![A-Za-z]))")
_THIN_SPACES = re.compile(r"\\[!,;:]")
_WHITESPACE = re.compile(r"\s+")
_CHUNK = 64

# Output pieces of the unwrapping machine: str, or None for the opening brace
# of a wrapper still open (its fate is decided at its closing brace).
_Pieces = list[str | None]


def _emit(out: _Pieces, text: str) -> None:
    """Append ``text`` in short chunks, so that trimming a tail never copies much."""
    if len(text) <= _CHUNK:
        if text:
            out.append(text)
    else:
        out.extend(text[i : i + _CHUNK] for i in range(0, len(text), _CHUNK))


def _wrapper_prefix_length(out: _Pieces) -> int:
    """Length of a ``\\text``-style command plus whitespace ending ``out``, or 0.

    The walk stops at the first character that cannot belong to such a suffix
    (a non-letter before the whitespace run, or a pending opening brace); the
    walked pieces are then either removed (the prefix is consumed) or sealed
    behind a brace, which keeps the total work linear.
    """
    last = out[-1] if out else None
    if last is not None and len(last) >= _LONGEST_NAME and not last[-1].isspace():
        found = _WRAPPER_NAME_AT_END.search(last, len(last) - _LONGEST_NAME)
        return len(found.group()) if found else 0
    ws = 0
    i = len(out) - 1
    while i >= 0:
        piece = out[i]
        if piece is None:
            return 0
        kept = piece.rstrip()
        ws += len(piece) - len(kept)
        if kept:
            break
        i -= 1
    else:
        return 0
    head = kept[-_LONGEST_NAME:]
    j = i - 1
    while len(head) < _LONGEST_NAME and head.isalpha() and j >= 0:
        piece = out[j]
        if piece is None:
            break
        head = piece[-_LONGEST_NAME:] + head
        j -= 1
    found = _WRAPPER_NAME_AT_END.search(head[-_LONGEST_NAME:])
    return len(found.group()) + ws if found else 0


def _pop_tail(out: _Pieces, length: int) -> str:
    """Remove and return the last ``length`` characters of ``out`` (no None among them)."""
    last = out[-1]
    if last is not None and len(last) > length:
        out[-1] = last[:-length]
        return last[-length:]
    taken: list[str] = []
    while length > 0:
        piece = out.pop()
        assert piece is not None
        if len(piece) <= length:
            taken.append(piece)
            length -= len(piece)
        else:
            out.append(piece[:-length])
            taken.append(piece[-length:])
            length = 0
    while out and out[-1] == "":
        out.pop()
    return "".join(reversed(taken))


def _unwrap_text_commands(s: str) -> str:
    """``_TEXT_WRAPPERS.sub(r"\\1", .)`` repeated until nothing changes, in linear time.

    The repeated substitution removes ``\\cmd{`` and ``}`` around brace-free
    content, innermost first (one pass per nesting level, hence quadratic on
    deep nesting), and a removal can join text into a new ``\\cmd{``
    (``\\te\\text{x}t{y}`` ends as ``y``). A left-to-right stack machine
    gives the same result: an opening brace is a wrapper when the output built
    so far ends with ``\\cmd`` plus optional whitespace (output left of a brace
    never changes once the brace is reached), and a wrapper is removed at its
    closing brace unless a brace that stays was emitted inside it. Such a
    brace dooms every wrapper still open, so the machine then skips ahead to
    the next ``\\cmd{`` (right after a removal it first looks at the next
    brace, where a join may have formed one). Runs of openers and of closing
    braces are taken by one regular-expression match each.
    """
    for _ in range(3):  # the first passes at C speed (shallow nesting ends here)
        if _WRAPPER_OPEN.search(s) is None:
            return s
        joined = "".join(_TEXT_WRAPPERS.split(s))
        if joined == s:
            return s
        s = joined
    out: _Pieces = []
    frames: list[tuple[int, str]] = []  # (index of the None in out, opening text)
    pos, n = 0, len(s)
    removed = False  # the last event removed a wrapper, so a join may follow
    find_wrapper, find_token = _LIVE_OPENER.search, _TOKEN.search
    while pos < n:
        if not frames and not removed:
            opened = find_wrapper(s, pos)
            if opened is None:
                _emit(out, s[pos:])
                break
            _emit(out, s[pos : opened.start()])
            pos = opened.end()
            frames.append((len(out), opened.group()))
            out.append(None)
            continue
        token = find_token(s, pos)
        if token is None:
            _emit(out, s[pos:])
            break
        kind = token.lastgroup
        if not frames and kind == "close":  # nothing left to remove, no join possible
            removed = False
            continue
        _emit(out, s[pos : token.start()])
        pos = token.end()
        if kind == "openers":
            removed = False
            for opening in _WRAPPER_OPEN.findall(token.group()):
                frames.append((len(out), opening))
                out.append(None)
            run = _OPENER_RUN.match(s, pos)  # more levels, each some text then an opener
            if run is not None:
                pos = run.end()
                for text, opening in _OPENER_PAIRS.findall(run.group()):
                    if len(text) <= _CHUNK:
                        if text:
                            out.append(text)
                    else:
                        _emit(out, text)
                    frames.append((len(out), opening))
                    out.append(None)
        elif kind == "close":
            closing = pos - token.start()
            while closing and frames:
                out[frames.pop()[0]] = ""  # drop the wrapper's opening text and this brace
                closing -= 1
            while out and out[-1] == "":
                out.pop()
            removed = not closing
            if closing:
                out.append("}" * closing)
        else:  # a bare "{": a wrapper only if a removal just joined a command to it
            prefix = _wrapper_prefix_length(out) if removed else 0
            removed = False
            if prefix and s.startswith("}", pos):  # empty: removed at once, and a
                pos += 1  # chain "\\text\\text{}{}" unwinds in this inner loop
                while True:
                    _pop_tail(out, prefix)
                    if not s.startswith("{}", pos):
                        break
                    prefix = _wrapper_prefix_length(out)
                    if not prefix:
                        break
                    pos += 2
                removed = True
            elif prefix:
                opening = _pop_tail(out, prefix) + "{"
                frames.append((len(out), opening))
                out.append(None)
            else:  # a brace that stays: every open wrapper is doomed
                for slot, opening in frames:
                    out[slot] = opening
                frames.clear()
                out.append("{")
    for slot, opening in frames:  # never closed
        out[slot] = opening
    return "".join(filter(None, out))


def normalize_answer(s: str) -> str:
    """A light, purely textual canonical form of an extracted answer.

    Steps, in order (no arithmetic, no case folding, no unit handling):

    1. strip surrounding whitespace;
    2. drop one trailing period, then strip: punctuation that ends the
       sentence sits outside the math, so ``$12$.`` loses its period before
       its delimiters are looked at (an ellipsis ``..`` is kept);
    3. remove math delimiters wrapping the whole answer (``$x$``, ``$$x$$``;
       left alone when ``$`` also occurs inside, as in ``$1$ or $2$``; delimiters
       around nothing, ``$$``, leave an empty answer);
    4. unwrap ``\\text{...}``, ``\\textbf{...}``, ``\\textrm{...}``,
       ``\\mathrm{...}`` and ``\\mbox{...}`` whose content has no braces,
       innermost first until none is left (``5\\text{ cm}`` -> ``5 cm``,
       ``\\text{\\textbf{x}}`` -> ``x``);
    5. drop the sizing commands ``\\left`` / ``\\right``, together with the
       invisible delimiter ``.`` when it follows them (but not ``\\leftarrow``,
       ``\\rightarrow``, ...), and the spacing commands
       ``\\!``, ``\\,``, ``\\;``, ``\\:``;
    6. collapse every whitespace run to one space and strip again;
    7. drop one trailing period again, now inside the delimiters and
       wrappers (``$12.$`` and ``5\\text{ cm.}`` end without it), then strip.

    For example:

    >>> normalize_answer(r" $\\left( 1,\\!2 \\right)$. ")
    '( 1,2 )'
    >>> normalize_answer("$12$."), normalize_answer("12."), normalize_answer(r"\\text{12}")
    ('12', '12', '12')

    Answers that differ in any other way stay different; use
    ``equivalence="math"`` in :func:`zero_text.group_answers` for mathematical
    equivalence. Linear time in ``len(s)``.

    Args:
        s: an answer string, typically the output of :func:`extract_boxed`.

    Returns:
        The normalised string (possibly empty).

    Raises:
        TypeError: if ``s`` is not a ``str``.
    """
    if not isinstance(s, str):
        raise TypeError(f"s must be a str, got {type(s).__name__}")
    out = _drop_period(s.strip())
    lead = len(out) - len(out.lstrip("$"))
    trail = len(out) - len(out.rstrip("$"))
    wrap = min(lead, trail)
    if wrap and len(out) > 2 * wrap and "$" not in out[wrap:-wrap]:
        out = out[wrap:-wrap].strip()
    elif out and not out.replace("$", "").strip():  # delimiters around nothing: ``$$``
        out = ""
    out = _unwrap_text_commands(out)
    out = _LEFT_RIGHT.sub("", out)
    out = _THIN_SPACES.sub("", out)
    return _drop_period(_WHITESPACE.sub(" ", out).strip())


def _drop_period(s: str) -> str:
    """``s`` without one trailing period (an ellipsis is kept), stripped on the right."""
    if s.endswith(".") and not s.endswith(".."):
        return s[:-1].rstrip()
    return s


def _tag_blocks(text: str, tag: str) -> list[str]:
    """All ``<tag>...</tag>`` contents, as ``re.findall(r"<tag>(.*?)</tag>", text, re.DOTALL)``.

    Found with ``str.find`` in linear time: the regular expression rescans the
    rest of the text from every unclosed opening tag (quadratic on a reply of
    many ``<tag>`` and no ``</tag>``).
    """
    opening, closing = f"<{tag}>", f"</{tag}>"
    blocks: list[str] = []
    pos = 0
    while True:
        start = text.find(opening, pos)
        if start < 0:
            return blocks
        start += len(opening)
        end = text.find(closing, start)
        if end < 0:  # no later opening tag can close either
            return blocks
        blocks.append(text[start:end])
        pos = end + len(closing)


def extract_tag(text: str, tag: str) -> str | None:
    """Stripped content of the last ``<tag>...</tag>`` block of ``text``, or None.

    Matching is non-greedy and spans newlines, as in the published
    ``re.findall(r"<question>(.*?)</question>", text, re.DOTALL)``; the last
    block is used, like the published challenger parsing (``questions[-1]``).
    The content may be the empty string. Linear time in ``len(text)``.

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
    blocks = _tag_blocks(text, tag)
    if not blocks:
        return None
    return blocks[-1].strip()
