"""Private hyperparameter selection: accounting, calibration, bad input, runs, audits.

Audit design.  The selection's bound (3ε₀ for LT19) is far from what a one-point pair can
show through θ alone, so the fast audit pins K = 1 (``expected_trials=1``: the halting
probability is 1) and holds the selection to the guarantee of one run of Q, ε₀ = ε/3: that
checks the whole plumbing (per-candidate calibration, the train/score split, the uniform
choice of candidate, throwaway ledgers) at a claim the audit can refute.  The mutation
doubles the per-candidate budget — the selection is miscalibrated — and must be caught.
The slow audits run the real random stopping (E[K] = 3) against the full claim ε.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from dp_accounting import dp_event
from dp_accounting.rdp import rdp_privacy_accountant as rdp

import dpopt as dp
from dpopt.errors import MechanismError, PrivacyParameterError
from dpopt.mechanisms.selection import PrivateSelection
from dpopt.privacy.selection import (
    CandidateBudget,
    SelectionBudget,
    calibrate_selection,
    ps22_epsilon,
    ps22_rdp,
    sample_trials,
    stopping_law,
    tnb_mean,
)
from dpopt.testing import audit, one_point_pair
from dpopt.testing.coverage import covers
from dpopt.testing.views import assert_same_view

# ----------------------------------------------------------------------------- accounting


@pytest.mark.parametrize("mu,mean,shape,delta", [
    (0.5, 10.0, 1.0, 1e-6), (1.0, 4.0, 0.0, 1e-5), (0.2, 30.0, 0.5, 1e-8), (2.0, 3.0, 2.0, 1e-3),
])
def test_ps22_epsilon_matches_dp_accounting(mu, mean, shape, delta):
    law = stopping_law(mean, shape)
    orders = list(1.0 + np.logspace(-3, 4, 3000))
    acc = rdp.RdpAccountant(orders=orders)
    acc.compose(dp_event.RepeatAndSelectDpEvent(dp_event.GaussianDpEvent(1.0 / mu), mean, shape))
    reference = acc.get_epsilon(delta)
    ours = ps22_epsilon(mu, delta, law)
    # ours optimizes λ and λ̂ continuously, dp-accounting over a grid: never larger, and close
    assert ours <= reference * (1 + 1e-9)
    assert ours >= reference * (1 - 1e-3)


@pytest.mark.parametrize("order,mu,mean,shape", [(3.0, 0.5, 10.0, 1.0), (20.0, 0.1, 50.0, 0.0), (1.5, 3.0, 2.0, 4.0)])
def test_ps22_rdp_is_theorem_2_minimized_over_lambda_hat(order, mu, mean, shape):
    law = stopping_law(mean, shape)
    hats = np.concatenate([[1.0], 1.0 + np.logspace(-4, 5, 200_001)])
    eps = lambda lam: lam * mu * mu / 2  # noqa: E731  (μ-GDP: ε(λ) = λμ²/2)
    theorem = (eps(order) + (1 + shape) * np.min((1 - 1 / hats) * eps(hats) + np.log(1 / law.gamma) / hats)
               + math.log(law.mean) / (order - 1))
    assert ps22_rdp(order, mu, law) == pytest.approx(theorem, rel=1e-6)
    assert ps22_rdp(order, mu, law) <= theorem + 1e-12


@pytest.mark.parametrize("shape", [0.0, 0.5, 1.0, 3.0])
def test_stopping_law_mean_and_sampling(shape):
    law = stopping_law(6.0, shape)
    assert law.mean == pytest.approx(6.0, rel=1e-8)
    assert tnb_mean(law.gamma, shape) == law.mean
    rng = np.random.default_rng(7)
    draws = np.array([sample_trials(rng, law) for _ in range(20_000)])
    assert draws.min() >= 1
    assert abs(draws.mean() - law.mean) < 5 * draws.std() / math.sqrt(draws.size)


def test_liu_talwar_calibration_meets_target_and_is_tight():
    b = calibrate_selection(1.2, 0.0, stopping="liu-talwar", expected_trials=5, score_share=0.2)
    assert 3 * b.trial_epsilon <= 1.2 and 3 * 1.1 * b.trial_epsilon > 1.2
    assert b.candidate.epsilon + b.score_epsilon <= b.trial_epsilon
    assert b.candidate.delta == 0 and b.law.gamma == pytest.approx(0.2)


@pytest.mark.parametrize("eps,delta,trials,shape", [(1.0, 1e-6, 10, None), (0.1, 1e-8, 4, 0.0), (4.0, 1e-5, 20, 2.0)])
def test_papernot_steinke_calibration_meets_target_and_is_tight(eps, delta, trials, shape):
    b = calibrate_selection(eps, delta, stopping="papernot-steinke", expected_trials=trials, shape=shape)
    assert ps22_epsilon(b.trial_mu, delta, b.law) <= eps
    assert ps22_epsilon(1.1 * b.trial_mu, delta, b.law) > eps
    assert math.hypot(b.candidate.mu, b.score_mu) <= b.trial_mu
    # the (ε, δ) point handed to build lies on the candidate's μ-GDP curve
    sigma = dp.privacy.calibration.gaussian_sigma(1.0, b.candidate.epsilon, b.candidate.delta)
    assert 1.0 / sigma <= b.candidate.mu


# ----------------------------------------------------------------------------- problems


def _logistic_data(n=150, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    y = np.where(X @ np.array([1.0, -1.0, 0.5]) + 0.2 * rng.normal(size=n) > 0, 1.0, -1.0)
    return dp.Dataset(X, y, x_bound=1.0, y_bound=1.0)


def _logistic_problems(data):
    th = dp.Variable(data.n_features)

    def problem(params):
        return dp.Problem(dp.LogisticLoss(data, th), constraint=dp.L2Ball(th, 5.0),
                          regularizer=dp.L2Squared(th, params["lam"]))
    return problem


GRID = [{"lam": 0.01}, {"lam": 0.1}, {"lam": 1.0}]


def _objective(params, budget):
    return dp.ObjectivePerturbation(budget.epsilon, budget.delta)


def _gaussian_output(params, budget):
    return dp.OutputPerturbation(budget.epsilon, budget.delta, noise="gaussian")


@pytest.mark.parametrize("stopping,eps,delta,build", [
    ("liu-talwar", 1.0, 0.0, _objective),
    ("papernot-steinke", 1.0, 1e-6, _gaussian_output),
])
def test_run_releases_once_with_the_total_charge(stopping, eps, delta, build):
    data = _logistic_data()
    ledger = dp.Ledger()
    sel = PrivateSelection(eps, delta, candidates=GRID, build=build, stopping=stopping, ledger=ledger)
    release = sel.run(_logistic_problems(data), solver="scipy", seed=3)
    assert isinstance(release, dp.Release) and release.private
    assert release.theta.shape == (3,) and np.all(np.isfinite(release.theta))
    assert (release.epsilon, release.delta) == (eps, delta)
    assert len(ledger.charges) == 1 and ledger.spent == (eps, delta)
    assert release.parameters["selected"] in GRID
    assert release.parameters["selected"] == GRID[release.parameters["selected_index"]]
    public = release.to_json()
    assert "trials" not in release.parameters and '"runs"' not in public and "exact_score" not in public
    # the chosen run's noisy score is part of Q's output (covered); no other run's score is released
    assert isinstance(release.parameters["noisy_selected_score"], float) and public.count("noisy_selected_score") == 1
    again = sel.run(_logistic_problems(data), solver="scipy", seed=3)
    np.testing.assert_array_equal(again.theta, release.theta)  # a user seed reproduces the run
    assert len(ledger.charges) == 2


def test_diagnostics_hold_the_trials_only_on_request():
    data = _logistic_data()
    sel = PrivateSelection(1.0, candidates=GRID, build=_objective, ledger=dp.Ledger(), expected_trials=4)
    release = sel.run(_logistic_problems(data), solver="scipy", seed=5, keep_diagnostics=True)
    details = release.diagnostics.details
    assert details["trials"] == len(details["runs"]) >= 1
    best = max(details["runs"], key=lambda r: (r["noisy_score"], -r["candidate"]))
    assert best["candidate"] == release.parameters["selected_index"]
    assert sel.run(_logistic_problems(data), solver="scipy", seed=5).diagnostics is None


def test_user_score_callable_is_used():
    data = _logistic_data()
    # a score that prefers the largest λ by far (sensitivity 1 declared; it ignores the data)
    sel = PrivateSelection(3.0, candidates=GRID, build=_objective, ledger=dp.Ledger(), expected_trials=30,
                           score=lambda theta, d: -1e6 * float(np.linalg.norm(theta)), score_sensitivity=1.0)
    release = sel.run(_logistic_problems(data), solver="scipy", seed=11)
    assert release.parameters["selected"] == {"lam": 1.0}


def _fingerprint(obj):
    """A comparable snapshot of an object's own state (vars(); arrays by value, objects by identity)."""
    out = {}
    for key, value in vars(obj).items():
        if isinstance(value, np.ndarray):
            out[key] = ("array", value.shape, value.tobytes())
        elif isinstance(value, (int, float, str, bool, type(None), tuple)):
            out[key] = ("value", value)
        else:
            out[key] = ("object", id(value))
    return out


def _user_state(mechs, ledgers, data, problems):
    return ([_fingerprint(m) for m in mechs], [tuple(ledger.charges) for ledger in ledgers],
            _fingerprint(data), [(_fingerprint(p.loss), id(p.loss), id(p.loss.data)) for p in problems])


def test_the_candidates_are_left_untouched_whatever_k_and_whichever_ran():
    """Nothing reachable from the inputs after a run depends on K or on which candidates ran:
    the user's mechanism objects, their own ledgers, the problems, their losses and the Dataset
    are what they were before the run (a run that replaced a candidate's ledger, or fitted on
    the user's objects, changes exactly the candidates that ran, and is caught here)."""
    data = _logistic_data(n=60)
    th = dp.Variable(3)
    problems = {p["lam"]: dp.Problem(dp.LogisticLoss(data, th), constraint=dp.L2Ball(th, 5.0),
                                     regularizer=dp.L2Squared(th, p["lam"])) for p in GRID}
    selection_ledger = dp.Ledger()
    seen_k, seen_ran = set(), set()
    for seed in range(6):
        mechs = {}
        sel = PrivateSelection(3.0, candidates=GRID, ledger=selection_ledger, expected_trials=2,
                               build=lambda p, b, mechs=mechs: mechs[p["lam"]])
        # build hands out the user's own objects, each with its own ledger
        ledgers = {p["lam"]: dp.Ledger() for p in GRID}
        mechs.update({lam: dp.ObjectivePerturbation(sel.budget.candidate.epsilon, ledger=ledger)
                      for lam, ledger in ledgers.items()})
        before = _user_state(mechs.values(), ledgers.values(), data, problems.values())
        release = sel.run(lambda p: problems[p["lam"]], solver="scipy", seed=seed, keep_diagnostics=True)
        after = _user_state(mechs.values(), ledgers.values(), data, problems.values())
        assert after == before
        assert all(ledger.charges == () for ledger in ledgers.values())
        runs = release.diagnostics.details["runs"]
        seen_k.add(len(runs))
        seen_ran.add(frozenset(r["candidate"] for r in runs))
    assert len(seen_k) >= 2 and len(seen_ran) >= 2  # the seeds gave different K and different candidates
    assert len(selection_ledger.charges) == 6


# ----------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("grid,match", [
    ([], "empty"),
    ([{"lam": float("nan")}], "finite"),
    ([{"lam": math.inf}], "finite"),
    ([{"lam": 0.1}, {"lam": 0.1}], "duplicate"),
    ([{"lam": 1}, {"lam": 1.0}], "duplicate"),
    ([0.1, 1.0], "dict"),
    ({"lam": 0.1}, "list of dicts"),
    ([{"lam": [0.1]}], "number or a string"),
])
def test_bad_grids_are_refused(grid, match):
    with pytest.raises(MechanismError, match=match):
        PrivateSelection(1.0, candidates=grid, build=_objective, ledger=dp.Ledger())


@pytest.mark.parametrize("kwargs,error,match", [
    (dict(delta=1e-6), PrivacyParameterError, "pure"),
    (dict(stopping="papernot-steinke"), PrivacyParameterError, "delta > 0"),
    (dict(expected_trials=0.5), PrivacyParameterError, "≥ 1"),
    (dict(expected_trials=math.nan), PrivacyParameterError, "expected_trials"),
    (dict(stopping="bogus"), MechanismError, "stopping"),
    (dict(score="auc"), MechanismError, "accuracy"),
    (dict(score=lambda t, d: 0.0), MechanismError, "score_sensitivity"),
    (dict(score_share=1.0), PrivacyParameterError, "score_share"),
    (dict(shape=2.0), PrivacyParameterError, "geometric"),
])
def test_bad_settings_are_refused(kwargs, error, match):
    with pytest.raises(error, match=match):
        PrivateSelection(1.0, candidates=GRID, build=_objective, ledger=dp.Ledger(), **kwargs)


def _greedy(params, budget):
    return dp.ObjectivePerturbation(3 * budget.epsilon)  # ignores the per-candidate budget


@pytest.mark.parametrize("grid,build,stopping,delta,match", [
    ([{"lam": 0.1}, {"lam": -1.0}], _objective, "liu-talwar", 0.0, "candidate 1"),  # λ out of range
    (GRID, _greedy, "liu-talwar", 0.0, "per-candidate budget"),
    (GRID, _objective, "papernot-steinke", 1e-6, "Gaussian"),  # not a GDP candidate
    (GRID, lambda p, b: dp.OutputPerturbation(b.epsilon, b.delta, noise="l2-laplace"), "papernot-steinke", 1e-6,
     "Gaussian"),
    (GRID, lambda p, b: "not a mechanism", "liu-talwar", 0.0, "not a dpopt Mechanism"),
])
def test_bad_candidates_are_refused_before_the_charge(grid, build, stopping, delta, match):
    ledger = dp.Ledger()
    sel = PrivateSelection(1.0, delta, candidates=grid, build=build, stopping=stopping, ledger=ledger)
    with pytest.raises(MechanismError, match=match):
        sel.run(_logistic_problems(_logistic_data()), solver="scipy", seed=0)
    assert ledger.charges == () and ledger.spent == (0.0, 0.0)


def test_a_candidate_whose_problem_has_no_fallback_is_refused_before_the_charge():
    """A hinge loss has no Hessian bound: output perturbation refuses it before its own charge,
    so the selection must refuse it before the selection's charge too (not after spending it)."""
    data = _logistic_data()
    th = dp.Variable(data.n_features)

    def hinge(params):
        return dp.Problem(dp.HingeLoss(data, th), constraint=dp.L2Ball(th, 5.0),
                          regularizer=dp.L2Squared(th, params["lam"]))

    ledger = dp.Ledger()
    sel = PrivateSelection(1.0, 1e-6, candidates=GRID, build=_gaussian_output, stopping="papernot-steinke",
                           ledger=ledger)
    with pytest.raises(MechanismError, match="candidate 0 .*cannot guarantee a release"):
        sel.run(hinge, solver="scipy", seed=0)
    assert ledger.charges == ()


def test_candidates_on_different_data_are_refused():
    a, b = _logistic_data(seed=0), _logistic_data(seed=1)
    pa, pb = _logistic_problems(a), _logistic_problems(b)
    ledger = dp.Ledger()
    sel = PrivateSelection(1.0, candidates=GRID, build=_objective, ledger=ledger)
    with pytest.raises(MechanismError, match="same Dataset"):
        sel.run(lambda p: pa(p) if p["lam"] < 1 else pb(p), solver="scipy")
    with pytest.raises(MechanismError, match="time_limit"):
        sel.run(pa, solver="scipy", time_limit=1.0)
    assert ledger.charges == ()


# ----------------------------------------------------------------------------- audits

N = 10
H = 0.1
AUDIT_GRID = [{"lam": 0.5}, {"lam": 1.0}]


def _huber_problems(data):
    th = dp.Variable(1)
    return lambda p: dp.Problem(dp.HuberLoss(data, th, h=H), regularizer=dp.L2Squared(th, p["lam"]))


def _laplace_output(params, budget):
    return dp.OutputPerturbation(budget.epsilon, budget.delta, noise="l2-laplace")


class DoubledBudgetSelection(PrivateSelection):
    """Mutation: every run of Q gets twice the budget the accounting allows."""

    def _calibrate(self, expected_trials, shape, score_share):
        b = super()._calibrate(expected_trials, shape, score_share)
        c = b.candidate
        return SelectionBudget(b.stopping, b.law, 2 * b.trial_epsilon, b.trial_delta, b.trial_mu,
                               CandidateBudget(2 * c.epsilon, c.delta, c.mu), 2 * b.score_epsilon, b.score_mu)


def _runner(cls, eps, expected_trials):
    def run(data, seed):
        sel = cls(eps, candidates=AUDIT_GRID, build=_laplace_output, expected_trials=expected_trials,
                  score_share=0.02, ledger=dp.Ledger())
        return sel.run(_huber_problems(data), solver="scipy", seed=seed).theta
    return run


def _audit(cls, eps, claim, expected_trials, n_runs, seed=0):
    d0, d1 = one_point_pair(N)
    res = audit(_runner(cls, eps, expected_trials), d0, d1, claimed_epsilon=claim, n_runs=n_runs, seed=seed,
                n_jobs=2)
    print(f"{cls.__name__}: {res.summary()}")
    return res


EPS = 6.0  # ε₀ = 2 per run of Q
FAST = 1500


@covers(PrivateSelection, kind="audit")
def test_selection_audit_single_trial():
    claim = EPS / 3  # K = 1: the selection is one run of Q, which is ε₀-DP
    res = _audit(PrivateSelection, EPS, claim, 1, FAST)
    assert not res.violates, res.summary()
    assert res.epsilon_lower > 0.3 * claim, res.summary()  # the audit has power on this pair


@covers(PrivateSelection, kind="mutation")
def test_selection_mutation_is_caught():
    res = _audit(DoubledBudgetSelection, EPS, EPS / 3, 1, FAST)
    assert res.violates, res.summary()


@pytest.mark.slow
@covers(PrivateSelection, kind="audit")
def test_selection_large_audits():
    for seed in range(3):
        res = _audit(PrivateSelection, EPS, EPS / 3, 1, 20_000, seed=seed)
        assert not res.violates, res.summary()
        res = _audit(PrivateSelection, EPS, EPS, 3, 20_000, seed=seed)  # real random stopping, full claim
        assert not res.violates, res.summary()


def test_an_explicit_solver_no_candidate_uses_is_refused_before_the_charge():
    """DP-GD calls no solver: an explicit solver is refused up front (nothing charged) instead
    of being refused by a candidate inside the charged run."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (200, 3)) / 2
    data = dp.Dataset(X, np.where(X[:, 0] > 0, 1.0, -1.0), x_bound=1.0)
    th = dp.Variable(3)
    problem = dp.Problem(dp.LogisticLoss(data, th), constraint=dp.L2Ball(th, 2.0))
    ledger = dp.Ledger()
    sel = dp.PrivateSelection(1.0, 1e-5, candidates=[{"steps": 5}, {"steps": 10}], stopping="papernot-steinke",
                              expected_trials=2, ledger=ledger,
                              build=lambda h, b: dp.DPGradientDescent(b.epsilon, b.delta, steps=h["steps"]))
    with pytest.raises(MechanismError, match="no candidate calls a solver"):
        sel.run(problem, solver="clarabel")
    assert ledger.spent == (0.0, 0.0)
    assert sel.run(problem, seed=0).private


# ----------------------------------------------------------------------------- held-out scores


@pytest.mark.parametrize("stopping,delta", [("liu-talwar", 0.0), ("papernot-steinke", 1e-6)])
def test_held_out_scores_give_training_and_score_the_whole_run_budget(stopping, delta):
    """Parallel composition: the training and the held-out score of a run each get Q's budget."""
    split = calibrate_selection(1.0, delta, stopping=stopping, expected_trials=3, score_share=0.3)
    held = calibrate_selection(1.0, delta, stopping=stopping, expected_trials=3, score_share=0.3, holdout=True)
    if stopping == "liu-talwar":
        assert held.trial_epsilon == split.trial_epsilon == pytest.approx(1.0 / 3)
        assert held.candidate.epsilon == held.score_epsilon == held.trial_epsilon
        assert split.candidate.epsilon + split.score_epsilon <= split.trial_epsilon
    else:
        assert held.trial_mu == split.trial_mu
        assert held.score_mu == held.trial_mu and held.candidate.mu == pytest.approx(held.trial_mu, rel=1e-12)
        assert held.candidate.mu <= held.trial_mu and math.hypot(split.candidate.mu, split.score_mu) <= split.trial_mu


def test_held_out_rows_are_what_the_scores_read_and_all_the_candidates_never_see():
    """Every run's exact score is its θ's accuracy on the held-out rows; replacing a held-out row
    leaves every run's θ as it was (the candidates train on the other rows only)."""
    data = _logistic_data(n=160)
    train, held = data.subset(np.arange(120)), data.subset(np.arange(120, 160))
    thetas, runs = [], []
    for y_last in (held.y[-1], -held.y[-1]):
        moved = held.replace_row(held.n - 1, held.X[-1], y_last)
        sel = PrivateSelection(1.0, candidates=GRID, build=_objective, ledger=dp.Ledger(), expected_trials=4,
                               holdout=moved)
        release = sel.run(_logistic_problems(train), solver="scipy", seed=11, keep_diagnostics=True)
        assert release.parameters["score_rows"] == "held-out" and release.parameters["holdout_rows"] == 40
        chosen = [r for r in release.diagnostics.details["runs"] if r["candidate"] ==
                  release.parameters["selected_index"]]
        assert any(r["exact_score"] == dp.mechanisms.selection.accuracy_count(release.theta, moved) for r in chosen)
        thetas.append(release.theta)
        runs.append([r["candidate"] for r in release.diagnostics.details["runs"]])
    assert runs[0] == runs[1]  # K and the candidates drawn do not depend on the data
    if len(set(runs[0])) == 1:  # one candidate ran: the same θ whichever held-out label
        np.testing.assert_array_equal(thetas[0], thetas[1])


def test_a_held_out_dataset_must_be_separate_and_alike():
    data = _logistic_data()
    with pytest.raises(MechanismError, match="separate"):
        PrivateSelection(1.0, candidates=GRID, build=_objective, ledger=dp.Ledger(),
                         holdout=data).run(_logistic_problems(data), solver="scipy", seed=0)
    narrow = dp.Dataset(data.X[:, :2], data.y, x_bound=1.0, y_bound=1.0)
    ledger = dp.Ledger()
    with pytest.raises(MechanismError, match="columns"):
        PrivateSelection(1.0, candidates=GRID, build=_objective, ledger=ledger,
                         holdout=narrow).run(_logistic_problems(data), solver="scipy", seed=0)
    assert ledger.charges == ()


def test_the_first_candidate_is_favoured_only_on_request_with_its_declared_probability():
    from dpopt.mechanisms.selection import draw_candidate
    from dpopt.privacy.exact import sampler_for

    sampler = sampler_for(np.random.default_rng(0))
    g, n = 4, 20_000
    plain = np.bincount([draw_candidate(sampler, g) for _ in range(n)], minlength=g) / n
    favoured = np.bincount([draw_candidate(sampler, g, True) for _ in range(n)], minlength=g) / n
    tol = 5 * math.sqrt(0.25 / n)
    assert np.all(np.abs(plain - 1 / g) < tol)
    assert abs(favoured[0] - (0.5 + 0.5 / g)) < tol and np.all(np.abs(favoured[1:] - 0.5 / g) < tol)
    data = _logistic_data()
    release = PrivateSelection(1.0, candidates=GRID, build=_objective, ledger=dp.Ledger(),
                               favour_first=True).run(_logistic_problems(data), solver="scipy", seed=0)
    assert release.parameters["candidate_law"].startswith("the first")


# ---------------------------------------------------------------------------
# neighbours: the whole program looks the same (dpopt.testing.neighbours)
# ---------------------------------------------------------------------------


@covers(dp.PrivateSelection, kind="neighbour")
def test_selection_looks_the_same_on_neighbours(convex_pair: tuple[dp.Dataset, dp.Dataset]) -> None:
    def run(data: dp.Dataset, ledger: dp.Ledger) -> dp.Release:
        th = dp.Variable(data.n_features)
        problem = dp.Problem(dp.LogisticLoss(data, th), constraint=dp.L2Ball(th, 2.0))
        return dp.PrivateSelection(
            1.0, 1e-6, candidates=[{"steps": 4}, {"steps": 16}], stopping="papernot-steinke", expected_trials=2,
            build=lambda h, b: dp.DPGradientDescent(b.epsilon, b.delta, steps=h["steps"]), ledger=ledger,
        ).run(problem, seed=1)

    assert_same_view(run, *convex_pair)
