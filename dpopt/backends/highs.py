"""HiGHS (branch and cut) through pyomo: the exact MIP oracle of OPDisc.

A member of the pyomo MIP family (:mod:`dpopt.backends.pyomo_mip`, which holds the
compilation, the solve and the certification rule): pyomo's new solver interface
``pyomo.contrib.solver.solvers.highs.Highs`` (``SolverFactory("highs")`` in pyomo ≥ 6.9;
APPSI's ``appsi_highs`` also works with highspy 1.14 but is the older, to-be-retired
interface), a fresh instance per call.

HiGHS options of every solve: ``mip_rel_gap = 0``, ``mip_abs_gap = 1e-12`` (also pyomo's
``abs_gap``), tightened feasibility tolerances, ``random_seed = options.seed`` (a fixed
constant), ``max_iterations`` → ``mip_max_nodes`` (a deterministic work limit), threads
(default :data:`DEFAULT_THREADS`), plus ``options.extra`` as raw HiGHS options.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import time
from typing import Any

import numpy as np

from dpopt.backends.highs_ir import solve_highs_ir
from dpopt.backends.options import check_highs
from dpopt.backends.pyomo_mip import (
    GAP_TOLERANCE,
    OBJECTIVE_TOLERANCE,
    PyomoMipBackend,
    PyomoPrepared,
    check_discrete,
    point_recheck,
    recheck_notes,
)
from dpopt.backends.result import OracleResult, SolveOptions
from dpopt.compile.discrete_arrays import HighsIRProgram, compile_highs_ir
from dpopt.errors import ModelError

__all__ = [
    "BASE_OPTIONS", "DEFAULT_THREADS", "GAP_TOLERANCE", "OBJECTIVE_TOLERANCE", "HighsBackend", "HighsPrepared",
    "check_discrete", "highspy_version", "point_recheck", "recheck_notes", "set_threads",
]

#: HiGHS options every solve uses (``extra`` may override them; the certificate checks the gap itself)
BASE_OPTIONS: dict[str, Any] = {
    "mip_rel_gap": 0.0,
    "mip_abs_gap": 1e-12,
    "mip_feasibility_tolerance": 1e-9,
    "primal_feasibility_tolerance": 1e-9,
}
#: a compiled problem ready for repeated solves (the family's prepared type)
HighsPrepared = PyomoPrepared


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


class HighsBackend(PyomoMipBackend):
    """Exact MIP oracle for :class:`DiscreteProblem` (0/1 loss over an IntegerGrid) with HiGHS."""

    name = "highs"
    module = "highspy"
    distribution = "highspy"
    description = "HiGHS branch-and-cut MIP solver (via pyomo): exact OPDisc oracle for the 0/1 loss on a grid"
    pyomo_solver = "highs"
    auto_rank = 3  # auto's last fallback, after cpsat (dpopt.backends.auto_discrete)
    verifier_rank = 2
    interface_module = "pyomo.contrib.solver.solvers.highs"
    label = "HiGHS"
    base_options = BASE_OPTIONS
    seed_option = "random_seed"
    node_limit_option = "mip_max_nodes"

    def check_options(self, options: dict[str, Any], where: str) -> None:
        """HiGHS's own option declarations (:func:`dpopt.backends.options.check_highs`)."""
        check_highs(self.name, options, where)
    abs_gap_option = "mip_abs_gap"
    default_threads = DEFAULT_THREADS

    def version(self) -> str | None:
        """highspy's version, or None when highspy or pyomo's HiGHS interface is missing."""
        return highspy_version(self.interface_module)

    def before_solve(self, options: SolveOptions) -> None:
        set_threads(options.threads)

    def prepare(self, problem: Any) -> PyomoPrepared:
        """The 0/1 halfspace through pyomo; any other row loss as HiGHS arrays (:mod:`dpopt.backends.highs_ir`)."""
        self.require()
        self.check(problem)
        if problem.halfspace:
            return super().prepare(problem)
        return PyomoPrepared(compile_highs_ir(problem))

    def solve(self, prepared: Any, b: np.ndarray | None, options: SolveOptions) -> OracleResult:
        """Solve a compiled problem with noise ``b`` (the array path for row losses, else pyomo's)."""
        program = prepared.program if isinstance(prepared, PyomoPrepared) else prepared
        if not isinstance(program, HighsIRProgram):
            return super().solve(prepared, b, options)
        version = self.require()
        start = time.perf_counter()
        try:
            raw = self.solver_options(options)
        except ModelError as exc:  # a profile setting HiGHS lacks: reported, never raised mid-run
            return self._failed(start, version, str(exc))
        raw["threads"] = int(options.threads if options.threads is not None else DEFAULT_THREADS)
        try:
            self.before_solve(options)
            return solve_highs_ir(program, b, options, raw, name=self.name, version=version)
        except Exception as exc:  # noqa: BLE001 — report, never crash a mechanism
            return self._failed(start, version, f"HiGHS failed: {type(exc).__name__}")
