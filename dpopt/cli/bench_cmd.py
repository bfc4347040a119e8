"""``dpopt bench``: list the shipped benchmarks or run one (:mod:`dpopt.bench`)."""

from __future__ import annotations

import argparse

from dpopt.cli.console import err, out
from dpopt.cli.exits import EXIT_OK, EXIT_USAGE

__all__ = ["run"]


def run(args: argparse.Namespace) -> int:
    """``dpopt bench --list`` or ``dpopt bench NAME [args...]``; returns the exit code.

    Without a name it lists the benchmarks and exits 2 (a name was expected); an unknown name
    raises :class:`~dpopt.errors.UnknownBenchmarkError`, which lists the known ones.
    """
    from dpopt import bench

    if args.list or not args.name:
        if not args.list:
            err("error: name a benchmark: dpopt bench NAME [args...]")
        for name in bench.names():
            out(f"{name:<28} {bench.describe(name)}")
        return EXIT_OK if args.list else EXIT_USAGE
    module = bench.get(args.name)  # UnknownBenchmarkError lists the known ones (exit 2)
    return int(module.main(list(args.args)))
