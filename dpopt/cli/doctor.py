"""``dpopt doctor``: which solver backends and optional extras are installed.

It prints every registered backend (built-ins and plug-ins, with the one-line reason of
any that failed to load), whether highspy and ortools can share one process (checked in a
child process, so that a crash cannot kill the command) and the optional extras.  This is
the one command that imports every backend.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys

from dpopt import __version__
from dpopt.cli.console import out, table
from dpopt.cli.exits import EXIT_OK

__all__ = ["EXTRAS", "IF_PRESENT", "highs_ortools_check", "run"]

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


def run(args: argparse.Namespace | None = None) -> int:
    """Print the backends, the highspy + ortools check and the extras; exit code 0."""
    from dpopt.backends import registry

    out(f"dpopt {__version__} — Python {platform.python_version()} ({sys.executable})")
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
    table("Solver backends", ["backend", "installed", "version", "kind", "description"], rows)

    out("")
    ok, msg = highs_ortools_check()
    out(f"highspy + ortools in one process: {msg}")
    out("")
    table("Optional extras", ["package", "installed", "needed for", "install"], _extras())
    return EXIT_OK


def _dist_version(name: str) -> str | None:
    import importlib.metadata as md

    try:
        return md.version(name)
    except md.PackageNotFoundError:
        return None


def highs_ortools_check() -> tuple[bool, str]:
    """Import highspy and ortools together in a child process (a crash must not kill doctor).

    Returns
    -------
    (ok, message)
        Whether both import and solve in one process, and the line ``doctor`` prints.
    """
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


def _extras() -> list[list[str]]:
    """Rows of the optional-extras table of ``dpopt doctor``."""
    rows = [[name, _dist_version(name) or "no", use, hint] for name, use, hint in EXTRAS]
    rows += [[name, v, use, "-"] for name, use in IF_PRESENT if (v := _dist_version(name)) is not None]
    return rows
