"""Objective perturbation's Jacobian/noise split chosen by the explicit risk bound.

Every share in the grid is a valid split (the noise σ is calibrated for the remaining ε by the
χ₂ privacy profile); these tests check the chosen σ against an independent evaluation of that
profile, that ``split=0.5`` is TTZ14's ε/2, and that the auto split never does worse on the bound.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

import dpopt as dp
from dpopt.errors import MechanismError
from dpopt.mechanisms.objective_perturbation import (
    SPLIT_GRID,
    auto_split,
    jacobian_split,
    risk_bound,
)


def _problem(n=2000, d=5, radius=5.0, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, d)) / math.sqrt(d)
    data = dp.Dataset(X, np.where(X[:, 0] > 0, 1.0, -1.0), x_bound=1.0)
    th = dp.Variable(d)
    return dp.Problem(dp.LogisticLoss(data, th), constraint=dp.L2Ball(th, radius))


def _profile_delta(sigma: float, shift: float, eps: float) -> float:
    """δ(ε) = E[(1 − e^{ε − aR − a²/2})₊], R ~ χ₂, a = shift/σ, by scipy's χ density (independent of
    dpopt.privacy.profiles)."""
    a = shift / sigma
    lower = max((eps - a * a / 2) / a, 0.0)
    val, _ = integrate.quad(lambda r: (1 - math.exp(eps - a * r - a * a / 2)) * stats.chi.pdf(r, 2), lower, np.inf,
                            epsabs=1e-14, limit=200)
    return val


@pytest.mark.parametrize("eps", [0.1, 1.0])
def test_auto_split_noise_meets_the_profile(eps):
    prob = _problem()
    rel = dp.ObjectivePerturbation(eps, 1e-6, noise="gaussian", ledger=dp.Ledger()).run(prob, seed=0, diagnostics=False)
    p = rel.parameters
    assert p["jacobian_share"] in SPLIT_GRID
    sigma = p["noise_scale"] * prob.n  # unnormalized σ
    shift = 2 * p["lipschitz_l2"]
    got = _profile_delta(sigma, shift, p["epsilon_noise"])
    assert got <= p["delta_noise"] * (1 + 1e-6)
    assert _profile_delta(0.97 * sigma, shift, p["epsilon_noise"]) > p["delta_noise"]  # and tight
    assert p["epsilon_jacobian"] + p["epsilon_noise"] + p["epsilon_approx"] == pytest.approx(eps)


def test_fixed_half_split_is_ttz():
    prob = _problem()
    p = dp.ObjectivePerturbation(1.0, 1e-6, split=0.5, ledger=dp.Ledger()).run(prob, seed=0, diagnostics=False).parameters
    assert p["epsilon_jacobian"] == pytest.approx((1.0 - p["epsilon_approx"]) / 2)
    assert p["zeta"] == pytest.approx(prob.smoothness / (prob.n * math.expm1(p["epsilon_jacobian"])))


def test_auto_split_minimizes_the_bound():
    from dpopt.mechanisms.objective_perturbation import gaussian_objective_sigma

    args = dict(hessian_bound=0.25, n=5000, mu0=0.0, epsilon=0.3, delta=1e-8, lipschitz=1.0, radius=10.0, dim=20)

    def bound(share):
        eps_j, zeta = jacobian_split(0.25, 5000, 0.0, 0.3, share)
        return risk_bound(gaussian_objective_sigma(1.0, 0.3 - eps_j, 1e-8), zeta, 10.0, 5000, 20)

    share = auto_split(**args, calibration="chi2-profile")
    assert bound(share) <= bound(0.5)
    assert bound(share) == pytest.approx(min(bound(s) for s in SPLIT_GRID))


def test_auto_split_falls_back_to_half_without_a_radius():
    rng = np.random.default_rng(0)
    data = dp.Dataset(rng.uniform(-1, 1, (200, 2)) / 2, np.ones(200), x_bound=1.0, y_bound=1.0)
    th = dp.Variable(2)
    prob = dp.Problem(dp.HuberLoss(data, th, h=0.1))
    p = dp.ObjectivePerturbation(1.0, 1e-6, ledger=dp.Ledger()).run(prob, solver="scipy", seed=0).parameters
    assert p["jacobian_share"] == 0.5


@pytest.mark.parametrize("bad", [0.0, 1.0, -0.1, "half", 1, float("nan")])
def test_bad_split_refused(bad):
    with pytest.raises(MechanismError, match="split"):
        dp.ObjectivePerturbation(1.0, 1e-6, split=bad)
