"""``dpopt bench grid-cost``: every mechanism's exact grid noise is never below the continuous
calibration it replaced, and costs little except where the law or the accounting changed."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest

from dpopt import bench
from dpopt.bench.grid_cost import dpsgd, examples

#: a row per mechanism of the benchmark's list (names as printed)
MECHANISMS = (
    "OutputPerturbation", "SubmodularOutputPerturbation", "ObjectivePerturbation (output)",
    "DualFrankWolfe (recovery)", "OPSamp (output)", "DPGradientDescent (adaptive)",
    "DPGradientDescent (lipschitz)", "DPSGD", "PrivateMirrorDescent", "GaussianFrankWolfe",
    "PolytopeFrankWolfe (LASSO, selection)", "PrivateSelection (liu-talwar)",
    "PrivateSelection (papernot-steinke)",
)


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def test_every_mechanism_pays_at_least_the_continuous_scale_and_little_more(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert "grid-cost" in bench.names() and bench.describe("grid-cost").startswith("Noise scale")
    out = tmp_path / "rows.csv"
    # q = 1 skips the slow PLD search of DP-SGD (its amplified σ is the slow test below)
    code = bench.get("grid-cost").main(["--epsilons", "1", "--n", "200", "--sampling-rate", "1", "--out", str(out)])
    assert code == 0
    table = capsys.readouterr().out
    rows = _rows(out)
    for name in MECHANISMS:
        assert any(r["mechanism"].startswith(name) for r in rows), name
        assert name in table
    assert {r["epsilon"] for r in rows} == {"1.0"}
    for r in rows:
        ratio = float(r["exact"]) / float(r["continuous"])
        assert math.isclose(ratio, float(r["ratio"]), rel_tol=1e-12)
        assert float(r["grid_step"]) > 0.0
        assert ratio >= 0.99, r  # the exact calibration is never tighter than the continuous one
        pure = r["mechanism"] == "OutputPerturbation" and float(r["delta"]) == 0.0
        if pure:
            # E‖v‖: √(2d)·b with b = γ⌈(√d·Δ/γ + d)/ε⌉ ∈ [√d·Δ/ε, √d·Δ/ε·(1 + 2^-8) + γ] and γd ≤ √d·Δ/256,
            # against the ℓ2-Laplace's d·Δ/ε: the ratio is √2 up to the grid's ~2^-7
            assert r["what"] == "E‖v‖"
            assert math.sqrt(2.0) * (1 - 1e-12) <= ratio <= math.sqrt(2.0) * (1 + 2**-6)
        elif not r["mechanism"].startswith("DPSGD"):
            assert ratio <= 1.2, r
    assert any(r["mechanism"] == "OutputPerturbation" and float(r["delta"]) > 0 and r["what"] == "σ" for r in rows)


@pytest.mark.slow
def test_dpsgd_proved_sigma_is_close_to_the_subsampled_pld() -> None:
    # both are amplified by Poisson sampling; the proved RDP bound (and its conversion to (ε, δ))
    # costs more σ than the continuous Gaussian's exact PLD, never less: 1.31× here (T = 22 steps,
    # where RDP is loosest), against 107× for the unamplified zCDP σ
    row = dpsgd(examples(2000), 0.1)[0]
    assert row.mechanism.startswith("DPSGD (rdp")
    assert 1.0 < row.ratio <= 1.35
    assert "amplified" in row.note


@pytest.mark.parametrize("argv", [
    ["--epsilons", "0"], ["--epsilons", "abc"], ["--n", "5"], ["--n", "99999"], ["--n", "x"],
    ["--sampling-rate", "0"], ["--sampling-rate", "2"], ["--unknown"],
])
def test_bad_arguments_return_2(argv: list[str]) -> None:
    assert bench.get("grid-cost").main(argv) == 2
