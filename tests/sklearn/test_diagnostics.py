"""The estimators' private diagnostics, and their opt-out: with ``diagnostics=False`` a fit counts
nothing, says nothing and gives the model the whole ε (the calibration of a mechanism built with
all of it); with the default, the model's calibration is that of (1 − s)ε."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dpopt as dp
from dpopt.errors import DiagnosticsWarning, ModelError
from dpopt.mechanisms.diagnostics import split_budget
from dpopt.sklearn import DPLogisticRegression, DPRidge


def _table(n=20_000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 3))
    return X, np.where(X @ np.array([1.0, -1.0, 0.5]) > 0, "yes", "no").astype(object)


def _model_calibration(est, X, y, epsilon):
    """The plan of a mechanism built with ``epsilon`` on the estimator's own problem (public facts only)."""
    data = est._encode(X, y)
    mechanism, problem = est._mechanism_and_problem(data, epsilon=epsilon)
    return mechanism.plan(problem).parameters


@pytest.mark.parametrize("estimator", [
    lambda **kw: DPLogisticRegression(x_bound=1.5, classes=["No", "Yes"], mechanism="dp-gd", **kw),
    lambda **kw: DPRidge(x_bound=1.5, y_bound=1.0, mechanism="dp-gd", **kw),
])
def test_the_opt_out_gives_the_model_the_whole_budget_and_counts_nothing(estimator):
    X, y = _table()
    y_fit = np.where(y == "yes", 1.0, -1.0) if isinstance(estimator(), DPRidge) else y
    ledger = dp.Ledger()
    with warnings.catch_warnings():
        warnings.simplefilter("error", DiagnosticsWarning)  # the mistyped classes would warn if counted
        off = estimator(ledger=ledger, random_state=0, diagnostics=False).fit(X, y_fit)
    assert "diagnostics" not in off.release_.parameters and "noisy_diagnostic_counts" not in off.release_.parameters
    assert [c.epsilon for c in ledger.charges] == [1.0] and off.release_.epsilon == 1.0
    whole = _model_calibration(estimator(), X, y_fit, 1.0)
    assert off.release_.parameters["zcdp_rho"] == whole["zcdp_rho"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DiagnosticsWarning)
        on = estimator(ledger=dp.Ledger(), random_state=0).fit(X, y_fit)
    rest = _model_calibration(estimator(), X, y_fit, split_budget(1.0)[0])
    assert on.release_.parameters["zcdp_rho"] == rest["zcdp_rho"] < off.release_.parameters["zcdp_rho"]


def test_diagnostics_must_be_a_truth_value_checked_before_the_charge():
    X, y = _table(200)
    ledger = dp.Ledger()
    with pytest.raises(ModelError, match="diagnostics must be True or False"):
        DPLogisticRegression(x_bound=1.5, classes=["no", "yes"], ledger=ledger, diagnostics="no").fit(X, y)
    assert ledger.charges == ()
