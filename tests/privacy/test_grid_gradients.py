"""Noisy gradients on a public grid with exact discrete Gaussian noise, accounted by zCDP.

DP-GD (fixed and adaptive clip), DP-SGD, private mirror descent and Gaussian Frank–Wolfe
release every noisy gradient sum as (round(S/γ) + K)·γ with K an exact discrete Gaussian
vector ([CKS20]), then divide by n (post-processing).  These tests check that the released
sums lie on the declared grid (recorded through ``GridSteps.release``), that two centres
within one grid step give the same release bits under the same seed (and that a float
Gaussian does not), and that the zCDP accounting is right by an independent computation.
The audits and the half-noise mutants of these mechanisms are in
``tests/mechanisms/test_gradient_descent.py``, ``test_mirror_descent.py`` and
``test_frank_wolfe.py``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpopt as dp
from dpopt.errors import MechanismError
from dpopt.privacy.accountant import GridSteps, sampled_gaussian_multiplier, zcdp_gaussian_steps
from dpopt.privacy.calibration import gaussian_delta
from dpopt.privacy.zcdp import zcdp_delta

EPS, DELTA, T, D = 1.0, 1e-6, 6, 3


def _problem(n: int = 60, d: int = D, radius: float = 2.0) -> dp.Problem:
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (n, d)) / math.sqrt(d)
    y = np.where(X[:, 0] + 0.1 * rng.normal(size=n) > 0, 1.0, -1.0)
    th = dp.Variable(d)
    return dp.Problem(dp.LogisticLoss(dp.Dataset(X, y, x_bound=1.0), th), constraint=dp.L2Ball(th, radius))


MECHANISMS = {
    "dp-gd": lambda: dp.DPGradientDescent(EPS, DELTA, steps=T, clip="lipschitz", precondition=False,
                                          ledger=dp.Ledger()),
    "dp-gd-adaptive": lambda: dp.DPGradientDescent(EPS, DELTA, steps=T, precondition=False, ledger=dp.Ledger()),
    "dp-sgd": lambda: dp.DPSGD(EPS, DELTA, steps=T, sampling_rate=0.3, ledger=dp.Ledger()),
    "dp-sgd-zcdp": lambda: dp.DPSGD(EPS, DELTA, steps=T, sampling_rate=0.3, accountant="zcdp", ledger=dp.Ledger()),
    "dp-sgd-pld": lambda: dp.DPSGD(EPS, DELTA, steps=T, sampling_rate=0.3, accountant="pld", ledger=dp.Ledger()),
    "mirror-descent": lambda: dp.PrivateMirrorDescent(EPS, DELTA, steps=T, potential="euclidean", ledger=dp.Ledger()),
    "gaussian-fw": lambda: dp.GaussianFrankWolfe(EPS, DELTA, steps=T, ledger=dp.Ledger()),
}


def _is_integer(values: np.ndarray) -> bool:
    return bool(np.all(np.floor(values) == values))


@pytest.mark.parametrize("name", list(MECHANISMS))
def test_noisy_sums_lie_on_the_declared_grid(monkeypatch, name):
    """Every noisy sum a run releases is an exact integer multiple of its public grid step
    (the count of adaptive clipping: an integer), one per step, and the grid step is the
    release's ``grid_step``: a power of two with γ√d ≤ Δ/256."""
    seen: list[tuple[float, np.ndarray]] = []
    real = GridSteps.release

    def record(self, centre, units):
        out = real(self, centre, units)
        seen.append((self.gamma, out.copy()))
        return out

    monkeypatch.setattr(GridSteps, "release", record)
    release = MECHANISMS[name]().run(_problem(), seed=3)
    p = release.parameters
    sums = [(g, v) for g, v in seen if v.shape == (D,)]
    counts = [(g, v) for g, v in seen if v.shape == (1,)]
    assert len(sums) == T and len(counts) == (T if p.get("clip") == "adaptive" else 0)
    for gamma, value in sums:
        assert gamma == p["grid_step"] and _is_integer(value / gamma)
        assert math.frexp(gamma)[0] == 0.5  # a power of two: value / γ is exact
    assert all(g == 1.0 and _is_integer(v) for g, v in counts)
    sensitivity = 2.0 if p.get("clip") == "adaptive" else 2.0 * p.get("clip_l2", p.get("lipschitz_l2"))
    assert p["grid_step"] * math.sqrt(D) <= sensitivity / 256
    assert p["noise"] == "discrete-gaussian" and release.private


def _steps(dim: int = 4) -> GridSteps:
    return zcdp_gaussian_steps(2.0, dim, 3, 0.5)


def test_centres_within_one_grid_step_give_the_same_release_bits():
    """Two gradient sums that round to the same grid points, released with the same seeded
    generator, give identical bits; the set of reachable outputs is γℤ^d for both."""
    steps = _steps()
    gamma = steps.gamma
    grid_point = np.array([3.0, -7.0, 0.0, 12.0]) * gamma
    a, b = grid_point + 0.4 * gamma, grid_point - 0.3 * gamma
    out_a = [steps.release(a, u) for u in steps.draws(np.random.default_rng(11), 4)]
    out_b = [steps.release(b, u) for u in steps.draws(np.random.default_rng(11), 4)]
    assert np.array_equal(np.array(out_a), np.array(out_b))
    assert np.array(out_a).tobytes() == np.array(out_b).tobytes()
    assert _is_integer(np.array(out_a) / gamma)


def test_a_float_gaussian_fails_the_same_release_check():
    """The mutant: ``centre + σ·N(0, 1)`` in floating point with the same seed gives different
    bits for the same two centres (the low bits carry the centre, Mironov 2012)."""
    steps = _steps()
    gamma, sigma = steps.gamma, steps.sigma
    grid_point = np.array([3.0, -7.0, 0.0, 12.0]) * gamma
    a, b = grid_point + 0.4 * gamma, grid_point - 0.3 * gamma
    out_a = a + sigma * np.random.default_rng(11).normal(size=4)
    out_b = b + sigma * np.random.default_rng(11).normal(size=4)
    assert not np.array_equal(out_a, out_b)
    assert not _is_integer(out_a / gamma)


def test_noise_is_drawn_per_step_in_blocks_of_whole_steps():
    """``draws`` yields T vectors of d integers, the same whatever the block size (seeded)."""
    steps = zcdp_gaussian_steps(2.0, 5, 7, 0.5)
    units = list(steps.draws(np.random.default_rng(2), 5))
    assert len(units) == 7 and all(u.shape == (5,) and _is_integer(u) for u in units)
    assert np.std(np.concatenate(units)) > 0


def _independent_delta(rho: float, eps: float) -> float:
    """The [CKS20] conversion evaluated on a fine grid of orders α (any α is a valid bound)."""
    alpha = 1.0 + np.geomspace(1e-4, 1e4, 200_000)
    log_delta = (alpha - 1) * (alpha * rho - eps) + alpha * np.log1p(-1 / alpha) - np.log(alpha - 1)
    return float(np.exp(log_delta.min()))


@pytest.mark.parametrize("name", ["dp-gd", "dp-gd-adaptive", "dp-sgd-zcdp", "mirror-descent", "gaussian-fw"])
def test_zcdp_accounting_from_the_released_parameters(name):
    """Recompute ρ from the public σ, T, γ and Δ' = Δ + γ√d (plus the count's 1/(2σ_b²)),
    check σ²/γ² is an integer, that ρ converts to (ε, δ) by an independent evaluation of the
    [CKS20] conversion, and that the budget is nearly used (2% less σ would overspend)."""
    p = MECHANISMS[name]().plan(_problem()).parameters
    gamma = p["grid_step"]
    if name == "dp-gd-adaptive":
        sigma, reach = p["noise_multiplier"], 2.0 + gamma * math.sqrt(D)  # in units of the clip C_t
        count = 1.0 / (2.0 * p["count_sigma"] ** 2)
        assert (p["count_sigma"] ** 2) == pytest.approx(round(p["count_sigma"] ** 2), abs=1e-6)
    else:
        sigma = p.get("noise_scale_sum", p["noise_scale"])
        reach = 2.0 * p.get("clip_l2", p.get("lipschitz_l2")) + gamma * math.sqrt(D)
        count = 0.0
    assert (sigma / gamma) ** 2 == pytest.approx(round((sigma / gamma) ** 2), rel=1e-12)
    rho = T * (reach**2 / (2.0 * sigma**2) + count)
    assert p["zcdp_rho"] == pytest.approx(rho, rel=1e-9)
    assert _independent_delta(rho, EPS) <= DELTA * (1 + 1e-6)
    assert zcdp_delta(rho, EPS) <= DELTA
    tighter = T * (reach**2 / (2.0 * (0.98 * sigma) ** 2) + count / 0.98**2)
    assert _independent_delta(tighter, EPS) > DELTA


def test_dpsgd_pld_reports_its_unamplified_zcdp_and_zcdp_mode_matches_dpgd():
    """DP-SGD's opt-in ``accountant="pld"`` (the continuous subsampled Gaussian's PLD, not proved
    for discrete noise) says so, calibrates at the one-sided distance C + γ√d of the rounded sums
    with and without a row (z·(C + γ√d), not z·(2C + γ√d)/2), and reports the proved, unamplified
    ρ of its σ; ``accountant="zcdp"`` has DP-GD's σ (no amplification)."""
    prob = _problem()
    pld = MECHANISMS["dp-sgd-pld"]().plan(prob).parameters
    assert "not proved" in pld["accountant"] and "zcdp_rho" not in pld
    clip, gamma = pld["clip_l2"], pld["grid_step"]
    reach = 2.0 * clip + gamma * math.sqrt(D)
    assert pld["zcdp_rho_without_amplification"] == pytest.approx(T * reach**2 / (2 * pld["noise_scale"] ** 2))
    z = sampled_gaussian_multiplier(pld["inclusion_probability"], T, EPS, DELTA)
    sigma = z * (clip + gamma * math.sqrt(D))
    assert sigma <= pld["noise_scale"] <= math.sqrt(sigma**2 + gamma**2)  # σ²/γ² rounded up to an integer
    assert pld["row_reach_l2"] == pytest.approx(clip + gamma * math.sqrt(D))
    zcdp = MECHANISMS["dp-sgd-zcdp"]().plan(prob).parameters
    gd = MECHANISMS["dp-gd"]().plan(prob).parameters
    assert zcdp["noise_scale"] == gd["noise_scale"] > pld["noise_scale"]


@pytest.mark.parametrize("make", [
    lambda acc: dp.DPGradientDescent(EPS, DELTA, accountant=acc),
    lambda acc: dp.PrivateMirrorDescent(EPS, DELTA, accountant=acc),
    lambda acc: dp.GaussianFrankWolfe(EPS, DELTA, accountant=acc),
], ids=["dp-gd", "mirror-descent", "gaussian-fw"])
@pytest.mark.parametrize("accountant", ["analytic", "pld"])
def test_continuous_accountants_are_refused_in_one_line(make, accountant):
    with pytest.raises(MechanismError) as info:
        make(accountant)
    message = str(info.value)
    assert "\n" not in message and "discrete Gaussian" in message and "zcdp" in message


@pytest.mark.parametrize("mu", [0.5, 1.0, 2.0])
def test_dpgd_candidate_mu_stays_within_a_gdp_budget(mu):
    """PrivateSelection reads ``gdp_mu`` = √(2ρ): built for the (ε, δ) point of the μ-GDP curve,
    DP-GD's zCDP is at most μ²/2 (the Gaussian is (μ²/2)-zCDP and attains the curve, so the
    [CKS20] conversion can only ask for less ρ), which is what the PS22 accounting needs."""
    delta = gaussian_delta(1.0 / mu, 1.0, mu)
    mech = dp.DPGradientDescent(mu, delta, steps=T, clip="lipschitz", ledger=dp.Ledger())
    prob = _problem()
    assert mech.gdp_mu(prob) == pytest.approx(math.sqrt(2 * mech.plan(prob).parameters["zcdp_rho"]))
    assert mech.gdp_mu(prob) <= mu
