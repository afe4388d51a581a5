"""Cheap decisions taken in the caller's process before math-verify is asked.

* :func:`fast_equivalent` settles a pair of plain numbers (integers, decimals with at
  most 6 places, integer fractions) exactly, only where that provably gives math-verify's
  verdict (``parse`` of ``\\boxed{answer}``, ``verify`` either way): integers and
  fractions parse to SymPy Rationals, compared exactly; a decimal parses to a Float,
  equal to a number when both agree after ``round(6)``, so values on the 10**-6 grid are
  equal exactly when their values are and values 10**-6 apart never are. A decimal
  within 10**-6 of an off-grid fraction is left to math-verify.
* :func:`summary_verdict` settles a pair from what the helpers read of each answer.
* :func:`unbounded` flags answers whose evaluation by SymPy has no useful bound (compared
  by exact string only); :func:`tame` tells answers that cannot blow up evaluation.

The agreement with the installed math-verify is tested (parity_tests/test_text_math.py).
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from typing import Any

__all__ = ["fast_equivalent", "number_value", "summary_verdict", "tame", "unbounded"]

_INT = r"-?(?:0|[1-9][0-9]{0,29})"  # at most 30 digits on the fast path
_INTEGER = re.compile(_INT)
_DECIMAL = re.compile(r"(-?)(0|[1-9][0-9]*)\.([0-9]{1,6})")  # math-verify rounds to 6
_FRAC = re.compile(rf"(-?)\\[dt]?frac\{{({_INT})\}}\{{({_INT})\}}|()({_INT})/({_INT})")


def number_value(answer: str) -> tuple[Fraction, bool] | None:
    """``(value, is_decimal)`` of a plain number, else None: ``-?N`` (no leading zeros, at
    most 30 digits), ``-?N.D`` (at most 6 decimals, 15 significant digits: exact on the
    10**-6 grid), ``-?\\frac{P}{Q}`` (also ``\\dfrac``, ``\\tfrac``) or ``P/Q``, Q != 0."""
    if len(answer) > 76:
        return None
    if _INTEGER.fullmatch(answer):
        return Fraction(int(answer)), False
    m = _DECIMAL.fullmatch(answer)
    if m is not None:
        sign, whole, decimals = m.groups()
        if len((whole + decimals).lstrip("0")) > 15:
            return None
        value = Fraction(int(whole + decimals), 10 ** len(decimals))
        return (-value if sign else value), True
    m = _FRAC.fullmatch(answer)
    if m is None:
        return None
    sign, top, bottom = m.group(1, 2, 3) if m.group(2) is not None else m.group(4, 5, 6)
    if int(bottom) == 0:
        return None
    return Fraction(-int(top) if sign else int(top), int(bottom)), False


def fast_equivalent(a: str, b: str) -> bool | None:
    """math-verify's verdict on two normalised answers when provable (plain numbers, see
    :func:`number_value`), else None ("ask math-verify")."""
    va, vb = number_value(a), number_value(b)
    if va is None or vb is None:
        return None
    (x, x_dec), (y, y_dec) = va, vb
    if x == y:
        return True
    if not (x_dec or y_dec) or abs(x - y) >= Fraction(1, 10**6):
        return False
    return None  # a decimal within 10**-6 of an off-grid fraction: math-verify rounds


def summary_verdict(sa: Any, sb: Any) -> bool | None:
    """``verify``'s verdict on two read answers (``(exact, numbers, strings)``, see
    :data:`zero_text._mathpool.Summary`) when provable, else None.

    Parses of only Rationals and strings: ``verify`` compares Rationals exactly, strings
    by equality (non-empty), never a string with an expression, so "any equal pair" is
    its verdict either way. Real variable-free values at least ``max(1e-5, 1e-9 *
    magnitude)`` apart fail every test of ``sympy_expr_eq`` (``round(6)``, ``evalf``,
    ``simplify`` keep them apart) unless the parses share a string.
    """
    (qa, xa, ta), (qb, xb, tb) = sa, sb
    shared = any(t and t in tb for t in ta)
    if qa is not None and qb is not None:
        return shared or any(x == y for x in qa for y in qb)
    if xa and xb and not shared:
        if all(abs(x - y) > max(1e-5, 1e-9 * max(abs(x), abs(y))) for x in xa for y in xb):
            return False
    return None


_TAME = re.compile(
    r"(?:[0-9A-Za-z+\-*/=,.:;'()\[\]{}|<> ]"
    r"|\\(?:[dt]?frac|sqrt|pi|cdot|times|div|pm|mp|leq?|geq?|neq|infty|circ|%|\{|\}"
    r"|text|mathrm|sin|cos|tan|ln|log|in|cup|cap|emptyset))*+"
)
_DIGIT_RUN = re.compile(r"[0-9]+")


def _longest_digit_run(answer: str) -> int:
    return max((len(m) for m in _DIGIT_RUN.findall(answer)), default=0)


def tame(answer: str) -> bool:
    """True when the answer cannot make SymPy's evaluation blow up: at most 200 characters
    of short literals (15 digits), variables, arithmetic, fractions, roots, pi, relations,
    intervals, sets, simple functions and text; no powers, factorials, sums, integrals."""
    return len(answer) <= 200 and bool(_TAME.fullmatch(answer)) and _longest_digit_run(answer) <= 15


# ------------------------------------------------------------------ the static guard

_MAX_EXPONENT = 1e6  # x^(10**6) and beyond: numbers of a million digits and more
_MAX_FACTORIAL = 1e5  # 100000! has 456,574 digits
_COMMAND = re.compile(r"\\[A-Za-z]+")
# ``**`` right after a base (a digit, a letter or a closing bracket), or spaced on both
# sides after a digit or a closing bracket (``10 ** 10``); Markdown's bold is neither
_BASE = r"(?:(?<=[0-9)\]}])\s+(?=\*\*\s)|(?<=[0-9A-Za-z)\]}]))"
_PY_POWER = re.compile(_BASE + r"\*\*\s*([0-9.]+(?:\s*\*\*\s*[0-9.]+)*)")
_PY_CARET = re.compile(_BASE + r"\*\*")
_SIZING = re.compile(r"\\(?:left|right|[Bb]igg?[lr]?)(?![A-Za-z])")
_TOKEN = re.compile(r"\s*(?:([0-9]+(?:\.[0-9]+)?)|(\\[A-Za-z]+)|(\S))")
_OPEN = {"{": "}", "(": ")", "[": "]"}
_CLOSE = {v: k for k, v in _OPEN.items()}


class _Huge(Exception):
    """A power or factorial inside the expression is too large to evaluate."""


class _Unknown(Exception):
    """The expression uses something the estimator does not read."""


class _Estimator:
    """Magnitude (absolute value, inf on overflow) of a variable-free LaTeX expression:
    numbers, ``+ - * / ^ !``, ``\\cdot \\times \\div \\pi``, brackets, ``\\frac`` and
    ``\\sqrt``; powers left-associative and an unbraced exponent read whole, as
    latex2sympy does. Raises :class:`_Huge` for an exponent above 10**6 or a factorial
    operand above 10**5, :class:`_Unknown` on anything else."""

    def __init__(self, text: str) -> None:
        self.tokens = [m.group(m.lastindex or 0) for m in _TOKEN.finditer(text)]
        self.i = 0

    def value(self) -> float:
        out = self._sum()
        if self.i != len(self.tokens):
            raise _Unknown
        return out

    def _peek(self) -> str:
        return self.tokens[self.i] if self.i < len(self.tokens) else ""

    def _take(self) -> str:
        token = self._peek()
        if not token:
            raise _Unknown
        self.i += 1
        return token

    def _sum(self) -> float:
        total = self._product()
        while self._peek() in ("+", "-"):
            self.i += 1
            total += self._product()  # |a - b| <= |a| + |b|
        return total

    def _product(self) -> float:
        out = self._signed()
        while True:
            token = self._peek()
            if token in ("*", "\\cdot", "\\times", "/", "\\div"):
                self.i += 1
                other = self._signed()
                if token in ("/", "\\div"):
                    out = _quotient(out, other)
                else:
                    out = 0.0 if out == 0 or other == 0 else out * other
            elif token and (token[0].isdigit() or token in _OPEN or token[0] == "\\"):
                other = self._signed()  # an implicit product
                out = 0.0 if out == 0 or other == 0 else out * other
            else:
                return out

    def _signed(self) -> float:
        while self._peek() in ("+", "-"):
            self.i += 1
        base = self._factorial()
        while self._peek() == "^":
            self.i += 1
            token = self._peek()
            if token[:1].isdigit():  # the whole number, as latex2sympy reads 2^123
                exponent = float(self._take())
            else:
                exponent = self._signed() if token in ("+", "-") else self._factorial()
            if not exponent <= _MAX_EXPONENT:
                raise _Huge
            try:
                base = float(abs(base) ** exponent)
            except OverflowError:
                base = math.inf
            except ZeroDivisionError:
                raise _Unknown from None
        return base

    def _factorial(self) -> float:
        out = self._atom()
        while self._peek() == "!":
            self.i += 1
            if not out <= _MAX_FACTORIAL:
                raise _Huge
            out = math.gamma(out + 1) if out < 171 else math.inf
        return out

    def _atom(self) -> float:
        token = self._take()
        if token[0].isdigit():
            return float(token)
        if token in _OPEN:
            out = self._sum()
            if self._take() != _OPEN[token]:
                raise _Unknown
            return out
        if token == "\\pi":
            return math.pi
        if token in ("\\frac", "\\dfrac", "\\tfrac"):
            top = self._atom()
            return _quotient(top, self._atom())
        if token == "\\sqrt":
            return math.sqrt(self._atom())
        raise _Unknown


def _quotient(top: float, bottom: float) -> float:
    if bottom == 0:
        raise _Unknown
    return top / bottom if math.isfinite(bottom) else 0.0


def _group_end(s: str, start: int) -> int:
    """Index of the bracket closing the one at ``s[start]`` (escaped ones skipped), or len(s)."""
    depth, i = 0, start
    while i < len(s):
        if s[i] == "\\":
            i += 2
            continue
        depth += (s[i] == s[start]) - (s[i] == _OPEN[s[start]])
        if depth == 0:
            return i
        i += 1
    return len(s)


def _operand_start(s: str, end: int) -> int:
    """Start of the bracketed group or number ending at ``s[end]`` (-1 before nothing)."""
    while end >= 0 and s[end] == " ":
        end -= 1
    if end >= 0 and s[end] in _CLOSE:
        depth = 0
        for i in range(end, -1, -1):
            if i > 0 and s[i - 1] == "\\":
                continue
            if s[i] == s[end]:
                depth += 1
            elif s[i] == _CLOSE[s[end]]:
                depth -= 1
                if depth == 0:
                    return i
        return 0
    j = end
    while j >= 0 and (s[j].isdigit() or s[j] == "."):
        j -= 1
    return j + 1 if j < end else -1


def _exponent_text(s: str, caret: int) -> str:
    """The exponent after the ``^`` at ``caret``: a bracketed group, a command, a number
    (``10^1000000000`` is 10**1000000000 for latex2sympy) or one character."""
    i = caret + 1
    while i < len(s) and s[i] == " ":
        i += 1
    if i < len(s) and s[i] in _OPEN:
        return s[i : _group_end(s, i) + 1]
    m = _COMMAND.match(s, i) or re.compile(r"[0-9]+(?:\.[0-9]+)?|.?").match(s, i)
    return m.group() if m else ""


def _factorial_operand(s: str, bang: int) -> str:
    """What the ``!`` at ``bang`` applies to: a bracketed group or a number, with the
    powers it ends (``10^{7}!`` is factorial(10**7) for latex2sympy)."""
    start = _operand_start(s, bang - 1)
    while start > 0:
        caret = start - 1
        while caret >= 0 and s[caret] == " ":
            caret -= 1
        base = _operand_start(s, caret - 1) if caret >= 1 and s[caret] == "^" else -1
        if base < 0:
            break
        start = base
    return s[start:bang] if start >= 0 else ""


def _too_large(text: str, limit: float) -> bool:
    """``text`` is variable-free and its magnitude (or a power inside it) exceeds ``limit``."""
    if not text or re.search(r"[A-Za-z]", _COMMAND.sub("", text)):
        return False  # a variable (or nothing): SymPy keeps it symbolic
    try:
        return not _Estimator(text).value() <= limit
    except (_Huge, RecursionError):  # nested beyond any real answer, too
        return True
    except (_Unknown, ValueError, OverflowError):
        return False  # not read here: the time limit still bounds it


def unbounded(answer: str) -> bool:
    """True for an answer whose evaluation may not finish: compared by exact string only.

    Flagged: more than 1000 characters, a digit run over 300, or, in a variable-free part
    (so ``x^{2}``, ``(n-1)!`` never are), a power whose exponent exceeds 10**6
    (Math-Verify #65's tower, ``2^{10^{7}}``, ``x^{5^{5^5}}``) or a factorial whose operand
    exceeds 10**5 (``(10^9)!``), read as latex2sympy reads them (``**`` is a power,
    ``\\left( \\right)`` brackets). What the estimate cannot read is left to the time limit.
    """
    if len(answer) > 1000 or _longest_digit_run(answer) > 300:
        return True
    for m in _PY_POWER.finditer(answer):  # a**b**c is a**(b**c), as SymPy reads it
        parts = re.split(r"\s*\*\*\s*", m.group(1))
        if _too_large("^{".join(parts) + "}" * (len(parts) - 1), _MAX_EXPONENT):
            return True
    answer = _SIZING.sub("", _PY_CARET.sub("^", answer))
    for pos in (i for i, ch in enumerate(answer) if ch == "^"):
        if _too_large(_exponent_text(answer, pos), _MAX_EXPONENT):
            return True
    for pos in (i for i, ch in enumerate(answer) if ch == "!"):
        if _too_large(_factorial_operand(answer, pos), _MAX_FACTORIAL):
            return True
    return False
