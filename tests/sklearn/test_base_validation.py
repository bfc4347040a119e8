"""One fit checks its settings once, at the entry, and builds its mechanism once.

Every estimator-level step of ``fit`` is wrapped in a counter (monkeypatched on the class or
on the name the estimator module calls); a fit that runs any of them twice fails, so work
repeated on the hot path (the settings check, the automatic choice, the ε/δ check, the
mechanism's construction, the row clipping) cannot come back unnoticed.
"""

from __future__ import annotations

import collections
import functools
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import dpopt as dp
import dpopt.sklearn._base as sk_base
import dpopt.sklearn.linear as sk_linear
from dpopt.mechanisms.adassp import AdaSSP
from dpopt.mechanisms.gradient_descent import DPGradientDescent
from dpopt.mechanisms.polytope_frank_wolfe import PolytopeFrankWolfe
from dpopt.sklearn import DPLasso, DPLogisticRegression, DPRidge
from dpopt.sklearn._base import DPEstimatorBase

#: the estimator methods that must run at most once per fit (on the class that defines them)
METHODS = ("_check_public", "_check_settings", "_auto", "_check_choice", "_build", "_design", "_encode")
#: the functions the estimator modules call, by (module, name)
FUNCTIONS = ((sk_base, "check_epsilon_delta"), (sk_base, "clip_rows"), (sk_linear, "regression_rule"))
#: the mechanisms built per fit (their own ``__init__``)
MECHANISMS = (DPGradientDescent, AdaSSP, PolytopeFrankWolfe)


def _counted(counts: collections.Counter[str], name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        counts[name] += 1
        return fn(*args, **kwargs)

    return wrapper


def _count_calls(monkeypatch: pytest.MonkeyPatch, est: DPEstimatorBase) -> collections.Counter[str]:
    counts: collections.Counter[str] = collections.Counter()
    for name in METHODS:
        owner = next((c for c in type(est).__mro__ if name in vars(c)), None)
        if owner is not None:
            monkeypatch.setattr(owner, name, _counted(counts, name, vars(owner)[name]))
    for module, name in FUNCTIONS:
        monkeypatch.setattr(module, name, _counted(counts, name, getattr(module, name)))
    for cls in MECHANISMS:
        monkeypatch.setattr(cls, "__init__", _counted(counts, cls.__name__, cls.__init__))
    return counts


def _table(n: int = 1000, d: int = 5, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, d))
    return X, X @ np.arange(d) / 10.0, np.digitize(X[:, 0], [-0.3, 0.3])


FITS = {
    "logistic": (lambda: DPLogisticRegression(1.0, x_bound=3, classes=[0, 1], random_state=0), "binary",
                 "DPGradientDescent"),
    "logistic, classes read from y": (lambda: DPLogisticRegression(1.0, x_bound=3, random_state=0), "binary",
                                      "DPGradientDescent"),
    "multinomial": (lambda: DPLogisticRegression(1.0, x_bound=3, classes=[0, 1, 2], random_state=0), "classes",
                    "DPGradientDescent"),
    "ridge, auto: AdaSSP": (lambda: DPRidge(1.0, x_bound=3, y_bound=2, random_state=0), "y", "AdaSSP"),
    "ridge, auto: DP-GD": (lambda: DPRidge(50.0, x_bound=1, y_bound=2, random_state=0), "y", "DPGradientDescent"),
    "lasso": (lambda: DPLasso(1.0, x_bound=1, y_bound=2, random_state=0), "y", "PolytopeFrankWolfe"),
}


@pytest.mark.parametrize("case", list(FITS))
def test_one_fit_checks_chooses_and_builds_once(case, monkeypatch):
    make, target, built = FITS[case]
    X, y, classes = _table()
    est = make().set_params(ledger=dp.Ledger(100.0))
    labels = {"binary": (X[:, 0] > 0).astype(int), "classes": classes, "y": y}[target]
    counts = _count_calls(monkeypatch, est)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # classes read from y warn (not private); not what is tested here
        est.fit(X, labels)
    repeated = {name: k for name, k in counts.items() if k > 1}
    assert not repeated, f"{case}: called more than once in one fit: {repeated}"
    # the counters are live: the steps every fit takes were seen (a wrapper that counts nothing fails here)
    for step in ("_check_public", "_build", "_design", "_encode", "check_epsilon_delta", "clip_rows", built):
        assert counts[step] == 1, f"{case}: {step} ran {counts[step]} times"
    assert counts["_auto"] == (1 if est.mechanism == "auto" else 0)


def test_a_second_fit_checks_again(monkeypatch):
    """The kept choice is per set of public facts, not a cache across fits: a fit after
    ``set_params`` checks and chooses again (δ = 0 makes auto pick objective perturbation)."""
    X, _, _ = _table()
    labels = (X[:, 0] > 0).astype(int)
    est = DPLogisticRegression(1.0, x_bound=3, classes=[0, 1], random_state=0, ledger=dp.Ledger(100.0))
    assert est.fit(X, labels).mechanism_ == "dp-gd"
    counts = _count_calls(monkeypatch, est)
    assert est.set_params(delta=0.0).fit(X, labels).mechanism_ == "objective-perturbation"
    assert counts["_check_public"] == 1 and counts["_auto"] == 1
    with pytest.raises(dp.errors.MechanismError, match="needs δ > 0"):
        est.set_params(classes=[0, 1, 2], mechanism="dp-gd").fit(X, np.digitize(X[:, 0], [-0.3, 0.3]))


def test_a_setting_changed_after_a_fit_is_checked():
    """The choice is kept from the settings check to the build only: a setting changed after a
    fit (a binary loss for k = 3 declared classes) is refused by the next fit, before the data."""
    X, _, classes = _table()
    est = DPLogisticRegression(1.0, x_bound=3, classes=[0, 1, 2], random_state=0, ledger=dp.Ledger(100.0))
    est.fit(X, classes)
    with pytest.raises(dp.errors.ModelError, match="need loss='logistic'"):
        est.set_params(loss="smoothed-hinge").fit(X, classes)
