"""OPSamp (NRVW19 Alg. 2) over a τ-grid: constants, α-approximate acceptance,
fail-closed behaviour, audit and mutation tests."""

import math
from dataclasses import replace

import numpy as np
import pytest

import dpopt as dp
from dpopt.errors import MechanismError, UncertifiedOracleError
from dpopt.mechanisms.opsamp import grid_diameters
from dpopt.testing import audit
from dpopt.testing.coverage import covers
from dpopt.testing.neighbours import (
    discrete_backends,
    discrete_data,
    discrete_problem,
    discrete_schema,
)
from dpopt.testing.pairs import grid_label_pair, zero_one_problem
from dpopt.testing.views import assert_no_private_bytes, assert_same_view

GRID = dp.IntegerGrid(1, -2, 2, l2_bound=2.0)


def _pair():
    return grid_label_pair(5)


def _problem(data, grid=GRID):
    return zero_one_problem(data, grid)


def test_plan_uses_the_corrected_constants():
    rng = np.random.default_rng(0)
    X = rng.integers(-2, 3, size=(400, 3)) / 2.0
    data = dp.Dataset(X, rng.choice([-1.0, 1.0], size=400), x_bound=3.0, x_norm=2,
                      schema=dp.Schema.uniform(3, dp.Numeric(-1, 1, grid="1/2")))
    problem = _problem(data, dp.IntegerGrid(1, -4, 4, l2_bound=5.0)).with_kind("linear")
    d_inf, d2, d1 = grid_diameters(problem)
    assert (d_inf, d2, d1) == (8.0, 10.0, min(24.0, math.sqrt(3) * 10.0))
    mech = dp.OPSamp(1.0, 1e-6, calls=50, rate=1e-4)
    plan = mech.constants(problem)
    gamma = math.sqrt(math.log(4 * 3 / 1e-6) / 100)
    assert plan.gamma == pytest.approx(gamma)
    lam = 2 * 3 * 8 * gamma + 250 * 1e-4 * 1.0 * 9 * 64
    assert plan.sensitivity == pytest.approx(min(lam, d1))
    # the discrete Laplace on the grid: b = s·t ≥ λ/ε, and rounding costs at most 2^-8 of λ (plus one step of t)
    assert plan.sensitivity <= plan.laplace_scale <= plan.sensitivity * (1 + 2**-8) + plan.grid_step
    assert (plan.laplace_scale / plan.grid_step).is_integer()
    # the default m follows γ: m = ⌈ln(4d/δ)/(2γ²)⌉
    default = dp.OPSamp(1.0, 1e-6).constants(problem)
    g0 = min(1.0, math.sqrt(1 / 400) * 3**1.25 * math.sqrt(d2))
    assert default.calls == math.ceil(math.log(12 / 1e-6) / (2 * g0 * g0))
    # α enters λ as α/(10G) (below the cap)
    small = dp.OPSamp(1.0, 1e-6, calls=5000, rate=1e-7, alpha=0.0)
    assert small.constants(problem).sensitivity < d1
    with_alpha = dp.OPSamp(1.0, 1e-6, calls=5000, rate=1e-7, alpha=2.0, max_calls=10**5).constants(problem)
    assert with_alpha.sensitivity - small.constants(problem).sensitivity == pytest.approx(0.2)


def test_bad_input():
    with pytest.raises(MechanismError, match="delta > 0"):
        dp.OPSamp(1.0, 0.0)
    for kw in ({"alpha": -1.0}, {"calls": 0}, {"rate": 0.0}, {"beta": 1.0}):
        with pytest.raises(MechanismError):
            dp.OPSamp(1.0, 1e-3, **kw)
    d0, _ = _pair()
    ledger = dp.Ledger()
    with pytest.raises(MechanismError, match="max_calls"):
        dp.OPSamp(1.0, 1e-3, calls=20, max_calls=10, ledger=ledger).run(_problem(d0), solver="bruteforce")
    with pytest.raises(MechanismError, match="continuous variable"):
        dp.OPSamp(1.0, 1e-3, ledger=ledger).run(dp.Problem(dp.LogisticLoss(d0, dp.Variable(1))))
    assert ledger.charges == ()


def test_release_averages_the_calls_and_is_reproducible():
    d0, _ = _pair()
    r1 = dp.OPSamp(2.0, 1e-3, calls=4, ledger=dp.Ledger()).run(_problem(d0), solver="bruteforce", seed=1,
                                                                 keep_diagnostics=True)
    r2 = dp.OPSamp(2.0, 1e-3, calls=4, ledger=dp.Ledger()).run(_problem(d0), solver="bruteforce", seed=1)
    assert np.array_equal(r1.theta, r2.theta) and r1.private and len(r1.oracle_calls) == 4
    avg = np.mean([c.solution for c in r1.diagnostics.oracle_results], axis=0)
    assert np.all(np.abs(r1.theta - avg) > 0)  # Laplace output noise was added


def _with_gap(monkeypatch, gap):
    """Make the brute-force oracle report a non-optimal answer with a proven gap."""
    from dpopt.backends.bruteforce import BruteForceBackend

    real = BruteForceBackend.solve

    def approx(self, prepared, b, options):
        r = real(self, prepared, b, options)
        return replace(r, solver_certified=False, certified=False, status=dp.backends.OracleStatus.LIMIT,
                       dual_bound=r.primal_bound - gap)

    monkeypatch.setattr(BruteForceBackend, "solve", approx)


def test_alpha_approximate_answers_are_accepted_within_alpha_only(monkeypatch):
    d0, _ = _pair()
    _with_gap(monkeypatch, 0.05)
    r = dp.OPSamp(1.0, 1e-3, calls=3, alpha=0.1, ledger=dp.Ledger()).run(_problem(d0), solver="bruteforce", seed=0,
                                                                          keep_diagnostics=True)
    assert r.private and all(c.recheck.accepted for c in r.diagnostics.oracle_results)
    ledger = dp.Ledger()
    with pytest.raises(UncertifiedOracleError):  # exact mode refuses the same answers
        dp.OPSamp(1.0, 1e-3, calls=3, alpha=0.0, ledger=ledger).run(_problem(d0), solver="bruteforce", seed=0)
    assert ledger.spent == (1.0, 1e-3) and not ledger.charges[0].released
    _with_gap(monkeypatch, 0.5)
    with pytest.raises(UncertifiedOracleError):
        dp.OPSamp(1.0, 1e-3, calls=3, alpha=0.1, ledger=dp.Ledger()).run(_problem(d0), solver="bruteforce", seed=0)


def _runner(scale=1.0):
    """A data-dependent oracle (rate 5: mean perturbation 0.2 < one loss unit), 3 calls,
    so λ is the ℓ1-diameter cap 4 and the Laplace step carries the privacy."""
    class Scaled(dp.OPSamp):
        def constants(self, problem):
            p = super().constants(problem)
            return replace(p, laplace_scale=p.laplace_scale * scale)

    def run(data, seed):
        return Scaled(2.0, 1e-3, calls=3, rate=5.0, ledger=dp.Ledger()).run(
            _problem(data), solver="bruteforce", seed=seed).theta

    return run


@covers(dp.OPSamp, kind="audit")
def test_opsamp_audit_no_violation():
    d0, d1 = _pair()
    res = audit(_runner(), d0, d1, claimed_epsilon=2.0, claimed_delta=1e-3, n_runs=3000, seed=5)
    print(f"OPSamp: {res.summary()}")
    assert not res.violates, res.summary()


@covers(dp.OPSamp, kind="mutation")
def test_opsamp_mutation_with_half_the_output_noise_is_caught():
    d0, d1 = _pair()
    res = audit(_runner(0.5), d0, d1, claimed_epsilon=2.0, claimed_delta=1e-3, n_runs=8000, seed=5)
    print(f"OPSamp λ/2: {res.summary()}")
    assert res.violates, res.summary()


@pytest.mark.parametrize("name", ["highs", "highs-grouped"])
def test_opsamp_through_a_mip_backend_matches_enumeration(name):
    if not dp.backends.get(name).available():
        pytest.skip(f"{name}: highspy not installed")
    rng = np.random.default_rng(2)
    X = rng.integers(-4, 5, size=(20, 2)) / 4.0
    data = dp.Dataset(X, rng.choice([-1.0, 1.0], size=20), x_bound=2.0, schema=dp.Schema.uniform(2, dp.Numeric(-1, 1, grid="1/4")))
    problem = _problem(data, dp.IntegerGrid(1, -2, 2))
    for s in range(3):
        a = dp.OPSamp(1.0, 1e-3, calls=4, rate=0.5, ledger=dp.Ledger()).run(problem, solver=name, seed=s, threads=1)
        b = dp.OPSamp(1.0, 1e-3, calls=4, rate=0.5, ledger=dp.Ledger()).run(problem, solver="bruteforce", seed=s)
        assert np.array_equal(a.theta, b.theta)


# ---------------------------------------------------------------------------
# neighbours: the whole program looks the same (dpopt.testing.neighbours)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("solver", discrete_backends())
@covers(dp.OPSamp, kind="neighbour")
def test_opsamp_looks_the_same_on_neighbours(discrete_pair: tuple[dp.Dataset, dp.Dataset], solver: str) -> None:
    def run(data: dp.Dataset, ledger: dp.Ledger) -> dp.Release:
        return dp.OPSamp(1.0, 1e-3, calls=2, ledger=ledger).run(discrete_problem(data), solver=solver, seed=0)

    assert_same_view(run, *discrete_pair)


def test_opsamp_releases_none_of_its_oracle_answers() -> None:
    """OPSamp's oracle answers are un-noised functions of the data: only their noisy average may leave."""
    X, y = discrete_data()
    problem = discrete_problem(dp.Dataset(X, y, schema=discrete_schema()))
    mech = dp.OPSamp(1.0, 1e-3, calls=3, ledger=dp.Ledger())
    kept = mech.run(problem, solver="bruteforce", seed=1, keep_diagnostics=True)
    assert kept.diagnostics is not None
    answers = np.array([r.solution for r in kept.diagnostics.oracle_results])
    losses = np.array([r.primal_bound for r in kept.diagnostics.oracle_results])
    plain = mech.run(problem, solver="bruteforce", seed=1)
    assert_no_private_bytes(plain, np.concatenate([answers.mean(axis=0), losses]))
