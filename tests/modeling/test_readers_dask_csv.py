"""Dask-backed CSV tables are read like parquet ones.

Many CSV files (``Dataset.from_csv`` with a list, a glob or a folder) are read with every
declared column as text and coerced per the schema inside each partition, when it is first
read inside a run: bad cells in a *later* file (empty, a decimal on an integer grid, ``abc``,
``inf``, an unknown category, an unknown label) build, release, and give the θ of the same
table held in memory with those cells read as 0 (numbers) or left to the in-memory mapping
(categories, labels).  When the dataset is built only the headers are checked; no message
quotes a value from the files.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import dpopt as dp
from dpopt.errors import DataError, ModelError
from dpopt.modeling import readers

pd = pytest.importorskip("pandas")
dask = pytest.importorskip("dask")
pytest.importorskip("dask.dataframe")

SCHEMA = dp.Schema({"age": dp.Numeric(17, 90, grid=1), "hours": dp.Numeric(0, 99, grid=1),
                    "sex": dp.Categorical(["F", "M"]), "edu": dp.Categorical([1, 2, 3]), "union": dp.Binary()})
CLASSES = [0, 1]  # numeric classes: the CSV text "1" must be the class 1, as in memory
#: (row of the last file, column, the raw text written, the value the in-memory table holds instead)
BAD = [(2, "age", "", 0), (3, "age", "40.5", 40.5), (4, "hours", "abc", 0), (5, "hours", "inf", 0),
       (6, "sex", "Q", "Q"), (7, "edu", "9", 9), (8, "income", "maybe", "maybe"), (9, "union", "abc", 0)]
RAW = ("40.5", "abc", "inf", "maybe", "'Q'")


def _clean(rng: np.random.Generator, n: int) -> pd.DataFrame:
    return pd.DataFrame({"age": rng.integers(17, 91, n), "hours": rng.integers(0, 100, n),
                         "sex": rng.choice(["F", "M"], n), "edu": rng.integers(1, 4, n),
                         "union": rng.choice([True, False], n), "income": rng.integers(0, 2, n)})


def _write(folder: Path, parts: list[pd.DataFrame], bad: list[tuple[int, str, str, Any]]) -> list[str]:
    """The parts as CSV files; ``bad`` cells written as raw text into the last one."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for k, part in enumerate(parts):
        text = part.astype(object).astype(str)
        if k == len(parts) - 1:
            for row, column, raw, _ in bad:
                text.loc[row, column] = raw
        path = folder / f"part-{k}.csv"
        text.to_csv(path, index=False)
        paths.append(str(path))
    return paths


def _in_memory(parts: list[pd.DataFrame], bad: list[tuple[int, str, str, Any]]) -> pd.DataFrame:
    """The same table in memory, each bad cell replaced by what it is read as (an independent mapping)."""
    last = parts[-1].astype(object).copy()
    for row, column, _, value in bad:
        last.loc[row, column] = value
    table = pd.concat([*parts[:-1], last], ignore_index=True)
    return table.astype({"age": float, "hours": float, "union": float})


@pytest.fixture(scope="module")
def parts() -> list[pd.DataFrame]:
    rng = np.random.default_rng(21)
    return [_clean(rng, k) for k in (30, 25, 20)]


def _problem(data: dp.Dataset) -> dp.Problem:
    w = dp.Variable(data.n_features)
    return dp.Problem(dp.LogisticLoss(data, w), constraint=dp.L2Ball(w, 2.0))


def _run(data: dp.Dataset, ledger: dp.Ledger, *, diagnostics: bool = True) -> dp.Release:
    """One run, with the private diagnostics (the same counts in memory and from files) unless
    ``diagnostics=False`` (all of ε on the model)."""
    with dask.config.set(scheduler="synchronous"):
        return dp.DPGradientDescent(1.0, 1e-5, steps=5, ledger=ledger).run(_problem(data), seed=7,
                                                                            diagnostics=diagnostics)


def _public(release: dp.Release, ledger: dp.Ledger) -> tuple[str, list[tuple[Any, ...]]]:
    view = release.to_dict()
    view.pop("theta")
    charges = [(c.epsilon, c.delta, c.mechanism, c.released) for c in ledger.charges]
    return json.dumps(view, sort_keys=True, default=str), charges


def test_bad_cells_in_a_later_file_release_the_theta_of_the_mapped_table(tmp_path: Path,
                                                                         parts: list[pd.DataFrame]) -> None:
    files = _write(tmp_path, parts, BAD)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lazy = dp.Dataset.from_csv(files, SCHEMA, label="income", classes=CLASSES, intercept=True)
        ledger = dp.Ledger()
        release = _run(lazy, ledger)
    eager = dp.Dataset.from_frame(_in_memory(parts, BAD), SCHEMA, label="income", classes=CLASSES, intercept=True)
    assert lazy.is_distributed and lazy.X.chunks[0] == (30, 25, 20) and lazy.n == eager.n
    with dask.config.set(scheduler="synchronous"):
        X, y = readers.materialize([lazy.X, lazy.y])
    np.testing.assert_array_equal(X, eager.X)
    np.testing.assert_array_equal(y, eager.y)
    assert eager.y[-20:].min() == -1 and eager.y[-20:].max() == 1  # numeric classes were matched from text
    assert X[:, 1 + 2 + 1:1 + 2 + 1 + 3].sum() == eager.n - 1  # edu 1/2/3 read from text; "9" is the zero block
    reference = _run(eager, dp.Ledger())
    assert release.private and len(ledger.charges) == 1
    np.testing.assert_allclose(release.theta, reference.theta, rtol=0, atol=1e-10)
    assert not np.allclose(reference.theta, 0.0)
    # the bad cells are counted as in memory: the same noisy counts for the same seed
    assert release.parameters["noisy_diagnostic_counts"] == reference.parameters["noisy_diagnostic_counts"]
    text = " ".join([json.dumps(release.to_dict(), default=str), repr(release), repr(lazy),
                     *(str(w.message) for w in caught)])
    assert not any(raw in text for raw in RAW)


def test_one_bad_cell_is_invisible_to_the_public_view(tmp_path: Path, parts: list[pd.DataFrame]) -> None:
    """Neighbours: the same files but one cell, clean (50) in one and ``abc`` in the other."""
    views = []
    for name, raw in (("clean", "50"), ("bad", "abc")):
        files = _write(tmp_path / name, parts, [(11, "hours", raw, None)])
        data = dp.Dataset.from_csv(files, SCHEMA, label="income", classes=CLASSES)
        ledger = dp.Ledger()
        release = _run(data, ledger, diagnostics=False)  # the model's view (its noisy counts differ by design)
        assert release.private and data.n == 75 and data.X.chunks[0] == (30, 25, 20)
        views.append(_public(release, ledger))
    assert views[0] == views[1]
    assert "abc" not in views[1][0]


def test_a_later_file_without_a_declared_column_is_refused_from_its_header(tmp_path: Path,
                                                                         parts: list[pd.DataFrame]) -> None:
    files = _write(tmp_path, parts, BAD)
    pd.read_csv(files[-1], dtype=str).drop(columns=["hours"]).to_csv(files[-1], index=False)
    with pytest.raises(DataError, match="has no column 'hours'") as info:
        dp.Dataset.from_csv(files, SCHEMA, label="income", classes=CLASSES)
    assert "part-2.csv" in str(info.value) and not any(raw in str(info.value) for raw in RAW)
    frame = pd.read_csv(files[0], dtype=str)
    frame.drop(columns=["income"]).to_csv(files[0], index=False)
    with pytest.raises(DataError, match="part-0.csv has no column 'income'"):  # the label too
        dp.Dataset.from_csv(files, SCHEMA, label="income", classes=CLASSES)


def test_extra_and_reordered_columns_in_a_later_file_are_ignored(tmp_path: Path, parts: list[pd.DataFrame]) -> None:
    files = _write(tmp_path, parts, [])
    last = pd.read_csv(files[-1], dtype=str)
    last.insert(0, "note", "free text")
    last[list(reversed(last.columns))].to_csv(files[-1], index=False)
    lazy = dp.Dataset.from_csv(files, SCHEMA, label="income", classes=CLASSES)
    eager = dp.Dataset.from_frame(_in_memory(parts, []), SCHEMA, label="income", classes=CLASSES)
    with dask.config.set(scheduler="synchronous"):
        X, y = readers.materialize([lazy.X, lazy.y])
    np.testing.assert_array_equal(X, eager.X)
    np.testing.assert_array_equal(y, eager.y)


def test_malformed_or_empty_files_and_dpopt_own_options_when_built(tmp_path: Path,
                                                                  parts: list[pd.DataFrame]) -> None:
    files = _write(tmp_path, parts, [])
    with open(files[-1], "a") as fh:
        fh.write("1,2,3,4,5,6,7,8,9\n")  # more fields than the header: a row, read like any other
    assert dp.Dataset.from_csv(files, SCHEMA, label="income", classes=CLASSES).X.chunks[0] == (30, 25, 21)
    with open(files[-1], "a") as fh:
        fh.write('"40,5,F,1,True,1\n')  # a quote never closed: the rest of the file is not a table
    with pytest.raises(DataError, match="part-2.csv is not a well-formed table") as info:
        dp.Dataset.from_csv(files, SCHEMA, label="income", classes=CLASSES)
    assert "40" not in str(info.value)
    Path(files[-1]).write_text("")
    with pytest.raises(DataError, match="part-2.csv is empty"):
        dp.Dataset.from_csv(files, SCHEMA, label="income", classes=CLASSES)
    Path(files[-1]).write_text(pd.read_csv(files[0], nrows=0).to_csv(index=False))  # a header, no rows
    assert dp.Dataset.from_csv(files, SCHEMA, label="income", classes=CLASSES, nrows=10).X.chunks[0] == (10, 10, 0)
    for option in ({"dtype": {"age": float}}, {"usecols": ["age"]}):
        with pytest.raises(ModelError, match="set by dpopt"):
            dp.Dataset.from_csv(files[:2], SCHEMA, label="income", classes=CLASSES, **option)


def test_a_later_parquet_file_without_a_declared_column_is_refused_from_its_metadata(
        tmp_path: Path, parts: list[pd.DataFrame]) -> None:
    pytest.importorskip("pyarrow")
    for k, part in enumerate(parts):
        (part.drop(columns=["sex"]) if k == 2 else part).to_parquet(tmp_path / f"part-{k}.parquet", index=False)
    with pytest.raises(DataError, match="part-2.parquet has no column 'sex'"):
        dp.Dataset.from_parquet(tmp_path, SCHEMA, label="income", classes=CLASSES)
