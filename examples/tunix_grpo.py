"""Tunix ``GRPOLearner`` training on the CPU with the R-Zero solver reward (zero_jax).

The policy is Tunix's own toy transformer (``tunix.tests.test_common``, shipped in
the google-tunix wheel) over a word vocabulary that spells boxed answers and small
numbers: one word per boxed answer ``\\boxed{1}`` .. ``\\boxed{9}``, the digits and
the words of the prompts ``what is a + b ?``.  (With ``\\boxed{`` and ``}`` as
separate words a random policy almost never closes a box and the reward never
fires.)  Each prompt is sampled ``G`` times; the reward of a completion is 1 when
its last boxed answer equals the majority answer of its own group (R-Zero's
pseudo-label, voted online), else 0, computed by ``zero_stacks.tunix.SolverReward``.
``accuracy`` (the answer is the true sum) is recorded as a diagnostic only.
Advantages come from ``zero_jax.group_advantages``, registered in Tunix's
advantage-estimator registry as ``"zero_rewards_grpo"``; each step also records
how far they are from Tunix's own ``"grpo"`` estimator on groups where that one is
defined (not all-equal).

Run (needs ``pip install -e ".[tunix]"``)::

    python examples/tunix_grpo.py --steps 200 --json examples/results/tunix_grpo.json \\
        --plot examples/results/tunix_grpo.png
"""

from __future__ import annotations

import os
import time
from typing import Any

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import grpo_cli  # noqa: E402  (examples/grpo_cli.py, beside this script)

if __name__ == "__main__":  # the extras (and --help) are checked before the imports below
    grpo_cli.require("tunix", __doc__)

import jax  # noqa: E402
import numpy as np  # noqa: E402
import optax  # noqa: E402
from flax import nnx  # noqa: E402
from jax.sharding import AxisType  # noqa: E402
from tunix.rl import (
    algo_core,  # noqa: E402
    function_registry,  # noqa: E402
)
from tunix.rl import rl_cluster as rl_cluster_lib  # noqa: E402
from tunix.rl.grpo import grpo_learner as grpo_lib  # noqa: E402
from tunix.rl.rollout import base_rollout  # noqa: E402
from tunix.tests import test_common as tc  # noqa: E402

import zero_jax  # noqa: E402
import zero_text  # noqa: E402
from zero_stacks import tunix as zt  # noqa: E402

#: Special tokens first (pad 0, bos 1, eos 2, as MockVocab expects), then words.
BOXES = [f"\\boxed{{{d}}}" for d in range(1, 10)]  # one word per boxed answer 1..9
WORDS = ["<pad>", "<s>", "</s>", *BOXES, *map(str, range(1, 10)), "what", "is", "+", "?"]
PROMPTS = [f"what is {a} + {b} ?" for a in range(1, 5) for b in range(1, 5)]
ROLES = (rl_cluster_lib.Role.ACTOR, rl_cluster_lib.Role.REFERENCE, rl_cluster_lib.Role.ROLLOUT)


def batches(steps: int, prompts_per_step: int, seed: int):
    """``steps`` batches of prompts in the form Tunix expects (NumPy string arrays)."""
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        pick = rng.choice(len(PROMPTS), size=prompts_per_step, replace=False)
        yield {"prompts": np.array([PROMPTS[i] for i in pick])}


def accuracy(prompts: list[str], completions: list[str]) -> float:
    """Share of completions whose boxed answer is the true sum (a diagnostic only:
    the reward never sees it)."""
    truth = [str(sum(int(w) for w in str(p).split() if w.isdigit())) for p in prompts]
    got = [zero_text.extract_boxed(c) for c in completions]
    return float(np.mean([g == t for g, t in zip(got, truth, strict=True)]))


def has_box(texts: list[str]) -> np.ndarray:
    """Format check for the toy vocabulary: the completion has a non-empty box."""
    return np.array([bool(zero_text.extract_boxed(t)) for t in texts])


def params_of(model: nnx.Module) -> list[np.ndarray]:
    return [np.array(x) for x in jax.tree.leaves(nnx.state(model, nnx.Param))]


def run(
    steps: int = 4,
    num_generations: int = 8,
    prompts_per_step: int = 4,
    learning_rate: float = 1e-3,
    max_tokens: int = 6,
    seed: int = 0,
    alpha: float | None = None,
    band: tuple[float, float] | None = None,
    verbose: bool = True,
) -> dict[str, Any]:
    """Train for ``steps`` GRPO steps and return the record written to ``--json``.

    ``alpha`` adds the format term (``alpha * agree + (1 - alpha) * has_box``);
    ``band=(low, high)`` keeps only prompts whose vote share lies in the band.
    """
    start = time.perf_counter()
    vocab = tc.MockVocab({w: i for i, w in enumerate(WORDS)})
    config = tc.ModelConfig(vocab_size=len(WORDS), num_layers=2)
    model = tc.ToyTransformer(config=config, rngs=nnx.Rngs(seed))
    reference = tc.ToyTransformer(config=config, rngs=nnx.Rngs(seed))
    before = params_of(model)
    # jax 0.10's make_mesh defaults to Explicit axes; Tunix shards with Auto axes.
    mesh = jax.make_mesh((1, 1), ("fsdp", "tp"), axis_types=(AxisType.Auto,) * 2)
    cluster = rl_cluster_lib.RLCluster(
        actor=model,
        reference=reference,
        tokenizer=vocab,
        cluster_config=rl_cluster_lib.ClusterConfig(
            role_to_mesh=dict.fromkeys(ROLES, mesh),
            rollout_engine="vanilla",
            offload_to_cpu=False,
            training_config=rl_cluster_lib.RLTrainingConfig(
                actor_optimizer=optax.adam(learning_rate),
                eval_every_n_steps=10**9,
                max_steps=steps,
            ),
            rollout_config=base_rollout.RolloutConfig(
                max_tokens_to_generate=max_tokens,
                max_prompt_length=8,
                kv_cache_size=32,
                temperature=1.0,
                seed=seed,  # Tunix derives the sampling key from it on every call
            ),
        ),
    )
    estimator = zt.register_advantage_estimator()
    tunix_grpo = function_registry.get_advantage_estimator("grpo")
    assert tunix_grpo is algo_core.compute_advantages
    record: dict[str, list[float]] = {
        "reward_mean": [],
        "parseable": [],
        "accuracy": [],
        "max_abs_diff_vs_tunix_grpo": [],
    }
    samples: list[str] = []

    def metrics(prompts, completions, rewards, advantages, **kwargs):
        """Called by GRPOLearner after each rollout with the rewards and our advantages."""
        rewards = np.asarray(rewards, dtype=np.float64)
        groups = rewards.reshape(-1, num_generations)
        defined = np.repeat(groups.max(axis=1) > groups.min(axis=1), num_generations)
        theirs = tunix_grpo(rewards=rewards, num_generations=num_generations)
        diff = np.abs(np.asarray(advantages, dtype=np.float64) - theirs)[defined]
        record["reward_mean"].append(float(rewards.mean()))
        record["parseable"].append(
            float(np.mean([zero_text.extract_boxed(c) not in (None, "") for c in completions]))
        )
        record["accuracy"].append(accuracy(list(prompts), list(completions)))
        record["max_abs_diff_vs_tunix_grpo"].append(float(diff.max()) if diff.size else 0.0)
        samples[:] = list(completions[:num_generations])
        if verbose:
            step = len(record["reward_mean"])
            print(
                f"step {step:4d}/{steps}  reward_mean {rewards.mean():.3f}  "
                f"parseable {record['parseable'][-1]:.2f}  accuracy {record['accuracy'][-1]:.2f}  "
                f"{time.perf_counter() - start:6.1f}s  e.g. {completions[0]!r}",
                flush=True,
            )
        return {}

    options: dict[str, Any] = {}
    if alpha is not None:  # the toy vocabulary cannot spell <think>: the format is "has a box"
        options.update(alpha=alpha, format=has_box)
    if band is not None:
        options.update(band=True, low=band[0], high=band[1])
    reward = zt.SolverReward(**options)  # num_generations comes from GRPOConfig
    learner = grpo_lib.GRPOLearner(
        rl_cluster=cluster,
        reward_fns=[reward],
        algo_config=grpo_lib.GRPOConfig(
            num_generations=num_generations,
            num_iterations=1,
            beta=0.0,
            advantage_estimator=estimator,
        ),
        metric_fns=[metrics],
    )
    learner.train(batches(steps, prompts_per_step, seed))
    after = params_of(cluster.actor_trainer.model)
    changed = any(not np.array_equal(a, b) for a, b in zip(before, after, strict=True))
    return {
        "stack": "tunix",
        "steps": len(record["reward_mean"]),
        "reward_mean": record["reward_mean"],
        "parseable": record["parseable"],
        "accuracy": record["accuracy"],
        "params_changed": bool(changed),
        "advantage_estimator": estimator,
        "advantage_preset": dict(zero_jax.ADVANTAGE_PRESETS["tunix"]),
        "max_abs_diff_vs_tunix_grpo": max(record["max_abs_diff_vs_tunix_grpo"], default=0.0),
        "reward": f"zero_stacks.tunix.SolverReward({_show(options)}) (R-Zero, online votes)",
        "config": {
            "num_generations": num_generations,
            "prompts_per_step": prompts_per_step,
            "learning_rate": learning_rate,
            "optimizer": "adam",
            "max_tokens": max_tokens,
            "vocab": WORDS,
            "model": "tunix.tests.test_common.ToyTransformer(num_layers=2)",
            "seed": seed,
        },
        "last_completions": samples,
        "versions": {"jax": jax.__version__, "tunix": _version("google-tunix")},
        "wall_time_s": round(time.perf_counter() - start, 2),
    }


def _show(options: dict[str, Any]) -> str:
    return ", ".join(f"{k}={getattr(v, '__name__', v)!s}" for k, v in options.items())


def _version(dist: str) -> str:
    from importlib.metadata import version

    return version(dist)


def main(argv: list[str] | None = None) -> None:
    def detail(result: dict[str, Any]) -> str:
        return f"estimator={result['advantage_estimator']}"

    grpo_cli.main(run, "tunix", detail, __doc__.split("\n")[0], argv)


if __name__ == "__main__":
    main()
