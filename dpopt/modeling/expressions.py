"""Constraints written with the variable, in cvxpy's spelling: ``w >= 0``, ``A @ w <= b``,
``w[j] == 0``, ``norm1(w) <= r``.

A :class:`~dpopt.modeling.variable.Variable` takes part in affine expressions ``A w + c``
(:class:`AffineExpression`: ``w[j]``, ``w[idx]``, ``A @ w``, ``a @ w``, ``2 * w``, ``w - u``)
and norms (:func:`norm1`, :func:`norm2`, :func:`norm_inf`, :func:`norm`); comparing one with a
public constant gives a :class:`Constraint` — a declaration, not a set.
:class:`~dpopt.modeling.problem.Problem` turns a constraint, or a list of them and of
constraint sets, into one :class:`~dpopt.modeling.intersection.Intersection` (or the simpler
set it equals).  As in cvxpy, ``<=`` and ``>=`` are elementwise, ``==`` is an equality, and a
constraint has no truth value.

Every constant is public: a constraint that reads data (a Dataset, a Loss, a cvxpy
expression) is refused in one line, since a constraint is part of the declaration that
every pre-data decision reads.

Numpy defers to these objects (``__array_ufunc__ = None``), so ``A @ w`` with a numpy ``A``
calls :meth:`AffineExpression.__rmatmul__` and ``np.zeros(p) <= w`` becomes ``w >= 0``.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from dpopt.errors import ModelError

__all__ = [
    "AffineExpression",
    "Constraint",
    "LinearConstraint",
    "NormConstraint",
    "NormExpression",
    "Operators",
    "norm",
    "norm1",
    "norm2",
    "norm_inf",
]


class HasSize(Protocol):
    """What an expression needs of its variable (a :class:`~dpopt.modeling.variable.Variable`)."""

    size: int
    name: str


def _data_refusal(obj: object) -> ModelError | None:
    """The one-line refusal of a constant that reads data (or is no public constant), or None."""
    kind = type(obj).__name__
    module = type(obj).__module__ or ""
    if module.startswith("cvxpy"):
        return ModelError(f"a cvxpy {kind} cannot appear in a dpopt constraint: write it with the dpopt Variable "
                          "(w >= 0, A @ w <= b, dp.norm1(w) <= r)")
    if hasattr(obj, "X") and hasattr(obj, "n") or hasattr(obj, "data") and hasattr(obj, "variable"):
        return ModelError(f"a constraint cannot read data (got a {kind}): constraints are public declarations; "
                          "state the bound as a number you know without looking at the rows")
    return None


def public_constant(value: object, size: int, what: str) -> np.ndarray:
    """``value`` as a finite float vector of length ``size`` (a scalar is broadcast)."""
    refusal = _data_refusal(value)
    if refusal is not None:
        raise refusal
    try:
        arr = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ModelError(f"{what} must be a number or a numeric vector, got {type(value).__name__}") from None
    if arr.ndim == 0:
        arr = np.full(size, float(arr))
    if arr.shape != (size,):
        raise ModelError(f"{what} must be a number or have shape ({size},), got shape {arr.shape}")
    if np.any(np.isnan(arr)):
        raise ModelError(f"{what} contains NaN")
    return arr


class Constraint:
    """A public constraint on one variable, built by comparing an expression with a constant.

    Subclasses: :class:`LinearConstraint` (``A w ≤ b`` or ``A w = b``) and
    :class:`NormConstraint` (``‖w‖_q ≤ r``).  Like cvxpy's, a constraint has no truth value.
    """

    variable: Any

    def __bool__(self) -> bool:
        raise TypeError("a dpopt constraint has no truth value; pass it to dp.Problem(..., constraint=[...])")


@dataclass(frozen=True, eq=False)
class LinearConstraint(Constraint):
    """``A w ≤ b`` (``equality=False``) or ``A w = b`` (``equality=True``), rows of A over the variable.

    Infinite entries of ``b`` (from ``w <= np.inf``) are dropped when the set is built.
    """

    variable: Any
    A: np.ndarray
    b: np.ndarray
    equality: bool = False

    def __repr__(self) -> str:
        op = "==" if self.equality else "<="
        return f"LinearConstraint({self.A.shape[0]} rows {op} on {self.variable.name})"


@dataclass(frozen=True, eq=False)
class NormConstraint(Constraint):
    """``‖w‖_q ≤ radius`` for q in 1, 2, ``"inf"``."""

    variable: Any
    norm: Any
    radius: float

    def __repr__(self) -> str:
        return f"NormConstraint(norm{self.norm}({self.variable.name}) <= {self.radius:g})"


def _is_expression(obj: object) -> bool:
    return isinstance(obj, (Operators, NormExpression))


class Operators:
    """The arithmetic and comparisons shared by a Variable and its affine expressions.

    Subclasses implement :meth:`_affine` (the object as ``A w + c``).
    """

    __array_ufunc__ = None  # numpy defers: A @ w → __rmatmul__, 0 <= w → w >= 0
    __array_priority__ = 100.0

    def _affine(self) -> AffineExpression:
        raise NotImplementedError

    # -- building expressions --------------------------------------------------------------
    def __getitem__(self, key: Any) -> AffineExpression:
        e = self._affine()
        rows = np.arange(e.A.shape[0])
        try:
            picked = rows[key]
        except (IndexError, TypeError) as exc:
            raise ModelError(f"cannot index {e.variable.name} of size {e.A.shape[0]} by {key!r}: {exc}") from None
        picked = np.atleast_1d(picked)
        return AffineExpression(e.variable, e.A[picked], e.c[picked])

    def __rmatmul__(self, other: object) -> AffineExpression:
        e = self._affine()
        if _is_expression(other):
            raise ModelError("a product of two expressions of the variable is not affine")
        refusal = _data_refusal(other)
        if refusal is not None:
            raise refusal
        try:
            M = np.array(other, dtype=np.float64)
        except (TypeError, ValueError):
            raise ModelError(f"A in A @ w must be a numeric matrix, got {type(other).__name__}") from None
        if M.ndim not in (1, 2) or M.shape[-1] != e.A.shape[0]:
            raise ModelError(f"A @ w needs A with {e.A.shape[0]} columns, got shape {M.shape}")
        if not np.all(np.isfinite(M)):
            raise ModelError("A in A @ w must have finite entries")
        M2 = M.reshape(1, -1) if M.ndim == 1 else M
        return AffineExpression(e.variable, M2 @ e.A, M2 @ e.c)

    def __matmul__(self, other: object) -> AffineExpression:
        if np.ndim(other) != 1 or _is_expression(other):  # type: ignore[arg-type]
            raise ModelError("write the matrix on the left: A @ w")
        return self.__rmatmul__(other)

    def __mul__(self, other: object) -> AffineExpression:
        e = self._affine()
        if _is_expression(other):
            raise ModelError("a product of two expressions of the variable is not affine")
        if isinstance(other, bool) or not isinstance(other, numbers.Real) or not math.isfinite(float(other)):
            raise ModelError(f"multiply an expression by a finite number (use A @ w for a matrix), "
                             f"got {type(other).__name__}")
        return AffineExpression(e.variable, float(other) * e.A, float(other) * e.c)

    __rmul__ = __mul__

    def __truediv__(self, other: object) -> AffineExpression:
        if isinstance(other, bool) or not isinstance(other, numbers.Real) or float(other) == 0.0:
            raise ModelError("divide an expression by a non-zero number")
        return self * (1.0 / float(other))

    def __neg__(self) -> AffineExpression:
        return self * -1.0

    def __pos__(self) -> AffineExpression:
        return self._affine()

    def __add__(self, other: object) -> AffineExpression:
        e = self._affine()
        if isinstance(other, Operators):
            o = other._affine()
            if o.variable is not e.variable:
                raise ModelError(f"{e.variable.name} and {o.variable.name} are different variables; a dpopt "
                                 "problem has one variable")
            if o.A.shape[0] != e.A.shape[0]:
                raise ModelError(f"cannot add expressions of sizes {e.A.shape[0]} and {o.A.shape[0]}")
            return AffineExpression(e.variable, e.A + o.A, e.c + o.c)
        if isinstance(other, NormExpression):
            raise ModelError("a norm inside a sum is not supported: write norm1(w) <= r on its own")
        return AffineExpression(e.variable, e.A, e.c + public_constant(other, e.A.shape[0], "a constant"))

    __radd__ = __add__

    def __sub__(self, other: object) -> AffineExpression:
        return self + (-other if isinstance(other, Operators) else -np.asarray(
            public_constant(other, self._affine().A.shape[0], "a constant")))

    def __rsub__(self, other: object) -> AffineExpression:
        return (-self) + other

    # -- comparisons: constraints ----------------------------------------------------------
    def _compare(self, other: object, op: str) -> Constraint:
        e = self._affine()
        if isinstance(other, NormExpression):
            raise ModelError("compare a norm with a number: norm1(w) <= r")
        diff = e - other if isinstance(other, Operators) else e + (-public_constant(
            other, e.A.shape[0], "the right-hand side"))
        if not np.any(diff.A):
            raise ModelError("the constraint does not involve the variable (both sides are constants)")
        if op == "<=":
            return LinearConstraint(e.variable, diff.A, -diff.c)
        if op == ">=":
            return LinearConstraint(e.variable, -diff.A, diff.c)
        if np.any(np.isinf(diff.c)):
            raise ModelError("an equality needs a finite right-hand side")
        return LinearConstraint(e.variable, diff.A, -diff.c, equality=True)

    def __le__(self, other: object) -> Constraint:
        return self._compare(other, "<=")

    def __ge__(self, other: object) -> Constraint:
        return self._compare(other, ">=")

    def __lt__(self, other: object) -> Constraint:
        raise ModelError("strict inequalities are not closed sets: use <= (as in cvxpy)")

    def __gt__(self, other: object) -> Constraint:
        raise ModelError("strict inequalities are not closed sets: use >= (as in cvxpy)")

    def __eq__(self, other: object) -> Any:
        return self._compare(other, "==")

    def __ne__(self, other: object) -> Any:
        raise ModelError("!= is not a convex constraint; use <=, >= or ==")

    __hash__ = object.__hash__


@dataclass(frozen=True, eq=False)
class AffineExpression(Operators):
    """``A w + c``: ``m`` affine functions of the variable ``w`` (A of shape (m, size))."""

    variable: Any
    A: np.ndarray
    c: np.ndarray

    def _affine(self) -> AffineExpression:
        return self

    @property
    def size(self) -> int:
        """m, the number of affine functions."""
        return int(self.A.shape[0])

    def __repr__(self) -> str:
        return f"AffineExpression({self.size} of {self.variable.name})"

    __hash__ = object.__hash__


@dataclass(frozen=True, eq=False)
class NormExpression:
    """``‖w‖_q`` of the whole variable; only ``<=`` a positive number makes a constraint."""

    variable: Any
    norm: Any

    __array_ufunc__ = None
    __array_priority__ = 100.0

    def __le__(self, other: object) -> NormConstraint:
        refusal = _data_refusal(other)
        if refusal is not None:
            raise refusal
        if isinstance(other, bool) or not isinstance(other, numbers.Real) or not (0 < float(other) < math.inf):
            raise ModelError(f"a norm bound must be a positive finite number, got {other!r}")
        return NormConstraint(self.variable, self.norm, float(other))

    def __ge__(self, other: object) -> NormConstraint:
        raise ModelError("norm(w) >= r is not a convex constraint (the set outside a ball); bound it from above")

    def __lt__(self, other: object) -> NormConstraint:
        raise ModelError("strict inequalities are not closed sets: use <= (as in cvxpy)")

    __gt__ = __ge__

    def __eq__(self, other: object) -> Any:
        raise ModelError("norm(w) == r is not a convex constraint; use norm(w) <= r")

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"norm{self.norm}({self.variable.name})"


def _norm_of(x: object, q: Any) -> NormExpression:
    if isinstance(x, AffineExpression):
        raise ModelError("dpopt norms apply to the whole variable: norm1(w) <= r (a norm of part of w or of "
                         "A @ w is not supported; use a group or polytope set from dpopt.sets)")
    if not isinstance(x, Operators):
        refusal = _data_refusal(x)
        raise refusal if refusal is not None else ModelError(
            f"norm() takes a dpopt Variable, got {type(x).__name__}")
    return NormExpression(x._affine().variable, q)


def norm1(x: object) -> NormExpression:
    """``‖x‖₁`` of a dpopt Variable (cvxpy's ``norm1``); ``norm1(w) <= r`` is an ℓ1 ball."""
    return _norm_of(x, 1)


def norm2(x: object) -> NormExpression:
    """``‖x‖₂`` of a dpopt Variable (cvxpy's ``norm2``); ``norm2(w) <= r`` is an ℓ2 ball."""
    return _norm_of(x, 2)


def norm_inf(x: object) -> NormExpression:
    """``‖x‖∞`` of a dpopt Variable (cvxpy's ``norm_inf``); ``norm_inf(w) <= r`` is an ℓ∞ ball."""
    return _norm_of(x, "inf")


def norm(x: object, p: Any = 2) -> NormExpression:
    """``‖x‖_p`` for p in 1, 2, ``"inf"`` (or ``numpy.inf``), cvxpy's ``norm(x, p)``."""
    if p == 1 and not isinstance(p, bool):
        return norm1(x)
    if p == 2 and not isinstance(p, bool):
        return norm2(x)
    if p in ("inf", "Inf") or (isinstance(p, float) and math.isinf(p) and p > 0):
        return norm_inf(x)
    raise ModelError(f"dpopt norms are p = 1, 2 or 'inf', got {p!r}")
