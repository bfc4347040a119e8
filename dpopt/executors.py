"""Where dpopt's parallel work runs: in-process, a local process pool, or a Dask cluster.

An :class:`Executor` runs independent tasks (the grouped oracle's point solves,
:mod:`dpopt.backends.grouped_parallel`; data-parallel gradients through
:meth:`Executor.dask_client`).  Three kinds, chosen by :func:`resolve_executor`:

* ``"inprocess"`` (the default): every task runs at once in the calling thread; one
  task at a time (``workers == 1``), results exactly as without an executor.
* ``"processes"``: a local :class:`concurrent.futures.ProcessPoolExecutor` (``spawn``
  start method: no fork of a process whose solver threads are running).
* ``"dask"``: a ``dask.distributed`` client, on an existing scheduler (``scheduler=``
  address) or on a :class:`distributed.LocalCluster` started on demand.  Dask is an
  optional extra (``pip install "dpopt[dask]"``) imported only here and only for it.

The executor chosen for a run is set with :func:`use_executor` and read with
:func:`current_executor` (a context variable; the in-process executor by default).

Privacy (docs/design.md, "Privacy rules"): an executor is chosen from the caller's
arguments only, and nothing here returns which worker ran a task or how long it took —
so none of it can reach a Release.  Resolving an executor touches no data and charges
nothing; its only side effect is starting the pool or cluster it then owns (and closes).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import contextvars
import logging
import multiprocessing
import os
import pickle
import shutil
import sys
import tempfile
import uuid
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union

from dpopt.errors import BackendUnavailableError, ExecutorError

__all__ = [
    "DaskExecutor", "Executor", "ExecutorError", "ExecutorSpec", "InProcessExecutor", "NAMES",
    "ProcessExecutor", "Shared", "current_executor", "resolve", "resolve_executor", "use_executor",
]

#: the executor names :func:`resolve_executor` accepts
NAMES = ("inprocess", "processes", "dask")
#: seconds to wait for a Dask scheduler before giving up (a wrong address fails fast)
CONNECT_TIMEOUT = 5.0
#: seconds a new process pool may take to answer its first task
START_TIMEOUT = 120.0
#: why local worker processes fail to start, and the fix
SPAWN_HINT = ("worker processes start a fresh Python that imports your main script again; in a script, put the "
              "code that runs dpopt under `if __name__ == \"__main__\":` (Python's rule for spawned processes; "
              "notebooks and `dpopt solve` need nothing), or use executor='inprocess' or a running Dask scheduler")
#: shared objects a worker process keeps (least recently used ones are dropped first)
WORKER_CACHE_SIZE = 4

#: what ``run(..., executor=)`` accepts: a name, an Executor, a ``distributed.Client`` or None
ExecutorSpec = Union[str, "Executor", Any, None]


# ---------------------------------------------------------------------------
# shared read-only objects
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Shared:
    """A handle to a large read-only object shipped to the workers once (:meth:`Executor.share`).

    Pass the handle as a task argument and call :func:`resolve` on it inside the task.

    Attributes
    ----------
    token : str
        A random identifier (never derived from the object), the key of per-worker caches.
    kind : str
        ``"object"`` (``ref`` is the object), ``"file"`` (``ref`` is the path of its pickle)
        or ``"dask"`` (``ref`` is a Dask future; replaced by the object on the worker).
    ref : Any
    """

    token: str
    kind: str
    ref: Any


_worker_cache: OrderedDict[str, Any] = OrderedDict()


def resolve(handle: Shared | Any) -> Any:
    """The object behind ``handle`` (inside a task); anything else is returned unchanged.

    A ``"file"`` handle is unpickled once per worker process and cached by its token.
    """
    if not isinstance(handle, Shared):
        return handle
    if handle.kind == "object":
        return handle.ref
    if handle.kind != "file":
        raise ExecutorError(f"shared object of kind {handle.kind!r} was not resolved by its executor")
    if handle.token in _worker_cache:
        _worker_cache.move_to_end(handle.token)
        return _worker_cache[handle.token]
    with open(handle.ref, "rb") as f:
        obj = pickle.load(f)
    _worker_cache[handle.token] = obj
    while len(_worker_cache) > WORKER_CACHE_SIZE:
        _worker_cache.popitem(last=False)
    return obj


def _new_token() -> str:
    return uuid.uuid4().hex


# ---------------------------------------------------------------------------
# executors
# ---------------------------------------------------------------------------


class Executor(ABC):
    """Runs independent tasks; a context manager that closes what it started.

    Attributes
    ----------
    name : str
        ``"inprocess"``, ``"processes"`` or ``"dask"``.
    workers : int
        How many tasks can run at once.
    """

    name: str
    workers: int

    @abstractmethod
    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        """Schedule ``fn(*args, **kwargs)``; returns a future (``result()``, ``done()``, ``cancel()``).

        ``fn`` must be importable by name (a module-level function) for process and Dask
        executors; :class:`Shared` arguments reach it as handles for :func:`resolve`.
        """

    @abstractmethod
    def wait_first(self, futures: Iterable[Any]) -> tuple[set[Any], set[Any]]:
        """Block until at least one of ``futures`` is done; returns ``(done, pending)``
        (like :func:`concurrent.futures.wait` with ``FIRST_COMPLETED``)."""

    @abstractmethod
    def share(self, obj: Any) -> Shared:
        """Ship the large read-only ``obj`` to the workers once; returns its handle."""

    def dask_client(self) -> Any | None:
        """The ``distributed.Client`` data-parallel work computes on (None: not a Dask executor)."""
        return None

    def start(self) -> None:  # noqa: B027 — optional: only a pool started on demand has work to do
        """Make sure the workers run (a run calls it before its charge, so a pool that cannot
        start costs nothing); raises :class:`ExecutorError` if they cannot."""

    def close(self) -> None:  # noqa: B027 — optional: an executor that started nothing has nothing to close
        """Release what this executor started (never a pool or client it was given)."""

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(workers={self.workers})"


class InProcessExecutor(Executor):
    """Runs each task immediately in the calling thread (``workers == 1``)."""

    name = "inprocess"

    def __init__(self) -> None:
        self.workers = 1

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> concurrent.futures.Future[Any]:
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # noqa: BLE001 — delivered through the future, as a pool would
            future.set_exception(exc)
        return future

    def wait_first(self, futures: Iterable[Any]) -> tuple[set[Any], set[Any]]:
        done, pending = concurrent.futures.wait(list(futures), return_when=concurrent.futures.FIRST_COMPLETED)
        return set(done), set(pending)

    def share(self, obj: Any) -> Shared:
        return Shared(_new_token(), "object", obj)


class ProcessExecutor(Executor):
    """A local pool of ``workers`` processes (``spawn``); shared objects go through one pickle file.

    Parameters
    ----------
    workers : int, optional
        Processes (default ``os.cpu_count()``).
    """

    name = "processes"

    def __init__(self, workers: int | None = None) -> None:
        self.workers = _positive_workers(workers if workers is not None else (os.cpu_count() or 1))
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None
        self._folder: Path | None = None

    def _get_pool(self) -> concurrent.futures.ProcessPoolExecutor:
        if self._pool is None:  # started on first use: resolving an executor starts nothing here
            self._pool = concurrent.futures.ProcessPoolExecutor(
                max_workers=self.workers, mp_context=multiprocessing.get_context("spawn"))
        return self._pool

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> concurrent.futures.Future[Any]:
        return self._get_pool().submit(fn, *args, **kwargs)

    def start(self) -> None:
        """Start the pool and wait until a worker answers (see :data:`SPAWN_HINT`)."""
        try:
            self._get_pool().submit(os.getpid).result(timeout=START_TIMEOUT)
        except (concurrent.futures.process.BrokenProcessPool, concurrent.futures.TimeoutError) as exc:
            self.close()
            raise ExecutorError(f"the process pool could not start ({type(exc).__name__}); {SPAWN_HINT}") from None

    def wait_first(self, futures: Iterable[Any]) -> tuple[set[Any], set[Any]]:
        done, pending = concurrent.futures.wait(list(futures), return_when=concurrent.futures.FIRST_COMPLETED)
        return set(done), set(pending)

    def share(self, obj: Any) -> Shared:
        if self._folder is None:
            self._folder = Path(tempfile.mkdtemp(prefix="dpopt-shared-"))
        token = _new_token()
        path = self._folder / f"{token}.pkl"
        with open(path, "wb") as f:
            pickle.dump(obj, f, protocol=pickle.HIGHEST_PROTOCOL)
        return Shared(token, "file", str(path))

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None


class DaskExecutor(Executor):
    """Tasks on a ``dask.distributed`` cluster.

    Parameters
    ----------
    client : distributed.Client
    owned : bool
        Close the client (and ``cluster``) in :meth:`close`: True only when dpopt started them.
    cluster : distributed.LocalCluster, optional
        The cluster dpopt started for this executor.
    """

    name = "dask"

    def __init__(self, client: Any, *, owned: bool = False, cluster: Any = None) -> None:
        self._client = client
        self._owned = owned
        self._cluster = cluster
        threads = client.nthreads() if hasattr(client, "nthreads") else {}
        self.workers = max(1, int(sum(threads.values())))

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        futures = {a.token: a.ref for a in (*args, *kwargs.values()) if isinstance(a, Shared) and a.kind == "dask"}
        # pure=False: every call is a new task (same arguments must still run again)
        return self._client.submit(_with_shared, fn, args, kwargs, futures, pure=False)

    def wait_first(self, futures: Iterable[Any]) -> tuple[set[Any], set[Any]]:
        from distributed import wait

        with self._client.as_current():  # wait() uses the current client; ours need not be the default
            done, pending = wait(list(futures), return_when="FIRST_COMPLETED")
        return set(done), set(pending)

    def share(self, obj: Any) -> Shared:
        return Shared(_new_token(), "dask", self._client.scatter(obj, broadcast=True, hash=False))

    def dask_client(self) -> Any:
        return self._client

    def close(self) -> None:
        if self._owned:
            self._client.close()
            if self._cluster is not None:
                self._cluster.close()
            self._owned = False

    def __repr__(self) -> str:
        return f"DaskExecutor(workers={self.workers}, owned={self._owned})"


def _with_shared(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
                 objects: dict[str, Any]) -> Any:
    """On a Dask worker: hand ``fn`` its Shared arguments with the scattered objects in them."""
    def local(a: Any) -> Any:
        return Shared(a.token, "object", objects[a.token]) if isinstance(a, Shared) and a.kind == "dask" else a

    return fn(*(local(a) for a in args), **{k: local(v) for k, v in kwargs.items()})


# ---------------------------------------------------------------------------
# resolution and the current executor
# ---------------------------------------------------------------------------

#: the executor of a run that chose none (in-process); compare with ``is``
DEFAULT = InProcessExecutor()
_current: contextvars.ContextVar[Executor] = contextvars.ContextVar("dpopt_executor", default=DEFAULT)


def current_executor() -> Executor:
    """The executor set by the innermost :func:`use_executor` (default: in-process)."""
    return _current.get()


@contextlib.contextmanager
def use_executor(executor: Executor) -> Iterator[Executor]:
    """Run the block with ``executor`` as :func:`current_executor` (it is not closed here)."""
    if not isinstance(executor, Executor):
        raise ExecutorError(f"use_executor needs an Executor (see resolve_executor), got {type(executor).__name__}")
    token = _current.set(executor)
    try:
        yield executor
    finally:
        _current.reset(token)


def resolve_executor(spec: ExecutorSpec, *, scheduler: str | None = None, workers: int | None = None) -> Executor:
    """The executor named by ``spec``.

    Parameters
    ----------
    spec : str, Executor, distributed.Client or None
        None: the default in-process executor (:data:`DEFAULT`); ``"inprocess"``;
        ``"processes"`` (a local process pool of ``workers`` processes, default the CPU
        count); ``"dask"`` (a client of ``scheduler``, else of a :class:`distributed.LocalCluster`
        of ``workers`` single-threaded worker processes started now, without dashboard);
        an :class:`Executor` (returned as is); a ``distributed.Client`` (used, never closed
        by dpopt).
    scheduler : str, optional
        A Dask scheduler address such as ``"tcp://10.0.0.5:8786"`` (only with ``"dask"``).
    workers : int, optional
        Processes of a pool or LocalCluster dpopt starts.

    Raises
    ------
    ExecutorError
        An unknown name (the message lists the names), a bad option, or a scheduler that
        cannot be reached within :data:`CONNECT_TIMEOUT` seconds.
    BackendUnavailableError
        ``"dask"`` without dask installed.
    """
    if workers is not None:
        _positive_workers(workers)
    if spec is None and scheduler is None and workers is None:
        return DEFAULT
    if isinstance(spec, Executor):
        return spec
    if _is_dask_client(spec):
        return DaskExecutor(spec, owned=False)
    if spec is None:
        spec = "dask" if scheduler is not None else "processes"
    if not isinstance(spec, str):
        raise ExecutorError(f"executor must be one of {', '.join(NAMES)}, an Executor or a dask Client, "
                            f"got {type(spec).__name__}")
    name = spec.strip().lower()
    if name not in NAMES:
        raise ExecutorError(f"unknown executor {spec!r}; known executors: {', '.join(NAMES)}")
    if scheduler is not None and name != "dask":
        raise ExecutorError(f"a scheduler address needs executor 'dask', not {name!r}")
    if name == "inprocess":
        if workers not in (None, 1):
            raise ExecutorError("the in-process executor runs one task at a time; use 'processes' for workers > 1")
        return InProcessExecutor()
    if name == "processes":
        return ProcessExecutor(workers)
    return _dask_executor(scheduler, workers)


def _positive_workers(workers: Any) -> int:
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ExecutorError(f"workers must be a positive integer, got {workers!r}")
    return workers


def _is_dask_client(obj: Any) -> bool:
    distributed = sys.modules.get("distributed")  # a Client exists only if distributed was imported
    return distributed is not None and isinstance(obj, distributed.Client)


def _import_distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise BackendUnavailableError(
            "executor 'dask' needs dask.distributed, which is not installed; "
            'install it with pip install "dpopt[dask]", or use executor "processes"') from None
    return distributed


def _dask_executor(scheduler: str | None, workers: int | None) -> DaskExecutor:
    distributed = _import_distributed()
    if scheduler is not None:
        try:
            client = distributed.Client(scheduler, timeout=CONNECT_TIMEOUT, set_as_default=False)
        except (OSError, TimeoutError, ValueError) as exc:
            raise ExecutorError(f"cannot reach the Dask scheduler at {scheduler!r} within {CONNECT_TIMEOUT:g} s "
                                f"({type(exc).__name__}); start it (dask scheduler) or fix the address") from None
        return DaskExecutor(client, owned=True)
    n = workers or os.cpu_count() or 1
    cluster = _local_cluster(distributed, n)
    try:
        client = distributed.Client(cluster, set_as_default=False)
        client.wait_for_workers(n, timeout=60)
    except BaseException:
        cluster.close()
        raise
    return DaskExecutor(client, owned=True, cluster=cluster)


def _local_cluster(distributed: Any, n: int) -> Any:
    """A LocalCluster of ``n`` single-threaded worker processes, or ExecutorError with :data:`SPAWN_HINT`."""
    try:
        return distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None,
                                        # its HTTP server on a free local port, not on 8787
                                        scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
                                        silence_logs=logging.ERROR)
    except RuntimeError as exc:  # "Nanny failed to start": a worker process died while starting
        raise ExecutorError(f"the Dask LocalCluster could not start its workers ({exc}); {SPAWN_HINT}") from None
