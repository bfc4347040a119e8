"""What an estimator's declarations did to the table, counted privately at every ``fit``.

Every ``fit`` of a dpopt.sklearn estimator spends :data:`~dpopt.mechanisms.diagnostics.DIAGNOSTICS_SHARE`
of its ε on :class:`~dpopt.mechanisms.diagnostics.DiagnosticCounts` (one release, one charge:
:class:`~dpopt.mechanisms.diagnostics.WithDiagnostics`), unless ``diagnostics=False``.  Which
counts are taken is fixed by the declarations alone (:func:`declared_counts`); each is a number
of rows, marked where the fit's encoding changes it (:mod:`dpopt.modeling.changes`, the same
marks a ``Mechanism.run`` on a user's Dataset counts):

* classifiers with declared ``classes``: labels that matched no declared class (fitted as
  the negative class or as class 0), and missing labels (the rule of the labels' own mapping);
* regressors: labels outside the declared range (clipped onto it);
* rows whose norm exceeded ``x_bound`` (clipped onto it; with a schema only when ``x_bound`` is
  below the schema's own row bound);
* with a schema: per declared column, entries clipped onto the declared range, rounded onto
  the grid, of an undeclared category or missing (filled per the column's policy), marked by
  the dataset while it maps the encoded rows.

After the fit, :func:`~dpopt.mechanisms.diagnostics.warn_if_large` raises one
:class:`~dpopt.errors.DiagnosticsWarning` for the largest count that is clearly large (the wording
names what it counts and the fix).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpopt.mechanisms.diagnostics import CountQuery
from dpopt.modeling.changes import TableChanges, class_label_changes, label_changes, none
from dpopt.modeling.dataset import Dataset

__all__ = ["declared_counts"]

#: the dataset's own label count, which a classifier's ±1 labels never reach (its classes are counted)
_LABEL_RANGE = "labels outside the declared range"


def declared_counts(est: Any, y: Any, data: Dataset) -> tuple[CountQuery, dict[str, tuple[str, str]]]:
    """The counts an estimator's declarations call for, and each one's wording and fix.

    Parameters
    ----------
    est : DPEstimatorBase
        The estimator after :meth:`_encode` (its declarations, ``classes_``).
    y : array_like
        The raw labels of ``fit``.
    data : Dataset
        The encoded table, with the marks of its encoding (``declaration_changes``).

    Returns
    -------
    (CountQuery, dict)
        The query (its counts are summed after the charge only), and per count name its
        (what, fix) for the warning.
    """
    marked = data.declaration_changes if data.declaration_changes is not None else none(data.n)
    if hasattr(est, "_declared_classes"):  # a classifier: the dataset's ±1 labels are inside y_bound by construction
        marked = _without(marked, _LABEL_RANGE)
    changes = _label_changes(est, y, data.n).then(marked)
    return (CountQuery(changes.names, data.n, changes.counts),
            dict(zip(changes.names, changes.wording, strict=True)))


def _label_changes(est: Any, y: Any, n: int) -> TableChanges:
    """The labels' own counts: unmatched and missing classes, or a label_spec's range."""
    if hasattr(est, "_declared_classes"):  # a classifier (DPClassifierBase; no import of it: it imports this)
        declared = est._declared_classes()
        if declared is None:  # the classes were read from y: every label matches one
            return none(n)
        return class_label_changes(np.asarray(y, dtype=object).reshape(-1), list(declared))
    spec = getattr(est, "label_spec", None)
    if spec is None:  # y_bound: the dataset clipped the labels and marked them
        return none(n)
    values = np.asarray(y, dtype=np.float64).reshape(-1)
    return label_changes((values < float(spec.low)) | (values > float(spec.high)), fix="check `label_spec=`")


def _without(changes: TableChanges, name: str) -> TableChanges:
    if name not in changes.names:
        return changes
    keep = [j for j, n in enumerate(changes.names) if n != name]
    return TableChanges(tuple(changes.names[j] for j in keep), tuple(changes.wording[j] for j in keep),
                        changes.flags[:, keep])
