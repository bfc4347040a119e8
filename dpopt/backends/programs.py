"""Backends for the sub-programs mechanisms compile: mirror steps and polytope LMOs.

Gradient mechanisms do not solve a whole :class:`~dpopt.modeling.problem.Problem`;
they solve small public programs many times, for fresh noisy linear terms:

* a Bregman (mirror) step without a closed form
  (:class:`~dpopt.compile.bregman_program.BregmanProgram`), a conic program solved by a
  cvxpy-based backend (``clarabel``, ``scs``, ...);
* an :class:`~dpopt.sets.HPolytope`'s linear minimization oracle, a linear
  program solved by ``scipy-lp`` (HiGHS through scipy, :mod:`dpopt.backends.lp`) or
  by a cvxpy-based backend.

The functions here turn ``solver=`` (a name, a profile path or
:class:`~dpopt.backends.profiles.SolverProfile`, or a
:class:`~dpopt.backends.base.Backend`) into a backend that can solve the sub-program,
and prepare the program for it.  Everything is decided from the solver's name and the
program's structure, before any data is touched.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dpopt.backends import registry
from dpopt.backends.base import Backend
from dpopt.backends.cvxpy_backend import CvxpyCompiled
from dpopt.backends.profiles import SolverProfile, resolve
from dpopt.backends.result import SolveOptions
from dpopt.errors import BackendCapabilityError

if TYPE_CHECKING:  # the LP compiler loads cvxpy: imported on first use
    from dpopt.compile.polytope_program import LinearProgram
    from dpopt.modeling.structured_sets import HPolytope

__all__ = ["STEP_TOLERANCE", "SolverSpec", "is_explicit", "lp_backends", "prepare_polytope_lmo", "resolve_lp_backend",
           "resolve_step_backend", "step_backends", "step_options"]

SolverSpec = str | Path | SolverProfile | Backend[Any]
#: the accuracy a compiled mirror step asks for when the profile does not set one
STEP_TOLERANCE = 1e-9


def is_explicit(solver: object) -> bool:
    """Whether ``solver`` asks for something other than ``"auto"`` (a name, a profile or a Backend)."""
    return not (isinstance(solver, str) and solver.lower() == "auto")


def _with_default_tolerance(profile: SolverProfile, tolerance: float) -> SolverProfile:
    """A plain name's profile gets ``tolerance``; a profile file keeps its own."""
    if profile.source:
        return profile
    return replace(profile, options=replace(profile.options, tolerance=tolerance))


def resolve_step_backend(solver: SolverSpec) -> tuple[Backend[Any], SolverProfile]:
    """The backend (and options) for compiled mirror steps; ``"auto"``: the first installed of
    :func:`step_backends` (clarabel, else scs).

    Raises
    ------
    UnknownSolverError
        An unknown name or a missing profile file.
    BackendCapabilityError
        A backend that does not solve conic programs through cvxpy, or none installed.
    BackendUnavailableError
        A named backend whose package is not installed.
    """
    ranked = step_backends()
    if not is_explicit(solver):
        for backend in ranked:
            if backend.available():
                return backend, _with_default_tolerance(SolverProfile(backend.name), STEP_TOLERANCE)
        raise BackendCapabilityError(f"mirror steps without a closed form need {' or '.join(b.name for b in ranked)}; "
                                     "install one")
    backend, profile = resolve(solver)
    if not backend.solves_steps:
        raise BackendCapabilityError(
            f"mirror steps without a closed form are conic programs solved through cvxpy; backend "
            f"{backend.name!r} does not solve them: use {' or '.join(repr(b.name) for b in ranked)}"
        )
    backend.require()
    return backend, _with_default_tolerance(profile, STEP_TOLERANCE)


def resolve_lp_backend(solver: SolverSpec) -> tuple[Backend[Any], SolverProfile]:
    """The backend (and options) for an HPolytope's LMO; ``"auto"``: the first of
    :func:`lp_backends` (``scipy-lp``).

    Every backend that declares ``solves_lp`` (``scipy-lp`` and the cvxpy-based backends) solves
    it.  The names a backend declares in ``lp_aliases`` (``scipy-lp``: ``"highs"`` and
    ``"scipy"``, earlier spellings of HiGHS through scipy) mean it when they carry no solver
    ``[options]`` (those would be for another interface).

    Raises
    ------
    UnknownSolverError
        An unknown name or a missing profile file.
    BackendCapabilityError
        A backend that cannot solve a linear program dpopt compiles.
    BackendUnavailableError
        A named backend whose package is not installed.
    """
    lp = lp_backends()
    if not is_explicit(solver):
        return lp[0], SolverProfile(lp[0].name)
    backend, profile = resolve(solver)
    alias = next((b for b in lp if backend.name in b.lp_aliases), None)
    if alias is not None and not isinstance(solver, Backend) and not profile.options.extra:
        return alias, replace(profile, backend=alias.name)
    if not backend.solves_lp:
        raise BackendCapabilityError(
            f"an HPolytope's linear minimization is a linear program; backend {backend.name!r} does not "
            "solve the ones dpopt compiles: use 'scipy-lp' (HiGHS), 'clarabel' or 'scs'"
        )
    backend.require()
    return backend, profile


def prepare_polytope_lmo(backend: Backend[Any], polytope: HPolytope) -> CvxpyCompiled | LinearProgram:
    """Compile the LMO ``min ⟨c, s⟩ s.t. A s ≤ b`` of ``polytope`` for ``backend`` (public data only):
    the backend's own :meth:`~dpopt.backends.base.Backend.prepare_lmo`."""
    return backend.prepare_lmo(polytope.A, polytope.b)


def step_backends() -> list[Backend[Any]]:
    """The backends that declare ``solves_steps``, in their ``auto`` order (clarabel, then scs)."""
    return registry.ranked(lambda b: b.auto_rank if b.solves_steps and b.auto_rank is not None else None)


def lp_backends() -> list[Backend[Any]]:
    """The backends of kind ``"lp"`` that ``auto`` may choose for a compiled LP, in order (``scipy-lp``).

    Raises
    ------
    BackendCapabilityError
        If none is registered.
    """
    ranked = registry.ranked(lambda b: b.auto_rank if b.kind == "lp" and b.solves_lp else None)
    if not ranked:
        raise BackendCapabilityError("no backend for the linear programs dpopt compiles is registered (scipy-lp)")
    return ranked


def step_options(profile: SolverProfile, *, time_limit: float | None) -> SolveOptions:
    """The profile's options with an explicit time limit applied."""
    return profile.options if time_limit is None else replace(profile.options, time_limit=time_limit)
