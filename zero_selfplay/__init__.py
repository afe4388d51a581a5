"""R-Zero co-evolution on generated cart arithmetic (needs the ``selfplay`` extra).

A Challenger (a policy over cart templates) and a Solver (a chain model in Flax
NNX) co-evolve with the library's own R-Zero rewards; see ``loop.py`` for the
rounds and ``python -m zero_selfplay --help`` for the command line.
"""

from zero_selfplay.loop import (
    ARMS,
    SMOKE,
    Arm,
    Config,
    Phases,
    compiled_phases,
    run,
    run_seed,
)

__all__ = ["ARMS", "SMOKE", "Arm", "Config", "Phases", "compiled_phases", "run", "run_seed"]
