"""The SQLite ledger: Ledger's behaviour, persistence, file checks, pickling, a mechanism
charging it, concurrent processes and processes killed mid-charge (nothing lost, no overspend)."""

import copy as copy_module
import gc
import math
import os
import pickle
import random
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import dpopt as dp
from dpopt import bench
from dpopt.bench import ledger_concurrency
from dpopt.errors import BudgetExceededError, LedgerError, LedgerProcessError, PrivacyParameterError
from dpopt.privacy import Charge, Ledger, SQLiteLedger, StoredCharge


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "ledger.sqlite"


# ---------------------------------------------------------------------------------------
# the in-memory Ledger pickles
# ---------------------------------------------------------------------------------------


def test_ledger_copies_in_its_process_are_the_ledger_itself() -> None:
    # a copy with a budget of its own would be a second budget for the same data
    ledger = Ledger(epsilon_budget=1.0, delta_budget=1e-6)
    first = ledger.charge(0.4, 1e-7, label="a", mechanism="m")
    for copy in (pickle.loads(pickle.dumps(ledger)), copy_module.deepcopy(ledger), copy_module.copy(ledger)):
        assert copy is ledger
    pickle.loads(pickle.dumps(ledger)).charge(0.6, 0.0)  # charges the one budget
    with pytest.raises(BudgetExceededError):
        ledger.charge(0.1, 0.0)
    assert ledger.spent == (1.0, 1e-7) and ledger.charges[0] is first


def test_an_orphan_ledger_copy_keeps_its_record_but_refuses_charges() -> None:
    ledger = Ledger(epsilon_budget=1.0)
    first = ledger.charge(0.4, 0.0, label="a", mechanism="m")
    blob = pickle.dumps(ledger)
    ledger.charge(0.6, 0.0)  # after the snapshot: a restored copy must not get it back
    del ledger
    gc.collect()
    copy = pickle.loads(blob)
    assert copy.charges == (first,) and copy.spent == (0.4, 0.0)  # readable
    for attempt in (lambda: copy.charge(0.1, 0.0), lambda: copy.require(0.1, 0.0),
                    lambda: copy.can_afford(0.1, 0.0), lambda: copy.spend(0.1, 0.0).__enter__()):
        with pytest.raises(LedgerProcessError, match="copy cannot be charged.*SQLiteLedger") as err:
            attempt()
        assert "\n" not in str(err.value) and isinstance(err.value, LedgerError)
    assert copy.charges == (first,)


# ---------------------------------------------------------------------------------------
# the same behaviour as Ledger
# ---------------------------------------------------------------------------------------


def test_is_a_ledger_with_the_stored_budget(path: Path) -> None:
    ledger = SQLiteLedger(path, dataset="adult", epsilon_budget=1.0, delta_budget=1e-5, create=True)
    assert isinstance(ledger, Ledger)
    assert (ledger.epsilon_budget, ledger.delta_budget) == (1.0, 1e-5)
    assert ledger.spent == (0.0, 0.0) and ledger.remaining == (1.0, 1e-5) and ledger.charges == ()
    assert (ledger.path, ledger.dataset) == (str(path), "adult")


def test_refusal_records_nothing(path: Path) -> None:
    ledger = SQLiteLedger(path, dataset="d", epsilon_budget=1.0, delta_budget=1e-5, create=True)
    ledger.charge(0.8, 5e-6)
    with pytest.raises(BudgetExceededError, match=r"dataset 'd' .*exceed the privacy budget"):
        ledger.charge(0.3, 1e-6)
    with pytest.raises(BudgetExceededError):
        ledger.charge(0.1, 6e-6)
    with pytest.raises(PrivacyParameterError):
        ledger.charge(-1.0, 0.0)
    with pytest.raises(BudgetExceededError):
        with ledger.spend(0.5, 0.0):
            pytest.fail("the block must not run when the charge is refused")
    assert len(ledger.charges) == 1 and ledger.spent == (0.8, 5e-6)
    assert ledger.remaining == (pytest.approx(0.2), pytest.approx(5e-6))


def test_require_and_can_afford_charge_nothing(path: Path) -> None:
    ledger = SQLiteLedger(path, dataset="d", epsilon_budget=1.0, delta_budget=0.0, create=True)
    assert ledger.can_afford(1.0, 0.0) and not ledger.can_afford(0.5, 1e-9)
    ledger.require(1.0, 0.0)
    with pytest.raises(BudgetExceededError, match="a request of"):
        ledger.require(1.5, 0.0)
    assert ledger.charges == ()


def test_exact_budget_in_pieces(path: Path) -> None:
    ledger = SQLiteLedger(path, dataset="d", epsilon_budget=1.0, delta_budget=1e-6, create=True)
    for _ in range(10):
        ledger.charge(0.1, 1e-7)
    assert ledger.spent[0] == pytest.approx(1.0)
    assert not ledger.can_afford(1e-9, 0.0)
    with pytest.raises(BudgetExceededError):
        ledger.charge(1e-9, 0.0)
    assert len(ledger.charges) == 10


def test_charges_record_their_fields_and_parameters(path: Path) -> None:
    ledger = SQLiteLedger(path, dataset="d", epsilon_budget=10.0, create=True)
    c = ledger.charge(0.5, 1e-7, label="logistic n=200", mechanism="objective perturbation",
                      parameters={"noise": "gaussian", "sigma": np.float64(2.5), "shape": np.arange(2)})
    stored = ledger.charges[0]
    assert isinstance(c, StoredCharge) and isinstance(c, Charge) and stored == c
    assert (stored.epsilon, stored.delta, stored.label, stored.mechanism) == (0.5, 1e-7, "logistic n=200",
                                                                              "objective perturbation")
    assert stored.status == "released" and stored.released and stored.dataset == "d"
    assert stored.parameters == {"noise": "gaussian", "sigma": 2.5, "shape": [0, 1]}
    assert abs(stored.time - time.time()) < 60
    row = ledger.history()[0]
    assert row["id"] == c.id and row["status"] == "released" and row["time_iso"].endswith("Z")
    assert ledger.charge(0.1, 0.0, released=False).status == "withheld"
    with pytest.raises(PrivacyParameterError, match="parameters"):
        ledger.charge(0.1, 0.0, parameters=["not", "a", "dict"])  # type: ignore[arg-type]
    assert len(ledger.charges) == 2


def test_mark_unreleased_keeps_budget_spent(path: Path) -> None:
    ledger = SQLiteLedger(path, dataset="d", epsilon_budget=1.0, create=True)
    first = ledger.charge(0.6, 0.0, label="attempt", mechanism="opdisc")
    updated = ledger.mark_unreleased(first)
    assert updated.released is False and updated.status == "withheld" and updated.id == first.id
    assert ledger.charges == (updated,) and ledger.spent == (0.6, 0.0)
    assert ledger.mark_unreleased(updated) == updated  # idempotent
    with pytest.raises(PrivacyParameterError, match="not recorded"):
        ledger.mark_unreleased(Charge(0.6, 0.0, "attempt", "opdisc", True, first.time))
    other = SQLiteLedger(path, dataset="other", epsilon_budget=1.0, create=True).charge(0.1, 0.0)
    with pytest.raises(PrivacyParameterError, match="not recorded"):
        ledger.mark_unreleased(other)


def test_spend_statuses(path: Path) -> None:
    ledger = SQLiteLedger(path, dataset="d", epsilon_budget=1.0, create=True)
    with ledger.spend(0.1, 0.0, label="ok", mechanism="m") as handle:
        inside = ledger.charges[0]  # committed before the block runs
        assert inside.status == "pending" and inside.released is False and ledger.spent == (0.1, 0.0)
    assert isinstance(handle.charge, StoredCharge)
    assert handle.charge.status == "released" and handle.charge.released
    with pytest.raises(RuntimeError, match="boom"):
        with ledger.spend(0.2, 0.0, label="raises"):
            raise RuntimeError("boom")
    with ledger.spend(0.3, 0.0, label="withheld") as handle:
        handle.withhold()
    assert isinstance(handle.charge, StoredCharge) and handle.charge.status == "withheld"
    assert [c.status for c in ledger.charges] == ["released", "withheld", "withheld"]
    assert ledger.spent == (pytest.approx(0.6), 0.0)


# ---------------------------------------------------------------------------------------
# persistence, budgets and datasets
# ---------------------------------------------------------------------------------------


def test_objects_on_one_file_share_charges_and_reopen(path: Path) -> None:
    a = SQLiteLedger(path, dataset="adult", epsilon_budget=1.0, delta_budget=1e-6, create=True)
    b = SQLiteLedger(path, dataset="adult")  # None: the stored budget
    assert (b.epsilon_budget, b.delta_budget) == (1.0, 1e-6)
    a.charge(0.7, 0.0)
    with pytest.raises(BudgetExceededError):
        b.charge(0.4, 0.0)
    b.charge(0.3, 0.0)
    assert a.spent == b.spent == (1.0, 0.0)
    a.close()
    b.close()
    reopened = SQLiteLedger.open(path, dataset="adult")
    assert [c.epsilon for c in reopened.charges] == [0.7, 0.3]
    assert reopened.remaining == (0.0, 1e-6)
    assert "2 charge(s)" in reopened.summary() and "adult" in repr(reopened)


def test_datasets_are_independent(path: Path) -> None:
    a = SQLiteLedger(path, dataset="a", epsilon_budget=1.0, create=True)
    b = SQLiteLedger(path, dataset="b", epsilon_budget=0.5, delta_budget=1e-6, create=True)
    a.charge(1.0, 0.0)
    b.charge(0.5, 1e-6)
    assert SQLiteLedger.datasets(path) == ("a", "b")
    assert a.spent == (1.0, 0.0) and b.spent == (0.5, 1e-6)


def test_budget_mismatch_is_refused(path: Path) -> None:
    SQLiteLedger(path, dataset="adult", epsilon_budget=1.0, delta_budget=1e-6, create=True)
    with pytest.raises(PrivacyParameterError, match=r"'adult'.*budget \(ε=1, δ=1e-06\).*epsilon_budget=2"):
        SQLiteLedger(path, dataset="adult", epsilon_budget=2.0)
    with pytest.raises(PrivacyParameterError, match="delta_budget"):
        SQLiteLedger(path, dataset="adult", epsilon_budget=1.0, delta_budget=1e-5, create=True)
    SQLiteLedger(path, dataset="adult", epsilon_budget=1.0, delta_budget=1e-6)  # equal budgets are fine


@pytest.mark.parametrize("kwargs", [{"epsilon_budget": 0.0}, {"epsilon_budget": math.inf},
                                    {"delta_budget": 1.0}, {"delta_budget": -1e-9},
                                    {"dataset": ""}, {"dataset": None}, {"timeout": 0}])
def test_bad_settings_are_refused_before_the_file_is_touched(path: Path, kwargs: dict) -> None:
    with pytest.raises(PrivacyParameterError):
        SQLiteLedger(path, **{"dataset": "d", **kwargs})
    assert not path.exists()


# ---------------------------------------------------------------------------------------
# refusals: open(), files that are not ledgers, schema versions
# ---------------------------------------------------------------------------------------


def test_open_refuses_a_missing_file_or_dataset(path: Path) -> None:
    with pytest.raises(LedgerError, match=r"no ledger file .*ledger\.sqlite.*dpopt ledger init"):
        SQLiteLedger.open(path, dataset="adult")
    assert not path.exists()  # open never creates
    SQLiteLedger(path, dataset="other", epsilon_budget=1.0, create=True)
    with pytest.raises(LedgerError, match=r"has no dataset 'adult' \(it has: 'other'\).*dpopt ledger init") as err:
        SQLiteLedger.open(path, dataset="adult")
    assert str(path) in str(err.value) and "\n" not in str(err.value)
    assert SQLiteLedger.datasets(path) == ("other",)  # and open did not create it


def test_an_unknown_dataset_is_never_created_by_accident(path: Path) -> None:
    # the audit's case: a file holding only 'adult' (ε = 1), opened as 'Adult'
    adult = SQLiteLedger(path, dataset="adult", epsilon_budget=1.0, create=True)
    for kwargs in ({}, {"epsilon_budget": 1.0}, {"epsilon_budget": 1.0, "delta_budget": 1e-6}):
        with pytest.raises(LedgerError, match=r"no dataset 'Adult' \(it has: 'adult'\); did you mean "
                                              r"'adult'\?.*create=True") as err:
            SQLiteLedger(path, dataset="Adult", **kwargs)
        assert "\n" not in str(err.value)
    with pytest.raises(LedgerError, match="did you mean 'adult'"):
        SQLiteLedger(path, dataset="adlt")
    with pytest.raises(LedgerError, match=r"it has: 'adult'\) To create") as err:  # no close name: no guess
        SQLiteLedger(path, dataset="census")
    assert "did you mean" not in str(err.value)
    # creating on purpose: a twin differing only in case is refused, and so is a missing budget
    with pytest.raises(LedgerError, match="already has dataset 'adult'.*use 'adult'"):
        SQLiteLedger(path, dataset=" ADULT", epsilon_budget=1.0, create=True)
    with pytest.raises(PrivacyParameterError, match="creating dataset 'census' .*needs an explicit budget"):
        SQLiteLedger(path, dataset="census", create=True)
    assert SQLiteLedger.datasets(path) == ("adult",)  # nothing was created by any of these
    adult.charge(1.0, 0.0)
    assert SQLiteLedger(path, dataset="adult", create=True).remaining == (0.0, None)  # attaches
    census = SQLiteLedger(path, dataset="census", epsilon_budget=0.5, create=True)
    assert SQLiteLedger.datasets(path) == ("adult", "census") and census.remaining == (0.5, None)


def test_a_missing_file_is_created_only_on_request(path: Path) -> None:
    with pytest.raises(LedgerError, match="no ledger file .*create=True"):
        SQLiteLedger(path, dataset="adult", epsilon_budget=1.0)
    assert not path.exists()
    with pytest.raises(PrivacyParameterError, match="create must be True or False"):
        SQLiteLedger(path, dataset="adult", epsilon_budget=1.0, create="yes")  # type: ignore[arg-type]
    SQLiteLedger(path, dataset="adult", epsilon_budget=1.0, create=True).close()
    assert SQLiteLedger.datasets(path) == ("adult",)


def test_own_charges_are_this_objects_rows_only(path: Path) -> None:
    mine = SQLiteLedger(path, dataset="d", epsilon_budget=1.0, create=True)
    other = SQLiteLedger.open(path, dataset="d")
    a = mine.charge(0.1, 0.0, mechanism="m")
    other.charge(0.1, 0.0, mechanism="m")
    with mine.spend(0.1, 0.0, mechanism="m") as handle:
        other.charge(0.1, 0.0, mechanism="m")
    assert [c.id for c in mine.own_charges] == [a.id, handle.charge.id]
    assert len(other.own_charges) == 2 and len(mine.charges) == 4
    assert pickle.loads(pickle.dumps(mine)).own_charges == ()  # a copy made none


def test_a_file_that_is_not_a_database_is_refused(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("epsilon 1.0\n" * 200)
    for attempt in (lambda: SQLiteLedger(text, dataset="d", epsilon_budget=1.0, create=True), lambda: SQLiteLedger.open(text, dataset="d"),
                    lambda: SQLiteLedger.datasets(text)):
        with pytest.raises(LedgerError, match=r"notes\.txt is not an SQLite database") as err:
            attempt()
        assert "\n" not in str(err.value)
    assert text.read_text() == "epsilon 1.0\n" * 200
    with pytest.raises(LedgerError, match="directory"):
        SQLiteLedger(tmp_path, dataset="d", epsilon_budget=1.0, create=True)


def test_other_sqlite_files_and_unknown_schema_versions_are_refused(tmp_path: Path) -> None:
    foreign = tmp_path / "app.db"
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE users (name TEXT)")
    conn.close()
    with pytest.raises(LedgerError, match="not a dpopt ledger"):
        SQLiteLedger(foreign, dataset="d", epsilon_budget=1.0, create=True)
    future = tmp_path / "future.sqlite"
    SQLiteLedger(future, dataset="d", epsilon_budget=1.0, create=True).close()
    with sqlite3.connect(future) as conn:
        conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    conn.close()
    with pytest.raises(LedgerError, match="schema version '99'; this dpopt reads version 1"):
        SQLiteLedger.open(future, dataset="d")
    empty = tmp_path / "empty.sqlite"
    empty.touch()
    with pytest.raises(LedgerError, match="holds no ledger"):
        SQLiteLedger.open(empty, dataset="d")
    SQLiteLedger(empty, dataset="d", epsilon_budget=1.0, create=True)  # the constructor creates the schema in it
    assert SQLiteLedger.open(empty, dataset="d").epsilon_budget == 1.0


# ---------------------------------------------------------------------------------------
# pickling and a real mechanism
# ---------------------------------------------------------------------------------------


def test_pickles_as_path_and_dataset_and_reconnects(path: Path) -> None:
    ledger = SQLiteLedger(path, dataset="d", epsilon_budget=1.0, create=True)
    first = ledger.charge(0.25, 0.0)
    blob = pickle.dumps(ledger)
    assert len(blob) < 1000  # no connection, no charges: path, dataset and budget
    copy = pickle.loads(blob)
    assert copy.charges == (first,)
    copy.charge(0.5, 0.0)
    assert ledger.spent == (0.75, 0.0)
    assert ledger.mark_unreleased(pickle.loads(pickle.dumps(copy.charges[1]))).status == "withheld"


def test_a_pickled_ledger_reopens_the_same_file_by_its_absolute_path(path: Path, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    ledger = SQLiteLedger(path.name, dataset="d", epsilon_budget=1.0, create=True)  # a relative path
    blob = pickle.dumps(ledger)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # a worker with another working directory
    pickle.loads(blob).charge(0.5, 0.0)
    assert ledger.spent == (0.5, 0.0) and not (elsewhere / path.name).exists()


def test_a_pickled_ledger_refuses_another_file_at_its_path(path: Path, tmp_path: Path) -> None:
    # a worker that sees another file under the same path (another machine, a replaced file)
    ledger = SQLiteLedger(path, dataset="d", epsilon_budget=1.0, create=True)
    blob = pickle.dumps(ledger)
    ledger.close()
    os.replace(path, tmp_path / "moved.sqlite")
    SQLiteLedger(path, dataset="d", epsilon_budget=1.0, create=True).close()  # same name and budget
    with pytest.raises(LedgerError, match="is not the ledger file this ledger was opened on"):
        pickle.loads(blob).charge(0.5, 0.0)
    assert SQLiteLedger.open(path, dataset="d").charges == ()
    os.remove(path)
    with pytest.raises(LedgerError, match="no ledger file"):  # never created by a copy
        pickle.loads(blob).charge(0.5, 0.0)
    assert not path.exists()


def test_a_mechanism_run_charges_the_file(path: Path) -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    y = np.where(X @ np.ones(3) > 0, 1.0, -1.0)
    data = dp.Dataset(X, y, x_bound=1.0)
    th = dp.Variable(3)
    problem = dp.Problem(dp.LogisticLoss(data, th), regularizer=dp.L2Squared(th, 0.1))
    ledger = dp.SQLiteLedger(path, dataset="synthetic", epsilon_budget=1.0, delta_budget=1e-5, create=True)
    release = dp.OutputPerturbation(0.6, 1e-6, ledger=ledger).run(problem, solver="scipy", seed=1)
    assert release.private
    (charge,) = SQLiteLedger.open(path, dataset="synthetic").charges
    assert (charge.epsilon, charge.delta, charge.status) == (0.6, 1e-6, "released")
    assert charge.label == release.problem and charge.mechanism
    # the run's public parameters are recorded with its charge (numbers as JSON numbers)
    assert charge.parameters is not None and charge.parameters["noise_scale"] == pytest.approx(
        release.parameters["noise_scale"])
    with pytest.raises(BudgetExceededError):  # refused before the data is touched: nothing recorded
        dp.OutputPerturbation(0.6, 1e-6, ledger=ledger).run(problem, solver="scipy", seed=2)
    assert len(ledger.charges) == 1


# ---------------------------------------------------------------------------------------
# concurrent processes
# ---------------------------------------------------------------------------------------


def test_concurrent_processes_never_overspend_or_lose_charges(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # 4 spawned processes x 25 charges of ε = 0.01 against ε = 0.3, through the shipped benchmark
    main = bench.get("ledger-concurrency").main
    assert main(["--processes", "4", "--charges", "25", "--budget", "0.3", "--file", str(path)]) == 0
    report = dict(re.split(r"\s{2,}", line, maxsplit=1) for line in capsys.readouterr().out.splitlines())
    assert report["charges attempted"] == "100"
    assert report["committed"] == "30 (30 rows in the file)"  # each success is a row
    assert report["refused"] == "70" and report["lost"] == "0 (ok)"
    charges = SQLiteLedger.open(path, dataset=ledger_concurrency.DATASET).charges
    assert len(charges) == 30 and {c.status for c in charges} == {"released"}
    assert math.fsum(c.epsilon for c in charges) <= 0.3 * (1 + 1e-12)
    assert main(["--file", str(path)]) == 2  # never reuses a file


# ---------------------------------------------------------------------------------------
# processes killed with SIGKILL
# ---------------------------------------------------------------------------------------

_CHILD = """
import sys, time
from dpopt.privacy.sqlite_ledger import SQLiteLedger
ledger = SQLiteLedger.open(sys.argv[1], dataset="kill")
print("ready", flush=True)
if sys.argv[2] == "block":
    with ledger.spend(0.01, 0.0, label="killed inside the block") as handle:
        print(handle.charge.id, flush=True)
        time.sleep(600)
while True:
    with ledger.spend(0.001, 0.0, label="loop") as handle:
        print(handle.charge.id, flush=True)
"""

needs_sigkill = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="this platform has no SIGKILL")


def _killed_child(path: Path, mode: str, delay: float) -> set[int]:
    """Start a charging child, SIGKILL it ``delay`` s after its first charge; the ids it reported."""
    child = subprocess.Popen([sys.executable, "-c", _CHILD, str(path), mode], stdout=subprocess.PIPE,
                             text=True, cwd=Path(__file__).parents[2])
    assert child.stdout is not None
    try:
        assert child.stdout.readline().strip() == "ready"
        reported = {int(child.stdout.readline())}
        time.sleep(delay)
    finally:
        child.send_signal(signal.SIGKILL)
        rest, _ = child.communicate(timeout=60)
    assert child.returncode == -signal.SIGKILL
    return reported | {int(line) for line in rest.split()}


def _check_file_after_kills(path: Path, reported: set[int]) -> SQLiteLedger:
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    conn.close()
    ledger = SQLiteLedger.open(path, dataset="kill")
    rows = {c.id: c for c in ledger.charges}
    assert reported <= set(rows)  # every charge a child saw committed is in the file
    assert ledger.spent[0] == pytest.approx(math.fsum(c.epsilon for c in rows.values()))  # pending included
    ledger.charge(0.001, 0.0, label="after the kill")  # no stale lock is left behind
    return ledger


@needs_sigkill
def test_a_process_killed_inside_spend_leaves_a_pending_charge(path: Path) -> None:
    SQLiteLedger(path, dataset="kill", epsilon_budget=100.0, create=True)
    (killed,) = _killed_child(path, "block", 0.05)
    ledger = _check_file_after_kills(path, {killed})
    row = next(c for c in ledger.charges if c.id == killed)
    assert row.status == "pending" and not row.released and row.label == "killed inside the block"
    assert ledger.spent[0] == pytest.approx(0.011)
    assert ledger.mark_unreleased(row).status == "withheld"  # an operator can close it; still spent
    assert ledger.spent[0] == pytest.approx(0.011)
    # killed after a random delay in a loop of charges, possibly inside a transaction
    reported = _killed_child(path, "loop", random.uniform(0.05, 0.4))
    ledger = _check_file_after_kills(path, reported)
    loop_rows = {c.id for c in ledger.charges if c.label == "loop"}
    assert len(loop_rows - reported) <= 1  # at most the one committed just before the kill


@needs_sigkill
@pytest.mark.slow
def test_many_random_kills_lose_nothing(path: Path) -> None:
    SQLiteLedger(path, dataset="kill", epsilon_budget=1000.0, create=True)
    reported: set[int] = set()
    for _ in range(12):
        reported |= _killed_child(path, "loop", random.uniform(0.0, 0.5))
        _check_file_after_kills(path, reported)
