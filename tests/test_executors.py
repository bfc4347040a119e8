"""The executor layer: names, errors, the current-executor context, and tasks on each kind."""

from __future__ import annotations

import operator
import os
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from dpopt.errors import BackendUnavailableError
from dpopt.executors import (
    DEFAULT,
    NAMES,
    DaskExecutor,
    Executor,
    ExecutorError,
    InProcessExecutor,
    ProcessExecutor,
    current_executor,
    resolve,
    resolve_executor,
    use_executor,
)


def _fail() -> None:
    raise RuntimeError("task failed")


# ---- names and errors ------------------------------------------------------------------


def test_default_and_names_resolve_to_their_kinds() -> None:
    assert resolve_executor(None) is DEFAULT and DEFAULT.workers == 1
    inproc = resolve_executor("inprocess")
    assert isinstance(inproc, InProcessExecutor) and inproc is not DEFAULT and inproc.workers == 1
    with resolve_executor("Processes") as pool:
        assert isinstance(pool, ProcessExecutor) and pool.name == "processes"
        assert pool.workers == (os.cpu_count() or 1)
    with resolve_executor("processes", workers=3) as pool:
        assert pool.workers == 3
    assert resolve_executor(inproc) is inproc
    assert set(NAMES) == {"inprocess", "processes", "dask"}


def test_unknown_names_and_bad_options_are_refused_clearly() -> None:
    with pytest.raises(ExecutorError, match="unknown executor 'threads'; known executors: inprocess, processes, dask"):
        resolve_executor("threads")
    with pytest.raises(ValueError, match="positive integer"):  # ExecutorError is a ValueError
        resolve_executor("processes", workers=0)
    with pytest.raises(ExecutorError, match="needs executor 'dask'"):
        resolve_executor("processes", scheduler="tcp://127.0.0.1:8786")
    with pytest.raises(ExecutorError, match="one task at a time"):
        resolve_executor("inprocess", workers=2)
    with pytest.raises(ExecutorError, match="got int"):
        resolve_executor(3)


def test_dask_without_dask_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed now fails
    with pytest.raises(BackendUnavailableError, match=r'pip install "dpopt\[dask\]"'):
        resolve_executor("dask")
    assert isinstance(resolve_executor("processes"), ProcessExecutor)  # everything else still works


# ---- the current executor --------------------------------------------------------------


def test_use_executor_sets_and_restores_the_current_one() -> None:
    assert current_executor() is DEFAULT
    a, b = InProcessExecutor(), InProcessExecutor()
    with use_executor(a) as got:
        assert got is a and current_executor() is a
        with use_executor(b):
            assert current_executor() is b
        assert current_executor() is a
        with pytest.raises(RuntimeError), use_executor(b):
            raise RuntimeError
        assert current_executor() is a
    assert current_executor() is DEFAULT
    with pytest.raises(ExecutorError, match="needs an Executor"), use_executor("processes"):  # type: ignore[arg-type]
        pass


# ---- tasks --------------------------------------------------------------------------------


def _exercise(ex: Executor) -> None:
    """submit, wait_first, share and failure delivery on any executor."""
    big = np.arange(100_000, dtype=np.float64)
    handle = ex.share(big)
    futures = [ex.submit(operator.add, i, 10) for i in range(4)]
    done, pending = ex.wait_first(futures)
    assert done and done.isdisjoint(pending) and done | pending == set(futures)
    assert [f.result() for f in futures] == [10, 11, 12, 13]
    shared = [ex.submit(resolve, handle) for _ in range(3)]
    for f in shared:
        np.testing.assert_array_equal(f.result(), big)
    failing = ex.submit(_fail) if isinstance(ex, InProcessExecutor) else ex.submit(operator.truediv, 1, 0)
    with pytest.raises((RuntimeError, ZeroDivisionError)):
        failing.result()


def test_inprocess_runs_tasks_at_once() -> None:
    ex = InProcessExecutor()
    _exercise(ex)
    assert ex.dask_client() is None
    obj = object()
    assert resolve(ex.share(obj)) is obj  # no copy in-process


def test_process_pool_runs_tasks_and_ships_shared_objects_once() -> None:
    with ProcessExecutor(workers=2) as ex:
        _exercise(ex)
        assert ex.dask_client() is None
        folder = ex._folder
        assert folder is not None and len(list(Path(folder).glob("*.pkl"))) == 1  # one pickle for 3 tasks
    assert not Path(folder).exists()  # closed: the pickles are removed


# ---- Dask ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def dask_executor():
    pytest.importorskip("distributed", reason="dask[distributed] is not installed")
    ex = resolve_executor("dask", workers=2)
    yield ex
    client = ex.dask_client()
    ex.close()
    assert client.status == "closed"  # the LocalCluster dpopt started is closed with it


def test_local_cluster_runs_tasks_and_is_closed(dask_executor) -> None:
    ex = dask_executor
    assert isinstance(ex, DaskExecutor) and ex.name == "dask" and ex.workers == 2
    client = ex.dask_client()
    assert client is not None and len(client.scheduler_info()["workers"]) == 2
    _exercise(ex)


def test_a_given_client_is_wrapped_and_not_closed(dask_executor) -> None:
    client = dask_executor.dask_client()
    with resolve_executor(client) as ex:
        assert isinstance(ex, DaskExecutor) and ex.dask_client() is client and ex.workers == 2
        assert ex.submit(operator.mul, 6, 7).result() == 42
    assert client.status == "running"  # not ours to close


def test_unreachable_scheduler_fails_fast_with_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("distributed", reason="dask[distributed] is not installed")
    monkeypatch.setattr("dpopt.executors.CONNECT_TIMEOUT", 1.0)
    start = time.perf_counter()
    with pytest.raises(ExecutorError, match="cannot reach the Dask scheduler at 'tcp://127.0.0.1:9'"):
        resolve_executor("dask", scheduler="tcp://127.0.0.1:9")
    assert time.perf_counter() - start < 15
