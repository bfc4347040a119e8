"""Why a solver stopped and how good its point is: two typed outcomes, one mapping.

In the style of pyomo's ``pyomo.contrib.solver.common.results``, the two questions are kept
apart: :class:`TerminationCondition` says *why the solver stopped* and
:class:`SolutionStatus` says *how good the point it returned is*.  The member names are
pyomo's, so a pyomo result converts by name (:meth:`Termination.from_pyomo`); dpopt's enums
exist so that importing dpopt never imports pyomo.

:func:`oracle_status` maps the pair to the :class:`~dpopt.backends.result.OracleStatus` the
mechanisms read.  The mapping is a table, :data:`CONDITIONS`, with a reason for every entry;
each deliberate choice:

``convergenceCriteriaSatisfied``
    OPTIMAL only when the point is also called optimal (``SolutionStatus.optimal``); the
    solver's word is not a certificate: every MIP backend also checks the gap and re-checks
    the point (:mod:`dpopt.backends.pyomo_mip`).  Converged with a point that is only
    feasible (e.g. SCIP's gap limit) is INACCURATE, and without a point ERROR.
``maxTimeLimit``
    LIMIT with limit ``"time"``: the time limit the user opted into.
``iterationLimit``
    LIMIT with limit ``"nodes"`` when the user set a node limit (``max_iterations``), else
    ``"iterations"``.
``unbounded``
    UNBOUNDED (impossible for dpopt's MIPs; reported as the solver said).
``provenInfeasible``
    INFEASIBLE; never certified.
``objectiveLimit``
    LIMIT with limit ``"objective"``.  dpopt never sets an objective limit (cutoff); only a
    solver profile's raw ``[options]`` can (HiGHS ``objective_bound``, SCIP
    ``limits/primal``), so this is a stop on a limit the *user* set, like a time limit: no
    proof, not certified, and a crash retry with the same noise could not change it.
``interrupted``
    ERROR.  Nothing in dpopt interrupts a solver; an interrupt (a signal, a callback of a
    plug-in) is not a proof and not a limit the user declared, so it is treated like a
    crash: the mechanism retries with the same noise a fixed number of times, then fails
    closed.
``infeasibleOrUnbounded``
    INFEASIBLE.  Every MIP dpopt compiles has bounded variables only (the grid box, binaries),
    so it cannot be unbounded: a solver that cannot tell the two apart has found it
    infeasible.  Never certified either way.
``locallyInfeasible``
    INFEASIBLE (no point found, none proven to exist); never certified.
``minStepLength``
    INACCURATE (the solver stopped with reduced accuracy).
``error``, ``licensingProblems``, ``emptyModel``, ``unknown``
    ERROR (retried with the same noise, then fail closed).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from dpopt.backends.result import Limit, OracleStatus


class TerminationCondition(str, enum.Enum):
    """Why the solver stopped (pyomo's ``TerminationCondition`` names)."""

    convergenceCriteriaSatisfied = "convergenceCriteriaSatisfied"
    maxTimeLimit = "maxTimeLimit"
    iterationLimit = "iterationLimit"
    objectiveLimit = "objectiveLimit"
    minStepLength = "minStepLength"
    unbounded = "unbounded"
    provenInfeasible = "provenInfeasible"
    locallyInfeasible = "locallyInfeasible"
    infeasibleOrUnbounded = "infeasibleOrUnbounded"
    error = "error"
    interrupted = "interrupted"
    licensingProblems = "licensingProblems"
    emptyModel = "emptyModel"
    unknown = "unknown"


class SolutionStatus(str, enum.Enum):
    """How good the returned point is (pyomo's ``SolutionStatus`` names)."""

    noSolution = "noSolution"
    unknown = "unknown"
    infeasible = "infeasible"
    feasible = "feasible"
    optimal = "optimal"


TC = TerminationCondition
#: every condition → (OracleStatus, limit name or None, the documented reason)
CONDITIONS: dict[TerminationCondition, tuple[OracleStatus, Limit | None, str]] = {
    TC.convergenceCriteriaSatisfied: (OracleStatus.OPTIMAL, None,
                                      "converged; optimal only with an optimal point, and the backend "
                                      "still checks the gap and re-checks the point"),
    TC.maxTimeLimit: (OracleStatus.LIMIT, Limit.TIME, "the time limit the user set"),
    TC.iterationLimit: (OracleStatus.LIMIT, Limit.ITERATIONS,
                        "an iteration or node limit (\"nodes\" when the user set max_iterations)"),
    TC.objectiveLimit: (OracleStatus.LIMIT, Limit.OBJECTIVE,
                        "an objective limit (cutoff) that only a profile's raw options can set"),
    TC.minStepLength: (OracleStatus.INACCURATE, None, "stopped with reduced accuracy"),
    TC.unbounded: (OracleStatus.UNBOUNDED, None, "proven unbounded"),
    TC.provenInfeasible: (OracleStatus.INFEASIBLE, None, "proven infeasible"),
    TC.locallyInfeasible: (OracleStatus.INFEASIBLE, None, "no feasible point found (not proven)"),
    TC.infeasibleOrUnbounded: (OracleStatus.INFEASIBLE, None,
                               "dpopt's MIPs have bounded variables only, so it is infeasible"),
    TC.error: (OracleStatus.ERROR, None, "the solver reported an error"),
    TC.interrupted: (OracleStatus.ERROR, None,
                     "interrupted: neither a proof nor a declared limit; retried like a crash"),
    TC.licensingProblems: (OracleStatus.ERROR, None, "a licence problem"),
    TC.emptyModel: (OracleStatus.ERROR, None, "the model is empty (dpopt never builds one)"),
    TC.unknown: (OracleStatus.ERROR, None, "the solver did not say why it stopped"),
}


@dataclass(frozen=True)
class Termination:
    """The two outcomes of one solve.

    Attributes
    ----------
    condition : TerminationCondition
        Why the solver stopped.
    solution : SolutionStatus
        How good the returned point is.
    """

    condition: TerminationCondition
    solution: SolutionStatus

    @classmethod
    def from_pyomo(cls, results: Any) -> Termination:
        """From a ``pyomo.contrib.solver`` ``Results`` (its enums converted by member name)."""
        return cls(TerminationCondition(results.termination_condition.name),
                   SolutionStatus(results.solution_status.name))

    def oracle_status(self, *, node_limit: bool = False) -> tuple[OracleStatus, Limit | None]:
        """(OracleStatus, limit) by :data:`CONDITIONS` (module docstring).

        ``node_limit``: the user set a node limit (``max_iterations``), so an iteration limit
        is reported as ``"nodes"``.
        """
        status, limit, _ = CONDITIONS[self.condition]
        if self.condition is TC.iterationLimit and node_limit:
            limit = Limit.NODES
        if status is OracleStatus.OPTIMAL and self.solution is not SolutionStatus.optimal:
            status = OracleStatus.INACCURATE if self.solution is SolutionStatus.feasible else OracleStatus.ERROR
        return status, limit


def oracle_status(condition: TerminationCondition, solution: SolutionStatus, *,
                  node_limit: bool = False) -> tuple[OracleStatus, Limit | None]:
    """(OracleStatus, limit) for a (condition, solution) pair (see :class:`Termination`)."""
    return Termination(condition, solution).oracle_status(node_limit=node_limit)
