"""The backend registry: built-ins plus the ``dpopt.backends`` entry-point group."""

from __future__ import annotations

import importlib.metadata
import threading
from collections.abc import Callable

from dpopt.backends.base import Backend
from dpopt.errors import UnknownSolverError

_FACTORIES: dict[str, Callable[[], Backend]] = {}
_LOCK = threading.Lock()
_ENTRY_POINTS_LOADED = False
ENTRY_POINT_GROUP = "dpopt.backends"


def register(name: str, factory: Callable[[], Backend], *, replace: bool = False) -> None:
    """Register a backend factory under ``name`` (lower-case)."""
    key = name.lower()
    with _LOCK:
        if key in _FACTORIES and not replace:
            raise ValueError(f"a backend named {key!r} is already registered")
        _FACTORIES[key] = factory


def _load_builtins() -> None:
    from dpopt.backends import (  # noqa: F401 — registration side effect
        bruteforce,
        clarabel,
        cpsat,
        highs,
        highs_grouped,
        osqp,
        scipy_backend,
        scs,
    )


def _load_entry_points() -> None:
    global _ENTRY_POINTS_LOADED
    if _ENTRY_POINTS_LOADED:
        return
    _ENTRY_POINTS_LOADED = True
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        if ep.name.lower() in _FACTORIES:
            continue
        try:
            factory = ep.load()
        except Exception:  # noqa: BLE001 — a broken plug-in must not break dpopt
            continue
        register(ep.name, factory)


def names() -> list[str]:
    """All registered backend names, sorted."""
    _load_builtins()
    _load_entry_points()
    return sorted(_FACTORIES)


def get(name: str) -> Backend:
    """The backend registered as ``name``.

    Raises
    ------
    UnknownSolverError
        Naming the known backends.
    """
    known = names()
    if not isinstance(name, str) or name.lower() not in _FACTORIES:
        raise UnknownSolverError(
            f"unknown solver {name!r}; known solvers: {', '.join(known)} "
            "(or a profile file such as solvers/clarabel.toml)"
        )
    return _FACTORIES[name.lower()]()
