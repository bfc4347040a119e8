"""The store of a privacy ledger kept in an SQLite file, shared by processes.

One file holds several *datasets*, each with its (ε, δ) budget and every charge
made against it.  :class:`SQLiteStore` keeps the charges of one dataset: it implements the
small :class:`~dpopt.privacy.ledger_store.LedgerStore` interface on the file, under
:class:`~dpopt.privacy.ledger.Ledger`'s policy (:class:`~dpopt.privacy.sqlite_ledger.SQLiteLedger`
is that policy over this store).  Two ledgers on the same file and dataset — in one process or
in many — see and respect each other's charges.

Atomicity
---------
A charge is one SQLite transaction: ``BEGIN IMMEDIATE`` (the file's single write
lock; other writers wait up to ``timeout`` seconds) → read the dataset's charges →
check the budget with :meth:`Ledger._compose` and Ledger's relative tolerance →
insert → ``COMMIT``.  Concurrent processes therefore cannot overspend together, and
a charge is committed before :meth:`~dpopt.privacy.sqlite_ledger.SQLiteLedger.spend` yields, i.e. before any data
is touched.

Status of a charge
------------------
``spend`` records its charge as ``pending``, then marks it ``released`` when the
block ends normally, or ``withheld`` when the block calls :meth:`Spend.withhold` or
raises.  A process killed inside the block leaves the row ``pending``; it counts as
spent like every other row (charges are never refunded).  A stored charge's
``released`` attribute is True only for status ``released``: a ``pending`` charge is
not known to have been released.  :meth:`SQLiteLedger.history` and the
:class:`StoredCharge` entries give the status itself.

Only the time of the charge (taken before the data is touched) is stored; the time a
block ended is not, since a run's duration can depend on the data.

What a row records
------------------
Each row holds the dataset, (ε, δ), the mechanism, the label, the public parameters, the time,
the status and the run's ``model``, ``solver`` and ``command`` (set by
:func:`~dpopt.privacy.ledger.charge_context`; ``dpopt solve`` sets them; NULL, read as empty,
when none was given).  Nothing computed from data is stored.

The file layout (schema version 1)
----------------------------------
The ``model``, ``solver`` and ``command`` columns were added to version 1 without changing its
number: opening a file without them adds them (``ALTER TABLE charges ADD COLUMN``, one write
transaction; old rows read as empty), so dpopt versions before them still read and write it.  A
file that cannot be written (read-only) is read as it is, with the three fields empty.

Datasets are never created by accident
--------------------------------------
``SQLiteLedger(path, dataset=...)`` attaches to a dataset the file already holds; a
name the file does not hold is refused (the message lists the names it has and
suggests a close one), unless the call says ``create=True`` and gives the budget.

Processes
---------
The object pickles as its absolute file path, dataset, budget and the file's random
``ledger_id`` (kept in the ``meta`` table): in a worker process it reopens the same
file — never creating anything — and refuses a file with another id.  Charges made in
workers land in the one file, once each.
"""

from __future__ import annotations

import difflib
import json
import math
import os
import secrets
import sqlite3
import threading
import time as _time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from dpopt.errors import LedgerError, PrivacyParameterError
from dpopt.privacy.ledger import PROVENANCE_FIELDS, format_budget
from dpopt.privacy.ledger_store import Charge, Pickled, Status, restore_ledger

__all__ = ["DEFAULT_TIMEOUT", "SCHEMA_VERSION", "SQLiteStore", "StoredCharge", "iso_time"]

#: version of the file layout this module reads and writes (``meta`` table)
SCHEMA_VERSION = 1
DEFAULT_TIMEOUT = 30.0
_INIT_HINT = "dpopt ledger init FILE --dataset NAME --epsilon E --delta D"

_SCHEMA = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE datasets (name TEXT PRIMARY KEY, epsilon_budget REAL, delta_budget REAL, "
    "created REAL NOT NULL)",
    "CREATE TABLE charges (id INTEGER PRIMARY KEY AUTOINCREMENT, "
    "dataset TEXT NOT NULL REFERENCES datasets(name), epsilon REAL NOT NULL, delta REAL NOT NULL, "
    "mechanism TEXT NOT NULL, label TEXT NOT NULL, parameters TEXT, time REAL NOT NULL, "
    "status TEXT NOT NULL CHECK (status IN ('pending', 'released', 'withheld')), "
    "model TEXT, solver TEXT, command TEXT)",
    "CREATE INDEX charges_by_dataset ON charges (dataset, id)",
)
_BASE_COLUMNS = "id, dataset, epsilon, delta, label, mechanism, status, time, parameters"


@dataclass(frozen=True)
class StoredCharge(Charge):
    """A :class:`~dpopt.privacy.ledger.Charge` read from (or written to) an SQLite ledger.

    Attributes
    ----------
    id : int
        The row id in the file (identifies the charge for :meth:`SQLiteLedger.mark_unreleased`).
    status : {'pending', 'released', 'withheld'}
        ``released`` is True only for ``'released'``.
    dataset : str
        The dataset the charge was made against.
    parameters : dict or None
        Public parameters recorded with the charge (not compared or hashed).
    """

    id: int = 0
    status: str = "released"
    dataset: str = ""
    parameters: dict[str, Any] | None = field(default=None, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """The entry as a JSON-ready dict (``time`` also as ISO 8601 UTC, ``time_iso``)."""
        out = asdict(self)
        out["time_iso"] = iso_time(self.time)
        return out


def iso_time(seconds: float) -> str:
    """``time.time()`` seconds as an ISO 8601 UTC timestamp (second precision)."""
    return _time.strftime("%Y-%m-%dT%H:%M:%SZ", _time.gmtime(seconds))


def _check_dataset(dataset: object) -> str:
    if not isinstance(dataset, str) or not dataset.strip():
        raise PrivacyParameterError(f"dataset must be a non-empty string naming the data, got {dataset!r}")
    return dataset


def _params_text(parameters: Mapping[str, Any] | None) -> str | None:
    if parameters is None:
        return None
    if not isinstance(parameters, Mapping):
        raise PrivacyParameterError(
            f"parameters must be a dict of public values or None, got {type(parameters).__name__}"
        )

    def plain(value: Any) -> Any:
        return value.tolist() if hasattr(value, "tolist") else str(value)

    return json.dumps(dict(parameters), sort_keys=True, default=plain)


def _row_charge(row: Sequence[Any]) -> StoredCharge:
    rid, dataset, eps, dlt, label, mechanism, status, stamp, params, model, solver, command = row
    return StoredCharge(
        epsilon=float(eps), delta=float(dlt), label=label, mechanism=mechanism,
        released=status == "released", time=float(stamp), id=int(rid), status=status,
        dataset=dataset, parameters=None if params is None else json.loads(params),
        model=model or "", solver=solver or "", command=command or "",
    )


def _charge_columns(conn: sqlite3.Connection) -> set[str]:
    return {r[1] for r in conn.execute("PRAGMA table_info(charges)")}


def _select(conn: sqlite3.Connection) -> str:
    """The column list of :func:`_row_charge` (the provenance as NULL in a file not yet migrated)."""
    if set(PROVENANCE_FIELDS) <= _charge_columns(conn):
        extra = ", ".join(PROVENANCE_FIELDS)
    else:
        extra = ", ".join("NULL" for _ in PROVENANCE_FIELDS)
    return f"{_BASE_COLUMNS}, {extra}"


def _add_columns(conn: sqlite3.Connection) -> None:
    """Add the provenance columns a version-1 file written before them lacks (one transaction)."""
    with _immediate(conn):
        have = _charge_columns(conn)  # another process may have added them meanwhile
        for name in PROVENANCE_FIELDS:
            if name not in have:
                conn.execute(f"ALTER TABLE charges ADD COLUMN {name} TEXT")


def _migrate(conn: sqlite3.Connection) -> None:
    """Bring a version-1 file up to date; a file that cannot be written is left as it is (read-only use)."""
    if set(PROVENANCE_FIELDS) <= _charge_columns(conn):
        return
    try:
        _add_columns(conn)
    except sqlite3.OperationalError as exc:
        if not _read_only(exc):
            raise


def _read_only(exc: sqlite3.Error) -> bool:
    """Whether ``exc`` says the file cannot be written."""
    return getattr(exc, "sqlite_errorname", "").startswith("SQLITE_READONLY") or "readonly" in str(exc)


# -- the file ------------------------------------------------------------------------------
def _db_error(path: str, exc: sqlite3.Error) -> LedgerError:
    """A one-line dpopt error for an sqlite3 failure on ``path``."""
    name = getattr(exc, "sqlite_errorname", "")
    if name == "SQLITE_NOTADB" or "not a database" in str(exc):
        return LedgerError(f"{path} is not an SQLite database (not a dpopt ledger file); "
                           f"create a ledger with: {_INIT_HINT}")
    if _read_only(exc):
        return LedgerError(f"ledger file {path} cannot be written (read-only); charging needs write access "
                           "to the file and its folder (reading it works: dpopt ledger show/history)")
    if name.startswith("SQLITE_BUSY") or "locked" in str(exc):
        return LedgerError(f"ledger file {path} stayed locked by another process past the timeout; "
                           "try again, or pass a larger timeout")
    return LedgerError(f"cannot use ledger file {path}: {exc}")


@contextmanager
def _translated(path: str) -> Iterator[None]:
    try:
        yield
    except sqlite3.Error as exc:
        raise _db_error(path, exc) from None


@contextmanager
def _immediate(conn: sqlite3.Connection) -> Iterator[None]:
    """One write transaction: BEGIN IMMEDIATE … COMMIT (ROLLBACK on any exception)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _connect(path: str, *, create: bool, timeout: float) -> sqlite3.Connection:
    """A connection to a checked ledger file (created with the schema when ``create``)."""
    if not create and not os.path.exists(path):
        raise LedgerError(f"no ledger file {path}; create it with: {_INIT_HINT} (in Python: "
                          "SQLiteLedger(path, dataset=..., create=True, epsilon_budget=...))")
    if os.path.isdir(path):
        raise LedgerError(f"{path} is a directory, not a ledger file")
    uri = Path(path).absolute().as_uri() + ("?mode=rwc" if create else "?mode=rw")
    with _translated(path):
        conn = sqlite3.connect(uri, uri=True, timeout=timeout, isolation_level=None,
                               check_same_thread=False)
    try:
        with _translated(path):
            conn.execute("PRAGMA foreign_keys = ON")
            _ensure_schema(conn, path, create=create)
    except BaseException:
        conn.close()
        raise
    return conn


def _tables(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def _ensure_schema(conn: sqlite3.Connection, path: str, *, create: bool) -> None:
    tables = _tables(conn)  # raises SQLITE_NOTADB for a file that is not a database
    if "meta" not in tables:
        if tables:
            raise LedgerError(f"{path} is an SQLite database but not a dpopt ledger file (no meta table)")
        if not create:
            raise LedgerError(f"{path} holds no ledger; create it with: {_INIT_HINT}")
        with _immediate(conn):
            if "meta" not in _tables(conn):  # another process may have created it meanwhile
                for statement in _SCHEMA:
                    conn.execute(statement)
                conn.execute("INSERT INTO meta VALUES ('schema_version', ?), ('application', 'dpopt ledger'), "
                             "('ledger_id', ?)", (str(SCHEMA_VERSION), secrets.token_hex(16)))
    row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    if row is None or row[0] != str(SCHEMA_VERSION):
        found = "none" if row is None else repr(row[0])
        raise LedgerError(f"ledger file {path} has schema version {found}; this dpopt reads version "
                          f"{SCHEMA_VERSION} (use the dpopt version that wrote it, or another file)")
    _migrate(conn)


def _stored_budget(conn: sqlite3.Connection, dataset: str) -> tuple[float | None, float | None] | None:
    row = conn.execute("SELECT epsilon_budget, delta_budget FROM datasets WHERE name = ?",
                       (dataset,)).fetchone()
    return None if row is None else (row[0], row[1])


def _dataset_names(conn: sqlite3.Connection) -> tuple[str, ...]:
    return tuple(r[0] for r in conn.execute("SELECT name FROM datasets ORDER BY name"))


def _file_id(conn: sqlite3.Connection) -> str:
    """The file's random ``ledger_id`` (written on first use in files made before it existed)."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'ledger_id'").fetchone()
    if row is None:
        with _immediate(conn):
            conn.execute("INSERT OR IGNORE INTO meta VALUES ('ledger_id', ?)", (secrets.token_hex(16),))
        row = conn.execute("SELECT value FROM meta WHERE key = 'ledger_id'").fetchone()
    return str(row[0])


def _same_name(names: Sequence[str], dataset: str) -> str | None:
    """A stored name equal to ``dataset`` up to case and surrounding spaces, if any."""
    key = dataset.strip().casefold()
    return next((n for n in names if n.strip().casefold() == key), None)


def _did_you_mean(names: Sequence[str], dataset: str) -> str:
    close = _same_name(names, dataset) or next(iter(difflib.get_close_matches(dataset, names, n=1)), None)
    return "" if close is None else f"; did you mean {close!r}?"


def _missing_dataset(conn: sqlite3.Connection, path: str, dataset: str) -> LedgerError:
    names = _dataset_names(conn)
    known = ", ".join(repr(n) for n in names) or "none"
    return LedgerError(f"ledger file {path} has no dataset {dataset!r} (it has: {known}){_did_you_mean(names, dataset)} "
                       f"To create it, pass create=True with epsilon_budget= (and delta_budget=), or run: "
                       f"{_INIT_HINT}")


def _create_dataset(conn: sqlite3.Connection, path: str, dataset: str,
                    budget: tuple[float | None, float | None]) -> tuple[float | None, float | None]:
    """Insert ``dataset`` with ``budget`` (an explicit ε budget; no name that differs only in case)."""
    if budget[0] is None:
        raise PrivacyParameterError(
            f"creating dataset {dataset!r} in ledger file {path} needs an explicit budget: pass "
            "epsilon_budget= (and delta_budget=; None allows any δ), fixed before looking at the data"
        )
    with _immediate(conn):
        stored = _stored_budget(conn, dataset)
        if stored is not None:  # another process created it meanwhile
            return stored
        twin = _same_name(_dataset_names(conn), dataset)
        if twin is not None:
            raise LedgerError(f"ledger file {path} already has dataset {twin!r}; a second budget under "
                              f"the name {dataset!r} would be spent separately: use {twin!r}")
        conn.execute("INSERT INTO datasets VALUES (?, ?, ?, ?)", (dataset, *budget, _time.time()))
    return budget


def _attach(conn: sqlite3.Connection, path: str, dataset: str, budget: tuple[float | None, float | None],
            *, create: bool) -> tuple[float | None, float | None]:
    """The stored budget of ``dataset`` (created with ``budget`` when missing and ``create``)."""
    stored = _stored_budget(conn, dataset)
    if stored is None:
        if not create:
            raise _missing_dataset(conn, path, dataset)
        stored = _create_dataset(conn, path, dataset, budget)
    for given, kept, name in zip(budget, stored, ("epsilon_budget", "delta_budget"), strict=True):
        if given is not None and given != kept:
            raise PrivacyParameterError(
                f"dataset {dataset!r} in ledger file {path} has the budget {format_budget(*stored)}, but {name}="
                f"{given!r} was given; pass the stored budget or None (a budget is fixed once, before "
                "looking at the data), or use another dataset name"
            )
    return stored


class SQLiteStore:
    """The charges of one dataset in an SQLite ledger file: the store of an :class:`SQLiteLedger`.

    One charge is one write transaction (``BEGIN IMMEDIATE`` … ``COMMIT``, module docstring), so
    processes sharing the file cannot overspend together.  The connection is per process: a
    store unpickled or forked into another process reconnects by path on first use and
    checks that the file, the dataset and its budget are the ones it was opened on.
    """

    keeps_pending = True

    @classmethod
    def open(cls, path: str, dataset: str, budget: tuple[float | None, float | None], timeout: float, *,
             create: bool) -> SQLiteStore:
        """The store of ``dataset`` in the file ``path``, created (with ``budget``) when ``create``.

        Raises
        ------
        PrivacyParameterError
            For a bad timeout or dataset name, or a budget that differs from the stored one.
        LedgerError
            When the file or the dataset cannot be used (:class:`~dpopt.privacy.sqlite_ledger.SQLiteLedger`).
        """
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not (
            math.isfinite(timeout) and timeout > 0
        ):
            raise PrivacyParameterError(f"timeout must be a positive number of seconds, got {timeout!r}")
        name = _check_dataset(dataset)
        conn = _connect(path, create=create, timeout=float(timeout))
        try:
            with _translated(path):
                stored = _attach(conn, path, name, budget, create=create)
        except BaseException:
            conn.close()
            raise
        return cls(path, name, stored, float(timeout), conn)

    @staticmethod
    def dataset_names(path: str, timeout: float) -> tuple[str, ...]:
        """The dataset names of an existing ledger file, sorted."""
        conn = _connect(path, create=False, timeout=timeout)
        try:
            with _translated(path):
                return _dataset_names(conn)
        finally:
            conn.close()

    def __init__(self, path: str, dataset: str, budget: tuple[float | None, float | None], timeout: float,
                 conn: sqlite3.Connection | None) -> None:
        self._path, self._dataset, self._budget, self._timeout = path, dataset, budget, timeout
        self._lock = threading.Lock()
        self._conn = conn
        self._conn_pid = os.getpid()
        self._file: str | None = None  # the file's ledger_id, read when first needed
        self._own: list[int] = []  # row ids of the charges this object made

    @property
    def path(self) -> str:
        """The ledger file."""
        return self._path

    @property
    def dataset(self) -> str:
        """The dataset whose charges this store keeps."""
        return self._dataset

    @property
    def budget(self) -> tuple[float | None, float | None]:
        """The dataset's (ε, δ) budget, as the file stores it."""
        return self._budget

    @property
    def where(self) -> str:
        return f"dataset {self._dataset!r} in {self._path}: "

    # -- the connection ----------------------------------------------------------------------
    def _connection(self) -> sqlite3.Connection:
        """This process's connection (call with ``self._lock`` held); a reconnection checks the file."""
        if self._conn is None or self._conn_pid != os.getpid():  # never reuse one across fork
            conn = _connect(self._path, create=False, timeout=self._timeout)
            try:
                with _translated(self._path):
                    self._check_reopened(conn)
            except BaseException:
                conn.close()
                raise
            self._conn, self._conn_pid = conn, os.getpid()
        return self._conn

    def _check_reopened(self, conn: sqlite3.Connection) -> None:
        """Refuse a reopened file that lacks the dataset, has another budget, or another ledger id."""
        stored = _stored_budget(conn, self._dataset)
        if stored is None:
            raise _missing_dataset(conn, self._path, self._dataset)
        if stored != self._budget:
            raise LedgerError(f"dataset {self._dataset!r} in ledger file {self._path} now has the budget "
                              f"{format_budget(*stored)}, not {format_budget(*self._budget)}")
        if self._file is not None and _file_id(conn) != self._file:
            raise LedgerError(f"{self._path} in this process (pid {os.getpid()}) is not the ledger file this "
                              "ledger was opened on (another ledger id): every process must see the same file")

    def close(self) -> None:
        with self._lock:
            if self._conn is not None and self._conn_pid == os.getpid():
                self._conn.close()
            self._conn = None

    # -- the store -------------------------------------------------------------------------
    def check_process(self) -> None:
        """Nothing to refuse: every process charges the one file (it reopens by path)."""

    def encode_parameters(self, parameters: Mapping[str, Any] | None) -> str | None:
        return _params_text(parameters)

    def _read(self, conn: sqlite3.Connection) -> tuple[StoredCharge, ...]:
        rows = conn.execute(f"SELECT {_select(conn)} FROM charges WHERE dataset = ? ORDER BY id",
                            (self._dataset,))
        return tuple(_row_charge(r) for r in rows)

    def read(self) -> tuple[StoredCharge, ...]:
        with self._lock, _translated(self._path):
            return self._read(self._connection())

    def own(self) -> tuple[StoredCharge, ...]:
        own = set(self._own)
        return tuple(c for c in self.read() if c.id in own)

    @contextmanager
    def transaction(self) -> Iterator[Sequence[Charge]]:
        with self._lock, _translated(self._path):
            conn = self._connection()
            if not set(PROVENANCE_FIELDS) <= _charge_columns(conn):
                _add_columns(conn)  # left out when the file was opened read-only: fails here with why
            with _immediate(conn):
                yield self._read(conn)

    def append(self, charge: Charge, status: Status, parameters: Any) -> StoredCharge:
        """Insert the row (inside :meth:`transaction`)."""
        assert self._conn is not None
        cursor = self._conn.execute(
            "INSERT INTO charges (dataset, epsilon, delta, mechanism, label, parameters, time, status, "
            "model, solver, command) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (self._dataset, charge.epsilon, charge.delta, charge.mechanism, charge.label, parameters, charge.time,
             status, *(getattr(charge, name) or None for name in PROVENANCE_FIELDS)),
        )
        rid = cursor.lastrowid
        assert rid is not None
        self._own.append(rid)
        return StoredCharge(**{f.name: getattr(charge, f.name) for f in fields(Charge)}, id=rid, status=status,
                            dataset=self._dataset, parameters=None if parameters is None else json.loads(parameters))

    def set_status(self, charge: Charge, status: Status, only_from: tuple[Status, ...]) -> StoredCharge:
        if not isinstance(charge, StoredCharge) or charge.dataset != self._dataset:
            raise PrivacyParameterError(
                "mark_unreleased: that charge is not recorded in this ledger; pass the Charge returned "
                "by this ledger's charge() or spend()"
            )
        with self._lock, _translated(self._path):
            conn = self._connection()
            with _immediate(conn):
                row = conn.execute(f"SELECT {_select(conn)} FROM charges WHERE id = ? AND dataset = ?",
                                   (charge.id, self._dataset)).fetchone()
                stored = None if row is None else _row_charge(row)
                if stored is None or (stored.epsilon, stored.delta, stored.time, stored.label,
                                      stored.mechanism) != (charge.epsilon, charge.delta, charge.time,
                                                            charge.label, charge.mechanism):
                    raise PrivacyParameterError(
                        f"mark_unreleased: charge id {charge.id} is not recorded in dataset "
                        f"{self._dataset!r} of {self._path}"
                    )
                if stored.status not in only_from:
                    return stored
                conn.execute("UPDATE charges SET status = ? WHERE id = ?", (status, charge.id))
        return replace(stored, status=status, released=status == "released")

    def entry_line(self, number: int, charge: Charge, body: str) -> str:
        assert isinstance(charge, StoredCharge)
        return f"  {charge.id:>4}. {iso_time(charge.time)}  {body}  [{charge.status}]"

    def title(self) -> str:
        return f"SQLiteLedger {self._path} dataset {self._dataset!r}"

    def repr_head(self) -> str:
        return f"SQLiteLedger({self._path!r}, dataset={self._dataset!r}, "

    # -- pickling: the absolute path, dataset, budget, timeout and the file's id --------------
    def pickled(self, ledger: Pickled) -> tuple[object, ...]:
        with self._lock, _translated(self._path):
            if self._file is None:
                self._file = _file_id(self._connection())
        return (restore_ledger, (type(ledger), None, ledger.__getstate__()))

    def __getstate__(self) -> dict[str, object]:
        return {"path": os.path.abspath(self._path), "dataset": self._dataset, "timeout": self._timeout,
                "budget": self._budget, "ledger_id": self._file}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._path, self._dataset, self._timeout = state["path"], state["dataset"], state["timeout"]
        self._budget = tuple(state["budget"])
        self._lock = threading.Lock()
        self._conn, self._conn_pid = None, os.getpid()  # connected on first use, never creating anything
        self._file = state.get("ledger_id")
        self._own = []


