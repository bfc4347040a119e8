"""Datasets with declared bounds (:mod:`dpopt.modeling.dataset`): refusals, clipping, immutability."""

import math

import numpy as np
import pytest

import dpopt as dp
from dpopt.errors import DataError, ModelError


def _data(n=20, d=3, seed=0, binary=True):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, d)) / np.sqrt(d)
    y = np.where(rng.uniform(size=n) > 0.5, 1.0, -1.0) if binary else rng.uniform(-1, 1, n)
    return dp.Dataset(X, y, x_bound=1.0, y_bound=1.0)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_dataset_refuses_non_finite_without_echoing_values(bad):
    X = np.ones((3, 2))
    X[1, 1] = bad
    with pytest.raises(DataError) as e:
        dp.Dataset(X, [1, -1, 1], x_bound=2.0)
    assert "NaN or inf" in str(e.value)


def test_dataset_shapes_and_bounds():
    with pytest.raises(DataError, match="rows"):
        dp.Dataset(np.ones((3, 2)), np.ones(4), x_bound=2.0)
    with pytest.raises(DataError, match="2-dimensional"):
        dp.Dataset(np.ones(3), np.ones(3), x_bound=2.0)
    for bad in (0, -1.0, math.nan, math.inf, None):
        with pytest.raises(ModelError):
            dp.Dataset(np.ones((3, 2)), np.ones(3), x_bound=bad)
    with pytest.raises(ModelError, match="unknown norm"):
        dp.Dataset(np.ones((3, 2)), np.ones(3), x_bound=2.0, x_norm=3)


def test_rows_outside_bound_are_refused_or_clipped_never_rebounded():
    secret = 123.456
    X = np.array([[secret, 0.0], [0.1, 0.2]])
    with pytest.raises(DataError) as e:
        dp.Dataset(X, [1.0, -1.0], x_bound=1.0, clip=False)
    assert "123" not in str(e.value)
    assert np.linalg.norm(dp.Dataset(X, [1.0, -1.0], x_bound=1.0).X[0]) == pytest.approx(1.0)  # the default maps
    d = dp.Dataset(X, [1.0, -1.0], x_bound=1.0, clip=True)
    assert np.linalg.norm(d.X[0]) == pytest.approx(1.0)
    assert np.allclose(d.X[1], [0.1, 0.2])  # inside rows untouched
    assert d.x_bound == 1.0  # the declared bound, not the data's
    dinf = dp.Dataset(np.array([[3.0, -0.5]]), [0.0], x_bound=1.0, x_norm="inf", clip=True)
    assert np.abs(dinf.X).max() <= 1.0 + 1e-12
    dy = dp.Dataset(np.zeros((2, 1)), [5.0, -0.2], x_bound=1.0, y_bound=1.0, clip=True)
    assert list(dy.y) == [1.0, -0.2]
    with pytest.raises(DataError):
        dp.Dataset(np.zeros((2, 1)), [5.0, -0.2], x_bound=1.0, y_bound=1.0, clip=False)


def test_dataset_is_immutable_and_neighbours_share_bounds():
    d = _data()
    with pytest.raises(ValueError):
        d.X[0, 0] = 5.0
    d2 = d.replace_row(0, np.zeros(3), 1.0)
    assert d2.n == d.n and d2.x_bound == d.x_bound and np.all(d2.X[0] == 0)
    assert np.all(d2.X[1:] == d.X[1:])


def test_norm_conversion_uses_dimension_only():
    d = dp.Dataset(np.zeros((2, 4)), [0, 0], x_bound=1.0, x_norm="inf")
    assert d.x_bound_in(2) == pytest.approx(2.0)  # √d ‖x‖∞
    assert d.x_bound_in(1) == pytest.approx(4.0)
    assert d.x_bound_in("inf") == 1.0
