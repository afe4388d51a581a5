"""SPIRAL's role-conditioned advantages inside a training loop (TRL, Tunix, your own).

:func:`zero_jax.role_baseline_advantages` / :func:`zero_torch.role_baseline_advantages`
are pure: the per-role moving baselines go in and come out.  A stack's advantage hook
is called once per step with that step's rewards, so the baselines have to live
somewhere between calls; :class:`RoleBaselines` holds them::

    from zero_stacks.roles import RoleBaselines

    baselines = RoleBaselines(num_roles=2, library="zero_torch")   # TRL: torch tensors
    advantages = baselines(rewards, roles)     # a step: scored, then the baselines move

(in TRL, inside your ``GRPOTrainer`` subclass where the advantages are computed, with
``roles`` from a dataset column such as ``inputs[i]["role"]``).  Tunix calls its
advantage estimator with the rewards and ``num_generations`` only, so
:class:`RoleAdvantageEstimator` reads each sample's role from its position
(``layout``): ``"groups"`` (the default) gives prompt ``g``'s completions role
``g % num_roles``, for a dataset whose prompts cycle through the roles in every batch
(``challenger, solver, challenger, solver, ...``); ``"samples"`` gives sample ``j``
role ``j % num_roles``; a callable ``(num_samples, num_generations) -> ids`` anything
else.  :func:`register_role_advantage_estimator` registers one for
``GRPOConfig(advantage_estimator=...)``.

Caveats: Tunix calls the estimator on evaluation batches too, and they move the
baselines as training batches do; SPIRAL drops trajectories whose advantage is exactly
0 (``filter_zero_adv``) and discounts earlier turns (``gamma``): both are the caller's.
A group-relative comparison per role (prime-rl's hierarchical GRPO) needs no state:
:func:`zero_jax.group_advantages` with ``scale="none"`` on groups laid out per role.
"""

from __future__ import annotations

import importlib
import itertools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from zero_contracts import CONTRACTS
from zero_stacks._backend import Backend
from zero_stacks._checks import check_count

__all__ = [
    "LAYOUTS",
    "RoleAdvantageEstimator",
    "RoleBaselines",
    "register_role_advantage_estimator",
]

#: Built-in ``layout`` values of :class:`RoleAdvantageEstimator`.
LAYOUTS = ("groups", "samples")
#: The libraries :class:`RoleBaselines` computes with, and the stack module holding
#: each one's array conversions.
_LIBRARIES = {"zero_jax": "zero_stacks.tunix", "zero_torch": "zero_stacks.trl"}
#: The library's default decay (SPIRAL's ``role_baseline_ema_gamma``).
_DECAY: float = CONTRACTS["role_baseline_advantages"].hyper("decay").default


def _backend(library: str) -> Backend:
    backend: Backend = importlib.import_module(_LIBRARIES[library]).BACKEND
    return backend


class RoleBaselines:
    """Per-role moving baselines carried between steps (SPIRAL's RAE).

    ``baselines`` (float64 NumPy ``[num_roles]``) start at 0, as SPIRAL's EMA does.
    Each call scores a step's rewards against them with
    ``<library>.role_baseline_advantages`` (in batch order, each entry against its
    role's baseline before its own reward moves it) and keeps the new baselines.
    ``library`` is ``"zero_torch"`` (inputs may be torch tensors; the advantages come
    back as a tensor on the rewards' device) or ``"zero_jax"`` (NumPy advantages);
    either way in the rewards' dtype.  Invalid data (a non-finite kept reward, a role outside
    ``[0, num_roles)``) raises ``ValueError`` and leaves the baselines unchanged.
    Picklable; :meth:`reset` starts over.
    """

    num_roles: int
    decay: float
    library: str
    baselines: np.ndarray

    def __init__(self, num_roles: int, *, decay: float = _DECAY, library: str = "zero_jax") -> None:
        num_roles = check_count(num_roles, "num_roles")
        if isinstance(decay, bool) or not isinstance(decay, (int, float)) or not (
            math.isfinite(decay) and 0 <= decay <= 1
        ):
            raise ValueError(f"decay must be a number in [0, 1], got {decay!r}")
        if library not in _LIBRARIES:
            raise ValueError(f"library must be one of {sorted(_LIBRARIES)}, got {library!r}")
        self.num_roles = num_roles
        self.decay = float(decay)
        self.library = library
        self.baselines = np.zeros(num_roles)

    def reset(self) -> None:
        """Baselines back to 0."""
        self.baselines = np.zeros(self.num_roles)

    def __call__(self, rewards: Any, roles: Any, mask: Any = None) -> Any:
        """Advantages ``[B]`` of one step's ``rewards`` (float ``[B]``) by ``roles``
        (integer ``[B]``), entries where ``mask`` (optional bool ``[B]``) is False left
        out (advantage 0)."""
        backend = _backend(self.library)
        torch_in = self.library == "zero_torch" and type(rewards).__module__ == "torch"
        r, k = backend.to_numpy(rewards), backend.to_numpy(roles)
        m = None if mask is None else backend.to_numpy(mask)
        advantages, new = backend.run(
            "role_baseline_advantages", r, k, self.baselines, m,
            num_roles=self.num_roles, decay=self.decay,
        )  # float64 baselines (float32 in JAX with x64 off); advantages in the rewards' dtype
        self.baselines = np.asarray(new, dtype=np.float64)
        advantages = np.asarray(advantages).astype(r.dtype)
        if torch_in:
            return backend.to_array(np.ascontiguousarray(advantages)).to(rewards.device)
        return advantages

    def __repr__(self) -> str:
        return (
            f"{type(self).__module__}.{type(self).__qualname__}({self.num_roles}, "
            f"decay={self.decay!r}, library={self.library!r})"
        )


def _layout(layout: str | Callable[[int, int], Any]) -> str | Callable[[int, int], Any]:
    if callable(layout) or layout in LAYOUTS:
        return layout
    raise ValueError(f"layout must be one of {list(LAYOUTS)} or a callable, got {layout!r}")


class RoleAdvantageEstimator(RoleBaselines):
    """A Tunix advantage estimator with per-role moving baselines (zero_jax).

    Called by Tunix as ``estimator(rewards=..., num_generations=...)`` with the flat
    ``[B * G]`` rewards of a step; the role of each sample comes from ``layout`` (see
    the module's doc).  ``__name__`` is the name it is registered under.
    """

    __name__: str
    layout: str | Callable[[int, int], Any]

    def __init__(
        self,
        num_roles: int,
        name: str = "zero_rewards_rae",
        *,
        decay: float = _DECAY,
        layout: str | Callable[[int, int], Any] = "groups",
    ) -> None:
        super().__init__(num_roles, decay=decay, library="zero_jax")
        if not isinstance(name, str) or not name:
            raise ValueError(f"name must be a non-empty str, got {name!r}")
        self.__name__ = name
        self.layout = _layout(layout)

    def roles(self, num_samples: int, num_generations: int) -> np.ndarray:
        """The role id of each of ``num_samples`` samples."""
        if self.layout in LAYOUTS:  # role ids cycled per prompt's group or per sample
            step = num_generations if self.layout == "groups" else 1
            cycle = itertools.cycle(np.repeat(range(self.num_roles), step).tolist())
            return np.asarray(list(itertools.islice(cycle, num_samples)))
        assert callable(self.layout)
        return np.asarray(self.layout(num_samples, num_generations))

    def __call__(  # type: ignore[override]
        self, rewards: Any, num_generations: int
    ) -> np.ndarray:
        g = check_count(num_generations, "num_generations")
        r = np.asarray(rewards)
        if r.ndim != 1 or r.size == 0 or r.size % g:
            raise ValueError(
                f"rewards must be a non-empty flat [B * num_generations] vector, "
                f"got shape {list(r.shape)} with num_generations={g}"
            )
        advantages: np.ndarray = super().__call__(r, self.roles(r.size, g))
        return advantages

    def __repr__(self) -> str:
        return (
            f"{type(self).__module__}.{type(self).__qualname__}({self.num_roles}, "
            f"{self.__name__!r}, decay={self.decay!r}, layout={self.layout!r})"
        )


def register_role_advantage_estimator(
    num_roles: int,
    name: str = "zero_rewards_rae",
    *,
    decay: float = _DECAY,
    layout: str | Callable[[int, int], Any] = "groups",
) -> RoleAdvantageEstimator:
    """Register a :class:`RoleAdvantageEstimator` in Tunix's advantage-estimator
    registry (needs the ``tunix`` extra); pass ``estimator.__name__`` to
    ``GRPOConfig(advantage_estimator=...)``.  Returns the estimator, whose
    ``baselines`` you can log or checkpoint."""
    from tunix.rl import function_registry

    estimator = RoleAdvantageEstimator(num_roles, name, decay=decay, layout=layout)
    function_registry.register_advantage_estimator(estimator.__name__)(estimator)
    return estimator
