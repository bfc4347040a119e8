"""What a charge records besides its cost (model, solver, command: ``charge_context``), the SQLite
ledger's migration of files written before those columns, and the default ledger's one
spending warning past a public threshold."""

from __future__ import annotations

import sqlite3
import warnings
from pathlib import Path

import pytest

import dpopt as dp
from dpopt.errors import BudgetWarning, LedgerError, PrivacyParameterError, SpendingWarning
from dpopt.privacy import sqlite_store
from dpopt.privacy.ledger import (
    PROVENANCE_FIELDS,
    SPENDING_WARNING_EPSILON,
    DefaultLedger,
    Ledger,
    charge_context,
    charge_provenance,
)
from dpopt.privacy.sqlite_ledger import SQLiteLedger
from dpopt.privacy.strength import LARGE_EPSILON

#: the layout of version-1 files written before the provenance columns (dpopt 0.x, before issue 24)
OLD_SCHEMA = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE datasets (name TEXT PRIMARY KEY, epsilon_budget REAL, delta_budget REAL, "
    "created REAL NOT NULL)",
    "CREATE TABLE charges (id INTEGER PRIMARY KEY AUTOINCREMENT, "
    "dataset TEXT NOT NULL REFERENCES datasets(name), epsilon REAL NOT NULL, delta REAL NOT NULL, "
    "mechanism TEXT NOT NULL, label TEXT NOT NULL, parameters TEXT, time REAL NOT NULL, "
    "status TEXT NOT NULL CHECK (status IN ('pending', 'released', 'withheld')))",
    "CREATE INDEX charges_by_dataset ON charges (dataset, id)",
)


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "ledger.sqlite"


def _old_file(path: Path) -> None:
    """A ledger file as dpopt wrote it before the provenance columns, with one charge."""
    conn = sqlite3.connect(path)
    for statement in OLD_SCHEMA:
        conn.execute(statement)
    conn.execute("INSERT INTO meta VALUES ('schema_version', '1'), ('application', 'dpopt ledger'), "
                 "('ledger_id', 'abc')")
    conn.execute("INSERT INTO datasets VALUES ('adult', 2.0, 1e-6, 0.0)")
    conn.execute("INSERT INTO charges (dataset, epsilon, delta, mechanism, label, parameters, time, status) "
                 "VALUES ('adult', 0.5, 0.0, 'objective perturbation', 'logistic', NULL, 1.0, 'released')")
    conn.commit()
    conn.close()


def _columns(path: Path) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        return [r[1] for r in conn.execute("PRAGMA table_info(charges)")]
    finally:
        conn.close()


# ------------------------------------------------------------------ charge_context


def test_charges_carry_the_context_and_only_inside_it() -> None:
    ledger = Ledger()
    before = ledger.charge(0.1, 0.0, mechanism="m")
    with charge_context(model="models/ridge.py", solver="clarabel", command="dpopt solve models/ridge.py"):
        inside = ledger.charge(0.1, 0.0, label="ridge", mechanism="output perturbation")
        with charge_context(solver="scs"):  # an inner block overrides what it names, keeps the rest
            nested = ledger.charge(0.1, 0.0)
    after = ledger.charge(0.1, 0.0)
    assert (inside.model, inside.solver, inside.command) == ("models/ridge.py", "clarabel",
                                                             "dpopt solve models/ridge.py")
    assert (nested.model, nested.solver) == ("models/ridge.py", "scs")
    for plain in (before, after):
        assert (plain.model, plain.solver, plain.command) == ("", "", "")
    assert charge_provenance() == dict.fromkeys(PROVENANCE_FIELDS, "")
    assert "(model models/ridge.py, solver clarabel)" in ledger.summary()


def test_a_context_value_must_be_a_string() -> None:
    with pytest.raises(PrivacyParameterError, match="model must be a string or None") as err:
        with charge_context(model=3):  # type: ignore[arg-type]
            pass
    assert "\n" not in str(err.value)


def test_a_mechanism_run_records_the_context_and_nothing_else_changes() -> None:
    """The pipeline charges through ``spend``; the context reaches that charge too."""
    data, _ = dp.datasets.make_classification(200, 3, seed=0)
    theta = dp.Variable(3)
    problem = dp.Problem(dp.LogisticLoss(data, theta), regularizer=dp.L2Squared(theta, 0.1))
    ledger = Ledger()
    with charge_context(model="inline", solver="auto", command="pytest"):
        dp.ObjectivePerturbation(0.5, 1e-6, ledger=ledger).run(problem, seed=0)
    (charge,) = ledger.charges
    assert (charge.model, charge.solver, charge.command) == ("inline", "auto", "pytest")
    assert charge.mechanism and charge.released


# ------------------------------------------------------------------ the SQLite file


def test_a_file_records_model_solver_and_command(path: Path) -> None:
    ledger = SQLiteLedger(path, dataset="adult", epsilon_budget=1.0, create=True)
    with charge_context(model="models/x.py", solver="highs", command="dpopt solve models/x.py"):
        with ledger.spend(0.25, 0.0, label="logistic", mechanism="opdisc") as handle:
            pass
        made = ledger.charge(0.25, 0.0, mechanism="rspm")
    bare = ledger.charge(0.25, 0.0, mechanism="rspm")
    stored = SQLiteLedger.open(path, dataset="adult").charges  # another object reads the file
    assert [(c.model, c.solver, c.command) for c in stored] == [
        ("models/x.py", "highs", "dpopt solve models/x.py")] * 2 + [("", "", "")]
    assert stored[0] == handle.charge and stored[0].status == "released" and stored[1] == made
    assert stored[2] == bare
    row = ledger.history()[0]
    assert (row["model"], row["mechanism"], row["solver"], row["command"]) == (
        "models/x.py", "opdisc", "highs", "dpopt solve models/x.py")
    assert "(model models/x.py, solver highs)" in ledger.summary()


def test_an_old_file_is_migrated_and_keeps_its_charges(path: Path) -> None:
    _old_file(path)
    assert "model" not in _columns(path)
    assert SQLiteLedger.datasets(path) == ("adult",)  # opening it adds the columns
    assert _columns(path)[-3:] == list(PROVENANCE_FIELDS)
    ledger = SQLiteLedger.open(path, dataset="adult")
    (old,) = ledger.charges
    assert (old.epsilon, old.mechanism, old.label, old.status) == (0.5, "objective perturbation", "logistic",
                                                                   "released")
    assert (old.model, old.solver, old.command) == ("", "", "")  # not recorded then: empty, not invented
    with charge_context(model="m.py", solver="auto", command="dpopt solve m.py"):
        ledger.charge(0.5, 0.0, mechanism="x")
    assert ledger.spent == (1.0, 0.0) and ledger.charges[1].model == "m.py"
    SQLiteLedger.open(path, dataset="adult").close()  # opening a migrated file again changes nothing
    assert _columns(path).count("model") == 1


def test_an_old_file_that_cannot_be_written_is_still_read(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A read-only file (no ALTER TABLE possible) is read with the new fields empty; charging it says why not."""
    _old_file(path)

    def read_only(conn: sqlite3.Connection) -> None:
        raise sqlite3.OperationalError("attempt to write a readonly database")

    monkeypatch.setattr(sqlite_store, "_add_columns", read_only)
    ledger = SQLiteLedger.open(path, dataset="adult")
    (old,) = ledger.charges
    assert old.label == "logistic" and (old.model, old.solver, old.command) == ("", "", "")
    assert "model" not in _columns(path)
    with pytest.raises(LedgerError, match="cannot be written \\(read-only\\)") as err:
        ledger.charge(0.1, 0.0)
    assert "\n" not in str(err.value) and len(ledger.charges) == 1


def test_an_older_dpopt_still_writes_a_migrated_file(path: Path) -> None:
    """The columns are nullable: an insert that names only the old columns (older dpopt) still works."""
    SQLiteLedger(path, dataset="adult", epsilon_budget=1.0, create=True).close()
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO charges (dataset, epsilon, delta, mechanism, label, parameters, time, status) "
                 "VALUES ('adult', 0.5, 0.0, 'm', 'l', NULL, 1.0, 'released')")
    conn.commit()
    conn.close()
    (charge,) = SQLiteLedger.open(path, dataset="adult").charges
    assert (charge.epsilon, charge.model, charge.command) == (0.5, "", "")


# ------------------------------------------------------------------ the default ledger's spending warning


def test_the_threshold_is_the_public_line_of_a_meaningless_guarantee() -> None:
    assert SPENDING_WARNING_EPSILON == LARGE_EPSILON == 10.0
    assert issubclass(SpendingWarning, BudgetWarning) and issubclass(SpendingWarning, UserWarning)


def test_the_default_ledger_warns_once_past_the_threshold_and_not_before() -> None:
    ledger = DefaultLedger()  # a fresh one: the process's own has its own history
    steps = int(SPENDING_WARNING_EPSILON)  # ε = 1 each: the total reaches the threshold, then passes it
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(steps):
            ledger.charge(1.0, 1e-7)
        assert not caught  # reaching the threshold is not passing it
        ledger.charge(0.5, 0.0)
        ledger.charge(5.0, 0.0)
        ledger.charge(100.0, 0.0)
    (warning,) = caught
    assert warning.category is SpendingWarning
    message = str(warning.message)
    assert "ε = 10.5" in message and "dp.Ledger(epsilon_budget=" in message and "\n" not in message
    assert warning.filename == __file__  # points at the caller, not at dpopt
    assert ledger.spent[0] == pytest.approx(115.5) and len(ledger.charges) == steps + 3


def test_the_warning_reads_only_the_amounts_charged() -> None:
    """Same charges, different labels, mechanisms and contexts: the same warning at the same charge."""
    messages = []
    for k in range(2):
        ledger = DefaultLedger()
        with warnings.catch_warnings(record=True) as caught, charge_context(model=f"m{k}"):
            warnings.simplefilter("always")
            for j in range(4):
                ledger.charge(3.0, 0.0, label=f"run {j} of {k}", mechanism=f"mech{k}")
                if caught:
                    break
        messages.append((j, [str(w.message) for w in caught]))
    assert messages[0] == messages[1] and messages[0][0] == 3


def test_a_warning_made_an_error_refuses_the_charge_and_warns_again() -> None:
    ledger = DefaultLedger()
    ledger.charge(9.0, 0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SpendingWarning)
        with pytest.raises(SpendingWarning):
            ledger.charge(2.0, 0.0)
        assert len(ledger.charges) == 1  # nothing recorded
        with pytest.raises(SpendingWarning):
            with ledger.spend(2.0, 0.0):
                pytest.fail("the block must not run")
    assert len(ledger.charges) == 1


def test_a_ledger_with_a_budget_never_warns() -> None:
    ledger = Ledger(epsilon_budget=100.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(5):
            ledger.charge(5.0, 0.0)
    assert ledger.spent == (25.0, 0.0)
