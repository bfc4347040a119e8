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


#: run after adding-a-mechanism.md's first block: its example mechanism releases on its public grid
GRID_GUARD = """
import math
for seed in range(5):
    for n in (7, 200):
        d = dp.Dataset(np.ones((n, 2)) / 2, np.linspace(-1, 1, n), x_bound=1.0, y_bound=1.0)
        r = LabelMean(0.5, 1e-5, ledger=dp.Ledger()).run(dp.Problem(dp.SquaredLoss(d, dp.Variable(2))), seed=seed)
        gamma = r.parameters["grid_step"]
        assert gamma > 0 and math.frexp(gamma)[0] == 0.5, gamma  # a power of two
        units = r.theta / gamma
        assert np.array_equal(units, np.rint(units)), (seed, n, r.theta, gamma)  # integer multiples of it
"""


def test_the_example_mechanism_of_the_docs_releases_on_its_grid(tmp_path: Path) -> None:
    """design.md requires every additive release on a public grid with exact noise; the example a
    contributor copies must do so too (a float ``mean + σ·Z`` fails here)."""
    first = code_blocks((DOCS / "adding-a-mechanism.md").read_text(), "python")[0]
    done = run_python_blocks([first, GRID_GUARD], cwd=REPO, script=tmp_path / "grid.py", timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    mutant = first.replace("plan.noise.release(np.array([y.mean()]), rng)",
                           "np.array([y.mean()]) + plan.noise.scale * rng.standard_normal(1)")
    assert mutant != first, "the example no longer releases through plan.noise.release: update this guard"
    done = run_python_blocks([mutant, GRID_GUARD], cwd=REPO, script=tmp_path / "float.py", timeout=600)
    assert done.returncode != 0 and "AssertionError" in done.stderr  # float noise is caught


def test_the_api_sketch_of_the_design_runs(tmp_path: Path) -> None:
    """design.md's page is not run as a whole, but its API sketch is, on small data (the whole Adult
    set would take minutes): a sketch that raises on its own calls misleads every reader."""
    sketch = code_blocks((DOCS / "design.md").read_text(), "python")[0]
    assert "dp.datasets.load_adult()" in sketch
    small = sketch.replace("dp.datasets.load_adult()", "dp.datasets.load_adult(n=30)")
    prelude = ("import numpy as np\nrng = np.random.default_rng(0)\nX = rng.uniform(-1, 1, (200, 3))\n"
               "y = np.where(X[:, 0] > 0, 1.0, -1.0)\n")
    done = run_python_blocks([prelude, small, "assert release.private"], cwd=REPO, script=tmp_path / "sketch.py",
                             timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]


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
