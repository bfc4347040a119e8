"""Private linear models as scikit-learn estimators: logistic regression, ridge, LASSO.

Each ``fit`` builds a :class:`~dpopt.modeling.problem.Problem` from public declarations
(``x_bound`` or a ``schema``, ``y_bound``, the constraint radius, the regularization weight)
and runs one dpopt mechanism on it; the release is ``release_``.  The objective is the
*average* loss (1/n) Σ ℓ(⟨θ, xᵢ⟩, yᵢ) + (α/2)‖θ‖², over a ball of the given radius; the
intercept, when fitted, is a constant-1 column (it is regularized and constrained like
every other coefficient, and the row bound counts it).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from scipy.special import expit, softmax
from sklearn.base import clone
from sklearn.utils.metaestimators import available_if

from dpopt.errors import MechanismError, ModelError
from dpopt.mechanisms.adassp import AdaSSP, intercept_column, mean_share, ridge_scale
from dpopt.mechanisms.base import Mechanism
from dpopt.mechanisms.gradient_descent import DPSGD, DPGradientDescent
from dpopt.mechanisms.mirror_descent import PrivateMirrorDescent
from dpopt.mechanisms.objective_perturbation import ObjectivePerturbation
from dpopt.mechanisms.output_perturbation import OutputPerturbation
from dpopt.mechanisms.polytope_frank_wolfe import PolytopeFrankWolfe
from dpopt.modeling.balls import L1Ball, L2Ball
from dpopt.modeling.dataset import Dataset
from dpopt.modeling.losses import (
    LogisticLoss,
    Loss,
    MultinomialLogisticLoss,
    SmoothedHingeLoss,
    SquaredLoss,
)
from dpopt.modeling.problem import Problem
from dpopt.modeling.regularizers import L2Squared
from dpopt.modeling.schema import Numeric, Schema
from dpopt.modeling.variable import Variable
from dpopt.privacy.ledger import Ledger
from dpopt.privacy.zcdp import zcdp_rho
from dpopt.sklearn._base import DPClassifierBase, DPRegressorBase, default_delta, positive_number
from dpopt.sklearn.coefficients import (
    check_coefficient_settings,
    coefficient_constraints,
    positive_l1_polytope,
)
from dpopt.sklearn.multiclass import DPOneVsRestClassifier

#: mechanisms of the ℓ2 models (logistic regression, ridge), by their estimator names
CONVEX_MECHANISMS: dict[str, type[Mechanism]] = {
    "objective-perturbation": ObjectivePerturbation,
    "output-perturbation": OutputPerturbation,
    "dp-gd": DPGradientDescent,
    "dp-sgd": DPSGD,
}
LOSSES: dict[str, type[Loss]] = {"logistic": LogisticLoss, "smoothed-hinge": SmoothedHingeLoss}


#: DPRidge's default ℓ2 radius in units of the declared label bound Y (10 with label_spec)
RIDGE_RADIUS = 10.0
#: the threshold of :func:`regression_rule` on n·√ρ/(d·B) (docs/choosing.md, "Regression")
REGRESSION_THRESHOLD = 20.0


def regression_rule(n: int, d: int, bound: float, epsilon: float, delta: float) -> tuple[str, str]:
    """AdaSSP or preconditioned DP-GD for a ridge fit, from public facts only.

    The statistic is s = n·√ρ/(d·B): ρ = zcdp_rho(ε, δ) (the run's budget as zCDP), d the
    design's columns (intercept included) and B its declared ℓ2 row bound.  AdaSSP's noisy
    XᵀX has entries of scale B²/√ρ against a signal growing with n; DP-GD's noisy steps pay
    about √d·B/(n√ρ) per step but adapt their clipping to the residuals, and win once s is
    large.  DP-GD when s ≥ :data:`REGRESSION_THRESHOLD`, else AdaSSP.  The threshold was fixed
    on tables that none of the reported benchmarks use (``dpopt bench regression-rule``: Adult
    with age as the label, ``make_friedman1``/``make_friedman2`` and four ``make_regression``
    tables; docs/choosing.md), where DP-GD collapses well below R² = 0 under it and AdaSSP
    trails it above it; it was checked again there with AdaSSP's n·ε rules.

    Parameters
    ----------
    n, d : int
        Rows and design columns.
    bound : float
        The declared ℓ2 bound of a design row.
    epsilon, delta : float
        The run's budget (δ > 0).

    Returns
    -------
    (str, str)
        The mechanism's estimator name and the rule as a sentence (``mechanism_rule_``).
    """
    score = n * math.sqrt(zcdp_rho(epsilon, delta)) / (d * bound)
    if score >= REGRESSION_THRESHOLD:
        return "dp-gd", (f"linear regression with n·√ρ/(d·B) = {score:.3g} ≥ {REGRESSION_THRESHOLD:g}: DP-GD "
                         "(private preconditioner, adaptive clipping)")
    return "adassp", (f"linear regression with n·√ρ/(d·B) = {score:.3g} < {REGRESSION_THRESHOLD:g}: AdaSSP "
                      "(sufficient statistics, a private ridge)")


def lasso_radius(data: Dataset) -> float:
    """The default ℓ1 radius of :class:`DPLasso`: Y/B∞, from declarations only.

    Y is the declared label bound in the units the model is fitted in (1 for a label declared
    with ``label_spec``, else ``y_bound``) and B∞ the declared bound on ‖x‖∞ of a design row
    (intercept included).  Since |⟨θ, x⟩| ≤ ‖θ‖₁‖x‖∞, it is the smallest ball whose models can
    predict anywhere in the declared label range [−Y, Y] on a row at the bound; the private
    Frank–Wolfe's noise grows with the radius, so a larger default costs accuracy where the
    label fits (measured on the two regression tables of ``dpopt bench tables``, radius 2Y/B∞
    lost 0.02–0.2 R² at ε ∈ [0.5, 2]), while a constant radius ignores the label's scale
    (``y_bound=50`` with radius 1 cannot predict beyond ±B∞).

    Parameters
    ----------
    data : Dataset
        The encoded table (its declarations are read, never its values).

    Returns
    -------
    float
    """
    return float(data.y_bound) / float(data.x_bound_in("inf"))  # type: ignore[arg-type]  # regressors declare Y


def _l2_problem(loss: Loss, theta: Variable, radius: float | None, alpha: float, coefs: Sequence[Any] = ()) -> Problem:
    """The ℓ2 model's problem; ``coefs``: the ``positive``/``bounds`` constraints on the coefficients."""
    ball = [] if radius is None else [L2Ball(theta, radius)]
    constraint: Any = [*ball, *coefs] or None  # a list means the intersection (Problem folds it)
    return Problem(loss, constraint=constraint, regularizer=L2Squared(theta, alpha) if alpha > 0 else ())


def _check_radius_alpha(radius: object, alpha: object) -> None:
    if radius is not None:
        positive_number(radius, "radius")
    positive_number(alpha, "alpha", allow_zero=True)


class DPLogisticRegression(DPClassifierBase):
    """Differentially private logistic regression, binary or over k ≥ 3 classes (or a binary
    smoothed-hinge SVM).

    Minimizes (1/n) Σ ℓ(yᵢ⟨θ, xᵢ⟩) + (α/2)‖θ‖² over ‖θ‖₂ ≤ ``radius`` with one dpopt mechanism;
    with k ≥ 3 classes ℓ is the multinomial logistic loss of a d×k Θ
    (:class:`dpopt.MultinomialLogisticLoss`).

    Parameters
    ----------
    epsilon : float, default 1.0
        ε > 0 of the fit.
    delta : float or None, default None
        δ ∈ [0, 1); None: 1/n² (n, the number of rows, is public under replace-one).
        ``"dp-gd"`` and ``"dp-sgd"`` need δ > 0.
    mechanism : {"auto", "objective-perturbation", "output-perturbation", "dp-gd", "dp-sgd", "one-vs-rest"}
        The private algorithm (:class:`dpopt.ObjectivePerturbation`, ...).  ``"auto"`` (default)
        chooses from public facts (``mechanism_``, ``mechanism_rule_``; docs/choosing.md):
        DP-GD, or objective perturbation for δ = 0 or a named solver.  ``"output-perturbation"``
        needs ``alpha > 0``.  k ≥ 3 classes: ``"dp-gd"``, ``"dp-sgd"`` (one multinomial model) or
        ``"one-vs-rest"`` (k objective-perturbation fits of ε/k, declared classes only).
    loss : {"logistic", "smoothed-hinge"}
    alpha : float, default 0.0
        Weight of (α/2)‖θ‖² (the intercept included).
    radius : float or None, default 10.0
        ℓ2 radius of the constraint set (None: unconstrained).
    fit_intercept : bool, default True
        Append a constant-1 column (counted by the row bound).
    x_bound : float, optional
        Declared bound on the ``x_norm``-norm of a row, without the intercept (rows are clipped
        to it).  Required without a schema; with one, the schema's bound is the default.
    x_norm : {1, 2, "inf"}, default 2
    schema : dpopt.Schema, optional
        The public declaration of the columns; ``fit`` then takes the raw table.
    classes : sequence of k ≥ 2 values, optional
        ``[negative, positive]``, or the k class labels of a multi-class model.  Without it, the
        classes are read from ``y`` (with a warning: the label set is then not private).
    unknown_label : {"negative", "error"}, default "negative"
        A label outside the declared classes: the negative class (private) or an error
        (checks your data; not private).
    unseen : {"zero", "error"}, default "zero"
        A categorical value outside the schema's categories (see :meth:`dpopt.Schema.encode`).
    solver : str, default "auto"
        The accelerator of the convex mechanisms (``dpopt doctor`` lists them).
    random_state : None, int, RandomState or Generator
        None: noise from OS entropy (secure).  Otherwise reproducible noise (not secure).
    ledger : dpopt.Ledger, optional
        Charged once per fit (default :func:`dpopt.default_ledger`); shared by clones.
    mechanism_options : dict, optional
        More keyword arguments for the mechanism (e.g. ``{"steps": 200}`` for ``"dp-gd"``).
    diagnostics : bool, default True
        Spend 2 % of ε on noisy counts of what the declarations did to the table (labels that
        matched no class, clipped rows and entries, ...), shown in ``release_.summary()`` with one
        warning when a count is clearly large; False: nothing is counted, the model gets all of ε.
    positive : bool, default False
        Non-negative coefficients, as scikit-learn's ``positive=True``; the intercept stays free.
    bounds : (low, high), optional
        A box per coefficient in ``coef_``'s units (numbers or one entry per coefficient,
        ``-np.inf``/``np.inf`` for an open side); the intercept is never bounded.  With
        ``positive`` and ``radius`` they form one constraint list (:mod:`dpopt.sklearn.coefficients`).

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_coefficients), or (k, n_coefficients) for k ≥ 3 classes
        Named by :meth:`get_feature_names_out`; with a schema, per unit of each numeric column
        scaled onto [0, 1] by its declared bounds (the regressors' ``coef_`` is per raw unit).
    intercept_ : ndarray of shape (1,) or (k,)
    classes_ : ndarray of shape (2,) or (k,)
        ``[negative, positive]``, or the k classes.
    mechanism_, mechanism_rule_ : str
        The mechanism the fit used and why (``"declared"``, or the automatic rule).
    release_ : dpopt.Release
        The release of the fit (θ, guarantee, public parameters, feature names).
    n_features_in_, feature_names_in_
        As in scikit-learn.

    Notes
    -----
    Only the release is private.  ``score()``, and scikit-learn's ``cross_val_score`` and
    ``GridSearchCV`` scores on private rows, are exact, non-private statistics; each ``fit``
    they run is one more charge of (ε, δ) (k-fold cross-validation: k·ε on the ledger, *and*
    exact fold scores no ε covers).  Tune with :class:`~dpopt.sklearn.DPSearchCV` (one charge,
    noisy scores).  A fit refused for budget warns (:class:`~dpopt.errors.BudgetWarning`):
    give scikit-learn's model selection ``error_score="raise"``.
    """

    #: "one-vs-rest": k binary objective-perturbation fits of ε/k (declared classes only)
    _mechanisms: ClassVar[dict[str, type[Mechanism]]] = {**CONVEX_MECHANISMS, "one-vs-rest": ObjectivePerturbation}
    _has_auto = True
    _auto_names = "mechanism='dp-gd' or 'objective-perturbation'"

    def __init__(self, epsilon: float = 1.0, delta: float | None = None, *,
                 mechanism: str = "auto", loss: str = "logistic", alpha: float = 0.0,
                 radius: float | None = 10.0, fit_intercept: bool = True, x_bound: float | None = None,
                 x_norm: Any = 2, schema: Schema | None = None, classes: Any = None,
                 unknown_label: str = "negative", unseen: str = "zero", solver: Any = "auto",
                 random_state: Any = None, ledger: Ledger | None = None,
                 mechanism_options: dict[str, Any] | None = None, diagnostics: bool = True, positive: bool = False,
                 bounds: Any = None) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.mechanism = mechanism
        self.loss = loss
        self.alpha = alpha
        self.radius = radius
        self.fit_intercept = fit_intercept
        self.x_bound = x_bound
        self.x_norm = x_norm
        self.schema = schema
        self.classes = classes
        self.unknown_label = unknown_label
        self.unseen = unseen
        self.solver = solver
        self.random_state = random_state
        self.ledger = ledger
        self.mechanism_options = mechanism_options
        self.diagnostics = diagnostics
        self.positive = positive
        self.bounds = bounds

    def _check_settings(self) -> None:
        if self.loss not in LOSSES:
            raise ModelError(f"unknown loss {self.loss!r}: use one of {', '.join(map(repr, LOSSES))}")
        _check_radius_alpha(self.radius, self.alpha)
        check_coefficient_settings(self.positive, self.bounds)
        self._check_classes()
        if self.mechanism == "one-vs-rest" and self._declared_classes() is None:
            raise ModelError("mechanism='one-vs-rest' splits the budget over the classes: declare classes=[...]")
        if self._class_count() > 0:  # k known (declared): the choice is checked before the data; classes
            self._choice()  # read from y are known after the encoding, where the build makes the choice

    def _zero_delta(self, delta: float | None) -> bool:
        """Whether the run's δ (``delta``, else the declared one; None: 1/n² > 0) is 0."""
        run_delta = delta if delta is not None else self.delta
        return run_delta is not None and float(run_delta) == 0.0

    def _choice_facts(self, data: Dataset | None, epsilon: float, delta: float | None) -> tuple[Any, ...]:
        return (self._class_count(), self._zero_delta(delta), self._zero_delta(None), self.solver != "auto",
                self.loss, self._declared_classes() is None)

    def _check_choice(self, name: str) -> None:
        """The checks that read k and the mechanism (before the data when k is declared, else
        after the encoding has read the classes from ``y``)."""
        k = self._class_count()
        if k > 2 and self.loss != "logistic":
            if self._declared_classes() is None:  # read from y: scikit-learn's wording for a binary-only estimator
                raise ValueError(f"Only binary classification is supported with loss={self.loss!r}. The type of the "
                                 "target is multiclass; use loss='logistic' (the multinomial logistic loss)")
            raise ModelError(f"{k} classes need loss='logistic' (the multinomial logistic loss); "
                             f"{self.loss!r} is binary")
        if k > 2 and name in ("dp-gd", "dp-sgd") and self.delta is not None and float(self.delta) == 0.0:
            raise MechanismError(f"δ = 0 with {k} classes: the multinomial model ({name!r}) needs δ > 0; use "
                                 "mechanism='one-vs-rest' (k objective-perturbation fits of ε/k, pure ε-DP) or "
                                 "give delta > 0")
        cls = self._mechanisms[name]
        if k > 2 and not cls.multi_output and name != "one-vs-rest":
            able = [name for name, c in self._mechanisms.items() if c.multi_output]
            raise MechanismError(f"mechanism {self.mechanism!r} fits binary models only; {k} classes need "
                                 f"one of {', '.join(map(repr, able))} (or mechanism='auto'), or "
                                 "dpopt.sklearn.DPOneVsRestClassifier (one binary fit per class)")

    def _auto(self, data: Dataset | None, epsilon: float, delta: float | None) -> tuple[str, str]:
        """The mechanism of ``mechanism="auto"`` from public facts (classes, δ, solver; see
        docs/choosing.md for the measurements behind the rule)."""
        k = self._class_count()
        if k > 2:
            return "dp-gd", (f"{k} classes: the multinomial loss by DP-GD, one charge (one-vs-rest with independent "
                             "noise per class was far less accurate wherever measured)")
        if self._zero_delta(delta):
            return "objective-perturbation", "δ = 0: pure ε-DP, objective perturbation (DP-GD needs δ > 0)"
        if self.solver != "auto":
            return "objective-perturbation", "an explicit solver: objective perturbation, the mechanism that calls one"
        return "dp-gd", ("binary classification: DP-GD (private preconditioner, adaptive clipping) is the most "
                         "accurate default measured")

    def fit(self, X: Any, y: Any) -> DPLogisticRegression:
        """Fit privately (:meth:`DPEstimatorBase.fit`); ``mechanism="one-vs-rest"`` fits k binary
        models with (ε/k, δ/k) each through :class:`~dpopt.sklearn.DPOneVsRestClassifier` and keeps
        their combined release (``release_``) and each one (``releases_``)."""
        if self.mechanism != "one-vs-rest":  # never the automatic choice: only when declared
            super().fit(X, y)
            return self
        self._check_public()
        template = clone(self).set_params(mechanism="objective-perturbation", classes=[0, 1])
        ovr = DPOneVsRestClassifier(template, classes=self.classes).fit(X, y)
        self.mechanism_, self.mechanism_rule_ = "one-vs-rest", "declared"
        self.classes_ = ovr.classes_
        self.n_features_in_ = ovr.n_features_in_
        if hasattr(ovr, "feature_names_in_"):
            self.feature_names_in_ = ovr.feature_names_in_
        self.release_, self.releases_ = ovr.release_, ovr.releases_
        self._theta = np.column_stack([est._theta for est in ovr.estimators_])
        self.coef_, self.intercept_ = ovr.coef_, ovr.intercept_
        return self

    def _problem(self, data: Dataset) -> Problem:
        k = self._outputs()
        if k > 1:
            theta = Variable(data.n_features * k)
            loss: Loss = MultinomialLogisticLoss(data, theta, classes=k)
        else:
            theta = Variable(data.n_features)
            loss = LOSSES[self.loss](data, theta)
        coefs = coefficient_constraints(self, theta, data.n_features, k)
        return _l2_problem(loss, theta, self.radius, float(self.alpha), coefs)

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = self.loss == "logistic"  # the smoothed hinge is binary
        return tags

    def _more_tags(self) -> dict[str, Any]:  # scikit-learn < 1.6
        return {"poor_score": True, "binary_only": self.loss != "logistic"}

    @available_if(lambda est: est.loss == "logistic")
    def predict_proba(self, X: Any) -> np.ndarray:
        """The class probabilities of the logistic model, shape (n, k) (post-processing of the
        release): [P(negative), P(positive)] for two classes, softmax(Θᵀx) for k ≥ 3."""
        scores = self.decision_function(X)
        if scores.ndim == 2:
            return np.asarray(softmax(scores, axis=1))
        p = expit(scores)
        return np.column_stack([1.0 - p, p])


class DPRidge(DPRegressorBase):
    """Differentially private ridge regression.

    Minimizes (1/n) Σ (⟨θ, xᵢ⟩ − yᵢ)² + (α/2)‖θ‖² over ‖θ‖₂ ≤ ``radius`` (the squared loss is
    Lipschitz only on a bounded domain, so the gradient mechanisms need the radius).
    Parameters as in :class:`DPLogisticRegression`, without ``loss``, ``classes`` and
    ``unknown_label``, plus the label's declaration, one of:

    * ``y_bound``: a public bound on |y| (targets beyond it are clipped);
    * ``label_spec=dp.Numeric(low, high, grid=...)``: the label in its own units (say a
      blood-pressure reading in [80, 200]); it is mapped onto [−1, 1] by that declaration,
      the model is fitted there, and ``predict``, ``coef_`` and ``intercept_`` are in the
      table's units again.

    ``mechanism="auto"`` (default) chooses from public facts (:func:`regression_rule`):
    DP-GD (:class:`dpopt.DPGradientDescent`, private preconditioner) when n·√ρ/(d·B) ≥ 20,
    else AdaSSP (:class:`dpopt.AdaSSP`, [Wan18] Alg. 2: sufficient statistics with a privately
    chosen ridge, no solver; its share of ε on the label's mean and its ridge's scale are read
    from n·ε, and the rule says both); objective perturbation for δ = 0 or a named solver.  ``"adassp"``
    and ``"dp-gd"`` name them; with ``positive``/``bounds`` (which AdaSSP cannot take) the rule's
    AdaSSP becomes DP-GD.  ``alpha`` defaults to 0.01.  ``radius=None`` (default) is
    10·Y, Y the declared label bound in the fitted units (1 with ``label_spec``, else
    ``y_bound``): the same ball whatever the label's units.

    Attributes
    ----------
    radius_ : float
        The ℓ2 radius the fit used.
    coef_ : ndarray of shape (n_coefficients,)
    intercept_ : float
    release_ : dpopt.Release

    Notes
    -----
    As for :class:`DPLogisticRegression`: ``score()`` and scikit-learn's model-selection scores
    on private rows are exact, not private, and each fit costs (ε, δ); tune with
    :class:`~dpopt.sklearn.DPSearchCV`.
    """

    _mechanisms: ClassVar[dict[str, type[Mechanism]]] = {**CONVEX_MECHANISMS, "adassp": AdaSSP}
    _has_auto = True
    _auto_names = "mechanism='dp-gd' or 'adassp'"

    def __init__(self, epsilon: float = 1.0, delta: float | None = None, *,
                 mechanism: str = "auto", alpha: float = 0.01, radius: float | None = None,
                 fit_intercept: bool = True, x_bound: float | None = None, x_norm: Any = 2,
                 y_bound: float | None = None, label_spec: Numeric | None = None, schema: Schema | None = None,
                 unseen: str = "zero", solver: Any = "auto", random_state: Any = None, ledger: Ledger | None = None,
                 mechanism_options: dict[str, Any] | None = None, diagnostics: bool = True, positive: bool = False,
                 bounds: Any = None) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.mechanism = mechanism
        self.alpha = alpha
        self.radius = radius
        self.fit_intercept = fit_intercept
        self.x_bound = x_bound
        self.x_norm = x_norm
        self.y_bound = y_bound
        self.label_spec = label_spec
        self.schema = schema
        self.unseen = unseen
        self.solver = solver
        self.random_state = random_state
        self.ledger = ledger
        self.mechanism_options = mechanism_options
        self.diagnostics = diagnostics
        self.positive = positive
        self.bounds = bounds

    def _check_settings(self) -> None:
        _check_radius_alpha(self.radius, self.alpha)
        check_coefficient_settings(self.positive, self.bounds)
        self._check_y_bound()

    def _choice_facts(self, data: Dataset | None, epsilon: float, delta: float | None) -> tuple[Any, ...]:
        shape = None if data is None else (data.n, data.n_features, float(data.x_bound_in(2)))
        return (shape, epsilon, delta, self.delta, self.solver, self.positive, self.bounds is not None)

    def _auto(self, data: Dataset | None, epsilon: float, delta: float | None) -> tuple[str, str]:
        """The mechanism of ``"auto"`` from public facts: objective perturbation for δ = 0 or a
        named solver, else :func:`regression_rule` on the run's n, d, B, ε and δ."""
        run_delta = delta if delta is not None else (None if self.delta is None else float(self.delta))
        if run_delta == 0.0:
            return "objective-perturbation", "δ = 0: pure ε-DP, objective perturbation (AdaSSP needs δ > 0)"
        if self.solver != "auto":
            return "objective-perturbation", "an explicit solver: objective perturbation, the mechanism that calls one"
        assert data is not None  # the rule reads the table's public shape: chosen after the encoding
        name, rule = regression_rule(data.n, data.n_features, float(data.x_bound_in(2)), epsilon,
                                     default_delta(data.n) if run_delta is None else run_delta)
        if name == "adassp" and (self.positive or self.bounds is not None):
            return "dp-gd", ("coefficient constraints (positive/bounds): DP-GD, which projects onto them "
                             "(AdaSSP takes no constraint but an ℓ2 ball)")
        if name == "adassp":
            rule += f"; n·ε = {data.n * epsilon:.3g}: ridge threshold × {ridge_scale(data.n, epsilon):.2g}"
            if intercept_column(data) is not None:
                rule += f", {mean_share(data.n, epsilon):.0%} of ε on the label's mean"
        return name, rule

    def _problem(self, data: Dataset) -> Problem:
        theta = Variable(data.n_features)
        declared = self.radius
        self.radius_ = float(declared) if declared is not None else RIDGE_RADIUS * float(data.y_bound or 1.0)
        coefs = coefficient_constraints(self, theta, data.n_features)
        return _l2_problem(SquaredLoss(data, theta), theta, self.radius_, float(self.alpha), coefs)


class DPLasso(DPRegressorBase):
    """Differentially private LASSO: the squared loss over the ℓ1 ball ‖θ‖₁ ≤ ``radius``.

    Private Frank–Wolfe with noisy-max vertex selection (TTZ14 Alg. 4,
    :class:`dpopt.PolytopeFrankWolfe`; ``mechanism="frank-wolfe"``, default) or private
    mirror descent (``"mirror-descent"``, needs δ > 0).  Rows are bounded in the ℓ∞ norm by
    default (``x_norm="inf"``), the norm the ℓ1 geometry uses.  ``radius=None`` (default)
    reads the radius from public facts (:func:`lasso_radius`: Y/B∞, in the fitted units).
    Other parameters as in :class:`DPRidge` (``alpha`` adds (α/2)‖θ‖², default 0);
    ``positive=True`` keeps the coefficients in the ℓ1 ball's non-negative part (its vertices
    ``r·e_j``, so Frank–Wolfe's vertex selection still runs).

    Attributes
    ----------
    radius_ : float
        The ℓ1 radius the fit used (the declared one, or :func:`lasso_radius`).
    coef_ : ndarray of shape (n_coefficients,)
    intercept_ : float
    release_ : dpopt.Release

    Notes
    -----
    As for :class:`DPLogisticRegression`: ``score()`` and scikit-learn's model-selection scores
    on private rows are exact, not private, and each fit costs (ε, δ); tune with
    :class:`~dpopt.sklearn.DPSearchCV`.
    """

    _mechanisms: ClassVar[dict[str, type[Mechanism]]] = {
        "frank-wolfe": PolytopeFrankWolfe,
        "mirror-descent": PrivateMirrorDescent,
    }

    def __init__(self, epsilon: float = 1.0, delta: float | None = None, *, mechanism: str = "frank-wolfe",
                 radius: float | None = None, alpha: float = 0.0, fit_intercept: bool = True,
                 x_bound: float | None = None, x_norm: Any = "inf", y_bound: float | None = None,
                 label_spec: Numeric | None = None, schema: Schema | None = None, unseen: str = "zero",
                 solver: Any = "auto", random_state: Any = None, ledger: Ledger | None = None,
                 mechanism_options: dict[str, Any] | None = None, diagnostics: bool = True, positive: bool = False,
                 bounds: Any = None) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.mechanism = mechanism
        self.radius = radius
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.x_bound = x_bound
        self.x_norm = x_norm
        self.y_bound = y_bound
        self.label_spec = label_spec
        self.schema = schema
        self.unseen = unseen
        self.solver = solver
        self.random_state = random_state
        self.ledger = ledger
        self.mechanism_options = mechanism_options
        self.diagnostics = diagnostics
        self.positive = positive
        self.bounds = bounds

    def _check_settings(self) -> None:
        _check_radius_alpha(self.radius, self.alpha)
        check_coefficient_settings(self.positive, self.bounds)
        self._check_y_bound()

    def _problem(self, data: Dataset) -> Problem:
        theta = Variable(data.n_features)
        self.radius_ = float(self.radius) if self.radius is not None else lasso_radius(data)
        ball: Any = L1Ball(theta, self.radius_)
        if self.positive and self.bounds is None:  # the ℓ1 ball's non-negative part, by its vertices
            ball = positive_l1_polytope(theta, self.radius_, self._intercept_index())
        coefs = [] if self.positive and self.bounds is None else coefficient_constraints(self, theta, data.n_features)
        constraint: Any = [ball, *coefs] if coefs else ball
        return Problem(SquaredLoss(data, theta), constraint=constraint,
                       regularizer=L2Squared(theta, float(self.alpha)) if self.alpha > 0 else ())
