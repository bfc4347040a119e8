"""``dpopt bench regression-rule`` runs end to end on one small table, and its statistic is the one
DPRidge's automatic rule reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("sklearn")

import dpopt as dp  # noqa: E402
from dpopt import bench  # noqa: E402
from dpopt.bench.regression_rule import TABLES, load  # noqa: E402
from dpopt.sklearn import DPRidge  # noqa: E402


def test_regression_rule_bench_small(tmp_path: Path) -> None:
    assert "regression-rule" in bench.names() and bench.describe("regression-rule").startswith("How DPRidge")
    code = bench.get("regression-rule").main(["--tables", "gen-small", "--epsilons", "0.5,4", "--seeds", "1",
                                              "--out", str(tmp_path)])
    assert code == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    cells = {c["epsilon"]: c for c in summary["cells"]}
    assert set(cells) == {0.5, 4.0}
    table = load("gen-small")
    low, high = table.label
    for eps, cell in cells.items():
        assert cell["regret"] == pytest.approx(max(cell["adassp"], cell["dp-gd"]) - cell[cell["chosen"]])
        est = DPRidge(eps, label_spec=dp.Numeric(low, high, grid=1), x_bound=table.x_bound, random_state=0,
                      ledger=dp.Ledger()).fit(table.X_train, table.y_train)
        assert est.mechanism_ == cell["chosen"]  # the bench reads the same public facts as the estimator
    assert [cells[0.5]["chosen"], cells[4.0]["chosen"]] == ["adassp", "dp-gd"]  # s ≈ 6 and ≈ 47 here
    assert "gen-small" in TABLES and bench.get("regression-rule").main(["--tables", "nope"]) == 2
