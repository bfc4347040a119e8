"""The README runs as written: its Python blocks are executed in order, in one namespace,
and every shell command it shows names a real command, model, profile or benchmark."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text()
PYTHON_BLOCKS = re.findall(r"```python\n(.*?)```", README, flags=re.S)
SHELL_BLOCKS = re.findall(r"```sh\n(.*?)```", README, flags=re.S)


def test_the_readme_has_code_to_run() -> None:
    assert len(PYTHON_BLOCKS) >= 4 and SHELL_BLOCKS


def test_every_python_block_runs_in_order(tmp_path: Path) -> None:
    """In a fresh interpreter, as a reader pasting the blocks one after another would."""
    import subprocess
    import sys
    import textwrap

    script = tmp_path / "readme_blocks.py"
    script.write_text("\n\n".join(textwrap.dedent(block) for block in PYTHON_BLOCKS))
    done = subprocess.run([sys.executable, str(script)], cwd=REPO, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]


def test_every_shell_command_names_something_that_exists() -> None:
    from dpopt import bench
    from dpopt.cli.main import build_parser

    commands = set(next(a for a in build_parser()._actions if a.choices and "solve" in a.choices).choices)
    make_targets = set(re.findall(r"^([a-z]+):", (REPO / "Makefile").read_text(), flags=re.M))
    for block in SHELL_BLOCKS:
        for line in block.splitlines():
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            words = shlex.split(line)
            if words[0] == "make":
                assert words[1] in make_targets, line
                continue
            if words[0] == "dask":  # starting a Dask cluster (the dask extra's command)
                assert words[1] in ("scheduler", "worker"), line
                continue
            if words[:3] == ["python", "-m", "dpopt"]:
                words = ["dpopt", *words[3:]]
            assert words[0] == "dpopt", line
            assert words[1] in commands, line
            for w in words[1:]:
                if w.endswith((".py", ".toml")):
                    assert (REPO / w).exists(), line
            if words[1] == "bench" and not words[2].startswith("-"):
                assert words[2] in bench.names(), line
