"""The privacy ledger: every release is charged here.

Composition is *basic* (sequential) composition: k mechanisms that are
(ε_i, δ_i)-DP are jointly (Σε_i, Σδ_i)-DP (Dwork & Roth 2014, Theorem 3.16).  It
is valid for any mix of mechanisms and any adaptivity, and loose for many small
Gaussian charges.  A tighter accountant (dp-accounting's RDP or PLD accountants,
which need the mechanism *type and noise*, not just (ε, δ)) can replace it later:
all of the composition lives in :meth:`Ledger._compose`, so a subclass or a
future version swaps that one method.

The policy and the store
------------------------
:class:`Ledger` is the *policy*, written once: what may be charged ((ε, δ) checked, the
process allowed), composition and the budget, the refusals and their messages, the ``spend``
protocol (charge first, then the data; withheld when the block raises) and what a record
means.  It keeps its charges in a *store* (:class:`~dpopt.privacy.ledger_store.LedgerStore`), which
only reads, appends and re-labels records under a lock:
:class:`~dpopt.privacy.ledger_store.MemoryStore` (a list and a thread lock, this process only), or
:class:`~dpopt.privacy.sqlite_store.SQLiteStore` (a file and its write transactions, shared by
processes).

Charges are never refunded.  When a mechanism ran but released nothing (an
uncertified oracle, an exception after the noise was drawn), the charge stays
spent and is marked ``released=False``: the noise was drawn and the computation
touched the data, and whether it failed can itself depend on the data.

Processes
---------
An in-memory :class:`Ledger` is charged only in the process that created it.  A copy
made in that process (a pickle round trip, :func:`copy.deepcopy`) *is* the ledger
itself, so every object that holds it charges one budget.  A copy in another process
(pickled to a joblib/loky, multiprocessing, ``concurrent.futures`` or Dask worker, or
inherited by a fork) refuses to be charged — it would spend a budget of its own that
the caller never sees — with a :class:`~dpopt.errors.LedgerProcessError`, before any
data is read.  The process-wide default ledger (:class:`DefaultLedger`) also refuses
inside a worker process, where it is a fresh ledger of that worker.  To charge one
budget from several processes, use :class:`~dpopt.privacy.sqlite_ledger.SQLiteLedger`,
which crosses processes by its file path.

What a charge records
---------------------
Every :class:`~dpopt.privacy.ledger_store.Charge` holds its (ε, δ), the mechanism's name, a label
(the problem's public summary) and, when the caller says so with :func:`charge_context`, the *model*
(a script path or a name), the *solver* asked for and the *command line*: ``dpopt solve`` sets all
three, so a ledger says which run spent what.  All of them are the caller's own public inputs;
nothing computed from data goes into a charge.

Spending on the default ledger
------------------------------
The default ledger has no budget: it records and refuses nothing.  So that a long session
does not spend without noticing, it warns once per process
(:class:`~dpopt.errors.SpendingWarning`) when the ε it has charged passes
:data:`SPENDING_WARNING_EPSILON` (10): the same public line above which one guarantee protects
no one (:data:`~dpopt.privacy.strength.LARGE_EPSILON`), since by basic composition runs on the
same data are jointly as private as their total.  The warning reads only the amounts charged.
"""

from __future__ import annotations

import contextlib
import math
import multiprocessing
import os
import sys
import threading
import time as _time
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from dpopt.errors import (
    BudgetExceededError,
    LedgerProcessError,
    PrivacyParameterError,
    SpendingWarning,
)
from dpopt.privacy.calibration import Budget, budget_pair, check_epsilon_delta
from dpopt.privacy.ledger_store import SHARE_HINT, Charge, LedgerStore, MemoryStore, Status
from dpopt.privacy.strength import LARGE_EPSILON

__all__ = [
    "PROVENANCE_FIELDS",
    "SPENDING_WARNING_EPSILON",
    "DefaultLedger",
    "Ledger",
    "Spend",
    "charge_context",
    "charge_provenance",
    "worker_process",
]

_REL_TOL = 1e-12
#: the default ledger warns once per process when the ε it has charged passes this (module docstring)
SPENDING_WARNING_EPSILON: float = LARGE_EPSILON
#: what a charge records about the run besides its cost, mechanism and label (:func:`charge_context`)
PROVENANCE_FIELDS = ("model", "solver", "command")
_PROVENANCE: ContextVar[tuple[str, str, str]] = ContextVar("dpopt_charge_provenance", default=("", "", ""))
#: where warnings should not point (the ledger's callers inside dpopt, and contextlib's spend)
_INTERNAL_DIRS = (os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep,
                  os.path.abspath(contextlib.__file__))


@contextmanager
def charge_context(*, model: str | None = None, solver: str | None = None,
                   command: str | None = None) -> Iterator[None]:
    """Record ``model``, ``solver`` and ``command`` with every charge made inside the block.

    Charges made in this thread (or asyncio task) inside the block, on any ledger, carry
    these values (:class:`~dpopt.privacy.ledger_store.Charge`; an
    :class:`~dpopt.privacy.sqlite_ledger.SQLiteLedger` stores them in its file).  ``dpopt solve``
    wraps its run in one.  A value left None keeps the enclosing block's (empty outside every
    block).  Give public facts only: they are stored and printed as they are.

    Parameters
    ----------
    model : str, optional
        The model: a script path or a name.
    solver : str, optional
        The solver asked for (a backend name, a profile path, ``"auto"``).
    command : str, optional
        The command line that started the run.

    Raises
    ------
    PrivacyParameterError
        A value that is not a string or None.

    Examples
    --------
    >>> ledger = Ledger()
    >>> with charge_context(model="models/ridge.py", solver="clarabel"):
    ...     entry = ledger.charge(0.5, 0.0, mechanism="output perturbation")
    >>> entry.model, entry.solver, entry.command
    ('models/ridge.py', 'clarabel', '')
    """
    outer = _PROVENANCE.get()
    values = []
    for name, value, kept in zip(PROVENANCE_FIELDS, (model, solver, command), outer, strict=True):
        if value is not None and not isinstance(value, str):
            raise PrivacyParameterError(f"charge_context: {name} must be a string or None, "
                                        f"got {type(value).__name__}")
        values.append(kept if value is None else value)
    token = _PROVENANCE.set((values[0], values[1], values[2]))
    try:
        yield
    finally:
        _PROVENANCE.reset(token)


def charge_provenance() -> dict[str, str]:
    """The ``model``, ``solver`` and ``command`` that a charge made now records (:func:`charge_context`)."""
    return dict(zip(PROVENANCE_FIELDS, _PROVENANCE.get(), strict=True))


class Spend:
    """The handle of a charge made by :meth:`Ledger.spend` (the data may now be touched).

    Attributes
    ----------
    charge : Charge
        The recorded entry (replaced by its unreleased copy after :meth:`withhold`).
    """

    def __init__(self, ledger: Ledger, charge: Charge) -> None:
        self._ledger = ledger
        self.charge = charge
        self.withheld = False

    def withhold(self) -> None:
        """Mark the charge as not released; the budget stays spent."""
        self.charge = self._ledger.mark_unreleased(self.charge)
        self.withheld = True


def check_budget(value: float | None, name: str, *, allow_zero: bool) -> float | None:
    if value is None:
        return None
    allowed = "[0, 1)" if allow_zero else "(0, inf)"
    try:
        if allow_zero:
            return check_epsilon_delta(1.0, value, allow_zero_delta=True)[1]
        return check_epsilon_delta(value, 0.0)[0]
    except PrivacyParameterError:
        raise PrivacyParameterError(
            f"{name} must be None (no limit) or a finite number in {allowed}, got {value!r}"
        ) from None


def provenance_text(charge: Charge) -> str:
    """`` (model M, solver S)`` for a charge that records them, empty otherwise (for summaries)."""
    parts = [f"{name} {' '.join(value.split())}" for name, value in
             (("model", charge.model), ("solver", charge.solver)) if value]
    return f" ({', '.join(parts)})" if parts else ""


def _user_stacklevel() -> int:
    """The ``warnings.warn`` stacklevel, seen from its caller, of the first frame outside dpopt."""
    level, frame = 1, sys._getframe(1)
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_INTERNAL_DIRS):
        frame, level = frame.f_back, level + 1
    return level


def format_budget(eps: float | None, delta: float | None) -> str:
    e = "unlimited" if eps is None else f"{eps:.6g}"
    d = "unlimited" if delta is None else f"{delta:.6g}"
    return f"(ε={e}, δ={d})"


def worker_process() -> str | None:
    """What kind of worker the current process (or thread) is, or None for a main process.

    A child started by :mod:`multiprocessing` — which covers ``concurrent.futures``
    process pools, joblib's loky and multiprocessing backends and Dask's nanny-started
    workers — has a parent process (:func:`multiprocessing.parent_process`); a task of a
    Dask worker (also one without a nanny, or one running in threads of this process)
    finds its worker with ``distributed.get_worker()`` (checked only when
    ``distributed`` is already imported).  A script's main process, ``python -m dpopt``,
    pytest and its xdist workers (started by execnet, not multiprocessing) are not
    workers.

    Returns
    -------
    str or None
        A short description of the worker, for messages.
    """
    distributed = sys.modules.get("distributed")
    if distributed is not None:
        try:
            distributed.get_worker()
        except (ValueError, AttributeError):
            pass
        else:
            return "task of a Dask worker"
    if multiprocessing.parent_process() is not None:
        return ("worker process started by multiprocessing (a joblib/loky, multiprocessing or "
                "concurrent.futures pool, or a Dask nanny)")
    return None


class Ledger:
    """A thread-safe privacy accountant with an optional (ε, δ) budget.

    Parameters
    ----------
    epsilon_budget : float or None, default None
        Total ε allowed (finite, > 0); None for no limit (the ledger only records).
    delta_budget : float or None, default None
        Total δ allowed, in [0, 1) (0 allows pure-DP charges only); None for no limit.

    Notes
    -----
    Composition is basic composition, ``spent = (Σε, Σδ)``, computed by
    :meth:`_compose`.  A charge that would take ``spent`` above a budget is
    refused (:class:`~dpopt.errors.BudgetExceededError`) and nothing is recorded.
    A relative tolerance of 1e-12 lets a budget be spent exactly in pieces (ten
    charges of 0.1 against a budget of 1.0).  It is charged only in the process that
    created it: unpickled or deep-copied in that process it is the same object; a copy
    in any other process (a worker of joblib, multiprocessing, ``concurrent.futures`` or
    Dask, or a fork) can be read but refuses :meth:`charge`, :meth:`spend`,
    :meth:`require` and :meth:`can_afford` with :class:`~dpopt.errors.LedgerProcessError`
    (:meth:`check_process`), since its charges would never reach the original's budget.
    For a budget shared by processes and kept across runs, use
    :class:`~dpopt.privacy.sqlite_ledger.SQLiteLedger`.

    This class is the ledger's policy; its charges live in a
    :class:`~dpopt.privacy.ledger_store.LedgerStore` (here a
    :class:`~dpopt.privacy.ledger_store.MemoryStore`;
    :class:`~dpopt.privacy.sqlite_ledger.SQLiteLedger` is this policy over an SQLite file).

    Examples
    --------
    >>> ledger = Ledger(epsilon_budget=1.0, delta_budget=1e-6)
    >>> _ = ledger.charge(0.5, 1e-7, label="mean", mechanism="gaussian")
    >>> ledger.remaining
    (0.5, 9e-07)
    """

    def __init__(
        self, epsilon_budget: float | None = None, delta_budget: float | None = None
    ) -> None:
        self._attach(MemoryStore(), (epsilon_budget, delta_budget))

    def _attach(self, store: LedgerStore, budget: tuple[float | None, float | None]) -> None:
        """Use ``store`` with the budget ``(ε, δ)`` (checked; None is no limit)."""
        self._epsilon_budget = check_budget(budget[0], "epsilon_budget", allow_zero=False)
        self._delta_budget = check_budget(budget[1], "delta_budget", allow_zero=True)
        self._store = store

    # -- processes and pickling -----------------------------------------------------------
    def check_process(self) -> None:
        """Raise unless this ledger can be charged from the current process (module docstring).

        Raises
        ------
        LedgerProcessError
            For a copy of an in-memory ledger in another process (pickled to a worker, or
            inherited by a fork), or an unpickled copy whose original is not alive in this process.
        """
        self._store.check_process()

    def __reduce__(self) -> tuple[object, ...]:
        """Pickle as its store says (an in-memory ledger unpickled in its own process is itself)."""
        return self._store.pickled(self)

    def __getstate__(self) -> dict[str, object]:
        return self.__dict__.copy()

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)

    # -- composition ------------------------------------------------------------------
    def _compose(self, charges: Sequence[Charge]) -> tuple[float, float]:
        """Total (ε, δ) of ``charges`` under basic composition (Σε, Σδ).

        Override (or replace) this method to use a tighter accountant.
        """
        return (
            math.fsum(c.epsilon for c in charges),
            math.fsum(c.delta for c in charges),
        )

    def _fits(self, epsilon: float, delta: float, charges: Sequence[Charge]) -> bool:
        probe = Charge(epsilon, delta, "", "", True, 0.0)
        eps_total, delta_total = self._compose([*charges, probe])
        if self._epsilon_budget is not None and eps_total > self._epsilon_budget * (1.0 + _REL_TOL):
            return False
        if self._delta_budget is not None and delta_total > self._delta_budget * (1.0 + _REL_TOL):
            return False
        return True

    def _refusal(self, epsilon: float, delta: float, charges: Sequence[Charge], what: str) -> str:
        spent = self._compose(charges)
        return (
            f"{self._store.where}{what} {format_budget(epsilon, delta)} would exceed the privacy budget "
            f"{format_budget(self._epsilon_budget, self._delta_budget)}: already spent {format_budget(*spent)}, "
            f"remaining {format_budget(*self._remaining(spent))}. Lower epsilon/delta, or use a ledger "
            "with a larger budget (a budget should be fixed before looking at the data)."
        )

    def _remaining(self, spent: tuple[float, float]) -> tuple[float | None, float | None]:
        eps = None if self._epsilon_budget is None else max(self._epsilon_budget - spent[0], 0.0)
        dlt = None if self._delta_budget is None else max(self._delta_budget - spent[1], 0.0)
        return eps, dlt

    def _before_charge(self, epsilon: float, delta: float) -> None:
        """Called with a checked (ε, δ) before each charge is recorded (nothing by default)."""

    def _record(self, epsilon: float | Budget, delta: float | None, *, label: str, mechanism: str, status: Status,
                parameters: Mapping[str, Any] | None) -> Charge:
        """Check and record one charge in one transaction of the store (the door of :meth:`charge` and :meth:`spend`)."""
        self.check_process()
        eps, dlt = budget_pair(epsilon, delta)
        stored = self._store.encode_parameters(parameters)
        self._before_charge(eps, dlt)
        provenance = charge_provenance()
        with self._store.transaction() as charges:
            if not self._fits(eps, dlt, charges):
                raise BudgetExceededError(self._refusal(eps, dlt, charges, "a charge of"))
            entry = Charge(eps, dlt, str(label), str(mechanism), status == "released", _time.time(), **provenance)
            return self._store.append(entry, status, stored)

    # -- public API -------------------------------------------------------------------
    def charge(
        self,
        epsilon: float | Budget,
        delta: float | None = None,
        *,
        label: str = "",
        mechanism: str = "",
        released: bool = True,
        parameters: Mapping[str, Any] | None = None,
    ) -> Charge:
        """Record a charge of (ε, δ) and return it.

        The charge also records the ``model``, ``solver`` and ``command`` of the enclosing
        :func:`charge_context` (empty outside one).

        Parameters
        ----------
        epsilon, delta : float
            The cost: a pair, validated with :func:`~dpopt.privacy.check_epsilon_delta`, or one
            :class:`~dpopt.privacy.calibration.Budget` (valid by construction: the run pipeline
            passes the mechanism's checked level) without ``delta``.
        label : str, optional
            What was computed (no data values).
        mechanism : str, optional
            The mechanism's name.
        released : bool, default True
            Whether the output is released (see :meth:`mark_unreleased`).
        parameters : mapping, optional
            The mechanism's public parameters; kept by persistent ledgers
            (:class:`~dpopt.privacy.sqlite_ledger.SQLiteLedger`), not by this in-memory one.

        Returns
        -------
        Charge
            The recorded entry.

        Raises
        ------
        PrivacyParameterError
            For invalid (ε, δ) (or parameters a persistent ledger cannot store).
        BudgetExceededError
            If the charge would exceed a budget; nothing is recorded then.
        LedgerProcessError
            In a process that cannot charge this ledger (:meth:`check_process`).
        LedgerError
            If a ledger file cannot be written (e.g. locked past its timeout).
        """
        return self._record(epsilon, delta, label=label, mechanism=mechanism,
                            status="released" if released else "withheld", parameters=parameters)

    @contextmanager
    def spend(self, epsilon: float | Budget, delta: float | None = None, *, label: str = "", mechanism: str = "",
              parameters: Mapping[str, Any] | None = None) -> Iterator[Spend]:
        """Charge (ε, δ) now, for a computation that touches the data inside the block.

        Every mechanism runs through this one door: public checks first (outside the
        block, nothing charged), then ``with ledger.spend(...)``, then the data.  If the
        block raises, the charge stays spent and is marked unreleased (whether it raised
        can depend on the data); the block can also :meth:`Spend.withhold` it.  A store
        that outlives its process (an SQLite file) records the charge ``pending`` until the
        block ends, so a process killed inside it leaves a pending charge, spent all the same.

        Raises
        ------
        PrivacyParameterError, BudgetExceededError, LedgerProcessError, LedgerError
            As :meth:`charge`, before the block runs (nothing is charged then).
        """
        status: Status = "pending" if self._store.keeps_pending else "released"
        handle = Spend(self, self._record(epsilon, delta, label=label, mechanism=mechanism, status=status,
                                          parameters=parameters))
        try:
            yield handle
        except BaseException:
            handle.withhold()
            raise
        if status == "pending" and not handle.withheld:
            handle.charge = self._store.set_status(handle.charge, "released", only_from=("pending",))

    def can_afford(self, epsilon: float | Budget, delta: float | None = None) -> bool:
        """Whether a charge of (ε, δ) would currently fit in the budget (another thread or
        process may spend first).

        Raises
        ------
        PrivacyParameterError
            For invalid (ε, δ).
        LedgerProcessError
            In a process that cannot charge this ledger (:meth:`check_process`).
        """
        self.check_process()
        eps, dlt = budget_pair(epsilon, delta)
        return self._fits(eps, dlt, self._store.read())

    def require(self, epsilon: float | Budget, delta: float | None = None) -> None:
        """Raise unless a charge of (ε, δ) would currently fit; charge nothing.

        Use it to fail before any work.  It does not reserve budget: another thread
        may spend it before :meth:`charge` is called, and ``charge`` checks again.

        Raises
        ------
        PrivacyParameterError
            For invalid (ε, δ).
        BudgetExceededError
            If the charge would not fit.
        LedgerProcessError
            In a process that cannot charge this ledger (:meth:`check_process`): the
            first check of every run, before any data is read.
        """
        self.check_process()
        eps, dlt = budget_pair(epsilon, delta)
        charges = self._store.read()
        if not self._fits(eps, dlt, charges):
            raise BudgetExceededError(self._refusal(eps, dlt, charges, "a request of"))

    def mark_unreleased(self, charge: Charge) -> Charge:
        """Mark a recorded charge as not released (withheld); the budget stays spent.

        Parameters
        ----------
        charge : Charge
            An entry returned by :meth:`charge` or :meth:`spend` on this ledger (for a
            ledger file, also by another object on the same file and dataset).

        Returns
        -------
        Charge
            The replacement entry (a copy with ``released=False``).

        Raises
        ------
        PrivacyParameterError
            If ``charge`` is not an entry of this ledger.
        """
        return self._store.set_status(charge, "withheld", only_from=("pending", "released"))

    @property
    def epsilon_budget(self) -> float | None:
        """The ε budget (None: unlimited)."""
        return self._epsilon_budget

    @property
    def delta_budget(self) -> float | None:
        """The δ budget (None: unlimited)."""
        return self._delta_budget

    @property
    def spent(self) -> tuple[float, float]:
        """(ε, δ) spent so far by every charge (pending, released and withheld), under :meth:`_compose`."""
        return self._compose(self._store.read())

    @property
    def remaining(self) -> tuple[float | None, float | None]:
        """(ε, δ) left, each None when that budget is unlimited (never negative)."""
        return self._remaining(self._compose(self._store.read()))

    @property
    def charges(self) -> tuple[Charge, ...]:
        """All charges, oldest first (released or not)."""
        return self._store.read()

    @property
    def own_charges(self) -> tuple[Charge, ...]:
        """The charges made through this object in this process, oldest first (they only grow).

        For an in-memory ledger these are all its charges (only its own process charges
        it); a persistent ledger shared with other objects and processes returns only its
        own, so a caller can tell the charge its run made from anyone else's.
        """
        return self._store.own()

    def summary(self) -> str:
        """A readable multi-line account: budget, spent, remaining and every charge."""
        charges = self._store.read()
        spent = self._compose(charges)
        pending = sum(c.status == "pending" for c in charges)
        lines = [
            f"{self._store.title()} (basic composition): budget "
            f"{format_budget(self._epsilon_budget, self._delta_budget)}",
            f"  spent     {format_budget(*spent)} in {len(charges)} charge(s)"
            + (f", {pending} pending" if pending else ""),
            f"  remaining {format_budget(*self._remaining(spent))}",
        ]
        for k, c in enumerate(charges, 1):
            name = c.mechanism or "-"
            label = f" {'; '.join(c.label.splitlines())}" if c.label else ""
            body = f"ε={c.epsilon:.6g} δ={c.delta:.6g}  {name}{label}{provenance_text(c)}"
            lines.append(self._store.entry_line(k, c, body))
        return "\n".join(lines)

    def __repr__(self) -> str:
        charges = self._store.read()
        return (f"{self._store.repr_head()}budget={format_budget(self._epsilon_budget, self._delta_budget)}, "
                f"spent={format_budget(*self._compose(charges))}, charges={len(charges)})")


class DefaultLedger(Ledger):
    """The process-wide ledger of mechanisms given none (:func:`dpopt.default_ledger`).

    An unlimited in-memory :class:`Ledger` that also refuses to be charged inside a
    worker process (:func:`worker_process`): every worker imports dpopt afresh and so has
    a default ledger of its own, which the caller's budget would never see.

    It warns once (:class:`~dpopt.errors.SpendingWarning`, before the charge that does it)
    when the ε it has charged passes :data:`SPENDING_WARNING_EPSILON`; the process has one
    default ledger, so that is once per process.  The warning reads only the amounts charged.
    """

    def __init__(self) -> None:
        super().__init__()
        self._spending_warned = False
        self._warn_lock = threading.Lock()

    def __getstate__(self) -> dict[str, object]:
        state = super().__getstate__()
        del state["_warn_lock"]
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        super().__setstate__(state)
        self._warn_lock = threading.Lock()

    def _before_charge(self, epsilon: float, delta: float) -> None:
        """Warn once, before the charge that takes the total ε above the threshold.

        Warns
        -----
        SpendingWarning
            Once, before the charge that takes the total ε above the threshold.  Turned into
            an error by a warnings filter, it refuses that charge (nothing is recorded) and
            the next charge warns again.
        """
        with self._warn_lock:
            total = self._compose([*self._store.read(), Charge(epsilon, delta, "", "", True, 0.0)])
            warn = not self._spending_warned and total[0] > SPENDING_WARNING_EPSILON
            self._spending_warned = self._spending_warned or warn
        if warn:
            try:
                warnings.warn(
                    f"with this charge the default ledger's total in this process reaches ε = {total[0]:.6g} "
                    f"(δ = {total[1]:.6g}), above {SPENDING_WARNING_EPSILON:g}: it has no budget and refuses nothing; "
                    "fix a budget before looking at the data and pass it to each mechanism, "
                    "ledger=dp.Ledger(epsilon_budget=..., delta_budget=...) (or dp.SQLiteLedger(path, "
                    "dataset=..., create=True, epsilon_budget=...) to keep it across runs)",
                    SpendingWarning, stacklevel=_user_stacklevel())
            except BaseException:  # a filter made it an error: nothing charged, warn again next time
                with self._warn_lock:
                    self._spending_warned = False
                raise

    def check_process(self) -> None:
        """As :meth:`Ledger.check_process`, and refuse in a worker process too.

        Raises
        ------
        LedgerProcessError
            In another process than the one that created it, or in a worker process.
        """
        worker = worker_process()
        if worker is None:
            try:
                self._store.check_process()
            except LedgerProcessError:
                worker = "forked or unpickled copy of it"
        if worker is not None:
            raise LedgerProcessError(
                f"the default ledger cannot be charged in a {worker} (process {os.getpid()}): each worker "
                f"has a default ledger of its own, which the caller's budget never sees; {SHARE_HINT}"
            )
