"""The fast path of private linear fits: the scipy backend's (projected) Newton method,
solver="auto" choosing it, and BLAS thread limiting (row aggregation: tests/compile/test_aggregate.py).

No timing here: the speed itself is measured by ``dpopt bench speed``."""

import numpy as np
import pytest

import dpopt as dp
from dpopt.backends import registry
from dpopt.backends import scipy_backend as sb
from dpopt.backends.profiles import resolve
from dpopt.backends.result import Limit, SolveOptions
from dpopt.compile import aggregate
from dpopt.compile.aggregate import glm_design
from dpopt.modeling.perturbation import Perturbation
from dpopt.numerics.certificates import certify
from dpopt.testing.tables import onehot_table

TOL = 1e-6  # the mechanisms' default distance tolerance


def _perturbed(data: dp.Dataset, *, radius: float | None, lam: float = 1e-2, seed: int = 1,
               noise: float = 0.5) -> dp.Problem:
    th = dp.Variable(data.n_features)
    c = None if radius is None else dp.L2Ball(th, radius)
    p = dp.Problem(dp.LogisticLoss(data, th), constraint=c, regularizer=dp.L2Squared(th, lam))
    b = noise * np.random.default_rng(seed).normal(size=p.dim)
    return p.with_perturbation(Perturbation(p.dim, b=b, zeta=0.01, theta0=np.zeros(p.dim)))


def test_sparse_and_dense_designs_give_the_same_newton_answer(monkeypatch):
    p = _perturbed(onehot_table(seed=4), radius=None)
    results = []
    for density in (0.0, 1.0):  # never / always keep a sparse copy
        monkeypatch.setattr(aggregate, "MAX_SPARSE_DENSITY", density)
        monkeypatch.setattr(aggregate, "_cache", {})
        res = registry.get("scipy").solve_problem(p, SolveOptions(distance_tolerance=TOL))
        assert (glm_design(p.loss.data.X, p.loss.data.y).sparse is None) == (density == 0.0)
        results.append(res.solution)
    assert np.linalg.norm(results[0] - results[1]) <= 2 * TOL


# -- Newton on ℝ^d and on an ℓ2 ball ------------------------------------------------------


@pytest.mark.parametrize("radius", [None, 0.5, 100.0], ids=["free", "ball-active", "ball-inactive"])
def test_newton_answer_is_certified_and_matches_clarabel(radius):
    p = _perturbed(onehot_table(seed=6), radius=radius)
    res = registry.get("scipy").solve_problem(p, SolveOptions(distance_tolerance=TOL))
    assert res.certified and res.message == "fista_iterations=0"  # Newton alone reached the target
    cert = certify(p, res.solution)
    assert cert.distance_bound <= TOL
    if radius is not None:
        assert np.linalg.norm(cert.point) <= radius * (1 + 1e-12)
    if registry.get("clarabel").available():
        ref = registry.get("clarabel").solve_problem(p)
        assert np.linalg.norm(ref.solution - cert.point) <= 1e-5
    if radius == 0.5:
        assert np.linalg.norm(cert.point) == pytest.approx(radius, rel=1e-9)  # the ball is active


def test_ball_step_satisfies_the_model_kkt_conditions():
    rng = np.random.default_rng(7)
    A = rng.normal(size=(6, 6))
    H = A @ A.T + 0.1 * np.eye(6)
    x = 0.3 * rng.normal(size=6) / np.sqrt(6)
    g = 5.0 * rng.normal(size=6)
    d = sb._newton_step(sb._Model(H), x, g, 1.0)
    assert d is not None
    z = x + d
    assert np.linalg.norm(z) == pytest.approx(1.0, rel=1e-10)
    m = g + H @ d  # = −ν z with ν ≥ 0 at the model's minimizer on the sphere
    nu = -float(m @ z) / float(z @ z)
    assert nu > 0 and np.allclose(m, -nu * z, atol=1e-8 * np.linalg.norm(g))


def _singular_psd(seed: int) -> np.ndarray:
    """A rank-deficient PSD matrix whose computed eigenvalues straddle 0 (like a float32 GLM model)."""
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(6, 4))
    H = A @ A.T  # rank 4
    v = np.linalg.eigh(H)[1][:, 0]
    return H - 1e-9 * np.outer(v, v)  # one eigenvalue slightly negative, as rounding leaves it


def test_ball_step_with_a_singular_hessian_satisfies_the_floored_model_kkt_conditions():
    H = _singular_psd(12)
    rng = np.random.default_rng(13)
    x = 0.3 * rng.normal(size=6) / np.sqrt(6)
    g = 5.0 * rng.normal(size=6)
    model = sb._Model(H)
    d = sb._newton_step(model, x, g, 1.0)
    assert d is not None and np.all(np.isfinite(d))
    lam, Q = model.eig()
    assert lam[0] > 0 and np.linalg.norm((Q * lam) @ Q.T - H, 2) <= 2 * sb.EIG_FLOOR * lam[-1]
    z = x + d
    assert np.linalg.norm(z) == pytest.approx(1.0, rel=1e-10)
    m = g + (Q * lam) @ (Q.T @ d)  # = −ν z at the floored model's minimizer on the sphere
    nu = -float(m @ z) / float(z @ z)
    assert nu > 0 and np.allclose(m, -nu * z, atol=1e-8 * np.linalg.norm(g))
    assert float(g @ d) < 0  # a descent direction


def test_free_step_with_a_singular_hessian_solves_the_newton_equation_on_its_range():
    H = _singular_psd(14)
    lam, Q = np.linalg.eigh(H)
    g = Q[:, 2:] @ np.random.default_rng(15).normal(size=4)  # a gradient in the range of H
    d = sb._newton_step(sb._Model(H), np.zeros(6), g, None)
    assert d is not None and np.allclose(H @ d, -g, atol=1e-8 * np.linalg.norm(g))


@pytest.mark.parametrize(("extra", "seed"), [("intercept", 17), ("intercept", 21), ("duplicate", 16)])
def test_unregularized_fit_with_collinear_columns_on_an_active_ball_is_solved_by_newton(extra, seed):
    """One-hot blocks that sum to an intercept column (or a duplicated column): Xᵀ diag(·) X is
    singular, no ℓ2² term, no perturbation, and the ball is active at the optimum (the standard
    Adult encoding's case)."""
    base = onehot_table(n=600, seed=seed)
    X = np.column_stack([base.X, 0.5 * np.ones(base.n) if extra == "intercept" else base.X[:, 0]])
    X /= np.linalg.norm(X, axis=1, keepdims=True)  # block sums stay equal to the intercept column
    data = dp.Dataset(X, base.y, x_bound=1.0, y_bound=1.0)
    assert np.linalg.matrix_rank(X) < data.n_features
    th = dp.Variable(data.n_features)
    radius = 1.0
    p = dp.Problem(dp.LogisticLoss(data, th), constraint=dp.L2Ball(th, radius))
    res = registry.get("scipy").solve_problem(p, SolveOptions())
    assert res.certified and res.residual <= 1e-12
    assert res.message == "fista_iterations=0"  # Newton alone: no L-BFGS/FISTA fallback
    assert np.linalg.norm(res.solution) == pytest.approx(radius, rel=1e-9)  # the ball is active
    if registry.get("clarabel").available():
        ref = registry.get("clarabel").solve_problem(p)
        assert np.linalg.norm(ref.solution - res.solution) <= 1e-5


@pytest.mark.parametrize("radius", [None, 0.5], ids=["free", "ball-active"])
def test_sampled_hessian_models_give_the_same_certified_answer(monkeypatch, radius):
    p = _perturbed(onehot_table(n=3000, seed=18), radius=radius, lam=1e-3)
    opts = SolveOptions(distance_tolerance=TOL)
    full = registry.get("scipy").solve_problem(p, opts)
    monkeypatch.setattr(sb, "SAMPLE_ROWS", 16)  # small data take the large-data path
    monkeypatch.setattr(sb, "_start_grams", sb.weakref.WeakKeyDictionary())
    strides = []
    hessian = sb._Smooth.hessian

    def spy(self, theta, *, sampled=False):
        strides.append(sb._stride(self.design.n_rows) if sampled else 1)
        return hessian(self, theta, sampled=sampled)

    monkeypatch.setattr(sb._Smooth, "hessian", spy)
    res = registry.get("scipy").solve_problem(p, opts)
    assert strides[0] > 1 and strides[-1] == 1  # sampled models first, the full model at the end
    assert res.certified and res.message == "fista_iterations=0"
    assert certify(p, res.solution).distance_bound <= TOL
    assert np.linalg.norm(res.solution - full.solution) <= 2 * TOL


def test_newton_state_is_reset_for_each_noise_draw():
    p = _perturbed(onehot_table(seed=8), radius=2.0)
    backend = registry.get("scipy")
    prepared = backend.prepare(p)
    opts = SolveOptions(distance_tolerance=TOL)
    for seed in (1, 2, 1):
        b = np.random.default_rng(seed).normal(size=p.dim)
        res = backend.solve(prepared, b, opts)
        q = p.with_perturbation(Perturbation(p.dim, b=b, zeta=0.01, theta0=np.zeros(p.dim)))
        assert certify(q, res.solution).distance_bound <= TOL


# -- solver="auto" -----------------------------------------------------------------------


def test_auto_picks_scipy_for_smooth_glms_on_the_ball_and_clarabel_elsewhere():
    data = onehot_table()
    th = dp.Variable(data.n_features)
    loss, reg = dp.LogisticLoss(data, th), dp.L2Squared(th, 1e-2)
    assert resolve("auto", dp.Problem(loss, regularizer=reg))[0].name == "scipy"
    assert resolve("auto", dp.Problem(loss, constraint=dp.L2Ball(th, 3.0), regularizer=reg))[0].name == "scipy"
    if registry.get("clarabel").available():
        l1ball = dp.Problem(loss, constraint=dp.L1Ball(th, 3.0), regularizer=reg)
        assert resolve("auto", l1ball)[0].name == "clarabel"
        with_l1 = dp.Problem(loss, constraint=dp.L2Ball(th, 3.0), regularizer=(reg, dp.L1Norm(th, 1e-3)))
        assert resolve("auto", with_l1)[0].name == "clarabel"


def test_private_fit_on_the_ball_is_answered_by_the_newton_accelerator():
    data = onehot_table(seed=9)
    th = dp.Variable(data.n_features)
    problem = dp.Problem(dp.LogisticLoss(data, th), constraint=dp.L2Ball(th, 5.0),
                         regularizer=dp.L2Squared(th, 1e-3))
    rel = dp.ObjectivePerturbation(0.5, 1e-6, ledger=dp.Ledger()).run(problem, seed=0, keep_diagnostics=True)
    assert rel.parameters["backend"] == "scipy"
    assert rel.diagnostics is not None and rel.diagnostics.details["answered_by"] == "accelerator"
    assert rel.diagnostics.oracle_results[0].recheck is not None


# -- BLAS threads --------------------------------------------------------------------------


def test_blas_threads_are_limited_inside_the_solve_and_restored_after():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    blas = [i for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]
    if not blas:
        pytest.skip("no BLAS library visible to threadpoolctl")
    before = [i["num_threads"] for i in blas]
    with sb.blas_threads(None):
        assert all(i["num_threads"] == 1 for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas")
    assert [i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"] == before


def test_solutions_do_not_depend_on_the_thread_setting():
    p = _perturbed(onehot_table(seed=10), radius=1.0)
    backend = registry.get("scipy")
    one = backend.solve_problem(p, SolveOptions(distance_tolerance=TOL))
    two = backend.solve_problem(p, SolveOptions(distance_tolerance=TOL, threads=2))
    assert one.certified and two.certified
    assert np.linalg.norm(one.solution - two.solution) <= 2 * TOL

def test_fista_stops_when_rounding_alone_exceeds_the_requested_tolerance():
    """A ‖G‖ target below the certificate's floating-point slack cannot be met: the scipy
    backend stops as soon as it has converged to float precision (limit "precision", not
    certified: the mechanism's a-priori fallback answers) instead of running 100,000 steps."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (200, 5))
    data = dp.Dataset(X, X @ np.ones(5), x_bound=10.0, y_bound=5.0)
    th = dp.Variable(5)
    problem = dp.Problem(dp.SquaredLoss(data, th), constraint=dp.L2Ball(th, 10.0),
                         regularizer=dp.L2Squared(th, 0.01))
    backend = dp.backends.get("scipy")
    prepared = backend.prepare(problem)
    result = backend.solve(prepared, rng.normal(size=5), SolveOptions(tolerance=1e-12))
    assert result.limit is Limit.PRECISION and not result.solver_certified
    assert int(result.message.split("=")[1]) < 5_000
    loose = backend.solve(prepared, rng.normal(size=5), SolveOptions(tolerance=1e-6))
    assert loose.solver_certified
