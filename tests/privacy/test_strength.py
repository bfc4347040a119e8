"""(ε, δ) that are valid but protect no one warn in Python too: ε above 10 and δ ≥ 1/n.

The warning is a :class:`~dpopt.errors.WeakGuaranteeWarning` raised before the charge (a run
refused for its budget has warned already), and reads only ε, δ and n — public facts.
"""

from __future__ import annotations

import warnings

import pytest

import dpopt as dp
from dpopt.datasets import make_classification
from dpopt.errors import BudgetExceededError, WeakGuaranteeWarning
from dpopt.privacy.strength import LARGE_EPSILON, weak_guarantee_reasons

N = 200


def _run(epsilon: float, delta: float, ledger: dp.Ledger | None = None) -> dp.Release:
    data, _ = make_classification(N, 3, seed=0)
    theta = dp.Variable(3)
    problem = dp.Problem(dp.LogisticLoss(data, theta), regularizer=dp.L2Squared(theta, 0.1))
    return dp.ObjectivePerturbation(epsilon, delta, ledger=ledger or dp.Ledger()).run(problem, seed=0)


@pytest.mark.parametrize(("epsilon", "delta", "expected"), [
    (LARGE_EPSILON * 1.01, 0.0, ("no meaningful privacy",)),
    (1.0, 1.0 / N, ("at least 1/n = 1/200",)),
    (11.0, 0.5, ("no meaningful privacy", "at least 1/n")),
])
def test_weak_parameters_warn_before_the_charge(epsilon: float, delta: float, expected: tuple[str, ...]) -> None:
    with pytest.warns(WeakGuaranteeWarning) as caught:
        release = _run(epsilon, delta)
    messages = [str(w.message) for w in caught if issubclass(w.category, WeakGuaranteeWarning)]
    assert len(messages) == len(expected)
    for text, message in zip(expected, messages, strict=True):
        assert text in message
    assert release.private
    ledger = dp.Ledger(epsilon_budget=epsilon / 2)  # refused for budget: it has warned already
    with pytest.warns(WeakGuaranteeWarning), pytest.raises(BudgetExceededError):
        _run(epsilon, delta, ledger)
    assert ledger.charges == ()


@pytest.mark.parametrize(("epsilon", "delta"), [(LARGE_EPSILON, 0.0), (1.0, 1.0 / (N + 1)), (0.1, 1e-9)])
def test_sound_parameters_do_not_warn(epsilon: float, delta: float) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", WeakGuaranteeWarning)
        _run(epsilon, delta)


def test_the_reasons_read_only_public_numbers() -> None:
    """The rule itself, against its definition: ε > 10, and δ ≥ 1/n only when n is given."""
    for epsilon, delta, n in [(10.5, 0.0, None), (1.0, 0.01, 100), (1.0, 0.0099, 100), (1.0, 0.5, None)]:
        reasons = weak_guarantee_reasons(epsilon, delta, n)
        assert len(reasons) == (epsilon > 10) + (n is not None and delta >= 1 / n)
