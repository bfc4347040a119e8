"""Shared machinery of the oracle-efficient mechanisms over a discrete domain (NRVW19).

OPDisc, RSPM and OPSamp all perturb a :class:`~dpopt.modeling.discrete.DiscreteProblem`
(a 0/1 loss over an IntegerGrid) and call a MIP oracle one or more times.  They share the
run pipeline (:func:`~dpopt.mechanisms.pipeline.run_private`) and this module's rules.

Private mode: no success bit
----------------------------
* **Run to completion.**  Without a ``time_limit`` (and without a node limit in the
  solver profile) every oracle call runs until the solver proves its answer, so whether a
  run releases does not depend on the data.  A time or node limit is an explicit opt-in:
  the release then says its guarantee is conditional on termination, and a run stopped by
  the limit raises :class:`~dpopt.errors.UncertifiedOracleError`, an outcome the privacy
  guarantee does not cover (the CLI says so).
* **Crashes are retried with the same noise.**  A call that ends in a solver error (e.g.
  a CP-SAT child process that died) is repeated with the same η in a fresh solve, up to
  :data:`CRASH_RETRIES` times, before anything is reported.  The number of tries is fixed
  in advance, never chosen from what the solver said.
* **α-robust acceptance.**  A solver's "optimal" is not trusted to the last bit: an answer
  is accepted when it is a grid point and its objective, recomputed by dpopt with exact
  integer margins, is within the mechanism's declared ``alpha`` of the solver's proven
  lower bound (or the backend certified it exactly).  Each mechanism's noise accounts for
  α (OPDisc's shift 4GD²/τ + 4αD²/τ², RSPM's 2B + 2α per separator, OPSamp's λ), so an
  α-optimal answer is enough for the proof.

Choosing the oracle: ``solver="auto"`` (the default)
----------------------------------------------------
``auto`` picks the backend from public declarations only — the data's schema, n, the grid
and d — never from the values or from what a solver did
(:mod:`dpopt.backends.auto_discrete`): ``bruteforce`` when the grid is tiny,
``highs-grouped`` when the schema makes the grouped decomposition applicable within its
declared size limits (one-hot data such as Adult: seconds per call at n = 15,682 where the
big-M model does not finish in 15 minutes), else the big-M ``cpsat`` (then ``highs``).  Every
neighbouring dataset therefore gets the same backend; the release names it in each
:class:`~dpopt.mechanisms.release.OracleCall` and states the rule in
``parameters["solver_rule"]``.  An explicit ``solver=`` is used as given.

Cross-verification (``verify=True``, the default)
-------------------------------------------------
After the primary's answer ŵ is accepted, an *independent* backend, chosen from public
facts only (:func:`dpopt.backends.verify.choose_verifier`: the primary's name, the installed
packages, the problem's declarations), must prove on the same η that no grid point lies
below f(ŵ) − max(α, 10⁻⁶·max(1, |f(ŵ)|)).  The check touches the data, so it runs inside
the charged part, to completion like the primary (with the same time or node limit when
the user opted into one; a node limit is not passed on: node counts differ between
engines), and a disagreement is handled exactly like an uncertified oracle
answer (fail closed).  The release lists each check as an :class:`OracleCall` with role
``"verifier"`` (never its numbers) and states the rule in ``parameters["verifier_rule"]``;
when no independent verifier applies it says so in a note.  ``verify=False`` on the
mechanism, or ``verify = false`` in a solver profile, turns it off.
"""

from __future__ import annotations

import math
import os
import time
from abc import abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from dpopt.backends.auto_discrete import choose_discrete
from dpopt.backends.base import Backend
from dpopt.backends.certificates import GridCheck
from dpopt.backends.domain_check import check_nonempty
from dpopt.backends.profiles import ExecutorSettings, SolverProfile, merge_options, resolve
from dpopt.backends.result import Limit, OracleResult, OracleStatus, SolveOptions
from dpopt.backends.verify import (
    Verifier,
    VerifierChoice,
    choose_verifier,
    crashed,
    no_verifier_note,
    retry_crashes,
)
from dpopt.backends.verify import acceptance as verifier_acceptance
from dpopt.errors import MechanismError, ModelError
from dpopt.mechanisms.base import ON_UNCERTIFIED, Mechanism, OnUncertified, Plan, RunOptions
from dpopt.mechanisms.params import Boolean, Interval, Real
from dpopt.mechanisms.pipeline import Outcome
from dpopt.mechanisms.release import OracleCall
from dpopt.modeling.discrete import DiscreteProblem, PerturbationKind
from dpopt.privacy.ledger import Ledger

Solver = str | Path | SolverProfile | Backend

#: the additive suboptimality (in loss units) an oracle answer may have by default; each
#: mechanism's noise accounts for it (OPDisc 4αD²/τ², RSPM 2α per separator, OPSamp α/(10G))
DEFAULT_ALPHA = 1e-3
#: times a crashed oracle call is repeated with the same noise before it is reported
CRASH_RETRIES = 2
#: the public note of a release whose oracle ran under a time or node limit
LIMIT_NOTE = ("a time or node limit was set: the (ε, δ) guarantee holds only if no run on any "
              "neighbouring dataset stops on it (a stop raises UncertifiedOracleError, which is not "
              "covered); run without time_limit for an unconditional guarantee")

#: ``parameters["verifier_rule"]`` of a release whose cross-verification was turned off
VERIFY_OFF = "off (verify=False, or verify = false in the solver profile)"


#: the grouped oracle spreads its point MIPs over local processes by default from this many rows
PARALLEL_MIN_ROWS = 10_000


def parallel_default(profile: SolverProfile, backend: str, template: DiscreteProblem) -> SolverProfile:
    """``profile`` with a two-process pool for the grouped oracle's point MIPs, when the user set none.

    Public facts only: the backend (``highs-grouped``), n ≥ :data:`PARALLEL_MIN_ROWS` and a machine
    with at least two cores.  Measured on the full balanced Adult (n = 15,682, ε = 1, 2 cores): a
    verified OPDisc call took 34.8 s against 66.9 s in-process on its slowest draw (seed 2) and
    26.1 s against 47.3 s on seed 1, the same releases; at n = 4,000 a call takes 3–8 s in-process,
    where starting a pool would not pay.  A pool that cannot start (a script without a
    ``__main__`` guard) leaves the run in-process (``ExecutorSettings.fallback``), before the charge.
    """
    if profile.executor is not None or backend != "highs-grouped" or template.n < PARALLEL_MIN_ROWS:
        return profile
    if (os.cpu_count() or 1) < 2:
        return profile
    return replace(profile, executor=ExecutorSettings("processes", workers=2, fallback=True))


@dataclass(frozen=True)
class OracleSession:
    """The oracle of one run, resolved from public facts: the backend, its options, the cross-check."""

    template: DiscreteProblem  # the problem with the mechanism's perturbation kind (no noise)
    backend: Backend
    version: str
    options: SolveOptions
    rule: str | None = None  # why solver="auto" chose the backend (public), None for an explicit solver
    verifier: VerifierChoice | None = None  # the cross-check (public), None when verification is off
    profile: SolverProfile | None = None  # the resolved solver profile (its executor keys, for the pipeline)

    @property
    def limited(self) -> bool:
        """Whether the user opted into a time or node limit (the guarantee is then conditional)."""
        return self.options.time_limit is not None or self.options.max_iterations is not None


@dataclass(frozen=True, kw_only=True)
class DiscretePlan(Plan):
    """A planned discrete run: the oracle session, the mechanism's public constants and the call records."""

    session: OracleSession
    calibration: Any = None  # the mechanism's constants (OPDisc's σ, RSPM's law and scale, OPSamp's plan)
    call: OracleCall
    check: OracleCall | None = None  # the verifier's record, None when no cross-check runs


#: the ``alpha`` setting: the accepted additive suboptimality of an oracle answer (loss units)
ALPHA = Interval(Real, 0, None, closed="left")


class DiscreteMechanism(Mechanism):
    """Base of the mechanisms whose oracle minimizes L(D, w) + P_η(w) over W_τ.

    Subclasses set ``self.alpha`` (the accepted additive suboptimality, public) before
    running; their calibration accounts for it.
    """

    problem_type = DiscreteProblem
    problem_refusal = ("{name} needs a DiscreteProblem (a ZeroOneLoss over an IntegerGrid), got {got}; "
                       "a continuous variable is not supported")
    #: how the mechanism's noise enters the oracle problem
    kind: ClassVar[PerturbationKind] = "normalized"
    alpha: float = 0.0
    verify: bool = True

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **Mechanism._parameter_constraints,
        "on_uncertified": [ON_UNCERTIFIED],
        "verify": [Boolean()],
    }

    def __init__(self, epsilon: float, delta: float = 0.0, *, ledger: Ledger | None = None,
                 on_uncertified: OnUncertified = "raise", verify: bool = True) -> None:
        """``on_uncertified`` as in :class:`~dpopt.mechanisms.convex.ConvexMechanism`; ``verify``: cross-check
        every accepted answer with an independent backend (module docstring)."""
        super().__init__(epsilon, delta, ledger=ledger)
        self.on_uncertified: OnUncertified = on_uncertified
        self.verify = bool(verify)

    def _template(self, problem: object) -> DiscreteProblem:
        """The problem with this mechanism's perturbation kind, or MechanismError."""
        if not isinstance(problem, DiscreteProblem):
            raise MechanismError(
                f"{self.name} needs a DiscreteProblem (a ZeroOneLoss over an IntegerGrid), got "
                f"{type(problem).__name__}; a continuous variable is not supported"
            )
        if problem.eta is not None:
            raise MechanismError("the problem already carries a perturbation; pass the plain problem")
        if not problem.loss.declared:
            raise MechanismError(
                f"{self.name} needs a declared bound on the loss weights: pass "
                "ZeroOneLoss(..., weights=c, weight_bound=B) (the noise is calibrated to B, never to the weights)"
            )
        return problem.with_kind(self.kind)

    def _session(self, template: DiscreteProblem, solver: Solver, time_limit: float | None,
                 threads: int | None) -> OracleSession:
        """Resolve and check the oracle from public facts (nothing is charged if this raises).

        Compilation, which reads the data, happens after the charge (:meth:`_execute`);
        the compilers read their scaling and limits from the schema, so it cannot refuse
        for one row's sake.
        """
        self._check_time_limit(time_limit)
        rule = None
        if isinstance(solver, str) and solver.lower() == "auto":  # from declarations only (module docstring)
            choice = choose_discrete(template)
            solver, rule = choice.backend, choice.reason
        backend, profile = resolve(solver, template)
        profile = parallel_default(profile, backend.name, template)
        version = backend.require()
        backend.check(template)
        options = merge_options(profile, time_limit=time_limit, threads=threads)
        verifier = None
        if self.verify and profile.verify is not False:  # from public facts only (dpopt.backends.verify)
            verifier = choose_verifier(backend.name, template)
        return OracleSession(template, backend, version, options, rule=rule, verifier=verifier, profile=profile)

    def _acceptance(self) -> str:
        if self.alpha > 0:
            return (f"grid point within α={self.alpha:g} of the solver's proven lower bound "
                    "(objective recomputed with exact integer margins), or certified optimal")
        return "grid point certified optimal (zero gap, re-checked with exact integer margins)"

    @abstractmethod
    def calibrate(self, template: DiscreteProblem) -> tuple[Any, dict[str, Any]]:
        """The mechanism's public constants for ``template`` and its release parameters (no data values)."""

    @abstractmethod
    def draw(self, plan: DiscretePlan, rng: np.random.Generator) -> Iterable[np.ndarray]:
        """The noise vectors, one per oracle call (drawn lazily)."""

    @abstractmethod
    def finish(self, plan: DiscretePlan, rng: np.random.Generator, results: list[OracleResult]) -> np.ndarray:
        """The released vector from the accepted results."""

    def plan(self, problem: DiscreteProblem, options: RunOptions | None = None) -> DiscretePlan:
        """The checks, the constants, the oracle and its cross-check, from public facts (before the charge)."""
        options = options or RunOptions()
        template = self._template(problem)
        try:
            check_nonempty(template)  # the declaration alone (dpopt.backends.domain_check)
        except ModelError as exc:
            raise MechanismError(f"{self.name}: {exc}") from None
        calibration, parameters = self.calibrate(template)
        session = self._session(template, options.solver, options.time_limit, options.threads)
        call = OracleCall(session.backend.name, session.version, "oracle", self._acceptance())
        notes: tuple[str, ...] = (LIMIT_NOTE,) if session.limited else ()
        check = self._verifier_call(session)
        parameters = dict(parameters, verifier_rule=VERIFY_OFF)
        if session.verifier is not None:
            parameters["verifier_rule"] = session.verifier.reason
            if session.verifier.backend is None and session.backend.name != "bruteforce":
                notes += (no_verifier_note(session.verifier),)
        parameters = dict(parameters, backend=session.backend.name, alpha=self.alpha,
                          private_mode="time or node limit (conditional guarantee)" if session.limited
                          else "run to completion")
        if session.rule is not None:
            parameters["solver_rule"] = f"auto: {session.rule}"
        return DiscretePlan(problem=template, parameters=parameters, notes=notes, profile=session.profile,
                            feature_names=template.decision_names, session=session,
                            calibration=calibration, call=call, check=check)

    def execute(self, plan: Plan, rng: np.random.Generator) -> Outcome:
        """Compile, solve every η (re-checked, cross-checked), release (module docstring)."""
        assert isinstance(plan, DiscretePlan)
        session = plan.session
        prepared = session.backend.prepare(session.template)
        checker = None
        if plan.check is not None and session.verifier is not None:
            checker = Verifier.start(session.verifier, session.template, prepared)
        results: list[OracleResult] = []
        checks: list[OracleResult] = []
        for eta in self.draw(plan, rng):
            res = self._solve(session, prepared, eta)
            results.append(res)
            if res.certified and checker is not None:
                checks.append(self._cross_check(session, checker, eta, res))
                if not checks[-1].certified:
                    return self._not_accepted(plan, results, rng, checks=checks)
            if not res.certified:
                return self._not_accepted(plan, results, rng, checks=checks)
        theta = self.finish(plan, rng, results)
        calls = (plan.call,) * len(results) + ((plan.check,) * len(checks) if plan.check is not None else ())
        return Outcome(theta, calls=calls, results=tuple(results) + tuple(checks))

    def _verifier_call(self, session: OracleSession) -> OracleCall | None:
        """The public record of a cross-check (None when verification is off or none applies)."""
        choice = session.verifier
        if choice is None or choice.backend is None:
            return None
        from dpopt.backends import registry
        from dpopt.backends.verify import SCIP_GROUPED

        if choice.backend == SCIP_GROUPED:
            import importlib.metadata

            version = importlib.metadata.version("pyscipopt")
        else:
            version = registry.get(choice.backend).require()
        return OracleCall(choice.backend, version, "verifier", verifier_acceptance(choice, self.alpha))

    def _cross_check(self, session: OracleSession, checker: Verifier, eta: np.ndarray,
                     res: OracleResult) -> OracleResult:
        """The verifier's verdict on an accepted answer (same η, options without backend-specific extras)."""
        assert res.solution is not None
        problem = session.template.with_eta(eta)
        options = replace(session.options, extra={}, max_iterations=None)  # a node count is per engine
        return checker.confirm(problem, eta, problem.objective(res.solution), self.alpha, options,
                                       CRASH_RETRIES)

    def _solve(self, session: OracleSession, prepared: Any, eta: np.ndarray) -> OracleResult:
        """One oracle call, retried with the same η after a crash (:func:`~dpopt.backends.verify.retry_crashes`), then re-checked."""
        problem = session.template.with_eta(eta)
        backend = session.backend

        def attempt() -> OracleResult:  # a raised exception is a crash (ERROR), never propagated
            started = time.perf_counter()
            try:
                return backend.solve(prepared, eta, session.options)
            except Exception as exc:  # noqa: BLE001 — fail closed through the re-check, like the verifier
                return crashed(backend.name, backend.version() or "unknown", exc, started=started)

        return self._recheck(retry_crashes(attempt, CRASH_RETRIES), problem)

    def _recheck(self, res: OracleResult, problem: DiscreteProblem) -> OracleResult:
        """dpopt's verdict: on the grid, and certified optimal or proven α-optimal."""
        w = res.solution
        on_grid = w is not None and problem.domain.contains(w)
        gap = math.nan
        if on_grid and w is not None and math.isfinite(res.dual_bound):
            gap = problem.objective(w) - res.dual_bound
        alpha_ok = self.alpha > 0 and math.isfinite(gap) and gap <= self.alpha
        ok = bool(on_grid and (res.certified or alpha_ok))
        # the backend's own GridCheck (DiscreteCheck, CpSatCheck) gains the verdict; else a bare one.
        # ``replace`` rather than ``with_recheck``: a proven α-optimal answer is accepted although
        # the solver did not certify an exact argmin (NRVW19: the noise accounts for α)
        base = res.recheck if isinstance(res.recheck, GridCheck) else GridCheck(on_grid=bool(on_grid))
        check = replace(base, on_grid=bool(on_grid), proven_gap=float(gap), accepted=ok)
        return replace(res, recheck=check, certified=ok)

    def _not_accepted(self, plan: DiscretePlan, results: list[OracleResult], rng: np.random.Generator, *,
                      checks: list[OracleResult] | None = None) -> Outcome:
        """Fail closed (raise), or an unsafe release when the user asked for one."""
        session = plan.session
        last = results[-1]
        checks = checks or []
        if checks and not checks[-1].certified:
            reason = (f"the independent verifier ({checks[-1].backend}) did not confirm the oracle's answer "
                      f"({session.backend.name})")
        elif last.status is OracleStatus.LIMIT:
            reason = f"the oracle ({session.backend.name}) stopped on the {(last.limit or Limit.TIME).value} limit you set"
        else:
            reason = (f"the oracle ({session.backend.name}) did not prove its answer "
                      f"(status {last.status.value}, after {CRASH_RETRIES} retries of a crash)")
        if self.on_uncertified == "raise":
            raise self._uncertified(reason, tuple(results) + tuple(checks))
        unsafe = replace(plan.call, certified=False)
        solved = [r for r in results if r.solution is not None]
        theta = self.finish(plan, rng, solved) if solved else np.zeros(session.template.dim)
        verifier = self._verifier_call(session) if checks else None
        calls = (unsafe,) * len(results) + tuple(
            replace(verifier, certified=bool(c.certified)) for c in checks if verifier is not None)
        return Outcome(theta, calls=calls, results=tuple(results) + tuple(checks), private=False,
                       notes=("UNSAFE: released without a certified oracle result",))
