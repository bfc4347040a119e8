"""Objective and output perturbation: validation before any solve, fail-closed
behaviour, the ledger, the release record and the noise normalisation."""

import json
import math

import numpy as np
import pytest

import dpopt as dp
from dpopt.errors import (
    MechanismError,
    PrivacyParameterError,
    UnknownSolverError,
)
from dpopt.testing.coverage import covers
from dpopt.testing.neighbours import convex_backends, glm
from dpopt.testing.views import assert_same_view


def _logistic(n=200, d=3, seed=0, constraint=True, lam=None):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    y = np.where(X @ np.ones(d) + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    data = dp.Dataset(X, y, x_bound=1.0)
    th = dp.Variable(d)
    return dp.Problem(dp.LogisticLoss(data, th), constraint=dp.L2Ball(th, 5.0) if constraint else None,
                      regularizer=None if lam is None else dp.L2Squared(th, lam))


@pytest.mark.parametrize("eps,delta", [(0, 0), (-1, 0), (math.nan, 0), (math.inf, 0), (1, 1.0), (1, -0.1), (1, math.nan)])
@pytest.mark.parametrize("mech", [dp.ObjectivePerturbation, dp.OutputPerturbation])
def test_privacy_parameters_are_checked(mech, eps, delta):
    with pytest.raises(PrivacyParameterError):
        mech(eps, delta)


def test_bad_problems_fail_before_any_solver_runs():
    ledger = dp.Ledger()
    p = _logistic()
    with pytest.raises(MechanismError, match="strongly convex"):
        dp.OutputPerturbation(1.0, ledger=ledger).run(p)
    hinge = dp.Problem(dp.HingeLoss(p.loss.data, p.loss.variable), constraint=p.constraint)
    with pytest.raises(MechanismError, match="Hessian"):
        dp.ObjectivePerturbation(1.0, ledger=ledger).run(hinge)
    rng = np.random.default_rng(0)
    reg = dp.Dataset(rng.uniform(-0.5, 0.5, (20, 2)), rng.uniform(-1, 1, 20), x_bound=1.0, y_bound=1.0)
    th = dp.Variable(2)
    with pytest.raises(MechanismError, match="Lipschitz"):
        dp.ObjectivePerturbation(1.0, ledger=ledger).run(dp.Problem(dp.SquaredLoss(reg, th)))
    with pytest.raises(UnknownSolverError, match="clarabel"):
        dp.ObjectivePerturbation(1.0, ledger=ledger).run(p, solver="cplex-pro")
    assert ledger.charges == ()  # nothing ran, nothing charged


def test_release_record_and_reproducibility():
    p = _logistic()
    r1 = dp.ObjectivePerturbation(1.0, 1e-6, ledger=dp.Ledger()).run(p, solver="scipy", seed=7,
                                                                       keep_diagnostics=True)
    r2 = dp.ObjectivePerturbation(1.0, 1e-6, ledger=dp.Ledger()).run(p, solver="scipy", seed=7)
    assert np.array_equal(r1.theta, r2.theta)
    assert r1.private and r1.seed.user_seeded and r1.seed.seed == 7
    assert (r1.epsilon, r1.delta) == (1.0, 1e-6)
    assert r1.oracle_calls[0].certified and r2.diagnostics is None
    assert r1.diagnostics.oracle_results[0].recheck.distance_bound <= 1e-6
    assert "ObjectivePerturbation" in r1.summary() and "(1, 1e-06)-DP" in r1.summary()
    d = json.loads(r1.to_json())
    assert len(d["theta"]) == 3 and d["epsilon"] == 1.0 and d["oracle_calls"][0]["certified"]
    r3 = dp.ObjectivePerturbation(1.0, 1e-6, ledger=dp.Ledger()).run(p, solver="scipy")
    assert not r3.seed.user_seeded and r3.seed.seed is None
    assert not np.array_equal(r1.theta, r3.theta)


@pytest.mark.parametrize("solver", ["clarabel", "scipy", "scs"])
def test_mechanisms_run_on_each_capable_backend(solver):
    p = _logistic(lam=1e-2)
    for mech in (dp.ObjectivePerturbation(2.0, 1e-6, tolerance=1e-5, ledger=dp.Ledger()),
                 dp.OutputPerturbation(2.0, 1e-6, tolerance=1e-5, ledger=dp.Ledger())):
        r = mech.run(p, solver=solver, seed=1)
        assert r.private and r.oracle_calls[0].backend == solver


def test_a_solver_that_misses_the_tolerance_still_releases_through_the_fallback():
    """No success bit: the accelerator's failure (here a 1e-4 s time limit at tolerance 1e-12)
    changes nothing an analyst sees; the fallback's a-priori bound proves the point."""
    ledger = dp.Ledger()
    p = _logistic(n=3000, d=20, constraint=True)
    mech = dp.ObjectivePerturbation(1.0, 1e-6, ledger=ledger, tolerance=1e-9)
    slow = mech.run(p, solver="scipy", time_limit=1e-4, seed=0, keep_diagnostics=True)
    fast = mech.run(p, solver="scipy", seed=0, keep_diagnostics=True)
    assert slow.private and slow.diagnostics.details["answered_by"] == "fallback"
    assert fast.diagnostics.details["answered_by"] == "accelerator"
    assert slow.to_dict()["oracle_calls"] == fast.to_dict()["oracle_calls"]
    assert slow.parameters == fast.parameters
    assert np.linalg.norm(slow.theta - fast.theta) <= 2e-9
    assert ledger.spent == (2.0, 2e-6) and all(c.released for c in ledger.charges)


def test_output_perturbation_sensitivity_and_projection():
    p = _logistic(lam=0.1)
    r = dp.OutputPerturbation(1.0, 0.0, project=True, ledger=dp.Ledger()).run(p, solver="scipy", seed=3)
    assert r.parameters["sensitivity_l2"] == pytest.approx(2 * 1.0 / (200 * 0.1) + 2e-6)
    assert r.parameters["noise"] == "laplace"  # the pure-ε law: discrete Laplace on the grid
    assert np.linalg.norm(r.theta) <= 5.0 + 1e-9


def test_public_record_withholds_data_dependent_diagnostics():
    import pickle

    p = _logistic(lam=0.1)
    r = dp.OutputPerturbation(1.0, 1e-6, ledger=dp.Ledger()).run(p, solver="scipy", seed=7, keep_diagnostics=True)
    optimum = r.diagnostics.oracle_results[0].solution  # the exact un-noised optimum
    public = json.loads(r.to_json())
    call = public["oracle_calls"][0]
    for field in dp.backends.OracleResult.DATA_DEPENDENT:
        assert field not in call
    assert call["certified"] and call["backend"] == "scipy" and "diagnostics" not in public
    for text in (repr(r), r.summary(), r.to_json()):
        assert "primal_bound" not in text and repr(float(optimum[0])) not in text
    assert optimum.tobytes() not in pickle.dumps(r)
    assert pickle.loads(pickle.dumps(r)).diagnostics is None
    assert "NOT PRIVATE" in repr(r.diagnostics) and "NOT PRIVATE" in r.diagnostics.summary()


def test_delta_positive_uses_the_smaller_noise_law():
    from dpopt.privacy.noise_spec import NoiseSpec

    small_d = NoiseSpec.for_sensitivity(1.0, 1.0, 1e-6, dim=1)
    large_d = NoiseSpec.for_sensitivity(1.0, 1.0, 1e-6, dim=500)
    assert small_d.kind == "laplace" and large_d.kind == "gaussian"
    assert NoiseSpec.for_sensitivity(1.0, 1.0, 0.0, dim=500).kind == "laplace"
    for spec in (small_d, large_d):
        law = NoiseSpec.for_sensitivity(1.0, 1.0, 1e-6, dim=7, choice="l2-laplace" if spec is small_d else "gaussian")
        draws = law.release(np.zeros((3000, 7)), np.random.default_rng(0))
        # expected_norm of a discrete law is √E‖v‖² (Jensen): an upper bound, tight within a few percent in 7 dimensions
        mean = np.linalg.norm(draws, axis=1).mean()
        assert 0.85 * law.expected_norm(7) <= mean <= law.expected_norm(7) * 1.02


def test_noise_choice_is_validated_and_honoured():
    with pytest.raises(MechanismError, match="delta > 0"):
        dp.OutputPerturbation(1.0, 0.0, noise="gaussian")
    with pytest.raises(MechanismError):
        dp.ObjectivePerturbation(1.0, 1e-6, noise="cauchy")
    p = _logistic(lam=0.1)
    r = dp.OutputPerturbation(1.0, 1e-6, noise="gaussian", ledger=dp.Ledger()).run(p, solver="scipy", seed=0)
    assert r.parameters["noise"] == "gaussian"


# ---------------------------------------------------------------------------
# neighbours: the whole program looks the same (dpopt.testing.neighbours)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("solver", convex_backends())
@pytest.mark.parametrize("time_limit", [None, 1e-4])
@covers(dp.ObjectivePerturbation, kind="neighbour")
def test_objective_perturbation_looks_the_same_on_neighbours(convex_pair: tuple[dp.Dataset, dp.Dataset],
        solver: str, time_limit: float | None) -> None:
    """A tight tolerance and (one case) a tiny time limit make the external solver miss on
    some datasets: the fallback must make that invisible."""

    def run(data: dp.Dataset, ledger: dp.Ledger) -> dp.Release:
        mechanism = dp.ObjectivePerturbation(1.0, 1e-6, ledger=ledger, tolerance=1e-8)
        return mechanism.run(glm(data), solver=solver, seed=3, time_limit=time_limit)

    assert_same_view(run, *convex_pair)
