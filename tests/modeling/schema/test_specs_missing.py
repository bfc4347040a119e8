"""Missing values: a per-column policy declared in the schema (never computed from the data), mapped
row by row like any other entry outside the declaration; a missing entry without a policy is
refused when the dataset is built — before any charge — naming the column (and the file)."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import dpopt as dp
from dpopt.errors import DataError, ModelError
from dpopt.modeling.schema import Binary, Categorical, Fill, Numeric, Schema

pd = pytest.importorskip("pandas")

SCHEMA = Schema({"age": Numeric(0, 100, grid=1, missing=Fill(40)),
                 "hours": Numeric(0, 80, grid=1, missing="indicator"),
                 "sex": Categorical(["F", "M"], missing="indicator"),
                 "union": Binary(missing=Fill(0)),
                 "state": Categorical(["a", "b"], missing="zero")})


def table(**overrides: object) -> pd.DataFrame:
    cols = {"age": [30, 50, 70], "hours": [40, 20, 60], "sex": ["F", "M", "F"], "union": [1, 0, 1],
            "state": ["a", "b", "a"], "y": ["no", "yes", "no"]}
    cols.update(overrides)
    return pd.DataFrame(cols)


def build(frame: pd.DataFrame, schema: Schema = SCHEMA, **kw: Any) -> dp.Dataset:
    return dp.Dataset.from_frame(frame, schema, label="y", classes=["no", "yes"], scale=False, **kw)


def test_policies_are_declarations_hashable_and_part_of_the_schema():
    again = Schema(list(SCHEMA.columns))
    assert again == SCHEMA and hash(again) == hash(SCHEMA)
    assert Numeric(0, 1, grid="1/2", missing=Fill(0)) != Numeric(0, 1, grid="1/2")  # the policy is declared
    assert SCHEMA.feature_names == ["age", "hours", "hours_missing", "sex=F", "sex=M", "sex_missing", "union",
                                    "state=a", "state=b"]
    assert "missing=Fill(40)" in repr(SCHEMA) and "missing='indicator'" in repr(SCHEMA)
    with pytest.raises(AttributeError):
        SCHEMA.columns[0][1].missing = None  # frozen, like the other declarations
    assert pickle.loads(pickle.dumps(SCHEMA)) == SCHEMA


@pytest.mark.parametrize("make", [
    lambda: Numeric(0, 10, grid=1, missing=Fill(11)),          # a fill outside the declared range
    lambda: Numeric(0, 10, grid=1, missing=Fill("mean")),      # never a statistic: a number
    lambda: Numeric(0, 10, grid=1, missing="zero"),            # "zero" is a categorical's block
    lambda: Numeric(0, 10, grid=1, missing="median"),
    lambda: Binary(missing=Fill(0.5)),
    lambda: Categorical(["a", "b"], missing=Fill("c")),        # not a declared category
    lambda: Categorical(["a", "b"], missing=Fill("a", indicator=True)),
    lambda: Fill(float("nan")),
    lambda: Fill([1, 2]),
    lambda: Schema({"x": Numeric(0, 1, grid="1/2", missing="indicator"), "x_missing": Binary()}),  # names clash
])
def test_bad_policies_are_refused_at_declaration(make):
    with pytest.raises(ModelError):
        make()


def test_a_declared_policy_maps_a_missing_entry_like_any_other_entry():
    data = build(table(age=[np.nan, 50, 70], hours=[40, None, 60], sex=["F", None, "F"], union=[1, 0, np.nan],
                       state=[None, "b", "a"]))
    names = list(data.feature_names)
    row = dict(zip(names, data.X[0], strict=True))
    assert row["age"] == 40 and row["state=a"] == row["state=b"] == 0  # Fill(40); the all-zero block
    row = dict(zip(names, data.X[1], strict=True))
    assert row["hours"] == 0 and row["hours_missing"] == 1  # 'indicator': low and the public 0/1 column
    assert row["sex=F"] == row["sex=M"] == 0 and row["sex_missing"] == 1  # a category of its own
    assert dict(zip(names, data.X[2], strict=True))["union"] == 0
    full = build(table())  # rows without a missing entry: the indicators are 0
    assert full.X[:, [names.index("hours_missing"), names.index("sex_missing")]].sum() == 0


def test_the_public_facts_are_the_same_whatever_is_missing():
    """Every decision reads the declaration: a neighbouring table with a missing entry has the same
    bound, schema, names and n — the missing entry is mapped, not a new fact."""
    plain, holed = build(table()), build(table(age=[np.nan, 50, 70], sex=[None, "M", "F"]))
    for attr in ("x_bound", "schema", "feature_names", "n", "n_features", "y_bound"):
        assert getattr(plain, attr) == getattr(holed, attr), attr
    assert np.array_equal(plain.X[1:], holed.X[1:])  # row by row: the other rows do not move
    assert plain.x_bound == pytest.approx(SCHEMA.row_norm_bound(2))


def test_a_fill_reads_as_a_table_value_so_scaling_applies_to_it():
    data = dp.Dataset.from_frame(table(age=[np.nan, 50, 70]), SCHEMA, label="y", classes=["no", "yes"])
    assert data.X[0, 0] == pytest.approx(0.4)  # Fill(40) of a column declared [0, 100], scaled onto [0, 1]


@pytest.mark.parametrize("column, value", [("age", np.nan), ("age", None), ("sex", None), ("sex", np.nan),
                                           ("union", np.nan), ("sex", pd.NA)])
def test_no_policy_refuses_before_the_charge_naming_the_column_and_the_policies(column, value):
    schema = Schema({"age": Numeric(0, 100, grid=1), "sex": Categorical(["F", "M"]), "union": Binary()})
    frame = table()
    frame[column] = frame[column].astype(object)
    frame.loc[1, column] = value
    ledger = dp.Ledger()

    def private_run(frame: pd.DataFrame) -> dp.Release:
        data = build(frame, schema)
        theta = dp.Variable(data.n_features)
        problem = dp.Problem(dp.LogisticLoss(data, theta), constraint=dp.L2Ball(theta, 1.0))
        return dp.DPGradientDescent(1.0, 1e-6, ledger=ledger).run(problem, seed=0)

    with pytest.raises(DataError) as refused:
        private_run(frame)
    message = str(refused.value)
    assert f"column {column!r}" in message and "Fill" in message and "indicator" in message
    assert "\n" not in message and "50" not in message and "'M'" not in message  # one line, no value
    assert len(ledger.charges) == 0  # refused when the dataset is built, before any mechanism
    assert private_run(table()).private and len(ledger.charges) == 1


def test_a_missing_entry_is_not_an_undeclared_category():
    """unseen='error' (a check) says nothing about missing entries, which follow the policy."""
    data = build(table(sex=["F", None, "F"]), unseen="error")
    assert data.X[1, SCHEMA.feature_names.index("sex_missing")] == 1
    with pytest.raises(DataError, match="not one of its declared categories"):
        build(table(sex=["F", "X", "F"]), unseen="error")


def test_expanded_arrays_follow_the_same_policies():
    """Dataset(X, y, schema=...) with an expanded X: a NaN is read by its column's policy too."""
    schema = Schema({"a": Numeric(-1, 1, grid="1/4", missing=Fill(0.5, indicator=True)), "b": Binary()})
    X = np.array([[np.nan, np.nan, 1.0], [0.3, 0.0, 0.0]])
    data = dp.Dataset(X, [1.0, -1.0], schema=schema)
    assert data.X.tolist() == [[0.5, 1.0, 1.0], [0.25, 0.0, 0.0]]
    with pytest.raises(DataError, match="column 'b'"):
        dp.Dataset(np.array([[0.0, 0.0, np.nan]]), [1.0], schema=schema)
    with pytest.raises(DataError, match="column 'a' holds an infinite entry"):
        dp.Dataset(np.array([[np.inf, 0.0, 0.0]]), [1.0], schema=schema)


def test_from_csv_names_the_file_and_the_column(tmp_path: Path):
    path = tmp_path / "people.csv"
    path.write_text("age,sex,y\n30,F,no\n,M,yes\n")  # an empty cell is missing
    schema = Schema({"age": Numeric(0, 100, grid=1), "sex": Categorical(["F", "M"])})
    with pytest.raises(DataError) as refused:
        dp.Dataset.from_csv(path, schema, label="y", classes=["no", "yes"])
    assert str(refused.value).startswith(f"{path}: column 'age'")
    filled = Schema({"age": Numeric(0, 100, grid=1, missing=Fill(30)), "sex": Categorical(["F", "M"])})
    data = dp.Dataset.from_csv(path, filled, label="y", classes=["no", "yes"], scale=False)
    assert data.X[:, 0].tolist() == [30.0, 30.0]


def test_many_files_read_inside_the_run_apply_the_policy_instead_of_zero(tmp_path: Path):
    """A file-backed partition is read after the charge, where nothing may be refused: a declared
    policy applies there too (not the 0 an undeclared missing entry reads as)."""
    pytest.importorskip("dask.dataframe")
    from dpopt.modeling.readers import materialize

    (tmp_path / "a.csv").write_text("age,sex,y\n30,F,no\n,M,yes\n")
    (tmp_path / "b.csv").write_text("age,sex,y\n60,,no\n")
    schema = Schema({"age": Numeric(0, 100, grid=1, missing=Fill(50)), "sex": Categorical(["F", "M"],
                                                                                         missing="indicator")})
    data = dp.Dataset.from_csv(str(tmp_path / "*.csv"), schema, label="y", classes=["no", "yes"], scale=False)
    X, _ = materialize([data.X, data.y])
    assert X.tolist() == [[30, 1, 0, 0], [50, 0, 1, 0], [60, 0, 0, 1]]
    plain = Schema({"age": Numeric(0, 100, grid=1), "sex": Categorical(["F", "M"])})
    lenient = dp.Dataset.from_csv(str(tmp_path / "*.csv"), plain, label="y", classes=["no", "yes"], scale=False)
    X, _ = materialize([lenient.X, lenient.y])
    assert X.tolist() == [[30, 1, 0], [0, 0, 1], [60, 0, 0]]  # no policy: read as 0 / the zero block
