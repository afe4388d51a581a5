"""zero_stacks at its input boundary (issue 35): the Tunix estimator takes the float
dtypes zero_jax takes (bfloat16 included), and registering it without Tunix says how
to install it in one line, as the entry points do."""

from __future__ import annotations

import sys

import jax
import ml_dtypes
import numpy as np
import pytest

import zero_jax
from zero_stacks import _backend
from zero_stacks import tunix as ztunix


@pytest.mark.parametrize("x64", [False, True], ids=["x64-off", "x64-on"])
@pytest.mark.parametrize("preset", ["tunix", "rloo"])
def test_the_tunix_estimator_takes_bfloat16_rewards(preset, x64):
    """It refused bfloat16 ("rewards must be floats, got bfloat16": np.issubdtype does
    not know ml_dtypes' floats), while zero_jax.group_advantages takes it."""
    r = np.array([1.0, 0.0, 0.5, 0.5, 2.0, 1.0], ml_dtypes.bfloat16)
    with jax.enable_x64(x64):
        got = ztunix.AdvantageEstimator(preset=preset)(r, 2)
        want = np.asarray(zero_jax.group_advantages(
            r.reshape(-1, 2), **zero_jax.ADVANTAGE_PRESETS[preset])).reshape(-1)
        jitted = jax.jit(lambda x: zero_jax.group_advantages(
            x, **zero_jax.ADVANTAGE_PRESETS[preset]))(r.reshape(-1, 2))
    np.testing.assert_array_equal(got.astype(np.float32), want.astype(np.float32))
    np.testing.assert_array_equal(got.astype(np.float32),
                                  np.asarray(jitted).reshape(-1).astype(np.float32))
    assert got[0] > 0 > got[1] and got[2] == got[3] == 0


def test_integer_rewards_are_still_refused():
    with pytest.raises(TypeError, match="rewards must be floats, got int64"):
        ztunix.AdvantageEstimator()(np.array([1, 0], np.int64), 2)


def test_float_dtypes_of_the_stacks_include_ml_dtypes():
    for dt in (np.float16, np.float32, np.float64, ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn):
        assert _backend.is_float(np.dtype(dt))
    for dt in (np.int32, np.bool_, np.uint8, "V2"):
        assert not _backend.is_float(np.dtype(dt))
    assert _backend.floats(np.array([0.5, 0.25], ml_dtypes.bfloat16)) == [0.5, 0.25]


def test_registering_without_tunix_gives_the_install_hint(monkeypatch):
    """Without Tunix it raised a bare ModuleNotFoundError ("No module named 'tunix'")."""
    for name in [m for m in sys.modules if m == "tunix" or m.startswith("tunix.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "tunix", None)  # as if not installed
    with pytest.raises(ModuleNotFoundError) as err:
        ztunix.register_advantage_estimator()
    assert str(err.value) == (
        'register_advantage_estimator needs tunix (the [tunix] extra): run pip install '
        '".[tunix]" in the zero-rewards checkout')
