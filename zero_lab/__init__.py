"""zero_lab: the framework-neutral part of the Lab.

A Lab trains a small categorical policy, from uniform logits, on fixed feedback
records with a problem's reward functions (60 plain gradient steps at learning rate
0.5 on the exact expected reward, float64) and checks that the target action ends
above ``PASS_PROB`` after rising by more than ``MIN_GAIN``.  This package holds the
records (``LABS``), the result type, the CLI (``zero-lab`` / ``python -m zero_lab``)
and the backends that run the optimiser on the public API of each twin:
``zero_lab.jax_backend`` (``zero_jax`` and optax) and ``zero_lab.torch_backend``
(``zero_torch`` and torch.optim).  Importing ``zero_lab`` does not import jax or torch.
"""

from zero_lab.functions import FUNCTION_NAMES, check_schedule, resolve_functions
from zero_lab.records import LABS, Action, Lab, get_lab, padded
from zero_lab.result import MIN_GAIN, PASS_PROB, LabResult

__all__ = [
    "FUNCTION_NAMES",
    "LABS",
    "MIN_GAIN",
    "PASS_PROB",
    "Action",
    "Lab",
    "LabResult",
    "check_schedule",
    "get_lab",
    "padded",
    "resolve_functions",
]
