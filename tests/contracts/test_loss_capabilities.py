"""The capabilities a loss declares on its class, checked against what the loss does.

``Loss.qp_representable`` (read by the QP-only backends' :func:`is_qp`) must match cvxpy's own
verdict on the loss's encoding; ``Loss.dphi_at_zero_bound()`` (the a-priori fallback's start)
must bound |φ'(0, y)| over every admissible label, and the closed forms must be attained;
``Loss.quadratic`` (mirror descent's and the dual Frank–Wolfe's exact Gram paths) must hold
exactly where φ'' is one constant, with :meth:`Loss.gradient_from_moments` the gradient; a
declared ``conjugate_known`` must give the supremum that defines φ*.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import dpopt as dp
from dpopt.backends.cvxpy_backend import is_qp
from dpopt.compile.cvxpy_program import compile_cvxpy, loss_phi
from dpopt.discovery import import_package, subclasses
from dpopt.modeling.losses import Loss

import_package("dpopt.modeling")
LOSSES = subclasses(Loss)
#: settings a loss needs besides the data and the variable
REQUIRED: dict[str, dict[str, Any]] = {"MultinomialLogisticLoss": {"classes": 3}}


def _loss(cls: type[Loss], *, y_bound: float = 1.5, h: float | None = None) -> Loss:
    kwargs = dict(REQUIRED.get(cls.__name__, {}))
    if h is not None:
        kwargs["h"] = h
    k = int(kwargs.get("classes", 1))
    rng = np.random.default_rng(0)
    y = rng.uniform(-y_bound, y_bound, 12) if k == 1 else rng.integers(0, k, 12).astype(float)
    data = dp.Dataset(rng.uniform(-1, 1, (12, 3)), y, x_bound=1.0, y_bound=y_bound)
    return cls(data, dp.Variable(3 * k), **kwargs)


def _encoded(cls: type) -> bool:
    return loss_phi.dispatch(cls) is not loss_phi.dispatch(Loss)


@pytest.mark.parametrize("cls", [c for c in LOSSES if _encoded(c)], ids=lambda c: c.__name__)
def test_qp_representable_is_cvxpys_verdict_on_the_encoding(cls: type[Loss]) -> None:
    problem = dp.Problem(_loss(cls), constraint=dp.LinfBall(3 * REQUIRED.get(cls.__name__, {}).get("classes", 1), 2.0))
    assert compile_cvxpy(problem).problem.is_qp() == cls.qp_representable
    assert is_qp(problem) == cls.qp_representable  # a box is polyhedral: the loss decides


def test_the_quadratic_and_piecewise_linear_losses_are_the_qp_ones() -> None:
    assert {c for c in LOSSES if c.qp_representable} == {dp.SquaredLoss, dp.HuberLoss, dp.HingeLoss}


@pytest.mark.parametrize("cls", LOSSES, ids=lambda c: c.__name__)
@pytest.mark.parametrize("y_bound", [0.3, 1.5])
def test_dphi_at_zero_bound_bounds_every_admissible_label(cls: type[Loss], y_bound: float) -> None:
    loss = _loss(cls, y_bound=y_bound)
    if loss.n_outputs > 1:
        pytest.skip("the vector-output loss keeps the default dphi_bound(0)")
    labels = np.array([-1.0, 1.0]) if loss.label_domain == "classes" else np.linspace(-y_bound, y_bound, 2001)
    observed = float(np.max(np.abs(loss.dphi(np.zeros(labels.size), labels))))
    declared = loss.dphi_at_zero_bound()
    assert observed <= declared * (1 + 1e-12)
    if type(loss).dphi_at_zero_bound is not Loss.dphi_at_zero_bound:  # a closed form: attained
        assert declared == pytest.approx(observed, rel=1e-12)


@pytest.mark.parametrize("h", [0.25, 0.5, 2.0, 4.0])
def test_the_smoothing_width_enters_the_closed_forms(h: float) -> None:
    hinge, huber = _loss(dp.SmoothedHingeLoss, h=h), _loss(dp.HuberLoss, h=h, y_bound=1.5)
    assert hinge.dphi_at_zero_bound() == min(1.0, 1.0 / h)
    assert huber.dphi_at_zero_bound() == min(h, 1.5)


@pytest.mark.parametrize("cls", [c for c in LOSSES if c.n_outputs == 1], ids=lambda c: c.__name__)
def test_quadratic_means_constant_curvature_and_the_moments_give_the_gradient(cls: type[Loss]) -> None:
    loss = _loss(cls)
    z = np.linspace(-4.0, 4.0, 41)
    labels = np.resize(loss.data.y, z.size)
    h = loss.d2phi(z, labels)
    constant = h is not None and loss.d2phi_bound() is not None and np.allclose(h, loss.d2phi_bound())
    assert cls.quadratic == bool(constant)  # declared exactly where φ'' is one constant
    if not cls.quadratic:
        with pytest.raises(dp.errors.ModelError, match="not quadratic"):
            loss.gradient_from_moments(np.zeros(3), np.eye(3), np.zeros(3))
        return
    X, y = loss.data.X, loss.data.y
    gram, linear = X.T @ X / loss.data.n, X.T @ loss.dphi(np.zeros(y.size), y) / loss.data.n
    for theta in np.random.default_rng(1).normal(size=(5, 3)):
        assert np.allclose(loss.gradient_from_moments(theta, gram, linear), loss.gradient(theta), atol=1e-12)


@pytest.mark.parametrize("cls", [c for c in LOSSES if c.conjugate_known], ids=lambda c: c.__name__)
def test_a_declared_conjugate_is_the_supremum(cls: type[Loss]) -> None:
    """φ*(a, y) = sup_z a z − φ(z, y), against a fine grid of z (a lower bound that gets close)."""
    loss = _loss(cls)
    z = np.linspace(-60.0, 60.0, 240_001)
    for y in np.unique(loss.data.y)[:3]:
        for a in (-0.9, -0.3, 0.0, 0.4, 0.8):
            grid = float(np.max(a * z - loss.phi(z, np.full_like(z, y))))
            exact = float(loss.conjugate(np.array([a]), np.array([y]))[0])
            if np.isinf(exact):
                assert grid > 10.0  # unbounded above: the grid's value grows with its range
                continue
            assert grid <= exact + 1e-9 and exact - grid <= 1e-6


def test_the_losses_without_a_conjugate_refuse_it() -> None:
    for cls in LOSSES:
        if not cls.conjugate_known:
            with pytest.raises(dp.errors.ModelError, match="conjugate"):
                _loss(cls).conjugate(np.zeros(1), np.zeros(1))
