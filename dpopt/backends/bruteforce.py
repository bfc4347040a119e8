"""Exhaustive enumeration of a discrete domain: an exact oracle for tiny instances.

It is the reference the MIP backends are tested against, and a stand-in oracle
for fast statistical audits of OPDisc.  The loss is evaluated with the exact integer
margins of the data's schema (``ZeroOneLoss.values``), the same integers every MIP
backend compiles, so all discrete backends agree exactly, also where a margin is exactly
zero.  Certification is by construction: every point of W_τ is evaluated, and the argmin is checked to be unique (a tie, which
has probability zero under continuous noise, is reported uncertified).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpopt.backends.base import Backend
from dpopt.backends.options import refuse_options
from dpopt.backends.result import OracleResult, OracleStatus, SolveOptions
from dpopt.errors import BackendCapabilityError
from dpopt.modeling.decision_domain import DiscreteDomain
from dpopt.modeling.discrete import DiscreteProblem

#: largest grid it will enumerate
MAX_POINTS = 200_000


def grid_points(problem: DiscreteProblem) -> int:
    """K^d: the grid's points in the box (the count the brute-force backend checks)."""
    g = problem.domain
    if isinstance(g, DiscreteDomain):
        return g.box_count()
    return int((int(g.khigh) - int(g.klow) + 1) ** problem.dim)


@dataclass(frozen=True)
class EnumeratedGrid:
    """A discrete problem with every point of its grid listed (rows of ``points``)."""

    problem: DiscreteProblem
    points: np.ndarray


class BruteForceBackend(Backend[EnumeratedGrid]):
    name = "bruteforce"
    module = "numpy"
    distribution = "numpy"
    kind = "mip"
    formulation = "enumeration"
    auto_rank = 0  # where the grid is tiny (dpopt.backends.auto_discrete)
    description = f"exhaustive enumeration of a discrete grid (tiny instances, ≤ {MAX_POINTS} points): exact"

    def check_options(self, options: dict[str, Any], where: str) -> None:
        """It reads no ``[options]`` (:func:`dpopt.backends.options.refuse_options`)."""
        refuse_options(self.name, options, where)

    def check(self, problem: Any) -> None:
        if not isinstance(problem, DiscreteProblem):
            raise BackendCapabilityError("backend 'bruteforce' solves discrete problems (IntegerGrid domains) only")
        count = grid_points(problem)
        if count > MAX_POINTS:
            raise BackendCapabilityError(
                f"backend 'bruteforce' enumerates at most {MAX_POINTS} grid points; this grid has "
                f"{count}: use 'highs' or 'cpsat'"
            )

    def prepare(self, problem: Any) -> EnumeratedGrid:
        self.check(problem)
        return EnumeratedGrid(problem, problem.domain.enumerate(problem.dim, max_count=MAX_POINTS))

    def solve(self, prepared: EnumeratedGrid, b: np.ndarray | None, options: SolveOptions) -> OracleResult:
        problem, W = prepared.problem, prepared.points
        start = time.perf_counter()
        p = problem.with_eta(b) if b is not None else problem
        vals = p.objectives(W)
        order = np.argsort(vals, kind="stable")[:2]
        best = float(vals[order[0]])
        unique = len(order) == 1 or float(vals[order[1]]) - best > 1e-12 * max(1.0, abs(best))
        return OracleResult(
            solution=W[order[0]].copy(),
            status=OracleStatus.OPTIMAL,
            solver_certified=bool(unique),
            solve_time=time.perf_counter() - start,
            backend=self.name,
            backend_version=np.__version__,
            raw_status="enumerated" if unique else "tie between minimizers",
            primal_bound=best,
            dual_bound=best,
            gap=0.0 if unique else math.nan,
        )
