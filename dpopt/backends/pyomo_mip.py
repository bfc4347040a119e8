"""Every pyomo MIP solver as one backend family: the exact OPDisc / RSPM / OPSamp oracle.

The problem is compiled once by :func:`dpopt.compile.mip_pyomo.compile_pyomo` (an exact
MILP: exact strict margins, exact normalization for either sign of η_{d+1}); every call puts
the noise η into the model's mutable parameters and solves it with the pyomo solver named
by :attr:`PyomoMipBackend.pyomo_solver`, through pyomo's new solver interface
(``pyomo.contrib.solver``: ``SolverFactory(name)`` after ``import pyomo.environ``).

Each call uses a *fresh* solver instance: no basis, incumbent, option or cut carries over
from an earlier (private) solve, so the answer is a function of the model, η and the
options only.  Options: ``time_limit``, ``threads``, ``rel_gap = 0``, ``abs_gap = 1e-12``,
the solver's own seed option = ``options.seed`` (a fixed constant), ``max_iterations`` →
the solver's node-limit option (a deterministic work limit), the family member's
:attr:`~PyomoMipBackend.base_options`, plus ``options.extra`` as raw solver options.

Adding a solver
---------------
One subclass setting the class attributes (see :mod:`dpopt.backends.scip`), or one line::

    register("gurobi", pyomo_backend("gurobi", "gurobi_direct", module="gurobipy"))

Why it stopped and how good the point is are read as pyomo's two outcomes and mapped by
:mod:`dpopt.backends.termination` (one table for every member).

Certification rule
------------------
``solver_certified`` is True exactly when all of the following hold:

1. the solver stopped with ``convergenceCriteriaSatisfied`` and an optimal point;
2. the gap is closed: primal − dual ≤ 1e-9·max(1, |primal|) (the primal and dual bounds
   are read from the solver: ``incumbent_objective``, ``objective_bound``), and also below
   the loss resolution of the compiled program (``PyomoProgram.resolution``);
3. dpopt's re-check: the returned w (k rounded to integers) is a point of the grid
   (``IntegerGrid.contains``), and ``DiscreteProblem.objective(w)`` recomputed in numpy
   with the same η equals the solver's primal bound within 1e-6.

The re-check is recorded in ``recheck``, a :class:`~dpopt.backends.certificates.DiscreteCheck`
(``on_grid``, ``objective``, ``mismatch``, ``exact_loss`` from the compiled program's merged
integer rows, ``numpy_loss`` from ``ZeroOneLoss.values``).  Both read the same exact integers A = s·X of the data's schema
(``ZeroOneLoss.integer_rows``), so they are equal; a difference would be a compiler bug and
is noted.  Anything else — time or node limit, infeasible, error, a mismatch — is not
certified (fail closed).  For a non-optimal incumbent a mismatch is normal: the MIP may
keep e_i = 1 on a row w classifies correctly, so its objective can exceed the true
objective at w.  Mechanisms may still accept a proven α-optimal answer
(:mod:`dpopt.mechanisms.discrete_base`), which is why the bounds are reported.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from dpopt.backends.base import Backend
from dpopt.backends.certificates import DiscreteCheck
from dpopt.backends.result import Limit, OracleResult, OracleStatus, SolveOptions
from dpopt.backends.termination import Termination
from dpopt.compile.discrete_arrays import HighsIRProgram
from dpopt.compile.discrete_pyomo import GeneralPyomoProgram, compile_general_pyomo
from dpopt.compile.mip_pyomo import PyomoProgram, compile_pyomo
from dpopt.errors import BackendCapabilityError, ModelError
from dpopt.modeling.discrete import DiscreteProblem

__all__ = [
    "GAP_TOLERANCE", "OBJECTIVE_TOLERANCE", "ABS_GAP", "PyomoMipBackend", "PyomoPrepared",
    "check_discrete", "point_recheck", "pyomo_backend", "recheck_notes",
]

#: relative gap a certified answer may leave (times max(1, |primal|))
GAP_TOLERANCE = 1e-9
#: |numpy objective − solver primal bound| a certified answer may leave
OBJECTIVE_TOLERANCE = 1e-6
#: absolute gap every solve asks for (pyomo's ``abs_gap``; the relative gap asked is 0)
ABS_GAP = 1e-12


def check_discrete(name: str, problem: Any) -> None:
    """BackendCapabilityError unless ``problem`` is a DiscreteProblem (what the MIP oracles solve)."""
    if not isinstance(problem, DiscreteProblem):
        raise BackendCapabilityError(
            f"backend {name!r} solves discrete problems (DiscreteProblem: 0/1 loss over an IntegerGrid); "
            f"got {type(problem).__name__}: use a convex backend such as 'clarabel'"
        )


def point_recheck(problem: DiscreteProblem, k: np.ndarray, primal: float,
                  exact_loss: Callable[[np.ndarray], float], resolution: float) -> DiscreteCheck:
    """dpopt's re-check of an oracle point w = τk against the solver's value ``primal``."""
    w = problem.domain.step * np.asarray(k, dtype=np.float64)
    obj = float(problem.objective(w))
    on_grid = bool(problem.domain.contains(w))
    return DiscreteCheck(
        on_grid=on_grid,
        objective=obj,
        mismatch=abs(obj - float(primal)),
        numpy_loss=float(problem.loss.value(w)),
        exact_loss=float(exact_loss(k)) if on_grid else math.nan,
        resolution=float(resolution),
    )


def recheck_notes(check: DiscreteCheck | None, failed: bool) -> list[str]:
    """Readable notes on a :func:`point_recheck` (``failed``: it refused an optimal answer)."""
    notes = []
    if failed:
        notes.append("dpopt re-check failed: the point is off the grid or its numpy objective differs "
                     "from the solver's value")
    if check is not None and check.loss_disagrees:
        notes.append("the compiled program's loss differs from ZeroOneLoss.values at this point "
                     "(both use exact integer margins: a compiler bug, please report it)")
    return notes


@dataclass
class PyomoPrepared:
    """A compiled problem ready for repeated solves with fresh η."""

    program: PyomoProgram | GeneralPyomoProgram | HighsIRProgram


class PyomoMipBackend(Backend[PyomoPrepared]):
    """Exact MIP oracle for :class:`DiscreteProblem` through one pyomo solver (module docstring).

    A member of the family sets the class attributes below; nothing else is needed.
    """

    kind = "mip"
    #: the solver's name in ``pyomo.contrib.solver``'s SolverFactory
    pyomo_solver: ClassVar[str] = ""
    #: module that must import besides ``module`` (pyomo's interface to the solver)
    interface_module: ClassVar[str] = "pyomo.contrib.solver.common.factory"
    #: human-readable solver name for messages
    label: ClassVar[str] = ""
    #: raw solver options of every solve (``extra`` may override them)
    base_options: ClassVar[dict[str, Any]] = {}
    #: raw option taking ``SolveOptions.seed`` (None: the solver has none)
    seed_option: ClassVar[str | None] = None
    #: raw option taking ``SolveOptions.max_iterations`` as a node limit (None: not supported)
    node_limit_option: ClassVar[str | None] = None
    #: raw option that overrides ``abs_gap`` when set (HiGHS: ``mip_abs_gap``)
    abs_gap_option: ClassVar[str | None] = None
    #: threads when the caller does not say (None: the solver's default)
    default_threads: ClassVar[int | None] = None

    def required_modules(self) -> tuple[str, ...]:
        """The solver package and pyomo's interface module for it."""
        return (self.module, self.interface_module)

    def check(self, problem: Any) -> None:
        check_discrete(self.name, problem)

    def prepare(self, problem: Any) -> PyomoPrepared:
        self.require()
        self.check(problem)
        # the 0/1 halfspace has its own encoding; any other row loss goes through the general IR
        return PyomoPrepared(compile_pyomo(problem) if problem.halfspace else compile_general_pyomo(problem))

    # ---- hooks a family member may override ----------------------------------------
    def new_solver(self) -> Any:
        """A fresh pyomo solver instance (no state from earlier solves)."""
        import pyomo.environ  # noqa: F401 — loads pyomo's solver plug-ins into the factory
        from pyomo.contrib.solver.common.factory import SolverFactory

        solver = SolverFactory(self.pyomo_solver)
        if solver is None:
            raise ModelError(f"pyomo has no solver named {self.pyomo_solver!r}")
        return solver

    def solver_options(self, options: SolveOptions) -> dict[str, Any]:
        """The raw solver options of one solve (base options, seed, node limit, then ``extra``)."""
        raw = dict(self.base_options)
        if self.seed_option is not None:
            raw[self.seed_option] = int(options.seed)
        if options.max_iterations is not None:
            if self.node_limit_option is None:
                raise ModelError(f"backend {self.name!r} has no node limit: remove max_iterations from the profile")
            raw[self.node_limit_option] = int(options.max_iterations)
        raw.update(options.extra)
        return raw

    def before_solve(self, options: SolveOptions) -> None:
        """Process-level set-up before a solve (HiGHS: its global thread scheduler)."""

    # ---- the solve ------------------------------------------------------------------
    def solve(self, prepared: PyomoPrepared | PyomoProgram | GeneralPyomoProgram, b: np.ndarray | None,
              options: SolveOptions) -> OracleResult:
        """Solve with noise ``b`` = η (length ``noise_size``; None keeps the current η)."""
        program = prepared.program if isinstance(prepared, PyomoPrepared) else prepared
        if isinstance(program, HighsIRProgram):  # HiGHS's own array model: only the 'highs' backend solves it
            return self._failed(time.perf_counter(), self.require(), "an array model is solved by the 'highs' backend")
        prog: PyomoProgram | GeneralPyomoProgram = program
        if b is not None:
            prog.set_eta(b)
        version = self.require()
        start = time.perf_counter()
        try:
            raw = self.solver_options(options)
        except ModelError as exc:  # a profile setting this solver lacks: reported, never raised mid-run
            return self._failed(start, version, str(exc))
        kw: dict[str, Any] = {
            "load_solutions": False,
            "raise_exception_on_nonoptimal_result": False,
            "solver_options": raw,
            "rel_gap": 0.0,
            "abs_gap": raw.get(self.abs_gap_option, ABS_GAP) if self.abs_gap_option else ABS_GAP,
        }
        if options.time_limit is not None:
            kw["time_limit"] = float(options.time_limit)
        threads = options.threads if options.threads is not None else self.default_threads
        if threads is not None:
            kw["threads"] = int(threads)
        try:
            self.before_solve(options)
            res = self.new_solver().solve(prog.model, **kw)
        except Exception as exc:  # noqa: BLE001 — report, never crash a mechanism
            return self._failed(start, version, f"{self.label or self.name} via pyomo failed: {type(exc).__name__}")
        return self._result(prog, res, options, time.perf_counter() - start, version)

    def _failed(self, start: float, version: str, message: str) -> OracleResult:
        return OracleResult(
            solution=None, status=OracleStatus.ERROR, solver_certified=False,
            solve_time=time.perf_counter() - start, backend=self.name, backend_version=version,
            raw_status="exception", message=message,
        )

    def _result(self, prog: PyomoProgram | GeneralPyomoProgram, res: Any, options: SolveOptions, elapsed: float,
                version: str) -> OracleResult:
        """The OracleResult of a pyomo ``Results``: outcomes, bounds, point, certificate."""
        term = Termination.from_pyomo(res)
        status, limit_name = term.oracle_status(node_limit=options.max_iterations is not None)
        limit = None if limit_name is None else Limit(limit_name)
        primal = math.nan if res.incumbent_objective is None else float(res.incumbent_objective)
        dual = math.nan if res.objective_bound is None else float(res.objective_bound)
        gap = primal - dual if math.isfinite(primal) and math.isfinite(dual) else math.nan

        w: np.ndarray | None = None
        check: DiscreteCheck | None = None
        if math.isfinite(primal):
            try:
                res.solution_loader.load_vars()
                k = prog.extract_k()
            except (ModelError, RuntimeError, ValueError):
                k = None
            if k is not None:
                w = prog.problem.domain.step * k.astype(np.float64)
                check = point_recheck(prog.current_problem(), k, primal, prog.exact_loss, prog.resolution)

        gap_ok = (math.isfinite(gap) and gap <= GAP_TOLERANCE * max(1.0, abs(primal))
                  and gap < prog.resolution)
        recheck_ok = check is not None and check.point_agrees(OBJECTIVE_TOLERANCE)
        certified = status is OracleStatus.OPTIMAL and gap_ok and recheck_ok
        notes = [f"pyomo.contrib.solver {self.label or self.name}, model: {prog.size.summary()}"]
        if status is OracleStatus.OPTIMAL and not gap_ok:
            notes.append("optimal status but the gap is not closed")
        notes += recheck_notes(check, status is OracleStatus.OPTIMAL and not recheck_ok)
        return OracleResult(
            solution=w, status=status, solver_certified=bool(certified), solve_time=elapsed,
            backend=self.name, backend_version=version, raw_status=term.condition.name, limit=limit,
            primal_bound=primal, dual_bound=dual, gap=gap, recheck=check, message="; ".join(notes),
        )


def pyomo_backend(name: str, pyomo_solver: str, *, module: str, distribution: str = "",
                  description: str = "", label: str = "", base_options: dict[str, Any] | None = None,
                  seed_option: str | None = None, node_limit_option: str | None = None) -> type[PyomoMipBackend]:
    """A :class:`PyomoMipBackend` subclass for any installed pyomo MIP solver, by name.

    Parameters
    ----------
    name : str
        The dpopt backend name (registry key).
    pyomo_solver : str
        The solver's name in ``pyomo.contrib.solver``'s SolverFactory (e.g. ``"gurobi_direct"``).
    module, distribution : str
        The solver's Python package (import name, distribution for its version).
    description, label : str
        One line for ``dpopt doctor``; the solver's name in messages.
    base_options, seed_option, node_limit_option
        Raw options of every solve, and the raw names taking the seed and the node limit.
    """
    attrs = {
        "name": name, "pyomo_solver": pyomo_solver, "module": module, "distribution": distribution,
        "description": description or f"{label or pyomo_solver} via pyomo: exact OPDisc/RSPM/OPSamp MIP oracle",
        "label": label or pyomo_solver, "base_options": dict(base_options or {}),
        "seed_option": seed_option, "node_limit_option": node_limit_option,
    }
    return type(f"PyomoMip_{pyomo_solver}", (PyomoMipBackend,), attrs)
