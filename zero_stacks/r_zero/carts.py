"""Cart arithmetic as text: what the Challenger writes and the Solver answers.

A cart holds 1 to ``MAX_ITEMS`` items, each ``price x quantity`` (price 1..``MAX_PRICE``,
quantity 1..``MAX_QUANTITY``).  Two kinds of question are written on it, word by word:

* deduction, ``3 x 4 + 2 x 5``: the answer is the total (22);
* abduction, ``3 x ? + 2 x 5 = 22``: one field is hidden, the total is shown, the answer
  is the hidden field (4).

The Challenger writes ``<question> ... </question> \\boxed{A}`` (its own answer, which
nothing reads but the format gate); the Solver is asked the question and answers
``\\boxed{A}``.  :func:`parse` is the format gate (shape and ranges, read from the words;
it never works the answer out).  :func:`truth` is the checker: the true answer, or
``None`` when an abduction cart's total is inconsistent.  The loop uses it for
evaluation, for the diagnostics and for the ``truth`` control only.

Every number is one word (``"22"`` in a question, ``"\\boxed{22}"`` as an answer), so a
word-level tokenizer over :func:`words` spells every question and answer.
"""

from __future__ import annotations

import dataclasses
import zlib
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

import zero_text

__all__ = [
    "KINDS",
    "MAX_ITEMS",
    "MAX_PRICE",
    "MAX_QUANTITY",
    "MAX_TOTAL",
    "Cart",
    "challenger_prompt",
    "challenger_text",
    "draw",
    "eval_carts",
    "parse",
    "question_text",
    "solver_prompt",
    "truth",
    "words",
]

MAX_ITEMS, MAX_PRICE, MAX_QUANTITY = 3, 9, 4
MAX_TOTAL = MAX_ITEMS * MAX_PRICE * MAX_QUANTITY
KINDS = ("deduction", "abduction")
#: Words of the longest question (an abduction cart of ``MAX_ITEMS`` items).
QUESTION_WIDTH = 4 * MAX_ITEMS + 1
FILLER = "_"


@dataclasses.dataclass(frozen=True)
class Cart:
    """``items``: (price, quantity) pairs; ``hidden``: ``None`` (deduction) or
    ``(item, field)`` with field 0 the price, 1 the quantity (abduction), that field held
    as 0; ``total``: the total shown on an abduction cart (``None`` on deduction)."""

    items: tuple[tuple[int, int], ...]
    hidden: tuple[int, int] | None = None
    total: int | None = None

    @property
    def kind(self) -> str:
        return "deduction" if self.hidden is None else "abduction"


def words() -> list[str]:
    """The vocabulary: ``<pad>`` 0, ``<s>`` 1, ``</s>`` 2, then every other word."""
    numbers = [str(v) for v in range(MAX_TOTAL + 1)]
    boxes = [f"\\boxed{{{v}}}" for v in range(MAX_TOTAL + 1)]
    return ["<pad>", "<s>", "</s>", "new", *KINDS, FILLER, "<question>", "</question>",
            "x", "+", "=", "?", *numbers, *boxes]  # fmt: skip


def question_text(cart: Cart) -> str:
    """The question's words, e.g. ``3 x ? + 2 x 5 = 22``."""
    parts = []
    for i, (price, quantity) in enumerate(cart.items):
        shown = [str(price), str(quantity)]
        if cart.hidden is not None and cart.hidden[0] == i:
            shown[cart.hidden[1]] = "?"
        parts.append(f"{shown[0]} x {shown[1]}")
    text = " + ".join(parts)
    return text if cart.hidden is None else f"{text} = {cart.total}"


def challenger_prompt(kind: str) -> str:
    return f"new {kind}"


def challenger_text(cart: Cart) -> str:
    """A well-formed Challenger output for ``cart``, its true answer boxed (warm start)."""
    return f"<question> {question_text(cart)} </question> \\boxed{{{truth(cart)}}}"


def solver_prompt(question: str) -> str:
    """The Solver's prompt: the question, left-filled with ``_`` to one width and ended by
    ``?``.  Every prompt has the same number of words, so a batch of questions needs no
    padding, which would shift a learned-position model's positions (GPT-2)."""
    n = len(question.split())
    return " ".join([FILLER] * max(0, QUESTION_WIDTH - n) + [question, "?"])


def parse(question: str | None) -> Cart | None:
    """The format gate: the :class:`Cart` a question's words describe, or ``None``.

    Well formed: 1 to ``MAX_ITEMS`` items ``p x q`` joined by ``+``, every field in range;
    an abduction cart hides exactly one field (``?``) and ends with ``= total``, the total
    in ``0..MAX_TOTAL``.  Whether that total is consistent is not checked here (that
    would be working the answer out): :func:`truth` returns ``None`` for it."""
    if question is None:
        return None
    tokens = question.split()
    total = None
    if len(tokens) >= 2 and tokens[-2] == "=":
        if not tokens[-1].isdigit() or int(tokens[-1]) > MAX_TOTAL:
            return None
        total, tokens = int(tokens[-1]), tokens[:-2]
    if len(tokens) % 4 != 3 or not 1 <= (len(tokens) + 1) // 4 <= MAX_ITEMS:
        return None
    items, hidden = [], []
    for i in range(0, len(tokens), 4):
        p, x, q = tokens[i : i + 3]
        if x != "x" or (i + 3 < len(tokens) and tokens[i + 3] != "+"):
            return None
        item = []
        for f, (w, top) in enumerate(((p, MAX_PRICE), (q, MAX_QUANTITY))):
            if w == "?":
                hidden.append((i // 4, f))
                item.append(0)
            elif w.isdigit() and 1 <= int(w) <= top:
                item.append(int(w))
            else:
                return None
        items.append((item[0], item[1]))
    if (total is None) != (not hidden) or len(hidden) > 1:
        return None
    return Cart(tuple(items), hidden[0] if hidden else None, total)


def truth(cart: Cart) -> int | None:
    """The true answer: the total, or the hidden field (``None`` if no field in range
    makes the shown total)."""
    if cart.hidden is None:
        return sum(p * q for p, q in cart.items)
    item, field = cart.hidden
    rest = sum(p * q for j, (p, q) in enumerate(cart.items) if j != item)
    partner = cart.items[item][1 - field]
    top = MAX_PRICE if field == 0 else MAX_QUANTITY
    value, left = divmod(cart.total - rest, partner)  # type: ignore[operator]
    return value if left == 0 and 1 <= value <= top else None


def draw(rng: np.random.Generator, kind: str, items: int | None = None) -> Cart:
    """A random consistent cart of ``kind`` (``items`` items, else 1..MAX_ITEMS)."""
    n = int(rng.integers(1, MAX_ITEMS + 1)) if items is None else items
    pairs = tuple(
        (int(rng.integers(1, MAX_PRICE + 1)), int(rng.integers(1, MAX_QUANTITY + 1)))
        for _ in range(n)
    )
    if kind == "deduction":
        return Cart(pairs)
    item, field = int(rng.integers(n)), int(rng.integers(2))
    shown = [list(pq) for pq in pairs]
    shown[item][field] = 0  # a hidden field is held as 0, as parse() reads it
    return Cart(tuple((p, q) for p, q in shown), (item, field), sum(p * q for p, q in pairs))


def held_out(cart: Cart) -> bool:
    """Whether ``cart`` belongs to the held-out quarter of the cart space (by a CRC-32 of
    its question), from which every evaluation set is drawn and which no warm start sees."""
    return zlib.crc32(question_text(cart).encode()) % 4 == 0


def eval_carts(seed: int, per_kind: int) -> list[Cart]:
    """The seed's frozen evaluation carts: ``per_kind`` distinct held-out deduction then
    abduction carts, drawn from the seed alone (never trained on: a warm start sees no
    held-out cart, and a generated copy of one of these is dropped)."""
    rng = np.random.default_rng([seed, 37, 1])
    out: list[Cart] = []
    for kind in KINDS:
        seen: set[str] = set()
        while len(seen) < per_kind:
            cart = draw(rng, kind)
            if held_out(cart) and question_text(cart) not in seen:
                seen.add(question_text(cart))
                out.append(cart)
    return out


def questions_of(texts: Iterable[str]) -> list[str | None]:
    """The ``<question>`` of each Challenger output (``None`` without one)."""
    return [zero_text.extract_tag(t, "question") for t in texts]


def key(question: str) -> str:
    """A question's words, single-spaced: two questions are equal when their keys are."""
    return " ".join(question.split())


def answer_text(value: int | None) -> str | None:
    return None if value is None else f"\\boxed{{{value}}}"


def truths(questions: Sequence[str]) -> list[int | None]:
    """The checker's answer of each question (``None``: malformed or inconsistent)."""
    out = []
    for q in questions:
        cart = parse(q)
        out.append(None if cart is None else truth(cart))
    return out


def tokenizer() -> Any:
    """A word-level Hugging Face tokenizer over :func:`words` (built in memory, nothing
    downloaded): ``<s>`` prepended to every text; ``<pad>``, ``<s>``, ``</s>`` special.
    TRL uses it, and Tunix through its adapter for Hugging Face tokenizers."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = {w: i for i, w in enumerate(words())}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<pad>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 1)])
    tok.decoder = decoders.WordPiece(prefix="##", cleanup=False)
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="<pad>", bos_token="<s>", eos_token="</s>"
    )
