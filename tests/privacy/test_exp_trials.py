"""The exact trials U < e^{−x} of :mod:`dpopt.privacy.exp_trials` that the vectorised samplers and
the exponential mechanism rest on.

The float path is checked against its proved error bound by an independent computation
(mpmath at 50 digits); the exact path is checked on its own, with the float path switched off,
by the same law tests the samplers pass; the exponential mechanism's envelope is checked to
bound the weights from above, exactly.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from scipy import stats

from dpopt.privacy import exp_trials
from dpopt.privacy.bits import BitStream
from dpopt.privacy.exact import ExactSampler
from dpopt.privacy.exact_selection import _envelope, dyadic_floor, exponential_mechanism

REJECT = 1e-4


def _rel_error(values: np.ndarray, xs: np.ndarray) -> float:
    mpmath.mp.dps = 50
    return max(abs(mpmath.mpf(float(v)) / mpmath.exp(-mpmath.mpf(float(x))) - 1) for v, x in zip(values, xs, strict=True))


def test_exp_neg_is_within_its_proved_bound_everywhere_it_is_used() -> None:
    """2^-46 relative (the docstring's bound) at random points, at every table knot and next to it."""
    rng = np.random.default_rng(0)
    knots = np.arange(0, 64 * 256 + 1, 37) / 256.0
    xs = np.concatenate([rng.uniform(0, 64, 1500), rng.uniform(0, 1e-3, 100), knots,
                         np.nextafter(knots, np.inf), np.nextafter(knots[1:], 0.0), [0.0, 64.0]])
    got = exp_trials.exp_neg(xs)
    assert float(_rel_error(got, xs)) < 2.0**-46
    # the scalar form is the same computation: the same doubles
    assert [exp_trials.exp_neg_one(float(x)) for x in xs[:300]] == got[:300].tolist()


def test_the_table_is_within_its_proved_bound() -> None:
    """Every 5th entry of e^{−k/256} (and the last) within 3.0001·2^-53 relative, as _table's notes prove."""
    table = exp_trials._table()
    ks = np.append(np.arange(0, table.size, 5), table.size - 1)
    mpmath.mp.dps = 40
    worst = max(abs(mpmath.mpf(float(table[k])) / mpmath.exp(-mpmath.mpf(int(k)) / 256) - 1) for k in ks.tolist())
    assert worst < 3.0001 * 2.0**-53


def test_a_coarser_exp_would_fail_the_bound_test() -> None:
    """Power of the test above: np.exp rounded to 40 bits (error ~2^-41) is caught."""
    xs = np.random.default_rng(1).uniform(0, 64, 400)
    coarse = np.ldexp(np.round(np.ldexp(np.exp(-xs), 40 - np.frexp(np.exp(-xs))[1])), np.frexp(np.exp(-xs))[1] - 40)
    assert float(_rel_error(coarse, xs)) > 2.0**-46


@pytest.mark.parametrize("x", [Fraction(0), Fraction(1, 3), Fraction(64), Fraction(7001, 10),
                               Fraction(10**6, 7), Fraction(2**80 + 1, 2**78)])
def test_exp_neg_bounds_bracket_the_exact_value(x: Fraction) -> None:
    mpmath.mp.dps = 80
    exact = mpmath.exp(-mpmath.mpf(x.numerator) / x.denominator)
    for digits in (30, 50):
        lo, hi = exp_trials.exp_neg_bounds(x, digits)
        assert mpmath.mpf(lo.numerator) / lo.denominator <= exact <= mpmath.mpf(hi.numerator) / hi.denominator
        if x < 1000:  # relative width about 10^-digits
            assert hi - lo <= hi * Fraction(1, 10 ** (digits - 3))


@pytest.fixture
def exact_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Switch the float path off: every trial goes to the exact comparison."""
    monkeypatch.setattr(exp_trials, "exp_neg", lambda x: np.full(np.shape(x), np.nan))
    monkeypatch.setattr(exp_trials, "exp_neg_one", lambda x: math.nan)


@pytest.mark.parametrize("x", [Fraction(0), Fraction(3, 10), Fraction(5, 2), Fraction(70)])
def test_the_exact_path_alone_has_success_probability_exp_minus_x(exact_only: None, x: Fraction) -> None:
    n = 3000
    hits = exp_trials.below_exp(BitStream(seed=3), np.full(n, float(x)), lambda i: x)
    assert stats.binomtest(int(hits.sum()), n, math.exp(-float(x))).pvalue > REJECT
    if 0 < x < 10:  # power: exp(−1.5x) is rejected by the same trials
        assert stats.binomtest(int(hits.sum()), n, math.exp(-1.5 * float(x))).pvalue < REJECT


def test_the_exact_path_alone_draws_the_discrete_laplace_law(exact_only: None) -> None:
    """Inversion decided exactly for every draw: χ² against P[x] ∝ exp(−|x|/t), and a wider law rejected."""
    t = 2.0
    draws = ExactSampler(seed=4).discrete_laplace(Fraction(2), 2000)
    support = np.arange(-8, 9)
    pmf = np.exp(-np.abs(support) / t)
    pmf /= np.exp(-np.abs(np.arange(-400, 401)) / t).sum()

    def pvalue(p: np.ndarray) -> float:
        observed = np.array([np.sum(np.clip(draws, -8, 8) == v) for v in support], dtype=float)
        expected = draws.size * p
        rest = draws.size - expected.sum()
        expected[0] += rest / 2
        expected[-1] += rest / 2
        return float(stats.chisquare(observed, expected).pvalue)

    assert pvalue(pmf) > REJECT
    wide = np.exp(-np.abs(support) / (1.5 * t))
    assert pvalue(wide / np.exp(-np.abs(np.arange(-400, 401)) / (1.5 * t)).sum()) < REJECT


def test_float_and_exact_paths_consume_the_stream_alike() -> None:
    """The scalar and the array forms of a trial read the same words in the same order (seeded runs
    do not depend on batch sizes below the scalar threshold)."""
    xs = np.array([0.1, 3.0, 0.7, 12.0, 0.0, 1.5])
    a = exp_trials.below_exp(BitStream(seed=9), xs, lambda i: Fraction(xs[i]))
    bits = BitStream(seed=9)
    b = [exp_trials.below_exp_one(bits, int(bits.words64(1)[0]) >> 11, float(x), 0, lambda x=x: Fraction(x))
         for x in xs]
    assert a.tolist() == b


def test_the_envelope_bounds_every_weight_from_above_exactly() -> None:
    """2^{−e_i} ≥ e^{−η d_i} for the dyadic η the sampler uses, checked in exact arithmetic
    (e_i ≤ η d_i log2 e), and the envelope is tight (e_i ≥ ⌊η d_i log2 e⌋ − 1) below its cap."""
    mpmath.mp.dps = 60
    rng = np.random.default_rng(5)
    log2e = 1 / mpmath.log(2)
    for eta in (Fraction(1, 3), Fraction(10**-9), Fraction(123456, 7), Fraction(2) ** -40):
        a, m = dyadic_floor(eta)
        d = np.concatenate([rng.integers(0, 2**53, 200), rng.integers(0, 1000, 200), [0, 1, 2**53]])
        e = _envelope(d, a / 2.0**m, 51)
        for di, ei in zip(d.tolist(), e.tolist(), strict=True):
            y = mpmath.mpf(a) * di / 2**m * log2e
            assert ei <= y
            assert ei >= min(51, int(mpmath.floor(y))) - 1


def _em_law(units: np.ndarray, eta: Fraction) -> np.ndarray:
    a, m = dyadic_floor(eta)
    w = np.exp(-(a / 2**m) * (units - units.min()).astype(float))
    return w / w.sum()


def test_one_row_draws_follow_the_exponential_mechanism() -> None:
    """The one-row path (one proposal at a time) against exp(−η k_i)/Z by χ², with a candidate far
    beyond the envelope's cap and one just inside the table's reach."""
    units = np.array([0, 3, 1, 7, 2, 60, 10**9], dtype=np.int64)
    eta = Fraction(1, 2)
    sampler = ExactSampler(12)
    draws = np.array([int(exponential_mechanism(sampler, units, eta)[0]) for _ in range(5000)])
    probs = _em_law(units, eta)
    keep = probs * draws.size >= 5
    observed = np.array([np.sum(draws == i) for i in np.flatnonzero(keep)] + [np.sum(~keep[draws])], dtype=float)
    expected = np.append(probs[keep], probs[~keep].sum()) * draws.size
    assert observed[-1] == 0  # the far candidates (expected < 1e-11 draws) never come up
    assert stats.chisquare(observed[:-1], expected[:-1] * observed[:-1].sum() / expected[:-1].sum()).pvalue > REJECT


def test_the_exact_path_decides_huge_exponents_without_huge_numbers(exact_only: None) -> None:
    """Far candidates (x up to 10^10 nats) through the exact path alone: decided from U's bits
    in a blink (no bound with 10^10 digits is ever formed), and never drawn."""
    sampler = ExactSampler(seed=13)
    far = np.array([0, 10**6, 10**12], dtype=np.int64)
    assert set(exponential_mechanism(sampler, np.tile(far, (200, 1)), Fraction(1, 100)).tolist()) == {0}
    assert not exp_trials.below_exp(BitStream(seed=14), np.full(50, 2.0**82), lambda i: Fraction(2**82)).any()
