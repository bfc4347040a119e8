"""Shared adapter for solvers reached through cvxpy (Clarabel, SCS, OSQP, ...)."""

from __future__ import annotations

import math
import time
import warnings
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from dpopt.backends.base import AnyProblem, Backend
from dpopt.backends.options import check_cvxpy_solver
from dpopt.backends.result import Limit, OracleResult, OracleStatus, SolveOptions
from dpopt.errors import BackendCapabilityError
from dpopt.modeling.problem import Problem

_STATUS = {
    "optimal": OracleStatus.OPTIMAL,
    "optimal_inaccurate": OracleStatus.INACCURATE,
    "infeasible": OracleStatus.INFEASIBLE,
    "infeasible_inaccurate": OracleStatus.INFEASIBLE,
    "unbounded": OracleStatus.UNBOUNDED,
    "unbounded_inaccurate": OracleStatus.UNBOUNDED,
    "user_limit": OracleStatus.LIMIT,
    "solver_error": OracleStatus.ERROR,
}


def is_qp(problem: Problem) -> bool:
    """Whether the compiled problem is a QP (quadratic objective, polyhedral constraints).

    Read from the declarations ``Loss.qp_representable``, ``ConstraintSet.polyhedral`` and
    ``Regularizer.qp_representable``.
    """
    polyhedral = problem.constraint is None or problem.constraint.polyhedral
    return (problem.loss.qp_representable and polyhedral
            and all(r.qp_representable for r in problem.regularizers))


@runtime_checkable
class CvxpyCompiled(Protocol):
    """What a cvxpy backend solves: a compiled cvxpy problem whose linear term is a Parameter.

    :class:`~dpopt.compile.cvxpy_program.CvxpyProgram` (a whole Problem, or an HPolytope's
    LMO) and :class:`~dpopt.compile.bregman_program.BregmanProgram` (a mirror step) are
    both one.
    """

    problem: Any  # cvxpy.Problem
    theta: Any  # cvxpy.Variable: the answer is read from its value

    def set_linear(self, b: np.ndarray | None, /) -> None:
        """Set the linear term (no rebuild); None keeps the current one."""


class CvxpyBackend(Backend[CvxpyCompiled]):
    """A cvxpy solver as an oracle.  Subclasses set ``solver`` and ``options``.

    Its prepared type is :class:`CvxpyCompiled`: :meth:`prepare` compiles a Problem into a
    :class:`~dpopt.compile.cvxpy_program.CvxpyProgram`, and :meth:`solve` also takes the
    other programs dpopt compiles for cvxpy (mirror steps, polytope LMOs).
    """

    kind = "convex"
    #: cvxpy solver constant name, e.g. "CLARABEL"
    solver: ClassVar[str] = ""
    #: whether the solver only takes QPs (quadratic objective, linear constraints)
    qp_only: ClassVar[bool] = False
    solves_steps = True  # the conic mirror steps (a QP-only subclass says False)
    solves_lp = True

    def check_options(self, options: dict[str, Any], where: str) -> None:
        """A trial solve through cvxpy decides (:func:`dpopt.backends.options.check_cvxpy_solver`)."""
        check_cvxpy_solver(self.name, options, where)

    def prepare_lmo(self, A: np.ndarray, b: np.ndarray) -> CvxpyCompiled:
        """The LMO as a cvxpy program with ``c`` a parameter (:func:`~dpopt.compile.polytope_program.lmo_cvxpy`)."""
        from dpopt.compile.polytope_program import lmo_cvxpy

        return lmo_cvxpy(A, b)

    def check(self, problem: AnyProblem) -> None:
        """Structural check (no compilation): QP-only solvers refuse non-QP problems."""
        self.require()
        if not isinstance(problem, Problem):
            raise BackendCapabilityError(
                f"backend {self.name!r} solves convex problems; for a discrete domain use 'highs', "
                "'cpsat' or 'bruteforce'"
            )
        if self.qp_only and not is_qp(problem):
            raise BackendCapabilityError(
                f"backend {self.name!r} solves only quadratic programs (a squared, Huber or hinge loss "
                f"over ℝ^d or a polyhedral set); this problem ({problem.summary()}) is not one: "
                "use 'clarabel' or 'scipy'"
            )

    def prepare(self, problem: AnyProblem) -> CvxpyCompiled:
        from dpopt.compile.cvxpy_program import compile_cvxpy

        self.check(problem)
        assert isinstance(problem, Problem)  # check() refused anything else
        return compile_cvxpy(problem)

    def solver_options(self, options: SolveOptions) -> dict[str, Any]:
        """Translate SolveOptions into keyword arguments for ``cvxpy.Problem.solve``."""
        return dict(options.extra)

    def solve(self, prepared: CvxpyCompiled, b: np.ndarray | None, options: SolveOptions) -> OracleResult:
        import cvxpy as cp

        version = self.require()
        prepared.set_linear(b)
        prob = prepared.problem
        kwargs = self.solver_options(options)
        start = time.perf_counter()
        try:
            with warnings.catch_warnings():  # the status below says it; no stray warnings
                warnings.simplefilter("ignore")
                prob.solve(solver=getattr(cp, self.solver), **kwargs)
            raw = str(prob.status)
            error = ""
        except cp.error.SolverError as exc:
            raw, error = "solver_error", str(exc)
        elapsed = time.perf_counter() - start
        status = _STATUS.get(raw, OracleStatus.ERROR)
        limit = None
        if status is OracleStatus.LIMIT:
            limit = Limit.TIME if options.time_limit is not None and elapsed >= 0.9 * options.time_limit else Limit.ITERATIONS
        x = prepared.theta.value
        sol = None if x is None else np.array(x, dtype=np.float64).reshape(-1)
        primal = float(prob.value) if isinstance(prob.value, (int, float, np.floating)) else math.nan
        stats = prob.solver_stats
        return OracleResult(
            solution=sol,
            status=status,
            solver_certified=status is OracleStatus.OPTIMAL and sol is not None,
            solve_time=elapsed,
            backend=self.name,
            backend_version=version,
            raw_status=raw,
            limit=limit,
            primal_bound=primal if math.isfinite(primal) else math.nan,
            message=error or (f"iterations={stats.num_iters}" if stats and stats.num_iters is not None else ""),
        )
