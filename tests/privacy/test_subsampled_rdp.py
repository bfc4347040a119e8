"""DP-SGD's default accounting: the Rényi DP bound of the Poisson-subsampled discrete Gaussian.

* The theorem (dpopt.privacy.subsampled_rdp, proved in docs/exact-noise.md): the bound dominates
  the exact Rényi divergence of the sampled pair (1 − q)N_ℤ(a) + qN_ℤ(b) against
  (1 − q)N_ℤ(a) + qN_ℤ(c), summed directly over ℤ and ℤ² in float64 for every admissible pair of
  integer shifts, and is nearly attained at order 2 by opposite shifts.
* The calibration: DP-SGD's σ, recomputed from the release's public parameters with mpmath
  (every moment the exact alternating sum at 150 digits, every integer order to 64, q on the
  sampler's 2⁻⁵³ grid), meets (ε, δ), and 2% less σ does not.
* Mutants: σ computed without the rounding term γ√d, and amplification at half the sampling rate,
  fail the same recomputation.
"""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest
from scipy.special import logsumexp

import dpopt as dp
from dpopt.mechanisms.gradient_descent import inclusion_probability, poisson_batch
from dpopt.privacy.accountant import GridSteps
from dpopt.privacy.grid import GridNoise
from dpopt.privacy.subsampled_rdp import SubsampledGrid, subsampled_rdp, subsampled_variance
from dpopt.testing.coverage import covers

ORDERS = tuple(range(2, 25))


# -- the theorem, against direct summation --------------------------------------------------------
def _log_gaussian(points: np.ndarray, centre: np.ndarray, s2: float) -> np.ndarray:
    """log N_ℤ(centre, s2)^d at integer points (rows), normalised over the same (wide) box."""
    log_w = -((points - centre) ** 2).sum(axis=1) / (2.0 * s2)
    return log_w - logsumexp(-(points**2).sum(axis=1) / (2.0 * s2))


def _renyi(q: float, b: np.ndarray, c: np.ndarray, s2: float, orders: tuple[int, ...]) -> np.ndarray:
    """D_α((1−q)N(0) + qN(b) ‖ (1−q)N(0) + qN(c)), summed over a box of ±(40σ + shifts)."""
    dim = b.size
    reach = int(40 * math.sqrt(s2) + 10 + np.abs(b).max() + np.abs(c).max())
    axis = np.arange(-reach, reach + 1, dtype=np.float64)
    points = np.stack(np.meshgrid(*([axis] * dim), indexing="ij"), axis=-1).reshape(-1, dim)
    base = math.log1p(-q) + _log_gaussian(points, np.zeros(dim), s2)
    log_p = np.logaddexp(base, math.log(q) + _log_gaussian(points, b, s2))
    log_q = np.logaddexp(base, math.log(q) + _log_gaussian(points, c, s2))
    return np.array([logsumexp(a * log_p + (1 - a) * log_q) / (a - 1) for a in orders])


@pytest.mark.parametrize("s2", [2, 30])
@pytest.mark.parametrize("q", [0.05, 0.5, 0.9])
@pytest.mark.parametrize("one,two", [(2, 4), (3, 5)])
def test_the_bound_dominates_the_exact_divergence_on_the_integers(s2, q, one, two):
    """Every pair of integer shifts b, c with |b|, |c| ≤ one and |b − c| ≤ two (rounded sums with a
    row of D or of D', against a the sum without it, at 0): exact D_α ≤ the bound at orders 2..24."""
    bound = subsampled_rdp(SubsampledGrid(q, one, two), s2, ORDERS)
    worst = 0.0
    for b in range(-one, one + 1):
        for c in range(-one, one + 1):
            if abs(b - c) <= two:
                exact = _renyi(q, np.array([float(b)]), np.array([float(c)]), s2, ORDERS)
                assert np.all(exact <= bound * (1 + 1e-9)), (b, c, exact / bound)
                worst = max(worst, exact[0] / bound[0])
    if s2 == 30 and two == 2 * one:  # order 2, b = −c: |L_b − L_c|² ≤ 2(|L_b − 1|² + |L_c − 1|²) is tight
        assert worst > 0.85


@pytest.mark.parametrize("b,c", [((2, 1), (-1, -2)), ((2, 1), (1, -2)), ((0, 2), (2, 0)), ((1, 1), (-2, 1))])
def test_the_bound_dominates_the_exact_divergence_on_the_plane(b, c):
    """Shifts in ℤ² that are not collinear: the bound only reads ‖b‖, ‖c‖ ≤ one and ‖b − c‖ ≤ two."""
    b, c = np.array(b, dtype=float), np.array(c, dtype=float)
    one, two = max(np.linalg.norm(b), np.linalg.norm(c)), np.linalg.norm(b - c)
    for q in (0.1, 0.6):
        bound = subsampled_rdp(SubsampledGrid(q, one, two), 4.0, ORDERS[:10])
        exact = _renyi(q, b, c, 4.0, ORDERS[:10])
        assert np.all(exact <= bound * (1 + 1e-9)), exact / bound


# -- the calibration, recomputed in mpmath ---------------------------------------------------------
def _mp_moments(tau: mp.mpf, top: int) -> list[mp.mpf]:
    """m̄_j(τ) for j ≤ top: Σ_i C(j,i)(−1)^{j−i} e^{i(i−1)τ/2} (even j), √(m_{j−1} m_{j+1}) (odd j)."""
    powers = [mp.exp(i * (i - 1) * tau / 2) for i in range(top + 2)]
    even = {j: mp.fsum(math.comb(j, i) * (-1) ** (j - i) * powers[i] for i in range(j + 1))
            for j in range(0, top + 2, 2)}
    return [even[j] if j % 2 == 0 else mp.sqrt(even[j - 1] * even[j + 1]) for j in range(top + 1)]


def _mp_epsilon(q: mp.mpf, one: mp.mpf, two: mp.mpf, s2: mp.mpf, steps: int, delta: float) -> tuple[mp.mpf, int]:
    """The theorem's ε for T steps, at every integer order 2..64 ([CKS20] Prop. 12 conversion):
    per j the smaller of the two denominators' bounds and of the two ternary splits."""
    top = 64
    m1, m2 = _mp_moments(one**2 / s2, top), _mp_moments(two**2 / s2, top)
    split = [min(2**j * m1[j], 2 * mp.exp(j * (j - 1) * one**2 / (2 * s2))) for j in range(top + 1)]
    inner = [q**j * min((1 - q) * split[j] + q * m2[j], (1 - q) ** (1 - j) * split[j]) for j in range(top + 1)]
    best = (mp.inf, 0)
    for a in range(2, top + 1):
        total = 1 + mp.fsum(math.comb(a, j) * inner[j] for j in range(2, a + 1))
        rdp = min(mp.log(total) / (a - 1), a * two**2 / (2 * s2))
        eps = steps * rdp + mp.log(1 - mp.mpf(1) / a) - (mp.log(delta) + mp.log(a)) / (a - 1)
        best = min(best, (eps, a))
    return best


EPS, DELTA, T, Q, D = 1.0, 1e-6, 200, 0.02, 5


def _problem() -> dp.Problem:
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (2000, D)) / math.sqrt(D)
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    th = dp.Variable(D)
    return dp.Problem(dp.LogisticLoss(dp.Dataset(X, y, x_bound=1.0), th), constraint=dp.L2Ball(th, 2.0))


def _independent(params: dict, scale: float = 1.0) -> tuple[mp.mpf, int]:
    """ε recomputed from a plan's public parameters alone (σ scaled by ``scale``), at 150 digits:
    the alternating sums lose about 19 + 32·log10(1/τ) ≈ 50 of them here (τ ≈ 0.11)."""
    with mp.workdps(150):
        gamma, clip = mp.mpf(params["grid_step"]), mp.mpf(params["clip_l2"])
        q = mp.mpf(Fraction(math.ceil(Fraction(params["sampling_rate"]) * 2**53), 2**53))
        s2 = (mp.mpf(params["noise_scale"]) * scale / gamma) ** 2
        return _mp_epsilon(q, clip / gamma + mp.sqrt(D), 2 * clip / gamma + mp.sqrt(D), s2, params["steps"], DELTA)


class NoRoundingSGD(dp.DPSGD):
    """Mutant: the accountant is told the sums move by C/γ and 2C/γ, forgetting the rounding's √d."""

    def plan(self, problem, options=None):
        p = super().plan(problem, options)
        gamma = p.noise.gamma
        step = SubsampledGrid(inclusion_probability(p.sampling_rate), p.clip / gamma, 2 * p.clip / gamma)
        variance = subsampled_variance(step, p.steps, self.epsilon, self.delta)[0]
        noise = GridSteps(GridNoise("gaussian", gamma, Fraction(variance)), p.noise.reach, p.steps)
        return dataclasses.replace(p, noise=noise, parameters={**p.parameters, "noise_scale": noise.sigma})


class HalfRateSGD(dp.DPSGD):
    """Mutant: amplification assumed at q/2 while the batches are drawn at q."""

    def plan(self, problem, options=None):
        p = super().plan(problem, options)
        half = dp.DPSGD(self.epsilon, self.delta, sampling_rate=p.sampling_rate / 2, steps=p.steps).plan(problem)
        return dataclasses.replace(p, noise=half.noise,
                                   parameters={**p.parameters, "noise_scale": half.noise.sigma})


@covers(dp.DPSGD, kind="mutation")
def test_dpsgd_sigma_meets_the_budget_by_an_independent_computation_and_mutants_do_not():
    params = dp.DPSGD(EPS, DELTA, sampling_rate=Q, steps=T, ledger=dp.Ledger()).plan(_problem()).parameters
    units = (params["noise_scale"] / params["grid_step"]) ** 2
    assert params["accountant"].startswith("rdp") and units == pytest.approx(round(units), rel=1e-12)
    eps, order = _independent(params)
    assert eps <= EPS and order < 64  # the optimal order is inside the recomputed range
    assert float(eps) == pytest.approx(params["rdp_epsilon"], rel=1e-6) and order == params["rdp_order"]
    assert _independent(params, scale=0.98)[0] > EPS  # the budget is used: 2% less σ overspends
    for mutant in (NoRoundingSGD, HalfRateSGD):
        bad = mutant(EPS, DELTA, sampling_rate=Q, steps=T, ledger=dp.Ledger()).plan(_problem()).parameters
        assert bad["noise_scale"] < params["noise_scale"]
        assert _independent(bad)[0] > EPS, mutant.__name__


def test_the_amplified_sigma_is_about_q_times_the_unamplified_one():
    """At q = 0.02 the proved σ is within 1.3·q of the unamplified zCDP σ (DP-GD's)."""
    prob = _problem()
    rdp = dp.DPSGD(EPS, DELTA, sampling_rate=Q, steps=T).plan(prob).parameters["noise_scale"]
    zcdp = dp.DPSGD(EPS, DELTA, sampling_rate=Q, steps=T, accountant="zcdp").plan(prob).parameters["noise_scale"]
    assert Q < rdp / zcdp < 1.3 * Q


@pytest.mark.parametrize("kw", [{"sampling_rate": 1.0}, {"sampling_rate": Q, "epsilon": 1e-3}])
def test_the_unamplified_zcdp_sigma_is_used_where_it_is_smaller(kw):
    """q = 1 (no amplification to gain) or ε below what the orders can certify at δ: the plan
    falls back to the proved zCDP σ and says so."""
    eps = kw.pop("epsilon", EPS)
    p = dp.DPSGD(eps, 1e-9, steps=T, **kw).plan(_problem()).parameters
    zcdp = dp.DPSGD(eps, 1e-9, steps=T, accountant="zcdp", **kw).plan(_problem()).parameters
    assert p["accountant"].startswith("zcdp") and p["noise_scale"] == zcdp["noise_scale"]
    assert "zcdp_rho" in p and "rdp_epsilon" not in p


def test_the_inclusion_probability_is_the_samplers():
    """numpy draws U on the multiples of 2⁻⁵³: P[U < q] = ⌈q·2⁵³⌉/2⁵³ ≥ q, exactly what the plan uses."""
    for q in (0.1, 1 / 3, 1e-300, 1.0):
        p = inclusion_probability(q)
        assert q <= p < q + 2.0**-52 and (p * 2**53).is_integer()
    rng = np.random.default_rng(0)
    assert poisson_batch(rng, 100_000, inclusion_probability(0.3)).size == pytest.approx(30_000, rel=0.02)
