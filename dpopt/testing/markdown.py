"""The code of Markdown pages (the README, the documentation site): its blocks, run as written.

Used by the tests that keep the README and ``docs/*.md`` honest: their Python blocks run in a
fresh interpreter, in order, and every shell command they show names a real ``dpopt`` command,
sub-command, model script, solver profile, benchmark or ``make`` target.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

__all__ = ["code_blocks", "run_python_blocks", "check_shell_line"]


def code_blocks(text: str, language: str) -> list[str]:
    """The fenced blocks of Markdown ``text`` whose info string is ``language`` (```` ```sh ````)."""
    return re.findall(rf"^```{re.escape(language)}\n(.*?)^```", text, flags=re.S | re.M)


def run_python_blocks(blocks: list[str], *, cwd: Path, script: Path,
                      timeout: float = 900) -> subprocess.CompletedProcess[str]:
    """Run ``blocks`` one after another as one script in a fresh interpreter.

    As a reader pasting them in order would: one namespace, the working directory ``cwd``.
    The script is written to ``script``; the finished process is returned.
    """
    script.write_text("\n\n".join(textwrap.dedent(block) for block in blocks), encoding="utf-8")
    return subprocess.run([sys.executable, str(script)], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def check_shell_line(line: str, repo: Path) -> None:
    """Raise AssertionError unless the shell command ``line`` names things that exist.

    ``make T`` needs a target ``T`` of the Makefile; ``dask scheduler|worker`` starts a Dask
    cluster; ``python -m dpopt.MODULE`` needs the module; otherwise the command is ``dpopt``
    (or ``python -m dpopt``) with a known command, a known sub-command where the command has them (``dpopt ledger show``), a known
    benchmark after ``dpopt bench``, and every ``.py``/``.toml`` argument a file of ``repo``.
    A comment after ``#`` and a blank line are ignored.
    """
    from dpopt import bench
    from dpopt.cli.main import build_parser

    line = line.split("#", 1)[0].strip()
    if not line:
        return
    words = shlex.split(line)
    if words[0] == "make":
        targets = set(re.findall(r"^([a-z]+):", (repo / "Makefile").read_text(), flags=re.M))
        assert len(words) > 1 and words[1] in targets, line
        return
    if words[0] == "dask":  # starting a Dask cluster (the dask extra's command)
        assert words[1] in ("scheduler", "worker"), line
        return
    if words[:2] == ["python", "-m"] and words[2].startswith("dpopt."):  # a module's own command
        assert importlib.util.find_spec(words[2]) is not None, line
        return
    if words[:3] == ["python", "-m", "dpopt"]:
        words = ["dpopt", *words[3:]]
    assert words[0] == "dpopt" and len(words) > 1, line
    commands = _subcommands(build_parser())
    assert words[1] in commands, line
    actions = _subcommands(commands[words[1]])
    if actions and len(words) > 2 and not words[2].startswith("-"):
        assert words[2] in actions, line
    for word in words[1:]:
        if word.endswith((".py", ".toml")):
            assert (repo / word).exists(), line
    if words[1] == "bench" and len(words) > 2 and not words[2].startswith("-"):
        assert words[2] in bench.names(), line
