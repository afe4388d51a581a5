"""Small GPT-2-shaped Challenger and Solver for the cart domain, warm-started, in each stack.

The warm start stands in for a pretrained base model, one for every run seed as in
R-Zero (trained once from ``base_seed``): the Solver learns labelled carts outside the
held-out quarter of the cart space (so never an evaluation cart of any seed) by
supervised AdamW, and the Challenger learns to write well-formed carts
(``<question> ... </question> \\boxed{A}``).  TRL gets a
``transformers`` GPT-2 built from a config; Tunix gets the GPT-2-shaped NNX model of
``examples/ttrl/tunix_ttrl.py`` (reused, with a longer position table).  Nothing is
downloaded.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import sys
from pathlib import Path
from typing import Any

import numpy as np

from zero_stacks.r_zero import carts

#: Longest sequence: a Challenger prompt (3 tokens) and completion (18), or a Solver
#: prompt (15) and completion (3).
POSITIONS = 32
SOLVER_TOKENS, CHALLENGER_TOKENS = 3, 18
SOLVER_PROMPT_TOKENS, CHALLENGER_PROMPT_TOKENS = carts.QUESTION_WIDTH + 2, 3


@dataclasses.dataclass(frozen=True)
class ModelConfig:
    """Model shape and warm start (tuned on tuning seeds; see PREREGISTRATION.md)."""

    layers: int = 2
    dim: int = 64
    heads: int = 2
    dropout: float = 0.0
    labelled: int = 3000  # the seed's labelled carts for the Solver's warm start
    warm_solver_steps: int = 1000
    warm_challenger_steps: int = 300
    warm_batch: int = 64
    warm_lr: float = 2e-3
    weight_decay: float = 0.01
    base_seed: int = 0  # the one warm start ("base model") every run seed starts from


def _index() -> dict[str, int]:
    return {w: i for i, w in enumerate(carts.words())}


def labelled_carts(seed: int, n: int) -> list[carts.Cart]:
    """The warm start's labelled carts (half of each kind), none held out
    (:func:`carts.held_out`: no evaluation cart of any seed is among them)."""
    rng = np.random.default_rng([seed, 37, 4])
    out: list[carts.Cart] = []
    while len(out) < n:
        cart = carts.draw(rng, carts.KINDS[len(out) % 2])
        if not carts.held_out(cart):
            out.append(cart)
    return out


def warm_rows(role: str, seed: int, cfg: ModelConfig) -> tuple[np.ndarray, np.ndarray]:
    """Token ids ``[N, T]`` and a float mask ``[N, T]`` of the positions whose token is a
    target (the completion and its ``</s>``), right-padded with ``<pad>``."""
    index = _index()
    if role == "solver":
        pairs = [(carts.solver_prompt(carts.question_text(c)), carts.answer_text(carts.truth(c)))
                 for c in labelled_carts(seed, cfg.labelled)]  # fmt: skip
    else:
        rng = np.random.default_rng([seed, 37, 5])
        pairs = []
        for i in range(2000):
            kind = carts.KINDS[i % 2]
            pairs.append((carts.challenger_prompt(kind), carts.challenger_text(
                carts.draw(rng, kind))))  # fmt: skip
    rows = [(["<s>", *p.split()], [*str(c).split(), "</s>"]) for p, c in pairs]
    width = max(len(a) + len(b) for a, b in rows)
    ids = np.zeros((len(rows), width), dtype=np.int32)
    mask = np.zeros((len(rows), width), dtype=np.float32)
    for i, (a, b) in enumerate(rows):
        ids[i, : len(a) + len(b)] = [index[w] for w in a + b]
        mask[i, len(a) : len(a) + len(b)] = 1.0
    return ids, mask


#: Warm starts made in this process, by stack and configuration (every seed and arm starts
#: from copies of them).
_WARM: dict[tuple[str, ModelConfig], tuple[Any, Any]] = {}


def warm_roles(stack: str, cfg: ModelConfig, cache: str | None = None) -> tuple[Any, Any]:
    """Copies of the warm-started (challenger, solver) of ``stack``: trained once per
    process from ``cfg.base_seed`` (the "base model" every seed starts from), or read from
    ``cache`` (a directory; TRL only) where an earlier process saved them."""
    if (stack, cfg) not in _WARM:
        _WARM[stack, cfg] = (_trl_roles if stack == "trl" else _tunix_roles)(cfg, cache)
    challenger, solver = _WARM[stack, cfg]
    return challenger.copy(), solver.copy()


# ------------------------------------------------------------------ TRL


def _trl_roles(cfg: ModelConfig, cache: str | None) -> tuple[Any, Any]:
    """Warm-started (challenger, solver) as :class:`zero_stacks.r_zero.trl.TrlRole`, on
    CUDA when it exists."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    from zero_stacks.r_zero.trl import TrlRole

    device = "cuda" if torch.cuda.is_available() else "cpu"
    tok = carts.tokenizer()
    roles = []
    for r, (role, steps, tokens) in enumerate((
            ("challenger", cfg.warm_challenger_steps, CHALLENGER_TOKENS),
            ("solver", cfg.warm_solver_steps, SOLVER_TOKENS))):  # fmt: skip
        seed = cfg.base_seed * 10 + r
        torch.manual_seed(seed)
        model = GPT2LMHeadModel(GPT2Config(
            vocab_size=len(carts.words()), n_positions=POSITIONS, n_embd=cfg.dim,
            n_layer=cfg.layers, n_head=cfg.heads, resid_pdrop=cfg.dropout,
            embd_pdrop=cfg.dropout, attn_pdrop=cfg.dropout, bos_token_id=1, eos_token_id=2,
            pad_token_id=0)).to(device)  # fmt: skip
        model.generation_config.pad_token_id = 0
        name = hashlib.sha256(repr((role, cfg)).encode()).hexdigest()[:16]
        path = None if cache is None else Path(cache) / f"trl-{role}-{name}.pt"
        if path is not None and path.exists():
            model.load_state_dict(torch.load(path, map_location=device))
        else:
            _torch_warm(model, *warm_rows(role, cfg.base_seed, cfg), cfg, steps, seed)
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
                torch.save(model.state_dict(), path)
        model.eval()
        roles.append(TrlRole(model, tok, max_tokens=tokens))
    return roles[0], roles[1]


def _torch_warm(model: Any, ids: np.ndarray, mask: np.ndarray, cfg: ModelConfig, steps: int,
                seed: int) -> None:  # fmt: skip
    """Minibatch AdamW on the masked next-token loss."""
    import torch

    x_all = torch.from_numpy(ids).long().to(model.device)
    m_all = torch.from_numpy(mask).to(model.device)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.warm_lr, weight_decay=cfg.weight_decay)
    gen = torch.Generator().manual_seed(seed)
    model.train()
    for _ in range(steps):
        pick = torch.randint(0, x_all.shape[0], (cfg.warm_batch,), generator=gen)
        x, m = x_all[pick.to(model.device)], m_all[pick.to(model.device)]
        logp = torch.log_softmax(model(x, attention_mask=torch.ones_like(x)).logits[:, :-1]
                                 .float(), -1)  # fmt: skip
        nll = -logp.gather(-1, x[:, 1:, None])[..., 0]
        loss = (nll * m[:, 1:]).sum() / m[:, 1:].sum()
        opt.zero_grad()
        loss.backward()
        opt.step()


# ------------------------------------------------------------------ Tunix


def _tunix_ttrl() -> Any:
    """``examples/ttrl/tunix_ttrl.py`` as a module (its GPT-2-shaped Tunix model)."""
    if "tunix_ttrl" not in sys.modules:
        here = Path(__file__).resolve().parents[1] / "ttrl"
        sys.path.insert(0, str(here))
        spec = importlib.util.spec_from_file_location("tunix_ttrl", here / "tunix_ttrl.py")
        module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        sys.modules["tunix_ttrl"] = module
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    return sys.modules["tunix_ttrl"]


def _tunix_roles(cfg: ModelConfig, cache: str | None) -> tuple[Any, Any]:
    """Warm-started (challenger, solver) as :class:`zero_stacks.r_zero.tunix.TunixRole`
    (``cache`` is not used: the JAX warm start is a few seconds)."""
    from flax import nnx

    from zero_stacks.r_zero.tunix import TunixRole

    tt = _tunix_ttrl()
    tt.MAX_LEN = POSITIONS  # the position table of the reused model
    tok = carts.tokenizer()
    roles = []
    for r, (role, steps, tokens, prompt_tokens) in enumerate((
            ("challenger", cfg.warm_challenger_steps, CHALLENGER_TOKENS, CHALLENGER_PROMPT_TOKENS),
            ("solver", cfg.warm_solver_steps, SOLVER_TOKENS, SOLVER_PROMPT_TOKENS))):  # fmt: skip
        model = tt.Policy(len(carts.words()), cfg, rngs=nnx.Rngs(cfg.base_seed * 10 + r))
        ids, mask = warm_rows(role, cfg.base_seed, cfg)
        _jax_warm(model, ids, mask, cfg, steps, cfg.base_seed * 10 + r)
        roles.append(TunixRole(model, tok, max_tokens=tokens, max_prompt_tokens=prompt_tokens))
    return roles[0], roles[1]


def _jax_warm(model: Any, ids: np.ndarray, mask: np.ndarray, cfg: ModelConfig, steps: int,
              seed: int) -> None:  # fmt: skip
    """Minibatch AdamW on the masked next-token loss, one jitted ``lax.scan``."""
    import jax
    import jax.numpy as jnp
    import optax
    from flax import nnx

    if not steps:
        return
    x_all, m_all = jnp.asarray(ids), jnp.asarray(mask)
    graphdef, params = nnx.split(model, nnx.Param)
    opt = optax.adamw(cfg.warm_lr, weight_decay=cfg.weight_decay)

    def loss_fn(p: Any, x: Any, m: Any, key: Any) -> Any:
        net = nnx.merge(graphdef, p)
        pos = jnp.broadcast_to(jnp.arange(x.shape[1]), x.shape)
        logits, _ = net(x, pos, dropout_key=key if cfg.dropout else None)
        logp = jax.nn.log_softmax(logits[:, :-1], -1)
        nll = -jnp.take_along_axis(logp, x[:, 1:, None], -1)[..., 0]
        return (nll * m[:, 1:]).sum() / m[:, 1:].sum()

    def step(carry: Any, k: Any) -> Any:
        p, s = carry
        pick = jax.random.randint(k, (cfg.warm_batch,), 0, x_all.shape[0])
        g = jax.grad(loss_fn)(p, x_all[pick], m_all[pick], k)
        u, s = opt.update(g, s, p)
        return (optax.apply_updates(p, u), s), None

    run = jax.jit(lambda p, s, key: jax.lax.scan(step, (p, s), jax.random.split(key, steps))[0])
    params, _ = run(params, opt.init(params), jax.random.key(seed))
    nnx.update(model, params)
