"""Private mirror descent (TTZ14 Alg. 1): potentials, convergence, audit, mutation, bad input."""

import dataclasses
import math

import cvxpy as cp
import numpy as np
import pytest

import dpopt as dp
from dpopt.compile.cvxpy_program import loss_expression
from dpopt.errors import BudgetExceededError, MechanismError, ModelError, PrivacyParameterError
from dpopt.mechanisms.bregman import (
    bregman_step,
    compile_bregman_step,
    constraint_encoding,
    resolve_step_backend,
)
from dpopt.modeling.losses import HuberLoss
from dpopt.numerics import potentials as P
from dpopt.testing import audit, one_point_pair
from dpopt.testing.coverage import covers
from dpopt.testing.views import assert_same_view

BACKEND = resolve_step_backend("auto")


# ---------------------------------------------------------------------------
# Bregman steps: closed forms against a cvxpy solve of the same step
# ---------------------------------------------------------------------------

CLOSED_FORM_CASES = [
    ("euclidean", lambda: dp.L2Ball(5, 2.0)),
    ("euclidean", lambda: dp.L1Ball(6, 1.5)),
    ("euclidean", lambda: dp.LinfBall(4, 0.7)),
    ("euclidean", lambda: dp.Simplex(5, 2.0)),
    ("euclidean", lambda: dp.sets.GroupL1Ball(6, 1.0, [[0, 1], [2, 3, 4], [5]])),
    ("euclidean", lambda: dp.sets.HPolytope(np.vstack([np.eye(3), -np.eye(3), np.ones((1, 3))]),
                                       np.array([1, 1, 1, 1, 1, 1, 1.5]))),
    ("entropy", lambda: dp.Simplex(6, 2.0)),
    ("group-l1", lambda: dp.L1Ball(6, 1.5)),
    ("group-l1", lambda: dp.sets.GroupL1Ball(7, 2.0, [[0, 1, 2], [3, 4], [5], [6]])),
    ("group-l1", lambda: dp.sets.GroupL1Ball(4, 1.0, [[0, 1], [2, 3]])),  # m = 2: s = 2, γ = ½
]


@pytest.mark.parametrize("name,make", CLOSED_FORM_CASES)
@pytest.mark.parametrize("scale", [0.1, 1.0, 10.0])
def test_closed_form_step_matches_cvxpy(name, make, scale):
    C = make()
    pot = P.make_potential(name, C)
    prog = compile_bregman_step(pot)
    w = np.random.default_rng(int(10 * scale) + C.dim).normal(size=C.dim) * scale
    closed = pot.mirror_step(w).theta
    res = bregman_step(prog, w, BACKEND)
    assert res.status == "optimal"
    f = lambda th: pot.value(th) - w @ th  # noqa: E731
    assert C.contains(closed, 1e-9)
    fc, fs = f(closed), f(res.point.theta)
    assert fc <= fs + 1e-7 * max(1.0, abs(fs))  # the closed form is as good (HPolytope: iterative projection)
    assert np.max(np.abs(closed - res.point.theta)) < 1e-4


def test_nuclear_step_is_optimal():
    """cvxpy has no atom for Σσ_i^{1+q}: check the closed form by its Frank–Wolfe gap (exact
    first-order optimality over the ball) and the singular-value subproblem against cvxpy."""
    C = dp.sets.NuclearNormBall(12, 1.5, shape=(3, 4))
    pot = P.make_potential("auto", C)
    assert isinstance(pot, P.NuclearPotential)
    rng = np.random.default_rng(3)
    for scale in (0.1, 1.0, 10.0):
        w = rng.normal(size=12) * scale
        pt = pot.mirror_step(w)
        g = pot.gradient(pt) - w
        gap = g @ pt.theta - C.lmo(g) @ g
        assert gap <= 1e-9 * max(1.0, np.abs(g).max())
        assert C.contains(pt.theta, 1e-9)
        # the singular-value problem: min Σ c ρ^s − ⟨n, ρ⟩ over {ρ ≥ 0, Σρ ≤ 1}
        n = np.linalg.svd(pot.r * w.reshape(3, 4), compute_uv=False)
        rho = cp.Variable(n.size, nonneg=True)
        s = 1 + pot.q
        cp.Problem(cp.Minimize(pot.c * cp.sum(cp.power(rho, s)) - n @ rho), [cp.sum(rho) <= 1]).solve(
            solver=cp.CLARABEL)
        ours = np.linalg.svd(pt.theta.reshape(3, 4) / pot.r, compute_uv=False)
        assert np.max(np.abs(np.sort(ours) - np.sort(rho.value))) < 1e-4


@pytest.mark.parametrize("make", [lambda: dp.Simplex(8), lambda: dp.L1Ball(5, 1.0),
                                  lambda: dp.sets.VertexPolytope(np.random.default_rng(0).normal(size=(9, 4)))])
def test_qnorm_step_and_gradient(make):
    """The q-norm step has no closed form: the compiled step is first-order optimal with the
    gradient ∇Ψ recovered from the step's vertex weights (KKT), and that gradient is a true one."""
    C = make()
    pot = P.make_potential("qnorm", C)
    assert pot.mirror_step(np.zeros(C.dim)) is None
    prog = compile_bregman_step(pot)
    V = pot.V
    rng = np.random.default_rng(1)
    for scale in (0.3, 3.0):
        w = rng.normal(size=C.dim) * scale
        res = bregman_step(prog, w, BACKEND)
        assert res.status == "optimal"
        th = res.point.theta
        g = pot.gradient(res.point) - w
        assert g @ th - np.min(V @ g) <= 1e-5 * (1 + np.abs(g).max())  # FW gap over the vertices
        assert pot.gradient(res.point) == pytest.approx(pot.gradient(pot.point(th)), abs=1e-4)
        for _ in range(5):  # convexity inequality with the recovered gradient
            lam = rng.dirichlet(np.ones(V.shape[0]))
            y = V.T @ lam
            assert pot.value(y) >= pot.value(th) + pot.gradient(res.point) @ (y - th) - 1e-5


def test_qnorm_exponent_and_constants():
    assert P.claim_3_5_exponent(5) == 2.0  # Claim 3.5's q > 2 for k ≤ 7: clamped (Fact 3.4)
    q = P.claim_3_5_exponent(1000)
    assert 1 < q <= 2 and q == pytest.approx(math.log(1000) / (math.log(1000) - 1), rel=1e-3)
    geo = P.QNormPotential(dp.L1Ball(500, 1.0)).geometry()  # k = 1000
    assert geo.modulus == pytest.approx(1000 ** (-2 * (1 - 1 / q)))
    assert geo.modulus == pytest.approx(math.e**-2, rel=0.05)


@pytest.mark.parametrize("name,make", [
    ("entropy", lambda: dp.L1Ball(4, 1.0)),
    ("group-l1", lambda: dp.Simplex(4)),
    ("nuclear", lambda: dp.L2Ball(4, 1.0)),
    ("qnorm", lambda: dp.L2Ball(4, 1.0)),
    ("qnorm", lambda: dp.LinfBall(20, 1.0)),  # 2^20 vertices
])
def test_potential_that_does_not_fit_is_refused(name, make):
    with pytest.raises(ModelError, match="does not fit"):
        P.make_potential(name, make())


def test_auto_potentials():
    assert isinstance(P.make_potential("auto", dp.Simplex(3)), P.EntropyPotential)
    assert isinstance(P.make_potential("auto", dp.L1Ball(3, 1.0)), P.GroupL1Potential)
    assert isinstance(P.make_potential("auto", dp.sets.GroupL1Ball(4, 1.0, [[0, 1], [2, 3]])), P.GroupL1Potential)
    assert isinstance(P.make_potential("auto", dp.sets.NuclearNormBall(4, 1.0, shape=(2, 2))), P.NuclearPotential)
    assert isinstance(P.make_potential("auto", dp.sets.VertexPolytope(np.eye(3))), P.QNormPotential)
    assert isinstance(P.make_potential("auto", dp.L2Ball(3, 1.0)), P.EuclideanPotential)
    with pytest.raises(ModelError, match="unknown potential"):
        P.make_potential("bregman", dp.L2Ball(3, 1.0))


# ---------------------------------------------------------------------------
# convergence to the non-private optimum as ε grows (tolerance: the paper's bound)
# ---------------------------------------------------------------------------


def _logistic_problem(constraint_factory, n=2000, p=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    w = rng.dirichlet(np.ones(p))
    y = np.where(X @ w * 4 + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    th = dp.Variable(p)
    prob = dp.Problem(dp.LogisticLoss(dp.Dataset(X, y, x_bound=1.0), th), constraint=constraint_factory(th))
    var = cp.Variable(p)  # the non-private optimum, by cvxpy (structured sets included)
    cp.Problem(cp.Minimize(loss_expression(prob.loss, var)), constraint_encoding(prob.constraint, var)).solve(
        solver=cp.CLARABEL)
    return prob, prob.loss.value(prob.constraint.project(var.value))


@pytest.mark.parametrize("factory,potential", [
    (lambda th: dp.Simplex(th), "entropy"),
    (lambda th: dp.L1Ball(th, 1.0), "group-l1"),
    (lambda th: dp.L2Ball(th, 1.0), "euclidean"),
])
def test_converges_as_epsilon_grows(factory, potential):
    prob, fstar = _logistic_problem(factory)
    bounds, excess = [], []
    for eps in (0.2, 2.0, 20.0):
        runs = [dp.PrivateMirrorDescent(eps, 1e-6, potential=potential, max_steps=3000, ledger=dp.Ledger())
                .run(prob, seed=s) for s in range(3)]
        assert all(prob.constraint.contains(r.theta, 1e-8) for r in runs)
        ex = float(np.mean([prob.loss.value(r.theta) - fstar for r in runs]))
        bound = runs[0].parameters["excess_risk_bound"]
        assert -1e-9 <= ex <= bound, (eps, ex, bound)  # Thm 3.2 / Cor. 3.6 bound on the expectation
        bounds.append(bound)
        excess.append(ex)
    assert bounds[0] > bounds[1] > bounds[2]
    assert excess[2] < excess[0] and excess[2] < 0.05  # T ≤ 3000: the optimization term remains


@pytest.mark.parametrize("constraint", [
    dp.sets.GroupL1Ball(6, 1.0, [[0, 1], [2, 3], [4, 5]]),
    dp.sets.NuclearNormBall(6, 1.0, shape=(2, 3)),
    dp.sets.VertexPolytope(np.vstack([np.eye(6), -np.eye(6)]) * 0.8),
])
def test_structured_sets_run_within_bound(constraint):
    prob, fstar = _logistic_problem(lambda th: constraint, n=1000)
    steps = 40 if isinstance(constraint, dp.sets.VertexPolytope) else 2000
    r = dp.PrivateMirrorDescent(5.0, 1e-6, steps=steps, ledger=dp.Ledger()).run(prob, seed=0,
                                                                                 keep_diagnostics=True)
    assert constraint.contains(r.theta, 1e-6)
    assert prob.loss.value(r.theta) - fstar <= r.parameters["excess_risk_bound"]
    if isinstance(constraint, dp.sets.VertexPolytope):
        assert r.parameters["potential"] == "qnorm"
        assert r.diagnostics.details["compiled_steps"] == steps + 1  # a data-dependent count: diagnostics
        assert "compiled_steps" not in r.parameters
        assert r.parameters["step_backend"] == "clarabel"


def test_release_reports_both_sigmas_and_accountant_never_larger():
    prob, _ = _logistic_problem(lambda th: dp.Simplex(th), n=500)
    for mode in ("paper", "accountant"):
        for acc in ("zcdp", "rdp"):
            r = dp.PrivateMirrorDescent(1.0, 1e-6, steps=50, mode=mode, accountant=acc,
                                        ledger=dp.Ledger()).run(prob, seed=0)
            P_ = r.parameters
            assert P_["mode"] == mode and P_["accountant"] == acc
            assert P_["noise_scale_accountant"] <= P_["noise_scale_paper"]
            chosen = P_["noise_scale_paper" if mode == "paper" else "noise_scale_accountant"]
            # σ as drawn: the chosen σ rounded up onto the grid (σ²/γ² an integer), by well under 1e-6
            assert chosen <= P_["noise_scale"] <= chosen * (1 + 1e-6)
            assert P_["sensitivity_l2"] == pytest.approx(2 * 1.0 / 500)
            assert "noise_scale_paper" in r.summary() and r.private
    # the default is the zCDP calibration, below the RDP one (same Rényi curve, finer orders)
    default = dp.PrivateMirrorDescent(1.0, 1e-6, steps=50, ledger=dp.Ledger()).plan(prob).parameters
    rdp = dp.PrivateMirrorDescent(1.0, 1e-6, steps=50, accountant="rdp", ledger=dp.Ledger()).plan(prob).parameters
    assert default["accountant"] == "zcdp" and default["noise_scale"] <= rdp["noise_scale"]
    for refused in ("analytic", "pld"):  # the continuous Gaussian's analyses: refused, nothing charged
        with pytest.raises(MechanismError, match="discrete Gaussian"):
            dp.PrivateMirrorDescent(1.0, 1e-6, accountant=refused)


# ---------------------------------------------------------------------------
# statistical audit and mutation test
# ---------------------------------------------------------------------------
# Nine rows with x = 0 and a tenth row (1, +1) vs (1, −1) under a Huber loss with h = 0.1:
# while |θ| < 0.9 every gradient is the constant ∓h/n, a difference of exactly 2L/n, so
# with the Euclidean potential on a ball of radius 0.5 (rarely reached) the released
# average is a linear function of the T noisy gradients (a Gaussian).

N, H, EPS, DELTA, T = 10, 0.1, 2.0, 1e-3, 4


def _pair():
    return one_point_pair(N)


class CutNoise(dp.PrivateMirrorDescent):
    """Mutation: σ divided by ``factor``."""

    factor = 4.0

    def plan(self, problem, options=None):
        p = super().plan(problem, options)
        return dataclasses.replace(p, noise=p.noise.scaled(1 / self.factor))


def _runner(cls):
    def run(data, seed):
        th = dp.Variable(1)
        prob = dp.Problem(HuberLoss(data, th, h=H), constraint=dp.L2Ball(th, 0.5))
        mech = cls(EPS, DELTA, steps=T, learning_rate=1.0, potential="euclidean",
                   ledger=dp.Ledger())
        return mech.run(prob, seed=seed).theta
    return run


def _audit(cls, seed=0, n_runs=3000):
    d0, d1 = _pair()
    res = audit(_runner(cls), d0, d1, claimed_epsilon=EPS, claimed_delta=DELTA, n_runs=n_runs, seed=seed)
    print(f"{cls.__name__}: {res.summary()}")
    return res


@covers(dp.PrivateMirrorDescent, kind="audit")
def test_audit():
    res = _audit(dp.PrivateMirrorDescent)
    assert not res.violates, res.summary()
    assert res.epsilon_lower > 0.3, res.summary()  # the audit has power on this pair


@covers(dp.PrivateMirrorDescent, kind="mutation")
def test_mutation_is_caught():
    res = _audit(CutNoise)
    assert res.violates, res.summary()


@pytest.mark.slow
@covers(dp.PrivateMirrorDescent, kind="audit")
def test_large_audit():
    for seed in range(3):
        res = _audit(dp.PrivateMirrorDescent, seed=seed, n_runs=20_000)
        assert not res.violates, res.summary()


# ---------------------------------------------------------------------------
# bad input and ledger behaviour
# ---------------------------------------------------------------------------


class _UnboundedLoss(HuberLoss):
    name = "unbounded"

    def dphi_bound(self, z_bound):
        return math.inf


def _tiny_problem(constraint=True, loss_cls=HuberLoss):
    d0, _ = _pair()
    th = dp.Variable(1)
    return dp.Problem(loss_cls(d0, th, h=H), constraint=dp.L2Ball(th, 1.0) if constraint else None)


@pytest.mark.parametrize("steps", [0, -3])
def test_nonpositive_steps_refused(steps):
    with pytest.raises(MechanismError, match="steps"):
        dp.PrivateMirrorDescent(1.0, 1e-6, steps=steps)


@pytest.mark.parametrize("kwargs,err,match", [
    ({"delta": 0.0}, PrivacyParameterError, "delta"),
    ({"epsilon": -1.0}, PrivacyParameterError, "epsilon"),
    ({"mode": "tight"}, MechanismError, "mode"),
    ({"accountant": "moments"}, MechanismError, "accountant"),
    ({"learning_rate": 0.0}, MechanismError, "learning_rate"),
    ({"steps": 2.5}, MechanismError, "steps"),
])
def test_bad_settings(kwargs, err, match):
    args = {"epsilon": 1.0, "delta": 1e-6} | kwargs
    eps, delta = args.pop("epsilon"), args.pop("delta")
    with pytest.raises(err, match=match):
        dp.PrivateMirrorDescent(eps, delta, **args)


def test_problem_errors():
    mech = dp.PrivateMirrorDescent(1.0, 1e-6, steps=5, ledger=dp.Ledger())
    with pytest.raises(MechanismError, match="constraint set"):
        mech.run(_tiny_problem(constraint=False))
    with pytest.raises(MechanismError, match="Lipschitz"):
        mech.run(_tiny_problem(loss_cls=_UnboundedLoss))
    with pytest.raises(ModelError, match="does not fit"):
        dp.PrivateMirrorDescent(1.0, 1e-6, potential="entropy", ledger=dp.Ledger()).run(_tiny_problem())
    with pytest.raises(MechanismError, match="Problem"):
        mech.run("not a problem")
    assert mech.ledger.charges == ()  # refused before touching the data


def test_ledger_charged_once_and_budget_checked_first():
    ledger = dp.Ledger(epsilon_budget=1.5, delta_budget=1e-5)
    mech = dp.PrivateMirrorDescent(1.0, 1e-6, steps=20, ledger=ledger)
    r = mech.run(_tiny_problem(), seed=1)
    assert len(ledger.charges) == 1 and ledger.spent == (1.0, 1e-6)
    assert r.seed.user_seeded and not dp.PrivateMirrorDescent(1.0, 1e-6, steps=2, ledger=dp.Ledger()).run(
        _tiny_problem()).seed.user_seeded
    with pytest.raises(BudgetExceededError):
        mech.run(_tiny_problem())
    assert len(ledger.charges) == 1


def test_seeded_runs_reproduce():
    a = dp.PrivateMirrorDescent(1.0, 1e-6, steps=30, ledger=dp.Ledger()).run(_tiny_problem(), seed=7)
    b = dp.PrivateMirrorDescent(1.0, 1e-6, steps=30, ledger=dp.Ledger()).run(_tiny_problem(), seed=7)
    assert np.array_equal(a.theta, b.theta)


# ------------------------------------------- iterates outside C keep the declared sensitivity


def _bounded_squared_data(n: int = 12, d: int = 2, seed: int = 0) -> dp.Dataset:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X *= rng.uniform(0.0, 1.0, size=(n, 1)) / np.linalg.norm(X, axis=1, keepdims=True)
    return dp.Dataset(X, rng.uniform(-0.5, 0.5, size=n), x_bound=1.0, y_bound=0.5)


@pytest.mark.parametrize("push", [1.01, 3.0])
def test_mirror_steps_outside_the_set_keep_the_declared_sensitivity(monkeypatch, push):
    """A mirror step that lands at push × the radius (as a compiled step
    feasible only to tolerance would, exaggerated) still yields per-example gradients within
    the declared L and a neighbour gap within the declared Δ = 2L/n.  Without clipping the
    squared loss breaks the per-example bound at 1.01× and the gap at 3×."""
    from dpopt.mechanisms import mirror_descent as md
    from dpopt.numerics.clipping import ClippedGradient
    from dpopt.testing.sensitivity import extreme_rows, neighbour_gradient_gap

    data = _bounded_squared_data()
    v = dp.Variable(2)

    def make(d):
        return dp.Problem(dp.SquaredLoss(d, v), constraint=dp.L2Ball(v, 1.0))

    real_step, real_oracle, seen = P.EuclideanPotential.mirror_step, md.gradient_oracle, []

    def outside(self, w):
        t = real_step(self, w).theta
        u = t / np.linalg.norm(t) if np.any(t) else np.eye(t.size)[0]
        return P.MirrorPoint(push * self.constraint.radius(2) * u)

    def spy(problem):
        g = real_oracle(problem)
        return lambda theta: (seen.append(np.array(theta)), g(theta))[1]

    monkeypatch.setattr(P.EuclideanPotential, "mirror_step", outside)
    monkeypatch.setattr(md, "gradient_oracle", spy)
    release = dp.PrivateMirrorDescent(1.0, 1e-5, potential="euclidean", steps=4, ledger=dp.Ledger()).run(
        make(data), seed=0)
    theta = seen[-1]
    assert np.linalg.norm(theta) == pytest.approx(push)  # the gradient really was taken outside C
    lip, delta = release.parameters["lipschitz_l2"], release.parameters["sensitivity_l2"]
    per = ClippedGradient(make(data).loss, norm=2, bound=lip).per_example(theta)
    assert np.linalg.norm(per, axis=1).max() <= lip
    rows = extreme_rows(theta, x_bound=1.0, y_bound=0.5)
    gap = neighbour_gradient_gap(lambda d: real_oracle(make(d)), data, theta, rows, measure=np.linalg.norm)
    assert gap <= delta
    raw = [abs(2.0 * (x @ theta - y)) * np.linalg.norm(x) for x, y in rows]  # unclipped per-example norms
    raw_gap = neighbour_gradient_gap(lambda d: make(d).loss.gradient, data, theta, rows, measure=np.linalg.norm)
    assert max(raw) > lip and (push < 2 or raw_gap > delta)  # the checks above have teeth


def test_a_regularizer_outside_the_gradient_is_refused_before_the_charge():
    """Mirror descent's gradient holds only elastic terms; a submodular norm would be dropped."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (100, 4)) / 2
    data = dp.Dataset(X, np.sign(X[:, 0] + 1e-3), x_bound=1.0)
    th = dp.Variable(4)
    F = dp.submodular.GroupCoverage(4, [[0, 1], [2, 3]], [1.0, 1.0])
    problem = dp.Problem(dp.LogisticLoss(data, th), constraint=dp.L2Ball(th, 1.0),
                         regularizer=dp.submodular.SubmodularNorm(th, F, 0.1))
    ledger = dp.Ledger()
    with pytest.raises(MechanismError, match="SubmodularNorm"):
        dp.PrivateMirrorDescent(1.0, 1e-5, ledger=ledger).run(problem)
    assert ledger.spent == (0.0, 0.0)


# ---------------------------------------------------------------------------
# neighbours: the whole program looks the same (dpopt.testing.neighbours)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("mechanism", [
    pytest.param("mirror-descent", marks=covers(dp.PrivateMirrorDescent, kind="neighbour")),
    pytest.param("mirror-descent-clarabel", marks=covers(dp.PrivateMirrorDescent, kind="neighbour")),
    pytest.param("mirror-descent-scs", marks=covers(dp.PrivateMirrorDescent, kind="neighbour"))])
def test_mirror_descent_looks_the_same_on_neighbours(convex_pair: tuple[dp.Dataset, dp.Dataset],
                                                     mechanism: str) -> None:
    def run(data: dp.Dataset, ledger: dp.Ledger) -> dp.Release:
        th = dp.Variable(data.n_features)
        if mechanism.startswith("mirror-descent-"):  # compiled Bregman steps through a convex backend
            hull = dp.sets.VertexPolytope(np.vstack([np.eye(data.n_features), -np.eye(data.n_features)]) * 0.8)
            problem = dp.Problem(dp.LogisticLoss(data, th), constraint=hull)
            return dp.PrivateMirrorDescent(1.0, 1e-6, steps=4, ledger=ledger).run(
                problem, seed=1, solver=mechanism.removeprefix("mirror-descent-"))
        problem = dp.Problem(dp.LogisticLoss(data, th), constraint=dp.L2Ball(th, 2.0))
        return dp.PrivateMirrorDescent(1.0, 1e-6, ledger=ledger).run(problem, seed=1, keep_diagnostics=False)

    assert_same_view(run, *convex_pair)
