"""A scikit-learn transformer that encodes a table by its declared :class:`~dpopt.modeling.schema.Schema`.

scikit-learn's own encoders and scalers *fit* on the data: ``OneHotEncoder`` reads the
categories present, ``MinMaxScaler`` the observed minimum and maximum, ``SimpleImputer`` the
mean.  In front of a private estimator each of those is a statistic of the private table that
no noise covers (the categories seen, the range, the mean leak through every prediction).
:class:`SchemaEncoder` learns nothing: its ``fit`` checks the table's column *names* against
the declaration and reads no value, and ``transform`` applies the mapping of
:meth:`Dataset.from_frame <dpopt.modeling.dataset.Dataset.from_frame>` row by row — declared
missing-value policies, numeric columns scaled onto [0, 1] by their declared bounds, clipped
and rounded to the declared grid, one-hot over the declared categories, the optional intercept.
A ``Pipeline([("encode", SchemaEncoder(schema)), ("model", DPLogisticRegression(...))])`` is
therefore as private as its estimator.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from dpopt.errors import DataError, ModelError
from dpopt.modeling.norms import norm_order
from dpopt.modeling.schema import UNSEEN_POLICIES, Intercept, Schema
from dpopt.modeling.schema.suggest import did_you_mean

try:
    from sklearn.utils.validation import validate_data as _validate
except ImportError:  # scikit-learn < 1.6

    def _validate(estimator: Any, X: Any = "no_validation", y: Any = "no_validation", **kwargs: Any) -> Any:
        return estimator._validate_data(X, y, **kwargs)


__all__ = ["SchemaEncoder"]


class SchemaEncoder(TransformerMixin, BaseEstimator):
    """Encode a table through its declared schema, without fitting on the data.

    Parameters
    ----------
    schema : Schema
        The public declaration of the feature columns (bounds, grids, categories,
        missing-value policies).
    scale : bool, default True
        Scale every numeric column onto [0, 1] by its *declared* bounds, as
        :meth:`Dataset.from_frame <dpopt.modeling.dataset.Dataset.from_frame>` does by default.
    intercept : bool, default False
        Append the constant-1 column ``"intercept"`` (leave it False when the downstream
        estimator fits its own intercept).
    unseen : {"zero", "error"}, default "zero"
        An undeclared category: the all-zero block (private) or a DataError (a check of one's
        own table, not private).

    Attributes
    ----------
    schema_ : Schema
        The declaration ``transform`` encodes with (scaled, with its intercept), fixed by the
        parameters alone.
    n_features_in_ : int
        Number of columns of the table seen in ``fit``.
    feature_names_in_ : ndarray of str
        Its column names (a DataFrame only).

    Notes
    -----
    ``fit`` reads column names, never values; ``transform`` maps each row on its own, so
    neither depends on any other row.  A missing entry in a column without a declared
    missing-value policy, an entry that is not a number in a numeric column or an absent
    column raises :class:`~dpopt.errors.DataError` naming the column (never a value).  The
    encoded rows are bounded by :meth:`row_norm_bound` (a public fact of the declaration), the
    ``x_bound`` to give a downstream estimator without a schema.

    Examples
    --------
    >>> import dpopt as dp
    >>> from sklearn.pipeline import make_pipeline
    >>> from dpopt.sklearn import DPLogisticRegression, SchemaEncoder
    >>> schema = dp.Schema({"age": dp.Numeric(17, 90, grid=1), "sex": dp.Categorical(["F", "M"])})
    >>> encoder = SchemaEncoder(schema)
    >>> model = make_pipeline(encoder, DPLogisticRegression(epsilon=1.0, x_bound=encoder.row_norm_bound(),
    ...                                                     classes=["<=50K", ">50K"]))
    >>> model.fit(table[["age", "sex"]], table["income"])  # doctest: +SKIP
    """

    def __init__(self, schema: Schema | None = None, *, scale: bool = True, intercept: bool = False,
                 unseen: str = "zero") -> None:
        self.schema = schema
        self.scale = scale
        self.intercept = intercept
        self.unseen = unseen

    # ---- public facts --------------------------------------------------------------------------
    def _declared(self) -> Schema:
        """The schema ``transform`` encodes with, from the parameters alone (or ModelError)."""
        if not isinstance(self.schema, Schema):
            raise ModelError(f"SchemaEncoder needs schema=dp.Schema(...), got {type(self.schema).__name__}")
        for name in ("scale", "intercept"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise ModelError(f"{name} must be True or False, got {getattr(self, name)!r}")
        if self.unseen not in UNSEEN_POLICIES:
            raise ModelError(f"unseen must be one of {UNSEEN_POLICIES}, got {self.unseen!r}")
        schema = self.schema.unit_scaled() if self.scale else self.schema
        return schema.with_intercept() if self.intercept else schema

    def row_norm_bound(self, norm: Any = 2) -> float:
        """The declared bound on the ``norm``-norm of every encoded row (public; no data read)."""
        norm_order(norm)
        return self._declared().row_norm_bound(norm)

    def _read(self) -> list[str]:
        return [name for name, spec in self._declared().columns if not isinstance(spec, Intercept)]

    # ---- scikit-learn API ----------------------------------------------------------------------
    def fit(self, X: Any, y: Any = None) -> SchemaEncoder:
        """Check the table's columns against the declaration; reads no value.

        Parameters
        ----------
        X : DataFrame, mapping of column → 1-D array, or array (n, k)
            A table holding every declared column (extra columns are ignored), or an array
            holding the declared columns in the schema's order.
        y : ignored

        Returns
        -------
        self
        """
        schema = self._declared()
        X = self._frame(X)
        _validate(self, X, reset=True, skip_check_array=True)
        self._table(X)
        self.schema_ = schema
        return self

    def transform(self, X: Any) -> np.ndarray:
        """The encoded, mapped feature matrix (float64), row by row as ``Dataset.from_frame`` maps it.

        Raises
        ------
        DataError
            An absent column (with the closest names), a missing entry in a column without a
            declared missing-value policy, an entry that is not a number, or an undeclared
            category under ``unseen="error"``; messages name the column, never a value.
        """
        check_is_fitted(self, "schema_")
        X = self._frame(X)
        _validate(self, X, reset=False, skip_check_array=True)
        return self.schema_.encode(self._table(X), unseen=self.unseen)

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """Names of the encoded columns: ``"age"``, ``"sex=F"``, ``"age_missing"``, ``"intercept"``..."""
        check_is_fitted(self, "schema_")
        if input_features is not None:
            given = [str(v) for v in input_features]
            seen = getattr(self, "feature_names_in_", None)
            if seen is not None and given != [str(v) for v in seen]:
                raise ValueError("input_features is not equal to feature_names_in_")
        return np.asarray(self.schema_.feature_names, dtype=object)

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.string = True
        tags.input_tags.allow_nan = True  # a declared missing-value policy reads NaN
        tags.input_tags.categorical = True
        return tags

    # ---- the table -----------------------------------------------------------------------------
    @staticmethod
    def _frame(X: Any) -> Any:
        """A mapping of columns as a DataFrame (scikit-learn's validation reads its names); else X."""
        if isinstance(X, Mapping) and not hasattr(X, "columns"):
            import pandas as pd

            return pd.DataFrame(dict(X))
        return X

    def _table(self, X: Any) -> Any:
        """X as a table with the declared columns (a DataFrame, a mapping or an array in order)."""
        read = self._read()
        if hasattr(X, "columns") or isinstance(X, Mapping):
            known = list(X.columns) if hasattr(X, "columns") else list(X.keys())
            for name in read:
                if name not in known:
                    raise DataError(f"the table has no column {name!r} declared by the schema"
                                    f"{did_you_mean(name, known)}")
            return X
        arr = np.asarray(X, dtype=object)
        if arr.ndim != 2 or arr.shape[1] != len(read):
            raise DataError(f"X must be a table with the schema's columns or an array of shape (n, {len(read)}) "
                            f"holding them in order, got shape {arr.shape}")
        return {name: arr[:, j] for j, name in enumerate(read)}
