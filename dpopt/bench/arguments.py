"""Command-line argument types of the benchmarks: the shared set of :mod:`dpopt.cli.argtypes`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from dpopt.cli.argtypes import (
    int_list,
    positive_float,
    positive_floats,
    positive_int,
    positive_seconds,
)

__all__ = ["int_list", "parse", "positive_float", "positive_floats", "positive_int", "positive_seconds"]


def parse(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace | int:
    """``parser``'s arguments from ``argv`` (None: the command line), or the exit code argparse
    chose (2 for a usage error, 0 for ``--help``) instead of exiting the process."""
    try:
        return parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2
