"""zero_torch: the PyTorch reference twin of zero_jax.

Plain torch ops mirroring the published reward APIs of R-Zero, G-Zero and MM-Zero,
with input validation (``TypeError`` / ``ValueError`` naming the argument).
Outputs stay on the input device, detached outputs have ``requires_grad=False``,
and no input is modified.  Imports without JAX.
"""

from zero_contracts import __version__ as __version__
from zero_torch.advantages import ADVANTAGE_PRESETS, group_advantages
from zero_torch.g_zero import hint_delta, proposer_rewards
from zero_torch.mm_zero import coder_rewards, solver_rewards
from zero_torch.primitives import cluster_sizes, majority_vote, masked_mean
from zero_torch.r_zero import (
    challenger_rewards,
    consensus,
    curriculum_mask,
    pseudo_rewards,
    uncertainty_reward,
)

__all__ = [
    "ADVANTAGE_PRESETS",
    "challenger_rewards",
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
