"""The column declarations of a :class:`~dpopt.modeling.schema.Schema`: :class:`Numeric`,
:class:`Binary`, :class:`Categorical`, :class:`Intercept`, the missing-value policies
(:class:`Fill`, ``"indicator"``, ``"zero"``) and the exact reading of a declared number."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from dpopt.errors import ModelError

#: largest denominator a declared low / grid may have
MAX_DENOMINATOR = 10**6
#: relative distance between a float declaration and its rational reading
RATIONAL_TOLERANCE = 1e-12


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


def same_value(value: object, category: object) -> bool:
    """value == category as a plain bool (False for values that do not compare, e.g. NaN)."""
    try:
        return bool(value == category)
    except (TypeError, ValueError):
        return False


def fraction_text(f: Fraction) -> str:
    """A rational as text: ``"3"`` or ``"1/90"``."""
    return str(f.numerator) if f.denominator == 1 else f"{f.numerator}/{f.denominator}"


def is_missing(value: object) -> bool:
    """Whether a table entry is missing: None, a float NaN, pandas' ``NA`` or ``NaT``."""
    if value is None:
        return True
    if isinstance(value, (float, np.floating)):
        return bool(np.isnan(value))
    return type(value).__name__ in ("NAType", "NaTType")


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
        if is_missing(self.value):
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
    if same_value(missing, "indicator") or (same_value(missing, "zero") and kind == "categorical"):
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
                             f"[{fraction_text(lo)}, {fraction_text(hi)}]; declare a value within it")
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
        return f"Numeric({fraction_text(self.low)}, {fraction_text(self.high)}, grid={fraction_text(self.grid)}{unit}" \
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
            if not any(same_value(policy.value, c) for c in cats):
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
#: the default name of the intercept column (:meth:`Schema.with_intercept`)
INTERCEPT = "intercept"


def _policy_hint(spec: Spec) -> str:
    """How to declare a missing-value policy for ``spec`` (one clause of an error message)."""
    if isinstance(spec, Categorical):
        return ("Categorical([...], missing=dp.Fill(<a declared category>)), missing='indicator' (a category "
                "of its own) or missing='zero' (the all-zero block)")
    if isinstance(spec, Binary):
        return "Binary(missing=dp.Fill(0)) or Binary(missing='indicator')"
    low, high = (fraction_text(spec.low), fraction_text(spec.high)) if isinstance(spec, Numeric) else ("low", "high")
    return (f"Numeric({low}, {high}, grid=..., missing=dp.Fill(<a value in [{low}, {high}]>)) or "
            "missing='indicator' (a public 0/1 column '<name>_missing')")


def missing_message(name: str, spec: Spec) -> str:
    """The one-line refusal of a missing entry in a column ``name`` that declares no policy."""
    return (f"column {name!r} has missing values (NaN/None) and declares no missing-value policy; declare one, "
            f"e.g. {_policy_hint(spec)} (refused when the dataset is built, before any budget is spent)")
