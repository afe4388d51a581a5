"""zero_stacks.verl inside the installed verl (0.9.1, its own venv: the [verl] extra).

The managers are found by verl's own registries and loaders, and called the way verl
calls them: the legacy batch manager on a trainer batch (``DataProto`` of tokenized
prompts and responses, ``uid`` per prompt, repeated ``n`` times and reordered as
``balance_batch`` does); the reward-loop manager through verl's ``RewardLoopWorker``,
one response per ``compute_score`` call built as the agent loop builds it, all
responses in flight at once.  The tokenizer is a tiny character-level one built here
(no download).  Every reward equals zero_text + zero_torch called here directly, and
every number is one the library returned (spy)."""

from __future__ import annotations

import asyncio
import string
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest

verl = pytest.importorskip(
    "verl",
    reason="needs the [verl] extra, in its own venv (.venv-verl: verl 0.9.1 pins "
    "transformers below the [trl] extra's; see docs/verl.md)",
)

import torch  # noqa: E402
from omegaconf import OmegaConf  # noqa: E402
from tensordict import TensorDict  # noqa: E402
from verl import DataProto  # noqa: E402
from verl.experimental.reward_loop import reward_manager as loop_registry  # noqa: E402
from verl.experimental.reward_loop.reward_loop import (  # noqa: E402
    RewardLoopWorker,
    migrate_legacy_reward_impl,
)
from verl.trainer.ppo.reward import resolve_reward_manager_cls  # noqa: E402
from verl.workers import reward_manager as legacy_registry  # noqa: E402

import zero_text  # noqa: E402
import zero_torch  # noqa: E402
from parity_tests import cases as oracle  # noqa: E402
from zero_stacks import verl as zverl  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CONFIG = Path(verl.__file__).parent / "trainer" / "config" / "_generated_ppo_trainer.yaml"


# ------------------------------------------------------------ tokenizer, config, batches


@pytest.fixture(scope="module")
def tokenizer_path(tmp_path_factory):
    """A character-level fast tokenizer saved as a model directory (what verl's
    ``hf_tokenizer`` loads from ``actor_rollout_ref.model.path``)."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {"[PAD]": 0, "[EOS]": 1, "[UNK]": 2}
    for c in sorted(set(string.printable) - set("\x0b\x0c")):
        vocab.setdefault(c, len(vocab))
    core = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    core.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    core.decoder = decoders.Fuse()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=core, pad_token="[PAD]", eos_token="[EOS]", unk_token="[UNK]"
    )
    path = tmp_path_factory.mktemp("tokenizer")
    fast.save_pretrained(path)
    return str(path)


@pytest.fixture(scope="module")
def tokenizer(tokenizer_path):
    from verl.utils import hf_tokenizer

    return hf_tokenizer(tokenizer_path)


def make_config(tokenizer_path, n, *, workers=1, val_n=None, **reward_kwargs):
    """verl's own trainer config (its generated ppo_trainer.yaml) with the vote manager
    loaded as verl loads a user's manager: ``source=importlib`` from the package."""
    config = OmegaConf.load(CONFIG)
    config.actor_rollout_ref.model.path = tokenizer_path
    config.actor_rollout_ref.rollout.n = n
    config.actor_rollout_ref.rollout.val_kwargs.n = n if val_n is None else val_n
    config.reward.num_workers = workers
    config.data.train_batch_size = config.data.val_batch_size = 16
    config.reward.reward_manager.source = "importlib"
    config.reward.reward_manager.module.path = "pkg://zero_stacks.verl"
    config.reward.reward_manager.name = "VoteRewardManager"
    OmegaConf.set_struct(config, False)
    config.reward.reward_kwargs = reward_kwargs
    return config


FORMS = [
    "\\boxed{{{}}}",
    "<think>so</think> \\boxed{{{}}}",
    "<think>add</think>\\boxed{{ {} }}",
    "it is {}",  # no box
    "\\boxed{{}} {}",  # empty box
]


def random_groups(seed, b, n):
    """``b`` groups of ``n`` replies: answers 0-2 in assorted forms; group 0 without
    any parsed answer, group 1 all alike."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(b):
        forms = rng.integers(3, 5, size=n) if i == 0 else rng.integers(0, len(FORMS), size=n)
        values = np.full(n, 2) if i == 1 else rng.integers(0, 3, size=n)
        rows.append([FORMS[f].format(v) for f, v in zip(forms, values, strict=True)])
    return rows


def encode(tokenizer, text):
    return tokenizer(text, add_special_tokens=False)["input_ids"]


def trainer_batch(tokenizer, prompts, rows, seed=0):
    """The batch verl's trainer hands the reward: one uid per prompt, repeated n times
    (``DataProto.repeat(interleave=True)``), joined with the rollout (left-padded
    prompts, right-padded responses ending in EOS), then reordered as
    ``balance_batch`` may reorder it."""
    n = len(rows[0])
    prompt_ids = [encode(tokenizer, p) for p in prompts]
    width = max(map(len, prompt_ids))
    prompt_tensor = torch.tensor([[0] * (width - len(p)) + p for p in prompt_ids])
    prompt_mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompt_ids])
    base = DataProto.from_dict(
        tensors={"prompts": prompt_tensor, "prompt_mask": prompt_mask},
        non_tensors={
            "uid": np.array([f"uid-{i}" for i in range(len(prompts))], dtype=object),
            "data_source": np.array(["seed"] * len(prompts), dtype=object),
            "reward_model": np.array([{"ground_truth": "2"}] * len(prompts), dtype=object),
        },
    )
    batch = base.repeat(repeat_times=n, interleave=True)
    responses = [encode(tokenizer, t) + [tokenizer.eos_token_id] for row in rows for t in row]
    length = max(map(len, responses)) + 2
    response_tensor = torch.tensor([r + [0] * (length - len(r)) for r in responses])
    response_mask = torch.tensor([[1] * len(r) + [0] * (length - len(r)) for r in responses])
    batch.batch["responses"] = response_tensor
    batch.batch["attention_mask"] = torch.cat([batch.batch.pop("prompt_mask"), response_mask], 1)
    batch.batch["input_ids"] = torch.cat([batch.batch["prompts"], response_tensor], 1)
    order = np.random.default_rng(seed).permutation(len(batch))
    batch.reorder(torch.from_numpy(order))
    return batch, order


def agent_loop_sample(tokenizer, prompt, text, uid):
    """One response as verl's agent loop hands it to a reward worker
    (``AgentLoopWorker._compute_score``): unpadded ids, the sample's dataset fields."""
    prompts = torch.tensor(encode(tokenizer, prompt))
    responses = torch.tensor(encode(tokenizer, text) + [tokenizer.eos_token_id])
    input_ids = torch.cat([prompts, responses])
    attention = torch.ones_like(input_ids)
    kwargs = {
        "uid": uid,
        "data_source": "seed",
        "reward_model": {"ground_truth": "2"},
        "extra_info": {},
        "raw_prompt": [{"role": "user", "content": prompt}],
    }
    batch = TensorDict(
        {
            "prompts": prompts[None],
            "responses": responses[None],
            "attention_mask": attention[None],
            "input_ids": input_ids[None],
            "position_ids": torch.arange(len(input_ids))[None],
        },
        batch_size=1,
    )
    non_tensor = {k: np.array([v]) for k, v in kwargs.items()}
    non_tensor["__num_turns__"] = np.array([2])
    non_tensor["tool_extra_fields"] = np.array([{}], dtype=object)
    non_tensor["prompt_len"] = np.array([len(prompts)])
    non_tensor["response_len"] = np.array([len(responses)])
    return DataProto(batch=batch, non_tensor_batch=non_tensor)


# ------------------------------------------------------------ the library, called directly


def t(a):
    return torch.from_numpy(np.asarray(a))


def answered(rows, policy):
    """Does a group hold a parsed answer: zero_text's rule for "distinct" / "bucket"
    (a complete, non-empty box)."""
    def one(reply):
        box = zero_text.extract_boxed(reply)
        return box is not None and zero_text.normalize_answer(box) != ""

    return np.array([any(one(r) for r in row) for row in rows])


def direct_votes(rows, *, policy="distinct", equivalence="exact", alpha=None, band=None):
    """R-Zero / MM-Zero online-vote rewards [B, n] from zero_text + zero_torch."""
    ids, num = zero_text.group_answers(rows, unparseable=policy, equivalence=equivalence)
    label, p = zero_torch.consensus(t(ids), num)
    if alpha is None:
        scores = zero_torch.pseudo_rewards(t(ids), label).numpy()
    else:
        flags = zero_text.r_zero_solver_format_ok([x for row in rows for x in row])
        scores = zero_torch.solver_rewards(t(ids), t(flags.reshape(ids.shape)), num, alpha).numpy()
    keep = answered(rows, policy)
    if band is not None:
        inside = zero_torch.curriculum_mask(p, *band).numpy()
        np.testing.assert_array_equal(inside, oracle.curriculum_mask(p.numpy(), *band))
        keep = keep & inside
    return np.where(keep[:, None], scores, 0.0)


OPTIONS = [
    pytest.param({}, {}, id="vote"),
    pytest.param({"alpha": 0.9}, {"alpha": 0.9}, id="format-term"),
    pytest.param({"band": True}, {"band": (0.25, 0.75)}, id="band"),
    pytest.param(
        {"band": True, "low": 0.5, "high": 1.0, "unparseable": "bucket"},
        {"band": (0.5, 1.0), "policy": "bucket"},
        id="band-bucket",
    ),
    pytest.param({"equivalence": "math"}, {"equivalence": "math"}, id="math"),
]


# ------------------------------------------------------------ registries and loading


def test_both_registries_find_the_managers_by_name_and_verl_loads_them(tokenizer_path):
    import zero_stacks.verl.managers  # noqa: F401  (importing it registers both managers)

    assert legacy_registry.get_reward_manager_cls("zero_vote") is zverl.VoteBatchRewardManager
    assert loop_registry.get_reward_manager_cls("zero_vote") is zverl.VoteRewardManager
    config = make_config(tokenizer_path, 4)
    assert resolve_reward_manager_cls(config) is zverl.VoteRewardManager  # importlib, pkg://
    config.reward.reward_manager.source = "register"
    config.reward.reward_manager.name = "zero_vote"
    assert resolve_reward_manager_cls(config) is zverl.VoteRewardManager
    # The legacy keys (reward_model.reward_manager / .reward_kwargs) as verl 0.9 migrates
    # them: the name then picks from the reward-loop registry, the options follow.
    config = make_config(tokenizer_path, 4)
    config.reward.reward_manager.source = "register"
    config.reward_model.reward_manager = "zero_vote"
    config.reward_model.reward_kwargs = {"band": True, "low": 0.5}
    config = migrate_legacy_reward_impl(config)
    assert resolve_reward_manager_cls(config) is zverl.VoteRewardManager
    worker = RewardLoopWorker(config)
    assert worker.reward_manager.reward.options["band"] is True
    assert worker.reward_manager.reward.options["low"] == 0.5


def test_importing_zero_stacks_verl_does_not_import_verl():
    code = (
        "import sys, zero_stacks.verl as z\n"
        "assert 'verl' not in sys.modules\n"
        "assert z.compute_score('s', '\\\\boxed{2}', '2') == 1.0\n"
        "assert 'verl' not in sys.modules\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-2000:]


# ------------------------------------------------------------ legacy batch manager


@pytest.mark.parametrize("options, direct", OPTIONS)
def test_batch_manager_equals_the_library(tokenizer, options, direct):
    b, n = 6, 4
    rows = random_groups(len(options), b, n)
    batch, order = trainer_batch(tokenizer, [f"question {i}?" for i in range(b)], rows)
    manager = legacy_registry.get_reward_manager_cls("zero_vote")(
        tokenizer=tokenizer, num_examine=1, compute_score=None, reward_fn_key="data_source",
        **options,
    )
    out = manager(batch, return_dict=True)
    tensor = out["reward_tensor"]
    assert tensor.dtype == torch.float32 and tensor.shape == batch.batch["responses"].shape
    # Each group votes sorted by text; the batch is reordered.
    want = direct_votes([sorted(r) for r in rows], **direct)
    want = np.array([want[i, sorted(r).index(x)] for i, r in enumerate(rows) for x in r])[order]
    lengths = batch.batch["attention_mask"][:, batch.batch["prompts"].shape[1] :].sum(-1)
    placed = torch.zeros_like(tensor)
    placed[torch.arange(len(batch)), lengths - 1] = torch.tensor(want, dtype=torch.float32)
    torch.testing.assert_close(tensor, placed, rtol=0, atol=0)
    assert out["reward_extra_info"]["score"] == list(want)
    assert manager(batch).equal(tensor)  # return_dict=False: the tensor alone
    assert want.any() and not want.all()  # the batch pays some and not others


def test_batch_manager_needs_uid_and_known_options(tokenizer):
    batch, _ = trainer_batch(tokenizer, ["q"], [["\\boxed{1}", "\\boxed{2}"]])
    batch.non_tensor_batch.pop("uid")
    manager = zverl.VoteBatchRewardManager(tokenizer, 0)
    with pytest.raises(ValueError, match="no 'uid'"):
        manager(batch)
    with pytest.raises(TypeError, match="unknown option.*labels_column"):
        zverl.VoteBatchRewardManager(tokenizer, 0, labels_column="answer")
    with pytest.raises(ValueError, match="low <= high"):
        zverl.VoteBatchRewardManager(tokenizer, 0, band=True, low=0.8, high=0.2)


# ------------------------------------------------------------ reward loop (verl 0.9's trainer)


def stream(worker, samples, **gather):
    """Every response in flight at once, as the agent loop awaits them, on the worker's
    event loop (a Ray async actor runs its calls on one loop)."""

    async def run():
        return await asyncio.gather(*(worker.compute_score(s) for s in samples), **gather)

    return worker.loop.run_until_complete(run())


@pytest.mark.parametrize("options, direct", OPTIONS)
def test_reward_loop_worker_votes_each_group(tokenizer_path, tokenizer, options, direct):
    b, n = 5, 4
    rows = random_groups(10 + len(options), b, n)
    worker = RewardLoopWorker(make_config(tokenizer_path, n, **options))
    assert isinstance(worker.reward_manager, zverl.VoteRewardManager)
    samples = [
        (i, j, agent_loop_sample(tokenizer, f"question {i}?", rows[i][j], f"uid-{i}"))
        for i in range(b)
        for j in range(n)
    ]
    shuffled = [samples[k] for k in np.random.default_rng(1).permutation(len(samples))]
    results = stream(worker, [s for _, _, s in shuffled])
    # The library on each group sorted by text (the order the manager votes in).
    ordered = [sorted(row) for row in rows]
    want = direct_votes(ordered, **direct)
    for (i, j, _), result in zip(shuffled, results, strict=True):
        k = ordered[i].index(rows[i][j])
        assert result["reward_score"] == want[i, k]
        assert result["reward_extra_info"] == {"score": want[i, k]}
    assert not worker.reward_manager._pending  # every group paid and forgotten


def test_reward_loop_batch_path_and_rm_scores(tokenizer_path, tokenizer):
    """``RewardLoopManager.compute_rm_score``'s path: a worker's ``compute_score_batch``
    on a trainer batch, then the class's ``assemble_rm_scores``."""
    b, n = 4, 3
    rows = random_groups(3, b, n)
    batch, order = trainer_batch(tokenizer, [f"q{i}" for i in range(b)], rows, seed=2)
    worker = RewardLoopWorker(make_config(tokenizer_path, n))
    outputs = worker.loop.run_until_complete(worker.compute_score_batch(batch))
    scores = [o["reward_score"] for o in outputs]
    want = direct_votes([sorted(r) for r in rows])
    flat = [want[i, sorted(rows[i]).index(rows[i][j])] for i in range(b) for j in range(n)]
    assert scores == [flat[k] for k in order]
    rm = zverl.VoteRewardManager.assemble_rm_scores(batch, scores)
    assert rm.sum(-1).tolist() == [float(np.float32(s)) for s in scores]


def test_reward_loop_refuses_configs_that_split_groups(tokenizer_path):
    with pytest.raises(ValueError, match="reward.num_workers=1"):
        RewardLoopWorker(make_config(tokenizer_path, 4, workers=8))
    with pytest.raises(ValueError, match="val_kwargs.n=1 .* training n=4"):
        RewardLoopWorker(make_config(tokenizer_path, 4, val_n=1))
    config = make_config(tokenizer_path, 4, val_n=1)
    config.trainer.val_before_train, config.trainer.test_freq = False, -1
    RewardLoopWorker(config)  # no validation: any val_kwargs.n
    # More responses in flight than the one reward worker (a Ray async actor) runs at once.
    from ray._common.ray_constants import DEFAULT_MAX_CONCURRENCY_ASYNC

    assert zverl.managers.IN_FLIGHT == DEFAULT_MAX_CONCURRENCY_ASYNC == 1000
    config = make_config(tokenizer_path, 8)
    config.data.train_batch_size = 125
    RewardLoopWorker(config)  # 125 * 8 = 1000 responses in flight
    config.data.gen_batch_size = 126
    with pytest.raises(ValueError, match="train_batch_size=126 prompts x n=8 .* at most 1000"):
        RewardLoopWorker(config)
    config.data.gen_batch_size = None
    config.data.val_batch_size = None  # the whole validation set at once
    with pytest.raises(ValueError, match="data.val_batch_size=None prompts x n=8"):
        RewardLoopWorker(config)
    config.trainer.val_before_train, config.trainer.test_freq = False, -1
    RewardLoopWorker(config)  # no validation: its batch size is not read
    with pytest.raises(TypeError, match="reward.reward_kwargs: unknown option"):
        RewardLoopWorker(make_config(tokenizer_path, 4, labels_column="x"))
    with pytest.raises(ValueError, match="group_timeout must be > 0"):
        RewardLoopWorker(make_config(tokenizer_path, 4, group_timeout=0))


def test_incomplete_group_raises_in_every_waiting_call(tokenizer_path, tokenizer):
    worker = RewardLoopWorker(make_config(tokenizer_path, 4, group_timeout=0.3))
    samples = [agent_loop_sample(tokenizer, "q", "\\boxed{1}", "uid-a") for _ in range(2)]
    errors = stream(worker, samples, return_exceptions=True)
    assert all(isinstance(e, TimeoutError) for e in errors)
    assert "uid 'uid-a' has 2 of 4 responses" in str(errors[0])
    assert not worker.reward_manager._pending


# ------------------------------------------------------------ frozen labels (compute_score)


def weight(alpha):
    return float(Decimal(1) - Decimal(repr(alpha)))


def direct_frozen(texts, labels, alpha=None, consistency=None, band=(0.25, 0.75)):
    rows = [["\\boxed{" + lab + "}", x] for lab, x in zip(labels, texts, strict=True)]
    ids, _ = zero_text.group_answers(rows)
    agree = zero_torch.pseudo_rewards(t(ids[:, 1:]), t(ids[:, 0])).numpy()[:, 0]
    if alpha is not None:
        flags = zero_text.r_zero_solver_format_ok(texts)
        agree = alpha * agree + weight(alpha) * flags
    keep = answered([[x] for x in texts], "distinct")
    if consistency is not None:
        keep = keep & zero_torch.curriculum_mask(t(np.array(consistency)), *band).numpy()
    return np.where(keep, agree, 0.0)


FROZEN = [
    "\\boxed{2}",
    "<think>a</think> \\boxed{2}",
    "<think>b</think>\\boxed{3}",
    "two",
    "\\boxed{ 2 }",
]


@pytest.mark.parametrize("alpha", [None, 0.9])
def test_compute_score_in_verl_naive_managers_equals_the_library(tokenizer_path, tokenizer, alpha):
    """Frozen labels through verl's own ``naive`` managers, both registries."""
    want = direct_frozen(FROZEN, ["2"] * len(FROZEN), alpha)
    # verl 0.9's reward loop, naive manager, compute_score as the custom reward function.
    config = make_config(tokenizer_path, 1)
    config.reward.reward_manager.source, config.reward.reward_manager.name = "register", "naive"
    config.reward.custom_reward_function.path = "pkg://zero_stacks.verl"
    config.reward.custom_reward_function.name = "compute_score"
    config.reward.custom_reward_function.reward_kwargs = {} if alpha is None else {"alpha": alpha}
    worker = RewardLoopWorker(config)
    samples = [agent_loop_sample(tokenizer, "q", x, f"u{i}") for i, x in enumerate(FROZEN)]
    got = stream(worker, samples)
    assert [g["reward_score"] for g in got] == list(want)
    # The legacy registry's naive and batch managers.
    extra = {} if alpha is None else {"alpha": alpha}
    batch, order = trainer_batch(tokenizer, ["q"], [FROZEN])
    lengths = batch.batch["attention_mask"][:, batch.batch["prompts"].shape[1] :].sum(-1)
    naive = legacy_registry.get_reward_manager_cls("naive")(
        tokenizer, 0, lambda **kw: zverl.compute_score(**kw, **extra)
    )
    batched = legacy_registry.get_reward_manager_cls("batch")(
        tokenizer, 0, zverl.compute_score_batch, **extra
    )
    for manager in (naive, batched):
        tensor = manager(batch)
        assert tensor[torch.arange(len(batch)), lengths - 1].tolist() == [
            float(np.float32(w)) for w in want[order]
        ]


def test_compute_score_band_reads_the_frozen_vote_share():
    texts = ["\\boxed{2}"] * 4
    shares = [0.25, 0.5, 0.8, 1.0]
    extras = [{"consistency": p} for p in shares]
    got = zverl.compute_score_batch(["s"] * 4, texts, ["2"] * 4, extras, band=True)
    assert got == list(direct_frozen(texts, ["2"] * 4, consistency=shares)) == [1, 1, 0, 0]
    one = zverl.compute_score("s", texts[0], "2", {"share": 0.9}, band=True, high=1.0,
                              consistency_key="share")
    assert one == 1.0
    with pytest.raises(ValueError, match="extra_info\\['consistency'\\], missing"):
        zverl.compute_score("s", texts[0], "2", {}, band=True)
    with pytest.raises(ValueError, match="no usable answer"):
        zverl.compute_score("s", texts[0], "")
    assert zverl.compute_score("s", "\\boxed{\\frac{1}{2}}", "0.5", equivalence="math") == 1.0


# ------------------------------------------------------------ no number of our own


def test_every_number_is_one_the_library_returned(tokenizer_path, tokenizer, monkeypatch):
    """The library's reward functions replaced by ones returning random numbers: the
    managers and compute_score hand out exactly those (0 where a group is gated)."""
    returned = {}

    def fake(name):
        real = getattr(zero_torch, name)

        def fn(*args, **kwargs):
            shape = tuple(real(*args, **kwargs).shape)
            out = np.random.default_rng(len(returned)).random(shape)
            returned[name] = out
            return torch.from_numpy(out)

        return fn

    for name in ("pseudo_rewards", "solver_rewards", "solver_rewards_frozen"):
        monkeypatch.setattr(zero_torch, name, fake(name))
    rows = [
        ["\\boxed{1}", "x", "\\boxed{2}"],
        ["no", "box", "here"],
        ["\\boxed{3}", "<think>a</think>\\boxed{3}", "\\boxed{ 3 }"],  # distinct texts
    ]
    gate = np.array([True, False, True])
    batch, order = trainer_batch(tokenizer, ["a", "b", "c"], rows)
    for options, name in (({}, "pseudo_rewards"), ({"alpha": 0.9}, "solver_rewards")):
        got = zverl.VoteBatchRewardManager(tokenizer, 0, **options)(batch, return_dict=True)
        # The library's rows: groups in order of first appearance, each sorted by text.
        seen = list(dict.fromkeys(int(k) // 3 for k in order))
        paid = np.where(gate[seen, None], returned[name], 0)
        by_text = {
            x: paid[seen.index(i), sorted(r).index(x)] for i, r in enumerate(rows) for x in r
        }
        want = [by_text[x] for x in np.array([x for r in rows for x in r])[order]]
        assert returned[name].shape == (3, 3) and got["reward_extra_info"]["score"] == want
        worker = RewardLoopWorker(make_config(tokenizer_path, 3, **options))
        for i, row in enumerate(rows):  # one group at a time: one library call each
            samples = [agent_loop_sample(tokenizer, "p", x, f"u{i}") for x in row]
            streamed = [s["reward_score"] for s in stream(worker, samples)]
            paid = returned[name][0] if gate[i] else np.zeros(3)  # voted sorted by text
            assert returned[name].shape == (1, 3)
            assert streamed == [paid[sorted(row).index(x)] for x in row]
    got = zverl.compute_score_batch(["s"] * 2, ["\\boxed{2}", "\\boxed{3}"], ["2", "2"])
    assert got == list(returned["pseudo_rewards"][:, 0])
    got = zverl.compute_score("s", "\\boxed{2}", "2", alpha=0.5)
    assert returned["solver_rewards_frozen"].shape == (1, 1)  # one reply, its label given
    assert got == returned["solver_rewards_frozen"][0, 0]


def test_a_tied_vote_does_not_depend_on_where_verl_put_the_responses(tokenizer_path, tokenizer):
    """A 2-2 tie: the label is the answer of the first text in sorted order, whatever
    the batch order or the order of arrival."""
    row = ["\\boxed{2}", "<think>x</think>\\boxed{1}", "\\boxed{1}", "\\boxed{2} "]
    ids, num = zero_text.group_answers([sorted(row)])
    label, share = zero_torch.consensus(t(ids), num)
    assert float(share[0]) == 0.5
    want = {x: float(ids[0, k] == int(label[0])) for k, x in enumerate(sorted(row))}
    assert want == {row[0]: 0.0, row[1]: 1.0, row[2]: 1.0, row[3]: 0.0}  # "<" < "\\"
    worker = RewardLoopWorker(make_config(tokenizer_path, 4))
    for seed in range(3):
        batch, order = trainer_batch(tokenizer, ["q"], [row], seed=seed)
        got = zverl.VoteBatchRewardManager(tokenizer, 0)(batch, return_dict=True)
        assert got["reward_extra_info"]["score"] == [want[row[k]] for k in order]
        arrival = [row[k] for k in order]
        samples = [agent_loop_sample(tokenizer, "q", x, "uid-t") for x in arrival]
        assert [s["reward_score"] for s in stream(worker, samples)] == [want[x] for x in arrival]
