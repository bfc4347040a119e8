"""The marks of a Dask-backed dataset: what its declarations did to each partition's rows.

An in-memory :class:`~dpopt.modeling.dataset.Dataset` marks, per row, which declared rule changed
it while it maps its rows (:mod:`dpopt.modeling.changes`).  A Dask-backed one maps each partition
when the partition is computed, inside a run (:mod:`dpopt.modeling.readers`); the functions here
are those per-partition maps with the marks appended as extra columns, so a row is marked by the
very call that maps it (no second reading of the table that could disagree with the mapping):

* :func:`map_and_mark_features` — the rows mapped as :func:`~dpopt.modeling.rows.map_feature_block`
  maps them, then per declared column the entries changed (:func:`~dpopt.modeling.changes.column_changes`
  on the rows as read and as mapped) and the rows scaled onto ``x_bound``;
* :func:`map_and_mark_labels` — the labels as :func:`~dpopt.modeling.rows.map_label_block` maps
  them, then the labels clipped to ``y_bound``;
* :func:`declared_label_marks`, :func:`spec_label_marks` — a file partition's label column as the
  reader read it: labels matching no declared class and missing labels, or labels outside a
  ``label_spec``'s range and missing ones.

Each ``*_names`` function gives the public names and wording of the marks from the declarations
alone (the same functions on zero rows).  The marks are data like ``X``: **exact, NOT private**;
a private run sums them after its charge and adds noise (``Mechanism.run``'s diagnostics).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpopt.modeling.changes import (
    TableChanges,
    class_marks,
    column_changes,
    label_changes,
    none,
    row_changes,
)
from dpopt.modeling.rows import (
    enforce_labels,
    enforce_rows,
    feature_block_stages,
    labels_over,
    map_label_block,
    rows_over,
)
from dpopt.modeling.schema import LabelMap, Schema
from dpopt.modeling.schema.specs import is_missing

__all__ = ["declared_label_marks", "feature_mark_names", "label_mark_names", "map_and_mark_features",
           "map_and_mark_labels", "spec_label_marks"]


def _norm(order: float) -> object:
    return "inf" if order == np.inf else int(order)


def _feature_changes(raw: np.ndarray, mapped: np.ndarray, schema: Schema | None, order: float, bound: float,
                     mark_rows: bool) -> TableChanges:
    out = none(raw.shape[0]) if schema is None else column_changes(schema, raw, mapped)
    if mark_rows:
        out = out.then(row_changes(rows_over(mapped, bound, _norm(order))))
    return out


def feature_mark_names(schema: Schema | None, d: int, mark_rows: bool) -> TableChanges:
    """The names and wording of :func:`map_and_mark_features`' marks (no rows: declarations only)."""
    empty = np.zeros((0, d))
    return _feature_changes(empty, empty, schema, 2.0, 1.0, mark_rows)


def map_and_mark_features(X: Any, *, schema: Schema | None, order: float, bound: float, clip: bool,
                          mark_rows: bool) -> np.ndarray:
    """One partition's rows mapped onto the declarations, followed by its marks (0/1 columns).

    The first ``d`` columns are :func:`~dpopt.modeling.rows.map_feature_block`'s output; the others,
    one per name of :func:`feature_mark_names`, mark the rows the schema mapping changed (per
    declared column) and, with ``mark_rows``, the rows scaled onto ``bound``.
    """
    raw, mapped = feature_block_stages(X, schema)
    marks = _feature_changes(raw, mapped, schema, order, bound, mark_rows)
    return np.column_stack([enforce_rows(mapped, order, bound, clip), marks.flags.astype(np.float64)])


def label_mark_names(bound: float | None) -> TableChanges:
    """The names and wording of :func:`map_and_mark_labels`' marks (none without a bound)."""
    return none(0) if bound is None else label_changes(np.zeros(0, dtype=bool))


def map_and_mark_labels(y: Any, *, bound: float | None, clip: bool, mark: bool = True) -> np.ndarray:
    """One partition's labels mapped as :func:`~dpopt.modeling.rows.map_label_block` maps them (first
    column), with a bound and ``mark`` then a 0/1 column marking the labels clipped onto it."""
    read = map_label_block(y, None, clip)  # non-finite labels as 0, no bound yet
    mapped = enforce_labels(read, bound, clip)
    if bound is None or not mark:
        return mapped.reshape(-1, 1)
    return np.column_stack([mapped, labels_over(read, bound).astype(np.float64)])


def declared_label_marks(column: Any, known: np.ndarray | None) -> TableChanges:
    """A partition's class labels as read (``column``, the file's entries) and whether each was read
    as a declared class (``known``; None for one-vs-rest): :func:`~dpopt.modeling.changes.class_marks`."""
    values = np.asarray(column, dtype=object).reshape(-1).tolist()
    missing = np.array([is_missing(v) for v in values], dtype=bool)
    return class_marks(known, missing)


def spec_label_marks(values: np.ndarray, label_map: LabelMap) -> TableChanges:
    """A partition's numeric labels as read (NaN: missing, kept when the ``label_spec`` fills them):
    labels outside the declared range and, with a fill, missing ones (as :meth:`Dataset.from_frame`)."""
    missing = np.isnan(values)
    outside = ~missing & ((values < label_map.low) | (values > label_map.high))
    return label_changes(outside, missing if label_map.spec.missing is not None else None, fix="check `label_spec=`")
