"""A *draft* column declaration read off a table's values (:meth:`Schema.infer_from_frame`):
**not private**, a starting point to replace by public facts."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from dpopt.errors import ModelError
from dpopt.modeling.schema.specs import MAX_DENOMINATOR, Binary, Categorical, Numeric, Spec


def infer_spec(name: str, col: Any, steps: int, max_categories: int) -> Spec:
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
