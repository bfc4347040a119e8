"""Finding the mechanisms, losses, sets and backends that dpopt defines, by their base class.

One walk of ``__subclasses__()`` serves the code (a refusal naming the mechanisms that accept
a problem) and the guard tests (every mechanism has its privacy tests, every loss passes
``check_loss``, every set has a contract fixture, every backend is registered): a class is
found as soon as its module is imported, so adding one needs no list to update.

>>> from dpopt.discovery import import_package, subclasses
>>> import_package("dpopt.mechanisms")                      # doctest: +SKIP
>>> subclasses(Mechanism, within="dpopt.mechanisms")        # doctest: +SKIP

This module sits in the lowest layer: it takes the base class and the package as arguments
and imports nothing of dpopt itself.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from typing import Any

__all__ = ["import_package", "subclasses"]

def import_package(package: str) -> None:
    """Import every module of ``package`` and its sub-packages, so their classes are found.

    Parameters
    ----------
    package : str
        A dotted package name (``"dpopt.mechanisms"``, ``"dpopt.backends"``).
    """
    root = importlib.import_module(package)
    for info in pkgutil.walk_packages(root.__path__, package + "."):
        importlib.import_module(info.name)


def _inside(module: str, within: str | None) -> bool:
    return within is None or module == within or module.startswith(within + ".")


def subclasses(base: type, *, within: str | None = "dpopt", concrete: bool = True,
               public: bool = False, exclude: tuple[str, ...] = ()) -> list[type[Any]]:
    """Every subclass of ``base`` loaded in this process (recursively), in a stable order.

    Parameters
    ----------
    base : type
        The base class (``Mechanism``, ``Loss``, ``ConstraintSet``, ``Backend``, ...).
    within : str or None, default "dpopt"
        Keep the classes defined in this module or below it (so the mutants and fixtures
        that test modules define are left out); None keeps every loaded subclass.
    concrete : bool, default True
        Leave out abstract classes (:func:`inspect.isabstract`).
    public : bool, default False
        Leave out classes whose name starts with ``_`` (private bases and helpers).
    exclude : tuple of str
        Leave out the classes defined in these modules or below them
        (``("dpopt.testing",)``: the audit harness's own mechanisms).

    Returns
    -------
    list of type
        Each class once, sorted by module and qualified name.  Only imported modules are
        seen: import the package first (:func:`import_package`) to find every class of it.
    """
    found: set[type[Any]] = set()
    stack: list[type[Any]] = list(base.__subclasses__())
    while stack:
        cls = stack.pop()
        if cls in found:
            continue
        stack.extend(cls.__subclasses__())
        if (_inside(cls.__module__, within) and not any(_inside(cls.__module__, m) for m in exclude)
                and not (concrete and inspect.isabstract(cls))
                and not (public and cls.__name__.startswith("_"))):
            found.add(cls)
    return sorted(found, key=lambda c: (c.__module__, c.__qualname__))
