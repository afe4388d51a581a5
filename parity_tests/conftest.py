"""Shared test set-up: x64 on (the seed contracts are float64 / int64), hypothesis
profiles, and the versions in pytest's header (CI logs show torch's +cpu build)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import jax
import pytest
from hypothesis import HealthCheck, settings

jax.config.update("jax_enable_x64", True)

# "ci" (default) keeps the suite fast; HYPOTHESIS_PROFILE=thorough runs thousands
# of examples per property.
settings.register_profile(
    "ci",
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,
)
settings.register_profile(
    "thorough",
    max_examples=3000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_report_header(config: pytest.Config) -> list[str]:
    lines = [f"jax {jax.__version__}, devices: {jax.devices()}"]
    try:
        import torch

        lines.append(f"torch {torch.__version__}")
    except ImportError:
        lines.append("torch not installed")
    return lines


@pytest.fixture
def x64_off() -> Iterator[None]:
    """JAX's default (x64 off) inside one test; the suite runs with x64 on."""
    with jax.enable_x64(False):
        yield
