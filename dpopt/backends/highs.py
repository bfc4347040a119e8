"""HiGHS (branch and cut) through pyomo: the exact MIP oracle of OPDisc.

The problem is compiled once by :func:`dpopt.compile.mip_pyomo.compile_pyomo`
(an exact MILP: exact strict margins, exact normalization for either sign of
η_{d+1}); every call puts the noise η into the model's mutable parameters and
solves it with HiGHS through pyomo's new solver interface
(``pyomo.contrib.solver.solvers.highs.Highs``, the class behind
``SolverFactory("highs")`` in pyomo ≥ 6.9; APPSI's ``appsi_highs`` also works
with highspy 1.14 but is the older, to-be-retired interface).

Each call uses a *fresh* HiGHS instance: no basis, incumbent, option or cut
carries over from an earlier (private) solve, so the answer is a function of the
model, η and the options only.  Options: ``time_limit``, ``threads``,
``random_seed = options.seed`` (a fixed constant), ``mip_rel_gap = 0``,
``mip_abs_gap = 1e-12``, tightened feasibility tolerances, ``max_iterations`` →
``mip_max_nodes`` (a deterministic work limit), plus ``options.extra`` as raw
HiGHS options.

Certification rule
------------------
``solver_certified`` is True exactly when all of the following hold:

1. HiGHS terminated with status optimal;
2. the gap is closed: primal − dual ≤ 1e-9·max(1, |primal|), and also below the
   loss resolution of the compiled program (``PyomoProgram.resolution``);
3. dpopt's re-check: the returned w (k rounded to integers) is a point of the grid
   (``IntegerGrid.contains``), and ``DiscreteProblem.objective(w)`` recomputed in
   numpy with the same η equals the solver's primal bound within 1e-6.

The re-check is recorded in ``recheck`` (``on_grid``, ``objective``, ``mismatch``,
``exact_loss`` from the compiled program's merged integer rows, ``numpy_loss`` from
``ZeroOneLoss.values``).  Both read the same exact integers A = s·X of the data's schema
(``ZeroOneLoss.integer_rows``), so they are equal; a difference would be a compiler bug
and is noted.  Anything else — time or
node limit, infeasible, error, a mismatch — is not certified (fail closed).  For a
non-optimal incumbent a mismatch is normal: the MIP may keep e_i = 1 on a row w
classifies correctly, so its objective can exceed the true objective at w.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpopt.backends.base import Backend
from dpopt.backends.registry import register
from dpopt.backends.result import OracleResult, OracleStatus, SolveOptions
from dpopt.compile.mip_pyomo import PyomoProgram, compile_pyomo
from dpopt.errors import BackendCapabilityError, ModelError
from dpopt.modeling.discrete import DiscreteProblem

#: relative gap a certified answer may leave (times max(1, |primal|))
GAP_TOLERANCE = 1e-9
#: |numpy objective − solver primal bound| a certified answer may leave
OBJECTIVE_TOLERANCE = 1e-6
#: HiGHS options every solve uses (``extra`` may override them; the certificate checks the gap itself)
BASE_OPTIONS: dict[str, Any] = {
    "mip_rel_gap": 0.0,
    "mip_abs_gap": 1e-12,
    "mip_feasibility_tolerance": 1e-9,
    "primal_feasibility_tolerance": 1e-9,
}


def highspy_version(*also: str) -> str | None:
    """highspy's version, or None when highspy (or one of the modules ``also``) cannot be imported."""
    try:
        for module in ("highspy", *also):
            importlib.import_module(module)
    except Exception:  # noqa: BLE001 — any import failure means unusable
        return None
    try:
        return importlib.metadata.version("highspy")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def check_discrete(name: str, problem: Any) -> None:
    """BackendCapabilityError unless ``problem`` is a DiscreteProblem (what the HiGHS MIP oracles solve)."""
    if not isinstance(problem, DiscreteProblem):
        raise BackendCapabilityError(
            f"backend {name!r} solves discrete problems (DiscreteProblem: 0/1 loss over an IntegerGrid); "
            f"got {type(problem).__name__}: use a convex backend such as 'clarabel'"
        )


def point_recheck(problem: DiscreteProblem, k: np.ndarray, primal: float,
                  exact_loss: Callable[[np.ndarray], float], resolution: float) -> dict[str, Any]:
    """dpopt's re-check of an oracle point w = τk against the solver's value ``primal``."""
    w = problem.domain.step * np.asarray(k, dtype=np.float64)
    obj = problem.objective(w)
    on_grid = bool(problem.domain.contains(w))
    return {
        "on_grid": on_grid,
        "objective": obj,
        "mismatch": abs(obj - primal),
        "numpy_loss": problem.loss.value(w),
        "exact_loss": exact_loss(k) if on_grid else math.nan,
        "resolution": resolution,
    }


def recheck_notes(recheck: dict[str, Any], failed: bool) -> list[str]:
    """Readable notes on a :func:`point_recheck` (``failed``: it refused an optimal answer)."""
    notes = []
    if failed:
        notes.append("dpopt re-check failed: the point is off the grid or its numpy objective differs "
                     "from the solver's value")
    if recheck and recheck["on_grid"] and recheck["numpy_loss"] != recheck["exact_loss"]:
        notes.append("the compiled program's loss differs from ZeroOneLoss.values at this point "
                     "(both use exact integer margins: a compiler bug, please report it)")
    return notes


@dataclass
class HighsPrepared:
    """A compiled problem ready for repeated solves with fresh η."""

    program: PyomoProgram


#: threads when the caller does not say (HiGHS's own default is "all cores")
DEFAULT_THREADS = 2
_scheduler_threads: int | None = None


def set_threads(threads: int | None) -> None:
    """HiGHS's task scheduler is process-global and refuses a new thread count once
    started ("threads" then makes the next solve fail); reset it when the count changes."""
    global _scheduler_threads
    n = DEFAULT_THREADS if threads is None else int(threads)
    if _scheduler_threads != n:  # also on first use: another Highs may have started it
        import highspy

        highspy.Highs.resetGlobalScheduler(True)
    _scheduler_threads = n


class HighsBackend(Backend):
    """Exact MIP oracle for :class:`DiscreteProblem` (0/1 loss over an IntegerGrid)."""

    name = "highs"
    module = "highspy"
    distribution = "highspy"
    kind = "mip"
    description = "HiGHS branch-and-cut MIP solver (via pyomo): exact OPDisc oracle for the 0/1 loss on a grid"

    def version(self) -> str | None:
        """highspy's version, or None when highspy or pyomo's HiGHS interface is missing."""
        return highspy_version("pyomo.contrib.solver.solvers.highs")

    def check(self, problem: Any) -> None:
        check_discrete(self.name, problem)

    def prepare(self, problem: Any) -> HighsPrepared:
        self.require()
        self.check(problem)
        return HighsPrepared(compile_pyomo(problem))

    def solve_problem(self, problem: Any, options: SolveOptions | None = None) -> OracleResult:
        """Check, prepare and solve once with the problem's own η."""
        self.require()
        self.check(problem)
        prepared = self.prepare(problem)
        return self.solve(prepared, problem.eta, options or SolveOptions())

    def solve(self, prepared: Any, b: np.ndarray | None, options: SolveOptions) -> OracleResult:
        """Solve with noise ``b`` = η (length d + 1; None keeps the current η)."""
        from pyomo.contrib.solver.common.results import TerminationCondition as TC
        from pyomo.contrib.solver.solvers.highs import Highs

        prog: PyomoProgram = prepared.program if isinstance(prepared, HighsPrepared) else prepared
        if b is not None:
            prog.set_eta(b)
        version = self.require()
        solver_options = dict(BASE_OPTIONS)
        solver_options["random_seed"] = int(options.seed)
        if options.max_iterations is not None:
            solver_options["mip_max_nodes"] = int(options.max_iterations)
        solver_options.update(options.extra)
        kw: dict[str, Any] = {
            "load_solutions": False,
            "raise_exception_on_nonoptimal_result": False,
            "solver_options": solver_options,
            "rel_gap": 0.0,
            "abs_gap": solver_options["mip_abs_gap"],
        }
        if options.time_limit is not None:
            kw["time_limit"] = float(options.time_limit)
        if options.threads is not None:
            kw["threads"] = int(options.threads)
        else:
            kw["threads"] = DEFAULT_THREADS

        set_threads(options.threads)
        start = time.perf_counter()
        try:
            res = Highs().solve(prog.model, **kw)  # a fresh instance: no state from earlier solves
        except Exception as exc:  # noqa: BLE001 — report, never crash a mechanism
            return OracleResult(
                solution=None, status=OracleStatus.ERROR, solver_certified=False,
                solve_time=time.perf_counter() - start, backend=self.name, backend_version=version,
                raw_status="exception", message=f"HiGHS via pyomo failed: {type(exc).__name__}",
            )
        elapsed = time.perf_counter() - start

        tc = res.termination_condition
        limit: str | None = None
        if tc == TC.convergenceCriteriaSatisfied:
            status = OracleStatus.OPTIMAL
        elif tc == TC.maxTimeLimit:
            status, limit = OracleStatus.LIMIT, "time"
        elif tc == TC.iterationLimit:
            status = OracleStatus.LIMIT
            limit = "nodes" if options.max_iterations is not None else "iterations"
        elif tc in (TC.provenInfeasible, TC.locallyInfeasible, TC.infeasibleOrUnbounded):
            status = OracleStatus.INFEASIBLE
        elif tc == TC.unbounded:
            status = OracleStatus.UNBOUNDED
        else:
            status = OracleStatus.ERROR

        primal = math.nan if res.incumbent_objective is None else float(res.incumbent_objective)
        dual = math.nan if res.objective_bound is None else float(res.objective_bound)
        gap = primal - dual if math.isfinite(primal) and math.isfinite(dual) else math.nan

        w: np.ndarray | None = None
        recheck: dict[str, Any] = {}
        if math.isfinite(primal):
            try:
                res.solution_loader.load_vars()
                k = prog.extract_k()
            except (ModelError, RuntimeError, ValueError):
                k = None
            if k is not None:
                w = prog.problem.domain.step * k.astype(np.float64)
                recheck = point_recheck(prog.current_problem(), k, primal, prog.exact_loss, prog.resolution)

        gap_ok = (math.isfinite(gap) and gap <= GAP_TOLERANCE * max(1.0, abs(primal))
                  and gap < prog.resolution)
        recheck_ok = bool(recheck) and recheck["on_grid"] and recheck["mismatch"] <= OBJECTIVE_TOLERANCE
        certified = status is OracleStatus.OPTIMAL and gap_ok and recheck_ok
        notes = [f"pyomo.contrib.solver HiGHS, model: {prog.size.summary()}"]
        if status is OracleStatus.OPTIMAL and not gap_ok:
            notes.append("optimal status but the gap is not closed")
        notes += recheck_notes(recheck, status is OracleStatus.OPTIMAL and not recheck_ok)
        return OracleResult(
            solution=w,
            status=status,
            solver_certified=bool(certified),
            solve_time=elapsed,
            backend=self.name,
            backend_version=version,
            raw_status=tc.name,
            limit=limit,
            primal_bound=primal,
            dual_bound=dual,
            gap=gap,
            recheck=recheck or None,
            message="; ".join(notes),
        )


register("highs", HighsBackend)
