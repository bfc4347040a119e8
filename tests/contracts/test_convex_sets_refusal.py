"""No convex problem that dpopt accepts can fail for data reasons.

Every convex mechanism (objective, output and submodular output perturbation, dual
Frank–Wolfe) meets every constraint set (the fixtures of the set contract suite, one per
``ConstraintSet`` subclass, found by walking the class tree) on a neighbouring pair with
the same seed.  The outcome is one of two, and the same on both sides: a private release
with identical public parameters, or a refusal before the charge (a ``MechanismError`` on
one line, a fresh ledger untouched) whose message names only mechanisms that really run on
the problem.  Which of the two is decided by the set's declaration, checked here against
the independent rule "the a-priori fallback needs an exact projection".

Also: ``Box`` and ``NonNegative`` projections against ``np.clip`` / ``np.maximum`` and
cvxpy, objective perturbation over the orthant (which an ``HPolytope`` could never
express), the nuclear-norm ball's projection against an independent SVD computation, and
the ``release-unsafe`` experiment mode.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any

import cvxpy as cp
import numpy as np
import pytest

import dpopt as dp
from dpopt.discovery import subclasses
from dpopt.errors import MechanismError, ModelError
from dpopt.mechanisms import convex
from dpopt.mechanisms.convex import UNSAFE_NOTE, ConvexMechanism
from dpopt.modeling.constraint_set import ConstraintSet
from dpopt.modeling.submodular import Cardinality, ChainCut
from dpopt.modeling.submodular_norms import SubmodularNorm
from dpopt.testing.set_cases import SET_CASES

Builder = Callable[[dp.Dataset, ConstraintSet | None], dp.Problem]


def _glm(data: dp.Dataset, c: ConstraintSet | None) -> dp.Problem:
    th = dp.Variable(data.n_features)
    return dp.Problem(dp.LogisticLoss(data, th), constraint=c, regularizer=dp.L2Squared(th, 0.1))


def _omega(data: dp.Dataset, c: ConstraintSet | None) -> dp.Problem:
    th = dp.Variable(data.n_features)
    return dp.Problem(dp.LogisticLoss(data, th), constraint=c,
                      regularizer=(dp.L2Squared(th, 0.1), SubmodularNorm(th, Cardinality(data.n_features), 0.02)))


#: every convex mechanism: (factory with a fresh ledger, the problem family it solves, whether it
#: accepts a constraint set whose projection is exact — the rule the a-priori fallback needs)
MECHANISMS: dict[type, tuple[Callable[[dp.Ledger], dp.Mechanism], Builder, bool]] = {
    dp.ObjectivePerturbation: (lambda led: dp.ObjectivePerturbation(1.0, 1e-6, ledger=led), _glm, True),
    dp.OutputPerturbation: (lambda led: dp.OutputPerturbation(1.0, 1e-6, ledger=led), _glm, True),
    dp.SubmodularOutputPerturbation: (lambda led: dp.SubmodularOutputPerturbation(1.0, 1e-6, ledger=led),
                                      _omega, False),  # Ω∞'s exact prox exists on ℝ^p only
    dp.DualFrankWolfe: (lambda led: dp.DualFrankWolfe(1.0, 1e-6, steps=3, ledger=led), _omega, False),
}


def _concrete(cls: type) -> set[type]:
    return set(subclasses(cls))


def test_every_convex_mechanism_is_in_the_matrix() -> None:
    assert _concrete(ConvexMechanism) | {dp.DualFrankWolfe} == set(MECHANISMS)


def _pair(dim: int) -> tuple[dp.Dataset, dp.Dataset]:
    """A dataset and its neighbour: row 3 replaced by an extreme row on the bound with a flipped label."""
    rng = np.random.default_rng(dim)
    X = rng.uniform(-1, 1, (40, dim))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    y = np.where(X @ np.linspace(-1.0, 1.0, dim) > 0, 1.0, -1.0)
    d0 = dp.Dataset(X, y, x_bound=1.0, x_norm=2, y_bound=1.0)
    return d0, d0.replace_row(3, np.eye(dim)[0], -y[3])


def _observe(mech: type, data: dp.Dataset, c: ConstraintSet | None) -> tuple[Any, ...]:
    """(outcome, public record or message, charges): everything but the noisy output."""
    factory, build, _ = MECHANISMS[mech]
    ledger = dp.Ledger()
    problem = build(data, c)
    try:
        release = factory(ledger).run(problem, seed=5)
    except MechanismError as exc:
        return "refused", str(exc), ledger.charges
    public = release.to_dict()
    public.pop("theta")
    assert release.private and release.diagnostics is None
    return "released", json.dumps(public, sort_keys=True), tuple((ch.epsilon, ch.released) for ch in ledger.charges)


CASES = {"no-set": None, **SET_CASES}


def _solvable(c: ConstraintSet) -> bool:
    """The a-priori fallback needs an exact projection: the set's own, or its declared superset's
    (solved over it, the release projected onto the set)."""
    relaxed = c.relaxation()
    return c.exact_projection or (relaxed is not None and relaxed.exact_projection)


@pytest.mark.parametrize("set_name", sorted(CASES))
@pytest.mark.parametrize("mech", list(MECHANISMS), ids=lambda m: m.__name__)
def test_release_on_both_neighbours_or_refusal_before_the_charge(mech: type, set_name: str) -> None:
    factory = CASES[set_name]
    c = None if factory is None else factory()
    d0, d1 = _pair(4 if c is None else c.dim)
    v0, v1 = _observe(mech, d0, c), _observe(mech, d1, c)
    assert v0 == v1  # same outcome, same public record or message, same charges
    accepts_sets = MECHANISMS[mech][2]
    expected = "released" if c is None or (accepts_sets and _solvable(c)) else "refused"
    assert v0[0] == expected, v0[1]
    if expected == "refused":
        message = v0[1]
        assert v0[2] == ()  # a fresh ledger, untouched
        assert "\n" not in message and "choose another solver" not in message
    else:
        assert v0[2] == ((1.0, True),)


def _named_alternatives(message: str) -> list[str]:
    found = re.search(r"Mechanisms that accept this problem: ([A-Za-z, ]+)\.", message)
    return [] if found is None else found.group(1).split(", ")


#: sets whose alternatives take seconds (compiled mirror steps over |P|(F) by cutting planes)
_SLOW_ALTERNATIVES = {"omega-general", "omega-coverage"}


@pytest.mark.parametrize("set_name", [
    pytest.param(n, marks=pytest.mark.slow) if n in _SLOW_ALTERNATIVES else n
    for n in sorted(n for n, f in SET_CASES.items() if not _solvable(f()))])
def test_a_refusal_names_mechanisms_that_really_run_on_the_set(set_name: str) -> None:
    c = SET_CASES[set_name]()
    d0, _ = _pair(c.dim)
    problem = _glm(d0, c)
    with pytest.raises(MechanismError) as info:
        dp.ObjectivePerturbation(1.0, 1e-6, ledger=dp.Ledger()).run(problem, seed=0)
    names = _named_alternatives(str(info.value))
    assert names, str(info.value)  # every such set has a gradient or Frank–Wolfe mechanism
    settings = dict(convex._ALTERNATIVES)
    for name in names:
        release = getattr(dp, name)(1.0, 1e-6, ledger=dp.Ledger(), **settings[name]).run(problem, seed=0)
        assert release.private and release.theta.shape == (c.dim,)
    # and those left out really refuse the problem (before the charge)
    for name, extra in convex._ALTERNATIVES:
        if name in names:
            continue
        ledger = dp.Ledger()
        with pytest.raises(dp.errors.DpoptError):
            getattr(dp, name)(1.0, 1e-6, ledger=ledger, **extra).run(problem, seed=0)
        assert ledger.charges == ()


def test_overlapping_submodular_norm_is_refused_before_the_charge_and_dual_fw_runs_it() -> None:
    d0, d1 = _pair(4)
    for data in (d0, d1):
        th = dp.Variable(4)
        problem = dp.Problem(dp.LogisticLoss(data, th),
                             regularizer=(dp.L2Squared(th, 0.1), SubmodularNorm(th, ChainCut(4, 0.5, 0.1), 0.02)))
        ledger = dp.Ledger()
        with pytest.raises(MechanismError, match="Mechanisms that accept this problem: DualFrankWolfe"):
            dp.SubmodularOutputPerturbation(1.0, 1e-6, ledger=ledger).run(problem, seed=0)
        assert ledger.charges == ()
        assert dp.DualFrankWolfe(1.0, 1e-6, steps=3, ledger=dp.Ledger()).run(problem, seed=0).private


def test_a_problem_without_fallback_runs_only_as_an_announced_unsafe_experiment() -> None:
    c = SET_CASES["omega-cardinality"]()  # no exact projection and no closed-form superset declared
    assert not _solvable(c)
    d0, _ = _pair(c.dim)
    problem = _glm(d0, c)
    ledger = dp.Ledger()
    with pytest.raises(MechanismError, match="cannot guarantee a release"):
        dp.OutputPerturbation(1.0, 1e-6, ledger=ledger).run(problem, seed=0)
    assert ledger.charges == ()
    unsafe = dp.OutputPerturbation(1.0, 1e-6, ledger=dp.Ledger(), on_uncertified="release-unsafe").run(problem, seed=0)
    assert not unsafe.private and UNSAFE_NOTE in unsafe.notes
    assert "no privacy guarantee" in unsafe.parameters["fallback"]


@pytest.mark.parametrize("set_name", sorted(n for n, f in SET_CASES.items() if f().exact_projection))
def test_a_failing_accelerator_never_reaches_the_uncertified_error(monkeypatch: pytest.MonkeyPatch,
                                                                   set_name: str) -> None:
    """The external solver crashes on every call: the fallback answers, for every set it accepts."""
    from dpopt.backends.clarabel import ClarabelBackend

    def crash(*args: object, **kwargs: object) -> None:
        raise RuntimeError("solver crashed")

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("a convex mechanism reached the fail-closed error")

    monkeypatch.setattr(ClarabelBackend, "solve", crash)
    monkeypatch.setattr(dp.Mechanism, "_uncertified", never)
    c = SET_CASES[set_name]()
    d0, _ = _pair(c.dim)
    for cls in (dp.ObjectivePerturbation, dp.OutputPerturbation):
        release = cls(1.0, 1e-6, ledger=dp.Ledger()).run(_glm(d0, c), solver="clarabel", seed=0)
        assert release.private


# ----------------------------------------------------------------------------- Box and NonNegative


def _cvxpy_projection(constraints: Callable[[cp.Variable], list[Any]], v: np.ndarray) -> np.ndarray:
    x = cp.Variable(v.size)
    prob = cp.Problem(cp.Minimize(cp.sum_squares(x - v)), constraints(x))
    prob.solve(solver="CLARABEL")
    assert prob.status == "optimal"
    return np.asarray(x.value)


def test_box_projection_is_the_clip_and_agrees_with_cvxpy() -> None:
    rng = np.random.default_rng(0)
    low, high = np.array([-1.0, 0.0, 0.5, -2.0, 3.0]), np.array([1.0, 0.0, 2.0, -1.0, 3.5])
    box = dp.Box(5, low, high)
    for v in 3.0 * rng.standard_normal((5, 5)):
        x = box.project(v)
        assert np.array_equal(x, np.clip(v, low, high))
        ref = _cvxpy_projection(lambda t: [t >= low, t <= high], v)
        assert np.linalg.norm(x - ref) <= 1e-6
    scalar = dp.Box(dp.Variable(3), -0.5, 2.0)
    assert np.array_equal(scalar.low, np.full(3, -0.5)) and np.array_equal(scalar.high, np.full(3, 2.0))


def test_nonnegative_projection_is_the_positive_part_and_agrees_with_cvxpy() -> None:
    rng = np.random.default_rng(1)
    orthant = dp.NonNegative(dp.Variable(6))
    for v in 2.0 * rng.standard_normal((5, 6)):
        x = orthant.project(v)
        assert np.array_equal(x, np.maximum(v, 0.0))
        assert np.linalg.norm(x - _cvxpy_projection(lambda t: [t >= 0], v)) <= 1e-6


@pytest.mark.parametrize("low, high, word", [
    (0.0, math.inf, "finite"), (math.nan, 1.0, "finite"), (1.0, 0.0, "low ≤ high"),
    ([0.0, 0.0], 1.0, "shape"), ([[0.0, 0.0, 0.0]], 1.0, "shape"), ("a", 1.0, "numeric"),
    (0.0, [1.0, 2.0, -1.0], "low ≤ high"),
])
def test_box_bounds_are_validated(low: Any, high: Any, word: str) -> None:
    with pytest.raises(ModelError, match=word):
        dp.Box(3, low, high)


def test_frank_wolfe_refuses_the_orthant_before_the_charge_and_dp_gd_stays_in_it() -> None:
    d0, _ = _pair(4)
    problem = _glm(d0, dp.NonNegative(4))
    for cls in (dp.GaussianFrankWolfe, dp.PolytopeFrankWolfe, dp.PrivateMirrorDescent):
        ledger = dp.Ledger()
        with pytest.raises(MechanismError, match="NonNegative is unbounded"):
            cls(1.0, 1e-6, steps=3, ledger=ledger).run(problem, seed=0)
        assert ledger.charges == ()
    theta = dp.DPGradientDescent(1.0, 1e-6, ledger=dp.Ledger()).run(problem, seed=0).theta
    assert np.all(theta >= 0.0)  # the last iterate is a projection onto the orthant
    boxed = _glm(d0, dp.Box(4, -0.2, [0.1, 0.3, 0.5, 0.7]))
    for cls in (dp.GaussianFrankWolfe, dp.PrivateMirrorDescent, dp.DPGradientDescent):
        theta = cls(1.0, 1e-6, steps=5, ledger=dp.Ledger()).run(boxed, seed=0).theta
        assert boxed.constraint.contains(theta, tol=1e-9)


def test_objective_perturbation_over_the_orthant_releases_non_negative_coefficients() -> None:
    """Non-negative coefficients as a new user writes them: the orthant releases every time, exactly
    non-negative (the grid release is clipped onto it); the inequality polytope is solved over its
    bounding box and its release projected onto it."""
    d0, _ = _pair(4)
    y = np.where(d0.X @ np.array([-1.0, -1.0, 1.0, 0.5]) > 0, 1.0, -1.0)  # two coefficients want to be < 0
    data = dp.Dataset(d0.X, y, x_bound=1.0, x_norm=2)
    ledger = dp.Ledger()
    free = _glm(data, None)
    orthant = _glm(data, dp.NonNegative(4))
    for seed in range(8):
        unconstrained = dp.ObjectivePerturbation(1.0, 1e-6, ledger=ledger).run(free, seed=seed)
        release = dp.ObjectivePerturbation(1.0, 1e-6, ledger=ledger).run(orthant, seed=seed)
        slack = 8.0 * release.parameters["output_noise_scale"]  # the approximate-oracle noise only
        assert release.private and np.all(release.theta >= 0.0)
        assert np.min(unconstrained.theta) < -10 * slack  # the constraint is active
    assert all(c.released for c in ledger.charges)
    A = np.vstack([-np.eye(4), np.eye(4), np.ones((1, 4))])
    hpoly = dp.sets.HPolytope(A, np.concatenate([np.zeros(4), np.full(4, 10.0), [1.0]]))
    release = dp.ObjectivePerturbation(1.0, 1e-6, ledger=dp.Ledger()).run(_glm(data, hpoly), seed=0)
    assert release.private and hpoly.contains(release.theta, tol=1e-7)
    assert release.parameters["solved_over"].startswith("Box")
    with pytest.raises(ModelError, match="unbounded"):  # the orthant itself is no HPolytope
        dp.sets.HPolytope(-np.eye(4), np.zeros(4))


# ----------------------------------------------------------------------------- nuclear-norm ball


def _nuclear_projection_by_bisection(M: np.ndarray, r: float) -> np.ndarray:
    """Independent: SVD, then the ℓ1-ball projection of the singular values by bisection on τ."""
    U, s, Vt = np.linalg.svd(M, full_matrices=False)
    if s.sum() <= r:
        return M
    lo, hi = 0.0, float(s.max())
    for _ in range(200):
        tau = 0.5 * (lo + hi)
        lo, hi = (tau, hi) if np.maximum(s - tau, 0.0).sum() > r else (lo, tau)
    return (U * np.maximum(s - 0.5 * (lo + hi), 0.0)) @ Vt


def test_nuclear_norm_projection_matches_an_independent_svd_computation() -> None:
    rng = np.random.default_rng(2)
    ball = dp.sets.NuclearNormBall(12, 1.5, shape=(3, 4))
    assert ball.exact_projection
    for v in 2.0 * rng.standard_normal((6, 12)):
        ref = _nuclear_projection_by_bisection(v.reshape(3, 4), 1.5).ravel()
        assert np.linalg.norm(ball.project(v) - ref) <= 1e-10
        x, err = ball.project_with_error(v)
        assert err == 0.0 and np.array_equal(x, ball.project(v))
