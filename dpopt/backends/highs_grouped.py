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
belong to one η.  Options: ``time_limit`` (the whole call), ``threads``, ``random_seed =
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
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpopt.backends.base import Backend
from dpopt.backends.certificates import DiscreteCheck
from dpopt.backends.highs import (
    BASE_OPTIONS,
    DEFAULT_THREADS,
    GAP_TOLERANCE,
    OBJECTIVE_TOLERANCE,
    check_discrete,
    highspy_version,
    point_recheck,
    recheck_notes,
    set_threads,
)
from dpopt.backends.registry import register
from dpopt.backends.result import Limit, OracleResult, OracleStatus, SolveOptions
from dpopt.compile.grouped_search import GroupedObjective, local_search, repair
from dpopt.compile.mip_grouped import GroupedProgram, compile_grouped
from dpopt.errors import BackendCapabilityError, ModelError
from dpopt.executors import current_executor
from dpopt.modeling.discrete import DiscreteProblem
from dpopt.progress import OFF, Tracker, track

#: points whose LP optima seed the local search
HEURISTIC_POINTS = 10
#: relative margin above the incumbent an LP bound needs to prune a point without a MIP
PRUNE_MARGIN = 1e-6
#: LP tolerances of every solve (tighter than HiGHS's defaults of 1e-7: the LP values prune)
LP_OPTIONS: dict[str, Any] = {"dual_feasibility_tolerance": 1e-9}
#: options of ``extra`` this backend reads itself (the rest go to HiGHS)
OWN_OPTIONS = ("enumerate",)


@dataclass
class GroupedPrepared:
    """A decomposed problem ready for repeated solves with fresh η."""

    program: GroupedProgram
    enumerate: Any = "auto"


@dataclass
class _Search:
    """State of one oracle call (one η)."""

    problem: DiscreteProblem
    incumbent: float = math.inf
    best_k: np.ndarray | None = None
    bounds: np.ndarray = field(default_factory=lambda: np.zeros(0))
    finished: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    mips: int = 0
    pruned: int = 0
    limit: Limit | None = None
    failure: str | None = None


class HighsGroupedBackend(Backend[GroupedPrepared]):
    """Exact MIP oracle for :class:`DiscreteProblem` by enumeration of a few columns and row groups."""

    name = "highs-grouped"
    module = "highspy"
    distribution = "highspy"
    kind = "mip"
    description = ("HiGHS on the grouped decomposition (enumerate non-binary columns, group rows by pattern): "
                   "exact OPDisc/RSPM/OPSamp oracle, fast on one-hot data such as Adult")

    def version(self) -> str | None:
        """highspy's version, or None when highspy is missing."""
        return highspy_version()

    def check(self, problem: Any) -> None:
        check_discrete(self.name, problem)

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

                executor = current_executor()  # the run's, from its arguments (issue 14); never in the result
                if executor.workers > 1:
                    search = parallel_search(prog, problem, options, deadline, executor, bar)
                else:
                    search = self._search(prog, problem, options, deadline, bar)
                bar.note(mips=search.mips, pruned=search.pruned, incumbent=search.incumbent)
        except Exception as exc:  # noqa: BLE001 — report, never crash a mechanism
            return OracleResult(
                solution=None, status=OracleStatus.ERROR, solver_certified=False,
                solve_time=time.perf_counter() - start, backend=self.name, backend_version=version,
                raw_status="exception", message=f"HiGHS (grouped) failed: {type(exc).__name__}",
            )
        return self._result(prog, search, time.perf_counter() - start, version)

    # ---- the search -----------------------------------------------------------------
    def _search(self, prog: GroupedProgram, problem: DiscreteProblem, options: SolveOptions,
                deadline: float | None, bar: Tracker = OFF) -> _Search:
        import highspy

        h = _new_highs(prog, options)
        search = _Search(problem=problem, bounds=np.full(prog.points.shape[0], -np.inf),
                         finished=np.zeros(prog.points.shape[0], dtype=bool))
        h.setOptionValue("solve_relaxation", True)
        lp_solutions: dict[int, np.ndarray] = {}
        for i, ks in enumerate(prog.points):
            bar.advance()
            if _expired(deadline):
                search.limit = Limit.TIME
                return search
            const = _load_point(h, prog, problem, ks)
            h.run()
            status = h.getModelStatus()
            if status == highspy.HighsModelStatus.kOptimal:
                search.bounds[i] = h.getInfo().objective_function_value + const
                lp_solutions[i] = np.asarray(h.getSolution().col_value)
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

    def _solve_point(self, h: Any, prog: GroupedProgram, problem: DiscreteProblem, search: _Search, i: int,
                     deadline: float | None, options: SolveOptions) -> None:
        """Branch and cut on point ``i`` with the incumbent as cutoff; updates ``search``."""
        import highspy

        ks = prog.points[i]
        const = _load_point(h, prog, problem, ks)
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
    def _result(self, prog: GroupedProgram, search: _Search, elapsed: float, version: str) -> OracleResult:
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


def seed_incumbent(prog: GroupedProgram, problem: DiscreteProblem, search: _Search, order: np.ndarray,
                   k_c: dict[int, np.ndarray]) -> None:
    """The incumbent heuristic: local search from the rounded LP optima ``k_c`` (by point index) of
    the :data:`HEURISTIC_POINTS` points with the smallest LP bounds; updates ``search``."""
    for i in order[:HEURISTIC_POINTS]:
        if int(i) not in k_c:
            continue
        ks = prog.points[i]
        costs, z_upper, const = prog.costs(problem, ks)
        t_s = int(ks @ ks)
        objective = GroupedObjective(prog, costs, z_upper, const, t_s)
        k, value = local_search(objective, repair(prog, k_c[int(i)], t_s))
        if value < search.incumbent:
            search.incumbent, search.best_k = value, prog.point(ks, k)


def next_point(search: _Search, queue: Iterator[int], bar: Tracker) -> int | None:
    """The next point of ``queue`` (LP order) that needs a MIP, pruning on the way the points the
    incumbent settles (an LP bound at least the prune margin above it)."""
    for i in queue:
        bar.advance(mips=search.mips, pruned=search.pruned, incumbent=search.incumbent)
        if search.finished[i]:
            continue
        if search.bounds[i] >= search.incumbent + _prune_margin(search.incumbent):
            search.finished[i] = True
            search.pruned += 1
            continue
        return int(i)
    return None


def _prune_margin(value: float) -> float:
    """How far above the incumbent an LP bound must be to prune its point.

    The LP value is a lower bound only up to HiGHS's feasibility tolerances; the margin
    keeps a point whose optimum might tie the incumbent within them in the MIP pass."""
    return PRUNE_MARGIN * max(1.0, abs(value)) if math.isfinite(value) else 0.0


def _expired(deadline: float | None) -> bool:
    return deadline is not None and time.perf_counter() >= deadline


def _new_highs(prog: GroupedProgram, options: SolveOptions) -> Any:
    """A fresh HiGHS instance holding the per-point MIP's structure (zero costs)."""
    import highspy

    set_threads(options.threads)
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    for key, value in {**BASE_OPTIONS, **LP_OPTIONS}.items():
        h.setOptionValue(key, value)
    h.setOptionValue("threads", int(options.threads) if options.threads is not None else DEFAULT_THREADS)
    h.setOptionValue("random_seed", int(options.seed))
    if options.max_iterations is not None:
        h.setOptionValue("mip_max_nodes", int(options.max_iterations))
    for key, value in options.extra.items():
        if key not in OWN_OPTIONS:
            h.setOptionValue(key, value)
    n = prog.n_columns
    h.addVars(n, np.zeros(n), np.ones(n))
    rows = prog.rows
    h.addRows(rows.rhs.size, rows.rhs, rows.rhs, rows.index.size, rows.starts[:-1], rows.index, rows.value)
    h.changeColsIntegrality(n, np.arange(n, dtype=np.int32), np.full(n, highspy.HighsVarType.kInteger))
    return h


def _load_point(h: Any, prog: GroupedProgram, problem: DiscreteProblem, ks: np.ndarray) -> float:
    """Put the costs and z bounds of point ``ks`` into ``h``; returns the objective constant."""
    costs, z_upper, const = prog.costs(problem, ks)
    n = prog.n_columns
    h.changeColsCost(n, np.arange(n, dtype=np.int32), costs)
    z = np.arange(prog.n_u + prog.n_v, n, dtype=np.int32)
    h.changeColsBounds(z.size, z, np.zeros(z.size), z_upper)
    return const


register("highs-grouped", HighsGroupedBackend)
