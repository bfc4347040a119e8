"""A privacy ledger kept in an SQLite file, shared by processes: the ledger's policy over the file.

:class:`SQLiteLedger` is :class:`~dpopt.privacy.ledger.Ledger`'s policy (what may be charged,
composition, refusals, the ``spend`` protocol) over an
:class:`~dpopt.privacy.sqlite_store.SQLiteStore`, which keeps one dataset's charges in the file
(its transactions, statuses, layout and migration are described in
:mod:`dpopt.privacy.sqlite_store`).  The class adds only what a file has: its path and
dataset, :meth:`SQLiteLedger.open`, :meth:`SQLiteLedger.datasets`,
:meth:`SQLiteLedger.history` and :meth:`SQLiteLedger.close`.
"""

from __future__ import annotations

import os
from typing import Any

from dpopt.errors import PrivacyParameterError
from dpopt.privacy.ledger import Ledger, check_budget
from dpopt.privacy.sqlite_store import DEFAULT_TIMEOUT, SQLiteStore, StoredCharge

__all__ = ["SQLiteLedger"]


class SQLiteLedger(Ledger):
    """A :class:`~dpopt.privacy.ledger.Ledger` kept in an SQLite file, safe across processes.

    Parameters
    ----------
    path : str or os.PathLike
        The ledger file.  It must exist unless ``create=True`` (then it is created, with
        its schema, when missing).
    dataset : str
        The dataset the charges are made against; one file holds several.  It must be in
        the file unless ``create=True``.
    epsilon_budget, delta_budget : float or None
        The dataset's budget, validated as by :class:`Ledger`.  For an existing dataset
        each must equal the stored value or be None (use the stored value).  Creating a
        dataset needs ``epsilon_budget`` (``delta_budget=None`` then allows any δ).
    create : bool, default False
        Create the file and the dataset, with the given budget, when missing (an existing
        one with the same budget is attached to, as ``dpopt ledger init`` does).  A new
        name that differs from a stored one only in case or surrounding spaces is refused.
    timeout : float, default 30
        Seconds a write waits for another process's transaction before failing.

    Raises
    ------
    PrivacyParameterError
        For an invalid budget or dataset name, budgets that differ from the stored ones,
        or ``create=True`` without ``epsilon_budget`` for a dataset that must be created.
    LedgerError
        When the file or (without ``create=True``) the dataset does not exist — the
        message lists the datasets the file holds and suggests a close name — or the file
        is not an SQLite database, not a dpopt ledger, or of an unknown schema version.

    Notes
    -----
    :class:`Ledger`'s policy over an :class:`SQLiteStore`: the same interface, ``parameters=``
    of :meth:`charge` and :meth:`spend` stored with each row, plus :meth:`history` and
    :meth:`close`.  ``spent``, ``remaining``,
    ``charges`` and ``summary()`` read the file; composition is :meth:`Ledger._compose`
    over every row of the dataset (pending, released and withheld alike).  The object
    pickles as (absolute path, dataset, budget, the file's id) and reconnects lazily in
    the process that unpickles it, never creating anything, so one budget is charged from
    every worker of a process pool or a Dask cluster (on a file they all see).  See the
    module docstring for the transaction and the statuses.

    Examples
    --------
    >>> ledger = SQLiteLedger("budget.sqlite", dataset="adult", create=True,
    ...                       epsilon_budget=1.0, delta_budget=1e-6)                 # doctest: +SKIP
    >>> release = dp.ObjectivePerturbation(0.5, ledger=ledger).run(problem)          # doctest: +SKIP
    >>> SQLiteLedger("budget.sqlite", dataset="Adult")                               # doctest: +SKIP
    LedgerError: ledger file budget.sqlite has no dataset 'Adult' (it has: 'adult'); did you mean 'adult'? ...
    """

    def __init__(self, path: str | os.PathLike[str], *, dataset: str, epsilon_budget: float | None = None,
                 delta_budget: float | None = None, create: bool = False,
                 timeout: float = DEFAULT_TIMEOUT) -> None:
        if not isinstance(create, bool):
            raise PrivacyParameterError(f"create must be True or False, got {create!r}")
        self._setup(path, dataset, (epsilon_budget, delta_budget), timeout, create=create)

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, dataset: str,
             timeout: float = DEFAULT_TIMEOUT) -> SQLiteLedger:
        """The ledger of ``dataset`` in an existing file, with its stored budget (never creates).

        The same as ``SQLiteLedger(path, dataset=dataset)``.

        Raises
        ------
        LedgerError
            When the file or the dataset does not exist (the message suggests
            ``dpopt ledger init``), or the file is not a dpopt ledger.
        """
        ledger = cls.__new__(cls)
        ledger._setup(path, dataset, (None, None), timeout, create=False)
        return ledger

    @staticmethod
    def datasets(path: str | os.PathLike[str], *, timeout: float = DEFAULT_TIMEOUT) -> tuple[str, ...]:
        """The dataset names an existing ledger file holds, sorted.

        Raises
        ------
        LedgerError
            When the file does not exist or is not a dpopt ledger.
        """
        return SQLiteStore.dataset_names(os.fspath(path), timeout)

    def _setup(self, path: str | os.PathLike[str], dataset: str, budget: tuple[float | None, float | None],
               timeout: float, *, create: bool) -> None:
        checked = (check_budget(budget[0], "epsilon_budget", allow_zero=False),
                   check_budget(budget[1], "delta_budget", allow_zero=True))
        store = SQLiteStore.open(os.fspath(path), dataset, checked, timeout, create=create)
        self._attach(store, store.budget)

    @property
    def path(self) -> str:
        """The ledger file."""
        return self._file_store().path

    @property
    def dataset(self) -> str:
        """The dataset charged."""
        return self._file_store().dataset

    def _file_store(self) -> SQLiteStore:
        assert isinstance(self._store, SQLiteStore)
        return self._store

    def close(self) -> None:
        """Close this object's connection (the next use reconnects)."""
        self._file_store().close()

    @property
    def charges(self) -> tuple[StoredCharge, ...]:
        """Every charge of the dataset in the file, oldest first."""
        return self._file_store().read()

    @property
    def own_charges(self) -> tuple[StoredCharge, ...]:
        """The charges this object made (in this process), read from the file, oldest first."""
        return self._file_store().own()

    def history(self) -> list[dict[str, Any]]:
        """Every charge as a JSON-ready dict (:meth:`StoredCharge.to_dict`), oldest first."""
        return [c.to_dict() for c in self.charges]
