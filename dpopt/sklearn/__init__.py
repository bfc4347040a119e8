"""scikit-learn estimators on dpopt's private mechanisms (``pip install 'dpopt[sklearn]'``).

=========================  ====================================================================
estimator                  mechanisms (``mechanism=``)
=========================  ====================================================================
:class:`DPLogisticRegression`  logistic or smoothed-hinge loss: ``"objective-perturbation"``
                           (default), ``"output-perturbation"``, ``"dp-gd"``, ``"dp-sgd"``
:class:`DPRidge`           squared loss + (α/2)‖θ‖² over an ℓ2 ball: the same four
:class:`DPLasso`           squared loss over an ℓ1 ball: ``"frank-wolfe"`` (TTZ14 Alg. 4, default),
                           ``"mirror-descent"``
:class:`DPHalfspaceClassifier`  0/1 loss over an integer grid (needs a Schema): ``"rspm"``
                           (default), ``"opdisc"``
=========================  ====================================================================

Every estimator follows scikit-learn's conventions (``fit`` returns self; ``predict``,
``decision_function``, ``score``, ``coef_``, ``intercept_``, ``n_features_in_``,
``feature_names_in_``) and keeps the :class:`~dpopt.mechanisms.release.Release` of its fit
as ``release_``.  Bounds are declarations: without a ``schema``, ``x_bound`` (the row-norm
bound) is required and rows are clipped to it; with one, ``fit`` takes the raw table and
encodes it through the schema.  Classes are declared with ``classes=[negative, positive]``;
without them they are read off ``y`` with a warning (the label set is then not private).

``random_state``: None (default) draws the noise from OS entropy (secure); an int gives
reproducible noise for experiments (not secure).

Privacy cost of model selection
-------------------------------
Each ``fit`` is one private release charged once, with the estimator's (ε, δ), to its
``ledger`` (default: :func:`dpopt.default_ledger`).  ``cross_val_score`` with k folds fits k
times on overlapping training sets, so under basic composition it costs k·ε (and k·δ) on the
data; parallel composition does not apply because every row sits in k − 1 of the training
folds.  ``GridSearchCV`` over g configurations costs g·k·ε, plus a final refit.  Scores
computed on held-out rows are not private either (they read those rows without noise).  To
choose hyperparameters privately, use :class:`dpopt.PrivateSelection`, whose whole search is
covered by one stated (ε, δ).
"""

from __future__ import annotations

try:
    import sklearn  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised only without scikit-learn
    raise ImportError("dpopt.sklearn needs scikit-learn: pip install 'dpopt[sklearn]'") from exc

from dpopt.sklearn.halfspace import DPHalfspaceClassifier
from dpopt.sklearn.linear import DPLasso, DPLogisticRegression, DPRidge

__all__ = ["DPHalfspaceClassifier", "DPLasso", "DPLogisticRegression", "DPRidge"]
