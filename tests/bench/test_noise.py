"""``dpopt bench noise`` runs on tiny sizes (a smoke test, not a timing) and prints the fit and its noise's shares."""

from __future__ import annotations

import pytest

from dpopt import bench


def test_noise_bench_prints_the_fit_and_each_sampler_with_its_share(capsys: pytest.CaptureFixture[str]) -> None:
    assert "noise" in bench.names() and bench.describe("noise").startswith("Time of drawing")
    code = bench.get("noise").main(["--data", "synthetic", "--n", "60", "--steps", "2", "--repeats", "1"])
    assert code == 0
    out = capsys.readouterr().out
    assert "T = 2" in out and "d = 104" in out
    for label in ("fit (exact noise, secure)", "its noise, exact, secure", "exact, seeded", "numpy float Gaussian"):
        assert label in out
    assert "exact ÷ numpy" in out


def test_noise_bench_refuses_bad_arguments() -> None:
    assert bench.get("noise").main(["--steps", "0"]) == 2
