"""Batched CPU throughput of every zero_jax reward against the zero_torch twin
(eager and torch.compile), a NumPy implementation and a bare jitted kernel of the same
math (``bench.bare``), each backend in its own subprocess, with the memory-copy
bandwidth of the same run as the limit; every timed chunk is watched for other
processes on the cores (``bench.contention``) and JAX's runtime limits are measured
with and without the user-side settings (``bench.limits``).

Run from the repository root: ``python -m bench`` (full) or ``python -m bench --quick``;
``python -m bench.step`` times the rewards inside a GRPO update; ``python -m bench.bleu``
the BLEU clustering; ``python -m bench.report --markdown`` writes bench/RESULTS.md.
"""
