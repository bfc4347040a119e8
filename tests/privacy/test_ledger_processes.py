"""One budget across processes: a ledger cannot be copied into a worker and charged there.

What users rely on: a fit that runs in another process — a joblib worker of
``cross_val_score``/``GridSearchCV(n_jobs=2)`` (loky and multiprocessing backends), a
``concurrent.futures`` process pool, a Dask worker — charges the caller's budget exactly
once (an :class:`SQLiteLedger`, which every process opens by its path) or is refused before
it fits anything (an in-memory :class:`Ledger` or the default ledger, whose copy in a worker
would be a second budget the caller never sees).  ``run(..., executor=...)`` charges in the
caller before any work is shipped.  Every test checks the caller's own ledger afterwards.

Workers are slow to start (each imports dpopt), so the pools are shared per module and
the data and models are tiny.
"""

from __future__ import annotations

import logging
import math
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import dpopt as dp
from dpopt.datasets import make_classification
from dpopt.errors import LedgerProcessError
from dpopt.executors import DaskExecutor, ProcessExecutor
from dpopt.sklearn import DPLogisticRegression

joblib = pytest.importorskip("joblib")
sklearn_model_selection = pytest.importorskip("sklearn.model_selection")
cross_val_score = sklearn_model_selection.cross_val_score
GridSearchCV = sklearn_model_selection.GridSearchCV

BACKENDS = ("loky", "multiprocessing")


@pytest.fixture(scope="module")
def table() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.uniform(-1.0, 1.0, size=(48, 2))
    y = np.where(X[:, 0] + X[:, 1] > 0, "yes", "no")
    return X, y


def _workers(backend: str) -> Any:
    """Two joblib workers of ``backend`` (always set the same way: loky then reuses its workers)."""
    return joblib.parallel_backend(backend, n_jobs=2)


def _model(ledger: Any, epsilon: float = 0.5) -> DPLogisticRegression:
    return DPLogisticRegression(epsilon=epsilon, delta=1e-6, x_bound=2.0, classes=["no", "yes"], ledger=ledger)


@pytest.fixture
def book(tmp_path: Path) -> dp.SQLiteLedger:
    return dp.SQLiteLedger(tmp_path / "budget.sqlite", dataset="demo", epsilon_budget=1.0, create=True)


def _check_file(ledger: dp.SQLiteLedger, fits: int, epsilon: float) -> None:
    """Exactly ``fits`` released charges of ``epsilon`` in the file, within its budget."""
    charges = dp.SQLiteLedger.open(ledger.path, dataset=ledger.dataset).charges
    assert [(c.epsilon, c.status) for c in charges] == [(epsilon, "released")] * fits
    assert math.fsum(c.epsilon for c in charges) <= 1.0 * (1 + 1e-12)


# --------------------------------------------------------------------------- joblib (scikit-learn)


@pytest.mark.parametrize("backend", BACKENDS)
def test_cross_validation_in_workers_charges_the_sqlite_file_once_per_fit(
        backend: str, table: tuple[np.ndarray, np.ndarray], book: dp.SQLiteLedger) -> None:
    # the audit's case: 3 fits of ε = 0.5 against ε = 1 must release two, not three
    X, y = table
    with _workers(backend), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the refused fit's FitFailedWarning / BudgetWarning
        scores = cross_val_score(_model(book), X, y, cv=3, error_score=np.nan)
    assert np.isnan(scores).sum() == 1  # the third fit was refused for budget
    _check_file(book, fits=2, epsilon=0.5)


def test_grid_search_in_workers_charges_the_sqlite_file_once_per_fit(
        table: tuple[np.ndarray, np.ndarray], book: dp.SQLiteLedger) -> None:
    X, y = table
    search = GridSearchCV(_model(book, epsilon=0.25), {"alpha": [0.0, 0.01]}, cv=2, refit=False,
                          error_score="raise")
    with _workers("loky"):
        search.fit(X, y)  # 2 settings x 2 folds = 4 fits of ε = 0.25: the whole budget, charged once each
    _check_file(book, fits=4, epsilon=0.25)
    with pytest.raises(dp.errors.BudgetExceededError):
        _model(book, epsilon=0.25).fit(X, y)  # and the caller sees it spent


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kind", ["in-memory", "default"])
def test_an_in_memory_or_default_ledger_is_refused_in_workers_before_any_fit(
        backend: str, kind: str, table: tuple[np.ndarray, np.ndarray]) -> None:
    # scikit-learn's default error_score records each refused fit and then reports that all
    # of them failed, with the reason (error_score="raise" would make joblib kill its workers)
    X, y = table
    ledger = dp.Ledger(epsilon_budget=1.0) if kind == "in-memory" else None
    default_before = len(dp.default_ledger().charges)
    with _workers(backend), warnings.catch_warnings(), pytest.raises(ValueError, match="All the 2 fits failed") as err:
        warnings.simplefilter("ignore")
        cross_val_score(_model(ledger), X, y, cv=2)
    assert "dpopt.errors.LedgerProcessError: " in str(err.value) and "SQLiteLedger" in str(err.value)
    what = "the default ledger cannot be charged" if kind == "default" else "this in-memory Ledger"
    assert what in str(err.value)
    assert len(dp.default_ledger().charges) == default_before
    if ledger is not None:
        assert ledger.charges == ()
        _model(ledger).fit(X, y)  # the caller's own process charges it as before
        assert len(ledger.charges) == 1


def test_the_refusal_itself_reaches_the_caller_with_error_score_raise(table: tuple[np.ndarray, np.ndarray]) -> None:
    X, y = table
    ledger = dp.Ledger(epsilon_budget=1.0)
    with _workers("multiprocessing"), pytest.raises(LedgerProcessError, match="belongs to process .*SQLiteLedger"):
        cross_val_score(_model(ledger), X, y, cv=2, error_score="raise")
    assert ledger.charges == ()


# --------------------------------------------------------------------------- a process pool


@pytest.fixture(scope="module")
def pool() -> Iterator[ProcessExecutor]:
    executor = ProcessExecutor(workers=1)  # spawn: each worker imports dpopt afresh
    executor.start()
    yield executor
    executor.close()


def test_a_fit_in_a_spawned_process_pool(pool: ProcessExecutor, table: tuple[np.ndarray, np.ndarray],
                                         book: dp.SQLiteLedger) -> None:
    X, y = table
    fitted = pool.submit(_model(book).fit, X, y).result(timeout=120)
    assert fitted.release_.epsilon == 0.5
    _check_file(book, fits=1, epsilon=0.5)
    ledger = dp.Ledger()
    for model in (_model(ledger), _model(None)):  # a pickled in-memory ledger; the worker's default one
        with pytest.raises(LedgerProcessError, match="SQLiteLedger"):
            pool.submit(model.fit, X, y).result(timeout=120)
    assert ledger.charges == ()


@pytest.fixture(scope="module")
def problem() -> dp.Problem:
    data, _ = make_classification(60, 2, seed=0)
    theta = dp.Variable(2)
    return dp.Problem(dp.LogisticLoss(data, theta), constraint=dp.L2Ball(theta, 2.0))


def test_run_with_a_process_executor_charges_the_caller_once(pool: ProcessExecutor, problem: dp.Problem,
                                                             book: dp.SQLiteLedger) -> None:
    for ledger in (dp.Ledger(epsilon_budget=1.0), book):  # charged in the caller, before work is shipped
        dp.DPGradientDescent(0.5, 1e-6, steps=3, ledger=ledger).run(problem, seed=0, executor=pool)
        assert [c.epsilon for c in ledger.charges] == [0.5]
    _check_file(book, fits=1, epsilon=0.5)


# --------------------------------------------------------------------------- Dask


@pytest.fixture(scope="module")
def dask_client() -> Iterator[Any]:
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=logging.ERROR) as cluster, distributed.Client(cluster) as client:
        yield client


def test_a_fit_in_a_dask_worker(dask_client: Any, table: tuple[np.ndarray, np.ndarray],
                                book: dp.SQLiteLedger) -> None:
    X, y = table
    assert dask_client.submit(_model(book).fit, X, y, pure=False).result().release_.epsilon == 0.5
    _check_file(book, fits=1, epsilon=0.5)
    ledger = dp.Ledger()
    for model in (_model(ledger), _model(None)):
        with pytest.raises(LedgerProcessError, match="SQLiteLedger"):
            dask_client.submit(model.fit, X, y, pure=False).result()
    assert ledger.charges == ()


def test_run_with_a_dask_executor_charges_the_caller_once(dask_client: Any, problem: dp.Problem,
                                                          book: dp.SQLiteLedger) -> None:
    executor = DaskExecutor(dask_client)
    for ledger in (dp.Ledger(epsilon_budget=1.0), book):
        dp.DPGradientDescent(0.5, 1e-6, steps=3, ledger=ledger).run(problem, seed=0, executor=executor)
        assert [c.epsilon for c in ledger.charges] == [0.5]
    _check_file(book, fits=1, epsilon=0.5)


def test_a_dask_worker_in_this_process_charges_the_callers_ledger_itself(table: tuple[np.ndarray, np.ndarray]) -> None:
    # threads of this process: the task's ledger (whether dask copies it or not) is the caller's
    distributed = pytest.importorskip("distributed")
    X, y = table
    ledger = dp.Ledger(epsilon_budget=1.0)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None,
                                  silence_logs=logging.ERROR) as cluster, distributed.Client(cluster) as client:
        for _ in range(2):
            client.submit(_model(ledger).fit, X, y, pure=False).result()
        with pytest.raises(dp.errors.BudgetExceededError):
            client.submit(_model(ledger).fit, X, y, pure=False).result()
    assert [c.epsilon for c in ledger.charges] == [0.5, 0.5]
