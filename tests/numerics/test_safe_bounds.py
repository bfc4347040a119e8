"""Exact LP dual bounds (NS04) and the grouped verifier's use of the primary's LP duals.

The verifier of ``highs-grouped`` may settle an enumerated point by a safe bound computed in
exact arithmetic from the dual vector HiGHS proposed (dpopt.numerics.safe_bounds,
dpopt.backends.grouped_duals); these tests check that the bound is exact at its boundary,
never above the LP minimum for any dual, and that a corrupted dual cannot hide a better point.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import optimize

import dpopt as dp
from dpopt.backends import registry
from dpopt.backends.grouped_duals import DualHint, dual_proofs, safe_bound_of
from dpopt.backends.result import SolveOptions
from dpopt.backends.verify import (
    SCIP_GROUPED,
    ScipGroupedVerifier,
    Verifier,
    VerifierChoice,
    threshold,
)
from dpopt.numerics.safe_bounds import SafeDualBound

ALPHA = 1e-3
needs_solvers = pytest.mark.skipif(
    not (ScipGroupedVerifier.available() and registry.get("highs-grouped").available()),
    reason="needs highspy (highs-grouped) and pyscipopt (scip-grouped)")


# -- the exact bound ----------------------------------------------------------------------------

def _lp(seed: int, m: int = 4, n: int = 7) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A feasible LP ``A x = b, 0 ≤ x ≤ u`` (integer A and b, u ∈ {0, 1}) with random double costs."""
    rng = np.random.default_rng(seed)
    A = rng.integers(-3, 4, size=(m, n))
    u = (rng.random(n) < 0.85).astype(float)
    b = A @ (rng.integers(0, 2, size=n) * u)
    c = rng.normal(size=n) * 10.0 ** rng.integers(-3, 4, size=n)
    return A, b.astype(float), c, u


def _safe(A: np.ndarray, b: np.ndarray) -> SafeDualBound:
    rows = [np.flatnonzero(r) for r in A]
    starts = np.concatenate([[0], np.cumsum([r.size for r in rows])]).astype(np.int32)
    index = np.concatenate(rows).astype(np.int32)
    value = np.concatenate([A[i, r] for i, r in enumerate(rows)]).astype(float)
    return SafeDualBound(starts, index, value, b, A.shape[1])


def _exact_bound(A, b, c, u, const, y) -> Fraction:
    """yᵀb + Σ min(0, (c − Aᵀy)_j u_j) + const in rational arithmetic (y dyadic: no rounding)."""
    yf = [Fraction(float(v)) for v in y]
    total = Fraction(float(const)) + sum(Fraction(float(bi)) * yi for bi, yi in zip(b, yf, strict=True))
    for j in range(A.shape[1]):
        r = Fraction(float(c[j])) - sum(int(A[i, j]) * yf[i] for i in range(A.shape[0]))
        total += min(Fraction(0), r * Fraction(float(u[j])))
    return total


def _floats_around(x: Fraction) -> tuple[float, float]:
    """The largest double ≤ x and the smallest double > x."""
    f = float(x)
    below = f if Fraction(f) <= x else math.nextafter(f, -math.inf)
    return below, math.nextafter(below, math.inf)


@pytest.mark.parametrize("seed", range(6))
def test_the_bound_is_decided_exactly_at_its_boundary(seed):
    A, b, c, u = _lp(seed)
    safe = _safe(A, b)
    y = np.random.default_rng(100 + seed).integers(-64, 65, size=A.shape[0]) / 8.0  # dyadic: used as is
    const = 0.1 * seed
    exact = _exact_bound(A, b, c, u, const, y)
    below, above = _floats_around(exact)
    assert safe.proves(c, u, const, y, below)  # the exact bound is ≥ every double up to it
    assert not safe.proves(c, u, const, y, above)  # and below the next one
    assert safe.bound(c, u, const, y) == float(exact)  # the report is the correctly rounded bound


@pytest.mark.parametrize("seed", range(6))
def test_no_dual_gives_a_bound_above_the_lp_minimum(seed):
    A, b, c, u = _lp(seed)
    safe = _safe(A, b)
    lp = optimize.linprog(c, A_eq=A, b_eq=b, bounds=[(0.0, float(v)) for v in u], method="highs")
    assert lp.status == 0
    rng = np.random.default_rng(seed)
    optimal = np.asarray(lp.eqlin.marginals)
    candidates = [optimal, optimal * 1.5, optimal + rng.normal(size=optimal.size), rng.normal(size=optimal.size) * 1e6,
                  np.zeros(optimal.size)]
    for y in candidates:
        assert safe.bound(c, u, 0.0, y) <= lp.fun + 1e-9 * max(1.0, abs(lp.fun))
        assert not safe.proves(c, u, 0.0, y, lp.fun + 1e-6 * max(1.0, abs(lp.fun)))
    assert safe.bound(c, u, 0.0, optimal) == pytest.approx(lp.fun, rel=1e-9, abs=1e-9)  # tight at the optimum


def test_what_cannot_be_evaluated_exactly_proves_nothing():
    A, b, c, u = _lp(0)
    y = np.zeros(A.shape[0])
    safe = _safe(A, b)
    assert safe.proves(c, u, 0.0, y, -1e300)
    assert not safe.proves(c, u, 0.0, np.full(A.shape[0], np.nan), -1e300)  # a non-finite dual
    assert not safe.proves(c, np.full(u.size, 0.5), 0.0, y, -1e300)  # bounds other than 0/1
    assert not safe.proves(c, u, 0.0, y[:-1], -1e300)  # a dual of the wrong size
    assert not _safe(A + 0.5, b).proves(c, u, 0.0, y, -1e300)  # a non-integral matrix


def test_the_callers_rows_are_not_changed():
    """scipy sorts a CSR matrix's indices in place; the program's rows (also SCIP's model) must stay as given."""
    starts = np.array([0, 3, 5], dtype=np.int32)
    index = np.array([2, 0, 1, 3, 1], dtype=np.int32)  # unsorted within a row
    value = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    copies = starts.copy(), index.copy(), value.copy()
    safe = SafeDualBound(starts, index, value, np.array([1.0, 2.0]), 4)
    safe.proves(np.ones(4), np.ones(4), 0.0, np.array([0.5, -0.25]), 0.0)
    for before, after in zip(copies, (starts, index, value), strict=True):
        np.testing.assert_array_equal(before, after)


# -- the grouped verifier with the primary's duals ----------------------------------------------

@pytest.fixture(scope="module")
def solved(adult_300):
    """The primary's certified answer on Adult (300 rows) and its prepared decomposition (with the hint)."""
    template = dp.DiscreteProblem(dp.ZeroOneLoss(adult_300, dp.Variable(23), dp.IntegerGrid(1, -2, 2, l2_bound=2.0)))
    template = template.with_kind("normalized")
    primary = registry.get("highs-grouped")
    prepared = primary.prepare(template)
    eta = np.random.default_rng(3).normal(size=template.noise_size) * 2.0
    res = primary.solve(prepared, eta, SolveOptions())
    assert res.certified
    return template, prepared, eta, res


def _second_best(template, prepared, eta, best):
    """A grid point worse than the optimum (the primary's mutant answer) and its value."""
    problem = template.with_eta(eta)
    w = best.copy()
    for j in range(w.size):
        for step in (1.0, -1.0):
            cand = w.copy()
            cand[j] += step
            if problem.domain.contains(cand) and problem.objective(cand) > problem.objective(best) + 0.05:
                return cand, problem.objective(cand)
    raise AssertionError("no worse neighbour")


@needs_solvers
def test_the_duals_settle_most_points_and_the_verdict_is_the_same_without_them(solved):
    template, prepared, eta, res = solved
    problem = template.with_eta(eta)
    value = problem.objective(res.solution)
    with_duals = Verifier.start(VerifierChoice(SCIP_GROUPED, "test"), template, prepared)
    without = ScipGroupedVerifier(SCIP_GROUPED, "0", prepared.program)  # no source: SCIP on every point
    for v in (with_duals, without):
        assert v.confirm(problem, eta, value, ALPHA, SolveOptions(), 2).certified
    proofs = dual_proofs(prepared.program, problem, prepared.hint, threshold(value, ALPHA), safe_bound_of(prepared.program))
    assert proofs.proven.sum() > prepared.program.points.shape[0] // 2  # the LP pass pruned most points
    message = with_duals.confirm(problem, eta, value, ALPHA, SolveOptions(), 2).message
    assert f"{int(proofs.proven.sum())} proven by exact LP dual bounds" in message


@needs_solvers
def test_a_hint_for_another_eta_or_program_is_ignored(solved):
    template, prepared, eta, res = solved
    hint = prepared.hint
    assert hint.matches(prepared.program, template.with_eta(eta).eta)
    assert not hint.matches(prepared.program, template.with_eta(eta + 1.0).eta)
    other = registry.get("highs-grouped").prepare(template).program
    assert not hint.matches(other, template.with_eta(eta).eta)
    problem = template.with_eta(eta + 1.0)
    proofs = dual_proofs(prepared.program, problem, hint, -math.inf, safe_bound_of(prepared.program))
    assert not proofs.proven.any()


def _corrupted_hint(prepared, problem, shift: float) -> tuple[DualHint, dict[int, float]]:
    """Duals of LPs solved with every cost raised by ``shift`` (a wrong LP) and those LPs' values."""
    import highspy

    from dpopt.backends.grouped_points import load_point, new_highs

    prog = prepared.program
    h = new_highs(prog, SolveOptions())
    h.setOptionValue("solve_relaxation", True)
    duals, values = {}, {}
    n = prog.n_columns
    for i, ks in enumerate(prog.points):
        const = load_point(h, prog, problem, ks)
        costs, _, _ = prog.costs(problem, ks)
        h.changeColsCost(n, np.arange(n, dtype=np.int32), costs + shift)
        h.run()
        assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
        duals[i] = np.asarray(h.getSolution().row_dual)
        values[i] = h.getInfo().objective_function_value + const
    return DualHint(prog, problem.eta, duals), values


@needs_solvers
def test_a_corrupted_lp_bound_cannot_prune_the_optimum(solved):
    """Mutant: the primary claims a worse point and its LP duals come from wrong costs whose LP value
    would prune the optimum's point.  The exact bound does not prove that point; SCIP finds the better one."""
    template, prepared, eta, res = solved
    problem = template.with_eta(eta)
    worse, worse_value = _second_best(template, prepared, eta, res.solution)
    cut = threshold(worse_value, ALPHA)
    hint, wrong_values = _corrupted_hint(prepared, problem, shift=10.0)
    prog = prepared.program
    k = np.rint(res.solution / template.domain.step).astype(np.int64)
    best_point = int(np.flatnonzero((prog.points == k[prog.enumerated]).all(axis=1))[0])
    assert wrong_values[best_point] >= cut  # trusting the wrong LP's value would prune the true optimum
    proofs = dual_proofs(prog, problem, hint, cut, safe_bound_of(prog))
    assert not proofs.proven[best_point]
    verifier = ScipGroupedVerifier(SCIP_GROUPED, "0", prog, source=_Source(hint))
    verdict = verifier.confirm(problem, eta, worse_value, ALPHA, SolveOptions(), 2)
    assert not verdict.certified and verdict.recheck.found_better_point
    honest = verifier.confirm(problem, eta, problem.objective(res.solution), ALPHA, SolveOptions(), 2)
    assert honest.certified  # the corrupted duals only leave more points to SCIP


class _Source:
    """A primary's prepared object carrying a given hint."""

    def __init__(self, hint: DualHint) -> None:
        self.hint = hint


@needs_solvers
def test_the_verifier_runs_its_points_on_a_process_pool(solved):
    from dpopt.executors import ProcessExecutor, use_executor

    template, prepared, eta, res = solved
    problem = template.with_eta(eta)
    value = problem.objective(res.solution)
    worse, worse_value = _second_best(template, prepared, eta, res.solution)
    verifier = ScipGroupedVerifier(SCIP_GROUPED, "0", prepared.program)  # every point to SCIP
    with ProcessExecutor(workers=2) as pool, use_executor(pool):
        assert verifier.confirm(problem, eta, value, ALPHA, SolveOptions(), 2).certified
        bad = verifier.confirm(problem, eta, worse_value, ALPHA, SolveOptions(), 2)
    assert not bad.certified and bad.recheck.found_better_point


@needs_solvers
def test_verification_releases_the_same_point(adult_300):
    problem = dp.DiscreteProblem(dp.ZeroOneLoss(adult_300, dp.Variable(23), dp.IntegerGrid(1, -2, 2, l2_bound=2.0)))
    on = dp.OPDisc(1.0, 1e-4, ledger=dp.Ledger()).run(problem, seed=4)
    off = dp.OPDisc(1.0, 1e-4, ledger=dp.Ledger(), verify=False).run(problem, seed=4)
    assert [(c.backend, c.role, c.certified) for c in on.oracle_calls] == [
        ("highs-grouped", "oracle", True), (SCIP_GROUPED, "verifier", True)]
    np.testing.assert_array_equal(on.theta, off.theta)
