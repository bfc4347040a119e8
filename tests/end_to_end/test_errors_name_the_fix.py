"""Mistakes a newcomer makes are refused in one line that names the fix, before any charge; and
DPLasso's default radius follows the declared label scale."""

from __future__ import annotations

import numpy as np
import pytest

import dpopt as dp
from dpopt.errors import DataError, MechanismError

pytest.importorskip("sklearn")
pd = pytest.importorskip("pandas")
from dpopt.sklearn import DPLasso, DPLogisticRegression  # noqa: E402


def test_pure_dp_with_several_classes_names_one_vs_rest() -> None:
    rng = np.random.default_rng(0)
    X, y = rng.uniform(-1, 1, (90, 3)), rng.integers(0, 3, 90)
    ledger = dp.Ledger()
    with pytest.raises(MechanismError, match="mechanism='one-vs-rest'") as info:
        DPLogisticRegression(1.0, 0.0, x_bound=2.0, classes=[0, 1, 2], ledger=ledger).fit(X, y)
    assert "\n" not in str(info.value) and ledger.charges == ()
    # the named fix runs with δ = 0
    est = DPLogisticRegression(1.0, 0.0, x_bound=2.0, classes=[0, 1, 2], mechanism="one-vs-rest",
                               random_state=0, ledger=ledger).fit(X, y)
    assert est.predict(X).shape == (90,) and ledger.spent[1] == 0.0


def test_binary_on_words_names_categorical() -> None:
    rng = np.random.default_rng(1)
    schema = dp.Schema({"age": dp.Numeric(0, 100, grid=1), "smoker": dp.Binary()})
    table = pd.DataFrame({"age": rng.integers(0, 100, 50), "smoker": rng.choice(["smokes", "never"], 50)})
    ledger = dp.Ledger()
    with pytest.raises(DataError, match=r"smoker.*dp\.Categorical") as info:
        DPLogisticRegression(schema=schema, classes=[0, 1], ledger=ledger).fit(table, rng.integers(0, 2, 50))
    assert "\n" not in str(info.value) and "never" not in str(info.value)  # names the fix, not a value
    assert ledger.charges == ()


def test_a_schema_is_indexed_by_column_name() -> None:
    spec = dp.Numeric(0, 100, grid=1)
    schema = dp.Schema({"age": spec, "sex": dp.Categorical(["F", "M"])})
    assert schema["age"] == spec and isinstance(schema["sex"], dp.Categorical)
    assert "age" in schema and "income" not in schema
    with pytest.raises(KeyError, match="did you mean 'age'"):
        schema["agee"]


def _lasso_table(n: int = 4000) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(2)
    X = rng.uniform(0, 1, (n, 4))
    return X, 20.0 + X @ np.array([10.0, -5.0, 0.0, 3.0]) + rng.normal(0, 1, n)


def test_the_lasso_radius_comes_from_the_declared_label_scale() -> None:
    """Default radius Y/B∞ (here 50/1: rows in [0, 1]⁴ plus the intercept have ‖x‖∞ ≤ 1); the
    old constant 1 could not predict beyond ±1 and scored far below the mean predictor."""
    X, y = _lasso_table()
    fitted = DPLasso(8.0, x_bound=1.0, y_bound=50.0, random_state=0, ledger=dp.Ledger()).fit(X, y)
    assert fitted.radius_ == 50.0
    constant = DPLasso(8.0, x_bound=1.0, y_bound=50.0, radius=1.0, random_state=0, ledger=dp.Ledger()).fit(X, y)
    assert constant.radius_ == 1.0 and constant.score(X, y) < -10 < 0 < fitted.score(X, y)
    unit = DPLasso(1.0, x_bound=2.0, label_spec=dp.Numeric(0, 60, grid=1), ledger=dp.Ledger()).fit(X, y)
    assert unit.radius_ == pytest.approx(1.0 / 2.0)  # the label mapped onto [−1, 1]; ‖x‖∞ ≤ 2 declared


def test_options_of_the_other_mechanism_name_the_mechanism_under_auto() -> None:
    """DPRidge's auto picks AdaSSP at this n·ε; DP-GD's steps= then names the fix, before any charge."""
    from dpopt.sklearn import DPRidge

    rng = np.random.default_rng(3)
    X = rng.uniform(0, 1, (300, 3))
    ledger = dp.Ledger()
    with pytest.raises(MechanismError, match="mechanism='dp-gd' or 'adassp'") as info:
        DPRidge(1.0, x_bound=2.0, y_bound=3.0, mechanism_options={"steps": 100}, ledger=ledger).fit(X, X.sum(1))
    assert "'adassp'" in str(info.value) and ledger.charges == ()
    est = DPRidge(1.0, x_bound=2.0, y_bound=3.0, mechanism="dp-gd", mechanism_options={"steps": 100},
                  random_state=0, ledger=ledger).fit(X, X.sum(1))
    assert est.mechanism_ == "dp-gd" and est.release_.parameters["steps"] == 100
