"""The a-priori fallback solver (dpopt.numerics.apg) and DualFrankWolfe's inner-solve fallback.

What users rely on: whatever the data, the fallback's point is within the declared
tolerance of the exact optimum of the perturbed problem, after a number of steps that
depends only on public constants and the noise; a convex mechanism whose solver fails
still releases; DualFrankWolfe's inner solves never raise for data reasons.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpopt as dp
from dpopt.errors import MechanismError
from dpopt.mechanisms.dual_frank_wolfe import DualFrankWolfe, DualLoss
from dpopt.modeling.losses import Loss
from dpopt.modeling.perturbation import Perturbation
from dpopt.modeling.submodular import Cardinality, GroupCoverage, Indicator
from dpopt.modeling.submodular_norms import SubmodularNorm
from dpopt.numerics.apg import (
    fallback_iterations,
    fallback_supported,
    plan_fallback,
    public_radius,
    solve_with_proof,
    unsupported_reason,
)
from dpopt.numerics.certificates import certify

P = 5


def _data(*, n: int = 60, seed: int = 0, binary: bool) -> dp.Dataset:
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, P)) / math.sqrt(P)
    y = np.clip(X @ rng.normal(size=P) + 0.1 * rng.normal(size=n), -1, 1)
    if binary:
        return dp.Dataset(X, np.where(y > 0, 1.0, -1.0), x_bound=1.0, x_norm=2)
    return dp.Dataset(X, y, x_bound=1.0, x_norm=2, y_bound=1.0)


def _constraint(name: str, th: dp.Variable) -> dp.sets.ConstraintSet | None:
    return {"none": None, "l2": dp.L2Ball(th, 0.8), "l1": dp.L1Ball(th, 0.7), "box": dp.LinfBall(th, 0.3),
            "simplex": dp.Simplex(th, 1.0)}[name]


def _perturbed(problem: dp.Problem, seed: int, *, zeta: float = 0.0, scale: float = 0.3) -> dp.Problem:
    b = np.random.default_rng(100 + seed).normal(scale=scale, size=problem.dim)
    return problem.with_perturbation(Perturbation(problem.dim, b=b, zeta=zeta))


def _reference(problem: dp.Problem, accuracy: float = 1e-9) -> tuple[np.ndarray, float]:
    """A high-accuracy optimum with its own a-posteriori certificate (independent of the a-priori bound)."""
    ref = solve_with_proof(problem, 1e-11, max_iterations=None)
    cert = certify(problem, ref.point)
    assert cert.distance_bound <= accuracy, "the reference solve did not certify"
    return cert.point, cert.distance_bound


def _clarabel_reference(problem: dp.Problem) -> np.ndarray:
    from dpopt.backends.registry import get as get_backend
    from dpopt.backends.result import SolveOptions
    from dpopt.errors import BackendUnavailableError

    backend = get_backend("clarabel")
    try:
        backend.require()
    except BackendUnavailableError:
        pytest.skip("the Ω∞ reference needs the clarabel backend (pip install dpopt[convex])")
    result = backend.solve_problem(problem, SolveOptions(tolerance=1e-10))
    assert result.solution is not None
    return np.asarray(result.solution)


# ----------------------------------------------------------------------------- the a-priori bound


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("l1", [0.0, 0.05])
@pytest.mark.parametrize("set_name", ["none", "l2", "l1", "box", "simplex"])
@pytest.mark.parametrize("loss_cls", [dp.LogisticLoss, dp.SquaredLoss])
def test_a_priori_bound_holds_against_a_reference(loss_cls, set_name, l1, seed):
    data = _data(seed=seed, binary=loss_cls is dp.LogisticLoss)
    th = dp.Variable(P)
    regs = (dp.L2Squared(th, 0.05),) + ((dp.L1Norm(th, l1),) if l1 else ())
    problem = _perturbed(dp.Problem(loss_cls(data, th), constraint=_constraint(set_name, th), regularizer=regs),
                         seed, zeta=0.01)
    tolerance = 1e-4
    solved = solve_with_proof(problem, tolerance)
    ref, ref_err = _reference(problem)
    assert solved.distance_bound <= tolerance / 2
    assert np.linalg.norm(solved.point - ref) <= solved.distance_bound + ref_err
    if problem.constraint is not None:
        assert problem.constraint.contains(solved.point, tol=1e-12)
    # the count is what fallback_iterations says, from the public radius
    assert solved.iterations == fallback_iterations(problem, tolerance, public_radius(problem))


def test_bound_is_not_vacuous_an_early_stop_misses_it():
    """Far fewer steps than planned leave a point that the bound would not cover: K is not padding."""
    data = _data(binary=True)
    th = dp.Variable(P)
    problem = _perturbed(dp.Problem(dp.LogisticLoss(data, th), regularizer=dp.L2Squared(th, 1e-3)), 0, scale=1.0)
    solved = solve_with_proof(problem, 1e-8)
    ref, _ = _reference(problem)
    from dpopt.numerics import apg

    plan = apg._plan(problem, 1e-8, None)
    early = apg._v_fista(problem, apg.FallbackPlan(plan.start, plan.radius, plan.strong_convexity,
                                                   plan.smoothness, 3, plan.distance_bound, plan.tolerance))
    assert np.linalg.norm(early - ref) > 1e-8 >= np.linalg.norm(solved.point - ref)


@pytest.mark.parametrize("F", [Cardinality(P), Indicator(P), GroupCoverage(P, [[0, 1], [2, 3, 4]])],
                         ids=["cardinality", "indicator", "disjoint-coverage"])
def test_submodular_norm_with_a_product_polyhedron_is_supported(F):
    data = _data(seed=3, binary=False)
    th = dp.Variable(P)
    problem = _perturbed(dp.Problem(dp.SquaredLoss(data, th), regularizer=(dp.L2Squared(th, 0.1),
                                                                          SubmodularNorm(th, F, 0.05))), 3)
    assert fallback_supported(problem)
    solved = solve_with_proof(problem, 1e-5)
    # reference: an independent interior-point solve (dpopt's Ω∞ duality-gap certificate is too
    # coarse, about 1e-5, to serve as one)
    ref = _clarabel_reference(problem)
    assert np.linalg.norm(solved.point - ref) <= solved.distance_bound + 1e-7


def test_unsupported_structures_are_refused_with_a_reason():
    data = _data(binary=False)
    th = dp.Variable(P)
    overlapping = dp.Problem(dp.SquaredLoss(data, th), regularizer=(
        dp.L2Squared(th, 0.1), SubmodularNorm(th, GroupCoverage(P, [[0, 1, 2], [2, 3, 4]]), 0.05)))
    no_ridge = dp.Problem(dp.SquaredLoss(data, th), constraint=dp.L2Ball(th, 1.0))
    hinge = dp.Problem(dp.HingeLoss(_data(binary=True), th), regularizer=dp.L2Squared(th, 0.1))
    polytope = dp.Problem(dp.SquaredLoss(data, th), constraint=dp.sets.VertexPolytope(np.eye(P)),
                          regularizer=dp.L2Squared(th, 0.1))
    for problem, word in ((overlapping, "Ω∞"), (no_ridge, "strongly convex"), (hinge, "Hessian"),
                          (polytope, "projection")):
        assert not fallback_supported(problem)
        assert word in str(unsupported_reason(problem))
        with pytest.raises(MechanismError, match="no a-priori fallback"):
            solve_with_proof(problem, 1e-6)


class _UnboundedAtZero(Loss):
    """A user loss that declares no bound on φ'(0, y)."""

    name = "user"

    def phi(self, z, y):  # noqa: ANN001, ANN201
        return 0.5 * (z - y) ** 2

    def dphi(self, z, y):  # noqa: ANN001, ANN201
        return z - y

    def d2phi(self, z, y):  # noqa: ANN001, ANN201
        return np.ones_like(z)

    def dphi_bound(self, z_bound: float) -> float:
        return math.inf

    def d2phi_bound(self) -> float:
        return 1.0


def test_no_public_radius_is_refused_and_a_bounded_set_supplies_one():
    th = dp.Variable(P)
    loss = _UnboundedAtZero(_data(binary=False), th)
    free = dp.Problem(loss, regularizer=dp.L2Squared(th, 0.1))
    with pytest.raises(MechanismError, match="public bound"):
        public_radius(free)
    assert not fallback_supported(free)
    boxed = dp.Problem(loss, constraint=dp.L2Ball(th, 2.0), regularizer=dp.L2Squared(th, 0.1))
    assert public_radius(boxed) == pytest.approx(4.0)
    assert fallback_supported(boxed)


# ----------------------------------------------------------------------------- public iteration count


def test_iteration_count_depends_only_on_public_inputs():
    """Neighbouring datasets (one row replaced, an extreme row inside the bounds) and the same noise:
    the same radius, the same K, the same plan."""
    data = _data(n=80, seed=5, binary=True)
    neighbour = data.replace_row(7, np.full(P, 1.0 / math.sqrt(P)), -1.0)
    counts, radii = set(), set()
    for d in (data, neighbour):
        th = dp.Variable(P)
        problem = dp.Problem(dp.LogisticLoss(d, th), constraint=dp.L2Ball(th, 50.0),
                             regularizer=dp.L2Squared(th, 1e-3))
        perturbed = _perturbed(problem, 1)
        solved = solve_with_proof(perturbed, 1e-6)
        counts.add(solved.iterations)
        radii.add(public_radius(perturbed))
        counts.add(plan_fallback(problem, 1e-6, noise_bound=float(np.linalg.norm(perturbed.perturbation.b)))
                   .iterations)
    assert len(counts) == 1 and len(radii) == 1


def test_fallback_iterations_is_deterministic_and_monotone():
    th = dp.Variable(P)
    problem = dp.Problem(dp.LogisticLoss(_data(binary=True), th), regularizer=dp.L2Squared(th, 1e-3))
    k = fallback_iterations(problem, 1e-6, 10.0)
    assert k == fallback_iterations(problem, 1e-6, 10.0)
    assert fallback_iterations(problem, 1e-8, 10.0) > k > fallback_iterations(problem, 1e-4, 10.0)
    assert fallback_iterations(problem, 1e-6, 1e4) > k
    with pytest.raises(MechanismError):
        fallback_iterations(problem, 0.0, 10.0)


def test_plan_refuses_before_the_noise_with_a_message_without_data_values():
    th = dp.Variable(P)
    problem = dp.Problem(dp.LogisticLoss(_data(binary=True), th), regularizer=dp.L2Squared(th, 1e-6))
    with pytest.raises(MechanismError, match="max_iterations=50") as info:
        plan_fallback(problem, 1e-6, noise_bound=1.0, max_iterations=50)
    public = str(info.value).replace("max_iterations=50", "").replace(problem.summary(), "").replace("L2Squared", "")
    assert not any(ch.isdigit() for ch in public)  # shapes and settings only


# ----------------------------------------------------------------------------- mechanisms


def test_objective_perturbation_releases_through_the_fallback_when_the_solver_fails(monkeypatch):
    """The accelerator is made to fail; the run still releases and the fallback's point is
    within the tolerance of the exact optimum of the perturbed problem."""
    import dpopt.mechanisms.convex as convex
    from dpopt.backends.result import OracleResult, OracleStatus

    seen: dict[str, object] = {}

    def broken(backend, template, b, options):  # noqa: ANN001, ANN202
        seen["problem"] = template.with_perturbation(template.perturbation.with_noise(b))
        return OracleResult(solution=None, status=OracleStatus.ERROR, solver_certified=False, solve_time=0.0,
                            backend=backend.name, backend_version="test", raw_status="made to fail")

    original = convex._fallback

    def recording(plan, b):  # noqa: ANN001, ANN202
        point, details = original(plan, b)
        seen["point"] = point
        return point, details

    monkeypatch.setattr(convex, "_accelerate", broken)
    monkeypatch.setattr(convex, "_fallback", recording)
    th = dp.Variable(P)
    problem = dp.Problem(dp.LogisticLoss(_data(n=200, binary=True), th), constraint=dp.L2Ball(th, 3.0),
                         regularizer=dp.L2Squared(th, 0.01))
    mech = dp.ObjectivePerturbation(epsilon=1.0, delta=1e-6, tolerance=1e-6, ledger=dp.Ledger())
    release = mech.run(problem, seed=3)
    assert np.all(np.isfinite(release.theta))
    ref, ref_err = _reference(seen["problem"])  # type: ignore[arg-type]
    assert np.linalg.norm(seen["point"] - ref) <= 1e-6 + ref_err  # type: ignore[operator]


@pytest.fixture
def capped_newton(monkeypatch):  # noqa: ANN201
    """Newton capped at zero steps (its answer is the start, never certified); counts the fallbacks."""
    calls = []
    original = DualLoss._fallback_primal

    def no_steps(self, theta, s, steps):  # noqa: ANN001, ANN202
        return theta

    def counting(self, s):  # noqa: ANN001, ANN202
        calls.append(1)
        return original(self, s)

    monkeypatch.setattr(DualLoss, "_newton", no_steps)
    monkeypatch.setattr(DualLoss, "_fallback_primal", counting)
    return calls


@pytest.mark.parametrize("loss_cls", [dp.LogisticLoss, dp.SquaredLoss])
def test_dual_inner_solve_falls_back_instead_of_raising(loss_cls, capped_newton):
    data = _data(seed=2, binary=loss_cls is dp.LogisticLoss)
    loss = loss_cls(data, dp.Variable(P))
    s = np.random.default_rng(4).normal(scale=0.5, size=P)
    capped = DualLoss(loss, 0.05, 1e-8)
    if loss_cls is dp.SquaredLoss:  # the Cholesky answer certifies; break it to force the fallback
        capped._chol = (np.eye(P) * 1e3, False)
    theta = capped.primal(s)
    assert capped_newton, "the fallback was not used"
    problem = dp.Problem(loss, regularizer=dp.L2Squared(loss.variable, 0.05), perturbation=Perturbation(P, b=s))
    ref, ref_err = _reference(problem)
    assert np.linalg.norm(theta - ref) <= 1e-8 + ref_err


def test_dual_frank_wolfe_releases_with_newton_capped(capped_newton):
    th = dp.Variable(P)
    problem = dp.Problem(dp.LogisticLoss(_data(seed=1, binary=True), th),
                         regularizer=(dp.L2Squared(th, 0.1), SubmodularNorm(th, Cardinality(P), 0.05)))
    mech = DualFrankWolfe(1.0, 1e-6, steps=3, inner_tolerance=1e-7, ledger=dp.Ledger())
    release = mech.run(problem, seed=0)
    assert release.theta.shape == (P,) and np.all(np.isfinite(release.theta))
    assert len(capped_newton) == 4  # one inner solve per step and the primal recovery
