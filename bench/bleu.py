"""``python -m bench.bleu``: BLEU repetition clustering, ``zero_text.bleu_clusters``
against the published double loop (NLTK ``sentence_bleu`` for every pair, then
scikit-learn's agglomerative clustering), in one process, on the same generated
questions.  Both must give the same partition; the ratio of the times is the claim.
Writes ``bleu.json`` (``--out DIR``)."""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import time

import numpy as np

from bench import output

NAMES = ["Maya", "Tom", "Ana", "Li", "Omar", "Sara", "Ken", "Ivy"]
ITEMS = ["notebooks", "pens", "apples", "tickets", "books", "cups", "shirts", "plants"]
TEMPLATES = [
    "{n} buys {a} {i} at ${p} each and {b} {j} at ${q} each. How much does {n} spend in total?",
    "A shop sells {i} for ${p} each. {n} has ${m}. How many {i} can {n} buy and how much is left?",
    "{n} reads {a} pages on Monday and {b} times as many on Tuesday. How many pages in total?",
    "A train travels {m} km in {a} hours. What is its average speed in kilometres per hour?",
    "A rectangle has a perimeter of {m} cm and a length of {a} cm. What is its area?",
    "The average of {a} numbers is {p}. If one number is removed the average is {q}. "
    "What number was removed?",
    "If {a} workers build a wall in {b} days, how many days would {c} workers need?",
    "A tank holds {m} litres and is {a}/{b} full. How many more litres fill it?",
]


def questions(n: int, seed: int = 0) -> list[str]:
    """A challenger batch: templated questions, about a fifth of them light edits of
    an earlier one (the near-duplicates the penalty exists for)."""
    rng = random.Random(seed)
    out: list[str] = []
    for _ in range(n):
        if out and rng.random() < 0.2:
            words = rng.choice(out).split()
            for _ in range(rng.randint(1, 3)):
                words[rng.randrange(len(words))] = str(rng.randint(2, 99))
            out.append(" ".join(words))
            continue
        fields = {
            "n": rng.choice(NAMES),
            "i": rng.choice(ITEMS),
            "j": rng.choice(ITEMS),
            "a": rng.randint(2, 12),
            "b": rng.randint(2, 12),
            "c": rng.randint(2, 12),
            "p": rng.randint(1, 40),
            "q": rng.randint(1, 40),
            "m": rng.randint(50, 500),
        }
        out.append(rng.choice(TEMPLATES).format(**fields))
    return out


def published(texts: list[str], threshold: float) -> np.ndarray:
    """The R-Zero / G-Zero code path: a Python double loop of sentence_bleu calls."""
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu
    from sklearn.cluster import AgglomerativeClustering

    smooth = SmoothingFunction().method1
    tokens = [t.split() for t in texts]
    n = len(texts)
    dist = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1, n):
            score = sentence_bleu([tokens[j]], tokens[i], smoothing_function=smooth)
            dist[i, j] = dist[j, i] = 1 - score
    model = AgglomerativeClustering(
        n_clusters=None, distance_threshold=threshold, metric="precomputed", linkage="average"
    )
    return model.fit_predict(dist)


def same_partition(a: np.ndarray, b: np.ndarray) -> bool:
    pairs = set(zip(a.tolist(), b.tolist(), strict=True))
    return len(pairs) == len(set(a.tolist())) == len(set(b.tolist()))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.bleu", description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=512, help="questions (the loop is quadratic)")
    ap.add_argument("--threshold", type=float, default=0.5)
    ap.add_argument("--repeats", type=int, default=5, help="calls of zero_text's side")
    output.add_arguments(ap, "bleu.json")
    args = ap.parse_args(argv)
    out = output.directory(args)
    import zero_text

    texts = questions(args.n)
    ours = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        ids, _ = zero_text.bleu_clusters(texts, threshold=args.threshold)
        ours.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    labels = published(texts, args.threshold)
    theirs = time.perf_counter() - t0
    result = {"n": args.n, "threshold": args.threshold, "zero_text_seconds": ours,
              "published_seconds": theirs, "speedup": theirs / statistics.median(ours),
              "same_partition": same_partition(np.asarray(ids), labels),
              "clusters": int(np.max(ids)) + 1,
              "loadavg": [round(x, 2) for x in os.getloadavg()]}
    (out / "bleu.json").write_text(json.dumps(result, indent=1) + "\n")
    print(f"n={args.n}: {result['clusters']} clusters, same partition "
          f"{result['same_partition']}, {result['speedup']:.0f}x faster")
    output.finish(out)
    return 0 if result["same_partition"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
