"""Numerical routines a declaration uses but a higher layer provides: named slots.

A few declarations answer questions that need a solver or a numerical layer above
:mod:`dpopt.modeling`: a :class:`~dpopt.modeling.structured_sets.HPolytope`'s linear programs
(:data:`POLYTOPE_SOLVER`), the dual norm of a submodular function beyond its closed forms
(:data:`SUBMODULAR_DUAL_LP`) and the q-norm potential's vertex weights (:data:`QNORM_WEIGHTS`).
The modeling layer names the slot; the module that implements it installs itself in the slot
when it is imported (:func:`install`), and the package root :mod:`dpopt` registers, for each
slot, the import that provides its default (:func:`on_first_use`).  Every ``dpopt.*`` module is
imported after the package root, so a slot's default is always known and no module of a lower
layer names a module above it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dpopt.errors import ModelError

__all__ = ["POLYTOPE_SOLVER", "QNORM_WEIGHTS", "SUBMODULAR_DUAL_LP", "install", "on_first_use", "routine"]

#: linear programs and projections over ``{x : A x ≤ b}`` (installed by :mod:`dpopt.backends.lp`)
POLYTOPE_SOLVER = "polytope solver"
#: ``(F, a) ↦ (Ω*(a), θ, converged)`` by constraint generation (:mod:`dpopt.numerics.submodular_lp`)
SUBMODULAR_DUAL_LP = "submodular dual-norm program"
#: ``(V, θ, q) ↦ argmin ‖α‖_q s.t. Vᵀα = θ`` (installed by :mod:`dpopt.compile.qnorm_weights`)
QNORM_WEIGHTS = "q-norm weight solver"

_INSTALLED: dict[str, Any] = {}
_LOADERS: dict[str, Callable[[], None]] = {}


def install(slot: str, implementation: Any) -> None:
    """Make ``implementation`` the one every user of ``slot`` calls (replacing any other)."""
    _INSTALLED[slot] = implementation


def on_first_use(slot: str, loader: Callable[[], None]) -> None:
    """Run ``loader`` (an import that installs the slot's default) when ``slot`` is first read
    and nothing is installed in it yet."""
    _LOADERS[slot] = loader


def routine(slot: str) -> Any:
    """The implementation installed in ``slot``, loading the default on first use.

    Raises
    ------
    ModelError
        If nothing is installed in the slot and no default is registered.
    """
    if slot not in _INSTALLED and slot in _LOADERS:
        _LOADERS[slot]()
    if slot not in _INSTALLED:
        raise ModelError(f"no {slot} is installed (import dpopt, which registers the default)")
    return _INSTALLED[slot]
