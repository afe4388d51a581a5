"""The contract table: one entry per public function of zero_jax / zero_torch.

An :class:`Arg` is an array argument: its kind (``"float"``, ``"int"``, ``"bool"``,
``"real"`` for int-or-float), its shape as symbols (``("B", "K")``; shared
symbols must agree between arguments; ``None`` means any rank >= 1 broadcastable
with the others), whether every axis must be non-empty, and a value rule checked
on the data (``"unit"``: in [0, 1]; ``"finite"``; ``"nonneg"``; ``"ids"``: in
``[0, bound)`` where ``bound`` names a hyper-parameter) that applies everywhere or
only where a bool argument (``where``) is True.

A :class:`Hyper` is a hyper-parameter: ``"real"`` (a Python / NumPy / 0-d array
number, traceable unless ``static``), ``"count"`` (a static int >= 1, which may
be optional), ``"int"`` (a static int >= ``low``), ``"choice"`` (one of
``choices``).  ``lo`` / ``hi`` bound real values; ``expected`` is the phrase of
the error message.

The table is read by both twins' validators, by the tests (which derive every
list of functions from it) and by the docs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from zero_contracts.constants import SCALES, SINGLETONS, VOTE_METHODS

__all__ = ["CONTRACTS", "PAPERS", "Arg", "Contract", "Hyper", "Paper", "public_names"]


@dataclass(frozen=True)
class Paper:
    """A paper a reward comes from."""

    key: str
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
        "R-Zero: Self-Evolving Reasoning LLM from Zero Data",
        "Chengsong Huang et al.",
        2025,
        "2508.05004",
    ),
    "g_zero": Paper(
        "g_zero",
        "G-Zero: Self-Play for Open-Ended Generation from Zero Data",
        "Chengsong Huang et al.",
        2026,
        "2605.09959",
    ),
    "mm_zero": Paper(
        "mm_zero",
        "MM-Zero: Self-Evolving Multi-Model Vision Language Models From Zero Data",
        "Zongxia Li et al.",
        2026,
        "2603.09206",
    ),
    "grpo": Paper(
        "grpo",
        "DeepSeekMath: Pushing the Limits of Mathematical Reasoning in Open Language Models",
        "Zhihong Shao et al.",
        2024,
        "2402.03300",
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
    static: bool = True
    lo: float | None = None
    hi: float | None = None
    expected: str = ""
    choices: tuple[str, ...] = ()
    optional: bool = False  # a count that may be None


@dataclass(frozen=True)
class Contract:
    """Everything about one public function except its math."""

    name: str
    module: str  # r_zero | g_zero | mm_zero | advantages | primitives
    paper: str
    where_in_paper: str
    equation: str
    args: tuple[Arg, ...]
    hypers: tuple[Hyper, ...] = ()
    output: str = ""  # dtype rule, see OUTPUT_RULES
    detached: bool = True
    differentiable_in: tuple[str, ...] = ()
    summary: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def arg(self, name: str) -> Arg:
        return next(a for a in self.args if a.name == name)

    def hyper(self, name: str) -> Hyper:
        return next(h for h in self.hypers if h.name == name)

    @property
    def parameters(self) -> tuple[str, ...]:
        """Parameter names in signature order."""
        return tuple(a.name for a in self.args) + tuple(h.name for h in self.hypers)


#: Output dtype rules (``Contract.output``):
#:   ``same:X``     -- the dtype of argument X;
#:   ``promote:X,Y`` -- the promoted dtype of float arguments X and Y;
#:   ``float``      -- float64 (JAX: float32 with x64 off);
#:   ``labels``     -- (int64 labels, float64 shares) (JAX: int32 / float32 with x64 off);
#:   ``vote``       -- (labels in the dtype of answers, int counts);
#:   ``bool``       -- bool;
#:   ``count``      -- integer counts (JAX int32, torch int64).
OUTPUT_RULES = ("same", "promote", "float", "labels", "vote", "bool", "count")

_B = ("B",)
_BK = ("B", "K")
_BT = ("B", "T")
_GN = ("G", "N")

_P = Arg("consistency", "float", _B, value="unit", nonempty=_B)
_ANSWERS = Arg("answers", "int", _BK, value="ids", bound="num_answers", nonempty=_BK)
_NUM_ANSWERS = Hyper("num_answers", "count")
_METHOD = Hyper("method", "choice", "auto", keyword_only=True, choices=VOTE_METHODS)

_CONTRACT_LIST = [
    Contract(
        name="uncertainty_reward",
        module="r_zero",
        paper="r_zero",
        where_in_paper="Section 2.2, uncertainty reward",
        equation="u_i = 1 - 2 |p_i - 1/2|",
        args=(_P,),
        output="same:consistency",
        summary="Triangular uncertainty of a self-consistency score.",
    ),
    Contract(
        name="challenger_rewards",
        module="r_zero",
        paper="r_zero",
        where_in_paper="Section 2.2, uncertainty, repetition penalty and format gate",
        equation="r_i = v_i max(0, 1 - 2|p_i - 1/2| - strength |C_i| / B)",
        args=(
            _P,
            Arg("clusters", "int", _B, value="ids", bound="num_clusters"),
            Arg("valid", "bool", _B),
        ),
        hypers=(
            Hyper("strength", "real", 1.0, static=False, lo=0.0, expected="a finite number >= 0"),
            Hyper("num_clusters", "count", None, keyword_only=True, optional=True),
        ),
        output="same:consistency",
        summary="Uncertainty minus a repetition penalty, gated by the format flag.",
    ),
    Contract(
        name="consensus",
        module="r_zero",
        paper="r_zero",
        where_in_paper="Section 2.3, majority-vote pseudo-labels",
        equation="y_i = argmax_c n_ic (smallest id on ties), p_i = max_c n_ic / K",
        args=(_ANSWERS,),
        hypers=(_NUM_ANSWERS, _METHOD),
        output="labels",
        summary="Majority-vote pseudo-label and self-consistency of each question.",
    ),
    Contract(
        name="curriculum_mask",
        module="r_zero",
        paper="r_zero",
        where_in_paper="Section 2.4, informative band",
        equation="keep_i = low <= p_i <= high",
        args=(_P,),
        hypers=(
            Hyper("low", "real", 0.25, static=False, lo=0.0, hi=1.0, expected="in [0, 1]"),
            Hyper("high", "real", 0.75, static=False, lo=0.0, hi=1.0, expected="in [0, 1]"),
        ),
        output="bool",
        summary="Keep questions whose vote share lies in the band (both edges kept).",
        extra={"ordered": ("low", "high")},
    ),
    Contract(
        name="pseudo_rewards",
        module="r_zero",
        paper="r_zero",
        where_in_paper="Section 2.3, solver reward against frozen pseudo-labels",
        equation="r_ij = 1[a_ij = y_i]",
        args=(
            Arg("answers", "int", _BK, nonempty=_BK),
            Arg("labels", "int", _B),
        ),
        output="float",
        summary="Agreement of fresh answers with frozen pseudo-labels.",
    ),
    Contract(
        name="hint_delta",
        module="g_zero",
        paper="g_zero",
        where_in_paper="Section 3.1, Eq. 3 (Hint-delta)",
        equation="delta_i = sum_t m_it (log p_it - log p^h_it) / max(1, sum_t m_it)",
        args=(
            Arg("base_logp", "float", _BT, value="finite", nonempty=("B",)),
            Arg("hinted_logp", "float", _BT, value="finite"),
            Arg("mask", "bool", _BT),
        ),
        output="promote:base_logp,hinted_logp",
        detached=False,
        differentiable_in=("base_logp", "hinted_logp"),
        summary="Mean per-token log-probability shift of a response when a hint is added.",
    ),
    Contract(
        name="proposer_rewards",
        module="g_zero",
        paper="g_zero",
        where_in_paper="Section 3.2, Eq. 5 (proposer reward)",
        equation="r_i = delta_i - 0.03 max(L_i - 200, 0) / 100 - s_i if valid, else -1 - s_i",
        args=(
            Arg("delta", "float", _B, value="finite", where="valid", nonempty=_B),
            Arg("hint_lengths", "int", _B, value="nonneg", where="valid"),
            Arg("cluster_share", "float", _B, value="unit"),
            Arg("valid", "bool", _B),
        ),
        output="promote:delta,cluster_share",
        summary="Hint-delta minus length and repetition penalties.",
    ),
    Contract(
        name="coder_rewards",
        module="mm_zero",
        paper="mm_zero",
        where_in_paper="Section 2.5, Eqs. 7 and 11-12 (execution and visual feedback)",
        equation="r_i = 1_e [1 + s_i + min(c_i, 1 - c_i)] - 0.1 1_not_e - 0.05 1_syntax",
        args=(
            Arg("executed", "bool", _B, nonempty=_B),
            Arg("easy_accuracy", "float", _B, value="unit", where="executed"),
            Arg("consistency", "float", _B, value="unit", where="executed"),
            Arg("syntax_error", "bool", _B),
        ),
        output="promote:easy_accuracy,consistency",
        summary="Execution and visual feedback minus error penalties.",
    ),
    Contract(
        name="solver_rewards",
        module="mm_zero",
        paper="mm_zero",
        where_in_paper="Section 2.6, Eqs. 13-14 (silver-answer reward)",
        equation="r_ij = alpha 1[a_ij = y_i] + (1 - alpha) v_ij",
        args=(_ANSWERS, Arg("format_valid", "bool", _BK)),
        hypers=(
            _NUM_ANSWERS,
            Hyper("alpha", "real", 0.9, static=False, lo=0.0, hi=1.0, expected="in [0, 1]"),
            _METHOD,
        ),
        output="float",
        summary="Agreement with the silver majority plus an additive format bonus.",
    ),
    Contract(
        name="group_advantages",
        module="advantages",
        paper="grpo",
        where_in_paper="Section 4.1.2, outcome supervision (group-normalised advantages)",
        equation="A_gi = (r_gi - mean_g) / (std + eps), or r_gi - mean_g",
        args=(
            Arg("rewards", "float", _GN, value="finite", where="mask", nonempty=_GN),
            Arg("mask", "bool", _GN, optional=True),
        ),
        hypers=(
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
        ),
        output="same:rewards",
        summary="GRPO advantages of groups of rewards, never NaN.",
    ),
    Contract(
        name="majority_vote",
        module="primitives",
        paper="r_zero",
        where_in_paper="Section 2.3 (the vote behind consensus and solver rewards)",
        equation="y_i = argmax_c n_ic (smallest id on ties), n_i = max_c n_ic",
        args=(_ANSWERS,),
        hypers=(
            Hyper("num_answers", "count"),
            Hyper("method", "choice", "auto", choices=VOTE_METHODS),
        ),
        output="vote",
        summary="Majority id of each row and its vote count.",
    ),
    Contract(
        name="cluster_sizes",
        module="primitives",
        paper="r_zero",
        where_in_paper="Section 2.2 (|C_i| of the repetition penalty)",
        equation="|C_i| = #{j : c_j = c_i}",
        args=(Arg("ids", "int", _B, value="ids", bound="num_clusters", nonempty=_B),),
        hypers=(Hyper("num_clusters", "count", None, optional=True),),
        output="count",
        summary="How many entries of the batch share each entry's id.",
    ),
    Contract(
        name="masked_mean",
        module="primitives",
        paper="g_zero",
        where_in_paper="Section 3.1 (the token average of Hint-delta)",
        equation="mean_i = sum_t m_it x_it / max(1, sum_t m_it)",
        args=(Arg("values", "real", None), Arg("mask", "bool", None)),
        output="same:values",
        detached=False,
        differentiable_in=("values",),
        summary="Mean over the last axis of the kept entries; 0 for empty rows.",
    ),
]

#: The contract of every public function, by name, in documentation order.
CONTRACTS: dict[str, Contract] = {c.name: c for c in _CONTRACT_LIST}


def public_names() -> tuple[str, ...]:
    """Every function name the twins must export (the tests derive their lists here)."""
    return tuple(CONTRACTS)
