"""The README stays a few screens long and every relative link in it and in docs/ leads to a
file of the repository (the long material lives in docs/*.md; each page's code is run by the
test named in the page's own test: recipes by test_readme_recipes.py, the two-process step by
test_multiprocess.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_the_readme_fits_a_few_screens():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250, len(lines)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page):
    text = page.read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)\s]+)\)", text)
    local = [t.split("#", 1)[0] for t in targets if not re.match(r"[a-z]+:", t)]
    missing = [t for t in local if t and not (page.parent / t).exists()]
    assert not missing, missing


def test_every_docs_page_is_linked_from_the_readme():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    linked = set(re.findall(r"\]\((docs/[^)#\s]+)\)", readme))
    pages = {str(p.relative_to(ROOT)) for p in PAGES[1:]}
    assert pages <= linked, pages - linked


def test_every_public_function_has_a_place_in_the_test_map():
    from zero_contracts import CONTRACTS

    text = (ROOT / "parity_tests" / "README.md").read_text(encoding="utf-8")
    table = text.split("<!-- function map", 1)[1]
    missing = [name for name in CONTRACTS if f"`{name}`" not in table]
    assert not missing, missing
