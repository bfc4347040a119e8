"""The records a privacy ledger keeps and where it keeps them.

A :class:`Charge` is one record: its (ε, δ), mechanism, label, whether its output was released,
its time and the run's provenance (:func:`~dpopt.privacy.ledger.charge_context`).  Its
:attr:`Charge.status` says what became of it: ``released``, ``withheld`` (the computation ran,
its output was not released; the budget is spent either way) or, in a store that outlives its
process, ``pending`` (its ``spend`` block has not ended).

A :class:`LedgerStore` keeps the records of one budget; the policy — what may be charged,
composition, refusals — is :class:`~dpopt.privacy.ledger.Ledger`'s, written once over any
store.  :class:`MemoryStore` is a list under a thread lock, charged from its own process only;
:class:`~dpopt.privacy.sqlite_store.SQLiteStore` is an SQLite file shared by processes.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import threading
import time as _time
import weakref
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any, Literal, Protocol

from dpopt.errors import LedgerProcessError, PrivacyParameterError

__all__ = ["SHARE_HINT", "Charge", "LedgerStore", "MemoryStore", "Status", "restore_ledger"]

#: what became of a charge: released, withheld, or pending (its block has not ended)
Status = Literal["pending", "released", "withheld"]
#: how to charge one budget from several processes (the end of every process refusal)
SHARE_HINT = ("to charge one budget from several processes, pass ledger=dpopt.SQLiteLedger(path, "
              "dataset=...), which every process opens by its file path")
#: the in-memory ledgers pickled in this process, by their store's token: an unpickled copy
#: resolves to its original while that lives
_LIVE: weakref.WeakValueDictionary[str, Any] = weakref.WeakValueDictionary()


class Pickled(Protocol):
    """What a store needs of the ledger it pickles."""

    def __getstate__(self) -> dict[str, object]: ...


@dataclass(frozen=True)
class Charge:
    """One entry of a :class:`~dpopt.privacy.ledger.Ledger`.

    Attributes
    ----------
    epsilon, delta : float
        The privacy cost of this charge.
    label : str
        What was computed (a problem summary; never data values).
    mechanism : str
        The mechanism's name.
    released : bool
        False when the computation ran but its output was withheld.  The budget is
        spent either way.
    time : float
        ``time.time()`` when the charge was made.
    model, solver, command : str
        The run's model (script path or name), the solver asked for and the command line, as
        given by :func:`charge_context` (empty outside one).
    """

    epsilon: float
    delta: float
    label: str
    mechanism: str
    released: bool
    time: float
    model: str = ""
    solver: str = ""
    command: str = ""

    @property
    def status(self) -> str:
        """``"released"`` or ``"withheld"``; a store that outlives its process also keeps
        ``"pending"`` (:class:`LedgerStore`), for a charge whose block has not ended."""
        return "released" if self.released else "withheld"


def restore_ledger(cls: type, token: str | None, state: dict[str, object]) -> Any:
    """Unpickle a :class:`~dpopt.privacy.ledger.Ledger`: the live original when it is in this process (an in-memory
    ledger, by its token), else a ledger over the unpickled store."""
    live = None if token is None else _LIVE.get(token)
    if live is not None and type(live) is cls:
        return live
    ledger: Any = object.__new__(cls)
    ledger.__setstate__(state)
    return ledger


class LedgerStore(Protocol):
    """Where a :class:`~dpopt.privacy.ledger.Ledger` keeps its charges: the little a store implements.

    The policy (:class:`~dpopt.privacy.ledger.Ledger`) decides what may be charged and what a record
    means; a store only keeps the records, consistently under concurrent use.

    Attributes
    ----------
    keeps_pending : bool
        Whether a charge made by ``spend`` is stored ``"pending"`` until its block ends (a
        store that outlives its process, so a charge whose process was killed inside the block
        shows as such); otherwise it is stored released and only a withheld block changes it.
    """

    keeps_pending: bool

    @property
    def where(self) -> str:
        """What a budget refusal names before its reason."""
        ...

    def check_process(self) -> None:
        """Raise :class:`~dpopt.errors.LedgerProcessError` when this process may not write here."""
        ...

    def encode_parameters(self, parameters: Mapping[str, Any] | None) -> Any:
        """The stored form of a charge's public parameters, checked before anything is written."""
        ...

    def transaction(self) -> contextlib.AbstractContextManager[Sequence[Charge]]:
        """Exclusive access for one charge: yields every charge now; nobody else appends until it exits."""
        ...

    def append(self, charge: Charge, status: Status, parameters: Any) -> Charge:
        """Record ``charge`` with ``status`` (inside :meth:`transaction`) and return the stored record."""
        ...

    def read(self) -> tuple[Charge, ...]:
        """Every charge, oldest first."""
        ...

    def own(self) -> tuple[Charge, ...]:
        """The charges appended through this store object (in this process), oldest first."""
        ...

    def set_status(self, charge: Charge, status: Status, only_from: tuple[Status, ...]) -> Charge:
        """Set a stored charge's status when it is one of ``only_from``, and return the record.

        Raises :class:`~dpopt.errors.PrivacyParameterError` for a charge that is not stored here.
        """
        ...

    def entry_line(self, number: int, charge: Charge, body: str) -> str:
        """One line of :meth:`~dpopt.privacy.ledger.Ledger.summary`: the charge's number and time around ``body``."""
        ...

    def title(self) -> str:
        """How :meth:`~dpopt.privacy.ledger.Ledger.summary` names the ledger (``"Ledger"``, or its file and dataset)."""
        ...

    def repr_head(self) -> str:
        """The start of the ledger's ``repr`` up to its budget (``"Ledger("``, or its class, file and dataset)."""
        ...

    def pickled(self, ledger: Pickled) -> tuple[object, ...]:
        """``ledger.__reduce__()``: how the ledger over this store is pickled."""
        ...


class MemoryStore:
    """A list and a thread lock: the store of an in-memory :class:`~dpopt.privacy.ledger.Ledger`, charged in this process only.

    A copy of it in another process (pickled to a worker, inherited by a fork), or an unpickled
    copy whose original is gone, can be read but refuses to be charged (:meth:`check_process`).
    """

    keeps_pending = False
    where = ""

    def __init__(self) -> None:
        self._charges: list[Charge] = []
        self._lock = threading.Lock()
        self.origin_pid = os.getpid()
        self.detached = False  # True for a copy that is not the live original
        self.token = secrets.token_hex(16)

    def check_process(self) -> None:
        """Raise unless this store's ledger can be charged from the current process (module docstring).

        Raises
        ------
        LedgerProcessError
            For a copy in another process (pickled to a worker, or inherited by a fork), or an
            unpickled copy whose original is not alive in this process.
        """
        pid = os.getpid()
        if self.origin_pid != pid:
            raise LedgerProcessError(
                f"this in-memory Ledger belongs to process {self.origin_pid} and cannot be charged from "
                f"process {pid}: a copy sent to a worker (joblib/loky, multiprocessing, concurrent.futures, "
                f"Dask) or made by a fork would spend a budget of its own that the caller never sees; "
                f"{SHARE_HINT}"
            )
        if self.detached:
            raise LedgerProcessError(
                "this in-memory Ledger is an unpickled copy whose original is not alive in this process, and a copy "
                f"cannot be charged (its budget would be spent twice); {SHARE_HINT}"
            )

    def encode_parameters(self, parameters: Mapping[str, Any] | None) -> None:
        """Nothing: an in-memory ledger does not keep the parameters."""
        return None

    @contextmanager
    def transaction(self) -> Iterator[Sequence[Charge]]:
        with self._lock:
            yield self._charges

    def append(self, charge: Charge, status: Status, parameters: Any) -> Charge:
        self._charges.append(charge)
        return charge

    def read(self) -> tuple[Charge, ...]:
        with self._lock:
            return tuple(self._charges)

    def own(self) -> tuple[Charge, ...]:
        """All the charges: only its own process charges an in-memory ledger."""
        return self.read()

    def set_status(self, charge: Charge, status: Status, only_from: tuple[Status, ...]) -> Charge:
        with self._lock:
            index = next((i for i, c in enumerate(self._charges) if c is charge), None)
            if index is None:  # an equal copy (e.g. unpickled) identifies the entry too
                index = next((i for i, c in enumerate(self._charges) if c == charge), None)
            if index is None:
                raise PrivacyParameterError(
                    "mark_unreleased: that charge is not recorded in this ledger; pass the "
                    "Charge returned by this ledger's charge()"
                )
            entry = self._charges[index]
            if entry.status not in only_from:
                return entry
            updated = replace(entry, released=status == "released")
            self._charges[index] = updated
            return updated

    def entry_line(self, number: int, charge: Charge, body: str) -> str:
        stamp = _time.strftime("%Y-%m-%d %H:%M:%S", _time.localtime(charge.time))
        status = "released" if charge.released else "NOT released (budget spent)"
        return f"  {number:>3}. {stamp}  {body}  [{status}]"

    def title(self) -> str:
        return "Ledger"

    def repr_head(self) -> str:
        return "Ledger("

    def pickled(self, ledger: Pickled) -> tuple[object, ...]:
        """(restore, (class, token, state)): unpickled in this process while the original lives, it is the original."""
        _LIVE[self.token] = ledger
        return (restore_ledger, (type(ledger), self.token, ledger.__getstate__()))

    # -- pickling (the lock is per process; every unpickled store is a copy) -----------------
    def __getstate__(self) -> dict[str, object]:
        state = self.__dict__.copy()
        del state["_lock"]
        with self._lock:
            state["_charges"] = list(self._charges)
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()
        self.detached = True


