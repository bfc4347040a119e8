"""The public grid and its exact noise (:mod:`dpopt.privacy.grid`): the grid step, rounding onto
it, releases that are exact multiples of γ, and calibrations checked against the discrete
laws' own guarantees (the exact 1-D profile, zCDP, the discrete Laplace ε), each shown to be
the smallest integer parameter that meets the target."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from dpopt.errors import PrivacyParameterError
from dpopt.privacy.calibration import gaussian_sigma_analytic
from dpopt.privacy.exact import (
    discrete_gaussian_delta,
    discrete_gaussian_pmf,
    discrete_laplace_epsilon,
)
from dpopt.privacy.grid import (
    GRID_BITS,
    GridNoise,
    gaussian_grid_noise,
    gaussian_on_grid,
    grid_step,
    laplace_on_grid,
    on_grid,
)
from dpopt.privacy.rng import make_rng
from dpopt.privacy.sampling import gaussian_noise
from dpopt.privacy.zcdp import zcdp_delta

LIMIT = 2.0**52


def _is_power_of_two(x: float) -> bool:
    return x > 0 and math.frexp(x)[0] == 0.5


def _on_the_grid(values: np.ndarray, gamma: float) -> bool:
    """Every value is k·γ for an integer k with |k| ≤ 2^52, exactly (no rounding anywhere)."""
    units = np.asarray(values, dtype=np.float64) / gamma  # exact: γ is a power of two
    return bool(np.all(np.isfinite(units)) and np.all(units == np.rint(units))
                and np.all(np.abs(units) <= LIMIT) and np.all(units * gamma == values))


# --- the grid step ----------------------------------------------------------------------------

@pytest.mark.parametrize("sensitivity", [1.0, 0.3, 2.0**-30, 7.5, 1e6, 123456.789])
@pytest.mark.parametrize("spread", [1.0, math.sqrt(2.0), math.sqrt(23.0), 23.0, 1000.0])
def test_grid_step_is_the_largest_power_of_two_within_the_rounding_budget(sensitivity: float,
                                                                          spread: float) -> None:
    gamma = grid_step(sensitivity, spread)
    assert _is_power_of_two(gamma)
    assert gamma * spread <= sensitivity * 2.0**-GRID_BITS  # rounding adds at most Δ/256
    assert 2.0 * gamma * spread > sensitivity * 2.0**-GRID_BITS  # and no coarser power of two would do
    assert grid_step(sensitivity, spread) == gamma  # a function of the public inputs only


# --- rounding onto the grid -------------------------------------------------------------------

def test_on_grid_rounds_to_the_nearest_multiple_half_to_even() -> None:
    gamma = 2.0**-6
    rng = np.random.default_rng(0)
    values = rng.normal(scale=100.0, size=2000)
    out = on_grid(values, gamma)
    assert _on_the_grid(out, gamma)
    assert np.all(np.abs(out - values) <= gamma / 2)
    assert np.array_equal(on_grid(out, gamma), out)  # idempotent: grid points stay put
    halves = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5]) * gamma
    assert np.array_equal(on_grid(halves, gamma) / gamma, [0.0, 2.0, 2.0, -0.0, -2.0, -2.0])


def test_clamping_keeps_exact_multiples_of_gamma() -> None:
    gamma = 2.0**-10
    huge = np.array([1e300, -1e300, np.inf, -np.inf, LIMIT * gamma * 3, (LIMIT - 1) * gamma])
    out = on_grid(huge, gamma)
    assert _on_the_grid(out, gamma)
    assert list(out / gamma) == [LIMIT, -LIMIT, LIMIT, -LIMIT, LIMIT, LIMIT - 1]
    noise = GridNoise("gaussian", gamma, Fraction(10**6))
    rng, _ = make_rng(1)
    released = noise.release(np.array([1e300, -1e300, 0.0]), rng)
    assert _on_the_grid(released, gamma)


@pytest.mark.parametrize("dim", [1, 2, 7, 50])
def test_rounded_neighbours_differ_by_at_most_the_calibrated_reach(dim: int) -> None:
    """For centres with ‖a − b‖ ≤ Δ the grid integers differ by ≤ Δ/γ + √d (ℓ2) and
    ≤ Δ₁/γ + d (ℓ1): the sensitivities the calibrations use (adversarial pairs that push every
    coordinate across a rounding boundary included)."""
    rng = np.random.default_rng(dim)
    delta = 1.0
    gamma = grid_step(delta, math.sqrt(dim))
    for _ in range(200):
        a = rng.uniform(-50, 50, dim)
        step = rng.normal(size=dim)
        b = a + step / np.linalg.norm(step) * delta * rng.uniform(0.9, 1.0)
        assert np.linalg.norm(np.rint(a / gamma) - np.rint(b / gamma)) <= delta / gamma + math.sqrt(dim)
    gamma1 = grid_step(delta, float(dim))
    for _ in range(200):
        a = (rng.integers(-1000, 1000, dim) + 0.5 - 1e-9) * gamma1  # just below a boundary
        move = rng.dirichlet(np.ones(dim)) * delta
        b = a + move  # ‖b − a‖₁ = Δ₁, each coordinate pushed up, possibly across a boundary
        assert np.abs(np.rint(a / gamma1) - np.rint(b / gamma1)).sum() <= delta / gamma1 + dim


# --- releases ---------------------------------------------------------------------------------

@pytest.mark.parametrize("noise", [GridNoise("gaussian", 2.0**-8, Fraction(40_000)),
                                   GridNoise("laplace", 2.0**-8, Fraction(300)),
                                   GridNoise("gaussian", 2.0**3, Fraction(7, 3))])
def test_releases_are_exact_multiples_of_gamma_and_the_noise_has_the_exact_law(noise: GridNoise) -> None:
    rng, _ = make_rng(5)
    centre = np.random.default_rng(1).normal(scale=10.0, size=20_000)
    released = noise.release(centre, rng)
    assert released.shape == centre.shape and _on_the_grid(released, noise.gamma)
    units = (released - on_grid(centre, noise.gamma)) / noise.gamma
    assert np.all(units == np.rint(units))
    # the integer noise fits its exact law (χ² in cells holding ≥ 5 expected draws each)
    k = int(6 * math.sqrt(float(noise.param))) if noise.kind == "gaussian" else int(8 * noise.param)
    xs = np.arange(-k, k + 1)
    if noise.kind == "gaussian":
        pmf = discrete_gaussian_pmf(xs, float(noise.param))
    else:
        q = math.exp(-1.0 / float(noise.param))
        pmf = (1 - q) / (1 + q) * q ** np.abs(xs)
    edges = np.unique(np.round(np.quantile(units, np.linspace(0, 1, 31)[1:-1])))
    cells = np.searchsorted(edges, xs, side="right")
    expected = np.bincount(cells, weights=pmf, minlength=edges.size + 1) * units.size
    observed = np.bincount(np.searchsorted(edges, units, side="right"), minlength=edges.size + 1)
    assert expected.min() >= 5.0
    assert stats.chisquare(observed, expected * observed.sum() / expected.sum()).pvalue > 1e-4


def test_centres_with_the_same_grid_point_give_identical_releases_and_a_float_sampler_does_not() -> None:
    """Two centres less than half a grid step apart (same rounding): with the same seeded
    generator the releases are identical bit for bit, so nothing in the output depends on where
    the centre lies inside its cell; today's float sampler (the mutant) leaks the offset."""
    gamma = 2.0**-8
    noise = gaussian_grid_noise(0.5, gamma)
    a = np.array([0.25, -3.0, 17.125, 1e-3])
    b = a + gamma * np.array([0.3, -0.49, 0.2, 0.1])  # same nearest grid point
    assert np.array_equal(on_grid(a, gamma), on_grid(b, gamma))
    out_a = noise.release(a, make_rng(9)[0])
    out_b = noise.release(b, make_rng(9)[0])
    assert out_a.tobytes() == out_b.tobytes() and _on_the_grid(out_a, gamma)

    def float_release(centre: np.ndarray) -> np.ndarray:  # the mutant: centre + σZ in floating point
        return centre + gaussian_noise(make_rng(9)[0], noise.scale, centre.size)

    mutant_a, mutant_b = float_release(a), float_release(b)
    assert not _on_the_grid(mutant_a, gamma)
    assert mutant_a.tobytes() != mutant_b.tobytes()


def test_noise_and_units_are_integer_draws_times_gamma() -> None:
    noise = GridNoise("laplace", 2.0**-4, Fraction(9, 2))
    units = noise.units(make_rng(3)[0], 500)
    assert np.all(units == np.rint(units))
    assert np.array_equal(noise.noise(make_rng(3)[0], 500), units * noise.gamma)
    assert noise.scale == 4.5 * 2.0**-4
    assert GridNoise("gaussian", 0.5, Fraction(9)).scale == 1.5


@pytest.mark.parametrize("dim", [1, 5, 40])
def test_expected_norm_bounds_the_mean_norm_of_draws(dim: int) -> None:
    noise = GridNoise("gaussian", 2.0**-2, Fraction(25))
    draws = noise.noise(make_rng(dim)[0], 1000 * dim).reshape(1000, dim)
    norms = np.linalg.norm(draws, axis=1)
    assert norms.mean() <= noise.expected_norm(dim) + 4 * norms.std() / math.sqrt(1000)
    assert norms.mean() >= 0.9 * noise.expected_norm(dim)  # and it is not a loose bound


# --- calibrations -----------------------------------------------------------------------------

@pytest.mark.parametrize(("sensitivity", "eps", "delta"),
                         [(1.0, 1.0, 1e-6), (0.3, 0.1, 1e-9), (5.0, 3.0, 1e-3), (2.0**-20, 0.5, 1e-5)])
def test_one_dimensional_gaussian_meets_delta_by_the_exact_profile_and_is_the_smallest(
        sensitivity: float, eps: float, delta: float) -> None:
    noise = gaussian_on_grid(sensitivity, eps, delta, 1)
    assert noise.kind == "gaussian" and noise.param.denominator == 1
    assert noise.gamma == grid_step(min(sensitivity, sensitivity / eps), 1.0)
    shift = math.floor(sensitivity / noise.gamma) + 1  # the largest integer gap of rounded neighbours
    assert discrete_gaussian_delta(eps, shift, noise.param) <= delta
    assert discrete_gaussian_delta(eps, shift, noise.param - 1) > delta
    # the grid costs less than half a percent over the continuous analytic Gaussian
    assert noise.scale <= 1.005 * gaussian_sigma_analytic(sensitivity, eps, delta)


@pytest.mark.parametrize(("sensitivity", "eps", "delta", "dim"),
                         [(1.0, 1.0, 1e-6, 2), (0.3, 0.1, 1e-9, 10), (5.0, 3.0, 1e-3, 100), (1.0, 1.0, 1e-5, 23)])
def test_multi_dimensional_gaussian_meets_delta_through_zcdp_and_is_the_smallest(
        sensitivity: float, eps: float, delta: float, dim: int) -> None:
    noise = gaussian_on_grid(sensitivity, eps, delta, dim)
    assert noise.gamma == grid_step(min(sensitivity, sensitivity / eps), math.sqrt(dim))
    reach = sensitivity / noise.gamma + math.sqrt(dim)  # ℓ2 gap of rounded neighbours, grid units
    assert zcdp_delta(reach**2 / (2.0 * float(noise.param)), eps) <= delta
    assert zcdp_delta(reach**2 / (2.0 * float(noise.param - 1)), eps) > delta
    analytic = gaussian_sigma_analytic(sensitivity, eps, delta)
    assert analytic <= noise.scale <= 1.12 * analytic  # the zCDP conversion's price, bounded


@pytest.mark.parametrize(("sensitivity", "eps", "dim"), [(1.0, 1.0, 1), (0.3, 0.1, 10), (4.0, 2.0, 3)])
def test_laplace_meets_epsilon_and_is_the_smallest(sensitivity: float, eps: float, dim: int) -> None:
    noise = laplace_on_grid(sensitivity, eps, dim)
    assert noise.kind == "laplace" and noise.param.denominator == 1
    assert noise.gamma == grid_step(min(sensitivity, sensitivity / eps), float(dim))
    reach = Fraction(sensitivity) / Fraction(noise.gamma) + dim  # ℓ1 gap of rounded neighbours
    assert discrete_laplace_epsilon(reach, noise.param) <= eps
    assert discrete_laplace_epsilon(reach, noise.param - 1) > eps
    assert noise.scale <= 1.005 * sensitivity / eps


def test_a_given_sigma_on_a_given_grid_is_rounded_up_to_an_integer_parameter() -> None:
    """σ²/γ² rounded up (never down: the accountant's σ is a floor), by at most one step beyond
    the smallest integer (the core adds a 1e-12 relative guard against float error)."""
    for sigma, gamma in ((1.0, 2.0**-8), (3.7, 0.5), (1e3, 2.0**-4), (0.1, 2.0**-3)):
        noise = gaussian_grid_noise(sigma, gamma)
        assert noise.gamma == gamma and noise.param.denominator == 1
        assert noise.scale >= sigma
        smallest = math.ceil((Fraction(sigma) / Fraction(gamma)) ** 2)
        assert smallest <= noise.param <= smallest + 1


# --- refusals ---------------------------------------------------------------------------------

BAD_PAIRS = [(0.0, 1e-6), (-1.0, 1e-6), (math.nan, 1e-6), (math.inf, 1e-6), (1.0, 0.0), (1.0, 1.0),
             (1.0, -1e-3), (1.0, math.nan), ("1", 1e-6)]


@pytest.mark.parametrize(("eps", "delta"), BAD_PAIRS)
def test_bad_privacy_parameters_are_refused_in_one_line(eps: object, delta: object) -> None:
    calls = [lambda: gaussian_on_grid(1.0, eps, delta, 1), lambda: gaussian_on_grid(1.0, eps, delta, 3)]  # type: ignore[arg-type]
    if delta == 1e-6:
        calls.append(lambda: laplace_on_grid(1.0, eps, 2))  # type: ignore[arg-type]
    for call in calls:
        with pytest.raises(PrivacyParameterError) as err:
            call()
        assert isinstance(err.value, ValueError) and "\n" not in str(err.value)


@pytest.mark.parametrize("sensitivity", [0.0, -1.0, math.nan, math.inf, "1"])
def test_bad_sensitivities_are_refused_in_one_line(sensitivity: object) -> None:
    for call in (lambda: gaussian_on_grid(sensitivity, 1.0, 1e-6, 1),  # type: ignore[arg-type]
                 lambda: laplace_on_grid(sensitivity, 1.0, 1),  # type: ignore[arg-type]
                 lambda: grid_step(sensitivity, 1.0)):  # type: ignore[arg-type]
        with pytest.raises(PrivacyParameterError) as err:
            call()
        assert "\n" not in str(err.value)


@pytest.mark.parametrize("dim", [0, -1, 2.5, True, "3"])
def test_bad_dimensions_are_refused_in_one_line(dim: object) -> None:
    for call in (lambda: gaussian_on_grid(1.0, 1.0, 1e-6, dim),  # type: ignore[arg-type]
                 lambda: laplace_on_grid(1.0, 1.0, dim)):  # type: ignore[arg-type]
        with pytest.raises(PrivacyParameterError) as err:
            call()
        assert "\n" not in str(err.value)


@pytest.mark.parametrize(("sigma", "gamma"), [(0.0, 0.5), (math.nan, 0.5), (-1.0, 0.5), (1.0, 0.0), (1.0, -0.5),
                                              (1.0, 0.3), (1.0, math.inf)])
def test_bad_given_sigma_or_grid_is_refused_in_one_line(sigma: float, gamma: float) -> None:
    with pytest.raises(PrivacyParameterError) as err:
        gaussian_grid_noise(sigma, gamma)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("spread", [0.0, -1.0, math.nan, 0.5])
def test_grid_step_refuses_a_spread_below_one(spread: float) -> None:
    with pytest.raises(PrivacyParameterError) as err:
        grid_step(1.0, spread)
    assert "\n" not in str(err.value)
