"""Startup time of import dpopt, dpopt --help and a first fit in fresh processes, against import numpy.

Setup
-----
Each command runs as a fresh Python process (this interpreter, ``sys.executable``):
``python -c pass`` (the interpreter alone), ``python -c "import numpy"`` (the baseline:
dpopt's one eager dependency of any weight), ``python -c "import dpopt"``, ``python -m
dpopt --help`` (what the ``dpopt --help`` entry point runs), ``Problem+DPGD`` (``import dpopt
as dp; dp.Problem; dp.DPGradientDescent``: the modeling layer and the mechanisms), ``pandas+
sklearn`` (``import pandas, sklearn.base``: what any scikit-learn estimator on a table loads
before dpopt) and ``first fit`` (a secure ``DPLogisticRegression.fit`` on a 1,000-row pandas
table with a schema, from the interpreter's start).  The commands are run in turns,
``--repeats`` times each, so that a change in the machine's load affects all of them alike;
the table gives each command's median and fastest wall time, its median CPU time (user +
system, of the child process: steadier than wall time on a shared machine) and the ratios of
the median wall times to ``python -c pass`` and to ``import numpy``.  Two targets are checked
on the median wall times: ``Problem+DPGD`` ≤ 1.0 s and ``first fit`` ≤ 2.0 s.

Below the table, one more process per dpopt command lists which heavy packages (solvers,
scipy, pandas, Dask, ...) and which dpopt layers it imported: ``import dpopt`` should load
none of them (names are imported on first use, PEP 562) and ``dpopt --help`` no mechanism
and no solver.  Timings are of this machine at this moment; the ratios are what compares
across machines.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

from dpopt.bench.arguments import parse, positive_int
from dpopt.progress import counted

__all__ = ["COMMANDS", "FIRST_FIT", "HEAVY", "TARGETS", "Timing", "loaded", "main", "measure", "render"]

#: a first fit as the README does it: a pandas table declared by a schema, a secure (unseeded) run
FIRST_FIT = """\
import numpy as np
import pandas as pd
import dpopt as dp
from dpopt.sklearn import DPLogisticRegression
rng = np.random.default_rng(0)
n = 1000
table = pd.DataFrame({"age": rng.integers(17, 91, n), "hours": rng.integers(1, 100, n),
                      "sex": rng.choice(["Female", "Male"], n), "union": rng.integers(0, 2, n)})
income = np.where(rng.random(n) < 0.25, ">50K", "<=50K")
schema = dp.Schema({"age": dp.Numeric(17, 90, grid=1), "hours": dp.Numeric(1, 99, grid=1),
                    "sex": dp.Categorical(["Female", "Male"]), "union": dp.Binary()})
DPLogisticRegression(epsilon=1.0, schema=schema, classes=["<=50K", ">50K"]).fit(table, income)
"""
PROBLEM_AND_MECHANISM = "import dpopt as dp; dp.Problem; dp.DPGradientDescent"
#: label -> the arguments after ``python`` (the first two are the baselines)
COMMANDS: dict[str, tuple[str, ...]] = {
    "python -c pass": ("-c", "pass"),
    "import numpy": ("-c", "import numpy"),
    "import dpopt": ("-c", "import dpopt"),
    "dpopt --help": ("-m", "dpopt", "--help"),
    "Problem+DPGD": ("-c", PROBLEM_AND_MECHANISM),
    "pandas+sklearn": ("-c", "import pandas, sklearn.base"),
    "first fit": ("-c", FIRST_FIT),
}
#: the issue-33 targets on the median wall time, seconds
TARGETS: dict[str, float] = {"Problem+DPGD": 1.0, "first fit": 2.0}
#: modules whose import the listing below the table reports (solver packages, heavy libraries,
#: the dpopt layers that import them)
HEAVY: tuple[str, ...] = (
    "numpy", "scipy", "scipy.optimize", "scipy.special", "scipy.stats", "scipy.integrate", "cvxpy", "pyomo", "highspy", "ortools", "pyscipopt",
    "clarabel", "osqp", "scs", "pandas", "dask", "distributed", "sklearn",
    "dpopt.modeling", "dpopt.mechanisms", "dpopt.backends.registry", "dpopt.compile",
)
#: what each dpopt command runs in-process to list its imports (printed as one line)
_PROBES: dict[str, str] = {
    "import dpopt": "import dpopt",
    "dpopt --help": (
        "import contextlib, io\n"
        "from dpopt.cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['--help'])"
    ),
    "Problem+DPGD": PROBLEM_AND_MECHANISM,
}


@dataclass(frozen=True)
class Timing:
    """The wall and CPU times of one command over the repeats, in seconds."""

    label: str
    seconds: tuple[float, ...]
    cpu_seconds: tuple[float, ...] = ()

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def fastest(self) -> float:
        return min(self.seconds)

    @property
    def cpu(self) -> float:
        return statistics.median(self.cpu_seconds) if self.cpu_seconds else float("nan")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="dpopt bench startup", description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=positive_int, default=10, help="runs of each command (default 10)")
    return p


def _cpu_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(args: Sequence[str]) -> tuple[float, float]:
    """Wall and CPU time (user + system) of one fresh ``python args...`` process (output discarded)."""
    cpu = _cpu_children()
    start = time.perf_counter()
    subprocess.run([sys.executable, *args], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start, _cpu_children() - cpu


def measure(repeats: int) -> list[Timing]:
    """Run every command of :data:`COMMANDS` ``repeats`` times, in turns; one Timing each."""
    times: dict[str, list[tuple[float, float]]] = {label: [] for label in COMMANDS}
    for _ in counted(repeats, "startup: rounds"):
        for label, args in COMMANDS.items():
            times[label].append(_run(args))
    return [Timing(label, tuple(w for w, _ in values), tuple(c for _, c in values)) for label, values in times.items()]


def loaded(code: str) -> list[str]:
    """The modules of :data:`HEAVY` that a fresh process running ``code`` has imported."""
    probe = f"{code}\nimport sys\nprint(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    proc = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True)
    return proc.stdout.split()


def render(timings: Sequence[Timing], imports: dict[str, list[str]]) -> str:
    """The table of medians and ratios, and the imports of each dpopt command."""
    by = {t.label: t for t in timings}
    python, numpy = by["python -c pass"].median, by["import numpy"].median
    rows = [f"{'command':<16} {'median s':>9} {'fastest s':>10} {'× python':>9} {'× numpy':>8} {'cpu s':>7}"]
    rows += [f"{t.label:<16} {t.median:>9.3f} {t.fastest:>10.3f} {t.median / python:>9.1f} "
             f"{t.median / numpy:>8.2f} {t.cpu:>7.3f}" for t in timings]
    rows.append("")
    rows += [f"target: {label} median {by[label].median:.3f} s ≤ {limit:.1f} s: "
             f"{'met' if by[label].median <= limit else 'NOT met'}" for label, limit in TARGETS.items() if label in by]
    rows.append("")
    rows += [f"{label} imports: {', '.join(mods) if mods else '(none of the heavy modules)'}"
             for label, mods in imports.items()]
    return "\n".join(rows)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(_parser(), argv)
    if isinstance(args, int):
        return args
    timings = measure(args.repeats)
    imports = {label: loaded(code) for label, code in _PROBES.items()}
    print(f"startup of fresh processes: Python {sys.version.split()[0]}, median of {args.repeats} "
          f"run{'s' if args.repeats > 1 else ''} each, in turns")
    print(render(timings, imports))
    return 0
