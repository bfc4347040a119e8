"""The losses of :mod:`dpopt.modeling.losses`: constants from the declared bounds, gradients, label maps."""

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


def test_logistic_constants_from_declared_bounds():
    d = _data()
    th = dp.Variable(3)
    c = dp.LogisticLoss(d, th).constants()
    assert c.lipschitz_l2 == pytest.approx(1.0)
    assert c.hessian_bound == pytest.approx(0.25)
    assert c.strong_convexity == 0.0
    assert math.isinf(c.curvature)


def test_squared_loss_needs_a_bounded_domain_for_lipschitz():
    d = _data(binary=False)
    th = dp.Variable(3)
    loss = dp.SquaredLoss(d, th)
    assert math.isinf(loss.constants().lipschitz_l2)
    p = dp.Problem(loss, constraint=dp.L2Ball(th, 2.0))
    c = p.loss_constants()
    # |φ'| ≤ 2(‖x‖‖θ‖ + |y|) = 2(2 + 1), times ‖x‖₂ ≤ 1
    assert c.lipschitz_l2 == pytest.approx(6.0)
    assert c.hessian_bound == pytest.approx(2.0)
    assert c.curvature == pytest.approx(2.0 * 4.0**2)


@pytest.mark.parametrize(
    "make",
    [
        lambda d, t: dp.LogisticLoss(d, t),
        lambda d, t: dp.SmoothedHingeLoss(d, t, h=0.3),
        lambda d, t: dp.HuberLoss(d, t, h=0.5),
        lambda d, t: dp.SquaredLoss(d, t),
    ],
)
def test_loss_gradients_and_constants_hold_numerically(make):
    d = _data(n=50, seed=3)
    th = dp.Variable(3)
    loss = make(d, th)
    rng = np.random.default_rng(1)
    c = loss.constants({1: 1.0, 2: 1.0, "inf": 1.0})
    for _ in range(5):
        t = rng.uniform(-1, 1, 3) / np.sqrt(3)
        g = loss.gradient(t)
        e = np.eye(3) * 1e-6
        fd = np.array([(loss.value(t + e[i]) - loss.value(t - e[i])) / 2e-6 for i in range(3)])
        assert np.allclose(g, fd, atol=1e-5)
        # per-example gradients respect the Lipschitz constant
        z = d.X @ t
        per = np.abs(loss.dphi(z, d.y))[:, None] * np.abs(d.X)
        assert np.linalg.norm(per, axis=1).max() <= c.lipschitz_l2 + 1e-12


def test_classification_losses_map_labels_and_refuse_wrong_shapes():
    d = _data(binary=False)
    binary = dp.Dataset(d.X, np.where(d.y > 0, 1.0, -1.0), x_bound=1.0, y_bound=1.0)
    for make in (dp.LogisticLoss, dp.HingeLoss, lambda data, t: dp.SmoothedHingeLoss(data, t, h=0.3)):
        loss = make(d, dp.Variable(3))  # labels in (−1, 1) are mapped (y > 0 ↦ +1), never refused
        assert np.array_equal(loss.data.y, binary.y) and np.array_equal(loss.data.X, d.X)
        assert loss.constants() == make(binary, dp.Variable(3)).constants()
        assert loss.value(np.ones(3)) == make(binary, dp.Variable(3)).value(np.ones(3))
    with pytest.raises(ModelError, match="features"):
        dp.LogisticLoss(_data(), dp.Variable(4))
    nd = dp.Dataset(np.zeros((2, 3)), [0.0, 0.0], x_bound=1.0)
    with pytest.raises(ModelError, match="y_bound"):
        dp.SquaredLoss(nd, dp.Variable(3))
    assert dp.HingeLoss(_data(), dp.Variable(3)).constants().hessian_bound is None
