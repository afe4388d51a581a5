"""``python -m bench.step``: what the rewards cost inside a GRPO update, three ways.

One GRPO-style update of a small policy head (64 prompts x 8 samples, answer ids from
``zero_text.group_answers`` over generated boxed replies, a linear head 512 -> 1024 over 64
tokens per sample, log-probs at the sampled tokens, Adam from optax), with the rewards
(consensus, pseudo-rewards, the band, group advantages) computed

  (a) by ``zero_jax`` inside the one ``jax.jit`` of rewards + loss + grad + update;
  (b) by the torch twin on the host, the advantages then handed to the jitted update;
  (c) by NumPy on the host (the tests' oracle), then handed over, as Tunix and TRL do.

The variants and the update alone run interleaved in one process (rotating order), each
from the same initial policy, every step ending in ``block_until_ready``; (a)'s rewards
jitted alone are timed right after every step (4 samples per step); x64 off (JAX's
default).  Writes ``step.json`` (``--out DIR``).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

from bench import output

LABELS = {
    "jax_in_step": "(a) zero_jax inside the jitted update",
    "torch_host": "(b) zero_torch on the host, then the jitted update",
    "numpy_host": "(c) NumPy on the host, then the jitted update",
    "update_only": "the update alone (advantages given)",
    "rewards_only": "(a)'s rewards jitted alone",
}


@dataclass(frozen=True)
class Config:
    prompts: int = 64
    samples: int = 8
    T: int = 64
    hidden: int = 512
    vocab: int = 1024
    steps: int = 8
    seed: int = 0


QUICK = Config(prompts=4, samples=4, T=8, hidden=32, vocab=64, steps=2)


def replies(cfg: Config, rng: np.random.Generator) -> list[list[str]]:
    """Per prompt a right answer reached with its own probability, a few wrong ones, and
    now and then a reply without a box."""
    rows = []
    for _ in range(cfg.prompts):
        p, right, wrong = rng.uniform(0.05, 0.95), int(rng.integers(1000)), rng.integers(0, 1000, 3)
        row = []
        for _ in range(cfg.samples):
            u = rng.random()
            row.append("I am not sure." if u < 0.05 else f"so \\boxed{{{right}}}"
                       if u < 0.05 + 0.95 * p else f"thus \\boxed{{{int(rng.choice(wrong))}}}")
        rows.append(row)
    return rows


def build(cfg: Config) -> dict[str, Any]:
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # as in bench.worker
    import jax
    import jax.numpy as jnp
    import optax
    import torch

    import parity_tests.cases as oracle
    import zero_jax
    import zero_text
    import zero_torch

    rng = np.random.default_rng(cfg.seed)
    answers, k = zero_text.group_answers(replies(cfg, rng))
    answers = np.asarray(answers, np.int32)
    n = cfg.prompts * cfg.samples
    lengths = rng.integers(cfg.T // 4, cfg.T + 1, size=(n, 1))
    dev = [jax.device_put(x) for x in (
        rng.standard_normal((n, cfg.T, cfg.hidden), np.float32),
        rng.integers(0, cfg.vocab, size=(n, cfg.T)).astype(np.int32),
        (np.arange(cfg.T) < lengths).astype(np.float32))]
    opt = optax.adam(1e-3)

    def loss_fn(w: Any, adv: Any, hidden: Any, tokens: Any, mask: Any) -> Any:
        logp = jax.nn.log_softmax(hidden @ w, axis=-1)
        tok = jnp.take_along_axis(logp, tokens[..., None], axis=-1)[..., 0]
        ratio = jnp.exp(tok - jax.lax.stop_gradient(tok))  # on-policy GRPO surrogate
        return -jnp.sum(ratio * adv[:, None] * mask) / jnp.maximum(jnp.sum(mask), 1.0)

    def apply(w: Any, state: Any, adv: Any, *data: Any) -> Any:
        grad = jax.grad(loss_fn)(w, adv, *data)
        updates, state = opt.update(grad, state, w)
        return optax.apply_updates(w, updates), state

    def rewards_jax(a: Any) -> Any:
        labels, consistency = zero_jax.consensus(a, k)
        rewards = zero_jax.pseudo_rewards(a, labels)
        keep = jnp.broadcast_to(zero_jax.curriculum_mask(consistency)[:, None], rewards.shape)
        return zero_jax.group_advantages(rewards, keep).reshape(-1).astype(jnp.float32)

    def rewards_torch(a: np.ndarray) -> np.ndarray:
        t = torch.from_numpy(a)
        labels, consistency = zero_torch.consensus(t, k)
        rewards = zero_torch.pseudo_rewards(t, labels)
        keep = zero_torch.curriculum_mask(consistency)[:, None].expand_as(rewards)
        return zero_torch.group_advantages(rewards, keep).reshape(-1).float().numpy()

    def rewards_numpy(a: np.ndarray) -> np.ndarray:
        labels, consistency = oracle.consensus(a, k)
        rewards = oracle.pseudo_rewards(a, np.asarray(labels, np.int64))
        keep = np.broadcast_to(oracle.curriculum_mask(consistency)[:, None], rewards.shape)
        return oracle.group_advantages(rewards, keep).reshape(-1).astype(np.float32)

    w0 = (rng.standard_normal((cfg.hidden, cfg.vocab)) / np.sqrt(cfg.hidden)).astype(np.float32)
    return {"jax": jax, "answers": answers, "num_answers": int(k), "data": dev,
            "state": {name: (jax.device_put(w0), opt.init(w0)) for name in LABELS},
            "in_jit": jax.jit(lambda w, s, a, *d: apply(w, s, rewards_jax(a), *d)),
            "update": jax.jit(apply), "rewards_only": jax.jit(rewards_jax),
            "host": {"torch_host": rewards_torch, "numpy_host": rewards_numpy},
            "adv": rewards_numpy(answers)}


def one(f: dict[str, Any], name: str) -> tuple[float, float | None]:
    """One step of variant ``name``: (step seconds, host rewards seconds or None)."""
    block, a, w_s = f["jax"].block_until_ready, f["answers"], f["state"][name]
    t0 = time.perf_counter()
    if name == "rewards_only":
        block(f["rewards_only"](a))
        return time.perf_counter() - t0, None
    if name == "jax_in_step":
        f["state"][name] = block(f["in_jit"](*w_s, a, *f["data"]))
        return time.perf_counter() - t0, None
    adv = f["adv"] if name == "update_only" else f["host"][name](a)
    t1 = time.perf_counter()
    f["state"][name] = block(f["update"](*w_s, adv, *f["data"]))
    return time.perf_counter() - t0, (t1 - t0 if name != "update_only" else None)


def measure(cfg: Config) -> dict[str, Any]:
    f = build(cfg)
    names = list(LABELS)
    for name in names:  # trace, compile
        one(f, name)
    steps: dict[str, list[float]] = {n: [] for n in names}
    host: dict[str, list[float]] = {n: [] for n in names}
    heavy = names[:-1]  # (a)'s rewards alone are timed right after every step
    for i in range(cfg.steps):
        for name in heavy[i % len(heavy):] + heavy[: i % len(heavy)]:
            t, h = one(f, name)
            steps[name].append(t)
            if h is not None:
                host[name].append(h)
            steps["rewards_only"].append(one(f, "rewards_only")[0])
    med = {n: float(np.median(v)) * 1e6 for n, v in steps.items()}
    variants = {}
    for name in ("jax_in_step", "torch_host", "numpy_host"):
        rw = float(np.median(host[name])) * 1e6 if host[name] else med["rewards_only"]
        variants[name] = {"label": LABELS[name], "step_us": med[name],
                          "step_min_us": min(steps[name]) * 1e6, "rewards_us": rw,
                          "rewards_share": rw / med[name]}
    return {"config": {**asdict(cfg), "num_answers": f["num_answers"]}, "variants": variants,
            "update_only_us": med["update_only"], "rewards_only_us": med["rewards_only"]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.step", description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="a tiny configuration (seconds)")
    ap.add_argument("--steps", type=int, help="timed steps per variant (default 8)")
    output.add_arguments(ap, "step.json")
    opts = ap.parse_args(argv)
    out = output.directory(opts, quick=opts.quick)
    cfg = QUICK if opts.quick else Config()
    cfg = replace(cfg, steps=opts.steps or cfg.steps)
    t0, load0 = time.time(), [round(x, 2) for x in os.getloadavg()]
    result = measure(cfg)
    result.update(quick=opts.quick, seconds=round(time.time() - t0, 1), loadavg_start=load0,
                  loadavg_end=[round(x, 2) for x in os.getloadavg()])
    (out / "step.json").write_text(json.dumps(result, indent=1) + "\n")
    for v in result["variants"].values():
        print(f"{v['label']}: step {v['step_us'] / 1e3:.2f} ms, rewards {v['rewards_us']:.0f} µs "
              f"({100 * v['rewards_share']:.3f} %)")
    output.finish(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
