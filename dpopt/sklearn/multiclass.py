"""One-vs-rest over k declared classes: k binary private fits, each on ε/k and δ/k.

The multinomial model (:class:`~dpopt.sklearn.DPLogisticRegression` with k ≥ 3 declared
classes) fits one d×k parameter in one charge.  One-vs-rest is the explicit alternative for a
binary-only estimator or mechanism: for each declared class c it fits the binary model
"c against the rest" with (ε/k, δ/k), so the k releases together are (ε, δ)-DP by basic
composition, and the ledger records k charges that sum to (ε, δ).  The label set is declared
(``classes=``), never read from the data, so k — and the split of the budget — is public.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils.validation import check_is_fitted, column_or_1d

from dpopt.errors import BudgetExceededError, ModelError
from dpopt.mechanisms.release import Release
from dpopt.modeling.rows import class_membership
from dpopt.privacy.ledger import Ledger
from dpopt.sklearn._base import DPClassifierBase, default_delta, seed_from, warn_refused

__all__ = ["DPOneVsRestClassifier", "class_seed", "combined_release"]


def class_seed(random_state: Any, c: int) -> Any:
    """The ``random_state`` of class c's binary fit: None stays None (each fit draws from the OS
    CSPRNG); a seed becomes a distinct seed per class.  The k fits must not share noise: equal
    noise on two releases would cancel in their difference and reveal it exactly."""
    base = seed_from(random_state)
    if base is None:
        return None
    return int(np.random.SeedSequence([base, c]).generate_state(1)[0])


def combined_release(releases: tuple[Release, ...], matrix: np.ndarray) -> Release:
    """One release for k one-vs-rest fits: Θ = ``matrix`` (d × k, class c's θ in column c)
    flattened row-major like a multinomial model's, and the basic composition of the k
    guarantees (ε and δ add up)."""
    first = releases[0]
    return Release(
        theta=np.asarray(matrix, dtype=np.float64).reshape(-1),
        epsilon=float(sum(r.epsilon for r in releases)),
        delta=float(sum(r.delta for r in releases)),
        mechanism=f"one-vs-rest: {len(releases)} × {first.mechanism} (basic composition)",
        parameters={"classes": len(releases), "composition": "basic", "neighbouring": "replace-one",
                    "per_class": [dict(r.parameters) for r in releases]},
        oracle_calls=tuple(call for r in releases for call in r.oracle_calls),
        seed=first.seed,
        private=all(r.private for r in releases),
        problem=f"{len(releases)} one-vs-rest problems, each {first.problem}",
        notes=tuple(dict.fromkeys(note for r in releases for note in r.notes)),
        feature_names=first.feature_names,
    )


class DPOneVsRestClassifier(ClassifierMixin, BaseEstimator):
    """k binary dpopt classifiers, one per declared class, sharing the budget (ε, δ) equally.

    Parameters
    ----------
    estimator : DPLogisticRegression or DPHalfspaceClassifier
        A binary dpopt classifier; its ``epsilon`` and ``delta`` are the budget of the whole
        one-vs-rest fit (each of the k binary fits gets ε/k and δ/k; ``delta=None`` means
        1/n² in total).  Its ``classes`` is ignored: each binary fit declares ``[0, 1]``.
    classes : sequence of k ≥ 2 values
        The class labels, declared (public).  A label outside them counts as "rest" in
        every binary fit (it is no class's positive example).

    Attributes
    ----------
    estimators_ : list of fitted binary estimators, one per class
    classes_ : ndarray of shape (k,)
    releases_ : tuple of k dpopt.Release
        The k releases; together (ε, δ)-DP (basic composition).
    release_ : dpopt.Release
        All k as one release (:func:`combined_release`): Θ of shape d × k flattened, (ε, δ).
    coef_ : ndarray of shape (k, n_coefficients)
    intercept_ : ndarray of shape (k,)

    Notes
    -----
    Every public check of the k fits runs before the first charge, and the ledger's room
    for the whole (ε, δ) is checked first, so a refusal charges nothing.  As for every dpopt
    estimator, ``score()`` on private rows is exact and not private.
    """

    def __init__(self, estimator: DPClassifierBase, *, classes: Any = None) -> None:
        self.estimator = estimator
        self.classes = classes

    def _checked(self) -> tuple[DPClassifierBase, np.ndarray]:
        """The binary template (public checks done) and the declared classes."""
        if not isinstance(self.estimator, DPClassifierBase):
            raise ModelError(f"estimator must be a dpopt classifier, got {type(self.estimator).__name__}")
        if self.classes is None or isinstance(self.classes, (str, bytes)):
            raise ModelError("declare classes=[...] (the k class labels): k splits the budget, so it must be public")
        classes = np.asarray(list(self.classes))
        if classes.size < 2 or len({repr(c) for c in classes.tolist()}) != classes.size:
            raise ModelError("classes must be at least two distinct values")
        template = clone(self.estimator).set_params(classes=[0, 1])
        template._check_public()
        return template, classes

    def fit(self, X: Any, y: Any) -> DPOneVsRestClassifier:
        """Fit k binary models, each with (ε/k, δ/k): one charge per class, (ε, δ) in all.

        Raises
        ------
        ModelError, MechanismError, PrivacyParameterError
            Bad settings, before the data is read and before any charge.
        """
        template, classes = self._checked()
        k = classes.size
        labels = column_or_1d(y, warn=True)
        index, known = class_membership(labels, classes)
        n = len(labels)
        total_delta = default_delta(n) if template.delta is None else float(template.delta)
        eps, dlt = float(template.epsilon) / k, total_delta / k
        ledger = template.ledger
        if ledger is not None and isinstance(ledger, Ledger) and not ledger.can_afford(float(template.epsilon),
                                                                                      total_delta):
            exc = BudgetExceededError(f"one-vs-rest needs (ε={template.epsilon}, δ={total_delta:.3g}) in all; "
                                      f"the ledger's remaining budget is {ledger.remaining}")
            warn_refused(type(self).__name__, exc)
            raise exc
        fits = [clone(template).set_params(epsilon=eps, delta=dlt, random_state=class_seed(template.random_state, c))
                for c in range(k)]
        for est in fits:
            est._check_public()
        targets = [np.where(known & (index == c), 1, 0) for c in range(k)]
        self.estimators_ = [est.fit(X, t) for est, t in zip(fits, targets, strict=True)]
        self.classes_ = classes
        self.releases_: tuple[Release, ...] = tuple(est.release_ for est in self.estimators_)
        self.release_ = combined_release(self.releases_, np.column_stack([est._theta for est in self.estimators_]))
        self.coef_ = np.vstack([est.coef_ for est in self.estimators_])
        self.intercept_ = np.concatenate([np.ravel(est.intercept_) for est in self.estimators_])
        self.n_features_in_ = self.estimators_[0].n_features_in_
        if hasattr(self.estimators_[0], "feature_names_in_"):
            self.feature_names_in_ = self.estimators_[0].feature_names_in_
        return self

    def decision_function(self, X: Any) -> np.ndarray:
        """The k binary scores ⟨θ_c, x⟩, shape (n, k)."""
        check_is_fitted(self, "estimators_")
        return np.column_stack([est.decision_function(X) for est in self.estimators_])

    def predict(self, X: Any) -> np.ndarray:
        """The class whose binary score is largest."""
        return self.classes_[np.argmax(self.decision_function(X), axis=1)]
