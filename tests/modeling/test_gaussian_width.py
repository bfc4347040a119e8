"""Gaussian widths of the sets (:mod:`dpopt.modeling.gaussian_width`): exact values against Monte Carlo and quadrature."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpopt.errors import ModelError
from dpopt.modeling.balls import L1Ball, L2Ball, LinfBall
from dpopt.modeling.boxes import Simplex
from dpopt.modeling.constraint_set import ConstraintSet, GaussianWidth
from dpopt.modeling.vertex_polytope import VertexPolytope


def _polytope_random() -> VertexPolytope:
    return VertexPolytope(np.random.default_rng(11).standard_normal((9, 4)))


# ---------------------------------------------------------------------------
# Gaussian width
# ---------------------------------------------------------------------------

EXACT_WIDTH_SETS = [
    L1Ball(1, 2.0),
    L1Ball(3, 1.0),
    L1Ball(40, 0.5),
    L2Ball(1, 1.0),
    L2Ball(4, 2.0),
    L2Ball(60, 1.0),
    LinfBall(1, 1.0),
    LinfBall(7, 3.0),
    Simplex(1, 2.0),
    Simplex(2, 1.0),
    Simplex(50, 3.0),
]


@pytest.mark.parametrize("s", EXACT_WIDTH_SETS, ids=repr)
def test_exact_widths_agree_with_monte_carlo(s: ConstraintSet) -> None:
    exact = s.gaussian_width()
    assert exact.method in ("closed-form", "quadrature")
    assert exact.low <= exact.value <= exact.high
    assert exact.high - exact.low <= 1e-8 * max(1.0, exact.value)
    mc = s.gaussian_width_monte_carlo(n_samples=20_000, confidence=0.9999, seed=123)
    assert mc.method == "monte-carlo" and mc.n_samples == 20_000 and mc.confidence == 0.9999
    assert mc.low - 1e-12 <= exact.value <= mc.high + 1e-12


def test_known_width_values() -> None:
    assert L2Ball(1, 1.0).gaussian_width().value == pytest.approx(math.sqrt(2.0 / math.pi), rel=1e-14)
    assert L2Ball(2, 1.0).gaussian_width().value == pytest.approx(math.sqrt(math.pi / 2.0), rel=1e-14)
    # no overflow and no cancellation for large p: E‖g‖ = √p (1 − 1/(4p) + O(p⁻²))
    big = L2Ball(10**8, 1.0).gaussian_width().value
    assert big == pytest.approx(1e4 * (1.0 - 0.25e-8), rel=1e-13)
    assert L2Ball(1000, 1.0).gaussian_width().value == pytest.approx(31.61487189698008, rel=1e-11)
    assert L1Ball(1, 1.0).gaussian_width().value == pytest.approx(math.sqrt(2.0 / math.pi), rel=1e-12)
    assert LinfBall(3, 2.0).gaussian_width().value == pytest.approx(6.0 * math.sqrt(2.0 / math.pi))
    assert Simplex(2).gaussian_width().value == pytest.approx(1.0 / math.sqrt(math.pi), rel=1e-12)
    assert Simplex(1).gaussian_width().value == 0.0
    # E max of 5 and 10 standard normals (tabulated order-statistic means)
    assert Simplex(5).gaussian_width().value == pytest.approx(1.1629644736, abs=1e-9)
    assert Simplex(10).gaussian_width().value == pytest.approx(1.5387527308, abs=1e-9)
    assert L2Ball(3, 1.0).gaussian_width().method == "closed-form"
    assert L1Ball(3, 1.0).gaussian_width().method == "quadrature"


def test_l1_width_is_of_order_sqrt_log_p() -> None:
    previous = 0.0
    for p in (10, 100, 10_000, 1_000_000):
        w = L1Ball(p, 1.0).gaussian_width().value
        s = Simplex(p).gaussian_width().value
        assert w > previous
        previous = w
        assert 0.7 * math.sqrt(2.0 * math.log(2 * p)) <= w <= math.sqrt(2.0 * math.log(2 * p))
        assert 0.6 * math.sqrt(2.0 * math.log(p)) <= s <= math.sqrt(2.0 * math.log(p))
        assert s < w


def test_polytope_width_is_monte_carlo_and_matches_quadrature() -> None:
    cross = VertexPolytope(L1Ball(6, 1.5).vertices())
    w = cross.gaussian_width(n_samples=20_000, confidence=0.9999, seed=5)
    assert w.method == "monte-carlo" and w.n_samples == 20_000
    assert w.low <= L1Ball(6, 1.5).gaussian_width().value <= w.high
    simplex = VertexPolytope(Simplex(7, 2.0).vertices())
    w = simplex.gaussian_width(n_samples=20_000, confidence=0.9999, seed=6)
    assert w.low <= Simplex(7, 2.0).gaussian_width().value <= w.high


def test_monte_carlo_is_deterministic_per_seed() -> None:
    P = _polytope_random()
    a = P.gaussian_width(n_samples=500, seed=3)
    assert a == P.gaussian_width(n_samples=500, seed=3)
    assert a != P.gaussian_width(n_samples=500, seed=4)
    assert a.low < a.value < a.high
    assert P.gaussian_width(n_samples=500, seed=None).n_samples == 500
    wider = P.gaussian_width(n_samples=500, seed=3, confidence=0.999)
    assert wider.value == a.value and wider.high - wider.low > a.high - a.low
    for kwargs in ({"n_samples": 1}, {"n_samples": 0}, {"confidence": 1.0}, {"confidence": 0.0},
                   {"seed": 1.5}):
        with pytest.raises(ModelError):
            P.gaussian_width(**kwargs)  # type: ignore[arg-type]


def test_gaussian_width_summary() -> None:
    assert "closed-form" in L2Ball(3, 1.0).gaussian_width().summary()
    assert "quadrature" in Simplex(3).gaussian_width().summary()
    assert "95% CI" in _polytope_random().gaussian_width(n_samples=100).summary()
    assert isinstance(L2Ball(3, 1.0).gaussian_width(), GaussianWidth)
