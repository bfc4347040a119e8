"""The CP-SAT oracle: exact integer compilation, the rounding bound, the two-phase certificate.

highspy is imported before ortools on purpose: highspy 1.15 and ortools 9.15 cannot share a
process (or-tools issue 5246); the pin highspy<1.15 keeps this module importable.
"""

import math

import highspy  # noqa: F401 — must coexist with ortools in one process (see the module docstring)
import numpy as np
import pytest
from ortools.sat.python import cp_model  # noqa: F401 — the same process, after highspy

import dpopt.backends.cpsat as cpsat_mod
from dpopt.backends import registry
from dpopt.backends.cpsat import CpSatBackend
from dpopt.backends.result import Limit, OracleStatus, SolveOptions
from dpopt.compile.mip_cpsat import compile_cpsat, integer_rows
from dpopt.errors import BackendCapabilityError, ModelError
from dpopt.modeling.dataset import Dataset
from dpopt.modeling.discrete import DiscreteProblem, brute_force
from dpopt.modeling.domains import IntegerGrid
from dpopt.modeling.schema import Numeric, Schema
from dpopt.modeling.variable import Variable
from dpopt.modeling.zero_one import ZeroOneLoss

BACKEND = CpSatBackend()
OPTS = SolveOptions(time_limit=20.0, threads=2)


def make_problem(X, y, grid, weights=None, eta=None, feature_grid="1/4") -> DiscreteProblem:
    """Features declared on multiples of ``feature_grid`` in [−1, 1]."""
    X = np.asarray(X, dtype=np.float64)
    schema = Schema.uniform(X.shape[1], Numeric(-1, 1, grid=feature_grid))
    data = Dataset(X, np.asarray(y, dtype=np.float64), x_norm=1, schema=schema)
    return DiscreteProblem(ZeroOneLoss(data, Variable(X.shape[1]), grid, weights=weights), eta=eta)


def tiny_instance(seed: int, step: float | None = None) -> DiscreteProblem:
    """d ≤ 3, ≤ 5 grid values per coordinate, n ≤ 30 rows of multiples of 1/4 with duplicates."""
    rng = np.random.default_rng(seed)
    d = 1 + seed % 3
    n = int(rng.integers(8, 26))
    X = rng.integers(-4, 5, size=(n, d)) / 4.0
    dup = rng.integers(0, n, size=4)
    X = np.vstack([X, X[dup]])
    y = np.concatenate([rng.choice([-1.0, 1.0], n), rng.choice([-1.0, 1.0], 4)])
    X[rng.integers(0, n + 4)] = 0.0  # a zero row: an error for every w
    # brute_force evaluates the exact integer margins too (see test_non_dyadic_step for τ = 0.1)
    grids = [IntegerGrid(0.5, -1.0, 1.0), IntegerGrid(0.5, -1.0, 1.0, l2_bound=1.2),
             IntegerGrid(1.0, -2.0, 1.0, l2_bound=2.0), IntegerGrid(0.25, 0.0, 0.75)]
    grid = grids[seed % len(grids)] if step is None else IntegerGrid(step, -2 * step, 2 * step, l2_bound=2 * step)
    weights = None
    if seed % 3 == 1:
        weights = rng.integers(1, 4, size=n + 4).astype(float)
    elif seed % 3 == 2:
        weights = rng.choice([0.3, 1.0, 1.7], size=n + 4)  # not exact in binary: C_i rounding enters E
    return make_problem(X, y, grid, weights=weights)


# --------------------------------------------------------------------------- registry
def test_import_registers_cpsat():
    assert isinstance(registry.get("cpsat"), CpSatBackend)
    assert CpSatBackend.kind == "mip"
    assert BACKEND.available()


def test_highs_and_cpsat_agree_in_one_process():
    """Both MIP oracles, in this process, on the same draws (the one-process pin at work)."""
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    assert h.getRunTime() >= 0.0
    highs = registry.get("highs")
    problem = tiny_instance(7)
    p_cpsat, p_highs = BACKEND.prepare(problem), highs.prepare(problem)
    rng = np.random.default_rng(77)
    for _ in range(5):
        eta = rng.normal(0.0, 2.0, problem.dim + 1)
        a, b = BACKEND.solve(p_cpsat, eta, OPTS), highs.solve(p_highs, eta, OPTS)
        assert a.certified and b.certified
        np.testing.assert_array_equal(a.solution, b.solution)


def test_check_refuses_other_problems():
    with pytest.raises(BackendCapabilityError, match="DiscreteProblem"):
        BACKEND.check(object())


# ------------------------------------------------------------------- differential
@pytest.mark.parametrize("seed", range(10))
def test_matches_brute_force(seed):
    """20 noise draws per instance (200 in total), η_{d+1} < 0 in half, η ~ N(0, 2²)."""
    problem = tiny_instance(seed)
    prepared = BACKEND.prepare(problem)
    rng = np.random.default_rng(1000 + seed)
    for draw in range(20):
        eta = rng.normal(0.0, 2.0, problem.dim + 1)
        eta[-1] = -abs(eta[-1]) if draw % 2 else abs(eta[-1])
        res = BACKEND.solve(prepared, eta, OPTS)
        w_ref, f_ref = brute_force(problem.with_eta(eta))
        assert res.status is OracleStatus.OPTIMAL, res.summary()
        assert res.certified and res.solver_certified, res.summary()
        np.testing.assert_array_equal(res.solution, w_ref)
        assert res.primal_bound == pytest.approx(f_ref, abs=1e-9)
        assert res.dual_bound == res.primal_bound and res.gap == 0.0
        assert res.recheck.on_grid and res.recheck.objective_agrees
        assert res.recheck.rounding_alpha < 1e-6


def exact_objectives(prog, problem: DiscreteProblem, eta: np.ndarray):
    """Grid points (w, k) and f with exact integer margins (the objective E is proven for)."""
    W = problem.domain.enumerate(problem.dim)
    K = np.rint(W / problem.domain.step).astype(np.int64)
    return W, K, np.array([prog.objective(k, eta) for k in K])


@pytest.mark.parametrize("step", [None, 0.1])
def test_rounding_error_bound_holds_on_every_grid_point(step):
    """|F(k) − Q f(k)| ≤ E over the whole domain, for both signs of η_{d+1}; with τ = 0.1 the
    radicand D² − τ²s is 0 at ‖k‖² = 4, where float sums of squares differ most."""
    for seed in range(10):
        problem = tiny_instance(seed, step)
        prog = compile_cpsat(problem)
        rng = np.random.default_rng(seed)
        for sign in (1.0, -1.0):
            eta = rng.normal(0.0, 2.0, problem.dim + 1)
            eta[-1] = sign * abs(eta[-1])
            ro = prog.rounded(eta)
            _, K, f = exact_objectives(prog, problem, eta)
            F = rounded_values(prog, ro, K)
            assert np.max(np.abs(F - ro.scale * f)) <= ro.error
            assert ro.alpha == 2 * ro.error / ro.scale


def test_non_dyadic_step():
    """τ = 0.1: CP-SAT's argmin equals enumeration with exact integer margins.

    With w = 0.1 k a margin that is exactly zero in rational arithmetic comes out as ±1e-17
    in floating point; ZeroOneLoss.values (and so brute_force) uses the integer margins, so it
    agrees with the model exactly.
    """
    for seed in (0, 1, 2):
        problem = tiny_instance(seed, 0.1)
        prog = compile_cpsat(problem)
        prepared = BACKEND.prepare(problem)
        rng = np.random.default_rng(2000 + seed)
        for draw in range(10):
            eta = rng.normal(0.0, 2.0, problem.dim + 1)
            eta[-1] = -abs(eta[-1]) if draw % 2 else abs(eta[-1])
            W, _, f = exact_objectives(prog, problem, eta)
            res = BACKEND.solve(prepared, eta, OPTS)
            assert res.solver_certified, res.summary()
            np.testing.assert_array_equal(res.solution, W[np.argmin(f)])
            assert res.primal_bound == f.min()
            np.testing.assert_array_equal(brute_force(problem.with_eta(eta))[0], res.solution)


def test_unperturbed_problem_has_exact_rounding():
    problem = make_problem([[1.0, 0.5], [0.5, -1.0], [-1.0, 0.25]], [1.0, 1.0, -1.0], IntegerGrid(1.0, -1.0, 1.0))
    prog = compile_cpsat(problem)
    assert prog.rounded(None).error == 0.0
    res = BACKEND.solve_problem(problem, OPTS)
    _, f_ref = brute_force(problem)
    assert res.primal_bound == f_ref
    # η = 0 leaves many minimizers here: phase 2 finds a tie and refuses to certify
    assert not res.certified and "tie" in res.raw_status


# ------------------------------------------------------------------- near ties
def rounded_values(prog, ro, K: np.ndarray) -> np.ndarray:
    """F(k) for each row of K (minimal e: e_i = 1 exactly when ⟨z_i, k⟩ ≤ 0)."""
    margins = K @ prog.rows.Z.T
    return (ro.constant + (margins <= 0).astype(np.int64) @ np.array(ro.loss_coef, dtype=np.int64)
            + K @ np.array(ro.k_coef, dtype=np.int64) + np.array(ro.table)[np.sum(K * K, axis=1)])


def engineered_near_tie(problem: DiscreteProblem, seed: int, lo: float = 1e-11, hi: float = 1e-9):
    """η whose two best grid points a, b have f(a) < f(b) by lo…hi (far below α) while the
    rounded objective prefers b: F(b) < F(a) and b minimizes F.  Found by moving a random η
    along π(a) − π(b), which changes f(a) − f(b) linearly (L does not depend on η)."""
    prog = compile_cpsat(problem)
    W = problem.domain.enumerate(problem.dim)
    K = np.rint(W / problem.domain.step).astype(np.int64)
    P = problem.domain.normalize(W)
    L = problem.loss.values(W)
    rng = np.random.default_rng(seed)
    for _ in range(2000):
        eta = rng.normal(0.0, 2.0, problem.dim + 1)
        f = L - P @ eta
        a, b = np.argsort(f)[:2]
        v = P[a] - P[b]
        delta = rng.uniform(lo, hi)
        eta = eta + (delta + L[a] - L[b] - eta @ v) / (v @ v) * v
        f = problem.with_eta(eta).objectives(W)
        order = np.argsort(f)
        if not (order[0] == a and order[1] == b and lo < f[b] - f[a] < hi):
            continue
        F = rounded_values(prog, prog.rounded(eta), K)
        if F[b] < F[a] and F[b] == F.min():
            return eta, W[a], W[b]
    raise AssertionError("no near tie found")


@pytest.mark.parametrize("seed", range(4))
def test_near_tie_closer_than_alpha_returns_exact_argmin(seed):
    problem = tiny_instance(seed)
    eta, w_a, w_b = engineered_near_tie(problem, seed)
    gap = problem.with_eta(eta).objective(w_b) - problem.with_eta(eta).objective(w_a)
    assert 0 < gap < compile_cpsat(problem).rounded(eta).alpha  # closer than the rounding resolves
    w_ref, _ = brute_force(problem.with_eta(eta))
    np.testing.assert_array_equal(w_ref, w_a)
    res = BACKEND.solve(BACKEND.prepare(problem), eta, OPTS)
    assert res.certified, res.summary()
    np.testing.assert_array_equal(res.solution, w_a)
    assert res.recheck.candidates >= 2  # phase 1 returned b (F-optimal); phase 2 found a


def test_exact_tie_is_not_certified():
    # one row x = 1, y = +1 on τ = 0.5, D = 1: f(k = 1) = f(k = 2) = −√3 for η = (√3, 1)
    problem = make_problem([[1.0]], [1.0], IntegerGrid(0.5, -1.0, 1.0))
    eta = np.array([math.sqrt(3.0), 1.0])
    f = problem.with_eta(eta).objectives(np.array([[1.0], [0.5]]))
    assert abs(f[0] - f[1]) <= 1e-15
    res = BACKEND.solve(BACKEND.prepare(problem), eta, OPTS)
    assert not res.certified and "tie" in res.raw_status
    assert res.solution[0] in (0.5, 1.0)


def test_candidate_cap_fails_closed(monkeypatch):
    monkeypatch.setattr(cpsat_mod, "MAX_CANDIDATES", 0)
    problem = tiny_instance(1)
    eta, _, _ = engineered_near_tie(problem, 1)
    res = BACKEND.solve(BACKEND.prepare(problem), eta, OPTS)
    assert not res.certified
    assert res.status is OracleStatus.LIMIT and res.limit is Limit.ITERATIONS


# ------------------------------------------------------------------- limits and refusals
def test_time_limit_is_not_certified():
    rng = np.random.default_rng(7)
    X = rng.integers(-8, 9, size=(2000, 10)) / 8.0
    y = rng.choice([-1.0, 1.0], 2000)
    problem = make_problem(X, y, IntegerGrid(1.0, -3.0, 3.0, l2_bound=4.0))
    prepared = BACKEND.prepare(problem)
    res = BACKEND.solve(prepared, rng.normal(0.0, 5.0, 11), SolveOptions(time_limit=0.05, threads=2))
    assert res.status is OracleStatus.LIMIT and res.limit is Limit.TIME
    assert not res.certified and not res.solver_certified


def test_data_off_the_grid_is_mapped_and_solved_not_refused():
    # the old per-row rational reading refused √2/3: a data-dependent refusal
    X = np.array([[np.sqrt(2) / 3, 0.5], [0.25, -1.0]])
    problem = make_problem(X, [1.0, -1.0], IntegerGrid(1.0, -1.0, 1.0), eta=np.array([0.4, -0.3, 0.2]))
    rows = integer_rows(problem.loss)
    assert rows.scale == 4
    res = BACKEND.solve_problem(problem, OPTS)
    assert res.certified
    np.testing.assert_array_equal(res.solution, brute_force(problem)[0])
    with pytest.raises(ModelError, match="not supported"):
        integer_rows(make_problem([[0.5]], [1.0], IntegerGrid(1.0, -1.0, 1.0)).loss, allow_approximation=1e-3)


def test_integer_rows_scale_merge_and_fold_labels():
    # a declared grid of 1/198 (s = 198); (1/3, 2/3), (1/99, 2/99) merge, and so do
    # (2/3, 1/3) and (−1, −1/2)·(−1)
    X = [[1 / 3, 2 / 3], [2 / 3, 1 / 3], [-1.0, -0.5], [0.0, 0.0], [1 / 99, 2 / 99]]
    y = [1.0, 1.0, -1.0, 1.0, 1.0]
    rows = integer_rows(make_problem(X, y, IntegerGrid(1.0, -1.0, 1.0), feature_grid="1/198").loss)
    assert rows.constant == 1.0  # the zero row
    assert rows.scale == 198
    got = {tuple(int(v) for v in z): w for z, w in zip(rows.Z, rows.weights, strict=True)}
    assert got == {(1, 2): 2.0, (2, 1): 2.0}


def test_exact_zero_float_margin_is_an_error_for_the_model_and_the_recheck():
    # 0.1 + 0.2 − 0.3 is 0 exactly but 5.6e-17 in floating point; ZeroOneLoss.values now uses
    # the same integer margins as the model, so both count an error at k = (1, 1, 1)
    problem = make_problem([[0.1, 0.2, -0.3]], [1.0], IntegerGrid(1.0, 0.0, 1.0), feature_grid="1/10")
    assert problem.loss.value(np.ones(3)) == 1.0
    eta = np.array([10.0, 10.0, 10.0, 0.0])
    res = BACKEND.solve(BACKEND.prepare(problem), eta, OPTS)
    np.testing.assert_array_equal(res.solution, [1.0, 1.0, 1.0])
    assert res.recheck.objective_agrees and res.certified


def test_resolve_keeps_or_replaces_eta():
    problem = tiny_instance(4)
    prepared = BACKEND.prepare(problem)
    eta = np.random.default_rng(0).normal(0.0, 2.0, problem.dim + 1)
    first = BACKEND.solve(prepared, eta, OPTS)
    again = BACKEND.solve(prepared, None, OPTS)  # None: keep the current η
    np.testing.assert_array_equal(first.solution, again.solution)
    assert first.primal_bound == again.primal_bound


# ------------------------------------------------------------ crash isolation (or-tools 5091/5288)
def _trivial_model():
    m = cp_model.CpModel()
    x = m.new_int_var(0, 10, "x")
    m.add(x >= 3)
    m.minimize(x)
    params = cp_model.CpSolver().parameters
    params.num_workers = 1
    return m, params, [x]


def test_a_child_dying_mid_solve_is_a_crashed_result_and_the_next_solve_recovers(monkeypatch):
    import os
    import signal
    import subprocess
    import sys

    from dpopt.backends import cpsat_isolated as iso

    m, params, xs = _trivial_model()
    ok = iso.solve_isolated(m, params, xs)
    assert not ok.crashed and ok.status == cp_model.OPTIMAL and ok.value(xs[0]) == 3
    child = iso._child
    assert child is not None
    os.kill(child.pid, signal.SIGKILL)  # dead between solves: the next solve starts a new child
    child.wait(10)
    assert iso.solve_isolated(m, params, xs).value(xs[0]) == 3
    # a child that aborts while it holds a request, as OR-Tools' uncaught C++ exception does
    iso.shutdown()
    aborting = [sys.executable, "-c", "import os, sys; sys.stdin.buffer.read(8); os.abort()"]
    monkeypatch.setattr(iso, "_start_child", lambda: subprocess.Popen(
        aborting, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL))
    dead = iso.solve_isolated(m, params, xs)
    assert dead.crashed and dead.status == cp_model.UNKNOWN and not dead.values and "died" in dead.message
    monkeypatch.undo()
    again = iso.solve_isolated(m, params, xs)
    assert not again.crashed and again.value(xs[0]) == 3


@pytest.mark.parametrize("crash_in_phase", [1, 2])
def test_backend_and_opdisc_fail_closed_when_the_child_crashes(monkeypatch, crash_in_phase):
    import dpopt as dp
    from dpopt.backends import cpsat_isolated as iso
    from dpopt.errors import UncertifiedOracleError

    real = iso.solve_isolated
    calls = []

    def crashing(*args, **kwargs):
        calls.append(1)
        if len(calls) == crash_in_phase:
            return iso.IsolatedResult(cp_model.UNKNOWN, "CRASHED", crashed=True, message="child died")
        return real(*args, **kwargs)

    monkeypatch.setattr(cpsat_mod, "solve_isolated", crashing)
    problem = tiny_instance(0)
    res = BACKEND.solve(BACKEND.prepare(problem), np.zeros(problem.dim + 1), OPTS)
    assert res.status is OracleStatus.ERROR and not res.certified and "child died" in res.message
    calls.clear()  # a mechanism retries a crashed call with the same noise: one crash is invisible
    ledger = dp.Ledger()
    release = dp.OPDisc(1.0, 1e-3, ledger=ledger).run(problem, solver="cpsat", seed=0)
    clean = dp.OPDisc(1.0, 1e-3, ledger=dp.Ledger()).run(problem, solver="bruteforce", seed=0)
    assert release.private and np.array_equal(release.theta, clean.theta)
    assert ledger.spent == pytest.approx((1.0, 1e-3)) and ledger.charges[0].released

    def always_crashing(*args, **kwargs):
        return iso.IsolatedResult(cp_model.UNKNOWN, "CRASHED", crashed=True, message="child died")

    monkeypatch.setattr(cpsat_mod, "solve_isolated", always_crashing)
    with pytest.raises(UncertifiedOracleError):  # a crash that persists fails closed after the fixed retries
        dp.OPDisc(1.0, 1e-3, ledger=ledger).run(problem, solver="cpsat", seed=0)
    assert ledger.spent == pytest.approx((2.0, 2e-3)) and not ledger.charges[1].released
