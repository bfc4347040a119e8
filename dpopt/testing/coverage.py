"""Which mechanism each privacy test covers, stated by the test itself (docs/design.md, "Privacy rules").

Every concrete :class:`~dpopt.mechanisms.base.Mechanism` needs three kinds of test in the
default run:

``"neighbour"``
    a whole-program neighbour test: on a replace-one pair, everything besides the noisy
    output (released or which error, the charge, the public record) is the same;
``"audit"``
    a statistical audit (:func:`dpopt.testing.audit`) that does not refute the claim;
``"mutation"``
    the same audit catches a deliberately weakened variant of the mechanism.

A test says what it covers with the one pytest mark :func:`covers`, on the test or on one
parameter of a parametrized test::

    @covers(dp.OPDisc, kind="audit")
    def test_opdisc_audit_no_violation(): ...

    @pytest.mark.parametrize("name", [pytest.param("rspm", marks=covers(dp.RSPM, kind="neighbour"))])
    def test_neighbours(name): ...

:func:`coverage_of` reads those marks statically from imported test modules (module,
class, function and parameter marks), so a guard test sees every mark even when it runs
alone; :func:`concrete_mechanisms` finds the mechanisms (:mod:`dpopt.discovery`)
and :func:`missing_kinds` / :func:`describe_gaps` name what is missing.  A test that does
not run by default (``slow``, ``skip``, ``xfail``, ``skipif(True)``) covers nothing.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import itertools
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from dpopt.discovery import import_package, subclasses
from dpopt.errors import ModelError
from dpopt.mechanisms.base import Mechanism

if TYPE_CHECKING:
    from _pytest.mark.structures import MarkDecorator

__all__ = ["KINDS", "MARK", "concrete_mechanisms", "coverage_of", "covers",
           "describe_gaps", "import_test_modules", "missing_kinds"]

#: the kinds of test every concrete mechanism needs
KINDS: tuple[str, ...] = ("neighbour", "audit", "mutation")
#: the name of the pytest mark (registered in pyproject.toml)
MARK = "covers"
#: marks that keep a test out of the default run (``addopts = -m 'not slow'``) or excuse its failure
_NOT_DEFAULT = frozenset({"slow", "skip", "xfail"})
#: what a test file that marks coverage contains (only such files are imported)
_MARKING = ("covers(",)

Covered = dict[tuple[type, str], list[str]]


# ----------------------------------------------------------------------------- marking tests


def _checked(mechanisms: Sequence[object], kind: object) -> tuple[type[Mechanism], ...]:
    if kind not in KINDS:
        raise ModelError(f"kind must be one of {', '.join(map(repr, KINDS))}; got {kind!r}")
    if not mechanisms:
        raise ModelError("name at least one Mechanism class the test covers")
    for m in mechanisms:
        if not (isinstance(m, type) and issubclass(m, Mechanism)):
            raise ModelError(f"covers takes Mechanism classes, got {m!r}")
    return tuple(mechanisms)  # type: ignore[arg-type]  # checked just above


def covers(*mechanisms: type[Mechanism], kind: str) -> MarkDecorator:
    """The pytest mark ``covers(*mechanisms, kind=kind)``: this test covers these mechanisms.

    Parameters
    ----------
    *mechanisms : type
        The mechanism classes under test (the honest class, also for a mutation test).
    kind : {"neighbour", "audit", "mutation"}
        What kind of test it is (see the module docstring).

    Returns
    -------
    pytest.MarkDecorator
        Use it as a decorator, or as ``pytest.param(..., marks=covers(...))``.

    Raises
    ------
    ModelError
        If ``kind`` is not a known kind or an argument is not a Mechanism class.
    """
    import pytest  # a test-time helper: dpopt itself does not depend on pytest

    return pytest.mark.covers(*_checked(mechanisms, kind), kind=kind)


# ----------------------------------------------------------------------------- reading marks


def _marks(obj: object) -> list[Any]:
    """The marks stored on ``obj`` (``pytestmark``: one mark or decorator, or a list of them)."""
    raw = getattr(obj, "pytestmark", [])
    items = raw if isinstance(raw, (list, tuple)) else [raw]
    return [getattr(m, "mark", m) for m in items]


def _runs_by_default(marks: Iterable[Any]) -> bool:
    for m in marks:
        if m.name in _NOT_DEFAULT:
            return False
        condition = m.args[0] if m.args else m.kwargs.get("condition")
        if m.name == "skipif" and condition is True:  # a string condition is evaluated by pytest only
            return False
    return True


def _axis(mark: Any) -> list[tuple[str, list[Any]]]:
    """One parametrize mark as (id, marks) per parameter (plain values carry no marks)."""
    values = mark.args[1] if len(mark.args) > 1 else mark.kwargs.get("argvalues", [])
    if not isinstance(values, Sequence):
        return [("?", [])]  # a generator: reading it would consume pytest's copy
    axis = []
    for i, v in enumerate(values):
        param = _is_param(v)
        marks = [getattr(m, "mark", m) for m in v.marks] if param else []
        axis.append((_param_id(v, i, param), marks))
    return axis or [("?", [])]


def _param_id(value: Any, index: int, param: bool) -> str:
    """pytest's id for a parameter when it is plain (an explicit id, one str/number/bool), else its index."""
    if param and value.id is not None:
        return str(value.id)
    inner = value.values if param else (value,)
    if len(inner) == 1 and isinstance(inner[0], (str, int, float, bool)):
        return str(inner[0])
    return str(index)


def _is_param(value: object) -> bool:
    return type(value).__name__ == "ParameterSet" and hasattr(value, "marks") and hasattr(value, "values")


def _test_functions(module: ModuleType) -> Iterator[tuple[str, Any, list[Any]]]:
    """(name, function, inherited marks) of every test pytest would collect from ``module``."""
    inherited = _marks(module)
    for name, obj in vars(module).items():
        if name.startswith("test") and inspect.isfunction(obj):
            yield name, obj, inherited
        elif name.startswith("Test") and inspect.isclass(obj):
            for attr, fn in vars(obj).items():
                if attr.startswith("test") and inspect.isfunction(fn):
                    yield f"{name}::{attr}", fn, inherited + _marks(obj)


def _record(covered: Covered, marks: list[Any], test_id: str) -> None:
    if not _runs_by_default(marks):
        return
    for m in marks:
        if m.name == MARK:
            for mech in m.args:
                covered.setdefault((mech, m.kwargs.get("kind")), []).append(test_id)


def coverage_of(modules: Iterable[ModuleType]) -> Covered:
    """Which (mechanism class, kind) pairs the default run of these test modules covers.

    Parameters
    ----------
    modules : iterable of module
        Imported test modules.

    Returns
    -------
    dict
        ``(class, kind) → ["module::test[param-ids]", ...]``, from every test (and every
        combination of its parameters) that runs by default and carries a ``covers`` mark,
        its own or one inherited from its class, module or parameters.
    """
    covered: Covered = {}
    for module in modules:
        for name, fn, inherited in _test_functions(module):
            own = _marks(fn)
            plain = [m for m in own if m.name != "parametrize"]
            axes = [_axis(m) for m in own if m.name == "parametrize"]
            for combo in itertools.product(*axes):
                marks = inherited + plain + [m for _, ms in combo for m in ms]
                ids = "-".join(i for i, _ in combo)
                _record(covered, marks, f"{module.__name__}::{name}" + (f"[{ids}]" if ids else ""))
    return covered


# ----------------------------------------------------------------------------- finding things


def concrete_mechanisms(*, within: str = "dpopt", package: str | None = "dpopt.mechanisms"
                        ) -> frozenset[type[Mechanism]]:
    """Every concrete, public Mechanism subclass defined in the modules under ``within``.

    Parameters
    ----------
    within : str, default "dpopt"
        A module name: classes defined in it or below it count (so the mutants that test
        modules define do not).
    package : str or None, default "dpopt.mechanisms"
        A package whose every module is imported first, so a mechanism file that nothing
        imports yet is still found; None imports nothing.

    Returns
    -------
    frozenset of type
        The classes :func:`dpopt.discovery.subclasses` finds, without abstract ones
        (:func:`inspect.isabstract`) and private bases (a leading ``_``).
    """
    if package is not None:
        import_package(package)
    return frozenset(subclasses(Mechanism, within=within, public=True))


def _same_file(module: ModuleType | None, path: Path) -> bool:
    file = getattr(module, "__file__", None)
    return file is not None and Path(file).resolve() == path.resolve()


def _module_name(path: Path) -> tuple[str, Path]:
    """The dotted name pytest's default import mode gives a test file, and the folder it is
    imported from: the file's stem prefixed by every enclosing folder that holds an
    ``__init__.py`` (a package), and the first folder above them."""
    parts = [path.stem]
    folder = path.parent
    while (folder / "__init__.py").is_file():
        parts.insert(0, folder.name)
        folder = folder.parent
    return ".".join(parts), folder


def _import_file(path: Path) -> ModuleType:
    """Import a test file as pytest's default import mode names it, else under a private name."""
    dotted, root = _module_name(path)
    if _same_file(sys.modules.get(dotted), path):
        return sys.modules[dotted]
    if any(Path(p or ".").resolve() == root.resolve() for p in sys.path):
        module = importlib.import_module(dotted)
        if _same_file(module, path):
            return module
    name = f"_dpopt_coverage_.{dotted}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ModelError(f"cannot import the test file {path.name}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look the module up by name
    spec.loader.exec_module(module)
    return module


def import_test_modules(directory: str | Path, *, exclude: Iterable[str] = ()) -> list[ModuleType]:
    """Import every ``test_*.py`` under ``directory`` (its sub-folders included) that calls
    ``covers(``.

    A file that pytest would skip as a whole at import (``pytest.importorskip``) is left
    out: its tests do not run, so they cover nothing.

    Parameters
    ----------
    directory : str or Path
        The tests folder (searched recursively).
    exclude : iterable of str
        File names to leave out (e.g. the guard's own file).
    """
    import pytest

    skipped = set(exclude)
    modules = []
    for path in sorted(Path(directory).rglob("test_*.py")):
        text = path.read_text(encoding="utf-8")
        if path.name in skipped or not any(word in text for word in _MARKING):
            continue
        try:
            modules.append(_import_file(path))
        except pytest.skip.Exception:
            continue
    return modules


def missing_kinds(mechanisms: Iterable[type], covered: Covered) -> dict[type, tuple[str, ...]]:
    """The kinds of test each mechanism lacks (only mechanisms that lack one)."""
    gaps = {}
    for mech in mechanisms:
        lacking = tuple(k for k in KINDS if (mech, k) not in covered)
        if lacking:
            gaps[mech] = lacking
    return gaps


def describe_gaps(gaps: Mapping[type, Sequence[str]]) -> str:
    """One line per mechanism that lacks a kind of test, naming the class and the kinds."""
    lines = [f"{m.__module__}.{m.__qualname__} lacks a default-run test of kind {', '.join(k)} "
             f"(write it and mark it with dpopt.testing.coverage.covers({m.__name__}, kind=...))"
             for m, k in sorted(gaps.items(), key=lambda item: item[0].__qualname__)]
    return "\n".join(lines)
