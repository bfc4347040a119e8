"""The layers of dpopt, read from the source: imports point down, and no circle spans files.

Every module of ``dpopt`` belongs to one layer (docs/design.md, "Layers"); each layer may
import the layers below it and never one above:

    base < modeling < numerics < compile < backends < privacy < mechanisms < namespace < applications

An import is any ``import``/``from ... import`` statement of the file, also inside a function or
under ``typing.TYPE_CHECKING``; ``importlib.import_module``/``__import__`` of a literal name; and
the targets of a lazy namespace's ``_EXPORTS`` map (a name imported on first use is imported).
The checks below also refuse a circle of imports between files (a strongly connected component
of more than one module), any ``import_module`` in the modeling and numerics layers (a way to
reach a layer above without naming it), importing another module's private name, and an
exception class defined outside ``dpopt/errors.py``.

``TYPE_CHECKING`` imports count for both rules: a type from a layer above is a dependency on
it, and a type-only import back to a module that imports this one is a circle all the same (the
two files cannot be understood, moved or split apart).  Where a lower module only needs the
shape of an object from the module that calls it, it names that shape as a ``typing.Protocol``
(``dpopt.modeling.readers.Link``, ``dpopt.mechanisms.pipeline.Budgeted``).
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pytest

import dpopt

ROOT = Path(dpopt.__file__).resolve().parent

#: the layers, lowest first: a module is in the layer of its longest matching prefix
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("base", ("dpopt.errors", "dpopt._lazy", "dpopt._threads", "dpopt.progress",
              "dpopt.executors", "dpopt.discovery")),
    ("modeling", ("dpopt.modeling",)),
    ("numerics", ("dpopt.numerics",)),
    ("compile", ("dpopt.compile",)),
    ("backends", ("dpopt.backends",)),
    ("privacy", ("dpopt.privacy",)),
    ("mechanisms", ("dpopt.mechanisms",)),
    ("namespace", ("dpopt", "dpopt.sets", "dpopt.losses", "dpopt.potentials", "dpopt.submodular")),
    ("applications", ("dpopt.datasets", "dpopt.sklearn", "dpopt.bench", "dpopt.cli", "dpopt.testing",
                      "dpopt.__main__")),
)
#: circles that remain, as frozensets of modules, with who removes them (none: keep it so)
KNOWN_CIRCLES: dict[frozenset[str], str] = {}
#: (importing module, imported module, private name) that remain
KNOWN_PRIVATE: set[tuple[str, str, str]] = set()


@dataclass(frozen=True)
class Import:
    """One import of a dpopt module by another."""

    source: str
    target: str
    line: int
    type_only: bool = False
    by_string: bool = False
    names: tuple[str, ...] = ()


def module_name(path: Path, root: Path) -> str:
    """``dpopt/modeling/balls.py`` → ``dpopt.modeling.balls`` (a package is its ``__init__``)."""
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(root: Path) -> dict[str, Path]:
    """Every module of the package at ``root``: name → file."""
    return {module_name(p, root): p for p in sorted(root.rglob("*.py"))}


def _known(name: str, known: Iterable[str]) -> str | None:
    """The longest prefix of ``name`` that is a known module (``dpopt.a.b.f`` → ``dpopt.a.b``)."""
    names = set(known)
    while name and name not in names:
        name = name.rpartition(".")[0]
    return name or None


def _type_checking_lines(tree: ast.Module) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                lines.update(range(inner.lineno, (inner.end_lineno or inner.lineno) + 1))
    return lines


def _from_targets(node: ast.ImportFrom, source: str, is_package: bool, known: set[str]) -> list[tuple[str, str]]:
    """(imported module, imported name) for each name of a ``from ... import`` statement."""
    if node.level:
        base = source.split(".") if is_package else source.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        module = ".".join(base + ([node.module] if node.module else []))
    else:
        module = node.module or ""
    out = []
    for alias in node.names:
        sub = f"{module}.{alias.name}"
        target = sub if sub in known else _known(module, known)
        if target:
            out.append((target, "" if sub in known else alias.name))
    return out


def imports_of(source: str, path: Path, known: set[str]) -> list[Import]:
    """Every import of a dpopt module by the file ``path`` (module ``source``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    typing_only = _type_checking_lines(tree)
    found: list[Import] = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = _known(alias.name, known)
                if target:
                    found.append(Import(source, target, line, line in typing_only))
        elif isinstance(node, ast.ImportFrom):
            for target, name in _from_targets(node, source, path.name == "__init__.py", known):
                found.append(Import(source, target, line, line in typing_only, names=(name,) if name else ()))
        elif isinstance(node, ast.Call) and _is_dynamic_import(node):
            arg = node.args[0] if node.args else None
            literal = arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else "?"
            found.append(Import(source, _known(literal, known) or literal, line, by_string=True))
        elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "_EXPORTS"
                                                  for t in node.targets) and isinstance(node.value, ast.Dict):
            for value in node.value.values:
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    target = _known(value.value, known)
                    if target:
                        found.append(Import(source, target, line))
    return [i for i in found if i.target != source]


def _is_dynamic_import(node: ast.Call) -> bool:
    func = node.func
    called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return called in ("import_module", "__import__")


def layer_of(module: str) -> int:
    """The index in :data:`LAYERS` of the module's layer (longest matching prefix)."""
    best, rank = -1, -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, rank = len(prefix), index
    return rank


def all_imports(root: Path) -> list[Import]:
    found = modules(root)
    known = set(found)
    return [i for name, path in found.items() for i in imports_of(name, path, known)]


def upward(imports: Iterable[Import]) -> list[str]:
    """The imports that go up a layer, one line each."""
    return [f"{i.source}:{i.line} imports {i.target} ({LAYERS[layer_of(i.source)][0]} → "
            f"{LAYERS[layer_of(i.target)][0]})" for i in imports
            if not i.by_string and layer_of(i.target) > layer_of(i.source)]


def circles(imports: Iterable[Import], nodes: Iterable[str]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan), type-only imports included."""
    graph: dict[str, set[str]] = {n: set() for n in nodes}
    for i in imports:
        if i.target in graph:
            graph[i.source].add(i.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []

    def visit(v: str) -> None:  # iterative enough for a package of a few hundred files
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def private_imports(imports: Iterable[Import]) -> set[tuple[str, str, str]]:
    """(importer, module, name) for each private name (``_x``, not a dunder) imported from another file."""
    return {(i.source, i.target, n) for i in imports for n in i.names
            if n.startswith("_") and not n.startswith("__")}


def dynamic_imports(imports: Iterable[Import], layers: Iterable[str]) -> list[str]:
    wanted = {n for n, _ in LAYERS if n in set(layers)}
    return [f"{i.source}:{i.line} imports {i.target} by name" for i in imports
            if i.by_string and LAYERS[layer_of(i.source)][0] in wanted]


def exception_classes(root: Path) -> list[str]:
    """Classes defined outside ``errors.py`` that derive from an exception (a built-in one, or
    one of ``errors.py``), found in the source."""
    errors = {n.name for n in ast.parse((root / "errors.py").read_text()).body if isinstance(n, ast.ClassDef)}
    found = []
    for name, path in modules(root).items():
        if path == root / "errors.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                bases = {b.attr if isinstance(b, ast.Attribute) else getattr(b, "id", "") for b in node.bases}
                builtin = {b for b in bases if isinstance(getattr(builtins, b, None), type)
                           and issubclass(getattr(builtins, b), BaseException)}
                if builtin or bases & errors:
                    found.append(f"{name}.{node.name}")
    return found


# ---------------------------------------------------------------------------------- the package


IMPORTS = all_imports(ROOT)


def test_every_module_has_a_layer() -> None:
    assert [m for m in modules(ROOT) if layer_of(m) < 0] == []


def test_no_import_goes_up_a_layer() -> None:
    assert upward(IMPORTS) == []


def test_no_circle_of_imports_spans_files() -> None:
    found = set(circles(IMPORTS, modules(ROOT)))
    assert found - set(KNOWN_CIRCLES) == set(), "a circle of imports between files"
    assert set(KNOWN_CIRCLES) - found == set(), "a known circle is gone: remove it from KNOWN_CIRCLES"


def test_modeling_and_numerics_import_nothing_by_name() -> None:
    assert dynamic_imports(IMPORTS, ("modeling", "numerics")) == []


def test_no_file_imports_another_files_private_name() -> None:
    found = private_imports(IMPORTS)
    assert found - KNOWN_PRIVATE == set()
    assert KNOWN_PRIVATE - found == set(), "a known private import is gone: remove it from KNOWN_PRIVATE"


def test_every_exception_class_is_in_errors() -> None:
    assert exception_classes(ROOT) == []
    assert sorted(dpopt.errors.__all__) == sorted(
        n for n, v in vars(dpopt.errors).items() if isinstance(v, type) and issubclass(v, BaseException)
        and v.__module__ == "dpopt.errors")


# ---------------------------------------------------------------------------------- the checks can fail


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "dpopt"
    for rel, text in {"__init__.py": "", "errors.py": "class DpoptError(Exception):\n    pass\n",
                      "modeling/__init__.py": "", "numerics/__init__.py": "", "compile/__init__.py": "",
                      **files}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_the_checks_catch_an_upward_import_a_circle_a_string_import_and_a_private_name(tmp_path: Path) -> None:
    root = _package(tmp_path, {
        "modeling/a.py": "def f():\n    from dpopt.numerics.n import g\n",           # up, inside a function
        "modeling/b.py": "from dpopt.modeling import c\n",
        "modeling/c.py": "import dpopt.modeling.b\n",                                 # a circle b ↔ c
        "modeling/d.py": "import importlib\nimportlib.import_module('dpopt.compile.x')\n",
        "modeling/e.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from dpopt.compile.x import T\n",
        "numerics/n.py": "from dpopt.modeling.b import _hidden\n\ndef g():\n    pass\n",
        "compile/x.py": "from dpopt.numerics import n\n\nclass Oops(ValueError):\n    pass\n",
    })
    imports = all_imports(root)
    assert upward(imports) == [
        "dpopt.modeling.a:2 imports dpopt.numerics.n (modeling → numerics)",
        "dpopt.modeling.e:3 imports dpopt.compile.x (modeling → compile)",
    ]
    assert circles(imports, modules(root)) == [frozenset({"dpopt.modeling.b", "dpopt.modeling.c"})]
    assert dynamic_imports(imports, ("modeling",)) == ["dpopt.modeling.d:2 imports dpopt.compile.x by name"]
    assert private_imports(imports) == {("dpopt.numerics.n", "dpopt.modeling.b", "_hidden")}
    assert exception_classes(root) == ["dpopt.compile.x.Oops"]


def test_a_type_only_circle_is_a_circle_and_a_clean_package_passes(tmp_path: Path) -> None:
    files = {
        "modeling/a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from dpopt.modeling.b import B\n",
        "modeling/b.py": "from dpopt.modeling.a import f\n",
        "numerics/n.py": "from dpopt.errors import DpoptError\nfrom dpopt.modeling.a import f\n",
    }
    imports = all_imports(_package(tmp_path / "circle", files))
    assert circles(imports, modules(tmp_path / "circle" / "dpopt")) == [
        frozenset({"dpopt.modeling.a", "dpopt.modeling.b"})]
    clean = {**files, "modeling/a.py": "from typing import Protocol\nclass B(Protocol):\n    pass\n"}
    root = _package(tmp_path / "clean", clean)
    imports = all_imports(root)
    assert upward(imports) == [] and circles(imports, modules(root)) == []
    assert private_imports(imports) == set() and exception_classes(root) == []


@pytest.mark.parametrize("module,layer", [("dpopt.modeling.balls", "modeling"), ("dpopt.numerics.apg", "numerics"),
                                          ("dpopt.sets", "namespace"), ("dpopt", "namespace"),
                                          ("dpopt.errors", "base"), ("dpopt.cli.main", "applications")])
def test_a_module_is_in_the_layer_of_its_longest_prefix(module: str, layer: str) -> None:
    assert LAYERS[layer_of(module)][0] == layer
