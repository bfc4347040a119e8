"""The declared columns of a feature matrix (:class:`Schema`): their expanded names, the public
facts computed from them (scale, integer bounds, row-norm bound, value counts) and the row-by-row
mapping of data onto them."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from dpopt.errors import DataError, ModelError
from dpopt.modeling.schema.check import ColumnCheck, SchemaCheck, check_column
from dpopt.modeling.schema.encoding import UNSEEN_POLICIES, build_columns, encode_column
from dpopt.modeling.schema.inference import infer_spec
from dpopt.modeling.schema.specs import (
    INTERCEPT,
    Binary,
    Categorical,
    Intercept,
    Numeric,
    Spec,
    fraction_text,
    missing_message,
)
from dpopt.modeling.schema.suggest import did_you_mean


class Schema:
    """The declared columns of a feature matrix.

    Parameters
    ----------
    columns : mapping or sequence of (name, spec)
        Column name → :class:`Numeric`, :class:`Binary`, :class:`Categorical` or
        :class:`Intercept`, in column order (a dict keeps insertion order).  Names are
        strings (pandas column names).

    Raises
    ------
    ModelError
        If a name is not a non-empty string, names repeat, a spec is of another type, or
        the declarations need a common denominator so large that ``s·x`` exceeds 2⁵³.

    Examples
    --------
    >>> s = Schema({"age": Numeric(0, 1, grid="1/90"), "sex": Categorical(["F", "M"])})
    >>> s.feature_names, s.scale
    (['age', 'sex=F', 'sex=M'], 90)
    """

    def __init__(self, columns: Mapping[str, Spec] | Sequence[tuple[str, Spec]]) -> None:
        items = list(columns.items()) if isinstance(columns, Mapping) else list(columns)
        if not items:
            raise ModelError("a Schema needs at least one column")
        names: list[str] = []
        for item in items:
            if not (isinstance(item, tuple) and len(item) == 2):
                raise ModelError("Schema columns must be a mapping name → spec or a sequence of (name, spec)")
            name, spec = item
            if not isinstance(name, str) or not name:
                raise ModelError(f"column names must be non-empty strings, got {name!r}")
            if not isinstance(spec, (Numeric, Binary, Categorical, Intercept)):
                raise ModelError(f"column {name!r}: the spec must be Numeric, Binary, Categorical or Intercept, "
                                 f"got {type(spec).__name__}")
            names.append(name)
        if len(set(names)) != len(names):
            raise ModelError("Schema column names must be distinct")
        expanded = [n for name, spec in items for n in spec.column_names(name)]
        if len(set(expanded)) != len(expanded):
            twice = sorted({n for n in expanded if expanded.count(n) > 1})
            raise ModelError(f"the expanded column names {twice} repeat (a missing indicator '<name>_missing' or a "
                             "category 'name=value' equal to another column's name); rename a column")
        self._items: tuple[tuple[str, Spec], ...] = tuple(items)
        self._specs: dict[str, Spec] = dict(self._items)
        self._scale, self._cols = build_columns(self._items)

    def __getitem__(self, name: str) -> Spec:
        """The declaration of column ``name`` (KeyError with a did-you-mean for an unknown name)."""
        if name not in self._specs:
            raise KeyError(f"no declared column {name!r}{did_you_mean(name, self._specs)}")
        return self._specs[name]

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    @classmethod
    def uniform(cls, d: int, spec: Spec, *, prefix: str = "x") -> Schema:
        """d columns ``prefix0 .. prefix{d-1}`` with the same spec."""
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1:
            raise ModelError(f"Schema.uniform needs a positive integer d, got {d!r}")
        return cls([(f"{prefix}{j}", spec) for j in range(int(d))])

    def unit_scaled(self) -> Schema:
        """This schema with every :class:`Numeric` column declared ``unit=True``.

        A table's value x of a column declared on [low, high] then enters X as
        ``(x − low)/(high − low)`` ∈ [0, 1] — scaled by the *declared* bounds, never by the
        data's range — so no column dominates the row-norm bound because of its units.
        """
        items = [(name, spec.with_unit() if isinstance(spec, Numeric) else spec) for name, spec in self._items]
        return Schema(items)

    def with_intercept(self, name: str = INTERCEPT) -> Schema:
        """This schema with a constant-1 :class:`Intercept` column ``name`` appended.

        Returns the schema itself when it already declares an intercept.  The new schema's
        :meth:`row_norm_bound` accounts for the constant (a declared fact, not read from data).
        """
        if self.has_intercept:
            return self
        return Schema([*self._items, (name, Intercept())])

    @property
    def has_intercept(self) -> bool:
        """True when a column is declared :class:`Intercept`."""
        return any(isinstance(spec, Intercept) for _, spec in self._items)

    @classmethod
    def infer_from_frame(cls, frame: Any, *, exclude: Sequence[str] = (), steps: int = 1000,
                         max_categories: int = 50) -> Schema:
        """A *draft* schema read off a table's values — **not private**; review and replace it.

        Everything in the draft comes from the data: the categories are the values present,
        the numeric bounds the observed min and max.  A schema built this way leaks those
        values into every bound and sensitivity computed from it, so a private run must use a
        schema of public facts (documented ranges, code lists) instead.  Use the draft only
        to see the shape of a declaration, then write the public one by hand.  A
        :class:`UserWarning` says so on every call.

        Parameters
        ----------
        frame : pandas.DataFrame
            The table.
        exclude : sequence of str
            Columns to leave out (e.g. the label).
        steps : int
            Numeric columns get the grid ``(max − min)/steps`` (integer columns grid 1).
        max_categories : int
            A non-numeric column with more distinct values is refused (ModelError).

        Returns
        -------
        Schema
            Bool or two-valued 0/1 columns → :class:`Binary`; other numeric columns →
            :class:`Numeric` over the observed range; others → :class:`Categorical` of the
            observed values (sorted by their text; missing values left out).
        """
        import warnings

        warnings.warn("Schema.infer_from_frame reads the data: the draft's categories and bounds are "
                      "NOT private; review it and declare public values before a private run",
                      UserWarning, stacklevel=2)
        if not hasattr(frame, "columns"):
            raise ModelError("Schema.infer_from_frame needs a pandas DataFrame")
        if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
            raise ModelError(f"steps must be a positive integer, got {steps!r}")
        columns = [(str(name), infer_spec(str(name), frame[name], steps, max_categories))
                   for name in frame.columns if name not in set(exclude)]
        return cls(columns)

    # ---- declarations -------------------------------------------------------------------
    @property
    def columns(self) -> tuple[tuple[str, Spec], ...]:
        """The declared (name, spec) pairs, in order."""
        return self._items

    @property
    def feature_names(self) -> list[str]:
        """Names of the expanded columns (a categorical ``c`` gives ``"c=<category>"``)."""
        return [n for name, spec in self._items for n in spec.column_names(name)]

    @property
    def n_features(self) -> int:
        """Number of expanded columns."""
        return int(self._cols.offset.size)

    @property
    def scale(self) -> int:
        """s: the least common denominator of every declared low and grid (so s·X is integral)."""
        return self._scale

    @property
    def blocks(self) -> tuple[np.ndarray, ...]:
        """Column indices of each one-hot block (at most one 1 per block)."""
        return self._cols.blocks

    def _index(self, j: int) -> int:
        if isinstance(j, bool) or not isinstance(j, (int, np.integer)) or not 0 <= j < self.n_features:
            raise ModelError(f"column index must be an integer in 0..{self.n_features - 1}, got {j!r}")
        return int(j)

    def is_binary(self, j: int) -> bool:
        """True when expanded column j is declared 0/1 (Binary or one-hot)."""
        return bool(self._binary_mask()[self._index(j)])

    def _binary_mask(self) -> np.ndarray:
        return self._cols.binary

    @property
    def binary_columns(self) -> np.ndarray:
        """Indices of the columns declared 0/1 (Binary and one-hot columns)."""
        return np.flatnonzero(self._binary_mask())

    def integer_bound(self, j: int) -> int:
        """max |A_ij| = max |s·x_j| over the declared values of column j."""
        j = self._index(j)
        c = self._cols
        o, st, k = int(c.offset[j]), int(c.step[j]), int(c.steps[j])
        return max(abs(o), abs(o + k * st))

    def integer_bounds(self) -> np.ndarray:
        """:meth:`integer_bound` of every column (int64)."""
        c = self._cols
        return np.maximum(np.abs(c.offset), np.abs(c.offset + c.steps * c.step))

    def integer_unit(self, j: int) -> int:
        """The gcd of every declared value of s·x_j: each A_ij is a multiple of it."""
        j = self._index(j)
        return math.gcd(int(self._cols.offset[j]), int(self._cols.step[j]))

    def value_count(self, columns: Sequence[int]) -> int:
        """How many distinct sub-rows x[columns] the declarations allow (a Python int).

        A numeric column gives K + 1 values, a Binary column (or a missing indicator) 2, a
        one-hot block whose columns meet ``columns`` in m places gives m + 1 (one of them, or
        none).  With missing indicators it is an upper bound (a missing entry also fixes its value).
        """
        wanted = {self._index(j) for j in columns}
        count = 1
        for block in self._cols.blocks:
            hit = len(wanted & set(block.tolist()))
            count *= hit + 1 if hit else 1
        for j in self._cols.free.tolist():
            if j in wanted:
                count *= int(self._cols.steps[j]) + 1
        return count

    def row_norm_bound(self, order: object = 2) -> float:
        """A public bound on ‖x‖ (ℓ1, ℓ2 or ℓ∞) of every mapped row, from the declarations.

        Each column contributes its largest |value| (``integer_bound / s``); a one-hot block
        contributes one 1.
        """
        from dpopt.modeling.norms import norm_order

        p = norm_order(order)
        c = self._cols
        mags = [Fraction(int(v), self._scale) for v in self.integer_bounds()[c.free]] + [Fraction(1)] * len(c.blocks)
        if p == 1.0:
            return float(sum(mags, Fraction(0)))
        if p == np.inf:
            return float(max(mags))
        return math.sqrt(float(sum((m * m for m in mags), Fraction(0))))

    # ---- data ----------------------------------------------------------------------------
    def _matrix(self, X: object) -> np.ndarray:
        arr = self._expanded(X)
        arr = self.fill_missing(arr)
        finite = np.isfinite(arr)
        if not np.all(finite):
            name = self._cols.owner[int(np.flatnonzero(~finite.all(axis=0))[0])]
            raise DataError(f"column {name!r} holds an infinite entry (±inf), which no declaration maps; replace "
                            "it before building the dataset (a missing entry is NaN)")
        return arr

    def _expanded(self, X: object) -> np.ndarray:
        """X as a float64 array of the expanded shape (entries unchecked), or DataError."""
        arr = np.asarray(X)
        if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
            raise DataError("X must be a numeric array (encode tables with Schema.encode first)")
        arr = arr.astype(np.float64)
        if arr.ndim != 2 or arr.shape[1] != self.n_features:
            raise DataError(f"X must have shape (n, {self.n_features}) for this schema, got shape {arr.shape}")
        return arr

    def fill_missing(self, X: np.ndarray, *, refuse: bool = True) -> np.ndarray:
        """Expanded rows with each missing entry (NaN) replaced as its column declares.

        A row whose expanded columns of one declared column hold a NaN reads, in all of them, the
        entries the declared policy gives (:class:`Fill` value, indicator 1, ...); an
        :class:`Intercept` column reads 1.  Nothing else changes (the input is not modified).

        Parameters
        ----------
        X : ndarray, shape (n, n_features)
            Expanded rows (float64).
        refuse : bool, default True
            A NaN in a column that declares no policy raises :class:`~dpopt.errors.DataError`
            naming the column (when a dataset is built, before any budget is spent); False
            leaves it NaN (a partition read inside a run reads it as 0 instead).
        """
        gaps = np.isnan(X)
        if not gaps.any():
            return X
        out = np.array(X, dtype=np.float64)
        for name, start, stop, row in self._cols.fills:
            rows = gaps[:, start:stop].any(axis=1)
            if not rows.any():
                continue
            if row is None:
                if refuse:
                    raise DataError(missing_message(name, self._specs[name]))
                continue
            out[rows, start:stop] = row
        return out

    def columns_out_of_range(self, X: object) -> list[str]:
        """The declared columns of which an entry of the expanded rows ``X`` lies outside the declared range.

        Reads the values (a check of one's own table, **not private**): the policy
        ``clip=False`` of :class:`~dpopt.modeling.dataset.Dataset` refuses on it.  Ranges are in
        X's units ([0, 1] for a ``unit`` column and every 0/1 column); a missing entry (NaN) and
        an :class:`Intercept` column are not read; an off-grid entry inside the range is not
        out of range (it is rounded: the grid is the declared precision).
        """
        arr = self._expanded(X)
        c = self._cols
        low = c.low - 1e-12 * np.maximum(1.0, np.abs(c.low))
        high = c.high + 1e-12 * np.maximum(1.0, np.abs(c.high))
        out = (arr < low[None, :]) | (arr > high[None, :])  # NaN is neither
        read = np.array([not isinstance(self._specs[o], Intercept) for o in c.owner], dtype=bool)
        hit = (out.any(axis=0) & read).tolist()
        return list(dict.fromkeys(o for o, h in zip(c.owner, hit, strict=True) if h))

    def declared_range(self, name: str) -> str:
        """The declared range of column ``name`` in the table's units, as text (``"[17, 90]"``)."""
        spec = self._specs[name]
        if isinstance(spec, Numeric):
            return f"[{fraction_text(spec.low)}, {fraction_text(spec.high)}]"
        return "{0, 1}" if not isinstance(spec, Categorical) else "one declared category"

    def grid_indices(self, X: object) -> np.ndarray:
        """k (int64, n × d): the grid index of every entry after the row-by-row mapping.

        Numeric and Binary: clip to [low, high], round to the nearest grid point.  One-hot
        blocks: the one-hot of the largest entry when it is at least 1/2 (first on ties),
        else zeros.
        """
        arr = self._matrix(X)
        c = self._cols
        k = np.rint((arr - c.low[None, :]) / c.grid[None, :])
        k = np.clip(k, 0, c.steps[None, :]).astype(np.int64)
        for b in c.blocks:
            block = arr[:, b]
            top = np.argmax(block, axis=1)
            on = block[np.arange(arr.shape[0]), top] >= 0.5
            k[:, b] = 0
            k[np.flatnonzero(on), b[top[on]]] = 1
        return k

    def to_integers(self, X: object) -> np.ndarray:
        """A = s·X exactly (int64), from the grid indices of the mapped rows."""
        k = self.grid_indices(X)
        c = self._cols
        return c.offset[None, :] + k * c.step[None, :]

    def map_rows(self, X: object) -> np.ndarray:
        """X mapped onto the declaration row by row (float64; never refuses a value it can map).

        A missing entry (NaN) reads as its column's declared policy (:meth:`fill_missing`);
        then each entry becomes the double nearest to its grid value A_ij / s, so mapping is
        the identity on data already on the grid and ``to_integers(map_rows(X)) = to_integers(X)``.

        Raises
        ------
        DataError
            For a wrong shape, a non-numeric dtype, an infinite entry or a NaN in a column
            that declares no missing-value policy (messages name the column, never a value).
        """
        return self.to_integers(X).astype(np.float64) / float(self._scale)

    def encode(self, table: object, *, unseen: str = "zero", mapped: bool = True) -> np.ndarray:
        """The expanded, mapped feature matrix of a table.

        Parameters
        ----------
        table : pandas.DataFrame, mapping of name → 1-D array, or array (n, n_features)
            A table needs every declared column (extra columns are ignored; an
            :class:`Intercept` column is never read, it is 1).  An array is taken as
            already expanded.
        unseen : {"zero", "error"}
            What a categorical value that is not declared becomes (a missing one follows the
            column's ``missing`` policy).  ``"zero"`` (default): the all-zero block — no row
            is ever refused for its values, so this is the policy of a private pipeline.
            ``"error"``: a :class:`~dpopt.errors.DataError` naming the column but not the value;
            whether it is raised depends on the data, so it is for checking one's own table,
            **not private**.
        mapped : bool
            False: the expanded columns as read, not yet mapped onto the declaration
            (:meth:`map_rows`), for a caller that maps them itself (:class:`Dataset`, Dask
            partitions); a missing entry is then NaN in every expanded column of its column.

        Raises
        ------
        DataError
            A declared column is missing (with the close names of the table's columns),
            columns differ in length, a numeric column holds an entry that is not a number, an
            array has the wrong shape, (``mapped=True``) a missing entry in a column without a
            missing-value policy or an infinite one, or (``unseen="error"`` only) a categorical
            value is not declared.  Messages name the column, never a value.
        """
        if unseen not in UNSEEN_POLICIES:
            raise ModelError(f"unseen must be one of {UNSEEN_POLICIES}, got {unseen!r}")
        if isinstance(table, np.ndarray) or (not isinstance(table, Mapping) and not hasattr(table, "columns")):
            return self.map_rows(table) if mapped else self._expanded(table)
        parts: list[np.ndarray | None] = []
        n: int | None = None
        for name, spec in self._items:
            if isinstance(spec, Intercept):
                parts.append(None)
                continue
            col = np.asarray(self._column(table, name))
            if col.ndim != 1 or (n is not None and col.shape[0] != n):
                raise DataError(f"column {name!r} must be 1-D with as many entries as the other columns")
            n = col.shape[0]
            parts.append(encode_column(name, spec, col, unseen))
        if n is None:
            raise DataError("the schema declares no column read from the table (only intercepts)")
        ones = np.ones((n, 1))
        expanded = np.hstack([ones if p is None else p for p in parts])
        return self.map_rows(expanded) if mapped else expanded

    @staticmethod
    def _column(table: Any, name: str) -> Any:
        """The column ``name`` of a table, or DataError naming it and the closest column names."""
        try:
            return table[name]
        except (KeyError, IndexError):
            known = table.columns if hasattr(table, "columns") else table.keys() if isinstance(table, Mapping) else ()
            raise DataError(f"the table has no column {name!r} declared by the schema"
                            f"{did_you_mean(name, known)}") from None

    def check(self, table: object) -> SchemaCheck:
        """A report of how a table fits this declaration — **reads the data: NOT private**.

        For the data's curator, while writing or reviewing a schema: per declared column, the
        exact number of entries that are missing, outside the declared range (which the mapping
        clips), off the declared grid (rounded), undeclared categories (the all-zero block) and
        not numbers; and what :meth:`Dataset.from_frame` would refuse (an absent column, with
        the closest names, a missing entry without a policy, an entry that is not a number).
        The counts are exact statistics of the private table: keep them with the curator, never
        publish them.  It charges no ledger and changes nothing; a private run never calls it.

        Parameters
        ----------
        table : pandas.DataFrame or mapping of name → 1-D array
            The table in its own units (before any scaling).

        Returns
        -------
        SchemaCheck
            One :class:`ColumnCheck` per declared column (an :class:`Intercept` is not read).
        """
        if not (isinstance(table, Mapping) or hasattr(table, "columns")):
            raise DataError("Schema.check needs a table (a pandas DataFrame or a mapping of column name → 1-D array)")
        known = list(table.columns) if hasattr(table, "columns") else list(table.keys())  # type: ignore[attr-defined]
        rows: list[ColumnCheck] = []
        n = 0
        for name, spec in self._items:
            if isinstance(spec, Intercept):
                continue
            if name not in known:
                rows.append(ColumnCheck(name, repr(spec), present=False, suggestion=did_you_mean(name, known)))
                continue
            col = np.asarray(table[name]).reshape(-1)  # type: ignore[index]
            n = max(n, col.shape[0])
            rows.append(check_column(name, spec, col))
        return SchemaCheck(n=n, columns=tuple(rows))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Schema) and self._items == other._items

    def __hash__(self) -> int:
        return hash(self._items)

    def __repr__(self) -> str:
        cols = ", ".join(f"{name!r}: {spec!r}" for name, spec in self._items)
        return f"Schema({{{cols}}})"
