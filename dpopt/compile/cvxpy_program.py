"""Compile a :class:`~dpopt.modeling.problem.Problem` into a cvxpy problem.

The perturbation's linear term ``b`` is a cvxpy ``Parameter``: a fresh noise
draw changes its value and re-solves without rebuilding or re-canonicalizing
the problem (cvxpy's DPP cache).  The objective is the *normalized* one,

    (1/n) Σ_k c_k φ(⟨x_k, θ⟩, y_k) + regularizers(θ) + (ζ/2)‖θ − θ₀‖² + ⟨b, θ⟩,

with identical rows aggregated into counts c_k (exact).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import singledispatch

import cvxpy as cp
import numpy as np

from dpopt.compile.aggregate import aggregate_rows
from dpopt.errors import ModelError
from dpopt.modeling import losses as L
from dpopt.modeling import sets as S
from dpopt.modeling import structured_sets as T
from dpopt.modeling.problem import Problem
from dpopt.modeling.regularizers import L1Norm, L2Squared
from dpopt.modeling.submodular_norms import SubmodularNorm, SubmodularNormBall


@dataclass
class CvxpyProgram:
    """A compiled cvxpy problem with its variable and noise parameter."""

    problem: cp.Problem
    theta: cp.Variable
    b: cp.Parameter | None
    source: Problem | None = None

    def set_linear(self, b: np.ndarray | None) -> None:
        """Set the linear perturbation (no rebuild)."""
        if b is None:
            return
        if self.b is None:
            raise ModelError("this program was compiled without a linear perturbation term")
        self.b.value = np.asarray(b, dtype=np.float64)


def loss_expression(loss: L.Loss, theta: cp.Variable) -> cp.Expression:
    """The average loss as a cvxpy expression (rows aggregated)."""
    X, y, c = aggregate_rows(loss.data.X, loss.data.y)
    n = loss.data.n
    z = X @ theta
    return _phi(loss, z, y, c) / n


@singledispatch
def _phi(loss: L.Loss, z: cp.Expression, y: np.ndarray, c: np.ndarray) -> cp.Expression:
    raise ModelError(f"{type(loss).__name__} has no cvxpy encoding")


@_phi.register
def _(loss: L.SquaredLoss, z: cp.Expression, y: np.ndarray, c: np.ndarray) -> cp.Expression:
    return cp.sum_squares(cp.multiply(np.sqrt(c), z - y))


@_phi.register
def _(loss: L.LogisticLoss, z: cp.Expression, y: np.ndarray, c: np.ndarray) -> cp.Expression:
    return cp.sum(cp.multiply(c, cp.logistic(cp.multiply(-y, z))))


@_phi.register
def _(loss: L.HuberLoss, z: cp.Expression, y: np.ndarray, c: np.ndarray) -> cp.Expression:
    # cvxpy's huber(r, M) = r² for |r| ≤ M, 2M|r| − M² beyond: twice ours
    return 0.5 * cp.sum(cp.multiply(c, cp.huber(z - y, loss.h)))  # type: ignore[arg-type]


@_phi.register
def _(loss: L.SmoothedHingeLoss, z: cp.Expression, y: np.ndarray, c: np.ndarray) -> cp.Expression:
    t = cp.pos(1 - cp.multiply(y, z))
    return cp.sum(cp.multiply(c, cp.huber(t, loss.h))) / (2 * loss.h)  # type: ignore[arg-type]


@_phi.register
def _(loss: L.HingeLoss, z: cp.Expression, y: np.ndarray, c: np.ndarray) -> cp.Expression:
    return cp.sum(cp.multiply(c, cp.pos(1 - cp.multiply(y, z))))


def set_constraints(constraint: S.ConstraintSet, theta: cp.Variable) -> list[cp.Constraint]:
    """cvxpy constraints expressing θ ∈ C."""
    if isinstance(constraint, S.L2Ball):
        return [cp.norm(theta, 2) <= constraint.radius(2)]
    if isinstance(constraint, S.L1Ball):
        return [cp.norm(theta, 1) <= constraint.radius(1)]
    if isinstance(constraint, S.LinfBall):
        r = constraint.radius("inf")
        return [theta <= r, theta >= -r]
    if isinstance(constraint, S.Simplex):
        return [theta >= 0, cp.sum(theta) == constraint.radius(1)]
    if isinstance(constraint, S.VertexPolytope):
        V = constraint.vertices()
        lam = cp.Variable(V.shape[0], nonneg=True)
        return [theta == V.T @ lam, cp.sum(lam) == 1]
    if isinstance(constraint, SubmodularNormBall):
        from dpopt.compile.submodular_cvxpy import norm_ball_constraints

        return norm_ball_constraints(constraint, theta)
    if isinstance(constraint, T.GroupL1Ball):
        return [cp.sum(cp.hstack([cp.norm(theta[g], 2) for g in constraint.groups])) <= constraint.r]
    if isinstance(constraint, T.NuclearNormBall):
        return [cp.normNuc(cp.reshape(theta, constraint.shape, order="C")) <= constraint.r]
    if isinstance(constraint, T.HPolytope):
        return [constraint.A @ theta <= constraint.b]
    raise ModelError(f"{type(constraint).__name__} has no cvxpy encoding")


def compile_cvxpy(problem: Problem, *, linear_parameter: bool = True) -> CvxpyProgram:
    """Compile ``problem`` (with its perturbation, if any) to a cvxpy problem.

    Parameters
    ----------
    problem : Problem
        The problem; its perturbation's ζ and θ₀ are compiled as constants and its
        ``b`` becomes the value of a Parameter.
    linear_parameter : bool
        Compile the ⟨b, θ⟩ term as a Parameter even when the problem has no perturbation.
    """
    theta = cp.Variable(problem.dim, name=problem.loss.variable.name)
    terms = [loss_expression(problem.loss, theta)]
    norm_constraints: list[cp.Constraint] = []
    for r in problem.regularizers:
        if isinstance(r, L2Squared):
            terms.append(0.5 * r.lam * cp.sum_squares(theta))
        elif isinstance(r, L1Norm):
            terms.append(r.lam * cp.norm(theta, 1))
        elif isinstance(r, SubmodularNorm):  # Ω∞: exact atom or cutting planes
            from dpopt.compile.submodular_cvxpy import norm_term

            expr, extra = norm_term(r, theta)
            terms.append(expr)
            norm_constraints += extra
    p = problem.perturbation
    b_param = None
    if p is not None or linear_parameter:
        b_param = cp.Parameter(problem.dim, name="b")
        b_param.value = np.zeros(problem.dim) if p is None else np.asarray(p.b)
        terms.append(b_param @ theta)
    if p is not None and p.zeta > 0:
        terms.append(0.5 * p.zeta * cp.sum_squares(theta - p.theta0))
    constraints = [] if problem.constraint is None else set_constraints(problem.constraint, theta)
    constraints += norm_constraints
    objective = terms[0]
    for t in terms[1:]:
        objective = objective + t
    from dpopt.compile.submodular_cvxpy import make_problem

    prog = make_problem(cp.Minimize(objective), constraints)  # cp.Problem unless Ω∞ cuts are present
    return CvxpyProgram(prog, theta, b_param, problem)
