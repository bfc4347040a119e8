"""Regression in the label's own units: ``label_spec=dp.Numeric(low, high)`` and the automatic
mechanism of the regressors."""

from __future__ import annotations

import numpy as np
import pytest

import dpopt as dp
from dpopt.errors import MechanismError, ModelError

pytest.importorskip("sklearn")
from dpopt.sklearn import DPLasso, DPRidge  # noqa: E402

SPEC = dp.Numeric(80, 200, grid=1)  # say, a systolic pressure in mmHg


def _table(n: int = 20_000, d: int = 5, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Features in [0, 1]; a label in raw units, mostly inside the declared [80, 200]."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, size=(n, d))
    y = 110 + X @ np.array([40.0, -15.0, 25.0, 0.0, 10.0])[:d] + rng.normal(0, 5, size=n)
    return X, y


@pytest.mark.parametrize("n, epsilon, chosen", [(20_000, 10.0, "dp-gd"), (20_000, 0.05, "adassp")])
def test_auto_fits_in_the_labels_units(n, epsilon, chosen):
    """The rule n·√ρ/(d·B) ≥ 20 → DP-GD, else AdaSSP (here 20,000·√ρ/(6·√7): about 1,100 at ε = 10,
    about 5 at ε = 0.05); either way the fit is in mmHg."""
    X, y = _table(n)
    ledger = dp.Ledger()
    est = DPRidge(epsilon=epsilon, x_bound=float(np.sqrt(6)), label_spec=SPEC, random_state=0,
                  ledger=ledger).fit(X, y)
    assert est.mechanism_ == chosen and "n·√ρ/(d·B)" in est.mechanism_rule_
    ols = np.linalg.lstsq(np.column_stack([X, np.ones(len(y))]), y, rcond=None)[0]
    r2_ols = 1 - np.mean((np.column_stack([X, np.ones(len(y))]) @ ols - y) ** 2) / np.var(y)
    if epsilon >= 10:
        assert est.score(X, y) > r2_ols - 0.05  # an independent computation, in the same units
    # coef_ and intercept_ are in the table's units: they give predict's values (clipped to [80, 200])
    assert np.allclose(np.clip(X @ est.coef_ + est.intercept_, 80, 200), est.predict(X))
    assert abs(float(np.mean(est.predict(X))) - float(np.mean(y))) < 5.0  # mmHg, not the unit scale
    assert len(ledger.charges) == 1


@pytest.mark.parametrize("n, epsilon", [(331, 0.1), (3_000, 1.0), (20_000, 10.0)])
def test_auto_reads_public_facts_only(n, epsilon):
    """Two tables with the same public facts (n, d, declared bounds, label range, ε, δ) but other
    values get the same mechanism, the same rule sentence and the same public calibration (AdaSSP's
    share of ε on the label's mean and its ridge factor included); the sentence states both."""
    from dpopt.mechanisms.adassp import mean_share, ridge_scale

    X0, y0 = _table(n, seed=1)
    rng = np.random.default_rng(7)
    X1, y1 = rng.uniform(0, 1, size=X0.shape) ** 3, rng.uniform(80, 200, size=n)  # nothing alike
    fits = [DPRidge(epsilon=epsilon, x_bound=float(np.sqrt(6)), label_spec=SPEC, random_state=s, ledger=dp.Ledger())
            .fit(X, y) for s, (X, y) in enumerate(((X0, y0), (X1, y1)))]
    assert fits[0].mechanism_ == fits[1].mechanism_ and fits[0].mechanism_rule_ == fits[1].mechanism_rule_
    public = [{k: v for k, v in f.release_.parameters.items() if not k.startswith("noisy")} for f in fits]
    assert public[0] == public[1]
    if fits[0].mechanism_ == "adassp":
        model_eps = public[0]["epsilon_mean"] + public[0]["epsilon_zcdp"]  # ε less the diagnostics' share
        share = mean_share(n, model_eps)
        assert public[0]["epsilon_mean"] == pytest.approx(share * model_eps)
        assert f"{share:.0%} of ε on the label's mean" in fits[0].mechanism_rule_
        assert f"× {ridge_scale(n, model_eps):.2g}" in fits[0].mechanism_rule_
    if n == 331:  # n·ε ≈ 32: nearly all of ε on the label's mean
        assert fits[0].mechanism_ == "adassp" and public[0]["epsilon_mean"] > 0.9 * model_eps


def test_out_of_range_labels_are_clipped_never_refused():
    X, y = _table(n=500)
    y[:5] = [1e6, -3.0, 250.0, 79.0, 201.0]
    est = DPRidge(epsilon=1.0, x_bound=float(np.sqrt(6)), label_spec=SPEC, random_state=0, ledger=dp.Ledger())
    assert np.all(np.isfinite(est.fit(X, y).predict(X)))


def test_the_label_is_declared_once_and_as_a_numeric_column():
    X, y = _table(n=100)
    ledger = dp.Ledger()
    with pytest.raises(ModelError, match="not both"):
        DPRidge(x_bound=3.0, y_bound=200.0, label_spec=SPEC, ledger=ledger).fit(X, y)
    with pytest.raises(ModelError, match="label_spec=dp.Numeric"):
        DPRidge(x_bound=3.0, ledger=ledger).fit(X, y)
    with pytest.raises(ModelError, match="Numeric"):
        DPLasso(x_bound=3.0, label_spec=dp.Binary(), ledger=ledger).fit(X, y)
    with pytest.raises(MechanismError, match="did you mean 'adassp'"):
        DPRidge(x_bound=3.0, label_spec=SPEC, mechanism="adasp", ledger=ledger).fit(X, y)
    assert not ledger.charges


def test_a_named_solver_makes_auto_pick_a_mechanism_that_calls_it():
    X, y = _table(n=300)
    est = DPRidge(x_bound=float(np.sqrt(6)), label_spec=SPEC, solver="clarabel", random_state=0,
                  ledger=dp.Ledger()).fit(X, y)
    assert est.mechanism_ == "objective-perturbation" and "solver" in est.mechanism_rule_


def test_coef_names_line_up_with_the_encoded_features():
    import pandas as pd

    from dpopt.sklearn import DPLogisticRegression

    schema = dp.Schema({"age": dp.Numeric(17, 90, grid=1), "sex": dp.Categorical(["Female", "Male"]),
                        "union": dp.Binary()})
    rng = np.random.default_rng(0)
    table = pd.DataFrame({"age": rng.integers(17, 91, 300), "sex": rng.choice(["Female", "Male"], 300),
                          "union": rng.integers(0, 2, 300)})
    y = rng.choice(["no", "yes"], 300)
    est = DPLogisticRegression(schema=schema, classes=["no", "yes"], random_state=0, ledger=dp.Ledger()).fit(table, y)
    names = est.get_feature_names_out()
    assert len(est.feature_names_in_) == 3 and names.tolist() == ["age", "sex=Female", "sex=Male", "union"]
    assert est.coef_.shape == (1, len(names))
    plain = DPLogisticRegression(x_bound=2.0, classes=[0, 1], random_state=0, ledger=dp.Ledger())
    assert plain.fit(rng.uniform(size=(50, 2)), rng.integers(0, 2, 50)).get_feature_names_out().tolist() == ["x0", "x1"]


@pytest.mark.parametrize("make", [
    lambda: __import__("dpopt.sklearn", fromlist=["DPLogisticRegression"]).DPLogisticRegression(
        x_bound=2.0, classes=[0, 1, 2], random_state=0),
    lambda: __import__("dpopt.sklearn", fromlist=["DPLogisticRegression"]).DPLogisticRegression(
        x_bound=2.0, classes=[0, 1], random_state=0),
    lambda: DPRidge(x_bound=2.0, label_spec=SPEC, random_state=0),
], ids=["multinomial", "binary", "ridge"])
def test_the_auto_choice_and_its_charge_read_no_data_value(make, monkeypatch):
    """mechanism="auto" decides from the settings; what it would charge is the same with every
    data value hidden (dpopt.testing.declarations) and on a neighbouring table."""
    from dpopt.testing.declarations import hide_data_values, run_to_charge

    X, y = _table(n=200, d=3)
    est = make()
    classes = est.get_params().get("classes")
    labels = y if classes is None else np.arange(200) % len(classes)
    data = est._encode(X, labels)
    mech, problem = est._mechanism_and_problem(data)
    seen = run_to_charge(mech, problem)
    other = make()
    X2, labels2 = X.copy(), labels.copy()
    X2[0], labels2[0] = 1.0 - X2[0], labels2[1]
    assert run_to_charge(*other._mechanism_and_problem(other._encode(X2, labels2))) == seen
    hidden = make()
    hidden_data = hidden._encode(X, labels)  # the encoding and the loss map rows one by one, before hiding
    hidden_mech, hidden_problem = hidden._mechanism_and_problem(hidden_data)
    reads = hide_data_values(monkeypatch)
    assert hidden._auto(hidden_data, 1.0, None) == est._auto(data, 1.0, None)
    assert run_to_charge(hidden_mech, hidden_problem) == seen and not reads


def _schema_table(n: int = 20_000, seed: int = 3):
    """Raw columns in their units (age in years, income in k$, a category), a label in mmHg."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(seed)
    table = pd.DataFrame({"age": rng.integers(20, 80, n).astype(float), "income": np.round(rng.uniform(0, 200, n), 2),
                          "group": rng.choice(["a", "b"], n)})
    y = 100 + 0.5 * table["age"] - 0.1 * table["income"] + 8.0 * (table["group"] == "b") + rng.normal(0, 2, n)
    schema = dp.Schema({"age": dp.Numeric(0, 100, grid=1), "income": dp.Numeric(0, 250, grid="1/100"),
                        "group": dp.Categorical(["a", "b"])})
    return table, y.to_numpy(), schema


@pytest.mark.parametrize("mechanism", ["adassp", "dp-gd"])
def test_coef_is_per_unit_of_each_raw_column(mechanism):
    """coef_ and intercept_ give the model in the table's own units (per year, per k$, per
    category), so they reproduce predict() from the raw columns; the scaled coefficients are
    coef_scaled_ (per declared range: coef_ times high − low)."""
    table, y, schema = _schema_table()
    est = DPRidge(epsilon=5.0, schema=schema, label_spec=SPEC, mechanism=mechanism, random_state=0,
                  ledger=dp.Ledger()).fit(table, y)
    raw = np.column_stack([table["age"], table["income"], table["group"] == "a", table["group"] == "b"])
    assert list(est.get_feature_names_out()) == ["age", "income", "group=a", "group=b"]
    np.testing.assert_allclose(np.clip(raw @ est.coef_ + est.intercept_, 80, 200), est.predict(table), atol=1e-9)
    np.testing.assert_allclose(est.coef_scaled_, est.coef_ * np.array([100.0, 250.0, 1.0, 1.0]), rtol=1e-12)
    if mechanism == "dp-gd":  # AdaSSP's private ridge shrinks the slopes: only DP-GD is held to OLS
        # an independent computation: least squares on the raw columns (the categories' difference is identified)
        ols = np.linalg.lstsq(np.column_stack([raw[:, :2], raw[:, 3], np.ones(len(y))]), y, rcond=None)[0]
        assert est.coef_[0] == pytest.approx(ols[0], abs=0.1) and est.coef_[1] == pytest.approx(ols[1], abs=0.05)
        assert est.coef_[3] - est.coef_[2] == pytest.approx(ols[2], abs=2.0)
    else:  # per year and per k$ (true 0.5 and −0.1), not per declared range (50 and −25)
        assert 0.1 < est.coef_[0] < 1.0 and -0.3 < est.coef_[1] < 0.0


def test_predictions_stay_in_the_declared_label_range():
    """Whatever the released θ (here replaced by a large one, as a noisy release can be),
    predict() stays in [low, high] of label_spec / [−y_bound, y_bound], and equals the linear
    predictor wherever that is inside."""
    X, y = _table(n=2000)
    for kwargs, (low, high) in (({"label_spec": SPEC}, (80, 200)), ({"y_bound": 150.0}, (-150, 150))):
        est = DPRidge(epsilon=1.0, x_bound=float(np.sqrt(6)), random_state=0, ledger=dp.Ledger(), **kwargs).fit(X, y)
        assert est.label_range() == (low, high)
        est._theta = np.array([200.0, -200.0, 200.0, -200.0, 200.0, 0.0])  # x0 − x1 + … : both clips act
        linear = X @ est._theta[:-1] + est._theta[-1]
        if "label_spec" in kwargs:
            linear = 140.0 + 60.0 * linear  # the label map's centre and half-width
        predicted = est.predict(X)
        assert predicted.min() >= low and predicted.max() <= high
        assert np.any(linear < low) and np.any(linear > high)  # the clip acted at both ends
        np.testing.assert_allclose(predicted, np.clip(linear, low, high), rtol=1e-12)
