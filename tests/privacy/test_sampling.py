"""The noise samplers of :mod:`dpopt.privacy.sampling`: moments, laws and refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpopt.errors import PrivacyParameterError
from dpopt.privacy import gaussian_noise, gumbel_noise, l2_laplace_noise, laplace_noise, make_rng

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
