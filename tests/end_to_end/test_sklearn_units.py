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
    assert hidden._auto() == est._auto()
    assert run_to_charge(hidden_mech, hidden_problem) == seen and not reads
