"""Datasets with declared, public bounds.

A :class:`Dataset` holds features ``X`` (n × d) and labels ``y`` (n,) together
with the bounds a user *declares*: a bound on the row norm of ``X`` (in the ℓ1,
ℓ2 or ℓ∞ norm) and a bound on ``|y|``.  Every sensitivity in dpopt is computed
from these declared bounds, never from the data.  Rows outside the bounds are
clipped (``clip=True``, the default) or, on request, refused; messages never contain data values or
data-dependent counts.

A dataset may also carry a :class:`~dpopt.modeling.schema.Schema` (the declared type,
bounds and grid of every column).  Its rows are then mapped onto the declaration row by
row (never refused for their values), and the row-norm bound defaults to the one the
declaration implies.  The 0/1 loss and its MIP oracles need a schema.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from dpopt.errors import DataError, ModelError
from dpopt.modeling.schema import Schema

Norm = Literal[1, 2, "inf"]
_NORMS: dict[object, float] = {1: 1.0, 2: 2.0, "inf": np.inf, np.inf: np.inf, float("inf"): np.inf}


def norm_order(norm: object) -> float:
    """Return the numpy order for a declared norm (1, 2 or ``"inf"``).

    Raises
    ------
    ModelError
        If the norm is not one of 1, 2, ``"inf"``.
    """
    try:
        return _NORMS[norm]
    except (KeyError, TypeError):
        raise ModelError(f"unknown norm {norm!r}: use 1, 2 or 'inf'") from None


def dual_order(order: float) -> float:
    """The Hölder conjugate of a norm order (1 ↔ ∞, 2 ↔ 2)."""
    if order == 1.0:
        return np.inf
    if order == np.inf:
        return 1.0
    return order / (order - 1.0)


def _inverse(order: float) -> float:
    """1/p, with 1/∞ = 0."""
    return 0.0 if order == np.inf else 1.0 / order


def _as_finite_array(a: object, name: str, ndim: int) -> np.ndarray:
    try:
        arr = np.array(a, dtype=np.float64)
    except (TypeError, ValueError):
        raise DataError(f"{name} must be numeric") from None
    if arr.ndim != ndim:
        raise DataError(f"{name} must be {ndim}-dimensional, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise DataError(f"{name} contains NaN or inf entries; remove or impute them first")
    return arr


def _check_bound(value: float | None, name: str, *, required: bool) -> float | None:
    if value is None:
        if required:
            raise ModelError(f"{name} must be declared (a public bound; dpopt never reads it from data)")
        return None
    v = float(value)
    if not np.isfinite(v) or v <= 0:
        raise ModelError(f"{name} must be a positive finite number, got {value!r}")
    return v


@dataclass(frozen=True, eq=False)
class Dataset:
    """Features and labels with declared bounds.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Feature matrix.
    y : array_like, shape (n,)
        Labels (``±1`` for classification losses, reals for regression).
    x_bound : float, optional
        Declared bound on the ``x_norm``-norm of every row of ``X``.  Required without a
        schema; with one it defaults to ``schema.row_norm_bound(x_norm)``.
    x_norm : {1, 2, "inf"}
        Order of the norm ``x_bound`` refers to.
    y_bound : float, optional
        Declared bound on ``|y|``. Required by regression losses.
    clip : bool, default True
        If true (the default), rows whose norm exceeds ``x_bound`` are scaled onto the
        bound and labels are clipped to ``[-y_bound, y_bound]``: data that does not fit
        its declaration is mapped onto it row by row.  ``clip=False`` raises
        :class:`~dpopt.errors.DataError` instead; that refusal depends on the values, so
        it is for checking one's own data, not for a private pipeline.
    schema : Schema, optional
        The public declaration of the columns.  With a schema, ``X`` is first mapped onto
        it row by row (:meth:`Schema.map_rows`: rounded onto the declared grid, clipped to
        the declared bounds, one-hot blocks made valid), so no row is refused for its
        values.  If an explicit ``x_bound`` is smaller than the schema's bound and
        ``clip=True`` scales a row, that row leaves the grid; the 0/1 loss then reads it
        rounded back onto the grid (:meth:`Schema.to_integers`).

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
    _order: float = field(init=False, repr=False)

    def __post_init__(self) -> None:
        X = _as_finite_array(self.X, "X", 2)
        y = _as_finite_array(self.y, "y", 1)
        if X.shape[0] != y.shape[0]:
            raise DataError(f"X has {X.shape[0]} rows but y has {y.shape[0]} entries")
        if X.shape[0] == 0 or X.shape[1] == 0:
            raise DataError(f"X must have at least one row and one column, got shape {X.shape}")
        order = norm_order(self.x_norm)
        xb_declared = self.x_bound
        if self.schema is not None:
            if not isinstance(self.schema, Schema):
                raise ModelError(f"schema must be a dpopt Schema, got {type(self.schema).__name__}")
            X = self.schema.map_rows(X)
            if xb_declared is None:
                xb_declared = self.schema.row_norm_bound(order)
        xb = _check_bound(xb_declared, "x_bound", required=True)
        assert xb is not None
        yb = _check_bound(self.y_bound, "y_bound", required=False)
        X = self._enforce_rows(X, order, xb)
        y = self._enforce_labels(y, yb)
        X.setflags(write=False)
        y.setflags(write=False)
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "y", y)
        object.__setattr__(self, "x_bound", xb)
        object.__setattr__(self, "y_bound", yb)
        object.__setattr__(self, "x_norm", "inf" if order == np.inf else int(order))
        object.__setattr__(self, "_order", order)

    def _enforce_rows(self, X: np.ndarray, order: float, bound: float) -> np.ndarray:
        norms = np.linalg.norm(X, ord=order, axis=1)
        over = norms > bound * (1 + 1e-12)
        if not over.any():
            return X
        if not self.clip:
            raise DataError(
                f"some rows of X exceed the declared x_bound={bound} in the "
                f"{self.x_norm}-norm; pass clip=True to scale them onto the bound "
                "or declare a larger bound"
            )
        X = X.copy()
        X[over] *= (bound / norms[over])[:, None]
        return X

    def _enforce_labels(self, y: np.ndarray, bound: float | None) -> np.ndarray:
        if bound is None or not np.any(np.abs(y) > bound):
            return y
        if not self.clip:
            raise DataError(
                f"some labels exceed the declared y_bound={bound} in absolute value; "
                "pass clip=True to clip them or declare a larger bound"
            )
        return np.clip(y, -bound, bound)

    @property
    def n(self) -> int:
        """Number of rows."""
        return int(self.X.shape[0])

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

        Uses only the declared bound and the dimension (e.g. ``‖x‖₂ ≤ √d ‖x‖∞``).
        """
        target = norm_order(norm)
        d = self.n_features
        src = self._order
        if target >= src:  # ‖x‖_q ≤ ‖x‖_p for q ≥ p
            return self.x_bound
        # ‖x‖_q ≤ d^(1/q − 1/p) ‖x‖_p for q < p
        return self.x_bound * d ** (_inverse(target) - _inverse(src))

    def labels_are_binary(self) -> bool:
        """True when every label is −1 or +1."""
        return bool(np.all(np.abs(self.y) == 1.0))

    def replace_row(self, i: int, x: object, y: float) -> Dataset:
        """The neighbouring dataset with row ``i`` replaced by ``(x, y)``.

        The new row must respect the declared bounds (or is clipped when
        ``clip=True``).
        """
        if not 0 <= i < self.n:
            raise DataError(f"row index out of range for a dataset of {self.n} rows")
        xr = _as_finite_array(x, "x", 1)
        if xr.shape[0] != self.n_features:
            raise DataError(f"x must have {self.n_features} entries, got {xr.shape[0]}")
        X = self.X.copy()
        Y = self.y.copy()
        X[i] = xr
        Y[i] = float(y)
        return self._like(X, Y)

    def subset(self, rows: object) -> Dataset:
        """The dataset restricted to ``rows`` (indices or a boolean mask), same bounds."""
        idx = np.asarray(rows)
        return self._like(self.X[idx], self.y[idx])

    def _like(self, X: np.ndarray, y: np.ndarray) -> Dataset:
        return Dataset(X, y, x_bound=self.x_bound, x_norm=self.x_norm, y_bound=self.y_bound, clip=self.clip,
                       schema=self.schema)

    @classmethod
    def from_frame(cls, frame: Any, label: str, *, schema: Schema, positive: Any = None,
                   **bounds: Any) -> Dataset:
        """A dataset from a table (pandas DataFrame or mapping of column → 1-D array).

        Parameters
        ----------
        frame : DataFrame or mapping
            Holds every column ``schema`` declares (encoded with :meth:`Schema.encode`)
            and the label column.
        label : str
            The label column.
        schema : Schema
            The declaration of the feature columns.
        positive : optional
            If given, labels equal to it become +1 and every other label −1; otherwise the
            label column must be numeric.
        **bounds
            ``x_bound``, ``x_norm``, ``y_bound``, ``clip`` as for :class:`Dataset`.
        """
        if not isinstance(schema, Schema):
            raise ModelError("Dataset.from_frame needs a dpopt Schema (schema=...)")
        try:
            raw = np.asarray(frame[label])
        except (KeyError, IndexError, TypeError):
            raise DataError(f"the table has no label column {label!r}") from None
        if positive is not None:
            y: np.ndarray = np.where(np.array([v == positive for v in raw.tolist()], dtype=bool), 1.0, -1.0)
        else:
            y = np.asarray(raw)
        return cls(schema.encode(frame), y, schema=schema, **bounds)

    def __repr__(self) -> str:
        extra = "" if self.schema is None else f", schema={self.schema!r}"
        return (
            f"Dataset(n={self.n}, d={self.n_features}, x_bound={self.x_bound}, "
            f"x_norm={self.x_norm}, y_bound={self.y_bound}{extra})"
        )
