"""Two zero_jax rewards inside one jitted optax update (the README's example).

A challenger policy picks one of 6 question templates for each of 8 slots; a
solver answered every proposal K=5 times.  The update scores the proposals with
``consensus`` + ``challenger_rewards`` and turns the rewards into GRPO advantages,
all inside ``jax.jit``.
"""

import jax
import jax.numpy as jnp
import optax

import zero_jax

NUM_TEMPLATES, NUM_ANSWERS = 6, 10


def loss_fn(logits, templates, answers, valid):
    _, consistency = zero_jax.consensus(answers, NUM_ANSWERS)  # [B] vote share
    rewards = zero_jax.challenger_rewards(  # [B], gradient-free
        consistency, templates, valid, strength=1.0, num_clusters=NUM_TEMPLATES
    )
    advantages = zero_jax.group_advantages(rewards[None, :])[0]
    logp = jax.nn.log_softmax(logits)[templates]
    return -jnp.mean(advantages * logp), rewards


optimizer = optax.sgd(0.5)


@jax.jit
def update(logits, opt_state, templates, answers, valid):
    (loss, rewards), grads = jax.value_and_grad(loss_fn, has_aux=True)(
        logits, templates, answers, valid
    )
    updates, opt_state = optimizer.update(grads, opt_state)
    return optax.apply_updates(logits, updates), opt_state, rewards


if __name__ == "__main__":
    key = jax.random.key(0)
    logits = jnp.zeros(NUM_TEMPLATES)
    opt_state = optimizer.init(logits)
    templates = jnp.array([0, 0, 1, 2, 3, 4, 5, 5])
    answers = jax.random.randint(key, (8, 5), 0, 3)  # stands in for solver samples
    valid = jnp.array([True, True, True, True, True, True, False, True])
    logits, opt_state, rewards = update(logits, opt_state, templates, answers, valid)
    print("rewards", rewards)
    print("policy ", jax.nn.softmax(logits))
