"""``dpopt bench startup`` runs (one repeat: a smoke test, not a timing) and prints its table."""

from __future__ import annotations

import pytest

from dpopt import bench


def test_startup_bench_prints_each_command_with_its_ratios(capsys: pytest.CaptureFixture[str]) -> None:
    assert "startup" in bench.names()
    assert bench.get("startup").main(["--repeats", "1"]) == 0
    out = capsys.readouterr().out
    labels = {"python -c pass", "import numpy", "import dpopt", "dpopt --help", "Problem+DPGD", "pandas+sklearn",
              "first fit"}
    rows = {line[:16].strip(): line[16:].split() for line in out.splitlines()
            if line[:16].strip() in labels and "imports:" not in line}
    assert set(rows) == labels
    python, numpy = float(rows["python -c pass"][0]), float(rows["import numpy"][0])
    for label, (median, fastest, x_python, x_numpy, cpu) in rows.items():
        assert float(median) == float(fastest) > 0.0, label  # one repeat: the median is the only run
        # the ratios are of the medians (to the printed precision, the seconds being rounded too)
        assert float(x_python) == pytest.approx(float(median) / python, rel=0.1, abs=0.1), label
        assert float(x_numpy) == pytest.approx(float(median) / numpy, rel=0.1, abs=0.02), label
        assert 0.0 < float(cpu), label  # the child's own CPU time (its wall time includes waiting)
    assert float(rows["python -c pass"][2]) == 1.0 and float(rows["import numpy"][3]) == 1.0  # the baselines
    # a first fit does at least what its table and estimator need: more CPU than pandas + sklearn alone
    assert float(rows["first fit"][4]) > float(rows["pandas+sklearn"][4])
    for label, limit in (("Problem+DPGD", 1.0), ("first fit", 2.0)):
        verdict = "met" if float(rows[label][0]) <= limit else "NOT met"
        assert f"target: {label} median {float(rows[label][0]):.3f} s ≤ {limit:.1f} s: {verdict}" in out
    assert "import dpopt imports: (none of the heavy modules)" in out
    assert "dpopt --help imports: (none of the heavy modules)" in out
    # the modeling layer and the mechanisms load neither scipy.stats nor scipy.integrate nor any solver
    line = next(line for line in out.splitlines() if line.startswith("Problem+DPGD imports:"))
    assert "dpopt.mechanisms" in line
    for heavy in ("scipy.stats", "scipy.integrate", "cvxpy", "pyomo", "highspy", "ortools", "sklearn", "pandas"):
        assert heavy not in line.split(": ", 1)[1].split(", "), heavy


def test_startup_bench_refuses_a_bad_repeat_count(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.get("startup").main(["--repeats", "0"]) == 2
    assert "--repeats" in capsys.readouterr().err
