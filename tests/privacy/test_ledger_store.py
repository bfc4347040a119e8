"""One ledger policy over any store (dpopt.privacy.ledger_store).

* the in-memory and the SQLite ledger answer the same sequence of charges, spends, refusals and
  reads alike (the policy is written once; only the store differs);
* a store of one's own that keeps pending charges gets the whole ``spend`` protocol from the
  policy: pending inside the block, released after it, withheld when it raises, and a budget
  refusal records nothing and runs no block.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import dpopt as dp
from dpopt.errors import BudgetExceededError
from dpopt.privacy.ledger import Ledger
from dpopt.privacy.ledger_store import Charge, Status


def _script(ledger: Ledger) -> list[object]:
    """What a user observes of ``ledger`` over one sequence of calls (the stores' own parts left out)."""
    seen: list[object] = []
    ledger.charge(0.25, 0.0, label="a", mechanism="m")
    with ledger.spend(0.25, 1e-7, label="s", mechanism="n") as handle:
        pass
    seen.append(handle.charge.released)
    with pytest.raises(ValueError), ledger.spend(0.25, 0.0, label="t") as handle:
        raise ValueError
    seen.append(handle.charge.released)
    ledger.charge(0.1, 0.0, released=False)
    for call in (lambda: ledger.charge(0.5, 0.0), lambda: ledger.require(0.5, 0.0)):
        with pytest.raises(BudgetExceededError) as err:
            call()
        seen.append(str(err.value).split(": ", 1)[-1] if "dataset" in str(err.value) else str(err.value))
    seen += [ledger.can_afford(0.15, 0.0), ledger.can_afford(0.2, 0.0), ledger.spent, ledger.remaining]
    seen += [[(c.epsilon, c.delta, c.label, c.mechanism, c.released, c.status) for c in ledger.charges]]
    seen += [len(ledger.own_charges), ledger.mark_unreleased(ledger.charges[0]).released]
    seen += [ledger.summary().splitlines()[1:3]]
    return seen


def test_the_memory_and_the_sqlite_ledger_answer_alike(tmp_path: Path) -> None:
    memory = _script(dp.Ledger(epsilon_budget=1.0, delta_budget=1e-5))
    stored = _script(dp.SQLiteLedger(tmp_path / "l.sqlite", dataset="d", create=True, epsilon_budget=1.0,
                                     delta_budget=1e-5))
    assert memory == stored
    assert memory[0] is True and memory[1] is False and memory[4:6] == [True, False]


class _PendingList:
    """A minimal store of one's own: a list that keeps pending charges (not thread-safe, one process)."""

    keeps_pending = True
    where = "my store: "

    def __init__(self) -> None:
        self.rows: list[tuple[Charge, Status]] = []

    def check_process(self) -> None:
        pass

    def encode_parameters(self, parameters: Mapping[str, Any] | None) -> object:
        return parameters

    @contextmanager
    def transaction(self) -> Iterator[Sequence[Charge]]:
        yield self.read()

    def append(self, charge: Charge, status: Status, parameters: Any) -> Charge:
        self.rows.append((charge, status))
        return charge

    def read(self) -> tuple[Charge, ...]:
        return tuple(c for c, _ in self.rows)

    def own(self) -> tuple[Charge, ...]:
        return self.read()

    def set_status(self, charge: Charge, status: Status, only_from: tuple[Status, ...]) -> Charge:
        index = next(i for i, (c, _) in enumerate(self.rows) if c == charge)
        if self.rows[index][1] not in only_from:
            return self.rows[index][0]
        self.rows[index] = (replace(charge, released=status == "released"), status)
        return self.rows[index][0]

    def entry_line(self, number: int, charge: Charge, body: str) -> str:
        return f"{number} {body}"

    def title(self) -> str:
        return "Mine"

    def repr_head(self) -> str:
        return "Mine("

    def pickled(self, ledger: object) -> tuple[object, ...]:
        raise TypeError("not picklable")


class _MyLedger(Ledger):
    def __init__(self, epsilon_budget: float) -> None:
        self._attach(_PendingList(), (epsilon_budget, None))


def test_a_store_of_ones_own_gets_the_spend_protocol_and_the_refusals() -> None:
    ledger = _MyLedger(1.0)
    store = ledger._store
    assert isinstance(store, _PendingList)
    with ledger.spend(0.5, 0.0, label="ok") as handle:
        assert [s for _, s in store.rows] == ["pending"] and not handle.charge.released
    assert [s for _, s in store.rows] == ["released"] and handle.charge.released
    with pytest.raises(RuntimeError), ledger.spend(0.25, 0.0, label="fails"):
        raise RuntimeError
    assert [s for _, s in store.rows] == ["released", "withheld"]
    ran = []
    with pytest.raises(BudgetExceededError, match=r"^my store: a charge of \(ε=0.5"), ledger.spend(0.5, 0.0):
        ran.append(True)
    assert ran == [] and len(store.rows) == 2 and ledger.spent == (0.75, 0.0)
    assert ledger.remaining == (0.25, None) and repr(ledger).startswith("Mine(budget=")
    assert ledger.summary().splitlines()[0].startswith("Mine (basic composition)")
