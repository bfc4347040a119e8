"""Private model selection in scikit-learn's idiom: :class:`DPSearchCV`.

scikit-learn's ``GridSearchCV`` and ``cross_val_score`` score every candidate *exactly* on
held-out rows of the table, so on private data their scores, ``cv_results_``,
``best_params_`` and ``best_score_`` are non-private statistics, whatever ε each fit has.
:class:`DPSearchCV` takes the same estimator and grid and runs them through
:class:`dpopt.PrivateSelection` (random stopping, LT19 Thm 3.2 / PS22 Thm 2): the whole search
— every candidate fit, every noisy score, the choice — is one charge of the stated (ε, δ).

How a search runs (docs/design.md's order): every check that needs no data (the estimator,
the grid's names and values, each candidate's settings, ε, δ, the stopping law) → the table is
validated and encoded once (one Dataset shared by every candidate: grid parameters that change
the encoding are refused) → every candidate's mechanism and problem are built and planned from
public facts → one charge → K ~ the stopping law runs of Q (a uniformly random candidate, fitted
on the table with the per-candidate budget, scored on the same table with noise) → the best run
by noisy score.  Scores are counts over the whole table (replace-one sensitivity below), not
folds: the noise, not a held-out split, keeps them honest.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone
from sklearn.model_selection import ParameterGrid
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from dpopt.errors import BudgetExceededError, DpoptError, LedgerProcessError, ModelError
from dpopt.mechanisms.selection import PrivateSelection, check_grid
from dpopt.modeling.dataset import Dataset
from dpopt.privacy.ledger import Ledger
from dpopt.privacy.selection import CandidateBudget
from dpopt.sklearn._base import (
    DPClassifierBase,
    DPEstimatorBase,
    DPRegressorBase,
    check_random_state_type,
    seed_from,
    warn_refused,
)

ScoreFn = Callable[[np.ndarray, Dataset], float]

#: grid names the search sets itself, with the reason
_SET_BY_SEARCH = ("epsilon", "delta", "ledger", "random_state")
#: grid names that change how the table is encoded (every candidate must share one Dataset)
_ENCODING = ("fit_intercept", "x_bound", "x_norm", "y_bound", "schema", "classes", "unknown_label", "unseen")


def clipped_absolute_error(theta: np.ndarray, data: Dataset) -> float:
    """−Σ |clip(⟨x, θ⟩, ±y_bound) − y|: the regressors' score (higher is better).

    Targets are clipped to the declared ``y_bound`` when the Dataset is built, and the
    prediction is clipped to the same range (post-processing), so each term lies in
    [0, 2·y_bound]: replacing one row changes the sum by at most 2·y_bound.
    """
    assert data.y_bound is not None
    bound = float(data.y_bound)
    pred = np.clip(np.asarray(data.X, dtype=np.float64) @ theta, -bound, bound)
    return -float(np.sum(np.abs(pred - np.asarray(data.y, dtype=np.float64))))


class DPSearchCV(MetaEstimatorMixin, BaseEstimator):
    """Private hyperparameter search over a dpopt estimator (module docstring).

    Parameters
    ----------
    estimator : DPLogisticRegression, DPRidge or DPLasso
        The model whose settings are searched; its bounds, schema, classes, solver and
        ``mechanism_options`` are shared by every candidate.  Its ``epsilon``, ``delta``,
        ``ledger`` and ``random_state`` are not used: each candidate fit runs with the
        per-candidate budget of this search, on a throwaway ledger.
    param_grid : dict or list of dicts
        As scikit-learn's ``GridSearchCV``: parameter names → lists of values (numbers or
        strings), e.g. ``{"alpha": [0.01, 0.1], "mechanism": ["objective-perturbation",
        "output-perturbation"]}``.  Names that change the table's encoding (``x_bound``,
        ``schema``, ``classes``, ``fit_intercept``, ...) or that the search sets
        (``epsilon``, ``delta``, ``ledger``, ``random_state``) and ``solver`` are refused.
    epsilon, delta : float
        The whole search's guarantee, charged once per ``fit``.
    stopping : {"liu-talwar", "papernot-steinke"}
        The random-stopping rule of :class:`dpopt.PrivateSelection`: ``"liu-talwar"`` (pure
        ε-DP, δ = 0; pure-DP candidates such as objective or output perturbation with δ = 0)
        or ``"papernot-steinke"`` (δ > 0; Gaussian candidates: ``mechanism="dp-gd"``, or
        output perturbation with ``mechanism_options={"noise": "gaussian"}``).
    expected_trials : float, optional
        E[K] ≥ 1, the expected number of candidate fits (default: the grid's size).
    shape : float, optional
        η of the truncated negative binomial (``"papernot-steinke"`` only).
    score_share : float, default 0.1
        The fraction of each run's budget spent on its noisy score.
    scoring : callable, optional
        ``scoring(theta, data) -> float`` on the encoded Dataset (θ includes the intercept),
        with its declared replace-one ``score_sensitivity``.  Default: classifiers count
        the rows with y·⟨x, θ⟩ > 0 (sensitivity 1); regressors −Σ|clip(⟨x, θ⟩) − y| with
        the prediction clipped to ±``y_bound`` (sensitivity 2·``y_bound``).
    score_sensitivity : float, optional
        Required with ``scoring``.
    ledger : dpopt.Ledger, optional
        Charged once per fit with (ε, δ) (default :func:`dpopt.default_ledger`); shared by clones.
    random_state : None, int, RandomState or Generator
        None: noise from OS entropy (secure).  Otherwise reproducible noise (not secure).

    Attributes
    ----------
    best_estimator_ : estimator
        A clone of ``estimator`` with ``best_params_``, whose ``coef_``/``intercept_``/``release_``
        are the selected candidate's release (no second fit, no second charge).  Fitting
        it again would charge its own ledger.
    best_params_ : dict
        The selected candidate's settings (a noisy output: the choice is private).
    best_index_ : int
        Its index in ``cv_results_["params"]``.
    best_score_ : float or None
        The selected run's **noisy** score, per row (default scores: a noisy accuracy, or a
        noisy negative mean absolute error; a ``scoring`` callable's value is not divided).
        It is part of the selection's output and covered by its (ε, δ); not an exact score.
    cv_results_ : dict
        Public facts only: ``"params"`` (the grid, in order) and ``"param_<name>"`` lists.
        No scores: the other candidates' scores (and how many ran) are not released.
    release_ : dpopt.Release
        The selection's release (θ, the guarantee, ``parameters["selected"]``, ...).
    n_features_in_, feature_names_in_, classes_
        As the estimator's.

    Notes
    -----
    The score is evaluated on the same table the candidate was fitted on (no folds): its
    noise is what makes the choice private.  Only :class:`DPLogisticRegression`,
    :class:`DPRidge` and :class:`DPLasso` (convex problems) can be searched.
    """

    def __init__(self, estimator: Any, param_grid: Any, *, epsilon: float = 1.0, delta: float = 0.0,
                 stopping: str = "liu-talwar", expected_trials: float | None = None, shape: float | None = None,
                 score_share: float = 0.1, scoring: ScoreFn | None = None,
                 score_sensitivity: float | None = None, ledger: Ledger | None = None,
                 random_state: Any = None) -> None:
        self.estimator = estimator
        self.param_grid = param_grid
        self.epsilon = epsilon
        self.delta = delta
        self.stopping = stopping
        self.expected_trials = expected_trials
        self.shape = shape
        self.score_share = score_share
        self.scoring = scoring
        self.score_sensitivity = score_sensitivity
        self.ledger = ledger
        self.random_state = random_state

    def __sklearn_clone__(self) -> DPSearchCV:
        """A clone that shares the ledger (a copy of a ledger would lose the clone's charges)."""
        params = self.get_params(deep=False)
        ledger = params.pop("ledger", None)
        return type(self)(**{k: clone(v, safe=False) for k, v in params.items()}, ledger=ledger)

    # ---- public checks (no data) -------------------------------------------------------
    def _check_estimator(self) -> DPEstimatorBase:
        est = self.estimator
        if not isinstance(est, DPEstimatorBase):
            raise ModelError(f"DPSearchCV needs a dpopt.sklearn estimator (DPLogisticRegression, DPRidge, DPLasso), "
                             f"got {type(est).__name__}")
        if not isinstance(est, (DPClassifierBase, DPRegressorBase)) or est._requires_schema:
            raise ModelError(f"DPSearchCV cannot search {type(est).__name__}: PrivateSelection runs convex problems "
                             "only (DPLogisticRegression, DPRidge, DPLasso)")
        est._check_public()
        return est

    def _check_grid(self, est: DPEstimatorBase) -> tuple[dict[str, Any], ...]:
        """The expanded grid: names the estimator has and the search may vary; values checked."""
        grid = self.param_grid
        if isinstance(grid, Mapping):
            grid = [grid]
        if not isinstance(grid, Sequence) or isinstance(grid, (str, bytes)) or len(grid) == 0:
            raise ModelError("param_grid is empty or not a dict / list of dicts: give e.g. {'alpha': [0.01, 0.1]}")
        known = sorted(est.get_params(deep=False))
        for part in grid:
            if not isinstance(part, Mapping) or not part:
                raise ModelError("param_grid is empty: every dict must map parameter names to lists of values")
            for name, values in part.items():
                _check_name(name, known, type(est).__name__)
                if isinstance(values, (str, bytes)) or not isinstance(values, (Sequence, np.ndarray)) \
                        or len(values) == 0:
                    raise ModelError(f"param_grid[{name!r}] must be a non-empty list of values")
        expanded = [dict(p) for p in ParameterGrid([{k: list(v) for k, v in part.items()} for part in grid])]
        return tuple(dict(p) for p in check_grid(expanded))

    def _candidates(self, est: DPEstimatorBase, grid: tuple[dict[str, Any], ...]) -> list[DPEstimatorBase]:
        """One estimator per candidate, each checked (settings only) before anything is read."""
        built = []
        for i, params in enumerate(grid):
            cand = clone(est).set_params(**params)
            try:
                cand._check_public()
            except (DpoptError, ValueError, TypeError) as exc:
                raise ModelError(f"candidate {i} {params} is not a valid setting: {exc}") from exc
            built.append(cand)
        return built

    def _score(self, est: DPEstimatorBase) -> tuple[str | ScoreFn, float | None]:
        if self.scoring is not None:
            if not callable(self.scoring):
                raise ModelError("scoring must be None or a callable scoring(theta, data) -> float")
            return self.scoring, self.score_sensitivity
        if self.score_sensitivity is not None:
            raise ModelError("score_sensitivity goes with a scoring callable; the default scores declare their own")
        if isinstance(est, DPClassifierBase):
            return "accuracy", None
        return clipped_absolute_error, 2.0 * float(est.y_bound)

    # ---- fit --------------------------------------------------------------------------
    def fit(self, X: Any, y: Any) -> DPSearchCV:
        """Search privately: one charge of (ε, δ) to the ledger for the whole search.

        Parameters
        ----------
        X, y
            As the estimator's ``fit``.

        Returns
        -------
        self

        Raises
        ------
        ModelError, MechanismError, PrivacyParameterError
            Bad settings (an unknown or unsearchable grid name, an invalid candidate, ε/δ
            that do not fit the stopping rule), before anything is charged.
        BudgetExceededError
            The ledger has no room for (ε, δ) (after a :class:`~dpopt.errors.BudgetWarning`).
        """
        est = self._check_estimator()
        grid = self._check_grid(est)
        candidates = {_key(p): c for p, c in zip(grid, self._candidates(est, grid), strict=True)}
        check_random_state_type(self.random_state)
        if self.ledger is not None and not isinstance(self.ledger, Ledger):
            raise ModelError(f"ledger must be a dpopt Ledger, got {type(self.ledger).__name__}")
        score, sensitivity = self._score(est)
        shared: dict[str, Dataset] = {}

        def build(params: dict[str, Any], budget: CandidateBudget) -> Any:
            mech, _ = candidates[_key(params)]._mechanism_and_problem(
                shared["data"], epsilon=budget.epsilon, delta=budget.delta, ledger=Ledger())
            return mech

        def problem(params: dict[str, Any]) -> Any:
            return candidates[_key(params)]._problem(shared["data"])

        selection = PrivateSelection(self.epsilon, self.delta, candidates=list(grid), build=build, score=score,
                                     score_sensitivity=sensitivity, score_share=self.score_share,
                                     stopping=self.stopping, expected_trials=self.expected_trials,
                                     shape=self.shape, ledger=self.ledger)
        encoder = clone(est)
        shared["data"] = encoder._encode(X, y)
        try:
            release = selection.run(problem, solver=est.solver, seed=seed_from(self.random_state))
        except (BudgetExceededError, LedgerProcessError) as exc:  # refused at the ledger, before the charge
            warn_refused(type(self).__name__, exc)
            raise
        self._store(release, grid, encoder, shared["data"].n, custom=self.scoring is not None)
        return self

    def _store(self, release: Any, grid: tuple[dict[str, Any], ...], encoder: DPEstimatorBase, n: int, *,
               custom: bool) -> None:
        index = int(release.parameters["selected_index"])
        best = clone(self.estimator).set_params(**grid[index])
        for name in ("n_features_in_", "feature_names_in_", "classes_"):
            if hasattr(encoder, name):
                setattr(best, name, getattr(encoder, name))
        best._store(release)
        noisy = release.parameters.get("noisy_selected_score")
        self.release_ = release
        self.best_index_ = index
        self.best_params_ = dict(grid[index])
        self.best_estimator_ = best
        self.best_score_ = None if noisy is None else (float(noisy) if custom else float(noisy) / n)
        names = sorted({k for p in grid for k in p})
        self.cv_results_: dict[str, list[Any]] = {"params": [dict(p) for p in grid],
                                                  **{f"param_{k}": [p.get(k) for p in grid] for k in names}}
        self.n_features_in_ = encoder.n_features_in_
        for name in ("feature_names_in_", "classes_"):
            if hasattr(encoder, name):
                setattr(self, name, getattr(encoder, name))

    # ---- delegation ----------------------------------------------------------------------
    def _best(self) -> Any:
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_

    def predict(self, X: Any) -> np.ndarray:
        """The selected model's predictions (post-processing of the release)."""
        return np.asarray(self._best().predict(X))

    @available_if(lambda self: isinstance(getattr(self, "best_estimator_", self.estimator), DPClassifierBase))
    def decision_function(self, X: Any) -> np.ndarray:
        """The selected classifier's ⟨θ, x⟩."""
        return np.asarray(self._best().decision_function(X))

    @available_if(lambda self: hasattr(getattr(self, "best_estimator_", self.estimator), "predict_proba"))
    def predict_proba(self, X: Any) -> np.ndarray:
        """The selected logistic model's class probabilities."""
        return np.asarray(self._best().predict_proba(X))

    def score(self, X: Any, y: Any) -> float:
        """The selected model's **exact** score on (X, y): not private on private rows."""
        return float(self._best().score(X, y))


def _key(params: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted(params.items()))


def _check_name(name: object, known: list[str], owner: str) -> None:
    """Refuse a grid name the estimator does not have, or one the search may not vary."""
    if not isinstance(name, str) or name not in known:
        close = difflib.get_close_matches(str(name), known, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else f"; it has {', '.join(known)}"
        raise ModelError(f"param_grid names {name!r}, which {owner} does not have{hint}")
    if name in _SET_BY_SEARCH:
        raise ModelError(f"param_grid may not vary {name!r}: DPSearchCV runs every candidate with the per-candidate "
                         "budget of its own (epsilon, delta), on a throwaway ledger, with its random_state")
    if name in _ENCODING:
        raise ModelError(f"param_grid may not vary {name!r}: it changes how the table is encoded, and every "
                         f"candidate runs on one encoded table; set it on the {owner}")
    if name in ("solver", "mechanism_options"):
        raise ModelError(f"param_grid may not vary {name!r}: it is shared by every candidate; set it on the {owner}")


__all__ = ["DPSearchCV", "clipped_absolute_error"]
