"""Process-based executors from a user's script: the README's example script runs,
and a script without the ``if __name__ == "__main__":`` guard gets a clear refusal *before*
the charge instead of a broken pool inside the run."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

_UNGUARDED = """
import dpopt as dp
from dpopt.datasets import make_classification
from dpopt.executors import ExecutorError

data, _ = make_classification(100, 3, seed=0)
w = dp.Variable(3)
problem = dp.Problem(dp.LogisticLoss(data, w), constraint=dp.L2Ball(w, 1.0))
ledger = dp.Ledger()
try:
    dp.DPGradientDescent(1.0, 1e-5, steps=2, ledger=ledger).run(problem, executor={spec!r})
    print("RAN")
except ExecutorError as exc:
    print("REFUSED", len(ledger.charges), "__main__" in str(exc))
"""


@pytest.mark.parametrize("spec", ["processes", pytest.param("dask", marks=pytest.mark.slow)])
def test_an_unguarded_script_is_refused_before_the_charge(tmp_path: Path, spec: str) -> None:
    if spec == "dask":
        pytest.importorskip("distributed")
    script = tmp_path / "unguarded.py"
    script.write_text(textwrap.dedent(_UNGUARDED.format(spec=spec)))
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=600)
    # the parent's line (worker processes re-running the script may print their own lines too)
    assert "REFUSED 0 True" in done.stdout.splitlines(), (done.stdout[-2000:], done.stderr[-2000:])


@pytest.mark.slow
def test_the_scale_out_example_runs() -> None:
    pytest.importorskip("distributed")
    pytest.importorskip("pyarrow")
    done = subprocess.run([sys.executable, str(REPO / "examples" / "scale_out.py")], cwd=REPO,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "DP-GD on 2000 rows in 4 files" in done.stdout and "OPDisc with its point MIPs" in done.stdout
