"""Run the ``dpopt`` command line in-process, for tests of its commands.

:func:`run_cli` calls :func:`dpopt.cli.main.main` (faster than a subprocess) and returns the exit
code with what the command printed, read through pytest's ``capsys`` fixture.
"""

from __future__ import annotations

from typing import Any, Protocol

from dpopt.cli.main import main

__all__ = ["run_cli"]


class _Captured(Protocol):
    out: str
    err: str


class _Capture(Protocol):
    def readouterr(self) -> _Captured: ...


def run_cli(capsys: _Capture, *argv: Any) -> tuple[int, str, str]:
    """``dpopt argv...`` in this process: (exit code, stdout, stderr); each argument is passed as ``str``."""
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err
