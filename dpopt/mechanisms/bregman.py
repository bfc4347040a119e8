"""The Bregman (mirror) step of Alg. 1 compiled to cvxpy and solved by a backend.

``argmin_{θ∈C} Ψ(θ) − ⟨w, θ⟩`` with ``w`` a cvxpy ``Parameter``: the program is
compiled once (cvxpy's DPP cache) and re-solved for each step's ``w``.  Used
for potentials without a closed-form step (the q-norm potential of Claim 3.5)
and, in the tests, to check every closed-form step.

The step sees only public or already-private quantities (the previous iterate
and a noisy gradient), so its accuracy affects utility, never privacy: an
inaccurate or failed solve is not a privacy failure.  :meth:`BregmanProgram.step`
returns the solver's point projected back onto C (vertex polytopes: the solver's
point, feasible to its tolerance), or None when there is none.  An iterate outside
C by that tolerance cannot raise the sensitivity either: the mechanism clips
per-example gradients to the declared L
(:func:`dpopt.mechanisms.mirror_descent.gradient_oracle`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import singledispatch
from typing import Any

import cvxpy as cp
import numpy as np

from dpopt.backends.base import Backend
from dpopt.backends.cvxpy_backend import CvxpyBackend
from dpopt.backends.registry import get as get_backend
from dpopt.backends.result import SolveOptions
from dpopt.compile.cvxpy_program import set_constraints
from dpopt.errors import BackendCapabilityError, ModelError
from dpopt.modeling import potentials as P
from dpopt.modeling import sets as S

__all__ = ["BregmanProgram", "StepResult", "compile_bregman_step", "constraint_encoding", "resolve_step_backend"]


@dataclass(frozen=True)
class StepResult:
    """One compiled mirror step: the point (with its potential's aux data) and the solver status."""

    point: P.MirrorPoint | None
    status: str


@dataclass
class BregmanProgram:
    """A compiled mirror step ``argmin_C Ψ(θ) − ⟨w, θ⟩`` with ``w`` a Parameter."""

    problem: cp.Problem
    theta: cp.Variable
    w: cp.Parameter
    potential: P.Potential
    alpha: cp.Variable | None = None

    def step(self, w: np.ndarray, backend: CvxpyBackend, options: SolveOptions | None = None) -> StepResult:
        """Solve for one ``w`` with ``backend``; the point is projected onto C."""
        self.w.value = np.asarray(w, dtype=np.float64)
        kwargs = backend.solver_options(options or SolveOptions(tolerance=1e-9))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self.problem.solve(solver=getattr(cp, backend.solver), **kwargs)
            status = str(self.problem.status)
        except cp.error.SolverError:
            return StepResult(None, "solver_error")
        if self.theta.value is None:
            return StepResult(None, status)
        theta = np.asarray(self.theta.value, dtype=np.float64).reshape(-1)
        if not isinstance(self.potential.constraint, S.VertexPolytope):  # its projection is iterative;
            theta = self.potential.constraint.project(theta)  # the solver's point is feasible to 1e-9
        aux = None if self.alpha is None or self.alpha.value is None else np.asarray(self.alpha.value).reshape(-1)
        return StepResult(P.MirrorPoint(theta, aux), status)


@singledispatch
def _psi(potential: P.Potential, theta: cp.Variable, extra: list[Any]) -> cp.Expression:
    raise ModelError(f"the {potential.name} potential has no cvxpy encoding (its step is closed form)")


@_psi.register
def _(potential: P.EuclideanPotential, theta: cp.Variable, extra: list[Any]) -> cp.Expression:
    return 0.5 * cp.sum_squares(theta - potential.theta0)


@_psi.register
def _(potential: P.EntropyPotential, theta: cp.Variable, extra: list[Any]) -> cp.Expression:
    return -cp.sum(cp.entr(theta / potential.scale))


@_psi.register
def _(potential: P.GroupL1Potential, theta: cp.Variable, extra: list[Any]) -> cp.Expression:
    terms = [cp.power(cp.norm(theta[g] / potential.r, 2), potential.s) for g in potential.groups]
    return cp.sum(cp.hstack(terms)) / (potential.s * potential.gamma)


@_psi.register
def _(potential: P.QNormPotential, theta: cp.Variable, extra: list[Any]) -> cp.Expression:
    alpha = cp.Variable(potential.k, name="alpha")
    extra.append(alpha)
    extra.append(potential.V.T @ alpha == theta)
    return potential.coef * cp.square(cp.pnorm(alpha, potential.q))  # type: ignore[arg-type]


def constraint_encoding(constraint: S.ConstraintSet, theta: cp.Variable) -> list[cp.Constraint]:
    """θ ∈ C as cvxpy constraints (:func:`dpopt.compile.cvxpy_program.set_constraints`)."""
    return set_constraints(constraint, theta)


def compile_bregman_step(potential: P.Potential) -> BregmanProgram:
    """Compile ``argmin_{θ∈C} Ψ(θ) − ⟨w, θ⟩`` once, with ``w`` a Parameter.

    Raises
    ------
    ModelError
        When the potential or the set has no cvxpy encoding.
    """
    theta = cp.Variable(potential.dim, name="theta")
    w = cp.Parameter(potential.dim, name="w")
    w.value = np.zeros(potential.dim)
    extra: list[Any] = []
    psi = _psi(potential, theta, extra)
    alpha = next((e for e in extra if isinstance(e, cp.Variable)), None)
    constraints = constraint_encoding(potential.constraint, theta) + [e for e in extra if not isinstance(e, cp.Variable)]
    problem = cp.Problem(cp.Minimize(psi - w @ theta), constraints)
    return BregmanProgram(problem, theta, w, potential, alpha)


def resolve_step_backend(solver: str | Backend) -> CvxpyBackend:
    """The cvxpy backend for compiled mirror steps (``"auto"``: clarabel).

    Raises
    ------
    BackendCapabilityError
        If the backend does not solve conic programs through cvxpy.
    """
    backend = get_backend("clarabel" if solver == "auto" else solver) if isinstance(solver, str) else solver
    if not isinstance(backend, CvxpyBackend):
        raise BackendCapabilityError(
            f"mirror steps without a closed form are conic programs solved through cvxpy; backend "
            f"{backend.name!r} is not one: use 'clarabel' or 'scs'"
        )
    backend.require()
    return backend
