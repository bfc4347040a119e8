"""A numeric label declared like a column (label_spec=Numeric(low, high, ...)): centred and scaled
onto [−1, 1] by its DECLARED range (y_bound = 1), clipped when outside it (never refused), with
the public affine map kept on the dataset so predictions return to the label's units."""

from __future__ import annotations

import pickle
import warnings
from pathlib import Path

import numpy as np
import pytest

import dpopt as dp
from dpopt.errors import DataError, ModelError
from dpopt.modeling.schema import Categorical, Fill, LabelMap, Numeric, Schema

pd = pytest.importorskip("pandas")

SCHEMA = Schema({"rooms": Numeric(1, 9, grid=1), "city": Categorical(["a", "b"])})
PRICE = Numeric(100, 500, grid=1)


def table(price: list[object]) -> pd.DataFrame:
    n = len(price)
    return pd.DataFrame({"rooms": np.arange(n) % 9 + 1, "city": ["a", "b"] * (n // 2) + ["a"] * (n % 2),
                         "price": price})


def test_the_declared_range_maps_onto_minus_one_one():
    data = dp.Dataset.from_frame(table([100, 300, 500, 400]), SCHEMA, label="price", label_spec=PRICE)
    assert data.y.tolist() == [-1.0, 0.0, 1.0, 0.5] and data.y_bound == 1.0
    m = data.label_map
    assert isinstance(m, LabelMap) and (m.centre, m.half_width) == (300.0, 200.0)
    assert m.from_unit(data.y).tolist() == [100, 300, 500, 400]
    y = np.array([123.0, 499.0])
    np.testing.assert_allclose(m.from_unit(m.to_unit(y)), y)


def test_the_map_is_a_declaration_not_a_statistic():
    """Two tables with different label ranges get the same map: it reads the declaration only."""
    low = dp.Dataset.from_frame(table([100, 110, 120, 130]), SCHEMA, label="price", label_spec=PRICE)
    high = dp.Dataset.from_frame(table([450, 460, 470, 480]), SCHEMA, label="price", label_spec=PRICE)
    assert low.label_map == high.label_map and low.y_bound == high.y_bound == 1.0
    assert low.x_bound == high.x_bound and low.schema == high.schema


def test_labels_outside_the_range_are_clipped_rounded_and_never_refused():
    data = dp.Dataset.from_frame(table([-1e9, 50, 600, 300.4]), SCHEMA, label="price", label_spec=PRICE)
    assert data.y.tolist() == [-1.0, -1.0, 1.0, 0.0]  # clipped onto [100, 500], rounded to the grid of 1
    with pytest.raises(DataError) as refused:  # clip=False: a check of one's own table
        dp.Dataset.from_frame(table([100, 600]), SCHEMA, label="price", label_spec=PRICE, clip=False)
    assert "'price'" in str(refused.value) and "[100, 500]" in str(refused.value)
    assert "600" not in str(refused.value)


def test_a_missing_label_follows_its_declared_policy_or_is_refused_naming_the_column():
    filled = dp.Dataset.from_frame(table([100, None, np.nan, 500]), SCHEMA, label="price",
                                   label_spec=Numeric(100, 500, grid=1, missing=Fill(300)))
    assert filled.y.tolist() == [-1.0, 0.0, 0.0, 1.0]
    with pytest.raises(DataError, match="label column 'price' has missing values"):
        dp.Dataset.from_frame(table([100, None]), SCHEMA, label="price", label_spec=PRICE)
    with pytest.raises(DataError, match="label column 'price' has missing values"):  # without label_spec too
        dp.Dataset.from_frame(table([100.0, np.nan]), SCHEMA, label="price", y_bound=500.0)


@pytest.mark.parametrize("kwargs", [
    {"label_spec": PRICE, "classes": ["a", "b"]},
    {"label_spec": PRICE, "y_bound": 2.0},
    {"label_spec": Categorical(["a", "b"])},
    {"label_spec": Numeric(0, 1, grid="1/2", missing="indicator")},
    {"label_spec": (100, 500)},
])
def test_conflicting_or_malformed_label_declarations_are_refused(kwargs):
    with pytest.raises(ModelError):
        dp.Dataset.from_frame(table([100, 200]), SCHEMA, label="price", **kwargs)


def test_the_map_travels_with_subsets_and_pickles_but_not_into_class_labels():
    data = dp.Dataset.from_frame(table([100, 300, 500, 400]), SCHEMA, label="price", label_spec=PRICE)
    assert data.subset([0, 1]).label_map == data.label_map
    assert data.replace_row(0, data.X[1], 0.25).label_map == data.label_map
    assert pickle.loads(pickle.dumps(data)).label_map == data.label_map
    assert data.with_class_labels().label_map is None
    assert "label_map=LabelMap('price'" in repr(data)
    with pytest.raises(ModelError, match="y_bound is 1"):
        dp.Dataset(data.X, data.y, schema=data.schema, label_map=data.label_map, y_bound=3.0)


def test_linear_predictions_return_to_the_label_units():
    m = LabelMap("price", PRICE)
    X = np.random.default_rng(0).uniform(size=(5, 3))
    coef, intercept = np.array([0.5, -0.25, 0.1]), 0.2
    units_coef, units_intercept = m.linear_from_unit(coef, intercept)
    np.testing.assert_allclose(m.from_unit(X @ coef + intercept), X @ units_coef + units_intercept)


def test_a_private_fit_on_mapped_labels_predicts_in_the_original_units():
    """Reasoning, not pinned numbers: with a generous budget the private ridge fit on [−1, 1] labels,
    mapped back, predicts in the table's units far better than the best constant does."""
    rng = np.random.default_rng(1)
    n = 400
    rooms = rng.integers(1, 10, n)
    price = 100 + 40 * (rooms - 1) + rng.normal(0, 5, n)  # 100..420
    frame = pd.DataFrame({"rooms": rooms, "city": rng.choice(["a", "b"], n), "price": price})
    data = dp.Dataset.from_frame(frame, SCHEMA, label="price", label_spec=PRICE, intercept=True)
    theta = dp.Variable(data.n_features)
    problem = dp.Problem(dp.SquaredLoss(data, theta), constraint=dp.L2Ball(theta, 10.0),
                         regularizer=dp.L2Squared(theta, 1e-3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a weak guarantee warns; this checks the units only
        release = dp.ObjectivePerturbation(50.0, 1e-6, ledger=dp.Ledger()).run(problem, seed=0)
    predicted = data.label_map.from_unit(data.X @ release.theta)
    best_constant = np.median(np.abs(price - np.median(price)))  # ~84 in the table's units
    assert np.median(np.abs(predicted - price)) < best_constant / 4


def test_many_files_map_the_label_as_in_memory(tmp_path: Path):
    pytest.importorskip("dask.dataframe")
    from dpopt.modeling.readers import materialize

    frame = table([100, 600, None, 350])
    frame.iloc[:2].to_csv(tmp_path / "a.csv", index=False)
    frame.iloc[2:].to_csv(tmp_path / "b.csv", index=False)
    spec = Numeric(100, 500, grid=1, missing=Fill(300))
    files = dp.Dataset.from_csv(str(tmp_path / "*.csv"), SCHEMA, label="price", label_spec=spec)
    memory = dp.Dataset.from_frame(frame, SCHEMA, label="price", label_spec=spec)
    (y,) = materialize([files.y])
    assert y.tolist() == memory.y.tolist() == [-1.0, 1.0, 0.0, 0.25]
    assert files.label_map == memory.label_map and files.y_bound == 1.0
