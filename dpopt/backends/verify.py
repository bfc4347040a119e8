"""Cross-verification of a discrete oracle's answer by an independent backend.

The privacy proofs of OPDisc, RSPM and OPSamp (NRVW19) need the exact (α-)argmin of each
perturbed problem, and a solver's "optimal" is not always right (HiGHS 1.14 once certified
a suboptimal big-M point with zero gap, ``tests/backends/test_mip_grouped.py``).  After the primary
backend's answer ŵ is accepted, a *verifier* — a different engine — must prove, on the
same perturbed problem (the same η), that no grid point has an objective below

    threshold = f(ŵ) − tol,   tol = max(α, :data:`RELATIVE_TOLERANCE` · max(1, |f(ŵ)|)),

where f(ŵ) is recomputed by dpopt with exact integer margins.  Either the verifier's proven
lower bound is ≥ the threshold (a full solve), or its cut-off model (objective < threshold)
is proven infeasible (the grouped verifier).  A crash (status ERROR, or an exception raised
by the verifier) is retried with the same η like a crash of the primary oracle — the same
public number of repeats (``CRASH_RETRIES`` of :mod:`dpopt.mechanisms.discrete_base`), no
data-dependent choice (:func:`retry_crashes`).  Anything else — a better point, a limit, a
crash on every try — is a disagreement, and the mechanism fails closed.

Choosing the verifier (:func:`choose_verifier`)
-----------------------------------------------
A pure function of the primary backend's name, the installed packages and the problem's
declarations (schema, n, grid, d), like :mod:`dpopt.backends.auto_discrete`; it never reads
a data value, so every neighbouring dataset gets the same verifier.  In order:

1. primary ``bruteforce``: none is needed (it evaluates every grid point with exact
   margins; exact by construction);
2. a tiny grid (the ``auto`` rule's enumeration bound): ``bruteforce``;
3. primary ``highs-grouped``: ``scip-grouped``, the grouped decomposition with the automatic
   split (when the schema admits it: the ``auto`` rule's public checks) and every enumerated
   point's MIP solved by SCIP (PySCIPOpt) under the objective cut-off
   (:class:`ScipGroupedVerifier`) — the big-M models do not finish on data such as Adult;
4. a big-M primary (``highs``, ``scip``, ``cpsat``, or a third-party backend): the first
   installed of :data:`BIG_M_ORDER` [primary] other than the primary;
5. otherwise none, and the release says so in a note.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpopt.backends.base import Backend
from dpopt.backends.certificates import VerifierCheck
from dpopt.backends.result import Limit, OracleResult, OracleStatus, SolveOptions
from dpopt.errors import BackendCapabilityError, ModelError
from dpopt.modeling.discrete import DiscreteProblem

#: relative slack of the verifier's threshold when α is tiny (solver tolerances are ~1e-9)
RELATIVE_TOLERANCE = 1e-6
#: the name of the grouped decomposition solved with SCIP
SCIP_GROUPED = "scip-grouped"
#: verifiers of a big-M primary, best first (a primary is never its own verifier)
BIG_M_ORDER: dict[str, tuple[str, ...]] = {
    "highs": ("scip", "cpsat"),
    "scip": ("cpsat", "highs"),
    "cpsat": ("scip", "highs"),
}
#: verifiers of any other (e.g. third-party) primary
DEFAULT_ORDER = ("scip", "cpsat", "highs")


@dataclass(frozen=True)
class VerifierChoice:
    """The verifier for one run (None: no independent verifier applies) and the public reason."""

    backend: str | None
    reason: str


def threshold(value: float, alpha: float) -> float:
    """f(ŵ) − max(α, RELATIVE_TOLERANCE·max(1, |f(ŵ)|)): no grid point may lie below it."""
    return value - max(alpha, RELATIVE_TOLERANCE * max(1.0, abs(value)))


def acceptance(choice: VerifierChoice, alpha: float) -> str:
    """The public rule a verifier's answer must meet."""
    how = ("its cut-off model (objective below the threshold) proven infeasible at every enumerated point"
           if choice.backend == SCIP_GROUPED else "its proven lower bound on the same perturbed problem ≥ the threshold")
    return (f"independent check: no grid point below f(ŵ) − max(α={alpha:g}, {RELATIVE_TOLERANCE:g}·max(1, |f(ŵ)|)), "
            f"f recomputed with exact integer margins; {how}")


def _installed(name: str) -> bool:
    from dpopt.backends import registry

    if name == SCIP_GROUPED:
        return ScipGroupedVerifier.available()
    return name in registry.names() and registry.get(name).available()


def _accepts(name: str, problem: DiscreteProblem) -> bool:
    """Whether backend ``name`` accepts the problem's declarations (its own public check)."""
    from dpopt.backends import registry

    try:
        registry.get(name).check(problem)
    except BackendCapabilityError:
        return False
    return True


def choose_verifier(primary: str, problem: DiscreteProblem) -> VerifierChoice:
    """The verifier of ``primary``'s answers on ``problem`` (module docstring), from public facts only."""
    from dpopt.backends.auto_discrete import bruteforce_reason, grouped_reason

    if primary == "bruteforce":
        return VerifierChoice(None, "bruteforce enumerates every grid point (exact by construction): no verifier needed")
    if bruteforce_reason(problem) is not None:
        return VerifierChoice("bruteforce", "the grid is small enough to enumerate (the auto rule's bound)")
    if primary == "highs-grouped":
        if grouped_reason(problem)[0] is None:
            return VerifierChoice(None, "no independent verifier for highs-grouped: the automatic grouped split "
                                  "does not apply to this schema")
        if _installed(SCIP_GROUPED):
            return VerifierChoice(SCIP_GROUPED, "the grouped decomposition with SCIP as the per-point MIP engine")
        return VerifierChoice(None, "no independent verifier for highs-grouped: install pyscipopt (scip-grouped)")
    order = tuple(n for n in BIG_M_ORDER.get(primary, DEFAULT_ORDER) if n != primary)
    for name in order:
        if _installed(name) and _accepts(name, problem):
            return VerifierChoice(name, f"another engine on the big-M model ({name} verifies {primary})")
    return VerifierChoice(None, f"no independent verifier for {primary}: none of {', '.join(order)} is installed")


def no_verifier_note(choice: VerifierChoice) -> str:
    """The public note of a release whose oracle answers were not cross-verified."""
    return f"oracle answers were not cross-verified by an independent backend ({choice.reason})"


# ---- running a verifier ---------------------------------------------------------------------

def retry_crashes(attempt: Callable[[], OracleResult], retries: int) -> OracleResult:
    """``attempt()``, repeated while it crashes (status ERROR), at most ``retries`` more times.

    The rule of the primary oracle (``DiscreteMechanism._solve``): the same call with the same
    noise, a fixed public number of repeats, then the last answer is judged (a crash on every
    try fails closed).  ``attempt`` reports a crash as an ERROR result, never by raising.
    """
    res = attempt()
    for _ in range(retries):
        if res.status is not OracleStatus.ERROR:
            break
        res = attempt()
    return res


def crashed(backend: str, version: str, exc: BaseException, *, started: float) -> OracleResult:
    """The ERROR result of a call that raised (names the exception's type only, never its message)."""
    return OracleResult(solution=None, status=OracleStatus.ERROR, solver_certified=False,
                        solve_time=time.perf_counter() - started, backend=backend, backend_version=version,
                        raw_status=f"exception {type(exc).__name__}")


class Verifier:
    """A prepared verifier: :meth:`confirm` checks one accepted answer (value f(ŵ)) for one η."""

    def __init__(self, name: str, version: str, prepared: Any, backend: Backend[Any] | None = None) -> None:
        self.name, self.version, self.prepared, self.backend = name, version, prepared, backend

    @classmethod
    def start(cls, choice: VerifierChoice, problem: DiscreteProblem, primary_prepared: Any) -> Verifier:
        """Compile the verifier's model (reads the data: call it after the charge)."""
        if choice.backend == SCIP_GROUPED:
            return ScipGroupedVerifier.start_grouped(problem, primary_prepared)
        from dpopt.backends import registry

        backend = registry.get(str(choice.backend))
        return cls(backend.name, backend.require(), backend.prepare(problem), backend)

    def confirm(self, problem: DiscreteProblem, eta: np.ndarray, value: float, alpha: float,
                options: SolveOptions, retries: int) -> OracleResult:
        """A full solve on the same η, a crash retried ``retries`` times (:func:`retry_crashes`);
        ``certified`` is the verdict (module docstring)."""
        backend = self.backend
        assert backend is not None  # set by start() for every verifier but the grouped one

        def attempt() -> OracleResult:
            started = time.perf_counter()
            try:
                return backend.solve(self.prepared, eta, options)
            except Exception as exc:  # noqa: BLE001 — a crash: retried, then a disagreement
                return crashed(self.name, self.version, exc, started=started)

        res = retry_crashes(attempt, retries)
        cut = threshold(value, alpha)
        lower = res.dual_bound if res.status is not OracleStatus.ERROR else math.nan
        better = _better_point(problem, res.solution, cut)
        ok = bool(math.isfinite(lower) and lower >= cut and not better)
        return replace_verdict(res, cut=cut, lower=lower, better=better, ok=ok)


def _better_point(problem: DiscreteProblem, w: np.ndarray | None, cut: float) -> bool:
    """Whether ``w`` is a grid point whose exact objective is below ``cut``."""
    return bool(w is not None and problem.domain.contains(w) and problem.objective(w) < cut)


def replace_verdict(res: OracleResult, *, cut: float, lower: float, better: bool, ok: bool) -> OracleResult:
    """``res`` with the verifier's verdict as ``certified`` and a :class:`VerifierCheck` in ``recheck``.

    The verdict replaces the verifier backend's own (a verifier is judged by its proof of
    the threshold, not by whether it certified an argmin); its re-check of the point it
    found is kept inside the VerifierCheck.
    """
    from dataclasses import replace

    check = VerifierCheck(point=res.recheck, threshold=float(cut), lower_bound=float(lower),
                          found_better_point=bool(better), confirmed=bool(ok))
    return replace(res, recheck=check, certified=ok)


class ScipGroupedVerifier(Verifier):
    """The grouped decomposition (:mod:`dpopt.compile.mip_grouped`) with SCIP per enumerated point.

    One SCIP model holds the per-point MIP's structure; for each enumerated k_S its costs and
    z bounds are loaded (:meth:`GroupedProgram.costs`) and SCIP is asked for a point with
    objective below ``threshold − const(k_S)`` (``setObjlimit``).  Confirmed when SCIP proves
    every point's cut-off model infeasible; nothing is pruned by another solver's bounds.
    """

    @staticmethod
    def available() -> bool:
        try:
            import pyscipopt  # noqa: F401
        except Exception:  # noqa: BLE001 — any import failure means unusable
            return False
        return True

    @classmethod
    def start_grouped(cls, problem: DiscreteProblem, primary_prepared: Any) -> ScipGroupedVerifier:
        import importlib.metadata

        from dpopt.compile.mip_grouped import compile_grouped

        program = getattr(primary_prepared, "program", None)
        if program is None or not hasattr(program, "points") or getattr(primary_prepared, "enumerate", "auto") != "auto":
            program = compile_grouped(problem, "auto")
        return cls(SCIP_GROUPED, importlib.metadata.version("pyscipopt"), program)

    def confirm(self, problem: DiscreteProblem, eta: np.ndarray, value: float, alpha: float,
                options: SolveOptions, retries: int) -> OracleResult:
        """Every enumerated point's cut-off model on the same η, a crash retried ``retries`` times
        (:func:`retry_crashes`, each try on a fresh SCIP model); ``certified`` is the verdict."""
        cut = threshold(value, alpha)
        res = retry_crashes(lambda: self._attempt(eta, cut, options), retries)
        return replace_verdict(res, cut=cut, lower=res.dual_bound, better=bool(res.solution is not None),
                               ok=res.solver_certified)

    def _attempt(self, eta: np.ndarray, cut: float, options: SolveOptions) -> OracleResult:
        """One pass over the enumerated points (status ERROR when SCIP raised).

        ``solver_certified`` holds the verdict, ``dual_bound`` the threshold when confirmed, and
        ``solution`` a point found below the threshold (if any).
        """
        prog = self.prepared
        perturbed = prog.problem.with_eta(eta)
        start = time.perf_counter()
        deadline = None if options.time_limit is None else start + float(options.time_limit)
        status, better, solved, point = OracleStatus.OPTIMAL, False, 0, None
        raw = "all cut-off models infeasible"
        try:
            model, x = _scip_model(prog, options)
            for ks in prog.points:
                costs, z_upper, const = prog.costs(perturbed, ks)
                outcome, w = _solve_point(model, x, prog, ks, costs, z_upper, cut - const, deadline)
                solved += 1
                if outcome != "infeasible":
                    better, point = _better_point(perturbed, w, cut), w
                    status = OracleStatus.LIMIT if outcome == "limit" else OracleStatus.OPTIMAL
                    raw = f"SCIP status {outcome!r} at an enumerated point"
                    break
        except Exception as exc:  # noqa: BLE001 — report, never crash a mechanism
            status, raw = OracleStatus.ERROR, f"exception {type(exc).__name__}"
        ok = status is OracleStatus.OPTIMAL and raw == "all cut-off models infeasible"
        return OracleResult(
            solution=point if better else None, status=status, solver_certified=ok,
            solve_time=time.perf_counter() - start, backend=self.name, backend_version=self.version,
            raw_status=raw, limit=Limit.TIME if status is OracleStatus.LIMIT else None,
            dual_bound=cut if ok else math.nan,
            message=f"SCIP on the grouped decomposition: {solved} of {prog.points.shape[0]} point models solved",
        )


def _scip_model(prog: Any, options: SolveOptions) -> tuple[Any, list[Any]]:
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


def _solve_point(model: Any, x: list[Any], prog: Any, ks: np.ndarray, costs: np.ndarray, z_upper: np.ndarray,
                 limit: float, deadline: float | None) -> tuple[str, np.ndarray | None]:
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
    if status in ("timelimit", "nodelimit", "totalnodelimit", "stallnodelimit", "userinterrupt"):
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
