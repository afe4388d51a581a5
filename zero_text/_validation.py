"""Boundary checks shared by the public functions of :mod:`zero_text`."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

__all__ = ["as_str_array", "as_str_list"]


def _check_items(out: list[object], name: str) -> list[str]:
    for i, item in enumerate(out):
        if not isinstance(item, str):
            raise TypeError(f"{name}[{i}] must be a str, got {type(item).__name__}")
    return out  # type: ignore[return-value]  # every item checked above


def as_str_list(texts: object, name: str) -> list[str]:
    """Return ``texts`` as a list of ``str``, or raise a clear error.

    Accepts any iterable of strings, including a 1-D NumPy array of dtype
    ``U`` or ``object`` (elements may be ``str`` subclasses such as
    ``numpy.str_``). A bare ``str`` is rejected on purpose: it is itself a
    sequence of one-character strings, which is almost never what the caller
    meant.
    """
    if isinstance(texts, (str, bytes)):
        raise TypeError(
            f"{name} must be a sequence of strings, not a single {type(texts).__name__}"
        )
    if isinstance(texts, np.ndarray):
        if texts.ndim != 1:
            raise ValueError(f"{name} must be 1-D (n strings), got an array of shape {texts.shape}")
        return _check_items(texts.tolist(), name)
    if not isinstance(texts, Iterable):
        raise TypeError(f"{name} must be a sequence of strings, got {type(texts).__name__}")
    return _check_items(list(texts), name)


def as_str_array(texts: object, name: str) -> tuple[list[str], tuple[int, ...]]:
    """Flat list of the strings of ``texts`` and the shape to give the per-text results.

    A NumPy array of strings may have any shape (``[B, K]`` replies give
    ``[B, K]`` results); any other input goes through :func:`as_str_list`
    and gives shape ``(n,)``.
    """
    if isinstance(texts, np.ndarray):
        flat = texts.reshape(-1).tolist()
        items = _check_items(flat, name) if texts.ndim == 1 else _check_nd(flat, texts.shape, name)
        return items, texts.shape
    items = as_str_list(texts, name)
    return items, (len(items),)


def _check_nd(flat: list[object], shape: tuple[int, ...], name: str) -> list[str]:
    for i, item in enumerate(flat):
        if not isinstance(item, str):
            where = ", ".join(map(str, np.unravel_index(i, shape)))
            raise TypeError(f"{name}[{where}] must be a str, got {type(item).__name__}")
    return flat  # type: ignore[return-value]  # every item checked above
