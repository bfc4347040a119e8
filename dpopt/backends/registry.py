"""The backend registry: built-ins and plug-ins register the same way.

Every backend is an *entry*: a name and a ``"module:attribute"`` target naming a factory
(a Backend subclass or any callable returning a Backend).  The built-ins are the list
:data:`BUILTINS`; third-party packages add theirs to the ``dpopt.backends`` entry-point
group (:data:`ENTRY_POINT_GROUP`), e.g. in their ``pyproject.toml``::

    [project.entry-points."dpopt.backends"]
    mysolver = "mypackage.backend:MyBackend"

Both lists are loaded by one function (:func:`load_entry`), on first use.  A built-in
wins over a plug-in of the same name.  An entry that fails to load does not break dpopt:
it is recorded with a one-line error (:func:`failures`), and ``dpopt doctor`` prints it.
A built-in backend's one registration is its line in :data:`BUILTINS` (its module does not
register itself; ``tests/test_discovery.py`` checks both ways); :func:`register` is for
scripts and tests that add a backend at run time.

What a backend can do is declared on its class (``kind``, ``auto_rank``, ``verifier_rank``,
``formulation``, ``solves_steps``, ``solves_lp``, ``check_options``, ...: see
:class:`~dpopt.backends.base.Backend`); the orders dpopt needs (``solver="auto"``'s, the
verifiers') are derived from the registered backends by :func:`ranked`, so a plug-in that
declares a rank takes its place in them.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import threading
from collections.abc import Callable

from dpopt.backends.base import Backend
from dpopt.errors import UnknownSolverError

__all__ = ["BUILTINS", "ENTRY_POINT_GROUP", "failures", "get", "load_entry", "names", "ranked", "register"]

_FACTORIES: dict[str, Callable[[], Backend]] = {}
_FAILURES: dict[str, str] = {}
_LOCK = threading.RLock()
_BUILTINS_LOADED = False
_ENTRY_POINTS_LOADED = False
ENTRY_POINT_GROUP = "dpopt.backends"

#: the built-in backends: (name, "module:factory"), loaded like entry points
BUILTINS: tuple[tuple[str, str], ...] = (
    ("bruteforce", "dpopt.backends.bruteforce:BruteForceBackend"),
    ("clarabel", "dpopt.backends.clarabel:ClarabelBackend"),
    ("cpsat", "dpopt.backends.cpsat:CpSatBackend"),
    ("highs", "dpopt.backends.highs:HighsBackend"),
    ("highs-grouped", "dpopt.backends.highs_grouped:HighsGroupedBackend"),
    ("osqp", "dpopt.backends.osqp:OsqpBackend"),
    ("scip", "dpopt.backends.scip:ScipBackend"),
    ("scipy", "dpopt.backends.scipy_backend:ScipyBackend"),
    ("scipy-lp", "dpopt.backends.lp:ScipyLPBackend"),
    ("scs", "dpopt.backends.scs:ScsBackend"),
)


def register(name: str, factory: Callable[[], Backend], *, replace: bool = False) -> None:
    """Register a backend factory under ``name`` (lower-case).

    Registering the same factory again under the same name is a no-op.
    """
    key = name.lower()
    with _LOCK:
        if key in _FACTORIES and not replace and _FACTORIES[key] is not factory:
            raise ValueError(f"a backend named {key!r} is already registered")
        _FACTORIES[key] = factory


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def load_entry(name: str, load: Callable[[], object], *, source: str) -> bool:
    """Load one entry and register it; on failure record ``name`` with a one-line error.

    Parameters
    ----------
    name : str
        The backend name.
    load : callable
        Returns the factory (``EntryPoint.load`` or an import of ``"module:attribute"``).
    source : str
        Where the entry comes from ("built-in" or "plug-in"), for the recorded error.

    Returns
    -------
    bool
        Whether ``name`` is registered afterwards.
    """
    key = name.lower()
    try:
        factory = load()
        if not callable(factory):
            raise TypeError(f"{type(factory).__name__} is not a backend factory (a Backend subclass)")
    except Exception as exc:  # noqa: BLE001 — a broken entry must not break dpopt: it is recorded
        with _LOCK:
            if key not in _FACTORIES:
                _FAILURES[key] = f"{source} failed to load: {_one_line(exc)}"
        return key in _FACTORIES
    with _LOCK:
        if key not in _FACTORIES:  # a script may have registered the name first
            register(key, factory)
        _FAILURES.pop(key, None)
    return True


def _import_target(target: str) -> Callable[[], object]:
    module, _, attr = target.partition(":")
    return lambda: getattr(importlib.import_module(module), attr)


def _load_builtins() -> None:
    global _BUILTINS_LOADED
    if _BUILTINS_LOADED:
        return
    _BUILTINS_LOADED = True
    for name, target in BUILTINS:
        load_entry(name, _import_target(target), source="built-in")


def _load_entry_points() -> None:
    global _ENTRY_POINTS_LOADED
    if _ENTRY_POINTS_LOADED:
        return
    _ENTRY_POINTS_LOADED = True
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        if ep.name.lower() in _FACTORIES:
            _FAILURES.setdefault(ep.name.lower(), f"plug-in {ep.value!r} ignored: a backend of this "
                                                  "name is already registered")
            continue
        load_entry(ep.name, ep.load, source=f"plug-in {ep.value!r}")


def names() -> list[str]:
    """All registered backend names, sorted."""
    _load_builtins()
    _load_entry_points()
    return sorted(_FACTORIES)


def failures() -> dict[str, str]:
    """Entries that failed to load or were ignored: name → one-line reason (for ``dpopt doctor``)."""
    names()
    with _LOCK:
        return dict(sorted(_FAILURES.items()))


def get(name: str) -> Backend:
    """The backend registered as ``name``.

    Raises
    ------
    UnknownSolverError
        Naming the known backends (and why a named entry failed to load, if it did).
    """
    known = names()
    if not isinstance(name, str) or name.lower() not in _FACTORIES:
        why = _FAILURES.get(name.lower(), "") if isinstance(name, str) else ""
        raise UnknownSolverError(
            f"unknown solver {name!r}{f' ({why})' if why else ''}; known solvers: {', '.join(known)} "
            "(or a profile file such as solvers/clarabel.toml)"
        )
    return _FACTORIES[name.lower()]()


def ranked(rank: Callable[[Backend], float | None]) -> list[Backend]:
    """The registered backends that ``rank`` ranks (not None), lowest rank first, ties by name.

    The one way the tables of capabilities are derived from the classes' declarations, e.g.
    ``ranked(lambda b: b.verifier_rank)`` (the verifiers, best first).  A factory that raises is
    left out (it cannot be chosen either).
    """
    out: list[tuple[float, str, Backend]] = []
    for name in names():
        try:
            backend = _FACTORIES[name]()
        except Exception:  # noqa: BLE001 — a broken plug-in must not break the choice of the others
            continue
        value = rank(backend)
        if value is not None:
            out.append((value, name, backend))
    return [backend for _, _, backend in sorted(out, key=lambda t: (t[0], t[1]))]
