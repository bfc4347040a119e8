"""Tests of the black-box privacy audit harness, :mod:`dpopt.testing.audit`.

The harness is itself checked the way mechanisms are: on mechanisms whose true
ε is known it must stay at or below a correct claim (soundness), come close to
it (tightness, so passing is not trivial), and catch variants with too little
noise (mutation).  Large run counts use vectorised mechanisms through
``audit_outputs``; ``audit`` itself is exercised with small ``n_runs``.
"""

from __future__ import annotations

import dataclasses
import math
import subprocess
import sys

import numpy as np
import pytest
from scipy import optimize, stats

from dpopt.errors import ModelError, PrivacyParameterError
from dpopt.testing import AuditResult, audit, audit_outputs

N_BIG = 20_000
SEEDS = range(8)


# ----------------------------------------------------------------------------- mechanisms


def laplace_count_runs(n: int, scale: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """n runs of the Laplace counting-query mechanism on D0 (count 0) and D1 (count 1)."""
    rng = np.random.default_rng(seed)
    return rng.laplace(0.0, scale, n), 1.0 + rng.laplace(0.0, scale, n)


def classical_gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """σ = Δ·sqrt(2 ln(1.25/δ))/ε (Dwork–Roth Thm. A.1, valid for ε < 1; loose at ε = 1)."""
    return sensitivity * math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon


def gaussian_delta(sigma: float, epsilon: float, sensitivity: float = 1.0) -> float:
    """Exact δ(ε) of the Gaussian mechanism (Balle & Wang 2018, Thm. 8)."""
    a, b = sensitivity / (2.0 * sigma), epsilon * sigma / sensitivity
    return float(stats.norm.cdf(a - b) - math.exp(epsilon) * stats.norm.cdf(-a - b))


def analytic_gaussian_sigma(epsilon: float, delta: float) -> float:
    """Smallest σ with exact δ(ε) ≤ δ (sensitivity 1): the tight calibration."""
    return float(optimize.brentq(lambda s: gaussian_delta(s, epsilon) - delta, 1e-2, 1e3))


SHIFT_5D = np.ones(5) / math.sqrt(5.0)  # ℓ2 sensitivity 1, spread over all coordinates


def gaussian_vector_runs(n: int, sigma: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.normal(0.0, sigma, (n, 5)), SHIFT_5D + rng.normal(0.0, sigma, (n, 5))


def laplace_count(data: list[int], seed: int, scale: float = 1.0) -> float:
    """One run of the Laplace mechanism on a counting query (sensitivity 1)."""
    return float(sum(data) + np.random.default_rng(seed).laplace(0.0, scale))


def gaussian_mean_vector(data: np.ndarray, seed: int) -> np.ndarray:
    """One run of a Gaussian mechanism with a 3-dimensional output."""
    return data + np.random.default_rng(seed).normal(0.0, 0.3, 3)


D0_COUNT, D1_COUNT = [1, 0, 1, 1], [1, 1, 1, 1]  # replace-one neighbours, counts 3 and 4


# ----------------------------------------------------------------------------- Laplace


def test_laplace_audit_respects_claim_and_is_tight() -> None:
    bounds = [
        audit_outputs(*laplace_count_runs(N_BIG, 1.0, s), claimed_epsilon=1.0).epsilon_lower
        for s in SEEDS
    ]
    # measured (seeds 0-7): 0.89 to 0.98, mean ≈ 0.93
    assert max(bounds) <= 1.0
    assert min(bounds) > 0.5
    assert np.mean(bounds) > 0.8


def test_laplace_mutation_half_noise_is_caught() -> None:
    for s in SEEDS:
        result = audit_outputs(*laplace_count_runs(N_BIG, 0.5, s), claimed_epsilon=1.0)
        assert result.violates, result.summary()
        assert result.epsilon_lower > 1.5  # true ε = 2; measured 1.89 to 1.93


def test_discrete_outputs_randomized_response() -> None:
    """Ties: binary outputs, where the event must be s > t / s < t between the two values."""
    for true_eps, should_violate in [(1.0, False), (2.0, True)]:
        p = math.exp(true_eps) / (1.0 + math.exp(true_eps))
        rng = np.random.default_rng(7)
        out0 = (rng.random(N_BIG) < p).astype(float)
        out1 = (rng.random(N_BIG) >= p).astype(float)
        result = audit_outputs(out0, out1, claimed_epsilon=1.0)
        assert result.violates is should_violate, result.summary()
        assert result.epsilon_lower > 0.9 * true_eps - 0.1  # measured 0.92 and 1.96
        assert 0.0 <= result.threshold <= 1.0  # the event separates the two output values


# ----------------------------------------------------------------------------- Gaussian


def test_classical_gaussian_not_flagged() -> None:
    sigma = classical_gaussian_sigma(1.0, 1e-5)
    bounds = []
    for s in SEEDS:
        rng = np.random.default_rng(s)
        out0, out1 = rng.normal(0.0, sigma, N_BIG), 1.0 + rng.normal(0.0, sigma, N_BIG)
        result = audit_outputs(out0, out1, claimed_epsilon=1.0, claimed_delta=1e-5)
        assert not result.violates, result.summary()
        bounds.append(result.epsilon_lower)
    assert np.mean(bounds) > 0.15  # the audit sees the signal (measured mean ≈ 0.22)


def test_vector_outputs_default_projection() -> None:
    """5-d Gaussian outputs with the tight (analytic) σ for (1, 1e-5), and half of it."""
    sigma = analytic_gaussian_sigma(1.0, 1e-5)  # ≈ 3.73; true ε of σ/2 at δ = 1e-5 ≈ 2.15
    n = 100_000
    for s in range(3):
        full = audit_outputs(
            *gaussian_vector_runs(n, sigma, s), claimed_epsilon=1.0, claimed_delta=1e-5
        )
        assert not full.violates, full.summary()
        assert full.epsilon_lower > 0.3, full.summary()  # measured 0.44 to 0.64

        out0, out1 = gaussian_vector_runs(n, sigma / 2, s)
        half = audit_outputs(out0, out1, claimed_epsilon=1.0, claimed_delta=1e-5)
        assert half.violates, half.summary()  # measured 1.16 to 1.35
        # The projection uses all 5 coordinates; one coordinate sees only 1/sqrt(5) of the shift.
        one_coord = audit_outputs(
            out0, out1, claimed_epsilon=1.0, claimed_delta=1e-5, statistic=lambda o: o[:, 0]
        )
        assert not one_coord.violates
        assert half.epsilon_lower > one_coord.epsilon_lower + 0.3


def test_projection_is_fitted_on_selection_runs_only() -> None:
    """Identical output distributions in 500 dimensions: an honest audit finds nothing.

    Fitting the projection on all runs (the leaky statistic below) lets each run
    see itself in the direction and fakes a large ε; the default must not.
    """
    for s in range(3):
        rng = np.random.default_rng(100 + s)
        out0, out1 = rng.normal(size=(200, 500)), rng.normal(size=(200, 500))
        honest = audit_outputs(out0, out1, claimed_epsilon=0.5)
        assert honest.epsilon_lower < 0.2, honest.summary()  # measured 0.0

        direction = out1.mean(axis=0) - out0.mean(axis=0)
        leaky = audit_outputs(
            out0, out1, claimed_epsilon=0.5, statistic=lambda o, d=direction: o @ d
        )
        assert leaky.epsilon_lower > 1.0  # measured 1.58 to 2.13: the test has teeth


def test_identical_and_deterministic_mechanisms() -> None:
    rng = np.random.default_rng(3)
    same = audit_outputs(rng.normal(size=2000), rng.normal(size=2000), claimed_epsilon=0.1)
    assert not same.violates
    assert same.epsilon_lower < 0.1

    constant = audit_outputs(np.zeros(200), np.zeros(200), claimed_epsilon=0.1)
    assert constant.epsilon_lower == 0.0

    leak = audit_outputs(np.zeros(200), np.ones(200), claimed_epsilon=1.0)
    assert leak.violates
    assert leak.epsilon_lower > 3.0  # no noise at all: only the run count limits the bound


# ----------------------------------------------------------------------------- audit()


def test_audit_runs_mechanism_and_catches_too_little_noise() -> None:
    ok = audit(laplace_count, D0_COUNT, D1_COUNT, claimed_epsilon=1.0, n_runs=1000, seed=1)
    assert isinstance(ok, AuditResult)
    assert not ok.violates
    assert ok.epsilon_lower > 0.3  # measured 0.60
    assert ok.n_runs == 1000 and ok.counts[2] == 500

    def too_little(data: list[int], seed: int) -> float:
        return laplace_count(data, seed, scale=0.2)  # true ε = 5

    bad = audit(too_little, D0_COUNT, D1_COUNT, claimed_epsilon=1.0, n_runs=1000, seed=1)
    assert bad.violates, bad.summary()


def test_audit_vector_outputs_and_seeds() -> None:
    calls: list[tuple[int, int]] = []

    def recorded(data: np.ndarray, seed: int) -> np.ndarray:
        calls.append((int(data[0]), seed))
        return gaussian_mean_vector(data, seed)

    d0, d1 = np.zeros(3), np.array([1.0, 0.0, 0.0])
    first = audit(recorded, d0, d1, claimed_epsilon=1.0, n_runs=300, seed=5)
    seeds0 = [s for d, s in calls if d == 0]
    seeds1 = [s for d, s in calls if d == 1]
    assert len(seeds0) == len(seeds1) == 300
    assert len(set(seeds0) | set(seeds1)) == 600  # all distinct, none shared by D0 and D1
    assert all(isinstance(s, int) and 0 <= s < 2**32 for s in seeds0 + seeds1)
    assert first.violates  # σ = 0.3 for a unit shift is far from ε = 1

    again = audit(gaussian_mean_vector, d0, d1, claimed_epsilon=1.0, n_runs=300, seed=5)
    assert again == first  # reproducible from the root seed
    other = audit(gaussian_mean_vector, d0, d1, claimed_epsilon=1.0, n_runs=300, seed=6)
    assert other.counts != first.counts


def test_audit_parallel_matches_serial() -> None:
    kwargs = {"claimed_epsilon": 1.0, "n_runs": 40, "seed": 11}
    serial = audit(laplace_count, D0_COUNT, D1_COUNT, **kwargs)
    parallel = audit(laplace_count, D0_COUNT, D1_COUNT, n_jobs=2, **kwargs)
    assert parallel == serial


def test_serial_audit_does_not_import_joblib() -> None:
    code = (
        "import sys, numpy as np\n"
        "from dpopt.testing import audit\n"
        "audit(lambda d, s: d + np.random.default_rng(s).laplace(), 0.0, 1.0,"
        " claimed_epsilon=1.0, n_runs=20)\n"
        "assert 'joblib' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


# ----------------------------------------------------------------------------- result object


def test_result_is_frozen_and_summarised() -> None:
    result = audit_outputs(*laplace_count_runs(2000, 0.5, 0), claimed_epsilon=1.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.epsilon_lower = 0.0  # type: ignore[misc]
    text = result.summary()
    assert "VIOLATION" in text and result.orientation in text
    assert result.orientation in {"D0: s > t", "D0: s < t", "D1: s > t", "D1: s < t"}
    k0, k1, n_eval = result.counts
    assert n_eval == 1000 and 0 <= k0 <= n_eval and 0 <= k1 <= n_eval
    assert "no violation" in audit_outputs(np.zeros(40), np.zeros(40), claimed_epsilon=1).summary()


# ----------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"claimed_epsilon": 0.0}, PrivacyParameterError),
        ({"claimed_epsilon": -1.0}, PrivacyParameterError),
        ({"claimed_epsilon": math.inf}, PrivacyParameterError),
        ({"claimed_epsilon": math.nan}, PrivacyParameterError),
        ({"claimed_epsilon": 1.0, "claimed_delta": -0.1}, PrivacyParameterError),
        ({"claimed_epsilon": 1.0, "claimed_delta": 1.0}, PrivacyParameterError),
        ({"claimed_epsilon": 1.0, "confidence": 0.0}, ModelError),
        ({"claimed_epsilon": 1.0, "confidence": 1.0}, ModelError),
        ({"claimed_epsilon": 1.0, "selection_fraction": 0.0}, ModelError),
        ({"claimed_epsilon": 1.0, "selection_fraction": 1.0}, ModelError),
        ({"claimed_epsilon": 1.0, "selection_fraction": 0.01}, ModelError),
    ],
)
def test_argument_validation(kwargs: dict[str, float], error: type[Exception]) -> None:
    out0, out1 = laplace_count_runs(100, 1.0, 0)
    with pytest.raises(error):
        audit_outputs(out0, out1, **kwargs)
    with pytest.raises(ValueError):  # every dpopt argument error is also a ValueError
        audit(laplace_count, D0_COUNT, D1_COUNT, n_runs=100, **kwargs)


def test_shape_and_run_validation() -> None:
    with pytest.raises(ModelError, match="at least 20"):
        audit_outputs(np.zeros(19), np.zeros(19), claimed_epsilon=1.0)
    with pytest.raises(ModelError, match="at least 20"):
        audit(laplace_count, D0_COUNT, D1_COUNT, claimed_epsilon=1.0, n_runs=10)
    with pytest.raises(ModelError, match="same shape"):
        audit_outputs(np.zeros(30), np.zeros(40), claimed_epsilon=1.0)
    with pytest.raises(ModelError, match="shape"):
        audit_outputs(np.zeros((30, 2, 2)), np.zeros((30, 2, 2)), claimed_epsilon=1.0)
    with pytest.raises(ModelError, match="one scalar per run"):
        audit_outputs(
            np.zeros((30, 2)), np.zeros((30, 2)), claimed_epsilon=1.0, statistic=lambda o: o
        )
    with pytest.raises(ModelError, match="NaN"):
        audit_outputs(np.full(30, np.nan), np.zeros(30), claimed_epsilon=1.0)
    with pytest.raises(ModelError, match="seed"):
        audit(laplace_count, D0_COUNT, D1_COUNT, claimed_epsilon=1.0, n_runs=20, seed=-1)
    with pytest.raises(ModelError, match="n_jobs"):
        audit(laplace_count, D0_COUNT, D1_COUNT, claimed_epsilon=1.0, n_runs=20, n_jobs=0)

    def ragged(data: list[int], seed: int) -> np.ndarray:
        return np.zeros(2 + seed % 2)

    with pytest.raises(ModelError, match="same shape"):
        audit(ragged, D0_COUNT, D1_COUNT, claimed_epsilon=1.0, n_runs=20)
