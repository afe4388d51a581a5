"""BLEU repetition clustering: ``zero_text.bleu_clusters`` against the published
double loop (NLTK ``sentence_bleu`` for every pair + scikit-learn agglomerative
clustering), side by side in one process, on the same generated questions.

    python -m bench.bleu            # 2,048 questions (the published loop takes minutes)
    python -m bench.bleu --n 256    # a quick look

Both sides must give the same partition; the ratio of their median times is the
claim.  Writes ``bleu.json`` to the scratch directory (``--out DIR``, or the committed
``bench/results/`` with ``--update-committed``: :mod:`bench.output`); :func:`markdown`
and :func:`headline` render its section of bench/RESULTS.md (:mod:`bench.separate`).
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import sys
import time
from typing import Any

import numpy as np

from bench import extras, output

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


def timed(fn, repeats: int) -> tuple[list[float], object]:
    times, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return times, out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.bleu", description=" ".join(__doc__.split("\n\n")[0].split())
    )
    parser.add_argument("--n", type=int, default=2048, help="number of questions")
    parser.add_argument("--threshold", type=float, default=0.5)
    parser.add_argument("--repeats", type=int, default=5, help="repeats of zero_text's side")
    output.add_arguments(parser, "bleu.json")
    args = parser.parse_args(argv)
    extras.require("python -m bench.bleu", {"nltk": "nltk", "sklearn": "scikit-learn"})
    out = output.directory(args)
    import zero_text

    texts = questions(args.n)
    ours_times, (ids, _) = timed(
        lambda: zero_text.bleu_clusters(texts, threshold=args.threshold), args.repeats
    )
    print(f"zero_text.bleu_clusters: median {statistics.median(ours_times):.3f} s", flush=True)
    theirs_times, labels = timed(lambda: published(texts, args.threshold), 1)
    print(f"published nltk loop + sklearn: {theirs_times[0]:.1f} s", flush=True)
    result = {
        "n": args.n,
        "threshold": args.threshold,
        "pairs": args.n * (args.n - 1) // 2,
        "zero_text_seconds": ours_times,
        "published_seconds": theirs_times,
        "speedup": theirs_times[0] / statistics.median(ours_times),
        "first_call_speedup": theirs_times[0] / ours_times[0],
        "same_partition": same_partition(ids, labels),
        "clusters": int(ids.max()) + 1,
        "python": sys.version.split()[0],
        "machine": platform.machine(),
    }
    path = out / "bleu.json"
    path.write_text(json.dumps(result, indent=2))
    print(f"wrote {path}")
    for doc in output.finish(out):
        print(f"wrote {doc}")
    print(
        f"n={args.n}: {result['clusters']} clusters, same partition: {result['same_partition']}, "
        f"speed-up {result['speedup']:.0f}x (first call {result['first_call_speedup']:.0f}x)"
    )
    return 0 if result["same_partition"] else 1


def headline(result: dict[str, Any]) -> list[str]:
    from bench.tables import num as _num

    return [
        f"- BLEU repetition clustering (`python -m bench.bleu`, {_num(result['n'])} questions): "
        f"`zero_text.bleu_clusters` **{_num(result['speedup'])}x** faster than the published "
        "loop, "
        + ("the same partition." if result.get("same_partition") else "**different partitions**.")
    ]


def markdown(result: dict[str, Any], results_dir: str = "results") -> str:
    """The BLEU section of bench/RESULTS.md."""
    from bench.tables import num as _num

    zt = float(np.median(result["zero_text_seconds"]))
    pub = float(np.median(result["published_seconds"]))
    same = "the same partition" if result.get("same_partition") else "**different partitions**"
    return "\n".join(
        [
            f"`python -m bench.bleu` clusters {_num(result['n'])} generated challenger questions "
            "(templated word problems, some of them light edits of earlier ones) at BLEU "
            f"threshold {_num(result['threshold'])} with `zero_text.bleu_clusters` and with the "
            f"published code path (NLTK `sentence_bleu` for each of the {_num(result['pairs'])} "
            "pairs, then scikit-learn's agglomerative clustering), in one process, and checks "
            "that the partitions agree.",
            "",
            f"- `zero_text`: {_num(zt)} s (median of {len(result['zero_text_seconds'])} calls); "
            f"published path: {_num(pub)} s (median of {len(result['published_seconds'])})",
            f"- Speed-up **{_num(result['speedup'])}x** ({_num(result.get('first_call_speedup'))}x "
            f"on the first, cold call); {same}, {_num(result['clusters'])} clusters",
            f"- Python {result.get('python', '?')} on {result.get('machine', '?')}; raw numbers "
            f"in `{results_dir}/bleu.json`",
        ]
    )


if __name__ == "__main__":
    raise SystemExit(main())
