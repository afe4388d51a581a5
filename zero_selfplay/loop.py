"""The R-Zero rounds: a Challenger phase, then a Solver phase, then evaluation.

Every reward and advantage comes from the library: ``consensus``,
``curriculum_mask``, ``pseudo_rewards``, ``challenger_rewards`` and
``group_advantages`` are looked up on a ``rewards`` object (the ``zero_jax``
module unless a caller injects another, e.g. a spy in the tests).  Each phase is
one jitted function with ``lax.scan`` over its steps; the arms share one compiled
program because an arm's choices are traced flags, not Python branches.

Calibration (every phase): the Solver as it is at the start of the phase votes on
the run's labelled calibration slice, and :func:`labels.fit_calibration` fits the
probability that a label is right against its score (per task).

Challenger phase (``challenger_steps`` steps): propose ``challenger_batch``
templates, draw a cart per proposal, let the frozen Solver answer each ``votes``
times, and score the proposals with ``challenger_rewards`` (R-Zero's uncertainty
from the vote share of final answers, template ids as dense cluster ids, the
format gate as ``valid``), multiplied by the calibrated reliability of the cart's
label when ``challenger_reward="reliable"``: the Challenger is paid for questions
that are hard *and* labelable.  Carts that are evaluation carts are masked out of
the advantages.  One policy-gradient step per batch.

Solver phase: the Challenger proposes ``proposals`` carts once; the Solver as it
is at the start of the phase votes ``votes`` times on each (``labels`` method:
majority of final answers, or per-item votes).  The kept set is the format gate,
minus evaluation carts, AND the band: ``curriculum_mask`` on the calibrated
reliability (``band="calibrated"``: reliability in ``[threshold, 1]``) or on the
raw vote share (``band="share"``: ``[band_low, band_high]``).  With ``abduce``
every kept deduction cart also yields an abduction cart (one field hidden, the
voted total shown).  Then ``solver_steps`` GRPO steps: draw ``solver_batch``
kept questions, sample ``group`` fresh chains each, reward them with
``pseudo_rewards`` against the frozen labels, normalise with ``group_advantages``
(optionally scaled by the reliability), and ascend the advantage-weighted
log-probability minus ``kl`` times the exact per-step KL to the Solver at the
start of the round (one update per batch, so the GRPO ratio is 1).

Arms (see :data:`ARMS`): ``coevolve`` (the method), ``seed_only`` (the same
number of updates on the labelled seed set and calibration slice with their true
labels and no band -- the control), ``oracle`` (true answers instead of votes on
the same questions: an upper bound on label quality), ``uniform`` (an untrained,
uniform Challenger) and ``no_band`` (every well-formed proposal kept, every
deduction cart turned into an abduction cart as well).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx

import zero_jax
from zero_selfplay import challenger as C
from zero_selfplay import domain as D
from zero_selfplay import labels as L
from zero_selfplay import solver as S

__all__ = [
    "ARMS",
    "FRESH_FROM",
    "SMOKE",
    "Arm",
    "Config",
    "Phases",
    "compiled_phases",
    "run",
    "run_seed",
]

#: Seeds from here on are fresh: kept for the pre-registered run (``--fresh``).
FRESH_FROM = 200


@dataclass(frozen=True)
class Config:
    """Every setting of a run (all static: a configuration compiles once).

    The defaults are the configuration frozen on tuning seeds (0-99) before the
    pre-registered fresh run; see ``zero_selfplay/README.md``.
    """

    # base model
    seed_size: int = 512  # labelled seed carts (half deduction, half abduction)
    calib_size: int = 256  # labelled calibration slice, held out from the base model
    dim: int = 64
    hidden: int = 128
    pretrain_steps: int = 3000
    pretrain_batch: int = 128
    pretrain_lr: float = 1e-3
    # rounds
    rounds: int = 3
    votes: int = 10  # K solver samples per proposal for consensus
    labels: str = "item"  # "item" (per-item votes) or "cart" (majority of final answers)
    # challenger phase
    challenger_steps: int = 20
    challenger_batch: int = 64
    challenger_lr: float = 0.1
    challenger_reward: str = "reliable"  # "reliable" (uncertainty x reliability) or "uncertainty"
    strength: float = 1.0  # repetition-penalty weight
    eval_range: bool = True  # lever: only templates inside the evaluation range
    quota: float | None = 1.0  # lever: share of deduction proposals (None: free)
    # solver phase
    proposals: int = 1024  # questions voted on per round
    solver_steps: int = 100  # GRPO updates per round
    solver_batch: int = 32  # questions per update
    group: int = 16  # fresh samples per question
    solver_lr: float = 4e-4
    band: str = "calibrated"  # "calibrated" (reliability >= threshold) or "share"
    threshold: float = 0.9  # calibrated band: least reliability kept
    band_low: float = 0.5  # share band
    band_high: float = 1.0
    abduce: bool = True  # kept deduction carts also become abduction carts
    abduce_share: float = 0.25  # share of each update's questions drawn from those carts
    weight_advantages: bool = False  # scale advantages by the reliability
    step_rewards: bool = True  # per-step rewards from per-item labels (needs labels="item")
    kl: float = 0.2  # KL anchor to the Solver at the start of the round
    # evaluation
    eval_samples: int = 10


#: A tiny configuration for CI (``--smoke``): same levers, far fewer steps.
SMOKE = dataclasses.replace(
    Config(), seed_size=128, calib_size=64, hidden=64, pretrain_steps=300, rounds=1,
    challenger_steps=3, challenger_batch=16, proposals=32, solver_steps=4, solver_batch=8,
    group=4, votes=4, eval_samples=4,
)  # fmt: skip


@dataclass(frozen=True)
class Arm:
    """How an arm differs from co-evolution."""

    name: str
    data: str = "challenger"  # "challenger" proposals or the labelled "seed" set
    labels: str = "vote"  # "vote" (pseudo-labels) or "true"
    challenger: str = "trained"  # "trained" or "uniform" (never updated)
    band: bool = True  # band on the labels, else keep every valid proposal


ARMS: dict[str, Arm] = {
    "coevolve": Arm("coevolve"),
    "seed_only": Arm("seed_only", data="seed", labels="true", challenger="uniform", band=False),
    "oracle": Arm("oracle", labels="true"),
    "uniform": Arm("uniform", challenger="uniform"),
    "no_band": Arm("no_band", band=False),
}


class Flags(NamedTuple):
    """An arm as traced values, so every arm runs the same compiled phase."""

    seed_data: jax.Array
    true_labels: jax.Array
    band: jax.Array
    abduce: jax.Array


def _flags(arm: Arm, cfg: Config) -> Flags:
    return Flags(
        jnp.asarray(arm.data == "seed"),
        jnp.asarray(arm.labels == "true"),
        jnp.asarray(arm.band),
        jnp.asarray(cfg.abduce and arm.data != "seed"),
    )


def _as_jax(c: D.Carts) -> D.Carts:
    return D.Carts(*(jnp.asarray(x, jnp.int32) for x in c))


def _f32(x: jax.Array) -> jax.Array:
    return jnp.asarray(x, jnp.float32)


def _concat(a: D.Carts, b: D.Carts) -> D.Carts:
    return D.Carts(*(jnp.concatenate([x, y]) for x, y in zip(a, b, strict=True)))


class Phases:
    """The jitted phases of one configuration, built around a ``rewards`` object."""

    def __init__(self, cfg: Config, rewards: Any = None):
        for name, allowed in (("labels", ("item", "cart")), ("band", ("calibrated", "share")),
                              ("challenger_reward", ("reliable", "uncertainty"))):  # fmt: skip
            if getattr(cfg, name) not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {getattr(cfg, name)!r}")
        if cfg.step_rewards and cfg.labels != "item":
            raise ValueError("step_rewards needs per-item labels (labels='item')")
        self.cfg = cfg
        self.rw = zero_jax if rewards is None else rewards
        self.solver_def, _ = nnx.split(self._solver(0))
        self.chal_def, _ = nnx.split(C.TemplatePolicy())
        self.pre_opt = optax.adam(cfg.pretrain_lr)
        self.solver_opt = optax.adam(cfg.solver_lr)
        self.chal_opt = optax.adam(cfg.challenger_lr)
        allowed = dict(eval_range=cfg.eval_range, quota=cfg.quota)
        self.allowed_chal = C.allowed_templates(cfg.challenger_batch, **allowed)
        self.allowed_prop = C.allowed_templates(cfg.proposals, **allowed)
        # chain length: the most items any cart of this configuration can have
        usable = self.allowed_chal.any(0) | self.allowed_prop.any(0)
        self.eval_steps = max(D.EVAL_RANGE["n_items"])
        self.steps = max(int(D.TEMPLATE_ITEMS[usable].max()), self.eval_steps)
        self.held = jnp.asarray(D.eval_hashes())
        self.pretrain = jax.jit(self._pretrain)
        self.evaluate = jax.jit(self._evaluate)
        self.challenger_phase = jax.jit(self._challenger_phase)
        self.solver_phase = jax.jit(self._solver_phase)

    # ------------------------------------------------------------------ helpers
    def _solver(self, seed: int) -> S.ChainSolver:
        return S.ChainSolver(dim=self.cfg.dim, hidden=self.cfg.hidden, rngs=nnx.Rngs(seed))

    def init_solver(self, seed: int) -> Any:
        return nnx.split(self._solver(seed))[1]

    def init_challenger(self) -> Any:
        return nnx.split(C.TemplatePolicy())[1]

    def _logits(self, chal_params) -> jax.Array:
        return nnx.merge(self.chal_def, chal_params)()

    def _vote(self, solver, carts: D.Carts, key, steps: int) -> L.Votes:
        trace, answers = S.sample_answers(solver, carts, key, self.cfg.votes, steps)
        return L.vote(self.rw, trace, answers, carts.task, self.cfg.labels)

    def _calibrate(self, solver, calib: D.Carts, key) -> tuple[jax.Array, dict]:
        """Fit label accuracy against score on the calibration slice."""
        v = self._vote(solver, calib, key, self.eval_steps)
        right = v.label == calib.answer
        weights = L.fit_calibration(v.score, right, calib.task)
        by_task = jax.nn.one_hot(calib.task, 2, dtype=jnp.float32)
        stats = {
            "weights": weights,
            "label_accuracy_by_task": jnp.sum(by_task * right[:, None], 0)
            / jnp.maximum(jnp.sum(by_task, 0), 1),
        }
        return weights, stats

    # --------------------------------------------------------------- pretraining
    def _pretrain(self, params, seed_carts: D.Carts, key):
        """Supervised chains on the labelled seed set (the base model)."""
        cfg, opt = self.cfg, self.pre_opt
        size = seed_carts.n.shape[0]

        def loss_fn(p, c, k):
            trace = S.teacher_trace(c, k, self.eval_steps)
            return -jnp.mean(S.trace_logp(nnx.merge(self.solver_def, p), trace))

        def step(carry, k):
            p, o = carry
            k1, k2 = jax.random.split(k)
            idx = jax.random.randint(k1, (cfg.pretrain_batch,), 0, size)
            loss, g = jax.value_and_grad(loss_fn)(p, seed_carts.take(idx), k2)
            u, o = opt.update(g, o, p)
            return (optax.apply_updates(p, u), o), loss

        keys = jax.random.split(key, cfg.pretrain_steps)
        (params, _), losses = jax.lax.scan(step, (params, opt.init(params)), keys)
        return params, losses

    # ---------------------------------------------------------------- evaluation
    def _evaluate(self, params, sets: dict[str, D.Carts], key):
        model = nnx.merge(self.solver_def, params)
        out = {}
        for i, (name, c) in enumerate(sorted(sets.items())):
            acc = S.accuracy(model, c, jax.random.fold_in(key, i), self.cfg.eval_samples,
                             self.rw.consensus, self.eval_steps)  # fmt: skip
            out[name] = {k: _f32(v) for k, v in acc.items()}
        return out

    # ---------------------------------------------------------- challenger phase
    def _challenger_phase(self, chal_params, solver_params, calib, key):
        cfg, rw, opt = self.cfg, self.rw, self.chal_opt
        solver = nnx.merge(self.solver_def, solver_params)
        allowed = jnp.asarray(self.allowed_chal)
        kc, key = jax.random.split(key)
        weights, _ = self._calibrate(solver, calib, kc)

        def step(carry, k):
            cp, o = carry
            k1, k2, k3 = jax.random.split(k, 3)
            ids = C.propose(self._logits(cp), allowed, k1)
            carts = D.sample_carts(k2, ids)
            valid = D.well_formed(carts)
            usable = ~D.held_out(carts, self.held)
            v = self._vote(solver, carts, k3, self.steps)
            reward = rw.challenger_rewards(
                v.consistency, ids, valid, cfg.strength, num_clusters=D.NUM_TEMPLATES
            )
            reliable = L.reliability(weights, v.score, carts.task)
            if cfg.challenger_reward == "reliable":
                reward = reward * reliable
            adv = rw.group_advantages(reward[None, :], usable[None, :])[0]

            def loss_fn(p):
                return -jnp.mean(adv * C.log_prob(self._logits(p), allowed, ids))

            g = jax.grad(loss_fn)(cp)
            u, o = opt.update(g, o, cp)
            n_ok = jnp.maximum(jnp.sum(valid), 1)
            stats = {
                "reward": _f32(jnp.mean(reward)),
                "invalid": _f32(jnp.mean(~valid)),
                "held_out": _f32(jnp.mean(~usable)),
                "consistency": _f32(jnp.sum(jnp.where(valid, v.consistency, 0)) / n_ok),
                "reliability": _f32(jnp.sum(jnp.where(valid, reliable, 0)) / n_ok),
            }
            return (optax.apply_updates(cp, u), o), stats

        keys = jax.random.split(key, cfg.challenger_steps)
        (chal_params, _), stats = jax.lax.scan(step, (chal_params, opt.init(chal_params)), keys)
        return chal_params, stats

    # -------------------------------------------------------------- solver phase
    def question_set(self, chal_params, solver, seed_carts, calib, key, flags: Flags):
        """The phase's questions (proposals, then derived abduction carts), their
        frozen labels, reliability and kept mask, and diagnostics inputs."""
        cfg, rw = self.cfg, self.rw
        k0, k1, k2, k3, k4, k5 = jax.random.split(key, 6)
        weights, calib_stats = self._calibrate(solver, calib, k0)
        ids = C.propose(self._logits(chal_params), jnp.asarray(self.allowed_prop), k1)
        proposed = D.sample_carts(k2, ids)
        pick = jax.random.randint(k3, (cfg.proposals,), 0, seed_carts.n.shape[0])
        labelled = seed_carts.take(pick)
        carts = D.Carts(*jax.tree.map(lambda s, p: jnp.where(flags.seed_data, s, p),
                                      labelled, proposed))  # fmt: skip
        valid = D.well_formed(carts)
        usable = valid & ~D.held_out(carts, self.held)
        v = self._vote(solver, carts, k4, self.steps)
        reliable = L.reliability(weights, v.score, carts.task)
        if cfg.band == "calibrated":
            in_band = rw.curriculum_mask(reliable, cfg.threshold, 1.0)
        else:
            in_band = rw.curriculum_mask(v.score, cfg.band_low, cfg.band_high)
        keep = usable & (in_band | ~flags.band)
        truth = jnp.clip(carts.answer, 0, D.VOCAB - 1).astype(jnp.int32)
        labels = jnp.where(flags.true_labels, truth, v.label)
        true_items = jnp.where(jnp.arange(D.N_MAX)[None, :] < carts.n[:, None],
                               carts.price * carts.quantity, 0)  # fmt: skip
        items = jnp.where(flags.true_labels, true_items, v.items).astype(jnp.int32)
        # abduction from (confident) deduction: show the label as the total
        derived, d_labels = L.derive_abduction(carts, labels, k5)
        d_usable = D.well_formed(derived) & ~D.held_out(derived, self.held)
        d_keep = flags.abduce & keep & (carts.task == D.DEDUCTION) & d_usable
        pool = _concat(carts, derived)
        return {
            "carts": pool,
            "labels": jnp.concatenate([labels, d_labels]),
            "items": jnp.concatenate([items, items]),
            # is the vote-based label right? (a derived cart's is iff its source's vote was)
            "vote_right": jnp.concatenate([v.label == carts.answer, v.label == carts.answer]),
            "keep": jnp.concatenate([keep, d_keep]),
            "valid": jnp.concatenate([valid, d_usable]),
            "held": jnp.concatenate([valid & ~usable, jnp.zeros_like(valid)]),
            "score": jnp.concatenate([v.score, v.score]),
            "reliability": jnp.concatenate([reliable, reliable]),
            "proposed": jnp.concatenate([jnp.ones_like(valid), jnp.zeros_like(valid)]),
            "calibration": calib_stats,
        }

    def _diagnostics(self, q: dict) -> dict:
        k = self.cfg.votes
        c, keep, proposed = q["carts"], q["keep"], q["proposed"]
        right = q["vote_right"]  # whatever labels the arm trains on
        valid = q["valid"] & proposed
        share = jnp.clip(jnp.round(q["score"] * k).astype(jnp.int32), 1, k)
        one_hot = jax.nn.one_hot(share - 1, k, dtype=jnp.float32)
        tasks = jax.nn.one_hot(c.task, 2, dtype=jnp.float32)
        rel_bin = jnp.clip(jnp.floor(q["reliability"] * 10).astype(jnp.int32), 0, 9)
        rel_hot = jax.nn.one_hot(rel_bin, 10, dtype=jnp.float32)
        ded = valid & (c.task == D.DEDUCTION)
        return {
            "bin_count": jnp.sum(one_hot * valid[:, None], 0),
            "bin_correct": jnp.sum(one_hot * (valid & right)[:, None], 0),
            "reliability_count": jnp.sum(rel_hot * ded[:, None], 0),
            "reliability_correct": jnp.sum(rel_hot * (ded & right)[:, None], 0),
            "task_count": jnp.sum(tasks * proposed[:, None], 0),
            "items_count": jnp.sum(jax.nn.one_hot(c.n, D.N_MAX + 1) * proposed[:, None], 0),
            "accepted_by_task": jnp.sum(tasks * keep[:, None], 0),
            "accepted": _f32(jnp.sum(keep)),
            "accepted_proposals": _f32(jnp.sum(keep & proposed)),
            "derived_abduction": _f32(jnp.sum(keep & ~proposed)),
            "invalid": _f32(jnp.sum(~q["valid"] & proposed)),
            "held_out": _f32(jnp.sum(q["held"])),
            "accepted_label_correct": _f32(jnp.sum(keep & right)),
            "accepted_label_correct_by_task": jnp.sum(tasks * (keep & right)[:, None], 0),
            "calibration_label_accuracy": q["calibration"]["label_accuracy_by_task"],
            "calibration_weights": q["calibration"]["weights"],
        }

    def _solver_phase(self, params, opt_state, chal_params, seed_carts, calib, key, flags: Flags):
        cfg, rw, opt = self.cfg, self.rw, self.solver_opt
        kq, kt = jax.random.split(key)
        frozen = nnx.merge(self.solver_def, params)
        q = self.question_set(chal_params, frozen, seed_carts, calib, kq, flags)
        diag = self._diagnostics(q)
        carts, labels, keep = q["carts"], q["labels"], q["keep"]
        scale = q["reliability"] if cfg.weight_advantages else jnp.ones_like(q["reliability"])
        size = keep.shape[0]
        # sample proposals and derived abduction carts in the ratio of ``abduce_share``
        # (all from proposals when nothing was derived)
        part = (~q["proposed"]).astype(jnp.float32)
        n_part = jnp.stack([jnp.sum(keep & q["proposed"]), jnp.sum(keep & ~q["proposed"])])
        share = jnp.where(n_part[1] > 0, cfg.abduce_share, 0.0)
        mix = jnp.where(part > 0, share, 1.0 - share)
        weights = keep * mix / jnp.maximum(jnp.where(part > 0, n_part[1], n_part[0]), 1)
        n_keep = jnp.sum(keep)
        weights = jnp.where(n_keep > 0, weights / jnp.maximum(jnp.sum(weights), 1e-12),
                            1.0 / size)  # fmt: skip

        def step(carry, k):
            p, o = carry
            k1, k2 = jax.random.split(k)
            idx = jax.random.choice(k1, size, (cfg.solver_batch,), p=weights)
            batch = carts.take(idx)
            model = nnx.merge(self.solver_def, p)
            trace, fresh = S.sample_answers(model, batch, k2, cfg.group, self.steps)
            reward = rw.pseudo_rewards(fresh, labels[idx])
            mask = jnp.broadcast_to(keep[idx][:, None], reward.shape)
            adv = rw.group_advantages(reward, mask) * scale[idx][:, None]
            if cfg.step_rewards:
                adv = L.step_advantages(rw, trace, q["items"][idx], adv, keep[idx])
                adv = adv * scale[idx].repeat(cfg.group)[:, None]
            else:
                adv = jnp.where(trace.active, adv.reshape(-1, 1), 0.0)
            ref_logp = S.step_log_probs(frozen, trace) if cfg.kl > 0 else None

            def loss_fn(w):
                logp = S.step_log_probs(nnx.merge(self.solver_def, w), trace)
                loss = -jnp.sum(adv * S.picked_step_logp(logp, trace)) / adv.shape[0]
                if ref_logp is not None:
                    loss = loss + cfg.kl * jnp.mean(S.step_kl(logp, ref_logp, trace))
                return loss

            g = jax.grad(loss_fn)(p)
            u, o = opt.update(g, o, p)
            used = jnp.sum(mask)
            stats = {"reward": _f32(jnp.sum(jnp.where(mask, reward, 0)) / jnp.maximum(used, 1))}
            return (optax.apply_updates(p, u), o), stats

        keys = jax.random.split(kt, cfg.solver_steps)
        (params, opt_state), stats = jax.lax.scan(step, (params, opt_state), keys)
        return params, opt_state, diag, stats


# ---------------------------------------------------------------------- driver
def _host(tree):
    return jax.tree.map(lambda x: np.asarray(x).tolist(), tree)


def run_seed(
    seed: int,
    cfg: Config = Config(),
    arms: tuple[str, ...] = tuple(ARMS),
    *,
    phases: Phases | None = None,
    rewards: Any = None,
    log: Callable[[str], None] | None = None,
) -> dict:
    """Pretrain the base model of ``seed`` and run every arm from it.

    All arms share the base model and the random stream (common random numbers),
    so they differ only by what their flags change.
    """
    ph = phases or compiled_phases(cfg, rewards)
    sets = {k: _as_jax(v) for k, v in D.eval_sets().items()}
    seed_np = D.seed_set(seed, cfg.seed_size)
    calib_np = D.calibration_set(seed, cfg.calib_size, cfg.seed_size)
    seed_carts, calib = _as_jax(seed_np), _as_jax(calib_np)
    # the control trains on every labelled cart the method sees
    both = zip(seed_np, calib_np, strict=True)
    control_carts = _as_jax(D.Carts(*(np.concatenate([a, b]) for a, b in both)))
    root = jax.random.key(seed)
    t0 = time.perf_counter()
    base, losses = ph.pretrain(ph.init_solver(seed), seed_carts, jax.random.fold_in(root, 0))
    eval_key = jax.random.fold_in(root, 1)
    base_eval = _host(ph.evaluate(base, sets, eval_key))
    out = {
        "seed": seed,
        "pretrain_loss": float(np.mean(np.asarray(losses)[-100:])),
        "pretrain_seconds": time.perf_counter() - t0,
        "base": base_eval,
        "arms": {},
    }
    if log:
        log(f"seed {seed}: base model in {out['pretrain_seconds']:.1f}s  {_brief(base_eval)}")
    for name in arms:
        arm = ARMS[name]
        t1 = time.perf_counter()
        flags = _flags(arm, cfg)
        params, opt_state = base, ph.solver_opt.init(base)
        chal = ph.init_challenger()
        rounds = []
        for r in range(cfg.rounds):
            kc, ks = jax.random.split(jax.random.fold_in(jax.random.fold_in(root, 2), r))
            chal_stats = None
            if arm.challenger == "trained":
                chal, chal_stats = ph.challenger_phase(chal, params, calib, kc)
                chal_stats = {k: float(np.mean(v)) for k, v in _host(chal_stats).items()}
            params, opt_state, diag, stats = ph.solver_phase(
                params, opt_state, chal, control_carts, calib, ks, flags
            )
            evaluation = _host(ph.evaluate(params, sets, eval_key))
            rounds.append({
                "round": r + 1,
                "challenger": chal_stats,
                "solver_reward": float(np.mean(np.asarray(stats["reward"]))),
                "policy": C.probabilities(ph._logits(chal), ph.allowed_prop).tolist(),
                **_host(diag),
                "eval": evaluation,
            })  # fmt: skip
        out["arms"][name] = {"rounds": rounds, "seconds": time.perf_counter() - t1}
        if log:
            last = rounds[-1]
            kept = last["accepted_label_correct"] / max(last["accepted"], 1)
            log(f"  {name:<9} {time.perf_counter() - t1:5.1f}s  {_brief(last['eval'])}"
                f"  kept-label acc r{cfg.rounds} {kept:.3f}")  # fmt: skip
    return out


def _brief(ev: dict) -> str:
    return "  ".join(
        f"{t[:3]} g/s/m {ev[t]['greedy']:.3f}/{ev[t]['sampled']:.3f}/{ev[t]['majority']:.3f}"
        for t in ("deduction", "abduction")
    )


_COMPILED: dict[Config, Phases] = {}


def compiled_phases(cfg: Config, rewards: Any = None) -> Phases:
    """The jitted phases of ``cfg``; cached for the library's own rewards."""
    if rewards is not None:
        return Phases(cfg, rewards)
    if cfg not in _COMPILED:
        _COMPILED[cfg] = Phases(cfg)
    return _COMPILED[cfg]


def run(
    seeds: tuple[int, ...] = (0, 1, 2),
    cfg: Config = Config(),
    arms: tuple[str, ...] = tuple(ARMS),
    *,
    rewards: Any = None,
    log: Callable[[str], None] | None = None,
) -> dict:
    """Every arm for every seed; returns a JSON-ready dict."""
    t0 = time.perf_counter()
    ph = compiled_phases(cfg, rewards)
    results = [run_seed(s, cfg, arms, phases=ph, log=log) for s in seeds]
    return {
        "config": dataclasses.asdict(cfg),
        "arms": list(arms),
        "templates": [t.name for t in D.TEMPLATES],
        "seeds": results,
        "seconds": time.perf_counter() - t0,
    }
