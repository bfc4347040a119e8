"""``positive=True`` and ``bounds=`` on the linear estimators, as scikit-learn users write them.

The coefficients obey what was declared on every fit (several seeds: the property must hold
whatever the noise), the intercept stays free, ``bounds`` are read in ``coef_``'s own units (a
label declared in dollars), the estimators clone and run in a pipeline, and malformed settings
are refused before the ledger is charged.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MinMaxScaler

import dpopt as dp
from dpopt.errors import MechanismError, ModelError
from dpopt.sklearn import DPLasso, DPLogisticRegression, DPRidge

N, D = 3000, 5
BETA = np.array([0.6, 0.3, -0.4, 0.1, 0.0])  # one slope wants to be negative


def _table(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.0, 1.0, (N, D))
    return X, X @ BETA - 0.5 + 0.05 * rng.standard_normal(N)  # a negative intercept


@pytest.fixture(autouse=True)
def _quiet() -> None:
    warnings.simplefilter("ignore")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_dpridge_positive_in_a_pipeline_keeps_slopes_non_negative_and_the_intercept_free(seed: int) -> None:
    X, y = _table()
    est = DPRidge(positive=True, y_bound=2.0, x_bound=float(np.sqrt(D)), random_state=seed, ledger=dp.Ledger())
    pipe = make_pipeline(MinMaxScaler(), est).fit(X, y)
    fitted = pipe[-1]
    assert np.all(fitted.coef_ >= 0.0)
    assert fitted.intercept_ < -0.2  # not constrained: the data's intercept is −0.5
    assert np.isfinite(pipe.score(X, y))  # accuracy is measured by `dpopt bench constrained-regression`
    assert fitted.mechanism_ == "dp-gd" and fitted.release_.private
    assert clone(est).get_params()["positive"] is True


def test_bounds_are_read_in_coef_units_with_a_label_in_its_own_units() -> None:
    """A price label in dollars: coef_ is in dollars per unit, and so are the bounds."""
    X, y = _table()
    dollars = 1000.0 * y + 5000.0  # label_spec maps [3000, 7000] onto [−1, 1]: coef_ = 2000·θ
    label = dp.Numeric(3000.0, 7000.0, grid=0.01)
    for seed in range(3):
        est = DPRidge(bounds=(0.0, 250.0), label_spec=label, x_bound=float(np.sqrt(D)), random_state=seed,
                      ledger=dp.Ledger()).fit(X, dollars)
        assert np.all(est.coef_ >= -1e-9) and np.all(est.coef_ <= 250.0 + 1e-9), est.coef_
        assert est.coef_[0] >= 200.0  # the true 600 $/unit is held at its 250 $/unit bound, not at 250/2000
    per_coef = DPRidge(bounds=([0, 0, -np.inf, 0, 0], np.inf), label_spec=label, x_bound=float(np.sqrt(D)),
                       random_state=0, ledger=dp.Ledger()).fit(X, dollars)
    assert np.all(np.delete(per_coef.coef_, 2) >= 0.0)


@pytest.mark.parametrize("seed", [0, 1])
def test_dplogistic_and_dplasso_take_positive(seed: int) -> None:
    X, y = _table()
    labels = (y > np.median(y)).astype(int)
    clf = DPLogisticRegression(positive=True, x_bound=float(np.sqrt(D)), classes=[0, 1], random_state=seed,
                               ledger=dp.Ledger()).fit(X, labels)
    assert np.all(clf.coef_ >= 0.0) and clf.coef_.shape == (1, D)
    lasso = DPLasso(positive=True, y_bound=2.0, x_bound=1.0, random_state=seed, ledger=dp.Ledger()).fit(X, y)
    assert np.all(lasso.coef_ >= 0.0) and float(np.abs(np.append(lasso.coef_, lasso.intercept_)).sum()) <= (
        lasso.radius_ * (1 + 1e-9))


@pytest.mark.parametrize("settings, match", [
    ({"positive": "yes"}, "positive must be True or False"),
    ({"bounds": 5.0}, "bounds must be a pair"),
    ({"bounds": (1.0, 0.0)}, "low ≤ high"),
    ({"bounds": ([0.0, 0.0], 1.0)}, "2 entries, but the model has 5 coefficients"),
    ({"positive": True, "bounds": (-2.0, -1.0)}, "no value"),
], ids=["positive", "bounds-shape", "bounds-order", "bounds-length", "positive-and-negative-box"])
def test_malformed_coefficient_settings_are_refused_before_the_charge(settings: dict, match: str) -> None:
    X, y = _table()
    ledger = dp.Ledger()
    with pytest.raises((ModelError, MechanismError), match=match) as info:
        DPRidge(y_bound=2.0, x_bound=float(np.sqrt(D)), ledger=ledger, **settings).fit(X, y)
    assert "\n" not in str(info.value) and ledger.charges == ()


def test_an_orthant_with_a_squared_loss_asks_for_the_upper_bound_and_keeps_the_orthant() -> None:
    X, y = _table()
    data = dp.Dataset(X, y, x_bound=float(np.sqrt(D)), y_bound=2.0)
    w = dp.Variable(D)
    ledger = dp.Ledger()
    with pytest.raises(MechanismError, match=r"NonNegative, which is unbounded.*keep it and add the missing upper "
                                             r"bound.*norm2\(w\) <= R"):
        dp.ObjectivePerturbation(1.0, 1e-6, ledger=ledger).run(dp.Problem(dp.SquaredLoss(data, w), constraint=w >= 0))
    assert ledger.charges == ()
    bounded = dp.Problem(dp.SquaredLoss(data, w), constraint=[w >= 0, dp.norm2(w) <= 2.0],
                         regularizer=dp.L2Squared(w, 1e-3))
    release = dp.ObjectivePerturbation(1.0, 1e-6, ledger=ledger).run(bounded, seed=0)
    assert np.all(release.theta >= 0.0) and np.linalg.norm(release.theta) <= 2.0 + 1e-12


def test_a_multinomial_model_keeps_every_class_coefficient_non_negative_and_its_intercepts_free() -> None:
    rng = np.random.default_rng(0)
    X = rng.uniform(0.0, 1.0, (3000, 4))
    y = np.argmax(X[:, :3] + 0.1 * rng.standard_normal((3000, 3)), axis=1)
    model = DPLogisticRegression(positive=True, x_bound=2.0, classes=[0, 1, 2], random_state=0,
                                 ledger=dp.Ledger()).fit(X, y)
    assert model.coef_.shape == (3, 4) and np.all(model.coef_ >= 0.0)
    assert np.any(model.intercept_ < 0.0)  # Θ's intercept row is not constrained
