"""The documentation site runs as written: each page's Python blocks run in order in a fresh
interpreter (cwd = the repository root), every shell command it shows names a real command,
and the API reference documents the modules the site promises."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from dpopt.testing.markdown import check_shell_line, code_blocks, run_python_blocks

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
#: pages whose Python blocks are not meant to run, and why
NOT_RUNNABLE = {"design.md": "its 'API shape' is a sketch to refine, not code to run"}
PAGES = sorted(p.name for p in DOCS.glob("*.md"))
RUNNABLE = [p for p in PAGES if p not in NOT_RUNNABLE and code_blocks((DOCS / p).read_text(), "python")]
WITH_SHELL = [p for p in PAGES if code_blocks((DOCS / p).read_text(), "sh")]


def test_the_site_has_code_to_run() -> None:
    """The guides the site promises exist and show code (so the tests below test something)."""
    for page in ("getting-started.md", "schema.md", "budgets.md", "scaling-out.md", "privacy.md",
                 "extending.md"):
        assert page in RUNNABLE, page
    assert WITH_SHELL


@pytest.mark.parametrize("page", RUNNABLE)
def test_every_python_block_of_a_page_runs_in_order(page: str, tmp_path: Path) -> None:
    blocks = code_blocks((DOCS / page).read_text(), "python")
    done = run_python_blocks(blocks, cwd=REPO, script=tmp_path / f"{page}.py", timeout=600)
    assert done.returncode == 0, f"{page}:\n{done.stderr[-3000:]}"


@pytest.mark.parametrize("page", WITH_SHELL)
def test_every_shell_command_of_a_page_exists(page: str) -> None:
    for block in code_blocks((DOCS / page).read_text(), "sh"):
        for line in block.splitlines():
            check_shell_line(line, REPO)


@pytest.mark.parametrize("line", [
    "dpopt frobnicate models/own_csv.py",            # no such command
    "dpopt ledger erase budget.sqlite",              # no such ledger action
    "dpopt bench no-such-benchmark --seeds 1",       # no such benchmark
    "dpopt solve models/no_such_model.py",           # no such model script
    "make no-such-target",                           # no such make target
    "python -m dpopt._no_such_module",               # no such module
    "pip install dpopt",                             # not a dpopt command
])
def test_the_shell_check_catches_what_does_not_exist(line: str) -> None:
    with pytest.raises(AssertionError):
        check_shell_line(line, REPO)


def test_the_api_reference_documents_the_promised_modules() -> None:
    """api.md's autosummary lists the modules conf.py computes the pages of, and they
    include the top level and the sub-packages the site names."""
    api = (DOCS / "api.md").read_text()
    listed = re.findall(r"^   (dpopt[\w.]*)$", api, flags=re.M)
    tree = ast.parse((DOCS / "conf.py").read_text())
    roots = next(ast.literal_eval(node.value) for node in tree.body if isinstance(node, ast.Assign)
                 and any(getattr(t, "id", None) == "API_ROOTS" for t in node.targets))
    assert sorted(listed) == sorted(roots)
    assert {"dpopt", "dpopt.sklearn", "dpopt.privacy", "dpopt.executors"} <= set(listed)
