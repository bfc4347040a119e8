"""BLAS thread limiting shared by every layer (no dpopt imports: any module may use it).

dpopt's numerical kernels on data are small matrix-vector and matrix-matrix products
(n ≈ 10⁴–10⁵ rows, d ≤ a few thousand).  Multi-threaded OpenBLAS gains little on them and,
on a machine whose cores are shared, its spinning worker threads make them several times
slower ("thread thrash").  :func:`blas_threads` limits BLAS for the duration of a block
through threadpoolctl (a declared dependency; without it the block runs unlimited).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["blas_threads"]

_controller: list[Any] = []
_lock = threading.Lock()


def _get_controller() -> Any | None:
    with _lock:
        if not _controller:
            try:
                from threadpoolctl import ThreadpoolController
            except ImportError:  # pragma: no cover — a declared dependency
                _controller.append(None)
            else:
                _controller.append(ThreadpoolController())
        return _controller[0]


@contextlib.contextmanager
def blas_threads(threads: int | None = None) -> Iterator[None]:
    """Limit BLAS to ``threads`` threads (default 1) inside the block.

    Parameters
    ----------
    threads : int, optional
        Threads BLAS may use (None: 1).
    """
    controller = _get_controller()
    if controller is None:  # pragma: no cover
        yield
        return
    with controller.limit(limits=max(1, int(threads or 1)), user_api="blas"):
        yield
