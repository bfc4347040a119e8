"""scikit-learn estimators on dpopt's private mechanisms (``pip install 'dpopt[sklearn]'``).

==============================  ====================================================================
estimator                       mechanisms (``mechanism=``)
==============================  ====================================================================
:class:`DPLogisticRegression`   logistic or smoothed-hinge loss: ``"auto"`` (default, chosen from
                                public facts), ``"objective-perturbation"``,
                                ``"output-perturbation"``, ``"dp-gd"``, ``"dp-sgd"``; k ≥ 3
                                declared classes: the multinomial logistic loss (DP-GD, DP-SGD)
:class:`DPRidge`                squared loss + (α/2)‖θ‖² over an ℓ2 ball: the same four
:class:`DPLasso`                squared loss over an ℓ1 ball: ``"frank-wolfe"`` (TTZ14 Alg. 4, default),
                                ``"mirror-descent"``
:class:`DPHalfspaceClassifier`  0/1 loss over an integer grid (needs a Schema): ``"rspm"``
                                (default), ``"opdisc"``
:class:`DPOneVsRestClassifier`  k binary fits of a dpopt classifier, one per declared class, each
                                with ε/k and δ/k
:class:`SchemaEncoder`          encodes a table by its declared Schema (fits nothing on the data),
                                so a Pipeline built with it reads no statistic of the private table
:class:`DPSearchCV`             private hyperparameter search over the first three
                                (:class:`dpopt.PrivateSelection`; one charge for the whole search)
==============================  ====================================================================

Every estimator follows scikit-learn's conventions (``fit`` returns self; ``predict``,
``decision_function``, ``score``, ``coef_``, ``intercept_``, ``n_features_in_``,
``feature_names_in_``) and keeps the :class:`~dpopt.mechanisms.release.Release` of its fit
as ``release_``.  Bounds are declarations: without a ``schema``, ``x_bound`` (the row-norm
bound) is required and rows are clipped to it; with one, ``fit`` takes the raw table and
encodes it through the schema.  Classes are declared with ``classes=[negative, positive]``
(binary) or ``classes=[c_1, …, c_k]`` (multi-class: a multinomial model with ``coef_`` of shape
(k, d) in one charge, or :class:`DPOneVsRestClassifier`, k charges of ε/k); without them they
are read off ``y`` with a warning (the label set is then not private).

``random_state``: None (default) draws the noise from OS entropy (secure); an int gives
reproducible noise for experiments (not secure).

Privacy cost of model selection
-------------------------------
Each ``fit`` is one private release charged once, with the estimator's (ε, δ), to its
``ledger`` (default: :func:`dpopt.default_ledger`).  The model is private; its *scores* are
not: ``score()`` and scikit-learn's ``cross_val_score``, ``GridSearchCV`` and
``RandomizedSearchCV`` evaluate the fitted models exactly on rows of the table, so on private
data their numbers (``cv_results_``, ``best_score_``, ``best_params_``, the fold scores) are
exact, non-private statistics that no ε covers.  What they cost on the ledger on top of that:
k-fold cross-validation fits k times on overlapping training sets, k·ε (and k·δ) under basic
composition (parallel composition does not apply: every row sits in k − 1 training folds);
``GridSearchCV`` over g settings g·k·ε plus the refit.  To choose hyperparameters privately
use :class:`DPSearchCV`: one charge of its stated (ε, δ) for the whole search, and only noisy
scores.  A fit refused for budget warns (:class:`dpopt.errors.BudgetWarning`) before it raises,
because scikit-learn's model selection records NaN scores for failed fits and carries on: pass
``error_score="raise"``.
"""

from __future__ import annotations

try:
    import sklearn  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised only without scikit-learn
    raise ImportError("dpopt.sklearn needs scikit-learn: pip install 'dpopt[sklearn]'") from exc

from dpopt.sklearn.encoder import SchemaEncoder
from dpopt.sklearn.halfspace import DPHalfspaceClassifier
from dpopt.sklearn.linear import DPLasso, DPLogisticRegression, DPRidge
from dpopt.sklearn.multiclass import DPOneVsRestClassifier
from dpopt.sklearn.search import DPSearchCV

__all__ = ["DPHalfspaceClassifier", "DPLasso", "DPLogisticRegression", "DPOneVsRestClassifier", "DPRidge",
           "DPSearchCV", "SchemaEncoder"]
