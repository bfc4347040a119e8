"""Each input is validated once per call, at the entry, and the later layers assume it.

A spy replaces every binding of the two validators (the settings check
:func:`~dpopt.mechanisms.params.validate_params` and the privacy-level check
:func:`~dpopt.privacy.calibration.check_epsilon_delta`) in the loaded dpopt modules and counts
their calls: a layer that checks again (an ``__init__`` re-validating what the construction
checked, a plan or a ledger re-checking ε and δ) makes a count exceed one.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import dpopt as dp
from dpopt.errors import InvalidParameterError, PrivacyParameterError
from dpopt.mechanisms import params
from dpopt.privacy import calibration
from dpopt.sklearn import DPLogisticRegression

VALIDATORS = {"validate_params": (params, params.validate_params),
              "check_epsilon_delta": (calibration, calibration.check_epsilon_delta)}


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Counts of each validator's calls, through every module that bound it by name."""
    counts: Counter[str] = Counter()

    def spy(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def counted(*args: Any, **kwargs: Any) -> Any:
            counts[name] += 1
            return real(*args, **kwargs)
        return counted

    for name, (_, real) in VALIDATORS.items():
        wrapped = spy(name, real)
        bound = [m for key, m in list(sys.modules.items())
                 if key.startswith("dpopt") and getattr(m, name, None) is real]
        assert bound, name
        for module in bound:
            monkeypatch.setattr(module, name, wrapped)
    return counts


def problem() -> tuple[dp.Problem, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (200, 3)) / 2.0
    y = np.where(X @ np.array([1.0, -0.5, 0.25]) > 0, 1.0, -1.0)
    theta = dp.Variable(3)
    data = dp.Dataset(X, y, x_bound=1.0, x_norm=2)
    return dp.Problem(dp.LogisticLoss(data, theta), constraint=dp.L2Ball(theta, 2.0)), X, y


def test_one_run_checks_the_settings_once_and_the_privacy_level_at_the_entry(calls):
    prob, _, _ = problem()
    ledger = dp.Ledger()
    release = dp.DPGradientDescent(1.0, 1e-6, ledger=ledger).run(prob, seed=0)
    # ε and δ are settings, checked with the others in the construction; the plan's calibration
    # and the ledger (require, then spend) take the mechanism's checked privacy level
    assert calls == Counter({"validate_params": 1})
    assert release.private and ledger.spent == pytest.approx((1.0, 1e-6))


def test_a_calibration_search_takes_the_checked_level(calls):
    """Frank–Wolfe's choice of T evaluates the per-step budget for every candidate T, and
    objective perturbation's split the noise σ for every candidate share: none checks ε again."""
    _, X, y = problem()
    theta = dp.Variable(3)
    data = dp.Dataset(X, np.clip(X @ np.array([0.5, -0.3, 0.2]), -1, 1), x_bound=1.0, x_norm=np.inf, y_bound=1.0)
    lasso = dp.Problem(dp.SquaredLoss(data, theta), constraint=dp.L1Ball(theta, 1.0))
    dp.PolytopeFrankWolfe(1.0, 1e-6, ledger=dp.Ledger()).run(lasso, seed=0)
    assert calls == Counter({"validate_params": 1})
    prob, _, _ = problem()
    dp.ObjectivePerturbation(1.0, 1e-6, ledger=dp.Ledger()).run(prob, seed=0)
    # at most the output noise's own (ε_a, δ_a) share, by each of the two laws it compares (cached
    # per process, so 0 after an earlier run); not once per candidate share of the split (39)
    assert calls["validate_params"] == 2 and calls["check_epsilon_delta"] <= 2


def _runs() -> dict[str, Callable[[], Any]]:
    from dpopt.modeling.schema import Numeric, Schema

    prob, X, _ = problem()
    theta = dp.Variable(3)
    data = dp.Dataset(X, np.clip(X @ np.array([0.5, -0.3, 0.2]), -1, 1), x_bound=1.0, x_norm=np.inf, y_bound=1.0)
    lasso = dp.Problem(dp.SquaredLoss(data, theta), constraint=dp.L1Ball(theta, 1.0))
    rng = np.random.default_rng(0)
    rows = dp.Dataset(rng.integers(-4, 5, size=(20, 2)) / 4.0, rng.choice([-1.0, 1.0], 20), x_norm=1,
                      schema=Schema.uniform(2, Numeric(-1, 1, grid="1/4")))
    grid = dp.DiscreteProblem(dp.ZeroOneLoss(rows, dp.Variable(2), dp.IntegerGrid(0.5, -1.0, 1.0)))
    return {
        "DPSGD": lambda: dp.DPSGD(1.0, 1e-6, ledger=dp.Ledger()).run(prob, seed=0),
        "PrivateMirrorDescent": lambda: dp.PrivateMirrorDescent(1.0, 1e-6, steps=10, ledger=dp.Ledger()).run(
            lasso, seed=0),
        "GaussianFrankWolfe": lambda: dp.GaussianFrankWolfe(1.0, 1e-6, steps=10, ledger=dp.Ledger()).run(
            lasso, seed=0),
        "OPDisc": lambda: dp.OPDisc(1.0, 1e-3, ledger=dp.Ledger()).run(grid, solver="bruteforce", seed=0),
        "RSPM": lambda: dp.RSPM(1.0, ledger=dp.Ledger()).run(grid, solver="bruteforce", seed=0),
    }


@pytest.mark.parametrize("name", ["DPSGD", "PrivateMirrorDescent", "GaussianFrankWolfe", "OPDisc", "RSPM"])
def test_other_runs_check_the_settings_once_and_take_the_checked_level(calls, name):
    run = _runs()[name]
    run()  # a first run fills the per-process caches of noise laws
    calls.clear()
    run()
    assert calls == Counter({"validate_params": 1})


def test_one_fit_checks_each_input_once(calls):
    _, X, y = problem()
    ledger = dp.Ledger()
    DPLogisticRegression(epsilon=1.0, x_bound=1.0, random_state=0, ledger=ledger).fit(X, y)
    # ε and δ at the estimator's entry; δ's range for the chosen mechanism and its options once in
    # the build; the mechanism, the diagnostics counts and their composition built from those
    assert calls == Counter({"check_epsilon_delta": 1, "validate_params": 1})
    assert ledger.spent[0] == pytest.approx(1.0)


def test_a_setting_is_still_refused_once_at_the_entry(calls):
    with pytest.raises(InvalidParameterError, match="steps"):
        dp.DPGradientDescent(1.0, 1e-6, steps=0)  # a subclass setting, checked by the construction
    with pytest.raises(InvalidParameterError, match="epsilon"):
        dp.DPGradientDescent(float("inf"), 1e-6)
    _, X, y = problem()
    with pytest.raises(InvalidParameterError, match="steps"):
        DPLogisticRegression(epsilon=1.0, x_bound=1.0, mechanism="dp-gd",
                             mechanism_options={"steps": -1}).fit(X, y)
    assert calls["validate_params"] == 3


def test_the_privacy_level_is_fixed_at_construction_and_always_valid():
    mechanism = dp.DPGradientDescent(1.0, 1e-6)
    with pytest.raises(AttributeError):
        mechanism.epsilon = -1.0  # type: ignore[misc]
    assert (mechanism.epsilon, mechanism.delta) == (1.0, 1e-6)
    # a build that skips the settings check still cannot hand the ledger an invalid level
    for epsilon in (float("nan"), -1.0, float("inf")):
        with pytest.raises(PrivacyParameterError):
            dp.DPGradientDescent.prevalidated(epsilon, 1e-6)


def test_a_ledger_checks_a_pair_it_is_given_and_takes_a_checked_level():
    ledger = dp.Ledger()
    with pytest.raises(PrivacyParameterError, match="epsilon"):
        ledger.charge(-1.0, 0.0)
    with pytest.raises(PrivacyParameterError, match="epsilon"):
        ledger.require(float("nan"), 0.0)
    ledger.charge(calibration.Budget.check(0.5, 1e-6))
    assert ledger.spent == pytest.approx((0.5, 1e-6))
