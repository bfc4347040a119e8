"""Clarabel (interior point, conic) through cvxpy: the default convex backend."""

from __future__ import annotations

from typing import Any

from dpopt.backends.cvxpy_backend import CvxpyBackend
from dpopt.backends.result import SolveOptions

CLARABEL_MIN_TOLERANCE = 1e-10


class ClarabelBackend(CvxpyBackend):
    name = "clarabel"
    module = "clarabel"
    distribution = "clarabel"
    solver = "CLARABEL"
    auto_rank = 20  # after scipy, first on the constraint sets scipy does not lead (ScipyBackend.auto_rank_for)
    description = "Clarabel interior-point conic solver (via cvxpy): LP, QP, SOCP, exponential cone"

    def solver_options(self, options: SolveOptions) -> dict[str, Any]:
        # below ~1e-10 Clarabel stops "almost solved" (inaccurate) on exponential-cone
        # problems; dpopt's certificate then decides whether the point is good enough
        tol = max(options.tolerance, CLARABEL_MIN_TOLERANCE)
        kw: dict[str, Any] = {
            "tol_gap_abs": tol,
            "tol_gap_rel": tol,
            "tol_feas": tol,
            "tol_ktratio": max(tol, 1e-12),
        }
        if options.time_limit is not None:
            kw["time_limit"] = float(options.time_limit)
        if options.max_iterations is not None:
            kw["max_iter"] = int(options.max_iterations)
        kw.update(options.extra)
        return kw
