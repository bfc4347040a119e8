"""The public API of dpopt: a snapshot of its names, and the lazy namespaces that serve them.

``tests/contracts/public_api.txt`` lists the sorted public names of ``dpopt`` and of every
sub-namespace that ``dpopt.__all__`` lists (``dpopt.sets``, ``dpopt.backends``, ...).  A
name removed or renamed fails here until the snapshot is rewritten on purpose (a new name is
registered once, in its namespace's ``_EXPORTS``, and needs no edit here)::

    .venv/bin/python tests/contracts/test_public_api.py        # rewrites tests/contracts/public_api.txt

(then review ``git diff tests/contracts/public_api.txt`` and say it in CHANGELOG.md).  The other tests
check what makes the names usable: each resolves to the object its defining module holds,
what type checkers see (the ``TYPE_CHECKING`` block that ``python -m dpopt._stubs`` generates
from a namespace's ``_EXPORTS``) is current and is what runtime gives, ``import
dpopt`` and ``dpopt --help`` load no mechanism and no solver package (module lists, not
timings: ``dpopt bench startup`` measures the time), and public objects pickle as before.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pickle
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from dpopt import _stubs

SNAPSHOT = Path(__file__).with_name("public_api.txt")
HEADER = ("# The public API of dpopt: the sorted public names of each namespace.  Rewrite it only on\n"
          "# purpose, with: python tests/contracts/test_public_api.py  (see tests/contracts/test_public_api.py)\n")
#: the lazy namespaces (a module-level ``__getattr__`` over ``_EXPORTS``), found as the generator finds them
LAZY = tuple(_stubs.namespaces())
#: packages that neither ``import dpopt`` nor ``dpopt --help`` may load
SOLVERS = ("cvxpy", "pyomo", "highspy", "ortools", "pyscipopt", "clarabel", "osqp", "scs", "scipy",
           "pandas", "dask", "distributed", "sklearn")


def public_names(module: ModuleType) -> list[str]:
    """The module's ``__all__``, or (without one) the public names it defines itself."""
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n, v in vars(module).items()
                 if not n.startswith("_") and getattr(v, "__module__", None) == module.__name__]
    return sorted(names)


def namespaces() -> dict[str, list[str]]:
    """``dpopt`` and every module object in its ``__all__``: name → sorted public names."""
    import dpopt

    found = {"dpopt": public_names(dpopt)}
    for name in found["dpopt"]:
        value = getattr(dpopt, name)
        if inspect.ismodule(value):
            found[value.__name__] = public_names(value)
    return dict(sorted(found.items()))


def render(spaces: dict[str, list[str]]) -> str:
    """The snapshot text: a ``[namespace]`` line, then one name per line."""
    blocks = [f"[{space}]\n" + "".join(f"{n}\n" for n in names) for space, names in spaces.items()]
    return HEADER + "\n" + "\n".join(blocks)


def parse(text: str) -> dict[str, list[str]]:
    """The inverse of :func:`render`: namespace → its names."""
    spaces: dict[str, list[str]] = {}
    for line in text.splitlines():
        if line.startswith("[") and line.endswith("]"):
            current = spaces.setdefault(line[1:-1], [])
        elif line and not line.startswith("#"):
            current.append(line)
    return spaces


def broken_promises(stored: dict[str, list[str]], current: dict[str, list[str]]) -> list[str]:
    """Names of the snapshot that the code no longer has (removed or renamed), as ``space.name``."""
    return [f"{space}.{name}" for space, names in stored.items()
            for name in names if name not in current.get(space, ())]


def test_no_public_name_of_the_snapshot_is_removed_or_renamed() -> None:
    """A name in the snapshot is a promise: removing or renaming it fails until the snapshot is
    rewritten on purpose.  A new name is registered deliberately in its namespace's ``_EXPORTS``
    and needs no second edit here; a release rewrites the snapshot to record it."""
    gone = broken_promises(parse(SNAPSHOT.read_text(encoding="utf-8")), namespaces())
    if gone:
        pytest.fail("public names were removed or renamed: " + ", ".join(gone) + "\nIf this is "
                    "deliberate, rewrite the snapshot with `.venv/bin/python tests/contracts/test_public_api.py`, "
                    "review `git diff tests/contracts/public_api.txt` and add a CHANGELOG.md line.", pytrace=False)


def test_the_snapshot_check_catches_a_removed_or_renamed_name() -> None:
    current = namespaces()
    assert parse(render(current)) == current and broken_promises(current, current) == []
    renamed = {**current, "dpopt.sets": [n.replace("L2Ball", "EuclideanBall") for n in current["dpopt.sets"]]}
    assert broken_promises(current, renamed) == ["dpopt.sets.L2Ball"]
    without = {space: names for space, names in current.items() if space != "dpopt.potentials"}
    assert broken_promises(current, without) == [f"dpopt.potentials.{n}" for n in current["dpopt.potentials"]]
    added = {**current, "dpopt.sets": [*current["dpopt.sets"], "NewSet"]}
    assert broken_promises(current, added) == []


@pytest.mark.parametrize("space", sorted({*namespaces(), *LAZY}))
def test_every_public_name_resolves_and_none_is_private(space: str) -> None:
    module = importlib.import_module(space)
    names = public_names(module)
    assert names, space
    assert not [n for n in names if n.startswith("_")]
    assert len(set(names)) == len(names)
    for name in names:
        assert getattr(module, name) is not None, f"{space}.{name}"
    if hasattr(module, "__all__"):
        assert list(module.__all__) == sorted(module.__all__), f"{space}.__all__ is not sorted"
        namespace: dict[str, object] = {}
        exec(f"from {space} import *", namespace)
        assert set(module.__all__) <= set(namespace)


def _type_checking_imports(module: ModuleType) -> dict[str, str]:
    """Name → defining module of the imports under ``if TYPE_CHECKING:`` in ``module``'s source."""
    tree = ast.parse(Path(module.__file__ or "").read_text(encoding="utf-8"))
    block = next(node for node in tree.body if isinstance(node, ast.If)
                 and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
    found: dict[str, str] = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom) and node.module, ast.dump(node)
        for alias in node.names:
            found[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return found


def test_the_lazy_namespaces_are_the_expected_ones() -> None:
    """The generator finds every lazy namespace (a namespace it missed would keep a stale block)."""
    assert {"dpopt", "dpopt.backends", "dpopt.losses", "dpopt.potentials", "dpopt.privacy", "dpopt.sets",
            "dpopt.submodular"} <= set(LAZY)


@pytest.mark.parametrize("space", LAZY)
def test_the_typing_block_is_generated_from_the_one_map(space: str) -> None:
    """A name is registered once (``_EXPORTS``): the ``TYPE_CHECKING`` block is what
    ``python -m dpopt._stubs`` writes from it, and ``__all__`` is derived from it."""
    module = importlib.import_module(space)
    assert space not in _stubs.stale(), f"run `python -m dpopt._stubs` to regenerate {space}'s typing block"
    assert module.__all__ == sorted([*module._EXPORTS, *getattr(module, "_SUBMODULES", ())])


def test_a_new_registration_makes_the_typing_block_stale(monkeypatch: pytest.MonkeyPatch) -> None:
    """The staleness check can fail: one more name in a map changes the block by exactly its line."""
    import dpopt.sets

    before = _stubs.render_block("dpopt.sets")
    monkeypatch.setitem(dpopt.sets._EXPORTS, "Extra", "dpopt.modeling.balls")
    after = _stubs.render_block("dpopt.sets")
    added = set(after.splitlines()) - set(before.splitlines())
    assert added == {"    from dpopt.modeling.balls import Extra as Extra"}
    assert "dpopt.sets" in _stubs.stale()


@pytest.mark.parametrize("space", LAZY)
def test_what_type_checkers_see_is_what_runtime_gives(space: str) -> None:
    """In a lazy namespace, ``__all__``, the ``TYPE_CHECKING`` imports and the runtime map
    ``_EXPORTS`` name the same objects: an IDE or mypy sees exactly what ``getattr`` returns
    (read from the file itself, so a bug in the generator fails here too)."""
    module = importlib.import_module(space)
    imports = _type_checking_imports(module)
    assert sorted(imports) == sorted(module.__all__)
    for name, target in imports.items():
        value = getattr(module, name)
        if name in module._EXPORTS:
            assert f"{module._EXPORTS[name]}.{name}" == target
            assert value is getattr(importlib.import_module(module._EXPORTS[name]), name)
        else:  # a sub-namespace of the package (from dpopt import sets)
            assert inspect.ismodule(value) and value.__name__ == target


def test_a_missing_name_says_where_it_is_or_what_was_meant() -> None:
    import dpopt as dp

    for space in ("sets", "submodular", "potentials", "losses", "backends"):
        module = importlib.import_module(f"dpopt.{space}")
        for name in set(module.__all__) - set(dp.__all__):
            with pytest.raises(AttributeError, match=f"it is dpopt\\.\\w+\\.{name}$") as info:
                getattr(dp, name)
            where = str(info.value).rpartition("it is ")[2].rpartition(".")[0]
            assert name in importlib.import_module(where).__all__
    with pytest.raises(AttributeError, match="did you mean 'L2Ball'\\?$"):
        dp.L2ball  # noqa: B018
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'$"):
        dp.no_such_name  # noqa: B018
    assert dp.sets.VertexPolytope is importlib.import_module("dpopt.modeling.vertex_polytope").VertexPolytope
    assert dp.backends.get is importlib.import_module("dpopt.backends.registry").get


def test_packages_stay_reachable_as_attributes() -> None:
    """``dp.mechanisms``, ``dp.privacy`` (not in ``__all__``) import on attribute access, as
    they did when ``import dpopt`` imported them eagerly."""
    import dpopt as dp

    assert dp.mechanisms.ConvexMechanism.__module__ == "dpopt.mechanisms.convex"
    assert dp.privacy.Ledger is dp.Ledger
    assert set(dp.__all__) <= set(dir(dp))
    assert not {"annotations", "attach", "TYPE_CHECKING"} & set(dir(dp))  # the module's own helpers


def _imported_by(code: str) -> set[str]:
    probe = f"{code}\nimport sys\nprint(' '.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True).stdout
    return set(out.split())


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in SOLVERS
                  or m.startswith(("dpopt.mechanisms", "dpopt.backends.", "dpopt.compile", "dpopt.modeling.")))


def test_import_dpopt_loads_no_solver_mechanism_or_numerical_library() -> None:
    modules = _imported_by("import dpopt")
    assert "dpopt" in modules
    assert _heavy(modules) == [] and "numpy" not in modules


def test_dpopt_help_loads_no_mechanism_and_no_solver() -> None:
    modules = _imported_by("import contextlib, io\nfrom dpopt.cli.main import main\n"
                           "with contextlib.redirect_stdout(io.StringIO()):\n"
                           "    assert main(['--help']) == 0\n    assert main(['solve', '--help']) == 0")
    assert "dpopt.cli.main" in modules
    assert _heavy(modules) == []


def test_a_solver_package_loads_when_a_mechanism_first_needs_it() -> None:
    """Mechanisms import no solver package; the backend a run uses loads its own."""
    modules = _imported_by("import dpopt as dp\ndp.PrivateMirrorDescent, dp.PolytopeFrankWolfe, dp.OPDisc")
    assert "dpopt.mechanisms.mirror_descent" in modules
    assert not [m for m in ("cvxpy", "pyomo", "highspy", "ortools") if m in modules]
    modules = _imported_by("import dpopt as dp\ndp.backends.get('clarabel').version()")
    assert "cvxpy" in modules


def test_public_objects_pickle_by_their_defining_module() -> None:
    import dpopt as dp

    data = dp.Dataset([[0.5, -0.5], [0.1, 0.2]], [1.0, -1.0], x_bound=1.0, x_norm=2, y_bound=1.0)
    theta = dp.Variable(2)
    for obj in (dp.L2Ball(theta, 1.0), dp.sets.VertexPolytope([[1.0, 0.0], [0.0, 1.0]]), dp.Ledger(),
                dp.ObjectivePerturbation(1.0, 1e-6), dp.IntegerGrid(1, -2, 2), data,
                dp.submodular.Cardinality(3), dp.Limit.TIME):
        copy = pickle.loads(pickle.dumps(obj))
        assert type(copy) is type(obj) and type(obj).__module__.startswith("dpopt.")
    assert pickle.dumps(dp.L2Ball) == pickle.dumps(importlib.import_module("dpopt.modeling.balls").L2Ball)


if __name__ == "__main__":  # rewrite the snapshot on purpose
    SNAPSHOT.write_text(render(namespaces()), encoding="utf-8")
    print(f"wrote {SNAPSHOT}")
