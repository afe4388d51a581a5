"""zero_contracts: what every public function of zero_jax and zero_torch promises.

Framework-neutral data, imported by both twins and by the tests: each function's
arguments (kind, shape symbols, value rule and where it applies), hyper-parameters
(range, static or traceable, keyword-only), output dtype rule, whether the output
is detached, its equation and its paper.  The error messages and the shared
constants (voting methods, advantage scalings and presets) exist here once.

The math is *not* here: each twin writes it by hand, so that parity between them
means something.  Imports nothing but the standard library.
"""

from zero_contracts import messages
from zero_contracts._version import __version__ as __version__
from zero_contracts.constants import (
    ADVANTAGE_PRESETS,
    AGGREGATIONS,
    BAND_PRESETS,
    BASELINES,
    MAX_TABLE,
    SCALES,
    SINGLETONS,
    VOTE_METHODS,
    VoteMetrics,
    choose_vote_method,
    complement_weight,
    vote_alphabet,
)
from zero_contracts.spec import (
    CONTRACTS,
    OUTPUT_RULES,
    PAPERS,
    Arg,
    Contract,
    Hyper,
    Order,
    Paper,
    public_names,
)

__all__ = [
    "ADVANTAGE_PRESETS",
    "AGGREGATIONS",
    "BAND_PRESETS",
    "BASELINES",
    "CONTRACTS",
    "MAX_TABLE",
    "OUTPUT_RULES",
    "PAPERS",
    "SCALES",
    "SINGLETONS",
    "VOTE_METHODS",
    "Arg",
    "Contract",
    "Hyper",
    "Order",
    "Paper",
    "VoteMetrics",
    "choose_vote_method",
    "complement_weight",
    "messages",
    "public_names",
    "vote_alphabet",
]
