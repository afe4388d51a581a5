"""``python -m bench.step``: what the rewards cost inside a GRPO update, three ways.

One GRPO-style update of a small policy head for a realistic batch (64 prompts × 8
samples, answer ids from ``zero_text.group_answers`` over generated boxed replies, a
linear head 512 → 1024 over 64 tokens per sample, log-probs gathered at the sampled
tokens, Adam from optax), with the rewards (consensus, pseudo-rewards, the band and group
advantages) computed

  (a) inside the one ``jax.jit`` of rewards + loss + grad + optax update, by ``zero_jax``;
  (b) on the host by the torch twin ``zero_torch``, the advantages then handed to the
      jitted update of the same policy;
  (c) on the host by NumPy (``bench.numpy_impl``), then handed over, as Tunix and TRL do.

Host arrays (the ids from text parsing, the host advantages) are passed to the jitted
calls as NumPy arrays, as a training loop does: the jitted call moves them to the device
on its C++ path.  (Through ``jax.device_put`` first, 2 KB took 100 µs, or 400-600 µs as
the first call after a step, on this 2-core VM: more than the rewards themselves.)

The variants run interleaved in one process (rotating order), each from the same
initial policy; every timed step ends in ``block_until_ready``.  A step during which
other processes used the cores (``bench.contention``) is repeated (bounded) and the
JSON records every step's contention.  Also timed, interleaved: the update alone
(on host advantages) and the jitted rewards alone (variant a's share).

  python -m bench.step              # about two minutes on 2 cores
  python -m bench.step --quick      # a tiny configuration (tests, CI)

Writes ``step.json`` and ``step.png`` to the scratch directory (``--out DIR``, or the
committed ``bench/results/`` with ``--update-committed``: :mod:`bench.output`); this
module also renders its section of bench/RESULTS.md (:func:`markdown`, :func:`headline`)
and its target (:func:`targets`), as every separately-run case does
(:mod:`bench.separate`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bench import aggregate, extras, output
from bench.contention import THRESHOLD_CORES, Probe

#: Issue 13 / 17: the rewards inside the jitted GRPO step at most this share of it.
SHARE_TARGET = 0.001
#: Calls of the jitted rewards alone timed back to back after each step's (cold) one.
WARM_CALLS = 20

LABELS = {
    "jax_in_step": "(a) zero_jax inside the jitted update",
    "torch_host": "(b) zero_torch on the host, then the jitted update",
    "numpy_host": "(c) NumPy on the host, then the jitted update",
}


@dataclass(frozen=True)
class Config:
    prompts: int = 64
    samples: int = 8
    T: int = 64
    hidden: int = 512
    vocab: int = 1024
    steps: int = 12
    warmup: int = 1
    retries: int = 2
    retry_budget_s: float = 60.0
    seed: int = 0
    num_answers: int = 0  # filled in from the generated answers


QUICK = Config(
    prompts=4, samples=4, T=8, hidden=32, vocab=64, steps=3, warmup=1, retries=1, retry_budget_s=2.0
)


# ---------------------------------------------------------------------------- inputs


def replies(cfg: Config, rng: np.random.Generator) -> list[list[str]]:
    """Boxed replies: each prompt has a right answer it reaches with its own probability
    and a few wrong ones; now and then a reply has no box."""
    rows = []
    for _ in range(cfg.prompts):
        p_right = rng.uniform(0.05, 0.95)
        right = int(rng.integers(0, 1000))
        wrong = rng.integers(0, 1000, size=3)
        row = []
        for _ in range(cfg.samples):
            u = rng.random()
            if u < 0.05:
                row.append("I am not sure.")
            elif u < 0.05 + 0.95 * p_right:
                row.append(f"so the answer is \\boxed{{{right}}}")
            else:
                row.append(f"thus \\boxed{{{int(rng.choice(wrong))}}}")
        rows.append(row)
    return rows


def inputs(cfg: Config) -> tuple[Config, dict[str, np.ndarray]]:
    import zero_text

    rng = np.random.default_rng(cfg.seed)
    answers, num_answers = zero_text.group_answers(replies(cfg, rng))
    cfg = Config(**{**asdict(cfg), "num_answers": int(num_answers)})
    n = cfg.prompts * cfg.samples
    lengths = rng.integers(cfg.T // 4, cfg.T + 1, size=(n, 1))
    data = {
        "answers": np.asarray(answers, np.int32),
        "hidden": rng.standard_normal((n, cfg.T, cfg.hidden), np.float32),
        "tokens": rng.integers(0, cfg.vocab, size=(n, cfg.T)).astype(np.int32),
        "token_mask": (np.arange(cfg.T) < lengths).astype(np.float32),
    }
    return cfg, data


# ---------------------------------------------------------------------------- the step


def build(cfg: Config) -> dict[str, Any]:
    """The jitted functions and the three host/device reward paths."""
    import jax
    import jax.numpy as jnp
    import optax
    import torch

    import zero_jax
    import zero_torch
    from bench import numpy_impl

    opt = optax.adam(1e-3)
    k = cfg.num_answers

    def loss_fn(w, hidden, tokens, token_mask, adv):
        logits = hidden @ w  # [N, T, V]
        logp = jax.nn.log_softmax(logits, axis=-1)
        tok = jnp.take_along_axis(logp, tokens[..., None], axis=-1)[..., 0]
        ratio = jnp.exp(tok - jax.lax.stop_gradient(tok))  # on-policy GRPO surrogate
        per_token = -ratio * adv[:, None] * token_mask
        return jnp.sum(per_token) / jnp.maximum(jnp.sum(token_mask), 1.0)

    def apply(w, opt_state, adv, hidden, tokens, token_mask):
        loss, grad = jax.value_and_grad(loss_fn)(w, hidden, tokens, token_mask, adv)
        updates, opt_state = opt.update(grad, opt_state, w)
        return optax.apply_updates(w, updates), opt_state, loss

    def rewards_jax(answers):
        labels, consistency = zero_jax.consensus(answers, k)
        rewards = zero_jax.pseudo_rewards(answers, labels)
        band = zero_jax.curriculum_mask(consistency)
        keep = jnp.broadcast_to(band[:, None], rewards.shape)
        return zero_jax.group_advantages(rewards, keep).reshape(-1).astype(jnp.float32)

    @jax.jit
    def step_in_jit(w, opt_state, answers, hidden, tokens, token_mask):
        return apply(w, opt_state, rewards_jax(answers), hidden, tokens, token_mask)

    update = jax.jit(apply)
    rewards_only = jax.jit(rewards_jax)

    def rewards_torch(answers: np.ndarray) -> np.ndarray:
        a = torch.from_numpy(answers)
        labels, consistency = zero_torch.consensus(a, k)
        rewards = zero_torch.pseudo_rewards(a, labels)
        band = zero_torch.curriculum_mask(consistency)
        adv = zero_torch.group_advantages(rewards, band[:, None].expand_as(rewards))
        return adv.reshape(-1).to(torch.float32).numpy()

    def rewards_numpy(answers: np.ndarray) -> np.ndarray:
        labels, consistency = numpy_impl.consensus(answers, k)
        rewards = numpy_impl.pseudo_rewards(answers, labels)
        band = numpy_impl.curriculum_mask(consistency)
        adv = numpy_impl.group_advantages(rewards, np.broadcast_to(band[:, None], rewards.shape))
        return adv.reshape(-1).astype(np.float32)

    return {
        "jax": jax,
        "opt": opt,
        "step_in_jit": step_in_jit,
        "update": update,
        "rewards_only": rewards_only,
        "rewards_torch": rewards_torch,
        "rewards_numpy": rewards_numpy,
    }


class Runner:
    """One policy per variant, all from the same initial weights; ``run(name)`` does one
    step of that variant and returns (step seconds, rewards seconds or None)."""

    def __init__(self, cfg: Config, data: dict[str, np.ndarray]):
        self.f = build(cfg)
        jax = self.f["jax"]
        self.jax = jax
        rng = np.random.default_rng(cfg.seed + 1)
        w0 = (rng.standard_normal((cfg.hidden, cfg.vocab)) / np.sqrt(cfg.hidden)).astype(np.float32)
        self.answers = data["answers"]  # host ids: they come from text parsing
        dev = {k: jax.device_put(v) for k, v in data.items() if k != "answers"}
        self.hidden, self.tokens, self.mask = dev["hidden"], dev["tokens"], dev["token_mask"]
        self.state = {}
        self.warm: list[float] = []
        for name in (*LABELS, "update_only"):
            w = jax.device_put(w0)
            self.state[name] = (w, self.f["opt"].init(w))
        # the update alone: the advantages given, on the host as in (b) and (c)
        self.adv_host = self.f["rewards_numpy"](self.answers)

    def _rewards_only(self) -> None:
        """(a)'s rewards jitted alone: the call on the host ids, block_until_ready."""
        self.jax.block_until_ready(self.f["rewards_only"](self.answers))

    def _warm_rewards(self) -> float:
        """The median of ``WARM_CALLS`` more calls of :meth:`_rewards_only`, back to back
        right after the timed one."""
        times = []
        for _ in range(WARM_CALLS):
            t0 = time.perf_counter()
            self._rewards_only()
            times.append(time.perf_counter() - t0)
        return float(np.median(times))

    def _update(self, name: str, adv) -> None:
        w, s = self.state[name]
        w, s, loss = self.f["update"](w, s, adv, self.hidden, self.tokens, self.mask)
        self.jax.block_until_ready((w, s, loss))
        self.state[name] = (w, s)

    def run(self, name: str) -> tuple[float, float | None]:
        jax = self.jax
        t0 = time.perf_counter()
        if name == "jax_in_step":
            w, s = self.state[name]
            w, s, loss = self.f["step_in_jit"](
                w, s, self.answers, self.hidden, self.tokens, self.mask
            )
            jax.block_until_ready((w, s, loss))
            self.state[name] = (w, s)
            return time.perf_counter() - t0, None
        if name == "rewards_only":
            self._rewards_only()
            t = time.perf_counter() - t0
            self.warm.append(self._warm_rewards())
            return t, t
        if name == "update_only":
            self._update(name, self.adv_host)
            return time.perf_counter() - t0, None
        host = self.f["rewards_torch"] if name == "torch_host" else self.f["rewards_numpy"]
        adv = host(self.answers)
        t1 = time.perf_counter()
        self._update(name, adv)
        return time.perf_counter() - t0, t1 - t0


def _stats(xs: list[float]) -> dict[str, float]:
    return {**aggregate.stats(xs), "max_us": float(np.max(np.asarray(xs) * 1e6))}


def measure(cfg: Config, data: dict[str, np.ndarray], log=print) -> dict[str, Any]:
    runner = Runner(cfg, data)
    names = [*LABELS, "update_only", "rewards_only"]
    t0 = time.perf_counter()
    for name in names:  # trace and compile
        runner.run(name)
    compile_s = time.perf_counter() - t0
    for _ in range(cfg.warmup):
        for name in names:
            runner.run(name)
    runner.warm.clear()  # only the timed steps' warm calls
    steps: dict[str, list[float]] = {n: [] for n in names}
    rewards: dict[str, list[float]] = {n: [] for n in names}
    chunks: list[dict[str, Any]] = []
    retry_s = 0.0
    roots = [os.getpid()]
    for i in range(cfg.steps):
        shift = i % len(names)
        for name in names[shift:] + names[:shift]:
            attempts = []
            while True:
                probe = Probe(roots).start()
                t, r = runner.run(name)
                c = probe.stop()
                attempts.append(round(float(c["foreign_cores"]), 3))
                if len(attempts) > 1:
                    retry_s += t
                if not c["contended"] or len(attempts) > cfg.retries:
                    break
                if retry_s > cfg.retry_budget_s:
                    break
            steps[name].append(t)
            if r is not None:
                rewards[name].append(r)
            chunks.append(
                {
                    "step": i,
                    "variant": name,
                    "foreign_cores": attempts,
                    "retries": len(attempts) - 1,
                    "contended": bool(c["contended"]),
                }
            )
        log(
            f"step {i + 1}/{cfg.steps}: "
            + ", ".join(f"{n} {steps[n][-1] * 1e3:.1f} ms" for n in names)
        )
    variants: dict[str, Any] = {}
    rw_only = _stats(steps["rewards_only"])
    for name, label in LABELS.items():
        st = _stats(steps[name])
        rw = _stats(rewards[name]) if rewards[name] else rw_only
        variants[name] = {
            "label": label,
            "step_us": st,
            "rewards_us": rw,
            "rewards_share": rw["median_us"] / st["median_us"],
            "samples_s": steps[name],
            "rewards_samples_s": rewards[name] or steps["rewards_only"],
        }
    upd = _stats(steps["update_only"])
    a = variants["jax_in_step"]["step_us"]["median_us"]
    warm = _stats(runner.warm)
    notes = [
        "Rewards µs: for (a) the same rewards jitted alone (the call on the host ids, which "
        "moves them to the device, and block_until_ready), an upper bound on their cost "
        "inside the fused step; for (b) and (c) the host computation, timed inside each "
        "step. Every variant hands its host arrays (ids or advantages, 2 KB) to its jitted "
        "call as NumPy arrays; `jax.device_put` first would add about 100 µs here, 400-600 "
        "µs as the first call after a step.",
        "(a)'s rewards jitted alone are timed once right after a step (the table and the "
        f"target) and then {WARM_CALLS} times back to back: {_fmt(warm['median_us'])} µs "
        f"(median of the per-run medians), {100 * warm['median_us'] / a:.3f} % of (a)'s "
        "step: the difference is what the first call after a step pays on this machine.",
        f"(a)'s step minus the update alone: {_signed(a - upd['median_us'])} µs "
        "(medians; noise of the update dominates when this is small).",
        "x64 off (JAX's default): the advantages are float32 in every variant; the policy "
        "of each variant starts from the same weights and is updated every step.",
    ]
    contended = [c for c in chunks if c["contended"]]
    return {
        "variants": variants,
        "update_only_us": upd,
        "rewards_only_us": rw_only,
        "rewards_only_warm_us": warm,
        "compile_s": compile_s,
        "notes": notes,
        "contention": {
            "threshold_cores": THRESHOLD_CORES,
            "steps": len(chunks),
            "contended_steps": len(contended),
            "retries": sum(c["retries"] for c in chunks),
            "retry_time_s": round(retry_s, 2),
            "chunks": chunks,
        },
    }


def _signed(v: float) -> str:
    return f"{v:+,.0f}"


# ---------------------------------------------------------------------------- output


def plot(result: dict[str, Any], path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    variants = result["variants"]
    names = list(variants)
    labels = [variants[n]["label"] for n in names]
    step = np.array([variants[n]["step_us"]["median_us"] for n in names]) / 1e3
    lo = step - np.array([variants[n]["step_us"]["p25_us"] for n in names]) / 1e3
    hi = np.array([variants[n]["step_us"]["p75_us"] for n in names]) / 1e3 - step
    rw = np.array([variants[n]["rewards_us"]["median_us"] for n in names])
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.0))
    y = np.arange(len(names))
    ax1.barh(y, step, xerr=[lo, hi], color=["C0", "C3", "C2"][: len(names)], capsize=4)
    ax1.barh(y, rw / 1e3, color="k", alpha=0.35, label="rewards")
    upd = result.get("update_only_us")
    if upd:
        ax1.axvline(upd["median_us"] / 1e3, color="k", ls="--", lw=1, label="update alone")
    ax1.set_yticks(y, labels, fontsize=8)
    ax1.invert_yaxis()
    ax1.set_xlabel("step time, ms (median, bars: quartiles)")
    ax1.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=2, frameon=False)
    ax1.grid(alpha=0.3, axis="x")
    ax2.barh(y, rw, color=["C0", "C3", "C2"][: len(names)])
    for yi, (r, s) in enumerate(zip(rw, step * 1e3, strict=True)):
        ax2.text(r, yi, f" {r:,.0f} µs ({100 * r / s:.2f} % of the step)", va="center", fontsize=8)
    ax2.set_yticks(y, [""] * len(names))
    ax2.invert_yaxis()
    ax2.set_xscale("log")
    ax2.set_xlabel("rewards, µs per step (median; for (a) jitted alone)")
    ax2.set_xlim(right=max(rw) * 30)
    ax2.grid(alpha=0.3, axis="x", which="both")
    cfg = result["meta"]["config"]
    fig.suptitle(
        f"GRPO step: {cfg['prompts']} prompts × {cfg['samples']} samples, head "
        f"{cfg['hidden']} → {cfg['vocab']}, T = {cfg['T']}",
        fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=72, pil_kwargs={"optimize": True})
    plt.close(fig)
    return path


def table(result: dict[str, Any]) -> str:
    lines = ["| variant | step ms | rewards µs | share |", "|---|---:|---:|---:|"]
    for v in result["variants"].values():
        st, rw = v["step_us"], v["rewards_us"]
        lines.append(
            f"| {v['label']} | {st['median_us'] / 1e3:.2f} (p25 {st['p25_us'] / 1e3:.2f}, "
            f"p75 {st['p75_us'] / 1e3:.2f}) | {rw['median_us']:,.0f} | "
            f"{100 * v['rewards_share']:.2f} % |"
        )
    upd = result["update_only_us"]
    lines.append(f"| update alone | {upd['median_us'] / 1e3:.2f} | - | - |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.step", description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="a tiny configuration (seconds)")
    output.add_arguments(ap, "step.json and step.png")
    ap.add_argument("--steps", type=int, help="timed steps per variant (default 12; quick 3)")
    ap.add_argument("--no-plot", action="store_true", help="skip step.png")
    opts = ap.parse_args(argv)
    needs = {"jax": "jax", "optax": "optax", "torch": "torch"}
    if not opts.no_plot:
        needs["matplotlib"] = "matplotlib"
    extras.require("python -m bench.step", needs)
    out = output.directory(opts, quick=opts.quick)
    cfg = QUICK if opts.quick else Config()
    if opts.steps:
        cfg = Config(**{**asdict(cfg), "steps": opts.steps})

    import jax

    from bench.__main__ import machine_info

    t_start = time.time()
    load_start = os.getloadavg()
    cfg, data = inputs(cfg)

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    result = measure(cfg, data, log)
    import optax
    import torch

    contention = result.pop("contention")
    result["meta"] = {
        "command": "python -m bench.step " + " ".join(argv if argv is not None else sys.argv[1:]),
        "quick": opts.quick,
        "config": asdict(cfg),
        "started": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t_start)),
        "duration_s": round(time.time() - t_start, 1),
        "loadavg_start": load_start,
        "loadavg_end": os.getloadavg(),
        "machine": machine_info(),
        "versions": {
            "jax": jax.__version__,
            "optax": optax.__version__,
            "torch": torch.__version__,
            "numpy": np.__version__,
        },
        "jax_x64": bool(jax.config.jax_enable_x64),
        "contention": contention,
    }
    path = out / "step.json"
    path.write_text(json.dumps(aggregate.rounded(result), indent=1) + "\n")
    print(table(result))
    if not opts.no_plot:
        print(f"wrote {plot(result, out / 'step.png')}")
    print(f"wrote {path} ({result['meta']['duration_s']:.0f} s)")
    for doc in output.finish(out):
        print(f"wrote {doc}")
    return 0


# ------------------------------------------------------------------ the report's section


def _fmt(v: float | None) -> str:
    from bench.tables import fmt

    return fmt(v)


def _num(v: Any) -> str:
    from bench.tables import num

    return num(v)


def headline(result: dict[str, Any]) -> list[str]:
    """One line: the three GRPO step variants and the rewards' share of each."""
    parts = []
    for v in (result.get("variants") or {}).values():
        st = v.get("step_us", {}).get("median_us")
        share = v.get("rewards_share")
        if st is None or share is None:
            continue
        parts.append(f"{v.get('label', '?')} {_fmt(st / 1e3)} ms ({100 * share:.2g} % rewards)")
    if not parts:
        return []
    quick = " (quick configuration)" if result.get("meta", {}).get("quick") else ""
    return [f"- GRPO step (`python -m bench.step`{quick}), medians: " + "; ".join(parts) + "."]


def targets(result: dict[str, Any] | None) -> list[dict[str, Any]]:
    """``rewards_share_of_step``: zero_jax's rewards inside the jitted update at most
    0.1 % of the step (not measured without a run, or from the quick configuration,
    whose tiny model is no GRPO step)."""
    from bench.targets import target

    share = None
    if result and not result.get("meta", {}).get("quick"):
        share = (result.get("variants", {}).get("jax_in_step") or {}).get("rewards_share")
    details: dict[str, Any] = {}
    if share is not None:
        details["rewards' share of the jitted step, %"] = round(100 * share, 3)
        rw = result["variants"]["jax_in_step"]["rewards_us"]["median_us"] if result else None
        details["rewards µs (jitted alone, an upper bound)"] = round(rw, 1) if rw else None
        warm = (result or {}).get("rewards_only_warm_us")
        if warm:
            key = f"rewards µs (jitted alone, the {WARM_CALLS} calls after it; not the target)"
            details[key] = round(warm["median_us"], 1)
    return [
        target(
            "rewards_share_of_step",
            f"zero_jax's rewards inside the jitted GRPO step at most {100 * SHARE_TARGET:g} % "
            "of it (`python -m bench.step`)",
            17,
            {"share": None if share is None else share <= SHARE_TARGET},
            details,
        )
    ]


def markdown(result: dict[str, Any], results_dir: str = "results") -> str:
    """The GRPO step section of bench/RESULTS.md (``results_dir``: where step.png is,
    relative to the document)."""
    meta = result.get("meta", {})
    cfg = meta.get("config", {})
    variants = result.get("variants", {})
    out = [
        f"`{meta.get('command', 'python -m bench.step').strip()}` (started "
        f"{meta.get('started', '?')}, {_num(meta.get('duration_s'))} s"
        + (", quick configuration" if meta.get("quick") else "")
        + f"): one GRPO update of {_num(cfg.get('prompts'))} prompts × "
        f"{_num(cfg.get('samples'))} samples (answer ids in an alphabet of "
        f"{_num(cfg.get('num_answers'))}), a linear policy head {_num(cfg.get('hidden'))} → "
        f"{_num(cfg.get('vocab'))} over {_num(cfg.get('T'))} tokens per sample, log-probs "
        "gathered at the sampled tokens, Adam (optax). The rewards are consensus, "
        "pseudo-rewards, the band (`curriculum_mask`) and group advantages. The variants run "
        f"interleaved in one process, {_num(cfg.get('steps'))} steps each.",
        "",
        "| variant | step ms | rewards µs | rewards' share of the step | step / in-jit step |",
        "|---|---:|---:|---:|---:|",
    ]
    base = (variants.get("jax_in_step") or {}).get("step_us", {}).get("median_us")
    for name, v in variants.items():
        st = v.get("step_us", {})
        rw = v.get("rewards_us", {})
        if not st:
            continue
        spread = (st["p75_us"] - st["p25_us"]) / st["median_us"] * 50
        rspread = (rw["p75_us"] - rw["p25_us"]) / rw["median_us"] * 50 if rw.get("median_us") else 0
        share = v.get("rewards_share")
        rel = f"{st['median_us'] / base:.3f}x" if base else "-"
        out.append(
            f"| {v.get('label', name)} | {_fmt(st['median_us'] / 1e3)} ±{spread:.0f}% "
            f"| {_fmt(rw.get('median_us'))} ±{rspread:.0f}% "
            f"| {f'{100 * share:.2f} %' if share is not None else '-'} "
            f"| {rel} |"
        )
    upd = result.get("update_only_us")
    if upd:
        out.append(
            f"| update alone (advantages given, on the host) | {_fmt(upd['median_us'] / 1e3)} "
            "| - | - | " + (f"{upd['median_us'] / base:.3f}x" if base else "-") + " |"
        )
    out += ["", *[f"- {note}" for note in result.get("notes", [])]]
    c = meta.get("contention") or {}
    if c:
        out.append(
            f"- Contention: {_num(c.get('contended_steps', 0))} of {_num(c.get('steps', 0))} "
            f"timed steps ran while other processes used more than "
            f"{_num(c.get('threshold_cores'))} cores; {_num(c.get('retries', 0))} repeated."
        )
    out.append(
        f"- Machine: {meta.get('machine', {}).get('cpus', '?')} × "
        f"{meta.get('machine', {}).get('cpu', '?')}; raw samples in `{results_dir}/step.json`"
    )
    out += ["", f"![step]({results_dir}/step.png)"]
    return "\n".join(out)


if __name__ == "__main__":
    raise SystemExit(main())
