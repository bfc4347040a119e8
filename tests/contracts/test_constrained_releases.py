"""Every release satisfies the declared constraints: a property over every set and mechanism.

Every convex-problem mechanism (found by walking the class tree; a guard fails when one is not in
the matrix) meets every constraint set of the set contract suite and constraint lists written with
the variable, on a squared-loss problem.  Each run either is refused before the charge (a
``DpoptError`` from the public checks, a fresh ledger untouched) or releases a point inside the
declared set — whatever the noise, so several seeds per pair.  The matrix must not be vacuous:
every set is released by at least one mechanism, and each of the convex ones releases over
every set it accepts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import dpopt as dp
from dpopt.discovery import import_package, subclasses
from dpopt.errors import DpoptError
from dpopt.mechanisms.base import Mechanism
from dpopt.modeling.constraint_set import ConstraintSet
from dpopt.modeling.expressions import norm1, norm2
from dpopt.testing.set_cases import SET_CASES

#: every mechanism over a convex Problem, with small public settings (a fresh ledger each run)
MECHANISMS: dict[str, Callable[[dp.Ledger], Mechanism]] = {
    "ObjectivePerturbation": lambda led: dp.ObjectivePerturbation(1.0, 1e-6, ledger=led),
    "OutputPerturbation": lambda led: dp.OutputPerturbation(1.0, 1e-6, ledger=led),
    "DPGradientDescent": lambda led: dp.DPGradientDescent(1.0, 1e-6, steps=4, clip=1.0, ledger=led),
    "DPSGD": lambda led: dp.DPSGD(1.0, 1e-6, steps=4, sampling_rate=0.5, clip=1.0, ledger=led),
    "PrivateMirrorDescent": lambda led: dp.PrivateMirrorDescent(1.0, 1e-6, steps=4, ledger=led),
    "GaussianFrankWolfe": lambda led: dp.GaussianFrankWolfe(1.0, 1e-6, steps=4, ledger=led),
    "PolytopeFrankWolfe": lambda led: dp.PolytopeFrankWolfe(1.0, 1e-6, steps=4, ledger=led),
    "AdaSSP": lambda led: dp.AdaSSP(1.0, 1e-6, ledger=led),
    "SubmodularOutputPerturbation": lambda led: dp.SubmodularOutputPerturbation(1.0, 1e-6, ledger=led),
    "DualFrankWolfe": lambda led: dp.DualFrankWolfe(1.0, 1e-6, steps=3, ledger=led),
}
#: mechanisms whose candidates are other mechanisms (their releases are those of the matrix)
COMPOSITE = {"PrivateSelection", "RefitSelection"}
#: the sets of the contract suite whose mechanisms run slowly (cutting-plane dual norms)
SLOW = {"omega-general", "omega-coverage", "omega-owl1"}


def _lists(theta: dp.Variable) -> dict[str, object]:
    """Constraint lists as a cvxpy user writes them (dimension 4)."""
    A = np.array([[1.0, 1.0, 0.0, 0.0], [0.0, -1.0, 2.0, 1.0]])
    return {
        "w>=0 & norm1<=2": [theta >= 0, norm1(theta) <= 2.0],
        "0<=w<=0.5 & w[1]==0": [theta >= 0, theta <= 0.5, theta[1] == 0],
        "A@w<=b & norm2<=1": [A @ theta <= np.array([0.3, 0.2]), norm2(theta) <= 1.0],
        "w>=0 & A@w<=b & norm1<=1.5": [theta >= 0, A @ theta <= 0.4, dp.L1Ball(theta, 1.5)],
        "Box & norm2": [dp.Box(theta, -0.3, 0.6), norm2(theta) <= 0.7],
    }


def _data(dim: int) -> dp.Dataset:
    rng = np.random.default_rng(dim)
    X = rng.uniform(-1.0, 1.0, (60, dim))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    y = np.clip(X @ np.linspace(-1.0, 1.0, dim) + 0.1 * rng.standard_normal(60), -1.0, 1.0)
    return dp.Dataset(X, y, x_bound=1.0, x_norm=2, y_bound=1.0)


def _problem(name: str) -> tuple[dp.Problem, ConstraintSet]:
    if name in SET_CASES:
        c = SET_CASES[name]()
        theta = dp.Variable(c.dim)
        constraint: Any = c
    else:
        theta = dp.Variable(4)
        constraint = _lists(theta)[name]
    problem = dp.Problem(dp.SquaredLoss(_data(theta.size), theta), constraint=constraint,
                         regularizer=dp.L2Squared(theta, 0.1))
    assert problem.constraint is not None
    return problem, problem.constraint


CASES = sorted(SET_CASES) + sorted(_lists(dp.Variable(4)))


def _concrete_mechanisms() -> set[str]:
    import_package("dpopt.mechanisms")
    return {cls.__name__ for cls in subclasses(Mechanism, public=True)
            if cls.problem_type is dp.Problem or (isinstance(cls.problem_type, tuple) and dp.Problem in cls.problem_type)}


def test_every_mechanism_over_a_problem_is_in_the_matrix() -> None:
    assert _concrete_mechanisms() == set(MECHANISMS) | COMPOSITE


def _run(mech: str, problem: dp.Problem, seed: int) -> tuple[str, np.ndarray | None, dp.Ledger]:
    ledger = dp.Ledger()
    try:
        release = MECHANISMS[mech](ledger).run(problem, seed=seed)
    except DpoptError:
        return "refused", None, ledger
    assert release.private
    return "released", release.theta, ledger


@pytest.mark.parametrize("case", [pytest.param(c, marks=pytest.mark.slow) if c in SLOW else c for c in CASES])
def test_every_release_lies_in_the_declared_set(case: str) -> None:
    problem, c = _problem(case)
    released = []
    for mech in MECHANISMS:
        outcomes = [_run(mech, problem, seed) for seed in (0, 1, 2)]
        kinds = {kind for kind, _, _ in outcomes}
        assert len(kinds) == 1, (mech, kinds)  # the decision reads declarations, never the noise
        if kinds == {"refused"}:
            assert all(ledger.charges == () for _, _, ledger in outcomes), mech  # before the charge
            continue
        released.append(mech)
        for _, theta, _ in outcomes:
            assert theta is not None and c.contains(theta, tol=1e-7), (mech, case, theta)
    assert released, case  # not vacuous: some mechanism releases over every set
    if c.bounded and (c.exact_projection or c.relaxation() is not None):
        assert {"ObjectivePerturbation", "OutputPerturbation", "DPGradientDescent"} <= set(released), case


def test_the_issue_example_releases_inside_both_constraints_for_every_accepting_mechanism() -> None:
    """``[w >= 0, norm1(w) <= 20]`` on a squared loss: each mechanism that accepts it releases a w
    with w ≥ 0 and ‖w‖₁ ≤ 20 (exactly non-negative: the orthant part is a clip)."""
    theta = dp.Variable(5)
    problem = dp.Problem(dp.SquaredLoss(_data(5), theta), constraint=[theta >= 0, norm1(theta) <= 20])
    ran = 0
    for mech in MECHANISMS:
        kind, w, _ = _run(mech, problem, 3)
        if kind == "released":
            assert w is not None and np.all(w >= 0.0) and float(np.sum(w)) <= 20.0 * (1 + 1e-12), mech
            ran += 1
    assert ran >= 4
