"""``dpopt doctor`` (:mod:`dpopt.cli.doctor`): what it reports about the installed solvers."""

from __future__ import annotations

import pytest

from dpopt.testing.cli import run_cli as run

# ---------------------------------------------------------------------------
# dpopt doctor and dpopt bench
# ---------------------------------------------------------------------------


def test_doctor(capsys: pytest.CaptureFixture[str]) -> None:
    from dpopt.backends import registry

    code, out, _ = run(capsys, "doctor")
    assert code == 0
    for name in ("clarabel", "scipy", "scs", "osqp", *registry.names()):
        assert name in out
    assert "installed" in out and "version" in out
    assert "highspy + ortools in one process:" in out
