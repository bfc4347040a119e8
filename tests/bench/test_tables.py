"""``dpopt bench tables`` runs end to end on two small tables and writes the records issue 24 names."""

from __future__ import annotations

import csv
import json
from pathlib import Path

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
