"""Datasets with declared, public bounds.

A :class:`Dataset` holds features ``X`` (n × d) and labels ``y`` (n,) together
with the bounds a user *declares*: a bound on the row norm of ``X`` (in the ℓ1,
ℓ2 or ℓ∞ norm) and a bound on ``|y|``.  Every sensitivity in dpopt is computed
from these declared bounds, never from the data.  Rows outside the bounds are
clipped (``clip=True``, the default) or, on request, refused; messages never contain data values or
data-dependent counts.

Tables come in through :meth:`Dataset.from_frame` and :meth:`Dataset.from_csv`: every
column is read through its public declaration in a schema, the label through declared
classes or a declared numeric range (``label_spec``, mapped onto [−1, 1] by a public
:class:`~dpopt.modeling.schema.LabelMap`), with explicit, private-safe policies for values
outside the declarations (``unseen="zero"``, ``unknown_label="negative"``, a column's
``missing=`` policy) and an optional declared intercept.

A dataset may also carry a :class:`~dpopt.modeling.schema.Schema` (the declared type,
bounds, grid and missing-value policy of every column).  Its rows are then mapped onto the
declaration row by row (never refused for their values), and the row-norm bound defaults to
the one the declaration implies.  What no declaration covers — a missing entry in a column
that declares no missing-value policy, an absent column — is refused when the dataset is
built, before any budget is spent, naming the column.  The 0/1 loss and its MIP oracles
need a schema.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from dpopt.errors import DataError, ModelError
from dpopt.modeling.changes import (
    TableChanges,
    class_label_changes,
    column_changes,
    label_changes,
    none,
    row_changes,
)
from dpopt.modeling.norms import inverse_order, norm_order
from dpopt.modeling.readers import (
    compute,
    is_dask_array,
    is_file_collection,
    lazy_dataset_arrays,
    read_encoded,
    table_declarations,
    text_columns,
)
from dpopt.modeling.rows import (
    as_finite_array,
    as_numeric_array,
    check_bound,
    enforce_labels,
    enforce_rows,
    label_values,
    labels_over,
    numeric_labels,
    rows_over,
)
from dpopt.modeling.schema import LabelMap, Numeric, Schema, column_numbers

Norm = Literal[1, 2, "inf"]


@dataclass(frozen=True, eq=False)
class Dataset:
    """Features and labels with declared bounds.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Feature matrix.
    y : array_like, shape (n,)
        Labels: reals.  A classification loss maps them onto ±1 (y > 0 ↦ +1, otherwise −1:
        :meth:`with_class_labels`); a regression loss reads them within ``y_bound``.
    x_bound : float, optional
        Declared bound on the ``x_norm``-norm of every row of ``X``.  Required without a
        schema; with one it defaults to ``schema.row_norm_bound(x_norm)``.
    x_norm : {1, 2, "inf"}
        Order of the norm ``x_bound`` refers to.
    y_bound : float, optional
        Declared bound on ``|y|``. Required by regression losses (1 with a ``label_map``).
    clip : bool, default True
        True (the default): data that does not fit its declaration is mapped onto it row by
        row — rows whose norm exceeds ``x_bound`` are scaled onto the bound, labels are
        clipped to ``[-y_bound, y_bound]`` and, with a schema, every entry is clipped to its
        column's declared range.  False: the same data is *refused* instead, with a
        :class:`~dpopt.errors.DataError` when the dataset is built (before any budget is
        spent): a row over ``x_bound``, a label over ``y_bound`` and, with a schema, an entry
        outside its column's declared range (the message names the columns and their declared
        ranges, never a value).  An entry inside the range but off the grid is still rounded:
        the grid is the declared precision, not a bound.  Why refuse rather than keep the
        value (as scikit-learn's ``MinMaxScaler(clip=False)`` would): an unbounded row would
        void every sensitivity computed from the bounds; and why not ignore the setting: a
        parameter that silently changes nothing (an age of 142 declared [0, 60] still read as
        60) is worse than an error.  Whether it raises depends on the values, like
        ``unseen="error"``: it is a check of one's own table, not part of a private pipeline
        (:meth:`Schema.check` counts what would be clipped without refusing).  Refused for
        Dask-backed ``X``/``y``, whose rows are first read inside a run.
    schema : Schema, optional
        The public declaration of the columns.  With a schema, ``X`` is first mapped onto
        it row by row (:meth:`Schema.map_rows`: a missing entry (NaN) read as its column's
        declared missing-value policy, rounded onto the declared grid, clipped to the declared
        bounds, one-hot blocks made valid), so no row is refused for its values under
        ``clip=True``; a NaN in a column that declares no policy (or an inf) is refused here,
        naming the column.  If an explicit ``x_bound`` is smaller than the schema's bound and
        ``clip=True`` scales a row, that row leaves the grid; the 0/1 loss then reads it
        rounded back onto the grid (:meth:`Schema.to_integers`).
    feature_names : sequence of str, optional
        Public names of the columns of ``X`` (default: the schema's expanded names, or none).
        They travel into every :class:`~dpopt.mechanisms.release.Release` of a problem on
        this dataset (``release.feature_names``).
    label_map : LabelMap, optional
        The public affine map from a numeric label's declared range onto [−1, 1]
        (:meth:`from_frame` with ``label_spec``): ``y`` holds mapped labels, ``y_bound`` is 1,
        and ``label_map.from_unit`` turns a prediction back into the table's units.

    Notes
    -----
    The neighbouring relation of every mechanism is *replace one row*: two
    datasets of the same size n that differ in one (x, y) pair, both within the
    declared bounds.
    """

    X: np.ndarray
    y: np.ndarray
    x_bound: float = None  # type: ignore[assignment]  # always a float after __post_init__
    x_norm: Norm = 2
    y_bound: float | None = None
    clip: bool = True
    schema: Schema | None = None
    feature_names: tuple[str, ...] = ()
    label_map: LabelMap | None = None
    _order: float = field(init=False, repr=False)
    _binary: bool | None = field(init=False, repr=False, default=None)
    _class_labels: Dataset | None = field(init=False, repr=False, default=None)
    _index_labels: dict[int, Dataset] = field(init=False, repr=False, compare=False, default_factory=dict)
    _changes: TableChanges | None = field(init=False, repr=False, compare=False, default=None)

    def __post_init__(self) -> None:
        if is_dask_array(self.X) or is_dask_array(self.y):
            self._init_dask()
            return
        # with a schema, a NaN is read by its column's declared missing-value policy (or refused, naming it)
        X = as_finite_array(self.X, "X", 2) if self.schema is None else as_numeric_array(self.X, "X", 2)
        y = as_finite_array(self.y, "y", 1)
        if X.shape[0] != y.shape[0]:
            raise DataError(f"X has {X.shape[0]} rows but y has {y.shape[0]} entries")
        if X.shape[0] == 0 or X.shape[1] == 0:
            raise DataError(f"X must have at least one row and one column, got shape {X.shape}")
        order = norm_order(self.x_norm)
        changes = none(X.shape[0])
        if self.schema is not None:
            self._check_schema()
            if not self.clip:
                self._refuse_out_of_range(X)
            raw, X = X, self.schema.map_rows(X)
            changes = column_changes(self.schema, raw, X)  # what the mapping did, marked where it is done
        xb, yb = self._declared_bounds(order)
        object.__setattr__(self, "feature_names", self._names(X.shape[1]))
        if self.schema is None or self.schema.row_norm_bound(order) > xb:  # else no mapped row exceeds xb
            changes = changes.then(row_changes(rows_over(X, xb, self.x_norm)))
        if yb is not None and self.label_map is None:  # a label_map's labels were mapped by its own declaration
            changes = changes.then(label_changes(labels_over(y, yb)))
        object.__setattr__(self, "_changes", changes)
        X = enforce_rows(X, order, xb, self.clip)
        y = enforce_labels(y, yb, self.clip)
        X.setflags(write=False)
        y.setflags(write=False)
        self._set(X, y, xb, yb, order)

    def _init_dask(self) -> None:
        """A Dask-backed dataset: the same rules, applied lazily per partition
        (:func:`dpopt.modeling.readers.lazy_dataset_arrays`)."""

        if not self.clip:
            raise ModelError(
                "clip=False refuses rows outside the declared bounds, which on Dask-backed data could only "
                "happen while a partition is computed inside a private run, after the charge; keep clip=True "
                "(rows are mapped onto the bounds) or check your files before building the dataset")
        order = norm_order(self.x_norm)
        if self.schema is not None:
            self._check_schema()
        xb, yb = self._declared_bounds(order)
        # the in-memory marks, taken where each partition is mapped (lazy flags, summed inside a run only)
        X, y, changes = lazy_dataset_arrays(
            self.X, self.y, schema=self.schema, order=order, x_bound=xb, y_bound=yb, clip=self.clip,
            mark_rows=self.schema is None or self.schema.row_norm_bound(order) > xb,
            mark_labels=self.label_map is None)
        object.__setattr__(self, "feature_names", self._names(int(X.shape[1])))
        object.__setattr__(self, "_changes", changes)
        self._set(X, y, xb, yb, order)

    def _check_schema(self) -> None:
        if not isinstance(self.schema, Schema):
            raise ModelError(f"schema must be a dpopt Schema, got {type(self.schema).__name__}")

    def _refuse_out_of_range(self, X: np.ndarray) -> None:
        """clip=False with a schema: refuse entries outside their declared ranges (a check, not private)."""
        assert self.schema is not None
        names = self.schema.columns_out_of_range(X)
        if names:
            where = ", ".join(f"{name!r} {self.schema.declared_range(name)}" for name in names)
            raise DataError(f"clip=False: column(s) {where} hold values outside the declared range, which clip=False "
                            "refuses instead of clipping them onto it; this check of your own table is not private "
                            "(whether it raises depends on the values): keep clip=True (the default) for a private "
                            "run, or count them with schema.check(frame)")

    def _declared_bounds(self, order: float) -> tuple[float, float | None]:
        xb_declared = self.x_bound
        if xb_declared is None and self.schema is not None:
            xb_declared = self.schema.row_norm_bound(order)
        xb = check_bound(xb_declared, "x_bound", required=True)
        assert xb is not None
        yb_declared = self.y_bound
        if self.label_map is not None:
            if not isinstance(self.label_map, LabelMap):
                raise ModelError(f"label_map must be a dpopt LabelMap, got {type(self.label_map).__name__}")
            if yb_declared is not None and float(yb_declared) != 1.0:
                raise ModelError("a dataset with a label_map holds labels mapped onto [-1, 1]: y_bound is 1 (the "
                                 "label's range is declared by its label_spec); drop y_bound")
            yb_declared = 1.0
        return xb, check_bound(yb_declared, "y_bound", required=False)

    def _set(self, X: Any, y: Any, xb: float, yb: float | None, order: float) -> None:
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "y", y)
        object.__setattr__(self, "x_bound", xb)
        object.__setattr__(self, "y_bound", yb)
        object.__setattr__(self, "x_norm", "inf" if order == np.inf else int(order))
        object.__setattr__(self, "_order", order)

    def _names(self, d: int) -> tuple[str, ...]:
        names = self.feature_names
        if isinstance(names, str) or not all(isinstance(v, str) for v in names):
            raise ModelError("feature_names must be a sequence of strings")
        names = tuple(names)
        if not names and self.schema is not None:
            names = tuple(self.schema.feature_names)
        if names and len(names) != d:
            raise ModelError(f"feature_names has {len(names)} names for {d} columns")
        return names

    @property
    def n(self) -> int:
        """Number of rows.

        For a Dask-backed dataset it is known without reading values: from the declared
        layout (per-file row counts in the files' metadata, e.g. parquet row groups) or,
        where Dask knows no chunk sizes (CSV), counted once when the dataset is built.
        The row count is public under the replace-one relation (neighbours have the same n).
        """
        return int(self.X.shape[0])

    @property
    def declaration_changes(self) -> TableChanges | None:
        """What the declarations did to the table, row by row (:mod:`dpopt.modeling.changes`):
        **exact, NOT private**, data like ``X``.  A private run reads only its public names before
        the charge and adds noise to its counts after it (``Mechanism.run``'s diagnostics).  For a
        Dask-backed dataset the flags are lazy, marked where each partition is mapped
        (:mod:`dpopt.modeling.lazy_marks`) and first computed inside a run."""
        return self._changes

    @property
    def is_distributed(self) -> bool:
        """True when ``X`` and ``y`` are Dask arrays (gradients are then reduced per partition)."""
        return is_dask_array(self.X)

    @property
    def n_features(self) -> int:
        """Number of columns of ``X``."""
        return int(self.X.shape[1])

    @property
    def norm_order(self) -> float:
        """numpy order of the declared row norm (1.0, 2.0 or inf)."""
        return self._order

    def x_bound_in(self, norm: object) -> float:
        """A valid bound on the row norm in another norm, from the declared one.

        Uses only declarations: the declared bound and the dimension (e.g. ``‖x‖₂ ≤ √d ‖x‖∞``)
        and, with a schema, the schema's own bound in that norm (every row is mapped onto the
        schema, and scaling a row onto ``x_bound`` only shrinks it), whichever is smaller — so a
        table declared in ℓ2 over unit-scaled columns has ‖x‖∞ ≤ 1, not √d.
        """
        target = norm_order(norm)
        d = self.n_features
        src = self._order
        if target >= src:  # ‖x‖_q ≤ ‖x‖_p for q ≥ p
            converted = self.x_bound
        else:  # ‖x‖_q ≤ d^(1/q − 1/p) ‖x‖_p for q < p
            converted = self.x_bound * d ** (inverse_order(target) - inverse_order(src))
        if self.schema is None:
            return converted
        return min(converted, float(self.schema.row_norm_bound(target)))

    def labels_are_binary(self) -> bool:
        """True when every label is −1 or +1: a check of one's own data, which reads the labels.

        The answer depends on the values, so no decision of dpopt reads it (a classification
        loss maps labels with :meth:`with_class_labels` instead).  A dataset read with declared
        ``classes`` (or ``positive``), or made by :meth:`with_class_labels`, has ±1 labels by
        construction; otherwise the labels are read once (a pass over ``y``) and the answer is kept.
        """
        if self._binary is None:

            flag = np.all(np.abs(self.y) == 1.0)
            object.__setattr__(self, "_binary", bool(compute(flag)[0] if self.is_distributed else flag))
        return bool(self._binary)

    def with_class_labels(self) -> Dataset:
        """This dataset with every label mapped onto {−1, +1}, row by row, by a public rule.

        y > 0 ↦ +1; every other label (0, a negative value, NaN) ↦ −1.  Labels that already are
        ±1 are unchanged, so it is the identity on a classification dataset; it never refuses a
        label for its value (docs/design.md, "Privacy rules").  Lazy on a Dask-backed dataset.
        The features, bounds and schema are shared with this dataset, not copied.

        Returns
        -------
        Dataset
            A dataset whose labels are ±1 by construction; the same object on every call (so
            every loss built on this dataset shares one dataset, as
            :class:`~dpopt.mechanisms.selection.PrivateSelection` requires), and itself when
            called on it.
        """
        if self._class_labels is None:
            mapped = np.where(self.y > 0, 1.0, -1.0)  # NaN > 0 is False: −1
            if isinstance(mapped, np.ndarray):
                mapped.setflags(write=False)
            out = copy.copy(self)  # the checks and maps of __post_init__ already hold for X
            object.__setattr__(out, "y", mapped)
            object.__setattr__(out, "label_map", None)  # ±1 classes, no longer the mapped numeric label
            object.__setattr__(out, "_binary", True)
            object.__setattr__(out, "_class_labels", out)
            object.__setattr__(out, "_index_labels", {})  # its own maps, not this dataset's
            object.__setattr__(self, "_class_labels", out)
        assert self._class_labels is not None
        return self._class_labels

    def with_index_labels(self, classes: int) -> Dataset:
        """This dataset with every label mapped onto {0, …, k − 1} (k = ``classes``), row by row,
        by a public rule: a label that is one of those integers is kept, every other (NaN, a
        fraction, a negative value, k or more) ↦ 0.  It never refuses a label for its value.

        Returns
        -------
        Dataset
            Sharing the features, bounds and schema; the same object on every call for the same
            k (so the losses of :class:`~dpopt.mechanisms.selection.PrivateSelection`'s candidates
            share one dataset), and itself when called on it with that k.
        """
        if classes not in self._index_labels:
            y = np.asarray(self.y, dtype=np.float64)
            ok = np.isfinite(y) & (y == np.round(y)) & (y >= 0) & (y < classes)
            mapped = np.where(ok, y, 0.0)
            mapped.setflags(write=False)
            out = copy.copy(self)  # the checks and maps of __post_init__ already hold for X
            object.__setattr__(out, "y", mapped)
            object.__setattr__(out, "_binary", None)
            object.__setattr__(out, "_class_labels", None)
            object.__setattr__(out, "_index_labels", {classes: out})
            self._index_labels[classes] = out
        return self._index_labels[classes]

    def replace_row(self, i: int, x: object, y: float) -> Dataset:
        """The neighbouring dataset with row ``i`` replaced by ``(x, y)``.

        The new row must respect the declared bounds (or is clipped when
        ``clip=True``).
        """
        if not 0 <= i < self.n:
            raise DataError(f"row index out of range for a dataset of {self.n} rows")
        xr = as_finite_array(x, "x", 1)
        if xr.shape[0] != self.n_features:
            raise DataError(f"x must have {self.n_features} entries, got {xr.shape[0]}")
        X = self.X.copy()  # a Dask array: a lazy copy with the row assigned, same partitions
        Y = self.y.copy()
        X[i] = xr
        Y[i] = float(y)
        out = self._like(X, Y)
        if self._changes is not None and out._changes is not None:  # the other rows keep what was done to them
            object.__setattr__(out, "_changes", self._changes.with_row(i, out._changes.take([i])))
        return out

    def subset(self, rows: object) -> Dataset:
        """The dataset restricted to ``rows`` (indices or a boolean mask), same bounds.

        On a Dask-backed dataset the selection is lazy (``rows`` is a public index array).
        """
        idx = np.asarray(rows)
        out = self._like(self.X[idx], self.y[idx])
        if self._changes is not None and out._changes is not None:
            object.__setattr__(out, "_changes", self._changes.take(idx))
        return out

    def _like(self, X: np.ndarray, y: np.ndarray) -> Dataset:
        return Dataset(X, y, x_bound=self.x_bound, x_norm=self.x_norm, y_bound=self.y_bound, clip=self.clip,
                       schema=self.schema, feature_names=self.feature_names, label_map=self.label_map)

    @classmethod
    def from_frame(cls, frame: Any, schema: Schema, label: str, *, classes: Sequence[Any] | None = None,
                   positive: Any = None, label_spec: Numeric | None = None, intercept: bool = False,
                   unseen: str = "zero", unknown_label: str = "negative", scale: bool = True,
                   **bounds: Any) -> Dataset:
        """A dataset from a table (pandas DataFrame or mapping of column → 1-D array).

        Every choice is a public declaration: the columns and their bounds, grids, categories
        and missing-value policies (``schema``), the label's classes or range, the policies
        for values outside them.  No row is refused for its values under the defaults.

        Parameters
        ----------
        frame : DataFrame or mapping
            Holds every column ``schema`` declares (encoded with :meth:`Schema.encode`; extra
            columns are ignored) and the label column.
        schema : Schema
            The declaration of the feature columns.
        label : str
            The label column.
        classes : sequence of two values, optional
            Classification: ``[negative, positive]``, mapped to −1 and +1.  Without ``classes``
            (and ``positive``) the label is numeric (regression: declare ``label_spec`` or
            ``y_bound``).
        positive : optional
            Shorthand for one-vs-rest labels: this value → +1, every other value → −1.
        label_spec : Numeric, optional
            Regression in the label's own units: ``Numeric(low, high, grid=..., missing=...)``
            declares its range like a column's.  Each label is clipped to [low, high], rounded
            to the grid and mapped onto [−1, 1] by the *declared* range (centre
            ``(low + high)/2``, half-width ``(high − low)/2``); the dataset's ``y_bound`` is 1
            and its ``label_map`` (:class:`~dpopt.modeling.schema.LabelMap`) holds the public
            map, whose ``from_unit`` turns predictions back into the label's units.  A label
            outside the range is clipped, never refused (``clip=False``: refused, a check).
        intercept : bool, default False
            Append a constant-1 column ``"intercept"`` (:meth:`Schema.with_intercept`); the
            dataset's schema then declares it, so the default row bound counts it (an explicit
            ``x_bound`` must account for it too).
        unseen : {"zero", "error"}
            A categorical value outside its declared categories: the all-zero block
            (default, private) or a DataError (checks your own table; not private).
        unknown_label : {"negative", "error"}
            A label outside ``classes`` (or missing): the negative class −1 (default: a private
            run is never refused because of one row), or a DataError naming no value (checks
            your own table; whether it is raised depends on the data, so not private).
        scale : bool, default True
            Scale every numeric column onto [0, 1] by its *declared* bounds
            (:meth:`Schema.unit_scaled`: x ↦ (x − low)/(high − low), then clipped and rounded
            to the scaled grid), so that a column's units do not dominate the row-norm bound
            and with it the noise.  The dataset's schema is then the scaled one.
        **bounds
            ``x_bound``, ``x_norm``, ``y_bound``, ``clip``, ``feature_names`` as for :class:`Dataset`.

        Raises
        ------
        ModelError
            For a bad declaration (no Schema, classes not two distinct values, unknown policy,
            ``label_spec`` with ``classes`` or ``y_bound``).
        DataError
            When the dataset is built, before any budget is spent: a column is missing (with the
            closest names of the table's columns), a numeric column holds an entry that is not a
            number or an infinite one, a column (or the label) holds a missing entry and declares
            no missing-value policy, or a value outside its declaration under an ``"error"``
            policy or ``clip=False``.  Messages name the column, never a value.
        """
        schema, pair = table_declarations(schema, label, classes, positive, intercept, unseen, unknown_label,
                                          label_spec=label_spec)
        if not isinstance(scale, bool):
            raise ModelError(f"scale must be True or False, got {scale!r}")
        label_map = cls._label_map(label, label_spec, bounds)
        schema = schema.unit_scaled() if scale else schema
        X = schema.encode(frame, unseen=unseen, mapped=False)  # mapped (or refused with clip=False) by the Dataset
        raw = label_values(frame, label, pair, positive, unknown_label)
        if label_map is not None:
            y = label_map.map_labels(raw, clip=bool(bounds.get("clip", True)))
            data = cls(X, y, schema=schema, label_map=label_map, **bounds)
            values = column_numbers(label, "numeric", raw)  # what map_labels read and clipped
            missing = np.isnan(values)
            outside = ~missing & ((values < label_map.low) | (values > label_map.high))
            return data._led_by(label_changes(outside, missing if label_map.spec.missing is not None else None,
                                              fix="check `label_spec=`"))
        if pair is None and positive is None:
            return cls(X, numeric_labels(raw, label), schema=schema, **bounds)
        data = cls(X, raw, schema=schema, **bounds)
        return data._led_by(class_label_changes(np.asarray(frame[label]), None if pair is None else list(pair)))

    def _led_by(self, labels: TableChanges) -> Dataset:
        """This dataset (just built) with the label's changes counted first."""
        if self._changes is not None:
            object.__setattr__(self, "_changes", labels.then(self._changes))
        return self

    def mark(self, changes: TableChanges) -> None:
        """Add the marks of an encoding that changed the rows before this dataset was built (the
        estimators clip rows before appending their intercept); a name it already has marks a
        row changed by either.  Call it right after building the dataset, before any run."""
        if self._changes is not None:
            object.__setattr__(self, "_changes", self._changes.then(changes))

    @staticmethod
    def _label_map(label: str, label_spec: Numeric | None, bounds: dict[str, Any]) -> LabelMap | None:
        """The public map of a label declared ``label_spec`` (None without one)."""
        if label_spec is None:
            return None
        if bounds.get("y_bound") is not None:
            raise ModelError("label_spec declares the label's range and maps it onto [-1, 1] (y_bound = 1); "
                             "drop y_bound")
        if "label_map" in bounds:
            raise ModelError("label_map is set by label_spec; drop label_map")
        return LabelMap(label, label_spec)

    @classmethod
    def from_csv(cls, path: Any, schema: Schema, label: str, *, classes: Sequence[Any] | None = None,
                 positive: Any = None, label_spec: Numeric | None = None, intercept: bool = False,
                 unseen: str = "zero", unknown_label: str = "negative", scale: bool = True,
                 x_bound: float | None = None, x_norm: Norm = 2, y_bound: float | None = None, clip: bool = True,
                 **read_csv: Any) -> Dataset:
        """A dataset from a CSV file, read with ``pandas.read_csv`` (see :meth:`from_frame`).

        Parameters
        ----------
        path : str, path, file-like, glob or list of files
            The CSV file (read into memory), or a glob pattern (``"data/part-*.csv"``), a
            folder or a list of files: then a Dask-backed dataset with one partition per
            file, read like parquet files (see :meth:`from_parquet` and the Notes).
        schema, label, classes, positive, label_spec, intercept, unseen, unknown_label, scale
            As for :meth:`from_frame`.
        x_bound, x_norm, y_bound, clip
            As for :class:`Dataset`.
        **read_csv
            Passed to ``pandas.read_csv`` (``sep``, ``skipinitialspace``, ``na_values``, ...).
            Unless ``dtype`` is given, categorical columns whose declared categories are all
            strings (and the label, when the classes are strings) are read as text, so a
            category such as ``"1"`` is not turned into the number 1.  For many files,
            ``dtype``, ``converters``, ``usecols``, ``index_col``, ``chunksize`` and
            ``iterator`` are dpopt's own and refused.

        Raises
        ------
        DataError
            As for :meth:`from_frame`, each message starting with the file's name.

        Notes
        -----
        Many files are read like parquet ones: every declared column and the label as text
        (so no type is inferred from the first file's values), coerced per the schema inside
        each partition, when it is first read inside a run (after the charge): an empty,
        unparsable (``abc``) or non-finite (``inf``) numeric entry is read as the column's
        declared missing-value policy (a missing or unparsable one) or as 0, a value
        outside the declared categories or classes as the all-zero block or the negative
        class, and then mapped onto the declaration; nothing is refused for a value.  When the
        dataset is built, each file's header must hold every declared column (a missing one
        is refused, naming the file and the column; extra columns are ignored) and each
        file's rows are counted once, reading it as text.  ``clip=False``,
        ``unseen="error"`` and ``unknown_label="error"`` are refused, as for parquet.

        Examples
        --------
        >>> schema = Schema({"age": Numeric(17, 90, grid=1), "sex": Categorical(["F", "M"])})
        >>> data = Dataset.from_csv("people.csv", schema, label="income",
        ...                         classes=["<=50K", ">50K"], intercept=True)  # doctest: +SKIP
        """
        import pandas as pd

        table_declarations(schema, label, classes, positive, intercept, unseen, unknown_label, label_spec=label_spec)
        bounds = {"x_bound": x_bound, "x_norm": x_norm, "y_bound": y_bound, "clip": clip}
        if is_file_collection(path):  # every column as text: distributed.read_encoded sets the dtypes
            return cls._from_files("csv", path, schema, label, classes=classes, positive=positive,
                                   label_spec=label_spec, intercept=intercept, unseen=unseen,
                                   unknown_label=unknown_label, scale=scale, bounds=bounds, options=read_csv)
        read_csv.setdefault("dtype", text_columns(schema, label, classes, positive))
        name = str(path) if isinstance(path, (str, os.PathLike)) else str(getattr(path, "name", "the CSV input"))
        try:
            frame = pd.read_csv(path, **read_csv)
        except FileNotFoundError:
            raise DataError(f"no such CSV file: {path!s}") from None
        try:
            return cls.from_frame(frame, schema, label, classes=classes, positive=positive, label_spec=label_spec,
                                  intercept=intercept, unseen=unseen, unknown_label=unknown_label, scale=scale,
                                  **bounds)
        except DataError as error:  # the same refusal, naming the file
            raise type(error)(f"{name}: {error}") from None

    @classmethod
    def from_parquet(cls, paths: Any, schema: Schema, label: str, *, classes: Sequence[Any] | None = None,
                     positive: Any = None, label_spec: Numeric | None = None, intercept: bool = False,
                     unseen: str = "zero", unknown_label: str = "negative", scale: bool = True,
                     x_bound: float | None = None, x_norm: Norm = 2, y_bound: float | None = None,
                     clip: bool = True) -> Dataset:
        """A Dask-backed dataset from parquet files, one partition per file.

        Each file is read (only the declared columns and the label) and encoded exactly as
        :meth:`from_frame` encodes a table — the same schema (one-hot over declared categories,
        numeric columns scaled by their declared bounds, the intercept, the missing-value
        policies), the same label classes or ``label_spec`` and policies — per partition with
        ``dask.dataframe``'s ``map_partitions``; rows are then
        mapped onto the declared bounds lazily, per partition, as in memory.  Nothing is read
        when the dataset is built: the row count of each file comes from its parquet metadata,
        so the partitioning is fixed by the files, never by their values.  Gradients over the
        dataset are reduced per partition on the Dask cluster
        (:class:`~dpopt.numerics.clipping.ClippedGradient`).

        Parameters
        ----------
        paths : str, path, glob or list of files
            A glob pattern (``"data/part-*.parquet"``), a folder (its ``*.parquet`` files,
            sorted by name), a list of files, or one file.
        schema, label, classes, positive, label_spec, intercept, unseen, unknown_label, scale
            As for :meth:`from_frame`.
        x_bound, x_norm, y_bound, clip
            As for :class:`Dataset`.

        Notes
        -----
        Needs the optional ``dask[dataframe]`` and ``pyarrow`` packages.  A partition is first
        read inside a run, after the charge, so nothing there refuses a value: a missing entry
        reads as its column's declared missing-value policy, and a missing one without a
        policy, an infinite or a non-numeric entry (also a non-numeric label without
        ``classes``) as 0, then mapped onto the declaration; a category (or class) is matched by its declared
        value, so a category declared as the number 1 is found in a column stored as text.
        Every file's metadata must hold every declared column (a missing one is refused
        when the dataset is built, naming the file and the column; extra columns are
        ignored).  ``clip=False``, ``unseen="error"`` and ``unknown_label="error"``, which
        refuse rows by their values, are refused here.
        """
        table_declarations(schema, label, classes, positive, intercept, unseen, unknown_label, label_spec=label_spec)
        return cls._from_files("parquet", paths, schema, label, classes=classes, positive=positive,
                               label_spec=label_spec, intercept=intercept, unseen=unseen,
                               unknown_label=unknown_label, scale=scale,
                               bounds={"x_bound": x_bound, "x_norm": x_norm, "y_bound": y_bound, "clip": clip},
                               options={})

    @classmethod
    def _from_files(cls, kind: str, paths: Any, schema: Schema, label: str, *, classes: Sequence[Any] | None,
                    positive: Any, label_spec: Numeric | None, intercept: bool, unseen: str, unknown_label: str,
                    scale: bool, bounds: dict[str, Any], options: dict[str, Any]) -> Dataset:
        """The Dask-backed dataset of :meth:`from_parquet` / :meth:`from_csv` over many files."""

        full, pair = table_declarations(schema, label, classes, positive, intercept, unseen, unknown_label,
                                        label_spec=label_spec)
        if not isinstance(scale, bool):
            raise ModelError(f"scale must be True or False, got {scale!r}")
        label_map = cls._label_map(label, label_spec, bounds)
        full = full.unit_scaled() if scale else full
        X, y, labels = read_encoded(kind, paths, full, label, pair=pair, positive=positive, unseen=unseen,
                                    unknown_label=unknown_label, options=options, label_map=label_map)
        data = cls(X, y, schema=full, label_map=label_map, **bounds)._led_by(labels)
        if pair is not None or positive is not None:  # ±1 by construction (class_labels)
            object.__setattr__(data, "_binary", True)
            object.__setattr__(data, "_class_labels", data)
        return data

    def __repr__(self) -> str:
        extra = "" if self.schema is None else f", schema={self.schema!r}"
        extra += "" if self.label_map is None else f", label_map={self.label_map!r}"
        return (
            f"Dataset(n={self.n}, d={self.n_features}, x_bound={self.x_bound}, "
            f"x_norm={self.x_norm}, y_bound={self.y_bound}{extra})"
        )


