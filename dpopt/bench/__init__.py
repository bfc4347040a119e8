"""Shipped benchmarks, run with ``dpopt bench NAME [args...]``.

Each benchmark is a module with ``main(argv: list[str]) -> int`` and a
module docstring whose first line describes it.  Baselines are measured in the
same run as dpopt (never copied from papers), so results are comparable on the
machine at hand.  Benchmarks live inside the package so ``dpopt bench`` works
from any directory after ``pip install dpopt``.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from dpopt.errors import UnknownBenchmarkError

__all__ = [
    "BENCHMARKS",
    "describe",
    "get",
    "names",
]

#: benchmark name -> module path (imported lazily: a benchmark's baselines are optional)
BENCHMARKS: dict[str, str] = {
    "adult-halfspace": "dpopt.bench.adult_halfspace",
    "objective-perturbation": "dpopt.bench.objective_perturbation",
    "opdisc": "dpopt.bench.opdisc",
    "rates": "dpopt.bench.rates",
    "lasso": "dpopt.bench.lasso",
    "sparsity-norms": "dpopt.bench.sparsity_norms",
    "speed": "dpopt.bench.speed",
    "linear": "dpopt.bench.linear",
    "verify-cost": "dpopt.bench.verify_cost",
    "ledger-concurrency": "dpopt.bench.ledger_concurrency",
    "data-parallel": "dpopt.bench.data_parallel",
    "startup": "dpopt.bench.startup",
    "noise": "dpopt.bench.noise",
    "grid-cost": "dpopt.bench.grid_cost",
    "tables": "dpopt.bench.tables",
    "defaults": "dpopt.bench.defaults",
    "regression-rule": "dpopt.bench.regression_rule",
    "constrained-regression": "dpopt.bench.constrained_regression",
    "discrete-models": "dpopt.bench.discrete_models",
}


def names() -> list[str]:
    """The registered benchmark names, sorted."""
    return sorted(BENCHMARKS)


def get(name: str) -> ModuleType:
    """The module of benchmark ``name`` (it has ``main(argv) -> int``).

    Raises
    ------
    UnknownBenchmarkError
        Naming the known benchmarks.
    """
    if name not in BENCHMARKS:
        raise UnknownBenchmarkError(
            f"unknown benchmark {name!r}; known benchmarks: {', '.join(names())}"
        )
    return importlib.import_module(BENCHMARKS[name])


def describe(name: str) -> str:
    """The first line of the benchmark module's docstring."""
    doc = get(name).__doc__ or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""
