"""The exact samplers of :mod:`dpopt.privacy.exact` against their probability mass functions,
their bit sources, and their privacy profiles against independent evaluations.

The goodness-of-fit tests use fixed seeds (so they are deterministic) and each also shows it
has power: the same draws are rejected against a mutant distribution with a different scale.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from scipy import stats

from dpopt.errors import InvalidParameterError
from dpopt.privacy.calibration import gaussian_delta
from dpopt.privacy.exact import (
    ExactSampler,
    bernoulli_exp,
    discrete_gaussian_delta,
    discrete_gaussian_pmf,
    discrete_laplace_epsilon,
    discrete_laplace_pmf,
)
from dpopt.testing.entropy import count_os_entropy, refuse_seeded_generators, route_os_entropy

REJECT = 1e-4  # p-value below which a fit is rejected


def _gauss_pmf(support: np.ndarray, sigma2: float) -> np.ndarray:
    """P[X = x] of N_ℤ(0, σ²), normalised over ±60σ (an independent, direct computation)."""
    reach = int(60 * math.sqrt(sigma2)) + 60
    norm = float(np.sum(np.exp(-np.arange(-reach, reach + 1, dtype=float) ** 2 / (2 * sigma2))))
    return np.exp(-support.astype(float) ** 2 / (2 * sigma2)) / norm


def _laplace_pmf(support: np.ndarray, t: float) -> np.ndarray:
    reach = int(80 * t) + 80
    norm = float(np.sum(np.exp(-np.abs(np.arange(-reach, reach + 1, dtype=float)) / t)))
    return np.exp(-np.abs(support.astype(float)) / t) / norm


def _chi2_pvalue(draws: np.ndarray, pmf: np.ndarray, support: np.ndarray) -> float:
    """χ² p-value of ``draws`` against ``pmf`` on the symmetric range ``support`` = {−k..k},
    the end cells being x ≤ −k and x ≥ k (each with half the mass outside the range)."""
    n, k = draws.size, int(support[-1])
    observed = np.array([np.sum(np.clip(draws, -k, k) == x) for x in support], dtype=float)
    expected = n * pmf
    outside = n - expected.sum()
    expected[0] += outside / 2
    expected[-1] += outside / 2
    assert expected.min() >= 5.0
    return float(stats.chisquare(observed, expected).pvalue)


def _support(draws_n: int, pmf_of: object, limit: int) -> np.ndarray:
    """The largest symmetric range {−k..k} (k ≤ limit) whose cells all expect ≥ 5 draws."""
    k = 0
    while k < limit and draws_n * pmf_of(np.array([k + 1]))[0] >= 5.0:  # type: ignore[operator]
        k += 1
    return np.arange(-k, k + 1)


@pytest.mark.parametrize("sigma2", [Fraction(1, 2), 2, Fraction(37, 3), 30.25])
def test_discrete_gaussian_fits_its_pmf_and_not_a_wider_one(sigma2: object) -> None:
    draws = ExactSampler(seed=11).discrete_gaussian(sigma2, 3000)
    s2 = float(sigma2)  # type: ignore[arg-type]
    support = _support(draws.size, lambda x: _gauss_pmf(x, s2), 60)
    assert _chi2_pvalue(draws, _gauss_pmf(support, s2), support) > REJECT
    # power: the same draws against σ² scaled by 1.5 (a sampler off by that much is caught)
    assert _chi2_pvalue(draws, _gauss_pmf(support, 1.5 * s2), support) < REJECT


@pytest.mark.parametrize("t", [Fraction(1, 3), 1, Fraction(5, 2), 6.0])
def test_discrete_laplace_fits_its_pmf_and_not_a_wider_one(t: object) -> None:
    draws = ExactSampler(seed=5).discrete_laplace(t, 3000)
    tt = float(t)  # type: ignore[arg-type]
    support = _support(draws.size, lambda x: _laplace_pmf(x, tt), 60)
    assert _chi2_pvalue(draws, _laplace_pmf(support, tt), support) > REJECT
    assert _chi2_pvalue(draws, _laplace_pmf(support, 1.5 * tt), support) < REJECT


@pytest.mark.parametrize("law", ["gaussian", "laplace"])
def test_small_calls_take_the_scalar_path_and_fit_the_same_law(law: str) -> None:
    """Calls of a few draws (what one release of a low-dimensional vector asks for) use the scalar
    algorithms; 150 calls of 20 draws must fit the pmf like one vectorised call does."""
    sampler = ExactSampler(seed=21)
    if law == "gaussian":
        draws = np.concatenate([sampler.discrete_gaussian(Fraction(37, 3), 20) for _ in range(150)])
        pmf_of = lambda x: _gauss_pmf(x, 37 / 3)  # noqa: E731
    else:
        draws = np.concatenate([sampler.discrete_laplace(Fraction(5, 2), 20) for _ in range(150)])
        pmf_of = lambda x: _laplace_pmf(x, 2.5)  # noqa: E731
    support = _support(draws.size, pmf_of, 60)
    assert _chi2_pvalue(draws, pmf_of(support), support) > REJECT


@pytest.mark.slow
@pytest.mark.parametrize("sigma2", [Fraction(1, 5), 3, 400, Fraction(10**6, 7)])
def test_discrete_gaussian_fits_its_pmf_over_many_draws(sigma2: object) -> None:
    draws = ExactSampler(seed=2).discrete_gaussian(sigma2, 200_000)
    s2 = float(sigma2)  # type: ignore[arg-type]
    if s2 > 1e4:  # bin a wide distribution into 50 equiprobable-ish cells of the integers
        edges = np.unique(np.round(stats.norm.ppf(np.linspace(0, 1, 51)[1:-1], scale=math.sqrt(s2))))
        cells = np.concatenate(([-np.inf], edges, [np.inf]))
        reach = int(40 * math.sqrt(s2))
        xs = np.arange(-reach, reach + 1)
        pmf = _gauss_pmf(xs, s2)
        idx = np.searchsorted(cells, xs, side="right") - 1
        expected = np.bincount(idx, weights=pmf, minlength=len(cells) - 1) * draws.size
        observed = np.bincount(np.searchsorted(cells, draws, side="right") - 1, minlength=len(cells) - 1)
        assert stats.chisquare(observed, expected * observed.sum() / expected.sum()).pvalue > REJECT
        return
    support = _support(draws.size, lambda x: _gauss_pmf(x, s2), 200)
    assert _chi2_pvalue(draws, _gauss_pmf(support, s2), support) > REJECT


@pytest.mark.slow
@pytest.mark.parametrize("t", [Fraction(1, 7), 2, 25])
def test_discrete_laplace_fits_its_pmf_over_many_draws(t: object) -> None:
    draws = ExactSampler(seed=3).discrete_laplace(t, 200_000)
    tt = float(t)  # type: ignore[arg-type]
    support = _support(draws.size, lambda x: _laplace_pmf(x, tt), 400)
    assert _chi2_pvalue(draws, _laplace_pmf(support, tt), support) > REJECT


def test_mean_and_variance_match_the_exact_moments() -> None:
    n = 4000
    for sigma2 in (Fraction(9, 4), 100):
        draws = ExactSampler(seed=1).discrete_gaussian(sigma2, n).astype(float)
        xs = np.arange(-2000, 2001)
        var = float(np.sum(xs.astype(float) ** 2 * _gauss_pmf(xs, float(sigma2))))
        assert var <= float(sigma2) * (1 + 1e-12)  # CKS20: its variance is at most σ²
        assert abs(draws.mean()) < 5 * math.sqrt(var / n)
        assert abs(draws.var() - var) < 5 * var * math.sqrt(2.0 / n) * 1.5  # kurtosis slack
    t = 3.0
    q = math.exp(-1 / t)
    var = 2 * q / (1 - q) ** 2
    draws = ExactSampler(seed=4).discrete_laplace(Fraction(3), n).astype(float)
    assert abs(draws.mean()) < 5 * math.sqrt(var / n)
    assert abs(draws.var() - var) < 5 * var * math.sqrt(5.0 / n)  # Laplace kurtosis ≈ 6


@pytest.mark.parametrize("gamma", [0, 0.3, 1, 2.5, 40, Fraction(1, 3)])
def test_bernoulli_exp_has_success_probability_exp_minus_gamma(gamma: object) -> None:
    """A binomial test against exp(−γ), and (power) a rejection of exp(−1.1γ) by the same trials."""
    n = 10_000
    g = float(gamma)  # type: ignore[arg-type]
    hits = sum(bernoulli_exp(gamma, seed=s) for s in range(n))
    assert stats.binomtest(hits, n, math.exp(-g)).pvalue > REJECT
    if 0.0 < g < 10.0:  # a sampler off by 10% in γ is caught (at γ = 40 both laws give 0 hits)
        assert stats.binomtest(hits, n, math.exp(-1.1 * g)).pvalue < REJECT


def test_the_secure_default_reads_the_os_and_no_seeded_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    refuse_seeded_generators(monkeypatch, ("default_rng", "PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64",
                                           "Generator"), "a seeded stream was used")
    calls = count_os_entropy(monkeypatch)
    sampler = ExactSampler()
    assert sampler.secure
    draws = sampler.discrete_gaussian(50, 200)
    draws2 = sampler.discrete_laplace(Fraction(7, 2), 200)
    assert calls["bytes"] >= 1
    assert draws.dtype == np.int64 and draws2.dtype == np.int64 and draws.size == draws2.size == 200


def test_every_bit_of_the_secure_default_comes_from_the_os(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the OS entropy replaced by a fixed byte stream the secure sampler's output is a
    function of that stream alone (the same stream twice, the same draws; another, others)."""
    def draws(stream_seed: int) -> list[int]:
        stream = random.Random(stream_seed)
        route_os_entropy(monkeypatch, stream.randbytes)
        sampler = ExactSampler()
        return [*sampler.discrete_gaussian(Fraction(1000, 3), 50).tolist(),
                *sampler.discrete_laplace(2, 50).tolist(), bernoulli_exp(Fraction(1, 2))]

    assert draws(1) == draws(1)
    assert draws(1) != draws(2)


def test_a_seeded_run_is_reproducible_bit_for_bit(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(n: int) -> bytes:
        raise AssertionError("the OS entropy was read by a seeded sampler")

    route_os_entropy(monkeypatch, refuse)
    a = ExactSampler(seed=2024)
    b = ExactSampler(seed=2024)
    assert not a.secure
    first = (a.discrete_gaussian(Fraction(10**6, 3), 300), a.discrete_laplace(0.3, 300),
             a.discrete_gaussian(10**12, 300))
    second = (b.discrete_gaussian(Fraction(10**6, 3), 300), b.discrete_laplace(0.3, 300),
              b.discrete_gaussian(10**12, 300))
    assert all(x.tobytes() == y.tobytes() for x, y in zip(first, second, strict=True))
    assert not np.array_equal(first[0], ExactSampler(seed=2025).discrete_gaussian(Fraction(10**6, 3), 300))
    assert [bernoulli_exp(0.5, seed=s) for s in range(64)] == [bernoulli_exp(0.5, seed=s) for s in range(64)]


def test_huge_scales_return_exact_python_integers() -> None:
    draws = ExactSampler(seed=0).discrete_laplace(2**80, 20)
    assert draws.dtype == object and all(isinstance(v, int) for v in draws)
    assert max(abs(v) for v in draws) > np.iinfo(np.int64).max  # beyond int64: nothing rounded
    assert ExactSampler(seed=0).discrete_gaussian(3, 0).shape == (0,)


@pytest.mark.parametrize("bad", [0, -1, Fraction(-1, 2), float("nan"), float("inf"), -0.0, "2", True, None])
def test_bad_scales_are_refused_in_one_line(bad: object) -> None:
    sampler = ExactSampler(seed=0)
    for call in (lambda: sampler.discrete_gaussian(bad, 3), lambda: sampler.discrete_laplace(bad, 3)):
        with pytest.raises(InvalidParameterError) as err:
            call()
        assert isinstance(err.value, ValueError) and "\n" not in str(err.value)


@pytest.mark.parametrize("size", [-1, 2.5, "3", None, True])
def test_bad_sizes_and_seeds_are_refused_in_one_line(size: object) -> None:
    with pytest.raises(InvalidParameterError, match="size") as err:
        ExactSampler(seed=0).discrete_gaussian(1, size)
    assert "\n" not in str(err.value)
    with pytest.raises(InvalidParameterError, match="seed"):
        ExactSampler(seed=1.5)  # type: ignore[arg-type]


def _pld_delta(epsilon: float, sensitivity: int, sigma2: float) -> float:
    """δ(ε) = Σ_y max(0, p(y) − e^ε p(y − Δ)) over a wide integer range, at 50 digits (mpmath):
    the privacy loss distribution computed directly, not through CKS20 Thm. 7's formula."""
    mpmath.mp.dps = 50
    reach = int(60 * math.sqrt(sigma2)) + 60 + sensitivity
    s2 = mpmath.mpf(sigma2)
    weights = {y: mpmath.exp(-mpmath.mpf(y) ** 2 / (2 * s2)) for y in range(-reach - sensitivity, reach + 1)}
    norm = mpmath.fsum(weights[y] for y in range(-reach, reach + 1))
    e = mpmath.exp(epsilon)
    total = mpmath.fsum(max(mpmath.mpf(0), weights[y] - e * weights[y - sensitivity])
                        for y in range(-reach, reach + 1))
    return float(total / norm)


@pytest.mark.parametrize(("epsilon", "sensitivity", "sigma2"),
                         [(0.5, 1, 1.0), (1.0, 2, 4.0), (0.0, 1, 2.5), (2.0, 1, 0.3), (0.3, 3, 20.0),
                          (1.0, 3, 100.0), (2.0, 3, 7.5), (0.1, 1, 1000.0), (1.0, 1, 1178.0)])
def test_discrete_gaussian_delta_matches_the_direct_privacy_loss_sum(epsilon: float, sensitivity: int,
                                                                    sigma2: float) -> None:
    expected = _pld_delta(epsilon, sensitivity, sigma2)
    got = discrete_gaussian_delta(epsilon, sensitivity, sigma2)
    assert got == pytest.approx(expected, rel=1e-9, abs=1e-300)
    assert got >= expected * (1 - 1e-12)  # an upper bound, up to float rounding


def test_discrete_gaussian_delta_approaches_the_continuous_gaussian_for_large_sigma() -> None:
    gaps = []
    for sigma in (5.0, 20.0, 80.0):
        eps = 2.0 / sigma  # keep δ away from 0 so the relative gap is meaningful
        cont = gaussian_delta(sigma, 1.0, eps)
        gaps.append(abs(discrete_gaussian_delta(eps, 1, sigma**2) - cont) / cont)
    assert gaps[-1] < 1e-2 and gaps[0] > gaps[1] > gaps[2]


def test_discrete_gaussian_delta_is_monotone_and_refuses_bad_input() -> None:
    deltas = [discrete_gaussian_delta(e, 1, 9.0) for e in (0.0, 0.1, 0.5, 1.0, 2.0)]
    assert deltas == sorted(deltas, reverse=True) and deltas[-1] > 0
    assert discrete_gaussian_delta(1000.0, 1, 9.0) == 0.0  # no overflow of e^ε
    for bad in (float("nan"), -0.1, float("inf")):
        with pytest.raises(InvalidParameterError):
            discrete_gaussian_delta(bad, 1, 1.0)
    with pytest.raises(InvalidParameterError):
        discrete_gaussian_delta(1.0, 0, 1.0)
    with pytest.raises(InvalidParameterError):
        discrete_gaussian_delta(1.0, 1, 0.0)


def test_discrete_laplace_epsilon_is_the_worst_log_ratio_of_its_pmf() -> None:
    for sensitivity, t in ((1, 2.0), (3, Fraction(5, 2))):
        xs = np.arange(-200, 201)
        p = _laplace_pmf(xs, float(t))
        worst = float(np.max(np.log(p[sensitivity:] / p[:-sensitivity])))  # shifted by Δ
        assert discrete_laplace_epsilon(sensitivity, t) == pytest.approx(worst, rel=1e-9)


# --- binned χ² over many draws: the cells' probabilities from an exact cdf ------------------

FAST_DRAWS = 20_000  # well under a second per law in the default run
SLOW_DRAWS = 1_000_000


def _gauss_below(edges: np.ndarray, sigma2: float) -> np.ndarray:
    """P[X < e] of N_ℤ(0, σ²) at the integers ``edges``.

    Up to σ² = 10^8 by direct summation of exp(−x²/(2σ²)) over |x| ≤ 40σ (the neglected
    mass is below 1e-340).  Beyond, by the midpoint rule P[X < e] = Φ((e − ½)/σ): the
    normaliser Σ_ℤ exp(−x²/(2σ²)) equals σ√(2π)(1 + 2Σ_m exp(−2π²σ²m²)) (Poisson summation;
    the correction underflows for σ ≥ 1), and the midpoint rule errs by at most
    max|f''|/24 ≤ 1/(12σ²) per unit cell of f = exp(−x²/(2σ²)), i.e. by less than
    1/σ² ≤ 1e-8 on any probability here — far below what 10^6 draws can see.
    """
    sigma = math.sqrt(sigma2)
    if sigma2 > 1e8:
        return np.asarray(stats.norm.cdf((edges - 0.5) / sigma), dtype=float)
    reach = int(40 * sigma) + 40
    xs = np.arange(-reach, reach + 1, dtype=float)
    weights = np.exp(-xs * xs / (2.0 * sigma2))
    cdf = np.cumsum(weights) / weights.sum()
    return np.asarray(cdf[np.clip(edges.astype(np.int64) - 1 + reach, 0, 2 * reach)], dtype=float)


def _laplace_below(edges: np.ndarray, t: float) -> np.ndarray:
    """P[X < e] of the discrete Laplace of scale t at the integers ``edges``, in closed form:
    q^{1−e}/(1 + q) for e ≤ 0 and 1 − q^e/(1 + q) for e ≥ 1, q = e^{−1/t}."""
    q = math.exp(-1.0 / t)
    e = edges.astype(float)
    return np.where(e <= 0, q ** (1.0 - e) / (1.0 + q), 1.0 - q**e / (1.0 + q))


def _binned_pvalue(draws: np.ndarray, edges: np.ndarray, below: np.ndarray) -> float:
    """χ² p-value of ``draws`` in the cells (−∞, e₁), [e₁, e₂), …, [e_m, ∞) whose exact
    probabilities follow from ``below`` = P[X < e_i]."""
    probs = np.diff(np.concatenate(([0.0], below, [1.0])))
    expected = probs * draws.size
    assert expected.min() >= 5.0, "a cell expects fewer than 5 draws: coarser edges are needed"
    observed = np.bincount(np.searchsorted(edges, draws.astype(float), side="right"), minlength=edges.size + 1)
    return float(stats.chisquare(observed, expected).pvalue)


def _edges(quantile: object, scale: float, cells: int) -> np.ndarray:
    """Integer cell edges at the quantiles of a continuous law of this scale (``quantile`` is its ppf)."""
    qs = np.linspace(0.0, 1.0, cells + 1)[1:-1]
    return np.unique(np.round(quantile(qs) * scale))  # type: ignore[operator]


GAUSS_SCALES = [Fraction(1, 2), 2, Fraction(37, 3), 30.25, 10**6, Fraction(10**6, 7), 10**12, Fraction(10**12, 3),
                Fraction(10**15, 7)]  # the last beyond 2^40: a sampler may take another code path there


def _gauss_fit(sigma2: object, n: int, seed: int) -> tuple[float, float]:
    """(p-value of the true law, p-value of σ² × 1.1) for n seeded draws."""
    draws = ExactSampler(seed=seed).discrete_gaussian(sigma2, n)
    s2 = float(sigma2)  # type: ignore[arg-type]
    edges = _edges(stats.norm.ppf, math.sqrt(s2), 40)
    return (_binned_pvalue(draws, edges, _gauss_below(edges, s2)),
            _binned_pvalue(draws, edges, _gauss_below(edges, 1.1 * s2)))


@pytest.mark.parametrize("sigma2", GAUSS_SCALES)
def test_discrete_gaussian_fits_its_exact_cdf_at_every_scale(sigma2: object) -> None:
    """20,000 draws per σ² (rational, float, 10^6 and 10^12) fit the exact law in 40 cells, and
    the same draws reject the law of σ² × 1.1 (a sampler off by 10% in variance is caught)."""
    fit, wider = _gauss_fit(sigma2, FAST_DRAWS, seed=17)
    assert fit > REJECT
    assert wider < REJECT


@pytest.mark.slow
@pytest.mark.parametrize("sigma2", GAUSS_SCALES)
def test_discrete_gaussian_fits_its_exact_cdf_over_a_million_draws(sigma2: object) -> None:
    fit, _ = _gauss_fit(sigma2, SLOW_DRAWS, seed=18)
    assert fit > REJECT


LAPLACE_SCALES = [Fraction(1, 3), 1, Fraction(7, 2), 40.5, 10**6, Fraction(10**13, 3)]


def _laplace_fit(t: object, n: int, seed: int) -> tuple[float, float]:
    draws = ExactSampler(seed=seed).discrete_laplace(t, n)
    tt = float(t)  # type: ignore[arg-type]
    edges = _edges(stats.laplace.ppf, tt, 40)
    return (_binned_pvalue(draws, edges, _laplace_below(edges, tt)),
            _binned_pvalue(draws, edges, _laplace_below(edges, 1.1 * tt)))


@pytest.mark.parametrize("t", LAPLACE_SCALES)
def test_discrete_laplace_fits_its_exact_cdf_at_every_scale(t: object) -> None:
    fit, wider = _laplace_fit(t, FAST_DRAWS, seed=23)
    assert fit > REJECT
    assert wider < REJECT


@pytest.mark.slow
@pytest.mark.parametrize("t", LAPLACE_SCALES)
def test_discrete_laplace_fits_its_exact_cdf_over_a_million_draws(t: object) -> None:
    fit, _ = _laplace_fit(t, SLOW_DRAWS, seed=24)
    assert fit > REJECT


def test_the_midpoint_cdf_used_for_huge_scales_agrees_with_direct_summation() -> None:
    """The σ² > 10^8 branch of ``_gauss_below`` (midpoint rule) against the direct sum at σ² = 10^6:
    within the bound 1/σ² its docstring relies on."""
    edges = np.array([-2500, -1000, -1, 0, 1, 700, 3000])
    direct = _gauss_below(edges, 1e6)
    midpoint = np.asarray(stats.norm.cdf((edges - 0.5) / 1000.0))
    assert np.max(np.abs(direct - midpoint)) < 1.0 / 1e6  # the stated bound 1/σ²


def test_the_library_pmfs_are_the_normalised_laws() -> None:
    """discrete_gaussian_pmf / discrete_laplace_pmf against this file's direct computations."""
    xs = np.arange(-300, 301)
    for s2 in (0.5, 37 / 3, 900.0):
        assert np.allclose(discrete_gaussian_pmf(xs, s2), _gauss_pmf(xs, s2), rtol=1e-12, atol=0)
    for t in (1 / 3, 3.5, 40.0):
        assert np.allclose(discrete_laplace_pmf(xs, t), _laplace_pmf(xs, t), rtol=1e-12, atol=0)
    assert float(np.sum(discrete_gaussian_pmf(np.arange(-20_000, 20_001), 1e6))) == pytest.approx(1.0, abs=1e-12)


def test_secure_runs_differ_from_run_to_run() -> None:
    """Two unseeded samplers (and two calls of one) give different draws: 200 draws at σ² = 10^6
    coincide with probability below 10^-400."""
    a, b = ExactSampler(), ExactSampler()
    first = a.discrete_gaussian(10**6, 200)
    assert not np.array_equal(first, b.discrete_gaussian(10**6, 200))
    assert not np.array_equal(first, a.discrete_gaussian(10**6, 200))
    assert not np.array_equal(a.discrete_laplace(10**6, 200), b.discrete_laplace(10**6, 200))
