"""Private diagnostics: noisy counts of what a declaration did to a table, at every estimator fit.

What users rely on: one charge of the fit's (ε, δ) whose row and release state the share the
counts spent; counts that are as private as the fit (audit, mutation, neighbours); a warning
that names the fix when a noisy count is clearly large (a mistyped ``classes=``), and none on
a clean table; a refused budget before any of it."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dpopt as dp
from dpopt.errors import BudgetExceededError, DiagnosticsWarning
from dpopt.mechanisms.diagnostics import (
    DIAGNOSTICS_SHARE,
    CountQuery,
    DiagnosticCounts,
    WithDiagnostics,
    counts_law,
    split_budget,
)
from dpopt.sklearn import DPLogisticRegression, DPRidge
from dpopt.testing import audit, one_point_pair
from dpopt.testing.coverage import covers
from dpopt.testing.views import assert_no_private_bytes, assert_same_view


def _query(data: dp.Dataset) -> CountQuery:
    """Two counts over a Dataset: rows with a positive label, rows with a positive feature."""
    X, y = np.asarray(data.X), np.asarray(data.y)
    return CountQuery(("positive labels", "positive first features"), data.n,
                      lambda: np.array([np.count_nonzero(y > 0), np.count_nonzero(X[:, 0] > 0)]))


# ----------------------------------------------------------------------------- calibration


def test_the_split_sums_to_the_fit_and_the_law_is_the_discrete_laplace_of_m_over_epsilon():
    for eps in (0.1, 1.0, 3.3, 7.0):
        model, counts = split_budget(eps)
        assert model + counts <= eps and model + counts == pytest.approx(eps, rel=1e-15)
        assert counts == pytest.approx(DIAGNOSTICS_SHARE * eps)
    law = counts_law(3, 0.02)
    assert (law.kind, law.gamma, law.param) == ("laplace", 1.0, 150)  # t = m/ε: (m/t)-DP at ℓ1 distance m


def test_counts_are_integers_in_range_plus_exact_integer_noise():
    d0, _ = one_point_pair(50)
    release = DiagnosticCounts(1.0, ledger=dp.Ledger()).run(_query(d0), seed=0)
    assert release.theta.shape == (2,) and np.all(release.theta == np.rint(release.theta))
    assert release.parameters["noise_scale"] == 2.0 and release.parameters["l1_sensitivity"] == 2
    assert (release.epsilon, release.delta) == (1.0, 0.0)


# ----------------------------------------------------------------------------- audits

AUDIT_EPS = 2.0
RUNS = 3000


def _pair() -> tuple[dp.Dataset, dp.Dataset]:
    """Replace the one nonzero row (1, +1) by (−1, −1): both counts of :func:`_query` move by one."""
    d0, _ = one_point_pair(10)
    return d0, d0.replace_row(9, [-1.0], -1.0)


def _total(outputs: np.ndarray) -> np.ndarray:
    """The audit's statistic: the sum of the noisy counts (both move the same way on the pair)."""
    return np.asarray(outputs).sum(axis=1)


class ScaleIgnoresCountsDiagnostics(DiagnosticCounts):
    """Mutation: the noise is calibrated to one count, not m (sensitivity 1 instead of m)."""

    def law(self, query: CountQuery):
        return counts_law(1, self.epsilon)


def _counts_runner(cls):
    def run(data, seed):
        return cls(AUDIT_EPS, ledger=dp.Ledger()).run(_query(data), seed=seed).theta
    return run


@covers(DiagnosticCounts, kind="audit")
def test_diagnostic_counts_audit_finds_no_violation_and_has_power():
    d0, d1 = _pair()
    res = audit(_counts_runner(DiagnosticCounts), d0, d1, claimed_epsilon=AUDIT_EPS, n_runs=RUNS, seed=0,
                statistic=_total)
    assert not res.violates, res.summary()
    assert res.epsilon_lower > 0.3 * AUDIT_EPS, res.summary()


@covers(DiagnosticCounts, kind="mutation")
def test_diagnostic_counts_mutation_is_caught():
    d0, d1 = _pair()
    res = audit(_counts_runner(ScaleIgnoresCountsDiagnostics), d0, d1, claimed_epsilon=AUDIT_EPS, n_runs=RUNS,
                seed=0, statistic=_total)
    assert res.violates, res.summary()


class UnsplitDiagnostics(WithDiagnostics):
    """Mutation: the budget is not split: the model and the counts each get the whole ε."""

    def __init__(self, inner, counts, query):
        whole = inner.epsilon + counts.epsilon
        super().__init__(DiagnosticCounts(whole, ledger=inner.ledger), DiagnosticCounts(whole), query)


def _on_d0_side(outputs: np.ndarray) -> np.ndarray:
    """How many of the four noisy counts are at least D0's exact value 1 (D1's are 0): the event
    "all four" has likelihood ratio exactly e^ε for the composition as claimed (a tight audit)."""
    return np.sum(np.asarray(outputs) >= 1, axis=1)


def _composed_runner(cls):
    """The composition on the one-point pair: inner counts with (1 − s)ε, diagnostics with sε."""
    def run(data, seed):
        model, counts = split_budget(AUDIT_EPS, 0.5)
        query = _query(data)
        mech = cls(DiagnosticCounts(model, ledger=dp.Ledger()), DiagnosticCounts(counts), query)
        release = mech.run(query, seed=seed)
        return np.concatenate([release.theta, list(release.parameters["noisy_diagnostic_counts"].values())])
    return run


@covers(WithDiagnostics, kind="audit")
def test_with_diagnostics_audit_finds_no_violation():
    d0, d1 = _pair()
    res = audit(_composed_runner(WithDiagnostics), d0, d1, claimed_epsilon=AUDIT_EPS, n_runs=RUNS, seed=1,
                statistic=_on_d0_side)
    assert not res.violates, res.summary()


@covers(WithDiagnostics, kind="mutation")
def test_with_diagnostics_mutation_is_caught():
    d0, d1 = _pair()
    res = audit(_composed_runner(UnsplitDiagnostics), d0, d1, claimed_epsilon=AUDIT_EPS, n_runs=RUNS, seed=1,
                statistic=_on_d0_side)
    assert res.violates, res.summary()


# ----------------------------------------------------------------------------- estimator fits


def _table(n=400, seed=0, labels=("no", "yes")):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 3))
    y = np.where(X @ np.array([1.0, -1.0, 0.5]) > 0, labels[1], labels[0]).astype(object)
    return X, y


def _fit(data, ledger, **kwargs):
    X, y = data
    return DPLogisticRegression(x_bound=1.5, classes=["no", "yes"], ledger=ledger, random_state=3,
                                **kwargs).fit(X, y).release_


NEIGHBOURS = {
    "label outside the classes": lambda y: "No",
    "missing label": lambda y: None,
    "other class": lambda y: "yes" if y == "no" else "no",
}


@covers(DiagnosticCounts, kind="neighbour")
@covers(WithDiagnostics, kind="neighbour")
@pytest.mark.parametrize("case", sorted(NEIGHBOURS))
def test_a_fit_with_diagnostics_looks_the_same_on_neighbours(case):
    """Replace one row's label by one the declaration changes (unmatched, missing) or not: the
    charge, the record (counts' names, share, noise scale) and the outcome are the same, and the
    record holds nothing but the declared names and the law of (ε, m)."""
    X, y = _table()
    y2 = y.copy()
    y2[0] = NEIGHBOURS[case](y[0])
    assert_same_view(lambda data, ledger: _fit(data, ledger), (X, y), (X, y2))
    release = _fit((X, y2), dp.Ledger())
    info = release.parameters["diagnostics"]  # public: the names, ε's share and the law from (ε, m) only
    assert set(info) == {"epsilon", "share", "counts", "noise", "noise_scale", "l1_sensitivity", "neighbouring"}
    assert info["noise_scale"] == float(counts_law(len(info["counts"]), info["epsilon"]).param)
    assert set(release.parameters["noisy_diagnostic_counts"]) == set(info["counts"])
    assert_no_private_bytes(release, np.linalg.norm(X, axis=1))  # no row norm (what the clip count reads)


def test_the_fit_is_one_charge_stating_the_share():
    X, y = _table()
    ledger = dp.Ledger()
    release = _fit((X, y), ledger)
    [charge] = ledger.charges
    assert (charge.epsilon, release.epsilon) == (1.0, 1.0) and "diagnostics (2 % of ε)" in charge.label
    info = release.parameters["diagnostics"]
    assert info["share"] == pytest.approx(DIAGNOSTICS_SHARE) and info["epsilon"] == pytest.approx(0.02)
    assert info["counts"] == ["labels matching no declared class", "missing labels", "rows clipped to x_bound"]
    assert "diagnostics: noisy counts (2 % of ε" in release.summary()


def test_a_mistyped_class_warns_once_naming_the_fix_and_a_clean_table_does_not():
    X, y = _table(n=20_000)
    with pytest.warns(DiagnosticsWarning, match=r"about (9\d|100) % of labels matched no declared class.*"
                                                r"check `classes=`") as caught:
        DPLogisticRegression(x_bound=2.0, classes=["No", "Yes"], ledger=dp.Ledger(), random_state=0).fit(X, y)
    assert len([w for w in caught if w.category is DiagnosticsWarning]) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", DiagnosticsWarning)
        DPLogisticRegression(x_bound=2.0, classes=["no", "yes"], ledger=dp.Ledger(), random_state=0).fit(X, y)


def test_labels_outside_a_regressors_range_are_counted_and_warned():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(20_000, 2))
    y = 1000.0 + X @ np.array([50.0, 20.0])  # declared in [0, 200]: every label is clipped
    with pytest.warns(DiagnosticsWarning, match="outside the declared range.*check `label_spec=`"):
        est = DPRidge(x_bound=2.0, label_spec=dp.Numeric(0, 200, grid=1), ledger=dp.Ledger(),
                      random_state=0).fit(X, y)
    assert est.release_.parameters["noisy_diagnostic_counts"]["labels outside the declared range"] > 15_000


def test_schema_columns_are_counted_per_column():
    schema = dp.Schema({"age": dp.Numeric(0, 100, grid=1), "job": dp.Categorical(["a", "b"])})
    rng = np.random.default_rng(0)
    n = 20_000
    import pandas as pd

    table = pd.DataFrame({"age": rng.integers(0, 150, size=n).astype(float), "job": rng.choice(["a", "b", "c"], size=n)})
    y = rng.choice(["no", "yes"], size=n)
    est = DPLogisticRegression(schema=schema, classes=["no", "yes"], ledger=dp.Ledger(), random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DiagnosticsWarning)
        counts = est.fit(table, y).release_.parameters["noisy_diagnostic_counts"]
    assert set(counts) == {"labels matching no declared class", "missing labels", "age: entries clipped or rounded",
                           "job: entries of an undeclared category"}
    scale = est.release_.parameters["diagnostics"]["noise_scale"]
    assert abs(counts["age: entries clipped or rounded"] - np.sum(table["age"] > 100)) < 15 * scale
    assert abs(counts["job: entries of an undeclared category"] - np.sum(table["job"] == "c")) < 15 * scale


def test_an_exhausted_budget_is_refused_before_anything_is_counted():
    X, y = _table()
    counted = []
    ledger = dp.Ledger(epsilon_budget=0.5)
    from dpopt.sklearn import diagnostics

    real = diagnostics.declared_counts

    def spy(*args, **kwargs):
        query, wording = real(*args, **kwargs)
        return CountQuery(query.names, query.n, lambda: counted.append(1) or query.count()), wording

    diagnostics_module = pytest.MonkeyPatch()
    diagnostics_module.setattr("dpopt.sklearn._base.declared_counts", spy)
    try:
        with pytest.warns(dp.errors.BudgetWarning), pytest.raises(BudgetExceededError):
            DPLogisticRegression(x_bound=1.5, classes=["no", "yes"], ledger=ledger).fit(X, y)
        assert counted == [] and ledger.charges == ()
        DPLogisticRegression(x_bound=1.5, epsilon=0.5, classes=["no", "yes"], ledger=ledger).fit(X, y)
        assert counted == [1]
    finally:
        diagnostics_module.undo()


def test_the_pre_charge_path_reads_no_count_and_no_data_value(monkeypatch):
    """Both parts are planned from declarations; the counts are taken after the charge only (the
    generic pre-charge harness, tests/contracts/test_pre_data_declarations.py, runs on Problems)."""
    from dpopt.testing.declarations import hide_data_values, run_to_charge

    X, y = _table()
    taken = []
    est = DPLogisticRegression(x_bound=1.5, classes=["no", "yes"], ledger=dp.Ledger())
    data = est._encode(X, y)
    model, counts = split_budget(1.0)
    inner, problem = est._mechanism_and_problem(data, epsilon=model)
    query = CountQuery(("a", "b"), data.n, lambda: taken.append(1) or np.zeros(2))
    with monkeypatch.context() as m:
        hide_data_values(m)
        reached = run_to_charge(WithDiagnostics(inner, DiagnosticCounts(counts), query), problem)
    assert reached.outcome == "charge" and taken == []
    alone = run_to_charge(DiagnosticCounts(1.0), query)
    assert alone.outcome == "charge" and taken == []
