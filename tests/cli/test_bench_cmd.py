"""``dpopt bench`` (:mod:`dpopt.cli.bench_cmd`): the list, unknown names and bad arguments, and one quick run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dpopt.testing.cli import run_cli as run


def test_bench_list(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "bench", "--list")
    assert code == 0
    assert "objective-perturbation" in out


def test_bench_unknown_name(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "bench", "nope")
    assert code == 2
    assert "unknown benchmark 'nope'" in err and "objective-perturbation" in err


def test_bench_bad_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "bench", "objective-perturbation", "--epsilons", "0,1")
    assert code == 2
    assert "positive numbers" in err


def test_bench_objective_perturbation_quick(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = run(capsys, "bench", "objective-perturbation", "--seeds", "1", "--epsilons", "1",
                         "--out", tmp_path)
    assert code == 0, err
    assert "Test accuracy" in out and "overhead" in out
    assert "dpopt ε-DP (δ=0)" in out and "non-private" in out
    summary = json.loads((tmp_path / "summary.json").read_text())
    row = summary["rows"][0]
    assert row["epsilon"] == 1.0
    assert 0.7 < row["dpopt_pure"]["acc_mean"] <= 1.0
    assert 0.7 < row["nonprivate"]["acc_mean"] <= 1.0
    assert (tmp_path / "runs.csv").read_text().startswith("method,")
