"""Compilation to cvxpy: the compiled objective is the documented normalized one,
and a fresh noise draw changes a Parameter instead of rebuilding the problem."""

import cvxpy as cp
import numpy as np
import pytest

import dpopt as dp
from dpopt.compile.aggregate import aggregate_rows
from dpopt.compile.cvxpy_program import compile_cvxpy
from dpopt.modeling.perturbation import Perturbation


def _problem(loss_cls, *, constraint=True, **kw):
    rng = np.random.default_rng(0)
    X = rng.choice([-0.5, 0.0, 0.5], size=(60, 3))  # repeated rows: aggregation matters
    binary = loss_cls in (dp.LogisticLoss, dp.SmoothedHingeLoss, dp.HingeLoss)
    y = np.where(rng.uniform(size=60) > 0.5, 1.0, -1.0) if binary else rng.uniform(-1, 1, 60).round(1)
    data = dp.Dataset(X, y, x_bound=1.0, y_bound=1.0)
    th = dp.Variable(3)
    return dp.Problem(loss_cls(data, th, **kw), constraint=dp.L2Ball(th, 2.0) if constraint else None,
                      regularizer=(dp.L2Squared(th, 0.1), dp.L1Norm(th, 0.05)))


@pytest.mark.parametrize("loss_cls,kw", [(dp.LogisticLoss, {}), (dp.SquaredLoss, {}), (dp.HuberLoss, {"h": 0.3}),
                                         (dp.SmoothedHingeLoss, {"h": 0.4}), (dp.HingeLoss, {})])
def test_compiled_objective_is_the_normalized_objective(loss_cls, kw):
    """(1/n) Σ ℓ + regularizers + (ζ/2)‖θ−θ₀‖² + ⟨b, θ⟩, evaluated at random points."""
    base = _problem(loss_cls, **kw)
    b = np.array([0.3, -0.2, 0.1])
    pert = Perturbation(3, b=b, zeta=0.5, theta0=np.array([0.1, 0.0, -0.1]))
    prob = base.with_perturbation(pert)
    prog = compile_cvxpy(prob)
    rng = np.random.default_rng(1)
    for _ in range(5):
        t = rng.normal(size=3)
        prog.theta.value = t
        assert prog.problem.objective.value == pytest.approx(prob.objective(t), rel=1e-10, abs=1e-12)
        # and it is the *average* loss: n times the data does not change it
    X2 = np.vstack([base.loss.data.X] * 2)
    y2 = np.concatenate([base.loss.data.y] * 2)
    d2 = dp.Dataset(X2, y2, x_bound=1.0, y_bound=1.0)
    twice = type(base.loss)(d2, base.loss.variable, **kw)
    assert twice.value(t) == pytest.approx(base.loss.value(t))


def test_noise_is_a_parameter_and_resolve_does_not_rebuild():
    prob = _problem(dp.LogisticLoss).with_perturbation(Perturbation(3, zeta=0.1))
    prog = compile_cvxpy(prob)
    assert isinstance(prog.b, cp.Parameter)
    assert prog.problem.is_dcp(dpp=True)
    prog.set_linear(np.array([1.0, 0.0, 0.0]))
    prog.problem.solve(solver=cp.CLARABEL)
    first = prog.theta.value.copy()
    cache_before = prog.problem._cache.param_prog
    prog.set_linear(np.array([-1.0, 0.0, 0.0]))
    prog.problem.solve(solver=cp.CLARABEL)
    assert prog.problem._cache.param_prog is cache_before  # same canonicalization reused
    assert not np.allclose(first, prog.theta.value)


def test_aggregation_is_exact():
    X = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 0.0]])
    y = np.array([1.0, 1.0, -1.0, -1.0])
    Xu, yu, c = aggregate_rows(X, y)
    assert c.sum() == 4 and len(c) == 3
    t = np.array([0.3, -0.7])
    full = np.logaddexp(0, -y * (X @ t)).sum()
    agg = (c * np.logaddexp(0, -yu * (Xu @ t))).sum()
    assert agg == pytest.approx(full)
