"""zero_stacks: the zero-rewards inside the RL training stacks people use.

One module per stack, each giving reward functions in the stacks' signature
``reward(prompts, completions, **kwargs) -> list[float]`` (``num_generations``
completions per prompt, in contiguous groups) and the stack's advantage hook:

* :mod:`zero_stacks.tunix` (JAX): rewards computed by :mod:`zero_jax`, and
  ``group_advantages`` registered as a Tunix advantage estimator;
* :mod:`zero_stacks.trl` (PyTorch): rewards computed by :mod:`zero_torch`, and the
  ``ADVANTAGE_PRESETS`` entry that reproduces ``GRPOTrainer``'s advantages.

The string work (answer extraction, grouping, format gates, BLEU clusters) is
shared in ``zero_stacks._common`` on top of :mod:`zero_text`.  Importing a stack
module never imports the stack itself: only the Tunix registration helper needs
``tunix``.  This package is an application of the library: ``zero_jax``,
``zero_torch`` and ``zero_text`` never import it.
"""

from zero_stacks._common import CoderFeedback, RewardFn

__all__ = ["CoderFeedback", "RewardFn"]
