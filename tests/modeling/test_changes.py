"""What a dataset's declarations did to its table, marked row by row while it is mapped.

What users (and the private diagnostics of ``Mechanism.run``) rely on: the counts are the
numbers of rows each declared rule changed, equal to an independent count on the raw table;
each row adds at most one to each count (so the noisy counts' ℓ1 sensitivity is m); the
counts follow the rows through ``replace_row`` and ``subset``; their names come from the
declarations alone; and nothing of them is shown."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import dpopt as dp
from dpopt.modeling.changes import ROWS_CLIPPED
from dpopt.testing.tables import MARKED_SCHEMA, independent_feature_counts, marked_table

SCHEMA = MARKED_SCHEMA


def _table(n: int = 600, seed: int = 0) -> pd.DataFrame:
    return marked_table(n, seed)


def _independent(t: pd.DataFrame) -> dict[str, int]:
    """The same counts, from the raw table with pandas (another code path)."""
    return {
        "labels matching no declared class": int((~t["y"].isin(["no", "yes"]) & t["y"].notna()).sum()),
        "missing labels": int(t["y"].isna().sum()),
        **independent_feature_counts(t),
    }


def test_the_counts_of_a_table_are_an_independent_count_of_what_the_declarations_change():
    t = _table()
    data = dp.Dataset.from_frame(t, SCHEMA, "y", classes=["no", "yes"])
    changes = data.declaration_changes
    assert dict(zip(changes.names, changes.counts().tolist(), strict=True)) == _independent(t)


def test_rows_over_a_smaller_x_bound_are_counted_and_none_under_the_schemas_own_bound():
    """The schema's own row bound holds every mapped row: no count is declared for it (it would be
    0 and only widen the noise); a smaller declared x_bound is counted."""
    t = _table()
    unbounded = dp.Dataset.from_frame(t, SCHEMA, "y", classes=["no", "yes"])
    assert ROWS_CLIPPED not in unbounded.declaration_changes.names
    bounded = dp.Dataset.from_frame(t, SCHEMA, "y", classes=["no", "yes"], x_bound=1.0)
    changes = bounded.declaration_changes
    expected = int(np.sum(np.linalg.norm(unbounded.X, axis=1) > 1.0))
    assert 0 < expected < len(t) and changes.counts()[changes.names.index(ROWS_CLIPPED)] == expected


def test_rows_over_the_bound_and_labels_over_y_bound_are_counted_without_a_schema():
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(500, 3)), 2 * rng.normal(size=500)
    data = dp.Dataset(X, y, x_bound=1.5, y_bound=2.0)
    counts = dict(zip(data.declaration_changes.names, data.declaration_changes.counts().tolist(), strict=True))
    assert counts == {ROWS_CLIPPED: int(np.sum(np.linalg.norm(X, axis=1) > 1.5)),
                      "labels outside the declared range": int(np.sum(np.abs(y) > 2.0))}
    assert 0 < counts[ROWS_CLIPPED] < 500 and 0 < counts["labels outside the declared range"] < 500


def test_a_label_spec_counts_labels_outside_its_range_and_missing_ones():
    rng = np.random.default_rng(2)
    t = pd.DataFrame({"x": rng.uniform(0, 1, 400), "price": rng.uniform(-50, 250, 400)})
    t.loc[rng.random(400) < 0.1, "price"] = np.nan
    schema = dp.Schema({"x": dp.Numeric(0, 1, grid=0.01)})
    data = dp.Dataset.from_frame(t, schema, "price", label_spec=dp.Numeric(0, 200, grid=1, missing=dp.Fill(100)))
    counts = dict(zip(data.declaration_changes.names, data.declaration_changes.counts().tolist(), strict=True))
    price = t["price"]
    assert counts["labels outside the declared range"] == int(((price < 0) | (price > 200)).sum())
    assert counts["missing labels"] == int(price.isna().sum())


@pytest.mark.parametrize("seed", range(6))
def test_replacing_one_row_moves_each_count_by_at_most_one(seed):
    """The sensitivity the noise is calibrated to: two tables built independently, one row apart."""
    t0 = _table(n=80, seed=seed)
    t1 = t0.copy()
    t1.iloc[seed] = _table(n=80, seed=100 + seed).iloc[seed]
    c0, c1 = (dp.Dataset.from_frame(t, SCHEMA, "y", classes=["no", "yes"]).declaration_changes for t in (t0, t1))
    assert c0.names == c1.names
    assert np.max(np.abs(c0.counts() - c1.counts())) <= 1


def test_the_counts_follow_the_rows_through_replace_row_and_subset():
    t = _table(n=200)
    data = dp.Dataset.from_frame(t, SCHEMA, "y", classes=["no", "yes"])
    flags = data.declaration_changes.flags
    rows = np.arange(0, 200, 3)
    assert np.array_equal(data.subset(rows).declaration_changes.flags, flags[rows])
    clean = np.zeros(data.n_features)
    clean[SCHEMA.feature_names.index("job=a")] = 1.0  # a valid row: nothing to change
    replaced = data.replace_row(5, clean, 1.0).declaration_changes
    assert replaced.names == data.declaration_changes.names
    assert not replaced.flags[5].any() and np.array_equal(np.delete(replaced.flags, 5, 0), np.delete(flags, 5, 0))


def test_nothing_of_the_counts_is_shown():
    t = _table()
    data = dp.Dataset.from_frame(t, SCHEMA, "y", classes=["no", "yes"])
    counts = data.declaration_changes.counts()
    for text in (repr(data), repr(data.declaration_changes)):
        assert "values not shown" in text or "TableChanges" not in text
        assert not any(f" {int(c)}" in text for c in counts if c > 9)
