"""The programs an H-polytope's public geometry poses, solved with scipy.

:class:`~dpopt.modeling.structured_sets.HPolytope` (and the intersections and submodular
polyhedra of the modeling layer) pose their linear programs and projections as
:class:`~dpopt.modeling.structured_sets.PolytopeLP` and
:class:`~dpopt.modeling.structured_sets.PolytopeProjection`; this module registers their
solvers with :func:`~dpopt.modeling.structured_sets.solve_polytope_program`, so the modeling
layer imports no solver package.  A linear program goes to HiGHS through the ``scipy-lp``
backend (:class:`~dpopt.backends.lp.ScipyLPBackend`); a projection is ``v − Aᵀλ*`` with λ* ≥ 0
the L-BFGS-B minimizer of its dual (:func:`~dpopt.compile.polytope_program.projection_dual`).

The package root imports this module right after :mod:`dpopt.modeling.structured_sets`, which
may be half-way through another module's import then: it imports nothing else at module level,
and the backend and scipy at the first solve.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

import numpy as np

from dpopt.modeling.structured_sets import (
    LinearAnswer,
    PolytopeLP,
    PolytopeProjection,
    ProjectionAnswer,
    solve_polytope_program,
)

if TYPE_CHECKING:
    from dpopt.backends.lp import ScipyLPBackend

__all__ = ["highs_linear_program", "lbfgsb_projection"]


@cache
def _backend() -> ScipyLPBackend:
    from dpopt.backends.lp import ScipyLPBackend

    return ScipyLPBackend()


@solve_polytope_program.register
def highs_linear_program(program: PolytopeLP) -> LinearAnswer:
    """``min ⟨c, x⟩ s.t. A x ≤ b`` within the bounds, by HiGHS (the ``scipy-lp`` backend)."""
    from dpopt.backends.result import SolveOptions
    from dpopt.compile.polytope_program import LinearProgram

    res = _backend().solve(LinearProgram(program.A, program.b, program.bounds), program.c, SolveOptions())
    return LinearAnswer(res.status.value, res.solution, res.primal_bound, res.message)


@solve_polytope_program.register
def lbfgsb_projection(program: PolytopeProjection) -> ProjectionAnswer:
    """``v − Aᵀλ*`` with λ* ≥ 0 the dual minimizer (may violate A w ≤ b by about 1e-9 relative)."""
    from scipy import optimize

    from dpopt.compile.polytope_program import projection_dual

    A, b, v = program.A, program.b, program.v
    dual = projection_dual(A, b, v)
    scale = max(1.0, float(np.abs(A @ v - b).max()))
    res = optimize.minimize(dual, np.zeros(A.shape[0]), jac=True, method="L-BFGS-B",
                            bounds=[(0.0, None)] * A.shape[0],
                            options={"ftol": 1e-15 * scale, "gtol": 1e-12 * scale, "maxiter": 20_000})
    return ProjectionAnswer(v - A.T @ res.x, bool(res.success), str(res.message))
