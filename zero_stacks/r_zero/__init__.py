"""R-Zero end to end: a Challenger and a Solver co-evolving inside TRL or Tunix.

The loop is written once (:mod:`zero_stacks.r_zero.loop`); a stack supplies each role's
sampling and GRPO (:class:`zero_stacks.r_zero.trl.TrlRole` over TRL's ``GRPOTrainer``,
:class:`zero_stacks.r_zero.tunix.TunixRole` over Tunix's ``GRPOLearner``).  The domain
is cart arithmetic written as text (:mod:`zero_stacks.r_zero.carts`: the format gate, the
checker used only for evaluation and the ``truth`` control, frozen evaluation carts).

    from zero_stacks.r_zero import Settings, run_arms
    from zero_stacks.r_zero.trl import TrlRole

    challenger = TrlRole(challenger_model, tokenizer, max_tokens=20)
    solver = TrlRole(solver_model, tokenizer, max_tokens=3)
    record = run_arms(challenger, solver, Settings(iterations=3), seed=0,
                      arms=["coevolve", "fixed_challenger"])

``examples/r_zero/r_zero.py`` builds small GPT-2-shaped models, warm-starts them and runs
the pre-registered experiment (``--help``).  Importing this package imports neither stack.
"""

from zero_stacks.r_zero.loop import ARM_HELP, ARMS, Role, Settings, iterate, run_arms

__all__ = ["ARMS", "ARM_HELP", "Role", "Settings", "iterate", "run_arms"]
