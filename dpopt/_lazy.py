"""Lazy attributes of dpopt's namespace modules (PEP 562).

A namespace (``dpopt``, ``dpopt.sets``, ``dpopt.backends``, ...) lists each public name and
the module that defines it; :func:`attach` returns the module-level ``__getattr__`` and
``__dir__`` that import that module the first time the name is read.  ``import dpopt``
therefore loads no solver package, no numerical library beyond what a name needs, and no
mechanism: ``dp.ObjectivePerturbation`` imports the mechanisms when it is first used.

The objects are the defining modules' own (``dp.L2Ball is dpopt.modeling.balls.L2Ball``), so
pickles, ``isinstance`` and ``repr`` are unchanged.

A namespace registers each public name once, in its ``_EXPORTS`` map (and its sub-namespaces in
``_SUBMODULES``); ``__all__`` is ``sorted`` of them.  What type checkers and IDEs see is the
``if TYPE_CHECKING:`` block at the namespace's end, generated from that map by
``python -m dpopt._stubs`` (:mod:`dpopt._stubs`); ``tests/contracts/test_public_api.py`` fails while
a block is stale.

A module of declarations whose algorithms a higher layer provides (an ``HPolytope``'s linear
programs, a submodular dual norm beyond its closed forms, the q-norm potential's weights) names
them as ``functools.singledispatch`` functions; the higher layer registers its implementation
for the declarations' types.  :func:`import_after` makes the package root import those
registering modules right after the module of declarations, whoever imports it, so the
registrations are in place before any declaration can be used and no lower layer names a
module above it.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.abc
import importlib.machinery
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import ModuleType
from typing import Any

__all__ = ["attach", "import_after"]


def attach(
    namespace: str,
    exports: Mapping[str, str],
    submodules: Iterable[str] = (),
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of the namespace module ``namespace``.

    Parameters
    ----------
    namespace : str
        The module's ``__name__``.
    exports : mapping of str to str
        Public name → the module that defines it under that name
        (``{"L2Ball": "dpopt.modeling.balls"}`` reads ``dpopt.modeling.balls.L2Ball``).
    submodules : iterable of str
        Public names that are modules of the namespace itself (``"sets"`` is
        ``dpopt.sets`` for the namespace ``dpopt``).

    Returns
    -------
    (__getattr__, __dir__)
        ``__getattr__(name)`` imports the defining module on first use and caches the value
        in the namespace (later reads are plain attribute reads).  A name that is neither
        exported nor private falls back to the namespace's own module of that name
        (``dp.mechanisms`` imports ``dpopt.mechanisms``, as a package attribute of a
        submodule works after an eager import); otherwise AttributeError, which names the
        sub-namespace that has the name (``dp.VertexPolytope``: "it is
        dpopt.sets.VertexPolytope") or the closest public name.  ``__dir__()``
        lists the public names and the module's dunder attributes (``__version__``), not
        the helpers the module imports for itself (``attach``, ``TYPE_CHECKING``).
    """
    targets = dict(exports)
    own = frozenset(submodules)

    def __getattr__(name: str) -> Any:
        if name in targets:
            value = getattr(importlib.import_module(targets[name]), name)
        elif name in own or not name.startswith("_"):
            try:
                value = _submodule(namespace, name)
            except AttributeError as exc:
                raise AttributeError(f"{exc}{_hint(namespace, name, [*targets, *own], own)}") from None
        else:
            raise AttributeError(f"module {namespace!r} has no attribute {name!r}")
        setattr(sys.modules[namespace], name, value)
        return value

    def __dir__() -> list[str]:
        dunders = (n for n in vars(sys.modules[namespace]) if n.startswith("__"))
        return sorted({*dunders, *targets, *own})

    return __getattr__, __dir__


def _submodule(namespace: str, name: str) -> Any:
    """The module ``namespace.name``; AttributeError when there is no such module."""
    fullname = f"{namespace}.{name}"
    try:
        return importlib.import_module(fullname)
    except ModuleNotFoundError as exc:
        if exc.name != fullname:  # the module exists but one of its own imports is missing
            raise
        raise AttributeError(f"module {namespace!r} has no attribute {name!r}") from None


def _hint(namespace: str, name: str, public: Iterable[str], submodules: Iterable[str]) -> str:
    """Where a missing name is: a sub-namespace that exports it, else the closest public name."""
    for sub in sorted(submodules):
        if name in getattr(importlib.import_module(f"{namespace}.{sub}"), "__all__", ()):
            return f": it is {namespace}.{sub}.{name}"
    close = difflib.get_close_matches(name, list(public), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def import_after(follow: Mapping[str, Sequence[str]]) -> None:
    """Import ``follow[name]`` right after the module ``name`` is imported, by anyone.

    Parameters
    ----------
    follow : mapping of str to sequence of str
        A module of declarations → the modules that register algorithms for its declarations
        (``{"dpopt.modeling.structured_sets": ("dpopt.backends.polytope_programs",)}``).  A
        registering module should import little at module level: it runs while the module
        that imported the declarations may still be half initialized.
    """
    sys.meta_path.insert(0, _Follower({name: tuple(then) for name, then in follow.items()}))


class _Follower(importlib.abc.MetaPathFinder):
    """Finds the modules of :func:`import_after` as usual, with a loader that imports their followers."""

    def __init__(self, follow: Mapping[str, tuple[str, ...]]) -> None:
        self._follow = dict(follow)

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        then = self._follow.get(fullname)
        if then is None:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is None or spec.loader is None:
            return None
        spec.loader = _ThenImport(spec.loader, then)
        return spec


class _ThenImport(importlib.abc.Loader):
    """A module's own loader, then the imports of its followers (every other attribute is the loader's)."""

    def __init__(self, loader: importlib.abc.Loader, then: tuple[str, ...]) -> None:
        self._loader = loader
        self._then = then

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._loader.exec_module(module)
        for name in self._then:
            importlib.import_module(name)

    def __getattr__(self, name: str) -> Any:  # get_source, get_filename, is_package, ...
        return getattr(self._loader, name)
