"""zero_torch: the PyTorch reference twin of zero_jax.

Plain torch ops mirroring the published reward APIs of R-Zero, G-Zero and MM-Zero and
the label-free RL toolkit around them (RLOO and multi-reward advantages, Intuitor's
self-certainty, token entropy, pass@k, TTRL's vote diagnostics, DAPO's overlong penalty
and dynamic sampling, Absolute Zero's learnability), with input validation
(``TypeError`` / ``ValueError`` naming the argument).  Outputs stay on the input device,
detached outputs have ``requires_grad=False``, and no input is modified.  Imports
without JAX.
"""

from zero_contracts import BAND_PRESETS
from zero_contracts import __version__ as __version__
from zero_torch.advantages import (
    ADVANTAGE_PRESETS,
    group_advantages,
    multi_reward_advantages,
)
from zero_torch.azr import learnability_reward, learnability_reward_published
from zero_torch.confidence import self_certainty, token_entropy
from zero_torch.controls import format_rewards, random_rewards, wrong_label_rewards
from zero_torch.dapo import informative_groups, overlong_penalty
from zero_torch.empo import semantic_cluster_rewards, semantic_entropy_filter
from zero_torch.g_zero import hint_delta, proposer_rewards
from zero_torch.metrics import VoteMetrics, pass_at_k, vote_metrics
from zero_torch.mm_zero import coder_rewards, solver_rewards, solver_rewards_frozen
from zero_torch.primitives import cluster_sizes, majority_vote, masked_mean
from zero_torch.r_zero import (
    challenger_rewards,
    challenger_rewards_published,
    consensus,
    curriculum_mask,
    pseudo_rewards,
    uncertainty_reward,
)
from zero_torch.roles import role_baseline_advantages
from zero_torch.urlvr import collapse_step, point_biserial

__all__ = [
    "ADVANTAGE_PRESETS",
    "VoteMetrics",
    "challenger_rewards",
    "cluster_sizes",
    "coder_rewards",
    "consensus",
    "curriculum_mask",
    "group_advantages",
    "hint_delta",
    "informative_groups",
    "learnability_reward",
    "majority_vote",
    "masked_mean",
    "multi_reward_advantages",
    "overlong_penalty",
    "pass_at_k",
    "proposer_rewards",
    "pseudo_rewards",
    "self_certainty",
    "solver_rewards",
    "token_entropy",
    "uncertainty_reward",
    "vote_metrics",
    "BAND_PRESETS",
    "challenger_rewards_published",
    "learnability_reward_published",
    "role_baseline_advantages",
    "solver_rewards_frozen",
    "semantic_cluster_rewards",
    "semantic_entropy_filter",
    "random_rewards",
    "format_rewards",
    "wrong_label_rewards",
    "point_biserial",
    "collapse_step",
]
