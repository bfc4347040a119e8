"""The tests mirror the source tree: a test file says by its place which module it tests.

``tests/<layer>/test_<module>.py`` tests ``dpopt/<layer>/<module>.py`` (sub-packages nest the
same way: ``tests/modeling/schema/test_check.py`` tests ``dpopt/modeling/schema/check.py``), and
``tests/test_<module>.py`` tests ``dpopt/<module>.py``.  A module with several test files names
the others ``test_<module>_<aspect>.py``; a private module ``_base.py`` is tested by
``test_base.py``.  Only the cross-cutting folders of :data:`CROSS_CUTTING` hold files named
otherwise.  Helpers that several test files share live in :mod:`dpopt.testing`: no test file
imports another.  A test file added anywhere else fails here, naming the file and the rule.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

import dpopt

TESTS = Path(__file__).resolve().parents[1]
PACKAGE = Path(dpopt.__file__).resolve().parent

#: folders of tests/ that do not mirror one package: the generic guards and contract suites that
#: run over every mechanism, set, loss, backend or module, and the whole-program tests
CROSS_CUTTING = frozenset({"contracts", "end_to_end"})


def _modules(package: Path) -> set[str]:
    """The names a test file of ``package`` may be named after: its modules and sub-packages,
    without a leading underscore."""
    names = {p.stem for p in package.glob("*.py") if p.stem != "__init__"}
    names |= {p.name for p in package.iterdir() if (p / "__init__.py").is_file()}
    return {n.lstrip("_") for n in names}


def misplaced(files: Iterable[Path], tests: Path, package: Path) -> list[str]:
    """One line per test file (a ``test_*.py`` path under ``tests``) that is not where the
    layout says, naming the rule it breaks."""
    problems = []
    for path in sorted(files):
        rel = path.relative_to(tests)
        folders = rel.parts[:-1]
        if folders and folders[0] in CROSS_CUTTING:
            continue
        mirrored = package.joinpath(*folders)
        if not (mirrored / "__init__.py").is_file():
            problems.append(f"{rel}: tests/{'/'.join(folders)} mirrors no package of dpopt; put the "
                            f"file in tests/<layer>/ after the module it tests, or in one of "
                            f"{', '.join(sorted(CROSS_CUTTING))}")
            continue
        stem = path.stem.removeprefix("test_")
        if not any(stem == m or stem.startswith(m + "_") for m in _modules(mirrored)):
            where = "/".join(("dpopt", *folders))
            problems.append(f"{rel}: name it test_<module>.py (or test_<module>_<aspect>.py) after "
                            f"the module of {where}/ it tests")
    return problems


def _test_files() -> list[Path]:
    return sorted(p for p in TESTS.rglob("test_*.py") if "__pycache__" not in p.parts)


def test_every_test_file_mirrors_the_module_it_tests() -> None:
    problems = misplaced(_test_files(), TESTS, PACKAGE)
    assert not problems, "test files outside the mirrored layout:\n" + "\n".join(problems)


def test_every_test_folder_is_a_package() -> None:
    """Test files of different folders share names (test_base.py): each folder is a package, so
    pytest imports them under distinct names."""
    folders = {p.parent for p in _test_files()}
    missing = sorted(str(f.relative_to(TESTS.parent)) for f in folders if not (f / "__init__.py").is_file())
    assert not missing, f"add an __init__.py to: {', '.join(missing)}"


def imports_of_tests(source: str) -> list[int]:
    """The lines of ``source`` that import a test module (``tests...`` or a relative import)."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = ["."] if node.level else [node.module or ""]
        else:
            continue
        if any(n == "." or n == "tests" or n.startswith("tests.") for n in names):
            lines.append(node.lineno)
    return lines


def test_no_test_file_imports_another() -> None:
    """Shared helpers live in dpopt.testing, where every test file (and user code) can import them."""
    bad = []
    for path in _test_files() + sorted(TESTS.rglob("conftest.py")):
        text = path.read_text(encoding="utf-8")
        if "tests" in text or "from ." in text:  # only these can import a test module
            bad += [f"{path.relative_to(TESTS.parent)}:{n}" for n in imports_of_tests(text)]
    assert not bad, f"move the shared helpers into dpopt.testing: {', '.join(bad)}"
    assert imports_of_tests("import numpy\nfrom tests.privacy.test_x import f\nfrom . import g\n"
                            "import tests.y\nfrom dpopt.testing import h\n") == [2, 3, 4]


def test_the_layout_rule_flags_files_outside_it(tmp_path: Path) -> None:
    """The rule is not vacuous: on a made-up tree it flags a flat folder, a folder that mirrors
    nothing and a name that matches no module, and accepts the mirrored and cross-cutting files."""
    package = tmp_path / "pkg"
    for rel in ("__init__.py", "errors.py", "modeling/__init__.py", "modeling/dataset.py",
                "modeling/_base.py", "modeling/schema/__init__.py", "modeling/schema/check.py"):
        (package / rel).parent.mkdir(parents=True, exist_ok=True)
        (package / rel).touch()
    tests = tmp_path / "tests"
    good = ["test_errors.py", "modeling/test_dataset.py", "modeling/test_dataset_tables.py",
            "modeling/test_base.py", "modeling/test_schema.py", "modeling/schema/test_check.py",
            "contracts/test_anything.py", "end_to_end/test_readme.py"]
    bad = ["test_misc.py", "unit/test_dataset.py", "modeling/test_datasets.py",
           "modeling/test_data.py", "modeling/schema/test_dataset.py"]
    flagged = misplaced([tests / f for f in good + bad], tests, package)
    assert [line.split(":")[0] for line in flagged] == sorted(bad)
    assert "mirrors no package" in next(line for line in flagged if line.startswith("unit/"))
