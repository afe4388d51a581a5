"""The contract table: one entry per public function of zero_jax / zero_torch.

An :class:`Arg` is an array argument: its kind (``"float"``, ``"int"``, ``"bool"``,
``"real"`` for int-or-float), its shape as symbols (``("B", "K")``; shared
symbols must agree between arguments; ``None`` means any rank >= 1 broadcastable
with the others), whether every axis must be non-empty, and a value rule checked
on the data (``"unit"``: in [0, 1]; ``"finite"``; ``"nonneg"``; ``"ids"``: in
``[0, bound)`` where ``bound`` names a hyper-parameter) that applies everywhere or
only where a bool argument (``where``) is True.

A :class:`Hyper` is a hyper-parameter: ``"real"`` (a Python / NumPy / 0-d array
number, traceable unless ``static=True``), ``"count"`` (a static int >= 1, which may
be optional), ``"int"`` (a static int >= ``low``), ``"choice"`` (one of
``choices``).  ``lo`` / ``hi`` bound real values (``hi`` also bounds a count);
``expected`` is the phrase of the error message (for a real, by default
``"in [lo, hi]"`` / ``"a finite number >= lo"`` from its bounds).  An :class:`Order` constrains
two real hyper-parameters (``low <= high``).

**Data rules and invalid data.**  zero_torch, and zero_jax under
``zero_jax.checked``, raise ``ValueError`` when data break a value rule or a traced
hyper-parameter leaves its range.  The plain zero_jax path cannot raise on data, so
it poisons what the invalid value touches: every output row that reads an invalid
entry is NaN (float outputs) or -1 (integer outputs); a bool output keeps no such
entry (False); rows whose own inputs are valid come out exactly as if the invalid
ids matched no valid id.  A traced hyper-parameter out of range poisons the whole
output.

The table is read by both twins' validators, by the tests (which derive every
list of functions from it) and by the docs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from zero_contracts.constants import (
    AGGREGATIONS,
    BASELINES,
    MAX_TABLE,
    SCALES,
    SINGLETONS,
    VOTE_METHODS,
)

__all__ = [
    "CONTRACTS",
    "OUTPUT_RULES",
    "PAPERS",
    "Arg",
    "Contract",
    "Hyper",
    "Order",
    "Paper",
    "public_names",
]


@dataclass(frozen=True)
class Paper:
    """A paper a reward comes from."""

    key: str
    short: str  # the name used in tables ("R-Zero")
    title: str
    authors: str
    year: int
    arxiv: str

    @property
    def url(self) -> str:
        return f"https://arxiv.org/abs/{self.arxiv}"


PAPERS: dict[str, Paper] = {
    "r_zero": Paper(
        "r_zero",
        "R-Zero",
        "R-Zero: Self-Evolving Reasoning LLM from Zero Data",
        "Chengsong Huang et al.",
        2025,
        "2508.05004",
    ),
    "g_zero": Paper(
        "g_zero",
        "G-Zero",
        "G-Zero: Self-Play for Open-Ended Generation from Zero Data",
        "Chengsong Huang et al.",
        2026,
        "2605.09959",
    ),
    "mm_zero": Paper(
        "mm_zero",
        "MM-Zero",
        "MM-Zero: Self-Evolving Multi-Model Vision Language Models From Zero Data",
        "Zongxia Li et al.",
        2026,
        "2603.09206",
    ),
    "rloo": Paper(
        "rloo",
        "RLOO",
        "Back to Basics: Revisiting REINFORCE Style Optimization for Learning from Human "
        "Feedback in LLMs",
        "Arash Ahmadian et al.",
        2024,
        "2402.14740",
    ),
    "gdpo": Paper(
        "gdpo",
        "GDPO",
        "GDPO: Group reward-Decoupled Normalization Policy Optimization for Multi-reward RL "
        "Optimization",
        "Shih-Yang Liu et al.",
        2026,
        "2601.05242",
    ),
    "intuitor": Paper(
        "intuitor",
        "Intuitor",
        "Learning to Reason without External Rewards",
        "Xuandong Zhao et al.",
        2025,
        "2505.19590",
    ),
    "em": Paper(
        "em",
        "EM-RL",
        "The Unreasonable Effectiveness of Entropy Minimization in LLM Reasoning",
        "Shivam Agarwal et al.",
        2025,
        "2505.15134",
    ),
    "ttrl": Paper(
        "ttrl",
        "TTRL",
        "TTRL: Test-Time Reinforcement Learning",
        "Yuxin Zuo et al.",
        2025,
        "2504.16084",
    ),
    "codex": Paper(
        "codex",
        "Codex",
        "Evaluating Large Language Models Trained on Code",
        "Mark Chen et al.",
        2021,
        "2107.03374",
    ),
    "dapo": Paper(
        "dapo",
        "DAPO",
        "DAPO: An Open-Source LLM Reinforcement Learning System at Scale",
        "Qiying Yu et al.",
        2025,
        "2503.14476",
    ),
    "azr": Paper(
        "azr",
        "AZR",
        "Absolute Zero: Reinforced Self-play Reasoning with Zero Data",
        "Andrew Zhao et al.",
        2025,
        "2505.03335",
    ),
    "spiral": Paper(
        "spiral",
        "SPIRAL",
        "SPIRAL: Self-Play on Zero-Sum Games Incentivizes Reasoning via Multi-Agent Multi-Turn "
        "Reinforcement Learning",
        "Bo Liu et al.",
        2025,
        "2506.24119",
    ),
    "grpo": Paper(
        "grpo",
        "GRPO",
        "DeepSeekMath: Pushing the Limits of Mathematical Reasoning in Open Language Models",
        "Zhihong Shao et al.",
        2024,
        "2402.03300",
    ),
    "empo": Paper(
        "empo",
        "EMPO",
        "Right Question is Already Half the Answer: Fully Unsupervised LLM Reasoning "
        "Incentivization",
        "Qingyang Zhang et al.",
        2025,
        "2504.05812",
    ),
    "spurious": Paper(
        "spurious",
        "Spurious Rewards",
        "Spurious Rewards: Rethinking Training Signals in RLVR",
        "Rulin Shao et al.",
        2025,
        "2506.10947",
    ),
    "urlvr": Paper(
        "urlvr",
        "URLVR",
        "How Far Can Unsupervised RLVR Scale LLM Training?",
        "Bingxiang He et al.",
        2026,
        "2603.08660",
    ),
}


@dataclass(frozen=True)
class Arg:
    """An array argument."""

    name: str
    kind: str  # "float" | "int" | "bool" | "real"
    shape: tuple[str, ...] | None
    value: str | None = None  # "unit" | "finite" | "nonneg" | "ids"
    where: str | None = None  # the bool argument that gates the value rule
    bound: str | None = None  # for value="ids": the hyper-parameter bounding the ids
    nonempty: tuple[str, ...] = ()  # shape symbols that must be >= 1
    optional: bool = False

    @property
    def shape_text(self) -> str:
        return "[...]" if self.shape is None else "[" + ", ".join(self.shape) + "]"


@dataclass(frozen=True)
class Hyper:
    """A hyper-parameter."""

    name: str
    kind: str  # "real" | "count" | "int" | "choice"
    default: Any = None
    keyword_only: bool = False
    static: bool | None = None  # None: traceable if "real", else static
    lo: float | None = None
    hi: float | None = None
    expected: str = ""  # "": derived from lo / hi for a "real"
    choices: tuple[str, ...] = ()
    optional: bool = False  # a count that may be None

    def __post_init__(self) -> None:
        if self.static is None:
            object.__setattr__(self, "static", self.kind != "real")
        if not self.expected and self.kind == "real":
            lo, hi = self.lo, self.hi
            phrase = (
                f"in [{lo:g}, {hi:g}]" if lo is not None and hi is not None
                else f"a finite number >= {lo:g}" if lo is not None
                else f"a finite number <= {hi:g}" if hi is not None
                else "a finite number"
            )
            object.__setattr__(self, "expected", phrase)

    @property
    def required(self) -> bool:
        """No default: the caller must give it."""
        return self.default is None and not self.optional


@dataclass(frozen=True)
class Order:
    """A constraint between two real hyper-parameters: ``low <= high``."""

    low: str
    high: str


@dataclass(frozen=True)
class Contract:
    """Everything about one public function except its math.

    ``summary`` is the first line of both twins' docstrings, ``equation`` appears in
    them verbatim and ``where_in_paper`` (``"§2.2, uncertainty reward"``) cites the
    paper; the README's function table is rendered from these fields
    (:mod:`zero_contracts.docs`), and the tests hold the docstrings and the table to
    them.  ``returns`` is the output's shape, ``output`` its dtype rule (see
    ``OUTPUT_RULES``); ``detached`` outputs carry no gradient, otherwise the output
    is differentiable in the float arguments ``differentiable_in``.
    """

    name: str
    module: str  # the module of both twins that defines it (r_zero, dapo, ...)
    paper: str
    where_in_paper: str
    equation: str
    summary: str
    args: tuple[Arg, ...]
    hypers: tuple[Hyper, ...] = ()
    returns: str = "[B]"
    output: str = ""  # dtype rule, see OUTPUT_RULES
    detached: bool = True
    differentiable_in: tuple[str, ...] = ()
    constraints: tuple[Order, ...] = ()

    def arg(self, name: str) -> Arg:
        return next(a for a in self.args if a.name == name)

    def hyper(self, name: str) -> Hyper:
        return next(h for h in self.hypers if h.name == name)

    @property
    def parameters(self) -> tuple[str, ...]:
        """Parameter names in signature order."""
        return tuple(a.name for a in self.args) + tuple(h.name for h in self.hypers)


#: Output dtype rules (``Contract.output``), with the text the docs show for each:
OUTPUT_RULES: dict[str, str] = {
    "same": "the dtype of ``{0}``",
    "mean": "the dtype of float ``{0}``; float64 for integers (float32 in JAX with x64 off)",
    "promote": "the promoted dtype of ``{0}`` and ``{1}``",
    "float": "float64 (float32 in JAX with x64 off)",
    "labels": "int64 labels, float64 shares (int32 / float32 in JAX with x64 off)",
    "vote": "labels in the dtype of ``answers``, int counts (int32 in JAX, int64 in torch)",
    "bool": "bool",
    "count": "int counts (int32 in JAX, int64 in torch)",
    "metrics": "float64 scalars (float32 in JAX with x64 off)",
    "carry": "advantages in the promoted dtype of ``{0}`` and ``{1}``, new baselines in the "
    "dtype of ``{1}``",
}

_B = ("B",)
_BK = ("B", "K")
_BT = ("B", "T")
_GN = ("G", "N")
_BTV = ("B", "T", "V")
_GNR = ("G", "N", "R")

_P = Arg("consistency", "float", _B, value="unit", nonempty=_B)
_ANSWERS = Arg("answers", "int", _BK, value="ids", bound="num_answers", nonempty=_BK)
_NUM_ANSWERS = Hyper("num_answers", "count")
_METHOD = Hyper("method", "choice", "auto", keyword_only=True, choices=VOTE_METHODS)

_ADVANTAGE_OPTIONS = (
    Hyper("scale", "choice", "group", keyword_only=True, choices=SCALES),
    Hyper("ddof", "int", 1, keyword_only=True, lo=0),
    Hyper(
        "eps",
        "real",
        1e-6,
        keyword_only=True,
        static=False,
        lo=0.0,
        expected="a finite number >= 0",
    ),
    Hyper("singleton", "choice", "zero", keyword_only=True, choices=SINGLETONS),
    Hyper("baseline", "choice", "mean", keyword_only=True, choices=BASELINES),
)
_LOGITS = Arg("logits", "float", _BTV, value="finite", where="mask", nonempty=("B", "V"))
_TOKENS = Arg("mask", "bool", _BT)

_CONTRACT_LIST = [
    Contract(
        name="uncertainty_reward",
        module="r_zero",
        paper="r_zero",
        where_in_paper="§2.2, uncertainty reward",
        equation="u_i = 1 - 2 |p_i - 1/2|",
        summary="Triangular uncertainty of a self-consistency score.",
        args=(_P,),
        output="same:consistency",
    ),
    Contract(
        name="challenger_rewards",
        module="r_zero",
        paper="r_zero",
        where_in_paper="§2.2, uncertainty, repetition penalty and format gate",
        equation="r_i = v_i max(0, 1 - 2 |p_i - 1/2| - strength |C_i| / B)",
        summary="R-Zero challenger reward: uncertainty minus a repetition penalty, format-gated.",
        args=(
            _P,
            Arg("clusters", "int", _B, value="ids", bound="num_clusters"),
            Arg("valid", "bool", _B),
        ),
        hypers=(
            Hyper("strength", "real", 1.0, static=False, lo=0.0, expected="a finite number >= 0"),
            Hyper(
                "num_clusters", "count", None, keyword_only=True, optional=True, hi=MAX_TABLE
            ),
        ),
        output="same:consistency",
    ),
    Contract(
        name="consensus",
        module="r_zero",
        paper="r_zero",
        where_in_paper="§2.3, majority-vote pseudo-labels",
        equation="y_i = argmax_c n_ic (smallest id on ties), p_i = max_c n_ic / K",
        summary="Majority-vote pseudo-label and self-consistency of each question's K answers.",
        args=(_ANSWERS,),
        hypers=(_NUM_ANSWERS, _METHOD),
        returns="([B], [B])",
        output="labels",
    ),
    Contract(
        name="curriculum_mask",
        module="r_zero",
        paper="r_zero",
        where_in_paper="§2.4, informative band",
        equation="keep_i = low <= p_i <= high",
        summary="Informative band: keep the questions whose vote share lies in [low, high].",
        args=(_P,),
        hypers=(
            Hyper("low", "real", 0.25, static=False, lo=0.0, hi=1.0, expected="in [0, 1]"),
            Hyper("high", "real", 0.75, static=False, lo=0.0, hi=1.0, expected="in [0, 1]"),
        ),
        output="bool",
        constraints=(Order("low", "high"),),
    ),
    Contract(
        name="pseudo_rewards",
        module="r_zero",
        paper="r_zero",
        where_in_paper="§2.3, solver reward against frozen pseudo-labels",
        equation="r_ij = 1[a_ij = y_i]",
        summary="Agreement of fresh answers with frozen pseudo-labels.",
        args=(
            Arg("answers", "int", _BK, nonempty=_BK),
            Arg("labels", "int", _B),
        ),
        returns="[B, K]",
        output="float",
    ),
    Contract(
        name="hint_delta",
        module="g_zero",
        paper="g_zero",
        where_in_paper="§3.1, Eq. 3 (Hint-delta)",
        equation="delta_i = sum_t m_it (log p_it - log p^h_it) / max(1, sum_t m_it)",
        summary="Mean per-token log-probability shift of a response when a hint is added.",
        args=(
            Arg("base_logp", "float", _BT, value="finite", where="mask", nonempty=("B",)),
            Arg("hinted_logp", "float", _BT, value="finite", where="mask"),
            Arg("mask", "bool", _BT),
        ),
        output="promote:base_logp,hinted_logp",
        detached=False,
        differentiable_in=("base_logp", "hinted_logp"),
    ),
    Contract(
        name="proposer_rewards",
        module="g_zero",
        paper="g_zero",
        where_in_paper="§3.2, Eq. 5 (proposer reward)",
        equation="r_i = delta_i - 0.03 max(L_i - 200, 0) / 100 - s_i if valid, else -1 - s_i",
        summary="G-Zero proposer reward: hint-delta minus length and repetition penalties.",
        args=(
            Arg("delta", "float", _B, value="finite", where="valid", nonempty=_B),
            Arg("hint_lengths", "int", _B, value="nonneg", where="valid"),
            Arg("cluster_share", "float", _B, value="unit"),
            Arg("valid", "bool", _B),
        ),
        output="promote:delta,cluster_share",
    ),
    Contract(
        name="coder_rewards",
        module="mm_zero",
        paper="mm_zero",
        where_in_paper="§2.5, Eqs. 7 and 11-12 (execution and visual feedback)",
        equation="r_i = 1_e [1 + s_i + min(c_i, 1 - c_i)] - 0.1 1_not_e - 0.05 1_syntax",
        summary="MM-Zero coder reward: execution and visual feedback minus error penalties.",
        args=(
            Arg("executed", "bool", _B, nonempty=_B),
            Arg("easy_accuracy", "float", _B, value="unit", where="executed"),
            Arg("consistency", "float", _B, value="unit", where="executed"),
            Arg("syntax_error", "bool", _B),
        ),
        output="promote:easy_accuracy,consistency",
    ),
    Contract(
        name="solver_rewards",
        module="mm_zero",
        paper="mm_zero",
        where_in_paper="§2.6, Eqs. 13-14 (silver-answer reward)",
        equation="r_ij = alpha 1[a_ij = y_i] + (1 - alpha) v_ij",
        summary="MM-Zero solver reward: agreement with the silver majority plus a format bonus.",
        args=(_ANSWERS, Arg("format_valid", "bool", _BK)),
        hypers=(
            _NUM_ANSWERS,
            Hyper("alpha", "real", 0.9, static=False, lo=0.0, hi=1.0, expected="in [0, 1]"),
            _METHOD,
        ),
        returns="[B, K]",
        output="float",
    ),
    Contract(
        name="group_advantages",
        module="advantages",
        paper="grpo",
        where_in_paper="§4.1.2, outcome supervision (group-normalised advantages)",
        equation="A_gi = (r_gi - b_gi) / (std + eps), or r_gi - b_gi; b = mean_g or "
        "the leave-one-out mean",
        summary="GRPO / RLOO advantages of groups of rewards, never NaN on valid data.",
        args=(
            Arg("rewards", "float", _GN, value="finite", where="mask", nonempty=_GN),
            Arg("mask", "bool", _GN, optional=True),
        ),
        hypers=_ADVANTAGE_OPTIONS,
        returns="[G, N]",
        output="same:rewards",
    ),
    Contract(
        name="multi_reward_advantages",
        module="advantages",
        paper="gdpo",
        where_in_paper="§3, decoupled normalization (TRL's multi_objective_aggregation)",
        equation="sum_then_normalize: A(sum_k w_k r_k); normalize_then_sum: "
        "batchnorm(sum_k w_k A(r_k))",
        summary="Advantages of several rewards per sample, weighted and aggregated.",
        args=(
            Arg("rewards", "float", _GNR, value="finite", where="mask", nonempty=_GNR),
            Arg("weights", "float", ("R",), value="finite", optional=True),
            Arg("mask", "bool", _GNR, optional=True),
        ),
        hypers=(
            Hyper(
                "aggregation",
                "choice",
                "sum_then_normalize",
                keyword_only=True,
                choices=AGGREGATIONS,
            ),
            *_ADVANTAGE_OPTIONS,
        ),
        returns="[G, N]",
        output="same:rewards",
    ),
    Contract(
        name="self_certainty",
        module="confidence",
        paper="intuitor",
        where_in_paper="§3, self-certainty (the published code's logsumexp - mean)",
        equation="sc_i = sum_t m_it (logsumexp_v l_itv - mean_v l_itv) / max(1, sum_t m_it)",
        summary="Intuitor's self-certainty of each response: its mean KL(U || p) + log V.",
        args=(_LOGITS, _TOKENS),
        output="same:logits",
    ),
    Contract(
        name="token_entropy",
        module="confidence",
        paper="em",
        where_in_paper="§3, token-level entropy (the EM-RL / RENT reward)",
        equation="H_i = sum_t m_it (-sum_v p_itv log p_itv) / max(1, sum_t m_it)",
        summary="Mean token entropy of each response under its own logits.",
        args=(_LOGITS, _TOKENS),
        output="same:logits",
    ),
    Contract(
        name="pass_at_k",
        module="metrics",
        paper="codex",
        where_in_paper="§2.1, the unbiased pass@k estimator",
        equation="pass@k_i = 1 - C(n - c_i, k) / C(n, k), c_i = sum_j correct_ij",
        summary="Unbiased pass@k of each question from n samples, c of them correct.",
        args=(Arg("correct", "bool", ("B", "N"), nonempty=("B", "N")),),
        hypers=(Hyper("k", "count"),),
        output="float",
    ),
    Contract(
        name="vote_metrics",
        module="metrics",
        paper="ttrl",
        where_in_paper="§4, the training diagnostics (label and reward accuracy, "
        "majority ratio)",
        equation="label_acc = mean_i 1[y_i = t_i], reward_acc = mean_ij 1[1[a_ij = y_i] = "
        "1[a_ij = t_i]], ratio = mean_i n_i / K, maj@K_s = mean_i 1[y^s_i = t_i]",
        summary="TTRL's diagnostics of majority-vote training against a held-back truth.",
        args=(_ANSWERS, Arg("truth", "int", _B)),
        hypers=(
            _NUM_ANSWERS,
            Hyper("trained", "count", None, keyword_only=True, optional=True),
            _METHOD,
        ),
        returns="4 x []",
        output="metrics",
    ),
    Contract(
        name="overlong_penalty",
        module="dapo",
        paper="dapo",
        where_in_paper="§3.4, Eq. 13 (soft overlong punishment)",
        equation="R_i = 0 if L_i <= L_max - L_cache; (L_max - L_cache - L_i) / L_cache if "
        "<= L_max; -1 beyond",
        summary="DAPO's soft punishment of responses that run into the length limit.",
        args=(Arg("lengths", "int", _B, value="nonneg", nonempty=_B),),
        hypers=(
            Hyper("max_length", "real", static=False, lo=0.0, expected="a finite number >= 0"),
            Hyper("cache", "real", static=False, lo=0.0, expected="a finite number >= 0"),
        ),
        output="float",
        constraints=(Order("cache", "max_length"),),
    ),
    Contract(
        name="informative_groups",
        module="dapo",
        paper="dapo",
        where_in_paper="§3.2, dynamic sampling (verl's filter_groups)",
        equation="keep_g = max_i r_gi > min_i r_gi over the kept entries",
        summary="DAPO's dynamic sampling: the groups whose kept rewards are not all equal.",
        args=(
            Arg("rewards", "float", _GN, value="finite", where="mask", nonempty=_GN),
            Arg("mask", "bool", _GN, optional=True),
        ),
        returns="[G]",
        output="bool",
    ),
    Contract(
        name="learnability_reward",
        module="azr",
        paper="azr",
        where_in_paper="§3.2, Eq. 4 (the proposer's learnability reward)",
        equation="r_i = 0 if s_i in {0, 1}, else 1 - s_i",
        summary="Absolute Zero's learnability reward of a proposed task from its solve rate.",
        args=(Arg("solve_rate", "float", _B, value="unit", nonempty=_B),),
        output="same:solve_rate",
    ),
    Contract(
        name="majority_vote",
        module="primitives",
        paper="r_zero",
        where_in_paper="§2.3, the vote behind consensus and solver rewards",
        equation="y_i = argmax_c n_ic (smallest id on ties), n_i = max_c n_ic",
        summary="Majority answer of each row and its vote count.",
        args=(_ANSWERS,),
        hypers=(
            Hyper("num_answers", "count"),
            Hyper("method", "choice", "auto", choices=VOTE_METHODS),
        ),
        returns="([B], [B])",
        output="vote",
    ),
    Contract(
        name="cluster_sizes",
        module="primitives",
        paper="r_zero",
        where_in_paper="§2.2, |C_i| of the repetition penalty",
        equation="|C_i| = #{j : c_j = c_i}",
        summary="How many entries of the batch share each entry's id.",
        args=(Arg("ids", "int", _B, value="ids", bound="num_clusters", nonempty=_B),),
        hypers=(Hyper("num_clusters", "count", None, optional=True, hi=MAX_TABLE),),
        output="count",
    ),
    Contract(
        name="masked_mean",
        module="primitives",
        paper="g_zero",
        where_in_paper="§3.1, the token average of Hint-delta",
        equation="mean_i = sum_t m_it x_it / max(1, sum_t m_it)",
        summary="Mean over the last axis of the kept entries; 0 for empty rows.",
        args=(Arg("values", "real", None, where="mask"), Arg("mask", "bool", None)),
        returns="[...]",
        output="mean:values",
        detached=False,
        differentiable_in=("values",),
    ),
    Contract(
        name="semantic_cluster_rewards",
        module="empo",
        paper="empo",
        where_in_paper="§3, semantic-cluster reward (the published code's "
        "semantic_entropy_math_reward)",
        equation="r_ij = answered_ij n_i(c_ij) / K, n_i(c) = #{k : c_ik = c}",
        summary="EMPO's reward: each response is paid its semantic cluster's share of the group.",
        args=(
            Arg("clusters", "int", _BK, nonempty=_BK),
            Arg("answered", "bool", _BK),
        ),
        returns="[B, K]",
        output="float",
    ),
    Contract(
        name="semantic_entropy_filter",
        module="empo",
        paper="empo",
        where_in_paper="§3, entropy thresholding (the published code keeps H_i < log K)",
        equation="keep_i = H_i < max_entropy log K, H_i = -sum_c (n_ic / K) log(n_ic / K)",
        summary="EMPO's prompt filter: keep the groups whose semantic entropy is low enough.",
        args=(Arg("clusters", "int", _BK, nonempty=_BK),),
        hypers=(
            Hyper("max_entropy", "real", 1.0, static=False, lo=0.0, hi=1.0, expected="in [0, 1]"),
        ),
        returns="[B]",
        output="bool",
    ),
    Contract(
        name="random_rewards",
        module="controls",
        paper="spurious",
        where_in_paper="§3, random reward (the published code's random_reward_fn)",
        equation="r_i = m_i 1[u_i < rate], u_i ~ U[0, 1) float32 drawn from key",
        summary="Spurious-reward control: a seeded 0/1 coin per response at a given rate.",
        args=(
            Arg("key", "int", ()),
            Arg("mask", "bool", _B, nonempty=_B),
        ),
        hypers=(
            Hyper("rate", "real", 0.5, static=False, lo=0.0, hi=1.0, expected="in [0, 1]"),
        ),
        output="float",
    ),
    Contract(
        name="format_rewards",
        module="controls",
        paper="spurious",
        where_in_paper="§3, format reward (the published code's format_reward_fn)",
        equation="r_i = 1[f_i]",
        summary="Spurious-reward control: 1 for a response whose answer could be extracted.",
        args=(Arg("format_valid", "bool", _B, nonempty=_B),),
        output="float",
    ),
    Contract(
        name="wrong_label_rewards",
        module="controls",
        paper="spurious",
        where_in_paper="§3, incorrect reward (agreement with a wrong majority label)",
        equation="r_ij = 1[a_ij = w_i], w_i = argmax_{c != t_i} n_ic (smallest id on ties)",
        summary="Spurious-reward control: agreement with the group's most voted wrong answer.",
        args=(Arg("answers", "int", _BK, nonempty=_BK), Arg("truth", "int", _B)),
        returns="[B, K]",
        output="float",
    ),
    Contract(
        name="point_biserial",
        module="urlvr",
        paper="urlvr",
        where_in_paper="§4, proxy-truth correlation of an intrinsic reward",
        equation="r_pb = (mean_{t=1} x - mean_{t=0} x) sqrt(n_1 n_0) / (n s_x), "
        "s_x the population std; NaN if x or t is constant",
        summary="Point-biserial correlation of a proxy reward with the true correctness.",
        args=(
            Arg("proxy", "float", _B, value="finite", nonempty=_B),
            Arg("truth", "bool", _B),
        ),
        returns="[]",
        output="float",
    ),
    Contract(
        name="collapse_step",
        module="urlvr",
        paper="urlvr",
        where_in_paper="§5, Model Collapse Step (first step the reward accuracy falls below 1%)",
        equation="step = min{t : v_s < threshold for t <= s < t + patience}, -1 if none",
        summary="The first step of a run whose logged value falls below a threshold, or -1.",
        args=(Arg("values", "float", ("T",)),),
        hypers=(
            Hyper("threshold", "real", 0.01, static=False, expected="a finite number"),
            Hyper("patience", "count", 1, keyword_only=True),
        ),
        returns="[]",
        output="count",
    ),
]

# Issue 39: published-code modes, frozen labels for the MM-Zero solver, role baselines.
_CONTRACT_LIST += [
    Contract(
        name="challenger_rewards_published",
        module="r_zero",
        paper="r_zero",
        where_in_paper="published code: examples/reward_function/caller_penalty.py "
        "(compute_score)",
        equation="r_i = min(p_i, 1 - p_i) - |C_i| / B if v_i, else -1 - |C_i| / B",
        summary="R-Zero challenger reward as its published code trains it: unclipped, "
        "-1 when invalid.",
        args=(
            Arg("consistency", "float", _B, value="unit", where="valid", nonempty=_B),
            Arg("clusters", "int", _B, value="ids", bound="num_clusters"),
            Arg("valid", "bool", _B),
        ),
        hypers=(
            Hyper(
                "num_clusters", "count", None, keyword_only=True, optional=True, hi=MAX_TABLE
            ),
        ),
        output="same:consistency",
    ),
    Contract(
        name="learnability_reward_published",
        module="azr",
        paper="azr",
        where_in_paper="published code: rewards/reward_managers.py (a zero reward becomes "
        "-0.5; a bad format -1; issue #37)",
        equation="r_i = 1 - s_i if v_i and 0 < s_i < 1; -0.5 if v_i and s_i in {0, 1}; "
        "-1 if not v_i",
        summary="Absolute Zero's proposer reward as its published code trains it.",
        args=(
            Arg("solve_rate", "float", _B, value="unit", where="valid", nonempty=_B),
            Arg("valid", "bool", _B),
        ),
        output="same:solve_rate",
    ),
    Contract(
        name="solver_rewards_frozen",
        module="mm_zero",
        paper="mm_zero",
        where_in_paper="§2.6, Eqs. 13-14 (silver-answer reward) with the label frozen",
        equation="r_ij = alpha 1[a_ij = y_i] + (1 - alpha) v_ij, y_i given",
        summary="MM-Zero solver reward against frozen labels plus a format bonus.",
        args=(
            Arg("answers", "int", _BK, nonempty=_BK),
            Arg("format_valid", "bool", _BK),
            Arg("labels", "int", _B),
        ),
        hypers=(
            Hyper("alpha", "real", 0.9, static=False, lo=0.0, hi=1.0, expected="in [0, 1]"),
        ),
        returns="[B, K]",
        output="float",
    ),
    Contract(
        name="role_baseline_advantages",
        module="roles",
        paper="spiral",
        where_in_paper="role-conditioned advantage estimation (RAE; its published "
        "train_spiral.py)",
        equation="A_i = r_i - b_k, then b_k <- decay b_k + (1 - decay) r_i (k = role_i, "
        "in batch order)",
        summary="SPIRAL's role-conditioned advantages: each role's reward minus its moving "
        "baseline.",
        args=(
            Arg("rewards", "float", _B, value="finite", where="mask", nonempty=_B),
            Arg("roles", "int", _B, value="ids", where="mask", bound="num_roles"),
            Arg("baselines", "float", ("R",), value="finite"),
            Arg("mask", "bool", _B, optional=True),
        ),
        hypers=(
            Hyper("num_roles", "count", keyword_only=True),
            Hyper("decay", "real", 0.95, keyword_only=True, static=False, lo=0.0, hi=1.0,
                  expected="in [0, 1]"),
        ),
        returns="([B], [R])",
        output="carry:rewards,baselines",
    ),
]

#: The contract of every public function, by name, in documentation order.
CONTRACTS: dict[str, Contract] = {c.name: c for c in _CONTRACT_LIST}


def public_names() -> tuple[str, ...]:
    """Every function name the twins must export (the tests derive their lists here)."""
    return tuple(CONTRACTS)
