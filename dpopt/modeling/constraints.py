"""From what a modeler writes — a constraint, a set, or a list of them — to one constraint set.

:func:`constraint_set` folds ``w >= 0``, ``w <= u``, ``w[j] == 0``, ``A @ w <= b``,
``norm1(w) <= r`` (:mod:`dpopt.modeling.expressions`) and the sets Box, NonNegative, the ℓ1,
ℓ2 and ℓ∞ balls, Simplex, HPolytope and Intersection into the canonical pieces of an
:class:`~dpopt.modeling.intersection.Intersection` (coordinate rows become bounds), and returns
the simplest set equal to their intersection: the one set given, a Box, NonNegative, a ball,
or the Intersection.  Anything that is not a public constraint (a cvxpy constraint, data, a
truth value from a comparison that dpopt did not build) is refused in one line.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpopt.errors import ModelError
from dpopt.modeling.balls import L1Ball, L2Ball, LinfBall
from dpopt.modeling.boxes import Box, NonNegative, Simplex
from dpopt.modeling.constraint_set import ConstraintSet
from dpopt.modeling.expressions import Constraint, LinearConstraint, NormConstraint
from dpopt.modeling.intersection import Intersection
from dpopt.modeling.structured_sets import HPolytope

__all__ = ["constraint_set"]

#: the sets an intersection takes apart (the others stand alone)
FOLDABLE = "Box, NonNegative, L1Ball, L2Ball, LinfBall, Simplex, HPolytope, Intersection"


class _Pieces:
    """The canonical pieces gathered so far."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.low = np.full(dim, -np.inf)
        self.high = np.full(dim, np.inf)
        self.G: list[np.ndarray] = []
        self.h: list[float] = []
        self.E: list[np.ndarray] = []
        self.e: list[float] = []
        self.l1 = math.inf
        self.l2 = math.inf

    def bound(self, j: int, low: float, high: float) -> None:
        self.low[j] = max(self.low[j], low) + 0.0  # + 0.0: no negative zero
        self.high[j] = min(self.high[j], high) + 0.0

    def bounds(self, low: np.ndarray, high: np.ndarray) -> None:
        self.low = np.maximum(self.low, low)
        self.high = np.minimum(self.high, high)

    def row(self, a: np.ndarray, beta: float, equality: bool) -> None:
        nz = np.flatnonzero(a)
        if nz.size == 1:  # a coordinate row: a bound
            j, coef, value = int(nz[0]), float(a[nz[0]]), beta / float(a[nz[0]])
            if equality:
                self.bound(j, value, value)
            elif coef > 0:
                self.bound(j, -np.inf, value)
            else:
                self.bound(j, value, np.inf)
            return
        if equality:
            self.E.append(a)
            self.e.append(beta)
        elif math.isfinite(beta):
            self.G.append(a)
            self.h.append(beta)

    def linear(self, c: LinearConstraint) -> None:
        for a, beta in zip(c.A, c.b, strict=True):
            if beta == -np.inf and not c.equality:
                raise ModelError("the constraints are infeasible: a row is bounded above by -inf")
            if beta == np.inf and not c.equality:
                continue
            self.row(np.asarray(a, dtype=np.float64), float(beta), c.equality)

    def norm(self, q: Any, r: float) -> None:
        if q == 1:
            self.l1 = min(self.l1, r)
        elif q == 2:
            self.l2 = min(self.l2, r)
        else:
            self.bounds(np.full(self.dim, -r), np.full(self.dim, r))

    def add_set(self, c: ConstraintSet) -> None:
        if isinstance(c, Intersection):
            self.bounds(c.low, c.high)
            for a, beta in zip(c.G, c.h, strict=True):
                self.row(a, float(beta), False)
            for a, beta in zip(c.E, c.e, strict=True):
                self.row(a, float(beta), True)
            for q, r in ((1, c.l1), (2, c.l2)):
                if r is not None:
                    self.norm(q, r)
        elif isinstance(c, Box):
            self.bounds(c.low, c.high)
        elif isinstance(c, NonNegative):
            self.bounds(np.zeros(self.dim), np.full(self.dim, np.inf))
        elif isinstance(c, (L1Ball, L2Ball, LinfBall)):
            self.norm(c.norm_ball, c.radius(2) if c.norm_ball == 2 else c.radius("inf"))
        elif isinstance(c, Simplex):
            self.bounds(np.zeros(self.dim), np.full(self.dim, np.inf))
            self.row(np.ones(self.dim), c.scale, True)
        elif isinstance(c, HPolytope):
            for a, beta in zip(c.A, c.b, strict=True):
                self.row(a, float(beta), False)
        else:
            raise ModelError(f"{type(c).__name__} cannot be intersected with other constraints (sets that can: "
                             f"{FOLDABLE}, and constraints written with the variable); use it alone")

    def build(self, variable: Any) -> ConstraintSet | None:
        """The simplest set equal to the pieces (None: no constraint at all)."""
        if np.any(self.low > self.high):
            raise ModelError("the constraints are infeasible: a coordinate's lower bound exceeds its upper bound")
        rows = bool(self.G or self.E)
        l1 = None if math.isinf(self.l1) else self.l1
        l2 = None if math.isinf(self.l2) else self.l2
        unbounded_coords = bool(np.all(np.isinf(self.low)) and np.all(np.isinf(self.high)))
        if not rows and l1 is None and l2 is None:
            if unbounded_coords:
                return None
            if np.all(np.isfinite(self.low)) and np.all(np.isfinite(self.high)):
                r = float(self.high[0])
                if r > 0 and np.all(self.high == r) and np.all(self.low == -r):
                    return LinfBall(variable, r)
                return Box(variable, self.low, self.high)
            if np.all(self.low == 0.0) and np.all(np.isposinf(self.high)):
                return NonNegative(variable)
        if not rows and unbounded_coords and (l1 is None) != (l2 is None):
            return L1Ball(variable, l1) if l1 is not None else L2Ball(variable, l2)  # type: ignore[arg-type]
        return Intersection(variable, self.low, self.high,
                            G=np.array(self.G).reshape(-1, self.dim), h=np.array(self.h),
                            E=np.array(self.E).reshape(-1, self.dim), e=np.array(self.e), l1=l1, l2=l2)


def _refusal(item: object) -> ModelError:
    kind = type(item).__name__
    module = type(item).__module__ or ""
    if module.startswith("cvxpy"):
        return ModelError(f"a cvxpy {kind} is not a dpopt constraint: write it with the dpopt Variable "
                          "(w >= 0, w <= u, w[j] == 0, A @ w <= b, dp.norm1(w) <= r)")
    if isinstance(item, (bool, np.bool_)) or (isinstance(item, np.ndarray) and item.dtype == bool):
        return ModelError("a constraint evaluated to a truth value: compare a dp.Variable (w >= 0), not a number or "
                          "an array")
    if hasattr(item, "X") and hasattr(item, "n") or hasattr(item, "data") and hasattr(item, "variable"):
        return ModelError(f"a constraint cannot read data (got a {kind}): constraints are public declarations")
    return ModelError(f"constraint must be a dpopt ConstraintSet, a constraint written with the variable "
                      f"(w >= 0, A @ w <= b, dp.norm1(w) <= r) or a list of them, got {kind}")


def _flatten(spec: object) -> list[object]:
    if isinstance(spec, (list, tuple)):
        out: list[object] = []
        for item in spec:
            out.extend(_flatten(item))
        return out
    return [spec]


def constraint_set(spec: object, variable: Any) -> ConstraintSet | None:
    """One constraint set from a set, a constraint, or a (nested) list of them.

    Parameters
    ----------
    spec : ConstraintSet, Constraint, list or tuple of them, or None
        What the modeler wrote; a list means the intersection.
    variable : Variable
        The problem's variable (constraints written with another one are refused).

    Returns
    -------
    ConstraintSet or None
        The set itself for one set; otherwise the simplest set equal to the intersection
        (None when nothing constrains the variable).

    Raises
    ------
    ModelError
        One line: an item that is not a public constraint, a constraint on another variable, a
        dimension mismatch, or an empty intersection.
    """
    if spec is None or isinstance(spec, ConstraintSet):
        return spec
    items = _flatten(spec)
    dim = int(variable.size)
    for item in items:
        if isinstance(item, Constraint):
            if item.variable is not variable:
                raise ModelError(f"a constraint is written with {item.variable.name}, but the loss's variable is "
                                 f"{variable.name}; a dpopt problem has one variable")
        elif isinstance(item, ConstraintSet):
            if item.dim != dim:
                raise ModelError(f"constraint set has dimension {item.dim}, the variable {dim}")
        else:
            raise _refusal(item)
    if len(items) == 1 and isinstance(items[0], ConstraintSet):
        return items[0]
    pieces = _Pieces(dim)
    for item in items:
        if isinstance(item, LinearConstraint):
            pieces.linear(item)
        elif isinstance(item, NormConstraint):
            pieces.norm(item.norm, item.radius)
        else:
            assert isinstance(item, ConstraintSet)
            pieces.add_set(item)
    return pieces.build(variable)
