"""`dpopt bench discrete-models` runs on tiny settings; its regret and baselines are computed as documented."""

from __future__ import annotations

import numpy as np
import pytest

import dpopt as dp
from dpopt import bench
from dpopt.bench import discrete_models as dm


def test_registered() -> None:
    assert "discrete-models" in bench.names()
    assert bench.get("discrete-models").main is dm.main


def test_pricing_baselines_by_enumeration() -> None:
    """f(opt) and f(random) of the pricing model equal an independent revenue computation."""
    loss = dm.pricing_loss(400)
    base = dm.baselines(loss, "highs")
    v = loss.data.X[:, 0]
    prices = np.arange(1, 21) * 5.0
    lost = np.array([np.mean(100.0 - p * (v >= p)) for p in prices])  # per buyer, at each price
    assert base.opt == pytest.approx(lost.min()) and base.random == pytest.approx(lost.mean())
    assert dm.normalised_regret(base.opt, base) == 0.0 and dm.normalised_regret(base.random, base) == 1.0


def test_nearest_point_is_a_domain_point() -> None:
    dom = dp.BinaryChoice(6, exactly=2)
    assert np.array_equal(dm.nearest_point(np.array([0.1, 0.9, -1, 0.5, 0.2, 0.0]), dom, None), [0, 1, 0, 1, 0, 0])
    grid = dp.DiscreteDomain(2, -1, 1, max_nonzero=1)
    K = grid.enumerate_indices()
    assert np.array_equal(dm.nearest_point(np.array([0.2, -0.8]), grid, K), [0, -1])


def test_smoke(capsys: pytest.CaptureFixture[str], tmp_path) -> None:  # noqa: ANN001
    code = dm.main(["--models", "pricing", "--n", "200", "--epsilons", "2", "--seeds", "1",
                    "--mechanisms", "opdisc,exponential,opsamp", "--opsamp-calls", "2", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "f(opt)" in out and "enumerated (20 points)" in out
    row = next(line for line in out.splitlines() if line.startswith("pricing "))
    cells = row.split()
    assert cells[:3] == ["pricing", "200", "2"]
    regrets = [float(c.rstrip("*")) for c in (cells[3], cells[5], cells[7])]
    assert all(-1e-12 <= r <= 2.0 for r in regrets)  # regret is ≥ 0 (nothing beats the optimum)
    assert cells[7].endswith("*")  # OPSamp's release is projected, and says so
    assert (tmp_path / "runs.csv").read_text().count("\n") == 1 + 3


def test_bad_arguments_exit_2() -> None:
    assert dm.main(["--models", "nosuch"]) == 2
    assert dm.main(["--n", "1"]) == 2
