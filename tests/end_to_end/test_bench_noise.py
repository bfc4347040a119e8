"""``dpopt bench noise`` runs on tiny sizes (a smoke test, not a timing) and prints both samplers' ratios."""

from __future__ import annotations

from fractions import Fraction

import pytest

from dpopt import bench
from dpopt.bench.noise import grid_sigma2


def test_noise_bench_prints_the_fit_and_both_samplers_with_their_ratios(capsys: pytest.CaptureFixture[str]) -> None:
    assert "noise" in bench.names() and bench.describe("noise").startswith("Time of drawing")
    code = bench.get("noise").main(["--data", "synthetic", "--n", "60", "--steps", "2", "--repeats", "1"])
    assert code == 0
    out = capsys.readouterr().out
    assert "T = 2" in out and "d = 104" in out
    for label in ("fit (float noise)", "numpy float Gaussian", "exact discrete Gaussian", "exact, seeded"):
        assert label in out
    assert "exact ÷ numpy" in out


def test_noise_bench_grid_puts_sigma_between_2_to_the_bits_and_twice_that() -> None:
    for sigma in (0.37, 1.0, 1383.47):
        s2 = grid_sigma2(sigma, 10)
        assert isinstance(s2, Fraction) and 2**20 <= s2 < 2**22


def test_noise_bench_refuses_bad_arguments() -> None:
    assert bench.get("noise").main(["--steps", "0"]) == 2
