"""SCIP on the grouped decomposition's per-point cut-off models, on the run's executor.

The cross-verifier of ``highs-grouped`` (:class:`~dpopt.backends.verify.ScipGroupedVerifier`)
asks, for each enumerated point k_S its LP duals did not settle, whether the per-point MIP
of :mod:`dpopt.compile.mip_grouped` has a solution with objective below ``cut − const(k_S)``
(SCIP's objective limit).  :func:`scip_pass` runs these questions as tasks of a
:class:`~dpopt.executors.Executor` (up to ``workers`` in flight; the default in-process
executor runs them one after the other) and stops at the first answer other than
"infeasible".  Each worker builds one SCIP model per program and verifier attempt (keyed by
the shared program's token and a random attempt id) and reuses it for its points: nothing
carries over between attempts or oracle calls.  Which worker ran what, and for how long, is
never returned.
"""

from __future__ import annotations

import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpopt.backends.grouped_parallel import share_program
from dpopt.backends.result import SolveOptions
from dpopt.compile.mip_grouped import GroupedProgram
from dpopt.errors import ModelError
from dpopt.executors import Executor, Shared, resolve

__all__ = ["PointOutcome", "scip_model", "scip_pass", "scip_point", "solve_point"]

#: SCIP statuses that mean a limit stopped the solve
LIMIT_STATUSES = ("timelimit", "nodelimit", "totalnodelimit", "stallnodelimit", "userinterrupt")


@dataclass(frozen=True)
class PointOutcome:
    """The answer at one enumerated point: ``kind`` ("infeasible", "better", "limit" or SCIP's
    status), the point found (or None) and how many point models were solved in the pass."""

    kind: str
    point: np.ndarray | None = None
    solved: int = 0


def scip_model(prog: GroupedProgram, options: SolveOptions) -> tuple[Any, list[Any]]:
    """A SCIP model of the per-point MIP's structure (zero costs), as in highs_grouped."""
    import pyscipopt

    model = pyscipopt.Model()
    model.hideOutput()
    model.setParam("randomization/randomseedshift", int(options.seed))
    model.setParam("numerics/feastol", 1e-9)
    model.setParam("limits/gap", 0.0)
    model.setParam("limits/absgap", 0.0)
    # only infeasibility under the cut-off is asked: no primal heuristics, light presolve, and no
    # cutting planes (measured on Adult, n = 15,682: the hardest point models took 15–154 s with
    # SCIP's default separation and 1.5–6 s without)
    model.setHeuristics(pyscipopt.SCIP_PARAMSETTING.OFF)
    model.setPresolve(pyscipopt.SCIP_PARAMSETTING.FAST)
    model.setSeparating(pyscipopt.SCIP_PARAMSETTING.OFF)
    if options.max_iterations is not None:
        model.setParam("limits/nodes", int(options.max_iterations))
    x = [model.addVar(vtype="B", name=f"x{j}") for j in range(prog.n_columns)]
    rows = prog.rows
    for r in range(rows.rhs.size):
        lo, hi = int(rows.starts[r]), int(rows.starts[r + 1])
        expr = pyscipopt.quicksum(float(v) * x[int(j)] for j, v in zip(rows.index[lo:hi], rows.value[lo:hi], strict=True))
        model.addCons(expr == float(rows.rhs[r]))
    return model, x


def solve_point(model: Any, x: list[Any], prog: GroupedProgram, ks: np.ndarray, costs: np.ndarray,
                z_upper: np.ndarray, limit: float, deadline: float | None) -> tuple[str, np.ndarray | None]:
    """("infeasible" | "better" | "limit" | SCIP's status, the point found or None) for one k_S."""
    import pyscipopt

    model.freeTransform()
    model.setObjective(pyscipopt.quicksum(float(c) * v for c, v in zip(costs, x, strict=True) if c != 0.0), "minimize")
    z0 = prog.n_u + prog.n_v
    for t, ub in enumerate(z_upper):
        model.chgVarUb(x[z0 + t], float(ub))
    model.setObjlimit(float(limit))
    if deadline is not None:
        remaining = deadline - time.perf_counter()
        if remaining <= 0:
            return "limit", None
        model.setParam("limits/time", max(remaining, 1e-3))
    model.optimize()
    status = model.getStatus()
    if status == "infeasible":
        return "infeasible", None
    if status in LIMIT_STATUSES:
        return "limit", None
    if model.getNSols() == 0:
        return str(status), None
    sol = model.getBestSol()
    cols = np.array([model.getSolVal(sol, v) for v in x[: prog.n_u]])
    k = prog.point(ks, prog.k_from_columns(cols))
    try:
        return "better", prog.problem.domain.step * k.astype(np.float64)
    except ModelError:  # pragma: no cover — defensive: a malformed point is still a disagreement
        return "better", None


# ---- worker side ------------------------------------------------------------------------------

_local = threading.local()  # one model per worker thread and attempt


def scip_point(handle: Shared, attempt: str, eta: np.ndarray | None, cut: float, i: int, options: SolveOptions,
               seconds: float | None) -> tuple[str, np.ndarray | None]:
    """SCIP's answer at point ``i`` under the objective limit ``cut − const`` (a task; see :func:`solve_point`)."""
    prog: GroupedProgram = resolve(handle)
    key = (handle.token, attempt)
    state = getattr(_local, "state", None)
    if state is None or state[0] != key:  # a new attempt: a fresh model
        state = (key, *scip_model(prog, options), prog.problem.with_eta(eta))
        _local.state = state
    _, model, x, problem = state
    ks = prog.points[i]
    costs, z_upper, const = prog.costs(problem, ks)
    deadline = None if seconds is None else time.perf_counter() + seconds
    return solve_point(model, x, prog, ks, costs, z_upper, cut - const, deadline)


# ---- the pass (calling process) ---------------------------------------------------------------

def scip_pass(prog: GroupedProgram, eta: np.ndarray | None, cut: float, points: list[int], options: SolveOptions,
              deadline: float | None, executor: Executor) -> PointOutcome:
    """SCIP on ``points`` (in this order) on ``executor``; "infeasible" when every cut-off model is.

    Raises whatever a task raised (the verifier reports it as a crash).
    """
    handle = share_program(executor, prog)
    attempt = uuid.uuid4().hex
    queue = iter(points)
    in_flight: dict[Any, int] = {}
    solved = 0
    outcome: PointOutcome | None = None
    try:
        while outcome is None:
            while len(in_flight) < executor.workers and (i := next(queue, None)) is not None:
                left = None if deadline is None else deadline - time.perf_counter()
                if left is not None and left <= 0:
                    return PointOutcome("limit", None, solved)
                in_flight[executor.submit(scip_point, handle, attempt, eta, cut, i, options, left)] = i
            if not in_flight:
                break
            done, _ = executor.wait_first(in_flight)
            for f in sorted(done, key=lambda f: in_flight[f]):
                in_flight.pop(f)
                kind, w = f.result()
                solved += 1
                if kind != "infeasible" and outcome is None:
                    outcome = PointOutcome(kind, w, solved)
    finally:
        for f in in_flight:  # stopped early: the rest is not needed (a running task ends at its own limit)
            f.cancel()
    return outcome if outcome is not None else PointOutcome("infeasible", None, solved)
