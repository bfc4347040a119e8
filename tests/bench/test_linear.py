"""`dpopt bench linear` runs end to end on a small setting and writes the records the issue names."""

import json

import pytest

from dpopt.bench import get


def test_linear_bench_small(tmp_path, capsys):
    linear = get("linear")
    code = linear.main(["--encoding", "paper23", "--epsilons", "1", "--seeds", "2", "--out", str(tmp_path),
                        "--methods", "objective-perturbation,dp-gd,dp-gd-previous,dp-sgd,dp-gd-selected,nonprivate"])
    assert code == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    records = {r["method"]: r for r in summary["records"]}
    assert set(records) == {"objective-perturbation", "dp-gd", "dp-gd-previous", "dp-sgd", "dp-gd-selected",
                            "nonprivate"}
    for name, rec in records.items():
        for key in ("method", "epsilon", "accuracy_mean", "accuracy_sd", "fit_seconds_median", "private_tuning"):
            assert key in rec
        assert rec["private_tuning"] is (name not in ("nonprivate", "dp-gd-previous"))  # previous γ: picked on Adult
        assert 0.5 < rec["accuracy_mean"] <= 1.0
    assert records["dp-gd-selected"]["tuning"] == "PrivateSelection"
    assert records["nonprivate"]["epsilon"] is None
    assert "wrote" in capsys.readouterr().out


@pytest.mark.parametrize("bad", [["--epsilons", "0"], ["--seeds", "0"], ["--methods", "magic"],
                                 ["--encoding", "weird"]])
def test_linear_bench_bad_arguments(bad, tmp_path):
    with pytest.raises(SystemExit):
        get("linear").main([*bad, "--out", str(tmp_path)])
