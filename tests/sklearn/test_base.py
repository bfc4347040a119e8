"""The scikit-learn estimators of dpopt.sklearn: scikit-learn's own estimator
checks, pipelines and cross-validation, the privacy contract of fit (one charge per fit, every
refusal before the charge, secure noise by default, reproducible noise on request)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

pytest.importorskip("sklearn")
pd = pytest.importorskip("pandas")

from sklearn.base import clone  # noqa: E402
from sklearn.model_selection import GridSearchCV, cross_val_score  # noqa: E402
from sklearn.pipeline import Pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

import dpopt as dp  # noqa: E402
from dpopt.errors import BudgetWarning, DataError, MechanismError, ModelError, PrivacyParameterError  # noqa: E402
from dpopt.sklearn import DPHalfspaceClassifier, DPLasso, DPLogisticRegression, DPRidge  # noqa: E402

# scikit-learn's checks fit arbitrary data with arbitrary labels, so the instances below read
# their classes from y (a warning says it is not private) and declare bounds only.  Ridge uses
# clarabel: the scipy accelerator takes seconds per fit on the checks' tiny, very noisy problems.
# DPHalfspaceClassifier is not run through them: it needs a Schema, which fixes the columns,
# while the checks fit data of many widths (it is tested below on its own table).
CHECKED = [
    DPLogisticRegression(x_bound=5.0, random_state=0),
    DPLogisticRegression(x_bound=5.0, loss="smoothed-hinge", mechanism="output-perturbation", alpha=0.1,
                         random_state=0),
    DPRidge(x_bound=5.0, y_bound=10.0, solver="clarabel", random_state=0),
    DPLasso(x_bound=5.0, y_bound=10.0, random_state=0),
]
#: checks an estimator is expected to fail, with the reason (none fail today; a check that
#: starts failing must be listed here with a one-line justification, or fixed)
EXPECTED_FAILED: dict[str, dict[str, str]] = {}


@parametrize_with_checks(CHECKED, expected_failed_checks=lambda est: EXPECTED_FAILED.get(type(est).__name__, {}))
def test_scikit_learn_estimator_checks(estimator, check):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*classes were read from y", category=UserWarning)
        check(estimator)


def separable(n: int = 300, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 3))
    margin = X @ np.array([1.0, -1.0, 0.5]) + 0.2
    keep = np.abs(margin) > 0.1
    return X[keep], np.where(margin[keep] > 0, "yes", "no")


def people(n: int = 80, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    table = pd.DataFrame({"a": rng.uniform(-1, 1, n), "b": rng.uniform(-1, 1, n),
                          "kind": rng.choice(["u", "v", "w"], n)})
    y = np.where(table.a - table.b + 0.5 * (table.kind == "u") > 0, ">50K", "<=50K")
    return table, y


SCHEMA = dp.Schema({"a": dp.Numeric(-1, 1, grid="1/4"), "b": dp.Numeric(-1, 1, grid="1/4"),
                    "kind": dp.Categorical(["u", "v"])})  # "w" is deliberately not declared


@pytest.mark.parametrize("mechanism", ["objective-perturbation", "output-perturbation", "dp-gd"])
def test_separable_data_is_learned_at_large_epsilon(mechanism):
    X, y = separable()
    model = DPLogisticRegression(epsilon=50.0, x_bound=2.0, alpha=1e-3, classes=["no", "yes"],
                                 mechanism=mechanism, random_state=0, ledger=dp.Ledger())
    assert model.fit(X, y) is model
    assert model.score(X, y) > 0.9
    assert model.coef_.shape == (1, 3) and model.intercept_.shape == (1,)
    assert model.classes_.tolist() == ["no", "yes"] and model.n_features_in_ == 3
    probabilities = model.predict_proba(X)
    assert np.allclose(probabilities.sum(axis=1), 1.0)
    assert np.array_equal(probabilities[:, 1] > 0.5, model.predict(X) == "yes")


def test_regressors_fit_a_linear_signal_at_large_epsilon():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(400, 3))
    y = X @ np.array([0.8, -0.5, 0.0]) + 0.3
    ridge = DPRidge(epsilon=50.0, x_bound=2.0, y_bound=2.0, alpha=1e-3, radius=2.0, solver="clarabel",
                    random_state=0, ledger=dp.Ledger()).fit(X, y)
    assert ridge.score(X, y) > 0.8 and abs(ridge.intercept_ - 0.3) < 0.15
    lasso = DPLasso(epsilon=50.0, x_bound=1.0, y_bound=2.0, radius=2.0, random_state=0,
                    ledger=dp.Ledger(), mechanism_options={"steps": 200}).fit(X, y)
    assert lasso.score(X, y) > 0.8 and np.abs(lasso.coef_).sum() + abs(lasso.intercept_) <= 2.0 + 1e-9


def test_random_state_gives_reproducible_noise_and_none_gives_secure_noise():
    X, y = separable()
    est = DPLogisticRegression(epsilon=1.0, x_bound=2.0, classes=["no", "yes"], ledger=dp.Ledger())
    a = clone(est).set_params(random_state=7).fit(X, y)
    b = clone(est).set_params(random_state=7).fit(X, y)
    assert np.array_equal(a.coef_, b.coef_) and a.release_.seed.user_seeded and a.release_.seed.seed == 7
    c = clone(est).fit(X, y)
    d = clone(est).fit(X, y)
    assert not np.array_equal(c.coef_, d.coef_) and not c.release_.seed.user_seeded


def test_each_fit_charges_the_ledger_once_and_clones_share_it():
    X, y = separable()
    ledger = dp.Ledger()
    est = DPLogisticRegression(epsilon=0.5, delta=1e-6, x_bound=2.0, classes=["no", "yes"], ledger=ledger)
    est.fit(X, y)
    assert [(c.epsilon, c.delta) for c in ledger.charges] == [(0.5, 1e-6)]
    assert clone(est).ledger is ledger
    scores = cross_val_score(est, X, y, cv=3)
    assert len(scores) == 3 and len(ledger.charges) == 4 and ledger.spent[0] == pytest.approx(2.0)
    search = GridSearchCV(est, {"alpha": [0.0, 1e-2]}, cv=2).fit(X, y)  # 2 × 2 fits + the refit
    assert len(ledger.charges) == 9 and search.best_estimator_.ledger is ledger


def test_default_delta_is_one_over_n_squared():
    X, y = separable()
    model = DPLogisticRegression(x_bound=2.0, classes=["no", "yes"], ledger=dp.Ledger()).fit(X, y)
    assert model.release_.delta == pytest.approx(1 / len(y) ** 2)


@pytest.mark.parametrize("estimator, error", [
    (DPLogisticRegression(epsilon=0.0, x_bound=1.0), PrivacyParameterError),
    (DPLogisticRegression(epsilon=-1.0, x_bound=1.0), PrivacyParameterError),
    (DPLogisticRegression(delta=1.0, x_bound=1.0), PrivacyParameterError),
    (DPLogisticRegression(delta=-0.1, x_bound=1.0), PrivacyParameterError),
    (DPLogisticRegression(mechanism="laplace-magic", x_bound=1.0), MechanismError),
    (DPLogisticRegression(loss="hinge", x_bound=1.0), ModelError),
    (DPLogisticRegression(), ModelError),  # no x_bound and no schema
    (DPLogisticRegression(x_bound=1.0, classes=["yes"]), ModelError),
    (DPLogisticRegression(x_bound=1.0, random_state="seed"), ModelError),
    (DPLogisticRegression(x_bound=1.0, mechanism="output-perturbation"), MechanismError),  # alpha = 0
    (DPLogisticRegression(x_bound=1.0, delta=0.0, mechanism="dp-gd"), MechanismError),
    (DPLogisticRegression(x_bound=1.0, mechanism_options={"steps": -3}, mechanism="dp-gd"), MechanismError),
    (DPRidge(x_bound=1.0), ModelError),  # no y_bound
    (DPLasso(x_bound=1.0, y_bound=1.0, radius=0.0), ModelError),
    (DPHalfspaceClassifier(), ModelError),  # no schema
    (DPHalfspaceClassifier(schema=SCHEMA, mechanism="opdisc", delta=0.0), MechanismError),
])
@pytest.mark.filterwarnings("ignore:.*classes were read from y")
def test_bad_settings_are_refused_in_fit_before_any_charge(estimator, error):
    ledger = dp.Ledger()
    X, y = separable()
    with pytest.raises(error):
        estimator.set_params(ledger=ledger).fit(X, y)
    assert ledger.charges == ()


def test_an_exhausted_budget_refuses_before_the_data_is_touched():
    X, y = separable()
    ledger = dp.Ledger(epsilon_budget=1.0)
    est = DPLogisticRegression(epsilon=0.6, x_bound=2.0, classes=["no", "yes"], ledger=ledger)
    est.fit(X, y)
    with pytest.raises(dp.errors.BudgetExceededError):
        est.fit(X, y)
    assert len(ledger.charges) == 1


def test_a_budget_refusal_inside_model_selection_warns_instead_of_vanishing_into_nan():
    """scikit-learn turns a failed fit into a NaN score; the BudgetWarning says why and how to stop it."""
    X, y = separable()
    ledger = dp.Ledger(epsilon_budget=1.0)  # room for one fit
    est = DPLogisticRegression(epsilon=1.0, x_bound=2.0, classes=["no", "yes"], ledger=ledger)
    with pytest.warns(BudgetWarning, match="error_score='raise'"):
        scores = cross_val_score(est, X, y, cv=3, error_score=np.nan)
    assert np.isnan(scores).sum() == 2 and len(ledger.charges) == 1
    with pytest.warns(BudgetWarning), pytest.raises(dp.errors.BudgetExceededError):
        cross_val_score(est, X, y, cv=3, error_score="raise")
    assert len(ledger.charges) == 1


def test_a_ledger_of_another_process_warns_and_refuses_the_fit(monkeypatch):
    """A copy of an in-memory ledger in a worker refuses the fit before any charge, and the
    BudgetWarning says why (scikit-learn would otherwise record a NaN score)."""
    X, y = separable()
    ledger = dp.Ledger()
    monkeypatch.setattr(ledger._store, "origin_pid", -1)  # as in a worker that received a pickled copy
    est = DPLogisticRegression(epsilon=1.0, x_bound=2.0, classes=["no", "yes"], ledger=ledger)
    with pytest.warns(BudgetWarning, match="another process than its ledger"), \
            pytest.raises(dp.errors.LedgerProcessError):
        est.fit(X, y)
    assert ledger.charges == () and not hasattr(est, "coef_")


def test_pipelines_work_and_bounds_are_declared_after_scaling():
    X, y = separable()
    pipe = Pipeline([("scale", StandardScaler()),
                     ("model", DPLogisticRegression(epsilon=50.0, x_bound=4.0, classes=["no", "yes"],
                                                    random_state=0, ledger=dp.Ledger()))])
    assert pipe.fit(X, y).score(X, y) > 0.9


def test_a_schema_takes_the_raw_table_and_names_the_coefficients():
    table, y = people()
    ledger = dp.Ledger()
    model = DPLogisticRegression(epsilon=50.0, schema=SCHEMA, classes=["<=50K", ">50K"], random_state=0,
                                 ledger=ledger).fit(table, y)
    assert model.n_features_in_ == 3 and model.feature_names_in_.tolist() == ["a", "b", "kind"]
    assert model.release_.feature_names == ("a", "b", "kind=u", "kind=v", "intercept")
    assert model.coef_.shape == (1, 4) and model.score(table, y) > 0.8
    raw = table.to_numpy(dtype=object)  # the declared columns, in order, as an array
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # fitted with names, predicting without
        assert np.array_equal(model.predict(raw), model.predict(table))
    unseen = table.assign(kind="never-declared")  # predicts through the all-zero block
    assert model.predict(unseen).shape == (len(table),)
    with pytest.raises(DataError, match="'kind'"):
        clone(model).set_params(unseen="error").fit(table, y)
    assert len(ledger.charges) == 1


def test_labels_outside_the_declared_classes_follow_the_policy():
    X, y = separable()
    y = y.astype(object)
    y[:5] = "maybe"
    ledger = dp.Ledger()
    est = DPLogisticRegression(epsilon=1.0, x_bound=2.0, classes=["no", "yes"], random_state=0, ledger=ledger)
    est.fit(X, y)  # private default: "maybe" is read as the negative class
    with pytest.raises(DataError) as err:
        clone(est).set_params(unknown_label="error").fit(X, y)
    assert "maybe" not in str(err.value) and len(ledger.charges) == 1


def test_classes_read_from_y_warn_and_several_need_the_logistic_loss():
    X, y = separable()
    with pytest.warns(UserWarning, match="not private"):
        model = DPLogisticRegression(x_bound=2.0, random_state=0, ledger=dp.Ledger()).fit(X, y)
    assert model.classes_.tolist() == ["no", "yes"]
    three = np.arange(len(y)) % 3
    with pytest.warns(UserWarning, match="not private"):
        multinomial = DPLogisticRegression(x_bound=2.0, random_state=0, ledger=dp.Ledger()).fit(X, three)
    assert multinomial.coef_.shape == (3, X.shape[1]) and multinomial.mechanism_ == "dp-gd"
    with pytest.warns(UserWarning), pytest.raises(ValueError, match="Only binary"):
        DPLogisticRegression(x_bound=2.0, loss="smoothed-hinge", ledger=dp.Ledger()).fit(X, three)


def test_halfspace_classifier_in_cross_validation():
    table, y = people(n=60)
    ledger = dp.Ledger()
    est = DPHalfspaceClassifier(epsilon=20.0, schema=SCHEMA, classes=["<=50K", ">50K"], solver="bruteforce",
                                random_state=0, ledger=ledger)
    scores = cross_val_score(Pipeline([("model", est)]), table, y, cv=2)
    assert len(scores) == 2 and len(ledger.charges) == 2
    model = clone(est).fit(table, y)
    assert set(np.unique(model.coef_)) <= {-1.0, 0.0, 1.0} and model.score(table, y) > 0.7
    assert model.release_.feature_names[-1] == "intercept"
