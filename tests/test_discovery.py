"""One discovery helper (:mod:`dpopt.discovery`) and the one registration it lets the guards check.

The helper is tested against hand-built class trees (abstract, private, diamond, other
modules).  The guards then use it the way the code does: every mechanism, loss and set the
package defines is registered in its public namespace, and every built-in backend is
registered once, by its line in ``BUILTINS`` (no module registers itself on import).
"""

from __future__ import annotations

import ast
import importlib
from abc import ABC, abstractmethod
from pathlib import Path

import pytest

import dpopt as dp
from dpopt.backends import registry
from dpopt.backends.base import Backend
from dpopt.discovery import import_package, subclasses
from dpopt.mechanisms.base import Mechanism
from dpopt.modeling.constraint_set import ConstraintSet
from dpopt.modeling.losses import Loss


class _Root(ABC):
    @abstractmethod
    def f(self) -> None: ...


class _Left(_Root):
    def f(self) -> None: ...


class _Right(_Root):
    pass  # abstract: f is not defined


class _Both(_Left, _Right):  # reached twice through the diamond
    pass


class Public(_Left):
    pass


def test_subclasses_walks_the_tree_once_and_filters_as_asked() -> None:
    here = __name__
    assert subclasses(_Root, within=here) == sorted([_Both, _Left, Public], key=lambda c: c.__qualname__)
    assert subclasses(_Root, within=here, concrete=False) == sorted(
        [_Both, _Left, _Right, Public], key=lambda c: c.__qualname__)
    assert subclasses(_Root, within=here, public=True) == [Public]
    assert subclasses(_Root, within="dpopt") == []  # defined in this test module, not in dpopt
    assert subclasses(_Root, within=here, exclude=(here,)) == []
    assert subclasses(_Root, within=here.rpartition(".")[0] or here) != []  # a parent package counts
    assert subclasses(_Root, within=here + "x") == []  # a sibling whose name merely starts the same does not


def test_import_package_loads_every_module_of_it() -> None:
    import_package("dpopt.mechanisms")
    files = {p.stem for p in Path(importlib.import_module("dpopt.mechanisms").__file__ or "").parent.glob("*.py")}
    loaded = {m.__module__.rpartition(".")[2] for m in subclasses(Mechanism, concrete=False)}
    assert loaded <= files and {"objective_perturbation", "gradient_descent", "opdisc"} <= loaded


def _registered(namespace: object) -> dict[str, object]:
    return {name: getattr(namespace, name) for name in namespace.__all__}  # type: ignore[attr-defined]


@pytest.mark.parametrize(("base", "package", "namespace"), [
    (Mechanism, "dpopt.mechanisms", dp),
    (Loss, "dpopt.modeling", dp.losses),
    (ConstraintSet, "dpopt.modeling", dp.sets),
], ids=["mechanisms", "losses", "sets"])
def test_every_class_the_package_defines_is_registered_in_its_namespace(base: type, package: str,
                                                                        namespace: object) -> None:
    """A new mechanism, loss or set is one line in its namespace's ``_EXPORTS`` (docs/extending.md);
    a module without that line fails here, naming it."""
    import_package(package)
    found = subclasses(base, within=package, public=True)
    assert found
    exported = _registered(namespace)
    missing = [f"{c.__module__}.{c.__qualname__}" for c in found if exported.get(c.__name__) is not c]
    assert not missing, f"register these in {namespace.__name__}'s _EXPORTS: {missing}"  # type: ignore[attr-defined]


def test_every_builtin_backend_is_registered_once_in_builtins() -> None:
    import_package("dpopt.backends")
    targets = dict(registry.BUILTINS)
    assert len(targets) == len(registry.BUILTINS)  # no name twice
    named = [c for c in subclasses(Backend, within="dpopt.backends") if c.name]
    assert named
    for cls in named:
        assert targets.get(cls.name) == f"{cls.__module__}:{cls.__qualname__}", (
            f"add ({cls.name!r}, '{cls.__module__}:{cls.__qualname__}') to BUILTINS in dpopt/backends/registry.py")
    for name, target in registry.BUILTINS:
        module, _, attr = target.partition(":")
        assert getattr(importlib.import_module(module), attr).name == name, target


def _module_level_register_calls(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [node.lineno for node in tree.body if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name | ast.Attribute)
            and (getattr(node.value.func, "id", None) or getattr(node.value.func, "attr", None)) == "register"]


def test_no_builtin_backend_module_registers_itself(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("from dpopt.backends.registry import register\n\nregister('x', object)\n"
                     "def f():\n    register('y', object)\n", encoding="utf-8")
    assert _module_level_register_calls(probe) == [3]  # the check sees a module-level call, not one in a function
    folder = Path(registry.__file__).parent
    calls = {p.name: _module_level_register_calls(p) for p in sorted(folder.glob("*.py"))}
    assert {name: lines for name, lines in calls.items() if lines} == {}, (
        "a built-in backend registers once, by its line in BUILTINS (dpopt/backends/registry.py); "
        "remove the module's own register(...) call")
