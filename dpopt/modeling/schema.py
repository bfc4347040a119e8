"""Public declarations of the data: one spec per column, and the integer encoding they imply.

A :class:`Schema` states, for every column of the features, what values it may take:
``Numeric(low, high, grid=...)`` (a bounded column on the grid ``low + k·grid``),
``Binary()`` (0 or 1), ``Categorical(categories)`` (one-hot, one column per declared
category) or ``Intercept()`` (the constant 1, never read from the table; see
:meth:`Schema.with_intercept`).  Everything dpopt decides before or around the data — the integer scaling
of the 0/1-loss MIPs, their coefficient limits, the grouped backend's column split and
size limits, the declared row-norm bound — is computed from these declarations, never
from the values (a decision read off the data would be a bit outside the noise).

Rows are mapped onto the declaration *row by row* (:meth:`Schema.map_rows`): a missing
entry reads as its column's declared missing-value policy (``missing=Fill(value)``, a public
constant; ``missing="indicator"``, a public 0/1 column ``<name>_missing``; ``missing="zero"``
for a categorical's all-zero block), a value off the grid is rounded to the nearest grid
point, a value out of bounds is clipped, a broken one-hot block becomes a valid one.
Mapping never refuses a row for a value it can map; the only refusals are a wrong shape,
a non-numeric dtype, an infinite entry and a missing entry in a column that declares no
policy (so no default is ever computed from the data), all when a dataset is built, before
any budget is spent; their messages name the column and never a value.
(:meth:`Schema.encode` can also refuse a categorical value outside the declaration, with
``unseen="error"``: a check of one's own table, not private; :meth:`Schema.check` counts
what would be clipped, rounded or refused — it reads the data and is not private either.)
A numeric label is declared the same way and mapped onto [−1, 1] by a public
:class:`LabelMap`.

On the mapped data every entry is an exact rational with the common denominator
:attr:`Schema.scale` ``s``, so ``A = s·X`` is an integer matrix (:meth:`Schema.to_integers`,
computed from grid indices, not by float division) and, for an integer grid point
``w = τk``, ``sign(y⟨x, w⟩) = sign(y⟨A_i, k⟩)`` exactly: the margins of the 0/1 loss of
NRVW19 (Sec. 5, App. D) are evaluated in integers by every discrete backend.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
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


def _is_missing(value: object) -> bool:
    """Whether a table entry is missing: None, a float NaN, pandas' ``NA`` or ``NaT``."""
    if value is None:
        return True
    if isinstance(value, (float, np.floating)):
        return bool(np.isnan(value))
    return type(value).__name__ in ("NAType", "NaTType")


def did_you_mean(name: object, known: Iterable[object]) -> str:
    """``"; did you mean 'a' or 'b'?"`` for the names in ``known`` close to ``name`` (empty if none).

    The names are public (a table's header, a schema's declarations), never values of the data.
    """
    close = difflib.get_close_matches(str(name), sorted({str(k) for k in known}), n=3, cutoff=0.6)
    return "; did you mean " + " or ".join(repr(c) for c in close) + "?" if close else ""


@dataclass(frozen=True)
class Fill:
    """A declared missing-value policy: a missing entry (NaN, None) of the column reads as ``value``.

    ``value`` is a public constant the user states, never a number computed from the data (a
    column's mean or mode would be a statistic of the private table, outside the noise).

    Parameters
    ----------
    value : number or category
        For a :class:`Numeric` column a number within its declared ``[low, high]`` (in the
        table's units), for :class:`Binary` 0 or 1, for :class:`Categorical` one of the declared
        categories.
    indicator : bool, default False
        Also add a public 0/1 column ``"<name>_missing"``, 1 where the entry was missing
        (:class:`Numeric` and :class:`Binary` only: a categorical declares ``missing="indicator"``,
        which makes "missing" a category of its own).

    Examples
    --------
    >>> Numeric(0, 100, grid=1, missing=Fill(0))
    Numeric(0, 100, grid=1, missing=Fill(0))
    """

    value: Any
    indicator: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.indicator, bool):
            raise ModelError(f"Fill indicator must be True or False, got {self.indicator!r}")
        if _is_missing(self.value):
            raise ModelError("Fill needs a declared value, not a missing one")
        try:
            hash(self.value)
        except TypeError:
            raise ModelError("Fill needs a number or a category (a hashable value)") from None

    def __repr__(self) -> str:
        return f"Fill({self.value!r}{', indicator=True' if self.indicator else ''})"


#: the missing-value policies a column declares by name (besides :class:`Fill`): ``"indicator"``
#: (every column type) and ``"zero"`` (a :class:`Categorical`'s all-zero block)
MISSING_POLICIES = ("indicator", "zero")
#: a missing-value declaration: None (no policy: a missing entry is refused when the dataset is
#: built), a :class:`Fill` or one of :data:`MISSING_POLICIES`
Missing = Fill | str | None
#: the suffix of an indicator column's name (``"<name>_missing"``)
INDICATOR_SUFFIX = "_missing"


def _missing_policy(missing: object, kind: str) -> Fill | str | None:
    """A column's missing-value declaration, checked for its type (the value of a Fill is checked by the spec)."""
    if missing is None or isinstance(missing, Fill):
        return missing
    if _same(missing, "indicator") or (_same(missing, "zero") and kind == "categorical"):
        return str(missing)
    allowed = "Fill(value), Fill(value, indicator=True), 'indicator'" if kind != "categorical" \
        else "Fill(category), 'indicator' or 'zero'"
    raise ModelError(f"{kind.capitalize()} missing must be None or one of {allowed}, got {missing!r}")


def _missing_text(missing: Fill | str | None) -> str:
    return "" if missing is None else f", missing={missing!r}"


class _Spec:
    """What every column spec shares: its missing-value declaration and its expanded columns."""

    kind: str

    @property
    def indicator(self) -> bool:
        """True when the column declares a public missing indicator (one more 0/1 column)."""
        missing = getattr(self, "missing", None)
        return missing == "indicator" or (isinstance(missing, Fill) and missing.indicator)

    @property
    def width(self) -> int:
        """Number of expanded columns."""
        return 1 + self.indicator

    def column_names(self, name: str) -> list[str]:
        """Names of the expanded columns of a column ``name``."""
        return [name] + ([name + INDICATOR_SUFFIX] if self.indicator else [])


@dataclass(frozen=True, init=False)
class Numeric(_Spec):
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
    missing : Fill, "indicator" or None
        What a missing entry (NaN, None) reads as.  ``Fill(v)``: the declared value ``v``
        (within [low, high]); ``"indicator"``: ``low`` plus a public 0/1 column
        ``"<name>_missing"`` that is 1 where the entry was missing (``Fill(v, indicator=True)``:
        ``v`` and the indicator).  None (default): a missing entry is refused when the dataset
        is built, naming the column — before any budget is spent.

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
    missing: Fill | str | None
    kind = "numeric"

    def __init__(self, low: object, high: object, *, grid: object, unit: bool = False,
                 missing: Missing = None) -> None:
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
        policy = _missing_policy(missing, self.kind)
        if isinstance(policy, Fill) and not lo <= _finite(policy.value, "Numeric Fill value") <= hi:
            raise ModelError(f"Numeric Fill value {policy.value!r} is outside the declared range "
                             f"[{_text(lo)}, {_text(hi)}]; declare a value within it")
        object.__setattr__(self, "low", lo)
        object.__setattr__(self, "high", hi)
        object.__setattr__(self, "grid", step)
        object.__setattr__(self, "unit", unit)
        object.__setattr__(self, "missing", policy)

    @property
    def value_low(self) -> Fraction:
        """The smallest value of the column in X: ``low``, or 0 for a ``unit`` column."""
        return Fraction(0) if self.unit else self.low

    @property
    def value_high(self) -> Fraction:
        """The declared top of the column in X: ``high``, or 1 for a ``unit`` column."""
        return Fraction(1) if self.unit else self.high

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
    def fill_value(self) -> Fraction | None:
        """The declared value of a missing entry, in the table's units (``low`` for
        ``missing="indicator"``), or None without a policy."""
        if isinstance(self.missing, Fill):
            return _finite(self.missing.value, "Numeric Fill value")
        return self.low if self.missing == "indicator" else None

    def with_unit(self, unit: bool = True) -> Numeric:
        """This declaration with ``unit`` set (bounds, grid and missing policy kept)."""
        return Numeric(self.low, self.high, grid=self.grid, unit=unit, missing=self.missing)

    @property
    def steps(self) -> int:
        """K: the grid indices are 0..K."""
        return int(math.floor((self.high - self.low) / self.grid))

    def __repr__(self) -> str:
        unit = ", unit=True" if self.unit else ""
        return f"Numeric({_text(self.low)}, {_text(self.high)}, grid={_text(self.grid)}{unit}" \
               f"{_missing_text(self.missing)})"


@dataclass(frozen=True)
class Binary(_Spec):
    """A 0/1 column (values are clipped to [0, 1] and rounded).

    Parameters
    ----------
    missing : Fill, "indicator" or None
        ``Fill(0)`` or ``Fill(1)``: a missing entry reads as that value; ``"indicator"``: as 0,
        plus a public 0/1 column ``"<name>_missing"``; None (default): a missing entry is
        refused when the dataset is built.
    """

    missing: Fill | str | None = None
    kind = "binary"

    def __post_init__(self) -> None:
        policy = _missing_policy(self.missing, self.kind)
        if isinstance(policy, Fill) and not (isinstance(policy.value, (int, float, Fraction, np.number))
                                             and policy.value in (0, 1)):
            raise ModelError(f"Binary Fill value must be 0 or 1, got {policy.value!r}")

    @property
    def fill_value(self) -> int | None:
        """The declared value of a missing entry (0 for ``missing="indicator"``), or None."""
        if isinstance(self.missing, Fill):
            return int(self.missing.value)
        return 0 if self.missing == "indicator" else None

    def __repr__(self) -> str:
        return f"Binary({'' if self.missing is None else f'missing={self.missing!r}'})"


@dataclass(frozen=True, init=False)
class Categorical(_Spec):
    """A categorical column encoded one-hot: one 0/1 column per declared category.

    Parameters
    ----------
    categories : sequence
        The declared categories (distinct, at least one), in column order.
    missing : Fill, "indicator", "zero" or None
        What a missing entry (NaN, None) reads as.  ``Fill(c)``: the declared category ``c``;
        ``"indicator"``: a category of its own, one more column ``"<name>_missing"`` in the
        one-hot block; ``"zero"``: the all-zero block (as an undeclared value).  None
        (default): a missing entry is refused when the dataset is built, naming the column.

    Notes
    -----
    :meth:`Schema.encode` maps a category to its one-hot block; a value that is not a
    declared category maps to the all-zero block (``unseen="zero"``), never to an error.
    :meth:`Schema.map_rows` maps an already expanded block to a valid one: the one-hot of its
    largest entry when that entry is at least 1/2 (the first on ties), the zero block otherwise.
    """

    categories: tuple[Any, ...]
    missing: Fill | str | None
    kind = "categorical"

    def __init__(self, categories: Sequence[Any], *, missing: Missing = None) -> None:
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
        policy = _missing_policy(missing, self.kind)
        if isinstance(policy, Fill):
            if policy.indicator:
                raise ModelError("a Categorical declares missing='indicator' (missing becomes a category of its "
                                 "own), not Fill(..., indicator=True)")
            if not any(_same(policy.value, c) for c in cats):
                raise ModelError(f"Categorical Fill value {policy.value!r} is not a declared category")
        object.__setattr__(self, "categories", cats)
        object.__setattr__(self, "missing", policy)

    @property
    def width(self) -> int:
        return len(self.categories) + self.indicator

    def column_names(self, name: str) -> list[str]:
        return [f"{name}={c}" for c in self.categories] + ([name + INDICATOR_SUFFIX] if self.indicator else [])

    def __repr__(self) -> str:
        return f"Categorical({list(self.categories)!r}{_missing_text(self.missing)})"


@dataclass(frozen=True)
class Intercept(_Spec):
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


def _policy_hint(spec: Spec) -> str:
    """How to declare a missing-value policy for ``spec`` (one clause of an error message)."""
    if isinstance(spec, Categorical):
        return ("Categorical([...], missing=dp.Fill(<a declared category>)), missing='indicator' (a category "
                "of its own) or missing='zero' (the all-zero block)")
    if isinstance(spec, Binary):
        return "Binary(missing=dp.Fill(0)) or Binary(missing='indicator')"
    low, high = (_text(spec.low), _text(spec.high)) if isinstance(spec, Numeric) else ("low", "high")
    return (f"Numeric({low}, {high}, grid=..., missing=dp.Fill(<a value in [{low}, {high}]>)) or "
            "missing='indicator' (a public 0/1 column '<name>_missing')")


def missing_message(name: str, spec: Spec) -> str:
    """The one-line refusal of a missing entry in a column ``name`` that declares no policy."""
    return (f"column {name!r} has missing values (NaN/None) and declares no missing-value policy; declare one, "
            f"e.g. {_policy_hint(spec)} (refused when the dataset is built, before any budget is spent)")


def _missing_row(spec: Spec) -> np.ndarray | None:
    """The expanded entries (in X's units) a missing entry of a column declared ``spec`` reads as;
    None without a policy (an :class:`Intercept` is 1 whatever the input holds)."""
    if isinstance(spec, Intercept):
        return np.ones(1)
    if spec.missing is None:
        return None
    if isinstance(spec, Numeric):
        value = spec.fill_value
        assert value is not None
        x = (value - spec.low) / (spec.high - spec.low) if spec.unit else value
        return np.array([float(x)] + [1.0] * spec.indicator)
    if isinstance(spec, Binary):
        return np.array([float(spec.fill_value or 0)] + [1.0] * spec.indicator)
    row = np.zeros(spec.width)
    if isinstance(spec.missing, Fill):
        row[next(i for i, c in enumerate(spec.categories) if _same(spec.missing.value, c))] = 1.0
    elif spec.missing == "indicator":
        row[-1] = 1.0
    return row


@dataclass(frozen=True)
class LabelMap:
    """The public affine map of a numeric label declared ``Numeric(low, high, grid=...)``.

    A label y in the table's units is clipped to the declared [low, high], rounded to the
    declared grid and mapped onto [−1, 1] by the *declared* range, never by the data's:
    ``to_unit(y) = (y − centre) / half_width`` with ``centre = (low + high)/2`` and
    ``half_width = (high − low)/2``.  A regression loss then reads the label with
    ``y_bound = 1``.  :meth:`from_unit` maps a prediction back to the table's units, so an
    estimator that fits on the mapped labels predicts in the original ones.

    Parameters
    ----------
    name : str
        The label column (named in error messages).
    spec : Numeric
        The label's declaration; its ``missing`` may be None or a :class:`Fill` (an indicator
        column has no meaning for a label).  ``unit`` is ignored (the map is this one).

    Examples
    --------
    >>> m = LabelMap("price", Numeric(0, 500, grid=1))
    >>> float(m.to_unit(500.0)), float(m.from_unit(-1.0))
    (1.0, 0.0)
    """

    name: str
    spec: Numeric

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ModelError(f"a label map needs the label's column name, got {self.name!r}")
        if not isinstance(self.spec, Numeric):
            raise ModelError(f"the label is declared Numeric(low, high, grid=...), got {type(self.spec).__name__} "
                             "(a classification label declares classes=[negative, positive])")
        if self.spec.indicator:
            raise ModelError("a label declares missing=Fill(value) or no policy, not an indicator column")

    @property
    def low(self) -> float:
        """The declared smallest label (table units)."""
        return float(self.spec.low)

    @property
    def high(self) -> float:
        """The declared largest label (table units)."""
        return float(self.spec.high)

    @property
    def centre(self) -> float:
        """``(low + high)/2``: the label that maps to 0."""
        return float((self.spec.low + self.spec.high) / 2)

    @property
    def half_width(self) -> float:
        """``(high − low)/2``: one unit of the mapped label in the table's units."""
        return float((self.spec.high - self.spec.low) / 2)

    def to_unit(self, y: Any) -> np.ndarray:
        """Labels in the table's units → the mapped scale: ``(y − centre)/half_width`` (no clipping)."""
        return (np.asarray(y, dtype=np.float64) - self.centre) / self.half_width

    def from_unit(self, z: Any) -> np.ndarray:
        """Mapped labels or predictions → the table's units: ``centre + half_width·z``."""
        return self.centre + self.half_width * np.asarray(z, dtype=np.float64)

    def linear_from_unit(self, coef: Any, intercept: float = 0.0) -> tuple[np.ndarray, float]:
        """A linear model fitted on mapped labels, ``z = ⟨coef, x⟩ + intercept``, in the table's
        units: ``(half_width·coef, centre + half_width·intercept)``."""
        return self.half_width * np.asarray(coef, dtype=np.float64), self.centre + self.half_width * float(intercept)

    def map_labels(self, raw: Any, *, clip: bool = True, refuse: bool = True) -> np.ndarray:
        """Labels of the table mapped row by row onto [−1, 1] (float64).

        A missing label reads as the declared :class:`Fill` value; a label outside [low, high]
        is clipped onto it and every label is rounded to the declared grid, then mapped with
        :meth:`to_unit`.

        Parameters
        ----------
        raw : array_like
            The label column in the table's units.
        clip : bool, default True
            False: a label outside [low, high] raises :class:`~dpopt.errors.DataError` instead
            of being clipped (a check of one's own table, not private).
        refuse : bool, default True
            False (a partition read inside a run): a missing label without a policy, or an
            infinite one, reads as 0 instead of being refused.

        Raises
        ------
        DataError
            A non-numeric label, a missing one without a declared policy, an infinite one, or
            (``clip=False``) one outside the declared range; the message names the column, no value.
        """
        y = column_numbers(self.name, "numeric", raw)
        gap = np.isnan(y)
        fill = self.spec.fill_value
        if gap.any():
            if fill is not None:
                y[gap] = float(fill)
            elif refuse:
                raise DataError(f"the label column {self.name!r} has missing values (NaN/None) and its declaration "
                                f"has no missing-value policy; declare label_spec=dp.Numeric({_text(self.spec.low)}, "
                                f"{_text(self.spec.high)}, grid=..., missing=dp.Fill(<a value in the range>)) "
                                "(refused when the dataset is built, before any budget is spent)")
            else:
                y[gap] = 0.0
        if not np.all(np.isfinite(y)):
            if refuse:
                raise DataError(f"the label column {self.name!r} holds an infinite entry; replace it before "
                                "building the dataset")
            y[~np.isfinite(y)] = 0.0
        if not clip and np.any((y < self.low) | (y > self.high)):
            raise DataError(f"the label column {self.name!r} holds values outside its declared range "
                            f"[{_text(self.spec.low)}, {_text(self.spec.high)}]; clip=False refuses them instead of "
                            "clipping (a check of your own table, not private): keep clip=True for a private run")
        k = np.clip(np.rint((np.clip(y, self.low, self.high) - self.low) / float(self.spec.grid)), 0, self.spec.steps)
        values = float(self.spec.low) + k * float(self.spec.grid)
        return np.clip(self.to_unit(values), -1.0, 1.0)

    def __repr__(self) -> str:
        return f"LabelMap({self.name!r}, {self.spec!r})"


@dataclass(frozen=True)
class ColumnCheck:
    """One declared column of a table against its declaration (:meth:`Schema.check`; **NOT private**).

    Attributes
    ----------
    name, spec : str
        The column and its declaration (``repr``).
    present : bool
        Whether the table has the column (False: ``suggestion`` lists close names).
    missing : int
        Missing entries (NaN, None, pandas' NA).
    clipped : int
        Entries outside the declared range (the mapping clips them onto it).
    off_grid : int
        Entries in range but off the declared grid (rounded to the nearest grid point).
    unseen : int
        Categorical entries that are not declared categories (the all-zero block).
    not_numeric : int
        Entries of a numeric or 0/1 column that are not finite numbers (refused).
    """

    name: str
    spec: str
    present: bool = True
    missing: int = 0
    clipped: int = 0
    off_grid: int = 0
    unseen: int = 0
    not_numeric: int = 0
    missing_policy: bool = True
    suggestion: str = ""

    @property
    def refused(self) -> str:
        """Why :meth:`Dataset.from_frame` refuses this column, or ``""``."""
        if not self.present:
            return f"the table has no column {self.name!r}{self.suggestion}"
        if self.not_numeric:
            return f"column {self.name!r} holds entries that are not finite numbers"
        if self.missing and not self.missing_policy:
            return f"column {self.name!r} has missing entries and declares no missing-value policy"
        return ""


@dataclass(frozen=True)
class SchemaCheck:
    """How a table fits a schema: exact counts per column (:meth:`Schema.check`).

    **NOT PRIVATE**: every count is read from the data, without noise.  It is a tool for the
    data's curator (is my declaration right? what will be clipped, rounded, refused?); never
    publish it or use it to choose anything in a private run.  Nothing is charged.
    """

    n: int
    columns: tuple[ColumnCheck, ...]

    def __getitem__(self, name: str) -> ColumnCheck:
        for column in self.columns:
            if column.name == name:
                return column
        raise KeyError(f"no declared column {name!r}{did_you_mean(name, (c.name for c in self.columns))}")

    def __iter__(self) -> Iterator[ColumnCheck]:
        return iter(self.columns)

    @property
    def refusals(self) -> list[str]:
        """What :meth:`Dataset.from_frame` would refuse, one line per column (empty: it builds)."""
        return [c.refused for c in self.columns if c.refused]

    def to_dict(self) -> dict[str, Any]:
        """The report as plain data (with ``"private": False``)."""
        return {"private": False, "n": self.n,
                "columns": [{**{k: getattr(c, k) for k in ColumnCheck.__dataclass_fields__}, "refused": c.refused}
                            for c in self.columns]}

    def summary(self) -> str:
        """A readable table of the counts, headed NOT PRIVATE."""
        head = ("NOT PRIVATE: exact counts read from the data (for its curator; never publish them)\n"
                f"{'column':<20} {'missing':>8} {'clipped':>8} {'off-grid':>8} {'unseen':>8} {'not-num':>8}  refused")
        lines = [head]
        for c in self.columns:
            if not c.present:
                lines.append(f"{c.name:<20} {'absent':>8}{'':>36}  {c.refused}")
                continue
            lines.append(f"{c.name:<20} {c.missing:>8} {c.clipped:>8} {c.off_grid:>8} {c.unseen:>8} "
                         f"{c.not_numeric:>8}  {c.refused}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"SchemaCheck(NOT PRIVATE: counts read from the data; n={self.n}, columns={len(self.columns)}, "
                f"refusals={len(self.refusals)})")


def _check_column(name: str, spec: Spec, col: np.ndarray) -> ColumnCheck:
    """The counts of one present column (Schema.check; reads the values)."""
    policy = getattr(spec, "missing", None) is not None
    if isinstance(spec, Categorical):
        values = col.tolist()
        found = [any(_same(v, c) for c in spec.categories) for v in values]
        absent = [not f and _is_missing(v) for v, f in zip(values, found, strict=True)]
        unseen = sum(1 for f, g in zip(found, absent, strict=True) if not f and not g)
        return ColumnCheck(name, repr(spec), missing=sum(absent), unseen=unseen, missing_policy=policy)
    numbers = np.full(col.shape[0], np.nan)
    bad = np.zeros(col.shape[0], dtype=bool)
    gaps = np.zeros(col.shape[0], dtype=bool)
    for i, v in enumerate(col.tolist()):
        if _is_missing(v):
            gaps[i] = True
            continue
        try:
            numbers[i] = float(v)
        except (TypeError, ValueError):
            bad[i] = True
    bad |= np.isinf(numbers)
    ok = np.isfinite(numbers)
    low, high, grid = (float(spec.low), float(spec.high), float(spec.grid)) if isinstance(spec, Numeric) \
        else (0.0, 1.0, 1.0)
    clipped = ok & ((numbers < low) | (numbers > high))
    index = (np.where(ok, numbers, low) - low) / grid
    off = ok & ~clipped & (np.abs(index - np.rint(index)) > 1e-9 * np.maximum(1.0, np.abs(index)))
    return ColumnCheck(name, repr(spec), missing=int(gaps.sum()), clipped=int(clipped.sum()), off_grid=int(off.sum()),
                       not_numeric=int(bad.sum()), missing_policy=policy)


def column_numbers(name: str, kind: str, col: Any) -> np.ndarray:
    """A 1-D column as float64 (a copy), every missing entry (None, NaN, pandas' NA) as NaN.

    Raises DataError (naming the column, no value) for an entry that is not a number.
    """
    values = np.asarray(col)
    try:
        return np.array(values, dtype=np.float64).reshape(-1)  # None reads as NaN
    except (TypeError, ValueError):
        pass
    out = np.empty(values.size, dtype=np.float64)
    for i, v in enumerate(values.reshape(-1).tolist()):
        if _is_missing(v):
            out[i] = np.nan
            continue
        try:
            out[i] = float(v)
        except (TypeError, ValueError):
            hint = ("; dp.Binary() reads 0/1 numbers: declare a column of words such as yes/no as "
                    "dp.Categorical([...its values...])" if kind == "binary" else "")
            raise DataError(f"column {name!r} is declared {kind} but is not numeric (an entry is not a number)"
                            f"{hint}") from None
    return out


@dataclass(frozen=True)
class _Columns:
    """Per expanded column: exact integer grid a = offset + k·step, k = 0..steps (times s)."""

    offset: np.ndarray  # int64: s·low
    step: np.ndarray  # int64: s·grid
    steps: np.ndarray  # int64: K
    low: np.ndarray  # float64
    grid: np.ndarray  # float64
    high: np.ndarray  # float64: the declared top (≥ the largest grid point)
    binary: np.ndarray  # bool: declared 0/1
    blocks: tuple[np.ndarray, ...]  # index arrays of the one-hot blocks
    free: np.ndarray  # indices of the columns outside one-hot blocks
    owner: tuple[str, ...]  # the declared column each expanded column belongs to
    fills: tuple[tuple[str, int, int, np.ndarray | None], ...]  # (name, start, stop, missing row or None)


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
        self._scale, self._cols = self._build()

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
        columns = [(str(name), _infer_spec(str(name), frame[name], steps, max_categories))
                   for name in frame.columns if name not in set(exclude)]
        return cls(columns)

    # ---- declarations -------------------------------------------------------------------
    def _build(self) -> tuple[int, _Columns]:
        lows: list[Fraction] = []
        grids: list[Fraction] = []
        steps: list[int] = []
        highs: list[Fraction] = []
        binary: list[bool] = []
        owner: list[str] = []
        blocks: list[np.ndarray] = []
        fills: list[tuple[str, int, int, np.ndarray | None]] = []

        def column(low: Fraction, grid: Fraction, k: int, high: Fraction, is_binary: bool) -> None:
            lows.append(low)
            grids.append(grid)
            steps.append(k)
            highs.append(high)
            binary.append(is_binary)

        for name, spec in self._items:
            start = len(lows)
            if isinstance(spec, Numeric):
                column(spec.value_low, spec.value_grid, spec.steps, spec.value_high, False)
            elif isinstance(spec, Intercept):  # the single grid point 1: mapping sets it to 1
                column(Fraction(1), Fraction(1), 0, Fraction(1), True)
            else:
                for _ in range(spec.width - spec.indicator):
                    column(Fraction(0), Fraction(1), 1, Fraction(1), True)
            if spec.indicator:  # a public 0/1 column; a categorical's is a member of its block
                column(Fraction(0), Fraction(1), 1, Fraction(1), True)
            if isinstance(spec, Categorical):
                blocks.append(np.arange(start, len(lows)))
            owner += [name] * (len(lows) - start)
            fills.append((name, start, len(lows), _missing_row(spec)))
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
            high=np.array([float(v) for v in highs]), binary=np.array(binary, dtype=bool),
            blocks=tuple(blocks), free=np.flatnonzero(~in_block), owner=tuple(owner), fills=tuple(fills),
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
            return f"[{_text(spec.low)}, {_text(spec.high)}]"
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
            parts.append(self._encode_column(name, spec, col, unseen))
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

    @staticmethod
    def _encode_column(name: str, spec: Spec, col: np.ndarray, unseen: str = "zero") -> np.ndarray:
        """One declared column's expanded block; a missing entry is NaN across the block."""
        if isinstance(spec, Categorical):
            values = col.tolist()
            hits = [np.array([_same(v, cat) for v in values], dtype=bool) for cat in spec.categories]
            block = np.column_stack(hits)
            found = np.asarray(block.any(axis=1), dtype=bool)
            gaps = np.array([not f and _is_missing(v) for v, f in zip(values, found.tolist(), strict=True)],
                            dtype=np.bool_)
            if unseen == "error" and not (found | gaps).all():
                raise DataError(f"column {name!r} holds a value that is not one of its declared categories "
                                "(unseen='error' is a check of your own table, not private; a private run "
                                "uses unseen='zero', which maps it to the all-zero block)")
            out = block.astype(np.float64)
        else:
            raw = column_numbers(name, spec.kind, col)
            gaps = np.isnan(raw)
            out = (spec.to_values(raw) if isinstance(spec, Numeric) else raw)[:, None]
        if spec.indicator:
            out = np.hstack([out, np.zeros((out.shape[0], 1))])
        out[gaps] = np.nan
        return out

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
            rows.append(_check_column(name, spec, col))
        return SchemaCheck(n=n, columns=tuple(rows))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Schema) and self._items == other._items

    def __hash__(self) -> int:
        return hash(self._items)

    def __repr__(self) -> str:
        cols = ", ".join(f"{name!r}: {spec!r}" for name, spec in self._items)
        return f"Schema({{{cols}}})"


__all__ = ["INTERCEPT", "MISSING_POLICIES", "Binary", "Categorical", "ColumnCheck", "Fill", "Intercept", "LabelMap",
           "Missing", "Numeric", "Schema", "SchemaCheck", "Spec", "column_numbers", "did_you_mean",
           "missing_message"]
