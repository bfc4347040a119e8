"""Private model selection in scikit-learn's idiom: :class:`DPSearchCV`.

scikit-learn's ``GridSearchCV`` and ``cross_val_score`` score every candidate *exactly* on
held-out rows of the table, so on private data their scores, ``cv_results_``,
``best_params_`` and ``best_score_`` are non-private statistics, whatever ε each fit has.
:class:`DPSearchCV` takes the same estimator and grid and runs them through a private
selection: the whole search — every candidate fit, every noisy score, the choice and the
refit — is one charge of the stated (ε, δ).

The default rule, ``"noisy-max"`` (:class:`~dpopt.mechanisms.selection_refit.RefitSelection`,
zCDP: [BS16] Lemma 2.3, [McS09] Thm 4, [CKS20]), spends ``selection_share`` (5 %) of the
zCDP budget ρ = zcdp_rho(ε, δ) on fitting every candidate once on 80 % of the rows and scoring
it with Gaussian noise on the other 20 %, keeps the estimator as given unless another
candidate's noisy score beats it by two standard deviations of the difference, and fits the
chosen setting again on every row with the other 95 % of ρ (scikit-learn's ``refit=True``).
Where it does not apply (δ = 0, or a candidate that is not a Gaussian mechanism with a known
zCDP) the search falls back to random stopping with :class:`dpopt.PrivateSelection` (LT19
Thm 3.2 / PS22 Thm 2), whose released model is the best candidate run itself.

How a search runs (docs/design.md's order): every check that needs no data (the estimator,
the grid's names and values, each candidate's settings, ε, δ's range, the stopping law's
settings) → the table is validated and encoded once (one encoding shared by every candidate:
grid parameters that change the encoding are refused) and split by row position into
training and held-out rows (a public split: n is public, the permutation is drawn from the
search's seed, never from the data) → the rule and δ from public facts → every
candidate's mechanism and problem are built and planned (and, under ``"noisy-max"``, its
refit on every row), and each candidate's fitted attributes are stored once from a zero θ of
its shape (anything that would fail after the charge fails here) → one charge → the
selection (``"noisy-max"``: every candidate once, the noisy max with the preference for the
estimator as given, the refit; random stopping: K ~ the stopping law runs of a random
candidate, the best run by noisy score).  The estimator as given is always one of the
candidates, so the search can always fall back to the untuned model.
"""

from __future__ import annotations

import difflib
import math
import numbers
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone
from sklearn.model_selection import ParameterGrid
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from dpopt.errors import (
    BudgetExceededError,
    DpoptError,
    LedgerProcessError,
    MechanismError,
    ModelError,
    SearchWarning,
)
from dpopt.mechanisms.base import RunOptions, SolverNeed
from dpopt.mechanisms.release import Release
from dpopt.mechanisms.selection import (
    PrivateSelection,
    candidate_mu,
    candidate_options,
    check_grid,
    score_noise_law,
)
from dpopt.mechanisms.selection_refit import (
    PREFER_FIRST,
    RESOLUTION,
    SELECTION_SHARE,
    RefitSelection,
    refit_score_noise,
    resolves,
)
from dpopt.modeling.dataset import Dataset
from dpopt.privacy.ledger import Ledger
from dpopt.privacy.selection import (
    STOPPING_RULES,
    CandidateBudget,
    calibrate_refit,
    calibrate_selection,
)
from dpopt.sklearn._base import (
    DPClassifierBase,
    DPEstimatorBase,
    DPRegressorBase,
    check_random_state_type,
    default_delta,
    positive_number,
    seed_from,
    warn_refused,
)

ScoreFn = Callable[[np.ndarray, Dataset], float]

#: grid names the search sets itself, with the reason
_SET_BY_SEARCH = ("epsilon", "delta", "ledger", "random_state")
#: grid names prefixed with this set one key of ``mechanism_options`` (e.g. ``mechanism_options__steps``)
_OPTION = "mechanism_options__"
#: attributes an encoding sets on the estimator that every candidate needs before it is built
_FITTED = ("n_features_in_", "feature_names_in_", "classes_", "_classes_read")
#: bisection steps of a Gaussian candidate's calibration to the per-candidate μ
_CALIBRATION_STEPS = 40
#: ``holdout="auto"``: the fraction held out, when the noisy held-out score resolves this
#: fraction of the held-out rows' score range (accuracy: 1 %)
HOLDOUT = 0.2
HOLDOUT_RESOLUTION = 0.01
#: held-out fraction bounds
_HOLDOUT_MAX = 0.5
#: the rules ``stopping`` takes
_RULES = ("auto", "noisy-max", *STOPPING_RULES)
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
        The model whose settings are searched; it is always a candidate itself (its settings
        for every searched name, first in ``cv_results_``), preferred: under ``"noisy-max"``
        another candidate must beat its noisy score by two standard deviations of the
        difference (``RefitSelection(prefer_first=2)``); under random stopping it is drawn in each
        run with probability ½ + ½g instead of 1/g (``PrivateSelection(favour_first=True)``).  Its bounds,
        schema, classes and solver are shared by every candidate.  Its ``epsilon``,
        ``delta``, ``ledger`` and ``random_state`` are not used: each candidate fit runs with
        the per-candidate budget of this search, on a throwaway ledger.
    param_grid : dict or list of dicts
        As scikit-learn's ``GridSearchCV``: parameter names → lists of values, e.g.
        ``{"alpha": [0.01, 0.1], "mechanism": ["dp-gd", "output-perturbation"]}``.  Any
        parameter of the estimator but those that change the table's encoding (``x_bound``,
        ``schema``, ``classes``, ``fit_intercept``, ...), those the search sets (``epsilon``,
        ``delta``, ``ledger``, ``random_state``) and ``solver`` (a run option shared by every
        candidate).  ``mechanism_options`` takes dicts (each replaces the estimator's), and
        ``mechanism_options__<name>`` varies one option on top of them (e.g.
        ``{"mechanism_options__steps": [20, 50, 100]}`` for DP-GD's steps, or ``..._clip``).
    epsilon : float
        The whole search's ε, charged once per ``fit``.
    delta : float or None, default None
        The whole search's δ; None: 1/n² (n, the number of rows, is public).
    stopping : {"auto", "noisy-max", "liu-talwar", "papernot-steinke"}
        The selection rule.  ``"noisy-max"`` (δ > 0; Gaussian candidates: DP-GD, or output
        perturbation with ``mechanism_options={"noise": "gaussian"}``): every candidate once
        with ``selection_share`` of the budget, then the chosen setting refitted on every row
        (module docstring).  The random-stopping rules of :class:`dpopt.PrivateSelection`, whose
        released model is the best candidate run: ``"liu-talwar"`` (pure ε-DP, δ = 0, pure-DP
        candidates: objective or output perturbation with δ = 0) or ``"papernot-steinke"``
        (δ > 0; Gaussian candidates).  ``"auto"`` (default): ``"noisy-max"`` when δ > 0 and
        every candidate is Gaussian, else ``"liu-talwar"`` with δ = 0 (the search then charges
        (ε, 0)); ``stopping_`` says which.
    selection_share : float, default 0.05
        ``"noisy-max"`` only: the fraction of the zCDP budget spent choosing, in (0, 1); the
        refit gets the rest.  More makes the choice surer and the refitted model noisier.
    expected_trials : float, optional
        Random stopping only: E[K] ≥ 1, the expected number of candidate fits (default: the
        number of candidates).
    shape : float, optional
        η of the truncated negative binomial (``"papernot-steinke"`` only; default 0, the
        logarithmic law, which leaves each run the most budget at a given E[K]).
    holdout : float or "auto", default "auto"
        The fraction of rows held out for the scores (split by row position with the search's
        seed, before anything is read).  Candidates train on the rest, and by parallel
        composition both the training and the score of a run get the run's whole budget.
        0: candidates train on every row and are scored on them, with ``score_share`` of the
        run's budget spent on the score.  ``"auto"``: under ``"noisy-max"`` 0.2 (the refit
        trains on every row anyway) unless that leaves no held-out row or fewer than two
        training rows; under random stopping 0.2 where the budget allows, i.e. where the
        held-out score's noise scale is at most 1 % of what the held-out rows can score
        (public: n, ε, δ, the rule), else 0 (small tables: every row is worth more in training
        than an honest but very noisy held-out score); ``holdout_`` says which.
    score_share : float, default 0.1
        The fraction of each run's budget spent on its noisy score when ``holdout=0``.
    scoring : callable, optional
        ``scoring(theta, data) -> float`` on the encoded Dataset (θ includes the intercept),
        with its declared replace-one ``score_sensitivity``.  Default: classifiers count
        the rows classified correctly (sensitivity 1); regressors −Σ|clip(⟨x, θ⟩) − y| with
        the prediction clipped to the declared label range (sensitivity twice its half-width
        on the encoded scale).
    score_sensitivity : float, optional
        Required with ``scoring``.
    ledger : dpopt.Ledger, optional
        Charged once per fit with (ε, δ) (default :func:`dpopt.default_ledger`); shared by clones.
    random_state : None, int, RandomState or Generator
        None: noise and the split from OS entropy (secure).  Otherwise reproducible (not secure).

    Attributes
    ----------
    best_estimator_ : estimator
        A clone of ``estimator`` with ``best_params_``, whose ``coef_``/``intercept_``/``release_``
        are the search's release (no further charge): under ``"noisy-max"`` the chosen setting's
        refit on every row, under random stopping the chosen run (trained on the training
        rows).  Fitting it again would charge its own ledger.
    best_params_ : dict
        The selected candidate's value of every searched name (a noisy output: the choice is
        private).
    best_index_ : int
        Its index in ``cv_results_["params"]`` (index 0 is the estimator as given when the grid
        did not already hold its settings).
    best_score_ : float or None
        The selected run's **noisy** score per scored row (default scores: a noisy accuracy,
        or a noisy negative mean absolute error in the label's units; a ``scoring``
        callable's value is not divided).  Part of the selection's output, covered by its
        (ε, δ); not an exact score.  Under ``"noisy-max"`` it scores the chosen setting's
        selection run (trained with a small share of the budget), not the refitted model.
    cv_results_ : dict
        ``"params"`` (the candidates, in order) and ``"param_<name>"`` lists; under
        ``"noisy-max"`` also ``"noisy_score"``, every candidate's noisy score per scored row
        (covered by the search's (ε, δ)).  Under random stopping no scores: the other
        candidates' scores (and how many ran) are not released.
    stopping_ : str
        The rule the search used: ``"noisy-max"``, ``"liu-talwar"``, ``"papernot-steinke"``, or
        ``"none"`` when ``stopping="auto"`` found that the noisy scores could not resolve 10 % of
        the score's range (public facts: n, ε, δ, the grid's size) and fitted the estimator as
        given on every row with the whole (ε, δ), warning with a
        :class:`~dpopt.errors.SearchWarning` (then ``best_index_`` is 0, ``best_score_`` None).
    holdout_ : float
        The fraction of rows held out for the scores.
    release_ : dpopt.Release
        The selection's release (θ, the guarantee, ``parameters["selected"]``, ...).
    n_features_in_, feature_names_in_, classes_
        As the estimator's.

    Notes
    -----
    Only :class:`DPLogisticRegression`, :class:`DPRidge` and :class:`DPLasso` (convex
    problems) can be searched.
    """

    def __init__(self, estimator: Any, param_grid: Any, *, epsilon: float = 1.0, delta: float | None = None,
                 stopping: str = "auto", expected_trials: float | None = None, shape: float | None = None,
                 holdout: float | str = "auto", score_share: float = 0.1, scoring: ScoreFn | None = None,
                 score_sensitivity: float | None = None, ledger: Ledger | None = None,
                 random_state: Any = None, selection_share: float = SELECTION_SHARE) -> None:
        self.estimator = estimator
        self.param_grid = param_grid
        self.epsilon = epsilon
        self.delta = delta
        self.stopping = stopping
        self.expected_trials = expected_trials
        self.shape = shape
        self.holdout = holdout
        self.score_share = score_share
        self.scoring = scoring
        self.score_sensitivity = score_sensitivity
        self.ledger = ledger
        self.random_state = random_state
        self.selection_share = selection_share

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
        if est.mechanism == "one-vs-rest":
            raise ModelError("DPSearchCV cannot search mechanism='one-vs-rest' (k separate fits, not one "
                             "mechanism): search the multinomial model (mechanism='auto' or 'dp-gd')")
        est._check_public()
        return est

    def _check_settings(self) -> None:
        """The search's own settings (no data)."""
        if self.stopping not in _RULES:
            raise ModelError(f"stopping must be one of {', '.join(map(repr, _RULES))}, got {self.stopping!r}")
        share = positive_number(self.selection_share, "selection_share")
        if share >= 1.0:
            raise ModelError(f"selection_share must be in (0, 1) (the fraction of the budget spent choosing), "
                             f"got {self.selection_share!r}")
        if self.delta is not None:
            positive_number(self.delta, "delta", allow_zero=True)
        holdout = 0.0 if self.holdout == "auto" else positive_number(self.holdout, "holdout", allow_zero=True)
        if holdout >= _HOLDOUT_MAX:
            raise ModelError(f"holdout must be in [0, {_HOLDOUT_MAX:g}) (the fraction of rows held out for the "
                             f"scores), got {self.holdout!r}")
        check_random_state_type(self.random_state)
        if self.ledger is not None and not isinstance(self.ledger, Ledger):
            raise ModelError(f"ledger must be a dpopt Ledger, got {type(self.ledger).__name__}")

    def _check_grid(self, est: DPEstimatorBase) -> tuple[list[dict[str, Any]], bool]:
        """The candidates: the expanded grid, every searched name filled in from the estimator,
        the estimator's own settings first (added when the grid does not hold them; the flag
        says whether they were)."""
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
                if name == "mechanism_options" and not all(v is None or isinstance(v, Mapping) for v in values):
                    raise ModelError("param_grid['mechanism_options'] must list dicts of mechanism keyword "
                                     "arguments (or vary one with 'mechanism_options__<name>')")
        expanded = [_settings(p, est) for p in ParameterGrid([{k: list(v) for k, v in part.items()}
                                                              for part in grid])]
        names = sorted({k for p in expanded for k in p})
        defaults = {**est.get_params(deep=False), "mechanism_options": dict(est.mechanism_options or {})}
        params = [{k: p.get(k, defaults[k]) for k in names} for p in expanded]
        default = {k: defaults[k] for k in names}
        added = not any(_same(p, default) for p in params)
        params = [default, *(p for p in params if not _same(p, default))]  # the estimator's settings first
        check_grid([_record(p) for p in params])  # duplicates and non-finite numbers, in one line
        return params, added

    def _candidates(self, est: DPEstimatorBase, grid: list[dict[str, Any]]) -> list[DPEstimatorBase]:
        """One estimator per candidate, each checked (settings only) before anything is read."""
        built = []
        for i, params in enumerate(grid):
            try:
                cand = clone(est).set_params(**params)
                cand._check_public()
            except (DpoptError, ValueError, TypeError) as exc:
                raise ModelError(f"candidate {i} {_show(params)} is not a valid setting: {exc}") from exc
            built.append(cand)
        return built

    def _score(self, est: DPEstimatorBase, data: Dataset) -> tuple[str | ScoreFn, float | None]:
        """The score and its sensitivity (a regressor's from the encoded label bound, public)."""
        if self.scoring is not None:
            if not callable(self.scoring):
                raise ModelError("scoring must be None or a callable scoring(theta, data) -> float")
            return self.scoring, self.score_sensitivity
        if self.score_sensitivity is not None:
            raise ModelError("score_sensitivity goes with a scoring callable; the default scores declare their own")
        if isinstance(est, DPClassifierBase):
            return "accuracy", None
        assert data.y_bound is not None  # a regressor declares y_bound or label_spec (mapped onto [−1, 1])
        return clipped_absolute_error, 2.0 * float(data.y_bound)

    # ---- public facts of the encoded table (no values) ----------------------------------------
    def _holdout_fraction(self, n: int, delta: float, stopping: str, shape: float | None, candidates: int,
                          sensitivity: float | None) -> float:
        """The held-out fraction: the declared one, or for ``"auto"`` :data:`HOLDOUT` when the
        noisy held-out score resolves the score to :data:`HOLDOUT_RESOLUTION` of the held-out
        rows (its noise scale from the public calibration), else 0 (n, ε, δ and the rule only)."""
        if self.holdout != "auto":
            return float(self.holdout)
        if stopping == "noisy-max":
            held = round(HOLDOUT * n)
            return HOLDOUT if held >= 1 and n - held >= 2 else 0.0
        trials = candidates if self.expected_trials is None else self.expected_trials
        budget = calibrate_selection(float(self.epsilon), delta, stopping=stopping, expected_trials=trials,
                                     shape=shape, holdout=True)
        noise = score_noise_law(budget, 1.0 if sensitivity is None else float(sensitivity))
        per_row = 1.0 if sensitivity is None else float(sensitivity)
        held = round(HOLDOUT * n)
        return HOLDOUT if held >= 1 and noise.scale <= HOLDOUT_RESOLUTION * per_row * held else 0.0

    @staticmethod
    def _split(data: Dataset, frac: float, seed: int | None) -> tuple[Dataset, Dataset | None]:
        """Training and held-out rows by a public permutation of the row positions (n and the
        seed only; an unseeded search draws it from OS entropy)."""
        if frac == 0.0:
            return data, None
        held = int(round(frac * data.n))
        if held < 1 or data.n - held < 2:
            raise ModelError(f"holdout={frac!r} of {data.n} rows leaves no held-out row or fewer than two "
                             "training rows: use holdout=0 (score on the training rows) or more rows")
        order = np.random.default_rng(seed).permutation(data.n)
        return data.subset(np.sort(order[held:])), data.subset(np.sort(order[:held]))

    def _stopping(self, delta: float, candidates: list[DPEstimatorBase], data: Dataset) -> tuple[str, float]:
        """The selection rule and the δ it charges (public facts: the candidates' mechanisms)."""
        if self.stopping == "liu-talwar" and self.delta is None:
            return "liu-talwar", 0.0  # pure DP: the default δ = 1/n² does not apply
        if self.stopping != "auto":
            return str(self.stopping), delta
        if delta == 0.0:
            return "liu-talwar", 0.0
        for cand in candidates:  # Gaussian with a μ read from its plan, at a positive δ as the run's
            try:
                mech, problem = cand._mechanism_and_problem(data, epsilon=1.0, delta=min(delta, 1e-6),
                                                            ledger=Ledger())
                candidate_mu(mech, problem)
            except (DpoptError, ValueError, TypeError):
                return "liu-talwar", 0.0
        return "noisy-max", delta

    def _check_outputs(self, candidates: list[DPEstimatorBase], grid: list[dict[str, Any]],
                       encoder: DPEstimatorBase, data: Dataset) -> None:
        """Store a zero θ of each candidate's problem's shape as :meth:`_store` would store the
        selected release (a fresh clone with the encoding's facts), before the charge: a
        candidate whose release could not become the fitted attributes fails here, not after."""
        for i, cand in enumerate(candidates):
            try:
                dim = cand._problem(data).dim
                probe = clone(self.estimator).set_params(**grid[i])
                _adopt(probe, encoder)
                probe._store(cast(Release, _Probe(np.zeros(dim))))
            except (DpoptError, ValueError, TypeError) as exc:
                raise MechanismError(f"candidate {i} {_show(grid[i])} cannot store its release: "
                                     f"{exc}") from exc

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
        self._check_settings()
        grid, added = self._check_grid(est)
        default = grid[0]  # the estimator as given (when it can run: see below)
        candidates = self._candidates(est, grid)
        encoder = clone(est)
        full = encoder._encode(X, y)
        seed = seed_from(self.random_state)
        for cand in candidates:  # the encoding's public facts (classes, feature names) before building
            _adopt(cand, encoder)
            cand._check_public()
        delta = default_delta(full.n) if self.delta is None else float(self.delta)
        stopping, delta = self._stopping(delta, candidates[1:] if added else candidates, full)
        shape = self.shape if self.shape is not None or stopping != "papernot-steinke" else 0.0
        score, sensitivity = self._score(est, full)
        frac = self._holdout_fraction(full.n, delta, stopping, shape, len(grid), sensitivity)
        train, held = self._split(full, frac, None if seed is None else seed + 1)
        if (self.stopping == "auto" and stopping == "noisy-max"
                and _fits(candidates[0], full, float(self.epsilon), delta, est.solver)
                and not self._resolves(delta, len(grid), sensitivity, train, held)):
            self._check_outputs(candidates[:1], grid[:1], encoder, full)
            return self._fit_default(candidates[0], grid, encoder, full, delta, seed)
        by_key = {_key(_record(p)): c for p, c in zip(grid, candidates, strict=True)}

        built: dict[tuple[Any, ...], Any] = {}
        refits: list[CandidateBudget] = []  # the refit budgets (by identity: a run's may equal them in value)

        def build(params: dict[str, Any], budget: CandidateBudget) -> Any:
            whole = any(budget is r for r in refits)  # a refit (noisy-max) trains on every row
            key = (_key(params), budget, whole)
            if key not in built:
                built[key] = _at_budget(by_key[_key(params)], full if whole else train, budget)
            return built[key]

        def problem(params: dict[str, Any]) -> Any:
            return by_key[_key(params)]._problem(train)

        def refit(params: dict[str, Any]) -> Any:
            return by_key[_key(params)]._problem(full)

        def selection(entries: list[dict[str, Any]]) -> PrivateSelection:
            if stopping == "noisy-max":
                chosen = RefitSelection(self.epsilon, delta, candidates=[_record(p) for p in entries], build=build,
                                        score=score, score_sensitivity=sensitivity, score_share=self.score_share,
                                        selection_share=self.selection_share, ledger=self.ledger, holdout=held,
                                        refit=None if held is None else refit,
                                        prefer_first=PREFER_FIRST if entries[0] is default else 0.0)
                refits.append(chosen.refit_budget.refit)
                return chosen
            trials = len(entries) if self.expected_trials is None else self.expected_trials
            return PrivateSelection(self.epsilon, delta, candidates=[_record(p) for p in entries], build=build,
                                    score=score, score_sensitivity=sensitivity, score_share=self.score_share,
                                    stopping=stopping, expected_trials=trials, shape=shape,
                                    ledger=self.ledger, holdout=held, favour_first=entries[0] is default)

        if added and not _runs(selection(grid), problem, refit, est.solver):
            del grid[0], candidates[0]  # the estimator as given cannot run under this selection's rule
        self._check_outputs(candidates, grid, encoder, train)
        try:
            release = selection(grid).run(problem, solver=est.solver, seed=seed)
        except (BudgetExceededError, LedgerProcessError) as exc:  # refused at the ledger, before the charge
            warn_refused(type(self).__name__, exc)
            raise
        self.stopping_ = stopping
        self.holdout_ = frac
        scored = train if held is None else held
        self._store(release, grid, encoder, scored, custom=self.scoring is not None)
        return self

    def _resolves(self, delta: float, candidates: int, sensitivity: float | None, train: Dataset,
                  held: Dataset | None) -> bool:
        """Whether the noisy-max selection's scores can tell candidates apart (public facts: n, ε, δ,
        the grid's size, the score's sensitivity; :func:`~dpopt.mechanisms.selection_refit.resolves`)."""
        budget = calibrate_refit(float(self.epsilon), delta, candidates=candidates,
                                 selection_share=float(self.selection_share), score_share=float(self.score_share),
                                 holdout=held is not None)
        per_row = 1.0 if sensitivity is None else float(sensitivity)
        noise = refit_score_noise(budget, per_row)
        if resolves(noise, per_row * (train if held is None else held).n):
            return True
        warnings.warn(f"{type(self).__name__}: at this budget the noisy scores cannot tell the candidates apart (noise "
                      f"{noise.scale / (per_row * (train if held is None else held).n):.1%} of the score's range; the "
                      f"search needs at most {RESOLUTION / (PREFER_FIRST * math.sqrt(2.0)):.1%}), so it fits the "
                      "estimator as given with the whole budget; raise selection_share or epsilon to search",
                      SearchWarning, stacklevel=3)
        return False

    def _fit_default(self, default: DPEstimatorBase, grid: list[dict[str, Any]], encoder: DPEstimatorBase,
                     full: Dataset, delta: float, seed: int | None) -> DPSearchCV:
        """The estimator as given, fitted on every row with the search's whole (ε, δ) (one charge)."""
        mech, problem = default._mechanism_and_problem(full, epsilon=float(self.epsilon), delta=delta,
                                                       ledger=self.ledger)
        try:
            release = mech.run(problem, solver=default.solver, seed=seed, diagnostics=False)  # all of ε: the model
        except (BudgetExceededError, LedgerProcessError) as exc:  # refused at the ledger, before the charge
            warn_refused(type(self).__name__, exc)
            raise
        self.stopping_ = "none"
        self.holdout_ = 0.0
        self._store(release, grid, encoder, full, custom=self.scoring is not None, index=0)
        return self

    def _store(self, release: Release, grid: list[dict[str, Any]], encoder: DPEstimatorBase, scored: Dataset, *,
               custom: bool, index: int | None = None) -> None:
        index = int(release.parameters["selected_index"]) if index is None else index
        best = clone(self.estimator).set_params(**grid[index])
        _adopt(best, encoder)
        best._store(release)
        noisy = release.parameters.get("noisy_selected_score")
        self.release_ = release
        self.best_index_ = index
        self.best_params_ = dict(grid[index])
        self.best_estimator_ = best
        self.best_score_ = None if noisy is None else (float(noisy) if custom else _per_row(noisy, scored, best))
        names = sorted({k for p in grid for k in p})
        self.cv_results_: dict[str, list[Any]] = {"params": [dict(p) for p in grid],
                                                  **{f"param_{k}": [p.get(k) for p in grid] for k in names}}
        scores = release.parameters.get("noisy_scores")
        if scores is not None:  # noisy-max: every candidate's noisy score is part of the release
            self.cv_results_["noisy_score"] = [None if v is None else float(v) if custom else _per_row(v, scored, best)
                                               for v in scores]
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


def _at_budget(cand: DPEstimatorBase, data: Dataset, budget: CandidateBudget) -> Any:
    """The candidate's mechanism for the per-candidate budget.  Under ``"papernot-steinke"`` the
    budget is a μ (the accounting reads the candidates' Rényi curve λμ²/2 only), so a Gaussian
    candidate is calibrated to that μ directly: the largest ε (by bisection, δ = the budget's)
    whose mechanism's μ is ≤ μ_t.  A mechanism calibrated to the budget's (ε, δ) point instead
    would convert it to ρ-zCDP loosely (DP-GD: about a fifth less μ).  Public facts only."""
    def make(eps: float) -> Any:
        return cand._mechanism_and_problem(data, epsilon=eps, delta=budget.delta, ledger=Ledger())

    mech, problem = make(budget.epsilon)
    if budget.mu is None:
        return mech
    try:
        if not candidate_mu(mech, problem) <= budget.mu:
            return mech  # the selection refuses it, in one line, before the charge
        lo, hi = budget.epsilon, 2.0 * budget.epsilon
        for _ in range(_CALIBRATION_STEPS):
            if not candidate_mu(*make(hi)) <= budget.mu:
                break
            lo, hi = hi, 2.0 * hi
        for _ in range(_CALIBRATION_STEPS):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if candidate_mu(*make(mid)) <= budget.mu else (lo, mid)
    except (DpoptError, ValueError, TypeError):
        return mech  # not a Gaussian the selection can read: it refuses it before the charge
    return make(lo)[0]


def _fits(default: DPEstimatorBase, data: Dataset, epsilon: float, delta: float, solver: Any) -> bool:
    """Whether the estimator as given builds and plans with the search's whole (ε, δ) on every row
    (public facts; the checks its run makes before the charge)."""
    try:
        mech, prob = default._mechanism_and_problem(data, epsilon=epsilon, delta=delta, ledger=Ledger())
        mech.check_problem(prob)
        mech.plan(prob, RunOptions(solver=solver))
    except (DpoptError, ValueError, TypeError):
        return False
    return True


def _runs(selection: PrivateSelection, problem: Callable[[dict[str, Any]], Any],
          refit: Callable[[dict[str, Any]], Any], solver: Any) -> bool:
    """Whether the selection's first candidate builds and plans with its per-candidate budget on
    ``problem``, and under ``"noisy-max"`` with the refit budget on ``refit`` (every row) too
    (public facts; the same checks the selection makes before its charge)."""
    first = selection.candidates[0]
    runs = [(selection.candidate_budget, problem)]
    if isinstance(selection, RefitSelection):
        runs.append((selection.refit_budget.refit, refit))
    try:
        for budget, make in runs:
            mech = selection.build(dict(first), budget)
            prob = make(dict(first))
            selection._check_budget(mech, prob, budget)
            mech.check_problem(prob)
            mech.plan(prob, candidate_options(RunOptions(solver=solver),
                                              mech.solver_need(prob) is not SolverNeed.NONE))
    except (DpoptError, ValueError, TypeError):
        return False
    return True


@dataclass(frozen=True)
class _Probe:
    """A stand-in release (θ only) for the pre-charge storage check."""

    theta: np.ndarray


def _adopt(cand: DPEstimatorBase, encoder: DPEstimatorBase) -> None:
    """Give a candidate the public facts the encoding set (classes, feature names, n_features_in_)."""
    for name in _FITTED:
        if hasattr(encoder, name):
            setattr(cand, name, getattr(encoder, name))


def _per_row(noisy: float, scored: Dataset, best: DPEstimatorBase) -> float:
    """A default score per scored row, a regressor's in the label's own units (post-processing)."""
    value = float(noisy) / scored.n
    label_map = best._label_map() if isinstance(best, DPRegressorBase) else None
    return value if label_map is None else value * float(label_map.half_width)


def _settings(params: Mapping[str, Any], est: DPEstimatorBase) -> dict[str, Any]:
    """One expanded grid point as estimator settings: ``mechanism_options__<name>`` values merged
    into the candidate's ``mechanism_options`` (the grid's dict, else the estimator's)."""
    out = {k: v for k, v in params.items() if not k.startswith(_OPTION)}
    keys = {k[len(_OPTION):]: v for k, v in params.items() if k.startswith(_OPTION)}
    if keys or "mechanism_options" in out:
        base = out.get("mechanism_options", est.mechanism_options) or {}
        out["mechanism_options"] = {**dict(base), **keys}
    return out


def _same(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return _key(_record(a)) == _key(_record(b))


def _record(params: Mapping[str, Any]) -> dict[str, Any]:
    """A candidate as PrivateSelection's grid entry: numbers and strings, options flattened."""
    out: dict[str, Any] = {}
    for k, v in params.items():
        if k == "mechanism_options":
            out.update({f"{_OPTION}{name}": _scalar(value) for name, value in sorted(dict(v or {}).items())})
        else:
            out[k] = _scalar(v)
    return out


def _scalar(value: Any) -> Any:
    """A grid value as a number or a string (None, booleans and other objects by their repr)."""
    if isinstance(value, (bool, np.bool_)) or value is None:
        return repr(bool(value) if value is not None else None)
    if isinstance(value, (str, numbers.Real)):
        return value
    return repr(value)


def _show(params: Mapping[str, Any]) -> str:
    return "{" + ", ".join(f"{k}={v!r}" for k, v in params.items() if k != "mechanism_options" or v) + "}"


def _key(params: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted(params.items()))


def _check_name(name: object, known: list[str], owner: str) -> None:
    """Refuse a grid name the estimator does not have, or one the search may not vary."""
    if isinstance(name, str) and name.startswith(_OPTION) and len(name) > len(_OPTION):
        return
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
    if name == "solver":
        raise ModelError(f"param_grid may not vary {name!r}: it is a run option shared by every candidate; set it "
                         f"on the {owner}")


__all__ = ["DPSearchCV", "clipped_absolute_error"]
