"""`dpopt bench constrained-regression` on a small setting, and the table it generates."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from dpopt.bench import get
from dpopt.bench.constrained_regression import (
    AMENITIES,
    DISTRICTS,
    NUMERIC,
    PRICE,
    make_table,
    verdict,
)
from dpopt.sklearn import SchemaEncoder


def test_the_table_is_in_real_units_with_26_encoded_features_and_non_negative_slopes() -> None:
    frame, price, schema = make_table(500, seed=1)
    encoded = SchemaEncoder(schema).fit_transform(frame)
    assert encoded.shape[1] + 1 == 26  # the intercept makes 26
    assert price.min() >= PRICE[0] and price.max() <= PRICE[1] and price.std() > 50_000.0  # dollars
    assert min(s for *_, s in NUMERIC) >= 0 and min(DISTRICTS) >= 0 and min(v for _, v in AMENITIES) >= 0
    assert frame["area_m2"].between(30, 300).all()  # raw units, not scaled


def test_a_small_run_writes_the_table_and_the_default_is_compared_at_epsilon_one(tmp_path: Path) -> None:
    out = tmp_path / "cr"
    code = get("constrained-regression").main(["--epsilons", "1", "--seeds", "2", "--train", "3000", "--test", "500",
                                               "--candidates", "dp-gd,adassp (unconstrained)", "--out", str(out)])
    assert code == 0
    summary = json.loads((out / "summary.json").read_text())
    names = {c["candidate"] for c in summary["cells"]}
    assert names == {"default (auto)", "dp-gd", "adassp (unconstrained)"}
    assert all(c["seeds"] == 2 and np.isfinite(c["r2_mean"]) for c in summary["cells"])
    assert "ε = 1: default R²" in (out / "table.txt").read_text()


def test_the_verdict_compares_the_default_with_the_best_constrained_mechanism() -> None:
    cells = [{"candidate": "default (auto)", "epsilon": 1.0, "r2_mean": 0.90},
             {"candidate": "dp-gd", "epsilon": 1.0, "r2_mean": 0.97},
             {"candidate": "adassp (unconstrained)", "epsilon": 1.0, "r2_mean": 0.99}]  # not a constrained one
    assert "NOT within" in verdict(cells) and "best dp-gd" in verdict(cells)
    cells[1]["r2_mean"] = 0.93
    assert "(gap 0.0300, within 0.05)" in verdict(cells)
