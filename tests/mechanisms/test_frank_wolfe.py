"""Private Frank–Wolfe (TTZ14 Algs. 4 and 5), the fast LASSO path and the structured sets.

Audit pairs (replace one row, the other rows fixed) are built so the
mechanisms' analyses are tight:

* Alg. 4: θ ∈ ℝ¹ over ``VertexPolytope`` rows {−1, +1 (×10)}; nine rows with
  x = 0 and the tenth (1, +1) in D0, (1, −1) in D1 under a Huber loss with
  threshold h, so the gradient at θ₁ moves by exactly 2L₁/n = Δ.  The score
  of −1 moves against the ten copies of +1, which makes the noisy max's loss
  approach the claim (≈ 1.9 of 2 for Laplace, ≈ 1.8 for Gumbel at T = 1).
* Alg. 5: θ ∈ [−1, 1] (``L2Ball``), T = 1: the release is −sign(g + b), a
  threshold event of the Gaussian; a filler row shifts g so that a σ cut by
  a factor 4 puts the event in the measurable tail.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

import dpopt as dp
from dpopt.errors import DataError, MechanismError, ModelError
from dpopt.mechanisms.gaussian_frank_wolfe import GaussianFrankWolfe, paper_sigma_checked
from dpopt.mechanisms.polytope_frank_wolfe import PolytopeFrankWolfe
from dpopt.modeling.structured_sets import GroupL1Ball, HPolytope, NuclearNormBall
from dpopt.numerics.lasso_fast import DirectLassoGradient, IncrementalLassoGradient
from dpopt.privacy.noisy_max import noisy_max_budget
from dpopt.testing import audit
from dpopt.testing.coverage import covers
from dpopt.testing.views import assert_same_view

# ----------------------------------------------------------------------------- structured sets


def _brute_min(V: np.ndarray, g: np.ndarray) -> float:
    return float(np.min(V @ g))


def test_group_l1_ball_lmo_projection_width():
    C = GroupL1Ball(6, 2.0, [[0, 1], [2, 3, 4], [5]])
    rng = np.random.default_rng(0)
    for _ in range(20):
        g = rng.normal(size=6)
        s = C.lmo(g)
        assert C.norm(s) == pytest.approx(2.0)
        assert s @ g == pytest.approx(-C.support(-g))
        # no point of the ball does better than the LMO (random feasible points)
        pts = np.array([C.project(3 * rng.normal(size=6)) for _ in range(50)])
        assert np.all(pts @ g >= s @ g - 1e-12)
        v = 3 * rng.normal(size=6)
        pv = C.project(v)
        assert C.norm(pv) <= 2.0 + 1e-12 and C.contains(pv)
        # projection optimality: ⟨v − P(v), w − P(v)⟩ ≤ 0 for w in C
        assert np.all((pts - pv) @ (v - pv) <= 1e-9)
    assert C.radius(1) == pytest.approx(2.0 * math.sqrt(3)) and C.radius(2) == 2.0
    gw = C.gaussian_width()
    mc = C.gaussian_width_monte_carlo(n_samples=100_000, seed=1)
    assert mc.low - 0.01 <= gw.value <= mc.high + 0.01
    labels = GroupL1Ball(5, 1.0, [0, 0, 1, 1, 1])
    assert [list(g) for g in labels.groups] == [[0, 1], [2, 3, 4]]
    with pytest.raises(ModelError, match="partition"):
        GroupL1Ball(4, 1.0, [[0, 1], [1, 2, 3]])


def test_nuclear_norm_ball():
    C = NuclearNormBall(12, 1.5, shape=(3, 4))
    rng = np.random.default_rng(1)
    g = rng.normal(size=12)
    s = C.lmo(g)
    assert C.norm(s) == pytest.approx(1.5)
    assert s @ g == pytest.approx(-1.5 * np.linalg.norm(g.reshape(3, 4), 2))
    assert np.linalg.matrix_rank(s.reshape(3, 4)) == 1
    pv = C.project(5 * g)
    assert C.norm(pv) == pytest.approx(1.5) and C.contains(pv)
    big = NuclearNormBall(600 * 500, 1.0, shape=(600, 500))  # the svds path
    G = rng.normal(size=600 * 500)
    assert big.support(G) == pytest.approx(np.linalg.norm(G.reshape(600, 500), 2), rel=1e-8)
    with pytest.raises(ModelError, match="entries"):
        NuclearNormBall(10, 1.0, shape=(3, 4))


def test_hpolytope():
    A = np.vstack([np.eye(3), -np.eye(3), np.ones((1, 3))])
    b = np.array([1, 1, 1, 1, 1, 1, 1.5])
    C = HPolytope(A, b)
    V = C.vertices()
    rng = np.random.default_rng(2)
    for _ in range(10):
        g = rng.normal(size=3)
        assert C.lmo(g) @ g == pytest.approx(_brute_min(V, g), abs=1e-9)
    assert C.contains(np.array([0.5, 0.5, 0.5])) and not C.contains(np.array([1.0, 1.0, 1.0]))
    pv = C.project(np.array([2.0, 2.0, 2.0]))
    assert pv == pytest.approx([0.5, 0.5, 0.5], abs=1e-7)
    assert C.radius("inf") == 1.0 and C.diameter("inf") == 2.0
    assert C.radius(1) >= np.abs(V).sum(axis=1).max() - 1e-9  # an upper bound
    assert isinstance(C.to_vertex_polytope(), dp.sets.VertexPolytope)
    with pytest.raises(ModelError, match="unbounded"):
        HPolytope([[1.0, 0.0]], [1.0])
    with pytest.raises(ModelError, match="empty"):
        HPolytope([[1.0], [-1.0]], [-1.0, -1.0])


# ----------------------------------------------------------------------------- calibration


@pytest.mark.parametrize("selection,factor", [("laplace", 0.5), ("gumbel", 0.125)])
@pytest.mark.parametrize("eps,delta,T", [(1.0, 1e-6, 100), (0.1, 1e-5, 1000), (5.0, 1e-3, 10), (1.0, 0.0, 50)])
def test_noisy_max_budget_composes(selection, factor, eps, delta, T):
    b = noisy_max_budget(eps, delta, T, selection)
    if delta == 0:
        assert b.step_epsilon == pytest.approx(eps / T) and b.composition == "basic"
        return
    rho = factor * T * b.step_epsilon**2
    composed = min(T * b.step_epsilon, rho + 2 * math.sqrt(rho * math.log(1 / delta)))
    assert composed <= eps * (1 + 1e-9)
    assert b.step_epsilon >= eps / T


@pytest.mark.parametrize("T,eps,delta,n", [(1, 1.0, 1e-5, 1000), (100, 1.0, 1e-6, 10_000), (1000, 0.5, 1e-8, 10_000),
                                           (10, 8.0, 1e-3, 100)])
def test_accountant_sigma_never_above_paper_sigma(T, eps, delta, n):
    L = 2.0
    base = dict(steps=T, ledger=dp.Ledger())
    paper, _ = GaussianFrankWolfe(eps, delta, calibration="paper", **base).noise_sigma(L, n, T)
    for method in ("rdp", "zcdp"):
        acc, _ = GaussianFrankWolfe(eps, delta, accountant=method, **base).noise_sigma(L, n, T)
        assert 0 < acc <= paper
    sigma, raised = paper_sigma_checked(L, n, T, eps, delta)
    assert sigma == paper and not raised  # the paper's σ is valid (exact check) on this grid


# ----------------------------------------------------------------------------- fast path


def _lasso(n=400, p=15, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, p))
    theta = np.zeros(p)
    theta[:3] = [0.6, -0.3, 0.1]
    y = np.clip(X @ theta + 0.1 * rng.normal(size=n), -1, 1)
    data = dp.Dataset(X, y, x_bound=1.0, x_norm="inf", y_bound=1.0)
    v = dp.Variable(p)
    return X, y, dp.Problem(dp.SquaredLoss(data, v), constraint=dp.L1Ball(v, 1.0))


@pytest.mark.parametrize("selection", ["laplace", "gumbel"])
@pytest.mark.parametrize("step", ["standard", "paper"])
def test_fast_path_equals_straightforward_path(selection, step):
    X, y, prob = _lasso()
    out = []
    for fast in (True, False):
        mech = PolytopeFrankWolfe(2.0, 1e-6, steps=300, selection=selection, step=step, fast=fast,
                                  ledger=dp.Ledger())
        r = mech.run(prob, seed=7, diagnostics=False)  # run_lasso below takes no counts
        assert r.parameters["fast_lasso"] is fast
        out.append(r.theta)
    np.testing.assert_allclose(out[0], out[1], rtol=0, atol=1e-12)
    # the matrix API: dense and sparse, incremental and direct, same noise → same iterates
    thetas = [PolytopeFrankWolfe(2.0, 1e-6, steps=300, selection=selection, step=step, ledger=dp.Ledger())
              .run_lasso(M, y, radius=1.0, seed=7, fast=f).theta
              for M in (X, sp.csr_matrix(X)) for f in (True, False)]
    for t in thetas:
        np.testing.assert_allclose(t, out[0], rtol=0, atol=1e-12)


def test_incremental_gradient_matches_direct_on_sparse_columns():
    rng = np.random.default_rng(3)
    X = sp.random(300, 40, density=0.05, random_state=4, format="csr")
    y = rng.uniform(-1, 1, 300)
    theta0 = np.zeros(40)
    direct = DirectLassoGradient(X, y, theta0, lam=0.1)
    sparse_gram = IncrementalLassoGradient(X, y, theta0, lam=0.1)  # "auto": Gram formed by a sparse product
    sparse_cols = IncrementalLassoGradient(X, y, theta0, lam=0.1, gram="columns")
    dense_cols = IncrementalLassoGradient(X.toarray(), y, theta0, lam=0.1, gram="columns")
    assert sparse_gram._gram is not None and sparse_cols._gram is None
    incremental = (sparse_gram, sparse_cols, dense_cols)
    for t in range(200):
        j, val, mu = int(rng.integers(40)), float(rng.choice([-1.0, 1.0])), 2.0 / (t + 2)
        for o in (*incremental, direct):
            o.step(mu, j, val)
        for o in incremental:
            np.testing.assert_allclose(o.gradient(), direct.gradient(), atol=1e-12)
    for o in incremental:
        np.testing.assert_allclose(o.theta, direct.theta, atol=1e-14)
    with pytest.raises(ValueError, match="gram must be"):
        IncrementalLassoGradient(X, y, theta0, gram="full")


# ----------------------------------------------------------------------------- convergence


def _nonprivate_optimum(prob: dp.Problem, iters: int = 3000) -> float:
    """Projected gradient descent with FISTA momentum (non-private reference)."""
    C = prob.constraint
    step = 1.0 / prob.smoothness
    x = z = C.center()
    t = 1.0
    for _ in range(iters):
        x_new = C.project(z - step * prob.smooth_gradient(z))
        t_new = 0.5 * (1 + math.sqrt(1 + 4 * t * t))
        z, x, t = x_new + (t - 1) / t_new * (x_new - x), x_new, t_new
    return prob.smooth_value(x)


@pytest.mark.parametrize("selection", ["laplace", "gumbel"])
def test_alg4_converges_as_epsilon_grows(selection):
    """Excess risk ≤ 2Γ/(T+2) + (selection error), the bound behind Thm. 5.5 (Jaggi's Thm. 1 with an
    additive LMO error): Laplace noise ≤ b·log(kT/ζ) per score, Gumbel argmin error ≤ β(log k + log(T/ζ))."""
    _, _, prob = _lasso(n=2000, p=20, seed=1)
    best = _nonprivate_optimum(prob)
    T, zeta, gamma = 400, 1e-3, 8.0  # Γ ≤ 2·(x_bound·diam₁(C))² = 8 for the declared bounds
    excess = []
    for eps in (0.5, 5.0, 50.0, 5000.0):
        bound_sel = None
        for seed in range(3):
            r = PolytopeFrankWolfe(eps, 1e-6, steps=T, selection=selection, ledger=dp.Ledger()).run(prob, seed=seed)
            k, b = r.parameters["candidates"], r.parameters["noise_scale"]
            bound_sel = 2 * b * math.log(k * T / zeta) if selection == "laplace" else b * (math.log(k) + math.log(T / zeta))
            gap = prob.smooth_value(r.theta) - best
            assert -1e-9 <= gap <= 2 * gamma / (T + 2) + bound_sel
            excess.append((eps, gap))
    worst_large = max(g for e, g in excess if e == 5000.0)
    worst_small = max(g for e, g in excess if e == 0.5)
    assert worst_large < 0.2 * worst_small and worst_large < 2e-3


def _ball_problem(constraint_factory, p=12, n=3000, seed=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    y = np.clip(X @ rng.normal(size=p) * 0.5 + 0.05 * rng.normal(size=n), -1, 1)
    v = dp.Variable(p)
    return dp.Problem(dp.SquaredLoss(dp.Dataset(X, y, x_bound=1.0, y_bound=1.0), v),
                      constraint=constraint_factory(v))


@pytest.mark.parametrize("name,factory", [
    ("l2", lambda v: dp.L2Ball(v, 1.0)),
    ("linf", lambda v: dp.LinfBall(v, 0.3)),
    ("l1", lambda v: dp.L1Ball(v, 1.0)),
    ("group", lambda v: GroupL1Ball(v, 1.0, [list(range(0, 4)), list(range(4, 8)), list(range(8, 12))])),
    ("nuclear", lambda v: NuclearNormBall(v, 1.0, shape=(3, 4))),
    ("hpolytope", lambda v: HPolytope(np.vstack([np.eye(12), -np.eye(12), np.ones((1, 12))]),
                                      np.r_[0.5 * np.ones(24), 1.0], variable=v)),
])
def test_alg5_converges_as_epsilon_grows(name, factory):
    """Excess ≤ 2Γ/(T+2) + 2σ(G_C + ‖C‖₂√(2 log(T/ζ))): the Gaussian-width bound behind Thm. B.2."""
    prob = _ball_problem(factory)
    C = prob.constraint
    best = _nonprivate_optimum(prob, 1500)
    T, zeta = 150, 1e-3
    gamma = 2.0 * C.diameter(2) ** 2  # φ'' = 2, ‖x‖₂ ≤ 1
    width = C.gaussian_width(n_samples=400).high
    gaps = {}
    for eps in (0.5, 1e4):
        r = GaussianFrankWolfe(eps, 1e-6, steps=T, ledger=dp.Ledger()).run(prob, seed=0)
        sigma = r.parameters["noise_scale"]
        gap = prob.smooth_value(r.theta) - best
        assert C.contains(r.theta, tol=1e-6)
        assert gap <= 2 * gamma / (T + 2) + 2 * sigma * (width + C.radius(2) * math.sqrt(2 * math.log(T / zeta)))
        gaps[eps] = gap
    assert gaps[1e4] < 0.5 * gaps[0.5] + 1e-3 and gaps[1e4] < 0.03


# ----------------------------------------------------------------------------- audits

N_ROWS, H, K_COPIES, FAST = 10, 0.1, 10, 3000


def _pair(filler_label: float | None = None):
    X = np.zeros((N_ROWS, 1))
    y = np.zeros(N_ROWS)
    X[-1, 0], y[-1] = 1.0, 1.0
    if filler_label is not None:
        X[0, 0], y[0] = 1.0, filler_label
    d0 = dp.Dataset(X, y, x_bound=1.0, y_bound=1.0)
    return d0, d0.replace_row(N_ROWS - 1, [1.0], -1.0)


class CutNoisePolytope(PolytopeFrankWolfe):
    """Mutation: the selection noise cut by a factor 2."""

    def selection_scale(self, sensitivity, budget):
        return super().selection_scale(sensitivity, budget) / 2.0


class CutNoiseGaussian(GaussianFrankWolfe):
    """Mutation: σ cut by a factor 4."""

    def noise_sigma(self, lipschitz_l2, n, steps, dim=1):
        sigma, record = super().noise_sigma(lipschitz_l2, n, steps, dim)
        return sigma / 4.0, record


def _polytope_runner(cls, selection):
    V = np.array([[-1.0]] + [[1.0]] * K_COPIES)

    def run(data, seed):
        v = dp.Variable(1)
        prob = dp.Problem(dp.HuberLoss(data, v, h=H), constraint=dp.sets.VertexPolytope(V, variable=v))
        return cls(2.0, 0.0, steps=1, selection=selection, ledger=dp.Ledger()).run(prob, seed=seed).theta
    return run


@pytest.mark.parametrize("selection", ["laplace", "gumbel"])
@covers(PolytopeFrankWolfe, kind="audit")
@covers(PolytopeFrankWolfe, kind="mutation")
def test_alg4_audit_and_mutation(selection):
    d0, d1 = _pair()
    res = audit(_polytope_runner(PolytopeFrankWolfe, selection), d0, d1, claimed_epsilon=2.0, n_runs=FAST, seed=1)
    print(f"{selection}: {res.summary()}")
    assert not res.violates, res.summary()
    assert res.epsilon_lower > 1.0, res.summary()  # the pair is nearly tight: the audit has power
    mutant = audit(_polytope_runner(CutNoisePolytope, selection), d0, d1, claimed_epsilon=2.0, n_runs=FAST, seed=2)
    print(f"{selection} noise/2: {mutant.summary()}")
    assert mutant.violates, mutant.summary()


def _gaussian_runner(cls):
    def run(data, seed):
        v = dp.Variable(1)
        prob = dp.Problem(dp.HuberLoss(data, v, h=H), constraint=dp.L2Ball(v, 1.0))
        return cls(2.0, 1e-3, steps=1, ledger=dp.Ledger()).run(prob, seed=seed).theta
    return run


@covers(GaussianFrankWolfe, kind="audit")
@covers(GaussianFrankWolfe, kind="mutation")
def test_alg5_audit_and_mutation():
    # Place the threshold: with σ' = σ/4 the D1 gradient g1 = (u + h)/n sits 2.3σ' above 0.
    sigma, _ = GaussianFrankWolfe(2.0, 1e-3, steps=1, ledger=dp.Ledger()).noise_sigma(H, N_ROWS, 1)
    u = min(H, max(0.0, 2.3 * sigma / 4 * N_ROWS - H))
    d0, d1 = _pair(filler_label=-u / 1.0)
    res = audit(_gaussian_runner(GaussianFrankWolfe), d0, d1, claimed_epsilon=2.0, claimed_delta=1e-3,
                n_runs=FAST, seed=3)
    print(f"gaussian: {res.summary()}")
    assert not res.violates, res.summary()
    mutant = audit(_gaussian_runner(CutNoiseGaussian), d0, d1, claimed_epsilon=2.0, claimed_delta=1e-3,
                   n_runs=FAST, seed=4)
    print(f"gaussian sigma/4: {mutant.summary()}")
    assert mutant.violates, mutant.summary()


@pytest.mark.slow
@covers(PolytopeFrankWolfe, kind="audit")
@pytest.mark.parametrize("selection", ["laplace", "gumbel"])
def test_alg4_large_audit(selection):
    d0, d1 = _pair()
    for seed in range(3):
        res = audit(_polytope_runner(PolytopeFrankWolfe, selection), d0, d1, claimed_epsilon=2.0,
                    n_runs=20_000, seed=10 + seed)
        assert not res.violates, res.summary()


# ------------------------------------------------------- audits over T > 1 steps (composition)
#
# θ ∈ [−1, 1] (vertices {−1, +1}, or the ℓ2 ball of radius 1); nine rows x = 0 and a tenth
# (1, +2) in D0, (1, −2) in D1 with y_bound = 2, under a Huber loss with threshold h: the
# residual θ ∓ 2 never enters [−h, h] on C, so the gradient differs by exactly 2L₁/n = 2L₂/n
# at *every* iterate and each of the T steps leaks as much as its analysis allows.  The
# mutants divide the noise scale of their own plan by 4 (read back through ``plan``).

MULTI_T = 5


def _multi_pair():
    X, y = np.zeros((N_ROWS, 1)), np.zeros(N_ROWS)
    X[-1, 0], y[-1] = 1.0, 2.0
    d0 = dp.Dataset(X, y, x_bound=1.0, y_bound=2.0)
    return d0, d0.replace_row(N_ROWS - 1, [1.0], -2.0)


class QuarterNoisePolytope(PolytopeFrankWolfe):
    """Mutation: the planned selection noise divided by 4."""

    def plan(self, problem, options=None):
        from dataclasses import replace

        plan = super().plan(problem, options)
        return replace(plan, scale=plan.scale / 4.0)


class QuarterNoiseGaussian(GaussianFrankWolfe):
    """Mutation: the planned σ divided by 4."""

    def plan(self, problem, options=None):
        from dataclasses import replace

        plan = super().plan(problem, options)
        return replace(plan, noise=plan.noise.scaled(0.25))


def _multi_runner(cls, steps, **kwargs):
    def run(data, seed):
        v = dp.Variable(1)
        if cls in (GaussianFrankWolfe, QuarterNoiseGaussian):
            c = dp.L2Ball(v, 1.0)
        else:
            c = dp.sets.VertexPolytope(np.array([[-1.0], [1.0]]), variable=v)
        prob = dp.Problem(dp.HuberLoss(data, v, h=H), constraint=c)
        return cls(2.0, steps=steps, ledger=dp.Ledger(), **kwargs).run(prob, seed=seed).theta
    return run


MULTI_CASES = [
    (PolytopeFrankWolfe, QuarterNoisePolytope, {"delta": 0.0, "selection": "laplace"}),
    (PolytopeFrankWolfe, QuarterNoisePolytope, {"delta": 1e-3, "selection": "gumbel"}),
    (GaussianFrankWolfe, QuarterNoiseGaussian, {"delta": 1e-3}),
]


@pytest.mark.parametrize(("honest", "mutant", "kwargs"), MULTI_CASES, ids=["laplace", "gumbel", "gaussian"])
@covers(PolytopeFrankWolfe, GaussianFrankWolfe, kind="audit")
@covers(PolytopeFrankWolfe, GaussianFrankWolfe, kind="mutation")
def test_multi_step_audit_and_mutation(honest, mutant, kwargs):
    """T = 5 composed steps: the audit's lower bound stays below the claim, and a quarter of
    the noise is caught (measured lower bounds, seeds 2–3: honest 0.28–0.56, mutants 2.99–3.75)."""
    d0, d1 = _multi_pair()
    delta = kwargs["delta"]
    res = audit(_multi_runner(honest, MULTI_T, **kwargs), d0, d1, claimed_epsilon=2.0, claimed_delta=delta,
                n_runs=FAST, seed=21)
    print(f"T={MULTI_T} {kwargs}: {res.summary()}")
    assert not res.violates, res.summary()
    bad = audit(_multi_runner(mutant, MULTI_T, **kwargs), d0, d1, claimed_epsilon=2.0, claimed_delta=delta,
                n_runs=FAST, seed=22)
    print(f"T={MULTI_T} {kwargs} noise/4: {bad.summary()}")
    assert bad.violates, bad.summary()


@pytest.mark.slow
@covers(PolytopeFrankWolfe, GaussianFrankWolfe, kind="audit")
@pytest.mark.parametrize(("honest", "mutant", "kwargs"), MULTI_CASES, ids=["laplace", "gumbel", "gaussian"])
def test_multi_step_large_audit(honest, mutant, kwargs):
    d0, d1 = _multi_pair()
    for steps, seed in ((5, 31), (10, 32)):
        res = audit(_multi_runner(honest, steps, **kwargs), d0, d1, claimed_epsilon=2.0,
                    claimed_delta=kwargs["delta"], n_runs=20_000, seed=seed)
        assert not res.violates, res.summary()


# ----------------------------------------------------------------------------- bad input


def test_bad_inputs():
    X, y, prob = _lasso(n=50, p=4)
    v = prob.loss.variable
    with pytest.raises(MechanismError, match="T ≤ 0"):
        PolytopeFrankWolfe(1.0, steps=0)
    with pytest.raises(MechanismError, match="T ≤ 0"):
        GaussianFrankWolfe(1.0, 1e-6, steps=-3)
    with pytest.raises(MechanismError, match="delta > 0"):
        GaussianFrankWolfe(1.0, 0.0)
    with pytest.raises(MechanismError, match="selection"):
        PolytopeFrankWolfe(1.0, selection="uniform")
    # Alg. 4 needs a vertex list
    for C in (dp.L2Ball(v, 1.0), HPolytope(np.vstack([np.eye(4), -np.eye(4)]), np.ones(8), variable=v)):
        with pytest.raises(MechanismError, match="vertex list"):
            PolytopeFrankWolfe(1.0, steps=5, ledger=dp.Ledger()).run(dp.Problem(prob.loss, constraint=C))
    # no constraint: the squared loss has no finite Lipschitz constant, and FW needs C
    with pytest.raises(MechanismError, match="constraint set"):
        PolytopeFrankWolfe(1.0, steps=5).run(dp.Problem(prob.loss))
    # a loss without a finite ℓ2-Lipschitz constant (x declared in ℓ∞ only bounds ℓ2 by √p·x_bound: finite);
    # an unbounded custom loss constant is refused:
    class Unbounded(dp.SquaredLoss):
        def dphi_bound(self, z_bound):
            return math.inf
    bad = dp.Problem(Unbounded(prob.loss.data, v), constraint=dp.L1Ball(v, 1.0))
    with pytest.raises(MechanismError, match="ℓ1-Lipschitz"):
        PolytopeFrankWolfe(1.0, steps=5).run(bad)
    with pytest.raises(MechanismError, match="ℓ2-Lipschitz"):
        GaussianFrankWolfe(1.0, 1e-6, steps=5).run(bad)
    with pytest.raises(MechanismError, match="L1Norm"):
        PolytopeFrankWolfe(1.0, steps=5).run(dp.Problem(prob.loss, constraint=dp.L1Ball(v, 1.0),
                                                             regularizer=dp.L1Norm(v, 0.1)))
    with pytest.raises(MechanismError, match="LASSO"):
        PolytopeFrankWolfe(1.0, steps=5, fast=True).run(dp.Problem(prob.loss, constraint=dp.Simplex(v)))
    # data outside the declared bounds is mapped onto them row by row, never refused for its values
    from dpopt.mechanisms.polytope_frank_wolfe import _check_lasso_data

    Xc, yc = _check_lasso_data(X * 3.21, y * 7.0, 1.0, 1.0)
    assert np.abs(Xc).max() <= 1.0 and np.abs(yc).max() <= 1.0
    assert PolytopeFrankWolfe(1.0, steps=5).run_lasso(X * 3.21, y * 7.0, radius=1.0, seed=0).private
    with pytest.raises(DataError, match="shapes"):  # only shapes (public) are refused
        PolytopeFrankWolfe(1.0, steps=5).run_lasso(X, y[:-1], radius=1.0)
    # nothing was charged by the refused runs above
    ledger = dp.Ledger(epsilon_budget=1.0)
    with pytest.raises(MechanismError):
        PolytopeFrankWolfe(1.0, steps=5, ledger=ledger).run(dp.Problem(prob.loss, constraint=dp.L2Ball(v, 1.0)))
    assert ledger.spent == (0.0, 0.0)


def test_lasso_data_reads_non_finite_entries_as_zero():
    """NaN and ±inf in X (dense or sparse) or y read as 0, then the entries are clipped onto the
    declared bounds; the caller's arrays are left as they were."""
    from dpopt.mechanisms.polytope_frank_wolfe import _check_lasso_data

    X = np.array([[0.5, np.nan, 3.0], [-np.inf, 0.2, -0.1]])
    y = np.array([np.inf, -2.0])
    expected = np.array([[0.5, 0.0, 1.0], [0.0, 0.2, -0.1]])
    Xc, yc = _check_lasso_data(X, y, 1.0, 1.0)
    np.testing.assert_array_equal(Xc, expected)
    np.testing.assert_array_equal(yc, [0.0, -1.0])
    Xs, _ = _check_lasso_data(sp.csr_matrix(X), y, 1.0, 1.0)
    np.testing.assert_array_equal(Xs.toarray(), expected)
    assert np.isnan(X[0, 1]) and np.isinf(y[0])  # the input is not modified


@covers(PolytopeFrankWolfe, kind="neighbour")
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("fast", [True, False])
def test_run_lasso_looks_the_same_with_a_nan_row_and_its_neighbour(sparse, fast):
    """A table whose row 3 holds NaN and inf entries (and an infinite label) and its neighbour with
    an ordinary row 3: both release, with the same public record and the same charge — one row's
    values decide no refusal (docs/design.md, privacy rules)."""
    from dpopt.testing.views import assert_same_view

    X, y, _ = _lasso(n=60, p=4)
    bad_X, bad_y = X.copy(), y.copy()
    bad_X[3] = [np.nan, np.inf, -np.inf, np.nan]
    bad_y[3] = np.inf

    def run(data, ledger):
        features, labels = data
        features = sp.csr_matrix(features) if sparse else features
        return PolytopeFrankWolfe(1.0, 1e-6, steps=6, ledger=ledger).run_lasso(features, labels, radius=1.0,
                                                                               seed=2, fast=fast)

    assert_same_view(run, (bad_X, bad_y), (X, y))


def test_release_reports_mode_and_sigma_and_charges_once():
    prob = _ball_problem(lambda v: dp.L2Ball(v, 1.0), n=500)
    ledger = dp.Ledger(epsilon_budget=1.5, delta_budget=1e-5)
    r = GaussianFrankWolfe(1.0, 1e-6, steps=20, calibration="paper", ledger=ledger).run(prob, seed=0)
    assert r.parameters["calibration"] == "paper"
    # σ as drawn is the paper's σ rounded up onto the grid (σ²/γ² an integer)
    assert r.parameters["noise_scale_paper"] <= r.parameters["noise_scale"] <= r.parameters["noise_scale_paper"] * (1 + 1e-6)
    assert ledger.spent == (1.0, 1e-6)
    with pytest.raises(dp.errors.BudgetExceededError):
        GaussianFrankWolfe(1.0, 1e-6, steps=20, ledger=ledger).run(prob, seed=0)
    r2 = GaussianFrankWolfe(0.5, 1e-6, steps=20, ledger=ledger).run(prob)
    assert r2.parameters["calibration"] == "accountant" and r2.parameters["noise_scale"] < r2.parameters["noise_scale_paper"]
    assert r2.parameters["accountant"] == "zcdp"  # zCDP of the discrete Gaussian by default
    assert not r2.seed.user_seeded
    assert "(0.5, 1e-06)-DP" in r2.summary()


def test_lasso_bench_smoke(tmp_path, capsys):
    from dpopt.bench import get

    assert get("lasso").main(["--n", "400", "--p", "20", "--iters", "60", "--baseline-iters", "10",
                              "--quiet", "--out", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert "straightforward/fast" in text and (tmp_path / "runs.csv").exists()


# ------------------------------------------- iterates outside C keep the declared sensitivity

L1_VERTICES = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])


def _bounded_squared_data(n: int = 12, seed: int = 0) -> dp.Dataset:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    X *= rng.uniform(0.0, 1.0, size=(n, 1)) / np.linalg.norm(X, axis=1, keepdims=True)
    return dp.Dataset(X, rng.uniform(-0.5, 0.5, size=n), x_bound=1.0, y_bound=0.5)


def _spy_gradients(monkeypatch):
    """Record every iterate at which a clipped gradient is taken (GaussianFrankWolfe sums
    ``ClippedGradient`` on the grid); returns the clipped smooth gradient and the record."""
    from dpopt.numerics.clipping import ClippedGradient
    from dpopt.numerics.fw_oracles import clipped_smooth_gradient

    real_call, seen = ClippedGradient.__call__, []

    def spy(self, theta):
        seen.append(np.array(theta))
        return real_call(self, theta)

    monkeypatch.setattr(ClippedGradient, "__call__", spy)
    return clipped_smooth_gradient, seen


@pytest.mark.parametrize("push", [1.01, 3.0])
def test_alg5_lmo_outside_the_set_keeps_the_declared_sensitivity(monkeypatch, push):
    """An LMO answer at push × the radius (an LP feasible only to its
    tolerance, exaggerated) still gives per-example gradients within L₂ and a neighbour gap
    within Δ = 2L₂/n; unclipped, the squared loss breaks the first at 1.01× and the second at 3×."""
    from dpopt.modeling.balls import L2Ball
    from dpopt.numerics.clipping import ClippedGradient
    from dpopt.testing.sensitivity import extreme_rows, neighbour_gradient_gap

    data, v = _bounded_squared_data(), dp.Variable(2)

    def make(d):
        return dp.Problem(dp.SquaredLoss(d, v), constraint=dp.L2Ball(v, 1.0))

    real_lmo = L2Ball._lmo
    monkeypatch.setattr(L2Ball, "_lmo", lambda self, g: push * real_lmo(self, g))
    real, seen = _spy_gradients(monkeypatch)
    release = GaussianFrankWolfe(1.0, 1e-5, steps=3, ledger=dp.Ledger()).run(make(data), seed=0)
    theta = seen[1]  # μ₀ = 1: θ₂ is the pushed LMO answer itself
    assert np.linalg.norm(theta) == pytest.approx(push)
    lip, delta = release.parameters["lipschitz_l2"], release.parameters["sensitivity_l2"]
    per = ClippedGradient(make(data).loss, norm=2, bound=lip).per_example(theta)
    assert np.linalg.norm(per, axis=1).max() <= lip
    rows = extreme_rows(theta, x_bound=1.0, y_bound=0.5)
    gap = neighbour_gradient_gap(lambda d: real(make(d), norm=2), data, theta, rows, measure=np.linalg.norm)
    assert gap <= delta
    raw = [abs(2.0 * (x @ theta - y)) * np.linalg.norm(x) for x, y in rows]
    raw_gap = neighbour_gradient_gap(lambda d: make(d).smooth_gradient, data, theta, rows, measure=np.linalg.norm)
    assert max(raw) > lip and (np.linalg.norm(theta) < 2 or raw_gap > delta)  # the checks have teeth


@pytest.mark.parametrize("push", [1.01, 3.0])
def test_alg4_vertex_outside_the_set_keeps_the_score_sensitivity(monkeypatch, push):
    """Alg. 4's scores ⟨s, ∇L⟩ have sensitivity 2L₁‖C‖₁/n from ‖∇ℓ‖∞ ≤ L₁: with vertices
    pushed to push × themselves, per-example gradients stay within L₁ in ℓ∞ and the score
    gap over neighbours within the declared sensitivity."""
    from dpopt.numerics import fw_oracles as fw
    from dpopt.numerics.clipping import ClippedGradient
    from dpopt.testing.sensitivity import extreme_rows, neighbour_gradient_gap

    data, v = _bounded_squared_data(), dp.Variable(2)

    def make(d):
        return dp.Problem(dp.SquaredLoss(d, v), constraint=dp.sets.VertexPolytope(L1_VERTICES, variable=v))

    real_vertex, seen = fw.VertexScorer.vertex, []
    monkeypatch.setattr(fw.VertexScorer, "vertex", lambda self, i: push * real_vertex(self, i))
    real_gradient = fw.ProblemGradient.gradient
    monkeypatch.setattr(fw.ProblemGradient, "gradient",
                        lambda self: (seen.append(np.array(self.theta)), real_gradient(self))[1])
    release = PolytopeFrankWolfe(1.0, steps=3, ledger=dp.Ledger()).run(make(data), seed=0)
    theta = seen[1]  # μ₀ = 1: the second gradient is taken at a pushed vertex
    assert np.abs(theta).sum() == pytest.approx(push)
    lip1, sens = release.parameters["lipschitz_l1"], release.parameters["sensitivity_score"]
    per = ClippedGradient(make(data).loss, norm="inf", bound=lip1).per_example(theta)
    assert np.abs(per).max() <= lip1

    def score_gap(diff):
        return float(np.max(np.abs(L1_VERTICES @ diff)))

    rows = extreme_rows(theta, x_bound=1.0, y_bound=0.5)
    assert neighbour_gradient_gap(lambda d: fw.clipped_smooth_gradient(make(d), norm="inf"), data, theta, rows,
                                  measure=score_gap) <= sens
    raw = [abs(2.0 * (x @ theta - y)) * np.abs(x).max() for x, y in rows]
    assert max(raw) > lip1  # unclipped, the pushed vertex breaks the declared L₁


def test_lasso_gradient_is_taken_inside_the_declared_l1_ball():
    """The incremental LASSO oracle cannot clip per example; at an iterate with ‖θ‖₁ = 1.01 r
    it takes the gradient at the retraction into the r-ball, where every per-example
    gradient is within L₁ = 2(r·x_bound + y_bound)·x_bound, and both oracles agree."""
    rng = np.random.default_rng(0)
    X, y = rng.uniform(-1, 1, size=(15, 3)), rng.uniform(-0.5, 0.5, size=15)
    r = 2.0
    theta = np.array([1.01 * r, 0.0, 0.0])
    inc = IncrementalLassoGradient(X, y, np.zeros(3))
    inc.step(1.0, 0, 1.01 * r)
    direct = DirectLassoGradient(X, y, theta)
    g_inc, g_dir = inc.gradient(l1_radius=r), direct.gradient(l1_radius=r)
    assert g_inc == pytest.approx(g_dir, rel=1e-10)
    inside = theta * (r / np.abs(theta).sum())
    per = 2.0 * (X @ inside - y)[:, None] * X
    assert np.abs(per).max() <= 2.0 * (r * 1.0 + 0.5) * 1.0
    assert g_dir == pytest.approx(per.mean(axis=0), rel=1e-9)
    assert not np.allclose(DirectLassoGradient(X, y, theta).gradient(), g_dir)  # the retraction acted


# ---------------------------------------------------------------------------
# neighbours: the whole program looks the same (dpopt.testing.neighbours)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("mechanism", [
    pytest.param("polytope-fw", marks=covers(dp.PolytopeFrankWolfe, kind="neighbour")),
    pytest.param("gaussian-fw", marks=covers(dp.GaussianFrankWolfe, kind="neighbour"))])
def test_frank_wolfe_looks_the_same_on_neighbours(convex_pair: tuple[dp.Dataset, dp.Dataset],
                                                  mechanism: str) -> None:
    def run(data: dp.Dataset, ledger: dp.Ledger) -> dp.Release:
        th = dp.Variable(data.n_features)
        if mechanism == "polytope-fw":
            problem = dp.Problem(dp.SquaredLoss(data, th), constraint=dp.L1Ball(th, 1.0))
            return dp.PolytopeFrankWolfe(1.0, 1e-6, steps=8, ledger=ledger).run(problem, seed=1)
        problem = dp.Problem(dp.LogisticLoss(data, th), constraint=dp.L2Ball(th, 2.0))
        return dp.GaussianFrankWolfe(1.0, 1e-6, steps=8, ledger=ledger).run(problem, seed=1)

    assert_same_view(run, *convex_pair)
