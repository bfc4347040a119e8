"""Compile the optimizations over an H-polytope ``{s : A s ≤ b}`` for a backend.

Two programs, both over public data only (the polytope's A and b):

* the linear minimization oracle ``min ⟨c, s⟩ s.t. A s ≤ b`` (``c`` a noisy gradient in
  Frank–Wolfe), as a :class:`LinearProgram` (the form of ``scipy.optimize.linprog``,
  solved by :class:`dpopt.backends.lp.ScipyLPBackend`) or as a cvxpy program
  (:func:`lmo_cvxpy`, solved by any cvxpy-based backend);
* the Euclidean projection ``min ½‖w − v‖² s.t. A w ≤ b`` through its dual, a
  bound-constrained QP in λ ≥ 0 (:func:`projection_dual`).

Both are *prepared* programs in the backends' sense: ``set_linear(c)`` sets the
objective's linear term without rebuilding anything.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import cvxpy as cp
import numpy as np

from dpopt.compile.cvxpy_program import CvxpyProgram
from dpopt.errors import ModelError

__all__ = ["LinearProgram", "Bounds", "lmo_cvxpy", "lmo_program", "projection_dual"]

#: per-variable (low, high), None for unbounded
Bounds = Sequence[tuple[float | None, float | None]]


@dataclass
class LinearProgram:
    """``min ⟨c, x⟩ s.t. A_ub x ≤ b_ub, low ≤ x ≤ high`` (the form of scipy's ``linprog``)."""

    A_ub: np.ndarray
    b_ub: np.ndarray
    bounds: Bounds
    c: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def __post_init__(self) -> None:
        if self.c.size == 0:
            self.c = np.zeros(self.A_ub.shape[1])

    @property
    def dim(self) -> int:
        """The number of variables."""
        return int(self.A_ub.shape[1])

    def set_linear(self, c: np.ndarray | None) -> None:
        """Set the objective ``c`` (no rebuild); None keeps the current one."""
        if c is None:
            return
        c = np.asarray(c, dtype=np.float64).reshape(-1)
        if c.shape != (self.dim,):
            raise ModelError(f"the objective must have {self.dim} entries, got {c.size}")
        self.c = c


def lmo_program(A: np.ndarray, b: np.ndarray) -> LinearProgram:
    """The LMO ``min ⟨c, s⟩ s.t. A s ≤ b`` (s free) as a :class:`LinearProgram`."""
    A = np.asarray(A, dtype=np.float64)
    return LinearProgram(A, np.asarray(b, dtype=np.float64), [(None, None)] * A.shape[1])


def lmo_cvxpy(A: np.ndarray, b: np.ndarray) -> CvxpyProgram:
    """The LMO ``min ⟨c, s⟩ s.t. A s ≤ b`` as a cvxpy program with ``c`` a Parameter."""
    A = np.asarray(A, dtype=np.float64)
    s = cp.Variable(A.shape[1], name="s")
    c = cp.Parameter(A.shape[1], name="c")
    c.value = np.zeros(A.shape[1])
    problem = cp.Problem(cp.Minimize(c @ s), [A @ s <= np.asarray(b, dtype=np.float64)])
    return CvxpyProgram(problem, s, c)


def projection_dual(A: np.ndarray, b: np.ndarray, v: np.ndarray) -> Callable[[np.ndarray], tuple[float, np.ndarray]]:
    """The dual of ``min ½‖w − v‖² s.t. A w ≤ b``, to be minimized over λ ≥ 0.

    With ``c = A v − b`` the dual objective is ``½‖Aᵀλ‖² − ⟨λ, c⟩`` (gradient
    ``A Aᵀλ − c``); the projection is ``v − Aᵀλ*``.  Returns the function giving the
    value and the gradient.
    """
    c = A @ v - b

    def dual(lam: np.ndarray) -> tuple[float, np.ndarray]:
        w = A.T @ lam
        return 0.5 * float(w @ w) - float(lam @ c), A @ w - c

    return dual
