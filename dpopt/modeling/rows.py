"""The row-level rules of a dataset: declared bounds, rows clipped onto them, class labels.

Every function maps rows onto public declarations (a norm bound, a label bound, a
schema, declared classes); none reads a bound from the data.  :class:`~dpopt.modeling.dataset.Dataset`
applies them in memory and :mod:`dpopt.modeling.readers` per partition of a Dask-backed
dataset, so both paths share one definition.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpopt.errors import DataError, ModelError
from dpopt.modeling.norms import norm_order
from dpopt.modeling.schema import Schema, column_numbers
from dpopt.modeling.schema.suggest import did_you_mean

__all__ = [
    "as_finite_array",
    "as_numeric_array",
    "check_bound",
    "class_indices",
    "class_labels",
    "class_membership",
    "clip_rows",
    "enforce_labels",
    "enforce_rows",
    "feature_block_stages",
    "label_values",
    "labels_over",
    "map_feature_block",
    "map_label_block",
    "numeric_labels",
    "rows_over",
]


def as_finite_array(a: object, name: str, ndim: int) -> np.ndarray:
    """``a`` as a float64 array of ``ndim`` dimensions with finite entries, or DataError (naming no value)."""
    arr = _numeric_array(a, name, ndim)
    if not np.all(np.isfinite(arr)):
        raise DataError(f"{name} contains NaN or inf entries; remove or impute them first (or give a schema that "
                        "declares a missing-value policy)")
    return arr


def as_numeric_array(a: object, name: str, ndim: int) -> np.ndarray:
    """``a`` as a float64 array (a copy) of ``ndim`` dimensions; NaN and inf are kept (a schema's
    missing-value policies and checks read them)."""
    return _numeric_array(a, name, ndim)


def clip_rows(X: np.ndarray, bound: float, norm: object = 2) -> np.ndarray:
    """X with every row whose ``norm``-norm exceeds ``bound`` scaled onto it (a per-row map).

    Rows within the bound (up to a relative 1e-12) are returned unchanged; the input is
    not modified.  The bound is a declaration, never read from the data.
    """
    order = norm_order(norm)
    norms = np.linalg.norm(X, ord=order, axis=1)
    over = _over(norms, bound)
    if not over.any():
        return X
    out = np.array(X, dtype=np.float64)
    out[over] *= (bound / norms[over])[:, None]
    return out


def _over(norms: np.ndarray, bound: float) -> np.ndarray:
    return np.asarray(norms > bound * (1 + 1e-12))


def rows_over(X: np.ndarray, bound: float, norm: object = 2) -> np.ndarray:
    """Which rows :func:`clip_rows` scales onto ``bound`` (their ``norm``-norm exceeds it by more
    than a relative 1e-12): read from the data, for the dataset's :mod:`~dpopt.modeling.changes`."""
    return _over(np.linalg.norm(X, ord=norm_order(norm), axis=1), bound)


def labels_over(y: np.ndarray, bound: float | None) -> np.ndarray:
    """Which labels :func:`enforce_labels` clips onto ``[-bound, bound]`` (none without a bound)."""
    return np.zeros(np.shape(y), dtype=bool) if bound is None else np.asarray(np.abs(y) > bound)


def enforce_rows(X: np.ndarray, order: float, bound: float, clip: bool) -> np.ndarray:
    """Rows of X onto the declared norm bound: scaled onto it (``clip=True``) or refused.

    A per-row map, so it is applied to a whole matrix or to each partition of a Dask-backed
    one alike.  The refusal (``clip=False``) depends on the values: it checks one's own data.
    """
    if clip:
        return clip_rows(X, bound, "inf" if order == np.inf else int(order))
    if np.any(rows_over(X, bound, "inf" if order == np.inf else int(order))):
        name = "inf" if order == np.inf else int(order)
        raise DataError(
            f"some rows of X exceed the declared x_bound={bound} in the "
            f"{name}-norm; pass clip=True to scale them onto the bound "
            "or declare a larger bound"
        )
    return X


def enforce_labels(y: np.ndarray, bound: float | None, clip: bool) -> np.ndarray:
    """Labels onto ``[-y_bound, y_bound]`` (``clip=True``) or refused; a per-entry map."""
    if bound is None or not np.any(labels_over(y, bound)):
        return y
    if not clip:
        raise DataError(
            f"some labels exceed the declared y_bound={bound} in absolute value; clip=False checks your "
            "own data and is not private (whether it refuses depends on the values): pass clip=True to "
            "clip them onto the bound or declare a larger bound"
        )
    return np.clip(y, -bound, bound)


def map_feature_block(X: Any, schema: Schema | None, order: float, bound: float, clip: bool) -> np.ndarray:
    """One partition of features onto the declarations: a missing entry (NaN) of a column that
    declares a missing-value policy reads as the policy says, every other non-finite entry as 0;
    then the schema mapping and the row bound of the in-memory rules.

    In memory a NaN without a policy, or an inf, is refused when the dataset is built.  A partition
    of Dask-backed data is first read inside a run, after the charge, where a refusal would
    make the run fail because of one row; so there the entry is mapped (to 0, then onto the
    schema and the norm bound) instead, like any other row outside the declaration.
    """
    _, mapped = feature_block_stages(X, schema)
    return enforce_rows(mapped, order, bound, clip)


def feature_block_stages(X: Any, schema: Schema | None) -> tuple[np.ndarray, np.ndarray]:
    """(the rows as read, the rows mapped onto the schema): the steps of :func:`map_feature_block`
    before the row bound, for the marks of what the mapping did (:mod:`dpopt.modeling.lazy_marks`).

    The rows as read keep NaN and inf; the mapped rows read a declared missing-value policy, every
    other non-finite entry as 0, then the schema mapping (without a schema, the rows as read with
    non-finite entries as 0).
    """
    raw = _numeric_array(X, "X", 2)
    arr = raw if schema is None else schema.fill_missing(raw, refuse=False)  # a policy first; then NaN as 0
    arr = np.where(np.isfinite(arr), arr, 0.0)
    if schema is not None:
        arr = schema.map_rows(arr)
    return raw, arr


def map_label_block(y: Any, bound: float | None, clip: bool) -> np.ndarray:
    """One partition of labels onto the declarations: non-finite labels read as 0 (see
    :func:`map_feature_block`), then the label bound."""
    arr = _numeric_array(y, "y", 1)
    arr[~np.isfinite(arr)] = 0.0
    return enforce_labels(arr, bound, clip)


def _numeric_array(a: object, name: str, ndim: int) -> np.ndarray:
    try:
        arr = np.array(a, dtype=np.float64)
    except (TypeError, ValueError):
        raise DataError(f"{name} must be numeric") from None
    if arr.ndim != ndim:
        raise DataError(f"{name} must be {ndim}-dimensional, got shape {arr.shape}")
    return arr


def check_bound(value: float | None, name: str, *, required: bool) -> float | None:
    if value is None:
        if required:
            raise ModelError(f"{name} must be declared (a public bound; dpopt never reads it from data)")
        return None
    v = float(value)
    if not np.isfinite(v) or v <= 0:
        raise ModelError(f"{name} must be a positive finite number, got {value!r}")
    return v


def _equal(a: object, b: object) -> bool:
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def label_values(frame: Any, label: str, pair: tuple[Any, Any] | None, positive: Any,
                 unknown_label: str) -> np.ndarray:
    """The label column of a table: raw values (regression) or ±1 through the declared classes."""
    try:
        raw = np.asarray(frame[label])
    except (KeyError, IndexError, TypeError):
        known = frame.columns if hasattr(frame, "columns") else frame.keys() if hasattr(frame, "keys") else ()
        raise DataError(f"the table has no label column {label!r}{did_you_mean(label, known)}") from None
    if raw.ndim != 1:
        raise DataError(f"the label column {label!r} must be 1-D")
    return raw if pair is None and positive is None else class_labels(raw, pair, positive, unknown_label)


#: the refusal of ``unknown_label="error"`` (a check of one's own table, never a private run)
_UNKNOWN_LABEL = ("the label column holds a value outside the declared classes (or a missing one); "
                  "unknown_label='error' checks your own table and is not private — a private run uses "
                  "unknown_label='negative'")


def class_labels(raw: np.ndarray, pair: tuple[Any, Any] | None, positive: Any,
                  unknown_label: str) -> np.ndarray:
    """±1 labels: ``pair`` = (negative, positive), or one-vs-rest for ``positive``."""
    values = raw.tolist()
    if pair is None:
        return np.array([1.0 if _equal(v, positive) else -1.0 for v in values])
    neg, pos = pair
    is_pos = np.array([_equal(v, pos) for v in values], dtype=bool)
    if unknown_label == "error":
        is_neg = np.array([_equal(v, neg) for v in values], dtype=bool)
        if not np.all(is_pos | is_neg):
            raise DataError(_UNKNOWN_LABEL)
    return np.where(is_pos, 1.0, -1.0)


def class_membership(raw: np.ndarray, classes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(index, known): each label's position in ``classes`` (0 where unknown) and whether it is one
    of them (a missing label is not)."""
    index = np.zeros(len(raw), dtype=np.float64)
    known = np.zeros(len(raw), dtype=bool)
    values = raw.tolist()
    for i, value in enumerate(classes.tolist()):
        hit = np.array([_equal(v, value) for v in values], dtype=bool)
        index[hit & ~known] = float(i)
        known |= hit
    return index, known


def class_indices(raw: np.ndarray, classes: np.ndarray, unknown_label: str) -> np.ndarray:
    """Class indices 0, …, k − 1 of the labels ``raw`` in the declared ``classes``, row by row.

    A label outside ``classes`` (or missing) is class 0 with ``unknown_label="negative"``, the
    private policy (the first declared class plays the binary models' negative class); with
    ``"error"`` it is refused, which checks one's own table and is not private.
    """
    index, known = class_membership(raw, classes)
    if unknown_label == "error" and not np.all(known):
        raise DataError(_UNKNOWN_LABEL)
    return index


def numeric_labels(raw: np.ndarray, label: str) -> np.ndarray:
    """A regression label column as float64 (no ``label_spec``): a missing or non-numeric label is
    refused when the dataset is built, naming the column and the declaration that would map it."""
    values = column_numbers(label, "numeric", raw)
    if np.isnan(values).any():
        raise DataError(f"the label column {label!r} has missing values (NaN/None); declare "
                        "label_spec=dp.Numeric(low, high, grid=..., missing=dp.Fill(<a value in the range>)) "
                        "(refused when the dataset is built, before any budget is spent)")
    return values
