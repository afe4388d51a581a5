"""Where JAX's own CPU runtime is the limit: each case timed in a process with JAX's
defaults and in one with the user-side setting that removes the limit, interleaved.

- ``async_dispatch``: a computation of 1,000 flops or more (XLA's cost analysis; a
  reward over a few hundred values) is handed to XLA's runtime thread and waited for
  (``block_until_ready``); smaller ones run on the calling thread;
  ``jax.config.update("jax_cpu_enable_async_dispatch", False)`` runs every one there
  (worker backend ``jax_sync``).
- ``huge_pages``: a fresh large output is first touched page by page (one page fault per
  4 KiB); ``GLIBC_TUNABLES=glibc.malloc.hugetlb=1`` in the environment makes glibc ask for
  transparent huge pages for its large allocations, which a kernel in THP mode "madvise"
  grants only on request (worker backend ``jax_thp``).

Both are process-wide settings a user makes, not the library's.  ``python -m bench``
runs this after the main grid and stores it as ``runtime_limits`` in latest.json.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bench import cases as C

__all__ = ["LIMITS", "cases", "summarize"]

#: name -> (worker backend with the setting, the setting as a user writes it, what it removes)
LIMITS: dict[str, tuple[str, str, str]] = {
    "async_dispatch": (
        "jax_sync",
        'jax.config.update("jax_cpu_enable_async_dispatch", False)',
        "hand-off of each small computation to XLA's runtime thread",
    ),
    "huge_pages": (
        "jax_thp",
        "GLIBC_TUNABLES=glibc.malloc.hugetlb=1 (environment, before Python starts)",
        "page faults on the first touch of each fresh large output",
    ),
}


def cases(quick: bool) -> dict[str, list[C.Case]]:
    """Small calls for the dispatch limit, large outputs for the page-fault limit."""
    if quick:
        return {
            "async_dispatch": [
                C.Case("uncertainty_reward", 256),
                C.Case("consensus", 256, K=8, n=16),
            ],
            # below glibc's largest mmap threshold (32 MiB) freed outputs are reused
            # without faults anyway: the limit shows at 16M float32 (64 MiB)
            "huge_pages": [C.Case("uncertainty_reward", C.BIG)],
        }
    return {
        "async_dispatch": [
            C.Case("uncertainty_reward", 256),
            C.Case("uncertainty_reward", 4096),
            C.Case("consensus", 256, K=8, n=16),
            C.Case("group_advantages", 4096, K=8),
        ],
        "huge_pages": [
            C.Case("uncertainty_reward", C.BIG),
            C.Case("coder_rewards", C.BIG),
            C.Case("group_advantages", 1048576, K=16),
        ],
    }


def summarize(
    chosen: dict[str, list[C.Case]],
    samples: dict[str, dict[str, list[float]]],
    faults: dict[str, dict[str, list[float]]],
) -> dict[str, Any]:
    """Per limit and case: median (and quartiles) with JAX's defaults and with the
    setting, their ratio, and page faults per call."""
    out: dict[str, Any] = {}
    for name, cs in chosen.items():
        backend, setting, what = LIMITS[name]
        rows = []
        for case in cs:
            row: dict[str, Any] = {"key": case.key}
            for label, b in (("default", "jax"), ("setting", backend)):
                xs = samples.get(case.key, {}).get(b)
                if not xs:
                    continue
                a = np.asarray(xs) * 1e6
                row[label] = {
                    "median_us": float(np.median(a)),
                    "p25_us": float(np.percentile(a, 25)),
                    "p75_us": float(np.percentile(a, 75)),
                    "min_us": float(np.min(a)),
                    "page_faults_per_call": float(np.median(faults[case.key][b])),
                }
            if "default" in row and "setting" in row:
                row["default_over_setting"] = (
                    row["default"]["median_us"] / row["setting"]["median_us"]
                )
            rows.append(row)
        out[name] = {"backend": backend, "setting": setting, "removes": what, "rows": rows}
    return out
