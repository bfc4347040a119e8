"""The public affine map of a numeric label onto [−1, 1] by its declared range (:class:`LabelMap`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from dpopt.errors import DataError, ModelError
from dpopt.modeling.schema.encoding import column_numbers
from dpopt.modeling.schema.specs import Numeric, fraction_text


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
                                f"has no missing-value policy; declare label_spec=dp.Numeric({fraction_text(self.spec.low)}, "
                                f"{fraction_text(self.spec.high)}, grid=..., missing=dp.Fill(<a value in the range>)) "
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
                            f"[{fraction_text(self.spec.low)}, {fraction_text(self.spec.high)}]; clip=False refuses them instead of "
                            "clipping (a check of your own table, not private): keep clip=True for a private run")
        k = np.clip(np.rint((np.clip(y, self.low, self.high) - self.low) / float(self.spec.grid)), 0, self.spec.steps)
        values = float(self.spec.low) + k * float(self.spec.grid)
        return np.clip(self.to_unit(values), -1.0, 1.0)

    def __repr__(self) -> str:
        return f"LabelMap({self.name!r}, {self.spec!r})"
