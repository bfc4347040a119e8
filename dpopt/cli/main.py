"""The ``dpopt`` command line: the parser and the dispatch to each command.

Commands
--------
``dpopt solve MODEL.py [--solver NAME|FILE.toml] [--epsilon E] [--delta D] [--seed S]
[--time-limit SECONDS] [--threads N] [--json OUT] [--ledger FILE --dataset NAME]
[--set key=value ...] [--diagnostics] [--no-counts] [--quiet] [--debug]``
    Build the problem and mechanism of a model script (see
    :mod:`dpopt.cli.model_script` for the contract), run the mechanism once,
    print the release summary (and the script's ``evaluate(release)`` if it
    has one, marked NOT private) and optionally write the run's record as JSON (the
    evaluation under ``"evaluation_not_private"``; :mod:`dpopt.cli.solve`; the
    checks it makes before the charge are in :mod:`dpopt.cli.checks`).  The charge records
    the model, mechanism, solver and command line.
``dpopt ledger init|show|history ...``
    Create and inspect SQLite privacy ledger files (:mod:`dpopt.cli.ledger_cmd`).
``dpopt doctor``
    Which solver backends and optional extras are installed, and whether highspy and
    ortools can share one process (:mod:`dpopt.cli.doctor`).
``dpopt bench [--quiet] NAME [args...]`` / ``dpopt bench --list``
    Run a shipped benchmark (:mod:`dpopt.bench`, :mod:`dpopt.cli.bench_cmd`).
``dpopt --version`` (also ``python -m dpopt ...``)

The exit codes (0 success, 1 failed after the charge or a bug, 2 refused before anything
was charged, 3 not certified and nothing released) are listed in :mod:`dpopt.cli.exits`.

On a terminal, ``solve`` and ``bench`` draw a transient progress display on stderr
(``--quiet`` turns it off); in a private run it shows only public counts, a spinner and the
elapsed time (:mod:`dpopt.progress` explains what it may show).

This module imports no mechanism and no solver package: ``dpopt --help`` and a usage error
answer at once, and each command imports what it needs when it runs.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from dpopt import __version__
from dpopt.cli import ledger_cmd
from dpopt.cli.argtypes import positive_int, positive_seconds
from dpopt.cli.exits import EXIT_USAGE, guarded
from dpopt.privacy.strength import LARGE_EPSILON
from dpopt.progress import show_progress

__all__ = ["Parser", "build_parser", "main"]


class Parser(argparse.ArgumentParser):
    """An argparse parser whose usage errors are one line on stderr (exit 2)."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of the ``dpopt`` command."""
    parser = Parser(
        prog="dpopt",
        description="Differentially private optimization: run model scripts, check solvers, benchmark.",
    )
    parser.add_argument("--version", action="version", version=f"dpopt {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    _add_solve(sub)
    ledger_cmd.add_parser(sub)
    sub.add_parser("doctor", help="list solver backends and optional extras, check the installation",
                   description="List every registered backend and the optional extras, and check "
                               "highspy + ortools in one process.")
    bench = sub.add_parser("bench", help="run a shipped benchmark",
                           description="Run a benchmark from dpopt.bench: dpopt bench NAME [args...]; "
                                       "dpopt bench NAME --help shows its options.")
    bench.add_argument("--list", action="store_true", help="list the benchmarks")
    bench.add_argument("--quiet", action="store_true", help="no progress display on stderr")
    bench.add_argument("name", nargs="?", help="benchmark name")
    bench.add_argument("args", nargs=argparse.REMAINDER, help="arguments for the benchmark")
    return parser


def _add_solve(sub: Any) -> None:
    solve = sub.add_parser(
        "solve",
        help="run the mechanism of a model script once and print the release",
        description=(
            "Run a model script: build(params) -> (problem, mechanism), then mechanism.run(problem). "
            "--epsilon/--delta are passed to build() as params['epsilon']/params['delta']; "
            "--set key=value overrides the script's PARAMS. Every option is checked before the "
            "privacy budget is charged."
        ),
    )
    solve.add_argument("model", metavar="MODEL.py", help="a model script (see models/)")
    solve.add_argument("--solver", default="auto",
                       help="backend name (dpopt doctor lists them), a profile file such as "
                            "solvers/clarabel.toml, or 'auto' (default)")
    solve.add_argument("--epsilon", type=float, default=None,
                       help=f"ε > 0 (default: the script's PARAMS; above {LARGE_EPSILON:g} a warning says "
                            "the guarantee is not meaningful)")
    solve.add_argument("--delta", type=float, default=None, help="δ in [0, 1) (default: the script's PARAMS)")
    solve.add_argument("--seed", type=int, default=None,
                       help="noise seed, for reproducibility only (default: secure OS entropy)")
    solve.add_argument("--time-limit", type=positive_seconds, default=None, metavar="SECONDS",
                       help="per oracle call (opt-in): the guarantee then holds only if no run stops on it; "
                            "a run stopped by it releases nothing and is NOT private (exit 3)")
    solve.add_argument("--diagnostics", action="store_true",
                       help="also print the solvers' record and wall time to stderr (NOT private)")
    solve.add_argument("--no-counts", action="store_true",
                       help="spend nothing on the private counts of what the declarations did to the data "
                            "(2 %% of ε by default, printed with the release): the model gets all of ε")
    solve.add_argument("--threads", type=positive_int, default=None, help="solver threads (≥ 1)")
    solve.add_argument("--executor", choices=("inprocess", "processes", "dask"), default=None,
                       help="where parallel work runs: in this process (default), a local process pool, or "
                            "Dask (a LocalCluster started for the run, or --scheduler); overrides the "
                            "solver profile's executor")
    solve.add_argument("--scheduler", default=None, metavar="ADDRESS",
                       help="the Dask scheduler of an existing cluster, e.g. tcp://10.0.0.5:8786 "
                            "(implies --executor dask)")
    solve.add_argument("--workers", type=positive_int, default=None, metavar="N",
                       help="workers of the process pool or LocalCluster dpopt starts (default: the cores)")
    solve.add_argument("--json", type=Path, default=None, metavar="OUT",
                       help="write the run's record as JSON (its folder must exist); the script's "
                            "evaluate(release) goes under 'evaluation_not_private'")
    solve.add_argument("--ledger", type=Path, default=None, metavar="FILE",
                       help="charge this SQLite ledger file (create it with dpopt ledger init); "
                            "needs --dataset")
    solve.add_argument("--dataset", default=None, metavar="NAME", help="the dataset of --ledger to charge")
    solve.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                       help="override a PARAMS entry of the script (repeatable)")
    solve.add_argument("--quiet", action="store_true",
                       help="no progress display (shown by default when stderr is a terminal)")
    solve.add_argument("--debug", action="store_true",
                       help="show the traceback of every error (for reporting bugs)")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``dpopt`` command; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.command == "solve" and (args.ledger is None) != (args.dataset is None):
            _subparser(parser, "solve").error("--ledger FILE and --dataset NAME go together")
    except SystemExit as exc:  # --help, --version, usage errors (exit 2)
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    args.argv = argv
    if args.command == "solve":
        from dpopt.cli import solve

        with show_progress(not args.quiet):  # drawn only on a terminal (dpopt.progress)
            return guarded(solve.run, args)
    if args.command == "ledger":
        return guarded(ledger_cmd.run, args)
    if args.command == "doctor":
        from dpopt.cli import doctor

        return doctor.run(args)
    if args.command == "bench":
        from dpopt.cli import bench_cmd

        with show_progress(not args.quiet):
            return guarded(bench_cmd.run, args)
    parser.print_help()
    return EXIT_USAGE


def _subparser(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found: argparse.ArgumentParser = action.choices[name]
            return found
    raise KeyError(name)  # pragma: no cover - the parser always has its subcommands


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
