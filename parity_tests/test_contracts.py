"""The contract table describes the functions as they are: signatures (names, order,
positional vs keyword-only, defaults) in both twins, a runnable example and the
paper in every docstring, and every message / constant defined once."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

import zero_contracts
import zero_jax
from zero_contracts import CONTRACTS, PAPERS

torch = pytest.importorskip("torch", reason="the torch twin's signatures are checked too")
import zero_torch  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("package", [zero_jax, zero_torch], ids=["jax", "torch"])
@pytest.mark.parametrize("name", list(CONTRACTS))
def test_signature_matches_the_contract(package, name):
    spec = CONTRACTS[name]
    params = list(inspect.signature(getattr(package, name)).parameters.values())
    assert [p.name for p in params] == list(spec.parameters)
    for p in params:
        arg = next((a for a in spec.args if a.name == p.name), None)
        if arg is not None:
            assert p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD, p
            assert (p.default is None) if arg.optional else (p.default is p.empty), p
            continue
        h = spec.hyper(p.name)
        want = inspect.Parameter.KEYWORD_ONLY if h.keyword_only else (
            inspect.Parameter.POSITIONAL_OR_KEYWORD
        )
        assert p.kind is want, p
        assert (p.default is p.empty) if h.required else (p.default == h.default), p


@pytest.mark.parametrize("package", [zero_jax, zero_torch], ids=["jax", "torch"])
@pytest.mark.parametrize("name", list(CONTRACTS))
def test_hypers_are_typed_as_everything_they_accept(package, name):
    """A real hyper-parameter accepts a number, a NumPy scalar or 0-d array, and a 0-d
    (or traced) array; a static integer one (``num_answers``, ``ddof``, ``k``) a Python
    or NumPy integer: the annotations say so, so that a user's ``mypy --strict`` passes a
    traced ``eps`` or a ``np.int64`` count without an error."""
    want = "ArrayLike" if package is zero_jax else "Real"
    params = inspect.signature(getattr(package, name)).parameters
    for h in CONTRACTS[name].hypers:
        got = params[h.name].annotation
        if h.kind == "real":
            assert got == want, (name, h.name)
        elif h.kind in ("count", "int"):
            assert got == ("Index | None" if h.default is None and not h.required else "Index"), (
                name, h.name, got,
            )
        else:
            assert "ArrayLike" not in str(got), (name, h.name)


@pytest.mark.parametrize("package", [zero_jax, zero_torch], ids=["jax", "torch"])
def test_the_integer_alias_is_what_the_functions_accept(package):
    """``Index`` names Python and NumPy integers, and the functions take each of them."""
    import numpy as np

    assert package._checks.Index == "int | np.integer[Any]"
    answers = np.array([[0, 2, 2, 1]])
    answers = torch.as_tensor(answers) if package is zero_torch else answers
    for n in (3, np.int8(3), np.uint64(3), np.int64(3)):
        labels, _ = package.majority_vote(answers, n)
        assert labels.tolist() == [2], n


@pytest.mark.parametrize("package", [zero_jax, zero_torch], ids=["jax", "torch"])
@pytest.mark.parametrize("name", list(CONTRACTS))
def test_docstrings_carry_an_example_and_the_paper(package, name):
    fn = getattr(package, name)
    assert ">>>" in (fn.__doc__ or ""), f"{package.__name__}.{name} has no >>> example"
    paper = PAPERS[CONTRACTS[name].paper]
    module_doc = inspect.getmodule(fn).__doc__ or ""
    text = (fn.__doc__ or "") + module_doc
    if CONTRACTS[name].module != "primitives":
        assert paper.arxiv in text, f"{package.__name__}.{name}: no arXiv {paper.arxiv}"


def test_constants_and_presets_are_shared_not_copied():
    assert zero_jax.ADVANTAGE_PRESETS is zero_contracts.ADVANTAGE_PRESETS
    assert zero_torch.ADVANTAGE_PRESETS is zero_contracts.ADVANTAGE_PRESETS
    assert zero_jax.primitives.VOTE_METHODS is zero_contracts.VOTE_METHODS
    assert zero_torch.primitives.VOTE_METHODS is zero_contracts.VOTE_METHODS


def test_no_message_or_constant_is_defined_twice():
    """Every error text of the twins comes from zero_contracts.messages: no f-string
    ``raise`` with a literal message in the twins' validation code."""
    for package in ("zero_jax", "zero_torch"):
        for path in sorted((ROOT / package).glob("*.py")):
            source = path.read_text()
            for line in source.splitlines():
                if re.search(r"raise (Type|Value)Error\(f?\"", line):
                    pytest.fail(f"{path.name}: a message written in place: {line.strip()}")
            for constant in ("VOTE_METHODS = (", "SCALES = (", "SINGLETONS = (",
                             "ADVANTAGE_PRESETS: dict"):
                assert constant not in source, f"{path.name} redefines {constant}"


def test_a_new_real_hyper_is_traceable_and_named_in_its_error_by_default():
    """What CONTRIBUTING promises of a ``Hyper`` written with only its range."""
    from zero_contracts.spec import Hyper

    w = Hyper("weight", "real", 0.5, lo=0.0, hi=1.0)
    assert w.static is False and w.expected == "in [0, 1]"
    assert Hyper("cap", "real", lo=0.0).expected == "a finite number >= 0"
    assert Hyper("t", "real", 1.0, static=True).static is True
    assert Hyper("k", "count").static is True
    for spec in CONTRACTS.values():
        for h in spec.hypers:
            assert h.kind != "real" or h.expected, (spec.name, h.name)
