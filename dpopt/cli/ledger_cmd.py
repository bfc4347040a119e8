"""``dpopt ledger``: create and inspect SQLite privacy ledger files.

Commands
--------
``dpopt ledger init FILE --dataset NAME --epsilon E --delta D``
    Create the file (if missing) and the dataset with its budget.  Re-running it with
    the same budget changes nothing; a different budget is refused, and so is a new name
    that differs from a stored one only in case (``Adult`` next to ``adult``).
``dpopt ledger show FILE [--dataset NAME]``
    Budget, spent and remaining per dataset (every dataset by default).
``dpopt ledger history FILE [--dataset NAME]``
    Every charge: id, time (ISO 8601, UTC), dataset, model, mechanism, solver, ε, δ, status,
    label and the command line (``-`` where a charge did not record one: made outside
    ``dpopt solve`` without :func:`~dpopt.privacy.ledger.charge_context`, or before the file
    had those columns).

Everything printed is the ledger's own record (budgets, charges, their public labels,
statuses and the runs' own model paths, solver names and command lines), never data.  User mistakes raise :class:`~dpopt.errors.DpoptError`
subclasses; :mod:`dpopt.cli.main` prints them on one line.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from dpopt.cli.argtypes import positive_float
from dpopt.errors import LedgerError

if TYPE_CHECKING:  # imported when a ledger command runs: building the parser loads no ledger
    from dpopt.privacy.sqlite_ledger import SQLiteLedger

__all__ = ["add_parser", "run"]


def probability(text: str) -> float:
    """An argparse type for a δ: a finite number in [0, 1)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1), got {text!r}") from None
    if not (math.isfinite(value) and 0.0 <= value < 1.0):
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1), got {text!r}")
    return value


def dataset_name(text: str) -> str:
    """An argparse type for a dataset name: a non-empty string."""
    if not text.strip():
        raise argparse.ArgumentTypeError("expected a non-empty dataset name")
    return text


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Add the ``ledger`` command (``init``, ``show``, ``history``) to ``sub``."""
    ledger = sub.add_parser("ledger", help="create and inspect SQLite privacy ledger files",
                            description="Create and inspect SQLite privacy ledger files (one file holds "
                                        "several datasets, each with its budget and charges).")
    actions = ledger.add_subparsers(dest="ledger_command", metavar="ACTION", required=True)

    init = actions.add_parser("init", help="create a dataset with its budget",
                              description="Create FILE (if missing) and DATASET with its (ε, δ) budget. "
                                          "Fix the budget before looking at the data.")
    init.add_argument("file", type=Path, metavar="FILE", help="the ledger file")
    init.add_argument("--dataset", type=dataset_name, required=True, help="dataset name")
    init.add_argument("--epsilon", type=positive_float, required=True, help="ε budget (> 0)")
    init.add_argument("--delta", type=probability, required=True, help="δ budget in [0, 1)")

    for name, text in (("show", "budget, spent and remaining per dataset"),
                       ("history", "every charge, oldest first")):
        cmd = actions.add_parser(name, help=text, description=f"Print the {text} of a ledger file.")
        cmd.add_argument("file", type=Path, metavar="FILE", help="the ledger file")
        cmd.add_argument("--dataset", type=dataset_name, default=None,
                         help="only this dataset (default: every dataset in the file)")


def run(args: argparse.Namespace) -> int:
    """Execute a parsed ``dpopt ledger`` command; returns the exit code (0).

    Raises
    ------
    LedgerError
        A missing or invalid file, or an unknown dataset.
    PrivacyParameterError
        ``init`` with a budget that differs from the stored one.
    """
    if args.ledger_command == "init":
        return _init(args)
    ledgers = _ledgers(args.file, args.dataset)
    if args.ledger_command == "show":
        print(_show(ledgers))
    else:
        print(_history(ledgers))
    return 0


def _init(args: argparse.Namespace) -> int:
    from dpopt.privacy.sqlite_ledger import SQLiteLedger

    try:
        existed = args.dataset in SQLiteLedger.datasets(args.file)
    except LedgerError:  # no file, or not a ledger yet: the constructor creates it or says why not
        existed = False
    ledger = SQLiteLedger(args.file, dataset=args.dataset, epsilon_budget=args.epsilon,
                          delta_budget=args.delta, create=True)
    budget = f"(ε={_num(ledger.epsilon_budget)}, δ={_num(ledger.delta_budget)})"
    if existed:
        print(f"dataset {args.dataset!r} already in {args.file} with budget {budget}; nothing changed")
    else:
        print(f"created dataset {args.dataset!r} in {args.file} with budget {budget}")
    ledger.close()
    return 0


def _ledgers(path: Path, dataset: str | None) -> list[SQLiteLedger]:
    from dpopt.privacy.sqlite_ledger import SQLiteLedger

    names = [dataset] if dataset is not None else list(SQLiteLedger.datasets(path))
    return [SQLiteLedger.open(path, dataset=name) for name in names]


def _num(value: float | None) -> str:
    return "unlimited" if value is None else f"{value:.6g}"


def _table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(c) for c in col) for col in zip(head, *rows, strict=True)]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
                     for r in [head, *rows])


def _show(ledgers: Sequence[SQLiteLedger]) -> str:
    if not ledgers:
        return "no datasets"
    rows = []
    for ledger in ledgers:
        charges, spent, left = ledger.charges, ledger.spent, ledger.remaining
        pending = sum(c.status == "pending" for c in charges)
        rows.append([ledger.dataset, _num(ledger.epsilon_budget), _num(ledger.delta_budget),
                     _num(spent[0]), _num(spent[1]), _num(left[0]), _num(left[1]),
                     str(len(charges)), str(pending)])
    head = ["dataset", "ε budget", "δ budget", "ε spent", "δ spent", "ε remaining", "δ remaining",
            "charges", "pending"]
    return _table(head, rows)


def _history(ledgers: Sequence[SQLiteLedger]) -> str:
    from dpopt.privacy.sqlite_store import iso_time

    charges = sorted((c for ledger in ledgers for c in ledger.charges), key=lambda c: c.id)
    if not charges:
        return "no charges"
    rows = [[str(c.id), iso_time(c.time), c.dataset, _cell(c.model), _cell(c.mechanism), _cell(c.solver),
             f"{c.epsilon:.6g}", f"{c.delta:.6g}", c.status, _cell(c.label), _cell(c.command)] for c in charges]
    return _table(["id", "time (UTC)", "dataset", "model", "mechanism", "solver", "ε", "δ", "status", "label",
                   "command"], rows)


def _cell(text: str) -> str:
    """``text`` on one line (``-`` when empty)."""
    return " ".join(text.split()) or "-"
