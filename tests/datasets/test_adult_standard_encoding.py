"""Tests for the ``standard`` Adult encoding.

All one-hot categorical columns, the six numeric columns divided by public maxima, an
intercept; ``?`` read as the level ``unknown``; rows within the declared ℓ2 bound √15.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import dpopt.datasets as datasets
from dpopt.datasets import (
    STANDARD_X_BOUND,
    adult_features,
    adult_schema,
    adult_train_test,
    load_adult,
)
from dpopt.datasets import adult as adult_mod
from dpopt.errors import DataError
from dpopt.modeling.dataset import Dataset
from dpopt.modeling.schema import Numeric

N_TRAIN = 32_561
N_TEST = 16_281
D_STANDARD = 109  # 102 one-hot (incl. three "unknown" levels) + 6 numeric + intercept
N_ONEHOT = 102
BLOCKS = {  # column -> block width (adult.names levels, plus "unknown" where '?' occurs)
    "workclass": 9, "education": 16, "marital-status": 7, "occupation": 15,
    "relationship": 6, "race": 5, "sex": 2, "native-country": 42,
}  # fmt: skip
NUMERIC = {  # column -> public maximum
    "age": 90, "fnlwgt": 1_500_000, "education-num": 16, "capital-gain": 99_999,
    "capital-loss": 4_356, "hours-per-week": 99,
}  # fmt: skip
# adult.data line 1
_COL_INDEX = adult_mod._COL
FIRST_ROW = ("39", "State-gov", "77516", "Bachelors", "13", "Never-married", "Adm-clerical",
             "Not-in-family", "White", "Male", "2174", "0", "40", "United-States", "<=50K")  # fmt: skip


# the real cached functions, captured before any test monkeypatches them
_CACHED = (adult_mod._raw_table, adult_mod._encoded)


def _clear_caches() -> None:
    for function in _CACHED:
        function.cache_clear()


@pytest.fixture(scope="module")
def standard() -> tuple[Dataset, Dataset]:
    """(train, test) of the standard encoding, loaded once for the module."""
    return adult_train_test(encoding="standard")


def _encode_rows(monkeypatch: pytest.MonkeyPatch, rows: tuple[tuple[str, ...], ...]) -> np.ndarray:
    """X of the standard encoding of exactly ``rows`` (the caches must be fresh)."""
    _clear_caches()
    monkeypatch.setattr(adult_mod, "_raw_table", lambda filename: rows)
    return load_adult("train", encoding="standard").X


# --------------------------------------------------------------------------- shape and names


def test_shape_and_declared_bounds(standard: tuple[Dataset, Dataset]) -> None:
    train, test = standard
    assert train.X.shape == (N_TRAIN, D_STANDARD)  # '?' rows are kept: n is the file size
    assert test.X.shape == (N_TEST, D_STANDARD)
    for data in (train, test):
        assert data.x_norm == 2 and data.y_bound == 1.0
        assert data.x_bound == pytest.approx(math.sqrt(15))
        assert data.x_bound == STANDARD_X_BOUND == adult_schema("standard").row_norm_bound(2)
        assert set(np.unique(data.y)) == {-1.0, 1.0}
        norms = np.linalg.norm(data.X, axis=1)
        assert np.all(norms <= STANDARD_X_BOUND * (1 + 1e-12))
        assert np.all(norms >= 3.0)  # nine ones per row: the bound is nearly tight


def test_feature_names() -> None:
    names = adult_features("standard")
    assert len(names) == len(set(names)) == D_STANDARD
    assert names == adult_schema("standard").feature_names
    assert names[:9] == [
        "workclass=Private", "workclass=Self-emp-not-inc", "workclass=Self-emp-inc",
        "workclass=Federal-gov", "workclass=Local-gov", "workclass=State-gov",
        "workclass=Without-pay", "workclass=Never-worked", "workclass=unknown",
    ]  # fmt: skip
    assert names[N_ONEHOT:] == [*NUMERIC, "intercept"]
    assert {"occupation=unknown", "native-country=unknown", "native-country=Holand-Netherlands"} <= set(names)
    assert adult_features("standard") is not adult_features("standard")


def test_schema_declarations() -> None:
    schema = adult_schema("standard")
    assert schema is adult_schema("standard")
    assert [b.size for b in schema.blocks] == list(BLOCKS.values())
    assert schema.binary_columns.tolist() == [*range(N_ONEHOT), D_STANDARD - 1]
    # the raw values are integers: grids 1/maximum (fnlwgt to the nearest 100), one common scale
    assert schema.scale == math.lcm(90, 15_000, 16, 99_999, 4_356, 99)
    for name, maximum in NUMERIC.items():
        spec = dict(schema.columns)[name]
        assert isinstance(spec, Numeric)
        assert (spec.low, spec.high) == (0, 1)
        assert spec.grid == Fraction(100 if name == "fnlwgt" else 1, maximum)


def test_shipped_rows_are_on_the_schema(standard: tuple[Dataset, Dataset]) -> None:
    train, test = standard
    schema = adult_schema("standard")
    for data in (train, test):
        assert data.schema == schema
        np.testing.assert_array_equal(schema.map_rows(data.X), data.X)
    # a Dataset rebuilt from the rows (subset, replace_row) keeps them as they are
    np.testing.assert_array_equal(train.subset(np.arange(50)).X, train.X[:50])


# --------------------------------------------------------------------------- encoding


def test_one_hot_blocks_and_numeric_ranges(standard: tuple[Dataset, Dataset]) -> None:
    for data in standard:
        onehot = data.X[:, :N_ONEHOT]
        assert set(np.unique(onehot)) <= {0.0, 1.0}
        for block in adult_schema("standard").blocks:
            assert np.all(data.X[:, block].sum(axis=1) == 1.0)
        numeric = data.X[:, N_ONEHOT:-1]
        assert np.all((numeric >= 0) & (numeric <= 1))
        assert np.all(data.X[:, -1] == 1.0)


def test_first_train_row(standard: tuple[Dataset, Dataset]) -> None:
    train, _ = standard
    row = dict(zip(adult_features("standard"), train.X[0], strict=True))
    ones = {k for k, v in row.items() if v == 1.0 and "=" in k}
    assert ones == {
        "workclass=State-gov", "education=Bachelors", "marital-status=Never-married",
        "occupation=Adm-clerical", "relationship=Not-in-family", "race=White", "sex=Male",
        "native-country=United-States",
    }  # fmt: skip
    assert row["age"] == pytest.approx(39 / 90)
    assert row["fnlwgt"] == pytest.approx(77_500 / 1_500_000)  # 77,516 read to the nearest 100
    assert row["education-num"] == pytest.approx(13 / 16)
    assert row["capital-gain"] == pytest.approx(2_174 / 99_999)
    assert row["capital-loss"] == 0.0
    assert row["hours-per-week"] == pytest.approx(40 / 99)
    assert row["intercept"] == 1.0
    assert train.y[0] == -1.0


def test_missing_values_are_their_own_level(standard: tuple[Dataset, Dataset]) -> None:
    names = adult_features("standard")
    for data, filename in zip(standard, ("adult.data", "adult.test"), strict=True):
        raw = np.array(adult_mod._raw_table(filename), dtype=str)
        for column in ("workclass", "occupation", "native-country"):
            unknown = data.X[:, names.index(f"{column}=unknown")] == 1.0
            np.testing.assert_array_equal(unknown, raw[:, adult_mod._COL[column]] == "?")
            assert unknown.any()


def test_train_and_test_have_the_same_columns(standard: tuple[Dataset, Dataset]) -> None:
    train, test = standard
    assert train.schema == test.schema and train.n_features == test.n_features
    # levels come from adult.names, not from the data: Holand-Netherlands occurs only in train
    j = adult_features("standard").index("native-country=Holand-Netherlands")
    assert train.X[:, j].sum() >= 1 and test.X[:, j].sum() == 0


# --------------------------------------------------------------------------- no data-dependent scaling


def test_scaling_does_not_depend_on_other_rows(monkeypatch: pytest.MonkeyPatch, fresh_cache: None) -> None:
    rows = adult_mod._raw_table("adult.data")[:200]
    base = _encode_rows(monkeypatch, rows)
    col = {name: i for i, name in enumerate(adult_features("standard"))}
    for name, maximum in NUMERIC.items():
        for value in (maximum, 10 * maximum):  # at the public maximum, and far above it
            changed = list(rows)
            i = _COL_INDEX[name]
            changed[7] = rows[7][:i] + (str(value),) + rows[7][i + 1 :]
            X = _encode_rows(monkeypatch, tuple(changed))
            np.testing.assert_array_equal(np.delete(X, 7, axis=0), np.delete(base, 7, axis=0))
            assert X[7, col[name]] == 1.0  # value / public maximum, clipped to 1
            others = [c for c in range(X.shape[1]) if c != col[name]]
            np.testing.assert_array_equal(X[7, others], base[7, others])


def test_each_row_is_encoded_alone(monkeypatch: pytest.MonkeyPatch, fresh_cache: None) -> None:
    """The encoding is a per-row map: a row encoded on its own equals its row in the file."""
    rows = adult_mod._raw_table("adult.data")[:40]
    full = _encode_rows(monkeypatch, rows)
    with_missing = [i for i, r in enumerate(rows) if "?" in r]
    assert with_missing  # the first 40 rows include some with '?'
    for i in [0, 1, *with_missing[:3]]:
        np.testing.assert_array_equal(_encode_rows(monkeypatch, (rows[i],))[0], full[i])


@pytest.mark.parametrize(
    ("column", "value"),
    [("workclass", "Space-force"), ("education", "?"), ("race", "?"), ("native-country", "Atlantis")],
)
def test_unlisted_level_is_refused_at_load(
    monkeypatch: pytest.MonkeyPatch, fresh_cache: None, column: str, value: str
) -> None:
    i = _COL_INDEX[column]
    bad = FIRST_ROW[:i] + (value,) + FIRST_ROW[i + 1 :]
    with pytest.raises(DataError, match=column) as err:
        _encode_rows(monkeypatch, (FIRST_ROW, bad))
    assert value not in str(err.value).replace(f"{column!r}", "")


def test_missing_numeric_is_refused(monkeypatch: pytest.MonkeyPatch, fresh_cache: None) -> None:
    i = _COL_INDEX["capital-loss"]
    with pytest.raises(DataError, match="capital-loss"):
        _encode_rows(monkeypatch, (FIRST_ROW, FIRST_ROW[:i] + ("?",) + FIRST_ROW[i + 1 :]))


# --------------------------------------------------------------------------- options and paper23


def test_row_selection_is_the_same_in_both_encodings() -> None:
    for kwargs in ({"n": 300, "seed": 4}, {"balanced": True, "n": 300, "seed": 4}):
        a = load_adult("train", **kwargs)  # type: ignore[arg-type]
        b = load_adult("train", encoding="standard", **kwargs)  # type: ignore[arg-type]
        np.testing.assert_array_equal(a.y, b.y)
        np.testing.assert_array_equal(a.X[:, :7], b.X[:, 25:32])  # marital-status block
        assert b.n_features == D_STANDARD


def test_paper23_is_the_default_and_unchanged() -> None:
    train, test = adult_train_test(n=500, seed=2)
    train23, test23 = adult_train_test(n=500, seed=2, encoding="paper23")
    assert train.n_features == test.n_features == 23
    np.testing.assert_array_equal(train.X, train23.X)
    np.testing.assert_array_equal(test.X, test23.X)
    assert adult_features() == adult_features("paper23") and len(adult_features()) == 23
    assert adult_schema() is adult_schema("paper23")
    assert train.x_bound == pytest.approx(math.sqrt(7))


@pytest.mark.parametrize("bad", ["Standard", "one-hot", None, 23])
def test_unknown_encoding(bad: object) -> None:
    for call in (
        lambda: load_adult("test", encoding=bad),  # type: ignore[arg-type]
        lambda: adult_train_test(encoding=bad),  # type: ignore[arg-type]
        lambda: adult_schema(bad),  # type: ignore[arg-type]
        lambda: adult_features(bad),  # type: ignore[arg-type]
    ):
        with pytest.raises(DataError, match="paper23"):
            call()


def test_bound_is_exported() -> None:
    assert datasets.STANDARD_X_BOUND == math.sqrt(15)
    assert datasets.ADULT_X_BOUND == math.sqrt(7)


# --------------------------------------------------------------------------- utility


def test_non_private_logistic_regression_accuracy(standard: tuple[Dataset, Dataset]) -> None:
    """The benchmark's reference: non-private logistic regression near 0.85 on held-out data."""
    linear_model = pytest.importorskip("sklearn.linear_model", reason="scikit-learn is not installed")
    threadpoolctl = pytest.importorskip("threadpoolctl", reason="threadpoolctl (a scikit-learn dependency) is missing")
    train, test = standard
    # newton-cholesky: a few Newton steps (n >> d); one BLAS thread avoids thrash on a shared machine
    model = linear_model.LogisticRegression(C=1e4, fit_intercept=False, solver="newton-cholesky", max_iter=100)
    with threadpoolctl.threadpool_limits(1):
        model.fit(train.X, train.y)
    assert model.score(test.X, test.y) >= 0.84
