"""Command-line argument types of the benchmarks: the shared set of :mod:`dpopt.cli.argtypes`."""

from __future__ import annotations

from dpopt.cli.argtypes import (
    int_list,
    positive_float,
    positive_floats,
    positive_int,
    positive_seconds,
)

__all__ = ["int_list", "positive_float", "positive_floats", "positive_int", "positive_seconds"]
