"""zero_jax: jit-compiled JAX rewards of the self-evolving-from-zero-data papers.

R-Zero (challenger uncertainty with a repetition penalty, majority-vote
pseudo-labels, the informative band), G-Zero (hint-delta, proposer reward) and
MM-Zero (coder and solver rewards), the label-free methods around them (Intuitor's
self-certainty, token entropy, TTRL's vote metrics, DAPO's overlong penalty and
dynamic sampling, Absolute Zero's learnability), pass@k, and GRPO / RLOO / GDPO
advantages.  Every function is
pure and works eagerly and inside ``jit``, ``vmap`` and ``grad``.  The library
never changes JAX's configuration: with x64 enabled the outputs have the dtypes of
the published contracts (float64 / int64), otherwise JAX's canonical float32 /
int32.
"""

from zero_contracts import BAND_PRESETS
from zero_contracts import __version__ as __version__
from zero_jax._checks import checked
from zero_jax.advantages import ADVANTAGE_PRESETS, group_advantages, multi_reward_advantages
from zero_jax.azr import learnability_reward, learnability_reward_published
from zero_jax.confidence import self_certainty, token_entropy
from zero_jax.controls import format_rewards, random_rewards, wrong_label_rewards
from zero_jax.dapo import informative_groups, overlong_penalty
from zero_jax.empo import semantic_cluster_rewards, semantic_entropy_filter
from zero_jax.g_zero import hint_delta, proposer_rewards
from zero_jax.metrics import VoteMetrics, pass_at_k, vote_metrics
from zero_jax.mm_zero import coder_rewards, solver_rewards, solver_rewards_frozen
from zero_jax.primitives import cluster_sizes, majority_vote, masked_mean
from zero_jax.r_zero import (
    challenger_rewards,
    challenger_rewards_published,
    consensus,
    curriculum_mask,
    pseudo_rewards,
    uncertainty_reward,
)
from zero_jax.roles import role_baseline_advantages
from zero_jax.urlvr import collapse_step, point_biserial

__all__ = [
    "ADVANTAGE_PRESETS",
    "VoteMetrics",
    "challenger_rewards",
    "checked",
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
