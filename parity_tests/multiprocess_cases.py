"""The inputs of the two-process test: every public function on a global batch of 16
rows (the matrix builders, a fixed seed per case), plus the cases a per-process answer
would get wrong: cluster sizes over the whole batch and a batch-wide std."""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np

from zero_contracts import CONTRACTS

from .cases import BUILDERS, Config

#: key -> (function, extra hyper-parameters, hyper-parameters passed traced)
_SPECIAL: dict[str, tuple[str, dict[str, Any], tuple[str, ...]]] = {
    "challenger_rewards[global clusters]": ("challenger_rewards", {"strength": 0.75}, ()),
    "challenger_rewards[traced strength]": ("challenger_rewards", {"strength": 1.5},
                                            ("strength",)),
    "group_advantages[batch std]": ("group_advantages", {"scale": "batch", "ddof": 1,
                                                         "eps": 1e-4, "singleton": "zero"},
                                    ()),
    "group_advantages[traced eps]": ("group_advantages", {"scale": "group", "eps": 0.01},
                                     ("eps",)),
    "curriculum_mask[traced band]": ("curriculum_mask", {"low": 0.3, "high": 0.8},
                                     ("low", "high")),
    "solver_rewards[traced alpha]": ("solver_rewards", {"alpha": 0.6}, ("alpha",)),
}

CASES: tuple[str, ...] = tuple(CONTRACTS) + tuple(_SPECIAL)


def inputs(key: str) -> tuple[str, dict[str, np.ndarray], dict[str, Any], tuple[str, ...]]:
    """``(function, arrays, hyper-parameters, traced names)``, the same in every process."""
    name, extra, traced = _SPECIAL.get(key, (key, {}, ()))
    seed = zlib.crc32(key.encode())
    cfg = Config(x64=False, batch=16, id_dtype="int32", pattern="sparse", float_dtype="float32",
                 method="auto", seed=seed)
    if name in ("challenger_rewards", "cluster_sizes"):
        cfg = Config(**{**cfg.__dict__, "pattern": "dense"})  # repeated ids across processes
    arrays, hypers = BUILDERS[name](np.random.default_rng(seed), cfg)
    hypers.update(extra)
    if name == "challenger_rewards":  # clusters repeated in both halves of the batch
        arrays["clusters"] = np.arange(16, dtype=np.int32) % 5
        hypers["num_clusters"] = None if "traced" in key else 5
    if name == "group_advantages" and "batch" not in key:
        hypers["scale"] = "group"
    arrays = {k: v for k, v in arrays.items() if v is not None}
    if name in ("hint_delta", "masked_mean"):  # a time axis of at least one token
        rng = np.random.default_rng(seed)
        for k, v in list(arrays.items()):
            if v.shape[-1] == 0:
                arrays[k] = (rng.random((16, 3)) < 0.5 if v.dtype == bool
                             else -rng.random((16, 3)).astype(v.dtype))
    return name, arrays, hypers, traced
