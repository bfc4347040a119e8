"""A Dask-backed dataset counts what its declarations did, as the same table in memory does.

What users rely on (``Mechanism.run``'s private diagnostics on files read as several partitions):
the counts have the in-memory names and values, equal to an independent pandas count on the raw
table; they are marked by the call that maps each partition and stay lazy until a run sums them;
they follow the rows through ``subset`` and ``replace_row``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import dpopt as dp
from dpopt.modeling.changes import ROWS_CLIPPED
from dpopt.modeling.readers import is_dask_array
from dpopt.testing.tables import MARKED_SCHEMA, independent_feature_counts, marked_table

pd = pytest.importorskip("pandas")
da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
pytest.importorskip("pyarrow")

SCHEMA = MARKED_SCHEMA
SIZES = (90, 1, 140, 70)  # uneven files; one holds a single row


def _table(n: int, seed: int) -> pd.DataFrame:
    """:func:`~dpopt.testing.tables.marked_table` with a price label partly outside [0, 200]."""
    return marked_table(n, seed, price=True)


_independent = independent_feature_counts


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pd.DataFrame]:
    folder = tmp_path_factory.mktemp("marked")
    parts = [_table(k, seed) for seed, k in enumerate(SIZES)]
    for i, part in enumerate(parts):
        part.to_parquet(folder / f"part-{i}.parquet", index=False)
        part.to_csv(folder / f"part-{i}.csv", index=False)
    return folder, pd.concat(parts, ignore_index=True)


def _counts(data: dp.Dataset) -> dict[str, int]:
    changes = data.declaration_changes
    assert changes is not None
    with dask.config.set(scheduler="synchronous"):
        return dict(zip(changes.names, changes.counts().tolist(), strict=True))


@pytest.mark.parametrize("kind", ["parquet", "csv"])
def test_lazy_counts_are_the_in_memory_counts_and_an_independent_count(files: tuple[Path, pd.DataFrame],
                                                                        kind: str) -> None:
    folder, t = files
    read = getattr(dp.Dataset, f"from_{kind}")
    cases = [
        ({"label": "y", "classes": ["no", "yes"], "x_bound": 1.0},
         {"labels matching no declared class": int((~t["y"].isin(["no", "yes"]) & t["y"].notna()).sum()),
          "missing labels": int(t["y"].isna().sum())}),
        ({"label": "price", "label_spec": dp.Numeric(0, 200, grid=1, missing=dp.Fill(100))},
         {"labels outside the declared range": int(((t["price"] < 0) | (t["price"] > 200)).sum()),
          "missing labels": int(t["price"].isna().sum())}),
    ]
    for kw, labels in cases:
        lazy, eager = read(str(folder / f"part-*.{kind}"), SCHEMA, **kw), dp.Dataset.from_frame(t, SCHEMA, **kw)
        assert lazy.is_distributed and lazy.X.chunks[0] == SIZES
        assert is_dask_array(lazy.declaration_changes.flags)  # nothing read yet: summed inside a run only
        assert lazy.declaration_changes.names == eager.declaration_changes.names  # the same declared counts
        counts = _counts(lazy)
        assert counts == _counts(eager)
        expected = {**labels, **_independent(t)}
        if "x_bound" in kw:  # rows of the mapped table over the declared bound
            with dask.config.set(scheduler="synchronous"):
                mapped = read(str(folder / f"part-*.{kind}"), SCHEMA, label="y", classes=["no", "yes"])
                expected[ROWS_CLIPPED] = int(np.sum(np.linalg.norm(np.asarray(mapped.X.compute()), axis=1) > 1.0))
        assert counts == expected
        assert all(0 < v < len(t) for v in counts.values())  # every rule changed some rows, not all


def test_dask_arrays_in_the_constructor_count_rows_and_labels_over_their_bounds() -> None:
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(500, 3)), 2 * rng.normal(size=500)
    lazy = dp.Dataset(da.from_array(X, chunks=(120, 2)), da.from_array(y, chunks=200), x_bound=1.5, y_bound=2.0)
    expected = {ROWS_CLIPPED: int(np.sum(np.linalg.norm(X, axis=1) > 1.5)),
                "labels outside the declared range": int(np.sum(np.abs(y) > 2.0))}
    assert _counts(lazy) == expected == _counts(dp.Dataset(X, y, x_bound=1.5, y_bound=2.0))
    assert 0 < expected[ROWS_CLIPPED] < 500 and 0 < expected["labels outside the declared range"] < 500


def test_the_lazy_counts_follow_the_rows_through_subset_and_replace_row(files: tuple[Path, pd.DataFrame]) -> None:
    folder, t = files
    kw = {"label": "y", "classes": ["no", "yes"]}
    lazy, eager = dp.Dataset.from_parquet(str(folder / "part-*.parquet"), SCHEMA, **kw), dp.Dataset.from_frame(
        t, SCHEMA, **kw)
    rows = np.arange(0, len(t), 3)
    clean = np.zeros(eager.n_features)
    clean[list(eager.feature_names).index("job=a")] = 1.0  # a valid row: nothing to change
    flagged = int(np.flatnonzero(eager.declaration_changes.flags.any(axis=1))[0])  # a row some rule changed
    for a, b in ((lazy.subset(rows), eager.subset(rows)),
                 (lazy.replace_row(flagged, clean, 1.0), eager.replace_row(flagged, clean, 1.0))):
        assert a.declaration_changes.names == b.declaration_changes.names
        assert is_dask_array(a.declaration_changes.flags)  # still lazy: nothing read outside a run
        with dask.config.set(scheduler="synchronous"):
            np.testing.assert_array_equal(np.asarray(a.declaration_changes.flags.compute()), b.declaration_changes.flags)
        assert _counts(a) == _counts(b)
    assert _counts(lazy.replace_row(flagged, clean, 1.0)) != _counts(lazy)  # the replaced row's marks left


def test_each_partition_is_marked_by_the_call_that_maps_it(files: tuple[Path, pd.DataFrame]) -> None:
    """The marks and the mapped rows are two slices of one per-partition call: no second reading
    of the table that could disagree with the mapping."""
    folder, _ = files
    lazy = dp.Dataset.from_parquet(str(folder / "part-*.parquet"), SCHEMA, label="y", classes=["no", "yes"])
    marks = set(lazy.declaration_changes.flags.__dask_graph__().layers)
    mapping = {name for name in lazy.X.__dask_graph__().layers if "map_and_mark_features" in name}
    assert len(mapping) == 1 and mapping <= marks
    assert sum("map_and_mark_features" in name for name in marks) == 1


@pytest.mark.parametrize("seed", range(4))
def test_replacing_one_row_of_a_file_moves_each_lazy_count_by_at_most_one(tmp_path: Path, seed: int) -> None:
    """The sensitivity the noise is calibrated to, on files: two folders one row apart."""
    parts = [_table(k, 10 * seed + i) for i, k in enumerate((40, 35))]
    other = [p.copy() for p in parts]
    other[1].iloc[seed] = _table(40, 100 + seed).iloc[seed]
    counts = []
    for name, tables in (("a", parts), ("b", other)):
        (tmp_path / name).mkdir()
        for i, part in enumerate(tables):
            part.to_parquet(tmp_path / name / f"part-{i}.parquet", index=False)
        data = dp.Dataset.from_parquet(str(tmp_path / name / "part-*.parquet"), SCHEMA, label="y",
                                       classes=["no", "yes"], x_bound=1.0)
        counts.append(_counts(data))
    assert counts[0].keys() == counts[1].keys()
    assert max(abs(counts[0][k] - counts[1][k]) for k in counts[0]) <= 1


def test_the_names_are_read_before_the_charge_and_a_refused_run_computes_no_partition(
        files: tuple[Path, pd.DataFrame]) -> None:
    """A budget refusal happens before any partition is read; an accepted run reads them after."""
    from dask.callbacks import Callback

    from dpopt.errors import BudgetExceededError

    folder, _ = files
    lazy = dp.Dataset.from_parquet(str(folder / "part-*.parquet"), SCHEMA, label="y", classes=["no", "yes"])
    w = dp.Variable(lazy.n_features)
    problem = dp.Problem(dp.LogisticLoss(lazy, w), constraint=dp.L2Ball(w, 1.0))
    tasks: list[object] = []
    with Callback(pretask=lambda key, dsk, state: tasks.append(key)), dask.config.set(scheduler="synchronous"):
        with pytest.raises(BudgetExceededError):
            dp.DPGradientDescent(1.0, 1e-6, steps=2, ledger=dp.Ledger(epsilon_budget=0.5)).run(problem, seed=0)
        assert tasks == []  # refused from the declarations and the budget alone
        release = dp.DPGradientDescent(1.0, 1e-6, steps=2).run(problem, seed=0)
    assert tasks and list(release.parameters["noisy_diagnostic_counts"]) == list(lazy.declaration_changes.names)
