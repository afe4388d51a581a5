"""Documentation rendered from the contract table.

:func:`docstring_header` is the block every public docstring of both twins starts
with (summary, equation, paper, output); :func:`function_table` is the README's
table of functions.  ``parity_tests/test_docs.py`` holds the docstrings and the
README to them, so the contract is the one source of what the docs promise.
Run ``python -m zero_contracts.docs`` to print both.
"""

from __future__ import annotations

import textwrap

from zero_contracts.spec import CONTRACTS, OUTPUT_RULES, PAPERS, Contract

__all__ = [
    "docstring_header",
    "function_table",
    "gradient_text",
    "normalized",
    "output_text",
    "signature_text",
]


#: The dtype rules in the README's table (see the table's preamble there).
_SHORT = {
    "same": "dtype of `{0}`",
    "mean": "dtype of float `{0}`, else float",
    "promote": "promoted `{0}`, `{1}`",
    "float": "float",
    "labels": "int, float",
    "vote": "dtype of `answers`, int",
    "bool": "bool",
    "count": "int",
    "metrics": "float",
    "carry": "promoted `{0}`, `{1}`; dtype of `{1}`",
}


def output_text(spec: Contract, short: bool = False) -> str:
    """The output's dtype rule in words (``OUTPUT_RULES``; ``short`` for the table)."""
    rule, _, names = spec.output.partition(":")
    text = (_SHORT if short else OUTPUT_RULES)[rule]
    return text.format(*names.split(",")) if names else text


def gradient_text(spec: Contract) -> str:
    """``detached`` or which arguments the output is differentiable in."""
    if spec.detached:
        return "detached (no gradient)"
    return "differentiable in " + ", ".join(f"``{n}``" for n in spec.differentiable_in)


def docstring_header(name: str) -> str:
    """The block ``name``'s docstring starts with in both twins.

    Its first line is the summary; the rest may be wrapped anywhere (the tests
    compare with runs of whitespace collapsed).
    """
    spec = CONTRACTS[name]
    paper = PAPERS[spec.paper]
    return "\n".join(
        [
            spec.summary,
            "",
            f"``{spec.equation}``",
            "",
            f"{paper.title} ({paper.authors}, {paper.year}), {spec.where_in_paper},",
            f"{paper.url}.  Output ``{spec.returns}``: {output_text(spec)}; "
            f"{gradient_text(spec)}.",
        ]
    )


def normalized(text: str) -> str:
    """``text`` with every run of whitespace made one space (for comparisons)."""
    return " ".join(text.split())


def _default(value: object) -> str:
    return f'"{value}"' if isinstance(value, str) else repr(value)


def signature_text(spec: Contract) -> str:
    """``name(args, hyper=default, *, keyword=default)`` as the twins define it."""
    parts = [a.name + ("=None" if a.optional else "") for a in spec.args]
    star = False
    for h in spec.hypers:
        if h.keyword_only and not star:
            parts.append("*")
            star = True
        parts.append(h.name if h.required else f"{h.name}={_default(h.default)}")
    return f"{spec.name}({', '.join(parts)})"


def function_table() -> str:
    """The README's table of every public function (Markdown)."""
    rows = [
        "| function | paper | equation | output |",
        "| --- | --- | --- | --- |",
    ]
    for spec in CONTRACTS.values():
        paper = PAPERS[spec.paper]
        where = spec.where_in_paper.split(",")[0]
        equation = spec.equation.replace("|", "\\|")
        grad = "" if spec.detached else ", differentiable"
        output = output_text(spec, short=True)
        rows.append(
            f"| `{signature_text(spec)}` | [{paper.short} {where}]({paper.url}) "
            f"| `{equation}` | `{spec.returns}` {output}{grad} |"
        )
    return "\n".join(rows)


def wrapped_header(name: str, width: int = 96) -> str:
    """:func:`docstring_header` with its prose wrapped to ``width`` columns (96 fits a
    docstring indented by 4 spaces in ruff's 100); the equation stays on one line."""
    blocks = docstring_header(name).split("\n\n")
    return "\n\n".join(
        block if block.startswith("``") else textwrap.fill(
            block, width, break_long_words=False, break_on_hyphens=False
        )
        for block in blocks
    )


if __name__ == "__main__":  # pragma: no cover - a developer's helper
    print(function_table())
    for contract_name in CONTRACTS:
        print(f"\n--- {contract_name}\n{wrapped_header(contract_name)}")
