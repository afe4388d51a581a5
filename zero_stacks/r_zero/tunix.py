"""The R-Zero loop's Tunix backend: a Flax NNX model trained by Tunix's ``GRPOLearner``.

``TunixRole(model, tokenizer, max_tokens=..., max_prompt_tokens=...)`` is one role of
:mod:`zero_stacks.r_zero.loop`: sampling with Tunix's ``Sampler`` and GRPO with
``GRPOLearner`` (vanilla rollout) on one reward of :mod:`zero_stacks.tunix` (``zero_jax``)
and the library's advantage estimator (``register_advantage_estimator``).  The model is
any model in Tunix's interface (``model(tokens, positions, cache, attention_mask)``,
``init_cache``, ``config.num_layers / num_kv_heads / head_dim``); the mesh is built over
``jax.devices()``, so the same code runs on an accelerator.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from zero_stacks import tunix as rewards

__all__ = ["TunixRole"]


def _mesh() -> Any:
    import jax
    from jax.sharding import AxisType

    return jax.make_mesh((1, len(jax.devices())), ("fsdp", "tp"),
                         axis_types=(AxisType.Auto,) * 2)  # fmt: skip


class TunixRole:
    """One role as a Tunix policy (``model`` an ``nnx.Module``, ``tokenizer`` a Hugging
    Face or Tunix tokenizer; ``prompt`` as in :class:`~zero_stacks.r_zero.trl.TrlRole`).
    Tunix builds each token's position from its padding mask,
    so prompts of different lengths keep their positions here."""

    rewards = rewards

    def __init__(self, model: Any, tokenizer: Any, *, max_tokens: int, max_prompt_tokens: int,
                 prompt: Callable[[str], str] | None = None,
                 sample_chunk: int = 512) -> None:  # fmt: skip
        self.model, self.tokenizer = model, tokenizer
        self.max_tokens, self.max_prompt_tokens = max_tokens, max_prompt_tokens
        self.prompt, self.sample_chunk = prompt, sample_chunk

    def copy(self) -> TunixRole:
        from flax import nnx

        return TunixRole(nnx.clone(self.model), self.tokenizer, max_tokens=self.max_tokens,
                         max_prompt_tokens=self.max_prompt_tokens, prompt=self.prompt,
                         sample_chunk=self.sample_chunk)  # fmt: skip

    def _texts(self, prompts: Sequence[str]) -> list[str]:
        return [self.prompt(p) if self.prompt else p for p in prompts]

    def sample(self, prompts: Sequence[str], n: int, temperature: float | None,
               seed: int) -> list[list[str]]:  # fmt: skip
        """``n`` completions per prompt (greedy when ``temperature`` is None), in chunks of
        one size (the last one repeats its rows), so the sampler compiles once."""
        from tunix.generate import sampler as sampler_lib

        cfg = self.model.config
        sampler = sampler_lib.Sampler(
            self.model, self.tokenizer,
            sampler_lib.CacheConfig(cache_size=self.max_prompt_tokens + self.max_tokens,
                                    num_layers=cfg.num_layers, num_kv_heads=cfg.num_kv_heads,
                                    head_dim=cfg.head_dim))  # fmt: skip
        rows = [p for p in self._texts(prompts) for _ in range(n)]
        size = min(self.sample_chunk, len(rows))
        texts: list[str] = []
        for k, i in enumerate(range(0, len(rows), size)):
            chunk = rows[i : i + size]
            chunk = chunk + [chunk[-1]] * (size - len(chunk))
            options: dict[str, Any] = {}
            if temperature is not None:
                options = {"temperature": temperature, "top_p": 1.0, "seed": seed * 1009 + k}
            out = sampler(chunk, max_generation_steps=self.max_tokens,
                          max_prompt_length=self.max_prompt_tokens, echo=False,
                          **options)  # fmt: skip
            texts += [t.strip() for t in out.text[: len(rows) - i]]
        return [texts[j : j + n] for j in range(0, len(texts), n)]

    def train(self, prompts: Sequence[str], columns: Mapping[str, Sequence[Any]],
              reward: Callable[..., list[float]], *, prompts_per_step: int, generations: int,
              lr: float, temperature: float, seed: int) -> None:  # fmt: skip
        """GRPO over ``prompts`` in order, ``prompts_per_step`` prompts a step."""
        import optax
        from tunix.rl import rl_cluster as rl_cluster_lib
        from tunix.rl.grpo import grpo_learner as grpo_lib
        from tunix.rl.rollout import base_rollout

        steps = len(prompts) // prompts_per_step
        mesh = _mesh()
        roles = (rl_cluster_lib.Role.ACTOR, rl_cluster_lib.Role.REFERENCE,
                 rl_cluster_lib.Role.ROLLOUT)  # fmt: skip
        cluster = rl_cluster_lib.RLCluster(
            actor=self.model,
            reference=None,  # beta = 0: no KL term, no reference model
            tokenizer=self.tokenizer,
            cluster_config=rl_cluster_lib.ClusterConfig(
                role_to_mesh=dict.fromkeys(roles, mesh),
                rollout_engine="vanilla",
                offload_to_cpu=False,
                training_config=rl_cluster_lib.RLTrainingConfig(
                    actor_optimizer=optax.chain(optax.clip_by_global_norm(1.0), optax.adam(lr)),
                    eval_every_n_steps=10**9,
                    max_steps=steps,
                ),
                rollout_config=base_rollout.RolloutConfig(
                    max_tokens_to_generate=self.max_tokens,
                    max_prompt_length=self.max_prompt_tokens,
                    kv_cache_size=self.max_prompt_tokens + self.max_tokens,
                    temperature=temperature,
                    seed=seed,
                ),
            ),
        )

        def batches() -> Iterator[dict[str, np.ndarray]]:
            for step in range(steps):
                a, b = step * prompts_per_step, (step + 1) * prompts_per_step
                yield {"prompts": np.array(self._texts(prompts[a:b])),
                       **{k: np.array(v[a:b]) for k, v in columns.items()}}  # fmt: skip

        learner = grpo_lib.GRPOLearner(
            rl_cluster=cluster,
            reward_fns=[reward],
            algo_config=grpo_lib.GRPOConfig(
                num_generations=generations,
                num_iterations=1,
                beta=0.0,
                loss_agg_mode="token-mean",
                advantage_estimator=rewards.register_advantage_estimator(),
            ),
        )
        learner.train(batches())
        self.model = cluster.actor_trainer.model
