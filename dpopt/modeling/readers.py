"""Reading tables into a Dataset, and Dask-backed datasets (one partition per file).

A :class:`~dpopt.modeling.dataset.Dataset` may hold ``X`` as a row-chunked Dask array
(every column in one chunk) and ``y`` as a Dask array with the same row chunks, so data
larger than one machine's memory can be used by the first-order mechanisms (DP-GD,
DP-SGD, Frank–Wolfe, mirror descent).  This module holds everything that touches such
data; the rest of dpopt sees the same Dataset/ClippedGradient interface as in memory.

* **Lazy, per-partition rules.**  The in-memory rules of a dataset — rows mapped onto the
  schema and onto the declared norm bound, labels clipped — are applied to each partition
  with ``map_blocks`` when it is computed (:func:`lazy_dataset_arrays`).  Bounds come from
  declarations only.  A partition is first computed inside a run, after the charge, so
  nothing there refuses a value: NaN/inf and non-numeric entries are read as 0 and then
  mapped (in memory they are refused when the dataset is built), and the policies that
  refuse rows by their values are refused when a Dask-backed dataset is built.
* **Partitions come from files.**  :func:`read_encoded` makes one partition per file
  (``Dataset.from_parquet`` / ``from_csv`` with many files); every declared column is read
  as objects (CSV: as text, so Dask infers no dtype from the first file) and coerced per the
  schema inside the partition by one function for both formats (:func:`_encode_partition`),
  through ``dask.dataframe``'s ``map_partitions`` with an explicit ``meta``.  The row count
  of a parquet file is in its metadata, so ``n`` is known without reading a value; a CSV
  file's rows are counted once, reading it as text.  Under the replace-one relation the
  per-partition row counts of neighbours are equal, so they are public.
* **Marked where mapped.**  Each partition's map call also marks which declaration changed
  each of its rows (:mod:`dpopt.modeling.lazy_marks`, extra columns of the mapping, and of the
  encoded partition for the label), the in-memory dataset's marks; a run's private diagnostics
  sum them per partition after its charge (:class:`LazyChanges`).
* **One pass per step.**  :func:`dpopt.numerics.distributed.clipped_sum` computes each partition's
  ``(Σ_i clip(∇ℓ_i), count)`` with ``blockwise`` and sums the partition vectors on the
  cluster; only a (d+1)-vector comes back.  X is never persisted (it may not fit in
  memory); every step reads the partitions again.  The noise is added afterwards, on the
  client, by the mechanism (its RNG never leaves the client).
* **Where it runs.**  On the Dask client of the current executor
  (``dpopt.executors.current_executor().dask_client()``) when there is one, else on
  Dask's default scheduler (which is a default ``distributed.Client`` if the user has
  made one, or ``dask.config.set(scheduler=...)``).  Which worker computed what, and how
  long it took, never enters a Release.

Dask is optional: this module imports it only inside functions, and
:func:`is_dask_array` is False for everything when Dask was never imported.
"""

from __future__ import annotations

import copy
import glob
import math
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar

import numpy as np

from dpopt.errors import DataError, ModelError
from dpopt.modeling.changes import TableChanges, none
from dpopt.modeling.schema import (
    UNSEEN_POLICIES,
    Categorical,
    LabelMap,
    Numeric,
    Schema,
)
from dpopt.modeling.schema.suggest import did_you_mean


class Link(Protocol):
    """What the data-parallel reductions read of a loss: its dataset and its φ, φ' (every
    :class:`~dpopt.modeling.losses.Loss` has them; typed structurally, so that this module, which
    the losses call, does not import them back)."""

    data: Any

    def phi(self, z: np.ndarray, y: np.ndarray) -> np.ndarray: ...

    def dphi(self, z: np.ndarray, y: np.ndarray) -> np.ndarray: ...


LinkT = TypeVar("LinkT", bound=Link)

__all__ = [
    "LazyChanges",
    "Link",
    "compute",
    "dask_client",
    "data_free",
    "gradient_sum",
    "is_dask_array",
    "is_file_collection",
    "lazy_changes",
    "lazy_dataset_arrays",
    "loss_value",
    "materialize",
    "read_declared",
    "read_encoded",
    "read_numbers",
    "require_dask",
    "table_declarations",
    "text_columns",
]

#: the characters that make a path string a glob pattern
_GLOB = ("*", "?", "[")


def is_dask_array(a: object) -> bool:
    """Whether ``a`` is a ``dask.array.Array`` (False without importing Dask when it was never imported)."""
    module = sys.modules.get("dask.array")
    array_type = getattr(module, "Array", None)
    return array_type is not None and isinstance(a, array_type)


def is_file_collection(path: object) -> bool:
    """Whether a loader's ``path`` names many files: a list/tuple, a glob pattern or a folder."""
    if isinstance(path, (list, tuple)):
        return True
    if isinstance(path, (str, Path)):
        text = str(path)
        return any(ch in text for ch in _GLOB) or os.path.isdir(text)
    return False


def require_dask() -> Any:
    try:
        import dask.array as da
    except ImportError:  # pragma: no cover - dask is installed in the development environment
        raise ModelError("Dask-backed data needs the optional dask package: pip install 'dask[dataframe]' "
                         "(and 'distributed' for a cluster)") from None
    return da


def dask_client() -> Any:
    """The Dask client of the current executor, or None (in-process executor, or no executors module)."""
    try:
        from dpopt.executors import current_executor
    except ImportError:
        return None
    try:
        return current_executor().dask_client()
    except AttributeError:
        return None


def compute(*collections: Any) -> tuple[Any, ...]:
    """Compute Dask collections on the executor's client, else on Dask's default scheduler."""
    client = dask_client()
    if client is not None:
        return tuple(client.gather(client.compute(list(collections))))
    import dask

    return tuple(dask.compute(*collections))


# ---------------------------------------------------------------------------
# the dataset: lazy validation and bound enforcement per partition
# ---------------------------------------------------------------------------


def _known_rows(a: Any) -> Any:
    """``a`` with its row chunk sizes known (counted once, a pass, if Dask only knows NaN)."""
    if any(math.isnan(c) for c in a.chunks[0]):
        return a.compute_chunk_sizes()
    return a


def _numeric(a: Any, name: str) -> None:
    if not (np.issubdtype(a.dtype, np.number) or a.dtype == bool):
        raise DataError(f"{name} must be numeric")


def lazy_dataset_arrays(X: Any, y: Any, *, schema: Schema | None, order: float, x_bound: float,
                        y_bound: float | None, clip: bool, mark_rows: bool = True,
                        mark_labels: bool = True) -> tuple[Any, Any, Any]:
    """X and y as Dask arrays with the dataset's rules applied lazily to each partition, and the
    marks of what the rules did (a :class:`~dpopt.modeling.changes.TableChanges` over lazy flags).

    Shapes are checked now (from metadata); the values are checked and mapped when a
    partition is computed, by the same functions as in memory
    (:func:`~dpopt.modeling.rows.map_feature_block`, ``map_label_block``): NaN/inf are
    read as 0 (a refusal there would come after the charge), rows are mapped onto the schema and clipped onto
    the declared norm bound, labels clipped to ``y_bound``.  One of X, y may be a NumPy
    array; it is chunked like the other.  Each partition's rows are marked by the call that
    maps them (:mod:`dpopt.modeling.lazy_marks`): per declared column, the rows scaled onto
    ``x_bound`` (``mark_rows``) and the labels clipped to ``y_bound`` (``mark_labels``), as the
    in-memory dataset marks them.
    """
    da = require_dask()
    from dpopt.modeling.lazy_marks import (
        feature_mark_names,
        label_mark_names,
        map_and_mark_features,
        map_and_mark_labels,
    )

    if not is_dask_array(X):
        X = np.asarray(X)
        if X.ndim != 2:
            raise DataError(f"X must be 2-dimensional, got shape {X.shape}")
        y = _known_rows(y)
        X = da.from_array(X, chunks=(y.chunks[0], -1)) if X.shape[0] == y.shape[0] else da.from_array(X)
    X = _known_rows(X)
    if X.ndim != 2:
        raise DataError(f"X must be 2-dimensional, got shape {X.shape}")
    if not is_dask_array(y):
        y = np.asarray(y)
        if y.ndim != 1:
            raise DataError(f"y must be 1-dimensional, got shape {y.shape}")
        y = da.from_array(y, chunks=(X.chunks[0],)) if y.shape[0] == X.shape[0] else da.from_array(y)
    y = _known_rows(y)
    _numeric(X, "X")
    _numeric(y, "y")
    if y.ndim != 1:
        raise DataError(f"y must be 1-dimensional, got shape {y.shape}")
    if X.shape[0] != y.shape[0]:
        raise DataError(f"X has {X.shape[0]} rows but y has {y.shape[0]} entries")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise DataError(f"X must have at least one row and one column, got shape {X.shape}")
    if schema is not None and X.shape[1] != schema.n_features:
        raise DataError(f"X must have shape (n, {schema.n_features}) for this schema, got shape {X.shape}")
    if X.numblocks[1] > 1:
        X = X.rechunk({1: -1})  # columns in one chunk: a partition is a set of whole rows
    if y.chunks[0] != X.chunks[0]:
        y = y.rechunk((X.chunks[0],))
    d = int(X.shape[1])
    features = feature_mark_names(schema, d, mark_rows)
    labels = label_mark_names(y_bound if mark_labels else None)
    # one call per partition maps its rows and marks them: [mapped rows | marks]
    Xm = X.map_blocks(map_and_mark_features, schema=schema, order=order, bound=x_bound, clip=clip,
                      mark_rows=mark_rows, chunks=(X.chunks[0], (d + len(features.names),)), dtype=np.float64,
                      meta=np.empty((0, 0)))
    ym = y.map_blocks(map_and_mark_labels, bound=y_bound, clip=clip, mark=mark_labels, new_axis=1,
                      chunks=(y.chunks[0], (1 + len(labels.names),)), dtype=np.float64, meta=np.empty((0, 0)))
    changes = lazy_changes(features, Xm[:, d:]).then(lazy_changes(labels, ym[:, 1:]))
    return Xm[:, :d], ym[:, 0], changes


class LazyChanges(TableChanges):
    """The marks of a Dask-backed dataset (:mod:`dpopt.modeling.changes`): ``flags`` is a lazy Dask
    array with the rows' partitions, marked by each partition's map call (:mod:`dpopt.modeling.lazy_marks`)."""

    def counts(self) -> np.ndarray:
        """Each partition's flags summed and the sums added up (one pass over the partitions, on the
        executor's Dask client when there is one): **exact, NOT private**."""
        (total,) = compute(self.flags.astype(np.int64).sum(axis=0))
        return np.asarray(total, dtype=np.int64).reshape(len(self.names))

    def _columns(self, flags: list[Any], n: int) -> Any:
        da = require_dask()
        return da.stack(flags, axis=1).astype(bool) if flags else da.zeros((n, 0), dtype=bool)


def lazy_changes(names: TableChanges, marks: Any) -> LazyChanges:
    """The declared counts ``names`` (a :class:`~dpopt.modeling.changes.TableChanges` of no rows)
    over lazy 0/1 mark columns (``marks``, a Dask array n × m)."""
    return LazyChanges(names.names, names.wording, marks > 0.5)


# ---------------------------------------------------------------------------
# loaders: one partition per file, encoded by the schema
# ---------------------------------------------------------------------------


def _files(paths: Any, kind: str) -> list[str]:
    """The files a loader reads, in a fixed order: a list as given, a glob or folder sorted by name."""
    if isinstance(paths, (list, tuple)):
        files = [str(p) for p in paths]
    elif isinstance(paths, (str, Path)) and os.path.isdir(str(paths)):
        files = sorted(glob.glob(os.path.join(str(paths), f"*.{kind}")))
    elif isinstance(paths, (str, Path)):
        files = sorted(glob.glob(str(paths))) if any(ch in str(paths) for ch in _GLOB) else [str(paths)]
    else:
        raise ModelError(f"paths must be a file, a glob pattern, a folder or a list of files, got {paths!r}")
    if not files:
        raise DataError(f"no {kind} files match {paths!s}")
    for f in files:
        if not os.path.isfile(f):
            raise DataError(f"no such {kind} file: {f}")
    return files


def _encoded_names(d: int, marks: int = 0) -> list[str]:
    return [f"x{j}" for j in range(d)] + ["y"] + [f"m{j}" for j in range(marks)]


#: the spellings pandas reads as booleans (``read_csv``'s defaults): a 0/1 or numeric column read as
#: text takes them as 1 and 0, as an in-memory table whose column pandas read as bool
_TRUE, _FALSE = ("True", "TRUE", "true"), ("False", "FALSE", "false")


class _NoMatch:
    """The value of an entry that matches no declared category or class (equal to nothing)."""

    def __eq__(self, other: object) -> bool:
        return False

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return "<no declared value>"


_NO_MATCH = _NoMatch()


def read_numbers(col: Any, *, keep_missing: bool = False) -> np.ndarray:
    """A column as numbers in the table's units: an entry that is not a finite number is read as 0.

    The coercion of every numeric column (and a regression label) of a file-backed table,
    whether the file typed it (parquet) or it was read as text (CSV): ``pandas.to_numeric``
    with unparsable entries (empty, ``"abc"``) as missing, pandas' boolean spellings as
    1/0, then every missing or non-finite entry as 0 — the entry read as 0, which the
    dataset's rules then map onto the declaration like any other value.  With
    ``keep_missing`` (a column that declares a missing-value policy) a missing or unparsable
    entry stays NaN, for the policy to read.  Nothing is refused and no value is reported.
    """
    import pandas as pd

    values = pd.Series(np.asarray(col, dtype=object), dtype=object)
    values = values.mask(values.isin(_TRUE), 1).mask(values.isin(_FALSE), 0)
    out = np.array(pd.to_numeric(values, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan))
    out[np.isinf(out) if keep_missing else ~np.isfinite(out)] = 0.0
    return out


def _matches(values: Any, declared: Any, numbers: Any) -> np.ndarray:
    """Which entries are the declared value: the same text for a string, the same number for a
    number (text ``"1"`` is the category 1), pandas' spellings for a boolean."""
    import numbers as _numbers

    if isinstance(declared, str):
        return np.asarray(values.isin([declared]), dtype=bool)
    if isinstance(declared, (bool, np.bool_)):
        spelled = _TRUE if declared else _FALSE
        typed = values.map(lambda v: isinstance(v, (bool, np.bool_)) and bool(v) == bool(declared))
        return np.asarray(values.isin(spelled), dtype=bool) | np.asarray(typed, dtype=bool)
    if isinstance(declared, _numbers.Number):
        return np.asarray(numbers == declared, dtype=bool)
    return np.asarray(values.map(lambda v: _equal(v, declared)), dtype=bool)


def _equal(a: object, b: object) -> bool:
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def read_declared(col: Any, declared: Sequence[Any], *, keep_missing: bool = False) -> np.ndarray:
    """A column of categories (or class labels) as the declared values themselves.

    Each entry becomes the first declared value it stands for (:func:`_matches`), so a
    category declared as the number 1 is found whether the file typed the entry (parquet)
    or holds the text ``"1"`` (CSV read as text); any other entry — missing, unknown,
    unparsable — becomes a value equal to nothing, which the schema encodes as the
    all-zero block and the classes as the negative label.  With ``keep_missing`` (a column
    that declares a missing-value policy) a missing entry becomes None, for the policy to
    read.  Nothing is refused.
    """
    import pandas as pd

    values = pd.Series(np.asarray(col, dtype=object), dtype=object)
    numbers = pd.to_numeric(values, errors="coerce")
    out = np.full(len(values), _NO_MATCH, dtype=object)
    free = np.ones(len(values), dtype=bool)
    for value in declared:
        hit = _matches(values, value, numbers) & free
        out[hit] = value
        free &= ~hit
    if keep_missing:
        out[free & np.asarray(values.isna(), dtype=bool)] = None
    return out


def _encode_partition(frame: Any, *, schema: Schema, label: str, pair: tuple[Any, Any] | None, positive: Any,
                      unseen: str, unknown_label: str, label_map: LabelMap | None = None) -> Any:
    """One partition of a table encoded as :meth:`Dataset.from_frame` encodes a table: [X | y | label marks].

    The one coercion of file-backed tables (parquet and CSV alike): every column arrives as
    objects (CSV as text) and is read through its declaration — numeric and 0/1 columns
    with :func:`read_numbers`, categoricals and the classes with :func:`read_declared` — so
    nothing here refuses a value: this runs when a partition is first read, inside a private
    run after the charge.  The schema mapping itself (grid, bounds, one-hot validity, the
    norm bound) is left to :func:`~dpopt.modeling.rows.map_feature_block`, so it runs once.
    The label's marks (:func:`_label_marks`) are taken from the values the label was read as.
    """
    import pandas as pd

    from dpopt.modeling.rows import label_values
    from dpopt.modeling.schema import Categorical, Intercept

    table = {name: read_declared(frame[name], spec.categories, keep_missing=spec.missing is not None)
             if isinstance(spec, Categorical) else read_numbers(frame[name], keep_missing=spec.missing is not None)
             for name, spec in schema.columns if not isinstance(spec, Intercept)}
    declared = pair if pair is not None else ((positive,) if positive is not None else None)
    read: Any
    if label_map is not None:  # a declared numeric label: its Fill, else 0; then clipped, rounded, mapped
        read = read_numbers(frame[label], keep_missing=label_map.spec.missing is not None)
        yv = label_map.map_labels(read, refuse=False)
    else:
        read = read_numbers(frame[label]) if declared is None else read_declared(frame[label], declared)
        yv = np.asarray(label_values({label: read}, label, pair, positive, unknown_label), dtype=np.float64)
    X = schema.encode(table, unseen=unseen, mapped=False) if len(frame) else np.empty((0, schema.n_features))
    marks = _label_marks(frame[label], read, pair=pair, positive=positive, label_map=label_map)
    return pd.DataFrame(np.column_stack([X, yv, marks.flags.astype(np.float64)]),
                        columns=_encoded_names(schema.n_features, len(marks.names)), index=frame.index)


def _label_marks(column: Any, read: Any, *, pair: tuple[Any, Any] | None, positive: Any,
                 label_map: LabelMap | None) -> TableChanges:
    """The marks of a label column as :meth:`Dataset.from_frame` takes them: labels outside a
    ``label_spec``'s range (and missing, when it fills them); with classes, labels read as no
    declared class (:func:`read_declared`) and missing labels; none for a plain numeric label.
    ``column`` holds the entries as the file gave them, ``read`` as the label was read."""
    from dpopt.modeling.lazy_marks import declared_label_marks, spec_label_marks

    if label_map is not None:
        return spec_label_marks(np.asarray(read, dtype=np.float64), label_map)
    if pair is None and positive is None:
        return none(len(column))
    known = None if pair is None else np.array([v is not _NO_MATCH for v in np.asarray(read, dtype=object)],
                                               dtype=bool)
    return declared_label_marks(column, known)


def _as_objects(frame: Any, columns: list[str]) -> Any:
    """The declared columns, in the declared order, as objects: a partition's dtypes never come
    from a file's values (dask would otherwise compare them with the first file's)."""
    return frame[columns].astype(object)


def _object_meta(columns: list[str]) -> Any:
    import pandas as pd

    return pd.DataFrame({name: pd.Series([], dtype=object) for name in columns})


def _missing_column(path: str, present: Sequence[str], columns: list[str]) -> None:
    """Refuse a file whose header (or metadata) lacks a declared column: names the file and column."""
    for name in columns:
        if name not in present:
            raise DataError(f"the file {path} has no column {name!r} declared by the schema (or the label)"
                            f"{did_you_mean(name, present)}; every file must hold every declared column "
                            "(extra columns are ignored)")


def _read_parquet_file(path: str, *, columns: list[str]) -> Any:
    import pyarrow.parquet as pq

    return _as_objects(pq.read_table(path, columns=columns).to_pandas(), columns)


def _parquet_frame(files: list[str], columns: list[str]) -> tuple[Any, tuple[int, ...]]:
    """A Dask DataFrame with one partition per parquet file, and the files' row counts (metadata only).

    Every file's schema (metadata, no value) must hold every declared column.
    """
    import dask.dataframe as dd
    import pyarrow.parquet as pq

    lengths = []
    for f in files:
        metadata = pq.ParquetFile(f)
        _missing_column(f, metadata.schema_arrow.names, columns)
        lengths.append(int(metadata.metadata.num_rows))
    frame = dd.from_map(_read_parquet_file, files, columns=columns, meta=_object_meta(columns),
                        label="dpopt-read-parquet")
    return frame, tuple(lengths)


#: ``read_csv`` options that a Dask-backed CSV table sets itself (every declared column is read as text)
CSV_OWN_OPTIONS = ("dtype", "converters", "usecols", "index_col", "chunksize", "iterator")


def _read_csv_file(path: str, *, columns: list[str], options: dict[str, Any]) -> Any:
    """One CSV file's declared columns as text (``dtype=str``): pandas infers no type from a value."""
    import pandas as pd

    text = dict.fromkeys(columns, str)
    return _as_objects(pd.read_csv(path, usecols=columns, dtype=text, **options), columns)


def _csv_rows(path: str, columns: list[str], options: dict[str, Any]) -> int:
    """The number of rows of one CSV file, read as the run will read it (all text: no value can fail it)."""
    import pandas as pd

    try:
        return len(_read_csv_file(path, columns=columns, options=options))
    except (pd.errors.ParserError, UnicodeDecodeError):
        raise DataError(f"the CSV file {path} is not a well-formed table (a line with more fields than the "
                        "header, an unclosed quote or another encoding); fix the file") from None


def _csv_header(path: str, options: dict[str, Any]) -> list[str]:
    """The column names of one CSV file, from its header alone."""
    import pandas as pd

    try:
        return [str(c) for c in pd.read_csv(path, **{**options, "nrows": 0}).columns]
    except pd.errors.EmptyDataError:
        raise DataError(f"the CSV file {path} is empty (no header); every file needs the declared columns") from None


def _csv_frame(files: list[str], columns: list[str], options: dict[str, Any]) -> tuple[Any, tuple[int, ...]]:
    """A Dask DataFrame with one partition per CSV file (declared columns read as text), and the
    files' row counts (each file's rows counted once, when the dataset is built).

    Every file's header must hold every declared column (checked from the header alone).
    """
    import dask.dataframe as dd

    for key in CSV_OWN_OPTIONS:
        if key in options:
            raise ModelError(f"read_csv option {key!r} is set by dpopt for a Dask-backed CSV table (every declared "
                             "column is read as text and coerced by the schema); drop it")
    for f in files:
        _missing_column(f, _csv_header(f, options), columns)
    lengths = tuple(_csv_rows(f, columns, options) for f in files)
    frame = dd.from_map(_read_csv_file, files, columns=columns, options=options, meta=_object_meta(columns),
                        label="dpopt-read-csv")
    return frame, lengths


def read_encoded(kind: str, paths: Any, schema: Schema, label: str, *, pair: tuple[Any, Any] | None,
                 positive: Any, unseen: str, unknown_label: str, options: dict[str, Any],
                 label_map: LabelMap | None = None) -> tuple[Any, Any, Any]:
    """X and y (Dask arrays, one row chunk per file) of the files a loader names, and the marks
    of what the label's declaration did (a :class:`~dpopt.modeling.changes.TableChanges` over lazy
    flags, marked in each partition where the label is read: :func:`_label_marks`).

    Parameters
    ----------
    kind : {"parquet", "csv"}
    paths : glob, folder, list of files or one file
    schema : Schema
        The full declaration to encode with (intercept and unit scaling already applied).
    label, pair, positive, unseen, unknown_label
        As for :meth:`Dataset.from_frame` (``pair`` = the declared (negative, positive) classes).
    label_map : LabelMap, optional
        A numeric label declared with ``label_spec``: mapped onto [−1, 1] per partition.
    options : dict
        Passed to ``pandas.read_csv`` for each file (CSV only; the options in
        :data:`CSV_OWN_OPTIONS` are dpopt's own and refused).

    Notes
    -----
    Every declared column is read as objects (a CSV file's as text), so no dtype is inferred
    from a value, and coerced per the declaration inside each partition
    (:func:`_encode_partition`).  When the dataset is built only the files' headers (parquet:
    metadata) are checked — a file without a declared column is refused, naming the file and
    the column; extra columns are ignored — and the row counts are read: from the parquet
    metadata, or by reading each CSV file once as text (which no value can make fail).
    """
    require_dask()
    import pandas as pd

    from dpopt.modeling.schema import Intercept

    for policy, value in (("unseen", unseen), ("unknown_label", unknown_label)):
        if value == "error":
            raise ModelError(
                f"{policy}='error' refuses rows by their values, which on Dask-backed data could only happen "
                "while a partition is read inside a private run, after the charge; use the default (the value "
                "is mapped onto the declaration) or check your files with Dataset.from_frame first")
    files = _files(paths, kind)
    columns = [name for name, spec in schema.columns if not isinstance(spec, Intercept)] + [label]
    if kind == "parquet":
        frame, lengths = _parquet_frame(files, columns)
    elif kind == "csv":
        frame, lengths = _csv_frame(files, columns, options)
    else:  # pragma: no cover - internal
        raise ModelError(f"unknown file kind {kind!r}")
    d = schema.n_features
    names = _label_marks(np.empty(0, dtype=object), np.empty(0, dtype=object), pair=pair, positive=positive,
                         label_map=label_map)  # no rows: the public names only
    meta = pd.DataFrame({name: pd.Series([], dtype=np.float64) for name in _encoded_names(d, len(names.names))})
    encoded = frame.map_partitions(_encode_partition, schema=schema, label=label, pair=pair, positive=positive,
                                   unseen=unseen, unknown_label=unknown_label, label_map=label_map, meta=meta)
    arr = encoded.to_dask_array(lengths=list(lengths))
    return arr[:, :d], arr[:, d], lazy_changes(names, arr[:, d + 1:])


# ---------------------------------------------------------------------------
# the data-parallel reductions
# ---------------------------------------------------------------------------


def data_free(loss: LinkT) -> LinkT:
    """A shallow copy of ``loss`` without its dataset: what a worker needs to evaluate φ and φ'
    (the link function and its parameters), not a graph of the whole data."""
    link = copy.copy(loss)
    link.__dict__["data"] = None
    link.__dict__["variable"] = None
    return link


def _value_block(Xb: np.ndarray, yb: np.ndarray, *, theta: np.ndarray, link: Link) -> np.ndarray:
    return np.array([[float(np.sum(link.phi(Xb @ theta, yb)))]])


def loss_value(loss: Link, theta: np.ndarray) -> float:
    """The average loss (1/n) Σ φ(⟨x_i, θ⟩, y_i) over a Dask-backed dataset (one pass)."""
    da = require_dask()
    X: Any = loss.data.X
    y: Any = loss.data.y
    parts = da.blockwise(_value_block, "ik", X, "ij", y, "i", new_axes={"k": 1}, adjust_chunks={"i": 1},
                         concatenate=True, dtype=np.float64, meta=np.empty((0, 0)),
                         theta=np.asarray(theta, dtype=np.float64), link=data_free(loss))
    (total,) = compute(parts.sum())
    return float(total) / loss.data.n


def materialize(arrays: Sequence[Any]) -> list[np.ndarray]:
    """Compute Dask arrays to NumPy (tests and small data only: it loads them into memory)."""
    return [np.asarray(a) for a in compute(*arrays)]


def _gradient_block(Xb: np.ndarray, yb: np.ndarray, *, theta: np.ndarray, link: Link) -> np.ndarray:
    """One partition's ``Σ_i ∇ℓ(θ; d_i)`` as a (1, d) block."""
    c = np.asarray(link.dphi(Xb @ theta, yb), dtype=np.float64)
    out = np.empty((1, Xb.shape[1]))
    out[0, :] = Xb.T @ c
    return out


def gradient_sum(loss: Link, theta: np.ndarray) -> np.ndarray:
    """``Σ_i ∇ℓ(θ; d_i)`` over a Dask-backed dataset (one pass, unclipped; the loss's own
    gradient, not a private one)."""
    da = require_dask()
    X: Any = loss.data.X
    y: Any = loss.data.y
    d = int(X.shape[1])
    parts = da.blockwise(_gradient_block, "ik", X, "ij", y, "i", new_axes={"k": d}, adjust_chunks={"i": 1},
                         concatenate=True, dtype=np.float64, meta=np.empty((0, 0)),
                         theta=np.asarray(theta, dtype=np.float64), link=data_free(loss))
    (total,) = compute(parts.sum(axis=0))
    return np.asarray(total, dtype=np.float64)


#: the policies for a label outside the declared classes (:meth:`Dataset.from_frame`)
UNKNOWN_LABEL_POLICIES = ("negative", "error")


def table_declarations(schema: object, label: object, classes: Sequence[Any] | None, positive: Any,
                        intercept: object, unseen: object, unknown_label: object, *, label_spec: object = None,
                        ) -> tuple[Schema, tuple[Any, Any] | None]:
    """Check a table's public declarations (before any value is read); the schema to use and
    the (negative, positive) pair of classes, if any."""
    if label_spec is not None:
        if not isinstance(label_spec, Numeric):
            raise ModelError("label_spec declares a numeric label: Numeric(low, high, grid=...), got "
                             f"{type(label_spec).__name__} (a classification label declares classes=[negative, positive])")
        if classes is not None or positive is not None:
            raise ModelError("give classes (or positive) for a classification label or label_spec for a numeric "
                             "one, not both")
    if not isinstance(schema, Schema):
        raise ModelError(f"reading a table needs a dpopt Schema, got {type(schema).__name__}")
    if not isinstance(label, str):
        raise ModelError(f"label must be the name of the label column, got {label!r}")
    if unseen not in UNSEEN_POLICIES:
        raise ModelError(f"unseen must be one of {UNSEEN_POLICIES}, got {unseen!r}")
    if unknown_label not in UNKNOWN_LABEL_POLICIES:
        raise ModelError(f"unknown_label must be one of {UNKNOWN_LABEL_POLICIES}, got {unknown_label!r}")
    if not isinstance(intercept, bool):
        raise ModelError(f"intercept must be True or False, got {intercept!r}")
    pair: tuple[Any, Any] | None = None
    if classes is not None:
        if positive is not None:
            raise ModelError("give classes=[negative, positive] or positive=..., not both")
        if isinstance(classes, (str, bytes)) or len(list(classes)) != 2:
            raise ModelError("classes must be a sequence of two values: [negative, positive]")
        neg, pos = list(classes)
        if _equal(neg, pos):
            raise ModelError("the two classes must differ")
        pair = (neg, pos)
    if label in {name for name, _ in schema.columns}:
        raise ModelError(f"the label {label!r} is also a declared feature column")
    return (schema.with_intercept() if intercept else schema), pair


def text_columns(schema: Schema, label: str, classes: Sequence[Any] | None, positive: Any) -> dict[str, type]:
    """Columns pandas should read as text: categoricals (and the label) declared with strings."""
    dtype: dict[str, type] = {name: str for name, spec in schema.columns
                              if isinstance(spec, Categorical) and all(isinstance(c, str) for c in spec.categories)}
    declared = list(classes) if classes is not None else ([positive] if positive is not None else [])
    if declared and all(isinstance(c, str) for c in declared):
        dtype[label] = str
    return dtype
