"""Floating-point noise samplers, for noise that is never released directly.

Every sampler takes an explicit :class:`numpy.random.Generator` (make one with
:func:`dpopt.privacy.rng.make_rng`) and returns float64 arrays drawn from that generator's
stream.  Scales are public (they come from calibration), so error messages may print them.

Where these samplers are (and are not) used
-------------------------------------------
A floating-point release ``value + noise`` leaks through its low-order bits: the set of
doubles it can take depends on the centre (Mironov [Mir12]; Jin et al., IEEE S&P 2022).
dpopt therefore releases **every** additive value — a value plus noise that leaves a
mechanism or feeds a later step — through :mod:`dpopt.privacy.grid`: rounded onto a public
power-of-two grid, with exact discrete Laplace or discrete Gaussian noise from
:mod:`dpopt.privacy.exact`, whose draws read the OS CSPRNG in an unseeded run.  Selections
use :mod:`dpopt.privacy.exact_selection`.

The samplers here remain only for

* noise that stays *inside an objective* and is never released: objective perturbation's
  linear term, OPDisc's η, RSPM's separator weights, OPSamp's exponential perturbations.
  The release is then a minimiser (a function of the noise and the data), and the
  mechanism's proof bounds the law of that minimiser for the continuous noise; the float
  law only approximates it, a residual each mechanism's docstring states;
* benchmarks and experiments (e.g. :mod:`dpopt.bench.noise` compares them with the exact
  samplers).

Do not add one of these draws to a value that is released.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from dpopt.errors import PrivacyParameterError

__all__ = ["exponential_noise", "gaussian_noise", "gumbel_noise", "l2_laplace_noise", "laplace_noise"]

Size = int | tuple[int, ...]


def _check_rng(rng: object) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise PrivacyParameterError(
            f"rng must be a numpy.random.Generator, got {type(rng).__name__}; "
            "create one with dpopt.privacy.make_rng()"
        )
    return rng


def _check_scale(value: object, name: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise PrivacyParameterError(
            f"{name} must be a finite real number >= 0, got a value of type {type(value).__name__}"
        )
    out = float(value)
    if not (math.isfinite(out) and out >= 0.0):
        raise PrivacyParameterError(f"{name} must be finite and >= 0 (in [0, inf)), got {out!r}")
    return out


def _check_int(value: object, name: str, minimum: int) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise PrivacyParameterError(
            f"{name} must be an integer >= {minimum}, got a value of type {type(value).__name__}"
        )
    out = int(value)
    if out < minimum:
        raise PrivacyParameterError(f"{name} must be an integer >= {minimum}, got {out}")
    return out


def _check_size(size: object) -> tuple[int, ...]:
    if isinstance(size, tuple):
        return tuple(_check_int(s, "every entry of size", 0) for s in size)
    return (_check_int(size, "size", 0),)


def gaussian_noise(rng: np.random.Generator, sigma: float, size: Size) -> np.ndarray:
    """I.i.d. N(0, σ²) noise.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of randomness.
    sigma : float
        Standard deviation σ ≥ 0 (σ = 0 gives zeros).
    size : int or tuple of int
        Output shape.

    Returns
    -------
    numpy.ndarray
        float64 array of shape ``size``.
    """
    gen = _check_rng(rng)
    sig = _check_scale(sigma, "sigma")
    shape = _check_size(size)
    return np.asarray(gen.normal(0.0, 1.0, size=shape), dtype=np.float64) * sig


def laplace_noise(rng: np.random.Generator, scale: float, size: Size) -> np.ndarray:
    """I.i.d. Laplace(0, b) noise, density ``exp(−|x|/b) / (2b)`` (variance 2b²).

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of randomness.
    scale : float
        Scale b ≥ 0 (b = 0 gives zeros); see :func:`dpopt.privacy.laplace_scale`.
    size : int or tuple of int
        Output shape.

    Returns
    -------
    numpy.ndarray
        float64 array of shape ``size``.
    """
    gen = _check_rng(rng)
    b = _check_scale(scale, "scale")
    shape = _check_size(size)
    # E₁ − E₂ with E₁, E₂ i.i.d. Exp(1) is standard Laplace; numpy's ziggurat
    # exponential makes this ~1.6x faster than Generator.laplace (noisy max draws
    # 2p of these per Frank-Wolfe step, the dominant cost of a fast LASSO step)
    e = gen.standard_exponential(size=(2, *shape))
    return np.asarray(e[0] - e[1], dtype=np.float64) * b


def exponential_noise(rng: np.random.Generator, scale: float, size: Size) -> np.ndarray:
    """I.i.d. Exponential noise with mean ``scale`` (rate 1/scale), density ``exp(−x/s)/s`` on x ≥ 0.

    The perturbation of follow-the-perturbed-leader and of OPSamp (NRVW19 Alg. 2,
    "Exp(η)" there is the rate η, i.e. scale 1/η).

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of randomness.
    scale : float
        Mean s ≥ 0 (0 gives zeros).
    size : int or tuple of int
        Output shape.

    Returns
    -------
    numpy.ndarray
        float64 array of shape ``size``.
    """
    gen = _check_rng(rng)
    s = _check_scale(scale, "scale")
    shape = _check_size(size)
    return np.asarray(gen.exponential(1.0, size=shape), dtype=np.float64) * s


def l2_laplace_noise(rng: np.random.Generator, scale: float, dim: int) -> np.ndarray:
    """A vector with density ∝ ``exp(−‖v‖₂ / scale)`` in ``R^dim`` ("ℓ2-Laplace").

    This is the noise of output and objective perturbation in Chaudhuri,
    Monteleoni & Sarwate (JMLR 2011): the norm ‖v‖₂ follows Gamma(shape=dim,
    scale=scale) and the direction is uniform on the unit sphere, independent of
    the norm.  Hence ``E‖v‖₂ = dim · scale``.  For ε-DP of a quantity with ℓ2
    sensitivity Δ₂ use ``scale = Δ₂ / ε``.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of randomness.
    scale : float
        Scale ≥ 0 (0 gives the zero vector).
    dim : int
        Dimension ≥ 1.

    Returns
    -------
    numpy.ndarray
        float64 array of shape ``(dim,)``.
    """
    gen = _check_rng(rng)
    b = _check_scale(scale, "scale")
    d = _check_int(dim, "dim", 1)
    direction = gen.normal(0.0, 1.0, size=d)
    length = float(np.linalg.norm(direction))
    while length == 0.0:  # probability zero; redraw rather than divide by zero
        direction = gen.normal(0.0, 1.0, size=d)
        length = float(np.linalg.norm(direction))
    radius = float(gen.gamma(shape=float(d), scale=1.0)) * b
    return np.asarray(direction / length * radius, dtype=np.float64)


def gumbel_noise(rng: np.random.Generator, scale: float, size: Size) -> np.ndarray:
    """I.i.d. Gumbel(0, β) noise (the "Gumbel-max" form of the exponential mechanism).

    ``argmax_i (u_i·ε/(2Δu) + G_i)`` with standard Gumbel ``G_i`` samples the
    exponential mechanism exactly; equivalently add Gumbel noise of scale
    ``β = 2Δu/ε`` to the scores ``u_i``.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of randomness.
    scale : float
        Scale β ≥ 0 (0 gives zeros).
    size : int or tuple of int
        Output shape.

    Returns
    -------
    numpy.ndarray
        float64 array of shape ``size``.
    """
    gen = _check_rng(rng)
    beta = _check_scale(scale, "scale")
    shape = _check_size(size)
    # −log E with E ~ Exp(1) is standard Gumbel (P(−log E ≤ x) = P(E ≥ e^{−x}) = exp(−e^{−x}));
    # ~2.7x faster than Generator.gumbel, whose inverse CDF takes two logarithms
    return -np.log(gen.standard_exponential(size=shape)) * beta
