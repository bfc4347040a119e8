"""Row-by-row mapping onto a schema (:mod:`dpopt.modeling.schema.encoding`): clipping, rounding, exact scaling, tables."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import dpopt as dp
from dpopt.errors import DataError, ModelError
from dpopt.modeling.schema import Binary, Categorical, Numeric, Schema

# ---------------------------------------------------------------------------------------------
# mapping row by row
# ---------------------------------------------------------------------------------------------

SCHEMA = Schema([("a", Numeric(-1, 1, grid="1/4")), ("b", Binary()), ("c", Categorical(["x", "y", "z"]))])


def test_rows_are_clipped_rounded_and_one_hot_blocks_repaired():
    X = np.array([
        [0.3, 0.7, 1.0, 0.0, 0.0],  # round 0.3 → 0.25, binary 0.7 → 1
        [-5.0, -2.0, 0.2, 0.9, 0.6],  # clip to −1 and 0; block → one-hot of its largest
        [7.0, 3.0, 0.1, 0.2, 0.3],  # clip to 1 and 1; block below 1/2 → zeros
        [0.125, 0.5, 1.0, 1.0, 0.0],  # a tie on the grid → the even index; a tie in a block → the first
    ])
    M = SCHEMA.map_rows(X)
    np.testing.assert_array_equal(M, [
        [0.25, 1.0, 1.0, 0.0, 0.0],
        [-1.0, 0.0, 0.0, 1.0, 0.0],
        [1.0, 1.0, 0.0, 0.0, 0.0],
        [0.0, 0.0, 1.0, 0.0, 0.0],
    ])
    for i in range(X.shape[0]):  # row by row: a row maps alone as it maps in a batch
        np.testing.assert_array_equal(SCHEMA.map_rows(X[i:i + 1]), M[i:i + 1])
    np.testing.assert_array_equal(SCHEMA.map_rows(M), M)  # idempotent


def test_mapping_is_the_identity_on_data_on_the_grid():
    s = Schema({"a": Numeric(0, 1, grid="1/90"), "b": Numeric(-1, 1, grid="1/99"), "c": Numeric(-5, 5, grid=0.1)})
    k = np.arange(91)
    X = np.column_stack([k / 90, (k - 45) / 99, (k - 45) / 10])  # the doubles nearest to the grid values
    np.testing.assert_array_equal(s.map_rows(X), X)


def test_scale_and_to_integers_are_exact():
    s = Schema({"a": Numeric(0, 1, grid="1/90"), "b": Numeric(-1, 1, grid="1/16"), "c": Numeric(-0.5, 2, grid="1/3")})
    assert s.scale == 720
    rng = np.random.default_rng(0)
    ka, kb, kc = rng.integers(0, 91, 50), rng.integers(0, 33, 50), rng.integers(0, 8, 50)
    exact = [[Fraction(int(a), 90), Fraction(-1) + Fraction(int(b), 16), Fraction(-1, 2) + Fraction(int(c), 3)]
             for a, b, c in zip(ka, kb, kc, strict=True)]
    X = np.array([[float(v) for v in row] for row in exact])
    A = s.to_integers(X)
    assert A.dtype == np.int64
    assert A.tolist() == [[int(v * 720) for v in row] for row in exact]
    assert np.abs(A).max() <= max(s.integer_bound(j) for j in range(3))


@pytest.mark.parametrize("bad, other", [  # a NaN or inf in the same column, different values elsewhere
    (np.array([[np.nan, 0.0, 1.0, 0.0, 0.0]]), np.array([[np.nan, 0.7, 0.0, 0.2, 0.0]])),
    (np.array([[0.5, 0.0, 1.0, np.inf, 0.0]]), np.array([[0.3, 1.0, 0.0, -np.inf, 0.5]])),
    (np.zeros((2, 4)), np.ones((2, 4))),  # wrong width
    (np.zeros(5), np.full(5, 0.25)),  # not 2-D
    (np.array([["a", "b", "c", "d", "e"]]), np.array([["v", "w", "x", "y", "z"]])),  # not numeric
])
def test_only_nan_shape_and_dtype_are_refused_and_messages_name_no_value(bad, other):
    """A NaN (no missing-value policy declared), an inf, a wrong shape or dtype: the message names
    the column at most, so it is the same for any values of the same shape and column."""
    messages = []
    for X in (bad, other):
        with pytest.raises(DataError) as e:
            SCHEMA.map_rows(X)
        messages.append(str(e.value))
    assert messages[0] == messages[1]


def test_encode_tables_and_undeclared_categories():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"c": ["y", "w", "v"], "a": [0.3, -2.0, 0.5], "b": [1, 0, 1], "extra": [1, 2, 3]})
    expected = [[0.25, 1.0, 0.0, 1.0, 0.0], [-1.0, 0.0, 0.0, 0.0, 0.0], [0.5, 1.0, 0.0, 0.0, 0.0]]
    np.testing.assert_array_equal(SCHEMA.encode(frame), expected)
    np.testing.assert_array_equal(SCHEMA.encode({k: frame[k].to_numpy() for k in ("a", "b", "c")}), expected)
    with pytest.raises(DataError, match="column 'c' has missing values"):  # missing is not undeclared
        SCHEMA.encode(frame.assign(c=["y", "w", None]))
    with pytest.raises(DataError, match="no column 'b'"):
        SCHEMA.encode({"a": [0.0], "c": ["x"]})
    with pytest.raises(DataError, match="not numeric"):
        SCHEMA.encode({"a": ["high"], "b": [1], "c": ["x"]})
    data = dp.Dataset.from_frame(frame.assign(label=["yes", "no", "yes"]), SCHEMA, "label", positive="yes",
                                 scale=False)
    assert data.y.tolist() == [1.0, -1.0, 1.0] and data.schema is SCHEMA


# ---------------------------------------------------------------------------------------------
# Dataset with a schema
# ---------------------------------------------------------------------------------------------


def test_dataset_maps_rows_and_defaults_the_bound_from_the_schema():
    X = np.array([[0.3, 0.7, 1.0, 0.0, 0.0], [-5.0, 0.0, 0.0, 0.0, 0.2]])
    data = dp.Dataset(X, np.array([1.0, -1.0]), schema=SCHEMA)
    np.testing.assert_array_equal(data.X, SCHEMA.map_rows(X))
    assert data.x_bound == pytest.approx(SCHEMA.row_norm_bound(2)) and data.x_norm == 2
    assert dp.Dataset(X, np.ones(2), schema=SCHEMA, x_norm=1).x_bound == pytest.approx(3.0)
    assert dp.Dataset(X, np.ones(2), schema=SCHEMA, x_bound=10.0).x_bound == 10.0
    nb = data.replace_row(0, [0.61, 0.2, 0.0, 0.9, 0.0], 1.0)  # the neighbour's row is mapped too
    assert nb.schema is SCHEMA and nb.X[0].tolist() == [0.5, 0.0, 0.0, 1.0, 0.0]
    assert data.subset([1]).schema is SCHEMA and "schema=" in repr(data)
    with pytest.raises(ModelError, match="x_bound must be declared"):
        dp.Dataset(X, np.ones(2))  # still required without a schema
