"""TTRL inside Tunix: label-free GRPO with the library's rewards on a warm-started model.

The task, split, warm start, arms and metrics are those of ``trl_ttrl.py``
(``ttrl_common.py``).  The policy is a small GPT-2-shaped Flax NNX model written here
to Tunix's model interface (``model(tokens, positions, cache, attention_mask)`` returning
``(logits, cache)``, ``init_cache``), because the toy transformer of
``tunix.tests.test_common`` has no causal mask, no positions and no cache (its sampled
tokens see only the previous token).  The words are those of the TRL example, through
the same Hugging Face word-level tokenizer.  Tunix's ``GRPOLearner`` with the vanilla
rollout trains a copy per arm with one reward of ``zero_stacks.tunix``
(``SolverReward`` online, in the band, against the truth column, or the matched coin)
and our advantage estimator (``register_advantage_estimator``, zero_jax's
``group_advantages``); every evaluation number and training diagnostic comes from
zero_jax.

    python examples/ttrl/tunix_ttrl.py --seeds 0 1 2 --json run.json --plot run.png
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import ttrl_common as tc  # noqa: E402  (examples/ttrl/ttrl_common.py, beside this script)

#: The configuration frozen for the pre-registered run (examples/ttrl/PREREGISTRATION.md).
FROZEN = tc.Config()
DESCRIPTION = __doc__.split("\n")[0]

if __name__ == "__main__":  # the extra (and --help) are checked before the imports below
    tc.require("tunix", sys.argv[1:], FROZEN, DESCRIPTION)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import optax  # noqa: E402
from flax import nnx  # noqa: E402
from jax.sharding import AxisType  # noqa: E402
from tunix.rl import rl_cluster as rl_cluster_lib  # noqa: E402
from tunix.rl.grpo import grpo_learner as grpo_lib  # noqa: E402
from tunix.rl.rollout import base_rollout  # noqa: E402

from zero_stacks import tunix as zt  # noqa: E402

BACKEND = zt.BACKEND  # zero_jax
ROLES = (rl_cluster_lib.Role.ACTOR, rl_cluster_lib.Role.REFERENCE, rl_cluster_lib.Role.ROLLOUT)
MAX_LEN = 16
NEG = -1e30


def _init(std: float = 0.02) -> Any:
    return nnx.initializers.normal(std)


def _dropout(x: jax.Array, rate: float, key: jax.Array | None) -> jax.Array:
    if key is None or rate == 0.0:
        return x
    keep = jax.random.bernoulli(key, 1.0 - rate, x.shape)
    return jnp.where(keep, x / (1.0 - rate), 0.0)


class Block(nnx.Module):
    """Pre-norm attention and MLP block, as GPT-2's."""

    def __init__(self, dim: int, heads: int, *, rngs: nnx.Rngs) -> None:
        self.heads = heads
        self.ln1 = nnx.LayerNorm(dim, epsilon=1e-5, rngs=rngs)
        self.qkv = nnx.Linear(dim, 3 * dim, kernel_init=_init(), rngs=rngs)
        self.proj = nnx.Linear(dim, dim, kernel_init=_init(), rngs=rngs)
        self.ln2 = nnx.LayerNorm(dim, epsilon=1e-5, rngs=rngs)
        self.up = nnx.Linear(dim, 4 * dim, kernel_init=_init(), rngs=rngs)
        self.down = nnx.Linear(4 * dim, dim, kernel_init=_init(), rngs=rngs)

    def __call__(self, x: jax.Array, mask: jax.Array, cache: dict | None, rate: float,
                 keys: list | None) -> tuple[jax.Array, dict | None]:  # fmt: skip
        b, t, d = x.shape
        h = self.heads
        q, k, v = jnp.split(self.qkv(self.ln1(x)), 3, axis=-1)
        q, k, v = (z.reshape(b, t, h, d // h) for z in (q, k, v))
        if cache is not None:  # write this call's keys and values at end_index
            at = cache["end_index"][0]
            zero = jnp.zeros_like(at)  # indices of one dtype, x64 on or off
            k = jax.lax.dynamic_update_slice(cache["k"], k.astype(cache["k"].dtype),
                                             (zero, at, zero, zero))  # fmt: skip
            v = jax.lax.dynamic_update_slice(cache["v"], v.astype(cache["v"].dtype),
                                             (zero, at, zero, zero))  # fmt: skip
            cache = {"k": k, "v": v, "end_index": cache["end_index"] + t}
        scores = jnp.einsum("bthd,bshd->bhts", q, k) / np.sqrt(d // h)
        scores = jnp.where(mask[:, None, :, :], scores, NEG)
        probs = _dropout(jax.nn.softmax(scores, axis=-1), rate, keys and keys[0])
        att = jnp.einsum("bhts,bshd->bthd", probs, v).reshape(b, t, d)
        x = x + _dropout(self.proj(att), rate, keys and keys[1])
        x = x + _dropout(self.down(jax.nn.gelu(self.up(self.ln2(x)))), rate, keys and keys[2])
        return x, cache


@dataclasses.dataclass(frozen=True)
class Shape:
    """What Tunix's vanilla rollout reads from ``model.config`` to size its cache."""

    num_layers: int
    num_kv_heads: int
    head_dim: int


class Policy(nnx.Module):
    """A GPT-2-shaped decoder (learned positions, tied embeddings) in Tunix's interface.

    ``__call__(tokens, positions, cache, attention_mask)``: ``attention_mask[b, t, s]``
    says whether query ``t`` may read key ``s`` (causal and non-pad; Tunix builds it);
    with a ``cache`` (``init_cache``) the call's keys and values are written at its
    ``end_index`` and the mask spans the whole cache.  Dropout acts only when a
    ``dropout_key`` is given (the warm start); Tunix never gives one.
    """

    def __init__(self, vocab: int, cfg: tc.Config, *, rngs: nnx.Rngs) -> None:
        self.config = Shape(cfg.layers, cfg.heads, cfg.dim // cfg.heads)
        self.rate = cfg.dropout
        self.heads = cfg.heads
        self.dim = cfg.dim
        self.wte = nnx.Embed(vocab, cfg.dim, embedding_init=_init(), rngs=rngs)
        self.wpe = nnx.Embed(MAX_LEN, cfg.dim, embedding_init=_init(0.01), rngs=rngs)
        self.blocks = nnx.List([Block(cfg.dim, cfg.heads, rngs=rngs) for _ in range(cfg.layers)])
        self.ln_f = nnx.LayerNorm(cfg.dim, epsilon=1e-5, rngs=rngs)

    @property
    def num_embed(self) -> int:
        return self.wte.num_embeddings

    def init_cache(self, batch_size: int, cache_size: int, dtype: Any) -> dict:
        shape = (batch_size, cache_size, self.heads, self.dim // self.heads)
        return {
            f"layer_{i}": {
                "k": jnp.zeros(shape, dtype),
                "v": jnp.zeros(shape, dtype),
                "end_index": jnp.zeros((batch_size,), jnp.int32),
            }  # fmt: skip
            for i in range(len(self.blocks))
        }

    def __call__(
        self,
        tokens: jax.Array,
        positions: jax.Array,
        cache: dict | None = None,
        attention_mask: jax.Array | None = None,
        output_hidden_states: bool = False,
        dropout_key: jax.Array | None = None,
    ) -> tuple[jax.Array, dict | None]:
        t = tokens.shape[1]
        if attention_mask is None:
            attention_mask = jnp.broadcast_to(jnp.tril(jnp.ones((t, t), bool)),
                                              (tokens.shape[0], t, t))  # fmt: skip
        keys = None if dropout_key is None else list(
            jax.random.split(dropout_key, 1 + 3 * len(self.blocks)))  # fmt: skip
        x = self.wte(tokens) + self.wpe(positions)
        x = _dropout(x, self.rate, keys and keys[0])
        new_cache = None if cache is None else {}
        for i, block in enumerate(self.blocks):
            layer = None if cache is None else cache[f"layer_{i}"]
            x, layer = block(x, attention_mask, layer, self.rate,
                             keys and keys[1 + 3 * i : 4 + 3 * i])  # fmt: skip
            if new_cache is not None:
                new_cache[f"layer_{i}"] = layer
        return self.wte.attend(self.ln_f(x)), new_cache


def build_model(cfg: tc.Config, seed: int) -> Policy:
    return Policy(len(tc.words(cfg.spelling)), cfg, rngs=nnx.Rngs(seed))


def warm_start(model: Policy, cfg: tc.Config, pairs: list[tuple[int, int]], seed: int) -> None:
    """Full-batch AdamW: ``clean_steps`` on the true answers, then ``noisy_steps`` against
    the soft noisy labels, dropout on; one jitted ``lax.scan`` per phase."""
    graphdef, params = nnx.split(model, nnx.Param)
    opt = optax.adamw(cfg.sft_lr, weight_decay=cfg.weight_decay)
    state = opt.init(params)

    def loss_fn(p, key, ids, target, weight):
        m = nnx.merge(graphdef, p)
        pos = jnp.broadcast_to(jnp.arange(ids.shape[1]), ids.shape)
        logits, _ = m(ids, pos, dropout_key=key)
        logp = jax.nn.log_softmax(logits[:, :-1], -1)
        nll = -(target[:, 1:] * logp).sum(-1).sum(-1)
        return (nll * weight).sum() / len(pairs)

    @partial(jax.jit, static_argnums=(3,))
    def phase(p, s, key, steps, ids, target, weight):
        def step(carry, k):
            p, s = carry
            grads = jax.grad(loss_fn)(p, k, ids, target, weight)
            updates, s = opt.update(grads, s, p)
            return (optax.apply_updates(p, updates), s), None

        (p, s), _ = jax.lax.scan(step, (p, s), jax.random.split(key, steps))
        return p, s

    key = jax.random.key(seed)
    for noisy, steps in ((False, cfg.clean_steps), (True, cfg.noisy_steps)):
        if steps:
            ids, target, weight = tc.warm_start_targets(pairs, cfg.spelling, noisy)
            key, sub = jax.random.split(key)
            params, state = phase(params, state, sub, steps, ids, target, weight)
    nnx.update(model, params)


@partial(nnx.jit, static_argnames=("n", "steps", "greedy"))
def _sample(model: Policy, prompts: jax.Array, key: jax.Array, temperature: float, n: int,
            steps: int, greedy: bool) -> jax.Array:  # fmt: skip
    """Each prompt once through the model, its cache copied ``n`` times, then ``steps``
    tokens per copy (temperature sampling or greedy)."""
    b, p = prompts.shape
    size = p + steps
    cache = model.init_cache(b, size, jnp.float32)
    pos = jnp.broadcast_to(jnp.arange(p), (b, p))
    mask = jnp.broadcast_to(jnp.tril(jnp.ones((p, size), bool)), (b, p, size))
    logits, cache = model(prompts, pos, cache, mask)
    cache = jax.tree.map(lambda x: jnp.repeat(x, n, axis=0), cache)
    last = jnp.repeat(logits[:, -1], n, axis=0)
    out = []
    for t in range(steps):
        if greedy:
            nxt = jnp.argmax(last, -1)
        else:
            nxt = jax.random.categorical(jax.random.fold_in(key, t), last / temperature)
        out.append(nxt)
        if t + 1 < steps:
            at = jnp.full((b * n, 1), p + t)
            step_mask = jnp.broadcast_to(jnp.arange(size) <= p + t, (b * n, 1, size))
            logits, cache = model(nxt[:, None], at, cache, step_mask)
            last = logits[:, -1]
    return jnp.stack(out, 1)


def sample(model: Policy, cfg: tc.Config, pairs: list[tuple[int, int]], n: int, greedy: bool,
           key: jax.Array) -> list[list[str]]:  # fmt: skip
    ids = _sample(model, jnp.asarray(tc.prompt_ids(pairs, cfg.spelling)), key,
                  cfg.temperature, n, cfg.max_tokens, greedy)  # fmt: skip
    texts = tc.decode(np.asarray(ids), cfg.spelling)
    return [texts[i : i + n] for i in range(0, len(texts), n)]


def evaluate(model: Policy, cfg: tc.Config, split: tc.Split, seed: int,
             step: int) -> dict[str, Any]:  # fmt: skip
    key = jax.random.fold_in(jax.random.key(seed), 100_003 + step)
    out: dict[str, Any] = {"step": step}
    for i, (where, pairs) in enumerate((("rl", split.rl), ("held", split.held))):
        truths = [tc.truth(p) for p in pairs]
        sampled = sample(model, cfg, pairs, cfg.eval_samples, False, jax.random.fold_in(key, i))
        greedy = [g[0] for g in sample(model, cfg, pairs, 1, True, key)]
        out[where] = {
            **tc.answer_metrics(BACKEND, sampled, truths),
            "greedy": tc.greedy_accuracy(BACKEND, greedy, truths),
        }
    return out


def train_arm(arm: str, model: Policy, cfg: tc.Config, split: tc.Split, seed: int,
              first_eval: dict[str, Any], rates: list[float] | None,
              log: Callable[[str], None]) -> dict[str, Any]:  # fmt: skip
    start = time.perf_counter()
    G = cfg.num_generations
    reward = tc.arm_reward(zt.SolverReward, arm, cfg, seed, rates)  # Tunix passes G itself
    train = tc.TrainLog(BACKEND, zt.VoteDiagnostics(G, truth_column="answer"), cfg)
    evals = [first_eval]
    mesh = jax.make_mesh((1, 1), ("fsdp", "tp"), axis_types=(AxisType.Auto,) * 2)
    reference = build_model(cfg, seed)
    nnx.update(reference, nnx.state(model, nnx.Param))
    cluster = rl_cluster_lib.RLCluster(
        actor=model,
        reference=reference,
        tokenizer=tc.tokenizer_for(cfg.spelling),
        cluster_config=rl_cluster_lib.ClusterConfig(
            role_to_mesh=dict.fromkeys(ROLES, mesh),
            rollout_engine="vanilla",
            offload_to_cpu=False,
            training_config=rl_cluster_lib.RLTrainingConfig(
                actor_optimizer=optax.chain(optax.clip_by_global_norm(1.0), optax.adam(cfg.lr)),
                eval_every_n_steps=10**9,
                max_steps=cfg.steps,
            ),
            rollout_config=base_rollout.RolloutConfig(
                max_tokens_to_generate=cfg.max_tokens,
                max_prompt_length=8,
                kv_cache_size=MAX_LEN,
                temperature=cfg.temperature,
                seed=seed,
            ),
        ),
    )

    def metrics(prompts, completions, rewards, advantages, answer, **kwargs):
        """Called by GRPOLearner after each rollout: the step's diagnostics, by zero_jax."""
        train.record(prompts, completions, answer, rewards)
        return {}

    def batches() -> Iterator[dict[str, np.ndarray]]:
        """The RL prompts in the seed's order; the evaluation points run when Tunix asks
        for the batch of that step, after the updates of the steps before it."""
        order = tc.rl_order(seed, cfg.steps, cfg.prompts_per_step, len(split.rl))
        for step in range(cfg.steps):
            if step and step % cfg.eval_every == 0:
                record(step)
            pick = order[step * cfg.prompts_per_step : (step + 1) * cfg.prompts_per_step]
            yield {"prompts": np.array([tc.prompt(split.rl[i]) for i in pick]),
                   "answer": np.array([tc.truth(split.rl[i]) for i in pick])}  # fmt: skip

    def record(step: int) -> None:
        actor = cluster.actor_trainer.model
        if cluster.actor_trainer.train_steps != step:  # Tunix took the batch ahead of time
            raise RuntimeError(
                f"evaluation at step {step} after {cluster.actor_trainer.train_steps} updates"
            )
        evals.append(evaluate(actor, cfg, split, seed, step))
        log(train.eval_line(seed, arm, evals[-1], time.perf_counter() - start))

    learner = grpo_lib.GRPOLearner(
        rl_cluster=cluster,
        reward_fns=[reward],
        algo_config=grpo_lib.GRPOConfig(
            num_generations=G,
            num_iterations=1,
            beta=0.0,
            loss_agg_mode="token-mean",
            advantage_estimator=zt.register_advantage_estimator(),
        ),
        metric_fns=[metrics],
    )
    learner.train(batches())
    record(cfg.steps)
    seconds = round(time.perf_counter() - start, 1)
    return {"evals": evals, "train": train.curves, "wall_time_s": seconds}


def run_seed(seed: int, cfg: tc.Config, arms: list[str],
             log: Callable[[str], None]) -> dict[str, Any]:  # fmt: skip
    """Warm start once, then every arm from a copy of it (``no_prior`` from a fresh
    random initialisation), the random arm after the majority arm whose rates it copies."""
    start = time.perf_counter()
    split = tc.split(seed)
    out: dict[str, Any] = {"seed": seed, "arms": {}}
    warm = None
    if set(arms) - {"no_prior"}:
        warm = build_model(cfg, seed)
        warm_start(warm, cfg, split.sft, seed)
        out["warm_start_s"] = round(time.perf_counter() - start, 1)
        first = evaluate(warm, cfg, split, seed, 0)
        log(
            f"seed {seed}: warm start in {out['warm_start_s']} s, rl pass@1 "
            f"{first['rl']['pass@1']:.3f} maj@8 {first['rl']['maj@8']:.3f} greedy "
            f"{first['rl']['greedy']:.3f}; held pass@1 {first['held']['pass@1']:.3f}"
        )
    for arm in arms:
        model = build_model(cfg, seed)
        if arm == "no_prior":
            first_eval = evaluate(model, cfg, split, seed, 0)
        else:
            nnx.update(model, nnx.state(warm, nnx.Param))
            first_eval = first
        rates = out["arms"]["majority"]["train"]["reward_mean"] if arm == "random" else None
        out["arms"][arm] = train_arm(arm, model, cfg, split, seed, first_eval, rates, log)
    out["wall_time_s"] = round(time.perf_counter() - start, 1)
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Every arm builds a new ``GRPOLearner``, whose jitted functions XLA would compile
    again; a compilation cache in a temporary directory, kept for the run, compiles each
    program once."""
    import tempfile

    packages = ("jax", "jaxlib", "flax", "optax", "google-tunix", "transformers")
    with tempfile.TemporaryDirectory(prefix="ttrl-xla-") as cache:
        jax.config.update("jax_compilation_cache_dir", cache)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
        # the workers of --jobs read the same settings from their environment
        env = {
            "JAX_COMPILATION_CACHE_DIR": cache,
            "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
        }
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            return tc.main("tunix", FROZEN, DESCRIPTION, run_seed, packages, argv)
        finally:
            jax.config.update("jax_compilation_cache_dir", None)
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v


if __name__ == "__main__":
    main()
