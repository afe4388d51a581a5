"""From raw strings to GRPO advantages, in JAX: the R-Zero path on a shipped batch.

8 raw challenger outputs and, for each question, K=5 raw solver replies
(``zero_text/fixtures/example_batch.json``) go through

1. ``zero_text``: challenger format gate, question extraction, BLEU repetition
   clusters, answer ids grouped per question in order of first appearance;
2. ``zero_jax``: consensus (frozen pseudo-labels + self-consistency), challenger
   rewards, the informative band, pseudo-rewards of the solver's replies, and GRPO
   advantages restricted to well-formed, in-band questions.

In a real loop the solver's fresh rollouts are sampled after the vote; here the
same replies stand in for them.  Old and fresh replies are grouped together so
that they share one id namespace.  Run: ``python examples/end_to_end.py``.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

import zero_jax
import zero_text


def run(equivalence: str = "exact") -> dict[str, np.ndarray]:
    batch = zero_text.load_example_batch()
    outputs, replies = batch["challenger_outputs"], batch["solver_replies"]
    k = len(replies[0])

    # Strings -> arrays.
    valid = zero_text.r_zero_challenger_format_ok(outputs)
    # malformed outputs are clustered as "" (always alone, as in published R-Zero)
    questions = [
        (zero_text.extract_tag(o, "question") or "") if ok else ""
        for o, ok in zip(outputs, valid, strict=True)
    ]
    clusters, shares = zero_text.bleu_clusters(questions, threshold=0.5)
    fresh = replies  # stands in for the solver's next rollouts
    ids, num_answers = zero_text.group_answers(
        [old + new for old, new in zip(replies, fresh, strict=True)], equivalence=equivalence
    )
    votes, fresh_ids = ids[:, :k], ids[:, k:]

    # Arrays -> rewards and advantages.
    labels, consistency = zero_jax.consensus(votes, num_answers)
    challenger = zero_jax.challenger_rewards(
        consistency, clusters, valid, num_clusters=int(clusters.max()) + 1
    )
    band = zero_jax.curriculum_mask(consistency)
    solver = zero_jax.pseudo_rewards(fresh_ids, labels)
    train = band & jnp.asarray(valid)  # the solver trains on well-formed, in-band questions
    keep = jnp.broadcast_to(train[:, None], solver.shape)
    advantages = zero_jax.group_advantages(solver, keep)
    return {
        "valid": valid,
        "clusters": clusters,
        "shares": shares,
        "answer_ids": votes,
        "labels": np.asarray(labels),
        "consistency": np.asarray(consistency),
        "challenger_rewards": np.asarray(challenger),
        "band": np.asarray(band),
        "pseudo_rewards": np.asarray(solver),
        "advantages": np.asarray(advantages),
    }


def main() -> None:
    import sys

    out = run("math" if "--math" in sys.argv else "exact")
    print(" q  valid cluster  ids         p     challenger  band  advantages")
    for i in range(len(out["valid"])):
        adv = " ".join(f"{a:+.2f}" for a in out["advantages"][i])
        print(
            f"{i:2d}  {out['valid'][i]!s:5}  {out['clusters'][i]:7d}  "
            f"{out['answer_ids'][i].tolist()!s:11} {out['consistency'][i]:.2f}  "
            f"{out['challenger_rewards'][i]:10.3f}  {out['band'][i]!s:5} {adv}"
        )


if __name__ == "__main__":
    main()
