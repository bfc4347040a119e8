"""Cross-verification of a discrete oracle's answer by an independent backend.

The privacy proofs of OPDisc, RSPM and OPSamp (NRVW19) need the exact (α-)argmin of each
perturbed problem, and a solver's "optimal" is not always right (HiGHS 1.14 once certified
a suboptimal big-M point with zero gap, ``tests/backends/test_highs_grouped.py``).  After the primary
backend's answer ŵ is accepted, a *verifier* — a different engine — must prove, on the
same perturbed problem (the same η), that no grid point has an objective below

    threshold = f(ŵ) − tol,   tol = max(α, :data:`RELATIVE_TOLERANCE` · max(1, |f(ŵ)|)),

where f(ŵ) is recomputed by dpopt with exact integer margins.  Either the verifier's proven
lower bound is ≥ the threshold (a full solve), or, for the grouped verifier, every enumerated
point k_S is settled in one of two ways: a safe lower bound ≥ the threshold, evaluated by
dpopt in exact arithmetic from the LP dual vector the primary's LP pass proposed for that
point (NS04 Sec. 2: the bound holds for *any* dual vector, so HiGHS is never trusted, only
used as a source of candidate multipliers; :mod:`dpopt.backends.grouped_duals`), or the
point's cut-off model (objective < threshold) proven infeasible by SCIP
(:mod:`dpopt.backends.scip_points`, the points run on the run's executor).  A crash (status
ERROR, or an exception raised by the verifier) is retried with the same η like a crash of the
primary oracle — the same public number of repeats (``CRASH_RETRIES`` of :mod:`dpopt.mechanisms.discrete_base`), no
data-dependent choice (:func:`retry_crashes`).  Anything else — a better point, a limit, a
crash on every try — is a disagreement, and the mechanism fails closed.

Choosing the verifier (:func:`choose_verifier`)
-----------------------------------------------
A pure function of the primary backend's name, the installed packages and the problem's
declarations (schema, n, grid, d), like :mod:`dpopt.backends.auto_discrete`; it never reads
a data value, so every neighbouring dataset gets the same verifier.  In order:

1. a primary whose declared ``formulation`` is ``"enumeration"`` (``bruteforce``): none is
   needed (it evaluates every grid point with exact margins; exact by construction);
2. a tiny grid (the ``auto`` rule's enumeration bound): ``bruteforce``;
3. a ``"grouped"`` primary (``highs-grouped``): ``scip-grouped``, the grouped decomposition
   with the automatic split (when the schema admits it: the ``auto`` rule's public checks), every enumerated
   point settled by an exact LP dual bound or by SCIP (PySCIPOpt) under the objective cut-off
   (:class:`ScipGroupedVerifier`) — the big-M models do not finish on data such as Adult;
4. a big-M primary (``highs``, ``scip``, ``cpsat``, or a third-party backend): the first
   installed of :func:`verifier_order` (the backends by their declared ``verifier_rank``:
   ``scip``, ``cpsat``, ``highs``) other than the primary;
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
from dpopt.backends.grouped_duals import DualHint, dual_proofs, safe_bound_of
from dpopt.backends.result import Limit, OracleResult, OracleStatus, SolveOptions
from dpopt.errors import BackendCapabilityError
from dpopt.modeling.discrete import DiscreteProblem

#: relative slack of the verifier's threshold when α is tiny (solver tolerances are ~1e-9)
RELATIVE_TOLERANCE = 1e-6
#: the name of the grouped decomposition solved with SCIP
SCIP_GROUPED = "scip-grouped"


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
    how = ("at every enumerated point, a safe LP bound evaluated in exact arithmetic (NS04) ≥ the threshold or "
           "its cut-off model (objective below the threshold) proven infeasible by SCIP"
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


def verifier_order(primary: str) -> tuple[str, ...]:
    """The verifiers of a big-M primary, best first: the registered backends by their declared
    ``verifier_rank`` (a primary is never its own verifier)."""
    from dpopt.backends import registry

    return tuple(b.name for b in registry.ranked(lambda b: b.verifier_rank) if b.name != primary)


def _formulation(name: str) -> str:
    """The declared ``formulation`` of the registered backend ``name`` ("big-m" for another)."""
    from dpopt.backends import registry

    return registry.get(name).formulation if name in registry.names() else "big-m"


def choose_verifier(primary: str, problem: DiscreteProblem) -> VerifierChoice:
    """The verifier of ``primary``'s answers on ``problem`` (module docstring), from public facts only."""
    from dpopt.backends import registry
    from dpopt.backends.auto_discrete import bruteforce_reason, grouped_reason

    formulation = _formulation(primary)
    if formulation == "enumeration":
        return VerifierChoice(None, f"{primary} enumerates every grid point (exact by construction): "
                              "no verifier needed")
    if bruteforce_reason(problem) is not None:
        enumeration = registry.ranked(lambda b: 0 if b.formulation == "enumeration" else None)
        if enumeration:
            return VerifierChoice(enumeration[0].name, "the grid is small enough to enumerate (the auto rule's bound)")
    if formulation == "grouped":
        if grouped_reason(problem)[0] is None:
            return VerifierChoice(None, f"no independent verifier for {primary}: the automatic grouped split "
                                  "does not apply to this schema")
        if _installed(SCIP_GROUPED):
            return VerifierChoice(SCIP_GROUPED, "the grouped decomposition with SCIP as the per-point MIP engine")
        return VerifierChoice(None, f"no independent verifier for {primary}: install pyscipopt (scip-grouped)")
    order = verifier_order(primary)
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
    """The grouped decomposition (:mod:`dpopt.compile.mip_grouped`): exact dual bounds, then SCIP.

    For one η and threshold, every enumerated point k_S must be proven to hold no grid point
    below the threshold, in one of two ways:

    1. *a safe LP bound*: the primary's LP duals of that point (``GroupedPrepared.hint``, a
       proposal only) give, evaluated by dpopt in exact arithmetic with the verifier's own
       costs, a lower bound ≥ the threshold (NS04 Sec. 2; :mod:`dpopt.backends.grouped_duals`);
       the bound holds for any dual vector, so a wrong HiGHS answer can only leave the point
       to step 2;
    2. *SCIP*: the point's cut-off model (objective below ``threshold − const(k_S)``,
       ``setObjlimit``) proven infeasible by SCIP (:mod:`dpopt.backends.scip_points`), the
       points run as tasks of the run's executor.

    Confirmed when every point is proven; anything else is a disagreement.
    """

    def __init__(self, name: str, version: str, prepared: Any, backend: Backend[Any] | None = None, *,
                 source: Any = None) -> None:
        super().__init__(name, version, prepared, backend)
        self.source = source  # the primary's prepared decomposition (its ``hint``: proposals only)
        self.safe = safe_bound_of(prepared)

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
        return cls(SCIP_GROUPED, importlib.metadata.version("pyscipopt"), program, source=primary_prepared)

    def confirm(self, problem: DiscreteProblem, eta: np.ndarray, value: float, alpha: float,
                options: SolveOptions, retries: int) -> OracleResult:
        """Every enumerated point proven on the same η (class docstring), a crash retried ``retries``
        times (:func:`retry_crashes`, each try with fresh SCIP models); ``certified`` is the verdict."""
        cut = threshold(value, alpha)
        res = retry_crashes(lambda: self._attempt(eta, cut, options), retries)
        return replace_verdict(res, cut=cut, lower=res.dual_bound, better=bool(res.solution is not None),
                               ok=res.solver_certified)

    def hint(self) -> DualHint | None:
        """The primary's latest LP duals, if it left any (checked, never trusted: :func:`dual_proofs`)."""
        hint = getattr(self.source, "hint", None)
        return hint if isinstance(hint, DualHint) else None

    def _attempt(self, eta: np.ndarray, cut: float, options: SolveOptions) -> OracleResult:
        """One pass over the enumerated points (status ERROR when SCIP raised).

        ``solver_certified`` holds the verdict, ``dual_bound`` the threshold when confirmed, and
        ``solution`` a point found below the threshold (if any).
        """
        from dpopt.backends.scip_points import scip_pass
        from dpopt.executors import current_executor

        prog = self.prepared
        perturbed = prog.problem.with_eta(eta)
        start = time.perf_counter()
        deadline = None if options.time_limit is None else start + float(options.time_limit)
        status, better, point, proven, rest = OracleStatus.OPTIMAL, False, None, 0, 0
        raw = "all cut-off models infeasible"
        try:
            proofs = dual_proofs(prog, perturbed, self.hint(), cut, self.safe)
            proven = int(proofs.proven.sum())
            todo = np.flatnonzero(~proofs.proven)
            todo = todo[np.argsort(proofs.bound[todo], kind="stable")].tolist()  # weakest bounds first
            rest = len(todo)
            outcome = scip_pass(prog, perturbed.eta, cut, todo, options, deadline, current_executor())
            if outcome.kind != "infeasible":
                better, point = _better_point(perturbed, outcome.point, cut), outcome.point
                status = OracleStatus.LIMIT if outcome.kind == "limit" else OracleStatus.OPTIMAL
                raw = f"SCIP status {outcome.kind!r} at an enumerated point"
        except Exception as exc:  # noqa: BLE001 — report, never crash a mechanism
            status, raw = OracleStatus.ERROR, f"exception {type(exc).__name__}"
        ok = status is OracleStatus.OPTIMAL and raw == "all cut-off models infeasible"
        return OracleResult(
            solution=point if better else None, status=status, solver_certified=ok,
            solve_time=time.perf_counter() - start, backend=self.name, backend_version=self.version,
            raw_status=raw, limit=Limit.TIME if status is OracleStatus.LIMIT else None,
            dual_bound=cut if ok else math.nan,
            message=(f"grouped decomposition, {prog.points.shape[0]} points: {proven} proven by exact LP dual "
                     f"bounds, {rest} left to SCIP cut-off models"),
        )
