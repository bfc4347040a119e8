"""Compile the Bregman (mirror) step of TTZ14 Alg. 1 into a cvxpy program.

``argmin_{θ∈C} Ψ(θ) − ⟨w, θ⟩`` with ``w`` a cvxpy ``Parameter``: the program is
compiled once (cvxpy's DPP cache) and re-solved for each step's ``w`` by a
cvxpy-based backend (:meth:`dpopt.backends.cvxpy_backend.CvxpyBackend.solve`,
which calls :meth:`BregmanProgram.set_linear` with ``w``).  Used for potentials
without a closed-form step (the q-norm potential of Claim 3.5) and, in the
tests, to check every closed-form step.

A :class:`BregmanProgram` is a *prepared* program in the backends' sense: it has
``problem``, ``theta`` and ``set_linear``, like
:class:`~dpopt.compile.cvxpy_program.CvxpyProgram`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import singledispatch
from typing import TYPE_CHECKING, Any

import numpy as np

from dpopt.errors import ModelError
from dpopt.numerics import potentials as P

if TYPE_CHECKING:  # cvxpy is imported when a step is compiled, not when a mechanism is imported
    import cvxpy as cp

    from dpopt.modeling.constraint_set import ConstraintSet

__all__ = ["BregmanProgram", "compile_bregman_step", "constraint_encoding"]


@dataclass
class BregmanProgram:
    """A compiled mirror step ``argmin_C Ψ(θ) − ⟨w, θ⟩`` with ``w`` a Parameter."""

    problem: cp.Problem
    theta: cp.Variable
    w: cp.Parameter
    potential: P.Potential
    alpha: cp.Variable | None = None

    def set_linear(self, w: np.ndarray | None) -> None:
        """Set the step's linear term ``w`` (no rebuild); None keeps the current one."""
        if w is not None:
            self.w.value = np.asarray(w, dtype=np.float64)

    def point(self, theta: np.ndarray) -> P.MirrorPoint:
        """The mirror point of a solver answer ``theta`` (after a solve of this program).

        The answer is projected onto C unless the set declares ``project_solver_points =
        False`` (vertex polytopes: their projection is iterative, and the solver's point is
        feasible to its tolerance); the q-norm
        potential's vertex weights α are read from the program.
        """
        theta = np.asarray(theta, dtype=np.float64).reshape(-1)
        if self.potential.constraint.project_solver_points:
            theta = self.potential.constraint.project(theta)
        aux = None if self.alpha is None or self.alpha.value is None else np.asarray(self.alpha.value).reshape(-1)
        return P.MirrorPoint(theta, aux)


@singledispatch
def _psi(potential: P.Potential, theta: cp.Variable, extra: list[Any]) -> cp.Expression:
    raise ModelError(f"the {potential.name} potential has no cvxpy encoding (its step is closed form)")


@_psi.register(P.EuclideanPotential)
def _(potential: P.EuclideanPotential, theta: cp.Variable, extra: list[Any]) -> cp.Expression:
    import cvxpy as cp

    return 0.5 * cp.sum_squares(theta - potential.theta0)


@_psi.register(P.EntropyPotential)
def _(potential: P.EntropyPotential, theta: cp.Variable, extra: list[Any]) -> cp.Expression:
    import cvxpy as cp

    return -cp.sum(cp.entr(theta / potential.scale))


@_psi.register(P.GroupL1Potential)
def _(potential: P.GroupL1Potential, theta: cp.Variable, extra: list[Any]) -> cp.Expression:
    import cvxpy as cp

    terms = [cp.power(cp.norm(theta[g] / potential.r, 2), potential.s) for g in potential.groups]
    return cp.sum(cp.hstack(terms)) / (potential.s * potential.gamma)


@_psi.register(P.QNormPotential)
def _(potential: P.QNormPotential, theta: cp.Variable, extra: list[Any]) -> cp.Expression:
    import cvxpy as cp

    alpha = cp.Variable(potential.k, name="alpha")
    extra.append(alpha)
    extra.append(potential.V.T @ alpha == theta)
    return potential.coef * cp.square(cp.pnorm(alpha, potential.q))  # type: ignore[arg-type]


def constraint_encoding(constraint: ConstraintSet, theta: cp.Variable) -> list[cp.Constraint]:
    """θ ∈ C as cvxpy constraints (:func:`dpopt.compile.cvxpy_program.set_constraints`)."""
    from dpopt.compile.cvxpy_program import set_constraints

    return set_constraints(constraint, theta)


def compile_bregman_step(potential: P.Potential) -> BregmanProgram:
    """Compile ``argmin_{θ∈C} Ψ(θ) − ⟨w, θ⟩`` once, with ``w`` a Parameter.

    Raises
    ------
    ModelError
        When the potential or the set has no cvxpy encoding.
    """
    import cvxpy as cp

    theta = cp.Variable(potential.dim, name="theta")
    w = cp.Parameter(potential.dim, name="w")
    w.value = np.zeros(potential.dim)
    extra: list[Any] = []
    psi = _psi(potential, theta, extra)
    alpha = next((e for e in extra if isinstance(e, cp.Variable)), None)
    constraints = constraint_encoding(potential.constraint, theta) + [e for e in extra if not isinstance(e, cp.Variable)]
    problem = cp.Problem(cp.Minimize(psi - w @ theta), constraints)
    return BregmanProgram(problem, theta, w, potential, alpha)
