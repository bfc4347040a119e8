"""Contracts every constraint set and regularizer in dpopt must satisfy.

The suites are parametrized over *every* concrete subclass of
:class:`~dpopt.modeling.constraint_set.ConstraintSet` and
:class:`~dpopt.modeling.regularizers.Regularizer` defined in dpopt, found with
:func:`dpopt.discovery.subclasses`; a guard test fails when a subclass has no fixture below,
so a new set or regularizer is tested as soon as it exists.  The checks are
independent of each implementation: projections against the variational
inequality and a cvxpy solve, the LMO against a vertex enumeration or a cvxpy
LP, membership against projection, the declarations (``polyhedral``,
``exact_projection``, ``l1_prox``, ``qp_representable``) against what the code
does.  A set defined *outside* dpopt's modeling layer and registered through the extension
points (:class:`dpopt.testing.set_cases.ShiftedL2Ball`) runs through the same checks.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from types import SimpleNamespace

import cvxpy as cp
import numpy as np
import pytest

import dpopt as dp
from dpopt.backends import registry
from dpopt.backends.cvxpy_backend import is_qp
from dpopt.compile.cvxpy_program import compile_cvxpy, loss_phi, regularizer_term, set_constraints
from dpopt.compile.submodular_cvxpy import make_problem
from dpopt.discovery import import_package, subclasses
from dpopt.errors import BackendCapabilityError, MechanismError, ModelError
from dpopt.mechanisms.base import SolverNeed
from dpopt.modeling.balls import L1Ball, L2Ball
from dpopt.modeling.boxes import NonNegative
from dpopt.modeling.constraint_set import ConstraintSet, Norm
from dpopt.modeling.regularizers import L1Norm, L2Squared, Regularizer
from dpopt.modeling.submodular import Cardinality
from dpopt.modeling.submodular_norms import SubmodularNorm, SubmodularNormBall
from dpopt.numerics.apg import unsupported_reason
from dpopt.numerics.prox import composite_prox, prox_supported
from dpopt.testing.set_cases import (
    NORMS,
    ORD,
    REG_CASES,
    REGULARIZER_FIXTURES,
    SET_CASES,
    SET_FIXTURES,
    ShiftedL2Ball,
)
from dpopt.testing.set_cases import general_F as _general_F
from dpopt.testing.set_cases import hpolytope as _hpolytope


def _concrete_subclasses(base: type) -> set[type]:
    """Every concrete subclass of ``base`` defined in the dpopt package (recursively), its modeling
    layer imported first so that a set module nothing imports yet is found too."""
    import_package("dpopt.modeling")
    return set(subclasses(base, exclude=("dpopt.testing",)))  # not the fixtures' own ShiftedL2Ball


@pytest.fixture(params=sorted(SET_CASES))
def cset(request: pytest.FixtureRequest) -> ConstraintSet:
    return SET_CASES[request.param]()


@pytest.fixture(params=sorted(REG_CASES))
def reg_case(request: pytest.FixtureRequest) -> tuple[Regularizer, bool]:
    factory, has_prox = REG_CASES[request.param]
    return factory(), has_prox


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------


PointMaker = Callable[[ConstraintSet, np.random.Generator, int], np.ndarray]
#: (points certainly outside, points strictly inside) an unbounded set, per class: it has no
#: diameter to step beyond, and its projections of random points sit on its boundary
UNBOUNDED_POINTS: dict[type, tuple[PointMaker, PointMaker]] = {
    NonNegative: (lambda c, rng, n: -(0.5 + np.abs(rng.standard_normal((n, c.dim)))),  # every entry < 0
                  lambda c, rng, n: 0.1 + np.abs(rng.standard_normal((n, c.dim)))),  # every entry > 0
}


def test_every_unbounded_set_has_outside_and_inside_points() -> None:
    unbounded = sorted(cls.__name__ for cls in SET_FIXTURES if not cls.bounded)
    assert unbounded == sorted(cls.__name__ for cls in UNBOUNDED_POINTS)
    for cls, (outside, inside) in UNBOUNDED_POINTS.items():
        c = next(iter(SET_FIXTURES[cls].values()))()
        rng = np.random.default_rng(0)
        assert not any(c.contains(v, tol=1e-3) for v in outside(c, rng, 5))
        assert all(c.contains(v, tol=0.0) for v in inside(c, rng, 5))


def _scale(c: ConstraintSet) -> float:
    return max(1.0, c.radius(2)) if c.bounded else 1.0


def _outside(c: ConstraintSet, rng: np.random.Generator, n: int = 4) -> np.ndarray:
    """Points farther from the centre than the diameter: certainly outside C."""
    if not c.bounded:
        return UNBOUNDED_POINTS[type(c)][0](c, rng, n)
    u = rng.standard_normal((n, c.dim))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    return c.center() + (1.5 * c.diameter(2) + 0.5) * u


def _inside(c: ConstraintSet, rng: np.random.Generator, n: int = 4) -> np.ndarray:
    """Points between the centre and a projection: in C by convexity."""
    if not c.bounded:
        return UNBOUNDED_POINTS[type(c)][1](c, rng, n)
    w = 3.0 * _scale(c) * rng.standard_normal((n, c.dim))
    ctr = c.center()
    return np.array([ctr + 0.7 * (c.project(v) - ctr) for v in w])


def _boundary(c: ConstraintSet, rng: np.random.Generator, n: int = 4) -> np.ndarray:
    """LMO answers (extreme points); projections of far points for a set without an LMO."""
    if not (c.bounded and c.has_lmo):
        return np.array([c.project(3.0 * v) for v in rng.standard_normal((n, c.dim))])
    return np.array([c.lmo(g) for g in rng.standard_normal((n, c.dim))])


def _cvxpy_solve(objective: Callable[[cp.Variable], cp.Expression], c: ConstraintSet, *,
                 tight: bool = False) -> np.ndarray:
    """cvxpy's answer; ``tight``: gap and feasibility tolerances 1e-10 (points on a face of C,
    where the default tolerances leave about 5e-5), "optimal_inaccurate" accepted then."""
    theta = cp.Variable(c.dim)
    prob = make_problem(cp.Minimize(objective(theta)), set_constraints(c, theta))
    if tight:
        prob.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
        assert prob.status in ("optimal", "optimal_inaccurate"), f"{type(c).__name__}: cvxpy status {prob.status}"
        return np.asarray(theta.value, dtype=np.float64)
    prob.solve(solver="CLARABEL")
    assert prob.status == "optimal", f"{type(c).__name__}: cvxpy status {prob.status}"
    return np.asarray(theta.value, dtype=np.float64)


def _support(c: ConstraintSet, d: np.ndarray) -> float:
    """h_C(d): the set's own support function, or a cvxpy solve for a set without an LMO."""
    if c.bounded and not c.has_lmo:
        return float(d @ _cvxpy_solve(_linear(-d), c))
    return c.support(d)


def _linear(g: np.ndarray) -> Callable[[cp.Variable], cp.Expression]:
    return lambda t: g @ t


def _distance(v: np.ndarray) -> Callable[[cp.Variable], cp.Expression]:
    return lambda t: cp.sum_squares(t - v)


def _tol(c: ConstraintSet) -> float:
    return 1e-6 * _scale(c)


# ---------------------------------------------------------------------------
# Guards: every class has a fixture; unknown classes are refused loudly
# ---------------------------------------------------------------------------


def test_every_constraint_set_subclass_has_a_fixture() -> None:
    missing = sorted(cls.__name__ for cls in _concrete_subclasses(ConstraintSet) - set(SET_FIXTURES))
    assert not missing, f"add a fixture to SET_FIXTURES for: {', '.join(missing)}"
    for cls, cases in SET_FIXTURES.items():
        assert all(type(f()) is cls for f in cases.values()), cls.__name__


def test_every_regularizer_subclass_has_a_fixture() -> None:
    missing = sorted(cls.__name__ for cls in _concrete_subclasses(Regularizer) - set(REGULARIZER_FIXTURES))
    assert not missing, f"add a fixture to REGULARIZER_FIXTURES for: {', '.join(missing)}"
    assert {L2Squared, L1Norm, SubmodularNorm} <= _concrete_subclasses(Regularizer)


class _Unregistered(ShiftedL2Ball):
    """A subclass that inherits the external registration: dispatch follows the class tree."""


class _BareSet(ConstraintSet):
    """A set nobody registered anywhere."""

    def __init__(self) -> None:
        self.dim = 2

    def _lmo(self, g: np.ndarray) -> np.ndarray:
        return -np.sign(g)

    def _project(self, v: np.ndarray) -> np.ndarray:
        return np.clip(v, -1.0, 1.0)

    def center(self) -> np.ndarray:
        return np.zeros(2)

    def _radius(self, norm: Norm) -> float:
        return float(np.linalg.norm(np.ones(2), ORD[norm]))

    def _diameter(self, norm: Norm) -> float:
        return 2.0 * self._radius(norm)

    @property
    def is_symmetric(self) -> bool:
        return True

    @property
    def n_vertices(self) -> int:
        return 4


def _squared_problem(constraint: ConstraintSet | None, dim: int, regularizer: object = ()) -> dp.Problem:
    rng = np.random.default_rng(0)
    data = dp.Dataset(rng.uniform(-0.5, 0.5, (20, dim)), rng.uniform(-1, 1, 20), x_bound=1.0, y_bound=1.0)
    theta = dp.Variable(dim)
    return dp.Problem(dp.SquaredLoss(data, theta), constraint=constraint, regularizer=regularizer)


def test_unregistered_set_is_refused_everywhere_with_its_name() -> None:
    bare = _BareSet()
    with pytest.raises(ModelError, match=r"_BareSet has no cvxpy encoding: declare its constraints with "
                                         r"as_constraints\(w\).*set_constraints\.register"):
        set_constraints(bare, cp.Variable(2))
    with pytest.raises(ModelError, match="_BareSet has no cvxpy encoding"):
        compile_cvxpy(_squared_problem(bare, 2))
    # conservative defaults: not a QP, no exact ℓ1 prox, no a-priori fallback
    assert not is_qp(_squared_problem(bare, 2))
    assert not prox_supported(bare, 0.1)
    with pytest.raises(BackendCapabilityError, match="_BareSet"):
        composite_prox(bare, 0.1, np.ones(2), 1.0)
    reason = unsupported_reason(_squared_problem(bare, 2, dp.L2Squared(2, 0.1)))
    assert reason is not None and "_BareSet" in reason
    # a subclass of a registered set inherits its encoding (standard singledispatch)
    sub = _Unregistered(np.zeros(2), 1.0)
    assert len(set_constraints(sub, cp.Variable(2))) == 1


class _DeclaredSquare(_BareSet):
    """_BareSet's square [−1, 1]² written as constraints: no encoding registered anywhere."""

    polyhedral = True
    exact_projection = True  # the clip

    def as_constraints(self, w: dp.Variable) -> list[object]:
        return [w <= 1.0, -1.0 <= w, np.array([[1.0, 1.0]]) @ w <= np.inf]  # the last row is no constraint


class _OtherVariable(_BareSet):
    def as_constraints(self, w: dp.Variable) -> list[object]:
        return [dp.norm2(dp.Variable(2)) <= 1.0]


def test_a_set_that_declares_its_constraints_is_encoded_from_them() -> None:
    square = _DeclaredSquare()
    theta = cp.Variable(2)
    encoded = set_constraints(square, theta)
    assert len(encoded) == 3 and all(c.is_dcp() for c in encoded)
    for g in np.random.default_rng(3).normal(size=(4, 2)):  # the LP over the encoding is the LMO
        prob = make_problem(cp.Minimize(g @ theta), encoded)
        prob.solve()
        assert g @ theta.value == pytest.approx(g @ square.lmo(g), abs=1e-6)
    assert is_qp(_squared_problem(square, 2))
    release = dp.ObjectivePerturbation(1.0, 1e-6, ledger=dp.Ledger()).run(_squared_problem(square, 2),
                                                                          solver="clarabel", seed=0)
    assert square.contains(release.theta, tol=1e-9)
    with pytest.raises(ModelError, match=r"_OtherVariable.as_constraints\(w\) must return constraints on w"):
        set_constraints(_OtherVariable(), theta)


def test_unregistered_regularizer_and_loss_are_refused_with_their_names() -> None:
    class _Bare(Regularizer):
        dim, lam = 2, 1.0

        @property
        def strong_convexity(self) -> float:
            return 0.0

        def value(self, theta: np.ndarray) -> float:
            return 0.0

    with pytest.raises(ModelError, match=r"_Bare has no cvxpy encoding.*regularizer_term\.register"):
        regularizer_term(_Bare(), cp.Variable(2))
    with pytest.raises(BackendCapabilityError, match="_Bare has no closed-form proximal map"):
        _Bare().prox(np.ones(2), 1.0)
    with pytest.raises(ModelError, match=r"SimpleNamespace has no cvxpy encoding.*loss_phi\.register"):
        loss_phi(SimpleNamespace(), cp.Variable(2), np.ones(2), np.ones(2))  # type: ignore[arg-type]


# ---------------------------------------------------------------------------
# Constraint-set contracts
# ---------------------------------------------------------------------------


def test_projection_lands_in_the_set_is_idempotent_and_optimal(cset: ConstraintSet) -> None:
    rng = np.random.default_rng(1)
    tol = _tol(cset)
    for v in np.vstack([_outside(cset, rng), 3.0 * _scale(cset) * rng.standard_normal((3, cset.dim))]):
        x = cset.project(v)
        assert cset.contains(x, tol=1e-6)
        assert np.linalg.norm(cset.project(x) - x) <= tol
        # variational inequality ⟨v − x, s − x⟩ ≤ 0 for all s ∈ C, through the support function
        d = v - x
        assert _support(cset, d) <= float(d @ x) + tol * (1.0 + float(np.linalg.norm(d)))


def test_membership_agrees_with_projection(cset: ConstraintSet) -> None:
    rng = np.random.default_rng(2)
    tol = _tol(cset)
    for u in np.vstack([_inside(cset, rng), _boundary(cset, rng)]):
        assert cset.contains(u, tol=1e-6)
        assert np.linalg.norm(cset.project(u) - u) <= tol
    for v in _outside(cset, rng):
        assert not cset.contains(v)
        assert np.linalg.norm(cset.project(v) - v) > 0.1


def test_lmo_minimizes_the_linear_objective(cset: ConstraintSet) -> None:
    rng = np.random.default_rng(3)
    tol = _tol(cset)
    if not cset.bounded:  # no LMO: refused by name; the support function is +inf off the polar cone
        assert not (cset.closed_form_lmo or cset.lmo_is_lp)
        for g in rng.standard_normal((4, cset.dim)):
            with pytest.raises(ModelError, match=type(cset).__name__):
                cset.lmo(g)
            finite = cset.support(g)
            assert finite == math.inf or finite == pytest.approx(float(g @ cset.project(1e6 * g)), abs=1e-6)
        return
    if not cset.has_lmo:  # declared: refused by name, and nothing claims a solver answers it
        assert not (cset.closed_form_lmo or cset.lmo_is_lp)
        with pytest.raises(ModelError, match=type(cset).__name__):
            cset.lmo(rng.standard_normal(cset.dim))
        return
    try:
        V = cset.vertices(max_count=4096)
    except ModelError:
        V = None
    for g in rng.standard_normal((4, cset.dim)):
        s = cset.lmo(g)
        assert cset.contains(s, tol=1e-6)
        best = float(np.min(V @ g)) if V is not None else float(g @ _cvxpy_solve(_linear(g), cset))
        assert float(g @ s) == pytest.approx(best, abs=tol * (1.0 + float(np.linalg.norm(g))))
        assert cset.support(-g) == pytest.approx(-float(g @ s), abs=1e-9 * (1.0 + abs(float(g @ s))))


def test_vertices_are_listed_in_the_set_or_refused_by_name(cset: ConstraintSet) -> None:
    try:
        V = cset.vertices(max_count=4096)
    except ModelError as exc:
        assert type(cset).__name__ in str(exc)
        return
    assert V.ndim == 2 and V.shape[1] == cset.dim and V.shape[0] >= 1
    assert all(cset.contains(row, tol=1e-6) for row in V)


def test_radius_and_diameter_bound_every_point(cset: ConstraintSet) -> None:
    rng = np.random.default_rng(4)
    if not cset.bounded:  # the declaration agrees with the geometry: every radius is infinite
        assert all(cset.radius(q) == cset.diameter(q) == math.inf for q in NORMS)
        assert cset.contains(cset.center(), tol=0.0) and not cset.is_symmetric
        return
    points = np.vstack([_inside(cset, rng), _boundary(cset, rng, n=8), [cset.center()]])
    tol = _tol(cset)
    for q in NORMS:
        r, d = cset.radius(q), cset.diameter(q)
        assert 0.0 <= d <= 2.0 * r + tol
        assert np.all(np.linalg.norm(points, ORD[q], axis=1) <= r + tol)
        diffs = points[:, None, :] - points[None, :, :]
        assert np.all(np.linalg.norm(diffs, ORD[q], axis=2) <= d + tol)
    assert cset.contains(cset.center(), tol=1e-6)
    if cset.is_symmetric:
        assert all(cset.contains(-p, tol=1e-6) for p in points)


def test_gaussian_width_is_an_interval_consistent_with_sampling(cset: ConstraintSet) -> None:
    w = cset.gaussian_width(n_samples=300, seed=0)
    if not cset.bounded:
        assert w.value == math.inf
        return
    assert w.low <= w.value <= w.high
    assert 0.0 <= w.value <= cset.radius(2) * math.sqrt(cset.dim) + 1e-9
    if not cset.has_lmo:  # no support function to sample: an upper bound from a superset
        assert w.high == w.value
        return
    mc = cset.gaussian_width_monte_carlo(n_samples=300, seed=5)
    half = max(mc.high - mc.value, w.high - w.value)
    assert abs(w.value - mc.value) <= 3.0 * half + 1e-9


def test_cvxpy_encoding_agrees_with_membership_and_projection(cset: ConstraintSet) -> None:
    rng = np.random.default_rng(6)
    tol = 1e-5 * _scale(cset)
    for u in _inside(cset, rng, n=3):
        z = _cvxpy_solve(_distance(u), cset, tight=True)
        assert np.linalg.norm(z - u) <= tol
    for v in _outside(cset, rng, n=3):
        z = _cvxpy_solve(_distance(v), cset)
        assert cset.contains(z, tol=1e-5)
        assert np.linalg.norm(z - cset.project(v)) <= 1e-4 * _scale(cset)


def test_polyhedral_declaration_matches_encoding_and_is_qp(cset: ConstraintSet) -> None:
    theta = cp.Variable(cset.dim)
    prog = make_problem(cp.Minimize(cp.sum_squares(theta)), set_constraints(cset, theta))
    assert prog.is_qp() == cset.polyhedral
    assert is_qp(_squared_problem(cset, cset.dim)) == cset.polyhedral


def test_hpolytope_and_omega_balls_are_qps() -> None:
    """The issue: is_qp missed HPolytope; now every polyhedral set counts."""
    hpoly = _squared_problem(_hpolytope(), 3)
    assert is_qp(hpoly)
    registry.get("osqp").check(hpoly)  # a QP-only backend accepts it and solves it
    prog = compile_cvxpy(hpoly)
    prog.problem.solve(solver="OSQP", eps_abs=1e-9, eps_rel=1e-9)
    assert prog.problem.status == "optimal"
    assert _hpolytope().contains(np.asarray(prog.theta.value), tol=1e-6)
    assert is_qp(_squared_problem(SubmodularNormBall(4, _general_F(), 1.0), 4))
    assert not is_qp(_squared_problem(L2Ball(3, 1.0), 3))


def test_exact_projection_declaration(cset: ConstraintSet) -> None:
    rng = np.random.default_rng(8)
    problem = _squared_problem(cset, cset.dim, dp.L2Squared(cset.dim, 0.1))
    reason = unsupported_reason(problem)
    if cset.exact_projection:
        assert reason is None
        for v in _outside(cset, rng, n=2):
            x, err = cset.project_with_error(v)
            assert err == 0.0 and np.array_equal(x, cset.project(v))
    else:
        assert reason is not None and type(cset).__name__ in reason


def test_a_finite_projection_error_bounds_the_distance_to_an_independent_projection(cset: ConstraintSet) -> None:
    """``project_with_error`` returns a point of C and, when finite, a bound on its distance to the
    exact projection (checked against cvxpy's, up to cvxpy's own accuracy)."""
    rng = np.random.default_rng(17)
    for v in _outside(cset, rng, n=2):
        x, err = cset.project_with_error(v)
        assert cset.contains(x, tol=1e-7)
        if math.isfinite(err):
            ref = _cvxpy_solve(_distance(v), cset, tight=True)
            assert np.linalg.norm(x - ref) <= err + 1e-4 * _scale(cset)


def test_l1_prox_declaration_matches_a_numerical_minimization(cset: ConstraintSet) -> None:
    rng = np.random.default_rng(9)
    l1, step = 0.7, 0.5
    v = 2.0 * _scale(cset) * rng.standard_normal(cset.dim)
    if cset.l1_prox is None:
        assert not prox_supported(cset, l1)
        with pytest.raises(BackendCapabilityError, match=type(cset).__name__):
            composite_prox(cset, l1, v, step)
        return
    assert prox_supported(cset, l1)
    x = composite_prox(cset, l1, v, step)
    ref = _cvxpy_solve(lambda t: 0.5 * cp.sum_squares(t - v) + step * l1 * cp.norm(t, 1), cset, tight=True)
    assert np.linalg.norm(x - ref) <= 1e-5 * _scale(cset)


# ---------------------------------------------------------------------------
# Regularizer contracts
# ---------------------------------------------------------------------------


def _reg_value_cvxpy(reg: Regularizer, point: np.ndarray) -> float:
    theta = cp.Variable(reg.dim)
    expr, extra = regularizer_term(reg, theta)
    if not extra:
        theta.value = point
        return float(np.asarray(expr.value))
    prob = make_problem(cp.Minimize(expr), [*extra, theta == point])  # epigraph: its minimum is the value
    prob.solve(solver="CLARABEL")
    assert prob.status == "optimal"
    return float(np.asarray(prob.value))


def test_regularizer_cvxpy_value_equals_python_value(reg_case: tuple[Regularizer, bool]) -> None:
    reg, _ = reg_case
    rng = np.random.default_rng(10)
    for t in rng.standard_normal((3, reg.dim)):
        assert _reg_value_cvxpy(reg, t) == pytest.approx(reg.value(t), rel=1e-6, abs=1e-8)


def test_regularizer_qp_declaration_matches_encoding(reg_case: tuple[Regularizer, bool]) -> None:
    reg, _ = reg_case
    theta = cp.Variable(reg.dim)
    expr, extra = regularizer_term(reg, theta)
    prog = make_problem(cp.Minimize(cp.sum_squares(theta - 1.0) + expr), extra)
    assert prog.is_qp() == reg.qp_representable


def test_regularizer_strong_convexity_is_a_lower_bound(reg_case: tuple[Regularizer, bool]) -> None:
    reg, _ = reg_case
    rng = np.random.default_rng(11)
    mu = reg.strong_convexity
    for x, y in rng.standard_normal((3, 2, reg.dim)):
        mid = reg.value(0.5 * (x + y))
        assert mid <= 0.5 * (reg.value(x) + reg.value(y)) - mu / 8.0 * float((x - y) @ (x - y)) + 1e-9


def test_regularizer_prox_matches_a_numerical_minimization(reg_case: tuple[Regularizer, bool]) -> None:
    reg, has_prox = reg_case
    rng = np.random.default_rng(12)
    step = 0.8
    v = 2.0 * rng.standard_normal(reg.dim)
    if not has_prox:
        with pytest.raises(BackendCapabilityError, match=type(reg).__name__):
            reg.prox(v, step)
        return
    x = reg.prox(v, step)
    theta = cp.Variable(reg.dim)
    expr, extra = regularizer_term(reg, theta)
    prob = make_problem(cp.Minimize(0.5 * cp.sum_squares(theta - v) + step * expr), extra)
    prob.solve(solver="CLARABEL")
    assert prob.status == "optimal"
    assert np.linalg.norm(x - theta.value) <= 1e-5
    objective = 0.5 * float((x - v) @ (x - v)) + step * reg.value(x)
    assert objective <= prob.value + 1e-7


# ---------------------------------------------------------------------------
# Declarations read by the mechanisms and backends (no type switches there)
# ---------------------------------------------------------------------------


def test_mirror_potential_declaration_builds_a_fitting_potential(cset: ConstraintSet) -> None:
    from dpopt.numerics.potentials import POTENTIALS, QNormPotential, make_potential

    assert cset.mirror_potential in POTENTIALS
    if not cset.bounded:  # no finite range: mirror descent refuses the set before the charge
        ledger = dp.Ledger()
        with pytest.raises(MechanismError, match=f"{type(cset).__name__} is unbounded"):
            dp.PrivateMirrorDescent(1.0, 1e-6, steps=3, ledger=ledger).run(_squared_problem(cset, cset.dim))
        assert ledger.charges == ()
        return
    pot = make_potential("auto", cset)
    assert pot.name == cset.mirror_potential and pot.constraint is cset
    geo = pot.geometry()
    assert geo.modulus > 0 and all(math.isfinite(v) for v in (geo.range, geo.modulus, geo.q_radius, geo.q_width))
    rng = np.random.default_rng(13)
    x = 0.5 * (cset.center() + _inside(cset, rng, n=1)[0])  # relatively interior
    step = pot.mirror_step(pot.gradient(pot.point(x)))
    if step is None:  # compiled step: the q-norm potential's vertex weights represent x
        assert isinstance(pot, QNormPotential)
        alpha = pot.point(x).aux
        assert alpha is not None and np.allclose(pot.V.T @ alpha, x, atol=1e-7)
        return
    assert cset.contains(step.theta, _tol(cset))
    assert np.linalg.norm(step.theta - x) <= 1e-5 * _scale(cset)  # the step inverts ∇Ψ


def test_an_unknown_mirror_potential_declaration_is_refused_by_name() -> None:
    from dpopt.numerics.potentials import make_potential

    class _Odd(ShiftedL2Ball):
        mirror_potential = "bogus"

    with pytest.raises(ModelError, match="_Odd declares mirror_potential='bogus'"):
        make_potential("auto", _Odd(np.zeros(2), 1.0))
    with pytest.raises(ModelError, match="entropy potential does not fit a ShiftedL2Ball"):
        make_potential("entropy", ShiftedL2Ball(np.zeros(2), 1.0))


def _no_solver(program: object) -> None:
    """A polytope program solver that fails: a closed-form LMO must not reach it."""
    raise AssertionError("a closed-form LMO called the polytope solver")


def test_lmo_declarations_match_how_the_lmo_is_solved(cset: ConstraintSet) -> None:
    from dpopt.backends import programs
    from dpopt.backends.result import SolveOptions
    from dpopt.modeling import structured_sets

    assert not (cset.closed_form_lmo and cset.lmo_is_lp)
    assert cset.project_solver_points or not cset.exact_projection
    rng = np.random.default_rng(16)
    gs = rng.standard_normal((3, cset.dim))
    if cset.closed_form_lmo:  # no solver: the LMO runs with a failing polytope solver registered
        solve = structured_sets.solve_polytope_program
        saved = {kind: solve.dispatch(kind) for kind in (structured_sets.PolytopeLP, structured_sets.PolytopeProjection)}
        for kind in saved:
            solve.register(kind, _no_solver)
        try:
            for g in gs:
                cset.lmo(g)
        finally:
            for kind, solver in saved.items():
                solve.register(kind, solver)
    if cset.lmo_is_lp:  # the compiled LP that Frank–Wolfe solves with a backend answers the same
        backend, _ = programs.resolve_lp_backend("scipy-lp")
        prepared = programs.prepare_polytope_lmo(backend, cset)  # type: ignore[arg-type]
        for g in gs:
            x = backend.solve(prepared, g, SolveOptions(tolerance=1e-9)).solution
            assert x is not None and float(g @ x) == pytest.approx(float(g @ cset.lmo(g)), abs=1e-7)
        assert callable(getattr(cset, "clip_to_box", None))
    need = dp.GaussianFrankWolfe(1.0, 1e-6, steps=3).solver_need(_squared_problem(cset, cset.dim))
    assert (need is SolverNeed.STEP) == cset.lmo_is_lp


def test_norm_ball_declaration_matches_membership(cset: ConstraintSet) -> None:
    q = cset.norm_ball
    if q is None:
        return
    rng = np.random.default_rng(14)
    r = cset.radius(q)
    assert np.array_equal(cset.center(), np.zeros(cset.dim))
    for u in rng.standard_normal((6, cset.dim)):
        u /= np.linalg.norm(u, ORD[q])
        assert cset.contains(0.999 * r * u) and not cset.contains(1.001 * r * u)


def test_elastic_weights_declaration_matches_the_value(reg_case: tuple[Regularizer, bool]) -> None:
    reg, _ = reg_case
    w = reg.elastic_weights
    problem = _squared_problem(None, reg.dim, reg)
    rng = np.random.default_rng(15)
    for t in rng.standard_normal((3, reg.dim)):
        if w is not None:
            assert reg.value(t) == pytest.approx(0.5 * w[0] * float(t @ t) + w[1] * float(np.abs(t).sum()))
        assert problem.objective(t) == pytest.approx(problem.loss.value(t) + reg.value(t))
    assert problem.l2_weight == (w[0] if w else 0.0) and problem.l1_weight == (w[1] if w else 0.0)
    mech = dp.DPGradientDescent(1.0, 1e-6, steps=3, clip=1.0)
    if w is None:  # proximal gradient descent refuses a term it cannot step on, by name
        with pytest.raises(MechanismError, match=type(reg).__name__):
            mech.plan(problem)
    else:
        assert mech.plan(problem).steps == 3


@pytest.mark.parametrize("mech", [dp.GaussianFrankWolfe(1.0, 1e-6, steps=3),
                                  dp.PolytopeFrankWolfe(1.0, 1e-6, steps=3)], ids=lambda m: m.name)
def test_frank_wolfe_refuses_a_regularizer_without_a_smooth_declaration(mech: dp.Mechanism) -> None:
    norm = SubmodularNorm(3, Cardinality(3), 0.2)  # declares no elastic weights: Frank–Wolfe would drop it
    problem = _squared_problem(L1Ball(3, 1.0), 3, (dp.L2Squared(3, 0.1), norm))
    with pytest.raises(MechanismError, match="handles L2Squared regularizers only, not SubmodularNorm"):
        mech.plan(problem)  # type: ignore[attr-defined]
    assert mech.plan(_squared_problem(L1Ball(3, 1.0), 3, dp.L2Squared(3, 0.1)))  # type: ignore[attr-defined]
