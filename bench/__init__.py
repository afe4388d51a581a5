"""Batched CPU throughput of every zero_jax reward against the zero_torch twin
(eager and torch.compile) and a NumPy implementation, each backend in its own
subprocess, with the memory-copy bandwidth of the same run as the limit and an overhead
report against a plain ``jax.jit`` of the same math (``bench.overhead``); the logits
reductions are read against one pass over the same logits and a copy of as many bytes
(``bench.logits``); every timed chunk is watched for other processes on the cores
(``bench.contention``) and JAX's runtime limits are measured with and without the
user-side settings (``bench.limits``).

Run from the repository root after ``pip install -e ".[bench]"``: ``python -m bench``
(full) or ``python -m bench --quick``; separately-run cases (``bench.separate``):
``python -m bench.step`` (the rewards inside a GRPO update), ``python -m bench.bleu`` (BLEU
clustering).  Every command writes to a scratch directory unless given ``--out DIR`` or
``--update-committed`` (``bench.output``); ``python -m bench.report --markdown``
regenerates bench/RESULTS.md and the README's bench summary from bench/results/.

Modules: ``cases`` (the grid, one entry per function), ``worker`` (one backend per
process), ``logits`` (the logits rows' reference passes), ``aggregate`` (timings to
rows), ``targets``, ``render`` and ``templates``
(the documents), ``plots``, ``separate`` (the separately-run cases), ``output`` and
``extras`` (where a run writes, what it needs).
"""
