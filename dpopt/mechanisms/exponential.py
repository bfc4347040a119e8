"""The exponential mechanism over an enumerable discrete domain ([MT07]; NRVW19's yardstick).

    P[ŵ = w] ∝ exp(−ε·L(D, w) / (2B)),   w ∈ W (every point of the declared domain),

with L the sum of per-row losses in [0, B] (B declared).  Replacing one row changes L(D, w) by
at most B at every w, so the mechanism is ε-DP under replace-one neighbours ([MT07] Thm. 6: the
factor 2 because the losses need not move together).  It needs no oracle: every point is
evaluated, which is why it applies only where the domain is small (``max_points``).

Exact, on the loss's own lattice
--------------------------------
Every total L(D, w) is an integer multiple of the loss's public resolution r
(:attr:`~dpopt.modeling.row_losses.RowLoss.resolution`: each row's value is an integer number of
its atom's rational unit), so the scores u(w) = L(D, w)/r are exact integers computed in exact
arithmetic (:meth:`RowLoss.exact_totals`), and one row moves each score by at most
Δ = ⌊B/r⌋ (an integer: a change is a multiple of r of size ≤ B).  The draw is
:func:`dpopt.privacy.exact_selection.exponential_mechanism` with η = ε/(2Δ) (rounded down to a
dyadic rational, which only adds noise): P[w] ∝ exp(−η·u(w)), sampled exactly by rejection from
the run's exact bit source, so no floating-point score or sampler enters the law.  The release is
the chosen point τk, a point of the public finite domain (no additive grid is needed).

The domain is enumerated from the declaration only (:meth:`DiscreteDomain.enumerate_indices`), in
a fixed order, before the data are read.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np

from dpopt.backends.domain_check import check_nonempty
from dpopt.errors import MechanismError, ModelError
from dpopt.mechanisms.base import Mechanism, Plan, RunOptions, SolverNeed
from dpopt.mechanisms.params import Integral, Interval, Real
from dpopt.mechanisms.pipeline import Outcome
from dpopt.modeling.decision_domain import DiscreteDomain
from dpopt.modeling.discrete import DiscreteProblem
from dpopt.modeling.row_losses import RowLoss
from dpopt.privacy.exact import sampler_for
from dpopt.privacy.exact_selection import exponential_mechanism
from dpopt.privacy.ledger import Ledger

#: the largest domain the mechanism enumerates by default
MAX_POINTS = 200_000


@dataclass(frozen=True, kw_only=True)
class EMPlan(Plan):
    """The enumerated domain (public) and η = ε/(2Δ)."""

    points: np.ndarray
    eta: Fraction


def enumerate_domain(problem: DiscreteProblem, max_points: int) -> np.ndarray:
    """Every integer point k of the problem's domain (rows), from the declaration only."""
    dom = problem.domain
    if isinstance(dom, DiscreteDomain):
        return dom.enumerate_indices(max_points)
    W = dom.enumerate(problem.dim, max_count=max_points)
    return np.rint(W / float(dom.step)).astype(np.int64)


def score_sensitivity(loss: RowLoss) -> int:
    """Δ = ⌊B/r⌋: one row moves each integer score L/r by at most this (module docstring)."""
    return max(1, math.floor(loss.exact_bound / loss.resolution))


class ExponentialMechanism(Mechanism):
    """The exponential mechanism over an enumerable discrete domain, sampled exactly (module docstring).

    Parameters
    ----------
    epsilon : float
        ε > 0.
    delta : float
        0 (the mechanism is pure ε-DP; any other value is refused).
    max_points : int
        Refuse (before the charge) a domain with more points than this.
    ledger : Ledger, optional
        Where the release is charged.
    """

    name = "ExponentialMechanism"
    theorem = "MT07 Thm. 6 (replace-one, sensitivity B), exact rejection sampling on integer scores"
    problem_type = DiscreteProblem
    problem_refusal = ("{name} needs a DiscreteProblem with a bounded row loss over a discrete domain, got {got}")
    needs = SolverNeed.NONE
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **Mechanism._parameter_constraints,
        "delta": [Interval(Real, 0, 0, closed="both", why="the exponential mechanism is pure ε-DP: delta is 0")],
        "max_points": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, epsilon: float, delta: float = 0.0, *, max_points: int = MAX_POINTS,
                 ledger: Ledger | None = None) -> None:
        super().__init__(epsilon, delta, ledger=ledger)
        self.max_points = int(max_points)

    def plan(self, problem: DiscreteProblem, options: RunOptions | None = None) -> Plan:
        """Enumerate the domain and fix η from the declarations (before the charge)."""
        loss = problem.loss
        if problem.eta is not None:
            raise MechanismError("the problem already carries a perturbation; pass the plain problem")
        if not isinstance(loss, RowLoss):
            raise MechanismError(f"{self.name} takes a row loss (dp.ZeroOneLoss, dp.ScoreIndicator, dp.Ramp, "
                                 "dp.CappedMin, dp.Lookup or a sum of them)")
        try:
            check_nonempty(problem)  # the declaration alone (dpopt.backends.domain_check)
        except ModelError as exc:
            raise MechanismError(f"{self.name}: {exc}") from None
        if not loss.public_lattice:
            raise MechanismError(f"{self.name} reads the loss's lattice before the charge, and a weighted 0/1 loss "
                                 "takes it from its weights (data); drop the weights or use OPDisc or RSPM")
        try:
            points = enumerate_domain(problem, self.max_points)
        except ModelError as exc:
            raise MechanismError(f"{self.name}: {exc}; use OPDisc, RSPM or OPSamp (an oracle) for a large domain") from None
        delta_units = score_sensitivity(loss)
        eta = Fraction(self.epsilon) / (2 * delta_units)
        parameters = {"noise": "exponential", "points": int(points.shape[0]), "loss_bound": loss.value_bound,
                      "score_unit": float(loss.resolution), "score_sensitivity": delta_units, "eta": float(eta),
                      "step": float(problem.domain.step)}
        return EMPlan(problem=problem, parameters=parameters, points=points, eta=eta, needs=SolverNeed.NONE,
                      feature_names=problem.decision_names)

    def execute(self, plan: Plan, rng: np.random.Generator) -> Outcome:
        """Score every point exactly and draw one (module docstring)."""
        assert isinstance(plan, EMPlan)
        loss = plan.problem.loss
        totals = loss.exact_totals(plan.points)
        r = loss.resolution
        units = np.array([min(int(t / r), 2**52) for t in totals], dtype=np.int64)
        index = int(exponential_mechanism(sampler_for(rng), units, plan.eta)[0])
        theta = float(plan.problem.domain.step) * plan.points[index].astype(np.float64)
        return Outcome(theta)
