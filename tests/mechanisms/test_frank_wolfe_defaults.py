"""Private Frank–Wolfe's defaults on a small survey-like table (issue 24, item 3).

The report: a binary target on ~8 survey columns (unit-scaled numeric columns and one-hot
categoricals through a ``dp.Schema``, an intercept), n of a few thousand, logistic loss over
an ℓ1 ball: PolytopeFrankWolfe returned the majority predictor at every ε, even ε = 50.
Two defaults did it, each on its own:

* the radius ‖θ‖₁ ≤ 1: with unit-scaled columns the *non-private* optimum over that ball is
  (nearly) the intercept alone, the majority predictor — :func:`margin_radius` derives a
  radius from the declared ℓ∞ row bound instead;
* the number of steps: the paper's T (Thm. 5.5) was 7–70× the T that minimizes the
  bound with the run's own noise, so at large ε every selection was noise.

References are independent non-private fits (cvxpy) on the same table and the same ball.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpopt as dp
from dpopt.errors import MechanismError
from dpopt.mechanisms.frank_wolfe import bound_iterations, curvature_bound, margin_radius
from dpopt.mechanisms.polytope_frank_wolfe import PolytopeFrankWolfe
from dpopt.privacy.noisy_max import noisy_max_budget

cp = pytest.importorskip("cvxpy")
pytestmark = pytest.mark.filterwarnings("ignore::dpopt.errors.WeakGuaranteeWarning")  # ε = 50 on purpose

MARITAL = ["married", "never-married", "divorced", "widowed", "separated"]
EDUCATION = ["less-than-hs", "high-school", "some-college", "bachelors", "masters", "doctorate"]
REGIONS = ["north", "south", "east", "west"]
SCHEMA = dp.Schema({
    "age": dp.Numeric(17, 90, grid=1), "income": dp.Numeric(0, 250_000, grid=1000),
    "marital": dp.Categorical(MARITAL), "education": dp.Categorical(EDUCATION),
    "sex": dp.Categorical(["female", "male"]), "hours": dp.Numeric(1, 99, grid=1),
    "region": dp.Categorical(REGIONS), "homeowner": dp.Binary(),
})


def _survey_frame(n: int, seed: int) -> dict[str, np.ndarray]:
    """A survey-like table: 8 raw columns, a logistic target with about 35% positives."""
    rng = np.random.default_rng(seed)
    age = rng.integers(17, 91, n).astype(float)
    edu = rng.choice(6, n, p=[0.1, 0.3, 0.25, 0.2, 0.1, 0.05])
    income = np.clip(rng.lognormal(10.3 + 0.15 * edu, 0.6), 0, 250_000)
    marital = rng.choice(5, n, p=[0.45, 0.3, 0.13, 0.06, 0.06])
    sex = rng.integers(0, 2, n)
    hours = np.clip(rng.normal(40, 12, n), 1, 99)
    region = rng.integers(0, 4, n)
    home = (rng.random(n) < 0.3 + 0.005 * (age - 17)).astype(float)
    z = (-4.3 + 2.6 * (marital == 0) + 0.6 * edu + 4.0 * income / 250_000 + 2.5 * hours / 99
         + 1.5 * (age - 17) / 73 + 0.3 * sex + 0.3 * home)
    target = np.where(rng.random(n) < 1.0 / (1.0 + np.exp(-z)), "yes", "no")
    return {"age": age, "income": income, "marital": np.array(MARITAL)[marital],
            "education": np.array(EDUCATION)[edu], "sex": np.array(["female", "male"])[sex],
            "hours": hours, "region": np.array(REGIONS)[region], "homeowner": home, "target": target}


def _survey(n: int, seed: int, **kwargs) -> dp.Dataset:
    return dp.Dataset.from_frame(_survey_frame(n, seed), SCHEMA, "target", classes=["no", "yes"],
                                 intercept=True, **kwargs)


@pytest.fixture(scope="module")
def survey():
    """(train with the ℓ2 row bound from_frame declares by default, the same rows declared in
    ℓ∞, a held-out test table)."""
    return _survey(3000, 0), _survey(3000, 0, x_norm="inf"), _survey(20_000, 1)


def _nonprivate(data: dp.Dataset, radius: float) -> np.ndarray:
    """The non-private minimizer of the average logistic loss over ‖θ‖₁ ≤ radius (cvxpy)."""
    theta = cp.Variable(data.n_features)
    margins = cp.multiply(data.y, data.X @ theta)
    cp.Problem(cp.Minimize(cp.sum(cp.logistic(-margins)) / data.n), [cp.norm1(theta) <= radius]).solve()
    return np.asarray(theta.value)


def _accuracy(theta: np.ndarray, test: dp.Dataset) -> float:
    return float(np.mean(np.where(test.X @ theta > 0, 1.0, -1.0) == test.y))


def _majority(test: dp.Dataset) -> float:
    return float(max(np.mean(test.y == 1), np.mean(test.y == -1)))


def _fw(data: dp.Dataset, radius: float, epsilon: float, delta: float, seed: int, **kwargs) -> dp.Release:
    theta = dp.Variable(data.n_features)
    problem = dp.Problem(dp.LogisticLoss(data, theta), constraint=dp.L1Ball(theta, radius))
    return PolytopeFrankWolfe(epsilon, delta, ledger=dp.Ledger(), **kwargs).run(problem, seed=seed)


# ------------------------------------------------------------------------- the radius


def test_unit_radius_holds_only_the_majority_predictor_and_margin_radius_does_not(survey):
    train, _, test = survey
    majority = _majority(test)
    small = _nonprivate(train, 1.0)
    # over ‖θ‖₁ ≤ 1 the non-private optimum predicts one class on (almost) every row
    assert abs(_accuracy(small, test) - majority) < 0.01
    r = margin_radius(train)
    assert r == 9.0  # 3m/‖x‖∞ with m = 3 and unit-scaled columns (the schema's ℓ∞ bound is 1)
    assert _accuracy(_nonprivate(train, r), test) > majority + 0.08


def test_margin_radius_reads_declarations_only(survey):
    train, train_inf, _ = survey
    other = _survey(500, 7)  # other rows, same declarations
    assert margin_radius(train) == margin_radius(train_inf) == margin_radius(other) == 9.0
    assert margin_radius(train, margin=1.0) == 3.0
    X = np.random.default_rng(0).uniform(-1, 1, (50, 4))
    y = np.sign(X[:, 0])
    # no schema: the declared bound in ℓ∞, or the ℓ∞ bound an ℓ2 declaration implies
    assert margin_radius(dp.Dataset(X, y, x_bound=2.0, x_norm="inf")) == 4.5
    assert margin_radius(dp.Dataset(X, y, x_bound=3.0, x_norm=2)) == 3.0
    assert margin_radius(dp.Dataset(10 * X, y, x_bound=3.0, x_norm=2)) == 3.0  # values play no part
    for bad in (0.0, -1.0, math.inf, True):
        with pytest.raises(MechanismError, match="margin"):
            margin_radius(train, margin=bad)


# -------------------------------------------------------------------- the default steps


@pytest.mark.parametrize("delta", [1e-6, 0.0])
def test_large_epsilon_beats_the_majority_rate_on_a_survey_table(survey, delta):
    """ε = 50, default steps, margin radius: most of the non-private gain over the majority
    rate is kept, with the row bound declared in ℓ∞ (the ℓ1 geometry's norm) and with
    ``from_frame``'s default ℓ2 bound (3 here, which inflates the noise 3×)."""
    train, train_inf, test = survey
    majority = _majority(test)
    r = margin_radius(train)
    reference = _accuracy(_nonprivate(train, r), test)
    assert reference > majority + 0.08
    for data, share, seeds in ((train_inf, 0.6, (1, 2)), (train, 0.3, (1,))):
        accuracies = [_accuracy(_fw(data, r, 50.0, delta, seed).theta, test) for seed in seeds]
        assert min(accuracies) > majority + share * (reference - majority), (data.x_norm, accuracies)


def test_large_epsilon_beats_the_majority_rate_on_adult_subsample():
    """Adult's standard encoding (109 columns, intercept), 3,000 training rows, rows declared
    in ℓ∞ (every entry of the encoding is in [0, 1]: a fact of the encoding)."""
    from dpopt.datasets import load_adult

    full = load_adult(n=3000, seed=0, encoding="standard")
    train = dp.Dataset(full.X, full.y, x_bound=1.0, x_norm="inf", y_bound=1.0, schema=full.schema)
    test = load_adult("test", encoding="standard")
    majority = _majority(test)
    r = margin_radius(train)
    reference = _accuracy(_nonprivate(train, r), test)
    assert reference > majority + 0.04
    release = _fw(train, r, 50.0, 1e-6, seed=1)
    assert _accuracy(release.theta, test) > majority + 0.6 * (reference - majority)
    assert release.parameters["steps"] < 5000


@pytest.mark.parametrize("epsilon,delta", [(1.0, 1e-6), (50.0, 1e-6), (50.0, 0.0)])
def test_default_steps_minimize_the_excess_risk_bound(survey, epsilon, delta):
    """The default T minimizes 2Γ/(T+2) + η(T) (checked against every integer T up to 3× it)
    and is far below the paper's T = (Γnε/(L₁r))^{2/3}, which made the selections noise."""
    _, data, _ = survey
    r = 9.0
    release = _fw(data, r, epsilon, delta, seed=0)
    p = release.parameters
    theta = dp.Variable(data.n_features)
    problem = dp.Problem(dp.LogisticLoss(data, theta), constraint=dp.L1Ball(theta, r))
    gamma, k = curvature_bound(problem), p["candidates"]
    sensitivity = 2.0 * p["lipschitz_l1"] * r / data.n
    factor = (1.0 if p["selection"] == "gumbel" else 2.0) * (1.0 + math.log(k))

    def bound(t: int) -> float:
        eps0 = noisy_max_budget(epsilon, delta, t, p["selection"]).step_epsilon
        return 2.0 * gamma / (t + 2) + factor * 2.0 * sensitivity / eps0

    T = p["steps"]
    best = min(bound(t) for t in range(1, 3 * T + 1))
    assert bound(T) <= best * (1 + 1e-3)
    assert p["noise_scale"] >= noisy_max_budget(epsilon, delta, T, p["selection"]).scale(sensitivity)
    paper = math.ceil((gamma * data.n * epsilon / (p["lipschitz_l1"] * r)) ** (2 / 3))
    assert T < paper / 4


def test_default_steps_need_a_finite_curvature_and_a_positive_constant():
    with pytest.raises(MechanismError, match="default T"):
        bound_iterations(math.inf, lambda t: 1.0, "x")
    with pytest.raises(MechanismError, match="default T"):
        bound_iterations(1.0, lambda t: 0.0, "x")
    assert bound_iterations(1.0, lambda t: 1e-3 * t, "x") == 43  # 2/(T+2)² = 1e-3 at T ≈ 42.7
    assert PolytopeFrankWolfe(1.0, steps=7).steps == 7  # an explicit T is kept as given
