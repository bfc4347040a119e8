"""The typing view of dpopt's lazy namespaces, generated from their one map of names.

A lazy namespace (``dpopt``, ``dpopt.sets``, ``dpopt.backends``, ...; see :mod:`dpopt._lazy`)
registers each public name once, in its ``_EXPORTS`` map (name → defining module), and its
sub-namespaces in ``_SUBMODULES``; ``__all__`` and the runtime ``__getattr__`` are derived from
them.  Type checkers and IDEs cannot run that map, so each namespace ends with an
``if TYPE_CHECKING:`` block of explicit re-exports (``from dpopt.modeling.boxes import Box as
Box``) that this module writes::

    python -m dpopt._stubs            # rewrite every stale block
    python -m dpopt._stubs --check    # exit 1 and name the stale namespaces

``tests/contracts/test_public_api.py`` fails while a block is stale, so a new name is one line in
``_EXPORTS`` followed by this command.
"""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path

__all__ = ["namespaces", "render_block", "stale", "write"]

_ROOT = Path(__file__).resolve().parent
_MARKER = "from dpopt._lazy import attach"
_LINE_LENGTH = 100  # ruff's line-length (pyproject.toml)
_HEADER = ("if TYPE_CHECKING:  # generated from _EXPORTS by `python -m dpopt._stubs`; do not edit\n")


def namespaces() -> list[str]:
    """The lazy namespaces: every module of dpopt that builds its attributes with ``attach``."""
    found = []
    for path in sorted(_ROOT.rglob("*.py")):
        if _MARKER in path.read_text(encoding="utf-8").splitlines():
            parts = path.relative_to(_ROOT.parent).with_suffix("").parts
            found.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return found


def render_block(namespace: str) -> str:
    """The ``if TYPE_CHECKING:`` block of ``namespace``: one re-export per public name.

    Lines are sorted by defining module, then by name (the order ruff's isort keeps for
    ``import ... as ...`` lines); sub-namespaces come first as ``from pkg import sub as sub``.
    """
    module = importlib.import_module(namespace)
    exports: dict[str, str] = module._EXPORTS
    lines = [(namespace, name) for name in getattr(module, "_SUBMODULES", ())]
    lines += [(source, name) for name, source in exports.items()]
    lines.sort(key=lambda line: (line[0], _member_key(line[1])))
    return _HEADER + "".join(_import_line(source, name) for source, name in lines)


def _member_key(name: str) -> tuple[int, str]:
    """isort's order of imported names: constants, then classes, then the rest, ignoring case."""
    rank = 0 if len(name) > 1 and name.isupper() else 1 if name[:1].isupper() else 2
    return rank, name.lower()


def _import_line(source: str, name: str) -> str:
    """``from source import name as name`` inside the block, wrapped as isort wraps long lines."""
    line = f"    from {source} import {name} as {name}\n"
    if len(line) - 1 <= _LINE_LENGTH:
        return line
    return f"    from {source} import (\n        {name} as {name},\n    )\n"


def _current_block(path: Path) -> tuple[int, int, str]:
    """(first line index, end line index, text) of the file's top-level TYPE_CHECKING block."""
    source = path.read_text(encoding="utf-8")
    for node in ast.parse(source).body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            lines = source.splitlines(keepends=True)
            start, end = node.lineno - 1, node.end_lineno or node.lineno
            return start, end, "".join(lines[start:end])
    raise ValueError(f"{path}: no top-level `if TYPE_CHECKING:` block to generate into")


def _path(namespace: str) -> Path:
    module = importlib.import_module(namespace)
    return Path(module.__file__ or "")


def stale() -> list[str]:
    """The namespaces whose TYPE_CHECKING block differs from what ``_EXPORTS`` generates."""
    return [ns for ns in namespaces() if _current_block(_path(ns))[2] != render_block(ns)]


def write(namespace: str) -> None:
    """Rewrite the TYPE_CHECKING block of ``namespace`` from its ``_EXPORTS``."""
    path = _path(namespace)
    start, end, _ = _current_block(path)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[start:end] = [render_block(namespace)]
    path.write_text("".join(lines), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """Rewrite the stale blocks (or, with ``--check``, list them and return 1)."""
    args = sys.argv[1:] if argv is None else argv
    todo = stale()
    if "--check" in args:
        for namespace in todo:
            print(f"{namespace}: typing block is stale; run `python -m dpopt._stubs`")
        return 1 if todo else 0
    for namespace in todo:
        write(namespace)
        print(f"rewrote the typing block of {namespace}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
