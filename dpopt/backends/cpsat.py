"""OR-Tools CP-SAT as an *exact* oracle for OPDisc's normalized 0/1-loss problem.

The compiled model (:mod:`dpopt.compile.mip_cpsat`) is exact in the data and the domain
but its objective F is the real objective f scaled by Q and rounded to integers, with a
proven bound ``|F(k) − Q f(k)| ≤ E`` on every grid point.  CP-SAT alone is therefore a
``2E/Q``-approximate oracle.  This backend makes it exact with a second phase.

Certification rule
------------------
1. *Phase 1.*  Minimize F.  CP-SAT must report OPTIMAL with its bound equal to the
   value (integer objective, zero gap): k₁ minimizes F.  Evaluate the exact objective
   f(k₁) (integer margins, η terms in floating point as
   :meth:`~dpopt.modeling.discrete.DiscreteProblem.objective` computes them).
2. *Phase 2.*  With ``t = 10⁻¹² max(1, |f(k_best)|)`` (:data:`TIE_TOLERANCE`), any k with
   f(k) ≤ f(k_best) + t satisfies ``F(k) ≤ Q f(k) + E ≤ U := ⌈Q (f(k_best) + t) + E⌉``.
   Minimize F again with every candidate k-tuple forbidden, and stop as soon as either
   CP-SAT *proves* a lower bound > U (the best-bound callback; the response's bound is used
   only with a solution, since CP-SAT reports 0 with status UNKNOWN) or finds a solution
   with F ≤ U.  A proof (or INFEASIBLE) shows that every grid point outside the candidate
   list has f > f(k_best) + t, and every point in the list was evaluated exactly: k_best is
   the *unique* exact argmin.  A solution with F ≤ U is evaluated exactly: within t of
   f(k_best) it is a tie (not certified, like the brute-force oracle: OPDisc's analysis
   needs a unique minimizer); otherwise it joins the list (becoming k_best if better) and
   phase 2 repeats, at most :data:`MAX_CANDIDATES` times.
3. Phase 2 runs even when E = 0 (η = 0 and integer weights: F = Q f exactly): it is what
   proves uniqueness.

``solver_certified`` is true only when this chain ends in a proof.  A time limit in either
phase (both share ``time_limit``), or the candidate cap, gives status LIMIT (limit "time" or
"iterations") and nothing is certified.  With Q = 2³⁰, ``2E/Q`` is at most about 10⁻⁹·d·max|k| in
objective units, so phase 2 almost always ends with one proof; that proof costs about as
much as phase 1's (measured on Adult, n = 100: 37 s vs 31 s).  Expressing phase 2 as a
constraint ``F ≤ U`` instead (with or without the objective) was 3–6× slower.

Bounds are reported in exact objective units: ``primal_bound = f(k_best)``;
``dual_bound = f(k_best)`` when certified, otherwise ``(CP-SAT's bound + C₀ − E)/Q`` (a
valid lower bound on f); ``gap`` is the relative gap ``(primal − dual)/max(1, |primal|)``.
dpopt's own re-check (``recheck``, a :class:`~dpopt.backends.certificates.CpSatCheck`) verifies that w = τk lies on the grid
(:meth:`IntegerGrid.contains`) and that :meth:`DiscreteProblem.objective` at w agrees with
the exact value (both use the schema's exact integer margins, ``ZeroOneLoss.integer_rows``,
so they agree; a disagreement would be a compiler bug and fails the re-check).

Parameters: ``max_time_in_seconds`` = the time limit (shared by both phases),
``num_workers`` = threads (default 2), ``random_seed`` = the fixed SolveOptions seed,
zero relative and absolute gap limits, and with ≤ 2 workers on data with n ≥
:data:`MAX_LP_MIN_ROWS` rows *or* in at least :data:`MAX_LP_MIN_DIM` dimensions the
``max_lp`` subsolver (CP-SAT's 2-worker default, ``default_lp``, keeps the enforced row
constraints out of its LP: it proves nothing on Adult n = 100 in 120 s, and on Adult's
23-dimensional grid it needs 17 s for n = 8 and > 120 s for n = 30, against 0.3 s and
0.5 s with ``max_lp``).  ``SolveOptions.extra`` may set other CP-SAT parameters by name
(from a solver profile, never from data).

Every solve of both phases runs in a child process (:mod:`dpopt.backends.cpsat_isolated`):
OR-Tools 9.15 can abort its process from inside presolve, and a child that dies or hangs
gives status ERROR, which no mechanism releases.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpopt.backends.base import Backend
from dpopt.backends.certificates import CpSatCheck
from dpopt.backends.cpsat_isolated import solve_isolated
from dpopt.backends.options import check_cpsat
from dpopt.backends.result import Limit, OracleResult, OracleStatus, SolveOptions
from dpopt.errors import BackendCapabilityError, ModelError
from dpopt.modeling.discrete import DiscreteProblem

#: default CP-SAT workers (this project's reference machine has two cores)
DEFAULT_WORKERS = 2
#: datasets with at least this many rows (n, a public size) get the 'max_lp' subsolver
MAX_LP_MIN_ROWS = 64
#: ... and so do grids of at least this dimension (d, public), whatever n
MAX_LP_MIN_DIM = 4
#: two objective values closer than this (times max(1, |f|)) are a tie: not certified
TIE_TOLERANCE = 1e-12
#: most candidates phase 2 may evaluate before giving up (not certified)
MAX_CANDIDATES = 50


@dataclass
class PreparedCpSat:
    """A compiled program and the η of the next solve."""

    program: Any  # dpopt.compile.mip_cpsat.CpSatProgram
    eta: np.ndarray | None


class CpSatBackend(Backend[PreparedCpSat]):
    """OR-Tools CP-SAT: exact oracle for :class:`DiscreteProblem` (0/1 loss over a τ-grid)."""

    name = "cpsat"
    module = "ortools.sat.python.cp_model"
    distribution = "ortools"
    description = "OR-Tools CP-SAT: exact 0/1-loss oracle over an integer grid (OPDisc), rounding-proof certificate"
    kind = "mip"
    auto_rank = 2  # auto's first big-M fallback (dpopt.backends.auto_discrete)
    verifier_rank = 1

    def check_options(self, options: dict[str, Any], where: str) -> None:
        """The fields of CP-SAT's ``SatParameters`` (:func:`dpopt.backends.options.check_cpsat`)."""
        check_cpsat(self.name, options, where)

    def check(self, problem: Any) -> None:
        self.require()
        if not isinstance(problem, DiscreteProblem):
            raise BackendCapabilityError(
                f"backend 'cpsat' solves only DiscreteProblem (0/1 loss over an IntegerGrid), "
                f"not {type(problem).__name__}; use a convex backend such as 'clarabel' for it"
            )
        if not problem.halfspace:  # the general model's table of √(D² − τ²s): its size is declared
            from dpopt.compile.discrete_ir import norm_limit
            from dpopt.compile.mip_cpsat import MAX_TABLE

            if norm_limit(problem) + 1 > MAX_TABLE:
                raise BackendCapabilityError(
                    f"backend 'cpsat': (D/τ)² = {norm_limit(problem)} is too large for its table of the "
                    "normalization; use 'highs' or 'scip', a coarser step or a smaller l2_bound")

    def prepare(self, problem: Any) -> PreparedCpSat:
        from dpopt.compile.discrete_cpsat import compile_general_cpsat
        from dpopt.compile.mip_cpsat import compile_cpsat

        self.check(problem)
        # the 0/1 halfspace has its own encoding; any other row loss goes through the general IR
        program = compile_cpsat(problem) if problem.halfspace else compile_general_cpsat(problem)
        return PreparedCpSat(program=program, eta=problem.eta)

    # ------------------------------------------------------------------ solve
    def _solver(self, options: SolveOptions, remaining: float | None, n: int, d: int) -> Any:
        from ortools.sat.python import cp_model

        solver = cp_model.CpSolver()
        p = solver.parameters
        p.num_workers = int(options.threads or DEFAULT_WORKERS)
        p.random_seed = int(options.seed)
        p.relative_gap_limit = 0.0
        p.absolute_gap_limit = 0.0
        if p.num_workers <= 2 and (n >= MAX_LP_MIN_ROWS or d >= MAX_LP_MIN_DIM) and "subsolvers" not in options.extra:
            # with ≤ 2 workers CP-SAT runs one full subsolver, 'default_lp', whose LP leaves
            # out the enforced row constraints; 'max_lp' linearizes them (Adult n = 100:
            # 10–30 s to optimality instead of > 120 s; on tiny data its overhead dominates)
            p.subsolvers.append("max_lp")
        if remaining is not None:
            p.max_time_in_seconds = max(float(remaining), 1e-3)
        for key, value in options.extra.items():
            if not hasattr(p, key):
                raise ModelError(f"unknown CP-SAT parameter {key!r} in the solver options")
            if isinstance(value, (list, tuple)):
                field = getattr(p, key)
                field.clear()
                field.extend(value)
            else:
                setattr(p, key, value)
        return solver

    def solve(self, prepared: PreparedCpSat, b: np.ndarray | None, options: SolveOptions) -> OracleResult:
        from ortools.sat.python import cp_model

        version = self.require()
        if b is not None:
            prepared.eta = np.asarray(b, dtype=np.float64)
        prog, eta = prepared.program, prepared.eta
        ro = prog.rounded(eta)
        n_data, d = prog.problem.loss.data.n, prog.problem.dim  # public sizes: pick the subsolver, never the answer
        Q, E, C0 = ro.scale, ro.error, ro.constant
        start = time.perf_counter()
        raw: list[str] = []
        limit_name = Limit.TIME if options.time_limit is not None else Limit.ITERATIONS

        def remaining() -> float | None:
            if options.time_limit is None:
                return None
            return float(options.time_limit) - (time.perf_counter() - start)

        def result(status: OracleStatus, k: np.ndarray | None, *, certified: bool = False,
                   limit: Limit | None = None, primal: float = math.nan, dual: float = math.nan,
                   message: str = "", extra: dict[str, Any] | None = None) -> OracleResult:
            sol = None if k is None else prog.w_of(k)
            gap = (primal - dual) / max(1.0, abs(primal)) if math.isfinite(primal) and math.isfinite(dual) else math.nan
            res = OracleResult(
                solution=sol, status=status, solver_certified=certified,
                solve_time=time.perf_counter() - start, backend=self.name, backend_version=version,
                raw_status=" ".join(raw), limit=limit, primal_bound=primal, dual_bound=dual,
                gap=max(gap, 0.0) if math.isfinite(gap) else gap,
                message=f"objective scale Q={Q}, rounding alpha={ro.alpha:.3g} (2E/Q); " + message,
            )
            if sol is None or k is None:
                return res
            return res.with_recheck(*self._recheck(prepared, k, eta, ro, extra or {}))

        # ---- phase 1: minimize the rounded objective F (in the child process, see cpsat_isolated)
        config = self._solver(options, remaining(), n_data, d)  # holds the parameters the child gets
        solver = solve_isolated(prog.minimize_model(ro), config.parameters, prog.k)
        st = solver.status
        raw.append(f"phase1:{solver.status_name}")
        if solver.crashed:
            return result(OracleStatus.ERROR, None, message=solver.message)
        if st == cp_model.INFEASIBLE:
            return result(OracleStatus.INFEASIBLE, None, message="no grid point satisfies the constraints")
        if st == cp_model.MODEL_INVALID:
            return result(OracleStatus.ERROR, None, message=f"model invalid: {prog.base.validate()}")
        if st == cp_model.UNKNOWN:
            return result(OracleStatus.LIMIT, None, limit=limit_name, message="no solution within the limit")
        best = prog.k_of(solver)
        fbest = prog.objective(best, eta)
        lower = (solver.best_objective_bound + C0 - E) / Q  # valid lower bound on f
        info: dict[str, Any] = {"phase1_time": time.perf_counter() - start, "phase2_solves": 0, "candidates": 1}
        if not (st == cp_model.OPTIMAL and solver.best_objective_bound == solver.objective_value):
            return result(OracleStatus.LIMIT, best, limit=limit_name, primal=fbest, dual=min(lower, fbest),
                          message="phase 1 (rounded objective) not proven optimal", extra=info)

        # ---- phase 2: is there any other k with F(k) ≤ U = ⌈Q (f(best) + tie) + E⌉?
        candidates = [tuple(int(v) for v in best)]
        while True:
            tie = TIE_TOLERANCE * max(1.0, abs(fbest))
            upper = math.ceil(Q * (fbest + tie) + E) - C0  # in the model's units (F − C₀)
            rem = remaining()
            if rem is not None and rem <= 0:
                raw.append("phase2:not-started")
                return result(OracleStatus.LIMIT, best, limit=limit_name, primal=fbest, dual=min(lower, fbest),
                              message="time limit reached before the exactness check (phase 2)", extra=info)
            config2 = self._solver(options, rem, n_data, d)
            solver2 = solve_isolated(prog.excluded_model(ro, candidates), config2.parameters, prog.k,
                                     stop_at_or_below=upper, stop_when_bound_above=upper)
            st2 = solver2.status
            raw.append(f"phase2:{solver2.status_name}")
            info = info | {"phase2_solves": info["phase2_solves"] + 1, "candidates": len(candidates)}
            if solver2.crashed:
                return result(OracleStatus.ERROR, best, primal=fbest, dual=min(lower, fbest), extra=info,
                              message=solver2.message)
            has_solution = st2 in (cp_model.OPTIMAL, cp_model.FEASIBLE)
            bound2 = max([*solver2.bounds_seen] + ([solver2.best_objective_bound] if has_solution else []),
                         default=-math.inf)
            if st2 == cp_model.INFEASIBLE or bound2 > upper:
                return result(OracleStatus.OPTIMAL, best, certified=True, primal=fbest, dual=fbest,
                              message=f"unique exact argmin proven: {info['phase2_solves']} phase-2 solve(s), "
                                      f"{len(candidates)} candidate(s) evaluated exactly", extra=info)
            if has_solution and solver2.objective_value <= upper:
                k2 = prog.k_of(solver2)
                f2 = prog.objective(k2, eta)
                candidates.append(tuple(int(v) for v in k2))
                info["candidates"] = len(candidates)
                if abs(f2 - fbest) <= tie:
                    raw.append("tie")
                    return result(OracleStatus.OPTIMAL, best, primal=fbest, dual=min(lower, fbest), extra=info,
                                  message="two grid points tie for the minimum (within "
                                          f"{TIE_TOLERANCE:g} relative): the argmin is not unique")
                if f2 < fbest:
                    best, fbest = k2, f2
                if len(candidates) > MAX_CANDIDATES:
                    return result(OracleStatus.LIMIT, best, limit=Limit.ITERATIONS, primal=fbest,
                                  dual=min(lower, fbest), extra=info,
                                  message=f"phase 2 stopped after {MAX_CANDIDATES} candidates "
                                          "(near-ties closer than the rounding)")
                continue
            status = OracleStatus.ERROR if st2 == cp_model.MODEL_INVALID else OracleStatus.LIMIT
            return result(status, best, limit=limit_name if status is OracleStatus.LIMIT else None,
                          primal=fbest, dual=min(lower, fbest), extra=info,
                          message="rounded optimum found but the exactness check (phase 2) did not finish")

    @staticmethod
    def _recheck(prepared: PreparedCpSat, k: np.ndarray, eta: np.ndarray | None, ro: Any,
                 extra: dict[str, Any]) -> tuple[CpSatCheck, bool]:
        prog = prepared.program
        w = prog.w_of(k)
        problem = prog.problem.with_eta(eta)
        on_grid = problem.domain.contains(w)
        ref = problem.objective(w)
        exact = prog.objective(k, eta)
        agree = abs(ref - exact) <= 1e-9 * (1.0 + abs(exact))
        check = CpSatCheck(
            on_grid=bool(on_grid),
            objective=float(ref),
            objective_integer_margins=float(exact),
            objective_agrees=bool(agree),
            objective_scale=int(ro.scale),
            rounding_error_units=float(ro.error),
            rounding_alpha=float(ro.alpha),
            phase1_time=extra.get("phase1_time"),
            phase2_solves=extra.get("phase2_solves"),
            candidates=extra.get("candidates"),
        )
        return check, bool(on_grid and agree)
