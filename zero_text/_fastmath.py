"""Cheap decisions taken in the caller's process before math-verify is asked, each tested
against the installed math-verify: :func:`fast_equivalent` (plain numbers),
:func:`summary_verdict` (from what the helpers read), :func:`plain_summary` and
:func:`tame` (answers that cannot blow up SymPy's evaluation).
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

__all__ = ["fast_equivalent", "plain_summary", "number_value", "summary_verdict", "tame"]

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


def plain_summary(answer: str) -> Any:
    """What the helpers would read of a plain number (see :func:`summary_verdict`), else
    None. math-verify parses ``\\boxed{N}`` to ``[Integer(N), "N"]`` and a fraction to its
    Rational (tested against it); a decimal's reading is given as its value alone (no
    exact part, no string), which can only leave more pairs to math-verify."""
    parsed = number_value(answer)
    if parsed is None:
        return None
    value, decimal = parsed
    if decimal:
        return None, (float(value),), ()
    strings = (answer,) if _INTEGER.fullmatch(answer) else ()
    return ((value.numerator, value.denominator),), (float(value),), strings


def fast_equivalent(a: str, b: str) -> bool | None:
    """math-verify's verdict on two plain numbers (:func:`number_value`) where provable,
    else None. Integers and fractions parse to Rationals, compared exactly; a decimal
    parses to a Float, equal to a number when both agree after ``round(6)``, so values on
    the 10**-6 grid are equal when their values are and 10**-6 apart never are; a decimal
    within 10**-6 of an off-grid fraction is left to math-verify."""
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
    r"|text|mathrm|sin|cos|tan|ln|log|in|cup|cap|emptyset|left|right))*+"
)
_DIGIT_RUN = re.compile(r"[0-9]+")


def _longest_digit_run(answer: str) -> int:
    return max((len(m) for m in _DIGIT_RUN.findall(answer)), default=0)


def tame(answer: str) -> bool:
    """True when the answer cannot make SymPy's evaluation blow up: at most 200 characters
    of short literals (15 digits), variables, arithmetic, fractions, roots, pi, relations,
    intervals (``\\left( \\right)``), sets, simple functions and text; no powers,
    factorials, sums, integrals."""
    return len(answer) <= 200 and bool(_TAME.fullmatch(answer)) and _longest_digit_run(answer) <= 15
