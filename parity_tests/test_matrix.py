"""The test matrix of issue 9, driven by the contract table: every public function
of zero_jax and zero_torch against the NumPy oracle, with x64 on and off, batch
sizes on both sides of every internal threshold, every integer id dtype (values
near its limits, negative, sparse, all-equal, all-distinct), float16 / bfloat16 /
float32 / float64, every voting method, and eager / jit / vmap.

The default (CI) profile runs every value of every axis at least once per
function; ``HYPOTHESIS_PROFILE=thorough`` (or ``ZERO_MATRIX=thorough``) runs the
whole product.  Sharded runs are in ``test_matrix_sharded.py``."""

from __future__ import annotations

import os

import pytest

import zero_jax
from zero_contracts import CONTRACTS

from .tester import BUILDERS, RewardTester, axes, configs

PROFILES = (os.environ.get("ZERO_MATRIX", ""), os.environ.get("HYPOTHESIS_PROFILE", ""))
THOROUGH = "thorough" in PROFILES

torch = pytest.importorskip("torch", reason="the matrix compares against the torch twin")
import zero_torch  # noqa: E402

CASES = [(name, cfg) for name in CONTRACTS for cfg in configs(name, thorough=THOROUGH)]


def test_every_public_function_is_in_the_contract_table_and_the_tester():
    for package in (zero_jax, zero_torch):
        exported = (getattr(package, n) for n in package.__all__ if n != "checked")
        functions = {f.__name__ for f in exported if callable(f) and not isinstance(f, type)}
        assert functions == set(CONTRACTS), (package.__name__, functions ^ set(CONTRACTS))
    assert set(BUILDERS) == set(CONTRACTS), set(CONTRACTS) - set(BUILDERS)


def test_the_ci_selection_runs_every_value_of_every_axis_and_every_x64_transform_pair():
    for name in CONTRACTS:
        chosen = configs(name)
        for axis, values in axes(CONTRACTS[name]).items():
            assert {getattr(c, axis) for c in chosen} == set(values), (name, axis)
        pairs = {(c.x64, c.transform) for c in chosen}
        assert len(pairs) == 2 * len(axes(CONTRACTS[name])["transform"]), (name, pairs)


@pytest.mark.parametrize(("name", "cfg"), CASES, ids=[f"{n}-{c.label()}" for n, c in CASES])
def test_matrix_jax(name, cfg):
    RewardTester(name).check_jax(cfg)


TORCH_CASES = [(n, c) for n, c in CASES if c.x64 and c.transform == "eager"]


@pytest.mark.parametrize(
    ("name", "cfg"), TORCH_CASES, ids=[f"{n}-{c.label()}" for n, c in TORCH_CASES]
)
def test_matrix_torch(name, cfg):
    RewardTester(name).check_torch(cfg)
