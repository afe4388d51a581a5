"""Spurious-reward controls: a seeded coin, a format-only reward, a wrong-label reward.

From *Spurious Rewards: Rethinking Training Signals in RLVR* (Shao et al., 2025,
https://arxiv.org/abs/2506.10947) and its code (ruixin31/Rethink_RLVR,
``code/ttrl/verifier/auto_verify.py`` and ``qwen/qwen_eval.py``): the rewards a
label-free claim is compared with.  A method that beats none of them has not shown
that its signal carries information about the answer.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from jax import lax
from jax.sharding import reshard
from jax.typing import ArrayLike

from zero_contracts import messages as msg
from zero_jax import _checks as _c
from zero_jax.primitives import _gather, ids_equal

__all__ = ["format_rewards", "random_rewards", "wrong_label_rewards"]


def random_rewards(key: Any, mask: Any, rate: ArrayLike = 0.5) -> jax.Array:
    """Spurious-reward control: a seeded 0/1 coin per response at a given rate.

    ``r_i = m_i 1[u_i < rate], u_i ~ U[0, 1) float32 drawn from key``

    Spurious Rewards: Rethinking Training Signals in RLVR (Rulin Shao et al., 2025), §3,
    random reward (the published code's random_reward_fn),
    https://arxiv.org/abs/2506.10947.  Output ``[B]``: float64 (float32 in JAX with x64
    off); detached (no gradient).

    The published ``int(random.random() < rate)`` per response, reproducible: ``key``
    is a typed PRNG key (``jax.random.key(0)``, split per step as usual) or an integer
    seed (a 0-d array, traceable, e.g. the step number); the same key gives the same
    coins with x64 on or off and under ``jit`` / ``vmap``.  (The torch twin takes a
    seed or a ``torch.Generator``; its coins are torch's, not these.)  ``mask`` is
    False for responses that get no coin (padding, or the unformatted ones for the
    "formatted random" variant).  ``rate`` is traceable; for a coin matched to
    another reward pass that reward's mean, e.g. ``rate=jnp.mean(majority_rewards)``
    inside the jitted step (the TTRL example's random arm).  The comparison is made
    in float32 (``rate`` rounded to float32).

    Args:
      key: a typed PRNG key, or an integer seed ``[]``.
      mask: bool ``[B]``.
      rate: real in ``[0, 1]`` (traceable; NaN or outside gives NaN everywhere).

    Returns:
      ``[B]`` of 0.0 / 1.0.

    >>> import jax, jax.numpy as jnp, zero_jax
    >>> m = jnp.ones(1000, bool)
    >>> r = zero_jax.random_rewards(jax.random.key(0), m, 0.25)
    >>> bool(jnp.all(r == zero_jax.random_rewards(jax.random.key(0), m, 0.25)))
    True
    >>> 0.2 < float(r.mean()) < 0.3
    True
    """
    if isinstance(key, jax.Array) and jnp.issubdtype(key.dtype, jax.dtypes.prng_key):
        if key.shape != ():
            raise ValueError(msg.KEY_SHAPE.format(name="key", got=tuple(key.shape)))
        key = jax.random.bits(key, (), jnp.uint32)  # the seed of the coins
    s, m = _c.arrays("random_rewards", key, mask)
    h = _c.hypers("random_rewards", rate=rate)
    return _random(s, m, **h)


@_c.kernel("random_rewards")
def _random(key: jax.Array, mask: jax.Array, rate: float | jax.Array) -> jax.Array:
    bad = _c.invalid("random_rewards", key=key, mask=mask, rate=rate)
    u = jax.random.uniform(jax.random.key(key), mask.shape, jnp.float32)
    coin = mask & (u < jnp.asarray(rate, jnp.float32))
    return lax.stop_gradient(_c.poison(coin.astype(_c.float_dtype()), _c.hyper_rules(bad)))


def format_rewards(format_valid: Any) -> jax.Array:
    """Spurious-reward control: 1 for a response whose answer could be extracted.

    ``r_i = 1[f_i]``

    Spurious Rewards: Rethinking Training Signals in RLVR (Rulin Shao et al., 2025), §3,
    format reward (the published code's format_reward_fn),
    https://arxiv.org/abs/2506.10947.  Output ``[B]``: float64 (float32 in JAX with x64
    off); detached (no gradient).

    ``format_valid`` is whatever the answer extractor found: the published reward is
    1.0 when ``extract_answer`` returns a non-empty answer (``box_only_format``: a
    non-empty ``\\boxed{}``), whether or not it is right.

    Args:
      format_valid: bool ``[B]``.

    Returns:
      ``[B]`` of 0.0 / 1.0.

    >>> import jax.numpy as jnp, zero_jax
    >>> zero_jax.format_rewards(jnp.array([True, False])).tolist()
    [1.0, 0.0]
    """
    (f,) = _c.arrays("format_rewards", format_valid)
    return _format(f)


@_c.kernel("format_rewards")
def _format(format_valid: jax.Array) -> jax.Array:
    return lax.stop_gradient(format_valid.astype(_c.float_dtype()))


def wrong_label_rewards(answers: Any, truth: Any) -> jax.Array:
    """Spurious-reward control: agreement with the group's most voted wrong answer.

    ``r_ij = 1[a_ij = w_i], w_i = argmax_{c != t_i} n_ic (smallest id on ties)``

    Spurious Rewards: Rethinking Training Signals in RLVR (Rulin Shao et al., 2025), §3,
    incorrect reward (agreement with a wrong majority label),
    https://arxiv.org/abs/2506.10947.  Output ``[B, K]``: float64 (float32 in JAX with
    x64 off); detached (no gradient).

    The published "incorrect" arm labels each prompt with the model's majority
    answer, keeps the prompts where that label is wrong, and pays agreement with it.
    Here the label is the most voted answer of the row that is not the truth: on
    the rows where the majority is wrong it is the published label (ties go to the
    smallest id, the first seen when ids number the answers in order of appearance);
    on the others it is the most voted wrong answer, so that no row pays for the
    truth.  A row whose answers are all the truth pays 0.  Ids are compared exactly
    across the two integer dtypes.

    Args:
      answers: integer ``[B, K]`` answer ids.
      truth: integer ``[B]`` true answer ids.

    Returns:
      ``[B, K]`` of 0.0 / 1.0.

    >>> import jax.numpy as jnp, zero_jax
    >>> a = jnp.array([[4, 4, 7, 7, 7], [1, 1, 1, 1, 1]])
    >>> zero_jax.wrong_label_rewards(a, jnp.array([7, 1])).tolist()
    [[1.0, 1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0]]
    """
    a, t = _c.arrays("wrong_label_rewards", answers, truth)
    return _wrong(a, t)


@_c.kernel("wrong_label_rewards")
def _wrong(answers: jax.Array, truth: jax.Array) -> jax.Array:
    answers, sharding = _gather(answers, last=True)  # a row's answers on each device
    wrong = ~ids_equal(answers, truth[:, None])
    same = ids_equal(answers[:, :, None], answers[:, None, :])
    counts = jnp.where(wrong, jnp.sum(same, axis=-1, dtype=jnp.int32), 0)  # 0: the truth
    top = jnp.max(counts, axis=-1, keepdims=True)
    # among the top wrong answers, the smallest id: j is the label if no other top
    # answer is smaller (exact order within one dtype)
    candidate = wrong & (counts == top)
    smaller = candidate[:, None, :] & (answers[:, None, :] < answers[:, :, None])
    label = candidate & ~jnp.any(smaller, axis=-1)
    pays = jnp.any(same & label[:, None, :], axis=-1).astype(_c.float_dtype())
    return lax.stop_gradient(pays if sharding is None else reshard(pays, sharding))
