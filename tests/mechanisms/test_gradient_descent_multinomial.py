"""Multi-class models: the multinomial logistic loss, DP-GD/DP-SGD on it, the estimators and
one-vs-rest."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest

import dpopt as dp
from dpopt.errors import MechanismError, ModelError
from dpopt.modeling.losses import MultinomialLogisticLoss
from dpopt.testing.audit import audit
from dpopt.testing.coverage import covers

K = 3


def _blobs(n: int, d: int, k: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """k Gaussian blobs in [0, 1]^d (rows of norm ≤ √d), labels 0..k−1."""
    rng = np.random.default_rng(seed)
    centres = rng.uniform(0.2, 0.8, size=(k, d))
    y = rng.integers(0, k, size=n)
    X = np.clip(centres[y] + 0.08 * rng.normal(size=(n, d)), 0.0, 1.0)
    return X, y


def _loss(n: int = 200, d: int = 4, seed: int = 0) -> MultinomialLogisticLoss:
    X, y = _blobs(n, d, K, seed)
    return MultinomialLogisticLoss(dp.Dataset(X, y.astype(float), x_bound=float(np.sqrt(d))), dp.Variable(d * K),
                                   classes=K)


# -- the loss ----------------------------------------------------------------------------------
def test_gradient_matches_central_differences():
    loss = _loss()
    theta = np.random.default_rng(1).normal(size=loss.variable.size)
    step = 1e-6
    numeric = np.array([(loss.value(theta + step * e) - loss.value(theta - step * e)) / (2 * step)
                        for e in np.eye(theta.size)])
    assert np.allclose(loss.gradient(theta), numeric, atol=1e-7)


def test_declared_constants_bound_every_per_example_gradient_and_hessian():
    loss = _loss()
    c = loss.constants({1: 50.0, 2: 50.0, "inf": 50.0})
    rng = np.random.default_rng(2)
    X, y = np.asarray(loss.data.X), loss.data.y
    for _ in range(50):
        theta = rng.normal(scale=5.0, size=loss.variable.size)
        per = loss.dphi(loss.scores(theta), y)  # n × k
        grads = (X[:, :, None] * per[:, None, :]).reshape(len(y), -1)  # x ⊗ (p − e_y), independently
        assert np.linalg.norm(grads, axis=1).max() <= c.lipschitz_l2
        assert np.abs(grads).max() <= c.lipschitz_l1
        p = np.exp(loss.scores(theta) - loss.scores(theta).max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        for i in range(0, len(y), 40):  # Hessian (x xᵀ) ⊗ (diag p − p pᵀ)
            H = np.kron(np.outer(X[i], X[i]), np.diag(p[i]) - np.outer(p[i], p[i]))
            assert np.linalg.eigvalsh(H).max() <= c.hessian_bound + 1e-12


def test_labels_outside_the_declared_classes_are_mapped_never_refused():
    X = np.eye(4)
    data = dp.Dataset(X, np.array([0.0, 2.0, 7.0, 1.5]), x_bound=1.0)
    loss = MultinomialLogisticLoss(data, dp.Variable(4 * K), classes=K)
    assert loss.data.y.tolist() == [0.0, 2.0, 0.0, 0.0]
    assert loss.value_at_zero_bound() == pytest.approx(np.log(K))
    with pytest.raises(ModelError, match="classes must be an integer >= 2"):
        MultinomialLogisticLoss(data, dp.Variable(4 * K), classes=1)
    with pytest.raises(ModelError, match="4 features × 3 outputs = 12"):
        MultinomialLogisticLoss(data, dp.Variable(4), classes=K)


# -- mechanisms --------------------------------------------------------------------------------
@pytest.mark.parametrize("cls,kw", [(dp.ObjectivePerturbation, {}), (dp.OutputPerturbation, {}),
                                    (dp.PrivateMirrorDescent, {"steps": 2}),
                                    (dp.GaussianFrankWolfe, {"steps": 2})])
def test_single_output_mechanisms_refuse_before_the_charge_naming_those_that_fit(cls, kw):
    loss = _loss()
    problem = dp.Problem(loss, constraint=dp.L2Ball(loss.variable, 5.0), regularizer=dp.L2Squared(loss.variable, 0.1))
    ledger = dp.Ledger()
    with pytest.raises(MechanismError, match="DPGradientDescent or DPSGD"):
        cls(1.0, 1e-6, ledger=ledger, **kw).run(problem)
    assert ledger.spent == (0.0, 0.0) and not ledger.charges


@pytest.mark.parametrize("cls", [dp.DPGradientDescent, dp.DPSGD])
def test_gradient_mechanisms_learn_a_multinomial_model(cls):
    X, y = _blobs(4000, 4, K)
    data = dp.Dataset(X, y.astype(float), x_bound=2.0)
    theta = dp.Variable(4 * K)
    problem = dp.Problem(MultinomialLogisticLoss(data, theta, classes=K), constraint=dp.L2Ball(theta, 20.0))
    release = cls(8.0, 1e-6, ledger=dp.Ledger()).run(problem, seed=0)
    accuracy = np.mean(np.argmax(X @ release.theta.reshape(4, K), axis=1) == y)
    majority = np.bincount(y).max() / y.size
    assert accuracy > majority + 0.2
    units = release.theta / 1.0  # the iterate is post-processing of grid values: finite, right shape
    assert units.shape == (4 * K,) and np.all(np.isfinite(units))


N = 10


def _pair() -> tuple[dp.Dataset, dp.Dataset]:
    """Row 0 is x = 1 with class 0, or with class 1; rows 1.. are x = 0 (no gradient)."""
    X = np.zeros((N, 1))
    X[0, 0] = 1.0
    d0 = dp.Dataset(X, np.zeros(N), x_bound=1.0)
    return d0, d0.replace_row(0, [1.0], 1.0)


class HalfNoiseGD(dp.DPGradientDescent):
    def plan(self, problem, options=None):
        p = super().plan(problem, options)
        return dataclasses.replace(p, noise=p.noise.scaled(0.5))


def _runner(cls):
    """One step from Θ = 0 on the pair, with two classes: the two rows' gradients x ⊗ (p − e_y) are
    antipodal, so the clipped sums differ by exactly 2C (the declared sensitivity)."""
    def run(data, seed):
        theta = dp.Variable(2)
        problem = dp.Problem(MultinomialLogisticLoss(data, theta, classes=2))
        mech = cls(2.0, 1e-3, steps=1, learning_rate=1.0, output="last", clip=0.5, ledger=dp.Ledger())
        return mech.run(problem, seed=seed).theta
    return run


@covers(dp.DPGradientDescent, kind="audit")
@covers(dp.DPGradientDescent, kind="mutation")
def test_multinomial_dpgd_audit_and_half_noise_mutant():
    d0, d1 = _pair()
    ok = audit(_runner(dp.DPGradientDescent), d0, d1, claimed_epsilon=2.0, claimed_delta=1e-3, n_runs=2000)
    print(ok.summary())
    assert not ok.violates, ok.summary()
    assert ok.epsilon_lower > 0.25, ok.summary()  # the pair has power
    bad = audit(_runner(HalfNoiseGD), d0, d1, claimed_epsilon=2.0, claimed_delta=1e-3, n_runs=4000)
    print(bad.summary())
    assert bad.violates, bad.summary()


@covers(dp.DPGradientDescent, kind="neighbour")
def test_multinomial_neighbours_get_the_same_public_view():
    d0, d1 = _pair()
    views = []
    for data in (d0, d1):
        theta = dp.Variable(K)
        problem = dp.Problem(MultinomialLogisticLoss(data, theta, classes=K), constraint=dp.L2Ball(theta, 3.0))
        release = dp.DPGradientDescent(1.0, 1e-3, ledger=dp.Ledger()).run(problem, seed=3)
        views.append((release.parameters, release.epsilon, release.delta, release.theta.shape))
    assert views[0] == views[1]


# -- estimators --------------------------------------------------------------------------------
sk = pytest.importorskip("sklearn")


def test_estimator_fits_k_declared_classes_in_one_charge():
    from dpopt.sklearn import DPLogisticRegression

    X, y = _blobs(3000, 5, K, seed=4)
    names = np.array(["adelie", "chinstrap", "gentoo"])
    labels = names[y].astype(object)
    labels[:3] = "unknown species"  # outside the declaration: mapped, never refused
    ledger = dp.Ledger()
    est = DPLogisticRegression(epsilon=4.0, x_bound=float(np.sqrt(5)), classes=list(names), random_state=0,
                               ledger=ledger).fit(X, labels)
    assert est.mechanism_ == "dp-gd" and "multinomial" in est.mechanism_rule_
    assert est.coef_.shape == (K, 5) and est.intercept_.shape == (K,)
    proba = est.predict_proba(X[:50])
    assert proba.shape == (50, K) and np.allclose(proba.sum(axis=1), 1.0)
    assert set(est.predict(X)) == set(names)  # every class is learnt (labels are indices, never clipped)
    assert est.score(X, names[y]) > 0.9  # three well-separated blobs
    assert len(ledger.charges) == 1 and ledger.spent[0] == pytest.approx(4.0)
    # Θᵀx from coef_ and intercept_ gives the same scores as decision_function
    scores = X @ est.coef_.T + est.intercept_
    assert np.allclose(scores, est.decision_function(X))


def test_a_binary_only_mechanism_with_k_classes_is_refused_before_the_charge():
    from dpopt.sklearn import DPHalfspaceClassifier, DPLogisticRegression

    X, y = _blobs(200, 3, K)
    ledger = dp.Ledger()
    with pytest.raises(MechanismError, match="'dp-gd', 'dp-sgd'"):
        DPLogisticRegression(mechanism="objective-perturbation", x_bound=2.0, classes=[0, 1, 2],
                             ledger=ledger).fit(X, y)
    with pytest.raises(ModelError, match="loss='logistic'"):
        DPLogisticRegression(loss="smoothed-hinge", x_bound=2.0, classes=[0, 1, 2], ledger=ledger).fit(X, y)
    with pytest.raises(ModelError, match="binary"):
        DPHalfspaceClassifier(schema=dp.Schema.uniform(3, dp.Numeric(0, 1, grid="1/2")), classes=[0, 1, 2],
                              ledger=ledger).fit(X, y)
    with pytest.raises(MechanismError, match="did you mean 'dp-gd'"):
        DPLogisticRegression(mechanism="dp_gd", x_bound=2.0, ledger=ledger).fit(X, y)
    assert not ledger.charges


def test_classes_read_from_y_warn_and_fit_several():
    from dpopt.sklearn import DPLogisticRegression

    X, y = _blobs(300, 3, K)
    with pytest.warns(UserWarning, match="not private"):
        est = DPLogisticRegression(x_bound=2.0, random_state=0, ledger=dp.Ledger()).fit(X, y)
    assert est.classes_.tolist() == [0, 1, 2] and est.coef_.shape == (K, 3)


def test_one_vs_rest_states_and_spends_k_times_a_kth_of_the_budget():
    from dpopt.sklearn import DPLogisticRegression, DPOneVsRestClassifier

    X, y = _blobs(3000, 4, K, seed=5)
    ledger = dp.Ledger()
    base = DPLogisticRegression(epsilon=3.0, delta=1e-6, x_bound=2.0, ledger=ledger, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # declared classes: no label-set warning from the binary fits
        ovr = DPOneVsRestClassifier(base, classes=[0, 1, 2]).fit(X, y)
    assert [c.epsilon for c in ledger.charges] == pytest.approx([1.0] * K)
    assert ledger.spent == pytest.approx((3.0, 1e-6))
    assert len(ovr.releases_) == K and ovr.coef_.shape[0] == K
    assert np.mean(ovr.predict(X) == y) > np.bincount(y).max() / y.size
    short = dp.Ledger(epsilon_budget=2.0)
    with pytest.raises(dp.errors.BudgetExceededError), pytest.warns(dp.errors.BudgetWarning):
        DPOneVsRestClassifier(base.set_params(ledger=short), classes=[0, 1, 2]).fit(X, y)
    assert not short.charges
    with pytest.raises(ModelError, match="declare classes"):
        DPOneVsRestClassifier(base).fit(X, y)


def test_one_vs_rest_by_name_keeps_one_combined_release():
    from dpopt.sklearn import DPLogisticRegression

    X, y = _blobs(3000, 4, K, seed=6)
    ledger = dp.Ledger()
    est = DPLogisticRegression(epsilon=3.0, delta=1e-6, mechanism="one-vs-rest", x_bound=2.0, classes=[0, 1, 2],
                               random_state=0, ledger=ledger).fit(X, y)
    assert est.mechanism_ == "one-vs-rest" and est.mechanism_rule_ == "declared"
    assert len(ledger.charges) == K and ledger.spent == pytest.approx((3.0, 1e-6))
    assert (est.release_.epsilon, est.release_.delta) == pytest.approx((3.0, 1e-6))
    assert est.coef_.shape == (K, 4) and est.release_.theta.size == 5 * K
    assert np.allclose(X @ est.coef_.T + est.intercept_, est.decision_function(X))
    assert set(est.predict(X)) == {0, 1, 2} and est.score(X, y) > 0.9
    assert np.allclose(est.predict_proba(X[:20]).sum(axis=1), 1.0)


def test_one_vs_rest_fits_never_share_their_noise():
    """Equal noise on two classes' releases would cancel in their difference: a seeded
    one-vs-rest gives every class its own seed (and an unseeded one the OS CSPRNG)."""
    from dpopt.sklearn import DPLogisticRegression, DPOneVsRestClassifier

    X = np.zeros((200, 2))
    y = np.arange(200) % K  # no signal: each binary release is its noise plus the same centre
    base = DPLogisticRegression(epsilon=1.0, delta=1e-6, mechanism="objective-perturbation", x_bound=1.0,
                                alpha=0.1, random_state=7, ledger=dp.Ledger())
    ovr = DPOneVsRestClassifier(base, classes=[0, 1, 2]).fit(X, y)
    seeds = [r.seed.summary() for r in ovr.releases_]
    assert len(set(seeds)) == K
    thetas = [r.theta for r in ovr.releases_]
    assert not np.allclose(thetas[0] - thetas[1], thetas[1] - thetas[2])


def test_private_selection_runs_multinomial_candidates_and_refuses_single_output_ones():
    loss = _loss(n=400)
    problem = dp.Problem(loss, constraint=dp.L2Ball(loss.variable, 5.0))
    ledger = dp.Ledger()
    good = dp.PrivateSelection(2.0, 1e-6, candidates=[{"steps": 20}, {"steps": 40}], ledger=ledger,
                               stopping="papernot-steinke",
                               build=lambda h, b: dp.DPGradientDescent(b.epsilon, b.delta, steps=h["steps"]))
    assert good.run(problem, seed=0).theta.shape == (loss.variable.size,)
    bad = dp.PrivateSelection(2.0, 0.0, candidates=[{"lam": 0.1}], ledger=dp.Ledger(),
                              build=lambda h, b: dp.ObjectivePerturbation(b.epsilon, b.delta))
    with pytest.raises(MechanismError, match="DPGradientDescent or DPSGD"):
        bad.run(problem)
    assert len(ledger.charges) == 1
