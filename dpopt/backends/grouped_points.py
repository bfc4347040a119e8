"""The shared pieces of the grouped oracle's point search, sequential and parallel.

:class:`~dpopt.backends.highs_grouped.HighsGroupedBackend` searches the enumerated points in one
process; :mod:`dpopt.backends.grouped_parallel` keeps several point MIPs in flight on an
executor.  Both use the same search state, incumbent heuristic, pruning rule and per-point HiGHS
model, defined here once (so neither module imports the other's internals).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpopt.backends.highs import BASE_OPTIONS, DEFAULT_THREADS, set_threads
from dpopt.backends.result import Limit, SolveOptions
from dpopt.compile.grouped_search import GroupedObjective, local_search, repair
from dpopt.compile.mip_grouped import GroupedProgram
from dpopt.modeling.discrete import DiscreteProblem
from dpopt.progress import Tracker

#: points whose LP optima seed the local search
HEURISTIC_POINTS = 10
#: relative margin above the incumbent an LP bound needs to prune a point without a MIP
PRUNE_MARGIN = 1e-6
#: LP tolerances of every solve (tighter than HiGHS's defaults of 1e-7: the LP values prune)
LP_OPTIONS: dict[str, Any] = {"dual_feasibility_tolerance": 1e-9}
#: options of ``extra`` this backend reads itself (the rest go to HiGHS)
OWN_OPTIONS = ("enumerate",)


@dataclass
class GroupedSearch:
    """State of one oracle call (one η)."""

    problem: DiscreteProblem
    incumbent: float = math.inf
    best_k: np.ndarray | None = None
    bounds: np.ndarray = field(default_factory=lambda: np.zeros(0))
    finished: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    duals: dict[int, np.ndarray] = field(default_factory=dict)  # LP row duals by point (proposals for the verifier)
    mips: int = 0
    pruned: int = 0
    limit: Limit | None = None
    failure: str | None = None


def seed_incumbent(prog: GroupedProgram, problem: DiscreteProblem, search: GroupedSearch, order: np.ndarray,
                   k_c: dict[int, np.ndarray]) -> None:
    """The incumbent heuristic: local search from the rounded LP optima ``k_c`` (by point index) of
    the :data:`HEURISTIC_POINTS` points with the smallest LP bounds; updates ``search``."""
    for i in order[:HEURISTIC_POINTS]:
        if int(i) not in k_c:
            continue
        ks = prog.points[i]
        costs, z_upper, const = prog.costs(problem, ks)
        t_s = int(ks @ ks)
        objective = GroupedObjective(prog, costs, z_upper, const, t_s)
        k, value = local_search(objective, repair(prog, k_c[int(i)], t_s))
        if value < search.incumbent:
            search.incumbent, search.best_k = value, prog.point(ks, k)


def next_point(search: GroupedSearch, queue: Iterator[int], bar: Tracker) -> int | None:
    """The next point of ``queue`` (LP order) that needs a MIP, pruning on the way the points the
    incumbent settles (an LP bound at least the prune margin above it)."""
    for i in queue:
        bar.advance(mips=search.mips, pruned=search.pruned, incumbent=search.incumbent)
        if search.finished[i]:
            continue
        if search.bounds[i] >= search.incumbent + prune_margin(search.incumbent):
            search.finished[i] = True
            search.pruned += 1
            continue
        return int(i)
    return None


def prune_margin(value: float) -> float:
    """How far above the incumbent an LP bound must be to prune its point.

    The LP value is a lower bound only up to HiGHS's feasibility tolerances; the margin
    keeps a point whose optimum might tie the incumbent within them in the MIP pass."""
    return PRUNE_MARGIN * max(1.0, abs(value)) if math.isfinite(value) else 0.0


def new_highs(prog: GroupedProgram, options: SolveOptions) -> Any:
    """A fresh HiGHS instance holding the per-point MIP's structure (zero costs)."""
    import highspy

    set_threads(options.threads)
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    for key, value in {**BASE_OPTIONS, **LP_OPTIONS}.items():
        h.setOptionValue(key, value)
    h.setOptionValue("threads", int(options.threads) if options.threads is not None else DEFAULT_THREADS)
    h.setOptionValue("random_seed", int(options.seed))
    if options.max_iterations is not None:
        h.setOptionValue("mip_max_nodes", int(options.max_iterations))
    for key, value in options.extra.items():
        if key not in OWN_OPTIONS:
            h.setOptionValue(key, value)
    n = prog.n_columns
    h.addVars(n, np.zeros(n), np.ones(n))
    rows = prog.rows
    h.addRows(rows.rhs.size, rows.rhs, rows.rhs, rows.index.size, rows.starts[:-1], rows.index, rows.value)
    h.changeColsIntegrality(n, np.arange(n, dtype=np.int32), np.full(n, highspy.HighsVarType.kInteger))
    return h


def load_point(h: Any, prog: GroupedProgram, problem: DiscreteProblem, ks: np.ndarray) -> float:
    """Put the costs and z bounds of point ``ks`` into ``h``; returns the objective constant."""
    costs, z_upper, const = prog.costs(problem, ks)
    n = prog.n_columns
    h.changeColsCost(n, np.arange(n, dtype=np.int32), costs)
    z = np.arange(prog.n_u + prog.n_v, n, dtype=np.int32)
    h.changeColsBounds(z.size, z, np.zeros(z.size), z_upper)
    return const
