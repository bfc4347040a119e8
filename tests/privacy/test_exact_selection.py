"""Exact private selection (dpopt.privacy.exact_selection) and its use by the selection mechanisms.

The exact exponential mechanism and report-noisy-min are checked against independently
computed output laws (χ² on a small candidate set); their ε and bounded range on a neighbour
pair are computed from exact probabilities; the mechanisms' selections draw nothing from the
generator's PCG64 stream in an unseeded run, and PrivateSelection's released score lies on its
public grid.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import chi2

import dpopt as dp
from dpopt.mechanisms.dual_frank_wolfe import DualFrankWolfe
from dpopt.mechanisms.polytope_frank_wolfe import PolytopeFrankWolfe
from dpopt.mechanisms.selection import PrivateSelection
from dpopt.modeling.submodular import Cardinality
from dpopt.modeling.submodular_norms import SubmodularNorm
from dpopt.privacy.exact import ExactSampler, discrete_laplace_pmf
from dpopt.privacy.exact_selection import (
    ExactSelector,
    bernoulli_exp_dyadic,
    dyadic_floor,
    exponential_mechanism,
    grid_sensitivity,
    report_noisy_min,
    report_noisy_min_rows,
    score_units,
    selection_grid,
)
from dpopt.privacy.noisy_max import noisy_max_budget
from dpopt.privacy.rng import SecureGenerator

#: χ² tests reject a correct sampler with probability 1e-4 each
ALPHA = 1e-4


def _chi2_ok(draws: np.ndarray, probs: np.ndarray) -> tuple[bool, float]:
    counts = np.bincount(draws, minlength=probs.size)
    expected = probs * draws.size
    stat = float(np.sum((counts - expected) ** 2 / expected))
    return stat < chi2.ppf(1 - ALPHA, probs.size - 1), stat


def _em_law(units: np.ndarray, eta: Fraction) -> np.ndarray:
    """exp(−η' k_i)/Z with η' the dyadic η the sampler uses, in float64."""
    a, m = dyadic_floor(eta)
    w = np.exp(-(a / 2**m) * (units - units.min()).astype(float))
    return w / w.sum()


def _noisy_min_law(units: np.ndarray, t: float, reach: int = 40) -> np.ndarray:
    """P[argmin_i (k_i + L_i) = i] with uniform ties for three candidates, by enumerating every
    noise triple in [−reach, reach]³ (the neglected mass is below 6·exp(−reach/t))."""
    support = np.arange(-reach, reach + 1)
    pmf = discrete_laplace_pmf(support, t)
    a, b, c = np.meshgrid(support, support, support, indexing="ij")
    values = np.stack([units[0] + a, units[1] + b, units[2] + c])
    weight = pmf[a + reach] * pmf[b + reach] * pmf[c + reach]
    winners = values == values.min(axis=0)
    share = weight / winners.sum(axis=0)
    probs = np.array([np.sum(share[winners[i]]) for i in range(3)])
    return probs / probs.sum()


# ----------------------------------------------------------------------------- the samplers


def test_bernoulli_exp_dyadic_matches_exp():
    sampler = ExactSampler(11)
    nums = np.array([0, 1 << 19, 3 << 20, (5 << 20) + 12345], dtype=np.int64)  # x = 0, 0.5, 3, 5.01
    reps = 20_000
    hits = bernoulli_exp_dyadic(sampler, np.tile(nums, reps), 20).reshape(reps, nums.size).mean(axis=0)
    p = np.exp(-nums / 2.0**20)
    assert hits[0] == 1.0
    assert np.all(np.abs(hits - p) <= 5 * np.sqrt(p * (1 - p) / reps) + 1e-12), (hits, p)


def test_exponential_mechanism_law_chi2():
    """P[i] = exp(−η k_i)/Z on five candidates, by χ² over 20,000 draws."""
    units = np.array([0, 3, 1, 7, 2], dtype=np.int64)
    eta = Fraction(1, 2)
    sampler = ExactSampler(5)
    draws = exponential_mechanism(sampler, np.tile(units, (20_000, 1)), eta)  # 20,000 independent rows
    ok, stat = _chi2_ok(draws, _em_law(units, eta))
    assert ok, stat


def test_exponential_mechanism_rows_are_independent_draws():
    """Rows are sampled independently: the joint law of two rows is the product exponential mechanism."""
    units = np.array([[0, 2, 1], [4, 0, 40]], dtype=np.int64)
    eta = Fraction(1, 3)
    sampler = ExactSampler(6)
    draws = np.array([exponential_mechanism(sampler, units, eta) for _ in range(4_000)])
    joint = _em_law(units[0], eta)[:, None] * _em_law(units[1], eta)[None, :]
    ok, stat = _chi2_ok(draws[:, 0] * 3 + draws[:, 1], joint.ravel())
    assert ok, stat


def test_exponential_mechanism_far_scores_use_the_exact_tail():
    """Gaps beyond 32 nats go through the Python-integer tail; the far candidates are (almost) never drawn,
    and equal far scores are still drawn uniformly among themselves when they are all there is."""
    sampler = ExactSampler(7)
    far = np.array([0, 10**6, 10**12], dtype=np.int64)
    assert set(exponential_mechanism(sampler, np.tile(far, (300, 1)), Fraction(1, 100)).tolist()) == {0}
    tied = np.array([10**12, 10**12], dtype=np.int64)
    draws = exponential_mechanism(sampler, np.tile(tied, (4000, 1)), Fraction(1, 100))
    assert abs(draws.mean() - 0.5) < 5 * 0.5 / math.sqrt(4000)


def test_report_noisy_min_law_chi2():
    """argmin(k_i + L_i) with uniform tie-breaks against an enumeration of the noise (three candidates)."""
    units = np.array([0, 1, 3], dtype=np.int64)
    t = Fraction(3, 2)
    probs = _noisy_min_law(units, float(t), reach=40)
    sampler = ExactSampler(8)
    draws = report_noisy_min_rows(sampler, np.tile(units, (20_000, 1)), t)
    ok, stat = _chi2_ok(draws, probs)
    assert report_noisy_min(sampler, units, t) in (0, 1, 2)
    assert ok, stat


def test_ties_are_broken_at_random():
    """Equal scores and a tiny noise scale: ties are frequent, and each tied candidate wins half the time."""
    sampler = ExactSampler(9)
    draws = report_noisy_min_rows(sampler, np.tile([5, 5, 9], (4000, 1)), Fraction(1, 8))
    assert set(draws.tolist()) == {0, 1}
    assert abs(draws.mean() - 0.5) < 5 * 0.5 / math.sqrt(4000)


def test_the_law_test_catches_a_half_noise_mutant():
    """Mutant: report-noisy-min with *half* the discrete Laplace scale fails the same χ² test."""
    units = np.array([0, 1, 3], dtype=np.int64)
    probs = _noisy_min_law(units, 1.5, reach=40)
    sampler = ExactSampler(8)
    draws = report_noisy_min_rows(sampler, np.tile(units, (20_000, 1)), Fraction(3, 4))
    assert not _chi2_ok(draws, probs)[0]


# ----------------------------------------------------------------------------- privacy on a neighbour pair


def test_epsilon_and_bounded_range_on_a_neighbour_pair():
    """Worst-case non-monotone neighbours (every score moves by D, in opposite directions): the
    exponential mechanism's exact log-ratios lie in [−ε₀, ε₀] and span at most ε₀ (bounded range);
    report-noisy-min's lie in [−ε₀, ε₀]; both come close to ε₀, so the calibration is not loose."""
    eps0 = 1.0
    sensitivity = 0.37
    gamma = selection_grid(sensitivity)
    big_d = grid_sensitivity(sensitivity, gamma)
    selector = ExactSelector("gumbel", gamma, noisy_max_budget(eps0, 0.0, 1, "gumbel").scale(big_d * gamma))
    base = np.array([0, big_d, 40 * big_d], dtype=np.int64)  # the last candidate is far behind ...
    neighbour = base + np.array([big_d, big_d, -big_d])  # ... and gains 2D on every other one
    logs = np.log(_em_law(base, selector.eta)) - np.log(_em_law(neighbour, selector.eta))
    assert np.max(np.abs(logs)) <= eps0 + 1e-12
    assert np.max(logs) - np.min(logs) <= eps0 + 1e-12
    assert np.max(np.abs(logs)) > 0.95 * eps0
    # report-noisy-min on a small integer instance (D = 2, t = 2D/ε₀ = 4)
    t = 4.0
    k0, k1 = np.array([0, 0, 12]), np.array([2, 2, 10])
    ratio = np.log(_noisy_min_law(k0, t, reach=60)) - np.log(_noisy_min_law(k1, t, reach=60))
    assert np.max(np.abs(ratio)) <= 1.0 + 1e-9
    assert np.max(np.abs(ratio)) > 0.5


def test_rounding_onto_the_score_grid():
    """Scores within Δ of each other round to integers within D = ⌊Δ/γ⌋ + 1 (and B blocks add B)."""
    rng = np.random.default_rng(0)
    sensitivity = 0.3
    gamma = selection_grid(sensitivity)
    assert gamma <= sensitivity / 256 and math.log2(gamma).is_integer()
    s = rng.uniform(-5, 5, 10_000)
    moved = s + rng.uniform(-sensitivity, sensitivity, s.size)
    assert np.max(np.abs(score_units(s, gamma) - score_units(moved, gamma))) <= grid_sensitivity(sensitivity, gamma)
    blocks = selection_grid(sensitivity, 3)
    assert grid_sensitivity(sensitivity, blocks, 3) == math.floor(sensitivity / blocks) + 3
    assert score_units(np.array([np.nan, -np.inf]), gamma).tolist() == [2**52, -(2**52)]


# ----------------------------------------------------------------------------- the mechanisms


def _polytope_problem():
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, (40, 3))
    data = dp.Dataset(X, X @ np.array([0.5, -0.2, 0.0]), x_bound=1.0, x_norm="inf", y_bound=2.0, clip=True)
    v = dp.Variable(3)
    return dp.Problem(dp.SquaredLoss(data, v), constraint=dp.L1Ball(v, 1.0))


def _dual_problem():
    rng = np.random.default_rng(2)
    X = rng.uniform(-1, 1, (30, 4))
    data = dp.Dataset(X, np.clip(X @ np.array([0.3, 0.0, -0.2, 0.1]), -1, 1), x_bound=1.0, x_norm="inf",
                      y_bound=1.0, clip=True)
    th = dp.Variable(4)
    return dp.Problem(dp.SquaredLoss(data, th), regularizer=(dp.L2Squared(th, 0.5), SubmodularNorm(th, Cardinality(4), 0.1)))


def _untouched_stream(mech, problem):
    """Run ``execute`` with an unseeded-run generator and report whether its PCG64 state moved."""
    rng = SecureGenerator(np.random.PCG64DXSM(123))
    before = rng.bit_generator.state
    plan = mech.plan(problem)
    out = mech.execute(plan, rng)
    return rng.bit_generator.state == before, out, plan


@pytest.mark.parametrize("selection", ["laplace", "gumbel"])
def test_polytope_selection_draws_no_pcg64_in_a_secure_run(selection):
    same, out, plan = _untouched_stream(PolytopeFrankWolfe(1.0, 1e-6, steps=4, selection=selection), _polytope_problem())
    assert same
    assert np.abs(out.theta).sum() <= 1.0 + 1e-12
    assert plan.parameters["score_grid"] <= plan.parameters["sensitivity_score"] / 256
    assert plan.parameters["sensitivity_score_grid"] <= plan.parameters["sensitivity_score"] + plan.parameters["score_grid"]


def test_dual_frank_wolfe_draws_no_pcg64_and_releases_on_its_grid():
    same, out, plan = _untouched_stream(DualFrankWolfe(1.0, 1e-6, steps=3), _dual_problem())
    assert same
    gamma = plan.parameters["recovery_grid_step"]
    assert gamma is not None and np.all(out.theta / gamma == np.rint(out.theta / gamma))


def test_dual_frank_wolfe_recovery_is_a_grid_release():
    """Two centres less than one grid step apart (after rounding, the same grid point) give the same
    release with the same seeded generator; the recovery law is the planned one's."""
    mech = DualFrankWolfe(1.0, 1e-6, steps=2)
    law = mech.plan(_dual_problem()).recovery
    gamma = law.grid_step
    centre = np.rint(np.array([0.1, -0.2, 0.3, 0.0]) / gamma) * gamma  # a grid point; +0.4γ rounds back to it
    a = law.release(centre, np.random.default_rng(4))
    b = law.release(centre + 0.4 * gamma, np.random.default_rng(4))
    assert np.array_equal(a, b) and np.all(a / gamma == np.rint(a / gamma))


def _selection(eps=3.0, **kwargs):
    return PrivateSelection(eps, candidates=[{"lam": 0.5}, {"lam": 1.0}],
                            build=lambda p, b: dp.OutputPerturbation(b.epsilon, b.delta, noise="l2-laplace"),
                            ledger=dp.Ledger(), **kwargs)


def _selection_problems():
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, (30, 2))
    data = dp.Dataset(X, np.sign(X[:, 0] + 0.1), x_bound=1.0, y_bound=1.0, clip=True)
    th = dp.Variable(2)
    return lambda p: dp.Problem(dp.LogisticLoss(data, th), regularizer=dp.L2Squared(th, p["lam"]))


def test_private_selection_score_is_on_its_grid_and_secure_runs_draw_no_pcg64():
    sel = _selection()
    rel = sel.run(_selection_problems(), solver="scipy", seed=5)
    gamma = rel.parameters["score_grid"]
    score = rel.parameters["noisy_selected_score"]
    assert gamma == 2.0**-8 and score / gamma == round(score / gamma)
    same, out, _ = _untouched_stream(_selection(), _selection_problems())
    assert same
    assert out.parameters["noisy_selected_score"] / gamma == round(out.parameters["noisy_selected_score"] / gamma)


def test_private_selection_candidate_choice_is_uniform():
    """K = 1: the chosen candidate is uniform over the grid (exact uniform index), seen through
    ``selected_index`` over seeded runs."""
    sel = _selection(eps=9.0, expected_trials=1)
    problems = _selection_problems()
    picks = [sel.run(problems, solver="scipy", seed=s).parameters["selected_index"] for s in range(200)]
    assert abs(np.mean(picks) - 0.5) < 5 * 0.5 / math.sqrt(200)


def test_bound_selector_draws_what_argmin_draws():
    """ExactSelector.bind's in-place path (BoundSelector) returns, draw for draw, what the reference
    ExactSelector.argmin returns on the same seeded stream, and leaves the stream at the same place:
    so it samples the law the χ² tests above check.  Scores with NaN, ±inf, values beyond the ±2^52
    clamp, all ties and a single candidate included; the same comparison tells apart a selector with
    half the scale (the test has power)."""
    from dpopt.privacy.exact_selection import BoundSelector

    rng = np.random.default_rng(3)
    cases = [rng.normal(size=2000) * 0.3, rng.normal(size=7), np.full(5, 0.25), np.array([1.5]),
             np.array([np.nan, 0.1, -np.inf, np.inf, -0.3]), np.array([1e300, -1e300, 0.0, 1e-300])]
    for i, scores in enumerate(cases):
        selector = ExactSelector("gumbel", 2.0**-20, 1e-3 * (i + 1))
        bound, reference = ExactSampler(i), ExactSampler(i)
        select = BoundSelector(selector, bound)
        assert [select(scores) for _ in range(40)] == [selector.argmin(reference, scores) for _ in range(40)], i
        assert bound.bits.words(4).tolist() == reference.bits.words(4).tolist()
    close = rng.normal(size=7) * 1e-3  # gaps about the scale: every candidate has a chance
    selector = ExactSelector("gumbel", 2.0**-20, 1e-3)
    half = BoundSelector(ExactSelector("gumbel", 2.0**-20, 5e-4), ExactSampler(0))
    reference = ExactSampler(0)
    assert [half(close) for _ in range(40)] != [selector.argmin(reference, close) for _ in range(40)]
