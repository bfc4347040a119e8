"""The README runs as written: its Python blocks are executed in order, in one namespace,
and every shell command it shows names a real command, model, profile or benchmark."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text()
PYTHON_BLOCKS = re.findall(r"```python\n(.*?)```", README, flags=re.S)
SHELL_BLOCKS = re.findall(r"```sh\n(.*?)```", README, flags=re.S)


def test_the_readme_has_code_to_run() -> None:
    assert len(PYTHON_BLOCKS) >= 4 and SHELL_BLOCKS


def test_every_python_block_runs_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    import textwrap

    monkeypatch.chdir(REPO)
    namespace: dict[str, object] = {"__name__": "readme"}
    for i, block in enumerate(PYTHON_BLOCKS):
        code = compile(textwrap.dedent(block), f"README.md python block {i + 1}", "exec")
        exec(code, namespace)  # noqa: S102 — the README is ours


def test_every_shell_command_names_something_that_exists() -> None:
    from dpopt import bench

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
            assert words[0] == "dpopt", line
            for w in words[1:]:
                if w.endswith((".py", ".toml")):
                    assert (REPO / w).exists(), line
            if words[1] == "bench" and not words[2].startswith("-"):
                assert words[2] in bench.names(), line
