"""Privacy–utility curves (dpopt.bench.curves) and the search target of ``dpopt bench tables``."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from dpopt.bench.curves import R2_FLOOR, main, panels, write_curves
from dpopt.bench.tables import Run, search_checks

TABLES = {
    "tables": {"a": {"metric": "accuracy", "n_train": 100, "d": 3}, "r": {"metric": "r2", "n_train": 50, "d": 2}},
    "seeds": 3,
    "records": [
        {"table": "a", "method": "auto", "epsilon": 1.0, "score_mean": 0.8, "score_sd": 0.02},
        {"table": "a", "method": "auto", "epsilon": 0.5, "score_mean": 0.7, "score_sd": 0.05},
        {"table": "a", "method": "majority", "epsilon": None, "score_mean": 0.6, "score_sd": 0.0},
        {"table": "r", "method": "auto", "epsilon": 1.0, "score_mean": -3.0, "score_sd": 1.0},
        {"table": "r", "method": "sklearn", "epsilon": None, "score_mean": 0.9, "score_sd": 0.0},
    ],
}


def test_panels_hold_every_method_sorted_by_epsilon_and_baselines_without_one():
    a, r = panels(TABLES)
    assert a.lines == {"auto": [(0.5, 0.7, 0.05), (1.0, 0.8, 0.02)]} and a.baselines == {"majority": 0.6}
    assert a.ylabel == "test accuracy" and a.floor is None
    assert r.ylabel == "test R²" and r.floor == R2_FLOOR and r.baselines == {"sklearn": 0.9}
    linear = {"encoding": "standard", "n_train": 10, "records": [
        {"method": "dp-gd", "epsilon": 0.1, "accuracy_mean": 0.78, "accuracy_sd": 0.01},
        {"method": "nonprivate", "epsilon": None, "accuracy_mean": 0.85, "accuracy_sd": 0.0}]}
    [panel] = panels(linear)
    assert panel.lines == {"dp-gd": [(0.1, 0.78, 0.01)]} and panel.baselines == {"nonprivate": 0.85}


def test_a_png_is_written_from_a_summary_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    pytest.importorskip("matplotlib")
    import json

    source = tmp_path / "summary.json"
    source.write_text(json.dumps(TABLES))
    assert main([str(source), str(tmp_path / "out" / "curves.png")]) == 0
    data = (tmp_path / "out" / "curves.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    assert main([str(source)]) == 2 and "usage" in capsys.readouterr().err
    assert write_curves({"records": []}, tmp_path / "empty.png") is None  # nothing to draw: no file
    assert not (tmp_path / "empty.png").exists()


def _runs(scores: dict[tuple[str, str], list[float]], eps: float = 1.0) -> list[Run]:
    return [Run(table, "binary", "accuracy", method, eps, seed, s, 0.0)
            for (table, method), values in scores.items() for seed, s in enumerate(values)]


def test_the_search_target_compares_means_over_tables_per_seed():
    scores = {("t1", "auto"): [0.8, 0.82, 0.81], ("t1", "search"): [0.79, 0.8, 0.82],
              ("t2", "auto"): [0.6, 0.64, 0.62], ("t2", "search"): [0.5, 0.52, 0.51]}
    [check] = search_checks(_runs(scores))
    auto = np.mean([[0.8, 0.82, 0.81], [0.6, 0.64, 0.62]], axis=0)  # per seed, over the tables
    search = np.mean([[0.79, 0.8, 0.82], [0.5, 0.52, 0.51]], axis=0)
    assert check["auto"] == pytest.approx(auto.mean()) and check["search"] == pytest.approx(search.mean())
    assert check["auto_se"] == pytest.approx(np.std(auto, ddof=1) / math.sqrt(3))
    assert check["passed"] is False and check["tables"] == ["t1", "t2"]
    close = {k: (v if k[1] == "auto" else [x - 1e-4 for x in scores[(k[0], "auto")]]) for k, v in scores.items()}
    assert search_checks(_runs(close))[0]["passed"] is True
    assert search_checks(_runs({("t1", "auto"): [0.8, 0.8]})) == []  # no search: nothing judged


DOCS = Path(__file__).resolve().parents[2] / "docs"


@pytest.mark.parametrize("name", ["tables", "linear"])
def test_the_stored_output_the_docs_draw_is_what_the_shown_command_writes(name: str):
    """docs/benchmarks.md shows one command per figure; the stored summary it draws from has that
    command's ε and seeds and a record for every method the benchmark runs today (a method added
    without rerunning the command fails here)."""
    import json
    import shlex

    from dpopt.bench import linear, tables
    from dpopt.testing.markdown import code_blocks

    summary = json.loads((DOCS / "benchmarks" / name / "summary.json").read_text())
    [command] = [shlex.split(line) for block in code_blocks((DOCS / "benchmarks.md").read_text(), "sh")
                 for line in block.splitlines() if line.startswith(f"dpopt bench {name} ")]
    args = dict(zip(command[3::2], command[4::2], strict=True))
    assert args["--out"] == f"docs/benchmarks/{name}"
    epsilons = [float(e) for e in args["--epsilons"].split(",")]
    assert sorted({r["epsilon"] for r in summary["records"] if r["epsilon"] is not None}) == epsilons
    assert {r["seeds"] for r in summary["records"] if r["epsilon"] is not None} == {int(args["--seeds"])}
    methods = {r["method"] for r in summary["records"]}
    if name == "tables":
        assert set(summary["tables"]) == set(tables.TABLES)
        skipped = {"diffprivlib"} if not summary["diffprivlib"] else set()
        for table, task in tables.TABLES.items():
            ran = {r["method"] for r in summary["records"] if r["table"] == table}
            assert (set(tables.PRIVATE[task]) - set(tables.ON_REQUEST)) | set(tables.BASELINES[task]) - skipped <= ran, table
    else:
        assert set(linear.METHODS) <= methods
