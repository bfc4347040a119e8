"""Solver backends: the oracles mechanisms call, one module per solver.

>>> import dpopt as dp
>>> dp.backends.names()                                     # doctest: +SKIP
['bruteforce', 'clarabel', 'cpsat', 'highs', ...]
>>> result = dp.backends.get("clarabel").solve_problem(problem)  # doctest: +SKIP

:func:`get` and :func:`names` read the registry (:mod:`dpopt.backends.registry`: built-ins
and ``dpopt.backends`` entry-point plug-ins); :class:`Backend` is the interface a backend
implements, and :class:`OracleResult` (with :class:`OracleStatus`, :class:`Limit`) what a
solve returns — a diagnostic computed from the data without noise, never part of a
release.  Each backend module imports its solver package when the backend is first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpopt._lazy import attach

#: public name -> the module that defines it: the one registration of a public name (then run
#: `python -m dpopt._stubs` to regenerate the TYPE_CHECKING block below)
_EXPORTS = {
    "Backend": "dpopt.backends.base",
    "get": "dpopt.backends.registry",
    "names": "dpopt.backends.registry",
    "Limit": "dpopt.backends.result",
    "OracleResult": "dpopt.backends.result",
    "OracleStatus": "dpopt.backends.result",
    "SolveOptions": "dpopt.backends.result",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = attach(__name__, _EXPORTS)

if TYPE_CHECKING:  # generated from _EXPORTS by `python -m dpopt._stubs`; do not edit
    from dpopt.backends.base import Backend as Backend
    from dpopt.backends.registry import get as get
    from dpopt.backends.registry import names as names
    from dpopt.backends.result import Limit as Limit
    from dpopt.backends.result import OracleResult as OracleResult
    from dpopt.backends.result import OracleStatus as OracleStatus
    from dpopt.backends.result import SolveOptions as SolveOptions
