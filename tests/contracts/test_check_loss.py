"""``dpopt.testing.check_loss``: every built-in loss passes over several domains and row norms, and
each deliberately wrong loss below is caught, by the name of what it gets wrong."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import cvxpy as cp
import numpy as np
import pytest
from scipy.special import expit

import dpopt as dp
from dpopt.compile.cvxpy_program import loss_phi
from dpopt.discovery import import_package, subclasses
from dpopt.errors import ModelError
from dpopt.modeling.losses import Loss, LossConstants
from dpopt.testing import LossCheckReport, check_loss

D = 3
EVERY_CHECK = {"lipschitz_l2", "lipschitz_l1", "dphi_bound", "hessian_bound", "d2phi_bound",
               "strong_convexity", "convexity", "curvature", "dphi", "d2phi", "value_at_zero_bound",
               "value", "gradient", "cvxpy"}


import_package("dpopt.modeling")  # a loss module nothing imports yet is found too
BUILTIN = subclasses(Loss)  # every concrete Loss the dpopt package defines


def _data(norm: Any = 2, *, n: int = 30, seed: int = 1, labels: int | None = None) -> dp.Dataset:
    """Rows in [−1, 1]^D (clipped onto the declared bound); real labels, or class indices 0..labels−1."""
    rng = np.random.default_rng(seed)
    y = rng.uniform(-1.5, 1.5, n) if labels is None else rng.integers(0, labels, n).astype(float)
    return dp.Dataset(rng.uniform(-1, 1, (n, D)), y, x_bound=1.0, x_norm=norm, y_bound=1.0)


#: (row norm, domain of θ) pairs the built-in losses are checked over
DOMAINS: dict[str, tuple[Any, Callable[[dp.Variable], Any]]] = {
    "l2-rows-radius-1": (2, lambda th: 1.0),
    "linf-rows-l1-ball": ("inf", lambda th: dp.L1Ball(th, 2.0)),
    "l1-rows-linf-ball": (1, lambda th: dp.LinfBall(th, 0.5)),
    "unbounded": (2, lambda th: None),
    "orthant": (2, lambda th: dp.NonNegative(th)),
    "simplex": (2, lambda th: dp.Simplex(th, 3.0)),
}


#: keywords a built-in loss needs beyond (data, variable)
REQUIRED: dict[str, dict[str, Any]] = {"MultinomialLogisticLoss": {"classes": 3}}


def _builtin(cls: type[Loss], norm: Any = 2) -> Loss:
    kwargs = REQUIRED.get(cls.__name__, {})
    k = int(kwargs.get("classes", 1))
    return cls(_data(norm, labels=k if k > 1 else None), dp.Variable(D * k), **kwargs)


def _encoded(cls: type) -> bool:
    """Whether a cvxpy encoding is registered for the class (or inherited)."""
    return loss_phi.dispatch(cls) is not loss_phi.dispatch(Loss)


def test_the_builtin_losses_are_found() -> None:
    assert {dp.SquaredLoss, dp.LogisticLoss, dp.HuberLoss, dp.SmoothedHingeLoss, dp.HingeLoss} <= set(BUILTIN)


@pytest.mark.parametrize("where", DOMAINS)
@pytest.mark.parametrize("cls", BUILTIN, ids=lambda c: c.__name__)
def test_every_builtin_loss_passes(cls: type[Loss], where: str) -> None:
    norm, domain = DOMAINS[where]
    loss = _builtin(cls, norm)
    report = check_loss(loss, domain=domain(loss.variable), n_points=16, cvxpy=_encoded(cls))
    assert isinstance(report, LossCheckReport) and report.passed
    assert {c.name for c in report.checks} == EVERY_CHECK
    optional = {"hessian_bound", "d2phi_bound", "curvature", "d2phi"} | ({"cvxpy"} if not _encoded(cls) else set())
    assert {c.name for c in report.checks if c.passed is None} <= optional


def test_the_bounds_are_attained_on_the_boundary() -> None:
    """The sampled extremes reach the declared constants where those are tight (squared loss, ℓ2)."""
    report = check_loss(dp.SquaredLoss(_data(), dp.Variable(D)), domain=2.0)
    checks = {c.name: c for c in report.checks}
    for name in ("lipschitz_l2", "lipschitz_l1", "dphi_bound", "hessian_bound", "curvature",
                 "value_at_zero_bound"):
        assert checks[name].observed == pytest.approx(checks[name].declared, rel=1e-6), name


def test_a_problem_gives_its_domain_and_the_report_reads() -> None:
    theta = dp.Variable(D)
    problem = dp.Problem(dp.HuberLoss(_data(), theta, h=0.5), constraint=dp.L2Ball(theta, 3.0))
    report = check_loss(problem.loss, domain=problem, seed=4)
    assert report.domain.startswith("L2Ball") and report.n_points > 0
    text = report.summary()
    assert text.startswith("check_loss(HuberLoss) over L2Ball") and "lipschitz_l2" in text
    assert check_loss(problem.loss, domain=problem, seed=4) == report  # the seed fixes the sampling


# ---------------------------------------------------------------------------
# Deliberately wrong losses, each with one mistake
# ---------------------------------------------------------------------------


class _UnderLipschitz(dp.LogisticLoss):
    """|φ'| reaches expit(1) ≈ 0.73 on the unit ball; the loss declares 1/2."""

    def dphi_bound(self, z_bound: float) -> float:
        return 0.5


class _WrongGradient(dp.LogisticLoss):
    """The sign slip expit(y z) for expit(−y z)."""

    def dphi(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        return -y * expit(y * z)


class _UnderSmooth(dp.LogisticLoss):
    """φ'' reaches 1/4 at z = 0; the loss declares 1/10."""

    def d2phi_bound(self) -> float:
        return 0.1


class _HuberTwice(dp.HuberLoss):
    """Its cvxpy encoding forgets that cvxpy's huber is twice the Huber loss."""


@loss_phi.register
def _(loss: _HuberTwice, z: cp.Expression, y: np.ndarray, c: np.ndarray) -> cp.Expression:
    return cp.sum(cp.multiply(c, cp.huber(z - y, loss.h)))  # type: ignore[arg-type]


class _OverStronglyConvex(dp.SquaredLoss):
    """Declares a strongly convex per-example loss, but its Hessian 2·xxᵀ has rank one."""

    def constants(self, domain_radius: dict[object, float] | None = None) -> LossConstants:
        return replace(super().constants(domain_radius), strong_convexity=0.5)


class _UnderValueAtZero(dp.SquaredLoss):
    """φ(0, y) = y² reaches 1 at the declared labels ±1; the loss declares 1/2."""

    def value_at_zero_bound(self) -> float:
        return 0.5


class _LogCosh(Loss):
    """A correct user loss, φ = log cosh(z − y), with no cvxpy encoding registered."""

    name = "log-cosh"

    def phi(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.logaddexp(z - y, y - z) - math.log(2.0)

    def dphi(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.tanh(z - y)

    def d2phi(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        return 1.0 / np.cosh(z - y) ** 2

    def dphi_bound(self, z_bound: float) -> float:
        assert self.data.y_bound is not None
        return math.tanh(z_bound + self.data.y_bound)

    def d2phi_bound(self) -> float:
        return 1.0


class _Sigmoid(_LogCosh):
    """The sigmoid loss expit(−y z): smooth and bounded, but not convex."""

    name = "sigmoid"
    label_domain = "classes"

    def phi(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        return expit(-y * z)

    def dphi(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        s = expit(-y * z)
        return -y * s * (1 - s)

    def d2phi(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        s = expit(-y * z)
        return s * (1 - s) * (1 - 2 * s)

    def dphi_bound(self, z_bound: float) -> float:
        return 0.25

    def d2phi_bound(self) -> float:
        return 0.1


WRONG: dict[str, tuple[type[Loss], dict[str, Any], str]] = {
    "under-declared Lipschitz": (_UnderLipschitz, {}, "lipschitz_l2"),
    "wrong gradient": (_WrongGradient, {}, "dphi"),
    "under-declared smoothness": (_UnderSmooth, {}, "hessian_bound"),
    "cvxpy encoding disagrees": (_HuberTwice, {}, "cvxpy"),
    "over-declared strong convexity": (_OverStronglyConvex, {}, "strong_convexity"),
    "under-declared value at zero": (_UnderValueAtZero, {}, "value_at_zero_bound"),
    "not convex": (_Sigmoid, {"cvxpy": False}, "convexity"),
    "no cvxpy encoding": (_LogCosh, {}, "cvxpy"),
}


@pytest.mark.parametrize("case", WRONG)
def test_a_wrong_loss_is_caught_by_name(case: str) -> None:
    cls, options, name = WRONG[case]
    with pytest.raises(AssertionError) as caught:
        check_loss(cls(_data(), dp.Variable(D)), n_points=16, **options)
    message = str(caught.value)
    assert message.startswith(cls.__name__) and f"\n  {name}: " in message


def test_one_error_lists_every_failed_check_with_declared_and_observed() -> None:
    with pytest.raises(AssertionError) as caught:
        check_loss(_UnderLipschitz(_data(), dp.Variable(D)))
    message = str(caught.value)
    assert "fails 3 check(s)" in message
    for name in ("lipschitz_l2", "lipschitz_l1", "dphi_bound"):
        assert f"\n  {name}: declared 0.5" in message or f"\n  {name}: declared 0.866025" in message, name
    assert "observed 0.731059" in message  # expit(1): the margin bound is attained


def test_each_mistake_fails_only_its_own_checks() -> None:
    """The cvxpy and value-at-zero mistakes touch nothing else (no check cries wolf)."""
    for cls, only in ((_HuberTwice, "cvxpy"), (_UnderValueAtZero, "value_at_zero_bound"),
                      (_LogCosh, "cvxpy")):
        with pytest.raises(AssertionError, match=r"fails 1 check\(s\)") as caught:
            check_loss(cls(_data(), dp.Variable(D)), n_points=16)
        assert f"\n  {only}: " in str(caught.value)


def test_a_loss_without_encoding_is_told_how_to_add_one_or_skip_it() -> None:
    loss = _LogCosh(_data(), dp.Variable(D))
    with pytest.raises(AssertionError, match="loss_phi.register"):
        check_loss(loss)
    report = check_loss(loss, cvxpy=False)
    assert {c.name: c.passed for c in report.checks}["cvxpy"] is None


def test_bad_arguments_are_refused() -> None:
    loss = dp.LogisticLoss(_data(), dp.Variable(D))
    for kwargs in ({"n_points": 1}, {"n_points": 2.5}, {"domain": "ball"}, {"domain": dp.L2Ball(D + 1, 1.0)}):
        with pytest.raises(ModelError):
            check_loss(loss, **kwargs)
    with pytest.raises(ModelError, match="dpopt Loss"):
        check_loss(dp.ZeroOneLoss)  # type: ignore[arg-type]
