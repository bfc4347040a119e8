"""Linear programs with HiGHS through ``scipy.optimize.linprog``: the ``scipy-lp`` backend.

:class:`ScipyLPBackend` solves the :class:`~dpopt.compile.polytope_program.LinearProgram`
s dpopt compiles (the linear minimization oracle of an
:class:`~dpopt.sets.HPolytope`, ``min ⟨c, s⟩ s.t. A s ≤ b``) and returns an
:class:`~dpopt.backends.result.OracleResult`; ``c`` is the ``b`` of
:meth:`~dpopt.backends.base.Backend.solve`.  HiGHS ships inside scipy, so the backend
is always installed (it also solves the linear programs of an H-polytope's public geometry,
:mod:`dpopt.backends.polytope_programs`).
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
from scipy import optimize

from dpopt.backends.base import AnyProblem, Backend
from dpopt.backends.result import Limit, OracleResult, OracleStatus, SolveOptions
from dpopt.compile.polytope_program import LinearProgram
from dpopt.errors import BackendCapabilityError
from dpopt.modeling.structured_sets import HPolytope

__all__ = ["ScipyLPBackend"]

#: scipy ``linprog`` status codes
_STATUS = {0: OracleStatus.OPTIMAL, 1: OracleStatus.LIMIT, 2: OracleStatus.INFEASIBLE,
           3: OracleStatus.UNBOUNDED, 4: OracleStatus.ERROR}


class ScipyLPBackend(Backend[LinearProgram]):
    """HiGHS (dual simplex / interior point) through ``scipy.optimize.linprog`` for compiled LPs."""

    name = "scipy-lp"
    module = "scipy"
    distribution = "scipy"
    kind = "lp"
    auto_rank = 0
    solves_lp = True
    lp_aliases = ("highs", "scipy")  # earlier spellings of HiGHS through scipy for the LMO
    description = "HiGHS via scipy.optimize.linprog: linear programs dpopt compiles (the HPolytope LMO)"

    def check(self, problem: AnyProblem | LinearProgram | HPolytope) -> None:
        """Accept a compiled :class:`LinearProgram` or an :class:`HPolytope` (its LMO); refuse the rest."""
        if not isinstance(problem, (LinearProgram, HPolytope)):
            raise BackendCapabilityError(
                f"backend {self.name!r} solves the linear programs dpopt compiles (an HPolytope's linear "
                f"minimization), not a {type(problem).__name__}: use a convex backend ('clarabel', 'scipy') "
                "for a Problem, a MIP backend ('highs', 'cpsat') for a DiscreteProblem"
            )

    def prepare_lmo(self, A: np.ndarray, b: np.ndarray) -> LinearProgram:
        """The LMO as a :class:`LinearProgram` for ``linprog`` (:func:`~dpopt.compile.polytope_program.lmo_program`)."""
        from dpopt.compile.polytope_program import lmo_program

        return lmo_program(A, b)

    def prepare(self, problem: AnyProblem | LinearProgram | HPolytope) -> LinearProgram:
        """The LMO program of an HPolytope, or a LinearProgram as is."""
        from dpopt.compile.polytope_program import lmo_program

        self.check(problem)
        if isinstance(problem, HPolytope):
            return lmo_program(problem.A, problem.b)
        assert isinstance(problem, LinearProgram)
        return problem

    @staticmethod
    def linprog_options(options: SolveOptions) -> dict[str, Any]:
        """HiGHS options of ``linprog(method="highs")`` from SolveOptions (profile extras last)."""
        kw: dict[str, Any] = {}
        if options.time_limit is not None:
            kw["time_limit"] = float(options.time_limit)
        if options.max_iterations is not None:
            kw["maxiter"] = int(options.max_iterations)
        kw.update(options.extra)
        return kw

    def solve(self, prepared: LinearProgram, b: np.ndarray | None, options: SolveOptions) -> OracleResult:
        """Solve ``min ⟨b, x⟩`` over the prepared program's feasible set."""
        version = self.require()
        if not isinstance(prepared, LinearProgram):
            raise BackendCapabilityError(f"backend {self.name!r} solves a LinearProgram from prepare()")
        prepared.set_linear(b)
        start = time.perf_counter()
        res = optimize.linprog(prepared.c, A_ub=prepared.A_ub, b_ub=prepared.b_ub, bounds=list(prepared.bounds),
                               method="highs", options=self.linprog_options(options))
        elapsed = time.perf_counter() - start
        status = _STATUS.get(int(res.status), OracleStatus.ERROR)
        limit = None
        if status is OracleStatus.LIMIT:
            limit = Limit.TIME if options.time_limit is not None and elapsed >= 0.9 * options.time_limit else Limit.ITERATIONS
        sol = None if res.x is None else np.asarray(res.x, dtype=np.float64)
        fun = float(res.fun) if res.fun is not None and math.isfinite(res.fun) else math.nan
        return OracleResult(solution=sol if status is OracleStatus.OPTIMAL else None, status=status,
                            solver_certified=status is OracleStatus.OPTIMAL and sol is not None,
                            solve_time=elapsed, backend=self.name, backend_version=version,
                            raw_status=str(res.status), limit=limit, primal_bound=fun, message=str(res.message))
