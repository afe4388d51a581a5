"""Batched CPU throughput of every zero_jax reward against the zero_torch twin
(eager and torch.compile) and a NumPy implementation, each backend in its own
subprocess, with the memory-copy bandwidth of the same run as the limit.

Run from the repository root: ``python -m bench`` (full) or ``python -m bench --quick``.
"""
