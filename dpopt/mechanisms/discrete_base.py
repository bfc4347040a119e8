"""Shared machinery of the oracle-efficient mechanisms over a discrete domain (NRVW19).

OPDisc, RSPM and OPSamp all perturb a :class:`~dpopt.modeling.discrete.DiscreteProblem`
(a 0/1 loss over an IntegerGrid), call a MIP oracle one or more times, and may release
only answers the oracle certified (DESIGN.md's oracle contract).  This module holds the
path they share: validate the problem, resolve and prepare the backend *before* the
budget is touched, charge the ledger once, call the oracle, re-check that each answer
is a point of the grid, and fail closed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from dpopt.backends.base import Backend
from dpopt.backends.profiles import SolverProfile, merge_options, resolve
from dpopt.backends.result import OracleResult, SolveOptions
from dpopt.errors import MechanismError
from dpopt.mechanisms.base import Mechanism
from dpopt.mechanisms.release import Release
from dpopt.modeling.discrete import DiscreteProblem, PerturbationKind
from dpopt.privacy.ledger import Charge
from dpopt.privacy.rng import SeedInfo

Solver = str | Path | SolverProfile | Backend


@dataclass
class OracleSession:
    """A prepared oracle for one run: the backend, its options and the compiled problem."""

    template: DiscreteProblem  # the problem with the mechanism's perturbation kind (no noise)
    backend: Backend
    options: SolveOptions
    prepared: Any


class DiscreteMechanism(Mechanism):
    """Base of the mechanisms whose oracle minimizes L(D, w) + P_η(w) over W_τ."""

    #: how the mechanism's noise enters the oracle problem
    kind: ClassVar[PerturbationKind] = "normalized"

    def _template(self, problem: object) -> DiscreteProblem:
        """The problem with this mechanism's perturbation kind, or MechanismError."""
        if not isinstance(problem, DiscreteProblem):
            raise MechanismError(
                f"{self.name} needs a DiscreteProblem (a ZeroOneLoss over an IntegerGrid), got "
                f"{type(problem).__name__}; a continuous variable is not supported"
            )
        if problem.eta is not None:
            raise MechanismError("the problem already carries a perturbation; pass the plain problem")
        return problem.with_kind(self.kind)

    def _session(self, template: DiscreteProblem, solver: Solver, time_limit: float | None,
                 threads: int | None) -> OracleSession:
        """Resolve, check and compile the oracle (no budget is spent if this raises)."""
        self._check_time_limit(time_limit)
        backend, profile = resolve(solver, template)
        backend.require()
        backend.check(template)
        options = merge_options(profile, time_limit=time_limit, threads=threads)
        self.ledger.require(self.epsilon, self.delta)
        return OracleSession(template, backend, options, backend.prepare(template))

    def _calls(self, session: OracleSession, etas: Iterable[np.ndarray],
               accept: Callable[[OracleResult, DiscreteProblem], bool] | None = None,
               ) -> tuple[list[OracleResult], Charge]:
        """Charge the ledger once, then solve for each η until one is not accepted.

        Each result carries the re-check ``on_grid`` (and ``accepted`` when ``accept`` is
        given); its ``certified`` verdict is the backend's certificate *and* the re-check.
        If a call raises, the charge stays spent and is marked unreleased.
        """
        label = session.template.summary()
        charge = self.ledger.charge(self.epsilon, self.delta, label=label, mechanism=self.name)
        results: list[OracleResult] = []
        try:
            for eta in etas:
                res = session.backend.solve(session.prepared, eta, session.options)
                res = self._recheck(res, session.template.with_eta(eta), accept)
                results.append(res)
                if not res.certified:
                    break
        except BaseException:
            self.ledger.mark_unreleased(charge)
            raise
        return results, charge

    @staticmethod
    def _recheck(res: OracleResult, problem: DiscreteProblem,
                 accept: Callable[[OracleResult, DiscreteProblem], bool] | None) -> OracleResult:
        w = res.solution
        on_grid = w is not None and problem.domain.contains(w)
        recheck = {**(res.recheck or {}), "on_grid": bool(on_grid)}
        if accept is None:
            return res.with_recheck(recheck, on_grid)
        # an α-approximate oracle: ``accept`` (which checks the proven gap itself)
        # replaces the backend's exact-optimality verdict
        ok = bool(on_grid and accept(res, problem))
        return replace(res, recheck=recheck | {"accepted": ok}, certified=ok)

    def _release(self, theta: np.ndarray, results: list[OracleResult], charge: Charge,
                 parameters: dict[str, Any], seed: SeedInfo, template: DiscreteProblem) -> Release:
        """Fail closed unless every call was accepted; else the Release."""
        ok = bool(results) and all(r.certified for r in results)
        if not ok:
            self._fail_closed(next((r for r in results if not r.certified), results[-1]), charge)
        return Release(
            theta=np.asarray(theta, dtype=np.float64), epsilon=self.epsilon, delta=self.delta,
            mechanism=f"{self.name} [{self.theorem}]", parameters=parameters,
            oracle_calls=tuple(results), seed=seed, private=ok, problem=template.summary(),
            notes=() if ok else ("UNSAFE: released without a certified oracle result",),
        )
