"""What every dpopt.sklearn estimator shares: public checks, data encoding, the fit pipeline.

``fit`` runs in the order of dpopt's pipeline (docs/design.md): every check that needs no data
(mechanism name and options, ε, δ, declared bounds, policies, seed) → scikit-learn's input
validation and the per-row encoding (shapes, dtypes, NaN; a refusal here depends on the
input but charges nothing) → the mechanism's own public checks → one charge → the data is
touched → ``release_``.

What is private, and what is not.  The release of a fit (``coef_``, ``intercept_``,
``release_``, predictions made from them) is (ε, δ)-DP.  ``score()`` — and scikit-learn's
``cross_val_score``, ``GridSearchCV``/``RandomizedSearchCV`` scores, ``cv_results_``,
``best_score_`` and ``best_params_`` — evaluates the model on rows of the table *exactly*:
on private data these are non-private statistics that no ε covers.  Each ``fit`` inside such
a search is one charge of (ε, δ) (k-fold cross-validation spends k·ε on the ledger, a grid
of g settings g·k·ε plus the refit) *and* publishes exact fold scores.  To tune privately,
use :class:`dpopt.sklearn.DPSearchCV`, whose whole search is one charge of its (ε, δ) and
whose scores are noisy.  A fit refused because the budget is exhausted warns
(:class:`~dpopt.errors.BudgetWarning`) before it raises: scikit-learn's model selection
would otherwise record NaN scores and carry on; pass it ``error_score="raise"``.
"""

from __future__ import annotations

import difflib
import math
import numbers
import warnings
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, clone
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    check_array,
    check_consistent_length,
    check_is_fitted,
    column_or_1d,
)

from dpopt.errors import (
    BudgetExceededError,
    BudgetWarning,
    DataError,
    LedgerProcessError,
    MechanismError,
    ModelError,
)
from dpopt.mechanisms.base import Mechanism
from dpopt.mechanisms.diagnostics import DiagnosticCounts, WithDiagnostics, split_budget
from dpopt.mechanisms.params import validate_params
from dpopt.mechanisms.release import Release
from dpopt.modeling.changes import row_changes
from dpopt.modeling.dataset import Dataset
from dpopt.modeling.norms import norm_order
from dpopt.modeling.readers import UNKNOWN_LABEL_POLICIES
from dpopt.modeling.rows import class_indices, class_labels, clip_rows, rows_over
from dpopt.modeling.schema import INTERCEPT, UNSEEN_POLICIES, Intercept, LabelMap, Numeric, Schema
from dpopt.privacy.calibration import check_epsilon_delta
from dpopt.privacy.ledger import Ledger
from dpopt.sklearn.diagnostics import declared_counts

try:
    from sklearn.utils.validation import validate_data as _validate
except ImportError:  # scikit-learn < 1.6

    def _validate(estimator: Any, X: Any = "no_validation", y: Any = "no_validation", **kwargs: Any) -> Any:
        return estimator._validate_data(X, y, **kwargs)


def default_delta(n: int) -> float:
    """The default δ of an estimator with ``delta=None``: 1/n² (n ≥ 2), n public under replace-one."""
    return 1.0 / max(int(n), 2) ** 2


def positive_number(value: object, name: str, *, allow_zero: bool = False) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ModelError(f"{name} must be a number, got {value!r}")
    v = float(value)
    if not math.isfinite(v) or v < 0 or (v == 0 and not allow_zero):
        raise ModelError(f"{name} must be a {'non-negative' if allow_zero else 'positive'} finite number, "
                         f"got {value!r}")
    return v


def seed_from(random_state: Any) -> int | None:
    """None (OS entropy) or a reproducible seed from a scikit-learn style ``random_state``.

    Raises
    ------
    ModelError
        For anything but None, an int, a ``RandomState`` or a ``Generator``.
    """
    rs = check_random_state_type(random_state)
    if rs is None:
        return None
    if isinstance(rs, np.random.RandomState):
        return int(rs.randint(2**31 - 1))
    if isinstance(rs, np.random.Generator):
        return int(rs.integers(2**31 - 1))
    return int(rs)


def check_random_state_type(random_state: Any) -> Any:
    """``random_state`` itself when it is None, an int, a ``RandomState`` or a ``Generator``
    (nothing is drawn from it); else :class:`~dpopt.errors.ModelError`."""
    rs = random_state
    if rs is None or isinstance(rs, (np.random.RandomState, np.random.Generator)):
        return rs
    if isinstance(rs, numbers.Integral) and not isinstance(rs, (bool, np.bool_)):
        return rs
    raise ModelError(f"random_state must be None, an int, a RandomState or a Generator, got {rs!r}")


def warn_refused(who: str, exc: BudgetExceededError | LedgerProcessError) -> None:
    """Warn that the ledger refused a fit (before the error propagates; nothing was charged).

    scikit-learn's model selection would otherwise record the refusal as a NaN score: an
    exhausted budget, or an in-memory/default ledger charged from a worker process
    (``n_jobs > 1``, a process pool, Dask), where a :class:`~dpopt.SQLiteLedger` is needed.
    """
    why = ("the ledger's privacy budget is exhausted" if isinstance(exc, BudgetExceededError) else
           "this fit runs in another process than its ledger (pass a dpopt.SQLiteLedger to share a budget "
           "across processes)")
    warnings.warn(f"{who}: {why}, so this fit is refused. Inside scikit-learn's model selection "
                  "(cross_val_score, GridSearchCV, ...) the refusal would otherwise be recorded as a NaN "
                  "score: pass error_score='raise'", BudgetWarning, stacklevel=3)


def _with_unit(bound: float, order: float) -> float:
    """A bound on ‖(x, 1)‖ from a bound on ‖x‖ (the appended intercept)."""
    if order == 1.0:
        return bound + 1.0
    if order == np.inf:
        return max(bound, 1.0)
    return math.hypot(bound, 1.0)


class DPEstimatorBase(BaseEstimator):
    """The shared part of the dpopt.sklearn estimators (see the subclasses for parameters).

    Subclasses set ``_mechanisms`` (name → mechanism class) and implement
    :meth:`_check_settings` and :meth:`_problem`.
    """

    _mechanisms: ClassVar[dict[str, type[Mechanism]]] = {}
    _requires_schema: ClassVar[bool] = False
    #: whether ``mechanism="auto"`` is accepted (the subclass implements :meth:`_auto`)
    _has_auto: ClassVar[bool] = False
    #: the mechanisms the automatic choice picks, as the refusal of a misplaced option names them
    _auto_names: ClassVar[str] = ""
    #: classifiers: coef_ of shape (1, d) and intercept_ of shape (1,), as scikit-learn's
    _coef_2d: ClassVar[bool] = False

    # every subclass defines these constructor parameters
    epsilon: float
    delta: float | None
    mechanism: str
    mechanism_options: Mapping[str, Any] | None
    schema: Schema | None
    fit_intercept: bool
    x_bound: float | None
    x_norm: Any
    unseen: str
    solver: Any
    random_state: Any
    ledger: Ledger | None

    # ---- scikit-learn plumbing -------------------------------------------------------------
    def __sklearn_clone__(self) -> DPEstimatorBase:
        """A clone that shares the ledger: a copy of a ledger would lose the clone's charges."""
        params = self.get_params(deep=False)
        ledger = params.pop("ledger", None)
        return type(self)(**{k: clone(v, safe=False) for k, v in params.items()}, ledger=ledger)

    # ---- public checks (no data) ----------------------------------------------------------
    def _check_public(self) -> dict[str, Any]:
        """Every check that needs no data, once per fit; the mechanism's options.

        The mechanism's name is checked here; the automatic choice is made once, where its
        public facts are known (:meth:`_choice`); a choice kept from an earlier check is dropped.
        """
        self._kept_choice: tuple[Any, tuple[str, str]] | None = None
        name = str(self.mechanism)
        if name not in self._mechanisms and not (name == "auto" and self._has_auto):
            known = ["auto", *self._mechanisms] if self._has_auto else list(self._mechanisms)
            close = difflib.get_close_matches(name, known, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise MechanismError(f"unknown mechanism {self.mechanism!r} for {type(self).__name__}: use one of "
                                 f"{', '.join(map(repr, known))}{hint}")
        options = self.mechanism_options
        if options is not None and not (isinstance(options, Mapping) and all(isinstance(k, str) for k in options)):
            raise ModelError("mechanism_options must be a dict of keyword arguments for the mechanism")
        check_epsilon_delta(self.epsilon, 0.0 if self.delta is None else self.delta)
        if self.ledger is not None and not isinstance(self.ledger, Ledger):
            raise ModelError(f"ledger must be a dpopt Ledger, got {type(self.ledger).__name__}")
        if self.schema is not None and not isinstance(self.schema, Schema):
            raise ModelError(f"schema must be a dpopt Schema, got {type(self.schema).__name__}")
        if self.schema is None and self._requires_schema:
            raise ModelError(f"{type(self).__name__} needs schema=dp.Schema(...): the 0/1-loss oracles "
                             "evaluate margins in exact integers from the declared grids")
        if self.schema is None and self.x_bound is None:
            raise ModelError("declare x_bound (a public bound on the row norm; dpopt never reads it from the "
                             "data) or give a schema")
        if self.x_bound is not None:
            positive_number(self.x_bound, "x_bound")
        norm_order(self.x_norm)
        if not isinstance(self.fit_intercept, (bool, np.bool_)):
            raise ModelError(f"fit_intercept must be True or False, got {self.fit_intercept!r}")
        if self.unseen not in UNSEEN_POLICIES:
            raise ModelError(f"unseen must be one of {UNSEEN_POLICIES}, got {self.unseen!r}")
        check_random_state_type(self.random_state)
        if not isinstance(self.diagnostics, (bool, np.bool_)):
            raise ModelError(f"diagnostics must be True or False, got {self.diagnostics!r}")
        self._check_settings()
        return dict(options or {})

    def _auto(self, data: Dataset | None, epsilon: float, delta: float | None) -> tuple[str, str]:
        """``mechanism="auto"`` (estimators with ``_has_auto``): (the mechanism's name, the rule
        that chose it) from public facts only: the settings and declarations, the run's ε and δ
        (a :class:`~dpopt.sklearn.DPSearchCV` candidate's own) and, when given, the encoded
        table's public shape (``data``; its values are never read)."""
        raise NotImplementedError

    def _choice_facts(self, data: Dataset | None, epsilon: float, delta: float | None) -> tuple[Any, ...]:
        """Every public fact :meth:`_auto` and :meth:`_check_choice` read (subclasses extend it):
        the choice is made once per set of facts."""
        return ()

    def _choice(self, data: Dataset | None = None, epsilon: float | None = None,
                delta: float | None = None) -> tuple[str, str]:
        """The mechanism of this run and why (``"declared"`` or the automatic rule), checked
        against the settings by :meth:`_check_choice`.

        Made once per fit: from :meth:`_check_public` (which drops it) on, the result is kept
        with the public facts it read (:meth:`_choice_facts`), and a later call on the same facts
        (the settings check before the data, then the build after the encoding) returns it.
        New facts — classes read from ``y``, a search candidate's budget — make a new choice.
        """
        eps = float(self.epsilon) if epsilon is None else float(epsilon)
        key = (self.mechanism, self._choice_facts(data, eps, delta))
        kept = getattr(self, "_kept_choice", None)
        if kept is not None and kept[0] == key:
            return kept[1]
        choice = self._auto(data, eps, delta) if self.mechanism == "auto" else (str(self.mechanism), "declared")
        self._check_choice(choice[0])
        self._kept_choice = (key, choice)
        return choice

    def _check_choice(self, name: str) -> None:
        """Checks of the settings against the mechanism a run uses (subclasses)."""

    def _check_settings(self) -> None:
        """Estimator-specific public checks (subclasses)."""

    def _seed(self) -> int | None:
        """None (OS entropy) or a reproducible seed from ``random_state``."""
        return seed_from(self.random_state)

    # ---- data -------------------------------------------------------------------------------
    @property
    def _schema(self) -> Schema:
        """The schema the estimator encodes with: the declared one with its numeric columns scaled
        onto [0, 1] by their declared bounds (:meth:`Schema.unit_scaled`), plus its intercept."""
        assert self.schema is not None
        scaled = self.schema.unit_scaled()
        return scaled.with_intercept() if self.fit_intercept else scaled

    def _row_bound(self) -> float:
        """The declared bound on the norm of a design row (intercept included)."""
        order = norm_order(self.x_norm)
        if self.schema is not None:
            return float(self.x_bound) if self.x_bound is not None else self._schema.row_norm_bound(order)
        assert self.x_bound is not None
        bound = float(self.x_bound)
        return _with_unit(bound, order) if self.fit_intercept else bound

    def _table(self, X: Any) -> Any:
        """X as a DataFrame with the schema's columns (a DataFrame, a mapping, or a raw array)."""
        import pandas as pd

        if hasattr(X, "columns"):
            return X
        if isinstance(X, Mapping):
            return pd.DataFrame(dict(X))
        read = [name for name, spec in self._schema.columns if not isinstance(spec, Intercept)]
        arr = np.asarray(X, dtype=object)
        if arr.ndim != 2 or arr.shape[1] != len(read):
            raise DataError(f"X must be a table with the schema's columns or an array of shape (n, {len(read)}) "
                            f"holding them in order, got shape {arr.shape}")
        return pd.DataFrame({name: arr[:, j] for j, name in enumerate(read)})

    def _features(self, X: Any, *, reset: bool) -> Any:
        """scikit-learn's validation of X (n_features_in_, feature_names_in_)."""
        if self.schema is None:
            return _validate(self, X, reset=reset, dtype=np.float64)
        _validate(self, X, reset=reset, skip_check_array=True)
        return self._table(X)

    def _design(self, features: Any, *, mapped: bool = True) -> np.ndarray:
        """The design matrix: rows mapped onto the declarations (schema or x_bound), intercept included.

        Rows are clipped once: without a schema to ``x_bound`` before the constant-1 column is
        appended, which keeps ‖(x, 1)‖ within the declared row bound (:func:`_with_unit`).  With a
        schema and ``mapped=False``, the encoded rows as read, which the :class:`Dataset` then maps
        onto the schema and clips to the same row bound (marking what it changed).
        """
        if self.schema is not None:
            encoded = self._schema.encode(features, unseen=self.unseen, mapped=mapped)
            return clip_rows(encoded, self._row_bound(), self.x_norm) if mapped else encoded
        assert self.x_bound is not None
        D = clip_rows(np.asarray(features, dtype=np.float64), float(self.x_bound), self.x_norm)
        return np.hstack([D, np.ones((D.shape[0], 1))]) if self.fit_intercept else D

    def _names(self) -> tuple[str, ...]:
        """Public names of the design's columns (empty when the input had none)."""
        if self.schema is not None:
            return tuple(self._schema.feature_names)
        names = getattr(self, "feature_names_in_", None)
        if names is None:  # x0, x1, …: the appended column is still named (mechanisms read it as the intercept)
            if not self.fit_intercept or not hasattr(self, "n_features_in_"):
                return ()
            names = [f"x{j}" for j in range(self.n_features_in_)]
        return (*map(str, names), *((INTERCEPT,) if self.fit_intercept else ()))

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """The names of ``coef_``'s columns: the design's features without the intercept.

        With a schema these are its encoded names (one per one-hot category, ``<name>_missing``
        indicators, ...), so ``coef_`` and its names line up even where ``feature_names_in_``
        (the raw table's columns) is shorter; without one, ``feature_names_in_`` or ``x0``, ``x1``, ….
        """
        check_is_fitted(self, "release_")
        names = list(self._names())
        at = self._intercept_index()
        if names and at is not None:
            del names[at]
        if not names:
            width = self.coef_.shape[-1]
            names = [f"x{j}" for j in range(width)]
        return np.asarray(names, dtype=object)

    def _intercept_index(self) -> int | None:
        if self.schema is not None:
            start = 0
            for _, spec in self._schema.columns:
                if isinstance(spec, Intercept):
                    return start
                start += spec.width
            return None
        return -1 if self.fit_intercept else None

    def _dataset(self, D: np.ndarray, y: np.ndarray, y_bound: float | None) -> Dataset:
        if self.schema is not None:
            bound: dict[str, Any] = {} if self.x_bound is None else {"x_bound": float(self.x_bound)}
            return Dataset(D, y, x_norm=self.x_norm, y_bound=y_bound, schema=self._schema, **bound)
        return Dataset(D, y, x_bound=self._row_bound(), x_norm=self.x_norm, y_bound=y_bound,
                       feature_names=self._names())

    # ---- the fit pipeline -------------------------------------------------------------------
    def _targets(self, y: Any, n: int) -> tuple[np.ndarray, float | None]:
        """Labels for the loss and the declared |y| bound (subclasses)."""
        raise NotImplementedError

    def _problem(self, data: Dataset) -> Any:
        """The dpopt problem on ``data`` (subclasses)."""
        raise NotImplementedError

    def fit(self, X: Any, y: Any) -> DPEstimatorBase:
        """Fit privately: one release, charged once to the ledger with (ε, δ).

        Unless ``diagnostics=False``, 2 % of ε goes to private diagnostics
        (:mod:`dpopt.sklearn.diagnostics`): noisy counts of what the declarations did to the
        table (unmatched or missing labels, clipped rows and entries, unseen categories), in
        ``release_.parameters["noisy_diagnostic_counts"]`` and ``release_.summary()``, with one
        :class:`~dpopt.errors.DiagnosticsWarning` when a count is clearly large.  The model gets
        the other 98 % (all of ε with ``diagnostics=False``).

        Parameters
        ----------
        X : array of shape (n, d), or a table when a ``schema`` is given
            Without a schema, numeric features (rows are clipped to ``x_bound``).  With one,
            a DataFrame (or mapping, or an array holding the declared columns in order) of
            raw values, encoded through the schema.
        y : array of shape (n,)
            Labels (classifiers) or targets (regressors).

        Returns
        -------
        self

        Raises
        ------
        MechanismError, PrivacyParameterError, ModelError
            Bad settings, before the data is read and before any charge.
        DataError, ValueError
            Input that scikit-learn's validation or the encoding refuses (a wrong shape,
            NaN, ...), before any charge.
        """
        self._classes_read = 0  # a previous fit's label set decides nothing for this one
        options = self._check_public()  # the settings check of this fit (the options: in _build, once)
        data = self._encode(X, y)
        query, wording = declared_counts(self, y, data)  # private diagnostics (dpopt.sklearn.diagnostics)
        diagnosed = bool(query.names) and self.diagnostics
        model_epsilon, counts_epsilon = split_budget(float(self.epsilon)) if diagnosed else (None, 0.0)
        mechanism, problem, (self.mechanism_, self.mechanism_rule_) = self._build(data, options,
                                                                                  epsilon=model_epsilon)
        if diagnosed:
            # built from checked values (a share of the checked ε, the mechanism above)
            mechanism = WithDiagnostics.prevalidated(mechanism, DiagnosticCounts.prevalidated(counts_epsilon), query,
                                                     wording=wording, owner=type(self).__name__)
        try:  # the estimator's own counts (or none): not the run's of the encoded dataset
            release = mechanism.run(problem, solver=self.solver, seed=self._seed(), diagnostics=False)
        except (BudgetExceededError, LedgerProcessError) as exc:  # refused at the ledger, before the charge
            warn_refused(type(self).__name__, exc)
            raise
        self._store(release)
        return self

    def _encode(self, X: Any, y: Any) -> Dataset:
        """scikit-learn's input validation and the per-row encoding onto the declarations.

        Sets ``n_features_in_`` (and ``feature_names_in_``, ``classes_``); a refusal here
        depends on the input's shape and types, never on its values, and charges nothing.
        """
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None")
        features = self._features(X, reset=True)
        D = self._design(features, mapped=False)  # with a schema, the dataset maps the rows and marks what changed
        yv, y_bound = self._targets(y, D.shape[0])
        data = self._dataset(D, yv, y_bound)
        if self.schema is None:  # the design clipped the rows before the intercept: it marks them
            assert self.x_bound is not None
            data.mark(row_changes(rows_over(np.asarray(features, dtype=np.float64), float(self.x_bound), self.x_norm)))
        return data

    def _mechanism_and_problem(self, data: Dataset, *, epsilon: float | None = None, delta: float | None = None,
                               ledger: Ledger | None = None) -> tuple[Mechanism, Any]:
        """The mechanism this estimator's settings build, and its problem on ``data``, for an
        estimator whose settings :meth:`_check_public` has accepted (:meth:`_build`)."""
        mechanism, problem, _ = self._build(data, dict(self.mechanism_options or {}), epsilon=epsilon, delta=delta,
                                            ledger=ledger)
        return mechanism, problem

    def _build(self, data: Dataset, options: dict[str, Any], *, epsilon: float | None = None,
               delta: float | None = None, ledger: Ledger | None = None) -> tuple[Mechanism, Any, tuple[str, str]]:
        """The mechanism, its problem on ``data`` and the choice (name, rule), built once per run.

        Public facts only (the settings, n, d): nothing is charged and no data value is read.
        The settings :meth:`_check_public` has accepted are not checked again; δ and the
        options are checked here against the chosen mechanism's ``_parameter_constraints``,
        and the mechanism is built without a second check (:meth:`Mechanism.prevalidated`).

        Parameters
        ----------
        data : Dataset
            The encoded table (:meth:`_encode`).
        options : dict
            The mechanism's options (:meth:`_check_public`).
        epsilon, delta : float, optional
            Override the estimator's budget (:class:`~dpopt.sklearn.DPSearchCV` builds every
            candidate with the per-candidate budget); default the estimator's (δ None: 1/n²).
        ledger : Ledger, optional
            Override the estimator's ledger.

        Returns
        -------
        (Mechanism, Problem, (str, str))
        """
        eps = float(self.epsilon) if epsilon is None else float(epsilon)
        dlt = float(delta) if delta is not None else (default_delta(data.n) if self.delta is None
                                                      else float(self.delta))
        name, rule = self._choice(data, eps, dlt)
        cls = self._mechanisms[name]
        # ε and the ledger were checked by _check_public; δ (its range per mechanism) and the options
        # are checked here, once, against the mechanism's constraints, and the build assumes them
        declared = {k: v for k, v in {"delta": dlt, **options}.items() if k in cls._parameter_constraints}
        validate_params(cls.name, cls._parameter_constraints, declared)
        try:
            mechanism = cls.prevalidated(eps, dlt, ledger=self.ledger if ledger is None else ledger, **options)
        except TypeError as exc:  # an option of the other mechanism (before any charge)
            if self.mechanism != "auto" or "unexpected keyword argument" not in str(exc):
                raise
            raise MechanismError(f"mechanism_options {sorted(options)} do not apply to {name!r}, which "
                                 f"mechanism='auto' chose from this run's public facts; name the mechanism they are for "
                                 f"({self._auto_names})") from None
        return mechanism, self._problem(data), (name, rule)

    def _outputs(self) -> int:
        """k, the number of linear outputs of the fitted model (1 but for multinomial models)."""
        return 1

    def _store(self, release: Release) -> None:
        theta = np.asarray(release.theta, dtype=np.float64)
        k = self._outputs()
        at = self._intercept_index()
        self.release_ = release
        if k > 1:  # Θ is d×k, flattened row-major: coef_ is (k, d − 1) as scikit-learn's
            matrix = theta.reshape(-1, k)
            self._theta = matrix
            self.coef_ = (matrix if at is None else np.delete(matrix, at, axis=0)).T.copy()
            self.intercept_: Any = np.zeros(k) if at is None else matrix[at].copy()
            return
        coef, intercept = (theta, 0.0) if at is None else (np.delete(theta, at), float(theta[at]))
        self._theta = theta
        self.coef_ = coef[None, :] if self._coef_2d else coef
        self.intercept_ = np.array([intercept]) if self._coef_2d else intercept

    def _linear(self, X: Any) -> np.ndarray:
        """⟨θ, x⟩ of every row, or Θᵀx (n×k) for a multinomial model (rows mapped onto the
        declarations, intercept included)."""
        check_is_fitted(self, "release_")
        return np.asarray(self._design(self._features(X, reset=False)) @ self._theta)


class DPClassifierBase(ClassifierMixin, DPEstimatorBase):
    """Classifiers: declared ``classes=[negative, positive]`` map to −1/+1; k ≥ 3 declared classes
    map to the indices 0, …, k − 1 of a multinomial model (a d×k Θ)."""

    classes: Any
    unknown_label: str
    _coef_2d = True

    def _declared_classes(self) -> list[Any] | None:
        """The declared classes as a list (None when undeclared)."""
        if self.classes is None:
            return None
        return list(self.classes) if not isinstance(self.classes, (str, bytes)) else []

    def _check_classes(self) -> None:
        if self.unknown_label not in UNKNOWN_LABEL_POLICIES:
            raise ModelError(f"unknown_label must be one of {UNKNOWN_LABEL_POLICIES}, got {self.unknown_label!r}")
        cls = self._declared_classes()
        if cls is not None and (len(cls) < 2 or len({repr(c) for c in cls}) != len(cls)):
            raise ModelError("classes must be at least two distinct values: [negative, positive], or the k "
                             "class labels of a multi-class model")

    def _outputs(self) -> int:
        k = len(getattr(self, "classes_", ()))
        return k if k > 2 else 1

    def _class_count(self) -> int:
        """k: the declared classes, else those read from y by this fit's encoding (0 before it)."""
        declared = self._declared_classes()
        return len(declared) if declared is not None else int(getattr(self, "_classes_read", 0))

    def _targets(self, y: Any, n: int) -> tuple[np.ndarray, float | None]:
        y = column_or_1d(y, warn=True)
        check_consistent_length(np.empty(n), y)
        declared = self._declared_classes()
        if declared is not None:
            self.classes_ = np.asarray(declared)
            if len(declared) == 2:
                return class_labels(y, (self.classes_[0], self.classes_[1]), None, self.unknown_label), 1.0
            return class_indices(y, self.classes_, self.unknown_label), None  # indices: no |y| bound to clip to
        warnings.warn(f"{type(self).__name__}: classes were read from y, so the label set is not private; "
                      "declare classes=[...] (all the class labels) for a private fit", UserWarning, stacklevel=3)
        check_classification_targets(y)
        check_array(y, ensure_2d=False, dtype=None, input_name="y")  # NaN / inf in numeric labels
        found = np.unique(y)
        if found.size < 2:
            raise ValueError(f"{type(self).__name__} needs at least two classes in y, found {found.size} class; "
                             "declare classes=[...]")
        self.classes_ = found
        self._classes_read = found.size
        if found.size == 2:
            return np.where(y == found[1], 1.0, -1.0), 1.0
        return np.searchsorted(found, y).astype(np.float64), None

    def decision_function(self, X: Any) -> np.ndarray:
        """⟨θ, x⟩ of every row (positive values predict ``classes_[1]``), or the k class scores
        Θᵀx of a multinomial model, shape (n, k) (rows mapped onto the declarations, intercept
        included)."""
        return self._linear(X)

    def predict(self, X: Any) -> np.ndarray:
        """The class of the largest score (binary: the positive class where ⟨θ, x⟩ > 0)."""
        scores = self.decision_function(X)
        if scores.ndim == 2:
            return self.classes_[np.argmax(scores, axis=1)]
        return self.classes_[(scores > 0).astype(int)]

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = True
        tags.classifier_tags.poor_score = True  # private noise: accuracy thresholds do not apply
        return tags

    def _more_tags(self) -> dict[str, Any]:  # scikit-learn < 1.6
        return {"poor_score": True}


class DPRegressorBase(RegressorMixin, DPEstimatorBase):
    """Regressors: targets clipped to the declared ``y_bound``, or declared in their own units
    with ``label_spec=dp.Numeric(low, high, ...)`` (mapped onto [−1, 1] by that declaration,
    fitted there, and predicted back in the table's units).  Predictions are clipped to the
    declared label range; ``coef_`` and ``intercept_`` are per unit of each raw column (a
    schema's numeric columns are fitted scaled onto [0, 1] by their declared bounds, and the
    scaling is undone), in the label's units; ``coef_scaled_`` and ``intercept_scaled_`` are
    per unit of the scaled columns."""

    y_bound: float | None
    label_spec: Numeric | None

    def _label_map(self) -> LabelMap | None:
        """The public map of a label declared in its own units (None: ``y_bound`` only)."""
        spec = getattr(self, "label_spec", None)
        return None if spec is None else LabelMap("y", spec)

    def _targets(self, y: Any, n: int) -> tuple[np.ndarray, float | None]:
        y = column_or_1d(y, warn=True)
        check_consistent_length(np.empty(n), y)
        label_map = self._label_map()
        if label_map is not None:
            return label_map.map_labels(y), 1.0
        y = check_array(y, ensure_2d=False, dtype=np.float64, input_name="y")
        return y, float(self.y_bound) if self.y_bound is not None else None

    def _check_y_bound(self) -> None:
        spec = getattr(self, "label_spec", None)
        if spec is not None:
            if self.y_bound is not None:
                raise ModelError("declare the label once: y_bound (|y| ≤ y_bound) or label_spec=dp.Numeric(low, high), "
                                 "not both")
            LabelMap("y", spec)  # a Numeric declaration, or a one-line refusal
            return
        if self.y_bound is None:
            raise ModelError("declare y_bound (a public bound on |y|; targets beyond it are clipped) or "
                             "label_spec=dp.Numeric(low, high) (a label in its own units)")
        positive_number(self.y_bound, "y_bound")

    def _store(self, release: Release) -> None:
        """coef_ and intercept_ per unit of each raw column and in the label's units (post-processing);
        ``coef_scaled_``/``intercept_scaled_`` keep them per unit of the design's scaled columns."""
        super()._store(release)
        label_map = self._label_map()
        if label_map is not None:  # in the label's units
            self.coef_, self.intercept_ = label_map.linear_from_unit(self.coef_, float(self.intercept_))
        self.coef_scaled_ = np.array(self.coef_, dtype=np.float64)
        self.intercept_scaled_ = float(self.intercept_)
        width, low = self._column_scales()
        self.coef_ = self.coef_scaled_ / width  # a schema's numeric column enters X as (x − low)/width
        self.intercept_ = self.intercept_scaled_ - float(np.sum(self.coef_scaled_ * low / width))

    def _column_scales(self) -> tuple[np.ndarray, np.ndarray]:
        """Per column of ``coef_``: (high − low, low) of a numeric column the schema scales onto
        [0, 1] by its declared bounds, (1, 0) for every other column (declarations only)."""
        at = self._intercept_index()
        if self.schema is None:
            d = self.coef_.shape[-1]
            return np.ones(d), np.zeros(d)
        width: list[float] = []
        low: list[float] = []
        for _, spec in self._schema.columns:
            scaled = isinstance(spec, Numeric) and spec.unit
            for k in range(spec.width):  # a missing indicator (k = 1) is not scaled
                width.append(float(spec.high - spec.low) if scaled and k == 0 else 1.0)  # type: ignore[union-attr]
                low.append(float(spec.low) if scaled and k == 0 else 0.0)  # type: ignore[union-attr]
        w, lo = np.asarray(width), np.asarray(low)
        return (w, lo) if at is None else (np.delete(w, at), np.delete(lo, at))

    def label_range(self) -> tuple[float, float]:
        """The declared range of the label in its own units: ``[low, high]`` of ``label_spec``,
        else ``[−y_bound, y_bound]`` (public; predictions are clipped to it)."""
        label_map = self._label_map()
        if label_map is not None:
            return label_map.low, label_map.high
        bound = float(self.y_bound)  # type: ignore[arg-type]  # _check_y_bound requires one of the two
        return -bound, bound

    def predict(self, X: Any) -> np.ndarray:
        """⟨θ, x⟩ of every row (rows mapped onto the declarations, intercept included), in the
        label's own units when it was declared with ``label_spec``, clipped to the declared label
        range (:meth:`label_range`; post-processing: every target the fit saw was in it)."""
        z = self._linear(X)
        label_map = self._label_map()
        low, high = self.label_range()
        return np.clip(z if label_map is None else label_map.from_unit(z), low, high)

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.regressor_tags.poor_score = True  # private noise: R² thresholds do not apply
        return tags

    def _more_tags(self) -> dict[str, Any]:  # scikit-learn < 1.6
        return {"poor_score": True}

