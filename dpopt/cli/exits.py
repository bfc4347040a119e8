"""Exit codes of the ``dpopt`` command, and how an error becomes one.

0 (:data:`EXIT_OK`)
    Success.
1 (:data:`EXIT_ERROR`)
    The run failed after the budget was charged (:class:`AfterCharge`), or an internal
    error (a bug: its traceback is shown).
2 (:data:`EXIT_USAGE`)
    Refused before anything was charged: a usage, model-script or input error (a
    :class:`~dpopt.errors.DpoptError`, printed as one ``error:`` line; a model script's own
    code that raised shows its traceback).
3 (:data:`EXIT_UNCERTIFIED`)
    An oracle call was not certified: nothing is released, and stderr says that this outcome
    is NOT private.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from dpopt.cli.console import err
from dpopt.errors import AfterCharge, DpoptError, ScriptFailure, UncertifiedOracleError

__all__ = [
    "EXIT_ERROR",
    "EXIT_OK",
    "EXIT_UNCERTIFIED",
    "EXIT_USAGE",
    "guarded",
]

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_UNCERTIFIED = 0, 1, 2, 3


def guarded(fn: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """Run a command, turning errors into one-line messages and exit codes (module docstring).

    ``--debug`` (``args.debug``) shows the traceback of every error.
    """
    debug = bool(getattr(args, "debug", False))
    try:
        return int(fn(args))
    except UncertifiedOracleError as exc:
        if debug:
            traceback.print_exc()
        err(f"error: {exc}")
        err("warning: this run was NOT private: it ended without a proven answer, and whether that "
            "happens can depend on the data")
        diagnostics = getattr(exc, "diagnostics", None)
        if diagnostics is not None:
            err(diagnostics.summary())
        return EXIT_UNCERTIFIED
    except ScriptFailure as exc:
        cause = exc.__cause__
        if cause is not None:
            tb = cause.__traceback__ if debug else script_frames(cause.__traceback__, exc.path)
            traceback.print_exception(type(cause), cause, tb, file=sys.stderr)
        err(f"error: {exc}")
        return EXIT_USAGE
    except AfterCharge as exc:
        if debug and exc.__cause__ is not None:
            traceback.print_exception(exc.__cause__, file=sys.stderr)
        err(f"error: {exc}")
        return EXIT_ERROR
    except DpoptError as exc:
        if debug:
            traceback.print_exc()
        err(f"error: {exc}")
        return EXIT_USAGE
    except Exception as exc:  # a bug: keep its traceback
        traceback.print_exc()
        err(f"error: internal error ({type(exc).__name__}); this is a bug in dpopt or in a plug-in: "
            "please report it with the traceback above")
        return EXIT_ERROR


def script_frames(tb: TracebackType | None, path: Path) -> TracebackType | None:
    """The traceback from the first frame inside the model script (None if there is none)."""
    target = path.resolve()
    while tb is not None:
        try:
            if Path(tb.tb_frame.f_code.co_filename).resolve() == target:
                return tb
        except OSError:  # pragma: no cover - unusual file names
            pass
        tb = tb.tb_next
    return None
