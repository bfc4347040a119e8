"""DP-GD's private preconditioner: its accounting, its map P⁻¹, its audit and mutant, its effect.

The preconditioner is one release of XᵀX's upper triangle (exact discrete Gaussian on a grid,
a share of the run's zCDP budget) and post-processing of it (dpopt/mechanisms/preconditioner.py).
"""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

import numpy as np
import pytest

import dpopt as dp
from dpopt.errors import MechanismError
from dpopt.mechanisms.adassp import gram_sensitivity
from dpopt.mechanisms.preconditioner import Preconditioner, plan_preconditioner
from dpopt.privacy.zcdp import zcdp_delta, zcdp_rho
from dpopt.testing import audit
from dpopt.testing.coverage import covers


def _ill_conditioned(n=3000, seed=0, radius=10.0):
    """Logistic regression on one-hot-like columns of very different frequencies (κ(XᵀX) ≫ 1)."""
    rng = np.random.default_rng(seed)
    freq = np.array([0.9, 0.5, 0.2, 0.05, 0.02])
    X = (rng.random((n, freq.size)) < freq).astype(float)
    X = np.hstack([X, np.ones((n, 1))]) / math.sqrt(freq.size + 1)
    y = np.where(X @ np.array([3.0, -2.0, 4.0, -6.0, 8.0, -1.0]) + rng.logistic(size=n) * 0.3 > 0, 1.0, -1.0)
    data = dp.Dataset(X, y, x_bound=1.0)
    th = dp.Variable(X.shape[1])
    return dp.Problem(dp.LogisticLoss(data, th), constraint=dp.L2Ball(th, radius))


def test_the_run_spends_its_budget_once_gram_plus_steps():
    """ρ_P (from the Gram's reported σ, grid and sensitivity) plus the steps' ρ is the run's ρ,
    at most the budget's and barely below it; the Gram gets its declared share."""
    prob = _ill_conditioned()
    p = dp.DPGradientDescent(0.5, 1e-6, precondition_share=0.1, ledger=dp.Ledger()).run(prob, seed=0,
                                                                                     diagnostics=False).parameters
    d = prob.dim
    assert p["preconditioner_sensitivity_l2"] == pytest.approx(
        gram_sensitivity(1.0, d) + p["preconditioner_grid_step"] * math.sqrt(d * (d + 1) / 2))
    rho_p = p["preconditioner_sensitivity_l2"] ** 2 / (2 * p["preconditioner_sigma"] ** 2)
    assert p["preconditioner_zcdp_rho"] == pytest.approx(rho_p, rel=1e-9)
    assert p["zcdp_rho"] == pytest.approx(rho_p + p["steps_zcdp_rho"], rel=1e-12)
    budget = zcdp_rho(0.5, 1e-6)
    assert 0.99 * budget <= p["zcdp_rho"] <= budget
    assert 0.099 * budget <= rho_p <= 0.1 * budget
    assert zcdp_delta(p["zcdp_rho"], 0.5) <= 1e-6
    assert p["steps"] == 50 and p["learning_rate"] == 1.0 and p["output"] == "suffix"


def test_solve_is_the_inverse_of_the_documented_matrix():
    """P⁻¹g equals numpy's solve of P = (c/n)(Ĝ₊ + τI) + λI built independently, column by
    column for a loss of k outputs."""
    rng = np.random.default_rng(1)
    d, k = 4, 3
    A = rng.normal(size=(d, d))
    noisy = A + A.T  # a symmetric "released" Gram with negative eigenvalues
    prob = _ill_conditioned()
    plan = dataclasses.replace(plan_preconditioner(prob, 0.1, 0.5, 1.0), ridge=0.7, curvature=0.25, n=50,
                               l2_weight=0.01)
    pre = Preconditioner(plan, noisy[np.triu_indices(d)], outputs=k)
    w, V = np.linalg.eigh(noisy)
    P = 0.25 / 50 * (V @ np.diag(np.maximum(w, 0)) @ V.T + 0.7 * np.eye(d)) + 0.01 * np.eye(d)
    G = rng.normal(size=(d, k))
    assert np.allclose(pre.solve(G.reshape(-1)).reshape(d, k), np.linalg.solve(P, G))
    assert np.min(pre.eigenvalues) >= 0.25 / 50 * 0.7 + 0.01 - 1e-15  # positive definite whatever Ĝ is


def test_precondition_auto_follows_the_declarations():
    """On by default for a loss with a curvature bound and no ℓ1 term; off with an L1Norm term
    (a refusal when forced); the user's steps and learning rate are kept."""
    prob = _ill_conditioned()
    assert "preconditioner" in dp.DPGradientDescent(1.0, 1e-6).plan(prob).parameters
    th = prob.loss.variable
    lasso = dp.Problem(prob.loss, constraint=dp.L2Ball(th, 10.0), regularizer=dp.L1Norm(th, 0.01))
    assert "preconditioner" not in dp.DPGradientDescent(1.0, 1e-6).plan(lasso).parameters
    ledger = dp.Ledger()
    with pytest.raises(MechanismError, match="L1Norm"):
        dp.DPGradientDescent(1.0, 1e-6, precondition=True, ledger=ledger).run(lasso)
    assert ledger.spent == (0.0, 0.0)
    p = dp.DPGradientDescent(1.0, 1e-6, steps=7, learning_rate=0.5).plan(prob).parameters
    assert p["steps"] == 7 and p["learning_rate"] == 0.5


def test_preconditioned_steps_reach_a_lower_loss_in_the_same_steps():
    """On an ill-conditioned problem at large ε, 50 preconditioned steps end closer to the
    optimum than 50 plain steps of 1/β (the reason for the default; plain DP-GD's own default
    T is far larger), and within a few percent of the non-private optimum's excess over 0."""
    prob = _ill_conditioned()
    backend = dp.backends.get("scipy")
    best = prob.smooth_value(np.asarray(backend.solve(backend.prepare(prob), np.zeros(prob.dim),
                                                      dp.backends.SolveOptions()).solution))
    gaps = {}
    for pre in (True, False):
        values = [prob.smooth_value(dp.DPGradientDescent(50.0, 1e-6, steps=50, precondition=pre,
                                                         ledger=dp.Ledger()).run(prob, seed=s).theta)
                  for s in range(3)]
        gaps[pre] = float(np.mean(values)) - best
    assert gaps[True] < 0.5 * gaps[False], gaps
    assert gaps[True] < 0.05 * best, gaps


def test_multinomial_runs_preconditioned():
    """A loss of k outputs: one Gram, every class column solved with the same P."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-0.5, 0.5, (600, 3))
    y = np.argmax(X @ rng.normal(size=(3, 3)) * 4, axis=1).astype(float)
    data = dp.Dataset(X, y, x_bound=1.0)
    th = dp.Variable(9)
    prob = dp.Problem(dp.MultinomialLogisticLoss(data, th, classes=3), constraint=dp.L2Ball(th, 10.0))
    rel = dp.DPGradientDescent(20.0, 1e-6, ledger=dp.Ledger()).run(prob, seed=0)
    assert "preconditioner" in rel.parameters and rel.theta.shape == (9,)
    pred = np.argmax(X @ rel.theta.reshape(3, 3), axis=1)
    assert np.mean(pred == y) > 0.8


# -- audit and mutant of the Gram release ------------------------------------------------------
N = 10
#: runs per audit: the exact-Gram mutant separates the pair almost surely, so its lower bound on ε
#: grows like log(RUNS) and 1,500 runs put it well above the claimed 2
RUNS = 1500


class ExactGramGD(dp.DPGradientDescent):
    """Mutant: the Gram released with a millionth of its noise (an exact preconditioner)."""

    def plan(self, problem, options=None):
        p = super().plan(problem, options)
        gram = p.preconditioner.gram.scaled(Fraction(1, 10**6))
        return dataclasses.replace(p, preconditioner=dataclasses.replace(p.preconditioner, gram=gram))


def _gram_pair():
    """Row 0 is (1, +1) or (0, +1), the others (0, +1): the Grams differ by B² = 1."""
    X = np.zeros((N, 1))
    X[0, 0] = 1.0
    d0 = dp.Dataset(X, np.ones(N), x_bound=1.0)
    return d0, d0.replace_row(0, [0.0], 1.0)


def _preconditioner_of(cls):
    def run(data, seed):
        th = dp.Variable(1)
        mech = cls(2.0, 1e-3, steps=1, precondition_share=0.9, precondition_ridge=1e-6, ledger=dp.Ledger())
        rel = mech.run(dp.Problem(dp.LogisticLoss(data, th)), seed=seed, keep_diagnostics=True)
        return rel.diagnostics.details["preconditioner_eigenvalues"][0]
    return run


@covers(dp.DPGradientDescent, kind="audit")
@covers(dp.DPGradientDescent, kind="mutation")
def test_preconditioner_audit_and_exact_gram_mutant():
    """What the steps see of the data through P: audited on P's eigenvalue, the noisy Gram
    passes and an exact Gram (a mutant) does not."""
    d0, d1 = _gram_pair()
    ok = audit(_preconditioner_of(dp.DPGradientDescent), d0, d1, claimed_epsilon=2.0, claimed_delta=1e-3,
               n_runs=RUNS)
    assert not ok.violates, ok.summary()
    bad = audit(_preconditioner_of(ExactGramGD), d0, d1, claimed_epsilon=2.0, claimed_delta=1e-3, n_runs=RUNS)
    assert bad.violates, bad.summary()


def test_squared_loss_steps_are_not_lengthened():
    """For the squared loss P is the exact Hessian (up to the noise), so the adaptive clip's
    step lengthening would overshoot; DP-GD's defaults at large ε must land near the
    least-squares solution, far below the zero predictor's loss."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-0.5, 0.5, (5000, 4))
    X[:, -1] = 0.5  # an intercept column
    y = np.clip(X @ np.array([0.8, -0.6, 0.4, 0.6]) + 0.05 * rng.normal(size=5000), -1, 1)
    data = dp.Dataset(X, y, x_bound=1.0, y_bound=1.0)
    th = dp.Variable(4)
    prob = dp.Problem(dp.SquaredLoss(data, th), constraint=dp.L2Ball(th, 10.0))
    exact = np.linalg.lstsq(X, y, rcond=None)[0]
    best, zero = prob.smooth_value(exact), prob.smooth_value(np.zeros(4))
    got = np.mean([prob.smooth_value(dp.DPGradientDescent(20.0, 1e-6, ledger=dp.Ledger()).run(prob, seed=s).theta)
                   for s in range(3)])
    assert "preconditioner" in dp.DPGradientDescent(20.0, 1e-6).plan(prob).parameters
    assert got - best < 0.05 * (zero - best), (got, best, zero)
