"""The OPDisc oracle benchmark runs end to end on a tiny instance."""

from __future__ import annotations

import pytest

pytest.importorskip("pyomo")
pytest.importorskip("highspy")

from dpopt.bench import get, names  # noqa: E402
from dpopt.bench.opdisc import adult_problem, compile_naive, main  # noqa: E402


def test_registered() -> None:
    assert "opdisc" in names()
    assert get("opdisc").main is main


def test_naive_model_counts_every_row() -> None:
    prog = compile_naive(adult_problem(50))
    assert prog.size.rows == 50 and prog.size.pairs == 0


def test_main_runs_grouped_fast_and_naive(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--ns", "200", "--draws", "1", "--time-limit", "30", "--baseline-ns", "200", "--quiet"]) == 0
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines() if line.strip().startswith("200 ")]
    assert sorted(r[1] for r in rows) == ["fast", "grouped", "naive"]
    assert all(r[3] == "1/1" for r in rows)  # all three certified the draw...
    assert "one optimal value (2 cross-checks)" in out  # ...with one optimal value


def test_baselines_run_only_where_asked(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--ns", "100,150", "--draws", "1", "--baseline-ns", "100", "--no-naive", "--quiet"]) == 0
    out = capsys.readouterr().out
    rows = [line.split()[:3] for line in out.splitlines() if line.strip()[:4] in ("100 ", "150 ")]
    assert sorted(map(tuple, rows)) == [("100", "fast", "highs"), ("100", "grouped", "highs-grouped"),
                                        ("150", "grouped", "highs-grouped")]


def test_bad_options_exit_2() -> None:
    assert main(["--draws", "0"]) == 2
    assert main(["--backends", "nosuch"]) == 2
