"""Privacy profiles of shift couplings (dpopt.privacy.profiles) and the tight calibrations
built on them, each checked against an independent evaluation: closed forms, high-precision
arithmetic, Monte Carlo of the privacy loss, or dp-accounting's PLD accountant."""

import math

import numpy as np
import pytest

import dpopt as dp
from dpopt.errors import PrivacyParameterError
from dpopt.mechanisms.objective_perturbation import gaussian_objective_sigma
from dpopt.mechanisms.opdisc import opdisc_sigma
from dpopt.privacy.accountant import gaussian_sigma_for_composition
from dpopt.privacy.calibration import gaussian_delta
from dpopt.privacy.noisy_max import noisy_max_budget, resolve_selection
from dpopt.privacy.profiles import (
    chi_expectation,
    chi_profile_delta,
    chi_shift_sigma,
    cutoff_shift_sigma,
    smallest_scale,
)

ADULT_DELTA = 1 / 15682**2


def _chi2_closed_form(a: float, eps: float) -> float:
    """E[(1 − e^{ε − aR − a²/2})₊], R ~ χ₂ (density r e^{−r²/2}), in 50-digit arithmetic:
    e^{−r₀²/2} − e^ε [e^{−(r₀+a)²/2} − a√(2π) Q(r₀ + a)], r₀ = max(0, (ε − a²/2)/a)."""
    mpmath = pytest.importorskip("mpmath")
    with mpmath.workdps(50):
        a_, e_ = mpmath.mpf(a), mpmath.mpf(eps)
        r0 = max(mpmath.mpf(0), (e_ - a_**2 / 2) / a_)
        s = r0 + a_
        q = mpmath.erfc(s / mpmath.sqrt(2)) / 2
        return float(mpmath.exp(-r0**2 / 2) - mpmath.exp(e_) * (mpmath.exp(-s**2 / 2) - a_ * mpmath.sqrt(2 * mpmath.pi) * q))


@pytest.mark.parametrize("a,eps", [(0.5, 1.0), (0.1, 0.3), (1.0, 2.0), (0.02, 0.5), (2.0, 1.0)])
def test_chi1_profile_is_twice_the_gaussian_profile(a, eps):
    # R = |Z|: for ε ≥ a²/2 the integrand vanishes for Z ≤ 0, so δ_χ₁ = 2 δ_Gauss (Balle–Wang)
    expected = 2 * gaussian_delta(1.0 / a, 1.0, eps) if eps >= a * a / 2 else None
    value = chi_profile_delta(a, eps, 1)
    if expected is not None:
        assert value == pytest.approx(expected, rel=1e-8)
    assert 0.0 <= value <= 1.0


@pytest.mark.parametrize("a,eps", [(0.5, 1.0), (0.2, 0.25), (0.05, 0.5), (1.5, 0.3), (0.01, 0.1)])
def test_chi2_profile_matches_its_closed_form(a, eps):
    # down to δ ≈ 1e-200 (a = 0.01, ε = 0.1): relative accuracy holds in the far tail
    assert chi_profile_delta(a, eps, 2) == pytest.approx(_chi2_closed_form(a, eps), rel=1e-8)


@pytest.mark.parametrize("dof,a,eps", [(24, 0.5, 2.0), (24, 0.2, 0.5), (5, 1.0, 1.0)])
def test_chi_profile_matches_a_monte_carlo_of_the_privacy_loss(dof, a, eps):
    """Independent: the loss a‖η‖/σ + a²/2 from Gaussian vectors, not from a χ density."""
    rng = np.random.default_rng(12345)
    r = np.linalg.norm(rng.standard_normal((400_000, dof)), axis=1)
    samples = -np.expm1(np.minimum(eps - a * r - a * a / 2, 0.0))
    mc, se = samples.mean(), samples.std() / math.sqrt(samples.size)
    assert mc > 0 and abs(chi_profile_delta(a, eps, dof) - mc) < 5 * se


def test_chi_expectation_integrates_moments():
    # E[R²] = k, E[R; R ≥ 0] = √2 Γ((k+1)/2)/Γ(k/2)
    for k in (1, 2, 7, 24):
        value, err = chi_expectation(lambda r: r * r / (1 + r * r), k)
        assert 0 < value < 1 and err < 1e-8
        mean, _ = chi_expectation(lambda r: min(r / 50.0, 1.0), k)
        assert 50 * mean == pytest.approx(math.sqrt(2) * math.exp(math.lgamma((k + 1) / 2) - math.lgamma(k / 2)),
                                          rel=1e-9)


@pytest.mark.parametrize("eps,delta,dof", [(1.0, ADULT_DELTA, 24), (0.1, ADULT_DELTA, 24), (0.5, 1e-6, 2),
                                           (3.0, 1e-3, 1), (1.0, 1e-10, 100)])
def test_chi_shift_sigma_is_the_smallest_safe_scale(eps, delta, dof):
    shift = 7.0
    s = chi_shift_sigma(shift, eps, delta, dof)
    assert chi_profile_delta(shift / s, eps, dof) <= delta
    assert chi_profile_delta(shift / (s * (1 - 1e-6)), eps, dof) > delta * (1 - 1e-4)  # tight
    assert chi_profile_delta(shift / (0.999 * s), eps, dof) > delta
    # never above the cutoff argument (Gaussian concentration: P(R > √k + √(2 ln 1/δ)) ≤ δ)
    assert s < cutoff_shift_sigma(shift, eps, math.sqrt(dof) + math.sqrt(2 * math.log(1 / delta)))
    assert chi_shift_sigma(2 * shift, eps, delta, dof) == pytest.approx(2 * s, rel=1e-8)


def test_bad_arguments_are_refused():
    assert chi_shift_sigma(0.0, 1.0, 1e-6, 3) == 0.0
    with pytest.raises(PrivacyParameterError, match="dof"):
        chi_shift_sigma(1.0, 1.0, 1e-6, 0)
    with pytest.raises(PrivacyParameterError, match="delta"):
        chi_shift_sigma(1.0, 1.0, 0.0, 3)
    with pytest.raises(PrivacyParameterError, match="shift"):
        chi_shift_sigma(-1.0, 1.0, 1e-6, 3)
    with pytest.raises(PrivacyParameterError, match="shift/sigma"):
        chi_profile_delta(-0.1, 1.0, 3)
    with pytest.raises(PrivacyParameterError):
        smallest_scale(lambda s: 1.0 - s, 0.0)
    assert smallest_scale(lambda s: 2.0 - s, 0.3) == pytest.approx(2.0, rel=1e-8)


# ------------------------------------------------------------------------------ mechanisms


def test_opdisc_on_adult_moves_from_the_cutoff_to_the_profile():
    """Adult: d = 23, G = 1, D = √23, τ = 1, δ = 1/n²: σ(ε = 1) ≈ 1027 → ≈ 810."""
    new = opdisc_sigma(1.0, math.sqrt(23), 1.0, 23, 1.0, ADULT_DELTA)
    old = opdisc_sigma(1.0, math.sqrt(23), 1.0, 23, 1.0, ADULT_DELTA, calibration="borell-tis")
    assert 1020 < old < 1035 and 800 < new < 820


@pytest.mark.parametrize("eps_b", [0.25, 0.5, 1.0])
def test_objective_perturbation_gaussian_sigma_meets_the_chi2_profile(eps_b):
    delta_b = 1e-6
    s = gaussian_objective_sigma(1.0, eps_b, delta_b)  # L = 1: shift 2L = 2
    assert _chi2_closed_form(2.0 / s, eps_b) <= delta_b * (1 + 1e-9)
    assert _chi2_closed_form(2.0 / (0.999 * s), eps_b) > delta_b
    old = gaussian_objective_sigma(1.0, eps_b, delta_b, calibration="cutoff")
    assert old == pytest.approx(2.0 / (math.sqrt(2 * math.log(1 / delta_b) + 2 * eps_b)
                                       - math.sqrt(2 * math.log(1 / delta_b))))
    assert 0.82 < s / old < 0.89


def test_objective_perturbation_reports_its_calibration():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    th = dp.Variable(3)
    data = dp.Dataset(X, np.where(X[:, 0] > 0, 1.0, -1.0), x_bound=1.0)
    prob = dp.Problem(dp.LogisticLoss(data, th), constraint=dp.L2Ball(th, 5.0))
    for calibration in ("chi2-profile", "cutoff"):
        plan = dp.ObjectivePerturbation(1.0, 1e-6, noise="gaussian", calibration=calibration).plan(prob)
        P_ = plan.parameters
        assert P_["noise"] == "gaussian" and P_["calibration"] == calibration
        expected = gaussian_objective_sigma(P_["lipschitz_l2"], P_["epsilon_noise"], P_["delta_noise"],
                                            calibration=calibration) / prob.n
        assert P_["noise_scale"] == pytest.approx(expected)
    with pytest.raises(dp.errors.MechanismError, match="calibration"):
        dp.ObjectivePerturbation(1.0, 1e-6, calibration="rdp")


@pytest.mark.parametrize("steps,eps,delta", [(50, 1.0, 1e-6), (500, 0.5, 1e-8), (10, 4.0, 1e-5)])
def test_exact_gdp_composition_against_dp_accounting_pld(steps, eps, delta):
    """T full-batch Gaussian steps of equal sensitivity are exactly μ-GDP, μ = Δ√T/σ; the
    calibrated σ must sit between dp-accounting's optimistic and pessimistic PLD bounds."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    sens = 0.01
    sigma = gaussian_sigma_for_composition(sens, steps, eps, delta, "analytic")
    bounds = []
    for pessimistic in (False, True):
        one = pld.from_gaussian_mechanism(sigma, sensitivity=sens, pessimistic_estimate=pessimistic,
                                          value_discretization_interval=1e-4)
        bounds.append(one.self_compose(steps).get_delta_for_epsilon(eps))
    optimistic, pessimistic = bounds
    assert optimistic <= delta * (1 + 1e-6) and pessimistic >= delta * (1 - 1e-6)
    assert pessimistic == pytest.approx(delta, rel=0.05)
    rdp = gaussian_sigma_for_composition(sens, steps, eps, delta, "rdp")
    assert 0.85 < sigma / rdp < 0.99


def test_gaussian_iterative_mechanisms_default_to_the_zcdp_calibration():
    """Their noise is an exact discrete Gaussian on a grid: the default is zCDP, σ = Δ'√(T/(2ρ)),
    at most the RDP accountant's σ at the same Δ' (tests/privacy/test_grid_gradients.py)."""
    from dpopt.privacy.zcdp import zcdp_rho

    fw = dp.GaussianFrankWolfe(1.0, 1e-6, steps=50)
    sigma, _ = fw.noise_sigma(1.0, 1000, 50)
    assert fw.accountant == "zcdp"
    reach = 2.0 + 2.0 / 256  # Δ' = 2L + γ√d with d = 1: γ = 2L/256
    assert sigma == pytest.approx(reach * math.sqrt(50 / (2 * zcdp_rho(1.0, 1e-6))) / 1000)
    old, _ = dp.GaussianFrankWolfe(1.0, 1e-6, steps=50, accountant="rdp").noise_sigma(1.0, 1000, 50)
    assert sigma <= old
    assert dp.PrivateMirrorDescent(1.0, 1e-6).accountant == "zcdp"


def test_polytope_selection_defaults_to_gumbel_when_delta_is_positive():
    assert resolve_selection("auto", 1e-6) == "gumbel" and resolve_selection("auto", 0.0) == "laplace"
    assert resolve_selection("laplace", 1e-6) == "laplace"
    with pytest.raises(PrivacyParameterError, match="selection"):
        resolve_selection("uniform", 1e-6)
    assert dp.PolytopeFrankWolfe(1.0, 1e-6).selection == "gumbel"
    assert dp.PolytopeFrankWolfe(1.0).selection == "laplace"
    assert dp.PolytopeFrankWolfe(1.0, 1e-6, selection="laplace").selection == "laplace"
    for steps in (30, 100):  # bounded range: a quarter of the zCDP, twice the ε₀
        gumbel = noisy_max_budget(1.0, 1e-6, steps, "gumbel").step_epsilon
        laplace = noisy_max_budget(1.0, 1e-6, steps, "laplace").step_epsilon
        assert gumbel == pytest.approx(2 * laplace)
