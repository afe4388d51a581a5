"""Cheap decisions taken in the caller's process before math-verify is asked.

* :func:`fast_equivalent` settles a pair of plain numbers (integers, decimals
  with at most 6 places, integer fractions) with exact rational arithmetic,
  only where that provably gives math-verify's verdict (``parse`` of
  ``\\boxed{answer}``, ``verify`` either way): integers and fractions parse to
  SymPy Rationals, compared exactly; a decimal parses to a Float, equal to a
  number when both agree after ``round(6)``, so values on the 10**-6 grid are
  equal exactly when their values are, and values 10**-6 apart never are.
  A decimal within 10**-6 of an off-grid fraction is left to math-verify.
* :func:`summary_verdict` settles a pair from what the helpers read of each
  answer (:data:`zero_text._mathpool.Summary`), where ``verify`` provably agrees.
* :func:`unbounded` flags answers whose evaluation by SymPy has no useful bound
  (compared by exact string only); :func:`tame` tells answers that cannot blow
  up evaluation. The agreement with the installed math-verify is tested.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from typing import Any

__all__ = ["fast_equivalent", "number_value", "summary_verdict", "tame", "unbounded"]

_MAX_INT_DIGITS = 30  # digits of an integer, numerator or denominator on the fast path
_MAX_DECIMALS = 6  # math-verify's float_rounding
_MAX_SIGNIFICANT = 15  # a Float of 15 significant digits is exact on the 10**-6 grid
_GRID = Fraction(1, 10**_MAX_DECIMALS)

_INT = rf"(?:0|[1-9][0-9]{{0,{_MAX_INT_DIGITS - 1}}})"
_SIGNED = r"-?" + _INT
_INTEGER = re.compile(_SIGNED)
_DECIMAL = re.compile(r"(-?)(0|[1-9][0-9]*)\.([0-9]+)")
_FRAC = re.compile(r"(-?)\\[dt]?frac\{(" + _SIGNED + r")\}\{(" + _SIGNED + r")\}")
_SLASH = re.compile(r"(" + _SIGNED + r")/(" + _SIGNED + r")")


def number_value(answer: str) -> tuple[Fraction, bool] | None:
    """``(value, is_decimal)`` of a plain number on the fast path, else None."""
    if len(answer) > 2 * _MAX_INT_DIGITS + 16:
        return None
    if _INTEGER.fullmatch(answer):
        return Fraction(int(answer)), False
    m = _DECIMAL.fullmatch(answer)
    if m is not None:
        sign, whole, decimals = m.groups()
        if len(decimals) > _MAX_DECIMALS:
            return None
        digits = (whole + decimals).lstrip("0")
        if len(digits) > _MAX_SIGNIFICANT:
            return None
        value = Fraction(int(whole + decimals), 10 ** len(decimals))
        return (-value if sign else value), True
    m = _FRAC.fullmatch(answer)
    if m is not None:
        sign, top, bottom = m.groups()
        if int(bottom) == 0:
            return None
        value = Fraction(int(top), int(bottom))
        return (-value if sign else value), False
    m = _SLASH.fullmatch(answer)
    if m is not None:
        top, bottom = m.groups()
        if int(bottom) == 0:
            return None
        return Fraction(int(top), int(bottom)), False
    return None


def summary_verdict(sa: Any, sb: Any) -> bool | None:
    """``verify``'s verdict on two read answers (``(exact, numbers, strings)``) when
    provable, else None.

    Two parses of only Rationals and strings: ``verify`` compares Rationals
    exactly and strings by equality (non-empty), and never a string with an
    expression, so "any equal pair" is its verdict either way. Two parses of
    real variable-free values at least ``max(1e-5, 1e-9 * magnitude)`` apart
    fail every test of ``sympy_expr_eq`` (``round(6)``, ``evalf``, ``simplify``
    keep them apart) unless they share a string.
    """
    (qa, xa, ta), (qb, xb, tb) = sa, sb
    shared = any(t and t in tb for t in ta)
    if qa is not None and qb is not None:
        return shared or any(x == y for x in qa for y in qb)
    if xa and xb and not shared:
        if all(abs(x - y) > max(1e-5, 1e-9 * max(abs(x), abs(y))) for x in xa for y in xb):
            return False
    return None


def fast_equivalent(a: str, b: str) -> bool | None:
    """math-verify's verdict on two normalised answers when it is provable, else None."""
    va, vb = number_value(a), number_value(b)
    if va is None or vb is None:
        return None
    (x, x_dec), (y, y_dec) = va, vb
    if x == y:
        return True
    if not (x_dec or y_dec):
        return False
    if abs(x - y) >= _GRID:
        return False
    return None  # a decimal within 10**-6 of an off-grid fraction: math-verify rounds


# ------------------------------------------------------------------ the static guard

_TAME = re.compile(
    r"(?:[0-9A-Za-z+\-*/=,.:;'()\[\]{}|<> ]"
    r"|\\(?:[dt]?frac|sqrt|pi|cdot|times|div|pm|mp|leq?|geq?|neq|infty|circ|%|\{|\}"
    r"|text|mathrm|sin|cos|tan|ln|log|in|cup|cap|emptyset))*+"
)
_MAX_TAME_LENGTH = 200
_MAX_TAME_DIGITS = 15


def tame(answer: str) -> bool:
    """True when the answer cannot make SymPy's evaluation blow up (no probe needed)."""
    return (
        len(answer) <= _MAX_TAME_LENGTH
        and _TAME.fullmatch(answer) is not None
        and max((len(m) for m in _DIGIT_RUN.findall(answer)), default=0) <= _MAX_TAME_DIGITS
    )


_MAX_LENGTH = 1000  # longer "answers" are compared by exact string only
_MAX_DIGIT_RUN = 300  # a literal longer than this is not an answer anyone checks
_MAX_EXPONENT = 1e6  # x^(10**6) and beyond: numbers of a million digits and more
_MAX_FACTORIAL = 1e5  # 100000! has 456,574 digits
_COMMAND = re.compile(r"\\[A-Za-z]+")
_LETTER = re.compile(r"[A-Za-z]")
_DIGIT_RUN = re.compile(r"[0-9]+")
_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]+)?")
# ``**`` right after a base (a digit, a letter or a closing bracket), or spaced on both
# sides after a digit or a closing bracket (``10 ** 10``).  Markdown's bold
# ``**2000000**`` has no base before its first pair, and in ``is **1500000**`` or
# ``1) **2000000**`` no space after it
_BASE = r"(?:(?<=[0-9)\]}])\s+(?=\*\*\s)|(?<=[0-9A-Za-z)\]}]))"
_PY_POWER = re.compile(_BASE + r"\*\*\s*([0-9.]+(?:\s*\*\*\s*[0-9.]+)*)")
_PY_CARET = re.compile(_BASE + r"\*\*")
_SIZING = re.compile(r"\\(?:left|right|[Bb]igg?[lr]?)(?![A-Za-z])")
_TOKEN = re.compile(r"\s*(?:([0-9]+(?:\.[0-9]+)?)|(\\[A-Za-z]+)|(\S))")
_OPEN = {"{": "}", "(": ")", "[": "]"}
_CLOSE = {v: k for k, v in _OPEN.items()}
_CONSTANTS = {"\\pi": math.pi}
_PRODUCTS = {"*", "\\cdot", "\\times"}
_QUOTIENTS = {"/", "\\div"}


class _Huge(Exception):
    """A power or factorial inside the expression is too large to evaluate."""


class _Unknown(Exception):
    """The expression uses something the estimator does not read."""


class _Estimator:
    """Magnitude of a variable-free LaTeX expression, as a float (inf when it overflows)."""

    def __init__(self, text: str) -> None:
        self.tokens: list[str] = []
        pos = 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if m is None:  # only trailing whitespace is left
                break
            self.tokens.append(m.group(m.lastindex or 0))
            pos = m.end()
        self.i = 0

    def value(self) -> float:
        out = self._sum()
        if self.i != len(self.tokens):
            raise _Unknown
        return out

    def _peek(self) -> str | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def _take(self, expected: str | None = None) -> str:
        token = self._peek()
        if token is None or (expected is not None and token != expected):
            raise _Unknown
        self.i += 1
        return token

    def _sum(self) -> float:
        total = self._product()
        while self._peek() in ("+", "-"):
            self.i += 1
            total = total + self._product()  # |a - b| <= |a| + |b|
        return total

    def _product(self) -> float:
        out = self._signed()
        while True:
            token = self._peek()
            if token in _PRODUCTS:
                self.i += 1
                out = _mul(out, self._signed())
            elif token in _QUOTIENTS:
                self.i += 1
                divisor = self._signed()
                if divisor == 0:
                    raise _Unknown
                out = out / divisor if math.isfinite(divisor) else 0.0
            elif token is not None and (token[0].isdigit() or token in _OPEN or token[0] == "\\"):
                out = _mul(out, self._signed())  # implicit product
            else:
                return out

    def _signed(self) -> float:
        while self._peek() in ("+", "-"):
            self.i += 1
        return self._power()

    def _power(self) -> float:
        base = self._factorial()
        while self._peek() == "^":
            self.i += 1
            exponent = self._exponent()
            if exponent > _MAX_EXPONENT or math.isnan(exponent):
                raise _Huge
            base = _pow(base, exponent)
        return base

    def _exponent(self) -> float:
        token = self._peek()
        if token is not None and token[0].isdigit():
            self.i += 1  # the whole number, as latex2sympy reads 2^123 (the larger reading)
            return float(token)
        if token in ("+", "-"):
            return self._signed()
        return self._factorial()

    def _factorial(self) -> float:
        out = self._atom()
        while self._peek() == "!":
            self.i += 1
            if out > _MAX_FACTORIAL or math.isnan(out):
                raise _Huge
            out = math.gamma(out + 1) if out < 171 else math.inf
        return out

    def _atom(self) -> float:
        token = self._take()
        if token[0].isdigit():
            return float(token)
        if token in _OPEN:
            out = self._sum()
            self._take(_OPEN[token])
            return out
        if token in _CONSTANTS:
            return _CONSTANTS[token]
        if token in ("\\frac", "\\dfrac", "\\tfrac"):
            top = self._atom()
            bottom = self._atom()
            if bottom == 0:
                raise _Unknown
            return top / bottom if math.isfinite(bottom) else 0.0
        if token == "\\sqrt":
            return math.sqrt(self._atom())
        raise _Unknown


def _mul(a: float, b: float) -> float:
    if a == 0 or b == 0:
        return 0.0
    return a * b


def _pow(base: float, exponent: float) -> float:
    try:
        return float(abs(base) ** exponent)
    except OverflowError:
        return math.inf
    except ZeroDivisionError:
        raise _Unknown from None


def _matching(s: str, start: int) -> int:
    """Index of the bracket closing the one at ``s[start]``, or len(s) if it never closes."""
    opening = s[start]
    closing = _OPEN[opening]
    depth = 0
    i = start
    n = len(s)
    while i < n:
        ch = s[i]
        if ch == "\\":
            i += 2
            continue
        if ch == opening:
            depth += 1
        elif ch == closing:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return n


def _matching_back(s: str, end: int) -> int:
    """Index of the bracket opening the one at ``s[end]`` (scanning left), or -1."""
    closing = s[end]
    opening = _CLOSE[closing]
    depth = 0
    i = end
    while i >= 0:
        ch = s[i]
        if not (i > 0 and s[i - 1] == "\\"):
            if ch == closing:
                depth += 1
            elif ch == opening:
                depth -= 1
                if depth == 0:
                    return i
        i -= 1
    return -1


def _exponent_text(s: str, caret: int) -> str:
    """The exponent after the ``^`` at ``caret``: a bracketed group, a command or one character."""
    i = caret + 1
    while i < len(s) and s[i] == " ":
        i += 1
    if i >= len(s):
        return ""
    if s[i] in _OPEN:
        return s[i : _matching(s, i) + 1]
    if s[i] == "\\":
        m = _COMMAND.match(s, i)
        return s[i : m.end()] if m else s[i : i + 2]
    m = _NUMBER.match(s, i)
    return m.group() if m else s[i]  # 10^1000000000 is 10**1000000000 for latex2sympy


def _factorial_operand(s: str, bang: int) -> str:
    """What the ``!`` at ``bang`` applies to: a bracketed group or a number."""
    i = bang - 1
    while i >= 0 and s[i] == " ":
        i -= 1
    if i < 0:
        return ""
    start = _operand_start(s, i)
    while True:  # 10^{7}! is factorial(10**7) for latex2sympy: take the whole power
        caret = start - 1
        while caret >= 0 and s[caret] == " ":
            caret -= 1
        if caret < 1 or s[caret] != "^":
            return s[max(start, 0) : i + 1]
        base_end = caret - 1
        while base_end >= 0 and s[base_end] == " ":
            base_end -= 1
        base = _operand_start(s, base_end) if base_end >= 0 else caret
        if base > base_end:  # no number or group before the ^ (a variable, a command)
            return s[max(start, 0) : i + 1]
        start = base


def _operand_start(s: str, end: int) -> int:
    """Start of the bracketed group or number ending at ``s[end]``."""
    if s[end] in _CLOSE:
        return max(_matching_back(s, end), 0)
    j = end
    while j >= 0 and (s[j].isdigit() or s[j] == "."):
        j -= 1
    return j + 1


def _too_large(text: str, limit: float) -> bool:
    """``text`` is variable-free and its magnitude (or a power inside it) exceeds the bounds."""
    if not text or _LETTER.search(_COMMAND.sub("", text)) is not None:
        return False  # a variable (or nothing): SymPy keeps it symbolic
    try:
        value = _Estimator(text).value()
    except (_Huge, RecursionError):  # nested beyond any real answer, too
        return True
    except (_Unknown, ValueError, OverflowError):
        return False  # not read here: the time limit still bounds it
    return not value <= limit


def unbounded(answer: str) -> bool:
    """True for an answer whose evaluation may not finish: compared by exact string only."""
    if len(answer) > _MAX_LENGTH:
        return True
    if max((len(m) for m in _DIGIT_RUN.findall(answer)), default=0) > _MAX_DIGIT_RUN:
        return True
    for m in _PY_POWER.finditer(answer):  # a**b**c is a**(b**c), as SymPy reads it
        parts = re.split(r"\s*\*\*\s*", m.group(1))
        if _too_large("^{".join(parts) + "}" * (len(parts) - 1), _MAX_EXPONENT):
            return True
    # read as latex2sympy reads them: ** is a power, \left( and \right) are brackets
    answer = _SIZING.sub("", _PY_CARET.sub("^", answer))
    pos = answer.find("^")
    while pos >= 0:
        if _too_large(_exponent_text(answer, pos), _MAX_EXPONENT):
            return True
        pos = answer.find("^", pos + 1)
    pos = answer.find("!")
    while pos >= 0:
        if _too_large(_factorial_operand(answer, pos), _MAX_FACTORIAL):
            return True
        pos = answer.find("!", pos + 1)
    return False
