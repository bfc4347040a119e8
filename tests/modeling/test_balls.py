"""Tests for the sets of dpopt.modeling.balls, .boxes and .vertex_polytope: oracles, projections,
geometry and Gaussian widths."""

from __future__ import annotations

import dataclasses
import itertools
import math

import cvxpy as cp
import numpy as np
import pytest

from dpopt.errors import ModelError
from dpopt.modeling.balls import L1Ball, L2Ball, LinfBall
from dpopt.modeling.boxes import Simplex
from dpopt.modeling.constraint_set import ConstraintSet
from dpopt.modeling.variable import Variable
from dpopt.modeling.vertex_polytope import VertexPolytope

NORMS = (1, 2, "inf")
ORD = {1: 1, 2: 2, "inf": np.inf}


def _polytope_random() -> VertexPolytope:
    return VertexPolytope(np.random.default_rng(11).standard_normal((9, 4)))


def _polytope_degenerate() -> VertexPolytope:
    # repeated rows, a non-extreme row and an affinely dependent set in ℝ^5
    base = np.random.default_rng(12).standard_normal((4, 5))
    return VertexPolytope(np.vstack([base, base[:2], 0.5 * (base[0] + base[3])]))


SETS = {
    "l1": lambda: L1Ball(Variable(7), 1.5),
    "l1-p1": lambda: L1Ball(1, 0.5),
    "l2": lambda: L2Ball(6, 2.0),
    "linf": lambda: LinfBall(5, 0.7),
    "simplex": lambda: Simplex(8, 2.5),
    "simplex-p1": lambda: Simplex(1),
    "polytope": _polytope_random,
    "polytope-degenerate": _polytope_degenerate,
    "cube": lambda: VertexPolytope(LinfBall(3, 1.0).vertices()),
    "cross": lambda: VertexPolytope(np.vstack([np.eye(4), -np.eye(4)]) * 2.0),
}


@pytest.fixture(params=sorted(SETS))
def cset(request: pytest.FixtureRequest) -> ConstraintSet:
    return SETS[request.param]()


def _points(s: ConstraintSet, rng: np.random.Generator, n: int = 40) -> np.ndarray:
    """Random points of s, including some on the boundary."""
    if isinstance(s, L2Ball):
        d = rng.standard_normal((n, s.dim))
        d /= np.linalg.norm(d, axis=1, keepdims=True)
        rad = s.r * rng.uniform(size=(n, 1)) ** (1.0 / s.dim)
        rad[: n // 4] = s.r
        return d * rad
    V = s.vertices()
    weights = rng.dirichlet(np.full(V.shape[0], 0.3), size=n)
    return weights @ V


def _gradients(dim: int, rng: np.random.Generator, n: int = 25) -> np.ndarray:
    G = rng.standard_normal((n, dim))
    G[0] = 0.0
    if dim > 1:
        G[1] = 0.0
        G[1, 0] = G[1, -1] = 1.0  # a tie
    return G


# ---------------------------------------------------------------------------
# LMO and support function
# ---------------------------------------------------------------------------


def test_lmo_is_feasible_and_minimises(cset: ConstraintSet) -> None:
    rng = np.random.default_rng(0)
    pts = _points(cset, rng)
    verts = cset.vertices() if math.isfinite(cset.n_vertices) else np.empty((0, cset.dim))
    for g in _gradients(cset.dim, rng):
        u = cset.lmo(g)
        assert u.shape == (cset.dim,)
        assert cset.contains(u)
        value = float(g @ u)
        assert np.all(value <= pts @ g + 1e-12)
        assert np.all(value <= verts @ g + 1e-12)


def test_support_is_consistent_with_lmo(cset: ConstraintSet) -> None:
    rng = np.random.default_rng(1)
    pts = _points(cset, rng)
    for g in _gradients(cset.dim, rng):
        h = cset.support(g)
        assert isinstance(h, float)
        assert h == pytest.approx(float(g @ cset.lmo(-g)), abs=1e-12, rel=1e-12)
        assert h == pytest.approx(-float(-g @ cset.lmo(-g)), abs=1e-12, rel=1e-12)
        assert np.all(pts @ g <= h + 1e-12)


def test_lmo_conventions_at_zero_and_ties() -> None:
    assert np.array_equal(L1Ball(3, 2.0).lmo(np.zeros(3)), [2.0, 0.0, 0.0])
    assert np.array_equal(L1Ball(3, 2.0).lmo([1.0, -3.0, 3.0]), [0.0, 2.0, 0.0])
    assert np.array_equal(L2Ball(3, 2.0).lmo(np.zeros(3)), [2.0, 0.0, 0.0])
    assert np.array_equal(LinfBall(3, 2.0).lmo([1.0, 0.0, -1.0]), [-2.0, 2.0, 2.0])
    assert np.array_equal(Simplex(3, 2.0).lmo([1.0, -1.0, -1.0]), [0.0, 2.0, 0.0])
    assert np.allclose(L2Ball(2, 5.0).lmo([3.0, 4.0]), [-3.0, -4.0])


def test_lmo_returns_a_vertex(cset: ConstraintSet) -> None:
    if not math.isfinite(cset.n_vertices):
        pytest.skip("the l2 ball has no finite vertex list")
    verts = cset.vertices()
    for g in _gradients(cset.dim, np.random.default_rng(2)):
        u = cset.lmo(g)
        assert np.min(np.abs(verts - u).max(axis=1)) == 0.0


def test_lmo_and_support_validate_input() -> None:
    s = L1Ball(3, 1.0)
    for bad in (np.zeros(4), np.zeros((3, 1)), [np.nan, 0.0, 0.0], [np.inf, 0, 0], "abc"):
        with pytest.raises(ModelError):
            s.lmo(bad)
        with pytest.raises(ModelError):
            s.support(bad)
        with pytest.raises(ModelError):
            s.project(bad)
    assert s.lmo([0, 1, 0]).dtype == np.float64  # lists and ints are accepted


# ---------------------------------------------------------------------------
# Projection
# ---------------------------------------------------------------------------


def _reference_projection(s: ConstraintSet, v: np.ndarray) -> np.ndarray:
    """A cvxpy solve of min ‖z − v‖² over s (OSQP with polishing; Clarabel for the l2 ball)."""
    if isinstance(s, VertexPolytope):
        V = s.vertices()
        lam = cp.Variable(V.shape[0], nonneg=True)
        problem = cp.Problem(cp.Minimize(cp.sum_squares(V.T @ lam - v)), [cp.sum(lam) == 1])
        problem.solve(solver="OSQP", eps_abs=1e-12, eps_rel=1e-12, max_iter=200_000, polishing=True)
        return V.T @ lam.value
    z = cp.Variable(s.dim)
    if isinstance(s, L2Ball):
        problem = cp.Problem(cp.Minimize(cp.sum_squares(z - v)), [cp.norm(z, 2) <= s.r])
        problem.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
        return z.value
    if isinstance(s, L1Ball):
        constraints = [cp.norm(z, 1) <= s.r]
    elif isinstance(s, LinfBall):
        constraints = [cp.abs(z) <= s.r]
    else:
        assert isinstance(s, Simplex)
        constraints = [z >= 0, cp.sum(z) == s.scale]
    problem = cp.Problem(cp.Minimize(cp.sum_squares(z - v)), constraints)
    problem.solve(solver="OSQP", eps_abs=1e-12, eps_rel=1e-12, max_iter=200_000, polishing=True)
    return z.value


def test_projection_matches_cvxpy(cset: ConstraintSet) -> None:
    rng = np.random.default_rng(3)
    scale = 3.0 * max(1.0, cset.radius(2))
    for _ in range(4):
        v = scale * rng.standard_normal(cset.dim)
        x = cset.project(v)
        ref = _reference_projection(cset, v)
        assert np.linalg.norm(x - ref) <= 1e-6
        assert cset.contains(x)


def test_projection_is_idempotent_and_identity_inside(cset: ConstraintSet) -> None:
    rng = np.random.default_rng(4)
    for v in 4.0 * rng.standard_normal((10, cset.dim)):
        x = cset.project(v)
        assert np.linalg.norm(cset.project(x) - x) <= 1e-9
        assert np.linalg.norm(x - v) <= np.linalg.norm(cset.center() - v) + 1e-9
    for u in _points(cset, rng, n=10):
        assert np.linalg.norm(cset.project(u) - u) <= 1e-9


def test_sort_based_projections_large_dimension() -> None:
    rng = np.random.default_rng(5)
    v = 3.0 * rng.standard_normal(2_000)
    for s in (Simplex(2_000, 4.0), L1Ball(2_000, 4.0)):
        x = s.project(v)
        target = np.abs(v) if isinstance(s, L1Ball) else v
        # optimality: x = sign·max(target − τ, 0) with τ found by bisection
        lo, hi = -10.0, 10.0
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if np.maximum(target - mid, 0).sum() > 4.0 else (lo, mid)
        expected = np.maximum(target - 0.5 * (lo + hi), 0.0)
        if isinstance(s, L1Ball):
            expected *= np.sign(v)
        assert np.allclose(x, expected, atol=1e-12)


def test_polytope_projection_bound_is_certified() -> None:
    rng = np.random.default_rng(6)
    P = _polytope_random()
    for v in 3.0 * rng.standard_normal((5, P.dim)):
        x, bound = P.project_with_bound(v)
        ref = _reference_projection(P, v)
        assert 0.0 <= bound <= 1e-7
        assert np.linalg.norm(x - ref) <= bound + 1e-9
    # an iteration cap that is too small warns and still returns a feasible point with a valid bound
    v = 3.0 * np.random.default_rng(6).standard_normal((2, P.dim))[1]
    with pytest.warns(RuntimeWarning, match="max_iter"):
        x, bound = P.project_with_bound(v, max_iter=1)
    assert P.contains(x) and np.linalg.norm(x - P.project(v)) <= bound
    with pytest.raises(ModelError):
        P.project_with_bound(np.zeros(P.dim), tol=0.0)
    with pytest.raises(ModelError):
        P.project_with_bound(np.zeros(P.dim), max_iter=0)


def test_single_point_polytope() -> None:
    P = VertexPolytope([[1.0, -2.0]])
    assert np.array_equal(P.project([5.0, 5.0]), [1.0, -2.0])
    assert P.diameter() == 0.0
    assert P.radius(1) == 3.0
    assert P.contains([1.0, -2.0]) and not P.contains([1.0, -1.9])


def test_contains() -> None:
    s = L1Ball(3, 1.0)
    assert s.contains([0.5, -0.5, 0.0])
    assert s.contains([1.0 + 1e-12, 0.0, 0.0])
    assert not s.contains([1.0 + 1e-6, 0.0, 0.0])
    assert not s.contains([np.nan, 0.0, 0.0])
    with pytest.raises(ModelError):
        s.contains(np.zeros(2))
    with pytest.raises(ModelError):
        s.contains(np.zeros(3), tol=-1.0)
    assert Simplex(2).contains([0.5, 0.5]) and not Simplex(2).contains([0.5, 0.6])
    assert not Simplex(2).contains([1.5, -0.5])
    assert LinfBall(2, 1.0).contains([1.0, -1.0]) and not LinfBall(2, 1.0).contains([1.1, 0.0])
    # the tolerance scales with the set
    assert L2Ball(2, 1e8).contains([1e8 + 1e-3, 0.0])


# ---------------------------------------------------------------------------
# Geometry: centre, radii, diameters, vertices, symmetry
# ---------------------------------------------------------------------------


def test_center_is_in_set(cset: ConstraintSet) -> None:
    c = cset.center()
    assert c.shape == (cset.dim,)
    assert cset.contains(c)


def test_centers() -> None:
    assert np.array_equal(L1Ball(3, 2.0).center(), np.zeros(3))
    assert np.allclose(Simplex(4, 2.0).center(), 0.5)
    assert np.allclose(VertexPolytope([[0.0, 0.0], [2.0, 0.0], [1.0, 3.0]]).center(), [1.0, 1.0])


@pytest.mark.parametrize("norm", NORMS)
def test_radius_and_diameter_against_vertices(cset: ConstraintSet, norm: object) -> None:
    if not math.isfinite(cset.n_vertices):
        pytest.skip("checked in closed form in test_l2_ball_radii")
    V = cset.vertices()
    radius = max(np.linalg.norm(v, ORD[norm]) for v in V)
    diameter = max(np.linalg.norm(u - v, ORD[norm]) for u, v in itertools.product(V, V))
    assert cset.radius(norm) == pytest.approx(radius, rel=1e-12, abs=1e-12)
    assert cset.diameter(norm) == pytest.approx(diameter, rel=1e-12, abs=1e-12)


def test_l2_ball_radii() -> None:
    s = L2Ball(9, 2.0)
    assert s.radius(2) == 2.0 and s.radius("inf") == 2.0 and s.radius(1) == pytest.approx(6.0)
    assert s.diameter(1) == pytest.approx(12.0) and s.diameter(2) == 4.0 and s.diameter("inf") == 4.0
    pts = _points(s, np.random.default_rng(7), n=200)
    for norm in NORMS:
        assert np.all(np.linalg.norm(pts, ORD[norm], axis=1) <= s.radius(norm) + 1e-12)
    assert np.linalg.norm(np.full(9, 2.0 / 3.0), 1) == pytest.approx(s.radius(1))  # attained


def test_closed_form_geometry() -> None:
    assert Simplex(5, 3.0).diameter(2) == pytest.approx(3.0 * math.sqrt(2.0))
    assert Simplex(5, 3.0).radius(2) == 3.0
    assert L1Ball(5, 3.0).diameter(2) == 6.0
    assert LinfBall(4, 3.0).radius(2) == 6.0 and LinfBall(4, 3.0).radius(1) == 12.0
    assert Simplex(1, 3.0).diameter(1) == 0.0
    assert L1Ball(3, 1.0).radius(np.inf) == 1.0  # math.inf is accepted for "inf"
    for bad in (3, 0, "l2", None, True):
        with pytest.raises(ModelError):
            L1Ball(3, 1.0).radius(bad)  # type: ignore[arg-type]
        with pytest.raises(ModelError):
            L1Ball(3, 1.0).diameter(bad)  # type: ignore[arg-type]


def test_vertices() -> None:
    assert L1Ball(3, 2.0).vertices().shape == (6, 3) and L1Ball(3, 2.0).n_vertices == 6
    assert LinfBall(3, 2.0).vertices().shape == (8, 3) and LinfBall(3, 2.0).n_vertices == 8
    assert len({tuple(v) for v in LinfBall(4, 1.0).vertices()}) == 16
    assert np.array_equal(Simplex(3, 2.0).vertices(), 2.0 * np.eye(3))
    V = np.arange(6.0).reshape(3, 2)
    P = VertexPolytope(V)
    assert np.array_equal(P.vertices(), V) and P.n_vertices == 3
    assert L2Ball(3, 1.0).n_vertices == math.inf
    with pytest.raises(ModelError, match="not a polytope"):
        L2Ball(3, 1.0).vertices()
    assert LinfBall(40, 1.0).n_vertices == 2**40
    with pytest.raises(ModelError, match="max_count"):
        LinfBall(5_000, 1.0).vertices()  # 2^5000 does not fit a float
    with pytest.raises(ModelError, match="max_count"):
        LinfBall(20, 1.0).vertices()
    with pytest.raises(ModelError, match="max_count"):
        LinfBall(3, 1.0).vertices(max_count=7)
    with pytest.raises(ModelError, match="max_count"):
        P.vertices(max_count=2)
    with pytest.raises(ModelError):
        P.vertices(max_count=0)


def test_symmetry() -> None:
    assert L1Ball(2, 1.0).is_symmetric and L2Ball(2, 1.0).is_symmetric and LinfBall(2, 1.0).is_symmetric
    assert not Simplex(2).is_symmetric
    assert VertexPolytope(LinfBall(3, 1.0).vertices()).is_symmetric
    assert VertexPolytope([[1.0, 0.0], [-1.0, -0.0]]).is_symmetric
    assert VertexPolytope([[0.0, 0.0]]).is_symmetric
    assert not VertexPolytope([[1.0, 0.0], [-1.0, 0.5]]).is_symmetric
    assert not VertexPolytope([[1.0, 0.0], [-1.0, 0.0], [0.0, 0.5]]).is_symmetric


# ---------------------------------------------------------------------------
# Construction, validation, immutability
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("cls", [L1Ball, L2Ball, LinfBall, Simplex])
@pytest.mark.parametrize("radius", [0.0, -1.0, math.nan, math.inf, "1", True, None])
def test_invalid_radius(cls: type, radius: object) -> None:
    with pytest.raises(ModelError):
        cls(3, radius)


@pytest.mark.parametrize("cls", [L1Ball, L2Ball, LinfBall, Simplex])
@pytest.mark.parametrize("dim", [0, -2, 2.5, True, "3"])
def test_invalid_dimension(cls: type, dim: object) -> None:
    with pytest.raises(ModelError):
        cls(dim, 1.0)


@pytest.mark.parametrize(
    "vertices",
    [np.empty((0, 3)), np.empty((3, 0)), [], [1.0, 2.0], np.ones((2, 2, 2)), 3.0,
     [[1.0, np.nan]], [[np.inf, 0.0]], [["a", "b"]], [[1.0, 2.0], [3.0]]],
    ids=["no-rows", "no-cols", "empty-list", "1d", "3d", "scalar", "nan", "inf", "text", "ragged"],
)
def test_invalid_vertices(vertices: object) -> None:
    with pytest.raises(ModelError):
        VertexPolytope(vertices)  # type: ignore[arg-type]


def test_polytope_variable() -> None:
    theta = Variable(2)
    assert VertexPolytope([[1.0, 0.0]], variable=theta).variable is theta
    with pytest.raises(ModelError):
        VertexPolytope([[1.0, 0.0, 0.0]], variable=theta)
    with pytest.raises(ModelError):
        VertexPolytope([[1.0, 0.0]], variable=2)  # type: ignore[arg-type]


def test_variables_and_equality() -> None:
    theta = Variable(3)
    s = L1Ball(theta, 2)
    assert s.dim == 3 and s.variable is theta and s.r == 2.0
    assert L1Ball(3, 2.0).variable is None
    assert s == L1Ball(3, 2.0) and hash(s) == hash(L1Ball(3, 2.0))
    assert s != L1Ball(3, 2.5) and s != L2Ball(3, 2.0)
    assert Simplex(3) == Simplex(3, scale=1.0)
    V = np.eye(3)
    assert VertexPolytope(V) == VertexPolytope(V.copy())
    assert hash(VertexPolytope(V)) == hash(VertexPolytope(V.copy()))
    assert VertexPolytope(V) != VertexPolytope(2 * V)
    assert "VertexPolytope(k=3, dim=3)" == repr(VertexPolytope(V))


def test_sets_are_immutable() -> None:
    s = L2Ball(3, 1.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.r = 2.0  # type: ignore[misc]
    V = np.eye(2)
    P = VertexPolytope(V)
    V[0, 0] = 5.0  # the polytope copied its input
    assert P.radius("inf") == 1.0
    out = P.vertices()
    out[0, 0] = 7.0  # and hands out copies
    assert P.radius("inf") == 1.0
    u = P.lmo(np.array([-1.0, 0.0]))
    u[0] = 9.0
    assert P.radius("inf") == 1.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        P.dim = 3  # type: ignore[misc]
