"""Sphinx configuration of the dpopt documentation site (``make docs``).

The pages are Markdown (MyST); the API reference is generated from the code: autosummary
lists the names in each documented module's ``__all__`` (see ``api.md`` and
``_templates/autosummary/``), and autodoc renders their numpydoc docstrings through
napoleon.  Nothing in the reference is written by hand, so it follows the package as its
modules move.
"""

from __future__ import annotations

import importlib
import inspect
import re
from typing import Any

import dpopt

project = "dpopt"
author = "the dpopt developers"
copyright = "the dpopt developers (MIT licence)"
release = dpopt.__version__
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
templates_path = ["_templates"]
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]

# --- MyST: GitHub-style anchors so that links such as design.md#privacy-rules resolve
myst_heading_anchors = 3

# --- API reference: autosummary over __all__, one page per public name
autosummary_generate = True
autosummary_ignore_module_all = False  # a module's __all__ is its public API
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_class_signature = "separated"  # the constructor's signature under the class heading
python_use_unqualified_type_names = True
add_module_names = False

# --- numpydoc docstrings (docs/design.md, "House style"), rendered by napoleon
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False
napoleon_use_param = False
napoleon_use_ivar = True

# --- HTML
html_theme = "furo"
html_title = f"dpopt {release}"
html_static_path: list[str] = []

# --- What each API page lists (used by _templates/autosummary/module.rst).  A module's page
# lists the names in its __all__, each class and function on a page of its own; an object
# already documented under an earlier name (dpopt.privacy.Ledger is dpopt.Ledger) is linked
# to, not described twice.  Modules are visited from the roots, breadth first, so a name
# belongs to the top level before a sub-namespace; a module object in __all__ (a
# sub-namespace such as dpopt.errors or dpopt.sets) gets a page of its own.
API_ROOTS = ("dpopt", "dpopt.sklearn", "dpopt.privacy", "dpopt.executors")  # as in api.md


def _defined_in(module: object) -> list[str]:
    """The public names a module without ``__all__`` defines (not those it imports)."""
    return [n for n, v in vars(module).items()
            if not n.startswith("_") and getattr(v, "__module__", None) == module.__name__]


def _api_pages(roots: tuple[str, ...]) -> dict[str, dict[str, object]]:
    documented: dict[int, str] = {}  # id of a class or function -> the full name of its page
    pages: dict[str, dict[str, object]] = {}
    todo = list(roots)
    while todo:
        fullname = todo.pop(0)
        if fullname in pages:
            continue
        module = importlib.import_module(fullname)
        own: list[str] = []
        shared: dict[str, str] = {}
        for name in list(getattr(module, "__all__", None) or _defined_in(module)):
            value = getattr(module, name)
            if inspect.isclass(value) or inspect.isroutine(value):
                if id(value) in documented:
                    shared[name] = documented[id(value)]
                    continue
                documented[id(value)] = f"{fullname}.{name}"
            own.append(name)
        modules = [n for n in own if inspect.ismodule(getattr(module, n))]
        todo += [getattr(module, n).__name__ for n in modules]
        pages[fullname] = {
            "own": own,
            "shared": shared,
            "others": [n for n in own if not inspect.isclass(getattr(module, n))
                       and not inspect.isroutine(getattr(module, n))],
        }
    return pages


autosummary_context = {"api_pages": _api_pages(API_ROOTS)}

# --- Docstring text.  dpopt's docstrings write mathematics as plain text: |y|, ‖x‖, |P|(F).
# In reStructuredText a |word| is a substitution reference, which these docstrings never
# mean, so a bar outside inline literals and roles is escaped before parsing (a line block
# or grid-table line, "| ..." or "+--", is left alone).
_LITERAL = re.compile(r"(``.*?``|:\w+:`[^`]*`|`[^`]*`)")


def _escape_bars(line: str) -> str:
    stripped = line.strip()
    if stripped == "|" or stripped.startswith(("| ", "+-", "+=")):
        return line
    parts = _LITERAL.split(line)
    return "".join(p if i % 2 else p.replace("|", r"\|") for i, p in enumerate(parts))


def escape_bars(app: Any, what: str, name: str, obj: Any, options: Any, lines: list[str]) -> None:
    """``autodoc-process-docstring``: escape the plain-text bars of a docstring in place."""
    lines[:] = [_escape_bars(line) for line in lines]


def skip_scikit_learn_members(app: Any, what: str, name: str, obj: Any, skip: bool,
                              options: Any) -> bool | None:
    """scikit-learn documents the methods it adds to every estimator (metadata routing's
    ``set_*_request``, ``get_params``...): the estimator pages list dpopt's own."""
    module = getattr(obj, "__module__", None) or ""
    return True if module.startswith("sklearn.") else None


# --- Figures.  The privacy–utility curves are drawn at every build from the benchmark output
# stored in docs/benchmarks/<bench>/summary.json (written by the commands that
# docs/benchmarks.md shows), into docs/generated/figures/ (made afresh by `make docs`), so a
# picture cannot differ from what its command wrote.
FIGURES = ("tables", "linear")


def draw_figures(app: Any) -> None:
    """``builder-inited``: one curves PNG per stored benchmark summary."""
    import json
    from pathlib import Path

    from dpopt.bench.curves import write_curves

    docs = Path(app.srcdir)
    for name in FIGURES:
        summary = json.loads((docs / "benchmarks" / name / "summary.json").read_text())
        if write_curves(summary, docs / "generated" / "figures" / f"{name}.png") is None:
            raise RuntimeError("the docs draw their figures with matplotlib: pip install -e '.[docs]'")


def setup(app: Any) -> None:
    app.connect("builder-inited", draw_figures)
    app.connect("autodoc-process-docstring", escape_bars)
    app.connect("autodoc-skip-member", skip_scikit_learn_members)
