"""SCS (first-order splitting, conic) through cvxpy."""

from __future__ import annotations

from typing import Any

from dpopt.backends.cvxpy_backend import CvxpyBackend
from dpopt.backends.result import SolveOptions


class ScsBackend(CvxpyBackend):
    name = "scs"
    module = "scs"
    distribution = "scs"
    solver = "SCS"
    auto_rank = 30
    description = "SCS splitting conic solver (via cvxpy): large problems, moderate accuracy"

    def solver_options(self, options: SolveOptions) -> dict[str, Any]:
        tol = max(options.tolerance, 1e-12)
        kw: dict[str, Any] = {"eps_abs": tol, "eps_rel": tol, "max_iters": options.max_iterations or 100_000}
        if options.time_limit is not None:
            kw["time_limit_secs"] = float(options.time_limit)
        kw.update(options.extra)
        return kw
