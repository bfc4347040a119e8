"""The grouped oracle's exact search with its point solves spread over an executor's workers.

Same search as :meth:`dpopt.backends.highs_grouped.HighsGroupedBackend._search`, with the
independent HiGHS solves run as tasks of a :class:`~dpopt.executors.Executor`:

1. *LP pass*: the enumerated points are cut into contiguous chunks in their enumeration
   order; one task per chunk solves the LP relaxations of its points on one HiGHS instance
   (warm-started from point to point, as in the sequential pass) and returns their lower
   bounds LB(k_S) and, for the :data:`~dpopt.backends.grouped_points.HEURISTIC_POINTS`
   smallest bounds of the chunk, the rounded LP optima k_C.  The points with the globally
   smallest bounds are among them.
2. *Incumbent*: the local search of :mod:`dpopt.compile.grouped_search` from those rounded
   optima, in the calling process, as in the sequential search.
3. *MIP pass*: points in order of LB.  Up to ``workers`` point MIPs are in flight, each
   with the incumbent at its dispatch as objective cutoff; when one finishes, the
   incumbent is updated, the next points are pruned by their bounds against it and the
   next one is dispatched with it as cutoff (the incumbent is broadcast at every
   dispatch).  A point MIP dispatched with an older, larger cutoff only proves more.

Correctness.  Every point is finished exactly as in the sequential search: pruned by an LP
bound at least the prune margin above an incumbent (a value of a feasible point, so above
the final incumbent too), or solved by branch and cut to optimality or to infeasibility
under its cutoff, which proves nothing at that point lies below min(its optimum, its
cutoff) ≥ the final incumbent.  The final incumbent is the smallest value any solve or the
heuristic found, so when every point is finished it is the minimum; with continuous noise η
the minimiser is unique almost surely, hence the same point the sequential search returns.
The certificate is computed by the same ``_result`` from the same state (finished points,
their bounds, the incumbent).  Which points needed a MIP and how many were pruned depends on
the order in which the workers finish; those counts are diagnostics (docs/design.md), never
part of a release, and nothing about workers or timing is returned at all.

Limits.  The time limit covers the whole call: each task gets the time left at its dispatch,
and no task is dispatched after the deadline; a point MIP stopped by its time or node limit
ends the search with ``limit`` set, not certified (fail closed), as in the sequential search.

Workers.  The program (the data part) is shipped once per program and executor through
:meth:`Executor.share` and cached per worker by its token; each worker builds one HiGHS
instance per program and oracle call (keyed by the token and a random call id) and reuses it
for every task of that call: no basis or incumbent carries over between oracle calls.  Each
worker's HiGHS uses ``options.threads`` threads, default 1 (the workers share the cores).
"""

from __future__ import annotations

import dataclasses
import math
import threading
import time
import uuid
import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpopt.backends.grouped_points import (
    HEURISTIC_POINTS,
    GroupedSearch,
    load_point,
    new_highs,
    next_point,
    seed_incumbent,
)
from dpopt.backends.result import Limit, SolveOptions
from dpopt.compile.mip_grouped import GroupedProgram
from dpopt.executors import Executor, Shared, resolve
from dpopt.modeling.discrete import DiscreteProblem
from dpopt.progress import OFF, Tracker

__all__ = ["CHUNKS_PER_WORKER", "parallel_search", "share_program"]

#: LP-pass chunks per worker (contiguous runs of points; more chunks balance the load better,
#: fewer keep more warm starts)
CHUNKS_PER_WORKER = 2

# ---------------------------------------------------------------------------
# worker side
# ---------------------------------------------------------------------------


@dataclass
class _WorkerState:
    """One worker's HiGHS instance for one program and oracle call."""

    key: tuple[str, str]
    highs: Any
    problem: DiscreteProblem
    relaxation: bool | None = None


_local = threading.local()  # one state per worker thread (a Dask worker may run several threads)


def _worker(handle: Shared, call: str, eta: np.ndarray | None,
            options: SolveOptions) -> tuple[GroupedProgram, _WorkerState]:
    """The program behind ``handle`` and this worker's HiGHS instance for oracle call ``call``."""
    prog: GroupedProgram = resolve(handle)
    key = (handle.token, call)
    state: _WorkerState | None = getattr(_local, "state", None)
    if state is None or state.key != key:  # a new oracle call: nothing carries over
        state = _WorkerState(key, new_highs(prog, options), prog.problem.with_eta(eta))
        _local.state = state
    return prog, state


def _set_mode(state: _WorkerState, relaxation: bool) -> None:
    if state.relaxation is not relaxation:
        state.highs.setOptionValue("solve_relaxation", relaxation)
        state.relaxation = relaxation


def _set_time(h: Any, seconds: float | None) -> float | None:
    """Give ``h`` the time left; returns the local deadline (this process's clock)."""
    import highspy

    if seconds is None:
        h.setOptionValue("time_limit", highspy.kHighsInf)
        return None
    h.setOptionValue("time_limit", max(seconds, 1e-3))
    return time.perf_counter() + seconds


def lp_chunk(handle: Shared, call: str, eta: np.ndarray | None, options: SolveOptions, start: int, stop: int,
             seconds: float | None) -> dict[str, Any]:
    """LP relaxations of points ``start..stop-1`` (a task).

    Returns
    -------
    dict
        ``bounds`` (−inf where not solved, +inf where infeasible), ``infeasible`` (bool mask),
        ``expired`` (the time ran out before the chunk was done), ``k_c``: rounded LP optima
        of the chunk's :data:`HEURISTIC_POINTS` smallest bounds, by point index, and ``duals``:
        every solved LP's row duals by point index (proposals for the verifier,
        :mod:`dpopt.backends.grouped_duals`).
    """
    import highspy

    prog, state = _worker(handle, call, eta, options)
    h = state.highs
    _set_mode(state, True)
    deadline = _set_time(h, seconds)
    size = stop - start
    bounds = np.full(size, -np.inf)
    infeasible = np.zeros(size, dtype=bool)
    solutions: dict[int, np.ndarray] = {}
    duals: dict[int, np.ndarray] = {}
    expired = False
    for j, i in enumerate(range(start, stop)):
        if deadline is not None and time.perf_counter() >= deadline:
            expired = True
            break
        const = load_point(h, prog, state.problem, prog.points[i])
        h.run()
        status = h.getModelStatus()
        if status == highspy.HighsModelStatus.kOptimal:
            bounds[j] = h.getInfo().objective_function_value + const
            solution = h.getSolution()
            solutions[i] = np.asarray(solution.col_value)
            duals[i] = np.asarray(solution.row_dual)
        elif status == highspy.HighsModelStatus.kInfeasible:
            bounds[j], infeasible[j] = math.inf, True
    best = np.argsort(bounds, kind="stable")[:HEURISTIC_POINTS] + start
    k_c = {int(i): prog.k_from_columns(solutions[int(i)]) for i in best if int(i) in solutions}
    return {"bounds": bounds, "infeasible": infeasible, "expired": expired, "k_c": k_c, "duals": duals}


def mip_point(handle: Shared, call: str, eta: np.ndarray | None, options: SolveOptions, i: int, cutoff: float,
              seconds: float | None) -> dict[str, Any]:
    """Branch and cut on point ``i`` with objective cutoff ``cutoff`` (a task).

    Returns
    -------
    dict
        ``status`` ("finished", "time", "limit" or HiGHS's status text), ``value`` (the point's
        best objective, inf without one), ``k`` (the full integer point or None) and ``dual``
        (HiGHS's dual bound plus the constant).
    """
    import highspy

    prog, state = _worker(handle, call, eta, options)
    h = state.highs
    _set_mode(state, False)
    ks = prog.points[i]
    const = load_point(h, prog, state.problem, ks)
    h.setOptionValue("objective_bound", (cutoff - const) if math.isfinite(cutoff) else highspy.kHighsInf)
    _set_time(h, seconds)
    h.run()
    status, info = h.getModelStatus(), h.getInfo()
    has_point = info.primal_solution_status == 2
    value = info.objective_function_value + const if has_point else math.inf
    k = prog.point(ks, prog.k_from_columns(np.asarray(h.getSolution().col_value))) if has_point else None
    S = highspy.HighsModelStatus
    if status == S.kOptimal or status == S.kInfeasible:
        kind = "finished"
    elif status == S.kTimeLimit:
        kind = "time"
    elif status in (S.kSolutionLimit, S.kIterationLimit, S.kInterrupt):
        kind = "limit"
    else:
        kind = h.modelStatusToString(status)
    return {"status": kind, "value": float(value), "k": k, "dual": float(info.mip_dual_bound + const)}


# ---------------------------------------------------------------------------
# the search (calling process)
# ---------------------------------------------------------------------------


def parallel_search(prog: GroupedProgram, problem: DiscreteProblem, options: SolveOptions, deadline: float | None,
                    executor: Executor, bar: Tracker = OFF) -> GroupedSearch:
    """The grouped oracle's search for ``problem`` (η set) on ``executor``'s workers.

    Parameters
    ----------
    prog : GroupedProgram
        The decomposition (``prog.problem`` without η).
    problem : DiscreteProblem
        ``prog.problem`` with this call's η.
    options : SolveOptions
    deadline : float, optional
        ``time.perf_counter()`` value at which the call's time is up.
    executor : Executor
    bar : Tracker

    Returns
    -------
    GroupedSearch
        The state the backend's certificate (``_result``) reads.
    """
    eta = problem.eta
    if options.threads is None:  # one HiGHS thread per worker unless asked: the workers share the cores
        options = dataclasses.replace(options, threads=1)
    handle = share_program(executor, prog)
    call = uuid.uuid4().hex
    points = prog.points.shape[0]
    search = GroupedSearch(problem=problem, bounds=np.full(points, -np.inf), finished=np.zeros(points, dtype=bool))
    k_c = _lp_pass(prog, search, executor, handle, call, eta, options, deadline, bar)
    if search.limit is not None:
        return search
    order = np.argsort(search.bounds, kind="stable")
    seed_incumbent(prog, problem, search, order, k_c)
    bar.phase("highs-grouped: MIP pass", order.size)
    _mip_pass(search, order, executor, handle, call, eta, options, deadline, bar)
    return search


_shared: dict[tuple[int, int], tuple[weakref.ref[Any], weakref.ref[Any], Shared]] = {}


def share_program(executor: Executor, prog: GroupedProgram) -> Shared:
    """``executor.share(prog)`` once per (executor, program): repeated oracle calls on one
    decomposition (OPSamp, a benchmark's draws, the verifier's SCIP solves) ship the data to the
    workers once."""
    for key, (p, e, _) in list(_shared.items()):  # forget the handles of dead programs or executors
        if p() is None or e() is None:
            del _shared[key]
    key = (id(executor), id(prog))
    entry = _shared.get(key)
    if entry is not None and entry[0]() is prog and entry[1]() is executor:
        return entry[2]
    handle = executor.share(prog)
    _shared[key] = (weakref.ref(prog), weakref.ref(executor), handle)
    return handle


def _left(deadline: float | None) -> float | None:
    return None if deadline is None else deadline - time.perf_counter()


def _lp_pass(prog: GroupedProgram, search: GroupedSearch, executor: Executor, handle: Shared, call: str,
             eta: np.ndarray | None, options: SolveOptions, deadline: float | None,
             bar: Tracker) -> dict[int, np.ndarray]:
    points = prog.points.shape[0]
    chunks = max(1, min(points, executor.workers * CHUNKS_PER_WORKER))
    edges = np.linspace(0, points, chunks + 1).round().astype(int)
    futures = {executor.submit(lp_chunk, handle, call, eta, options, int(a), int(b), _left(deadline)): int(a)
               for a, b in zip(edges[:-1], edges[1:], strict=True) if b > a}
    k_c: dict[int, np.ndarray] = {}
    pending = set(futures)
    while pending:
        done, pending = executor.wait_first(pending)
        for f in done:
            out, a = f.result(), futures[f]
            stop = a + out["bounds"].size
            search.bounds[a:stop] = out["bounds"]
            search.finished[a:stop] |= out["infeasible"]
            k_c.update(out["k_c"])
            search.duals.update(out["duals"])
            bar.advance(out["bounds"].size)
            if out["expired"]:
                search.limit = Limit.TIME
    if search.limit is None and deadline is not None and time.perf_counter() >= deadline:
        search.limit = Limit.TIME
    return k_c


def _mip_pass(search: GroupedSearch, order: np.ndarray, executor: Executor, handle: Shared, call: str,
              eta: np.ndarray | None, options: SolveOptions, deadline: float | None, bar: Tracker) -> None:
    queue = iter(order.tolist())
    in_flight: dict[Any, tuple[int, float]] = {}
    exhausted = False
    while True:
        while not exhausted and len(in_flight) < executor.workers and search.limit is None:
            i = next_point(search, queue, bar)
            if i is None:
                exhausted = True
                break
            if deadline is not None and time.perf_counter() >= deadline:
                search.limit = Limit.TIME
                break
            cutoff = search.incumbent
            future = executor.submit(mip_point, handle, call, eta, options, i, cutoff, _left(deadline))
            in_flight[future] = (i, cutoff)
        if not in_flight or search.limit is not None or search.failure is not None:
            break
        done, _ = executor.wait_first(in_flight)
        for f in sorted(done, key=lambda f: in_flight[f][0]):
            i, cutoff = in_flight.pop(f)
            _apply(search, i, cutoff, f.result(), options)
        if search.limit is not None or search.failure is not None:
            break
    for f in in_flight:  # stopped early: the rest is not needed (a running task ends at its own limit)
        f.cancel()


def _apply(search: GroupedSearch, i: int, cutoff: float, out: dict[str, Any], options: SolveOptions) -> None:
    """Record a finished point MIP exactly as the sequential ``_solve_point`` does."""
    search.mips += 1
    value, has_point = out["value"], out["k"] is not None
    if has_point and value < search.incumbent:
        search.incumbent, search.best_k = value, out["k"]
    if out["status"] == "finished":
        search.bounds[i] = min(value, cutoff) if has_point else cutoff
        search.finished[i] = True
    elif out["status"] in ("time", "limit"):
        search.bounds[i] = max(search.bounds[i], out["dual"])
        search.limit = Limit.TIME if out["status"] == "time" else (Limit.NODES if options.max_iterations else Limit.ITERATIONS)
    else:
        search.failure = out["status"]
