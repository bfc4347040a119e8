"""The checks ``dpopt solve`` makes before the privacy ledger is charged.

Each check reads only the command line, the file system and public declarations (the
mechanism, the problem's n and types), never the data; a failure is a
:class:`CliUsageError` (or another :class:`~dpopt.errors.DpoptError`), which the command
prints as one line with exit code 2, and nothing is charged.  :mod:`dpopt.cli.solve` calls
them in the order its docstring states.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dpopt.cli.console import err
from dpopt.errors import CliUsageError
from dpopt.privacy.strength import weak_guarantee_reasons

__all__ = [
    "check_output_path",
    "check_solver_use",
    "executor_settings",
    "open_ledger",
    "warn_weak_guarantee",
]


def check_output_path(path: Path, option: str = "--json") -> None:
    """Refuse an output file that cannot be written, without creating anything.

    Raises
    ------
    CliUsageError
        ``path`` is a directory, its folder does not exist or is not a folder, or the
        file (or its folder, for a new file) is not writable.
    """
    if path.is_dir():
        raise CliUsageError(f"{option} {str(path)!r} is a directory; give a file name such as "
                            f"{str(path / 'release.json')!r}")
    folder = path.parent
    if not folder.exists():
        raise CliUsageError(f"{option} {str(path)!r}: the folder {str(folder)!r} does not exist "
                            "(dpopt does not create folders; create it first)")
    if not folder.is_dir():
        raise CliUsageError(f"{option} {str(path)!r}: {str(folder)!r} is not a folder")
    if path.exists() and not os.access(path, os.W_OK):
        raise CliUsageError(f"{option} {str(path)!r} exists and is not writable")
    if not path.exists() and not os.access(folder, os.W_OK | os.X_OK):
        raise CliUsageError(f"{option} {str(path)!r}: the folder {str(folder)!r} is not writable")


def warn_weak_guarantee(epsilon: float, delta: float, n: int | None = None, *,
                        already: Sequence[str] = ()) -> list[str]:
    """Print each reason why (ε, δ) on ``n`` rows protects no one (ε above
    :data:`~dpopt.privacy.strength.LARGE_EPSILON`, δ ≥ 1/n) as a ``warning:`` line on stderr,
    except those in ``already``; return every reason (printed now or before)."""
    reasons = weak_guarantee_reasons(epsilon, delta, n)
    for reason in reasons:
        if reason not in already:
            err(f"warning: {reason}")
    return [*already, *(r for r in reasons if r not in already)]


def check_solver_use(mechanism: Any, problem: Any, args: argparse.Namespace) -> None:
    """Refuse solver settings given explicitly to a mechanism that calls no solver on this problem."""
    from dpopt.mechanisms.base import SolverNeed

    if mechanism.solver_need(problem) is not SolverNeed.NONE:
        return
    given = [flag for flag, on in (("--solver", args.solver.lower() != "auto"),
                                   ("--threads", args.threads is not None),
                                   ("--time-limit", args.time_limit is not None)) if on]
    if given:
        raise CliUsageError(
            f"{mechanism.name} calls no solver on this problem (its steps are closed form), so {', '.join(given)} "
            "would have no effect; drop " + ("it" if len(given) == 1 else "them")
        )


def open_ledger(args: argparse.Namespace) -> Any:
    """The SQLite ledger of ``--ledger``/``--dataset`` (None without them)."""
    if args.ledger is None:
        return None
    from dpopt.privacy.sqlite_ledger import SQLiteLedger

    return SQLiteLedger.open(args.ledger, dataset=args.dataset)


def executor_settings(args: argparse.Namespace) -> Any:
    """``--executor``/``--scheduler``/``--workers`` as a run's ``executor`` (None: the profile's or in-process).

    Resolved inside the run, after its budget check and before its charge: an unreachable
    scheduler costs nothing.

    Raises
    ------
    CliUsageError
        ``--scheduler`` with an executor other than dask.
    """
    if args.executor is None and args.scheduler is None and args.workers is None:
        return None
    from dpopt.backends.profiles import ExecutorSettings

    name = args.executor or ("dask" if args.scheduler is not None else "processes")
    if args.scheduler is not None and name != "dask":
        raise CliUsageError(f"--scheduler needs --executor dask, got --executor {name}")
    return ExecutorSettings(name, args.scheduler, args.workers)
