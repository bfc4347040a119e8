"""Public declarations of the data: one spec per column, and the integer encoding they imply.

The package's modules: :mod:`~dpopt.modeling.schema.specs` (the column declarations),
:mod:`~dpopt.modeling.schema.declaration` (:class:`Schema`), :mod:`~dpopt.modeling.schema.encoding`
(integer grids and table encodings), :mod:`~dpopt.modeling.schema.labels` (:class:`LabelMap`),
:mod:`~dpopt.modeling.schema.check` (:meth:`Schema.check`, not private),
:mod:`~dpopt.modeling.schema.inference` (:meth:`Schema.infer_from_frame`, not private) and
:mod:`~dpopt.modeling.schema.suggest` (:func:`did_you_mean`).  This module is their interface:
the names other modules import from ``dpopt.modeling.schema``.

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

from dpopt.modeling.schema.check import ColumnCheck, SchemaCheck
from dpopt.modeling.schema.declaration import Schema
from dpopt.modeling.schema.encoding import UNSEEN_POLICIES, column_numbers
from dpopt.modeling.schema.labels import LabelMap
from dpopt.modeling.schema.specs import (
    INTERCEPT,
    MISSING_POLICIES,
    Binary,
    Categorical,
    Fill,
    Intercept,
    Missing,
    Numeric,
    Spec,
    missing_message,
)

__all__ = ["INTERCEPT", "MISSING_POLICIES", "UNSEEN_POLICIES", "Binary", "Categorical", "ColumnCheck", "Fill",
           "Intercept", "LabelMap", "Missing", "Numeric", "Schema", "SchemaCheck", "Spec", "column_numbers",
           "missing_message"]
