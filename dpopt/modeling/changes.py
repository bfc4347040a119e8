"""What a dataset's declarations did to its table, row by row: **exact, NOT private**.

While a :class:`~dpopt.modeling.dataset.Dataset` maps its rows onto the declarations (a
schema's columns, the row-norm bound, the label's bound, classes or ``label_spec``), the same
code marks, per row, which declared rule changed it (:class:`TableChanges`).  These flags are
data like ``X``: nothing public reads them.  A private run reads only their *names*
(public: they follow from the declarations alone) before its charge, and after the charge
their column sums, to which :class:`~dpopt.mechanisms.diagnostics.DiagnosticCounts` adds exact
noise (the private diagnostics of ``Mechanism.run``).  Each row adds at most one to each count,
so replacing a row moves the vector of m counts by at most one per coordinate.

A Dask-backed dataset marks its rows where each partition is mapped, by the same functions
(:mod:`dpopt.modeling.lazy_marks`): its flags are then a lazy Dask array with the partitions of
``X``, held by a subclass (:class:`dpopt.modeling.readers.LazyChanges`) whose ``counts`` sums
them per partition and adds the sums up.

The counts, each a number of rows:

* per declared column (not an intercept): entries clipped onto the declared range, rounded
  onto the grid, of an undeclared category (the all-zero block) or missing (read by the
  column's missing-value policy);
* rows whose norm exceeded ``x_bound`` (scaled onto it), unless the declarations already bound
  every mapped row by it (a schema whose own row bound is at most ``x_bound``: the count would be 0);
* labels beyond ``y_bound`` (clipped), or outside a ``label_spec``'s range (clipped) and, when
  it fills them, missing;
* with declared ``classes``: labels that matched no declared class, and missing labels (both
  read as the negative class).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from dpopt.modeling.rows import class_membership
from dpopt.modeling.schema import Categorical, Intercept, Schema
from dpopt.modeling.schema.specs import is_missing

__all__ = ["ROWS_CLIPPED", "TableChanges", "class_label_changes", "class_marks", "column_changes", "label_changes",
           "none", "row_changes"]

#: the name of the count of rows scaled onto the declared row-norm bound
ROWS_CLIPPED = "rows clipped to x_bound"
#: an entry counts as changed by the mapping when it moved by more than this (relative) amount
_RTOL = 1e-9


@dataclass(frozen=True, eq=False)
class TableChanges:
    """Per row and per declared rule, whether the rule changed the row (**exact, NOT private**).

    Attributes
    ----------
    names : tuple of str
        One public name per count (from the declarations only).
    wording : tuple of (str, str)
        Per count, what it counts (completing "about 40 % of …") and the fix a warning names.
    flags : ndarray of bool, shape (n, m)
        Whether each rule changed each row: read from the data, never shown (not in the repr).  For
        a Dask-backed dataset a lazy Dask array (computed inside a run only).
    """

    names: tuple[str, ...] = ()
    wording: tuple[tuple[str, str], ...] = ()
    flags: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=bool), repr=False)

    def counts(self) -> np.ndarray:
        """The exact counts (int64, one per name): **NOT private**; a private run adds noise to them."""
        return np.asarray(self.flags, dtype=bool).sum(axis=0).astype(np.int64)

    def then(self, other: TableChanges) -> TableChanges:
        """These counts followed by ``other``'s (the same rows); a name in both keeps the first's
        wording and marks a row changed by either."""
        names, wording = list(self.names), list(self.wording)
        flags = [self.flags[:, j] for j in range(len(self.names))]
        for j, name in enumerate(other.names):
            if name in names:
                k = names.index(name)
                flags[k] = flags[k] | other.flags[:, j]
            else:
                names.append(name)
                wording.append(other.wording[j])
                flags.append(other.flags[:, j])
        n = self.flags.shape[0] if self.names else other.flags.shape[0]
        # lazy flags (a subclass) keep the result lazy
        base = other if isinstance(other, type(self)) and type(other) is not type(self) else self
        return replace(base, names=tuple(names), wording=tuple(wording), flags=base._columns(flags, n))

    def _columns(self, flags: list[Any], n: int) -> Any:
        """The (n, m) boolean matrix of m flag columns."""
        return np.column_stack(flags).astype(bool) if flags else np.zeros((n, 0), dtype=bool)

    def take(self, rows: Any) -> TableChanges:
        """The same counts over a selection of the rows (``Dataset.subset``)."""
        return replace(self, flags=self.flags[np.asarray(rows)])

    def with_row(self, i: int, row: TableChanges) -> TableChanges:
        """Row ``i`` replaced by the first row of ``row`` (aligned by name; a rule ``row`` lacks
        did not change it): ``Dataset.replace_row``."""
        columns = [row.flags[:1, row.names.index(name)] if name in row.names else np.zeros(1, dtype=bool)
                   for name in self.names]
        flags = self.flags.copy()  # a Dask array: a lazy copy with the row assigned
        if columns:
            flags[i] = self._columns(columns, 1)[0]
        return replace(self, flags=flags)

    def __repr__(self) -> str:
        return f"TableChanges({len(self.names)} declared counts: {', '.join(self.names)}; values not shown)"


def _one(name: str, what: str, fix: str, flags: np.ndarray) -> TableChanges:
    return TableChanges((name,), ((what, fix),), np.asarray(flags, dtype=bool).reshape(-1, 1))


def none(n: int) -> TableChanges:
    """No counts over n rows."""
    return TableChanges((), (), np.zeros((n, 0), dtype=bool))


def column_changes(schema: Schema, raw: np.ndarray, mapped: np.ndarray) -> TableChanges:
    """Per declared column, the rows whose entries the mapping changed.

    Parameters
    ----------
    schema : Schema
        The declaration.
    raw : ndarray, shape (n, schema.n_features)
        The expanded rows as read (a missing entry NaN across its column's block, an undeclared
        category the all-zero block).
    mapped : ndarray
        The same rows after :meth:`Schema.map_rows` (what the dataset holds).

    A row counts for a column when its block held a NaN (filled per the policy), moved by more
    than a relative 1e-9 (clipped, rounded, a one-hot block made valid) or, for a categorical,
    was all zero (no declared category).
    """
    raw, mapped = np.asarray(raw, dtype=np.float64), np.asarray(mapped, dtype=np.float64)
    gaps = np.isnan(raw)
    any_gap = bool(gaps.any())
    read = np.where(gaps, mapped, raw) if any_gap else raw
    # entries moved by more than np.isclose's tolerance (the mapped rows are finite); an entry equal
    # to its mapped value did not move, so the tolerance is only tested when some entry differs
    moved = read != mapped
    if moved.any():
        moved = np.abs(read - mapped) > _RTOL + _RTOL * np.abs(mapped)
    changed_entries = moved | gaps if any_gap else moved
    names: list[str] = []
    wording: list[tuple[str, str]] = []
    flags: list[np.ndarray] = []
    start = 0
    for name, spec in schema.columns:
        stop = start + spec.width
        if isinstance(spec, Intercept):
            start = stop
            continue
        changed = changed_entries[:, start:stop].any(axis=1)
        kind = "of an undeclared category" if isinstance(spec, Categorical) else "clipped or rounded"
        if isinstance(spec, Categorical):
            held_gap = gaps[:, start:stop].any(axis=1)
            changed |= ~held_gap & ~raw[:, start:stop].any(axis=1)
        if getattr(spec, "missing", None) is not None:
            kind += " or missing"
        names.append(f"{name}: entries {kind}")
        wording.append((f"{name!r} entries were {kind}", f"check the schema's declaration of {name!r}"))
        flags.append(changed)
        start = stop
    matrix = np.column_stack(flags) if flags else np.zeros((raw.shape[0], 0), dtype=bool)
    return TableChanges(tuple(names), tuple(wording), matrix.astype(bool))


def row_changes(over: np.ndarray) -> TableChanges:
    """The rows scaled onto the declared row-norm bound (``over``: the mask the clipping used)."""
    return _one(ROWS_CLIPPED, "rows had a norm above x_bound (clipped)", "check `x_bound=`", over)


def label_changes(changed: np.ndarray, missing: np.ndarray | None = None, *,
                  fix: str = "check `y_bound=`") -> TableChanges:
    """Labels outside their declared range (clipped) and, with a ``label_spec`` that fills them,
    missing labels."""
    out = _one("labels outside the declared range", "labels lay outside the declared range (clipped)", fix,
               changed)
    if missing is not None:
        out = out.then(_one("missing labels", "labels were missing", "drop or fill the rows without a label",
                            missing))
    return out


def class_label_changes(raw: np.ndarray, declared: Sequence[Any] | None) -> TableChanges:
    """Labels that matched none of the ``declared`` classes (None: one-vs-rest, where every other
    value is the negative class) and missing labels, both read as the negative class."""
    values = np.asarray(raw, dtype=object).reshape(-1).tolist()
    missing = np.array([is_missing(v) for v in values], dtype=bool)
    known = None
    if declared is not None:
        classes = np.empty(len(declared), dtype=object)
        classes[:] = list(declared)
        _, known = class_membership(np.asarray(raw, dtype=object).reshape(-1), classes)  # the encoding's own rule
    return class_marks(known, missing)


def class_marks(known: np.ndarray | None, missing: np.ndarray) -> TableChanges:
    """The counts of :func:`class_label_changes` from which labels are declared classes (``known``;
    None: one-vs-rest) and which are missing, as the encoding read them."""
    out = none(len(missing))
    if known is not None:
        out = _one("labels matching no declared class", "labels matched no declared class", "check `classes=`",
                   ~np.asarray(known, dtype=bool) & ~missing)
    return out.then(_one("missing labels", "labels were missing", "drop or fill the rows without a label", missing))
