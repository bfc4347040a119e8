"""What ``dpopt solve`` records for comparing runs: the script's evaluation in ``--json`` under a key
that says it is not private, and the model, mechanism, solver and command line in the ledger."""

from __future__ import annotations

import json
import shlex
import textwrap
import warnings
from pathlib import Path

import pytest

from dpopt.cli.main import main
from dpopt.cli.solve import EVALUATION_KEY
from dpopt.errors import SpendingWarning
from dpopt.privacy.ledger import DefaultLedger
from dpopt.privacy.sqlite_ledger import SQLiteLedger

_MODEL = """
import numpy as np
import dpopt as dp
from dpopt.datasets import make_classification

PARAMS = {"epsilon": 0.5, "delta": 1e-6}
_STATE = {}


def build(params):
    data, _ = make_classification(300, 4, seed=0)
    theta = dp.Variable(4)
    _STATE["train"] = data
    problem = dp.Problem(dp.LogisticLoss(data, theta), regularizer=dp.L2Squared(theta, 0.1))
    return problem, dp.ObjectivePerturbation(params["epsilon"], params["delta"])
"""

#: an evaluation on the *private training data*, with numpy scalars: it must be marked not private
_EVALUATE = """

def evaluate(release):
    train = _STATE["train"]
    accuracy = np.mean(np.sign(train.X @ release.theta) == train.y)
    return {"train_accuracy": accuracy, "n_train": np.int64(train.n), "norm": np.linalg.norm(release.theta)}
"""

_FAILING_EVALUATE = """

def evaluate(release):
    raise KeyError("no test split")
"""


def _script(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "model.py"
    path.write_text(textwrap.dedent(body))
    return path


def _solve(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    code = main(["solve", *(str(a) for a in argv)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# ------------------------------------------------------------------ the evaluation


def test_json_holds_the_evaluation_only_under_the_not_private_key(capsys: pytest.CaptureFixture[str],
                                                                   tmp_path: Path) -> None:
    out_json = tmp_path / "out.json"
    code, out, err = _solve(capsys, _script(tmp_path, _MODEL + _EVALUATE), "--seed", "1", "--json", out_json)
    assert code == 0, err
    record = json.loads(out_json.read_text())
    evaluation = record[EVALUATION_KEY]
    assert EVALUATION_KEY == "evaluation_not_private"
    assert set(evaluation) == {"train_accuracy", "n_train", "norm"}
    assert evaluation["n_train"] == 300 and 0.0 <= evaluation["train_accuracy"] <= 1.0  # plain JSON numbers
    assert not {"train_accuracy", "n_train", "norm"} & (set(record) | set(record["run"]))  # not among the release's
    # printed only below a heading that says so, after the release
    heading = next(i for i, line in enumerate(out.splitlines()) if line.startswith("evaluation"))
    lines = out.splitlines()
    assert "NOT PRIVATE" in lines[heading] and EVALUATION_KEY in lines[heading]
    assert lines[heading + 1].strip().startswith("train_accuracy:")
    assert out.index("Release from") < out.index("train_accuracy")


def test_a_script_without_evaluate_has_no_evaluation(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out_json = tmp_path / "out.json"
    code, out, err = _solve(capsys, _script(tmp_path, _MODEL), "--seed", "1", "--json", out_json)
    assert code == 0, err
    assert EVALUATION_KEY not in json.loads(out_json.read_text()) and "evaluation" not in out


def test_a_failing_evaluate_still_saves_the_release(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The budget was spent: the release is written before the script's error is reported."""
    out_json = tmp_path / "out.json"
    code, out, err = _solve(capsys, _script(tmp_path, _MODEL + _FAILING_EVALUATE), "--seed", "1",
                            "--json", out_json)
    assert code == 2 and "running evaluate(release)" in err and "no test split" in err
    record = json.loads(out_json.read_text())
    assert record["run"]["status"] == "released" and len(record["theta"]) == 4
    assert EVALUATION_KEY not in record and f"release written to {out_json}" in out


# ------------------------------------------------------------------ the ledger


def test_the_ledger_records_model_mechanism_solver_and_command(capsys: pytest.CaptureFixture[str],
                                                                tmp_path: Path) -> None:
    ledger = tmp_path / "budget.sqlite"
    SQLiteLedger(ledger, dataset="demo", epsilon_budget=2.0, delta_budget=1e-5, create=True).close()
    model = _script(tmp_path, _MODEL + _EVALUATE)
    argv = [str(model), "--solver", "clarabel", "--seed", "1", "--set", "delta=1e-7",
            "--ledger", str(ledger), "--dataset", "demo"]
    code, _, err = _solve(capsys, *argv)
    assert code == 0, err
    (charge,) = SQLiteLedger.open(ledger, dataset="demo").charges
    assert charge.model == str(model) and charge.solver == "clarabel"
    assert charge.mechanism == "ObjectivePerturbation"
    assert shlex.split(charge.command) == ["dpopt", "solve", *argv]
    assert charge.status == "released"

    assert main(["ledger", "history", str(ledger)]) == 0
    head, row = capsys.readouterr().out.splitlines()
    assert head.split()[3:7] == ["dataset", "model", "mechanism", "solver"] and head.split()[-1] == "command"
    assert str(model) in row and "clarabel" in row and row.endswith(shlex.join(["dpopt", "solve", *argv]))
    assert "accuracy" not in row  # the evaluation never goes into the ledger


def test_a_cli_run_on_the_default_ledger_does_not_show_the_spending_warning(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One run per process: an ε above 10 already gets its own warning: line."""
    fresh = DefaultLedger()
    monkeypatch.setattr("dpopt.mechanisms.base._DEFAULT_LEDGER", fresh)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code, _, err = _solve(capsys, _script(tmp_path, _MODEL), "--epsilon", "11", "--seed", "1")
    assert code == 0, err
    assert fresh.spent[0] == 11.0 and fresh.charges[0].command.startswith("dpopt solve")
    assert not [w for w in caught if issubclass(w.category, SpendingWarning)]
    assert "ε = 11 gives no meaningful privacy" in err and "default ledger" not in err


#: a table whose label column uses other class names than the declared ones (every label unmatched)
_MISTYPED = """
import numpy as np
import pandas as pd
import dpopt as dp

PARAMS = {"epsilon": 1.0, "delta": 1e-6}


def build(params):
    rng = np.random.default_rng(0)
    table = pd.DataFrame({"x": rng.uniform(0, 1, 20_000), "y": rng.choice(["no", "yes"], 20_000)})
    data = dp.Dataset.from_frame(table, dp.Schema({"x": dp.Numeric(0, 1, grid=0.01)}), "y", classes=["No", "Yes"])
    theta = dp.Variable(1)
    problem = dp.Problem(dp.LogisticLoss(data, theta), constraint=dp.L2Ball(theta, 5.0),
                         regularizer=dp.L2Squared(theta, 0.1))
    return problem, dp.OutputPerturbation(params["epsilon"], params["delta"])
"""


def test_the_release_shows_the_private_counts_and_a_large_one_warns_naming_the_fix(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out_json = tmp_path / "out.json"
    code, out, err = _solve(capsys, _script(tmp_path, _MISTYPED), "--seed", "1", "--json", out_json)
    assert code == 0
    assert "diagnostics: noisy counts (2 % of ε" in out and "labels matching no declared class:" in out
    [line] = [w for w in err.splitlines() if "labels matched no declared class" in w]
    assert line.startswith("warning: OutputPerturbation: about") and line.endswith("check `classes=`")
    record = json.loads(out_json.read_text())
    assert record["parameters"]["diagnostics"]["share"] == pytest.approx(0.02)
    assert set(record["parameters"]["noisy_diagnostic_counts"]) == set(record["parameters"]["diagnostics"]["counts"])


def test_no_counts_spends_nothing_on_them(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out_json = tmp_path / "out.json"
    code, out, err = _solve(capsys, _script(tmp_path, _MISTYPED), "--seed", "1", "--no-counts", "--json", out_json)
    assert code == 0 and "diagnostics" not in out and "classes=" not in err
    record = json.loads(out_json.read_text())
    assert "diagnostics" not in record["parameters"] and record["epsilon"] == 1.0
