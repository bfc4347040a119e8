"""Startup time of import dpopt and dpopt --help in fresh processes, against import numpy.

Setup
-----
Each command runs as a fresh Python process (this interpreter, ``sys.executable``):
``python -c pass`` (the interpreter alone), ``python -c "import numpy"`` (the baseline:
dpopt's one eager dependency of any weight), ``python -c "import dpopt"`` and ``python -m
dpopt --help`` (what the ``dpopt --help`` entry point runs).  The commands are run in turns,
``--repeats`` times each, so that a change in the machine's load affects all of them alike;
the table gives each command's median and fastest wall time and the ratios of the medians
to ``python -c pass`` and to ``import numpy``.

Below the table, one more process per dpopt command lists which heavy packages (solvers,
scipy, pandas, Dask, ...) and which dpopt layers it imported: ``import dpopt`` should load
none of them (names are imported on first use, PEP 562) and ``dpopt --help`` no mechanism
and no solver.  Timings are of this machine at this moment; the ratios are what compares
across machines.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

from dpopt.bench.arguments import parse, positive_int
from dpopt.progress import counted

__all__ = ["COMMANDS", "HEAVY", "Timing", "loaded", "main", "measure", "render"]

#: label -> the arguments after ``python`` (the first two are the baselines)
COMMANDS: dict[str, tuple[str, ...]] = {
    "python -c pass": ("-c", "pass"),
    "import numpy": ("-c", "import numpy"),
    "import dpopt": ("-c", "import dpopt"),
    "dpopt --help": ("-m", "dpopt", "--help"),
}
#: modules whose import the listing below the table reports (solver packages, heavy libraries,
#: the dpopt layers that import them)
HEAVY: tuple[str, ...] = (
    "numpy", "scipy", "scipy.optimize", "cvxpy", "pyomo", "highspy", "ortools", "pyscipopt",
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
}


@dataclass(frozen=True)
class Timing:
    """The wall times of one command over the repeats, in seconds."""

    label: str
    seconds: tuple[float, ...]

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def fastest(self) -> float:
        return min(self.seconds)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="dpopt bench startup", description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=positive_int, default=10, help="runs of each command (default 10)")
    return p


def _wall(args: Sequence[str]) -> float:
    """Wall time of one fresh ``python args...`` process (its output discarded)."""
    start = time.perf_counter()
    subprocess.run([sys.executable, *args], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def measure(repeats: int) -> list[Timing]:
    """Run every command of :data:`COMMANDS` ``repeats`` times, in turns; one Timing each."""
    times: dict[str, list[float]] = {label: [] for label in COMMANDS}
    for _ in counted(repeats, "startup: rounds"):
        for label, args in COMMANDS.items():
            times[label].append(_wall(args))
    return [Timing(label, tuple(values)) for label, values in times.items()]


def loaded(code: str) -> list[str]:
    """The modules of :data:`HEAVY` that a fresh process running ``code`` has imported."""
    probe = f"{code}\nimport sys\nprint(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    proc = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True)
    return proc.stdout.split()


def render(timings: Sequence[Timing], imports: dict[str, list[str]]) -> str:
    """The table of medians and ratios, and the imports of each dpopt command."""
    by = {t.label: t for t in timings}
    python, numpy = by["python -c pass"].median, by["import numpy"].median
    rows = [f"{'command':<16} {'median s':>9} {'fastest s':>10} {'× python':>9} {'× numpy':>8}"]
    rows += [f"{t.label:<16} {t.median:>9.3f} {t.fastest:>10.3f} {t.median / python:>9.1f} "
             f"{t.median / numpy:>8.2f}" for t in timings]
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
