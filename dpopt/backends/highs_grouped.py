"""HiGHS on the grouped decomposition: the fast exact OPDisc / RSPM / OPSamp oracle.

The problem is decomposed once by :func:`dpopt.compile.mip_grouped.compile_grouped`
(enumerated columns S, rows grouped by their pattern over the other columns).  One oracle
call, for one η, is an exact search over the enumerated points k_S, on a fresh HiGHS
instance built from the stored arrays (highspy directly: only costs and bounds change
between points, no modeling-layer rebuild):

1. *LP pass*: the LP relaxation of every point's MIP gives a lower bound LB(k_S).
2. *Incumbent*: the LP optima of the ``HEURISTIC_POINTS`` points with the smallest bounds
   are rounded and improved by local search (:mod:`dpopt.compile.grouped_search`).
3. *MIP pass*: points in order of LB; a point with LB ≥ incumbent is pruned, any other is
   solved by HiGHS branch and cut with the incumbent as objective cutoff
   (``objective_bound``), so it either improves the incumbent (and is solved to
   optimality) or is proven not to.

Nothing carries over between oracle calls: the HiGHS instance, its bases and the incumbent
belong to one η.  The LP pass's row duals are kept on the prepared object
(``GroupedPrepared.hint``, replaced by every call) as proposals for the cross-verifier, which
checks them in exact arithmetic (:mod:`dpopt.backends.grouped_duals`); they never reach a
result or a release.  Options: ``time_limit`` (the whole call), ``threads``, ``random_seed =
options.seed``, ``max_iterations`` → ``mip_max_nodes`` per point, and in ``extra``:
``enumerate`` (column indices, default "auto": the columns the data's schema declares
non-binary) plus raw HiGHS options.  Whether a problem is accepted is decided by
:func:`~dpopt.compile.mip_grouped.compile_grouped` from public declarations only (schema, n,
domain), never from the values.

Certification rule
------------------
``solver_certified`` is True exactly when all of the following hold:

1. every point was pruned by an optimal LP bound at least 1e-6·max(1, |incumbent|) above
   the incumbent, or finished by HiGHS (status optimal, or infeasible under the cutoff:
   nothing below the incumbent);
2. the gap is closed: incumbent − min_k_S(bound) ≤ 1e-9·max(1, |incumbent|) and below
   the loss resolution (the same rule as :mod:`dpopt.backends.highs`);
3. dpopt's re-check: w = τk is a grid point, ``DiscreteProblem.objective(w)`` recomputed
   in numpy equals the incumbent within 1e-6, and the exact integer loss equals the
   grouped tables' loss.

Anything else (time or node limit, an LP or MIP that fails) is not certified: fail closed.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpopt.backends.base import Backend
from dpopt.backends.certificates import DiscreteCheck
from dpopt.backends.grouped_duals import DualHint
from dpopt.backends.grouped_points import (
    HEURISTIC_POINTS,
    GroupedSearch,
    load_point,
    new_highs,
    next_point,
    seed_incumbent,
)
from dpopt.backends.highs import (
    GAP_TOLERANCE,
    OBJECTIVE_TOLERANCE,
    check_discrete,
    highspy_version,
    point_recheck,
    recheck_notes,
)
from dpopt.backends.options import GROUPED_OWN, check_highs
from dpopt.backends.result import Limit, OracleResult, OracleStatus, SolveOptions
from dpopt.compile.mip_grouped import GroupedProgram, compile_grouped
from dpopt.errors import BackendCapabilityError, ModelError
from dpopt.executors import current_executor
from dpopt.modeling.discrete import DiscreteProblem
from dpopt.progress import OFF, Tracker, track


@dataclass
class GroupedPrepared:
    """A decomposed problem ready for repeated solves with fresh η."""

    program: GroupedProgram
    enumerate: Any = "auto"
    #: the last call's LP duals (proposals for the cross-verifier, :mod:`dpopt.backends.grouped_duals`)
    hint: DualHint | None = None


class HighsGroupedBackend(Backend[GroupedPrepared]):
    """Exact MIP oracle for :class:`DiscreteProblem` by enumeration of a few columns and row groups."""

    name = "highs-grouped"
    module = "highspy"
    distribution = "highspy"
    kind = "mip"
    formulation = "grouped"
    auto_rank = 1  # where the schema makes the decomposition applicable (dpopt.backends.auto_discrete)
    description = ("HiGHS on the grouped decomposition (enumerate non-binary columns, group rows by pattern): "
                   "exact OPDisc/RSPM/OPSamp oracle, fast on one-hot data such as Adult")

    def version(self) -> str | None:
        """highspy's version, or None when highspy is missing."""
        return highspy_version()

    def check_options(self, options: dict[str, Any], where: str) -> None:
        """HiGHS's options and its own ``enumerate`` (:func:`dpopt.backends.options.check_highs`)."""
        check_highs(self.name, options, where, own=GROUPED_OWN)

    def check(self, problem: Any) -> None:
        check_discrete(self.name, problem)
        if not problem.halfspace:
            raise BackendCapabilityError(
                "backend 'highs-grouped' solves the 0/1-loss halfspace over an IntegerGrid (its grouped "
                "decomposition); use 'highs', 'cpsat' or 'scip' for any other row loss")

    def prepare(self, problem: Any, enumerate: Any = "auto") -> GroupedPrepared:
        self.require()
        self.check(problem)
        try:
            return GroupedPrepared(compile_grouped(problem, enumerate), enumerate)
        except ModelError as exc:
            raise BackendCapabilityError(f"backend 'highs-grouped': {exc}") from None

    def prepare_for(self, problem: Any, options: SolveOptions) -> GroupedPrepared:
        """Compile with the profile's declared split (``extra["enumerate"]``, default "auto")."""
        return self.prepare(problem, options.extra.get("enumerate", "auto"))

    def solve(self, prepared: Any, b: np.ndarray | None, options: SolveOptions) -> OracleResult:
        """Solve with noise ``b`` = η (None: no perturbation)."""
        version = self.require()
        if not isinstance(prepared, GroupedPrepared):
            prepared = GroupedPrepared(prepared)
        wanted = options.extra.get("enumerate", "auto")
        if wanted != prepared.enumerate:  # a profile's declared split: compile it once
            fresh = self.prepare(prepared.program.problem, wanted)
            prepared.program, prepared.enumerate = fresh.program, fresh.enumerate
        prog = prepared.program
        problem = prog.problem.with_eta(b)
        start = time.perf_counter()
        deadline = None if options.time_limit is None else start + float(options.time_limit)
        try:  # the display shows data-dependent counts and values only with diagnostics (dpopt.progress)
            with track(f"{self.name}: {prog.points.shape[0]} enumerated points", prog.points.shape[0],
                       counts="data") as bar:
                from dpopt.backends.grouped_parallel import (
                    parallel_search,  # it imports this module
                )

                executor = current_executor()  # the run's, from its arguments; never in the result
                if executor.workers > 1:
                    search = parallel_search(prog, problem, options, deadline, executor, bar)
                else:
                    search = self._search(prog, problem, options, deadline, bar)
                bar.note(mips=search.mips, pruned=search.pruned, incumbent=search.incumbent)
            prepared.hint = DualHint(prog, None if problem.eta is None else np.array(problem.eta), search.duals)
        except Exception as exc:  # noqa: BLE001 — report, never crash a mechanism
            return OracleResult(
                solution=None, status=OracleStatus.ERROR, solver_certified=False,
                solve_time=time.perf_counter() - start, backend=self.name, backend_version=version,
                raw_status="exception", message=f"HiGHS (grouped) failed: {type(exc).__name__}",
            )
        return self._result(prog, search, time.perf_counter() - start, version)

    # ---- the search -----------------------------------------------------------------
    def _search(self, prog: GroupedProgram, problem: DiscreteProblem, options: SolveOptions,
                deadline: float | None, bar: Tracker = OFF) -> GroupedSearch:
        import highspy

        h = new_highs(prog, options)
        search = GroupedSearch(problem=problem, bounds=np.full(prog.points.shape[0], -np.inf),
                         finished=np.zeros(prog.points.shape[0], dtype=bool))
        h.setOptionValue("solve_relaxation", True)
        lp_solutions: dict[int, np.ndarray] = {}
        for i, ks in enumerate(prog.points):
            bar.advance()
            if _expired(deadline):
                search.limit = Limit.TIME
                return search
            const = load_point(h, prog, problem, ks)
            h.run()
            status = h.getModelStatus()
            if status == highspy.HighsModelStatus.kOptimal:
                search.bounds[i] = h.getInfo().objective_function_value + const
                solution = h.getSolution()
                lp_solutions[i] = np.asarray(solution.col_value)
                search.duals[i] = np.asarray(solution.row_dual)
            elif status == highspy.HighsModelStatus.kInfeasible:
                search.bounds[i], search.finished[i] = math.inf, True
        order = np.argsort(search.bounds, kind="stable")
        seed_incumbent(prog, problem, search, order, {int(i): prog.k_from_columns(lp_solutions[int(i)])
                                                      for i in order[:HEURISTIC_POINTS] if int(i) in lp_solutions})
        lp_solutions.clear()
        h.setOptionValue("solve_relaxation", False)
        bar.phase(f"{self.name}: MIP pass", order.size)
        queue = iter(order.tolist())
        while (point := next_point(search, queue, bar)) is not None:
            if _expired(deadline):
                search.limit = Limit.TIME
                return search
            self._solve_point(h, prog, problem, search, point, deadline, options)
            if search.failure is not None or search.limit is not None:
                return search
        return search

    def _solve_point(self, h: Any, prog: GroupedProgram, problem: DiscreteProblem, search: GroupedSearch, i: int,
                     deadline: float | None, options: SolveOptions) -> None:
        """Branch and cut on point ``i`` with the incumbent as cutoff; updates ``search``."""
        import highspy

        ks = prog.points[i]
        const = load_point(h, prog, problem, ks)
        cutoff = search.incumbent
        h.setOptionValue("objective_bound", (cutoff - const) if math.isfinite(cutoff) else highspy.kHighsInf)
        if deadline is not None:
            h.setOptionValue("time_limit", max(deadline - time.perf_counter(), 1e-3))
        h.run()
        search.mips += 1
        status, info = h.getModelStatus(), h.getInfo()
        has_point = info.primal_solution_status == 2
        value = info.objective_function_value + const if has_point else math.inf
        if has_point and value < search.incumbent:
            search.incumbent = value
            search.best_k = prog.point(ks, prog.k_from_columns(np.asarray(h.getSolution().col_value)))
        S = highspy.HighsModelStatus
        if status == S.kOptimal or status == S.kInfeasible:
            # finished: nothing below min(its optimum, the cutoff) at this point
            search.bounds[i] = min(value, cutoff) if has_point else cutoff
            search.finished[i] = True
        elif status in (S.kTimeLimit, S.kSolutionLimit, S.kIterationLimit, S.kInterrupt):
            search.bounds[i] = max(search.bounds[i], info.mip_dual_bound + const)
            search.limit = Limit.TIME if status == S.kTimeLimit else (Limit.NODES if options.max_iterations else Limit.ITERATIONS)
        else:
            search.failure = h.modelStatusToString(status)

    # ---- the certificate --------------------------------------------------------------
    def _result(self, prog: GroupedProgram, search: GroupedSearch, elapsed: float, version: str) -> OracleResult:
        problem = search.problem
        primal = search.incumbent
        all_done = bool(search.finished.all())
        dual = float(search.bounds.min()) if search.bounds.size else math.nan
        if all_done:
            dual = min(dual, primal)
        gap = primal - dual if math.isfinite(primal) and math.isfinite(dual) else math.nan
        w: np.ndarray | None = None
        check: DiscreteCheck | None = None
        if search.best_k is not None:
            w = problem.domain.step * search.best_k.astype(np.float64)
            check = point_recheck(problem, search.best_k, primal, prog.exact_loss, prog.resolution)
        limit = search.limit
        if search.failure is not None:
            status = OracleStatus.ERROR
        elif limit is not None:
            status = OracleStatus.LIMIT
        elif not math.isfinite(primal):
            status = OracleStatus.INFEASIBLE
        else:
            status = OracleStatus.OPTIMAL
        gap_ok = (all_done and math.isfinite(gap) and gap <= GAP_TOLERANCE * max(1.0, abs(primal))
                  and gap < prog.resolution)
        recheck_ok = check is not None and check.point_agrees(OBJECTIVE_TOLERANCE)
        certified = status is OracleStatus.OPTIMAL and gap_ok and recheck_ok
        notes = [f"highspy (grouped): {prog.size.summary()}; {search.mips} point MIPs solved, "
                 f"{search.pruned} points pruned by bounds"]
        notes += recheck_notes(check, status is OracleStatus.OPTIMAL and not recheck_ok)
        if search.failure is not None:
            notes.append(f"a point MIP ended with HiGHS status {search.failure!r}")
        return OracleResult(
            solution=w, status=status, solver_certified=bool(certified), solve_time=elapsed,
            backend=self.name, backend_version=version,
            raw_status=search.failure or (limit.value if limit is not None else None)
            or ("optimal" if certified else "finished"),
            limit=limit, primal_bound=primal, dual_bound=dual, gap=gap,
            recheck=check, message="; ".join(notes),
        )


def _expired(deadline: float | None) -> bool:
    return deadline is not None and time.perf_counter() >= deadline
