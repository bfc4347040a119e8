"""The in-memory ledger of :mod:`dpopt.privacy.ledger`: composition, refusals, and which process may charge it."""

from __future__ import annotations

import math
import threading

import pytest

from dpopt.errors import BudgetExceededError, PrivacyParameterError
from dpopt.privacy import Charge, Ledger

# ---------------------------------------------------------------------------------------
# ledger
# ---------------------------------------------------------------------------------------


def test_ledger_basic_composition() -> None:
    ledger = Ledger()
    c1 = ledger.charge(0.5, 1e-6, label="first", mechanism="gaussian")
    ledger.charge(0.25, 0.0, mechanism="laplace")
    assert ledger.spent == (0.75, 1e-6)
    assert ledger.remaining == (None, None)
    assert ledger.charges[0] is c1 and len(ledger.charges) == 2
    assert isinstance(c1, Charge) and c1.released and c1.label == "first"
    assert c1.time > 0


def test_ledger_refusal_records_nothing() -> None:
    ledger = Ledger(epsilon_budget=1.0, delta_budget=1e-5)
    ledger.charge(0.8, 5e-6)
    with pytest.raises(BudgetExceededError) as err:
        ledger.charge(0.3, 1e-6)
    message = str(err.value)
    assert "0.3" in message and "0.8" in message and "ε=1," in message  # request, spent, budget
    with pytest.raises(BudgetExceededError, match="δ"):
        ledger.charge(0.1, 6e-6)
    assert len(ledger.charges) == 1 and ledger.spent == (0.8, 5e-6)
    assert ledger.remaining == (pytest.approx(0.2), pytest.approx(5e-6))
    with pytest.raises(PrivacyParameterError):
        ledger.charge(-1.0, 0.0)
    assert len(ledger.charges) == 1


def test_ledger_require_and_can_afford_charge_nothing() -> None:
    ledger = Ledger(epsilon_budget=1.0, delta_budget=0.0)
    assert ledger.can_afford(1.0, 0.0)
    assert not ledger.can_afford(0.5, 1e-9)  # δ budget 0: pure DP only
    ledger.require(1.0, 0.0)
    with pytest.raises(BudgetExceededError):
        ledger.require(1.5, 0.0)
    assert ledger.charges == () and ledger.spent == (0.0, 0.0)


def test_ledger_exact_budget_in_pieces() -> None:
    ledger = Ledger(epsilon_budget=1.0, delta_budget=1e-6)
    for _ in range(10):
        ledger.charge(0.1, 1e-7)
    assert ledger.spent[0] == pytest.approx(1.0)
    assert ledger.remaining == (pytest.approx(0.0, abs=1e-15), pytest.approx(0.0, abs=1e-21))
    assert not ledger.can_afford(1e-9, 0.0)
    with pytest.raises(BudgetExceededError):
        ledger.charge(1e-9, 0.0)


def test_ledger_mark_unreleased_keeps_budget_spent() -> None:
    ledger = Ledger(epsilon_budget=1.0)
    first = ledger.charge(0.6, 0.0, label="attempt", mechanism="opdisc")
    updated = ledger.mark_unreleased(first)
    assert updated.released is False and updated.epsilon == 0.6 and updated.time == first.time
    assert ledger.charges == (updated,)
    assert ledger.spent == (0.6, 0.0)
    assert ledger.mark_unreleased(updated) == updated  # idempotent
    with pytest.raises(BudgetExceededError):
        ledger.charge(0.5, 0.0)
    assert "NOT released" in ledger.summary()
    with pytest.raises(PrivacyParameterError, match="not recorded"):
        ledger.mark_unreleased(Ledger().charge(0.1, 0.0))


def test_ledger_budget_validation() -> None:
    for eps_budget in (0.0, -1.0, math.nan, math.inf, True):
        with pytest.raises(PrivacyParameterError, match="epsilon_budget"):
            Ledger(epsilon_budget=eps_budget)
    for delta_budget in (-0.1, 1.0, math.nan):
        with pytest.raises(PrivacyParameterError, match="delta_budget"):
            Ledger(delta_budget=delta_budget)
    ledger = Ledger(epsilon_budget=2, delta_budget=0)
    assert (ledger.epsilon_budget, ledger.delta_budget) == (2.0, 0.0)


def test_ledger_summary() -> None:
    ledger = Ledger(epsilon_budget=1.0)
    ledger.charge(0.25, 1e-7, label="logistic\nregression", mechanism="objective-perturbation")
    text = ledger.summary()
    assert "basic composition" in text and "objective-perturbation" in text
    assert "logistic; regression" in text and "released" in text
    assert "Ledger(" in repr(ledger)


def test_ledger_thread_safety() -> None:
    ledger = Ledger(epsilon_budget=1.0)
    accepted: list[int] = []
    refused: list[int] = []
    barrier = threading.Barrier(8)

    def worker() -> None:
        barrier.wait()
        for _ in range(250):
            try:
                ledger.charge(0.001, 0.0)
                accepted.append(1)
            except BudgetExceededError:
                refused.append(1)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(accepted) == 1000 and len(refused) == 1000
    assert len(ledger.charges) == 1000
    assert ledger.spent[0] == pytest.approx(1.0, rel=1e-12)


# ---------------------------------------------------------------------------------------
# ledger: which process may charge it (real worker processes: tests/privacy/test_ledger_processes.py)
# ---------------------------------------------------------------------------------------


def _as_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make this process look like a multiprocessing child (a joblib/loky or pool worker)."""
    monkeypatch.setattr("dpopt.privacy.ledger.multiprocessing.parent_process", lambda: object())


def test_the_default_ledger_refuses_in_a_worker_before_the_data_is_touched(monkeypatch: pytest.MonkeyPatch) -> None:
    import dpopt as dp
    from dpopt.datasets import make_classification
    from dpopt.errors import LedgerProcessError

    data, _ = make_classification(40, 2, seed=0)
    theta = dp.Variable(2)
    problem = dp.Problem(dp.LogisticLoss(data, theta), regularizer=dp.L2Squared(theta, 0.1))
    before = dp.default_ledger().charges
    dp.ObjectivePerturbation(1.0, 1e-6).run(problem, solver="scipy")  # the main process: charged
    assert len(dp.default_ledger().charges) == len(before) + 1
    _as_worker(monkeypatch)

    def touched(*args: object, **kwargs: object) -> None:
        raise AssertionError("the run went past its first check")

    monkeypatch.setattr("dpopt.mechanisms.pipeline.make_rng", touched)  # the noise is drawn right after
    with pytest.raises(LedgerProcessError, match=r"default ledger cannot be charged in a worker process .*"
                                                 r"dpopt\.SQLiteLedger") as err:
        dp.ObjectivePerturbation(1.0, 1e-6).run(problem, solver="scipy")
    assert "\n" not in str(err.value) and isinstance(err.value, ValueError)
    assert len(dp.default_ledger().charges) == len(before) + 1
    mine = Ledger(epsilon_budget=1.0)  # a ledger the worker makes for itself is its own to charge
    mine.charge(0.5, 0.0)
    assert mine.spent == (0.5, 0.0)


def test_the_default_ledger_refuses_in_a_dask_task(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys
    import types

    from dpopt.errors import LedgerProcessError
    from dpopt.mechanisms.base import default_ledger

    fake = types.ModuleType("distributed")
    fake.get_worker = lambda: object()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "distributed", fake)
    with pytest.raises(LedgerProcessError, match="task of a Dask worker"):
        default_ledger().require(0.1, 0.0)

    def outside() -> None:
        raise ValueError("No worker found")

    fake.get_worker = outside  # type: ignore[attr-defined]
    default_ledger().require(0.1, 0.0)  # not in a task: the main process


def test_a_ledger_copy_in_another_process_refuses_every_charge(monkeypatch: pytest.MonkeyPatch) -> None:
    from dpopt.errors import LedgerProcessError

    ledger = Ledger(epsilon_budget=1.0)
    ledger.charge(0.25, 0.0)
    monkeypatch.setattr("dpopt.privacy.ledger.os.getpid", lambda: -1)  # as in a forked child
    for attempt in (lambda: ledger.charge(0.1, 0.0), lambda: ledger.require(0.1, 0.0),
                    lambda: ledger.can_afford(0.1, 0.0), lambda: ledger.spend(0.1, 0.0).__enter__()):
        with pytest.raises(LedgerProcessError, match=r"belongs to process \d+ and cannot be charged from "
                                                     r"process -1.*SQLiteLedger"):
            attempt()
    assert ledger.spent == (0.25, 0.0) and len(ledger.charges) == 1  # still readable
