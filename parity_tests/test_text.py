"""Parity tests for zero_text against independent oracles.

Oracles: NLTK's ``sentence_bleu`` (pairwise scores) and scikit-learn's
``AgglomerativeClustering`` driven by the published double loop (partitions).
Every other expectation is small enough to check by hand. Corpora are
generated here from seeded RNGs, so a failure reproduces exactly.
"""

from __future__ import annotations

import math
import os
import random
import subprocess
import sys
from collections import Counter
from functools import cache
from pathlib import Path

import numpy as np
import pytest

import zero_text as zt
from parity_tests.cases import box

# --------------------------------------------------------------------------- oracles


@pytest.fixture(scope="module")
def nltk_bleu():
    mod = pytest.importorskip(
        "nltk.translate.bleu_score", reason="nltk is the oracle for pairwise BLEU"
    )
    smoother = mod.SmoothingFunction().method1

    def score(hyp: str, ref: str) -> float:
        return mod.sentence_bleu([ref.split()], hyp.split(), smoothing_function=smoother)

    return score


@pytest.fixture(scope="module")
def sklearn_labels():
    cluster = pytest.importorskip(
        "sklearn.cluster", reason="scikit-learn is the oracle for the clustering"
    )

    def labels(dist: np.ndarray, threshold: float) -> np.ndarray:
        model = cluster.AgglomerativeClustering(
            n_clusters=None,
            distance_threshold=threshold,
            metric="precomputed",
            linkage="average",
        )
        return model.fit_predict(dist)

    return labels


def published_distance_matrix(texts, score) -> np.ndarray:
    """The reference double loop: hypothesis = earlier text, mirrored, diagonal 0."""
    n = len(texts)
    dist = np.zeros((n, n))
    for i in range(n):
        for j in range(i, n):
            s = 1.0 if i == j else score(texts[i], texts[j])
            dist[i, j] = dist[j, i] = 1 - s
    return dist


def assert_same_partition(ours: np.ndarray, theirs: np.ndarray) -> None:
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.shape == theirs.shape
    forward: dict[int, int] = {}
    backward: dict[int, int] = {}
    for a, b in zip(ours.tolist(), theirs.tolist(), strict=True):
        assert forward.setdefault(a, b) == b, "one of our clusters is split by the oracle"
        assert backward.setdefault(b, a) == a, "one oracle cluster is split by ours"


def assert_first_seen_dense(ids: np.ndarray) -> None:
    seen: list[int] = []
    for v in ids.tolist():
        if v not in seen:
            assert v == len(seen), "ids are not numbered in order of first appearance"
            seen.append(v)
    assert ids.dtype == np.int64


def published_shares(labels: np.ndarray) -> np.ndarray:
    sizes = Counter(labels.tolist())
    return np.array([sizes[lab] / len(labels) for lab in labels.tolist()])


# --------------------------------------------------------------------------- corpora

NAMES = ["John", "Maya", "Ali", "Chen", "Sara", "Lena", "Omar", "Ivy"]
ITEMS = ["apples", "pencils", "books", "marbles", "stickers", "cookies"]
WORDS = (
    "the a of to and in is what how many each total if has buys gives more less than "
    "number sum product find value area speed time rate price cost left after before"
).split()


def corpus_templates(seed: int = 1, n: int = 120) -> list[str]:
    rng = random.Random(seed)
    templates = [
        "{name} has {a} {item} and buys {b} more . How many {item} does {name} have now ?",
        "A train travels {a} km in {b} hours . What is its average speed in km per hour ?",
        "What is the sum of the first {a} positive integers that are divisible by {b} ?",
        "{name} gives {a} of {b} {item} to a friend . What fraction of the {item} is left ?",
    ]
    out = []
    for _ in range(n):
        text = rng.choice(templates).format(
            name=rng.choice(NAMES),
            item=rng.choice(ITEMS),
            a=rng.randint(2, 60),
            b=rng.randint(2, 60),
        )
        toks = text.split()
        for _ in range(rng.randint(0, 6)):  # a few random word edits
            toks[rng.randrange(len(toks))] = rng.choice(WORDS)
        out.append(" ".join(toks))
    return out


def corpus_paraphrases(seed: int = 2, n: int = 120) -> list[str]:
    rng = random.Random(seed)
    openers = ["Find", "Compute", "Determine", "Work out", "Calculate", "What is"]
    subjects = [
        "the number of {item} {name} owns",
        "how many {item} {name} has",
        "the count of {item} belonging to {name}",
    ]
    clauses = [
        "after buying {a} more",
        "once {name} receives {a} extra",
        "if {a} more are added",
        "when {a} are given away",
    ]
    out = []
    for _ in range(n):
        fill = dict(name=rng.choice(NAMES), item=rng.choice(ITEMS), a=rng.randint(2, 30))
        parts = [rng.choice(subjects).format(**fill), rng.choice(clauses).format(**fill)]
        if rng.random() < 0.5:
            parts.reverse()
        out.append(f"{rng.choice(openers)} {parts[0]} , {parts[1]} ?")
    return out


def corpus_short(seed: int = 3, n: int = 150) -> list[str]:
    rng = random.Random(seed)
    vocab = ["x", "y", "2", "sum", "area", "find"]
    return [" ".join(rng.choice(vocab) for _ in range(rng.randint(1, 3))) for _ in range(n)]


def corpus_with_empties(seed: int = 4, n: int = 80) -> list[str]:
    rng = random.Random(seed)
    base = corpus_templates(seed=40, n=n)
    out = []
    for text in base:
        r = rng.random()
        out.append(rng.choice(["", " ", "\n\t"]) if r < 0.25 else text)
    out[0] = ""  # an empty string in first position too
    return out


def corpus_long(seed: int = 5, n: int = 60) -> list[str]:
    rng = random.Random(seed)
    stems = [corpus_templates(seed=50 + k, n=12) for k in range(3)]
    out = []
    for _ in range(n):
        stem = rng.choice(stems)
        sentences = [rng.choice(stem) for _ in range(rng.randint(5, 12))]
        out.append(" ".join(sentences))
    return out


def corpus_repeats(seed: int = 7, n: int = 40) -> list[str]:
    """Degenerate generations that repeat words and phrases many times (clipping)."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        unit = " ".join(rng.choice(WORDS[:8]) for _ in range(rng.randint(1, 3)))
        filler = " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 10)))
        out.append(" ".join([unit] * rng.randint(1, 40)) + " " + filler)
    return out


def corpus_batch(seed: int = 6, n: int = 2000) -> list[str]:
    """A questioner batch: mostly distinct questions, some near-copies, a few empties."""
    rng = random.Random(seed)
    vocab = [f"w{k}" for k in range(1500)] + WORDS * 20
    out: list[str] = []
    for _ in range(n):
        r = rng.random()
        if out and r < 0.15:
            toks = rng.choice(out).split() or ["x"]
            for _ in range(rng.randint(0, 4)):
                toks[rng.randrange(len(toks))] = rng.choice(vocab)
            out.append(" ".join(toks))
        elif r < 0.17:
            out.append("")
        else:
            out.append(" ".join(rng.choice(vocab) for _ in range(rng.randint(20, 40))))
    return out


SMALL_CORPORA = {
    "templates": corpus_templates,
    "paraphrases": corpus_paraphrases,
    "short": corpus_short,
    "empties": corpus_with_empties,
    "long": corpus_long,
    "repeats": corpus_repeats,
}


@cache
def nltk_full_matrix(name: str) -> np.ndarray:
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    smoother = SmoothingFunction().method1
    texts = SMALL_CORPORA[name]()
    return np.array(
        [
            [sentence_bleu([r.split()], h.split(), smoothing_function=smoother) for r in texts]
            for h in texts
        ]
    )


# --------------------------------------------------------------------------- BLEU values


@pytest.mark.parametrize("name", sorted(SMALL_CORPORA))
def test_bleu_matrix_equals_nltk(name, nltk_bleu):
    texts = SMALL_CORPORA[name]()
    ours = zt.bleu_matrix(texts)
    expected = nltk_full_matrix(name)
    assert ours.dtype == np.float64 and ours.shape == (len(texts), len(texts))
    np.testing.assert_allclose(ours, expected, rtol=0, atol=1e-9)
    # in fact the arithmetic is replayed operation by operation: bitwise equal
    assert np.array_equal(ours, expected)


def test_bleu_short_identical_strings_by_hand(nltk_bleu):
    # method 1 turns every missing order into 0.1 / 1, so self-BLEU of k < 4 tokens
    # is 0.1 ** ((4 - k) / 4)
    texts = ["a", "a b", "a b c", "a b c d", ""]
    ours = np.diag(zt.bleu_matrix(texts))
    expected = [0.1**0.75, 0.1**0.5, 0.1**0.25, 1.0, 0.0]
    np.testing.assert_allclose(ours, expected, rtol=0, atol=1e-12)
    assert [round(v, 3) for v in ours[:3]] == [0.178, 0.316, 0.562]
    assert [nltk_bleu(t, t) for t in texts] == ours.tolist()


def test_bleu_is_asymmetric_and_distances_use_upper_triangle(nltk_bleu):
    texts = ["the cat sat on the mat today", "the cat sat on the mat", "a dog"]
    full = zt.bleu_matrix(texts)
    assert full[0, 1] != full[1, 0]  # brevity penalty only hits the shorter hypothesis
    d = zt.bleu_distances(texts)
    assert np.array_equal(d, d.T) and np.all(np.diag(d) == 0)
    for i in range(3):
        for j in range(i + 1, 3):
            assert d[i, j] == 1 - nltk_bleu(texts[i], texts[j])
    condensed = zt.condensed_bleu_distances(texts)
    assert condensed.tolist() == [d[0, 1], d[0, 2], d[1, 2]]


def test_bleu_very_long_texts(nltk_bleu):
    # thousands of tokens: exercises the wide-integer path of the statistics grouping
    rng = random.Random(8)
    vocab = [f"t{k}" for k in range(300)]
    base = [rng.choice(vocab) for _ in range(2500)]
    texts = [" ".join(base[: rng.randint(1500, 2500)]) for _ in range(3)]
    texts += [" ".join(rng.choice(vocab) for _ in range(2000)) for _ in range(2)]
    ours = zt.bleu_matrix(texts)
    for i, hyp in enumerate(texts):
        for j, ref in enumerate(texts):
            assert ours[i, j] == nltk_bleu(hyp, ref)


def test_bleu_empty_inputs():
    assert zt.bleu_matrix([]).shape == (0, 0)
    assert zt.bleu_distances([]).shape == (0, 0)
    assert zt.bleu_matrix([""]).tolist() == [[0.0]]
    assert zt.bleu_distances(["only one"]).tolist() == [[0.0]]
    assert zt.bleu_matrix(["", "", ""]).tolist() == [[0.0] * 3] * 3


# --------------------------------------------------------------------------- clustering


@pytest.mark.parametrize("threshold", [0.5, 0.25])
@pytest.mark.parametrize("name", sorted(SMALL_CORPORA))
def test_clusters_match_published_pipeline(name, threshold, sklearn_labels):
    texts = SMALL_CORPORA[name]()
    full = nltk_full_matrix(name)
    # the published matrix: upper triangle (hyp = earlier text) mirrored, diagonal 0
    dist = np.triu(1 - full, k=1)
    dist = dist + dist.T
    expected = sklearn_labels(dist, threshold)
    ids, shares = zt.bleu_clusters(texts, threshold=threshold)
    assert_same_partition(ids, expected)
    assert_first_seen_dense(ids)
    assert ids.max() + 1 == len(set(expected.tolist()))
    np.testing.assert_array_equal(shares, published_shares(expected))
    assert shares.dtype == np.float64


def test_corpora_are_not_trivial():
    # guard against the partition tests passing vacuously (all singletons / one blob)
    for name, make in SMALL_CORPORA.items():
        ids, _ = zt.bleu_clusters(make(), threshold=0.5)
        k = ids.max() + 1
        assert 1 < k < len(ids), name


def test_published_double_loop_helper_agrees(nltk_bleu, sklearn_labels):
    # a literal transcription of the published loop on a short corpus, to make sure the
    # derived matrix used above is the same object
    texts = corpus_templates(seed=9, n=30)
    dist = published_distance_matrix(texts, nltk_bleu)
    assert np.array_equal(dist, zt.bleu_distances(texts))
    ids, _ = zt.bleu_clusters(texts)
    assert_same_partition(ids, sklearn_labels(dist, 0.5))


def test_empty_strings_never_cluster():
    texts = ["", "", "what is 2 plus 2 equal to", "what is 2 plus 2 equal to", ""]
    ids, shares = zt.bleu_clusters(texts)
    assert ids.tolist() == [0, 1, 2, 2, 3]
    assert shares.tolist() == [0.2, 0.2, 0.4, 0.4, 0.2]


def test_identical_short_questions_do_not_cluster_at_half():
    # distance between identical 1- and 2-token texts is 1 - 0.178 and 1 - 0.316 > 0.5,
    # for 3 tokens it is 1 - 0.562 < 0.5
    ids, _ = zt.bleu_clusters(["x", "x", "x y", "x y", "x y z", "x y z"])
    assert ids.tolist() == [0, 1, 2, 3, 4, 4]


def test_threshold_equality_two_texts(nltk_bleu, sklearn_labels):
    texts = ["how many apples does maya have left now", "how many apples does maya have"]
    d = 1 - nltk_bleu(texts[0], texts[1])
    dist = np.array([[0.0, d], [d, 0.0]])
    # exactly at the threshold: scikit-learn keeps them apart
    assert len(set(sklearn_labels(dist, d).tolist())) == 2
    ids, _ = zt.bleu_clusters(texts, threshold=d)
    assert ids.tolist() == [0, 1]
    above = float(np.nextafter(d, np.inf))
    assert len(set(sklearn_labels(dist, above).tolist())) == 1
    ids, _ = zt.bleu_clusters(texts, threshold=above)
    assert ids.tolist() == [0, 0]


def test_threshold_equal_to_merge_heights(sklearn_labels):
    hierarchy = pytest.importorskip("scipy.cluster.hierarchy")
    texts = corpus_templates(seed=11, n=80)
    dist = zt.bleu_distances(texts)
    # make sure the matrix is the NLTK one before using its merge heights
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    sm = SmoothingFunction().method1
    rng = random.Random(0)
    for _ in range(200):
        i, j = sorted(rng.sample(range(len(texts)), 2))
        score = sentence_bleu([texts[j].split()], texts[i].split(), smoothing_function=sm)
        assert dist[i, j] == 1 - score
    tree = hierarchy.linkage(dist[np.triu_indices(len(texts), k=1)], method="average")
    heights = np.unique(tree[:, 2])
    differs_from_fcluster = 0
    for h in heights[:: max(1, len(heights) // 15)]:
        expected = sklearn_labels(dist, float(h))
        ids, _ = zt.bleu_clusters(texts, threshold=float(h))
        assert_same_partition(ids, expected)
        loose = hierarchy.fcluster(tree, t=float(h), criterion="distance")
        differs_from_fcluster += len(set(loose.tolist())) != len(set(expected.tolist()))
    # the equality case is real: fcluster's "<=" rule would have given other partitions
    assert differs_from_fcluster > 0


def test_threshold_zero_and_large():
    texts = ["a b c d e", "a b c d e", "f g h i j"]
    ids, _ = zt.bleu_clusters(texts, threshold=0.0)
    assert ids.tolist() == [0, 1, 2]  # nothing is strictly below 0
    ids, shares = zt.bleu_clusters(texts, threshold=1.5)
    assert ids.tolist() == [0, 0, 0] and shares.tolist() == [1.0, 1.0, 1.0]


def test_cluster_edge_sizes():
    ids, shares = zt.bleu_clusters([])
    assert ids.shape == (0,) and shares.shape == (0,)
    assert ids.dtype == np.int64 and shares.dtype == np.float64
    ids, shares = zt.bleu_clusters(["just one question here"])
    assert ids.tolist() == [0] and shares.tolist() == [1.0]


def test_batch_2000_questions(nltk_bleu, sklearn_labels):
    # The full NLTK oracle would need ~2M sentence_bleu calls (about a minute or more),
    # so this test splits the check: (1) 5,000 random ordered pairs of the matrix are
    # compared with NLTK bit for bit, (2) scikit-learn clusters our (verified) distance
    # matrix and must give our partition, and (3) the complete published pipeline, NLTK
    # loop included, runs on a random 300-question subset.
    texts = corpus_batch()
    n = len(texts)
    ids, shares = zt.bleu_clusters(texts, threshold=0.5)

    dist = zt.bleu_distances(texts)
    rng = np.random.default_rng(0)
    pairs = rng.integers(0, n, size=(5000, 2))
    for i, j in pairs.tolist():
        if i == j:
            continue
        lo, hi = min(i, j), max(i, j)
        assert dist[lo, hi] == 1 - nltk_bleu(texts[lo], texts[hi])
    full_sample = zt.bleu_matrix([texts[k] for k in range(0, n, 40)])
    sub = [texts[k] for k in range(0, n, 40)]
    for a in range(len(sub)):
        for b in range(len(sub)):
            assert full_sample[a, b] == nltk_bleu(sub[a], sub[b])

    expected = sklearn_labels(dist, 0.5)
    assert_same_partition(ids, expected)
    assert_first_seen_dense(ids)
    np.testing.assert_array_equal(shares, published_shares(expected))
    assert 1 < ids.max() + 1 < n

    subset_idx = sorted(random.Random(7).sample(range(n), 300))
    subset = [texts[k] for k in subset_idx]
    subset_dist = published_distance_matrix(subset, nltk_bleu)
    for threshold in (0.5, 0.25):
        expected = sklearn_labels(subset_dist, threshold)
        got, _ = zt.bleu_clusters(subset, threshold=threshold)
        assert_same_partition(got, expected)


def test_first_seen_labels_helper():
    assert zt.first_seen_labels(np.array([5, 5, 2, 9, 2])).tolist() == [0, 0, 1, 2, 1]
    assert zt.first_seen_labels(np.array([], dtype=int)).tolist() == []


# --------------------------------------------------------------------------- answers


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (r"so \boxed{42}", "42"),
        (r"\boxed{\frac{1}{2}}", r"\frac{1}{2}"),
        (r"\boxed{\sqrt{\frac{a}{b}}} done", r"\sqrt{\frac{a}{b}}"),
        (r"first \boxed{1}, finally \boxed{2}.", "2"),
        (r"spaced \boxed {7}", "7"),
        (r"\boxed{ 3 }", "3"),
        (r"\boxed{\{1, 2\}}", r"\{1, 2\}"),
        (r"\boxed{\left\{ x \right.}", r"\left\{ x \right."),
        (r"\boxed{}", ""),
        ("no box at all", None),
        (r"\boxed{\frac{1}{2}", None),  # unterminated
        (r"\boxed{1} and then \boxed{2", None),  # last box unterminated: no fallback
        (r"\boxed 5", None),  # brace-less form not supported
        (r"\fbox{5}", None),
    ],
)
def test_extract_boxed(text, expected):
    assert zt.extract_boxed(text) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("  12 ", "12"),
        ("$12$", "12"),
        ("$$ 12 $$", "12"),
        ("$1$ or $2$", "$1$ or $2$"),
        ("12.", "12"),
        ("$12$.", "12"),
        ("$12$ .", "12"),
        ("$$12$$.", "12"),
        ("$12.$", "12"),
        (r"\text{12}.", "12"),
        (r"5\text{ cm.}", "5 cm"),
        ("$1$ or $2$.", "$1$ or $2$"),
        ("3.5", "3.5"),
        ("...", "..."),
        (r"\left( 1,\!2 \right)", "( 1,2 )"),
        (r"x \rightarrow y", r"x \rightarrow y"),
        (r"5\text{ cm}", "5 cm"),
        (r"\text{\textbf{yes}}", "yes"),
        ("a \n\t  b", "a b"),
        (r"1\,000", "1000"),
        ("ABC", "ABC"),
    ],
)
def test_normalize_answer(raw, expected):
    assert zt.normalize_answer(raw) == expected


def test_sentence_period_after_the_math_gives_the_same_id():
    # the period ends the sentence, outside the delimiters: $12$. is 12
    row = [r"\boxed{$12$.}", r"\boxed{12}", r"\boxed{12.}", r"\boxed{$12$}"]
    ids, num = zt.group_answers([row])
    assert ids.tolist() == [[0, 0, 0, 0]] and num == 1


def test_extract_tag():
    text = "<question> first </question> then <question>\nsecond\n</question>"
    assert zt.extract_tag(text, "question") == "second"
    assert zt.extract_tag("<hint></hint>", "hint") == ""
    assert zt.extract_tag("<hint>open only", "hint") is None
    with pytest.raises(ValueError, match="tag"):
        zt.extract_tag("x", "<q>")


def test_group_answers_first_seen_and_ties():
    rows = [
        [box("7"), box("3"), box("7"), box("5"), box("3")],
        [box("1"), box("1"), box("1"), box("1"), box("1")],
        [box("$9$"), box("9."), box(" 9"), box("10"), box("10")],
    ]
    ids, num = zt.group_answers(rows)
    assert ids.dtype == np.int64 and ids.shape == (3, 5)
    assert ids.tolist() == [[0, 1, 0, 2, 1], [0, 0, 0, 0, 0], [0, 0, 0, 1, 1]]
    assert num == 3


def test_group_answers_unparseable_policies():
    row = ["no answer", box("2"), "still none", box("2"), r"\boxed{}"]
    ids, num = zt.group_answers([row])
    # distinct: unparseable replies are numbered after every parsed answer of the row
    assert ids.tolist() == [[1, 0, 2, 0, 3]] and num == 4
    # so an unparseable reply never wins a tie against a parsed answer
    ids, _ = zt.group_answers([["none here", box("8"), box("9")]])
    assert ids.tolist() == [[2, 0, 1]]
    ids, num = zt.group_answers([row], unparseable="bucket")
    assert ids.tolist() == [[0, 1, 0, 1, 0]] and num == 2
    # the published bucket can win the vote
    ids, _ = zt.group_answers([["a", "b", "c", box("4"), box("5")]], unparseable="bucket")
    assert ids.tolist() == [[0, 0, 0, 1, 2]]
    # all unparseable
    ids, num = zt.group_answers([["x", "y"]], unparseable="distinct")
    assert ids.tolist() == [[0, 1]] and num == 2
    ids, num = zt.group_answers([["x", "y"]], unparseable="bucket")
    assert ids.tolist() == [[0, 0]] and num == 1


def test_boxed_none_is_an_answer_except_under_r_zero():
    # decision: a reply that boxes the word None is an ordinary answer, distinct from a
    # reply with no box; only the R-Zero policy merges them, as its extractor does
    row = [box("None"), "no box at all", box("None"), box("7"), r"\boxed{unclosed"]
    ids, _ = zt.group_answers([row])
    assert ids.tolist() == [[0, 2, 0, 1, 3]]
    ids, _ = zt.group_answers([row], unparseable="bucket")
    assert ids.tolist() == [[0, 1, 0, 2, 1]]
    ids, _ = zt.group_answers([row], unparseable="r_zero")
    assert ids.tolist() == [[0, 0, 0, 1, 0]]  # "None" wins the published vote 4 / 5


def test_group_answers_r_zero_policy_issue_example():
    # [\boxed{}, no box, \boxed{3}, \boxed{3}, \boxed{5}, \boxed{6}]: R-Zero skips the
    # empty box in the count but keeps it in the denominator: label "3", p = 2 / 6
    row = [box(""), "no box", box("3"), box("3"), box("5"), box("6")]
    ids, num = zt.group_answers([row], unparseable="r_zero")
    assert ids.tolist() == [[4, 0, 1, 1, 2, 3]] and num == 5
    # the empty box comes last, so it loses every tie: with [\boxed{}, \boxed{3}] the
    # first real answer wins at p = 1 / 2, as published
    ids, _ = zt.group_answers([[box(""), box("3")]], unparseable="r_zero")
    assert ids.tolist() == [[1, 0]]
    # bucket gives the other published-looking answer, 'None' (ids 0 = unparseable)
    ids, _ = zt.group_answers([row], unparseable="bucket")
    assert ids.tolist() == [[0, 0, 1, 1, 2, 3]]
    # documented limit: all K empty -> R-Zero has no label and p = 0; ids give 1 / K
    ids, num = zt.group_answers([[box(""), r"\boxed{ }"]], unparseable="r_zero")
    assert ids.tolist() == [[0, 1]] and num == 2


def test_group_answers_callable_equivalence():
    calls = []

    def within_one(rep: str, cand: str) -> bool:
        calls.append((rep, cand))
        return abs(int(rep) - int(cand)) <= 1

    ids, num = zt.group_answers(
        [[box("1"), box("3"), box("2"), box("$3$"), box("9")]], equivalence=within_one
    )
    # "2" is within one of both representatives "1" and "3": it joins the first (id 0);
    # "$3$" normalises to "3", equal to a representative, so no call is needed
    assert ids.tolist() == [[0, 1, 0, 1, 2]] and num == 3
    assert ("1", "3") in calls and ("1", "2") in calls
    assert all("$" not in rep + cand for rep, cand in calls)  # normalised strings only


def test_group_answers_math_equivalence():
    pytest.importorskip("math_verify", reason="math_verify backs equivalence='math'")
    rows = [
        [box(r"\frac{1}{2}"), box("0.5"), box("1/2"), box("3"), box(r"\dfrac{1}{2}")],
        [box("2"), box("2.0"), box("3"), box("2"), "nothing"],
    ]
    ids, num = zt.group_answers(rows, equivalence="math")
    assert ids.tolist() == [[0, 0, 0, 1, 0], [0, 0, 1, 0, 2]]
    assert num == 3
    exact_ids, _ = zt.group_answers(rows)
    assert exact_ids.tolist()[1] == [0, 1, 2, 0, 3]
    assert zt.math_equivalent(r"\frac{1}{2}", "0.5")
    assert not zt.math_equivalent("3", "4")


def test_group_answers_math_missing_dependency(monkeypatch):
    monkeypatch.setitem(sys.modules, "math_verify", None)
    with pytest.raises(ImportError, match=r"zero-rewards\[math\]"):
        zt.group_answers([[box("1")]], equivalence="math")


def test_group_answers_validation():
    with pytest.raises(ValueError, match="B >= 1"):
        zt.group_answers([])
    with pytest.raises(ValueError, match="K >= 1"):
        zt.group_answers([[], []])
    with pytest.raises(ValueError, match="ragged"):
        zt.group_answers([[box("1"), box("2")], [box("1")]])
    with pytest.raises(TypeError, match=r"replies\[0\]\[1\]"):
        zt.group_answers([[box("1"), 2]])
    with pytest.raises(TypeError, match="replies"):
        zt.group_answers("not nested")
    with pytest.raises(TypeError, match=r"replies\[0\]"):
        zt.group_answers(["abc"])
    with pytest.raises(ValueError, match="unparseable"):
        zt.group_answers([[box("1")]], unparseable="drop")
    with pytest.raises(ValueError, match="equivalence"):
        zt.group_answers([[box("1")]], equivalence="sympy")
    with pytest.raises(TypeError, match="equivalence"):
        zt.group_answers([[box("1")]], equivalence=3)
    with pytest.raises(TypeError, match="text"):
        zt.extract_boxed(None)
    with pytest.raises(TypeError, match="s must"):
        zt.normalize_answer(12)


def test_text_validation():
    with pytest.raises(TypeError, match="texts"):
        zt.bleu_clusters("a single string")
    with pytest.raises(TypeError, match=r"texts\[1\]"):
        zt.bleu_matrix(["ok", None])
    with pytest.raises(ValueError, match="threshold"):
        zt.bleu_clusters(["a", "b"], threshold=-0.1)
    with pytest.raises(ValueError, match="threshold"):
        zt.bleu_clusters(["a", "b"], threshold=math.nan)
    with pytest.raises(TypeError, match="threshold"):
        zt.bleu_clusters(["a", "b"], threshold="0.5")
    with pytest.raises(TypeError, match="texts"):
        zt.r_zero_solver_format_ok("x")


def test_numpy_string_arrays_are_accepted_like_lists():
    rows = [[box("7"), box("3"), "none", box("$7$.")], [box("1"), box("1"), box("2"), box("x")]]
    expected = zt.group_answers(rows)
    for array in (np.array(rows), np.array(rows, dtype=object), [np.array(r) for r in rows]):
        ids, num = zt.group_answers(array)
        assert ids.tolist() == expected[0].tolist() and num == expected[1]
    assert zt.group_answers(np.array(rows).astype(np.str_), unparseable="bucket")[0].tolist() == (
        zt.group_answers(rows, unparseable="bucket")[0].tolist()
    )
    with pytest.raises(ValueError, match="2-D"):
        zt.group_answers(np.array(rows[0]))
    with pytest.raises(TypeError, match=r"replies\[0\]\[1\]"):
        zt.group_answers(np.array([["a", 1]], dtype=object))

    texts = ["the cat sat on the mat today", "the cat sat on the mat", "a dog ran", ""]
    for array in (np.array(texts), np.array(texts, dtype=object)):
        assert np.array_equal(zt.bleu_matrix(array), zt.bleu_matrix(texts))
        assert np.array_equal(zt.bleu_distances(array), zt.bleu_distances(texts))
        condensed = zt.condensed_bleu_distances(texts)
        assert np.array_equal(zt.condensed_bleu_distances(array), condensed)
        for got, want in zip(zt.bleu_clusters(array), zt.bleu_clusters(texts), strict=True):
            assert np.array_equal(got, want)
    with pytest.raises(ValueError, match="1-D"):
        zt.bleu_matrix(np.array([texts, texts]))
    with pytest.raises(TypeError, match=r"texts\[1\]"):
        zt.bleu_matrix(np.array(["a", None], dtype=object))

    replies = [["<think>a</think> \\boxed{1}", "no"], ["<think>b</think>\\boxed{2}", "<think>"]]
    for check in (zt.r_zero_solver_format_ok, zt.mm_zero_solver_format_ok,
                  zt.r_zero_challenger_format_ok, zt.g_zero_proposer_format_ok):
        flat = check([r for row in replies for r in row])
        grid = check(np.array(replies))  # [B, K] replies give [B, K] flags
        assert grid.shape == (2, 2) and grid.dtype == bool
        assert grid.ravel().tolist() == flat.tolist()
        assert check(np.array(replies[0], dtype=object)).tolist() == flat[:2].tolist()
    assert zt.r_zero_solver_format_ok(np.array(replies)).tolist() == [[True, False], [True, False]]
    with pytest.raises(TypeError, match=r"texts\[0, 1\]"):
        zt.r_zero_solver_format_ok(np.array([["a", 3]], dtype=object))
    assert zt.extract_boxed(np.array(replies)[1, 0]) == "2"  # numpy.str_ elements
    assert zt.normalize_answer(np.str_("$12$.")) == "12"


# --------------------------------------------------------------------------- formats


def test_r_zero_solver_format():
    good = [
        r"<think>reason</think> so \boxed{4}",
        "<think>a\nb</think>\n\\boxed{x} and some trailing text",
        r"<think></think>\boxed{}",
        # the published rule deletes whitespace around "<", ">" and "/" first
        r" <think>leading space</think>\boxed{4}",
        r"< think >spaced tags</ think > \boxed{4}",
    ]
    bad = [
        r"<think>no close tag \boxed{4}",
        r"x <think>text before</think>\boxed{4}",
        r"\boxed{4}<think>order</think>",
        r"<think>ok</think> no box",
        r"<think>ok</think> \boxed{4",
        "",
    ]
    assert zt.r_zero_solver_format_ok(good).tolist() == [True] * len(good)
    assert zt.r_zero_solver_format_ok(bad).tolist() == [False] * len(bad)


def test_mm_zero_solver_format():
    good = [
        r"<think>reason</think>\boxed{4}",
        "<think>reason</think>\n\n\\boxed{4}\n",
        r"< think >spaced tags</ think > \boxed{4}",
    ]
    bad = [
        r"<think>reason</think> the answer is \boxed{4}",
        r"<think>reason</think>\boxed{4} because",
        r"<think>reason</think>",
        r"reason</think>\boxed{4}",
    ]
    assert zt.mm_zero_solver_format_ok(good).tolist() == [True] * 3
    assert zt.mm_zero_solver_format_ok(bad).tolist() == [False] * len(bad)


def test_r_zero_challenger_format():
    good = [
        "<question>What is 2+3?</question> \\boxed{5}",
        "<think>plan</think>\n<question>\nA long\nquestion?\n</question>\nanswer \\boxed{1}",
    ]
    bad = [
        "<question>What is 2+3?</question> no box",
        "<question>   </question> \\boxed{5}",
        "<question>What is 2+3? \\boxed{5}",
        "<question>Q</question> \\boxed{}",
        "\\boxed{5}",
    ]
    out = zt.r_zero_challenger_format_ok(good + bad)
    assert out.dtype == np.bool_
    assert out.tolist() == [True] * 2 + [False] * 5


def test_g_zero_proposer_format():
    texts = [
        "<question>Q?</question><hint>use symmetry</hint>",
        "<hint>h</hint>\n<question>\nQ?\n</question>",
        "<question>Q?</question>",
        "<question>Q?</question><hint> </hint>",
        "<question></question><hint>h</hint>",
    ]
    assert zt.g_zero_proposer_format_ok(texts).tolist() == [True, True, False, False, False]
    # echoes of the prompt template are rejected, as by G-Zero's parser
    echoes = [
        "<question>[Your question]</question><hint>use symmetry</hint>",
        "<question>Q?</question><hint>[ your hint ]</hint>",
        "<question>Q?</question><hint>your hint here</hint>",
        "<question>YOUR PROBLEM\n HERE</question><hint>h</hint>",
        "<question>[your answer]: 3</question><hint>h</hint>",
    ]
    assert zt.g_zero_proposer_format_ok(echoes).tolist() == [False] * 5
    # whole words only, and "your answer here" is not in the published list; a real
    # question that happens to contain "your question here" is rejected, as published
    near = [
        "<question>Q?</question><hint>your hints here</hint>",
        "<question>[yours questions]</question><hint>h</hint>",
        "<question>Q?</question><hint>your answer here</hint>",
        "<question>Is your question here a prime?</question><hint>h</hint>",
    ]
    assert zt.g_zero_proposer_format_ok(near).tolist() == [True, True, True, False]


# --------------------------------------------------------------------------- packaging


def test_example_batch_end_to_end():
    data = zt.load_example_batch()
    outputs, replies = data["challenger_outputs"], data["solver_replies"]
    assert len(outputs) == 8 and all(len(row) == 5 for row in replies)
    ok = zt.r_zero_challenger_format_ok(outputs)
    assert ok.sum() == 7
    questions = [zt.extract_tag(t, "question") or "" for t in outputs]
    ids, _ = zt.bleu_clusters(questions)
    assert ids[0] == ids[1] and len(set(ids.tolist())) == 7
    answer_ids, num = zt.group_answers(replies)
    assert answer_ids.shape == (8, 5) and 1 <= num <= 5


def test_import_without_jax_or_torch():
    code = (
        "import sys\n"
        "for name in ('jax', 'jaxlib', 'torch', 'sklearn', 'nltk', 'math_verify'):\n"
        "    sys.modules[name] = None\n"
        "import zero_text\n"
        "ids, shares = zero_text.bleu_clusters(['a b c d', 'a b c d', 'e f'])\n"
        "assert ids.tolist() == [0, 0, 1]\n"
    )
    root = Path(__file__).resolve().parents[1]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]),
    }
    subprocess.run([sys.executable, "-c", code], check=True, cwd=root, env=env)
