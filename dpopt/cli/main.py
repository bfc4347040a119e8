"""The ``dpopt`` command line.

Commands
--------
``dpopt solve MODEL.py [--solver NAME|FILE.toml] [--epsilon E] [--delta D] [--seed S]
[--time-limit SECONDS] [--threads N] [--json OUT] [--set key=value ...]``
    Build the problem and mechanism of a model script (see
    :mod:`dpopt.cli.model_script` for the contract), run the mechanism once,
    print the release summary (and the script's ``evaluate(release)`` if it
    has one) and optionally write the release as JSON.
``dpopt doctor``
    Which solver backends are installed, and whether highspy and ortools can
    share one process.
``dpopt bench NAME [args...]`` / ``dpopt bench --list``
    Run a shipped benchmark (:mod:`dpopt.bench`).
``dpopt --version``

Exit codes
----------
0
    Success.
1
    Another dpopt error (a solver crashed without a result, ...).
2
    Usage, model-script or input error: an unknown solver, an unknown
    ``--set`` key, ε ≤ 0, malformed data, ... (``error: <message>`` on
    stderr, no traceback; a traceback is shown only when the model script's
    own code raised).
3
    An oracle call was not certified (a run stopped on an opted-in ``--time-limit``, or a
    solver failure): nothing is released, and stderr says that this outcome is NOT
    private.  A script that opted into ``on_uncertified="release-unsafe"`` gets its
    output written but still exits 3.

Privacy of the output
---------------------
Everything ``dpopt solve`` prints or writes by default is public: the release's summary
and JSON (noisy output, guarantee, public parameters and solver names), messages that
name no data values.  ``--diagnostics`` adds the solvers' record and the wall time —
computed from the data without noise, printed to stderr under a NOT PRIVATE banner.
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import time
import traceback
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from dpopt.cli.model_script import (
    ScriptFailure,
    build_model,
    load_model_script,
    parse_set,
    resolve_params,
)
from dpopt.errors import DpoptError, UncertifiedOracleError

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_UNCERTIFIED = 0, 1, 2, 3


def _version() -> str:
    from dpopt import __version__

    return __version__


# ---------------------------------------------------------------------------
# argument parsing
# ---------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of the ``dpopt`` command."""
    parser = argparse.ArgumentParser(
        prog="dpopt",
        description="Differentially private optimization: run model scripts, check solvers, benchmark.",
    )
    parser.add_argument("--version", action="version", version=f"dpopt {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    solve = sub.add_parser(
        "solve",
        help="run the mechanism of a model script once and print the release",
        description=(
            "Run a model script: build(params) -> (problem, mechanism), then mechanism.run(problem). "
            "--epsilon/--delta are passed to build() as params['epsilon']/params['delta']; "
            "--set key=value overrides the script's PARAMS."
        ),
    )
    solve.add_argument("model", metavar="MODEL.py", help="a model script (see models/)")
    solve.add_argument("--solver", default="auto",
                       help="backend name (dpopt doctor lists them), a profile file such as "
                            "solvers/clarabel.toml, or 'auto' (default)")
    solve.add_argument("--epsilon", type=float, default=None, help="ε > 0 (default: the script's PARAMS)")
    solve.add_argument("--delta", type=float, default=None, help="δ in [0, 1) (default: the script's PARAMS)")
    solve.add_argument("--seed", type=int, default=None,
                       help="noise seed, for reproducibility only (default: secure OS entropy)")
    solve.add_argument("--time-limit", type=float, default=None, metavar="SECONDS",
                       help="per oracle call (opt-in): the guarantee then holds only if no run stops on it; "
                            "a run stopped by it releases nothing and is NOT private (exit 3)")
    solve.add_argument("--diagnostics", action="store_true",
                       help="also print the solvers' record and wall time to stderr (NOT private)")
    solve.add_argument("--threads", type=int, default=None, help="solver threads")
    solve.add_argument("--json", type=Path, default=None, metavar="OUT", help="write the release as JSON")
    solve.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                       help="override a PARAMS entry of the script (repeatable)")

    sub.add_parser("doctor", help="list solver backends and check the installation",
                   description="List every registered backend and check highspy + ortools in one process.")

    bench = sub.add_parser("bench", help="run a shipped benchmark",
                           description="Run a benchmark from dpopt.bench: dpopt bench NAME [args...]; "
                                       "dpopt bench NAME --help shows its options.")
    bench.add_argument("--list", action="store_true", help="list the benchmarks")
    bench.add_argument("name", nargs="?", help="benchmark name")
    bench.add_argument("args", nargs=argparse.REMAINDER, help="arguments for the benchmark")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``dpopt`` command; returns the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:  # --help, --version, usage errors (argparse exits 2)
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    if args.command == "solve":
        return _guarded(_solve, args)
    if args.command == "doctor":
        return _doctor()
    if args.command == "bench":
        return _guarded(_bench, args)
    parser.print_help()
    return EXIT_USAGE


def _guarded(fn: Any, args: argparse.Namespace) -> int:
    """Run a command, turning dpopt errors into messages and exit codes."""
    try:
        return int(fn(args))
    except UncertifiedOracleError as exc:
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
            tb = _script_frames(cause.__traceback__, exc.path)
            traceback.print_exception(type(cause), cause, tb, file=sys.stderr)
        _err(f"error: {exc}")
        return EXIT_USAGE
    except DpoptError as exc:
        _err(f"error: {exc}")
        return EXIT_USAGE if isinstance(exc, (ValueError, KeyError, ImportError)) else EXIT_ERROR


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
# dpopt solve
# ---------------------------------------------------------------------------


def _solve(args: argparse.Namespace) -> int:
    from dpopt.backends.profiles import resolve

    # Cheap checks first, before the script loads any data.
    overrides = parse_set(args.set)
    if args.solver.lower() != "auto":
        backend, _ = resolve(args.solver)  # unknown names / missing profile files fail here
        backend.require()
    if args.time_limit is not None and not (math.isfinite(args.time_limit) and args.time_limit > 0):
        _err("error: --time-limit must be a positive number of seconds")
        return EXIT_USAGE
    script = load_model_script(args.model)
    params = resolve_params(script, overrides, epsilon=args.epsilon, delta=args.delta)
    if params:
        _out(f"model: {script.path}  params: " + ", ".join(f"{k}={v!r}" for k, v in params.items()))
    else:
        _out(f"model: {script.path}")
    problem, mechanism = build_model(script, params)

    start = time.perf_counter()
    release = mechanism.run(problem, solver=args.solver, time_limit=args.time_limit,
                            seed=args.seed, threads=args.threads, keep_diagnostics=args.diagnostics)
    elapsed = time.perf_counter() - start
    _out(release.summary())
    if release.diagnostics is not None:
        _err(release.diagnostics.summary())
        _err(f"  wall time: {elapsed:.3f}s (NOT private)")

    if args.json is not None:
        try:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(release.to_json(indent=2) + "\n")
        except OSError as exc:
            _err(f"error: cannot write {str(args.json)!r}: {exc.strerror or exc}")
            return EXIT_USAGE
        _out(f"release written to {args.json}")

    if script.evaluate is not None:
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

    if not release.private:
        _err("warning: this release carries NO privacy guarantee: its oracle call was NOT certified "
             "(on_uncertified='release-unsafe')")
        return EXIT_UNCERTIFIED
    return EXIT_OK


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
    _table("Solver backends", ["backend", "installed", "version", "kind", "description"], rows)

    _out("")
    ok, msg = _highs_ortools_check()
    _out(f"highspy + ortools in one process: {msg}")
    dpl = _dist_version("diffprivlib")
    if dpl is None:
        _out("bench extra (diffprivlib baseline): not installed — pip install -e '.[bench]'")
    else:
        _out(f"bench extra (diffprivlib baseline): diffprivlib {dpl}, scikit-learn "
             f"{_dist_version('scikit-learn') or 'missing'}")
    return EXIT_OK


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
