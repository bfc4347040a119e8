"""``dpopt ledger init | show | history`` (dpopt.cli.ledger_cmd), with a parser built here."""

import argparse
import json
from pathlib import Path

import pytest

from dpopt.cli import ledger_cmd
from dpopt.errors import DpoptError, LedgerError, PrivacyParameterError
from dpopt.privacy import SQLiteLedger


def _parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="dpopt")
    sub = p.add_subparsers(dest="command")
    ledger_cmd.add_parser(sub)
    return p.parse_args(argv)


def _run(argv: list[str]) -> int:
    return ledger_cmd.run(_parse(["ledger", *argv]))


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "budget.sqlite"


def test_init_creates_the_dataset_and_is_idempotent(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(["init", str(path), "--dataset", "adult", "--epsilon", "2", "--delta", "1e-6"]) == 0
    assert "created dataset 'adult'" in capsys.readouterr().out
    ledger = SQLiteLedger.open(path, dataset="adult")
    assert (ledger.epsilon_budget, ledger.delta_budget) == (2.0, 1e-6)
    assert _run(["init", str(path), "--dataset", "adult", "--epsilon", "2.0", "--delta", "0.000001"]) == 0
    out = capsys.readouterr().out
    assert "already in" in out and "nothing changed" in out
    with pytest.raises(PrivacyParameterError, match=r"'adult'.*epsilon_budget=3"):
        _run(["init", str(path), "--dataset", "adult", "--epsilon", "3", "--delta", "1e-6"])
    assert _run(["init", str(path), "--dataset", "census", "--epsilon", "1", "--delta", "0"]) == 0
    assert SQLiteLedger.datasets(path) == ("adult", "census")


@pytest.mark.parametrize("argv", [
    ["init", "F", "--dataset", "d", "--epsilon", "0", "--delta", "0"],
    ["init", "F", "--dataset", "d", "--epsilon", "-1", "--delta", "0"],
    ["init", "F", "--dataset", "d", "--epsilon", "nan", "--delta", "0"],
    ["init", "F", "--dataset", "d", "--epsilon", "one", "--delta", "0"],
    ["init", "F", "--dataset", "d", "--epsilon", "1", "--delta", "1"],
    ["init", "F", "--dataset", "d", "--epsilon", "1", "--delta", "-0.1"],
    ["init", "F", "--dataset", "", "--epsilon", "1", "--delta", "0"],
    ["init", "F", "--epsilon", "1", "--delta", "0"],
    ["init", "F", "--dataset", "d", "--epsilon", "1"],
    ["show"],
    [],
])
def test_bad_arguments_are_usage_errors(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        _parse(["ledger", *argv])
    assert exit_.value.code == 2
    assert "error:" in capsys.readouterr().err


def test_show_and_history(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    adult = SQLiteLedger(path, dataset="adult", epsilon_budget=1.0, delta_budget=1e-6, create=True)
    census = SQLiteLedger(path, dataset="census", epsilon_budget=0.5, create=True)
    adult.charge(0.25, 1e-7, label="logistic\nn=100", mechanism="objective perturbation")
    with pytest.raises(RuntimeError):
        with census.spend(0.125, 0.0, label="lasso", mechanism="frank-wolfe"):
            raise RuntimeError("solver crashed")
    capsys.readouterr()

    assert _run(["show", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:3] == ["dataset", "ε", "budget"]
    assert lines[1].split() == ["adult", "1", "1e-06", "0.25", "1e-07", "0.75", "9e-07", "1", "0"]
    assert lines[2].split() == ["census", "0.5", "unlimited", "0.125", "0", "0.375", "unlimited", "1", "0"]
    assert _run(["show", str(path), "--dataset", "census"]) == 0
    assert [line.split()[0] for line in capsys.readouterr().out.splitlines()] == ["dataset", "census"]

    assert _run(["history", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["id", "time", "(UTC)", "dataset", "model", "mechanism", "solver", "ε", "δ",
                                "status", "label", "command"]
    first, second = lines[1].split(), lines[2].split()
    assert first[0] == "1" and first[1].endswith("Z") and first[2:4] == ["adult", "-"]  # no model recorded
    assert lines[1].endswith("released  logistic n=100  -") and "objective perturbation  -" in lines[1]
    assert second[0] == "2" and second[2] == "census" and "withheld" in second and second[-2:] == ["lasso", "-"]
    assert _run(["history", str(path), "--dataset", "adult"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 2


def test_missing_files_datasets_and_non_ledgers_raise_dpopt_errors(path: Path, tmp_path: Path) -> None:
    for action in ("show", "history"):
        with pytest.raises(LedgerError, match=r"no ledger file .*budget\.sqlite.*dpopt ledger init"):
            _run([action, str(path)])
    assert not path.exists()
    SQLiteLedger(path, dataset="adult", epsilon_budget=1.0, create=True)
    with pytest.raises(LedgerError, match=r"no dataset 'census' \(it has: 'adult'\)"):
        _run(["show", str(path), "--dataset", "census"])
    text = tmp_path / "notes.txt"
    text.write_text("not a database\n" * 100)
    for argv in (["history", str(text)],
                 ["init", str(text), "--dataset", "d", "--epsilon", "1", "--delta", "0"]):
        with pytest.raises(LedgerError, match="is not an SQLite database") as err:
            _run(argv)
        assert isinstance(err.value, DpoptError) and isinstance(err.value, ValueError)  # main.py: exit 2


def test_empty_ledger_file(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    SQLiteLedger(path, dataset="adult", epsilon_budget=1.0, create=True).close()
    assert _run(["history", str(path)]) == 0
    assert capsys.readouterr().out.strip() == "no charges"


def test_init_refuses_a_name_that_differs_only_in_case(path: Path) -> None:
    assert _run(["init", str(path), "--dataset", "adult", "--epsilon", "1", "--delta", "0"]) == 0
    with pytest.raises(LedgerError, match="already has dataset 'adult'"):
        _run(["init", str(path), "--dataset", "Adult", "--epsilon", "1", "--delta", "0"])
    assert SQLiteLedger.datasets(path) == ("adult",)


# ------------------------------------------------------------------ charge attribution in dpopt solve

_BUSY_MODEL = """
import dpopt as dp
from dpopt.datasets import make_classification
from dpopt.errors import ExecutorError, SolverError
from dpopt.mechanisms.base import Plan
from dpopt.privacy.sqlite_ledger import SQLiteLedger

PARAMS = {"epsilon": 0.25, "delta": 1e-6, "other": "", "charge": True}


class Busy(dp.Mechanism):
    '''While it runs, another ledger object on the same file (another process, say) charges
    twice under this mechanism's name; then it fails before its own charge, or after it.'''

    name = "Busy"

    def plan(self, problem, options=None):  # before the run's charge
        other = SQLiteLedger.open(self.other, dataset="demo")
        for _ in range(2):
            other.charge(0.125, 0.0, mechanism=self.name, label="someone else")
        if not self.charge:
            raise ExecutorError("the Dask scheduler cannot be reached")  # before the run's charge
        return Plan(problem=problem)

    def execute(self, plan, rng):  # after the run's charge
        raise SolverError("the solver crashed without a result; try another solver")


def build(params):
    data, _ = make_classification(50, 2, seed=0)
    theta = dp.Variable(2)
    mech = Busy(params["epsilon"], params["delta"])
    mech.other, mech.charge = params["other"], params["charge"]
    return dp.Problem(dp.LogisticLoss(data, theta), regularizer=dp.L2Squared(theta, 0.1)), mech
"""


def _solve_busy(path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                charge: bool) -> tuple[int, str, Path]:
    from dpopt.cli.main import main

    model = tmp_path / "busy.py"
    model.write_text(_BUSY_MODEL)
    out_json = tmp_path / "out.json"
    SQLiteLedger(path, dataset="demo", epsilon_budget=5.0, delta_budget=1e-3, create=True).close()
    code = main(["solve", str(model), "--set", f"other={str(path)!r}", "--set", f"charge={charge}",
                 "--json", str(out_json), "--ledger", str(path), "--dataset", "demo"])
    return code, capsys.readouterr().err, out_json


def test_a_run_refused_before_its_charge_is_not_blamed_for_anothers(path: Path, tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    # matching charges by mechanism name would count the other object's two "Busy" charges
    code, err, out_json = _solve_busy(path, tmp_path, capsys, charge=False)
    assert code == 2 and "scheduler cannot be reached" in err
    assert "was charged" not in err and not out_json.exists()  # no after-the-charge record
    charges = SQLiteLedger.open(path, dataset="demo").charges
    assert [(c.mechanism, c.label, c.status) for c in charges] == [("Busy", "someone else", "released")] * 2


def test_a_failure_after_the_charge_names_the_runs_own_row(path: Path, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    code, err, out_json = _solve_busy(path, tmp_path, capsys, charge=True)
    charges = SQLiteLedger.open(path, dataset="demo").charges
    (own,) = [c for c in charges if c.label != "someone else"]
    assert [c.mechanism for c in charges] == ["Busy"] * 3 and own.status == "withheld"
    assert code == 1 and err.count("\n") == 1
    assert f"was charged and nothing was released; ledger charge #{own.id};" in err
    assert all(f"#{c.id}" not in err for c in charges if c is not own)
    record = json.loads(out_json.read_text())
    assert record["status"] == "failed" and record["charge_ids"] == [own.id]
