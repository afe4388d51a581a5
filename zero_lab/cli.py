"""Command line for the Lab: ``zero-lab`` / ``python -m zero_lab``.

Runs every lab (or those named with ``--lab``) on the chosen backend, prints an
aligned table (lab, target action, p0, p_final, gain, pass) followed by one line
per lab on what it teaches, optionally writes JSON, a plot and the explanation page
(``--html``, ``zero_lab.explain``), and exits non-zero when any lab fails.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from zero_lab.records import LABS, get_lab
from zero_lab.result import MIN_GAIN, PASS_PROB, LabResult

__all__ = ["BACKENDS", "RUNNERS", "format_table", "load_runner", "main", "write_plot"]

Runner = Callable[..., LabResult]


def _jax_runner() -> Runner:
    from zero_lab.jax_backend import run

    return run


def _torch_runner() -> Runner:
    from zero_lab.torch_backend import run

    return run


#: Each backend's ``run``, imported on first use (so the torch backend never imports jax).
RUNNERS: Mapping[str, Callable[[], Runner]] = MappingProxyType(
    {"jax": _jax_runner, "torch": _torch_runner}
)
BACKENDS: tuple[str, ...] = tuple(RUNNERS)


def load_runner(backend: str) -> Runner:
    """Import the backend's module and return its ``run``."""
    if backend not in RUNNERS:
        raise ValueError(f"unknown backend {backend!r}; expected one of {', '.join(BACKENDS)}")
    return RUNNERS[backend]()


def format_table(results: Sequence[LabResult]) -> str:
    """The aligned result table followed by one 'what it teaches' line per lab."""
    header = ("lab", "problem", "target action", "p0", "p_final", "gain", "pass")
    rows = []
    for res in results:
        lab = get_lab(res.name)
        rows.append(
            (
                res.name,
                str(lab.problem),
                lab.actions[res.target].label,
                f"{res.p0:.3f}",
                f"{res.p_final:.3f}",
                f"{res.gain:+.3f}",
                "PASS" if res.passed else "FAIL",
            )
        )
    widths = [max(len(r[i]) for r in (header, *rows)) for i in range(len(header))]
    numeric = {1, 3, 4, 5}

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            c.rjust(w) if i in numeric else c.ljust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    out = [line(header), line(["-" * w for w in widths]), *map(line, rows)]
    out.append("")
    out.append(f"pass: target probability ends > {PASS_PROB} and rises by > {MIN_GAIN}")
    out.append("")
    for res in results:
        out.append(f"{res.name}: {get_lab(res.name).answer}")
    return "\n".join(out)


def write_plot(results: Sequence[LabResult], path: str, backend: str) -> None:
    """One figure: each lab's target probability over the steps, and the threshold."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.5), dpi=120)
    for res in results:
        label = f"{res.name} ({get_lab(res.name).actions[res.target].label})"
        ax.plot(range(len(res.target_probs)), res.target_probs, lw=2, label=label)
    ax.axhline(PASS_PROB, color="black", ls="--", lw=1, label=f"pass threshold {PASS_PROB}")
    ax.set_xlabel("gradient step")
    ax.set_ylabel("probability of the target action")
    ax.set_ylim(0.0, 1.0)
    ax.set_xlim(0, max(len(r.target_probs) - 1 for r in results) or 1)
    ax.set_title(f"Lab: target probability under SGD on the exact expected reward ({backend})")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def _parser(default_backend: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="zero-lab",
        description="Train a small categorical policy on each problem's rewards and check "
        "that it learns the target action.",
    )
    p.add_argument(
        "--backend",
        choices=BACKENDS,
        default=default_backend,
        help=f"framework that runs the functions and the optimiser (default: {default_backend})",
    )
    p.add_argument(
        "--lab",
        action="append",
        choices=list(LABS),
        metavar="NAME",
        help=f"run only this lab (repeatable); one of {', '.join(LABS)}",
    )
    p.add_argument("--json", action="store_true", help="print JSON instead of the table")
    p.add_argument("--plot", metavar="FILE.png", help="write the target-probability figure")
    p.add_argument(
        "--html", metavar="PATH", help="write the explanation page (one self-contained file)"
    )
    return p


def main(
    argv: Sequence[str] | None = None,
    *,
    default_backend: str = "jax",
    runner: Runner | None = None,
) -> int:
    """Run the labs; return 0 when every lab passes, 1 otherwise.

    Args:
      argv: command-line arguments (default ``sys.argv[1:]``).
      default_backend: backend used when ``--backend`` is not given.
      runner: ``run`` function to use for ``default_backend`` (for instance a test
        double); otherwise, and for other backends, ``load_runner`` imports it.
    """
    args = _parser(default_backend).parse_args(argv)
    run = runner if runner is not None and args.backend == default_backend else None
    # The extras this command needs, checked before any is imported: one line, no traceback.
    import importlib.util

    needs = {} if run else {"jax": {"optax": "lab"}, "torch": {"torch": "torch"}}[args.backend]
    if args.plot:
        needs = {**needs, "matplotlib": "lab"}
    missing = {m: x for m, x in needs.items() if importlib.util.find_spec(m) is None}
    if missing:
        extras = ",".join(sorted(set(missing.values())))
        pin = "-c constraints.txt " if "torch" in missing.values() else ""  # the CPU build
        raise SystemExit(
            f"zero-lab needs {', '.join(missing)} (the [{extras}] extra{'s' * (',' in extras)}): "
            f'run pip install {pin}".[{extras}]" in the zero-rewards checkout'
        )
    run = run or load_runner(args.backend)
    names = args.lab or list(LABS)
    results = [run(name) for name in names]
    passed = all(r.passed for r in results)
    if args.plot:
        write_plot(results, args.plot, args.backend)
    if args.html:
        from zero_lab.explain import write_html

        write_html(results, args.html, args.backend)
    if args.json:
        payload: dict[str, Any] = {
            "backend": args.backend,
            "pass_prob": PASS_PROB,
            "min_gain": MIN_GAIN,
            "passed": passed,
            "labs": [
                {
                    **r.to_dict(),
                    "problem": get_lab(r.name).problem,
                    "target_action": get_lab(r.name).actions[r.target].label,
                    "teaches": get_lab(r.name).answer,
                }
                for r in results
            ],
        }
        print(json.dumps(payload, indent=2))
    else:
        print(f"zero-lab ({args.backend} backend)\n")
        print(format_table(results))
        if args.plot:
            print(f"\nplot written to {args.plot}")
        if args.html:
            print(f"\nexplanation page written to {args.html}")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
