"""Public declarations of the data: one spec per column, and the integer encoding they imply.

A :class:`Schema` states, for every column of the features, what values it may take:
``Numeric(low, high, grid=...)`` (a bounded column on the grid ``low + k·grid``),
``Binary()`` (0 or 1), ``Categorical(categories)`` (one-hot, one column per declared
category) or ``Intercept()`` (the constant 1, never read from the table; see
:meth:`Schema.with_intercept`).  Everything dpopt decides before or around the data — the integer scaling
of the 0/1-loss MIPs, their coefficient limits, the grouped backend's column split and
size limits, the declared row-norm bound — is computed from these declarations, never
from the values (a decision read off the data would be a bit outside the noise).

Rows are mapped onto the declaration *row by row* (:meth:`Schema.map_rows`): a value off
the grid is rounded to the nearest grid point, a value out of bounds is clipped, a broken
one-hot block becomes a valid one.  Mapping never refuses a row for its values; the only
refusals are a wrong shape, a non-numeric dtype and NaN/inf, and their messages name no
value.  (:meth:`Schema.encode` can also refuse a categorical value outside the
declaration, with ``unseen="error"``: a check of one's own table, not private.)

On the mapped data every entry is an exact rational with the common denominator
:attr:`Schema.scale` ``s``, so ``A = s·X`` is an integer matrix (:meth:`Schema.to_integers`,
computed from grid indices, not by float division) and, for an integer grid point
``w = τk``, ``sign(y⟨x, w⟩) = sign(y⟨A_i, k⟩)`` exactly: the margins of the 0/1 loss of
NRVW19 (Sec. 5, App. D) are evaluated in integers by every discrete backend.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from dpopt.errors import DataError, ModelError

#: largest denominator a declared low / grid may have
MAX_DENOMINATOR = 10**6
#: relative distance between a float declaration and its rational reading
RATIONAL_TOLERANCE = 1e-12
#: largest |s·x| a declaration may imply (integers and their float quotients stay exact)
MAX_INTEGER = 2**53


def _rational(value: object, what: str) -> Fraction:
    """A declared number as a small-denominator rational, or ModelError."""
    if isinstance(value, bool):
        raise ModelError(f"{what} must be a number, not a bool")
    try:
        exact = Fraction(value) if isinstance(value, (str, Fraction, int)) else Fraction(float(value))  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError, ZeroDivisionError):
        raise ModelError(f"{what} must be a finite number (float, int, Fraction or a string like '1/90'), "
                         f"got {value!r}") from None
    near = exact.limit_denominator(MAX_DENOMINATOR)
    if abs(near - exact) > RATIONAL_TOLERANCE * abs(exact):
        raise ModelError(f"{what} = {value!r} is not a rational with denominator ≤ {MAX_DENOMINATOR}; "
                         "declare it exactly, e.g. as a Fraction or a string like '1/90'")
    return near


def _finite(value: object, what: str) -> Fraction:
    """A declared finite bound as an exact rational (no denominator limit)."""
    if isinstance(value, bool):
        raise ModelError(f"{what} must be a number, not a bool")
    try:
        if isinstance(value, (str, Fraction, int)):
            return Fraction(value)
        return Fraction(float(value))  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError, ZeroDivisionError):
        raise ModelError(f"{what} must be a finite number, got {value!r}") from None


def _same(value: object, category: object) -> bool:
    """value == category as a plain bool (False for values that do not compare, e.g. NaN)."""
    try:
        return bool(value == category)
    except (TypeError, ValueError):
        return False


def _infer_spec(name: str, col: Any, steps: int, max_categories: int) -> Spec:
    """The draft spec of one column from its values (Schema.infer_from_frame; not private)."""
    values = np.asarray(col)
    if values.dtype == bool:
        return Binary()
    if np.issubdtype(values.dtype, np.number):
        finite = values[np.isfinite(values.astype(np.float64))].astype(np.float64)
        if finite.size == 0:
            raise ModelError(f"column {name!r} has no finite value to draft a Numeric from")
        distinct = np.unique(finite)
        if set(distinct.tolist()) <= {0.0, 1.0}:
            return Binary()
        low, high = float(distinct[0]), float(distinct[-1])
        if low == high:
            raise ModelError(f"column {name!r} is constant; declare it by hand")
        if np.all(distinct == np.round(distinct)):
            return Numeric(int(low), int(high), grid=1)
        lo = Fraction(low).limit_denominator(MAX_DENOMINATOR)
        lo = lo if lo <= low else lo - Fraction(1, MAX_DENOMINATOR)
        grid = Fraction((high - float(lo)) / steps).limit_denominator(MAX_DENOMINATOR)
        return Numeric(lo, high, grid=max(grid, Fraction(1, MAX_DENOMINATOR)))
    present = sorted({v for v in values.tolist() if v is not None and v == v}, key=str)
    if len(present) > max_categories:
        raise ModelError(f"column {name!r} has more than {max_categories} distinct values; "
                         "declare it by hand (or raise max_categories)")
    return Categorical(present)


def _text(f: Fraction) -> str:
    return str(f.numerator) if f.denominator == 1 else f"{f.numerator}/{f.denominator}"


class _OneColumn:
    """A spec that expands to one column named after it."""

    @property
    def width(self) -> int:
        return 1

    def column_names(self, name: str) -> list[str]:
        return [name]


@dataclass(frozen=True, init=False)
class Numeric(_OneColumn):
    """A bounded numeric column on a declared grid: values ``low + k·grid``, k = 0..K.

    Parameters
    ----------
    low, high : float, int, Fraction or str
        Declared bounds, ``low < high``; ``low`` must be a rational with denominator
        ≤ 10⁶ (read with ``Fraction(low).limit_denominator(10**6)``, which must equal a
        float ``low`` to 1e-12 relative), ``high`` any finite number.
    grid : float, int, Fraction or str
        The declared precision, a positive rational with denominator ≤ 10⁶ (e.g.
        ``"1/90"`` or ``Fraction(1, 90)``; the float ``1/90`` is read as 1/90 too).
    unit : bool, default False
        Scale the column onto [0, 1] by its declared bounds: a table's value x enters X as
        ``(x − low)/(high − low)``, on the grid ``k·grid/(high − low)``
        (:meth:`Schema.unit_scaled` declares every numeric column so;
        :meth:`Dataset.from_frame` does it by default).

    Notes
    -----
    The grid points are ``low + k·grid`` for ``k = 0..K``, ``K = ⌊(high − low)/grid⌋``; when
    ``high`` is not a grid point the largest value is ``low + K·grid < high``.  A value is
    mapped by clipping it to [low, high] and rounding it to the nearest grid point (ties to
    the even index).
    """

    low: Fraction
    high: Fraction
    grid: Fraction
    unit: bool
    kind = "numeric"

    def __init__(self, low: object, high: object, *, grid: object, unit: bool = False) -> None:
        if not isinstance(unit, bool):
            raise ModelError(f"Numeric unit must be True or False, got {unit!r}")
        lo = _rational(low, "Numeric low")
        hi = _finite(high, "Numeric high")
        step = _rational(grid, "Numeric grid")
        if not lo < hi:
            raise ModelError(f"Numeric needs low < high, got low={low!r}, high={high!r}")
        if step <= 0:
            raise ModelError(f"Numeric grid must be positive, got {grid!r}")
        if step > hi - lo:
            raise ModelError(f"Numeric grid {grid!r} is wider than the range [{low!r}, {high!r}]: "
                             "the column would be constant; declare a finer grid")
        object.__setattr__(self, "low", lo)
        object.__setattr__(self, "high", hi)
        object.__setattr__(self, "grid", step)
        object.__setattr__(self, "unit", unit)

    @property
    def value_low(self) -> Fraction:
        """The smallest value of the column in X: ``low``, or 0 for a ``unit`` column."""
        return Fraction(0) if self.unit else self.low

    @property
    def value_grid(self) -> Fraction:
        """The grid of the column in X: ``grid``, or ``grid / (high − low)`` for a ``unit`` column."""
        return self.grid / (self.high - self.low) if self.unit else self.grid

    def to_values(self, raw: np.ndarray) -> np.ndarray:
        """A table's raw values in the units of X: ``(x − low)/(high − low)`` for a ``unit`` column."""
        if not self.unit:
            return raw
        return (raw - float(self.low)) / float(self.high - self.low)

    @property
    def steps(self) -> int:
        """K: the grid indices are 0..K."""
        return int(math.floor((self.high - self.low) / self.grid))

    def __repr__(self) -> str:
        unit = ", unit=True" if self.unit else ""
        return f"Numeric({_text(self.low)}, {_text(self.high)}, grid={_text(self.grid)}{unit})"


@dataclass(frozen=True)
class Binary(_OneColumn):
    """A 0/1 column (values are clipped to [0, 1] and rounded)."""

    kind = "binary"

    def __repr__(self) -> str:
        return "Binary()"


@dataclass(frozen=True, init=False)
class Categorical:
    """A categorical column encoded one-hot: one 0/1 column per declared category.

    Parameters
    ----------
    categories : sequence
        The declared categories (distinct, at least one), in column order.

    Notes
    -----
    :meth:`Schema.encode` maps a category to its one-hot block; a value that is not a
    declared category (including a missing value) maps to the all-zero block, never to an
    error.  :meth:`Schema.map_rows` maps an already expanded block to a valid one: the
    one-hot of its largest entry when that entry is at least 1/2 (the first on ties), the
    zero block otherwise.
    """

    categories: tuple[Any, ...]
    kind = "categorical"

    def __init__(self, categories: Sequence[Any]) -> None:
        if isinstance(categories, (str, bytes)):
            raise ModelError("Categorical needs a sequence of categories, not a single string")
        try:
            cats = tuple(categories)
        except TypeError:
            raise ModelError("Categorical needs a sequence of categories") from None
        if not cats:
            raise ModelError("Categorical needs at least one declared category")
        if len(set(cats)) != len(cats):
            raise ModelError("Categorical categories must be distinct")
        object.__setattr__(self, "categories", cats)

    @property
    def width(self) -> int:
        return len(self.categories)

    def column_names(self, name: str) -> list[str]:
        return [f"{name}={c}" for c in self.categories]

    def __repr__(self) -> str:
        return f"Categorical({list(self.categories)!r})"


@dataclass(frozen=True)
class Intercept(_OneColumn):
    """A constant column equal to 1 (the intercept), never read from the table.

    Declaring it in the schema (usually through :meth:`Schema.with_intercept`) makes every
    public fact account for it: it is one more expanded column, :meth:`Schema.map_rows` sets
    it to 1 in every row whatever the input holds, and :meth:`Schema.row_norm_bound` counts
    its 1 (ℓ2: √(B² + 1) for a bound B of the other columns).  It is declared 0/1 (a constant
    1 is a binary value) with a single possible value.
    """

    kind = "intercept"

    def __repr__(self) -> str:
        return "Intercept()"


Spec = Numeric | Binary | Categorical | Intercept
#: the policies of :meth:`Schema.encode` for a categorical value outside the declared categories
UNSEEN_POLICIES = ("zero", "error")
#: the default name of the intercept column (:meth:`Schema.with_intercept`)
INTERCEPT = "intercept"


@dataclass(frozen=True)
class _Columns:
    """Per expanded column: exact integer grid a = offset + k·step, k = 0..steps (times s)."""

    offset: np.ndarray  # int64: s·low
    step: np.ndarray  # int64: s·grid
    steps: np.ndarray  # int64: K
    low: np.ndarray  # float64
    grid: np.ndarray  # float64
    blocks: tuple[np.ndarray, ...]  # index arrays of the one-hot blocks
    free: np.ndarray  # indices of the columns outside one-hot blocks


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
        self._items: tuple[tuple[str, Spec], ...] = tuple(items)
        self._scale, self._cols = self._build()

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
        items = [(name, Numeric(spec.low, spec.high, grid=spec.grid, unit=True) if isinstance(spec, Numeric)
                  else spec) for name, spec in self._items]
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
        columns = [(str(name), _infer_spec(str(name), frame[name], steps, max_categories))
                   for name in frame.columns if name not in set(exclude)]
        return cls(columns)

    # ---- declarations -------------------------------------------------------------------
    def _build(self) -> tuple[int, _Columns]:
        lows: list[Fraction] = []
        grids: list[Fraction] = []
        steps: list[int] = []
        blocks: list[np.ndarray] = []
        for _, spec in self._items:
            if isinstance(spec, Numeric):
                lows.append(spec.value_low)
                grids.append(spec.value_grid)
                steps.append(spec.steps)
                continue
            if isinstance(spec, Intercept):  # the single grid point 1: mapping sets it to 1
                lows.append(Fraction(1))
                grids.append(Fraction(1))
                steps.append(0)
                continue
            if isinstance(spec, Categorical):
                blocks.append(np.arange(len(lows), len(lows) + spec.width))
            lows += [Fraction(0)] * spec.width
            grids += [Fraction(1)] * spec.width
            steps += [1] * spec.width
        s = math.lcm(*(f.denominator for f in lows + grids))
        offset = [int(lo * s) for lo in lows]
        step = [int(g * s) for g in grids]
        top = max(max(abs(o), abs(o + k * st)) for o, k, st in zip(offset, steps, step, strict=True))
        if top > MAX_INTEGER:
            raise ModelError("the declared grids need a common denominator s with s·|x| above 2^53; "
                             "declare coarser grids or grids with a common denominator")
        in_block = np.zeros(len(lows), dtype=bool)
        for b in blocks:
            in_block[b] = True
        cols = _Columns(
            offset=np.array(offset, dtype=np.int64), step=np.array(step, dtype=np.int64),
            steps=np.array(steps, dtype=np.int64),
            low=np.array([float(v) for v in lows]), grid=np.array([float(v) for v in grids]),
            blocks=tuple(blocks), free=np.flatnonzero(~in_block),
        )
        return s, cols

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
        mask: list[bool] = []
        for _, spec in self._items:
            mask += [not isinstance(spec, Numeric)] * spec.width
        return np.array(mask, dtype=bool)

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

        A numeric column gives K + 1 values, a Binary column 2, a one-hot block whose
        columns meet ``columns`` in m places gives m + 1 (one of them, or none).
        """
        wanted = {self._index(j) for j in columns}
        count, start = 1, 0
        for _, spec in self._items:
            hit = len(wanted & set(range(start, start + spec.width)))
            if hit:
                count *= (hit + 1) if isinstance(spec, Categorical) else int(self._cols.steps[start]) + 1
            start += spec.width
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
        arr = np.asarray(X)
        if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
            raise DataError("X must be a numeric array (encode tables with Schema.encode first)")
        arr = arr.astype(np.float64)
        if arr.ndim != 2 or arr.shape[1] != self.n_features:
            raise DataError(f"X must have shape (n, {self.n_features}) for this schema, got shape {arr.shape}")
        if not np.all(np.isfinite(arr)):
            raise DataError("X contains NaN or inf entries; remove or impute them first")
        return arr

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
        """X mapped onto the declaration row by row (float64; never refuses a value).

        Each entry becomes the double nearest to its grid value A_ij / s, so mapping is the
        identity on data already on the grid and ``to_integers(map_rows(X)) = to_integers(X)``.

        Raises
        ------
        DataError
            For a wrong shape, a non-numeric dtype or NaN/inf (messages name no value).
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
            What a categorical value that is not declared (or missing) becomes.
            ``"zero"`` (default): the all-zero block — no row is ever refused for its
            values, so this is the policy of a private pipeline.  ``"error"``: a
            :class:`~dpopt.errors.DataError` naming the column but not the value; whether it
            is raised depends on the data, so it is for checking one's own table, **not
            private**.
        mapped : bool
            False: the expanded columns as read, not yet mapped onto the declaration
            (:meth:`map_rows`), for a caller that maps them itself (Dask partitions).

        Raises
        ------
        DataError
            A declared column is missing, columns differ in length, a numeric column is not
            numeric or holds NaN/inf, an array has the wrong shape, or (``unseen="error"``
            only) a categorical value is not declared.
        """
        if unseen not in UNSEEN_POLICIES:
            raise ModelError(f"unseen must be one of {UNSEEN_POLICIES}, got {unseen!r}")
        if isinstance(table, np.ndarray) or (not isinstance(table, Mapping) and not hasattr(table, "columns")):
            return self.map_rows(table)
        parts: list[np.ndarray | None] = []
        n: int | None = None
        for name, spec in self._items:
            if isinstance(spec, Intercept):
                parts.append(None)
                continue
            try:
                col = np.asarray(table[name])  # type: ignore[index]
            except (KeyError, IndexError):
                raise DataError(f"the table has no column {name!r} declared by the schema") from None
            if col.ndim != 1 or (n is not None and col.shape[0] != n):
                raise DataError(f"column {name!r} must be 1-D with as many entries as the other columns")
            n = col.shape[0]
            parts.append(self._encode_column(name, spec, col, unseen))
        if n is None:
            raise DataError("the schema declares no column read from the table (only intercepts)")
        ones = np.ones((n, 1))
        expanded = np.hstack([ones if p is None else p for p in parts])
        return self.map_rows(expanded) if mapped else expanded

    @staticmethod
    def _encode_column(name: str, spec: Spec, col: np.ndarray, unseen: str = "zero") -> np.ndarray:
        if isinstance(spec, Categorical):
            values = col.tolist()
            hits = [np.array([_same(v, cat) for v in values], dtype=bool) for cat in spec.categories]
            block = np.column_stack(hits)
            if unseen == "error" and not block.any(axis=1).all():
                raise DataError(f"column {name!r} holds a value that is not one of its declared categories "
                                "(unseen='error' is a check of your own table, not private; a private run "
                                "uses unseen='zero', which maps it to the all-zero block)")
            return block.astype(np.float64)
        try:
            values = col.astype(np.float64)[:, None]
        except (TypeError, ValueError):
            raise DataError(f"column {name!r} is declared {spec.kind} but is not numeric") from None
        return spec.to_values(values) if isinstance(spec, Numeric) else values

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Schema) and self._items == other._items

    def __hash__(self) -> int:
        return hash(self._items)

    def __repr__(self) -> str:
        cols = ", ".join(f"{name!r}: {spec!r}" for name, spec in self._items)
        return f"Schema({{{cols}}})"


__all__ = ["INTERCEPT", "Binary", "Categorical", "Intercept", "Numeric", "Schema", "Spec"]
