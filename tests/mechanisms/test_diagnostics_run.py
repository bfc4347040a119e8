"""Private diagnostics of ``Mechanism.run`` on a user's own Dataset.

What users rely on: a run over an in-memory Dataset is one charge of the mechanism's (ε, δ), of
which 2 % (stated in the release and the ledger row) buys noisy counts of what the declarations
did to the table — the dataset's own counts, marked where its rows were mapped — with the
model on exactly the rest, or on all of ε with ``diagnostics=False``; the noisy counts centre
on the true ones with the declared discrete-Laplace spread; one warning names the fix; a
refused budget comes before any of it; seeded runs repeat; the counts are as private as the
share claims (neighbours, audit, mutation)."""

from __future__ import annotations

import ast
import inspect
import math
import warnings

import numpy as np
import pandas as pd
import pytest

import dpopt as dp
from dpopt.errors import BudgetExceededError, DiagnosticsWarning, WeakGuaranteeWarning
from dpopt.mechanisms.base import loaded_mechanisms
from dpopt.mechanisms.diagnostics import (
    DIAGNOSTICS_SHARE,
    DiagnosticCounts,
    WithDiagnostics,
    split_budget,
)
from dpopt.modeling.changes import TableChanges
from dpopt.testing import audit
from dpopt.testing.coverage import covers
from dpopt.testing.views import assert_no_private_bytes, assert_same_view

SCHEMA = dp.Schema({"age": dp.Numeric(0, 100, grid=1, missing=dp.Fill(30)), "job": dp.Categorical(["a", "b"])})


def _table(n: int, seed: int = 0, labels=("no", "yes", "No", None)) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    age = rng.integers(0, 150, n).astype(float)
    age[rng.random(n) < 0.1] = np.nan
    y = rng.choice(np.array(labels, dtype=object), n)
    return pd.DataFrame({"age": age, "job": rng.choice(["a", "b", "c"], n), "y": y})


def _problem(data: dp.Dataset) -> dp.Problem:
    theta = dp.Variable(data.n_features)
    return dp.Problem(dp.LogisticLoss(data, theta), constraint=dp.L2Ball(theta, 5.0),
                      regularizer=dp.L2Squared(theta, 0.1))


def _mechanism(epsilon: float = 1.0, ledger=None) -> dp.OutputPerturbation:
    return dp.OutputPerturbation(epsilon, 1e-6, ledger=ledger if ledger is not None else dp.Ledger())


def _exact(t: pd.DataFrame) -> dict[str, int]:
    """The counts, independently, from the raw table."""
    return {"labels matching no declared class": int((~t["y"].isin(["no", "yes"]) & t["y"].notna()).sum()),
            "missing labels": int(t["y"].isna().sum()),
            "age: entries clipped or rounded or missing": int((t["age"].isna() | (t["age"] > 100)).sum()),
            "job: entries of an undeclared category": int((t["job"] == "c").sum())}


# ----------------------------------------------------------------------------- the run's record


def test_a_run_is_one_charge_of_its_epsilon_with_the_share_stated_in_the_release_and_the_row():
    t = _table(400)
    problem = _problem(dp.Dataset.from_frame(t, SCHEMA, "y", classes=["no", "yes"]))
    ledger = dp.Ledger()
    release = _mechanism(ledger=ledger).run(problem, seed=0)
    [charge] = ledger.charges
    assert (charge.epsilon, charge.delta, release.epsilon) == (1.0, 1e-6, 1.0)
    assert "diagnostics (2 % of ε)" in charge.label and charge.mechanism == "OutputPerturbation"
    info = release.parameters["diagnostics"]
    assert info["share"] == pytest.approx(DIAGNOSTICS_SHARE) and info["counts"] == list(_exact(t))
    assert set(release.parameters["noisy_diagnostic_counts"]) == set(_exact(t))
    assert "diagnostics: noisy counts (2 % of ε" in release.summary()
    assert "noisy_diagnostic_counts" in release.to_json()


def test_the_model_gets_exactly_the_rest_and_with_the_opt_out_exactly_all_of_epsilon():
    """The release's calibration is a fresh mechanism's at (1 − s)ε, or at ε without diagnostics;
    the opt-out reads no count."""
    data = dp.Dataset.from_frame(_table(300), SCHEMA, "y", classes=["no", "yes"])
    problem = _problem(data)
    model_eps, _ = split_budget(2.0)
    scale = "output_noise_scale" if "output_noise_scale" in _mechanism(2.0).plan(problem).parameters else "noise_scale"
    on = _mechanism(2.0).run(problem, seed=1)
    assert on.parameters[scale] == _mechanism(model_eps).plan(problem).parameters[scale]
    read = []
    real = TableChanges.counts
    try:
        TableChanges.counts = lambda self: read.append(1) or real(self)  # type: ignore[method-assign]
        ledger = dp.Ledger()
        off = _mechanism(2.0, ledger).run(problem, seed=1, diagnostics=False)
    finally:
        TableChanges.counts = real  # type: ignore[method-assign]
    assert read == [] and "diagnostics" not in off.parameters and "noisy_diagnostic_counts" not in off.parameters
    assert off.parameters == _mechanism(2.0).plan(problem).parameters | {
        k: v for k, v in off.parameters.items() if k not in _mechanism(2.0).plan(problem).parameters}
    assert off.parameters[scale] < on.parameters[scale]
    assert [c.epsilon for c in ledger.charges] == [2.0]


def test_the_noisy_counts_centre_on_the_true_counts_with_the_declared_spread():
    """Over seeds, noisy − exact is the discrete Laplace of the stated scale t: mean 0 and
    mean |noise| = 2q/(1 − q²), q = e^(−1/t) (within 5 standard errors)."""
    t = _table(3000, seed=3)
    exact = _exact(t)
    problem = _problem(dp.Dataset.from_frame(t, SCHEMA, "y", classes=["no", "yes"]))
    residuals, scale = [], None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", WeakGuaranteeWarning)  # ε = 25: counts with ε = 0.5, t = m/0.5
        warnings.simplefilter("ignore", DiagnosticsWarning)
        for seed in range(40):
            release = _mechanism(25.0).run(problem, seed=seed)
            scale = release.parameters["diagnostics"]["noise_scale"]
            noisy = release.parameters["noisy_diagnostic_counts"]
            residuals += [noisy[name] - exact[name] for name in exact]
    r = np.asarray(residuals)
    q = math.exp(-1.0 / scale)
    mean_abs, var = 2 * q / (1 - q * q), 2 * q / (1 - q) ** 2
    assert scale == 8.0  # m = 4 counts at ε = 0.5
    assert abs(r.mean()) < 5 * math.sqrt(var / r.size)
    assert abs(np.abs(r).mean() - mean_abs) < 5 * math.sqrt(var / r.size)


def test_seeded_runs_repeat_and_differ_across_seeds():
    problem = _problem(dp.Dataset.from_frame(_table(300), SCHEMA, "y", classes=["no", "yes"]))
    a, b, c = (_mechanism().run(problem, seed=s) for s in (7, 7, 8))
    assert np.array_equal(a.theta, b.theta) and a.parameters == b.parameters
    assert a.parameters["noisy_diagnostic_counts"] != c.parameters["noisy_diagnostic_counts"]


def test_a_mistyped_class_warns_once_naming_the_fix_and_a_clean_table_does_not():
    wrong = _table(20_000, labels=("no", "yes"))
    with pytest.warns(DiagnosticsWarning, match=r"OutputPerturbation: about (9\d|100) % of labels matched no "
                                                r"declared class.*check `classes=`") as caught:
        data = dp.Dataset.from_frame(wrong, SCHEMA, "y", classes=["No", "Yes"])
        _mechanism().run(_problem(data), seed=0)
    assert len([w for w in caught if w.category is DiagnosticsWarning]) == 1
    clean = wrong.assign(age=wrong["age"].clip(upper=100), job=wrong["job"].replace("c", "a"))
    with warnings.catch_warnings():
        warnings.simplefilter("error", DiagnosticsWarning)
        _mechanism().run(_problem(dp.Dataset.from_frame(clean, SCHEMA, "y", classes=["no", "yes"])), seed=0)


def test_an_exhausted_budget_is_refused_before_anything_is_counted():
    problem = _problem(dp.Dataset.from_frame(_table(300), SCHEMA, "y", classes=["no", "yes"]))
    read = []
    real = TableChanges.counts
    try:
        TableChanges.counts = lambda self: read.append(1) or real(self)  # type: ignore[method-assign]
        ledger = dp.Ledger(epsilon_budget=0.5)
        with pytest.raises(BudgetExceededError):
            _mechanism(1.0, ledger).run(problem, seed=0)
        assert read == [] and ledger.charges == ()
        _mechanism(0.5, ledger).run(problem, seed=0)
        assert read == [1]
    finally:
        TableChanges.counts = real  # type: ignore[method-assign]


def test_no_diagnostics_where_the_share_cannot_be_taken_out_or_the_run_is_nested():
    """A selection calibrates its budget when built (its candidates run inside its charge): no share."""
    data = dp.Dataset.from_frame(_table(200), SCHEMA, "y", classes=["no", "yes"])

    def build(params, budget):
        return dp.OutputPerturbation(budget.epsilon, 0.0)

    selection = dp.PrivateSelection(1.0, 0.0, candidates=[{"a": 1}, {"a": 2}], build=build, ledger=dp.Ledger())
    release = selection.run(_problem(data), seed=0)
    assert "diagnostics" not in release.parameters and "diagnostics" not in repr(release.parameters)


def test_every_mechanism_that_rebudgets_calibrates_in_plan_not_when_built():
    """``run`` copies the mechanism with a smaller ε: sound only if its constructor derives nothing
    from ε (read from each class's ``__init__``); those that do declare ``rebudgets = False``."""
    for name, cls in loaded_mechanisms().items():
        if not cls.rebudgets or "__init__" not in vars(cls):
            continue
        tree = ast.parse(inspect.getsource(cls.__init__).strip())
        reads = [ast.unparse(node) for node in ast.walk(tree)
                 if (isinstance(node, ast.Name) and node.id == "epsilon")
                 or (isinstance(node, ast.Attribute) and ast.unparse(node) == "self.epsilon"
                     and isinstance(node.ctx, ast.Load))
                 or (isinstance(node, ast.Call) and ast.unparse(node.func).startswith("self.")
                     and ast.unparse(node.func) not in ("self._validate",))]
        allowed = {"epsilon"}  # passed to the validation and to Mechanism.__init__, which stores it
        assert set(reads) <= allowed, f"{name}.__init__ derives state from ε ({reads}): set rebudgets = False"


# ----------------------------------------------------------------------------- privacy


def _neighbour_tables():
    """Replace one row by one that three declarations change (age clipped, unseen job, missing label)."""
    t0 = _table(120, labels=("no", "yes"))
    t0.loc[0, ["age", "job", "y"]] = [40.0, "a", "yes"]
    t1 = t0.copy()
    t1.loc[0, ["age", "job", "y"]] = [140.0, "c", None]
    return t0, t1


def _run_on(t: pd.DataFrame, ledger: dp.Ledger) -> dp.Release:
    data = dp.Dataset.from_frame(t, SCHEMA, "y", classes=["no", "yes"])
    return dp.OutputPerturbation(1.0, 1e-6, ledger=ledger).run(_problem(data), seed=5)


@covers(WithDiagnostics, kind="neighbour")
def test_a_run_with_diagnostics_looks_the_same_on_neighbours():
    t0, t1 = _neighbour_tables()
    assert_same_view(_run_on, t0, t1)
    release = _run_on(t1, dp.Ledger())
    data = dp.Dataset.from_frame(t1, SCHEMA, "y", classes=["no", "yes"])
    norms = np.linalg.norm(data.X, axis=1)  # no row norm (what a clip count reads); short decimals appear anyway
    inside = ~np.isclose(norms * 100, np.rint(norms * 100)) & ~np.isclose(norms, data.x_bound)  # √2: declared
    assert_no_private_bytes(release, norms[inside])


AUDIT_EPS = 2.0  # the counts' share: the whole run claims AUDIT_EPS / s
RUNS = 2000


def _rows_pair() -> tuple[dp.Dataset, dp.Dataset]:
    """One row inside x_bound and y_bound, or over both: two counts move by one."""
    rng = np.random.default_rng(0)
    X, y = rng.uniform(-0.3, 0.3, size=(10, 2)), rng.uniform(-0.5, 0.5, 10)
    X2, y2 = X.copy(), y.copy()
    X2[0], y2[0] = [3.0, 0.0], 4.0
    return dp.Dataset(X, y, x_bound=1.0, y_bound=1.0), dp.Dataset(X2, y2, x_bound=1.0, y_bound=1.0)


def _counts_of_runs(data: dp.Dataset, seed: int) -> np.ndarray:
    theta = dp.Variable(2)
    problem = dp.Problem(dp.SquaredLoss(data, theta), constraint=dp.L2Ball(theta, 1.0),
                         regularizer=dp.L2Squared(theta, 1.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", WeakGuaranteeWarning)
        warnings.simplefilter("ignore", DiagnosticsWarning)
        release = dp.OutputPerturbation(AUDIT_EPS / DIAGNOSTICS_SHARE, 1e-6, ledger=dp.Ledger()).run(problem,
                                                                                                 seed=seed)
    return np.array(list(release.parameters["noisy_diagnostic_counts"].values()))


def _on_d1_side(outputs: np.ndarray) -> np.ndarray:
    """How many of the two noisy counts are at least D1's exact value 1 (D0's are 0)."""
    return np.sum(np.asarray(outputs) >= 1, axis=1)


@covers(WithDiagnostics, kind="audit")
def test_the_run_paths_counts_audit_at_their_share_finds_no_violation():
    d0, d1 = _rows_pair()
    res = audit(_counts_of_runs, d0, d1, claimed_epsilon=AUDIT_EPS, n_runs=RUNS, seed=2, statistic=_on_d1_side)
    assert not res.violates, res.summary()
    assert res.epsilon_lower > 0.3 * AUDIT_EPS, res.summary()


@covers(WithDiagnostics, kind="mutation")
def test_the_run_paths_counts_without_the_split_are_caught(monkeypatch):
    """Mutation: ``around`` gives the counts the whole ε instead of their share."""

    real = WithDiagnostics.around  # the real one, for its query and the model's copy

    def unsplit(cls, mechanism, problem):
        wrapped = real(mechanism, problem)
        if wrapped is mechanism:
            return mechanism
        return cls(wrapped.inner, DiagnosticCounts(mechanism.epsilon), wrapped.query)

    monkeypatch.setattr(WithDiagnostics, "around", classmethod(unsplit))
    d0, d1 = _rows_pair()
    res = audit(_counts_of_runs, d0, d1, claimed_epsilon=AUDIT_EPS, n_runs=RUNS, seed=2, statistic=_on_d1_side)
    assert res.violates, res.summary()


def test_the_opt_out_must_be_a_truth_value_refused_before_the_charge():
    problem = _problem(dp.Dataset.from_frame(_table(50), SCHEMA, "y", classes=["no", "yes"]))
    ledger = dp.Ledger()
    with pytest.raises(dp.errors.MechanismError, match="diagnostics must be True or False"):
        _mechanism(ledger=ledger).run(problem, diagnostics="no")
    assert ledger.charges == ()
