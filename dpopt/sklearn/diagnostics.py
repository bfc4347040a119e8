"""What an estimator's declarations did to the table, counted privately at every ``fit``.

Every ``fit`` of a dpopt.sklearn estimator spends :data:`~dpopt.mechanisms.diagnostics.DIAGNOSTICS_SHARE`
of its ε on :class:`~dpopt.mechanisms.diagnostics.DiagnosticCounts` (one release, one charge:
:class:`~dpopt.mechanisms.diagnostics.WithDiagnostics`).  Which counts are taken is fixed by
the declarations alone (:func:`declared_counts`); each is a number of rows:

* classifiers with declared ``classes``: labels that matched no declared class (fitted as
  the negative class or as class 0), and missing labels;
* regressors: labels outside the declared range (clipped onto it);
* without a schema: rows whose norm exceeded ``x_bound`` (clipped onto it);
* with a schema: per declared column, entries clipped onto the declared range, rounded onto
  the grid, of an undeclared category or missing (filled per the column's policy).

After the fit, :func:`~dpopt.mechanisms.diagnostics.warn_if_large` raises one
:class:`~dpopt.errors.DiagnosticsWarning` for the largest count that is clearly large (the wording
below names what it counts and the fix).  ``diagnostics=False`` on an estimator counts nothing.
A ``Mechanism.run`` on a user's own Dataset takes the dataset's counts instead
(:mod:`dpopt.modeling.changes`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from dpopt.mechanisms.diagnostics import CountQuery
from dpopt.modeling.norms import norm_order
from dpopt.modeling.schema import Categorical, Intercept

__all__ = ["declared_counts"]


@dataclass(frozen=True)
class _Count:
    name: str
    what: str  # "labels matched no declared class", completing "about 40 % of …"
    fix: str
    count: Any  # () -> int, after the charge


def declared_counts(est: Any, X: Any, y: Any, n: int) -> tuple[CountQuery, dict[str, tuple[str, str]]]:
    """The counts an estimator's declarations call for, and each one's wording and fix.

    Parameters
    ----------
    est : DPEstimatorBase
        The estimator after :meth:`_encode` (its declarations, ``classes_``).
    X, y
        The raw inputs of ``fit`` (read only by the query's function, after the charge).
    n : int
        The number of rows.

    Returns
    -------
    (CountQuery, dict)
        The query, and per count name its (what, fix) for the warning.
    """
    counts = [*_label_counts(est, y), *_feature_counts(est, X)]
    query = CountQuery(tuple(c.name for c in counts), n, lambda: np.array([c.count() for c in counts]))
    return query, {c.name: (c.what, c.fix) for c in counts}


def _labels(y: Any) -> Any:
    import pandas as pd

    return pd.Series(np.asarray(y, dtype=object).reshape(-1))


def _label_counts(est: Any, y: Any) -> list[_Count]:
    if hasattr(est, "_declared_classes"):  # a classifier (DPClassifierBase; no import of it: it imports this)
        declared = est._declared_classes()
        if declared is None:  # the classes were read from y: every label matches one
            return []

        def unmatched() -> int:
            labels = _labels(y)
            return int((~labels.isin(declared) & ~labels.isna()).sum())

        return [_Count("labels matching no declared class", "labels matched no declared class", "check `classes=`",
                       unmatched),
                _Count("missing labels", "labels were missing", "drop or fill the rows without a label",
                       lambda: int(_labels(y).isna().sum()))]
    spec = getattr(est, "label_spec", None)
    low, high = (float(spec.low), float(spec.high)) if spec is not None else (-float(est.y_bound), float(est.y_bound))
    fix = "check `label_spec=`" if spec is not None else "check `y_bound=`"

    def outside() -> int:
        values = np.asarray(y, dtype=np.float64).reshape(-1)
        return int(np.count_nonzero((values < low) | (values > high)))

    return [_Count("labels outside the declared range", "labels lay outside the declared range (clipped)", fix,
                   outside)]


def _feature_counts(est: Any, X: Any) -> list[_Count]:
    out: list[_Count] = []
    if est.x_bound is not None:
        bound, order = float(est.x_bound), norm_order(est.x_norm)

        def clipped() -> int:
            if est.schema is not None:
                rows = est._design(est._table(X))  # already clipped: count the rows on the bound's edge
                return 0 if rows.size == 0 else int(np.count_nonzero(
                    np.linalg.norm(rows, ord=order, axis=1) >= bound * (1 - 1e-12)))
            raw = np.asarray(X, dtype=np.float64)
            return int(np.count_nonzero(np.linalg.norm(raw, ord=order, axis=1) > bound))

        what = "rows had a norm above x_bound (clipped)" if est.schema is None else \
            "rows reached x_bound (clipped or on it)"
        out.append(_Count("rows clipped to x_bound", what, "check `x_bound=`", clipped))
    if est.schema is None:
        return out
    report: dict[str, Any] = {}

    def column(name: str) -> int:
        if not report:
            report.update({c.name: c for c in est.schema.check(est._table(X))})
        c = report[name]
        return int(c.clipped + c.off_grid + c.unseen + c.missing)

    for name, spec in est.schema.columns:
        if isinstance(spec, Intercept):
            continue
        kind = "of an undeclared category" if isinstance(spec, Categorical) else "clipped or rounded"
        if getattr(spec, "missing", None) is not None:
            kind += " or missing"
        out.append(_Count(f"{name}: entries {kind}", f"{name!r} entries were {kind}",
                          f"check the schema's declaration of {name!r}", lambda name=name: column(name)))
    return out

