"""Decision variables: the parameter vector θ and its domain."""

from __future__ import annotations

import itertools
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpopt.errors import ModelError
from dpopt.modeling.expressions import AffineExpression, Operators

_counter = itertools.count()


@dataclass(frozen=True, eq=False)
class Variable(Operators):
    """The parameter vector θ ∈ ℝ^size of a problem.

    Constraints are written with it as in cvxpy (:mod:`dpopt.modeling.expressions`):
    ``w >= 0``, ``w <= u``, ``w[j] == 0``, ``A @ w <= b``, ``dp.norm1(w) <= r``.

    Parameters
    ----------
    size : int
        Dimension of θ.
    name : str, optional
        A name for summaries and compiled models.
    """

    size: int
    name: str = ""

    def __post_init__(self) -> None:
        if isinstance(self.size, bool) or not isinstance(self.size, int) or self.size <= 0:
            raise ModelError(f"Variable size must be a positive integer, got {self.size!r}")
        if not self.name:
            object.__setattr__(self, "name", f"theta{next(_counter)}")

    def __repr__(self) -> str:
        return f"Variable({self.size}, name={self.name!r})"

    def _affine(self) -> AffineExpression:
        return AffineExpression(self, np.eye(self.size), np.zeros(self.size))

    def __eq__(self, other: object) -> Any:
        """``w == c`` with a number, an array or an expression is a constraint (as in cvxpy); two
        variables, or a variable and any other object (None, a set, ...), compare by identity, so
        containers and dataclasses holding variables still compare as before."""
        if isinstance(other, Variable) or not _constant_like(other):
            return self is other
        return Operators.__eq__(self, other)

    def __ne__(self, other: object) -> Any:
        if isinstance(other, Variable) or not _constant_like(other):
            return self is not other
        return Operators.__ne__(self, other)

    __hash__ = object.__hash__


def _constant_like(obj: object) -> bool:
    """A number, an array, a list or tuple, or an expression of a variable: ``==`` builds a constraint."""
    return isinstance(obj, (numbers.Number, np.ndarray, list, tuple, Operators)) and not isinstance(obj, bool)


def dimension_of(obj: object) -> int:
    """The dimension named by a :class:`Variable` or a positive int."""
    if isinstance(obj, Variable):
        return obj.size
    if isinstance(obj, int) and not isinstance(obj, bool) and obj > 0:
        return obj
    raise ModelError(f"expected a Variable or a positive integer dimension, got {type(obj).__name__}")
