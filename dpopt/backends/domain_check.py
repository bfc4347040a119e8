"""Is a declared discrete domain empty?  Decided before the charge, from the declaration only.

A domain whose side constraints, cardinality and ℓ2 bound no grid point meets would make every
oracle call infeasible after the budget is spent.  The question reads no data, so it is answered
before the charge: a candidate point (the lower corner, or 0 clipped into the box), enumeration
for small boxes, else the domain's own integer model (:func:`dpopt.compile.discrete_ir.build_domain_ir`)
as a feasibility MILP solved to completion by SciPy's ``milp`` (HiGHS) in this process.
"""

from __future__ import annotations

import numpy as np

from dpopt.errors import ModelError
from dpopt.modeling.decision_domain import DiscreteDomain
from dpopt.modeling.discrete import DiscreteProblem

#: boxes up to this many points are enumerated instead of solved
ENUMERATE_LIMIT = 50_000


def _milp_feasible(problem: DiscreteProblem) -> bool:
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import coo_matrix

    from dpopt.compile.discrete_ir import build_domain_ir

    ir = build_domain_ir(problem)
    n = len(ir.variables)
    rows, cols, vals, lo, hi = [], [], [], [], []
    for i, row in enumerate(ir.rows):
        for v, c in row.terms:
            rows.append(i)
            cols.append(v)
            vals.append(float(c))
        lo.append(-np.inf if row.lb is None else float(row.lb))
        hi.append(np.inf if row.ub is None else float(row.ub))
    A = coo_matrix((vals, (rows, cols)), shape=(len(ir.rows), n)).tocsr()
    bounds = Bounds([v.lb for v in ir.variables], [v.ub for v in ir.variables])
    res = milp(np.zeros(n), integrality=np.ones(n), bounds=bounds, constraints=[LinearConstraint(A, lo, hi)])
    if res.status == 0:
        return True
    if res.status == 2:
        return False
    raise ModelError(f"could not decide whether the discrete domain is empty ({res.message})")


def check_nonempty(problem: DiscreteProblem) -> None:
    """ModelError when the problem's declared domain holds no point (public facts only)."""
    dom = problem.domain
    if not isinstance(dom, DiscreteDomain):
        return
    lows, highs = np.array(dom.lows), np.array(dom.highs)
    for k in (lows, np.clip(0, lows, highs)):
        if dom.contains_indices(k[None, :])[0]:
            return
    if dom.box_count() <= ENUMERATE_LIMIT:
        dom.enumerate_indices(ENUMERATE_LIMIT)  # raises ModelError("... empty ...") when no point
        return
    if not _milp_feasible(problem):
        raise ModelError("the discrete domain is empty: no grid point satisfies its constraints")
