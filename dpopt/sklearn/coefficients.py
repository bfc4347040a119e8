"""``positive=`` and ``bounds=`` of the linear estimators: public constraints on the coefficients.

scikit-learn's ``positive=True`` (non-negative coefficients) and a per-coefficient box
``bounds=(low, high)`` become constraints written with the variable
(:mod:`dpopt.modeling.expressions`) on the coefficients only: the intercept is never
constrained (it is a column of θ, found by the estimator's ``_intercept_index``).  The
problem's constraint is then the list ``[ball, *these]``, whose intersection
(:class:`~dpopt.modeling.intersection.Intersection`) has a closed-form projection when the
ball is an ℓ1 or ℓ2 ball and the bounds contain 0.

``bounds`` are in the units of ``coef_``: for a regressor, per unit of each raw column and in
the label's units (``coef_ = s·θ`` with a public positive s per coefficient: the label's half
width over the column's declared width); for a classifier, in θ's units.  A sign is the same in
both, so ``positive=True`` needs no scale.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpopt.errors import ModelError
from dpopt.modeling.variable import Variable
from dpopt.modeling.vertex_polytope import VertexPolytope

__all__ = ["check_coefficient_settings", "coefficient_constraints", "positive_l1_polytope"]


def check_coefficient_settings(positive: object, bounds: object) -> None:
    """One-line refusals of a malformed ``positive``/``bounds`` (before any data is read)."""
    if not isinstance(positive, (bool, np.bool_)):
        raise ModelError(f"positive must be True or False, got {positive!r}")
    if bounds is None:
        return
    if not isinstance(bounds, (tuple, list)) or len(bounds) != 2:
        raise ModelError("bounds must be a pair (low, high) of numbers or per-coefficient arrays "
                         "(use -np.inf / np.inf for a missing side), e.g. bounds=(0, 5)")
    for side, name in zip(bounds, ("low", "high"), strict=True):
        try:
            arr = np.asarray(side, dtype=np.float64)
        except (TypeError, ValueError):
            raise ModelError(f"bounds {name} must be a number or a numeric array, got {type(side).__name__}") from None
        if arr.ndim > 1 or np.any(np.isnan(arr)):
            raise ModelError(f"bounds {name} must be a number or a 1-D array without NaN")
    low, high = (np.asarray(b, dtype=np.float64) for b in bounds)
    if low.shape == high.shape and np.any(low > high):
        raise ModelError("bounds need low ≤ high for every coefficient")


def _side(value: Any, n: int, name: str) -> np.ndarray:
    arr = np.asarray(value, dtype=np.float64)
    if arr.ndim == 0:
        return np.full(n, float(arr))
    if arr.shape != (n,):
        raise ModelError(f"bounds {name} has {arr.size} entries, but the model has {n} coefficients "
                         "(one per column of coef_; the intercept is never bounded)")
    return arr


def _coefficient_scales(est: Any, n: int) -> np.ndarray:
    """``s`` with ``coef_ = s·θ`` per coefficient (public: the declared label and column ranges)."""
    label_map = est._label_map() if hasattr(est, "_label_map") else None
    half = 1.0 if label_map is None else float(label_map.half_width)
    if not hasattr(est, "_column_scales") or est.schema is None:
        return np.full(n, half)
    width, _ = est._column_scales()
    return half / np.asarray(width, dtype=np.float64)


def coefficient_constraints(est: Any, theta: Variable, n_columns: int, outputs: int = 1) -> list[Any]:
    """The constraints ``positive``/``bounds`` put on θ's coefficients (intercept excluded).

    Parameters
    ----------
    est : DPEstimatorBase
        The estimator (its ``positive``, ``bounds`` and intercept declaration are read).
    theta : Variable
        The problem's variable: ``n_columns`` design columns, times ``outputs`` (a d×k Θ
        flattened row-major for a multinomial model).
    n_columns : int
        Design columns, the intercept included.
    outputs : int
        k, the number of linear outputs.

    Returns
    -------
    list
        ``[]`` when neither is set; else ``theta[idx] >= low`` / ``theta[idx] <= high`` rows.
    """
    positive = bool(getattr(est, "positive", False))
    bounds = getattr(est, "bounds", None)
    if not positive and bounds is None:
        return []
    at = est._intercept_index()
    columns = np.arange(n_columns)
    coef_cols = columns if at is None else np.delete(columns, at)
    n = coef_cols.size
    low, high = np.full(n, -np.inf), np.full(n, np.inf)
    if bounds is not None:
        scale = _coefficient_scales(est, n)
        low, high = _side(bounds[0], n, "low") / scale, _side(bounds[1], n, "high") / scale
    if positive:
        low = np.maximum(low, 0.0)
    if np.any(low > high):
        raise ModelError("positive=True and bounds leave a coefficient no value (its upper bound is negative)")
    index = (coef_cols[:, None] * outputs + np.arange(outputs)[None, :]).ravel()
    low_k, high_k = np.repeat(low, outputs), np.repeat(high, outputs)
    out: list[Any] = []
    if np.any(np.isfinite(low_k)):
        keep = np.isfinite(low_k)
        out.append(theta[index[keep]] >= low_k[keep])
    if np.any(np.isfinite(high_k)):
        keep = np.isfinite(high_k)
        out.append(theta[index[keep]] <= high_k[keep])
    return out



def positive_l1_polytope(theta: Variable, radius: float, intercept: int | None) -> VertexPolytope:
    """``{‖θ‖₁ ≤ r, coefficients ≥ 0}`` by its vertices: ``r·e_j`` per coefficient, ``±r·e_i`` for the
    intercept (or the origin without one), so the LASSO's vertex-selecting Frank–Wolfe runs on it."""
    p = theta.size
    eye = radius * np.eye(p)
    if intercept is None:
        return VertexPolytope(np.vstack([eye, np.zeros((1, p))]), variable=theta)
    i = intercept % p
    return VertexPolytope(np.vstack([eye, -eye[i:i + 1]]), variable=theta)
