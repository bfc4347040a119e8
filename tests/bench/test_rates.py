"""`dpopt bench rates` runs end to end on a shrunken grid and writes its table and plot."""

import json

from dpopt.bench import get


def test_rates_bench_small(tmp_path, capsys):
    rates = get("rates")
    code = rates.main(["--ns", "300,1000", "--seeds", "2", "--max-steps", "200", "--quiet",
                       "--methods", "md-simplex,md-l1,fw-lasso", "--out", str(tmp_path)])
    assert code == 0
    out = capsys.readouterr().out
    assert "fitted log-log slope" in out and "σ paper" in out
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert set(summary["rows"]) == {"md-simplex", "md-l1", "fw-lasso"}
    assert (tmp_path / "rates.png").stat().st_size > 0
    for entry in summary["compare"].values():
        assert entry["accountant"]["sigma"] <= entry["paper"]["sigma"]
