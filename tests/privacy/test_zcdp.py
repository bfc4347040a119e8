"""The ρ-zCDP → (ε, δ) conversion of :mod:`dpopt.privacy.zcdp` against independent evaluations.

``zcdp_delta`` must be (i) a valid bound — never below the exact (ε, δ) curve of the
continuous Gaussian with the same ρ = Δ²/(2σ²), for which the conversion is an upper
bound — and (ii) the [CKS20] bound at its best order α, which these tests find with numpy
by brute force over a dense α grid (independent of the module's bisection).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpopt.errors import PrivacyParameterError
from dpopt.privacy.calibration import gaussian_delta
from dpopt.privacy.zcdp import zcdp_delta, zcdp_rho

CASES = [(rho, eps) for rho in (2.0, 0.5, 0.05, 1e-3) for eps in (0.1, 1.0, 3.0)]


def _grid_log_delta(rho: float, eps: float) -> float:
    """min over a dense α grid of log[exp((α−1)(αρ−ε))/(α−1)·(1−1/α)^α] (CKS20 Cor. 13),
    a coarse log-spaced pass over (1, 10^7] and then a fine linear pass around its best α."""
    def log_bound(alpha: np.ndarray) -> np.ndarray:
        return (alpha - 1) * (alpha * rho - eps) + alpha * np.log1p(-1 / alpha) - np.log(alpha - 1)

    coarse = 1 + np.logspace(-8, 7, 20_001)
    best = coarse[int(np.argmin(log_bound(coarse)))]
    fine = np.linspace(max(1 + 1e-9, 1 + (best - 1) * 0.99), 1 + (best - 1) * 1.01, 20_001)
    return float(np.min(log_bound(fine)))


@pytest.mark.parametrize(("rho", "eps"), CASES)
def test_zcdp_delta_is_the_cks20_bound_at_its_best_order(rho: float, eps: float) -> None:
    got = zcdp_delta(rho, eps)
    expected = _grid_log_delta(rho, eps)
    if expected > 0:  # a bound above 1 is reported as 1
        assert got == 1.0
        return
    if expected < math.log(1e-300):  # below the double range: 0.0 is the nearest double
        assert got <= 1e-299
        return
    assert got > 0.0
    # no worse than the grid's best order, and not below the true infimum (a mutant that drops
    # the (1 − 1/α)^α/(α − 1) factor's log, or mis-signs ε, lands far off)
    assert math.log(got) == pytest.approx(expected, abs=1e-6 * max(1.0, abs(expected)))
    assert math.log(got) <= expected + 1e-9 * max(1.0, abs(expected))


@pytest.mark.parametrize("sigma", [0.5, 1.0, 3.0, 10.0, 40.0])
@pytest.mark.parametrize("eps", [0.1, 1.0, 3.0])
def test_the_conversion_never_undercuts_the_exact_gaussian_profile(sigma: float, eps: float) -> None:
    """ρ = 1/(2σ²) is the continuous Gaussian's zCDP at sensitivity 1; its exact δ(ε) ([BW18]
    Thm. 8) is the smallest valid δ, so any correct conversion is at least that."""
    exact = gaussian_delta(sigma, 1.0, eps)
    converted = zcdp_delta(1.0 / (2.0 * sigma**2), eps)
    assert converted >= exact * (1 - 1e-12)
    if exact > 1e-250:  # and it is not loose beyond reason in this range (it tracks the profile)
        assert converted <= 30.0 * exact


@pytest.mark.parametrize(("rho", "delta"), [(0.5, 1e-5), (0.01, 1e-9), (3.0, 0.01)])
def test_the_conversion_is_at_least_as_tight_as_bun_steinke(rho: float, delta: float) -> None:
    """Bun & Steinke 2016 (Prop. 1.3): ρ-zCDP is (ρ + 2√(ρ ln(1/δ)), δ)-DP; CKS20 improves on it."""
    eps = rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))
    assert zcdp_delta(rho, eps) <= delta


def test_zcdp_delta_is_monotone() -> None:
    rhos = [1e-4, 1e-3, 0.01, 0.1, 0.5, 1.0, 4.0]
    for eps in (0.1, 1.0):
        deltas = [zcdp_delta(r, eps) for r in rhos]
        assert deltas == sorted(deltas) and deltas[0] < deltas[-1]
    for rho in (0.01, 0.5):
        deltas = [zcdp_delta(rho, e) for e in (0.0, 0.1, 0.5, 1.0, 2.0, 5.0)]
        assert deltas == sorted(deltas, reverse=True) and deltas[-1] < deltas[0]
    assert zcdp_delta(0.0, 1.0) == 0.0


@pytest.mark.parametrize(("eps", "delta"), [(0.1, 1e-6), (1.0, 1e-5), (1.0, 1 / 15682**2), (5.0, 1e-9), (0.5, 0.2)])
def test_zcdp_rho_is_the_largest_rho_meeting_delta(eps: float, delta: float) -> None:
    rho = zcdp_rho(eps, delta)
    assert rho > 0.0
    assert zcdp_delta(rho, eps) <= delta
    assert zcdp_delta(rho * (1 + 1e-6), eps) > delta  # the largest, to six digits
    # the continuous Gaussian with that ρ meets (ε, δ) by its exact profile too
    assert gaussian_delta(1.0 / math.sqrt(2.0 * rho), 1.0, eps) <= delta


def test_zcdp_rho_grows_with_epsilon_and_delta() -> None:
    by_eps = [zcdp_rho(e, 1e-6) for e in (0.1, 0.5, 1.0, 4.0)]
    by_delta = [zcdp_rho(1.0, d) for d in (1e-12, 1e-8, 1e-4, 0.1)]
    assert by_eps == sorted(by_eps) and len(set(by_eps)) == len(by_eps)
    assert by_delta == sorted(by_delta) and len(set(by_delta)) == len(by_delta)


@pytest.mark.parametrize(("eps", "delta"), [(0.0, 1e-6), (-1.0, 1e-6), (math.nan, 1e-6), (math.inf, 1e-6),
                                            (1.0, 0.0), (1.0, 1.0), (1.0, -0.1), (1.0, math.nan), ("1", 1e-6),
                                            (True, 1e-6)])
def test_zcdp_rho_refuses_bad_parameters_in_one_line(eps: object, delta: object) -> None:
    with pytest.raises(PrivacyParameterError) as err:
        zcdp_rho(eps, delta)  # type: ignore[arg-type]
    assert isinstance(err.value, ValueError) and "\n" not in str(err.value)
