"""The synthetic generators of :mod:`dpopt.datasets.synthetic`: declared bounds, sparsity, determinism, validation."""

from __future__ import annotations

import numpy as np
import pytest

from dpopt.datasets import make_classification, make_regression
from dpopt.errors import ModelError

ORDERS = {1: 1.0, 2: 2.0, "inf": np.inf}


# ---------------------------------------------------------------------- synthetic


@pytest.mark.parametrize("norm", [1, 2, "inf"])
@pytest.mark.parametrize("x_bound", [0.5, 3.0])
def test_make_regression_bounds(norm: object, x_bound: float) -> None:
    data, theta = make_regression(
        400,
        7,
        x_bound=x_bound,
        x_norm=norm,  # type: ignore[arg-type]
        y_bound=0.7,
        noise=0.5,
        seed=1,
    )
    order = ORDERS[norm]
    assert data.X.shape == (400, 7) and theta.shape == (7,)
    assert data.x_norm == norm and data.x_bound == x_bound and data.y_bound == 0.7
    assert np.all(np.linalg.norm(data.X, ord=order, axis=1) <= x_bound)
    assert np.all(np.abs(data.y) <= 0.7)
    # the true parameter keeps |<x, theta>| <= y_bound: its dual norm is y_bound / x_bound
    dual = {1.0: np.inf, 2.0: 2.0, np.inf: 1.0}[order]
    assert np.linalg.norm(theta, ord=dual) == pytest.approx(0.7 / x_bound)
    assert np.all(np.abs(data.X @ theta) <= 0.7 + 1e-12)


def test_make_regression_noiseless_is_linear() -> None:
    data, theta = make_regression(50, 4, noise=0.0, y_bound=1.0, seed=2)
    np.testing.assert_allclose(data.y, data.X @ theta)


def test_make_regression_sparsity_and_determinism() -> None:
    data, theta = make_regression(100, 20, sparsity=3, seed=4)
    assert int(np.count_nonzero(theta)) == 3
    again, theta2 = make_regression(100, 20, sparsity=3, seed=4)
    np.testing.assert_array_equal(data.X, again.X)
    np.testing.assert_array_equal(theta, theta2)
    other, _ = make_regression(100, 20, sparsity=3, seed=5)
    assert not np.array_equal(data.X, other.X)


@pytest.mark.parametrize("norm", [1, 2, "inf"])
def test_make_classification_bounds(norm: object) -> None:
    data, theta = make_classification(300, 6, x_bound=2.0, x_norm=norm, seed=3)  # type: ignore[arg-type]
    order = ORDERS[norm]
    assert np.all(np.linalg.norm(data.X, ord=order, axis=1) <= 2.0)
    assert data.labels_are_binary() and data.y_bound == 1.0
    assert set(np.unique(data.y)) == {-1.0, 1.0}
    assert theta.shape == (6,)


def test_make_classification_separable_without_noise() -> None:
    data, theta = make_classification(200, 5, margin_noise=0.0, seed=6)
    assert np.all(data.y * (data.X @ theta) >= 0)


@pytest.mark.parametrize(
    ("n", "d"), [(0, 3), (-1, 3), (3, 0), (2.5, 3), (3, "4"), (True, 3), (3, None)]
)
@pytest.mark.parametrize("make", [make_regression, make_classification])
def test_generators_validate_sizes(make: object, n: object, d: object) -> None:
    with pytest.raises(ModelError):
        make(n, d)  # type: ignore[operator]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"sparsity": 0},
        {"sparsity": 6},
        {"noise": -0.1},
        {"x_bound": 0.0},
        {"y_bound": -1.0},
        {"x_norm": 3},
    ],
)
def test_make_regression_validates_options(kwargs: dict[str, object]) -> None:
    with pytest.raises(ModelError):
        make_regression(10, 5, **kwargs)  # type: ignore[arg-type]


def test_make_classification_validates_options() -> None:
    with pytest.raises(ModelError):
        make_classification(10, 5, margin_noise=-1.0)
    with pytest.raises(ModelError):
        make_classification(10, 5, x_norm="l2")  # type: ignore[arg-type]
