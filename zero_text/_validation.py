"""Boundary checks shared by the public functions of :mod:`zero_text`."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["as_str_list"]


def as_str_list(texts: object, name: str) -> list[str]:
    """Return ``texts`` as a list of ``str``, or raise a clear error.

    A bare ``str`` is rejected on purpose: it is itself a sequence of
    one-character strings, which is almost never what the caller meant.
    Elements may be ``str`` subclasses (``numpy.str_`` included).
    """
    if isinstance(texts, (str, bytes)):
        raise TypeError(
            f"{name} must be a sequence of strings, not a single {type(texts).__name__}"
        )
    if not isinstance(texts, Iterable):
        raise TypeError(f"{name} must be a sequence of strings, got {type(texts).__name__}")
    out = list(texts)
    for i, item in enumerate(out):
        if not isinstance(item, str):
            raise TypeError(f"{name}[{i}] must be a str, got {type(item).__name__}")
    return out
