"""`dpopt bench verify-cost` runs and checks that verification never changes the released point."""

from __future__ import annotations

import importlib.util

import pytest

from dpopt import bench


@pytest.mark.skipif(importlib.util.find_spec("pyscipopt") is None, reason="the scip-grouped verifier needs pyscipopt")
def test_verify_cost_smoke(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.get("verify-cost").main(["--n", "200", "--draws", "1"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.strip().startswith("0 "))
    assert "scip-grouped" in row and row.split()[-3:] == ["True", "True", "True"]  # certified, verified, same point
    assert "median time ratio" in out
    assert "per verified call (primary + verifier solve): median" in out
    assert "certified and verified: 1 of 1 calls" in out
