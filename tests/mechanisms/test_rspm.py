"""RSPM (NRVW19 Alg. 3) with the threshold separator set: calibration, separation,
fail-closed behaviour, audit and mutation tests."""

import itertools
import math

import numpy as np
import pytest

import dpopt as dp
from dpopt.errors import MechanismError, UncertifiedOracleError
from dpopt.mechanisms.rspm import (
    level_table,
    rspm_gaussian_sigma,
    rspm_laplace_scale,
    separator_count,
)
from dpopt.testing import audit
from dpopt.testing.coverage import covers
from dpopt.testing.neighbours import discrete_backends, discrete_problem
from dpopt.testing.pairs import grid_label_pair, random_grid_pair, zero_one_problem
from dpopt.testing.views import assert_same_view

GRID = dp.IntegerGrid(1, -2, 2, l2_bound=2.0)


def _pair():
    return grid_label_pair(5)


def _problem(data, grid=GRID):
    return zero_one_problem(data, grid)


def test_threshold_functions_separate_every_pair_of_grid_points():
    grid = dp.IntegerGrid(0.5, -1, 1)
    W = grid.enumerate(2)
    k = np.rint(W / grid.step).astype(int)
    thresholds = [(j, t) for j in range(2) for t in range(grid.klow + 1, grid.khigh + 1)]
    assert len(thresholds) == separator_count(_problem(dp.Dataset(np.zeros((1, 2)), np.ones(1), schema=dp.Schema.uniform(2, dp.Numeric(-1, 1, grid="1/2"))), grid))
    for a, b in itertools.combinations(range(len(W)), 2):
        assert any((k[a, j] >= t) != (k[b, j] >= t) for j, t in thresholds)


def test_level_table_is_the_weighted_separator_sum():
    rng = np.random.default_rng(0)
    xi = rng.normal(size=(3, 4))  # d = 3, K = 5 levels (klow = -2)
    T = level_table(xi)
    for j, v in itertools.product(range(3), range(-2, 3)):
        direct = sum(xi[j, t - (-2) - 1] for t in range(-1, 3) if v >= t)
        assert T[j, v + 2] == pytest.approx(direct)


def test_noise_scales():
    assert rspm_laplace_scale(1.0, 46, 1.0) == 92.0
    # an α-approximate oracle: per-separator shift 2B + 2α, i.e. B → B + α in both laws
    assert rspm_laplace_scale(1.0, 46, 1.0, alpha=0.5) == pytest.approx(138.0)
    assert rspm_gaussian_sigma(1.0, 46, 0.5, 1e-6, alpha=0.5) == pytest.approx(
        1.5 * rspm_gaussian_sigma(1.0, 46, 0.5, 1e-6))
    # Gaussian: 2Bσ A + 2B²m ≤ εσ² with equality at the returned σ
    m, eps, delta = 46, 0.5, 1 / 15682**2
    s = rspm_gaussian_sigma(1.0, m, eps, delta)
    a = m * math.sqrt(2 / math.pi) + math.sqrt(2 * m * math.log(1 / delta))
    assert eps * s * s == pytest.approx(2 * s * a + 2 * m)
    # the paper's 7√(m ln 1/δ)/ε grows like √m and falls below the valid σ for large m
    paper = lambda m: 7 * math.sqrt(m * math.log(1 / delta)) / eps  # noqa: E731
    assert rspm_gaussian_sigma(1.0, 46, eps, delta) < paper(46)
    assert rspm_gaussian_sigma(1.0, 4000, eps, delta) > paper(4000)


def _rspm_alpha_failures(per_separator, alpha: float, trials: int, seed: int) -> int:
    """Pairs (ŵ, w) on random neighbours where RSPM's α-robust shift argument fails.

    With ŵ α-optimal on D at ξ and ξ' = ξ + s (|s_u| = c, sign −1 where e_u(ŵ) = 1),
    F'(w) − F'(ŵ) = [F_D(w) − F_D(ŵ)] + Δloss(w, ŵ) + c·#{u : e_u(w) ≠ e_u(ŵ)}; ŵ is the only
    α-optimal point on D' for every such ξ iff Δloss + c·#{…} ≥ 2α for all w ≠ ŵ (ties at
    exactly α need F_D(w) − F_D(ŵ) = −α, an event of probability 0).
    """
    rng = np.random.default_rng(seed)
    failures = 0
    for t in range(trials):
        d = 1 + t % 2
        d0, d1 = random_grid_pair(rng, d)
        p0, p1 = _problem(d0), _problem(d1)
        W = GRID.enumerate(d)
        k = np.rint(W / GRID.step).astype(int)
        # threshold separators e_{j,t}(w) = 1[k_j ≥ t]: #differing = Σ_j |k_j − k'_j|
        differ = np.abs(k[:, None, :] - k[None, :, :]).sum(axis=2)
        change = p1.loss.values(W) - p0.loss.values(W)
        bound = float(p0.loss.weights.max())
        margin = change[None, :] - change[:, None] + per_separator(bound) * differ  # rows ŵ, columns w
        np.fill_diagonal(margin, np.inf)
        failures += int(np.sum(margin < 2 * alpha - 1e-9))  # = 2α is the tight case, still fine
    return failures


def test_alpha_optimal_answers_keep_the_separator_coupling():
    """The per-separator shift 2B + 2α (module docstring) makes an α-optimal ŵ the only
    α-optimal point on every neighbour; 2B + α (ŵ merely stays the argmin) does not."""
    alpha = 0.3
    assert _rspm_alpha_failures(lambda B: 2 * B + 2 * alpha, alpha, 300, seed=0) == 0
    assert _rspm_alpha_failures(lambda B: 2 * B + alpha, alpha, 300, seed=0) >= 1
    # and the scales pay for exactly that shift: b = m(2B + 2α)/ε
    assert rspm_laplace_scale(1.0, 4, 1.0, alpha=alpha) == pytest.approx(4 * (2 + 2 * alpha))


def test_auto_picks_the_smaller_law_and_pure_dp_uses_laplace():
    d0, _ = _pair()
    p = _problem(d0).with_kind("levels")
    assert dp.RSPM(1.0).noise_law(p)[0] == "laplace"
    assert dp.RSPM(1.0, 1e-6, alpha=0.0).noise_law(p) == ("laplace", 8.0)  # m = 4: Laplace is smaller
    assert dp.RSPM(1.0, 1e-6).noise_law(p) == ("laplace", pytest.approx(2 * (1 + 1e-3) * 4))  # default α
    assert dp.RSPM(1.0, 1e-6, noise="gaussian").noise_law(p)[0] == "gaussian"
    with pytest.raises(MechanismError, match="delta > 0"):
        dp.RSPM(1.0, 0.0, noise="gaussian")
    with pytest.raises(MechanismError, match="noise"):
        dp.RSPM(1.0, noise="uniform")


def test_bad_input_is_refused_before_the_budget_is_touched():
    d0, _ = _pair()
    ledger = dp.Ledger()
    convex = dp.Problem(dp.LogisticLoss(d0, dp.Variable(1)))
    with pytest.raises(MechanismError, match="continuous variable"):
        dp.RSPM(1.0, ledger=ledger).run(convex, solver="bruteforce")
    with pytest.raises(dp.errors.BackendCapabilityError):
        dp.RSPM(1.0, ledger=ledger).run(_problem(d0), solver="clarabel")
    with pytest.raises(MechanismError, match="time_limit"):
        dp.RSPM(1.0, ledger=ledger).run(_problem(d0), solver="bruteforce", time_limit=-1)
    assert ledger.charges == ()


def test_release_is_reproducible_and_uncertified_fails_closed(monkeypatch):
    d0, _ = _pair()
    r1 = dp.RSPM(2.0, ledger=dp.Ledger()).run(_problem(d0), solver="bruteforce", seed=3)
    r2 = dp.RSPM(2.0, ledger=dp.Ledger()).run(_problem(d0), solver="bruteforce", seed=3)
    assert np.array_equal(r1.theta, r2.theta) and GRID.contains(r1.theta) and r1.private
    assert r1.parameters["separators"] == 4 and r1.guarantee.startswith("2-DP (pure)")

    import math
    from dataclasses import replace

    from dpopt.backends.bruteforce import BruteForceBackend

    real = BruteForceBackend.solve
    monkeypatch.setattr(BruteForceBackend, "solve",  # an answer without a proven bound
                        lambda self, p, b, o: replace(real(self, p, b, o), solver_certified=False, certified=False,
                                                      dual_bound=-math.inf))
    ledger = dp.Ledger()
    with pytest.raises(UncertifiedOracleError):
        dp.RSPM(1.0, ledger=ledger).run(_problem(d0), solver="bruteforce", seed=0)
    assert ledger.spent == (1.0, 0.0) and not ledger.charges[0].released


def _runner(scale=1.0, noise="laplace", delta=0.0):
    class Scaled(dp.RSPM):
        def noise_law(self, problem):
            law, s = super().noise_law(problem)
            return law, s * scale

    def run(data, seed):
        return Scaled(2.0, delta, noise=noise, ledger=dp.Ledger()).run(
            _problem(data), solver="bruteforce", seed=seed).theta

    return run


@pytest.mark.parametrize("noise,delta", [("laplace", 0.0), ("gaussian", 1e-3)])
@covers(dp.RSPM, kind="audit")
def test_rspm_audit_no_violation(noise, delta):
    d0, d1 = _pair()
    res = audit(_runner(noise=noise, delta=delta), d0, d1, claimed_epsilon=2.0, claimed_delta=delta,
                n_runs=3000, seed=4)
    print(f"RSPM {noise}: {res.summary()}")
    assert not res.violates, res.summary()


@pytest.mark.parametrize("noise,delta", [("laplace", 0.0), ("gaussian", 1e-3)])
@covers(dp.RSPM, kind="mutation")
def test_rspm_mutation_without_enough_noise_is_caught(noise, delta):
    """The shift bound is worst-case over grids and data; on a concrete pair the real loss
    is far below ε, so the mutation a black-box audit catches is a gross one (noise/1000)."""
    d0, d1 = _pair()
    res = audit(_runner(1e-3, noise, delta), d0, d1, claimed_epsilon=2.0, claimed_delta=delta,
                n_runs=3000, seed=4)
    assert res.violates, res.summary()


@pytest.mark.parametrize("name", ["highs", "highs-grouped", "cpsat"])
def test_rspm_through_a_mip_backend_matches_enumeration(name):
    if not dp.backends.get(name).available():
        pytest.skip(f"{name} not installed")
    rng = np.random.default_rng(11)
    X = rng.integers(-4, 5, size=(20, 2)) / 4.0
    y = rng.choice([-1.0, 1.0], size=20)
    data = dp.Dataset(X, y, x_bound=2.0, schema=dp.Schema.uniform(2, dp.Numeric(-1, 1, grid="1/4")))
    problem = _problem(data, dp.IntegerGrid(1, -1, 1))
    for s in range(8):
        a = dp.RSPM(1.0, ledger=dp.Ledger()).run(problem, solver=name, seed=s, threads=1).theta
        b = dp.RSPM(1.0, ledger=dp.Ledger()).run(problem, solver="bruteforce", seed=s).theta
        assert np.array_equal(a, b)


# ---------------------------------------------------------------------------
# neighbours: the whole program looks the same (dpopt.testing.neighbours)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("solver", discrete_backends())
@covers(dp.RSPM, kind="neighbour")
def test_rspm_looks_the_same_on_neighbours(discrete_pair: tuple[dp.Dataset, dp.Dataset], solver: str) -> None:
    def run(data: dp.Dataset, ledger: dp.Ledger) -> dp.Release:
        return dp.RSPM(1.0, ledger=ledger).run(discrete_problem(data), solver=solver, seed=0)

    assert_same_view(run, *discrete_pair)
