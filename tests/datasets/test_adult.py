"""The shipped UCI Adult data (:mod:`dpopt.datasets.adult`): encoding, splits, subsampling, integrity."""

from __future__ import annotations

import math
import os
import sys
from importlib import resources

import numpy as np
import pytest

from dpopt.datasets import adult as adult_mod
from dpopt.datasets import adult_features, adult_train_test, load_adult
from dpopt.errors import DataError
from dpopt.modeling.dataset import Dataset

N_TRAIN = 32_561
N_TEST = 16_281
N_POS_TRAIN = 7_841
N_BALANCED = 15_682


# --------------------------------------------------------------------------- Adult


def test_features() -> None:
    names = adult_features()
    assert len(names) == 23
    assert len(set(names)) == 23
    assert names[:7] == [
        "marital-status=Married-civ-spouse",
        "marital-status=Divorced",
        "marital-status=Never-married",
        "marital-status=Separated",
        "marital-status=Widowed",
        "marital-status=Married-spouse-absent",
        "marital-status=Married-AF-spouse",
    ]
    assert names[18:] == ["sex=Female", "sex=Male", "age", "education-num", "hours-per-week"]
    assert adult_features() is not adult_features()  # callers may mutate their copy


@pytest.mark.parametrize(
    ("split", "rows", "positives"), [("train", N_TRAIN, N_POS_TRAIN), ("test", N_TEST, 3_846)]
)
def test_split_shapes_and_encoding(split: str, rows: int, positives: int) -> None:
    data = load_adult(split)  # type: ignore[arg-type]
    assert isinstance(data, Dataset)
    # no row has '?' in the seven columns used, so every row survives
    assert data.X.shape == (rows, 23)
    assert data.y.shape == (rows,)
    assert data.x_norm == 2
    assert data.x_bound == pytest.approx(math.sqrt(7))
    assert data.y_bound == 1.0
    assert set(np.unique(data.y)) == {-1.0, 1.0}
    assert int((data.y > 0).sum()) == positives

    onehot, numeric = data.X[:, :20], data.X[:, 20:]
    assert set(np.unique(onehot)) <= {0.0, 1.0}
    assert np.all(onehot.sum(axis=1) == 4)
    for start, stop in [(0, 7), (7, 13), (13, 18), (18, 20)]:  # one level per attribute
        assert np.all(onehot[:, start:stop].sum(axis=1) == 1)
    assert np.all((numeric >= 0) & (numeric <= 1))
    assert np.all(np.linalg.norm(data.X, axis=1) <= math.sqrt(7) * (1 + 1e-12))


def test_first_train_row_encoding() -> None:
    # adult.data line 1: 39, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical,
    # Not-in-family, White, Male, 2174, 0, 40, United-States, <=50K
    data = load_adult("train")
    names = adult_features()
    row = dict(zip(names, data.X[0], strict=True))
    ones = {k for k, v in row.items() if v == 1.0 and "=" in k}
    assert ones == {
        "marital-status=Never-married",
        "relationship=Not-in-family",
        "race=White",
        "sex=Male",
    }
    assert row["age"] == pytest.approx(39 / 90)
    assert row["education-num"] == pytest.approx(13 / 16)
    assert row["hours-per-week"] == pytest.approx(40 / 99)
    assert data.y[0] == -1.0


def test_balanced_train() -> None:
    full = load_adult("train")
    data = load_adult("train", balanced=True, seed=0)
    assert data.n == N_BALANCED
    assert int((data.y > 0).sum()) == N_BALANCED // 2
    assert int((data.y < 0).sum()) == N_BALANCED // 2
    # every positive row is kept, in file order
    np.testing.assert_array_equal(data.X[data.y > 0], full.X[full.y > 0])


def test_deterministic_per_seed_and_different_across_seeds() -> None:
    a = load_adult(balanced=True, seed=7)
    b = load_adult(balanced=True, seed=7)
    c = load_adult(balanced=True, seed=8)
    np.testing.assert_array_equal(a.X, b.X)
    np.testing.assert_array_equal(a.y, b.y)
    assert not np.array_equal(a.X, c.X)

    s1 = load_adult("test", n=500, seed=1)
    s1b = load_adult("test", n=500, seed=1)
    s2 = load_adult("test", n=500, seed=2)
    np.testing.assert_array_equal(s1.X, s1b.X)
    assert not np.array_equal(s1.X, s2.X)


def test_subsample_n() -> None:
    data = load_adult("train", n=1000, seed=3)
    assert data.X.shape == (1000, 23)
    balanced = load_adult("train", balanced=True, n=N_BALANCED, seed=3)
    assert balanced.n == N_BALANCED
    small = load_adult("train", balanced=True, n=200, seed=3)
    assert small.n == 200
    assert int((small.y > 0).sum()) not in (0, 200)
    assert np.all(np.linalg.norm(small.X, axis=1) <= math.sqrt(7) * (1 + 1e-12))


def test_subsample_too_large_says_how_many_rows() -> None:
    with pytest.raises(DataError, match=str(N_TEST)):
        load_adult("test", n=N_TEST + 1)
    with pytest.raises(DataError, match=str(N_BALANCED)):
        load_adult("train", balanced=True, n=N_BALANCED + 1)


@pytest.mark.parametrize("bad", [0, -5, 2.5, True, "10"])
def test_subsample_bad_n(bad: object) -> None:
    with pytest.raises(DataError):
        load_adult("train", n=bad)  # type: ignore[arg-type]


def test_balanced_test_split_refused() -> None:
    with pytest.raises(DataError, match="train"):
        load_adult("test", balanced=True)
    with pytest.raises(ValueError):  # DataError is also a ValueError
        load_adult("test", balanced=True)


def test_unknown_split() -> None:
    with pytest.raises(DataError, match="split"):
        load_adult("validation")  # type: ignore[arg-type]


def test_train_test_pair() -> None:
    train, test = adult_train_test(balanced_train=True, n=3000, seed=5)
    assert train.n == 3000
    assert test.n == N_TEST
    assert train.n_features == test.n_features == 23
    again, _ = adult_train_test(balanced_train=True, n=3000, seed=5)
    np.testing.assert_array_equal(train.X, again.X)


def test_loaded_dataset_is_independent_of_cache() -> None:
    data = load_adult("test", n=10, seed=0)
    with pytest.raises(ValueError):
        data.X[0, 0] = 5.0  # Dataset arrays are read-only
    X, _ = adult_mod._encoded("adult.test")
    assert not X.flags.writeable


def test_sha256_mismatch_raises(monkeypatch: pytest.MonkeyPatch, fresh_cache: None) -> None:
    monkeypatch.setitem(adult_mod._SHA256, "adult.test", "0" * 64)
    with pytest.raises(DataError, match="sha256"):
        load_adult("test")
    # the other file is unaffected
    assert load_adult("train", n=5).n == 5


def test_rows_with_missing_values_in_used_columns_are_dropped(
    monkeypatch: pytest.MonkeyPatch, fresh_cache: None
) -> None:
    good = ("39", "State-gov", "77516", "Bachelors", "13", "Never-married", "Adm-clerical",
            "Not-in-family", "White", "Male", "2174", "0", "40", "United-States", "<=50K")  # fmt: skip
    unknown_unused = good[:1] + ("?",) + good[2:]  # '?' in workclass: not used, kept
    unknown_used = good[:8] + ("?",) + good[9:]  # '?' in race: dropped
    positive = good[:-1] + (">50K",)
    rows = (good, unknown_unused, unknown_used, positive)
    monkeypatch.setattr(adult_mod, "_raw_table", lambda filename: rows)
    data = load_adult("train")
    assert data.n == 3
    np.testing.assert_array_equal(data.y, [-1.0, -1.0, 1.0])


def test_package_data_shipped() -> None:
    data_dir = resources.files("dpopt.datasets").joinpath("data")
    for name in ("adult.data.gz", "adult.test.gz", "ADULT_LICENSE.txt"):
        assert data_dir.joinpath(name).is_file(), name
    note = data_dir.joinpath("ADULT_LICENSE.txt").read_text(encoding="utf-8")
    assert "CC BY 4.0" in note
    assert "Becker" in note and "Kohavi" in note


_OPENED: list[str] | None = None


def _audit(event: str, args: tuple[object, ...]) -> None:
    if _OPENED is not None and event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
        path = os.fsdecode(args[0])
        _OPENED.append(os.path.abspath(path))


_HOOK_INSTALLED = False


def test_loader_reads_only_packaged_files(fresh_cache: None) -> None:
    """Every file opened while loading lies inside the installed package, never in ../shared."""
    global _OPENED, _HOOK_INSTALLED
    if not _HOOK_INSTALLED:  # audit hooks cannot be removed; this one is inert unless recording
        sys.addaudithook(_audit)
        _HOOK_INSTALLED = True
    _OPENED = []
    try:
        load_adult("train", balanced=True, n=100)
        load_adult("test")
        opened = list(_OPENED)
    finally:
        _OPENED = None
    assert not [p for p in opened if "shared" in p.split("/")], opened
    package_data = str(resources.files("dpopt.datasets").joinpath("data"))
    gz = sorted(p for p in opened if p.endswith(".gz"))
    assert gz, "the loader opened no packaged .gz file"
    assert all(p.startswith(package_data) for p in gz), gz
    assert {p.rsplit("/", 1)[-1] for p in gz} == {"adult.data.gz", "adult.test.gz"}


def test_source_does_not_reference_shared_folder() -> None:
    source = resources.files("dpopt.datasets").joinpath("adult.py").read_text(encoding="utf-8")
    assert "/work/shared" not in source and "../shared" not in source
