"""zero_jax: jit-compiled JAX rewards of the self-evolving-from-zero-data papers.

R-Zero (challenger uncertainty with a repetition penalty, majority-vote
pseudo-labels, the informative band), G-Zero (hint-delta, proposer reward) and
MM-Zero (coder and solver rewards), plus GRPO group advantages.  Every function is
pure and works eagerly and inside ``jit``, ``vmap`` and ``grad``.  The library
never changes JAX's configuration: with x64 enabled the outputs have the dtypes of
the published contracts (float64 / int64), otherwise JAX's canonical float32 /
int32.
"""

from zero_contracts import __version__ as __version__
from zero_jax._checks import checked
from zero_jax.advantages import ADVANTAGE_PRESETS, group_advantages
from zero_jax.g_zero import hint_delta, proposer_rewards
from zero_jax.mm_zero import coder_rewards, solver_rewards
from zero_jax.primitives import cluster_sizes, majority_vote, masked_mean
from zero_jax.r_zero import (
    challenger_rewards,
    consensus,
    curriculum_mask,
    pseudo_rewards,
    uncertainty_reward,
)

__all__ = [
    "ADVANTAGE_PRESETS",
    "challenger_rewards",
    "checked",
    "cluster_sizes",
    "coder_rewards",
    "consensus",
    "curriculum_mask",
    "group_advantages",
    "hint_delta",
    "majority_vote",
    "masked_mean",
    "proposer_rewards",
    "pseudo_rewards",
    "solver_rewards",
    "uncertainty_reward",
]
