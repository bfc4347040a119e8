"""`dpopt bench adult-halfspace`: a tiny run, and merging runs made one ε at a time."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("highspy", reason="highspy is not installed")
pytest.importorskip("matplotlib", reason="matplotlib is not installed")

from dpopt.bench.adult_halfspace import main, read_runs  # noqa: E402

TINY = ["--n", "60", "--runs", "2", "--solver", "highs-grouped", "--threads", "1", "--quiet"]


def test_runs_per_epsilon_merge_into_one_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for eps in ("0.5", "1.0"):
        assert main([*TINY, "--epsilons", eps, "--out", str(tmp_path / eps)]) == 0
    capsys.readouterr()
    merged = tmp_path / "all"
    assert main([*TINY, "--merge", str(tmp_path / "0.5"), str(tmp_path / "1.0"), "--out", str(merged)]) == 0
    out = capsys.readouterr().out
    runs = read_runs(merged)
    assert len(runs) == 2 * 2 * 3  # two ε × two runs × OPDisc, RSPM, LR
    assert {r.epsilon for r in runs} == {0.5, 1.0} and all(r.certified for r in runs)
    for mech in ("OPDisc", "RSPM", "LR"):
        assert sum(line.split()[0] == mech for line in out.splitlines() if line.strip()) >= 2
    assert (merged / "figure1.png").stat().st_size > 0


def test_merge_of_a_folder_without_runs_exits_2(tmp_path: Path) -> None:
    assert main([*TINY, "--merge", str(tmp_path)]) == 2
