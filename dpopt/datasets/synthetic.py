"""Small synthetic data sets whose rows satisfy the declared bounds by construction.

Each generator draws a row direction from a standard Gaussian, normalizes it
in the declared norm and scales it by a radius drawn uniformly from
``[0, x_bound)``, so ``‖x‖ ≤ x_bound`` holds for every row without clipping.
The true parameter is returned alongside the :class:`~dpopt.modeling.dataset.Dataset`.
Synthetic data are not private data: ``seed`` only makes them reproducible.
"""

from __future__ import annotations

import math
import operator
from typing import Literal

import numpy as np

from dpopt.errors import ModelError
from dpopt.modeling.dataset import Dataset
from dpopt.modeling.norms import dual_order, norm_order

__all__ = ["make_classification", "make_regression"]

Norm = Literal[1, 2, "inf"]


def _positive_int(value: object, name: str) -> int:
    if isinstance(value, bool):
        raise ModelError(f"{name} must be a positive integer, got {value!r}")
    try:
        v = operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise ModelError(f"{name} must be a positive integer, got {value!r}") from None
    if v <= 0:
        raise ModelError(f"{name} must be a positive integer, got {value!r}")
    return v


def _positive_float(value: object, name: str) -> float:
    try:
        v = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ModelError(f"{name} must be a positive finite number, got {value!r}") from None
    if not math.isfinite(v) or v <= 0:
        raise ModelError(f"{name} must be a positive finite number, got {value!r}")
    return v


def _nonnegative_float(value: object, name: str) -> float:
    try:
        v = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ModelError(f"{name} must be a non-negative finite number, got {value!r}") from None
    if not math.isfinite(v) or v < 0:
        raise ModelError(f"{name} must be a non-negative finite number, got {value!r}")
    return v


def _rows_in_ball(
    rng: np.random.Generator, n: int, d: int, x_bound: float, order: float
) -> np.ndarray:
    """n rows with ‖x‖_order < x_bound: Gaussian direction, radius uniform on [0, x_bound)."""
    g = rng.standard_normal((n, d))
    norms = np.linalg.norm(g, ord=order, axis=1)
    norms[norms == 0.0] = 1.0  # probability zero; keeps the row at the origin
    radius = x_bound * rng.random(n)
    return g * (radius / norms)[:, None]


def _parameter(
    rng: np.random.Generator, d: int, order: float, scale: float, sparsity: int | None
) -> np.ndarray:
    """A Gaussian parameter (optionally ``sparsity``-sparse) with dual norm ``scale``."""
    support = np.arange(d) if sparsity is None else rng.choice(d, size=sparsity, replace=False)
    theta = np.zeros(d)
    theta[support] = rng.standard_normal(support.shape[0])
    dual = float(np.linalg.norm(theta, ord=dual_order(order)))
    if dual == 0.0:  # probability zero
        theta[support[0]] = 1.0
        dual = 1.0
    return theta * (scale / dual)


def make_regression(
    n: int,
    d: int,
    *,
    x_bound: float = 1.0,
    x_norm: Norm = 2,
    y_bound: float = 1.0,
    noise: float = 0.1,
    sparsity: int | None = None,
    seed: int | None = None,
) -> tuple[Dataset, np.ndarray]:
    """A linear regression data set within declared bounds.

    Parameters
    ----------
    n, d : int
        Number of rows and features (positive).
    x_bound : float
        Declared bound on the ``x_norm``-norm of each row.
    x_norm : {1, 2, "inf"}
        Norm of the row bound.
    y_bound : float
        Declared bound on ``|y|``; labels are clipped to ``[-y_bound, y_bound]``.
    noise : float
        Standard deviation of the Gaussian noise added to ``⟨x, θ*⟩``
        (in label units, non-negative).
    sparsity : int, optional
        Number of non-zero entries of ``θ*`` (between 1 and ``d``); dense if None.
    seed : int, optional
        Seed of ``np.random.default_rng`` (reproducibility only).

    Returns
    -------
    data : Dataset
        Rows with ``‖x‖ < x_bound`` in the declared norm by construction
        (Gaussian direction, radius uniform on ``[0, x_bound)``), labels
        ``y = clip(⟨x, θ*⟩ + noise·ξ, −y_bound, y_bound)`` with ξ standard
        normal; declared ``x_bound``, ``x_norm`` and ``y_bound``.
    theta : numpy.ndarray, shape (d,)
        The true parameter θ*, scaled so that its dual norm is
        ``y_bound / x_bound``; hence ``|⟨x, θ*⟩| ≤ y_bound`` before noise.

    Raises
    ------
    ModelError
        If ``n`` or ``d`` is not a positive integer, a bound is not positive,
        ``noise`` is negative, ``sparsity`` is outside ``[1, d]`` or the norm
        is unknown.

    Examples
    --------
    >>> from dpopt.datasets import make_regression
    >>> data, theta = make_regression(100, 5, x_norm="inf", seed=0)
    >>> data.n, data.n_features, theta.shape
    (100, 5, (5,))
    """
    n = _positive_int(n, "n")
    d = _positive_int(d, "d")
    xb = _positive_float(x_bound, "x_bound")
    yb = _positive_float(y_bound, "y_bound")
    sigma = _nonnegative_float(noise, "noise")
    order = norm_order(x_norm)
    k: int | None = None
    if sparsity is not None:
        k = _positive_int(sparsity, "sparsity")
        if k > d:
            raise ModelError(f"sparsity must be between 1 and d={d}, got {k}")
    rng = np.random.default_rng(seed)
    X = _rows_in_ball(rng, n, d, xb, order)
    theta = _parameter(rng, d, order, yb / xb, k)
    y = np.clip(X @ theta + sigma * rng.standard_normal(n), -yb, yb)
    return Dataset(X, y, x_bound=xb, x_norm=x_norm, y_bound=yb), theta


def make_classification(
    n: int,
    d: int,
    *,
    x_bound: float = 1.0,
    x_norm: Norm = 2,
    margin_noise: float = 0.1,
    seed: int | None = None,
) -> tuple[Dataset, np.ndarray]:
    """A linearly separable-up-to-noise binary classification data set.

    Parameters
    ----------
    n, d : int
        Number of rows and features (positive).
    x_bound : float
        Declared bound on the ``x_norm``-norm of each row.
    x_norm : {1, 2, "inf"}
        Norm of the row bound.
    margin_noise : float
        Standard deviation of the Gaussian noise added to the normalized
        margin ``⟨x, θ*⟩ / x_bound ∈ [−1, 1]`` before taking its sign
        (non-negative; 0 gives separable data).
    seed : int, optional
        Seed of ``np.random.default_rng`` (reproducibility only).

    Returns
    -------
    data : Dataset
        Rows with ``‖x‖ < x_bound`` in the declared norm by construction,
        labels ``y = sign(⟨x, θ*⟩ / x_bound + margin_noise·ξ)`` in {−1, +1}
        (a zero score counts as +1), declared ``y_bound = 1``.
    theta : numpy.ndarray, shape (d,)
        The true direction θ*, with dual norm 1.

    Raises
    ------
    ModelError
        If ``n`` or ``d`` is not a positive integer, ``x_bound`` is not
        positive, ``margin_noise`` is negative or the norm is unknown.

    Examples
    --------
    >>> from dpopt.datasets import make_classification
    >>> data, theta = make_classification(50, 3, seed=1)
    >>> data.labels_are_binary()
    True
    """
    n = _positive_int(n, "n")
    d = _positive_int(d, "d")
    xb = _positive_float(x_bound, "x_bound")
    sigma = _nonnegative_float(margin_noise, "margin_noise")
    order = norm_order(x_norm)
    rng = np.random.default_rng(seed)
    X = _rows_in_ball(rng, n, d, xb, order)
    theta = _parameter(rng, d, order, 1.0, None)
    score = X @ theta / xb + sigma * rng.standard_normal(n)
    y = np.where(score >= 0.0, 1.0, -1.0)
    return Dataset(X, y, x_bound=xb, x_norm=x_norm, y_bound=1.0), theta
