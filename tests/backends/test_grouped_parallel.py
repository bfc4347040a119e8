"""The grouped oracle's parallel search gives the sequential search's answer and certificate."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("highspy", reason="highspy is not installed")

from dpopt.backends.grouped_parallel import _apply, parallel_search  # noqa: E402
from dpopt.backends.grouped_points import GroupedSearch
from dpopt.backends.highs_grouped import HighsGroupedBackend
from dpopt.backends.result import OracleStatus, SolveOptions  # noqa: E402
from dpopt.executors import ProcessExecutor, resolve_executor, use_executor  # noqa: E402
from dpopt.modeling.dataset import Dataset  # noqa: E402
from dpopt.modeling.discrete import DiscreteProblem, brute_force  # noqa: E402
from dpopt.modeling.domains import IntegerGrid  # noqa: E402
from dpopt.modeling.schema import Binary, Numeric, Schema  # noqa: E402
from dpopt.modeling.variable import Variable  # noqa: E402
from dpopt.modeling.zero_one import ZeroOneLoss  # noqa: E402

FAST = SolveOptions(time_limit=60, threads=1, seed=0)
GRIDS = [
    IntegerGrid(1.0, -2, 2),
    IntegerGrid(0.5, -1, 1, l2_bound=1.2),
    IntegerGrid(1.0, -1, 2, l2_bound=2.0),
    IntegerGrid(0.25, 0, 1),
]
SPLITS = ["auto", [], [0, 1, 2], [1]]


def _instance(rng: np.random.Generator, idx: int) -> DiscreteProblem:
    """The differential instances of tests/backends/test_highs_grouped.py (d = 3, duplicate and conflicting rows)."""
    n = int(rng.integers(8, 31))
    binary = idx % 4
    X = np.empty((n, 3))
    X[:, :binary] = rng.integers(0, 2, size=(n, binary))
    X[:, binary:] = rng.integers(-4, 5, size=(n, 3 - binary)) / 4.0
    y = rng.choice([-1.0, 1.0], size=n)
    X[1], y[1] = X[0], -y[0]
    X[2] = 0.0
    weights = None if idx % 2 == 0 else rng.integers(0, 4, size=n).astype(float)
    schema = Schema([(f"x{j}", Binary() if j < binary else Numeric(-1, 1, grid="1/4")) for j in range(3)])
    return DiscreteProblem(ZeroOneLoss(Dataset(X, y, schema=schema), Variable(3), GRIDS[idx % len(GRIDS)],
                                       weights=weights))


def _adult(n: int) -> DiscreteProblem:
    from dpopt.datasets import load_adult

    adult = load_adult("train", balanced=True, n=n, seed=0)
    return DiscreteProblem(ZeroOneLoss(adult, Variable(23), IntegerGrid(1, -4, 4, l2_bound=23 ** 0.5)))


@pytest.fixture(scope="module")
def processes():
    with ProcessExecutor(workers=2) as ex:
        yield ex


@pytest.fixture(scope="module")
def dask():
    pytest.importorskip("distributed", reason="dask[distributed] is not installed")
    with resolve_executor("dask", workers=2) as ex:
        yield ex


def _same_certificate(par, seq) -> None:
    """The parallel result is the sequential one: same point, value, status and certificate."""
    assert par.certified == seq.certified and par.status is seq.status
    np.testing.assert_array_equal(par.solution, seq.solution)
    assert par.primal_bound == pytest.approx(seq.primal_bound, abs=1e-9)
    assert par.dual_bound == pytest.approx(seq.dual_bound, abs=1e-9)
    assert par.gap == pytest.approx(seq.gap, abs=1e-9)


def test_differential_instances_parallel_equals_sequential_and_brute_force(processes) -> None:
    rng = np.random.default_rng(7)
    backend = HighsGroupedBackend()
    draws = 0
    for idx in range(6):
        problem = _instance(rng, idx)
        prepared = backend.prepare(problem, SPLITS[idx % len(SPLITS)])
        for t in range(4):
            eta = rng.normal(0.0, 2.0, size=problem.dim + 1)
            if t % 2:
                eta[-1] = -abs(eta[-1])
            seq = backend.solve(prepared, eta, FAST)
            with use_executor(processes):
                par = backend.solve(prepared, eta, FAST)
            assert par.certified, par.message
            _same_certificate(par, seq)
            np.testing.assert_array_equal(par.solution, brute_force(problem.with_eta(eta))[0])
            draws += 1
    assert draws == 24


ADULT_DRAWS = [(300, 0), (300, 1), (400, 2)]  # (n, noise seed); odd seeds have η_{d+1} < 0


@pytest.fixture(scope="module")
def adult_sequential():
    """The sequential answers on the Adult draws (computed once for both executors)."""
    backend = HighsGroupedBackend()
    out = []
    for n, seed in ADULT_DRAWS:
        prepared = backend.prepare(_adult(n))
        eta = np.random.default_rng(seed).normal(0.0, 300.0, size=24)
        if seed % 2:
            eta[-1] = -abs(eta[-1])
        out.append((prepared, eta, backend.solve(prepared, eta, FAST)))
    return out


@pytest.mark.parametrize("executor", ["processes", pytest.param("dask", marks=pytest.mark.slow)])
def test_adult_draws_parallel_equals_sequential(executor, request, adult_sequential) -> None:
    ex = request.getfixturevalue(executor)
    backend = HighsGroupedBackend()
    for prepared, eta, seq in adult_sequential:
        with use_executor(ex):
            par = backend.solve(prepared, eta, FAST)
        assert seq.certified and par.certified, par.message
        _same_certificate(par, seq)


def test_the_search_runs_on_the_inprocess_executor_too() -> None:
    """parallel_search with one task at a time is the same search (and needs no pool)."""
    rng = np.random.default_rng(5)
    backend = HighsGroupedBackend()
    for idx in range(4):
        problem = _instance(rng, idx)
        prog = backend.prepare(problem).program
        eta = rng.normal(0.0, 2.0, size=problem.dim + 1)
        search = parallel_search(prog, problem.with_eta(eta), FAST, None, resolve_executor("inprocess"))
        assert search.finished.all() and search.limit is None and search.failure is None
        w_bf, v_bf = brute_force(problem.with_eta(eta))
        np.testing.assert_array_equal(problem.domain.step * search.best_k, w_bf)
        assert search.incumbent == pytest.approx(v_bf, abs=1e-6)


@pytest.mark.parametrize("limit", [1e-9, 0.05])
def test_time_limit_ends_in_limit_not_certified(processes, limit) -> None:
    problem = _adult(300)
    eta = np.random.default_rng(3).normal(0.0, 300.0, size=24)
    with use_executor(processes):
        res = HighsGroupedBackend().solve_problem(problem.with_eta(eta), SolveOptions(time_limit=limit))
    assert res.status is OracleStatus.LIMIT and res.limit == "time"
    assert not res.certified


@pytest.mark.parametrize(("status", "max_iterations", "limit"),
                         [("time", None, "time"), ("limit", 5, "nodes"), ("limit", None, "iterations")])
def test_a_point_stopped_by_its_limit_ends_the_search_as_sequentially(status, max_iterations, limit) -> None:
    """A point MIP stopped by a time or node limit: LIMIT with its dual bound, as ``_solve_point``."""
    search = GroupedSearch(problem=None, bounds=np.array([-1.0, 0.0]), finished=np.zeros(2, dtype=bool))  # type: ignore[arg-type]
    search.incumbent = 5.0
    _apply(search, 0, 5.0, {"status": status, "value": 4.0, "k": np.array([1]), "dual": 2.0},
           SolveOptions(max_iterations=max_iterations))
    assert search.limit == limit and search.failure is None
    assert search.incumbent == 4.0 and search.bounds[0] == 2.0 and not search.finished[0]


def test_finished_and_failed_points_are_recorded_as_sequentially() -> None:
    search = GroupedSearch(problem=None, bounds=np.array([-1.0, 0.0]), finished=np.zeros(2, dtype=bool))  # type: ignore[arg-type]
    search.incumbent = 3.0
    # dispatched with the older cutoff 5, proved nothing below 5 there: its bound is the cutoff
    _apply(search, 0, 5.0, {"status": "finished", "value": math.inf, "k": None, "dual": 0.0}, FAST)
    assert search.finished[0] and search.bounds[0] == 5.0 and search.incumbent == 3.0
    _apply(search, 1, 3.0, {"status": "finished", "value": 2.5, "k": np.array([2]), "dual": 2.5}, FAST)
    assert search.finished[1] and search.bounds[1] == 2.5 and search.incumbent == 2.5
    assert search.mips == 2 and search.limit is None
    _apply(search, 1, 3.0, {"status": "Numerical error", "value": math.inf, "k": None, "dual": 0.0}, FAST)
    assert search.failure == "Numerical error"


def test_bench_compares_worker_counts_and_checks_identical_points(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("pyomo")
    from dpopt.bench.opdisc import main

    assert main(["--workers", "2"]) == 2  # more than one worker needs --executor processes or dask
    assert main(["--ns", "100", "--draws", "1", "--backends", "highs-grouped", "--executor", "processes",
                 "--workers", "1,2", "--time-limit", "60", "--quiet"]) == 0
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines() if line.strip().startswith("100 ")]
    assert sorted(r[-1] for r in rows) == ["inprocess×1", "processes×2"] and all(r[3] == "1/1" for r in rows)
    assert "identical point on every certified draw with every executor (inprocess×1, processes×2)" in out
