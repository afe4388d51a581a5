"""zero_stacks: the zero-rewards inside the RL training stacks people use.

One module per stack, each giving the rewards as callable objects in the stacks'
signature ``reward(prompts, completions, **kwargs) -> list[float]``
(``num_generations`` completions per prompt, in contiguous groups), and the stack's
advantage hook:

* :mod:`zero_stacks.tunix` (JAX): rewards computed by :mod:`zero_jax`, and
  ``group_advantages`` registered as a Tunix advantage estimator (GRPO, RLOO);
* :mod:`zero_stacks.trl` (PyTorch): rewards computed by :mod:`zero_torch`, and the
  ``ADVANTAGE_PRESETS`` entries that reproduce ``GRPOTrainer``'s (one or several
  reward functions) and ``RLOOTrainer``'s advantages.

Both modules have the same four rewards, ``SolverReward``, ``ChallengerReward``,
``ProposerReward`` and ``CoderReward``, DAPO's ``OverlongPenalty``, and ``VoteDiagnostics``
(TTRL's vote diagnostics, logged: a reward function returning zeros in TRL, a
``metric_fns`` entry in Tunix).  Their logic is written once, stack-neutral, in
:mod:`zero_stacks.solver`, :mod:`.challenger`, :mod:`.proposer`, :mod:`.coder`,
:mod:`.overlong` and :mod:`.votes`,
over the base class :class:`StackReward` (:mod:`zero_stacks.base`: options, batch
checks, the call); the stack modules only choose the library.  Every number a
reward returns is computed by a public function of :mod:`zero_jax` /
:mod:`zero_torch` / :mod:`zero_text`; zero_stacks writes no reward formula.

Importing a stack module never imports the stack itself: only the Tunix
registration helper needs ``tunix``.  This package is an application of the
library: ``zero_jax``, ``zero_torch`` and ``zero_text`` never import it.
"""

from collections.abc import Callable

from zero_stacks._batch import Batch
from zero_stacks.base import StackReward
from zero_stacks.challenger import ChallengerReward
from zero_stacks.coder import CoderFeedback, CoderReward
from zero_stacks.controls import EmpoReward, FormatReward, RandomReward, WrongLabelReward
from zero_stacks.overlong import OverlongPenalty
from zero_stacks.proposer import ProposerReward
from zero_stacks.roles import RoleAdvantageEstimator, RoleBaselines
from zero_stacks.solver import SolverReward
from zero_stacks.votes import VoteDiagnostics

#: The reward-function type both stacks call.
RewardFn = Callable[..., list[float]]

__all__ = [
    "Batch",
    "ChallengerReward",
    "CoderFeedback",
    "CoderReward",
    "EmpoReward",
    "FormatReward",
    "OverlongPenalty",
    "ProposerReward",
    "RandomReward",
    "RewardFn",
    "RoleAdvantageEstimator",
    "RoleBaselines",
    "SolverReward",
    "StackReward",
    "VoteDiagnostics",
    "WrongLabelReward",
]
