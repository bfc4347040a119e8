"""``dpopt bench tables`` runs end to end on two small tables and writes the records issue 24 names."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sklearn")

from dpopt import bench  # noqa: E402
from dpopt.bench.tables import Run  # noqa: E402

RECORD_KEYS = {"table", "task", "metric", "method", "epsilon", "delta", "score_mean", "score_sd",
               "fit_seconds_median", "seeds", "chosen", "private", "dpopt"}


def test_tables_bench_small(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert "tables" in bench.names() and bench.describe("tables").startswith("Accuracy or R²")
    code = bench.get("tables").main(["--tables", "breast-cancer,diabetes", "--seeds", "2", "--epsilons", "1",
                                     "--methods", "auto,objective-perturbation,majority,mean,sklearn",
                                     "--out", str(tmp_path)])
    assert code == 0
    printed = capsys.readouterr().out
    assert {p.name for p in tmp_path.iterdir()} >= {"runs.csv", "summary.json", "table.txt", "curves.png"}

    with (tmp_path / "runs.csv").open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert set(rows[0]) == set(Run.__dataclass_fields__)
    private = [r for r in rows if r["method"] in ("auto", "objective-perturbation")]
    assert len(private) == 2 * 2 * 2  # tables × methods × seeds
    assert {r["seed"] for r in private} == {"0", "1"} and {r["epsilon"] for r in private} == {"1.0"}
    assert all(float(r["fit_seconds"]) >= 0 for r in rows)

    summary = json.loads((tmp_path / "summary.json").read_text())
    records = {(r["table"], r["method"]): r for r in summary["records"]}
    assert set(records) == {("breast-cancer", m) for m in ("majority", "sklearn", "auto", "objective-perturbation")} | {
        ("diabetes", m) for m in ("mean", "sklearn", "auto", "objective-perturbation")}
    for rec in records.values():
        assert RECORD_KEYS <= set(rec)
    cancer, diabetes = summary["tables"]["breast-cancer"], summary["tables"]["diabetes"]
    assert cancer["metric"] == "accuracy" and diabetes["metric"] == "r2"
    assert cancer["delta"] == pytest.approx(1.0 / cancer["n_train"] ** 2)
    auto = records[("breast-cancer", "auto")]
    assert auto["epsilon"] == 1.0 and auto["seeds"] == 2 and auto["delta"] == cancer["delta"]
    assert auto["chosen"].startswith("dp-gd")  # DPLogisticRegression's auto rule for binary tasks
    assert records[("diabetes", "auto")]["chosen"].startswith("adassp")
    assert 0.5 < records[("breast-cancer", "sklearn")]["score_mean"] <= 1.0
    assert records[("breast-cancer", "sklearn")]["epsilon"] is None
    assert records[("diabetes", "mean")]["score_mean"] <= 0.0 + 1e-9  # the training mean on the test split
    assert 0.0 <= records[("breast-cancer", "majority")]["score_mean"] == cancer["majority_rate"] <= 1.0

    # the targets are printed per table at ε = 1: floor and best mechanism
    checks = {(c["table"], c["target"]) for c in summary["checks"]}
    assert checks == {("breast-cancer", "floor"), ("breast-cancer", "best"), ("diabetes", "floor"),
                      ("diabetes", "best")}
    text = (tmp_path / "table.txt").read_text()
    for piece in ("breast-cancer: binary", "diabetes: regression", "auto chose: dp-gd", "target floor",
                  "target best", "objective-perturbation"):
        assert piece in text and piece in printed
    if not summary["diffprivlib"]:
        assert "diffprivlib" not in {m for _, m in records}


@pytest.mark.parametrize("argv", [["--epsilons", "0"], ["--seeds", "0"], ["--methods", "magic"],
                                  ["--tables", "iris"], ["--tables", ""], ["--unknown"]])
def test_tables_bench_bad_arguments_return_2(argv: list[str], tmp_path: Path) -> None:
    assert bench.get("tables").main([*argv, "--out", str(tmp_path)]) == 2
    assert not (tmp_path / "runs.csv").exists()


def test_adult_hours_is_a_real_regression_table_with_its_declared_range() -> None:
    """``adult-hours``: the shipped Adult splits with hours-per-week (top-coded at 99) taken out of the
    standard encoding as the label in hours; n ≥ 10,000; DPRidge finds the encoding's intercept."""
    import dpopt as dp
    from dpopt.bench.tables import ADULT_HOURS_LABEL, TABLES, dpopt_estimator, load_table
    from dpopt.datasets import adult_features, adult_train_test

    assert TABLES["adult-hours"] == "regression"
    table = load_table("adult-hours")
    assert table.task == "regression" and table.label_range == (0.0, 99.0) == tuple(map(float, ADULT_HOURS_LABEL))
    assert table.X_train.shape == (32_561, 108) and table.X_test.shape == (16_281, 108)
    assert not table.fit_intercept and table.x_bound == pytest.approx(15**0.5)
    names = adult_features("standard")
    assert "hours-per-week" not in table.X_train.columns and list(table.X_train.columns) == [
        c for c in names if c != "hours-per-week"]
    train, test = adult_train_test(encoding="standard")  # an independent read of the shipped files
    j = names.index("hours-per-week")
    for X, y, part in ((table.X_train, table.y_train, train), (table.X_test, table.y_test, test)):
        assert np.allclose(y, 99.0 * np.asarray(part.X)[:, j]) and np.allclose(y, np.round(y))
        assert 0.0 <= y.min() and y.max() <= 99.0 and 35 < y.mean() < 45  # hours a week
        assert np.all(np.linalg.norm(np.asarray(X), axis=1) <= table.x_bound + 1e-9)
        assert np.all(np.asarray(X["intercept"]) == 1.0)
    est = dpopt_estimator("auto", table, 1.0, 0).fit(table.X_train, table.y_train)
    assert est.release_.parameters["intercept_column"] == list(table.X_train.columns).index("intercept")
    assert est.label_spec == dp.Numeric(0, 99, grid=1)
    assert 0.0 <= est.predict(table.X_test).min() and est.predict(table.X_test).max() <= 99.0
