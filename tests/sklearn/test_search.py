"""dpopt.sklearn.DPSearchCV: private model selection in scikit-learn's idiom.

What users rely on: one charge of the stated (ε, δ) per search; every mistake refused before
the charge with one line; the fitted search exposes the selected candidate's release (no
second charge) and only noisy or public numbers — on neighbouring tables, everything but the
noisy outputs is the same."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

pytest.importorskip("sklearn")

from sklearn.base import clone  # noqa: E402

import dpopt as dp  # noqa: E402
from dpopt.errors import (  # noqa: E402
    BudgetExceededError,
    BudgetWarning,
    MechanismError,
    ModelError,
    SearchWarning,
)
from dpopt.mechanisms.selection import accuracy_count  # noqa: E402
from dpopt.sklearn import DPHalfspaceClassifier, DPLasso, DPLogisticRegression, DPRidge, DPSearchCV  # noqa: E402


def table(n: int = 200, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 3))
    y = np.where(X @ np.array([1.0, -1.0, 0.5]) + 0.3 * rng.normal(size=n) > 0, "yes", "no")
    return X, y


def logistic(**kwargs) -> DPLogisticRegression:
    return DPLogisticRegression(x_bound=2.0, classes=["no", "yes"], **kwargs)


GRID = {"alpha": [1e-3, 1e-2, 1e-1]}


@pytest.mark.parametrize("stopping, delta, estimator", [
    ("liu-talwar", 0.0, logistic()),
    ("papernot-steinke", 1e-6, logistic(mechanism="output-perturbation", alpha=0.01,
                                        mechanism_options={"noise": "gaussian"})),
])
def test_one_charge_of_the_stated_budget_per_fit(stopping, delta, estimator):
    X, y = table()
    ledger = dp.Ledger()
    grid = {"alpha": [1e-2, 1e-1]}
    search = DPSearchCV(estimator, grid, epsilon=1.0, delta=delta, stopping=stopping, ledger=ledger,
                        random_state=0).fit(X, y)
    assert [(c.epsilon, c.delta, c.mechanism) for c in ledger.charges] == [(1.0, delta, "PrivateSelection")]
    assert (search.release_.epsilon, search.release_.delta) == (1.0, delta)
    assert estimator.ledger is None  # the estimator's own (default) ledger is not used for candidates
    search.fit(X, y)
    assert len(ledger.charges) == 2 and ledger.spent == pytest.approx((2.0, 2 * delta))


def test_best_estimator_is_the_selected_release_without_a_second_charge():
    X, y = table()
    ledger = dp.Ledger()
    search = DPSearchCV(logistic(), GRID, epsilon=2.0, stopping="noisy-max", ledger=ledger, random_state=1).fit(X, y)
    best, release = search.best_estimator_, search.release_
    assert best.release_ is release and len(ledger.charges) == 1
    assert release.mechanism.startswith("RefitSelection") and f"n={len(X)}," in release.problem  # the refit: every row
    np.testing.assert_array_equal(np.append(best.coef_.ravel(), best.intercept_), release.theta)
    assert search.best_params_ == search.cv_results_["params"][search.best_index_] == release.parameters["selected"]
    assert best.get_params()["alpha"] == search.best_params_["alpha"]
    assert np.array_equal(search.predict(X), best.predict(X))
    assert np.array_equal(search.decision_function(X), best.decision_function(X))
    assert np.allclose(search.predict_proba(X).sum(axis=1), 1.0)
    assert search.classes_.tolist() == ["no", "yes"] and search.n_features_in_ == 3
    assert len(ledger.charges) == 1  # predicting costs nothing


def test_scores_are_noisy_and_results_hold_params_only():
    """Under random stopping best_score_ is the selected run's noisy accuracy: it differs from the
    exact accuracy of the released θ, by noise of the declared scale; cv_results_ has no score at all."""
    X, y = table(n=300)
    gaps = []
    for seed in range(8):
        search = DPSearchCV(logistic(), GRID, epsilon=3.0, stopping="papernot-steinke", ledger=dp.Ledger(),
                            random_state=seed).fit(X, y)
        assert set(search.cv_results_) == {"params", "param_alpha"}
        design = np.hstack([X, np.ones((len(X), 1))])  # ‖x‖ ≤ √3 < x_bound: the estimator's design, unclipped
        data = dp.Dataset(design, np.where(y == "yes", 1.0, -1.0), x_bound=3.0)
        exact = accuracy_count(search.release_.theta, data) / len(X)
        gaps.append(search.best_score_ - exact)
    scale = search.release_.parameters["score_noise_scale"] / len(X)
    assert all(g != 0.0 for g in gaps)
    assert np.std(gaps) > 0.1 * scale  # the noise is there, at the declared scale's order
    assert np.max(np.abs(gaps)) < 40 * scale


def _public_view(search: DPSearchCV, ledger: dp.Ledger) -> dict:
    """Everything a search exposes except its noisy outputs (θ, the choice, the noisy score)."""
    noisy = {"release_", "best_estimator_", "best_params_", "best_index_", "best_score_"}
    view = {k: v for k, v in vars(search).items() if k.endswith("_") and k not in noisy}
    view = {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in view.items()}
    view["cv_results_"] = {k: v for k, v in search.cv_results_.items() if not k.startswith("noisy_")}
    release = search.release_
    view["release"] = (release.epsilon, release.delta, release.mechanism, release.problem, release.notes,
                       release.private, release.feature_names,
                       {k: v for k, v in release.parameters.items() if not k.startswith(("selected", "noisy_"))})
    view["charges"] = [(c.epsilon, c.delta, c.label, c.mechanism, c.released) for c in ledger.charges]
    view["attributes"] = sorted(vars(search))
    view["params"] = {k: v for k, v in search.get_params(deep=True).items() if k not in ("estimator", "ledger")}
    view["estimator"] = sorted(vars(search.estimator))  # the user's estimator is not fitted
    return view


class LeakyExactScores(DPSearchCV):
    """Mutant: publishes the exact accuracy of each candidate (what GridSearchCV does)."""

    def fit(self, X, y):
        super().fit(X, y)
        exact = [float(np.mean(clone(self.best_estimator_).set_params(**p, ledger=dp.Ledger(), epsilon=1e3,
                                                                      random_state=0).fit(X, y).predict(X) == y))
                 for p in self.cv_results_["params"]]
        self.cv_results_["mean_test_score"] = exact
        return self


@pytest.mark.parametrize("cls, same, stopping", [(DPSearchCV, True, "auto"), (DPSearchCV, True, "noisy-max"),
                                                (DPSearchCV, True, "papernot-steinke"),
                                                (LeakyExactScores, False, "noisy-max")])
def test_neighbouring_tables_give_the_same_public_view(cls, same, stopping):
    """Replace one row (its label flipped): with the same seed, everything but the noisy outputs
    is identical (the default here fits the estimator as given: see
    test_a_search_that_cannot_resolve_fits_the_estimator_as_given).  The mutant that publishes
    exact scores is caught by the same comparison."""
    X, y = table(n=120)
    y2 = y.copy()
    y2[0] = "yes" if y[0] == "no" else "no"
    views, thetas = [], []
    for labels in (y, y2):
        ledger = dp.Ledger()
        search = cls(logistic(), GRID, epsilon=1.0, stopping=stopping, ledger=ledger, random_state=3).fit(X, labels)
        views.append(_public_view(search, ledger))
        thetas.append(search.release_.theta)
    assert (views[0] == views[1]) is same
    assert not np.array_equal(thetas[0], thetas[1])  # the data was read: the release moved


def test_regressors_are_searched_with_a_clipped_error_score():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(300, 3))
    y = X @ np.array([0.8, -0.5, 0.0]) + 0.3
    ledger = dp.Ledger()
    for est in (DPRidge(x_bound=2.0, y_bound=2.0, radius=2.0, solver="clarabel"),
                DPLasso(x_bound=1.0, y_bound=2.0, radius=2.0)):
        search = DPSearchCV(est, {"radius": [0.5, 2.0]}, epsilon=5.0, ledger=ledger, random_state=0).fit(X, y)
        assert search.release_.parameters["score_sensitivity"] == pytest.approx(4.0)  # 2·y_bound
        assert search.best_score_ < 0 and search.predict(X).shape == (300,)
        assert not hasattr(search, "decision_function") and not hasattr(search, "predict_proba")
    assert len(ledger.charges) == 2


def test_grids_take_scikit_learns_forms():
    """A dict, a list of dicts, arrays of values: expanded as GridSearchCV's param_grid."""
    X, y = table(n=80)
    grid = [{"alpha": np.array([0.01, 0.1])}, {"mechanism": ["output-perturbation"], "alpha": [1.0]}]
    search = DPSearchCV(logistic(), grid, epsilon=1.0, delta=0.0, ledger=dp.Ledger(), random_state=0).fit(X, y)
    # every searched name filled in from the estimator; the estimator as given (alpha=0, "auto") first
    assert search.cv_results_["params"] == [{"alpha": 0.0, "mechanism": "auto"}, {"alpha": 0.01, "mechanism": "auto"},
                                            {"alpha": 0.1, "mechanism": "auto"},
                                            {"alpha": 1.0, "mechanism": "output-perturbation"}]
    assert search.cv_results_["param_mechanism"] == ["auto", "auto", "auto", "output-perturbation"]
    assert search.release_.parameters["n_candidates"] == 4


@pytest.mark.parametrize("estimator, grid, kwargs, error, match", [
    (logistic(), {"alpah": [0.1]}, {}, ModelError, "did you mean 'alpha'"),
    (logistic(), {}, {}, ModelError, "empty"),
    (logistic(), [], {}, ModelError, "empty"),
    (logistic(), {"alpha": []}, {}, ModelError, "non-empty"),
    (logistic(), {"epsilon": [0.5, 1.0]}, {}, ModelError, "per-candidate budget"),
    (logistic(), {"mechanism_options": [5]}, {}, ModelError, "dicts"),
    (logistic(), {"mechanism_options__stepz": [5]}, {"delta": 0.0}, MechanismError, "candidate 1 .*stepz"),
    (logistic(), GRID, {"holdout": 0.6}, ModelError, "holdout"),
    (logistic(), GRID, {"stopping": "fast"}, ModelError, "stopping"),
    (logistic(), {"x_bound": [1.0, 2.0]}, {}, ModelError, "encoded"),
    (logistic(), {"solver": ["scipy", "clarabel"]}, {}, ModelError, "shared"),
    (logistic(), {"alpha": [0.1, -1.0]}, {}, ModelError, "candidate 2"),
    (logistic(), {"alpha": [0.1, float("nan")]}, {}, MechanismError, "finite"),
    (logistic(), {"mechanism": ["objective-perturbation", "dp-gd"]}, {"stopping": "liu-talwar", "delta": 0.0},
     MechanismError, "candidate 2"),
    (logistic(), GRID, {"delta": 1e-6, "stopping": "liu-talwar"}, dp.errors.PrivacyParameterError, "pure"),
    (logistic(mechanism="objective-perturbation"), GRID, {"stopping": "papernot-steinke", "delta": 1e-6},
     MechanismError, "Gaussian"),
    (logistic(), GRID, {"random_state": "seed"}, ModelError, "random_state"),
    (logistic(), GRID, {"score_sensitivity": 1.0}, ModelError, "scoring"),
    (DPHalfspaceClassifier(schema=dp.Schema({"a": dp.Numeric(-1, 1, grid=1)})), {"grid_step": [1.0]}, {},
     ModelError, "convex"),
    ("LogisticRegression", GRID, {}, ModelError, "dpopt.sklearn estimator"),
])
def test_mistakes_are_refused_in_one_line_before_the_charge(estimator, grid, kwargs, error, match):
    X, y = table(n=60)
    ledger = dp.Ledger()
    with pytest.raises(error, match=match) as err:
        DPSearchCV(estimator, grid, ledger=ledger, **kwargs).fit(X, y)
    assert ledger.charges == () and "\n" not in str(err.value)


def test_an_exhausted_budget_warns_and_raises():
    X, y = table(n=60)
    ledger = dp.Ledger(epsilon_budget=1.0)
    search = DPSearchCV(logistic(), GRID, epsilon=1.0, ledger=ledger, random_state=0).fit(X, y)
    with pytest.warns(BudgetWarning, match="error_score='raise'"), pytest.raises(BudgetExceededError):
        search.fit(X, y)
    assert len(ledger.charges) == 1


def test_clone_and_params_follow_scikit_learn():
    ledger = dp.Ledger()
    search = DPSearchCV(logistic(), GRID, epsilon=0.5, ledger=ledger)
    twin = clone(search)
    assert twin.ledger is ledger and twin.get_params()["estimator__alpha"] == 0.0
    twin.set_params(estimator__alpha=0.5, epsilon=0.25)
    assert twin.estimator.alpha == 0.5 and twin.epsilon == 0.25 and search.epsilon == 0.5
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert "best_estimator_" not in vars(twin)


def three_classes(n: int = 240, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 3))
    return X, np.array(["a", "b", "c"])[np.argmax(X @ np.array([[2.0, -1, 0], [0, 2, -1], [-1, 0, 2]]), axis=1)]


def test_a_multi_class_search_builds_multinomial_candidates_and_stores_them():
    """Failed before: candidates were built as binary models, the search charged, then storing the
    selected θ (d entries) as a d×3 model raised "cannot reshape" — budget gone, nothing released."""
    X, y = three_classes()
    ledger = dp.Ledger()
    est = DPLogisticRegression(x_bound=2.0, classes=["a", "b", "c"])
    search = DPSearchCV(est, {"alpha": [0.0, 1e-3]}, epsilon=4.0, stopping="noisy-max", ledger=ledger,
                        random_state=0).fit(X, y)
    assert search.stopping_ == "noisy-max" and len(ledger.charges) == 1
    assert search.release_.theta.size == 4 * 3  # (3 features + intercept) × 3 classes
    assert search.best_estimator_.coef_.shape == (3, 3) and set(search.predict(X)) <= {"a", "b", "c"}
    assert np.allclose(search.predict_proba(X).sum(axis=1), 1.0)
    assert np.mean(search.predict(X) == y) > 0.5  # well above the 1/3 of a constant model


def _binary_problem(self, data):
    """The old bug as a mutant: a binary problem whatever the declared classes."""
    from dpopt.modeling.losses import LogisticLoss
    from dpopt.modeling.variable import Variable

    theta = Variable(data.n_features)
    return dp.Problem(LogisticLoss(data, theta))


def test_a_release_that_cannot_be_stored_is_refused_before_the_charge(monkeypatch):
    """No search failure that a pre-charge check can catch happens after the charge: storing the
    release is tried on a zero θ of each candidate's shape first.  With candidates that build
    binary problems for three classes (the old failure), the search refuses with nothing charged."""
    X, y = three_classes(n=90)
    monkeypatch.setattr(DPLogisticRegression, "_problem", _binary_problem)
    ledger = dp.Ledger()
    est = DPLogisticRegression(x_bound=2.0, classes=["a", "b", "c"])
    with pytest.raises(MechanismError, match="candidate 0 .*cannot store its release") as err:
        DPSearchCV(est, {"alpha": [0.0, 0.1]}, epsilon=1.0, ledger=ledger, random_state=0).fit(X, y)
    assert ledger.charges == () and "\n" not in str(err.value)


@pytest.mark.parametrize("est", [
    DPRidge(x_bound=2.0, label_spec=dp.Numeric(0, 200, grid=1), delta=0.0, solver="clarabel"),
    DPLasso(x_bound=1.0, label_spec=dp.Numeric(0, 200, grid=1)),
])
def test_regressors_with_a_label_in_its_own_units_are_searched(est):
    """Failed before with float(None): the score's sensitivity read y_bound, which label_spec leaves unset.
    The label is mapped onto [−1, 1], so the clipped error's sensitivity is 2; best_score_ is per row,
    in the label's own units (a noisy negative mean absolute error, within the declared range)."""
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, size=(300, 3))
    y = 100 + X @ np.array([40.0, -30.0, 0.0])
    ledger = dp.Ledger()
    search = DPSearchCV(est, {"radius": [1.0, 3.0]}, epsilon=4.0, ledger=ledger, random_state=0).fit(X, y)
    assert search.release_.parameters["score_sensitivity"] == pytest.approx(2.0)
    assert -200.0 <= search.best_score_ <= 50.0 and len(ledger.charges) == 1
    assert search.predict(X).shape == (300,)


def test_the_estimator_as_given_is_always_a_candidate():
    X, y = table(n=120)
    est = logistic(alpha=0.05)
    search = DPSearchCV(est, {"alpha": [0.01, 0.1]}, epsilon=1.0, ledger=dp.Ledger(), random_state=0).fit(X, y)
    assert search.cv_results_["params"][0] == {"alpha": 0.05}
    kept = DPSearchCV(est, {"alpha": [0.05, 0.1]}, epsilon=1.0, ledger=dp.Ledger(), random_state=0).fit(X, y)
    assert kept.cv_results_["params"] == [{"alpha": 0.05}, {"alpha": 0.1}]  # already there: not repeated
    # an estimator that cannot run under the search's rule (output perturbation needs α > 0) is left out
    op = logistic(mechanism="output-perturbation", mechanism_options={"noise": "gaussian"})
    left = DPSearchCV(op, {"alpha": [0.01, 0.1]}, epsilon=1.0, ledger=dp.Ledger(), random_state=0).fit(X, y)
    assert left.cv_results_["params"] == [{"alpha": 0.01}, {"alpha": 0.1}]


def test_mechanism_options_are_searched():
    """DP-GD's own settings (steps, clip) can be tuned: per option, or as whole dicts."""
    X, y = table(n=150)
    est = logistic(mechanism="dp-gd", mechanism_options={"steps": 5})
    search = DPSearchCV(est, {"mechanism_options__steps": [10, 20]}, epsilon=2.0, stopping="noisy-max",
                        ledger=dp.Ledger(), random_state=0).fit(X, y)
    assert search.cv_results_["param_mechanism_options"] == [{"steps": 5}, {"steps": 10}, {"steps": 20}]
    assert search.release_.parameters["selected_parameters"]["steps"] == search.best_params_["mechanism_options"][
        "steps"]
    grid = {"mechanism_options": [{"steps": 10, "clip": "lipschitz"}, {"steps": 10, "clip": "adaptive"}]}
    search = DPSearchCV(est, grid, epsilon=2.0, stopping="noisy-max", ledger=dp.Ledger(), random_state=0).fit(X, y)
    assert search.cv_results_["params"][1:] == [{"mechanism_options": d} for d in grid["mechanism_options"]]
    assert search.best_estimator_.mechanism_options == search.best_params_["mechanism_options"]


def test_gaussian_candidates_are_calibrated_to_the_per_candidate_mu():
    """Under papernot-steinke the accounting reads each candidate's μ only: DP-GD is calibrated to
    μ_t itself (never above it), not to an (ε, δ) point it would convert to zCDP loosely."""
    X, y = table(n=200)
    search = DPSearchCV(logistic(), {"alpha": [1e-3]}, epsilon=1.0, stopping="papernot-steinke", ledger=dp.Ledger(),
                        random_state=0).fit(X, y)
    params = search.release_.parameters
    assert search.stopping_ == "papernot-steinke" and params["selected_mechanism"].startswith("DPGradientDescent")
    mu = (2.0 * params["selected_parameters"]["zcdp_rho"]) ** 0.5
    assert 0.999 * params["candidate_mu"] <= mu <= params["candidate_mu"]


def test_rows_are_held_out_where_the_budget_allows():
    """holdout="auto" holds out 20 % of the rows where the noisy held-out accuracy resolves 1 %
    (public facts: n, ε, δ, the rule), and scores on the training rows on small tables."""
    search = DPSearchCV(logistic(), GRID, epsilon=1.0)
    assert search._holdout_fraction(300, 1e-5, "papernot-steinke", 0.0, 4, None) == 0.0
    assert search._holdout_fraction(300_000, 1e-5, "papernot-steinke", 0.0, 4, None) == 0.2
    assert search.set_params(holdout=0.1)._holdout_fraction(300, 1e-5, "papernot-steinke", 0.0, 4, None) == 0.1
    X, y = table(n=2000)
    fitted = DPSearchCV(logistic(), GRID, epsilon=1.0, holdout=0.25, stopping="noisy-max", ledger=dp.Ledger(),
                        random_state=0).fit(X, y)
    assert fitted.holdout_ == 0.25 and fitted.release_.parameters["holdout_rows"] == 500
    assert fitted.release_.parameters["score_rows"] == "held-out"


def test_the_estimator_as_given_is_drawn_more_often_than_the_others():
    X, y = table(n=120)
    est = logistic(alpha=0.05)
    search = DPSearchCV(est, {"alpha": [0.01, 0.1]}, epsilon=1.0, stopping="papernot-steinke", ledger=dp.Ledger(),
                        random_state=0).fit(X, y)
    assert search.release_.parameters["candidate_law"].startswith("the first")
    moved = DPSearchCV(est, {"alpha": [0.1, 0.05]}, epsilon=1.0, stopping="papernot-steinke", ledger=dp.Ledger(),
                       random_state=0).fit(X, y)
    assert moved.cv_results_["params"] == [{"alpha": 0.05}, {"alpha": 0.1}]  # its settings first, not repeated


def test_liu_talwar_without_a_delta_is_pure_dp():
    X, y = table(n=80)
    ledger = dp.Ledger()
    search = DPSearchCV(logistic(), GRID, epsilon=1.0, stopping="liu-talwar", ledger=ledger, random_state=0).fit(X, y)
    assert search.stopping_ == "liu-talwar" and [(c.epsilon, c.delta) for c in ledger.charges] == [(1.0, 0.0)]


def test_a_search_that_cannot_resolve_fits_the_estimator_as_given():
    """Under stopping="auto", where the noisy scores of a noisy-max selection could not resolve 10 % of
    the score's range (public: n, ε, δ, the grid's size), the search fits the estimator as given with
    its whole (ε, δ), in one charge, and says so; a larger selection_share makes it search."""
    X, y = table(n=2000)
    ledger = dp.Ledger()
    with pytest.warns(SearchWarning, match="selection_share"):
        search = DPSearchCV(logistic(), GRID, epsilon=1.0, ledger=ledger, random_state=0).fit(X, y)
    assert search.stopping_ == "none" and search.best_index_ == 0 and search.best_score_ is None
    assert search.best_params_ == {"alpha": 0.0} and search.release_.mechanism.startswith("DPGradientDescent")
    assert [(c.epsilon, c.delta) for c in ledger.charges] == [(1.0, 1 / 2000**2)]
    assert np.mean(search.predict(X) == y) > 0.8
    with warnings.catch_warnings():
        warnings.simplefilter("error", SearchWarning)
        wide = DPSearchCV(logistic(), GRID, epsilon=1.0, selection_share=0.9, ledger=ledger, random_state=0).fit(X, y)
    assert wide.stopping_ == "noisy-max" and len(wide.cv_results_["noisy_score"]) == 4


def test_the_search_replaces_a_poor_default_with_a_clearly_better_candidate():
    """Where the estimator as given is poor (output perturbation with a tiny α: about chance) and the
    grid holds a good setting (DP-GD), the noisy max picks the good one and refits it on every row."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(5000, 3))
    y = np.where(X @ np.array([1.0, -1.0, 0.5]) + 0.3 * rng.normal(size=5000) > 0, "yes", "no")
    poor = logistic(mechanism="output-perturbation", alpha=1e-3, mechanism_options={"noise": "gaussian"})
    grid = {"mechanism": ["dp-gd"], "alpha": [0.0], "mechanism_options": [{}]}
    for seed in range(3):
        search = DPSearchCV(poor, grid, epsilon=1.0, ledger=dp.Ledger(), random_state=seed).fit(X, y)
        assert search.stopping_ == "noisy-max" and search.best_params_["mechanism"] == "dp-gd"
        assert np.mean(search.predict(X) == y) > 0.85
