"""HiGHS on the general discrete model's arrays (:mod:`dpopt.compile.discrete_arrays`): one certified solve.

The ``highs`` backend solves a row loss this way instead of through pyomo, with a fresh ``Highs``
per call (no basis or incumbent carries over between private solves).  Certification is the pyomo
family's rule (:mod:`dpopt.backends.pyomo_mip`): status optimal, the gap closed (≤ 10⁻⁹·max(1,
|primal|) and below the loss resolution), and dpopt's re-check of the point (on the domain, the
exact loss plus the perturbation equal to HiGHS's value within 10⁻⁶).
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from dpopt.backends.pyomo_mip import (
    GAP_TOLERANCE,
    OBJECTIVE_TOLERANCE,
    point_recheck,
    recheck_notes,
)
from dpopt.backends.result import Limit, OracleResult, OracleStatus, SolveOptions
from dpopt.compile.discrete_arrays import HighsIRProgram


def _status(model_status: Any, highspy: Any) -> tuple[OracleStatus, Limit | None]:
    s = highspy.HighsModelStatus
    if model_status == s.kOptimal:
        return OracleStatus.OPTIMAL, None
    if model_status == s.kTimeLimit:
        return OracleStatus.LIMIT, Limit.TIME
    if model_status in (s.kIterationLimit, s.kSolutionLimit):
        return OracleStatus.LIMIT, Limit.NODES
    if model_status == s.kInfeasible:
        return OracleStatus.INFEASIBLE, None
    if model_status in (s.kUnbounded, s.kUnboundedOrInfeasible):
        return OracleStatus.UNBOUNDED, None
    return OracleStatus.ERROR, None


def solve_highs_ir(prog: HighsIRProgram, eta: np.ndarray | None, options: SolveOptions, raw: dict[str, Any],
                   *, name: str, version: str) -> OracleResult:
    """One certified solve with a fresh ``Highs`` (module docstring); ``raw``: HiGHS options by name."""
    import highspy

    if eta is not None:
        prog.eta = np.asarray(prog.problem.with_eta(eta).eta)
    start = time.perf_counter()
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    for key, val in raw.items():
        h.setOptionValue(key, val)
    if options.time_limit is not None:
        h.setOptionValue("time_limit", float(options.time_limit))
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = prog.columns, int(prog.row_lower.size)
    lp.col_cost_ = prog.costs(prog.eta)
    lp.offset_ = float(prog.ir.constant)
    lp.col_lower_, lp.col_upper_ = prog.lower, prog.upper
    lp.row_lower_, lp.row_upper_ = prog.row_lower, prog.row_upper
    lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = prog.starts, prog.index, prog.value
    kinds = highspy.HighsVarType
    lp.integrality_ = [kinds.kInteger if i else kinds.kContinuous for i in prog.integral]
    h.passModel(lp)
    h.run()
    status, limit = _status(h.getModelStatus(), highspy)
    info = h.getInfo()
    primal = float(info.objective_function_value) if info.primal_solution_status == 2 else math.nan
    dual = float(info.mip_dual_bound)
    gap = primal - dual if math.isfinite(primal) and math.isfinite(dual) else math.nan
    w = check = None
    if math.isfinite(primal):
        k = np.rint(np.asarray(h.getSolution().col_value)[prog.ir.k]).astype(np.int64)
        w = prog.problem.domain.step * k.astype(np.float64)
        check = point_recheck(prog.problem.with_eta(prog.eta), k, primal, prog.ir.exact_loss, prog.resolution)
    gap_ok = math.isfinite(gap) and gap <= GAP_TOLERANCE * max(1.0, abs(primal)) and gap < prog.resolution
    recheck_ok = check is not None and check.point_agrees(OBJECTIVE_TOLERANCE)
    certified = status is OracleStatus.OPTIMAL and gap_ok and recheck_ok
    notes = [f"HiGHS, model: {prog.summary()}"]
    if status is OracleStatus.OPTIMAL and not gap_ok:
        notes.append("optimal status but the gap is not closed")
    notes += recheck_notes(check, status is OracleStatus.OPTIMAL and not recheck_ok)
    return OracleResult(solution=w, status=status, solver_certified=bool(certified),
                        solve_time=time.perf_counter() - start, backend=name, backend_version=version,
                        raw_status=str(h.modelStatusToString(h.getModelStatus())), limit=limit,
                        primal_bound=primal, dual_bound=dual, gap=gap, recheck=check, message="; ".join(notes))
