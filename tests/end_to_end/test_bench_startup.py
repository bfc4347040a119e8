"""``dpopt bench startup`` runs (one repeat: a smoke test, not a timing) and prints its table."""

from __future__ import annotations

import pytest

from dpopt import bench


def test_startup_bench_prints_each_command_with_its_ratios(capsys: pytest.CaptureFixture[str]) -> None:
    assert "startup" in bench.names()
    assert bench.get("startup").main(["--repeats", "1"]) == 0
    out = capsys.readouterr().out
    rows = {line[:16].strip(): line[16:].split() for line in out.splitlines()
            if line.startswith(("python -c pass", "import numpy", "import dpopt", "dpopt --help"))
            and "imports:" not in line}
    assert set(rows) == {"python -c pass", "import numpy", "import dpopt", "dpopt --help"}
    python, numpy = float(rows["python -c pass"][0]), float(rows["import numpy"][0])
    for label, (median, fastest, x_python, x_numpy) in rows.items():
        assert float(median) == float(fastest) > 0.0, label  # one repeat: the median is the only run
        # the ratios are of the medians (to the printed precision, the seconds being rounded too)
        assert float(x_python) == pytest.approx(float(median) / python, rel=0.1, abs=0.1), label
        assert float(x_numpy) == pytest.approx(float(median) / numpy, rel=0.1, abs=0.02), label
    assert float(rows["python -c pass"][2]) == 1.0 and float(rows["import numpy"][3]) == 1.0  # the baselines
    assert "import dpopt imports: (none of the heavy modules)" in out
    assert "dpopt --help imports: (none of the heavy modules)" in out


def test_startup_bench_refuses_a_bad_repeat_count(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.get("startup").main(["--repeats", "0"]) == 2
    assert "--repeats" in capsys.readouterr().err
