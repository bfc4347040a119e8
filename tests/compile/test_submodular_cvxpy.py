"""The cvxpy encodings of Ω∞ (:mod:`dpopt.compile.submodular_cvxpy`): the exact atoms and the
constraint-generation LP over greedy vertices (a :class:`CallableSetFunction` with no closed
form) agree.
"""

from __future__ import annotations

import numpy as np
import pytest

import dpopt as dp
from dpopt.backends.registry import get as get_backend
from dpopt.backends.result import OracleStatus, SolveOptions
from dpopt.modeling.submodular import omega
from dpopt.modeling.submodular_norms import SubmodularNorm, SubmodularNormBall
from dpopt.numerics.certificates import certify
from dpopt.testing.set_cases import as_generic, set_functions
from dpopt.testing.tables import regression_table

P = 6


# ----------------------------------------------------------------------------- cvxpy encodings


@pytest.mark.parametrize("F", set_functions()[:-1], ids=lambda F: F.describe())
def test_cvxpy_encodings_match_greedy_and_cutting_planes(F):
    data = regression_table()
    th = dp.Variable(P)
    backend = get_backend("clarabel")
    opts = SolveOptions(tolerance=1e-10)
    sols = []
    for FF in (F, as_generic(F)):  # exact atom vs constraint generation over greedy vertices
        prob = dp.Problem(dp.SquaredLoss(data, th), regularizer=(dp.L2Squared(th, 0.1), SubmodularNorm(th, FF, 0.05)))
        res = backend.solve_problem(prob, opts)
        assert res.status is OracleStatus.OPTIMAL
        assert res.primal_bound == pytest.approx(prob.objective(res.solution), abs=1e-7)  # cvxpy value = greedy value
        assert certify(prob, res.solution).distance_bound < 1e-3
        sols.append(res.solution)
        ball = dp.Problem(dp.SquaredLoss(data, th), constraint=SubmodularNormBall(th, FF, 0.5),
                          regularizer=dp.L2Squared(th, 0.1))
        rb = backend.solve_problem(ball, opts)
        assert omega(F, rb.solution) == pytest.approx(0.5, abs=1e-6)  # the constraint is active
        sols.append(rb.solution)
    assert np.allclose(sols[0], sols[2], atol=1e-6) and np.allclose(sols[1], sols[3], atol=1e-6)
