"""The ``dpopt`` command line.

Commands
--------
``dpopt solve MODEL.py [--solver NAME|FILE.toml] [--epsilon E] [--delta D] [--seed S]
[--time-limit SECONDS] [--threads N] [--json OUT] [--ledger FILE --dataset NAME]
[--set key=value ...] [--diagnostics] [--quiet] [--debug]``
    Build the problem and mechanism of a model script (see
    :mod:`dpopt.cli.model_script` for the contract), run the mechanism once,
    print the release summary (and the script's ``evaluate(release)`` if it
    has one) and optionally write the run's record as JSON.
``dpopt ledger init|show|history ...``
    Create and inspect SQLite privacy ledger files (:mod:`dpopt.cli.ledger_cmd`).
``dpopt doctor``
    Which solver backends and optional extras are installed, and whether highspy and
    ortools can share one process.
``dpopt bench [--quiet] NAME [args...]`` / ``dpopt bench --list``
    Run a shipped benchmark (:mod:`dpopt.bench`).
``dpopt --version`` (also ``python -m dpopt ...``)

Checks before the charge
------------------------
``dpopt solve`` checks everything it can before the privacy ledger is charged, in this
order, and refuses with one line on stderr and exit code 2: the arguments (``--threads`` ≥ 1,
``--time-limit`` > 0, ``--ledger`` together with ``--dataset``); the ``--json`` path (not a
directory, its folder exists and is writable; no folder is ever created); the solver and its
profile, including the profile's ``[options]`` against the solver's own settings
(:mod:`dpopt.backends.options`); the ledger file and dataset; the script's parameters and
(ε, δ); the budget (``ledger.require``) before the script builds its data; then, with the
mechanism built, that an explicit ``--solver``/``--threads``/``--time-limit`` is not given to
a mechanism that calls no solver (``Mechanism.uses_solver``), and the budget again.

An ε above :data:`LARGE_EPSILON` (10) runs, with ``warning: ε = ... gives no meaningful
privacy`` on stderr: at such ε the guarantee ``e^ε`` bounds nothing an analyst would notice.

Exit codes
----------
0
    Success.
1
    The run failed after the budget was charged (a solver crashed without a result, ...),
    or an internal error (a bug: its traceback is shown).
2
    Refused before anything was charged: a usage, model-script or input error, an unknown
    solver or solver option, ε ≤ 0, a budget that does not fit, ... (``error: <message>``
    on one line of stderr, no traceback unless ``--debug``; a model script's own code that
    raised shows its traceback).
3
    An oracle call was not certified (a run stopped on an opted-in ``--time-limit``, or a
    solver failure): nothing is released, and stderr says that this outcome is NOT
    private.  A script that opted into ``on_uncertified="release-unsafe"`` gets its
    output written but still exits 3.

The JSON record (``--json OUT``)
--------------------------------
A released run writes ``release.to_dict()`` (theta, guarantee, parameters, feature names,
...) plus ``"run"``: the dpopt version, the model path, the final params dict, the UTC start
time (ISO 8601; taken before the data is touched, so it says nothing about the run's
duration), the command line and ``"status": "released"``.  A run that fails *after* the
charge writes ``{"status": "withheld" | "failed", "mechanism", "epsilon", "delta",
"error": {"type", "message"}, "run"}``: the budget was spent, nothing was released.  The
message is the dpopt error's (public by design); other exceptions keep only their type.

Privacy of the output
---------------------
Everything ``dpopt solve`` prints or writes by default is public: the release's summary
and JSON (noisy output, guarantee, public parameters and solver names), messages that
name no data values.  ``--diagnostics`` adds the solvers' record and the wall time —
computed from the data without noise, printed to stderr under a NOT PRIVATE banner.
On a terminal, ``solve`` and ``bench`` draw a transient progress display on stderr
(``--quiet`` turns it off); in a private run it shows only public counts, a spinner and the
elapsed time (:mod:`dpopt.progress` explains what it may show).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
import traceback
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from types import TracebackType
from typing import Any, NoReturn

from dpopt.cli.argtypes import positive_int, positive_seconds
from dpopt.cli.model_script import (
    ScriptFailure,
    build_model,
    load_model_script,
    parse_set,
    resolve_params,
)
from dpopt.errors import DpoptError, ModelError, UncertifiedOracleError
from dpopt.progress import show_progress

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_UNCERTIFIED = 0, 1, 2, 3
#: ε above which ``dpopt solve`` warns that the guarantee is not meaningful
LARGE_EPSILON = 10.0


class CliUsageError(ModelError):
    """A command-line value that ``dpopt solve`` refuses before anything is charged."""


class _AfterCharge(Exception):
    """A run that failed after the ledger was charged (the record is written); exit 1."""


def _version() -> str:
    from dpopt import __version__

    return __version__


# ---------------------------------------------------------------------------
# argument parsing
# ---------------------------------------------------------------------------


class Parser(argparse.ArgumentParser):
    """An argparse parser whose usage errors are one line on stderr (exit 2)."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of the ``dpopt`` command."""
    from dpopt.cli import ledger_cmd

    parser = Parser(
        prog="dpopt",
        description="Differentially private optimization: run model scripts, check solvers, benchmark.",
    )
    parser.add_argument("--version", action="version", version=f"dpopt {_version()}")
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
                       help="write the run's record as JSON (its folder must exist)")
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
        with show_progress(not args.quiet):  # drawn only on a terminal (dpopt.progress)
            return _guarded(_solve, args)
    if args.command == "ledger":
        from dpopt.cli import ledger_cmd

        return _guarded(ledger_cmd.run, args)
    if args.command == "doctor":
        return _doctor()
    if args.command == "bench":
        with show_progress(not args.quiet):
            return _guarded(_bench, args)
    parser.print_help()
    return EXIT_USAGE


def _subparser(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found: argparse.ArgumentParser = action.choices[name]
            return found
    raise KeyError(name)  # pragma: no cover - the parser always has its subcommands


def _guarded(fn: Any, args: argparse.Namespace) -> int:
    """Run a command, turning errors into one-line messages and exit codes (module docstring)."""
    debug = bool(getattr(args, "debug", False))
    try:
        return int(fn(args))
    except UncertifiedOracleError as exc:
        if debug:
            traceback.print_exc()
        _err(f"error: {exc}")
        _err("warning: this run was NOT private: it ended without a proven answer, and whether that "
             "happens can depend on the data")
        diagnostics = getattr(exc, "diagnostics", None)
        if diagnostics is not None:
            _err(diagnostics.summary())
        return EXIT_UNCERTIFIED
    except ScriptFailure as exc:
        cause = exc.__cause__
        if cause is not None:
            tb = cause.__traceback__ if debug else _script_frames(cause.__traceback__, exc.path)
            traceback.print_exception(type(cause), cause, tb, file=sys.stderr)
        _err(f"error: {exc}")
        return EXIT_USAGE
    except _AfterCharge as exc:
        if debug and exc.__cause__ is not None:
            traceback.print_exception(exc.__cause__, file=sys.stderr)
        _err(f"error: {exc}")
        return EXIT_ERROR
    except DpoptError as exc:
        if debug:
            traceback.print_exc()
        _err(f"error: {exc}")
        return EXIT_USAGE
    except Exception as exc:  # a bug: keep its traceback
        traceback.print_exc()
        _err(f"error: internal error ({type(exc).__name__}); this is a bug in dpopt or in a plug-in: "
             "please report it with the traceback above")
        return EXIT_ERROR


def _script_frames(tb: TracebackType | None, path: Path) -> TracebackType | None:
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


def _out(text: str = "") -> None:
    print(text, file=sys.stdout, flush=True)


def _err(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------
# dpopt solve: the checks before the charge
# ---------------------------------------------------------------------------


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


def warn_large_epsilon(epsilon: float) -> bool:
    """Print the large-ε warning on stderr when ε > :data:`LARGE_EPSILON`; whether it did."""
    if epsilon <= LARGE_EPSILON:
        return False
    text = f"{epsilon:g}".replace("e+0", "e").replace("e+", "e")
    _err(f"warning: ε = {text} gives no meaningful privacy (above {LARGE_EPSILON:g}, e^ε bounds nothing "
         "an analyst would notice); running anyway")
    return True


def _check_solver_use(mechanism: Any, problem: Any, args: argparse.Namespace) -> None:
    """Refuse solver settings given explicitly to a mechanism that calls no solver on this problem."""
    if mechanism.calls_solver(problem):
        return
    given = [flag for flag, on in (("--solver", args.solver.lower() != "auto"),
                                   ("--threads", args.threads is not None),
                                   ("--time-limit", args.time_limit is not None)) if on]
    if given:
        raise CliUsageError(
            f"{mechanism.name} calls no solver on this problem (its steps are closed form), so {', '.join(given)} "
            "would have no effect; drop " + ("it" if len(given) == 1 else "them")
        )


def _open_ledger(args: argparse.Namespace) -> Any:
    """The SQLite ledger of ``--ledger``/``--dataset`` (None without them)."""
    if args.ledger is None:
        return None
    from dpopt.privacy.sqlite_ledger import SQLiteLedger

    return SQLiteLedger.open(args.ledger, dataset=args.dataset)


# ---------------------------------------------------------------------------
# dpopt solve
# ---------------------------------------------------------------------------


def _solve(args: argparse.Namespace) -> int:
    from dpopt.backends.profiles import resolve

    started = datetime.now(timezone.utc).isoformat(timespec="seconds")  # before the data is touched
    # Public checks first, before the script loads any data; nothing is charged.
    if args.json is not None:
        check_output_path(args.json)
    parse_set(args.set)  # malformed items fail here
    _executor(args)  # --scheduler without dask fails here
    if args.solver.lower() != "auto":
        backend, _ = resolve(args.solver)  # unknown names, bad profiles and options fail here
        backend.require()
    ledger = _open_ledger(args)
    try:
        return _solve_with(args, ledger, started)
    finally:
        if ledger is not None:
            ledger.close()


def _solve_with(args: argparse.Namespace, ledger: Any, started: str) -> int:
    """``dpopt solve`` from the script on (the cheap checks are done, ``ledger`` is open or None)."""
    script = load_model_script(args.model)
    params = resolve_params(script, parse_set(args.set), epsilon=args.epsilon, delta=args.delta)
    warned = "epsilon" in params and warn_large_epsilon(float(params["epsilon"]))
    if ledger is not None and "epsilon" in params:
        ledger.require(float(params["epsilon"]), float(params.get("delta", 0.0)))  # before build()
    if params:
        _out(f"model: {script.path}  params: " + ", ".join(f"{k}={v!r}" for k, v in params.items()))
    else:
        _out(f"model: {script.path}")
    problem, mechanism = build_model(script, params)
    _check_solver_use(mechanism, problem, args)
    if not warned:
        warn_large_epsilon(mechanism.epsilon)
    if ledger is not None:
        mechanism.ledger = ledger
    mechanism.ledger.require(mechanism.epsilon, mechanism.delta)
    run_info = {"dpopt_version": _version(), "model": str(script.path), "params": params,
                "timestamp": started, "command": shlex.join(["dpopt", *args.argv])}

    release, elapsed = _run(mechanism, problem, args, run_info)
    _out(release.summary())
    if release.diagnostics is not None:
        _err(release.diagnostics.summary())
        _err(f"  wall time: {elapsed:.3f}s (NOT private)")
    if args.json is not None:
        _write_json(args.json, {**release.to_dict(), "run": {**run_info, "status": "released"}})
        _out(f"release written to {args.json}")
    if ledger is not None:
        eps, dlt = ledger.remaining
        _out(f"charged to dataset {args.dataset!r} in {args.ledger}; remaining: ε={_budget(eps)}, "
             f"δ={_budget(dlt)}")
    _evaluate(script, release)
    if not release.private:
        _err("warning: this release carries NO privacy guarantee: its oracle call was NOT certified "
             "(on_uncertified='release-unsafe')")
        return EXIT_UNCERTIFIED
    return EXIT_OK


def _budget(value: float | None) -> str:
    return "unlimited" if value is None else f"{value:.6g}"


def _run(mechanism: Any, problem: Any, args: argparse.Namespace,
         run_info: dict[str, Any]) -> tuple[Any, float]:
    """``mechanism.run`` once and its wall time; a failure after the charge writes its record to ``--json``."""
    before = len(mechanism.ledger.charges)
    start = time.perf_counter()
    try:
        executor = _executor(args)  # passed only when asked for: a script's own Mechanism may not take it
        extra = {} if executor is None else {"executor": executor}
        release = mechanism.run(problem, solver=args.solver, time_limit=args.time_limit, seed=args.seed,
                                threads=args.threads, keep_diagnostics=args.diagnostics, **extra)
    except Exception as exc:
        if not _charged(mechanism, before):
            raise  # refused before the charge: nothing was spent
        status = "withheld" if isinstance(exc, UncertifiedOracleError) else "failed"
        public = isinstance(exc, DpoptError)
        written = ""
        if args.json is not None:
            _write_json(args.json, {
                "status": status, "mechanism": mechanism.name, "epsilon": mechanism.epsilon,
                "delta": mechanism.delta,
                "error": {"type": type(exc).__name__,
                          "message": str(exc) if public else "(not shown: not a dpopt error)"},
                "run": {**run_info, "status": status},
            })
            written = f"; the record is in {args.json}"
        if isinstance(exc, UncertifiedOracleError):
            if written:
                _err(f"note: the charge was recorded{written}")
            raise
        if not public:
            raise
        raise _AfterCharge(
            f"{exc} (the budget ε={mechanism.epsilon:g}, δ={mechanism.delta:g} was charged and nothing "
            f"was released{written})"
        ) from exc
    return release, time.perf_counter() - start


def _executor(args: argparse.Namespace) -> Any:
    """``--executor``/``--scheduler``/``--workers`` as a run's ``executor`` (None: the profile's or in-process).

    Resolved inside the run, after its budget check and before its charge: an unreachable
    scheduler costs nothing."""
    if args.executor is None and args.scheduler is None and args.workers is None:
        return None
    from dpopt.backends.profiles import ExecutorSettings

    name = args.executor or ("dask" if args.scheduler is not None else "processes")
    if args.scheduler is not None and name != "dask":
        raise CliUsageError(f"--scheduler needs --executor dask, got --executor {name}")
    return ExecutorSettings(name, args.scheduler, args.workers)


def _charged(mechanism: Any, before: int) -> bool:
    """Whether the ledger holds a new charge of ``mechanism`` since it held ``before`` charges."""
    try:
        return any(c.mechanism == mechanism.name for c in mechanism.ledger.charges[before:])
    except DpoptError:  # the ledger itself cannot be read: assume the worst
        return True


def _write_json(path: Path, record: dict[str, Any]) -> None:
    """Write the run's record (only ever after the charge: a failure here exits 1)."""
    try:
        path.write_text(json.dumps(record, indent=2, default=repr) + "\n")
    except OSError as exc:
        raise _AfterCharge(f"cannot write {str(path)!r}: {exc.strerror or exc} (the budget was "
                           "charged)") from None


def _evaluate(script: Any, release: Any) -> None:
    if script.evaluate is None:
        return
    try:
        metrics = script.evaluate(release)
    except Exception as exc:
        if isinstance(exc, DpoptError):
            raise
        raise ScriptFailure(script.path, "running evaluate(release)") from exc
    _out("evaluation (non-private, for the user's information):")
    if isinstance(metrics, dict):
        for k, v in metrics.items():
            _out(f"  {k}: {v:.6g}" if isinstance(v, float) else f"  {k}: {v}")
    else:
        _out(f"  {metrics}")


# ---------------------------------------------------------------------------
# dpopt doctor
# ---------------------------------------------------------------------------

_CLASH_CHECK = """
import importlib.metadata as md
import highspy
from ortools.linear_solver import pywraplp
from ortools.sat.python import cp_model
h = highspy.Highs()
h.setOptionValue("output_flag", False)
m = cp_model.CpModel()
x = m.NewIntVar(0, 3, "x")
m.Maximize(x)
s = cp_model.CpSolver()
assert s.Solve(m) == cp_model.OPTIMAL
print(md.version("highspy"), md.version("ortools"))
"""


def _dist_version(name: str) -> str | None:
    import importlib.metadata as md

    try:
        return md.version(name)
    except md.PackageNotFoundError:
        return None


def _highs_ortools_check() -> tuple[bool, str]:
    """Import highspy and ortools together in a child process (a crash must not kill doctor)."""
    hv, ov = _dist_version("highspy"), _dist_version("ortools")
    if hv is None or ov is None:
        missing = [n for n, v in (("highspy", hv), ("ortools", ov)) if v is None]
        return False, f"not checked: {', '.join(missing)} not installed"
    try:
        proc = subprocess.run([sys.executable, "-c", _CLASH_CHECK], capture_output=True, text=True,
                              timeout=120, env=dict(os.environ, PYTHONWARNINGS="ignore"))
    except subprocess.TimeoutExpired:
        return False, "FAILED: importing highspy and ortools together did not finish within 120 s"
    if proc.returncode == 0:
        versions = proc.stdout.strip().split()
        return True, f"ok (highspy {versions[0]}, ortools {versions[-1]})"
    how = (f"crashed with signal {-proc.returncode}" if proc.returncode < 0
           else f"failed: {proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else 'exit ' + str(proc.returncode)}")
    return False, (
        f"FAILED: highspy {hv} and ortools {ov} cannot be imported into one process ({how}). "
        "highspy 1.15.x and ortools 9.15 clash over duplicate HiGHS symbols (or-tools issue 5246); "
        "install highspy<1.15 (pip install 'highspy<1.15')"
    )


def _doctor() -> int:
    import platform

    from dpopt.backends import registry

    _out(f"dpopt {_version()} — Python {platform.python_version()} ({sys.executable})")
    rows: list[list[str]] = []
    for name in registry.names():
        try:
            b = registry.get(name)
            version = b.version()
            rows.append([name, "yes" if version is not None else "no", version or "-",
                         getattr(b, "kind", "?"), getattr(b, "description", "")])
        except Exception as exc:  # noqa: BLE001 — a broken plug-in is reported, not fatal
            rows.append([name, "no", "-", "?", f"failed to load: {type(exc).__name__}: {exc}"])
    rows += [[name, "no", "-", "?", why] for name, why in registry.failures().items()]
    _table("Solver backends", ["backend", "installed", "version", "kind", "description"], rows)

    _out("")
    ok, msg = _highs_ortools_check()
    _out(f"highspy + ortools in one process: {msg}")
    _out("")
    _table("Optional extras", ["package", "installed", "needed for", "install"], _extras())
    return EXIT_OK


#: optional packages: (distribution, what needs it, how to install)
EXTRAS: tuple[tuple[str, str, str], ...] = (
    ("matplotlib", "plots of dpopt bench adult-halfspace / rates (--out)", "pip install 'dpopt[bench]'"),
    ("diffprivlib", "baselines of dpopt bench objective-perturbation / linear", "pip install 'dpopt[bench]'"),
    ("scikit-learn", "dpopt.sklearn estimators; diffprivlib's baselines (<1.8)", "pip install 'dpopt[sklearn]'"),
    ("joblib", "parallel audits (dpopt.testing, n_jobs > 1)", "pip install 'dpopt[test]'"),
    ("pyscipopt", "the 'scip' MIP backend (SCIP, bundled in its wheels)", "pip install 'dpopt[scip]'"),
    ("distributed", "executor='dask' (--executor dask): Dask clusters", "pip install 'dpopt[dask]'"),
    ("pyarrow", "Dask-backed datasets: Dataset.from_parquet", "pip install 'dpopt[dask]'"),
)
#: packages listed only when installed (dpopt does not use them yet)
IF_PRESENT: tuple[tuple[str, str], ...] = ()


def _extras() -> list[list[str]]:
    """Rows of the optional-extras table of ``dpopt doctor``."""
    rows = [[name, _dist_version(name) or "no", use, hint] for name, use, hint in EXTRAS]
    rows += [[name, v, use, "-"] for name, use in IF_PRESENT if (v := _dist_version(name)) is not None]
    return rows


def _table(title: str, headers: list[str], rows: list[list[str]]) -> None:
    """A rich table on a terminal, aligned plain text otherwise."""
    if sys.stdout.isatty():
        try:
            from rich.console import Console
            from rich.table import Table

            t = Table(title=title)
            for h in headers:
                t.add_column(h, overflow="fold")
            for r in rows:
                t.add_row(*r)
            Console().print(t)
            return
        except ImportError:  # pragma: no cover - rich is a dependency
            pass
    _out(title)
    _out(format_table(headers, rows))


def format_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Plain-text table with left-aligned columns separated by two spaces."""
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) if rows else len(str(h))
              for i, h in enumerate(headers)]
    lines = ["  ".join(str(h).ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip(),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# dpopt bench
# ---------------------------------------------------------------------------


def _bench(args: argparse.Namespace) -> int:
    from dpopt import bench

    if args.list or not args.name:
        if not args.list:
            _err("error: name a benchmark: dpopt bench NAME [args...]")
        for name in bench.names():
            _out(f"{name:<28} {bench.describe(name)}")
        return EXIT_OK if args.list else EXIT_USAGE
    module = bench.get(args.name)  # UnknownBenchmarkError lists the known ones (exit 2)
    return int(module.main(list(args.args)))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
