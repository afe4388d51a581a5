"""The bench: batched CPU throughput of the rewards, zero_jax against the torch twin and
NumPy, the rewards' share of a jitted GRPO step, BLEU clustering against the published
loop and the logits reductions against one pass over the logits.  ``python -m bench``
runs it all; bench/README.md says how it measures, bench/RESULTS.md what it found."""
