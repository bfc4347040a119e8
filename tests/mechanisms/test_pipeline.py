"""The run pipeline's private mode: one door to the data (``ledger.spend``), no
success bit for discrete oracles (run to completion, crash retries with the same noise,
α-robust acceptance), a time limit as an explicit, announced opt-in, and releases and
errors that hold only public facts."""

from __future__ import annotations

import math
import pickle
from dataclasses import replace

import numpy as np
import pytest

import dpopt as dp
from dpopt.backends.bruteforce import BruteForceBackend
from dpopt.backends.result import Limit, OracleStatus
from dpopt.errors import BudgetExceededError, UncertifiedOracleError
from dpopt.mechanisms.discrete_base import CRASH_RETRIES, LIMIT_NOTE


def _discrete(n: int = 6) -> dp.DiscreteProblem:
    rng = np.random.default_rng(0)
    X = rng.integers(-2, 3, size=(n, 2)) / 2.0
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    schema = dp.Schema.uniform(2, dp.Numeric(-1, 1, grid=0.5))
    data = dp.Dataset(X, y, schema=schema)
    return dp.DiscreteProblem(dp.ZeroOneLoss(data, dp.Variable(2), dp.IntegerGrid(1, -2, 2)))


# -- the ledger's one door ---------------------------------------------------------


def test_spend_charges_before_the_block_and_keeps_the_charge_when_it_raises() -> None:
    ledger = dp.Ledger(epsilon_budget=1.0)
    with pytest.raises(RuntimeError), ledger.spend(0.5, 0.0, label="x", mechanism="m"):
        assert ledger.spent == (0.5, 0.0)  # charged before the data is touched
        raise RuntimeError("boom")
    assert ledger.spent == (0.5, 0.0) and not ledger.charges[0].released
    with ledger.spend(0.5, 0.0) as spend:
        spend.withhold()
    assert ledger.spent == (1.0, 0.0) and not ledger.charges[1].released
    with pytest.raises(BudgetExceededError), ledger.spend(0.1, 0.0):
        pytest.fail("the block must not run when the budget is exhausted")
    assert len(ledger.charges) == 2


# -- discrete oracles: no success bit -------------------------------------------------


def _flaky(monkeypatch: pytest.MonkeyPatch, failures: int) -> list[np.ndarray]:
    """Make the brute-force oracle crash ``failures`` times per η before answering."""
    real = BruteForceBackend.solve
    seen: list[np.ndarray] = []

    def solve(self, prepared, b, options):  # noqa: ANN001, ANN202
        seen.append(np.array(b, copy=True))
        if len(seen) <= failures:
            return replace(real(self, prepared, b, options), solution=None, status=OracleStatus.ERROR,
                           solver_certified=False, certified=False, dual_bound=math.nan)
        return real(self, prepared, b, options)

    monkeypatch.setattr(BruteForceBackend, "solve", solve)
    return seen


def test_a_crashed_oracle_call_is_retried_with_the_same_noise(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _flaky(monkeypatch, CRASH_RETRIES)
    ledger = dp.Ledger()
    release = dp.OPDisc(1.0, 1e-3, ledger=ledger).run(_discrete(), solver="bruteforce", seed=0)
    assert release.private and len(seen) == CRASH_RETRIES + 1
    assert all(np.array_equal(s, seen[0]) for s in seen)  # the same η every time
    clean = dp.OPDisc(1.0, 1e-3, ledger=dp.Ledger()).run(_discrete(), solver="bruteforce", seed=0)
    assert np.array_equal(release.theta, clean.theta)  # the retries are invisible
    assert release.to_dict()["oracle_calls"] == clean.to_dict()["oracle_calls"]


def test_a_persistent_crash_fails_closed_after_a_fixed_number_of_tries(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _flaky(monkeypatch, 10**9)
    ledger = dp.Ledger()
    with pytest.raises(UncertifiedOracleError) as err:
        dp.OPDisc(1.0, 1e-3, ledger=ledger).run(_discrete(), solver="bruteforce", seed=0)
    assert len(seen) == CRASH_RETRIES + 1
    assert ledger.spent == (1.0, 1e-3) and not ledger.charges[0].released
    assert err.value.diagnostics is None  # not asked for


def test_a_time_limit_is_an_announced_opt_in() -> None:
    problem = _discrete()
    free = dp.OPDisc(1.0, 1e-3, ledger=dp.Ledger()).run(problem, solver="bruteforce", seed=0)
    limited = dp.OPDisc(1.0, 1e-3, ledger=dp.Ledger()).run(problem, solver="bruteforce", seed=0, time_limit=60)
    assert LIMIT_NOTE not in free.notes and free.parameters["private_mode"] == "run to completion"
    assert LIMIT_NOTE in limited.notes and "conditional" in limited.parameters["private_mode"]
    assert np.array_equal(free.theta, limited.theta)


def _gap(monkeypatch: pytest.MonkeyPatch, gap: float) -> None:
    """The oracle answers the true argmin but proves only a lower bound ``gap`` below it."""
    real = BruteForceBackend.solve

    def solve(self, prepared, b, options):  # noqa: ANN001, ANN202
        r = real(self, prepared, b, options)
        return replace(r, status=OracleStatus.LIMIT, limit=Limit.NODES, solver_certified=False, certified=False,
                       dual_bound=r.primal_bound - gap)

    monkeypatch.setattr(BruteForceBackend, "solve", solve)


@pytest.mark.parametrize("mechanism", ["OPDisc", "RSPM", "OPSamp"])
def test_answers_proven_alpha_optimal_are_accepted_and_others_fail_closed(monkeypatch: pytest.MonkeyPatch,
                                                                         mechanism: str) -> None:
    cls = getattr(dp, mechanism)
    extra = {"calls": 2} if mechanism == "OPSamp" else {}
    _gap(monkeypatch, 0.5e-3)  # within the default α = 1e-3
    release = cls(1.0, 1e-3, ledger=dp.Ledger(), **extra).run(_discrete(), solver="bruteforce", seed=0,
                                                              keep_diagnostics=True)
    assert release.private and release.parameters["alpha"] == 1e-3
    assert all(r.recheck.accepted for r in release.diagnostics.oracle_results)
    _gap(monkeypatch, 5e-3)
    ledger = dp.Ledger()
    with pytest.raises(UncertifiedOracleError):
        cls(1.0, 1e-3, ledger=ledger, **extra).run(_discrete(), solver="bruteforce", seed=0)
    assert not ledger.charges[0].released


def test_alpha_is_validated_before_anything_is_charged() -> None:
    for bad in (-1.0, math.nan, math.inf, True):
        with pytest.raises(dp.errors.MechanismError):
            dp.OPDisc(1.0, 1e-3, alpha=bad)
        with pytest.raises(dp.errors.MechanismError):
            dp.RSPM(1.0, alpha=bad)


def test_the_noise_accounts_for_alpha() -> None:
    problem = _discrete()
    exact = dp.OPDisc(1.0, 1e-3, alpha=0.0).sigma(problem)
    approx = dp.OPDisc(1.0, 1e-3, alpha=0.5).sigma(problem)
    assert approx > exact
    law0, scale0 = dp.RSPM(1.0, alpha=0.0).noise_law(problem)
    law1, scale1 = dp.RSPM(1.0, alpha=0.5).noise_law(problem)
    assert law0 == law1 == "laplace" and scale1 == pytest.approx(scale0 * 1.5)  # 2B + 2α with B = 1


# -- releases and errors hold only public facts ----------------------------------------


def test_diagnostics_exist_only_on_request_and_never_travel() -> None:
    problem = _discrete()
    plain = dp.OPDisc(1.0, 1e-3, ledger=dp.Ledger()).run(problem, solver="bruteforce", seed=0)
    kept = dp.OPDisc(1.0, 1e-3, ledger=dp.Ledger()).run(problem, solver="bruteforce", seed=0,
                                                         keep_diagnostics=True)
    assert plain.diagnostics is None and kept.diagnostics is not None
    assert "NOT PRIVATE" in repr(kept.diagnostics)
    assert repr(kept) == repr(plain) and kept.to_json() == plain.to_json()
    assert pickle.loads(pickle.dumps(kept)).diagnostics is None
    loss = kept.diagnostics.oracle_results[0].primal_bound
    assert repr(loss) not in repr(kept) + kept.summary() + kept.to_json()


def test_an_uncertified_error_names_no_data_dependent_number(monkeypatch: pytest.MonkeyPatch) -> None:
    _gap(monkeypatch, 0.25)
    with pytest.raises(UncertifiedOracleError) as err:
        dp.OPDisc(1.0, 1e-3, ledger=dp.Ledger()).run(_discrete(), solver="bruteforce", seed=0, time_limit=5,
                                                    keep_diagnostics=True)
    text = str(err.value)
    assert "0.25" not in text and "bound" not in text and "gap" not in text
    assert err.value.diagnostics is not None  # asked for: the curator may look
    assert err.value.diagnostics.oracle_results[0].status is OracleStatus.LIMIT


def test_weighted_losses_need_a_declared_bound_and_map_weights_and_labels_onto_it() -> None:
    base = _discrete()
    data, w, grid = base.loss.data, base.loss.variable, base.domain
    weights = np.linspace(0.5, 3.0, data.n)
    undeclared = dp.DiscreteProblem(dp.ZeroOneLoss(data, w, grid, weights=weights))
    ledger = dp.Ledger()
    with pytest.raises(dp.errors.MechanismError, match="weight_bound"):
        dp.OPDisc(1.0, 1e-3, ledger=ledger).run(undeclared, solver="bruteforce", seed=0)
    assert ledger.charges == ()  # refused from the declaration, before the charge
    declared = dp.ZeroOneLoss(data, w, grid, weights=weights, weight_bound=2.0)
    assert declared.weights.max() == 2.0 and declared.lipschitz == 2.0 and declared.value_bound == 2.0
    heavier = dp.ZeroOneLoss(data, w, grid, weights=weights * 10, weight_bound=2.0)
    assert heavier.lipschitz == declared.lipschitz  # the constants never read the weights
    labels = data.y.copy()
    labels[0] = 0.0
    relabelled = dp.ZeroOneLoss(dp.Dataset(data.X, labels, schema=data.schema), w, grid)
    assert set(relabelled.data.y.tolist()) <= {-1.0, 1.0} and relabelled.data.y[0] == -1.0
