"""Constraints written with the variable, as a cvxpy user writes them, and their intersection.

Membership of the set a constraint list becomes is checked against an independent evaluation of
the same constraints (numpy on the written rows, cvxpy's own constraint objects on the same points),
and every refusal is one line naming the fix.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

import dpopt as dp
from dpopt.errors import ModelError
from dpopt.modeling.expressions import LinearConstraint, NormConstraint
from dpopt.modeling.intersection import Intersection


def _problem(theta: dp.Variable, constraint: object) -> dp.Problem:
    rng = np.random.default_rng(0)
    data = dp.Dataset(rng.uniform(-1, 1, (20, theta.size)), rng.uniform(-1, 1, 20), x_bound=float(theta.size),
                      y_bound=1.0)
    return dp.Problem(dp.SquaredLoss(data, theta), constraint=constraint)


def test_operators_build_the_rows_a_cvxpy_user_expects() -> None:
    w = dp.Variable(3)
    A = np.array([[1.0, 2.0, 0.0], [0.0, 1.0, -1.0]])
    c = A @ w <= np.array([1.0, 2.0])  # numpy's matmul defers to the variable
    assert isinstance(c, LinearConstraint) and np.array_equal(c.A, A) and np.array_equal(c.b, [1.0, 2.0])
    lower = np.zeros(3) <= w  # numpy's comparison defers too: the same as w >= 0
    assert isinstance(lower, LinearConstraint) and np.array_equal(lower.A, -np.eye(3))
    assert np.array_equal((0 <= w).A, lower.A)
    shifted = 2 * w - 1.0 <= 3.0  # 2w ≤ 4
    assert np.array_equal(shifted.A, 2 * np.eye(3)) and np.array_equal(shifted.b, np.full(3, 4.0))
    eq = w[1] == 0.5
    assert eq.equality and np.array_equal(eq.A, [[0.0, 1.0, 0.0]]) and np.array_equal(eq.b, [0.5])
    assert isinstance(dp.norm1(w) <= 2, NormConstraint) and (dp.norm(w, np.inf) <= 1).norm == "inf"
    assert isinstance(2 >= dp.norm2(w), NormConstraint)  # reflected, as in cvxpy


def test_variables_still_compare_and_hash_by_identity() -> None:
    w, v = dp.Variable(2), dp.Variable(2)
    assert (w == w) is True and (w == v) is False and (w != v) is True
    assert w in [v, w] and len({w, v, w}) == 2
    assert (w == None) is False and (w != "w") is True and w in [None, "w", w]  # noqa: E711 - other objects: identity


@pytest.mark.parametrize("make", [
    lambda w: w >= 0,
    lambda w: [w >= 0, dp.norm1(w) <= 2.0],
    lambda w: [w >= -0.5, w <= np.array([1.0, 0.2, 0.5, 2.0]), w[2] == 0],
    lambda w: [np.array([[1.0, 1.0, 0.0, 0.0], [0.0, 1.0, -1.0, 1.0]]) @ w <= 0.5, dp.norm2(w) <= 1.5],
    lambda w: [dp.NonNegative(w), dp.L1Ball(w, 5.0), np.ones(4) @ w == 1.0],
    lambda w: (dp.Box(w, -1.0, 1.0), dp.norm_inf(w) <= 0.5, dp.norm2(w) <= 0.8),
], ids=["orthant", "orthant-l1", "bounds-fixed", "rows-l2", "sets-and-equality", "tuple-of-balls"])
def test_the_set_of_a_list_is_the_intersection_of_what_was_written(make) -> None:
    w = dp.Variable(4)
    c = _problem(w, make(w)).constraint
    assert isinstance(c, dp.sets.ConstraintSet)
    written = make(w)
    items = written if isinstance(written, (list, tuple)) else [written]
    rng = np.random.default_rng(3)
    points = np.vstack([rng.uniform(-1.0, 1.0, (200, 4)), [c.project(3 * v) for v in rng.standard_normal((20, 4))]])
    inside = 0
    for p in points:
        expected = all(_holds(item, p) for item in items)
        assert c.contains(p, tol=1e-9) == expected or _near_boundary(items, p), (p, expected)
        inside += expected
    assert 0 < inside < len(points)  # both kinds of points were tried


def _holds(item: object, p: np.ndarray, tol: float = 1e-9) -> bool:
    """The written constraint evaluated directly (numpy on its rows; the sets by their definition)."""
    if isinstance(item, LinearConstraint):
        r = item.A @ p - item.b
        return bool(np.all(np.abs(r) <= tol)) if item.equality else bool(np.all(r <= tol))
    if isinstance(item, NormConstraint):
        return float(np.linalg.norm(p, {1: 1, 2: 2, "inf": np.inf}[item.norm])) <= item.radius + tol
    if isinstance(item, dp.NonNegative):
        return bool(np.all(p >= -tol))
    if isinstance(item, dp.Box):
        return bool(np.all(p >= item.low - tol) and np.all(p <= item.high + tol))
    if isinstance(item, dp.L1Ball):
        return float(np.abs(p).sum()) <= item.r + tol
    raise AssertionError(type(item))


def _near_boundary(items: list[object], p: np.ndarray) -> bool:
    """Within 1e-6 of some piece's boundary (where the two tolerances may disagree)."""
    return any(_holds(i, p, 1e-6) != _holds(i, p, -1e-6) for i in items)


def test_simple_lists_become_the_simple_sets() -> None:
    w = dp.Variable(3)
    assert isinstance(_problem(w, w >= 0).constraint, dp.NonNegative)
    assert isinstance(_problem(w, [w >= 0, w <= 2]).constraint, dp.Box)
    assert isinstance(_problem(w, [dp.norm1(w) <= 2]).constraint, dp.L1Ball)
    assert isinstance(_problem(w, [dp.norm_inf(w) <= 2]).constraint, dp.LinfBall)
    ball = dp.L2Ball(w, 1.0)
    assert _problem(w, [ball]).constraint is ball
    mixed = _problem(w, [w >= 0, dp.norm2(w) <= 1]).constraint
    assert isinstance(mixed, Intersection) and mixed.exact_projection and mixed.radius(2) == 1.0


@pytest.mark.parametrize("make, match", [
    (lambda w: cp.Variable(3) >= 0, "cvxpy"),
    (lambda w: [w >= 0, cp.norm(cp.Variable(3), 1) <= 1], "cvxpy"),
    (lambda w: np.ones(3) >= 0, "truth value"),
    (lambda w: w <= dp.Dataset(np.ones((2, 3)), np.ones(2), x_bound=2.0, y_bound=1.0), "cannot read data"),
    (lambda w: [w >= 0, "w <= 1"], "got str"),
    (lambda w: dp.Variable(3) >= 0, "different variable|one variable"),
    (lambda w: [w >= 1, w <= 0], "infeasible"),
    (lambda w: [dp.L1Ball(w, 1.0), dp.sets.GroupL1Ball(w, 1.0, [[0, 1], [2]])], "GroupL1Ball cannot be intersected"),
], ids=["cvxpy", "cvxpy-in-list", "bool-array", "data", "string", "other-variable", "infeasible", "unfoldable"])
def test_what_is_not_a_public_constraint_is_refused_in_one_line(make, match) -> None:
    w = dp.Variable(3)
    with pytest.raises(ModelError, match=match) as info:
        _problem(w, make(w))
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("write, match", [
    (lambda w: w != 0, "not a convex constraint"),
    (lambda w: dp.norm2(w) >= 1, "not a convex constraint"),
    (lambda w: w < 1, "strict"),
    (lambda w: dp.norm1(w[0:2]) <= 1, "whole variable"),
    (lambda w: w * w, "not affine"),
    (lambda w: dp.norm1(w) <= -1, "positive"),
], ids=["ne", "norm-ge", "strict", "norm-of-part", "product", "negative-radius"])
def test_non_convex_or_malformed_expressions_are_refused_when_written(write, match) -> None:
    with pytest.raises(ModelError, match=match):
        write(dp.Variable(3))


def test_a_constraint_has_no_truth_value() -> None:
    with pytest.raises(TypeError, match="no truth value"):
        bool(dp.Variable(2) >= 0)
