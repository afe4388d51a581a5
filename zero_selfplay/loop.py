"""The R-Zero rounds: a Challenger phase, then a Solver phase, then evaluation.

Every reward and advantage comes from the library: ``consensus``,
``curriculum_mask``, ``pseudo_rewards``, ``challenger_rewards`` and
``group_advantages`` are looked up on a ``rewards`` object (the ``zero_jax``
module unless a caller injects another, e.g. a spy in the tests).  Each phase is
one jitted function with ``lax.scan`` over its steps; the arms share one compiled
program because an arm's choices are traced flags, not Python branches.

Challenger phase (``challenger_steps`` steps): propose ``challenger_batch``
templates, draw a cart per proposal, let the frozen Solver answer each ``votes``
times, take ``consistency`` from ``consensus``, score the proposals with
``challenger_rewards`` (template ids as dense cluster ids, the format gate as
``valid``), turn the scores into advantages over the batch (one group) and take
a policy-gradient step.

Solver phase: the Challenger proposes ``proposals`` carts once; the Solver as it
is at the start of the phase votes ``votes`` times on each; ``consensus`` gives
the frozen pseudo-labels and consistency, and ``curriculum_mask`` (with the
format gate) the kept set.  Then ``solver_steps`` GRPO steps: draw
``solver_batch`` kept questions, sample ``group`` fresh chains each, reward them
with ``pseudo_rewards`` against the frozen labels, normalise with
``group_advantages`` and ascend the advantage-weighted log-probability of the
chains (one update per batch, so the GRPO ratio is 1 and needs no clipping).

Arms (see :data:`ARMS`): ``coevolve`` (the method), ``seed_only`` (the same
number of updates on the labelled seed set with its true labels and no band --
the control), ``oracle`` (true answers instead of votes on the same questions: an
upper bound on label quality), ``uniform`` (an untrained, uniform Challenger) and
``no_band`` (every well-formed proposal kept).  The Challenger levers
``eval_range`` and ``quota`` restrict which templates it may propose.
"""

from __future__ import annotations

import dataclasses
import time
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
from zero_selfplay import solver as S

__all__ = ["ARMS", "SMOKE", "Arm", "Config", "Phases", "compiled_phases", "run", "run_seed"]


@dataclass(frozen=True)
class Config:
    """Every setting of a run (all static: a configuration compiles once).

    The defaults are the settings fixed on tuning seeds 0-9 before the headline
    run on seeds 100-102 (see README_SECTION.md): a Challenger kept to the
    evaluation range with a deduction-only quota, band [0.5, 1.0].
    """

    # base model
    seed_size: int = 512  # labelled seed carts (half deduction, half abduction)
    dim: int = 64
    hidden: int = 128
    pretrain_steps: int = 3000
    pretrain_batch: int = 128
    pretrain_lr: float = 1e-3
    # rounds
    rounds: int = 3
    votes: int = 10  # K solver samples per proposal for consensus
    # challenger phase
    challenger_steps: int = 20
    challenger_batch: int = 64
    challenger_lr: float = 0.1
    strength: float = 1.0  # repetition-penalty weight
    eval_range: bool = True  # lever: only templates inside the evaluation range
    quota: float | None = 1.0  # lever: share of deduction proposals (None: free)
    # solver phase
    proposals: int = 1024  # questions voted on per round
    solver_steps: int = 200  # GRPO updates per round
    solver_batch: int = 64  # questions per update
    group: int = 16  # fresh samples per question
    solver_lr: float = 2e-4
    band_low: float = 0.5
    band_high: float = 1.0
    # evaluation
    eval_samples: int = 10


#: A tiny configuration for CI (``--smoke``): same levers, far fewer steps.
SMOKE = dataclasses.replace(
    Config(), seed_size=128, hidden=64, pretrain_steps=300, rounds=1, challenger_steps=3,
    challenger_batch=16, proposals=32, solver_steps=4, solver_batch=8, group=4, votes=4,
    eval_samples=4,
)  # fmt: skip


@dataclass(frozen=True)
class Arm:
    """How an arm differs from co-evolution."""

    name: str
    data: str = "challenger"  # "challenger" proposals or the labelled "seed" set
    labels: str = "vote"  # "vote" (consensus pseudo-labels) or "true"
    challenger: str = "trained"  # "trained" or "uniform" (never updated)
    band: bool = True  # curriculum band on consistency, else keep every valid proposal


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
    low: jax.Array
    high: jax.Array


def _flags(arm: Arm, cfg: Config) -> Flags:
    low, high = (cfg.band_low, cfg.band_high) if arm.band else (0.0, 1.0)
    return Flags(
        jnp.asarray(arm.data == "seed"),
        jnp.asarray(arm.labels == "true"),
        jnp.asarray(low, jnp.float32),
        jnp.asarray(high, jnp.float32),
    )


def _as_jax(c: D.Carts) -> D.Carts:
    return D.Carts(*(jnp.asarray(x, jnp.int32) for x in c))


def _f32(x: jax.Array) -> jax.Array:
    return jnp.asarray(x, jnp.float32)


class Phases:
    """The jitted phases of one configuration, built around a ``rewards`` object."""

    def __init__(self, cfg: Config, rewards: Any = None):
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
        self.pretrain = jax.jit(self._pretrain)
        self.evaluate = jax.jit(self._evaluate)
        self.challenger_phase = jax.jit(self._challenger_phase)
        self.solver_phase = jax.jit(self._solver_phase)

    # ------------------------------------------------------------------ helpers
    def _solver(self, seed: int) -> S.ChainSolver:
        return S.ChainSolver(dim=self.cfg.dim, hidden=self.cfg.hidden, rngs=nnx.Rngs(seed))

    def init_solver(self, seed: int):
        return nnx.split(self._solver(seed))[1]

    def init_challenger(self):
        return nnx.split(C.TemplatePolicy())[1]

    def _logits(self, chal_params) -> jax.Array:
        return nnx.merge(self.chal_def, chal_params)()

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
    def _challenger_phase(self, chal_params, solver_params, key):
        cfg, rw, opt = self.cfg, self.rw, self.chal_opt
        solver = nnx.merge(self.solver_def, solver_params)
        allowed = jnp.asarray(self.allowed_chal)

        def step(carry, k):
            cp, o = carry
            k1, k2, k3 = jax.random.split(k, 3)
            ids = C.propose(self._logits(cp), allowed, k1)
            carts = D.sample_carts(k2, ids)
            valid = D.well_formed(carts)
            _, answers = S.sample_answers(solver, carts, k3, cfg.votes, self.steps)
            _, consistency = rw.consensus(answers, D.VOCAB)
            reward = rw.challenger_rewards(
                consistency, ids, valid, cfg.strength, num_clusters=D.NUM_TEMPLATES
            )
            adv = rw.group_advantages(reward[None, :])[0]

            def loss_fn(p):
                return -jnp.mean(adv * C.log_prob(self._logits(p), allowed, ids))

            g = jax.grad(loss_fn)(cp)
            u, o = opt.update(g, o, cp)
            stats = {
                "reward": _f32(jnp.mean(reward)),
                "invalid": _f32(jnp.mean(~valid)),
                "consistency": _f32(jnp.sum(jnp.where(valid, consistency, 0)) /
                                    jnp.maximum(jnp.sum(valid), 1)),
            }  # fmt: skip
            return (optax.apply_updates(cp, u), o), stats

        keys = jax.random.split(key, cfg.challenger_steps)
        (chal_params, _), stats = jax.lax.scan(step, (chal_params, opt.init(chal_params)), keys)
        return chal_params, stats

    # -------------------------------------------------------------- solver phase
    def _questions(self, chal_params, solver, seed_carts, key, flags: Flags):
        """The phase's question set, frozen labels and kept mask."""
        cfg, rw = self.cfg, self.rw
        k1, k2, k3, k4 = jax.random.split(key, 4)
        ids = C.propose(self._logits(chal_params), jnp.asarray(self.allowed_prop), k1)
        proposed = D.sample_carts(k2, ids)
        pick = jax.random.randint(k3, (cfg.proposals,), 0, seed_carts.n.shape[0])
        labelled = seed_carts.take(pick)
        carts = jax.tree.map(lambda s, p: jnp.where(flags.seed_data, s, p), labelled, proposed)
        carts = D.Carts(*carts)
        valid = D.well_formed(carts)
        _, answers = S.sample_answers(solver, carts, k4, cfg.votes, self.steps)
        votes, consistency = rw.consensus(answers, D.VOCAB)
        keep = valid & rw.curriculum_mask(consistency, flags.low, flags.high)
        truth = jnp.clip(carts.answer, 0, D.VOCAB - 1).astype(jnp.int32)
        labels = jnp.where(flags.true_labels, truth, votes.astype(jnp.int32))
        return carts, valid, votes, consistency, keep, labels

    def _diagnostics(self, carts, valid, votes, consistency, keep):
        k = self.cfg.votes
        right = valid & (votes == carts.answer)
        share = jnp.clip(jnp.round(consistency * k).astype(jnp.int32), 1, k)
        one_hot = jax.nn.one_hot(share - 1, k, dtype=jnp.float32)
        tasks = jax.nn.one_hot(carts.task, 2, dtype=jnp.float32)
        items = jax.nn.one_hot(carts.n, D.N_MAX + 1, dtype=jnp.float32)
        return {
            "bin_count": jnp.sum(one_hot * valid[:, None], 0),
            "bin_correct": jnp.sum(one_hot * right[:, None], 0),
            "task_count": jnp.sum(tasks, 0),
            "items_count": jnp.sum(items, 0),
            "accepted_by_task": jnp.sum(tasks * keep[:, None], 0),
            "accepted": _f32(jnp.sum(keep)),
            "invalid": _f32(jnp.sum(~valid)),
            "accepted_label_correct": _f32(jnp.sum(keep & right)),
            "accepted_label_correct_by_task": jnp.sum(tasks * (keep & right)[:, None], 0),
        }

    def _solver_phase(self, params, opt_state, chal_params, seed_carts, key, flags: Flags):
        cfg, rw, opt = self.cfg, self.rw, self.solver_opt
        kq, kt = jax.random.split(key)
        frozen = nnx.merge(self.solver_def, params)
        carts, valid, votes, consistency, keep, labels = self._questions(
            chal_params, frozen, seed_carts, kq, flags
        )
        diag = self._diagnostics(carts, valid, votes, consistency, keep)
        n_keep = jnp.sum(keep)
        weights = jnp.where(n_keep > 0, keep / jnp.maximum(n_keep, 1), 1.0 / cfg.proposals)

        def step(carry, k):
            p, o = carry
            k1, k2 = jax.random.split(k)
            idx = jax.random.choice(k1, cfg.proposals, (cfg.solver_batch,), p=weights)
            batch = carts.take(idx)
            model = nnx.merge(self.solver_def, p)
            trace, fresh = S.sample_answers(model, batch, k2, cfg.group, self.steps)
            reward = rw.pseudo_rewards(fresh, labels[idx])
            mask = jnp.broadcast_to(keep[idx][:, None], reward.shape)
            adv = rw.group_advantages(reward, mask).reshape(-1)

            def loss_fn(q):
                logp = S.trace_logp(nnx.merge(self.solver_def, q), trace)
                return -jnp.sum(adv * logp) / adv.shape[0]

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
    log=None,
) -> dict:
    """Pretrain the base model of ``seed`` and run every arm from it.

    All arms share the base model and the random stream (common random numbers),
    so they differ only by what their flags change.
    """
    ph = phases or compiled_phases(cfg, rewards)
    sets = {k: _as_jax(v) for k, v in D.eval_sets().items()}
    seed_carts = _as_jax(D.seed_set(seed, cfg.seed_size))
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
                chal, chal_stats = ph.challenger_phase(chal, params, kc)
                chal_stats = {k: float(np.mean(v)) for k, v in _host(chal_stats).items()}
            params, opt_state, diag, stats = ph.solver_phase(
                params, opt_state, chal, seed_carts, ks, flags
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
            log(f"  {name:<9} {time.perf_counter() - t1:5.1f}s  {_brief(rounds[-1]['eval'])}")
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
    seeds=(100, 101, 102),
    cfg: Config = Config(),
    arms: tuple[str, ...] = tuple(ARMS),
    *,
    rewards: Any = None,
    log=None,
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
