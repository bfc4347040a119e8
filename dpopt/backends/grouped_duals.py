"""The grouped oracle's LP duals as proposals, and the verifier's exact check of them.

The grouped oracle (:mod:`dpopt.backends.highs_grouped`) prunes most enumerated points k_S by
the LP relaxation of their per-point MIP.  Its LP pass keeps each point's dual vector y (the
row duals HiGHS returns) in a :class:`DualHint`, attached to the prepared decomposition for
the η it solved.  The cross-verifier (:class:`~dpopt.backends.verify.ScipGroupedVerifier`) uses
them only as *proposals*: :func:`dual_proofs` evaluates the safe bound of Neumaier and
Shcherbina (NS04 Sec. 2, :class:`~dpopt.numerics.safe_bounds.SafeDualBound`) with the
verifier's own costs for that η, in exact arithmetic, and a point counts as proven only when
that bound is at least the verifier's threshold.  The bound holds for every y, so nothing
HiGHS computed is trusted: a wrong, stale or corrupted y only leaves its point to SCIP.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from dpopt.compile.mip_grouped import GroupedProgram
from dpopt.modeling.discrete import DiscreteProblem
from dpopt.numerics.safe_bounds import SafeDualBound

__all__ = ["DualHint", "DualProofs", "dual_proofs", "safe_bound_of"]


@dataclass(frozen=True)
class DualHint:
    """The LP duals of one oracle call: y by point index, for the program and η it solved."""

    program: GroupedProgram
    eta: np.ndarray | None
    duals: dict[int, np.ndarray] = field(default_factory=dict)

    def matches(self, program: GroupedProgram, eta: np.ndarray | None) -> bool:
        """Whether the hint was made for ``program`` and ``eta`` (else the verifier ignores it)."""
        if self.program is not program:
            return False
        if self.eta is None or eta is None:
            return self.eta is None and eta is None
        return bool(np.array_equal(self.eta, eta))


@dataclass(frozen=True)
class DualProofs:
    """Per point: ``proven`` (its safe bound ≥ the threshold) and ``bound`` (the safe bound,
    −inf without a usable dual; for ordering the remaining points)."""

    proven: np.ndarray
    bound: np.ndarray


def safe_bound_of(program: GroupedProgram) -> SafeDualBound:
    """The exact bound evaluator of ``program``'s per-point constraint rows (build it once per program)."""
    rows = program.rows
    return SafeDualBound(rows.starts, rows.index, rows.value, rows.rhs, program.n_columns)


def dual_proofs(program: GroupedProgram, problem: DiscreteProblem, hint: DualHint | None, cut: float,
                safe: SafeDualBound) -> DualProofs:
    """Which enumerated points the hint's duals prove to have no grid point below ``cut``.

    Parameters
    ----------
    program : GroupedProgram
    problem : DiscreteProblem
        ``program.problem`` with the call's η: the costs are the verifier's own.
    hint : DualHint or None
        The proposals (ignored unless made for this program and η).
    cut : float
        The verifier's threshold f(ŵ) − tol.
    safe : SafeDualBound
        :func:`safe_bound_of` ``program``.
    """
    points = program.points.shape[0]
    proven = np.zeros(points, dtype=bool)
    bound = np.full(points, -math.inf)
    if hint is None or not hint.matches(program, problem.eta):
        return DualProofs(proven, bound)
    fixed = np.ones(program.n_u + program.n_v)
    for i, y in hint.duals.items():
        if not 0 <= i < points:
            continue
        costs, z_upper, const = program.costs(problem, program.points[i])
        upper = np.concatenate([fixed, z_upper])
        bound[i], proven[i] = safe.check(costs, upper, const, y, cut)
    return DualProofs(proven, bound)
