"""zero_stacks.controls: EMPO and the spurious-reward controls as TRL / Tunix rewards.

Each reward's numbers are the library's on the ids ``zero_text.group_answers`` gives
(checked here against the library functions called directly, in both bindings), the
options are fixed and checked, the rewards pickle, and the stack-neutral classes
refuse to compute."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import zero_jax
import zero_text
from zero_stacks import controls as c

torch = pytest.importorskip("torch")
import zero_torch  # noqa: E402

STACKS = {"Trl": zero_torch, "Tunix": zero_jax}
G = 4
PROMPTS = ["p"] * G + ["q"] * G + ["r"] * G
COMPLETIONS = [
    "\\boxed{1}", "so \\boxed{1}", "\\boxed{2}", "no box",
    "\\boxed{3}", "\\boxed{4}", "\\boxed{5}", "\\boxed{6}",
    "\\boxed{7}", "\\boxed{7}", "\\boxed{7}", "\\boxed{}",
]  # fmt: skip


def _ids() -> tuple[np.ndarray, np.ndarray]:
    groups = [COMPLETIONS[i : i + G] for i in range(0, len(COMPLETIONS), G)]
    ids, _ = zero_text.group_answers(groups)
    answered = np.array([zero_text.extract_boxed(t) not in (None, "") for t in COMPLETIONS])
    return np.asarray(ids), answered.reshape(ids.shape)


def _np(x) -> np.ndarray:
    return np.asarray(x.numpy() if hasattr(x, "numpy") and not isinstance(x, np.ndarray) else x)


@pytest.mark.parametrize("stack", STACKS)
def test_empo_reward_is_the_library_reward_times_the_filter(stack):
    lib = STACKS[stack]
    ids, answered = _ids()
    reward = getattr(c, f"{stack}EmpoReward")(num_generations=G)
    got = np.array(reward(PROMPTS, COMPLETIONS))
    conv = torch.from_numpy if stack == "Trl" else (lambda a: a)
    share = _np(lib.semantic_cluster_rewards(conv(ids), conv(answered)))
    keep = _np(lib.semantic_entropy_filter(conv(ids)))
    np.testing.assert_allclose(got, (share * keep[:, None]).ravel(), rtol=1e-7)
    np.testing.assert_allclose(got, [0.5, 0.5, 0.25, 0, 0, 0, 0, 0, 0.75, 0.75, 0.75, 0],
                               rtol=1e-7)
    unfiltered = getattr(c, f"{stack}EmpoReward")(num_generations=G, filter=False)
    np.testing.assert_allclose(unfiltered(PROMPTS, COMPLETIONS)[4:8], [0.25] * 4, rtol=1e-7)


@pytest.mark.parametrize("stack", STACKS)
def test_format_and_wrong_label_rewards(stack):
    fmt = getattr(c, f"{stack}FormatReward")()
    assert fmt(PROMPTS, COMPLETIONS) == [1.0, 1.0, 1.0, 0.0] + [1.0] * 7 + [0.0]
    wrong = getattr(c, f"{stack}WrongLabelReward")(num_generations=G)
    truth = ["2"] * G + ["3"] * G + ["7"] * G
    # p: 1 is the top wrong answer; q: 4, the first of the tied wrong ones; r: every
    # answer is the truth (the empty box is no answer and is never the label)
    assert wrong(PROMPTS, COMPLETIONS, answer=truth) == [1.0, 1.0, 0.0, 0.0,
                                                         0.0, 1.0, 0.0, 0.0,
                                                         0.0, 0.0, 0.0, 0.0]
    with pytest.raises(ValueError, match="column 'answer'"):
        wrong(PROMPTS, COMPLETIONS)


@pytest.mark.parametrize("stack", STACKS)
def test_random_reward_is_seeded_by_the_batch_and_matches_a_rate(stack):
    n = 4000
    prompts, texts = ["p"] * n, [f"\\boxed{{{i}}}" for i in range(n)]
    coin = getattr(c, f"{stack}RandomReward")(rate=0.25, seed=3)
    first = coin(prompts, texts)
    assert first == coin(prompts, texts)  # the same batch, the same coins
    assert first != getattr(c, f"{stack}RandomReward")(rate=0.25, seed=4)(prompts, texts)
    assert abs(sum(first) - 0.25 * n) < 5 * (n * 0.25 * 0.75) ** 0.5
    formatted = getattr(c, f"{stack}RandomReward")(rate=1.0, formatted=True)
    assert formatted(PROMPTS, COMPLETIONS) == [1.0, 1.0, 1.0, 0.0] + [1.0] * 7 + [0.0]
    half = getattr(c, f"{stack}FormatReward")()  # 3000 of the 4000 have an answer
    matched = getattr(c, f"{stack}RandomReward")(matched_to=half, seed=1)
    mixed = texts[:3000] + ["none"] * 1000
    coins = matched(prompts, mixed)
    assert abs(sum(coins) - 0.75 * n) < 5 * (n * 0.25 * 0.75) ** 0.5

    def nan_reward(prompts, completions, **kwargs):
        return [float("nan")] * len(completions)

    with pytest.raises(ValueError, match="mean of matched_to"):
        getattr(c, f"{stack}RandomReward")(matched_to=nan_reward)(PROMPTS, COMPLETIONS)


def test_options_are_checked_fixed_and_pickled():
    reward = c.TunixEmpoReward(num_generations=G, equivalence="exact", max_entropy=0.5)
    again = pickle.loads(pickle.dumps(reward))
    assert again(PROMPTS, COMPLETIONS) == reward(PROMPTS, COMPLETIONS)
    assert "max_entropy=0.5" in repr(reward)
    with pytest.raises(AttributeError):
        reward.max_entropy = 0.2  # type: ignore[misc]
    with pytest.raises(ValueError):
        c.TrlEmpoReward(max_entropy=1.5)
    with pytest.raises(TypeError, match="seed"):
        c.TrlRandomReward(seed=-1)
    with pytest.raises(TypeError, match="TrlEmpoReward"):
        c.EmpoReward(G)
