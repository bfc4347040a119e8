"""Modeling layer: datasets with declared bounds, losses and their constants, problems."""

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
