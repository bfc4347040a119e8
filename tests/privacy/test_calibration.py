"""Calibration of :mod:`dpopt.privacy.calibration`: parameter checks, the Laplace scale, the Gaussian mechanism."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import integrate

from dpopt.errors import PrivacyParameterError
from dpopt.privacy import (
    check_epsilon_delta,
    check_sensitivity,
    gaussian_delta,
    gaussian_sigma,
    gaussian_sigma_analytic,
    gaussian_sigma_classical,
    laplace_scale,
)

# ---------------------------------------------------------------------------------------
# calibration: parameter checks
# ---------------------------------------------------------------------------------------

BAD_EPSILONS = [0, 0.0, -1, -1e-9, math.nan, math.inf, -math.inf, True, False, "1", None, [1.0], 1j]
BAD_DELTAS = [1, 1.0, 1.5, -0.1, math.nan, math.inf, True, "0.1", None]


@pytest.mark.parametrize("epsilon", BAD_EPSILONS, ids=repr)
def test_check_epsilon_delta_refuses_bad_epsilon(epsilon: object) -> None:
    with pytest.raises(PrivacyParameterError, match=r"epsilon.*(0, inf)"):
        check_epsilon_delta(epsilon, 1e-6)  # type: ignore[arg-type]


@pytest.mark.parametrize("delta", BAD_DELTAS, ids=repr)
def test_check_epsilon_delta_refuses_bad_delta(delta: object) -> None:
    with pytest.raises(PrivacyParameterError, match=r"delta.*\[0, 1\)"):
        check_epsilon_delta(1.0, delta)  # type: ignore[arg-type]


def test_check_epsilon_delta_accepts_and_converts() -> None:
    eps, delta = check_epsilon_delta(np.float32(0.5), np.float64(1e-6))
    assert (eps, delta) == (pytest.approx(0.5), 1e-6)
    assert type(eps) is float and type(delta) is float
    assert check_epsilon_delta(2, 0) == (2.0, 0.0)
    with pytest.raises(PrivacyParameterError, match=r"delta must be in \(0, 1\)"):
        check_epsilon_delta(1.0, 0.0, allow_zero_delta=False)
    assert check_epsilon_delta(1.0, 1e-300, allow_zero_delta=False) == (1.0, 1e-300)


def test_errors_are_value_errors() -> None:
    with pytest.raises(ValueError):
        check_epsilon_delta(-1.0, 0.0)


@pytest.mark.parametrize("bad", [-1.0, math.nan, math.inf, True, "1"], ids=repr)
def test_sensitivity_refusals(bad: object) -> None:
    with pytest.raises(PrivacyParameterError, match="sensitivity"):
        check_sensitivity(bad)  # type: ignore[arg-type]
    with pytest.raises(PrivacyParameterError, match="sensitivity_l2"):
        gaussian_sigma(bad, 1.0, 1e-6)  # type: ignore[arg-type]
    with pytest.raises(PrivacyParameterError, match="sensitivity_l1"):
        laplace_scale(bad, 1.0)  # type: ignore[arg-type]


def test_laplace_scale() -> None:
    assert laplace_scale(2.0, 0.5) == 4.0
    assert laplace_scale(0.0, 0.5) == 0.0
    with pytest.raises(PrivacyParameterError, match="epsilon"):
        laplace_scale(1.0, 0.0)


# ---------------------------------------------------------------------------------------
# calibration: the Gaussian mechanism
# ---------------------------------------------------------------------------------------


def test_classical_formula_and_range() -> None:
    sigma = gaussian_sigma_classical(2.0, 0.5, 1e-5)
    assert sigma == pytest.approx(2.0 * math.sqrt(2 * math.log(1.25e5)) / 0.5, rel=1e-14)
    for eps in (1.0, 1.5, 10.0):
        with pytest.raises(PrivacyParameterError, match="analytic"):
            gaussian_sigma_classical(1.0, eps, 1e-5)
        with pytest.raises(PrivacyParameterError, match="analytic"):
            gaussian_sigma(1.0, eps, 1e-5, method="classical")
    with pytest.raises(PrivacyParameterError, match="delta"):
        gaussian_sigma_classical(1.0, 0.5, 0.0)


def _profile_by_integration(sigma: float, sens: float, eps: float) -> float:
    """δ(ε) = E_{L ~ N(μ²/2, μ²)} [(1 − e^{ε − L})_+], μ = Δ/σ (the privacy loss L)."""
    mu = sens / sigma
    mean, sd = mu * mu / 2.0, mu

    def integrand(loss: float) -> float:
        dens = math.exp(-0.5 * ((loss - mean) / sd) ** 2) / (sd * math.sqrt(2.0 * math.pi))
        return -math.expm1(eps - loss) * dens

    value, _ = integrate.quad(integrand, eps, mean + 40.0 * sd, epsabs=0.0, epsrel=1e-11, limit=200)
    return value


@pytest.mark.parametrize(
    ("sigma", "sens", "eps"),
    [(1.0, 1.0, 0.5), (3.0, 2.0, 0.1), (0.5, 1.0, 3.0), (0.3, 1.0, 10.0), (20.0, 1.0, 0.01)],
)
def test_gaussian_delta_matches_numeric_integration(sigma: float, sens: float, eps: float) -> None:
    expected = _profile_by_integration(sigma, sens, eps)
    assert expected > 1e-12
    assert gaussian_delta(sigma, sens, eps) == pytest.approx(expected, rel=1e-8)


def test_gaussian_delta_matches_monte_carlo() -> None:
    # Outputs N(μ, 1) vs N(0, 1); privacy loss L(y) = μ y − μ²/2.  δ = E_P[(1 − e^{ε−L})_+].
    mu, eps = 1.0, 0.5
    rng = np.random.default_rng(12345)
    y = rng.normal(mu, 1.0, size=400_000)
    loss = mu * y - mu * mu / 2.0
    samples = np.maximum(0.0, -np.expm1(eps - loss))
    estimate, stderr = samples.mean(), samples.std() / math.sqrt(samples.size)
    assert abs(gaussian_delta(1.0 / mu, 1.0, eps) - estimate) < 5.0 * stderr


def test_gaussian_delta_against_dp_accounting() -> None:
    mech = pytest.importorskip("dp_accounting.pld.privacy_loss_mechanism")
    for sigma, sens, eps in [(2.0, 1.0, 0.5), (1.0, 3.0, 2.0), (0.7, 1.0, 4.0)]:
        loss = mech.GaussianPrivacyLoss(standard_deviation=sigma, sensitivity=sens)
        assert gaussian_delta(sigma, sens, eps) == pytest.approx(
            loss.get_delta_for_epsilon(eps), rel=1e-9, abs=1e-15
        )


def test_gaussian_delta_edge_cases_and_stability() -> None:
    assert gaussian_delta(1.0, 0.0, 1.0) == 0.0
    assert gaussian_delta(0.0, 1.0, 1.0) == 1.0
    # ε = 0: total variation distance between N(0, σ²) and N(Δ, σ²) = 2Φ(Δ/2σ) − 1.
    assert gaussian_delta(1.0, 1.0, 0.0) == pytest.approx(math.erf(0.5 / math.sqrt(2.0)), rel=1e-13)
    with warnings.catch_warnings(), np.errstate(all="raise"):
        warnings.simplefilter("error")
        for eps in (50.0, 700.0, 710.0, 1e4, 1e8):
            for sigma in (1e-3, 0.05, 1.0, 100.0):
                value = gaussian_delta(sigma, 1.0, eps)
                assert 0.0 <= value <= 1.0 and math.isfinite(value)
        # Far tail at large ε: accurate, not flushed to zero (50-digit value 1.92143275611008e-252).
        assert gaussian_delta(0.045, 1.0, 1000.0) == pytest.approx(1.92143275611008e-252, rel=1e-11)
    values = [gaussian_delta(s, 1.0, 1.0) for s in np.geomspace(0.05, 20.0, 60)]
    assert all(b < a or b == a == 1.0 for a, b in zip(values[:-1], values[1:], strict=True))
    for bad_sigma in (-1.0, math.nan, math.inf):
        with pytest.raises(PrivacyParameterError, match="sigma"):
            gaussian_delta(bad_sigma, 1.0, 1.0)
    with pytest.raises(PrivacyParameterError, match="epsilon"):
        gaussian_delta(1.0, 1.0, -0.1)


EPSILONS = [0.01, 0.1, 0.5, 0.99, 1.0, 2.0, 10.0]
DELTAS = [1e-10, 1e-6, 1e-3, 0.1]
SENSITIVITIES = [0.5, 1.0, 7.0]


@pytest.mark.parametrize("eps", EPSILONS)
@pytest.mark.parametrize("delta", DELTAS)
def test_analytic_sigma_is_tight_and_safe(eps: float, delta: float) -> None:
    for sens in SENSITIVITIES:
        sigma = gaussian_sigma_analytic(sens, eps, delta)
        assert gaussian_delta(sigma, sens, eps) <= delta
        assert gaussian_delta(0.999 * sigma, sens, eps) > delta
        assert gaussian_delta(sigma * (1 - 1e-9), sens, eps) > delta * (1 - 1e-6)
        # σ scales linearly with the sensitivity.
        assert sigma == pytest.approx(sens * gaussian_sigma_analytic(1.0, eps, delta), rel=1e-10)
        if eps < 1.0:
            assert sigma <= gaussian_sigma_classical(sens, eps, delta)


def test_analytic_sigma_extreme_parameters() -> None:
    for eps, delta in [
        (1e-4, 1e-12),
        (0.05, 1e-100),
        (50.0, 1e-300),
        (500.0, 0.5),
        (1e3, 1e-6),
        (1.0, 0.999),
    ]:
        sigma = gaussian_sigma_analytic(1.0, eps, delta)
        assert math.isfinite(sigma) and sigma > 0.0
        assert gaussian_delta(sigma, 1.0, eps) <= delta
        assert gaussian_delta(0.999 * sigma, 1.0, eps) > delta


def test_analytic_sigma_against_high_precision() -> None:
    mpmath = pytest.importorskip("mpmath")
    with mpmath.workdps(50):

        def exact(sigma: float, eps: float) -> object:
            s, e = mpmath.mpf(sigma), mpmath.mpf(eps)
            return mpmath.ncdf(1 / (2 * s) - e * s) - mpmath.exp(e) * mpmath.ncdf(
                -1 / (2 * s) - e * s
            )

        for eps, delta in [(0.01, 1e-10), (1.0, 1e-6), (10.0, 1e-3), (3.0, 1e-200), (1e-6, 1e-30)]:
            sigma = gaussian_sigma_analytic(1.0, eps, delta)
            assert exact(sigma, eps) <= delta  # safe in exact arithmetic, not just in floats
            assert exact(sigma * (1 - 1e-7), eps) > delta  # and tight


def test_gaussian_sigma_dispatch() -> None:
    assert gaussian_sigma(1.0, 0.5, 1e-5) == gaussian_sigma_analytic(1.0, 0.5, 1e-5)
    assert gaussian_sigma(1.0, 0.5, 1e-5, method="classical") == gaussian_sigma_classical(
        1.0, 0.5, 1e-5
    )
    assert gaussian_sigma(0.0, 0.5, 1e-5) == 0.0
    assert gaussian_sigma(0.0, 5.0, 1e-5) == 0.0
    with pytest.raises(PrivacyParameterError, match="analytic.*classical"):
        gaussian_sigma(1.0, 0.5, 1e-5, method="rdp")  # type: ignore[arg-type]
    with pytest.raises(PrivacyParameterError, match="delta"):
        gaussian_sigma(1.0, 1.0, 0.0)
    with pytest.raises(PrivacyParameterError, match="tol"):
        gaussian_sigma_analytic(1.0, 1.0, 1e-5, tol=0.0)
