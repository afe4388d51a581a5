"""The five Labs as plain data: fixed feedback records, the actions a policy picks
from, the target action, and what each lab teaches.

A Lab trains a categorical policy over a handful of actions (candidate questions,
hints, programs, or answering behaviours).  The per-action rewards come from the
problem's reward functions applied to the records below; the backends
(``zero_lab.jax_backend``, ``zero_lab.torch_backend``) turn the records into arrays, call the
functions and run the optimiser.  Nothing here imports jax or torch.

The records are chosen so that the contracts' conventions decide the outcome:
the correct functions favour ``target``, while each mistake listed in ``catches``
favours another action (or creates a tie), so the lab fails under that mistake.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, NamedTuple

__all__ = ["LABS", "Action", "Lab", "get_lab", "padded"]


class Action(NamedTuple):
    """One choice of the Lab policy: a short label for tables and a one-line meaning."""

    label: str
    meaning: str


@dataclass(frozen=True)
class Lab:
    """Definition of one Lab (read-only plain data).

    Attributes:
      name: key in ``LABS``.
      problem: number of the problem text the lab belongs to (107, 108, 109, 113).
      title: short title.
      description: what the policy chooses and how its per-action reward is built.
      functions: the problem's reward functions that lie on the lab's path.
      actions: the policy's actions, in logit order.
      records: fixed feedback records; each maps field names to values and has a
        ``"meaning"`` line.
      params: hyper-parameters passed to the functions (e.g. ``num_answers``).
      target: index into ``actions`` of the action the correct rewards favour.
      question: the problem's further question, in short.
      answer: a one-sentence answer, as the lab illustrates it.
      catches: the mistakes the records are built to expose.
    """

    name: str
    problem: int
    title: str
    description: str
    functions: tuple[str, ...]
    actions: tuple[Action, ...]
    records: tuple[Mapping[str, Any], ...]
    params: Mapping[str, Any]
    target: int
    question: str
    answer: str
    catches: tuple[str, ...]

    @property
    def num_actions(self) -> int:
        return len(self.actions)

    @property
    def target_action(self) -> Action:
        return self.actions[self.target]

    def column(self, field: str) -> list[Any]:
        """The values of ``field`` across all records, in record order."""
        return [rec[field] for rec in self.records]


def _rec(meaning: str, **fields: Any) -> Mapping[str, Any]:
    frozen = {k: tuple(v) if isinstance(v, list) else v for k, v in fields.items()}
    return MappingProxyType({**frozen, "meaning": meaning})


def padded(lab: Lab, field: str, fill: float = 0.0) -> tuple[list[list[Any]], list[list[bool]]]:
    """Right-pad a variable-length per-record field to a ``[B, T]`` table.

    Returns ``(values, mask)`` where ``mask`` is True on the real entries and
    ``T`` is the longest record of ``field``.
    """
    rows = lab.column(field)
    width = max(len(r) for r in rows)
    values = [list(r) + [fill] * (width - len(r)) for r in rows]
    mask = [[True] * len(r) + [False] * (width - len(r)) for r in rows]
    return values, mask


# --------------------------------------------------------------------------- 107
_CHALLENGER_RECORDS = (
    _rec(
        "Q0: every solver sample agrees (p = 1): nothing left to learn, even if "
        "the shared answer is wrong",
        consistency=1.0,
        cluster=40,
        valid=True,
    ),
    _rec(
        "Q1: an even 50/50 split, but its template (cluster 7) appears three times in the batch",
        consistency=0.5,
        cluster=7,
        valid=True,
    ),
    _rec(
        "Q2: an even 50/50 split, well formed, with a template of its own",
        consistency=0.5,
        cluster=13,
        valid=True,
    ),
    _rec(
        "Q3: 6 of 8 samples agree: mostly solved already", consistency=0.75, cluster=21, valid=True
    ),
    _rec(
        "Q4: an even split, but the format check rejects it (no parseable question)",
        consistency=0.5,
        cluster=-3,
        valid=False,
    ),
    _rec(
        "Q5: a malformed rewording of Q1's template: rejected, yet one of its three copies",
        consistency=0.5,
        cluster=7,
        valid=False,
    ),
    _rec(
        "Q6: the hardest question: answers scatter, only 2 of 8 samples agree",
        consistency=0.25,
        cluster=58,
        valid=True,
    ),
    _rec(
        "Q7: another malformed copy of the template shared by Q1 and Q5",
        consistency=0.5,
        cluster=7,
        valid=False,
    ),
)

CHALLENGER = Lab(
    name="challenger",
    problem=107,
    title="R-Zero challenger: uncertainty, repetition, format",
    description=(
        "The challenger picks one of the eight candidate questions of a batch.  Each "
        "question's reward is challenger_rewards over the whole batch, bounded above by "
        "its uncertainty_reward; for correct functions the bound never binds, since the "
        "repetition penalty and the format gate can only lower the uncertainty."
    ),
    functions=("uncertainty_reward", "challenger_rewards"),
    actions=tuple(
        Action(label, rec["meaning"])
        for label, rec in zip(
            (
                "Q0 unanimous",
                "Q1 repeated 50/50",
                "Q2 unique 50/50",
                "Q3 mostly solved",
                "Q4 malformed 50/50",
                "Q5 malformed copy",
                "Q6 hardest",
                "Q7 malformed copy",
            ),
            _CHALLENGER_RECORDS,
            strict=True,
        )
    ),
    records=_CHALLENGER_RECORDS,
    params=MappingProxyType({"strength": 1.0}),
    target=2,
    question="Why is the hardest question not automatically the most useful one?",
    answer=(
        "Usefulness peaks at an even solver split, not at the most failures: the hardest "
        "question (Q6) only scatters answers, a unanimous one (Q0) may be confidently "
        "wrong, and an even split still earns little if its template repeats (Q1) or its "
        "format breaks (Q4)."
    ),
    catches=(
        "no format gate (Q4 ties the target)",
        "clusters counted among valid rows only (Q1 ties the target)",
        "no repetition penalty (Q1 ties the target)",
        "consistency p used instead of 1 - 2|p - 1/2| (Q0 or Q3 wins)",
        "difficulty 1 - p used instead of 1 - 2|p - 1/2| (Q6 wins)",
    ),
)

# --------------------------------------------------------------------------- 108
_PSEUDO_ACTIONS = (
    Action(
        "larger-id ties",
        "follows the frozen labels, except that it settles old-vote "
        "ties on the larger answer (the one voted first)",
    ),
    Action(
        "copies easy labels",
        "echoes the unanimous old answers on the too-easy questions and misses one 3-of-4 label",
    ),
    Action(
        "frozen labels",
        "gives the frozen label on every question inside the band; "
        "on the two unanimous questions it answers differently from the old votes",
    ),
    Action(
        "misses 4-way tie",
        "matches the frozen labels except on the question whose four old votes all differ",
    ),
    Action(
        "runner-up",
        "gives the old runner-up answer on informative questions and the "
        "unanimous answer on the easy ones",
    ),
)

PSEUDO_LABELS = Lab(
    name="pseudo_labels",
    problem=108,
    title="R-Zero pseudo-labels and the informative band",
    description=(
        "The solver picks one of five answering behaviours.  consensus turns four old "
        "votes per question into a frozen label and a consistency, curriculum_mask keeps "
        "the questions inside [0.25, 0.75], and pseudo_rewards scores each behaviour's "
        "fresh answers against the frozen labels; a behaviour's reward is its mean "
        "pseudo-reward over the kept questions."
    ),
    functions=("consensus", "curriculum_mask", "pseudo_rewards"),
    actions=_PSEUDO_ACTIONS,
    records=(
        _rec(
            "old votes tie 2-2 between 1 and 0: label 0 (smallest id), consistency 0.5",
            old_votes=[1, 1, 0, 0],
            fresh=[1, 0, 0, 0, 1],
        ),
        _rec(
            "old votes tie 2-2 between 3 and 2, 3 voted first: label 2, consistency 0.5",
            old_votes=[3, 3, 2, 2],
            fresh=[3, 2, 2, 2, 3],
        ),
        _rec(
            "3 of 4 old votes say 5: label 5, consistency 0.75 (upper edge of the band)",
            old_votes=[5, 5, 5, 1],
            fresh=[5, 5, 5, 5, 1],
        ),
        _rec(
            "3 of 4 old votes say 6: label 6, consistency 0.75 (upper edge of the band)",
            old_votes=[6, 1, 6, 6],
            fresh=[6, 9, 6, 6, 1],
        ),
        _rec(
            "four different old votes: label 1 (smallest id), consistency 0.25 (lower "
            "edge of the band)",
            old_votes=[4, 3, 2, 1],
            fresh=[4, 1, 1, 4, 4],
        ),
        _rec(
            "unanimous old votes for 7: consistency 1, outside the band (too easy, or "
            "confidently wrong)",
            old_votes=[7, 7, 7, 7],
            fresh=[9, 7, 9, 9, 7],
        ),
        _rec(
            "unanimous old votes for 8: consistency 1, outside the band",
            old_votes=[8, 8, 8, 8],
            fresh=[9, 8, 9, 9, 8],
        ),
    ),
    params=MappingProxyType({"num_answers": 10, "low": 0.25, "high": 0.75}),
    target=2,
    question="How could a label that is highly consistent but wrong be caught?",
    answer=(
        "Consistency measures agreement, not truth, so a unanimous label needs an outside "
        "check (a verifier or tool, re-asking under paraphrase, or a reliable behaviour "
        "that keeps disagreeing with it); meanwhile the band keeps such questions out of "
        "training, so the target is never punished for disagreeing with them."
    ),
    catches=(
        "labels refreshed from the fresh answers ('misses 4-way tie' wins)",
        "exclusive band dropping 0.25 and 0.75 (three-way tie at the top)",
        "band [0.3, 0.8] of the pinned upstream revision ('misses 4-way tie' ties)",
        "no band at all ('copies easy labels' wins)",
        "ties broken toward the larger or first-voted id ('larger-id ties' wins)",
    ),
)

# --------------------------------------------------------------------------- 109
_PROPOSER_RECORDS = (
    _rec(
        "H0: a 3200-character hint that all but states the answer: the unassisted "
        "answer's tokens drop about 1.4 nats each",
        base_logp=[-0.5, -0.6, -0.4],
        hinted_logp=[-1.9, -2.0, -1.8],
        own_logp=[-0.05, -0.05, -0.05],
        hint_chars=3200,
        cluster_share=0.0,
        valid=True,
    ),
    _rec(
        "H1: a short hint from a popular template (60% of the batch shares its "
        "cluster) with a slightly larger shift",
        base_logp=[-0.8, -0.7, -0.9, -0.6],
        hinted_logp=[-2.1, -2.0, -2.2, -1.9],
        own_logp=[-0.3, -0.3, -0.3, -0.3],
        hint_chars=120,
        cluster_share=0.6,
        valid=True,
    ),
    _rec(
        "H2: a reassuring hint: it makes the unassisted answer MORE likely",
        base_logp=[-2.0, -2.5, -2.0],
        hinted_logp=[-0.5, -1.0, -0.5],
        own_logp=[-0.3, -0.3, -0.3],
        hint_chars=100,
        cluster_share=0.0,
        valid=True,
    ),
    _rec(
        "H3: a short, original hint that moves the two answer tokens 1 nat each",
        base_logp=[-1.0, -1.2],
        hinted_logp=[-2.0, -2.2],
        own_logp=[-0.3, -0.3],
        hint_chars=150,
        cluster_share=0.1,
        valid=True,
    ),
    _rec(
        "H4: a proposal that fails the format check, though its hint shifts the answer "
        "by 2.5 nats per token",
        base_logp=[-0.4, -0.5],
        hinted_logp=[-2.9, -3.0],
        own_logp=[-0.3, -0.3],
        hint_chars=100,
        cluster_share=0.1,
        valid=False,
    ),
    _rec(
        "H5: a hint for a long eight-token answer, each token shifted by 0.6 nats",
        base_logp=[-1.0] * 8,
        hinted_logp=[-1.6] * 8,
        own_logp=[-0.3] * 8,
        hint_chars=150,
        cluster_share=0.1,
        valid=True,
    ),
    _rec(
        "H6: a confusing hint: the answer barely moves, but the hinted model's own reply "
        "is an unlikely ramble",
        base_logp=[-0.5, -0.6],
        hinted_logp=[-0.7, -0.8],
        own_logp=[-2.5, -2.6],
        hint_chars=150,
        cluster_share=0.1,
        valid=True,
    ),
)

PROPOSER = Lab(
    name="proposer",
    problem=109,
    title="G-Zero hint-delta proposer",
    description=(
        "The proposer picks one of seven hints.  hint_delta scores the same unassisted "
        "answer under the plain and the hinted context (token log-probabilities, padded "
        "rows masked), and proposer_rewards turns the delta, the hint's character count, "
        "its cluster share and its format flag into the hint's reward.  own_logp (the "
        "hinted model's own, different reply) is recorded for contrast and never used."
    ),
    functions=("hint_delta", "proposer_rewards"),
    actions=tuple(
        Action(label, rec["meaning"])
        for label, rec in zip(
            (
                "H0 long, leaky",
                "H1 popular template",
                "H2 reassuring",
                "H3 short, original",
                "H4 malformed",
                "H5 long answer",
                "H6 confusing",
            ),
            _PROPOSER_RECORDS,
            strict=True,
        )
    ),
    records=_PROPOSER_RECORDS,
    params=MappingProxyType({}),
    target=3,
    question="Why can a large delta caused by answer leakage mislead training?",
    answer=(
        "Delta only measures how far a hint pushes the model off its own answer, and "
        "stating the answer pushes hardest, so without the length and repetition terms "
        "the proposer learns to leak (H0) or repeat a template (H1) rather than write "
        "short, new hints (H3)."
    ),
    catches=(
        "no length penalty (H0 wins)",
        "no cluster penalty (H1 wins)",
        "invalid proposals keep delta and length (H4 wins)",
        "length counted in tokens instead of characters (H0 wins)",
        "delta sign flipped (H2 wins)",
        "mask ignored / padded mean or sum over tokens (H5 wins)",
        "hinted side scored on the hinted model's own reply (H6 wins)",
    ),
)

# --------------------------------------------------------------------------- 113
_CODER_RECORDS = (
    _rec(
        "P0: crashes at runtime (undefined name); no image",
        executed=False,
        easy_accuracy=0.0,
        consistency=0.0,
        syntax_error=False,
    ),
    _rec(
        "P1: renders a figure whose hard question every solver answers alike "
        "(consistency 0.95): all easy checks pass, little difficulty",
        executed=True,
        easy_accuracy=1.0,
        consistency=0.95,
        syntax_error=False,
    ),
    _rec(
        "P2: unterminated string: a syntax error, never runs",
        executed=False,
        easy_accuracy=0.0,
        consistency=0.0,
        syntax_error=True,
    ),
    _rec(
        "P3: renders a cluttered figure: easy checks pass only 45% of the time, the "
        "hard question splits solvers evenly",
        executed=True,
        easy_accuracy=0.45,
        consistency=0.5,
        syntax_error=False,
    ),
    _rec(
        "P4: renders a faithful figure: easy checks all pass, the hard question splits "
        "solvers 40/60",
        executed=True,
        easy_accuracy=1.0,
        consistency=0.4,
        syntax_error=False,
    ),
    _rec(
        "P5: times out in the renderer",
        executed=False,
        easy_accuracy=0.0,
        consistency=0.0,
        syntax_error=False,
    ),
    _rec(
        "P6: the same figure as P4, but its SVG is malformed (an unclosed tag the "
        "lenient renderer repairs)",
        executed=True,
        easy_accuracy=1.0,
        consistency=0.4,
        syntax_error=True,
    ),
    _rec(
        "P7: mismatched brackets: syntax error, never runs",
        executed=False,
        easy_accuracy=0.0,
        consistency=0.0,
        syntax_error=True,
    ),
    _rec(
        "P8: imports a module the sandbox lacks",
        executed=False,
        easy_accuracy=0.0,
        consistency=0.0,
        syntax_error=False,
    ),
    _rec(
        "P9: bad indentation: syntax error, never runs",
        executed=False,
        easy_accuracy=0.0,
        consistency=0.0,
        syntax_error=True,
    ),
    _rec(
        "P10: divides by zero while computing the axes",
        executed=False,
        easy_accuracy=0.0,
        consistency=0.0,
        syntax_error=False,
    ),
    _rec(
        "P11: a stray token in the markup: syntax error, never renders",
        executed=False,
        easy_accuracy=0.0,
        consistency=0.0,
        syntax_error=True,
    ),
)

CODER = Lab(
    name="coder",
    problem=113,
    title="MM-Zero coder: execution and visual feedback",
    description=(
        "The coder picks one of twelve sampled rendering programs for a figure (most of "
        "them fail, as early in training).  Each program's reward is coder_rewards on its "
        "execution flag, the solvers' easy-question accuracy and hard-question "
        "consistency on the rendered image, and its syntax flag."
    ),
    functions=("coder_rewards",),
    actions=tuple(
        Action(rec["meaning"].split(":")[0] + label, rec["meaning"])
        for label, rec in zip(
            (
                " fails",
                " too easy",
                " fails",
                " cluttered",
                " faithful",
                " fails",
                " malformed twin",
                " fails",
                " fails",
                " fails",
                " fails",
                " fails",
            ),
            _CODER_RECORDS,
            strict=True,
        )
    ),
    records=_CODER_RECORDS,
    params=MappingProxyType({}),
    target=4,
    question="What exploitation could appear if all three roles shared one reward?",
    answer=(
        "A shared score lets each role inflate its cheapest term; the coder's own reward "
        "pays for rendering, uncapped easy accuracy and the continuous difficulty "
        "min(c, 1 - c), minus error penalties, so a faithful, split-opinion figure (P4) "
        "beats a too-easy one (P1) and its own malformed twin (P6)."
    ),
    catches=(
        "easy accuracy capped at 0.5 (P3 wins)",
        "binary difficulty 1[0 < c < 1] instead of min(c, 1 - c) (P1 ties P4)",
        "raw consistency c instead of min(c, 1 - c) (P1 wins)",
        "no syntax penalty (P6 ties P4)",
    ),
)

_SOLVER_ACTIONS = (
    Action(
        "larger-id ties",
        "always formatted; in a tie it gives the larger answer, the one the group voted first",
    ),
    Action(
        "agrees, unformatted",
        "reaches the group's answer on every question but "
        "skips the required answer format on four of five",
    ),
    Action("formatted loner", "always formatted, usually off the group's answer"),
    Action(
        "formatted minority",
        "always formatted; right on the ties, but sides with the formatted minority when "
        "unformatted answers decide the vote, and is off on the clear question",
    ),
    Action(
        "unformatted, off",
        "unformatted except on the clear question, and off the group's answer on three of five",
    ),
)

SOLVER = Lab(
    name="solver",
    problem=113,
    title="MM-Zero solver: silver-label agreement plus format",
    description=(
        "The solver picks one of five answering behaviours; on each of five questions "
        "the five behaviours form the group of K = 5 answers.  solver_rewards scores each "
        "answer against the group's majority (ties to the smallest id) plus a format "
        "bonus; a behaviour's reward is its mean over the questions."
    ),
    functions=("solver_rewards",),
    actions=_SOLVER_ACTIONS,
    records=(
        _rec(
            "a 2-2 tie between answers 3 and 2 (3 given first): silver label 2",
            answers=[3, 2, 3, 2, 7],
            format_valid=[True, False, True, True, False],
        ),
        _rec(
            "a 2-2 tie between answers 5 and 4 (5 given first): silver label 4",
            answers=[5, 4, 5, 4, 8],
            format_valid=[True, False, True, True, False],
        ),
        _rec(
            "three answers say 1, two of them unformatted: counting all five gives 1, "
            "counting formatted ones only would give 6",
            answers=[1, 1, 6, 6, 1],
            format_valid=[True, False, True, True, False],
        ),
        _rec(
            "the same pattern with answers 2 and 9: silver label 2",
            answers=[2, 2, 9, 9, 2],
            format_valid=[True, False, True, True, False],
        ),
        _rec(
            "a clear majority for 0, every answer formatted",
            answers=[0, 0, 0, 4, 5],
            format_valid=[True, True, True, True, True],
        ),
    ),
    params=MappingProxyType({"num_answers": 10, "alpha": 0.9}),
    target=1,
    question="What exploitation could appear if all three roles shared one reward?",
    answer=(
        "A shared score would let a role buy reward with its cheapest term (tidy "
        "formatting, or agreeing with a label it helped skew); the solver's own reward "
        "puts alpha = 0.9 on agreement with the silver label and adds format on top, so "
        "the target agrees every time while mostly unformatted."
    ),
    catches=(
        "format treated as a gate ('larger-id ties' wins)",
        "ties broken toward the larger or first-given id ('larger-id ties' wins)",
        "majority taken over formatted answers only ('formatted loner' wins)",
        "alpha applied to format instead of agreement (the formatted behaviours win)",
    ),
)

#: Every Lab by name, in the order the CLI runs them.
LABS: Mapping[str, Lab] = MappingProxyType(
    {lab.name: lab for lab in (CHALLENGER, PSEUDO_LABELS, PROPOSER, CODER, SOLVER)}
)


def get_lab(name: str) -> Lab:
    """Look a Lab up by name; raise ``ValueError`` naming the known labs otherwise."""
    try:
        return LABS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown lab {name!r}; expected one of {', '.join(LABS)}") from None
