"""OutputPerturbation: its release projected onto the user's set by default (post-processing), and
the whole program on neighbours.

The noisy grid values can leave the constraint set; with ``project="auto"`` (the default) the
release is their projection onto C whenever C declares a closed-form projection
(``exact_projection``), ``project=False`` keeps the grid values, ``project=True`` projects onto
any set.  Whether a run projects is read from the setting and the set's declaration only.
"""

import numpy as np
import pytest

import dpopt as dp
from dpopt.errors import MechanismError
from dpopt.testing.coverage import covers
from dpopt.testing.neighbours import classification, convex_backends, glm
from dpopt.testing.views import assert_no_private_bytes, assert_same_view


def _logistic(constraint, lam=0.01, n=60, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, d)) / np.sqrt(d)
    data = dp.Dataset(X, np.sign(rng.standard_normal(n)), x_bound=1.0, y_bound=1.0)
    th = dp.Variable(d)
    return dp.Problem(dp.LogisticLoss(data, th), constraint=constraint(th) if constraint else None,
                      regularizer=dp.L2Squared(th, lam))


def _on_grid(values, gamma):
    units = np.asarray(values, dtype=np.float64) / gamma
    return bool(np.all(units == np.round(units)))


@pytest.mark.parametrize("make_set", [lambda th: dp.L2Ball(th, 0.5), lambda th: dp.LinfBall(th, 0.3),
                                      lambda th: dp.Box(th, -0.2, 0.4)], ids=["l2", "linf", "box"])
def test_the_default_release_lies_in_the_set_and_is_the_projection_of_the_grid_values(make_set):
    """λ = 0.01 on n = 60 gives a sensitivity of 3.3: the grid values leave these small sets."""
    problem = _logistic(make_set)
    c = problem.constraint
    left = 0
    for seed in range(4):
        default = dp.OutputPerturbation(1.0, 1e-6, ledger=dp.Ledger()).run(problem, solver="scipy", seed=seed)
        raw = dp.OutputPerturbation(1.0, 1e-6, project=False, ledger=dp.Ledger()).run(problem, solver="scipy",
                                                                                      seed=seed)
        assert c.contains(default.theta, tol=1e-12)
        step = raw.parameters["grid_step"]
        assert np.array_equal(default.theta, c.project_to_grid(raw.theta, step)[0])  # post-processing of the draw
        if c.grid_projection:  # a clip to the grid points inside the set: still a grid release
            assert _on_grid(default.theta, step)
        assert np.linalg.norm(default.theta - c.project(raw.theta)) <= step * np.sqrt(c.dim)
        assert _on_grid(raw.theta, raw.parameters["grid_step"])
        assert default.parameters["projected"] is True and raw.parameters["projected"] is False
        left += not c.contains(raw.theta, tol=1e-12)
    assert left  # the check is not vacuous: unprojected releases did leave the set


def test_project_true_equals_auto_on_a_set_with_a_closed_form_projection():
    problem = _logistic(lambda th: dp.L2Ball(th, 0.5))
    auto = dp.OutputPerturbation(1.0, 0.0, ledger=dp.Ledger()).run(problem, solver="scipy", seed=5)
    forced = dp.OutputPerturbation(1.0, 0.0, project=True, ledger=dp.Ledger()).run(problem, solver="scipy", seed=5)
    assert np.array_equal(auto.theta, forced.theta)


def test_whether_a_run_projects_is_read_from_declarations():
    """No set: nothing to project onto; any set, including one without a closed-form projection (a
    polytope given by vertices), is projected unless project=False; the decision is in the plan."""
    unconstrained = _logistic(None)
    polytope = _logistic(lambda th: dp.sets.VertexPolytope(np.vstack([np.eye(3), -np.eye(3)])))
    ball = _logistic(lambda th: dp.L2Ball(th, 0.5))
    auto, never, always = (dp.OutputPerturbation(1.0, 1e-6, project=p) for p in ("auto", False, True))
    assert not polytope.constraint.exact_projection and ball.constraint.exact_projection
    assert [auto.projects(p) for p in (unconstrained, polytope, ball)] == [False, True, True]
    assert [never.projects(p) for p in (unconstrained, polytope, ball)] == [False, False, False]
    assert [always.projects(p) for p in (unconstrained, polytope, ball)] == [False, True, True]
    assert auto.plan(ball).parameters["projected"] is True
    assert auto.plan(unconstrained).parameters["projected"] is False


@pytest.mark.parametrize("bad", ["yes", 1, 0, None])
def test_a_bad_project_setting_is_refused_before_the_charge(bad):
    ledger = dp.Ledger()
    with pytest.raises(MechanismError, match="project must be"):
        dp.OutputPerturbation(1.0, 1e-6, project=bad, ledger=ledger)
    assert ledger.charges == ()


def test_a_set_without_a_closed_form_projection_is_solved_over_its_superset_and_says_so():
    """A vertex polytope: solved over its bounding box; projected onto the polytope by default, left
    in the box with project=False — and both releases say what they were solved over."""
    problem = _logistic(lambda th: dp.sets.VertexPolytope(np.vstack([np.eye(3), -np.eye(3)]) * 0.3))
    c = problem.constraint
    default = dp.OutputPerturbation(1.0, 1e-6, ledger=dp.Ledger()).run(problem, solver="scipy", seed=1)
    raw = dp.OutputPerturbation(1.0, 1e-6, project=False, ledger=dp.Ledger()).run(problem, solver="scipy", seed=1)
    assert default.parameters["solved_over"].startswith("Box") and raw.parameters["solved_over"].startswith("Box")
    assert c.contains(default.theta, tol=1e-7)
    assert default.parameters["projection"] and raw.parameters["projection"] is None
    assert np.allclose(default.theta, c.project(raw.theta), atol=1e-6)  # post-processing of the same draw


# ---------------------------------------------------------------------------
# neighbours: the whole program looks the same (dpopt.testing.neighbours)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("solver", convex_backends())
@pytest.mark.parametrize("time_limit", [None, 1e-4])
@covers(dp.OutputPerturbation, kind="neighbour")
def test_output_perturbation_looks_the_same_on_neighbours(convex_pair: tuple[dp.Dataset, dp.Dataset],
        solver: str, time_limit: float | None) -> None:
    """A tight tolerance and (one case) a tiny time limit make the external solver miss on
    some datasets: the fallback must make that invisible."""

    def run(data: dp.Dataset, ledger: dp.Ledger) -> dp.Release:
        mechanism = dp.OutputPerturbation(1.0, 1e-6, ledger=ledger, tolerance=1e-8)
        return mechanism.run(glm(data), solver=solver, seed=3, time_limit=time_limit)

    assert_same_view(run, *convex_pair)


@pytest.mark.parametrize("solver", convex_backends())
def test_no_release_holds_the_unnoised_optimum(solver: str) -> None:
    """Output perturbation's solver answer is the exact un-noised optimum: it may exist only in
    the opt-in diagnostics, never in the release's repr, summary, JSON or pickle."""
    data = dp.Dataset(*classification(), x_bound=1.0, y_bound=1.0, clip=True)
    mech = dp.OutputPerturbation(1.0, 1e-6, ledger=dp.Ledger())
    with_diag = mech.run(glm(data), solver=solver, seed=5, keep_diagnostics=True)
    assert with_diag.diagnostics is not None
    secrets = [r.solution for r in with_diag.diagnostics.oracle_results if r.solution is not None]
    assert secrets, "the solver returned no point to look for"
    plain = mech.run(glm(data), solver=solver, seed=5)
    assert np.array_equal(plain.theta, with_diag.theta)
    for release in (plain, with_diag):  # diagnostics are never part of the public record
        for secret in secrets:
            assert_no_private_bytes(release, secret)
