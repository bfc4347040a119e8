""":class:`dpopt.Problem`: immutable, and it validates its parts."""

import math

import numpy as np
import pytest

import dpopt as dp
from dpopt.errors import ModelError


def _data(n=20, d=3, seed=0, binary=True):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, d)) / np.sqrt(d)
    y = np.where(rng.uniform(size=n) > 0.5, 1.0, -1.0) if binary else rng.uniform(-1, 1, n)
    return dp.Dataset(X, y, x_bound=1.0, y_bound=1.0)


def test_problem_is_immutable_and_validates():
    d = _data()
    th = dp.Variable(3)
    p = dp.Problem(dp.LogisticLoss(d, th), constraint=dp.L2Ball(th, 1.0), regularizer=dp.L2Squared(th, 0.1))
    with pytest.raises(AttributeError):
        p.constraint = None  # type: ignore[misc]
    assert p.strong_convexity == pytest.approx(0.1)
    assert p.smoothness == pytest.approx(0.25 + 0.1)
    with pytest.raises(ModelError, match="dimension"):
        dp.Problem(dp.LogisticLoss(d, th), constraint=dp.L2Ball(4, 1.0))
    with pytest.raises(ModelError, match="at most once"):
        dp.Problem(dp.LogisticLoss(d, th), regularizer=(dp.L2Squared(th, 0.1), dp.L2Squared(th, 0.2)))
    for bad in (0.0, -1.0, math.nan):
        with pytest.raises(ModelError):
            dp.L2Squared(th, bad)
