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


def test_main_runs_fast_and_naive(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--ns", "200", "--draws", "1", "--time-limit", "30", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "fast" in out and "naive" in out and "agree" in out


def test_bad_options_exit_2() -> None:
    assert main(["--draws", "0"]) == 2
    assert main(["--backends", "nosuch"]) == 2
