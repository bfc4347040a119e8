"""Private Frank–Wolfe on the dual (KD19 Alg. 2), the Fenchel conjugates, and Prop. 2.

Audit pair (replace one row): θ ∈ ℝ¹, squared loss, nine rows (0, 0) and the
tenth (1, +1) in D0, (1, −1) in D1, F = Cardinality(1) (so K = lam·[−1, 1]),
ridge Λ = 200, T = 1.  The ridge keeps the public ball of every θ(s) small,
so the mechanism's Δθ = 2L/(nΛ) exceeds the true ‖θ_D(s) − θ_{D'}(s)‖ by only
≈ 10 %.  With ``release="dual"`` the output is the selected vertex ±lam: a
two-candidate exponential mechanism whose log-odds move by ≈ 0.9 ε₀/2 on
this pair (half the claim is the most two symmetric candidates can show), so
a quarter of the selection noise is refuted.  With ``release="primal"`` and a
tiny lam (so θ(ŝ) ≈ θ_D(0)) and 90 % of the budget on the recovery, the
Gaussian recovery noise is audited the same way (a third of it is refuted).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import optimize

import dpopt as dp
from dpopt.backends.registry import get as get_backend
from dpopt.backends.result import SolveOptions
from dpopt.errors import MechanismError
from dpopt.mechanisms.dual_equivalence import dual_frank_wolfe_solve, prop2_check
from dpopt.mechanisms.dual_frank_wolfe import (
    DualFrankWolfe,
    DualLoss,
    SelectionSpace,
    per_example_conjugate,
)
from dpopt.modeling.submodular import (
    CallableSetFunction,
    Cardinality,
    ChainCut,
    ConcaveCardinality,
    GroupCoverage,
    Indicator,
)
from dpopt.modeling.submodular_norms import SubmodularNorm
from dpopt.testing import audit, one_point_pair
from dpopt.testing.coverage import covers


def _data(n=40, p=6, seed=0, binary=False):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, p))
    y = np.clip(X @ rng.normal(size=p) / 2 + 0.1 * rng.normal(size=n), -1, 1)
    if binary:
        return dp.Dataset(X, np.where(y > 0, 1.0, -1.0), x_bound=1.0, x_norm="inf")
    return dp.Dataset(X, y, x_bound=1.0, x_norm="inf", y_bound=1.0)


def _problem(data, F, lam=0.1, ridge=0.2, loss=dp.SquaredLoss):
    th = dp.Variable(F.p)
    return dp.Problem(loss(data, th), regularizer=(dp.L2Squared(th, ridge), SubmodularNorm(th, F, lam)))


# ----------------------------------------------------------------------------- conjugates


@pytest.mark.parametrize("loss_cls,binary", [(dp.SquaredLoss, False), (dp.LogisticLoss, True)])
def test_per_example_conjugates_and_bracket(loss_cls, binary):
    data = _data(binary=binary)
    loss = loss_cls(data, dp.Variable(6))
    for y in (-1.0, 1.0):
        for a in (-0.7, -0.2, 0.0, 0.3) if not binary else (-0.6 * y, -0.1 * y, -0.999 * y):
            num = -optimize.minimize_scalar(lambda z, a=a, y=y: -(a * z - loss.phi(np.array([z]), np.array([y]))[0]),
                                            bounds=(-60, 60), method="bounded", options={"xatol": 1e-12}).fun
            assert per_example_conjugate(loss, np.array([a]), np.array([y]))[0] == pytest.approx(num, abs=1e-7)
    dual = DualLoss(loss, 0.3, 1e-10)
    u = np.random.default_rng(1).normal(size=6) * 0.2
    low, high = dual.conjugate(u), dual.conjugate_upper(u)
    assert low <= high + 1e-12 and high - low < 1e-12
    with pytest.raises(MechanismError, match="conjugate"):
        DualLoss(dp.HuberLoss(_data(), dp.Variable(6)), 0.3, 1e-9)


def test_dual_solve_recovers_the_primal_optimum():
    data = _data()
    F = GroupCoverage(6, [[0, 1, 2], [2, 3], [4, 5]])
    prob = _problem(data, F)
    exact = get_backend("clarabel").solve_problem(prob, SolveOptions(tolerance=1e-10)).solution
    sol = dual_frank_wolfe_solve(DualLoss(prob.loss, 0.2, 1e-11), F, 0.1)
    assert np.linalg.norm(sol.theta - exact) <= 1e-5 and sol.distance_bound < 1e-4


# ----------------------------------------------------------------------------- Prop. 2


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("loss_cls", [dp.SquaredLoss, dp.LogisticLoss])
def test_prop2_gap_below_solver_tolerance(seed, loss_cls):
    rng = np.random.default_rng(seed)
    p = 5
    F = [Cardinality(p), GroupCoverage(p, [[0, 1, 2], [2, 3], [3, 4]]), ChainCut(p, 0.3, 0.1),
         ConcaveCardinality(p, np.sqrt(np.arange(p + 1)))][seed]
    prob = _problem(_data(n=30, p=p, seed=seed, binary=loss_cls is dp.LogisticLoss), F, loss=loss_cls)
    check = prop2_check(prob, 0.1 * rng.normal(size=p))
    assert check.holds, check.summary()
    assert check.gap < 1e-5, check.summary()  # far below the certified solver tolerance
    assert check.literal_gap > 100 * check.gap  # the paper's literal "ŝ + b/n" is a different point


# ----------------------------------------------------------------------------- the mechanism


def test_selection_space_factorizes_the_exponential_mechanism():
    """Per-block Gumbel argmins sample the product exponential mechanism exactly."""
    F, lam, scale = Cardinality(3), 1.0, 0.8
    space = SelectionSpace(F, lam, 100)
    theta = np.array([0.5, -0.2, 0.1])
    rng = np.random.default_rng(0)
    def gumbel_rows(scores):  # the continuous Gumbel-max form of the exponential mechanism, per block
        return np.argmin(scores - rng.gumbel(0.0, scale, scores.shape), axis=1)

    draws = np.array([space.select(theta, gumbel_rows) for _ in range(40_000)])
    verts = np.array(list(itertools.product((1.0, -1.0), repeat=3)))
    weights = np.exp(verts @ theta * lam / scale)
    expected = weights / weights.sum()
    for v, e in zip(verts, expected, strict=True):
        freq = float(np.mean(np.all(draws == v, axis=1)))
        assert freq == pytest.approx(e, abs=4 * math.sqrt(e * (1 - e) / 40_000) + 1e-3)


@pytest.mark.parametrize("F", [Cardinality(6), Indicator(6), GroupCoverage(6, [[0, 1, 2], [2, 3], [4, 5]]),
                               ChainCut(6, 0.4, 0.1)], ids=lambda F: F.describe())
def test_nearly_noiseless_run_converges(F):
    prob = _problem(_data(n=200), F)
    exact = get_backend("clarabel").solve_problem(prob, SolveOptions(tolerance=1e-10)).solution
    r = DualFrankWolfe(1e7, 0.0, steps=400, ledger=dp.Ledger()).run(prob, seed=0)
    assert r.private and r.parameters["steps"] == 400
    assert prob.objective(r.theta) - prob.objective(exact) < 1e-3


def test_refusals():
    data = _data()
    th = dp.Variable(6)
    F = Cardinality(6)
    mech = DualFrankWolfe(1.0, 1e-6, ledger=dp.Ledger())
    with pytest.raises(MechanismError, match="L2Squared"):
        mech.run(dp.Problem(dp.SquaredLoss(data, th), regularizer=SubmodularNorm(th, F, 0.1)))
    with pytest.raises(MechanismError, match="conjugate"):
        mech.run(dp.Problem(dp.HuberLoss(data, th), regularizer=(dp.L2Squared(th, 0.1), SubmodularNorm(th, F, 0.1))))
    with pytest.raises(MechanismError, match="constraint"):
        mech.run(dp.Problem(dp.SquaredLoss(data, th), constraint=dp.L2Ball(th, 1.0),
                            regularizer=(dp.L2Squared(th, 0.1), SubmodularNorm(th, F, 0.1))))
    with pytest.raises(MechanismError, match="gumbel"):
        DualFrankWolfe(1.0, 1e-6, selection="laplace", ledger=dp.Ledger()).run(_problem(data, F))
    big = ConcaveCardinality(12, np.sqrt(np.arange(13)))
    th12 = dp.Variable(12)
    X12 = np.random.default_rng(0).uniform(-1, 1, (20, 12))
    p12 = dp.Problem(dp.SquaredLoss(dp.Dataset(X12, np.zeros(20), x_bound=1.0, x_norm="inf", y_bound=1.0), th12),
                     regularizer=(dp.L2Squared(th12, 0.1), SubmodularNorm(th12, big, 0.1)))
    with pytest.raises(MechanismError, match="neither few enough"):
        mech.run(p12)
    small = CallableSetFunction(4, lambda m: math.sqrt(m.sum()))  # enumerable: Laplace allowed
    r = DualFrankWolfe(1.0, 0.0, selection="laplace", steps=5, ledger=dp.Ledger()).run(
        _problem(_data(p=4), small), seed=0)
    assert r.parameters["enumerated_vertices"] and r.parameters["blocks"] == 1
    ledger = dp.Ledger()
    DualFrankWolfe(1.0, 1e-6, steps=3, ledger=ledger).run(_problem(data, F), seed=1)
    assert ledger.spent == pytest.approx((1.0, 1e-6))


# ----------------------------------------------------------------------------- audits

N = 10


def _pair():
    return one_point_pair(N)


def _audit_problem(data, lam):
    th = dp.Variable(1)
    return dp.Problem(dp.SquaredLoss(data, th), regularizer=(dp.L2Squared(th, 200.0),
                                                            SubmodularNorm(th, Cardinality(1), lam)))


class QuarterSelectionNoise(DualFrankWolfe):
    """Mutation: a quarter of the selection noise."""

    def selection_scale(self, sensitivity, budget):
        return super().selection_scale(sensitivity, budget) / 4


class ThirdRecoveryNoise(DualFrankWolfe):
    """Mutation: a third of the primal-recovery noise."""

    def plan(self, problem, options=None):
        import dataclasses

        p = super().plan(problem, options)
        return dataclasses.replace(p, recovery=p.recovery.scaled(1 / 3))


def _runner(cls, release):
    def run(data, seed):
        mech = cls(2.0, 0.0 if release == "dual" else 1e-3, steps=1, release=release, ledger=dp.Ledger(),
                   noise="gaussian" if release == "primal" else "auto", recovery_share=0.9)
        # primal: a tiny K makes θ(ŝ) ≈ θ_D(0), so the recovery noise is what the audit sees
        return mech.run(_audit_problem(data, 1.0 if release == "dual" else 1e-6), seed=seed).theta
    return run


@pytest.mark.parametrize("release,mutant", [("dual", QuarterSelectionNoise), ("primal", ThirdRecoveryNoise)])
@covers(DualFrankWolfe, kind="audit")
@covers(DualFrankWolfe, kind="mutation")
def test_dual_frank_wolfe_audit_and_mutation(release, mutant):
    d0, d1 = _pair()
    delta = 0.0 if release == "dual" else 1e-3
    res = audit(_runner(DualFrankWolfe, release), d0, d1, claimed_epsilon=2.0, claimed_delta=delta,
                n_runs=2000, seed=0)
    print(res.summary())
    assert not res.violates, res.summary()
    assert res.epsilon_lower > 0.25, res.summary()  # the audit has power on this pair
    bad = audit(_runner(mutant, release), d0, d1, claimed_epsilon=2.0, claimed_delta=delta, n_runs=2000, seed=0)
    print(bad.summary())
    assert bad.violates, bad.summary()


@pytest.mark.slow
@covers(DualFrankWolfe, kind="audit")
@pytest.mark.parametrize("release", ["dual", "primal"])
def test_large_dual_audits(release):
    d0, d1 = _pair()
    delta = 0.0 if release == "dual" else 1e-3
    for seed in range(3):
        res = audit(_runner(DualFrankWolfe, release), d0, d1, claimed_epsilon=2.0, claimed_delta=delta,
                    n_runs=20_000, seed=seed, n_jobs=2)
        assert not res.violates, res.summary()
