"""Compile a :class:`~dpopt.modeling.problem.Problem` into a cvxpy problem.

The perturbation's linear term ``b`` is a cvxpy ``Parameter``: a fresh noise
draw changes its value and re-solves without rebuilding or re-canonicalizing
the problem (cvxpy's DPP cache).  The objective is the *normalized* one,

    (1/n) Σ_k c_k φ(⟨x_k, θ⟩, y_k) + regularizers(θ) + (ζ/2)‖θ − θ₀‖² + ⟨b, θ⟩,

with identical rows aggregated into counts c_k (exact).

Extension points
----------------
One :func:`functools.singledispatch` registry per model part, each dispatching
on the part's class (a subclass inherits its base's encoding unless it
registers its own):

* :func:`loss_phi` — a :class:`~dpopt.modeling.losses.Loss`:
  ``Σ_k c_k φ(z_k, y_k)`` for the margins ``z = Xθ``;
* :func:`set_constraints` — a :class:`~dpopt.modeling.constraint_set.ConstraintSet`:
  the constraints expressing ``θ ∈ C``; a set with no registration that declares its
  constraints (:meth:`~dpopt.modeling.constraint_set.ConstraintSet.as_constraints`, in the
  modeling layer's own spelling) is translated from them, so a set needs no code here;
* :func:`regularizer_term` — a :class:`~dpopt.modeling.regularizers.Regularizer`:
  its expression and any auxiliary constraints.

A class with no registration (and, for a set, no declared constraints) is refused with a
:class:`~dpopt.errors.ModelError` naming it and the decorator to use, never skipped.  A set
that its declared constraints cannot write, for example::

    @set_constraints.register
    def _(constraint: MyBall, theta: cp.Variable) -> list[cp.Constraint]:
        return [cp.norm(theta, 2) <= constraint.radius(2)]
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import singledispatch

import cvxpy as cp
import numpy as np

from dpopt.compile.aggregate import aggregate_rows
from dpopt.compile.submodular_cvxpy import make_problem, norm_ball_constraints, norm_term
from dpopt.errors import ModelError
from dpopt.modeling import losses as L
from dpopt.modeling import structured_sets as T
from dpopt.modeling.balls import LinfBall
from dpopt.modeling.boxes import Box, NonNegative, Simplex
from dpopt.modeling.constraint_set import ConstraintSet
from dpopt.modeling.expressions import Constraint, LinearConstraint, NormConstraint
from dpopt.modeling.intersection import Intersection
from dpopt.modeling.problem import Problem
from dpopt.modeling.regularizers import L1Norm, L2Squared, Regularizer
from dpopt.modeling.submodular_norms import SubmodularNorm, SubmodularNormBall
from dpopt.modeling.variable import Variable
from dpopt.modeling.vertex_polytope import VertexPolytope

__all__ = [
    "CvxpyProgram",
    "compile_cvxpy",
    "declared_constraint",
    "loss_expression",
    "loss_phi",
    "regularizer_term",
    "set_constraints",
]


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


def _unregistered(obj: object, kind: str, registry: str, first: str = "") -> ModelError:
    name = type(obj).__name__
    return ModelError(
        f"{name} has no cvxpy encoding: {first}register one for the {kind} with "
        f"@dpopt.compile.cvxpy_program.{registry}.register on a function whose first "
        f"argument is annotated {name}"
    )


# ---------------------------------------------------------------------------
# Losses
# ---------------------------------------------------------------------------


def loss_expression(loss: L.Loss, theta: cp.Variable) -> cp.Expression:
    """The average loss as a cvxpy expression (rows aggregated)."""
    X, y, c = aggregate_rows(loss.data.X, loss.data.y)
    n = loss.data.n
    z = X @ theta
    return loss_phi(loss, z, y, c) / n


@singledispatch
def loss_phi(loss: L.Loss, z: cp.Expression, y: np.ndarray, c: np.ndarray) -> cp.Expression:
    """``Σ_k c_k φ(z_k, y_k)``: the count-weighted sum of the loss over aggregated rows.

    Parameters
    ----------
    loss : Loss
        The loss (dispatch is on its class).
    z : cvxpy.Expression, shape (k,)
        The margins ``X θ`` of the distinct rows.
    y : numpy.ndarray, shape (k,)
        Their labels.
    c : numpy.ndarray, shape (k,)
        Their counts.

    Raises
    ------
    ModelError
        When no encoding is registered for the loss's class.
    """
    raise _unregistered(loss, "loss", "loss_phi")


@loss_phi.register
def _(loss: L.SquaredLoss, z: cp.Expression, y: np.ndarray, c: np.ndarray) -> cp.Expression:
    return cp.sum_squares(cp.multiply(np.sqrt(c), z - y))


@loss_phi.register
def _(loss: L.LogisticLoss, z: cp.Expression, y: np.ndarray, c: np.ndarray) -> cp.Expression:
    return cp.sum(cp.multiply(c, cp.logistic(cp.multiply(-y, z))))


@loss_phi.register
def _(loss: L.HuberLoss, z: cp.Expression, y: np.ndarray, c: np.ndarray) -> cp.Expression:
    # cvxpy's huber(r, M) = r² for |r| ≤ M, 2M|r| − M² beyond: twice ours
    return 0.5 * cp.sum(cp.multiply(c, cp.huber(z - y, loss.h)))  # type: ignore[arg-type]


@loss_phi.register
def _(loss: L.SmoothedHingeLoss, z: cp.Expression, y: np.ndarray, c: np.ndarray) -> cp.Expression:
    t = cp.pos(1 - cp.multiply(y, z))
    return cp.sum(cp.multiply(c, cp.huber(t, loss.h))) / (2 * loss.h)  # type: ignore[arg-type]


@loss_phi.register
def _(loss: L.HingeLoss, z: cp.Expression, y: np.ndarray, c: np.ndarray) -> cp.Expression:
    return cp.sum(cp.multiply(c, cp.pos(1 - cp.multiply(y, z))))


# ---------------------------------------------------------------------------
# Constraint sets
# ---------------------------------------------------------------------------


@singledispatch
def set_constraints(constraint: ConstraintSet, theta: cp.Variable) -> list[cp.Constraint]:
    """cvxpy constraints expressing ``θ ∈ C`` (dispatch on the set's class).

    A class with no registration is encoded from the constraints it declares
    (:meth:`~dpopt.modeling.constraint_set.ConstraintSet.as_constraints`), each translated by
    :func:`declared_constraint`.  A set that declares ``polyhedral = True`` must be encoded with
    linear constraints only (QP-only backends rely on it).

    Raises
    ------
    ModelError
        When no encoding is registered for the set's class and it declares no constraints, or
        declares one that is not a constraint on the variable it was given.
    """
    w = Variable(constraint.dim, name="w")  # named: takes no number from the default names
    declared = constraint.as_constraints(w)
    if declared is None:
        raise _unregistered(constraint, "constraint set", "set_constraints", "declare its constraints "
                            "with as_constraints(w) (modeling layer), or ")
    return [declared_constraint(c, w, theta, type(constraint).__name__) for c in declared]


def declared_constraint(c: Constraint, w: Variable, theta: cp.Variable, owner: str) -> cp.Constraint:
    """The cvxpy constraint on ``theta`` of a modeling-layer constraint on ``w`` (``A w ≤ b`` with
    its rows of infinite b dropped, ``A w = b``, or ``‖w‖_q ≤ r``).

    Raises
    ------
    ModelError
        For a constraint on another variable than ``w``, or of a kind not listed above.
    """
    if not isinstance(c, (LinearConstraint, NormConstraint)) or c.variable is not w:
        raise ModelError(f"{owner}.as_constraints(w) must return constraints on w built as in cvxpy "
                         f"(A @ w <= b, A @ w == b, norm2(w) <= r), got {c!r}")
    if isinstance(c, NormConstraint):
        return cp.norm(theta, "inf" if c.norm == "inf" else int(c.norm)) <= c.radius
    if c.equality:
        return c.A @ theta == c.b
    finite = np.isfinite(c.b)
    if finite.all():  # the usual case: no copy of A
        return c.A @ theta <= c.b
    return c.A[finite] @ theta <= c.b[finite]


@set_constraints.register
def _(constraint: LinfBall, theta: cp.Variable) -> list[cp.Constraint]:
    r = constraint.radius("inf")
    return [theta <= r, theta >= -r]


@set_constraints.register
def _(constraint: Simplex, theta: cp.Variable) -> list[cp.Constraint]:
    return [theta >= 0, cp.sum(theta) == constraint.radius(1)]


@set_constraints.register
def _(constraint: Box, theta: cp.Variable) -> list[cp.Constraint]:
    return [theta >= constraint.low, theta <= constraint.high]


@set_constraints.register
def _(constraint: NonNegative, theta: cp.Variable) -> list[cp.Constraint]:
    return [theta >= 0]


@set_constraints.register
def _(constraint: VertexPolytope, theta: cp.Variable) -> list[cp.Constraint]:
    V = constraint.vertices()
    lam = cp.Variable(V.shape[0], nonneg=True)
    return [theta == V.T @ lam, cp.sum(lam) == 1]


@set_constraints.register
def _(constraint: SubmodularNormBall, theta: cp.Variable) -> list[cp.Constraint]:
    return norm_ball_constraints(constraint, theta)


@set_constraints.register
def _(constraint: T.GroupL1Ball, theta: cp.Variable) -> list[cp.Constraint]:
    return [cp.sum(cp.hstack([cp.norm(theta[g], 2) for g in constraint.groups])) <= constraint.r]


@set_constraints.register
def _(constraint: T.NuclearNormBall, theta: cp.Variable) -> list[cp.Constraint]:
    return [cp.normNuc(cp.reshape(theta, constraint.shape, order="C")) <= constraint.r]


@set_constraints.register
def _(constraint: Intersection, theta: cp.Variable) -> list[cp.Constraint]:
    low, high = constraint.low, constraint.high
    fixed = low == high
    out: list[cp.Constraint] = []
    if np.any(fixed):  # an equality, not two inequalities (interior-point solvers need an interior)
        out.append(theta[np.flatnonzero(fixed)] == low[fixed])
    for bound, side in ((low, 1.0), (high, -1.0)):
        at = np.flatnonzero(np.isfinite(bound) & ~fixed)
        if at.size:
            out.append(side * theta[at] >= side * bound[at])
    if constraint.G.shape[0]:
        out.append(constraint.G @ theta <= constraint.h)
    if constraint.E.shape[0]:
        out.append(constraint.E @ theta == constraint.e)
    if constraint.l1 is not None:
        sign = np.where(low >= 0, 1.0, np.where(high <= 0, -1.0, 0.0))
        signed = bool(np.all((low >= 0) | (high <= 0)))  # ‖θ‖₁ is linear on the bounds: one row
        out.append(sign @ theta <= constraint.l1 if signed else cp.norm(theta, 1) <= constraint.l1)
    if constraint.l2 is not None:
        out.append(cp.norm(theta, 2) <= constraint.l2)
    return out


# ---------------------------------------------------------------------------
# Regularizers
# ---------------------------------------------------------------------------


@singledispatch
def regularizer_term(reg: Regularizer, theta: cp.Variable) -> tuple[cp.Expression, list[cp.Constraint]]:
    """The regularizer as a cvxpy expression and the auxiliary constraints it needs.

    A regularizer that declares ``qp_representable = True`` must be encoded by
    quadratic or piecewise-linear atoms and linear constraints.

    Raises
    ------
    ModelError
        When no encoding is registered for the regularizer's class.
    """
    raise _unregistered(reg, "regularizer", "regularizer_term")


@regularizer_term.register
def _(reg: L2Squared, theta: cp.Variable) -> tuple[cp.Expression, list[cp.Constraint]]:
    return 0.5 * reg.lam * cp.sum_squares(theta), []


@regularizer_term.register
def _(reg: L1Norm, theta: cp.Variable) -> tuple[cp.Expression, list[cp.Constraint]]:
    return reg.lam * cp.norm(theta, 1), []


@regularizer_term.register
def _(reg: SubmodularNorm, theta: cp.Variable) -> tuple[cp.Expression, list[cp.Constraint]]:
    return norm_term(reg, theta)  # Ω∞: an exact atom, or an epigraph variable with cutting planes


# ---------------------------------------------------------------------------
# The program
# ---------------------------------------------------------------------------


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
        expr, extra = regularizer_term(r, theta)
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
    prog = make_problem(cp.Minimize(objective), constraints)  # cp.Problem unless Ω∞ cuts are present
    return CvxpyProgram(prog, theta, b_param, problem)
