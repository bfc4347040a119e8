"""Tests for dpopt.privacy: calibration, samplers, generators and the ledger."""

from __future__ import annotations

import math
import threading
import warnings

import numpy as np
import pytest
from scipy import integrate

from dpopt.errors import BudgetExceededError, PrivacyParameterError
from dpopt.privacy import (
    Charge,
    Ledger,
    SeedInfo,
    check_epsilon_delta,
    check_sensitivity,
    gaussian_delta,
    gaussian_noise,
    gaussian_sigma,
    gaussian_sigma_analytic,
    gaussian_sigma_classical,
    gumbel_noise,
    l2_laplace_noise,
    laplace_noise,
    laplace_scale,
    make_rng,
)

# ---------------------------------------------------------------------------------------
# calibration: parameter checks
# ---------------------------------------------------------------------------------------

BAD_EPSILONS = [0, 0.0, -1, -1e-9, math.nan, math.inf, -math.inf, True, False, "1", None, [1.0], 1j]
BAD_DELTAS = [1, 1.0, 1.5, -0.1, math.nan, math.inf, True, "0.1", None]


@pytest.mark.parametrize("epsilon", BAD_EPSILONS, ids=repr)
def test_check_epsilon_delta_refuses_bad_epsilon(epsilon: object) -> None:
    with pytest.raises(PrivacyParameterError, match=r"epsilon.*(0, inf)"):
        check_epsilon_delta(epsilon, 1e-6)  # type: ignore[arg-type]


@pytest.mark.parametrize("delta", BAD_DELTAS, ids=repr)
def test_check_epsilon_delta_refuses_bad_delta(delta: object) -> None:
    with pytest.raises(PrivacyParameterError, match=r"delta.*\[0, 1\)"):
        check_epsilon_delta(1.0, delta)  # type: ignore[arg-type]


def test_check_epsilon_delta_accepts_and_converts() -> None:
    eps, delta = check_epsilon_delta(np.float32(0.5), np.float64(1e-6))
    assert (eps, delta) == (pytest.approx(0.5), 1e-6)
    assert type(eps) is float and type(delta) is float
    assert check_epsilon_delta(2, 0) == (2.0, 0.0)
    with pytest.raises(PrivacyParameterError, match=r"delta must be in \(0, 1\)"):
        check_epsilon_delta(1.0, 0.0, allow_zero_delta=False)
    assert check_epsilon_delta(1.0, 1e-300, allow_zero_delta=False) == (1.0, 1e-300)


def test_errors_are_value_errors() -> None:
    with pytest.raises(ValueError):
        check_epsilon_delta(-1.0, 0.0)


@pytest.mark.parametrize("bad", [-1.0, math.nan, math.inf, True, "1"], ids=repr)
def test_sensitivity_refusals(bad: object) -> None:
    with pytest.raises(PrivacyParameterError, match="sensitivity"):
        check_sensitivity(bad)  # type: ignore[arg-type]
    with pytest.raises(PrivacyParameterError, match="sensitivity_l2"):
        gaussian_sigma(bad, 1.0, 1e-6)  # type: ignore[arg-type]
    with pytest.raises(PrivacyParameterError, match="sensitivity_l1"):
        laplace_scale(bad, 1.0)  # type: ignore[arg-type]


def test_laplace_scale() -> None:
    assert laplace_scale(2.0, 0.5) == 4.0
    assert laplace_scale(0.0, 0.5) == 0.0
    with pytest.raises(PrivacyParameterError, match="epsilon"):
        laplace_scale(1.0, 0.0)


# ---------------------------------------------------------------------------------------
# calibration: the Gaussian mechanism
# ---------------------------------------------------------------------------------------


def test_classical_formula_and_range() -> None:
    sigma = gaussian_sigma_classical(2.0, 0.5, 1e-5)
    assert sigma == pytest.approx(2.0 * math.sqrt(2 * math.log(1.25e5)) / 0.5, rel=1e-14)
    for eps in (1.0, 1.5, 10.0):
        with pytest.raises(PrivacyParameterError, match="analytic"):
            gaussian_sigma_classical(1.0, eps, 1e-5)
        with pytest.raises(PrivacyParameterError, match="analytic"):
            gaussian_sigma(1.0, eps, 1e-5, method="classical")
    with pytest.raises(PrivacyParameterError, match="delta"):
        gaussian_sigma_classical(1.0, 0.5, 0.0)


def _profile_by_integration(sigma: float, sens: float, eps: float) -> float:
    """δ(ε) = E_{L ~ N(μ²/2, μ²)} [(1 − e^{ε − L})_+], μ = Δ/σ (the privacy loss L)."""
    mu = sens / sigma
    mean, sd = mu * mu / 2.0, mu

    def integrand(loss: float) -> float:
        dens = math.exp(-0.5 * ((loss - mean) / sd) ** 2) / (sd * math.sqrt(2.0 * math.pi))
        return -math.expm1(eps - loss) * dens

    value, _ = integrate.quad(integrand, eps, mean + 40.0 * sd, epsabs=0.0, epsrel=1e-11, limit=200)
    return value


@pytest.mark.parametrize(
    ("sigma", "sens", "eps"),
    [(1.0, 1.0, 0.5), (3.0, 2.0, 0.1), (0.5, 1.0, 3.0), (0.3, 1.0, 10.0), (20.0, 1.0, 0.01)],
)
def test_gaussian_delta_matches_numeric_integration(sigma: float, sens: float, eps: float) -> None:
    expected = _profile_by_integration(sigma, sens, eps)
    assert expected > 1e-12
    assert gaussian_delta(sigma, sens, eps) == pytest.approx(expected, rel=1e-8)


def test_gaussian_delta_matches_monte_carlo() -> None:
    # Outputs N(μ, 1) vs N(0, 1); privacy loss L(y) = μ y − μ²/2.  δ = E_P[(1 − e^{ε−L})_+].
    mu, eps = 1.0, 0.5
    rng = np.random.default_rng(12345)
    y = rng.normal(mu, 1.0, size=400_000)
    loss = mu * y - mu * mu / 2.0
    samples = np.maximum(0.0, -np.expm1(eps - loss))
    estimate, stderr = samples.mean(), samples.std() / math.sqrt(samples.size)
    assert abs(gaussian_delta(1.0 / mu, 1.0, eps) - estimate) < 5.0 * stderr


def test_gaussian_delta_against_dp_accounting() -> None:
    mech = pytest.importorskip("dp_accounting.pld.privacy_loss_mechanism")
    for sigma, sens, eps in [(2.0, 1.0, 0.5), (1.0, 3.0, 2.0), (0.7, 1.0, 4.0)]:
        loss = mech.GaussianPrivacyLoss(standard_deviation=sigma, sensitivity=sens)
        assert gaussian_delta(sigma, sens, eps) == pytest.approx(
            loss.get_delta_for_epsilon(eps), rel=1e-9, abs=1e-15
        )


def test_gaussian_delta_edge_cases_and_stability() -> None:
    assert gaussian_delta(1.0, 0.0, 1.0) == 0.0
    assert gaussian_delta(0.0, 1.0, 1.0) == 1.0
    # ε = 0: total variation distance between N(0, σ²) and N(Δ, σ²) = 2Φ(Δ/2σ) − 1.
    assert gaussian_delta(1.0, 1.0, 0.0) == pytest.approx(math.erf(0.5 / math.sqrt(2.0)), rel=1e-13)
    with warnings.catch_warnings(), np.errstate(all="raise"):
        warnings.simplefilter("error")
        for eps in (50.0, 700.0, 710.0, 1e4, 1e8):
            for sigma in (1e-3, 0.05, 1.0, 100.0):
                value = gaussian_delta(sigma, 1.0, eps)
                assert 0.0 <= value <= 1.0 and math.isfinite(value)
        # Far tail at large ε: accurate, not flushed to zero (50-digit value 1.92143275611008e-252).
        assert gaussian_delta(0.045, 1.0, 1000.0) == pytest.approx(1.92143275611008e-252, rel=1e-11)
    values = [gaussian_delta(s, 1.0, 1.0) for s in np.geomspace(0.05, 20.0, 60)]
    assert all(b < a or b == a == 1.0 for a, b in zip(values[:-1], values[1:], strict=True))
    for bad_sigma in (-1.0, math.nan, math.inf):
        with pytest.raises(PrivacyParameterError, match="sigma"):
            gaussian_delta(bad_sigma, 1.0, 1.0)
    with pytest.raises(PrivacyParameterError, match="epsilon"):
        gaussian_delta(1.0, 1.0, -0.1)


EPSILONS = [0.01, 0.1, 0.5, 0.99, 1.0, 2.0, 10.0]
DELTAS = [1e-10, 1e-6, 1e-3, 0.1]
SENSITIVITIES = [0.5, 1.0, 7.0]


@pytest.mark.parametrize("eps", EPSILONS)
@pytest.mark.parametrize("delta", DELTAS)
def test_analytic_sigma_is_tight_and_safe(eps: float, delta: float) -> None:
    for sens in SENSITIVITIES:
        sigma = gaussian_sigma_analytic(sens, eps, delta)
        assert gaussian_delta(sigma, sens, eps) <= delta
        assert gaussian_delta(0.999 * sigma, sens, eps) > delta
        assert gaussian_delta(sigma * (1 - 1e-9), sens, eps) > delta * (1 - 1e-6)
        # σ scales linearly with the sensitivity.
        assert sigma == pytest.approx(sens * gaussian_sigma_analytic(1.0, eps, delta), rel=1e-10)
        if eps < 1.0:
            assert sigma <= gaussian_sigma_classical(sens, eps, delta)


def test_analytic_sigma_extreme_parameters() -> None:
    for eps, delta in [
        (1e-4, 1e-12),
        (0.05, 1e-100),
        (50.0, 1e-300),
        (500.0, 0.5),
        (1e3, 1e-6),
        (1.0, 0.999),
    ]:
        sigma = gaussian_sigma_analytic(1.0, eps, delta)
        assert math.isfinite(sigma) and sigma > 0.0
        assert gaussian_delta(sigma, 1.0, eps) <= delta
        assert gaussian_delta(0.999 * sigma, 1.0, eps) > delta


def test_analytic_sigma_against_high_precision() -> None:
    mpmath = pytest.importorskip("mpmath")
    with mpmath.workdps(50):

        def exact(sigma: float, eps: float) -> object:
            s, e = mpmath.mpf(sigma), mpmath.mpf(eps)
            return mpmath.ncdf(1 / (2 * s) - e * s) - mpmath.exp(e) * mpmath.ncdf(
                -1 / (2 * s) - e * s
            )

        for eps, delta in [(0.01, 1e-10), (1.0, 1e-6), (10.0, 1e-3), (3.0, 1e-200), (1e-6, 1e-30)]:
            sigma = gaussian_sigma_analytic(1.0, eps, delta)
            assert exact(sigma, eps) <= delta  # safe in exact arithmetic, not just in floats
            assert exact(sigma * (1 - 1e-7), eps) > delta  # and tight


def test_gaussian_sigma_dispatch() -> None:
    assert gaussian_sigma(1.0, 0.5, 1e-5) == gaussian_sigma_analytic(1.0, 0.5, 1e-5)
    assert gaussian_sigma(1.0, 0.5, 1e-5, method="classical") == gaussian_sigma_classical(
        1.0, 0.5, 1e-5
    )
    assert gaussian_sigma(0.0, 0.5, 1e-5) == 0.0
    assert gaussian_sigma(0.0, 5.0, 1e-5) == 0.0
    with pytest.raises(PrivacyParameterError, match="analytic.*classical"):
        gaussian_sigma(1.0, 0.5, 1e-5, method="rdp")  # type: ignore[arg-type]
    with pytest.raises(PrivacyParameterError, match="delta"):
        gaussian_sigma(1.0, 1.0, 0.0)
    with pytest.raises(PrivacyParameterError, match="tol"):
        gaussian_sigma_analytic(1.0, 1.0, 1e-5, tol=0.0)


# ---------------------------------------------------------------------------------------
# samplers
# ---------------------------------------------------------------------------------------

N = 200_000


def test_gaussian_noise_moments() -> None:
    rng, _ = make_rng(1)
    x = gaussian_noise(rng, 2.0, N)
    assert x.shape == (N,) and x.dtype == np.float64
    assert abs(x.mean()) < 5 * 2.0 / math.sqrt(N)
    assert x.var() == pytest.approx(4.0, rel=0.03)
    assert gaussian_noise(rng, 1.0, (3, 4)).shape == (3, 4)
    assert np.all(gaussian_noise(rng, 0.0, 5) == 0.0)


def test_laplace_noise_moments() -> None:
    rng, _ = make_rng(2)
    b = 1.5
    x = laplace_noise(rng, b, N)
    assert abs(x.mean()) < 5 * math.sqrt(2) * b / math.sqrt(N)
    assert x.var() == pytest.approx(2 * b * b, rel=0.04)
    assert np.abs(x).mean() == pytest.approx(b, rel=0.02)


def test_gumbel_noise_moments() -> None:
    rng, _ = make_rng(3)
    beta = 0.8
    x = gumbel_noise(rng, beta, N)
    assert x.mean() == pytest.approx(beta * np.euler_gamma, rel=0.03)
    assert x.var() == pytest.approx(math.pi**2 * beta**2 / 6, rel=0.04)


@pytest.mark.parametrize("sampler, law", [(laplace_noise, "laplace"), (gumbel_noise, "gumbel_r")])
def test_laplace_and_gumbel_follow_their_laws(sampler, law) -> None:
    """The whole distribution, not only moments (the samplers build on Exp(1) draws)."""
    from scipy import stats

    rng, _ = make_rng(11)
    x = sampler(rng, 1.3, (200, 500))
    assert x.shape == (200, 500)
    assert stats.kstest(x.ravel() / 1.3, law).pvalue > 1e-3


def test_l2_laplace_norm_and_isotropy() -> None:
    rng, _ = make_rng(4)
    dim, scale, n = 5, 0.7, 40_000
    v = np.stack([l2_laplace_noise(rng, scale, dim) for _ in range(n)])
    assert v.shape == (n, dim)
    norms = np.linalg.norm(v, axis=1)
    # ‖v‖ ~ Gamma(dim, scale): mean dim·scale, variance dim·scale².
    assert norms.mean() == pytest.approx(dim * scale, rel=0.02)
    assert norms.var() == pytest.approx(dim * scale**2, rel=0.05)
    units = v / norms[:, None]
    assert np.all(np.abs(units.mean(axis=0)) < 5 / math.sqrt(dim * n))
    second = units.T @ units / n  # ≈ I / dim for a uniform direction
    assert np.allclose(second, np.eye(dim) / dim, atol=0.01)


def test_l2_laplace_in_one_dimension_is_laplace() -> None:
    rng, _ = make_rng(5)
    x = np.array([l2_laplace_noise(rng, 2.0, 1)[0] for _ in range(40_000)])
    assert x.var() == pytest.approx(2 * 2.0**2, rel=0.05)
    assert abs(x.mean()) < 0.1
    assert np.all(l2_laplace_noise(rng, 0.0, 3) == 0.0)


@pytest.mark.parametrize(
    "call",
    [
        lambda rng: gaussian_noise(rng, -1.0, 3),
        lambda rng: gaussian_noise(rng, math.nan, 3),
        lambda rng: gaussian_noise(rng, True, 3),
        lambda rng: laplace_noise(rng, math.inf, 3),
        lambda rng: laplace_noise(rng, 1.0, -2),
        lambda rng: laplace_noise(rng, 1.0, 2.5),
        lambda rng: gumbel_noise(rng, 1.0, (2, True)),
        lambda rng: l2_laplace_noise(rng, 1.0, 0),
        lambda rng: l2_laplace_noise(rng, "1", 3),
        lambda rng: gaussian_noise(np.random.RandomState(0), 1.0, 3),
        lambda rng: gaussian_noise(None, 1.0, 3),
    ],
)
def test_sampler_refusals(call: object) -> None:
    rng, _ = make_rng(0)
    with pytest.raises(PrivacyParameterError):
        call(rng)  # type: ignore[operator]


# ---------------------------------------------------------------------------------------
# generators
# ---------------------------------------------------------------------------------------


def test_make_rng_user_seed_is_reproducible() -> None:
    g1, info = make_rng(42)
    g2, _ = make_rng(np.int64(42))
    assert np.array_equal(g1.normal(size=8), g2.normal(size=8))
    assert info == SeedInfo(user_seeded=True, seed=42, bit_generator="PCG64DXSM")
    assert info.to_dict() == {
        "user_seeded": True,
        "seed": 42,
        "bit_generator": "PCG64DXSM",
        "spawn_key": [],
    }
    assert type(g1.bit_generator).__name__ == "PCG64DXSM"
    assert "NOT secure" in info.summary()
    assert not np.array_equal(make_rng(43)[0].normal(size=8), make_rng(42)[0].normal(size=8))


def test_make_rng_secure_default() -> None:
    g1, i1 = make_rng()
    g2, i2 = make_rng(None)
    assert not np.array_equal(g1.normal(size=8), g2.normal(size=8))
    for info in (i1, i2):
        assert info.user_seeded is False and info.seed is None
        assert info.bit_generator == "PCG64DXSM"
        assert "secure" in info.summary()
    assert type(g1.bit_generator).__name__ == "PCG64DXSM"


def test_make_rng_seed_sequence() -> None:
    child = np.random.SeedSequence(7).spawn(2)[1]
    g, info = make_rng(child)
    assert info.user_seeded is True and info.seed == 7 and info.spawn_key == (1,)
    again = np.random.SeedSequence(info.seed, spawn_key=info.spawn_key)
    assert np.array_equal(g.normal(size=5), make_rng(again)[0].normal(size=5))


@pytest.mark.parametrize(
    "seed",
    [True, False, -1, 1.0, 1.5, "3", np.random.default_rng(0), np.random.PCG64(0), np.bool_(True)],
    ids=lambda seed: type(seed).__name__ if isinstance(seed, (np.random.Generator, np.random.PCG64)) else repr(seed),
)
def test_make_rng_refusals(seed: object) -> None:
    with pytest.raises(PrivacyParameterError, match="seed"):
        make_rng(seed)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------
# ledger
# ---------------------------------------------------------------------------------------


def test_ledger_basic_composition() -> None:
    ledger = Ledger()
    c1 = ledger.charge(0.5, 1e-6, label="first", mechanism="gaussian")
    ledger.charge(0.25, 0.0, mechanism="laplace")
    assert ledger.spent == (0.75, 1e-6)
    assert ledger.remaining == (None, None)
    assert ledger.charges[0] is c1 and len(ledger.charges) == 2
    assert isinstance(c1, Charge) and c1.released and c1.label == "first"
    assert c1.time > 0


def test_ledger_refusal_records_nothing() -> None:
    ledger = Ledger(epsilon_budget=1.0, delta_budget=1e-5)
    ledger.charge(0.8, 5e-6)
    with pytest.raises(BudgetExceededError) as err:
        ledger.charge(0.3, 1e-6)
    message = str(err.value)
    assert "0.3" in message and "0.8" in message and "ε=1," in message  # request, spent, budget
    with pytest.raises(BudgetExceededError, match="δ"):
        ledger.charge(0.1, 6e-6)
    assert len(ledger.charges) == 1 and ledger.spent == (0.8, 5e-6)
    assert ledger.remaining == (pytest.approx(0.2), pytest.approx(5e-6))
    with pytest.raises(PrivacyParameterError):
        ledger.charge(-1.0, 0.0)
    assert len(ledger.charges) == 1


def test_ledger_require_and_can_afford_charge_nothing() -> None:
    ledger = Ledger(epsilon_budget=1.0, delta_budget=0.0)
    assert ledger.can_afford(1.0, 0.0)
    assert not ledger.can_afford(0.5, 1e-9)  # δ budget 0: pure DP only
    ledger.require(1.0, 0.0)
    with pytest.raises(BudgetExceededError):
        ledger.require(1.5, 0.0)
    assert ledger.charges == () and ledger.spent == (0.0, 0.0)


def test_ledger_exact_budget_in_pieces() -> None:
    ledger = Ledger(epsilon_budget=1.0, delta_budget=1e-6)
    for _ in range(10):
        ledger.charge(0.1, 1e-7)
    assert ledger.spent[0] == pytest.approx(1.0)
    assert ledger.remaining == (pytest.approx(0.0, abs=1e-15), pytest.approx(0.0, abs=1e-21))
    assert not ledger.can_afford(1e-9, 0.0)
    with pytest.raises(BudgetExceededError):
        ledger.charge(1e-9, 0.0)


def test_ledger_mark_unreleased_keeps_budget_spent() -> None:
    ledger = Ledger(epsilon_budget=1.0)
    first = ledger.charge(0.6, 0.0, label="attempt", mechanism="opdisc")
    updated = ledger.mark_unreleased(first)
    assert updated.released is False and updated.epsilon == 0.6 and updated.time == first.time
    assert ledger.charges == (updated,)
    assert ledger.spent == (0.6, 0.0)
    assert ledger.mark_unreleased(updated) == updated  # idempotent
    with pytest.raises(BudgetExceededError):
        ledger.charge(0.5, 0.0)
    assert "NOT released" in ledger.summary()
    with pytest.raises(PrivacyParameterError, match="not recorded"):
        ledger.mark_unreleased(Ledger().charge(0.1, 0.0))


def test_ledger_budget_validation() -> None:
    for eps_budget in (0.0, -1.0, math.nan, math.inf, True):
        with pytest.raises(PrivacyParameterError, match="epsilon_budget"):
            Ledger(epsilon_budget=eps_budget)
    for delta_budget in (-0.1, 1.0, math.nan):
        with pytest.raises(PrivacyParameterError, match="delta_budget"):
            Ledger(delta_budget=delta_budget)
    ledger = Ledger(epsilon_budget=2, delta_budget=0)
    assert (ledger.epsilon_budget, ledger.delta_budget) == (2.0, 0.0)


def test_ledger_summary() -> None:
    ledger = Ledger(epsilon_budget=1.0)
    ledger.charge(0.25, 1e-7, label="logistic\nregression", mechanism="objective-perturbation")
    text = ledger.summary()
    assert "basic composition" in text and "objective-perturbation" in text
    assert "logistic; regression" in text and "released" in text
    assert "Ledger(" in repr(ledger)


def test_ledger_thread_safety() -> None:
    ledger = Ledger(epsilon_budget=1.0)
    accepted: list[int] = []
    refused: list[int] = []
    barrier = threading.Barrier(8)

    def worker() -> None:
        barrier.wait()
        for _ in range(250):
            try:
                ledger.charge(0.001, 0.0)
                accepted.append(1)
            except BudgetExceededError:
                refused.append(1)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(accepted) == 1000 and len(refused) == 1000
    assert len(ledger.charges) == 1000
    assert ledger.spent[0] == pytest.approx(1.0, rel=1e-12)


# ---------------------------------------------------------------------------------------
# ledger: which process may charge it (real worker processes: tests/privacy/test_ledger_processes.py)
# ---------------------------------------------------------------------------------------


def _as_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make this process look like a multiprocessing child (a joblib/loky or pool worker)."""
    monkeypatch.setattr("dpopt.privacy.ledger.multiprocessing.parent_process", lambda: object())


def test_the_default_ledger_refuses_in_a_worker_before_the_data_is_touched(monkeypatch: pytest.MonkeyPatch) -> None:
    import dpopt as dp
    from dpopt.datasets import make_classification
    from dpopt.errors import LedgerProcessError

    data, _ = make_classification(40, 2, seed=0)
    theta = dp.Variable(2)
    problem = dp.Problem(dp.LogisticLoss(data, theta), regularizer=dp.L2Squared(theta, 0.1))
    before = dp.default_ledger().charges
    dp.ObjectivePerturbation(1.0, 1e-6).run(problem, solver="scipy")  # the main process: charged
    assert len(dp.default_ledger().charges) == len(before) + 1
    _as_worker(monkeypatch)

    def touched(*args: object, **kwargs: object) -> None:
        raise AssertionError("the run went past its first check")

    monkeypatch.setattr("dpopt.mechanisms.pipeline.make_rng", touched)  # the noise is drawn right after
    with pytest.raises(LedgerProcessError, match=r"default ledger cannot be charged in a worker process .*"
                                                 r"dpopt\.SQLiteLedger") as err:
        dp.ObjectivePerturbation(1.0, 1e-6).run(problem, solver="scipy")
    assert "\n" not in str(err.value) and isinstance(err.value, ValueError)
    assert len(dp.default_ledger().charges) == len(before) + 1
    mine = Ledger(epsilon_budget=1.0)  # a ledger the worker makes for itself is its own to charge
    mine.charge(0.5, 0.0)
    assert mine.spent == (0.5, 0.0)


def test_the_default_ledger_refuses_in_a_dask_task(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys
    import types

    from dpopt.errors import LedgerProcessError
    from dpopt.mechanisms.base import default_ledger

    fake = types.ModuleType("distributed")
    fake.get_worker = lambda: object()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "distributed", fake)
    with pytest.raises(LedgerProcessError, match="task of a Dask worker"):
        default_ledger().require(0.1, 0.0)

    def outside() -> None:
        raise ValueError("No worker found")

    fake.get_worker = outside  # type: ignore[attr-defined]
    default_ledger().require(0.1, 0.0)  # not in a task: the main process


def test_a_ledger_copy_in_another_process_refuses_every_charge(monkeypatch: pytest.MonkeyPatch) -> None:
    from dpopt.errors import LedgerProcessError

    ledger = Ledger(epsilon_budget=1.0)
    ledger.charge(0.25, 0.0)
    monkeypatch.setattr("dpopt.privacy.ledger.os.getpid", lambda: -1)  # as in a forked child
    for attempt in (lambda: ledger.charge(0.1, 0.0), lambda: ledger.require(0.1, 0.0),
                    lambda: ledger.can_afford(0.1, 0.0), lambda: ledger.spend(0.1, 0.0).__enter__()):
        with pytest.raises(LedgerProcessError, match=r"belongs to process \d+ and cannot be charged from "
                                                     r"process -1.*SQLiteLedger"):
            attempt()
    assert ledger.spent == (0.25, 0.0) and len(ledger.charges) == 1  # still readable
