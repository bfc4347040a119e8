"""A user's own table in: Dataset.from_frame / from_csv with public declarations, intercept,
label policies, and feature names carried into the release."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest

import dpopt as dp
from dpopt.errors import DataError, ModelError
from dpopt.modeling.schema import Intercept

pd = pytest.importorskip("pandas")

SCHEMA = dp.Schema({"age": dp.Numeric(17, 90, grid=1), "hours": dp.Numeric(0, 99, grid=1),
                    "sex": dp.Categorical(["F", "M"]), "union": dp.Binary()})
CLASSES = ["<=50K", ">50K"]


def frame(**overrides: object) -> pd.DataFrame:
    cols = {"age": [39, 50.4, 120, 20], "hours": [40, 13, 60, 99], "sex": ["M", "F", "?", "F"],
            "union": [1, 0, 1, 0], "income": ["<=50K", ">50K", ">50K", "<=50K"]}
    cols.update(overrides)  # type: ignore[arg-type]
    return pd.DataFrame(cols)


def test_from_frame_encodes_through_the_declarations_and_maps_classes():
    data = dp.Dataset.from_frame(frame(), SCHEMA, label="income", classes=CLASSES)
    assert data.y.tolist() == [-1.0, 1.0, 1.0, -1.0]
    # scaled by the declared bounds [17, 90], rounded to the grid, clipped: (x − 17)/73
    np.testing.assert_allclose(data.X[:, 0], np.array([39.0, 50.0, 90.0, 20.0]) / 73 - 17 / 73)
    np.testing.assert_allclose(data.X[:, 1], np.array([40.0, 13.0, 60.0, 99.0]) / 99)
    assert data.X[2, 2:4].tolist() == [0.0, 0.0]  # "?" is not declared: the all-zero block
    assert data.feature_names == ("age", "hours", "sex=F", "sex=M", "union")
    assert data.x_bound == pytest.approx(math.sqrt(4)) == SCHEMA.unit_scaled().row_norm_bound(2)
    raw = dp.Dataset.from_frame(frame(), SCHEMA, label="income", classes=CLASSES, scale=False)
    assert raw.X[:, 0].tolist() == [39.0, 50.0, 90.0, 20.0] and raw.x_bound == pytest.approx(SCHEMA.row_norm_bound(2))


def test_unit_scaling_is_declared_and_exact_on_the_grid():
    """A unit column keeps its integer grid (the 0/1-loss oracles read X in integers)."""
    unit = SCHEMA.unit_scaled()
    assert unit.columns[0][1] == dp.Numeric(17, 90, grid=1, unit=True) and unit.scale == 73 * 99
    X = unit.encode(frame())
    assert unit.to_integers(X)[:, 0].tolist() == [22 * 99, 33 * 99, 73 * 99, 3 * 99]
    assert "unit=True" in repr(unit)


def test_labels_outside_the_classes_follow_the_declared_policy():
    table = frame(income=["<=50K", ">50K", "unknown", None])
    data = dp.Dataset.from_frame(table, SCHEMA, label="income", classes=CLASSES)
    assert data.y.tolist() == [-1.0, 1.0, -1.0, -1.0]  # private default: never refused, negative class
    with pytest.raises(DataError) as err:
        dp.Dataset.from_frame(table, SCHEMA, label="income", classes=CLASSES, unknown_label="error")
    assert "unknown" not in str(err.value).replace("unknown_label", "")  # the value is not named


def test_unseen_categories_zero_by_default_or_refused_without_naming_the_value():
    table = frame(sex=["M", "F", "Xylophone", "F"])
    data = dp.Dataset.from_frame(table, SCHEMA, label="income", classes=CLASSES)
    assert data.X[2, 2:4].tolist() == [0.0, 0.0]
    with pytest.raises(DataError, match="'sex'") as err:
        dp.Dataset.from_frame(table, SCHEMA, label="income", classes=CLASSES, unseen="error")
    assert "Xylophone" not in str(err.value)
    ok = frame(sex=["M", "F", "F", "M"])
    assert dp.Dataset.from_frame(ok, SCHEMA, label="income", classes=CLASSES, unseen="error").n == 4


@pytest.mark.parametrize("kwargs", [
    {"classes": ["a"]}, {"classes": ["a", "a"]}, {"classes": "ab"},
    {"classes": CLASSES, "positive": ">50K"}, {"unseen": "drop"}, {"unknown_label": "drop"},
    {"intercept": "yes"},
])
def test_bad_declarations_are_refused(kwargs):
    with pytest.raises(ModelError):
        dp.Dataset.from_frame(frame(), SCHEMA, label="income", **kwargs)


def test_a_label_that_is_also_a_feature_and_a_missing_label_column_are_refused():
    with pytest.raises(ModelError, match="also a declared feature"):
        dp.Dataset.from_frame(frame(), SCHEMA, label="age")
    with pytest.raises(DataError, match="no label column 'target'"):
        dp.Dataset.from_frame(frame(), SCHEMA, label="target", classes=CLASSES)


def test_the_intercept_is_declared_and_counted_by_the_row_bound():
    table = frame(intercept=["junk", None, 7, 0])  # a table column named intercept is never read
    data = dp.Dataset.from_frame(table, SCHEMA, label="income", classes=CLASSES, intercept=True)
    assert data.feature_names[-1] == "intercept" and data.schema is not None and data.schema.has_intercept
    assert data.X[:, -1].tolist() == [1.0] * 4
    assert data.x_bound == pytest.approx(math.hypot(SCHEMA.unit_scaled().row_norm_bound(2), 1.0))
    assert data.schema.row_norm_bound(1) == pytest.approx(SCHEMA.unit_scaled().row_norm_bound(1) + 1)
    assert data.schema.with_intercept() is data.schema
    assert data.subset([0, 1]).feature_names == data.feature_names


def test_the_intercept_spec_maps_every_row_to_one():
    schema = dp.Schema([("a", dp.Numeric(-1, 1, grid="1/2")), ("b", Intercept())])
    assert schema.map_rows(np.array([[0.4, 0.0], [-3.0, 5.0]])).tolist() == [[0.5, 1.0], [-1.0, 1.0]]
    assert schema.value_count([1]) == 1 and schema.is_binary(1) and repr(schema).endswith("'b': Intercept()})")


def test_regression_tables_read_a_numeric_label_with_its_declared_bound():
    table = frame(income=[1.5, -0.5, 9.0, 0.0])
    data = dp.Dataset.from_frame(table, SCHEMA, label="income", y_bound=2.0)
    assert data.y.tolist() == [1.5, -0.5, 2.0, 0.0]


def test_from_csv_reads_declared_text_categories_as_text(tmp_path):
    path = tmp_path / "people.csv"
    path.write_text("age;grade;income\n30;1;yes\n45;2;no\n61;3;yes\n")
    schema = dp.Schema({"age": dp.Numeric(17, 90, grid=1), "grade": dp.Categorical(["1", "2"])})
    data = dp.Dataset.from_csv(path, schema, label="income", classes=["no", "yes"], sep=";")
    assert data.X[:, 1:].tolist() == [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]  # "3" is not declared
    assert data.y.tolist() == [1.0, -1.0, 1.0]
    with pytest.raises(DataError, match="no such CSV file"):
        dp.Dataset.from_csv(tmp_path / "missing.csv", schema, label="income")


def test_feature_names_travel_into_the_release_and_its_json():
    rng = np.random.default_rng(0)
    n = 40
    table = pd.DataFrame({"age": rng.integers(17, 91, n), "hours": rng.integers(0, 100, n),
                          "sex": rng.choice(["F", "M"], n), "union": rng.integers(0, 2, n),
                          "income": rng.choice(CLASSES, n)})
    data = dp.Dataset.from_frame(table, SCHEMA, label="income", classes=CLASSES, intercept=True)
    theta = dp.Variable(data.n_features)
    problem = dp.Problem(dp.LogisticLoss(data, theta), constraint=dp.L2Ball(theta, 1.0))
    assert problem.feature_names == data.feature_names
    release = dp.ObjectivePerturbation(1.0, 1e-6, ledger=dp.Ledger()).run(problem, solver="clarabel", seed=0)
    assert release.feature_names == ("age", "hours", "sex=F", "sex=M", "union", "intercept")
    assert json.loads(release.to_json())["feature_names"] == list(release.feature_names)
    plain = dp.Dataset(data.X, data.y, x_bound=data.x_bound)
    bare = dp.Problem(dp.LogisticLoss(plain, theta), constraint=dp.L2Ball(theta, 1.0))
    release = dp.DPGradientDescent(1.0, 1e-6, ledger=dp.Ledger()).run(bare, seed=0)
    assert release.feature_names == () and "feature_names" not in release.to_dict()


def test_discrete_releases_carry_the_schema_names():
    schema = dp.Schema({"a": dp.Numeric(-1, 1, grid="1/4"), "b": dp.Numeric(-1, 1, grid="1/4")})
    rng = np.random.default_rng(1)
    table = pd.DataFrame({"a": rng.uniform(-1, 1, 30), "b": rng.uniform(-1, 1, 30)})
    table["y"] = np.where(table.a > table.b, "pos", "neg")
    data = dp.Dataset.from_frame(table, schema, label="y", classes=["neg", "pos"], intercept=True)
    problem = dp.DiscreteProblem(dp.ZeroOneLoss(data, dp.Variable(3), dp.IntegerGrid(1, -1, 1)))
    release = dp.RSPM(epsilon=1.0, ledger=dp.Ledger()).run(problem, solver="bruteforce", seed=0)
    assert release.feature_names == ("a", "b", "intercept")


def test_declared_feature_names_are_checked():
    with pytest.raises(ModelError, match="2 names for 3 columns"):
        dp.Dataset(np.zeros((2, 3)), np.ones(2), x_bound=1.0, feature_names=("a", "b"))
    with pytest.raises(ModelError, match="strings"):
        dp.Dataset(np.zeros((2, 1)), np.ones(2), x_bound=1.0, feature_names="a")  # type: ignore[arg-type]


def test_infer_from_frame_drafts_a_schema_and_warns_that_it_is_not_private():
    table = frame().drop(columns="income")
    with pytest.warns(UserWarning, match="NOT private"):
        draft = dp.Schema.infer_from_frame(table)
    specs = dict(draft.columns)
    assert specs["union"] == dp.Binary() and specs["sex"] == dp.Categorical(["?", "F", "M"])
    assert specs["hours"] == dp.Numeric(13, 99, grid=1)
    assert isinstance(specs["age"], dp.Numeric) and float(specs["age"].low) <= 20.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert dp.Schema.infer_from_frame(table, exclude=["sex"]).feature_names == ["age", "hours", "union"]
