"""The README runs as written: its Python blocks are executed in order, in one namespace,
and every shell command it shows names a real command, model, profile or benchmark."""

from __future__ import annotations

from pathlib import Path

from dpopt.testing.markdown import check_shell_line, code_blocks, run_python_blocks

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text()
PYTHON_BLOCKS = code_blocks(README, "python")
SHELL_BLOCKS = code_blocks(README, "sh")


def test_the_readme_has_code_to_run() -> None:
    assert len(PYTHON_BLOCKS) >= 4 and SHELL_BLOCKS


def test_every_python_block_runs_in_order(tmp_path: Path) -> None:
    """In a fresh interpreter, as a reader pasting the blocks one after another would."""
    done = run_python_blocks(PYTHON_BLOCKS, cwd=REPO, script=tmp_path / "readme_blocks.py", timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]


def test_every_shell_command_names_something_that_exists() -> None:
    for block in SHELL_BLOCKS:
        for line in block.splitlines():
            check_shell_line(line, REPO)
