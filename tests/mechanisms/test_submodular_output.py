"""Submodular set functions, Ω∞ / Ω*, |P|(F), their cvxpy encodings, and output perturbation (KD19 Thm. 1).

Brute force over all 2^p subsets and all p! orders (p ≤ 8) checks the greedy
algorithm, the Lovász extension, the dual norm and the LMO; every family is
also wrapped as a :class:`CallableSetFunction` (no closed forms), which sends
the cvxpy compiler down the constraint-generation LP, and the two encodings
must agree.

Audit pair for :class:`SubmodularOutputPerturbation` (as in tests/mechanisms/test_objective_perturbation_audits.py):
θ ∈ ℝ¹, nine rows with x = 0 and the tenth (1, +1) in D0, (1, −1) in D1 under a
Huber loss (h = 0.1), with (Λ/2)θ² + lam|θ| (F = Cardinality).  The exact
minimizers are ±(h/n − lam)/Λ, 2(h/n − lam)/Λ apart, against the sensitivity
2h/(nΛ) + 2·tolerance the mechanism assumes (ratio ≈ 0.9), so the audit is
nearly tight.  A one-dimensional exact backend (bounded Brent) keeps the runs
cheap; dpopt's certificate still re-checks every answer.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import time

import numpy as np
import pytest
from scipy import optimize

import dpopt as dp
from dpopt.backends.base import Backend
from dpopt.backends.registry import get as get_backend
from dpopt.backends.result import OracleResult, OracleStatus, SolveOptions
from dpopt.errors import MechanismError, ModelError
from dpopt.mechanisms.submodular_output import SubmodularOutputPerturbation, lemma1_excess_risk
from dpopt.modeling.submodular import (
    CallableSetFunction,
    Cardinality,
    ChainCut,
    ConcaveCardinality,
    GroupCoverage,
    Indicator,
    check_submodular,
    dual_norm,
    dual_norm_argmax,
    greedy,
    lovasz,
    omega,
    polyhedron_lmo,
    subset_masks,
)
from dpopt.modeling.submodular_norms import SubmodularNorm, SubmodularNormBall
from dpopt.numerics.certificates import certify
from dpopt.numerics.submodular_lp import (
    polyhedron_gaussian_width,
    polyhedron_l2_radius,
    polyhedron_vertices,
)
from dpopt.privacy.noise_spec import NoiseSpec
from dpopt.testing import audit, one_point_pair
from dpopt.testing.coverage import covers
from dpopt.testing.views import assert_same_view

P = 6


def _families(p: int = P) -> list:
    return [
        Cardinality(p, 1.5), Indicator(p, 0.7), ConcaveCardinality(p, np.sqrt(np.arange(p + 1))),
        GroupCoverage(p, [[0, 1, 2], [2, 3], [4, p - 1], [0, p - 1]], [1.0, 2.0, 1.5, 0.5]),
        GroupCoverage(p, [[0, 1], [2, 3, 4], list(range(5, p)) or [4]]), ChainCut(p, 0.5, 0.2),
        CallableSetFunction(p, lambda m: math.sqrt(min(m.sum(), 3)) + float(m[:2].any()), name="mix"),
    ]


def _as_generic(F):
    return CallableSetFunction(F.p, F.value_mask, name="generic")


# ----------------------------------------------------------------------------- set functions


@pytest.mark.parametrize("F", _families(), ids=lambda F: F.describe())
def test_greedy_lovasz_lmo_dual_against_brute_force(F):
    p = F.p
    masks = subset_masks(p)
    vals = np.array([F.value_mask(m) for m in masks])
    bases = np.array([_perm_base(F, o) for o in itertools.permutations(range(p))])
    signs = np.array(list(itertools.product((1.0, -1.0), repeat=p)))
    rng = np.random.default_rng(0)
    for _ in range(8):
        w = rng.normal(size=p)
        s = greedy(F, w)
        assert np.all(masks @ s <= vals + 1e-9) and s.sum() == pytest.approx(vals[-1])  # s ∈ B(F)
        assert lovasz(F, w) == pytest.approx(np.max(bases @ w))  # f = support function of B(F)
        # Ω∞(θ) = max over the vertices of |P|(F) (signed bases), Eq. (5)
        theta = rng.normal(size=p)
        brute = max(float(np.max(bases @ (sg * theta))) for sg in signs)
        assert omega(F, theta) == pytest.approx(brute)
        v = polyhedron_lmo(F, theta)
        assert v @ theta == pytest.approx(-omega(F, theta))
        assert np.all(masks @ np.abs(v) <= vals + 1e-9)  # v ∈ |P|(F)
        # Ω*(s) = max_A |s|(A)/F(A) and its maximiser lies in the Ω∞ unit ball
        assert dual_norm(F, theta) == pytest.approx(float(np.max(masks @ np.abs(theta) / vals)), rel=1e-7)
        arg = dual_norm_argmax(F, theta)
        assert omega(F, arg) <= 1 + 1e-7 and arg @ theta == pytest.approx(dual_norm(F, theta), rel=1e-7)


def _perm_base(F, order):
    s = np.empty(F.p)
    s[list(order)] = F.gains(np.array(order))
    return s


@pytest.mark.parametrize("F", _families(), ids=lambda F: F.describe())
def test_dual_norm_inequality_and_equality(F):
    rng = np.random.default_rng(1)
    for _ in range(10):
        theta, s = rng.normal(size=(2, F.p))
        assert abs(theta @ s) <= omega(F, theta) * dual_norm(F, s) * (1 + 1e-9)
        # equality: the LMO vertex of |P|(F) has Ω* = 1 and attains Ω∞(θ)
        v = polyhedron_lmo(F, theta, maximize=True)
        assert dual_norm(F, v) == pytest.approx(1.0, rel=1e-7)
        assert v @ theta == pytest.approx(omega(F, theta) * dual_norm(F, v), rel=1e-7)
        # and the dual-norm maximiser attains Ω*(s) with Ω∞ = 1
        u = dual_norm_argmax(F, s)
        assert u @ s == pytest.approx(omega(F, u) * dual_norm(F, s), rel=1e-6)


def test_closed_forms_and_widths():
    p = 7
    rng = np.random.default_rng(2)
    th = rng.normal(size=p)
    assert omega(Cardinality(p), th) == pytest.approx(np.abs(th).sum())
    assert omega(Indicator(p), th) == pytest.approx(np.abs(th).max())
    assert dual_norm(Cardinality(p), th) == pytest.approx(np.abs(th).max())
    assert dual_norm(Indicator(p), th) == pytest.approx(np.abs(th).sum())
    groups = [[0, 1, 2], [2, 3, 4], [4, 5, 6]]
    G = GroupCoverage(p, groups, [1.0, 2.0, 3.0])
    assert omega(G, th) == pytest.approx(sum(w * np.abs(th[g]).max() for w, g in zip([1, 2, 3], groups, strict=True)))
    assert polyhedron_gaussian_width(Cardinality(p)).value == pytest.approx(p * math.sqrt(2 / math.pi))
    for F in (Indicator(p), G, ChainCut(p, 0.5, 0.1)):  # quadrature against Monte Carlo
        exact = polyhedron_gaussian_width(F)
        mc = polyhedron_gaussian_width(_as_generic(F), n_samples=20_000, seed=3)
        assert mc.method == "monte-carlo" and mc.low - 0.02 <= exact.value <= mc.high + 0.02
    assert polyhedron_l2_radius(Cardinality(p)) == pytest.approx(math.sqrt(p))
    for F in _families(5):
        V = polyhedron_vertices(F)
        assert polyhedron_l2_radius(F) >= np.linalg.norm(V, axis=1).max() - 1e-9
    assert len(polyhedron_vertices(Indicator(p))) == 2 * p
    assert len(polyhedron_vertices(Cardinality(p))) == 2**p


def test_greedy_is_p_log_p_fast():
    for F in (ChainCut(100_000, 1.0, 0.5), Cardinality(100_000)):
        w = np.random.default_rng(0).normal(size=F.p)
        start = time.perf_counter()
        for _ in range(5):
            polyhedron_lmo(F, w)
        assert (time.perf_counter() - start) / 5 < 0.5  # vectorised: tens of ms on a laptop


def test_checks_refuse_bad_set_functions():
    with pytest.raises(ModelError, match="not submodular"):
        CallableSetFunction(4, lambda m: float(m.sum()) ** 2)
    with pytest.raises(ModelError, match="non-decreasing"):
        CallableSetFunction(4, lambda m: float(m.sum() % 2) + 1.0 * m.any())
    with pytest.raises(ModelError, match="positive"):
        CallableSetFunction(3, lambda m: float(m[:2].any()))
    with pytest.raises(ModelError, match="F\\(∅\\)"):
        CallableSetFunction(3, lambda m: 1.0 + m.sum())
    cut = lambda m: float(np.sum(m[1:] != m[:-1]))  # noqa: E731 — the raw chain cut is not monotone
    with pytest.raises(ModelError):
        CallableSetFunction(5, cut)
    with pytest.raises(ModelError, match="trusted"):
        CallableSetFunction(20, lambda m: float(m.any()))
    with pytest.raises(ModelError, match="concave"):
        ConcaveCardinality(4, [0, 1, 3, 4, 5])
    with pytest.raises(ModelError, match="no group"):
        GroupCoverage(4, [[0, 1], [2]])
    check_submodular(ChainCut(6, 1.0, 0.0))  # the monotone chain cut passes
    th = dp.Variable(3)
    with pytest.raises(ModelError, match="λ > 0"):
        SubmodularNorm(th, Cardinality(3), 0.0)
    with pytest.raises(ModelError, match="p=4"):
        SubmodularNorm(th, Cardinality(4), 1.0)


# ----------------------------------------------------------------------------- the norm ball


@pytest.mark.parametrize("F", _families(5), ids=lambda F: F.describe())
def test_norm_ball_geometry(F):
    C = SubmodularNormBall(5, F, 2.0)
    V = C.vertices()
    rng = np.random.default_rng(4)
    for _ in range(5):
        g = rng.normal(size=5)
        assert C.lmo(g) @ g == pytest.approx(float(np.min(V @ g)), rel=1e-7)
        assert C.support(g) == pytest.approx(2.0 * dual_norm(F, g), rel=1e-9)
        v = 3 * rng.normal(size=5)
        pv = C.project(v)
        assert C.contains(pv, tol=1e-7)
        assert np.all((V - pv) @ (v - pv) <= 1e-6 * (1 + np.linalg.norm(v)))  # obtuse-angle test
    for norm in (1, 2, "inf"):
        assert C.radius(norm) >= np.max(np.linalg.norm(V, ord={1: 1, 2: 2, "inf": np.inf}[norm], axis=1)) - 1e-9


# ----------------------------------------------------------------------------- cvxpy encodings


def _regression(n=60, p=P, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, p)) / math.sqrt(p)
    y = np.clip(X @ rng.normal(size=p) + 0.1 * rng.normal(size=n), -1, 1)
    return dp.Dataset(X, y, x_bound=1.0, y_bound=1.0)


@pytest.mark.parametrize("F", _families()[:-1], ids=lambda F: F.describe())
def test_cvxpy_encodings_match_greedy_and_cutting_planes(F):
    data = _regression()
    th = dp.Variable(P)
    backend = get_backend("clarabel")
    opts = SolveOptions(tolerance=1e-10)
    sols = []
    for FF in (F, _as_generic(F)):  # exact atom vs constraint generation over greedy vertices
        prob = dp.Problem(dp.SquaredLoss(data, th), regularizer=(dp.L2Squared(th, 0.1), SubmodularNorm(th, FF, 0.05)))
        res = backend.solve_problem(prob, opts)
        assert res.status is OracleStatus.OPTIMAL
        assert res.primal_bound == pytest.approx(prob.objective(res.solution), abs=1e-7)  # cvxpy value = greedy value
        assert certify(prob, res.solution).distance_bound < 1e-3
        sols.append(res.solution)
        ball = dp.Problem(dp.SquaredLoss(data, th), constraint=SubmodularNormBall(th, FF, 0.5),
                          regularizer=dp.L2Squared(th, 0.1))
        rb = backend.solve_problem(ball, opts)
        assert omega(F, rb.solution) == pytest.approx(0.5, abs=1e-6)  # the constraint is active
        sols.append(rb.solution)
    assert np.allclose(sols[0], sols[2], atol=1e-6) and np.allclose(sols[1], sols[3], atol=1e-6)


# ----------------------------------------------------------------------------- output perturbation


N, H = 10, 0.1


class ExactScalar(Backend):
    """θ ∈ ℝ¹: the perturbed objective minimised by bounded Brent (an exact 1-D oracle)."""

    name, module, distribution = "exact-1d", "scipy", "scipy"

    def version(self):
        return "1"

    def check(self, problem):
        assert problem.dim == 1

    def prepare(self, problem):
        return problem

    def solve(self, prepared, b, options):
        prob = prepared.with_perturbation(prepared.perturbation.with_noise(b))
        res = optimize.minimize_scalar(lambda t: prob.objective(np.array([t])), bounds=(-5, 5), method="bounded",
                                       options={"xatol": 1e-13})
        return OracleResult(np.array([res.x]), OracleStatus.OPTIMAL, True, 0.0, self.name, "1", "ok")


def _pair():
    return one_point_pair(N)


def _huber_problem(data, lam=0.5, omega_weight=1e-3):
    th = dp.Variable(1)
    return dp.Problem(dp.HuberLoss(data, th, h=H),
                      regularizer=(dp.L2Squared(th, lam), SubmodularNorm(th, Cardinality(1), omega_weight)))


class ThirdNoiseSubmodular(SubmodularOutputPerturbation):
    """Mutation: the same mechanism with a third of the output noise."""

    def plan(self, problem, options=None):
        p = super().plan(problem, options)
        o = p.output_noise
        return dataclasses.replace(p, output_noise=o.scaled(1 / 3))


def _output_runner(cls):
    def run(data, seed):
        mech = cls(2.0, 1e-3, ledger=dp.Ledger(), noise="gaussian")
        return mech.run(_huber_problem(data), solver=ExactScalar(), seed=seed).theta
    return run


def test_output_perturbation_release_and_refusals():
    data = _regression(n=400)
    th = dp.Variable(P)
    F = GroupCoverage(P, [[0, 1, 2], [3, 4, 5]])
    prob = dp.Problem(dp.SquaredLoss(data, th), regularizer=(dp.L2Squared(th, 0.1), SubmodularNorm(th, F, 0.01)))
    r = SubmodularOutputPerturbation(1.0, 1e-6, ledger=dp.Ledger()).run(prob, seed=0)
    assert r.private and r.oracle_calls[0].certified and r.theta.shape == (P,)
    assert r.parameters["gaussian_width"] == pytest.approx(polyhedron_gaussian_width(F).value)
    L, lam = r.parameters["lipschitz_l2"], r.parameters["strong_convexity"]
    assert r.parameters["sensitivity_l2"] == pytest.approx(2 * L / (400 * lam) + 2e-4)
    terms = lemma1_excess_risk(prob, NoiseSpec("gaussian", 1.0), 1.0)
    assert terms["total"] == pytest.approx(terms["loss_term"] + terms["regularizer_term"] + terms["ridge_term"])
    no_ridge = dp.Problem(dp.SquaredLoss(data, th), regularizer=SubmodularNorm(th, F, 0.01))
    with pytest.raises(MechanismError, match="L2Squared"):
        SubmodularOutputPerturbation(1.0, 1e-6, ledger=dp.Ledger()).run(no_ridge)
    with pytest.raises(MechanismError, match="SubmodularNorm"):
        SubmodularOutputPerturbation(1.0, 1e-6, ledger=dp.Ledger()).run(
            dp.Problem(dp.SquaredLoss(data, th), regularizer=dp.L2Squared(th, 0.1)))


@covers(SubmodularOutputPerturbation, kind="audit")
def test_output_perturbation_audit():
    d0, d1 = _pair()
    res = audit(_output_runner(SubmodularOutputPerturbation), d0, d1, claimed_epsilon=2.0, claimed_delta=1e-3,
                n_runs=2000, seed=0)
    print(res.summary())
    assert not res.violates, res.summary()
    assert res.epsilon_lower > 0.4, res.summary()


@covers(SubmodularOutputPerturbation, kind="mutation")
def test_output_perturbation_mutation_is_caught():
    d0, d1 = _pair()
    res = audit(_output_runner(ThirdNoiseSubmodular), d0, d1, claimed_epsilon=2.0, claimed_delta=1e-3,
                n_runs=2000, seed=0)
    print(res.summary())
    assert res.violates, res.summary()


# ---------------------------------------------------------------------------
# neighbours: the whole program looks the same (dpopt.testing.neighbours)
# ---------------------------------------------------------------------------


@covers(dp.SubmodularOutputPerturbation, dp.DualFrankWolfe, kind="neighbour")
def test_submodular_mechanisms_look_the_same_on_neighbours(convex_pair: tuple[dp.Dataset, dp.Dataset]) -> None:
    """Both mechanisms of a submodular-norm problem (DualFrankWolfe's other tests are in
    test_dual_frank_wolfe.py)."""

    def problem(data: dp.Dataset) -> dp.Problem:
        th = dp.Variable(data.n_features)
        F = GroupCoverage(data.n_features, [[0, 1], [2]])
        return dp.Problem(dp.SquaredLoss(data, th),
                          regularizer=(dp.L2Squared(th, 0.1), SubmodularNorm(th, F, 0.01)))

    def output(data: dp.Dataset, ledger: dp.Ledger) -> dp.Release:
        return dp.SubmodularOutputPerturbation(1.0, 1e-6, ledger=ledger).run(problem(data), seed=2)

    def dual_fw(data: dp.Dataset, ledger: dp.Ledger) -> dp.Release:
        return dp.DualFrankWolfe(1.0, 1e-6, steps=5, ledger=ledger).run(problem(data), seed=2)

    assert_same_view(output, *convex_pair)
    assert_same_view(dual_fw, *convex_pair)
