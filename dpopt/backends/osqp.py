"""OSQP (ADMM, quadratic programs) through cvxpy."""

from __future__ import annotations

from typing import Any

from dpopt.backends.cvxpy_backend import CvxpyBackend
from dpopt.backends.result import SolveOptions


class OsqpBackend(CvxpyBackend):
    name = "osqp"
    module = "osqp"
    distribution = "osqp"
    solver = "OSQP"
    qp_only = True
    solves_steps = False  # the mirror steps are conic programs
    description = "OSQP ADMM solver (via cvxpy): quadratic programs only (squared loss, polyhedral sets)"

    def solver_options(self, options: SolveOptions) -> dict[str, Any]:
        tol = max(options.tolerance, 1e-12)
        kw: dict[str, Any] = {
            "eps_abs": tol,
            "eps_rel": tol,
            "polishing": True,
            "max_iter": options.max_iterations or 200_000,
        }
        if options.time_limit is not None:
            kw["time_limit"] = float(options.time_limit)
        kw.update(options.extra)
        return kw
