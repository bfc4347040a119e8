"""dpopt.sklearn.SchemaEncoder: a scikit-learn transformer that encodes by the declared schema and
learns nothing from the data, so a Pipeline built with it stays private."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sklearn")
pd = pytest.importorskip("pandas")

from sklearn.base import clone  # noqa: E402
from sklearn.pipeline import Pipeline  # noqa: E402

import dpopt as dp  # noqa: E402
from dpopt.errors import DataError, ModelError  # noqa: E402
from dpopt.modeling.schema import Binary, Categorical, Fill, Numeric, Schema  # noqa: E402
from dpopt.sklearn import DPLogisticRegression  # noqa: E402
from dpopt.sklearn.encoder import SchemaEncoder  # noqa: E402

SCHEMA = Schema({"age": Numeric(17, 90, grid=1, missing=Fill(40)), "sex": Categorical(["F", "M"],
                                                                                     missing="indicator"),
                 "union": Binary()})
CLASSES = ["<=50K", ">50K"]


def people(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    age = rng.integers(17, 91, n).astype(float)
    frame = pd.DataFrame({"age": age, "sex": rng.choice(["F", "M"], n), "union": rng.integers(0, 2, n),
                          "extra": rng.normal(size=n)})
    frame["income"] = np.where(age > 50, ">50K", "<=50K")
    return frame


def test_transform_is_the_mapping_of_dataset_from_frame():
    frame = people(30, 0)
    frame.loc[0, "age"], frame.loc[1, "sex"], frame.loc[2, "age"] = np.nan, None, 150
    encoder = SchemaEncoder(SCHEMA, intercept=True).fit(frame.drop(columns="income"))
    data = dp.Dataset.from_frame(frame, SCHEMA, label="income", classes=CLASSES, intercept=True)
    np.testing.assert_array_equal(encoder.transform(frame.drop(columns="income")), data.X)
    assert list(encoder.get_feature_names_out()) == list(data.feature_names)
    assert encoder.row_norm_bound() == pytest.approx(data.x_bound)


def test_fit_reads_no_value():
    """Fitted on two different tables with the same columns — even one full of values outside the
    declaration — the encoder is the same: nothing it holds comes from the data."""
    a, b = people(20, 1), people(50, 2)
    b["age"], b["union"] = 1e6, np.nan  # out of range, missing without a policy: fit does not look
    first, second = SchemaEncoder(SCHEMA).fit(a), SchemaEncoder(SCHEMA).fit(b)
    assert first.schema_ == second.schema_ and first.n_features_in_ == second.n_features_in_
    assert list(first.feature_names_in_) == list(second.feature_names_in_)
    probe = people(5, 3)
    np.testing.assert_array_equal(first.transform(probe), second.transform(probe))
    with pytest.raises(DataError, match="column 'union' has missing values"):  # refused where it is read
        second.transform(b)


def test_columns_are_checked_by_name_with_a_did_you_mean():
    with pytest.raises(DataError, match="no column 'sex' declared by the schema; did you mean 'Sex'"):
        SchemaEncoder(SCHEMA).fit(people(5, 0).rename(columns={"sex": "Sex"}))
    with pytest.raises(ModelError):
        SchemaEncoder(None).fit(people(5, 0))
    with pytest.raises(ModelError):
        SchemaEncoder(SCHEMA, unseen="drop").fit(people(5, 0))


def test_arrays_and_mappings_in_declared_order():
    frame = people(6, 4)[["age", "sex", "union"]]
    expected = SchemaEncoder(SCHEMA).fit_transform(frame)
    as_array = SchemaEncoder(SCHEMA).fit(frame.to_numpy(dtype=object))
    np.testing.assert_array_equal(as_array.transform(frame.to_numpy(dtype=object)), expected)
    as_dict = SchemaEncoder(SCHEMA).fit({k: frame[k].to_numpy() for k in frame.columns})
    np.testing.assert_array_equal(as_dict.transform({k: frame[k].to_numpy() for k in frame.columns}), expected)
    out = SchemaEncoder(SCHEMA).set_output(transform="pandas").fit_transform(frame)
    assert list(out.columns) == ["age", "sex=F", "sex=M", "sex_missing", "union"]


def test_a_pipeline_fits_privately_and_clones():
    frame = people(200, 5)
    X, y = frame.drop(columns="income"), frame["income"]
    ledger = dp.Ledger()
    encoder = SchemaEncoder(SCHEMA)
    model = DPLogisticRegression(epsilon=1.0, x_bound=encoder.row_norm_bound(), classes=CLASSES, ledger=ledger,
                                 random_state=0)
    pipeline = Pipeline([("encode", encoder), ("model", model)])
    pipeline.fit(X, y)
    assert len(ledger.charges) == 1 and set(pipeline.predict(X)) <= set(CLASSES)
    twin = clone(pipeline)
    assert twin.get_params()["encode__schema"] == SCHEMA and not hasattr(twin.named_steps["encode"], "schema_")
    assert twin.named_steps["model"].ledger is ledger  # the estimator's clone shares the budget
    twin.fit(X, y)
    assert len(ledger.charges) == 2
    assert list(pipeline[:-1].get_feature_names_out()) == ["age", "sex=F", "sex=M", "sex_missing", "union"]
