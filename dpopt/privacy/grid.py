"""Additive releases on a public power-of-two grid, with exact discrete noise.

A floating-point release ``centre + σ·Z`` carries bits that depend on the centre
(Mironov, CCS 2012): some doubles are reachable from one neighbour's centre and not from
the other's.  dpopt therefore releases every additive value as

    release = (round(centre / γ) + K) · γ,

where γ = 2^k is a *public* power of two chosen from public constants only (the
sensitivity and the dimension, :func:`grid_step`), ``round`` is round-half-to-even onto the
integers (exact: dividing by a power of two is exact in binary floating point), and K is an
exact discrete Gaussian or discrete Laplace vector on ℤ^d ([CKS20], Algs. 1–3, drawn by
:class:`dpopt.privacy.exact.ExactSampler`).  The integer is clamped to ±2^52 (a 1-Lipschitz
map, so sensitivities do not grow), hence the product with γ is exact: every released
value is an integer multiple of γ, and which multiples are reachable does not depend on
the centre at all.  Everything computed from a release afterwards is post-processing.

Rounding moves each coordinate by at most γ/2, so the rounded centres of neighbours differ
by at most Δ₂ + γ√d in ℓ2 and Δ₁ + γd in ℓ1 (in grid units: Δ/γ + √d and Δ/γ + d);
:func:`grid_step` picks γ so that this adds at most 2^-``GRID_BITS`` of Δ.  Calibration uses
the discrete laws' own guarantees: the discrete Laplace mechanism's pure ε = Δ₁/t, the
discrete Gaussian's exact profile in one dimension ([CKS20], Thm. 7,
:func:`dpopt.privacy.exact.discrete_gaussian_delta`) and, in d dimensions, its zCDP
ρ = Δ₂²/(2σ²) with the conversion of :func:`dpopt.privacy.zcdp.zcdp_delta`.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

import numpy as np

from dpopt.errors import PrivacyParameterError
from dpopt.privacy.calibration import Budget, check_epsilon_delta, check_sensitivity
from dpopt.privacy.exact import ExactSampler, discrete_gaussian_delta, sampler_for
from dpopt.privacy.zcdp import zcdp_rho

__all__ = [
    "GRID_BITS",
    "GridNoise",
    "gaussian_on_grid",
    "gaussian_grid_noise",
    "grid_step",
    "laplace_on_grid",
    "on_grid",
]

#: rounding onto the grid adds at most 2^-GRID_BITS of the sensitivity (a public constant,
#: chosen before any data set was looked at: 1/256 keeps the cost below half a percent)
GRID_BITS = 8
#: grid integers are clamped to ±2^52 so that k·γ is an exact double
_LIMIT = float(2**52)


def grid_step(sensitivity: float, spread: float, bits: int = GRID_BITS) -> float:
    """The public grid γ = 2^⌊log2(Δ / (spread · 2^bits))⌋.

    Parameters
    ----------
    sensitivity : float
        Δ > 0 of the released quantity (in the norm the noise is calibrated to).
    spread : float
        How many grid steps rounding can add to that norm: √d for ℓ2, d for ℓ1, 1 for a scalar.
    bits : int
        Rounding adds at most Δ·2^-bits.

    Returns
    -------
    float
        A power of two γ with γ · spread ≤ Δ · 2^-bits.
    """
    delta_value = check_sensitivity(sensitivity)
    if delta_value == 0.0:
        raise PrivacyParameterError("a grid needs a sensitivity > 0")
    if not (isinstance(spread, numbers.Real) and math.isfinite(spread) and spread >= 1.0):
        raise PrivacyParameterError(f"spread must be a finite number >= 1 (sqrt(d), d or 1), got {spread!r}")
    exponent = math.floor(math.log2(delta_value / (spread * 2.0**bits)))
    gamma = math.ldexp(1.0, exponent)
    while gamma * spread > delta_value * 2.0**-bits:  # guard log2's rounding
        gamma /= 2.0
    return gamma


def _grid_units(values: np.ndarray, gamma: float) -> np.ndarray:
    """``values`` in grid units: rounded half to even, clamped to ±2^52 (a NaN — a bug upstream,
    never a data value — becomes 0 so that no release can be NaN on one neighbour only)."""
    units = np.rint(np.asarray(values, dtype=np.float64) / gamma)
    if units.ndim == 0:
        return np.clip(np.nan_to_num(units, nan=0.0, posinf=_LIMIT, neginf=-_LIMIT), -_LIMIT, _LIMIT)
    units[np.isnan(units)] = 0.0
    np.fmin(units, _LIMIT, out=units)  # ±inf and beyond: the clamp (fewer calls than nan_to_num and clip)
    np.fmax(units, -_LIMIT, out=units)
    return units


def on_grid(values: np.ndarray, gamma: float) -> np.ndarray:
    """``values`` rounded (half to even) onto γℤ, clamped to ±2^52·γ: exact float64 multiples of γ."""
    return _grid_units(values, gamma) * gamma


@dataclass(frozen=True)
class GridNoise:
    """A public law of exact additive noise on the grid γℤ^d.

    Attributes
    ----------
    kind : {"gaussian", "laplace"}
        Discrete Gaussian with P[k] ∝ exp(−k²/(2·param)) or discrete Laplace with
        P[k] ∝ exp(−|k|/param), on the integers k (grid units).
    gamma : float
        The grid step, a power of two.
    param : Fraction
        σ²/γ² (Gaussian) or t = b/γ (Laplace), exact.
    """

    kind: Literal["gaussian", "laplace"]
    gamma: float
    param: Fraction

    @property
    def scale(self) -> float:
        """σ (Gaussian) or b (Laplace) in the units of the released value."""
        if self.kind == "gaussian":
            return self.gamma * math.sqrt(self.param)
        return self.gamma * float(self.param)

    def units(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """``size`` exact integer draws (grid units, as float64) from ``rng``'s bit source.

        A run's generator (:class:`dpopt.privacy.rng.NoiseGenerator`) keeps one
        :class:`_Stream` per law, which draws ahead in growing vectorised batches: the noise
        does not depend on the data, so drawing it early changes nothing but the time.  Any
        other generator gets a fresh sampler per call (:func:`sampler_for`).
        """
        streams = getattr(rng, "__dict__", None)
        if streams is None:
            return self._draw(sampler_for(rng), size)
        table = streams.setdefault("_dpopt_noise_streams", {})
        stream = table.get(self)
        if stream is None:
            stream = table[self] = _Stream(self, sampler_for(rng))
        return stream.take(size)

    def _draw(self, sampler: ExactSampler, size: int) -> np.ndarray:
        if self.kind == "gaussian":
            return np.asarray(sampler.discrete_gaussian(self.param, size), dtype=np.float64)
        return np.asarray(sampler.discrete_laplace(self.param, size), dtype=np.float64)

    def noise(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """``size`` exact noise values, each an integer multiple of γ (add it to a value on the grid)."""
        return self.units(rng, size) * self.gamma

    def release(self, centre: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """``centre`` rounded onto the grid plus exact noise: float64 multiples of γ."""
        flat = np.asarray(centre, dtype=np.float64)
        units = _grid_units(flat, self.gamma)
        out = np.clip(units + self.units(rng, flat.size).reshape(flat.shape), -_LIMIT, _LIMIT)
        return out * self.gamma

    def expected_norm(self, dim: int) -> float:
        """E‖v‖₂ of a draw in ``dim`` dimensions for the continuous law of the same scale
        (the discrete law's variance is at most σ² ([CKS20], Prop. 19), so this is an upper
        bound up to one grid step per coordinate)."""
        if self.kind == "gaussian":
            return self.scale * math.sqrt(2.0) * math.exp(math.lgamma((dim + 1) / 2) - math.lgamma(dim / 2))
        return self.scale * math.sqrt(2.0 * dim)


class _Stream:
    """Draws of one law served in order: the first call draws exactly its size (a one-off release
    pays for nothing more), later ones draw ahead in batches that double from 256 to 2^16."""

    __slots__ = ("_block", "_buffer", "_law", "_sampler", "_used")

    def __init__(self, law: GridNoise, sampler: ExactSampler) -> None:
        self._law, self._sampler = law, sampler
        self._buffer = np.empty(0)
        self._used, self._block = 0, 0  # the first call draws what it asks for, later ones ahead

    def take(self, size: int) -> np.ndarray:
        left = self._buffer.size - self._used
        if left < size:
            fresh = self._law._draw(self._sampler, max(size - left, self._block))
            self._block = min(max(2 * self._block, 256), 1 << 16)
            self._buffer = np.concatenate([self._buffer[self._used:], fresh])
            self._used = 0
        out = self._buffer[self._used:self._used + size]
        self._used += size
        return out


def _check_dim(dim: object) -> int:
    """``dim`` as an int >= 1, or a one-line refusal."""
    if isinstance(dim, (bool, np.bool_)) or not isinstance(dim, numbers.Integral) or int(dim) < 1:
        raise PrivacyParameterError(f"dim must be an integer >= 1, got {dim!r}")
    return int(dim)


def _ceil_fraction(value: float) -> Fraction:
    """An integer ≥ ``value``·(1 + 10⁻¹²), as a Fraction: the margin covers the float rounding
    of ``value`` itself, so the discrete parameter is never below the exact one."""
    return Fraction(math.ceil(value * (1.0 + 1e-12)))


def _check_gamma(gamma: float) -> float:
    """``gamma`` if it is a positive power of two, else a one-line refusal."""
    if not (isinstance(gamma, numbers.Real) and math.isfinite(gamma) and gamma > 0.0
            and math.frexp(gamma)[0] == 0.5):
        raise PrivacyParameterError(f"gamma must be a positive power of two (see grid_step), got {gamma!r}")
    return float(gamma)


def gaussian_grid_noise(sigma: float, gamma: float) -> GridNoise:
    """Discrete Gaussian noise of scale at least σ on the grid γ (σ²/γ² rounded up to an integer)."""
    if not (math.isfinite(sigma) and sigma > 0.0):
        raise PrivacyParameterError(f"sigma must be finite and > 0, got {sigma!r}")
    gamma = _check_gamma(gamma)
    return GridNoise("gaussian", gamma, _ceil_fraction((sigma / gamma) ** 2))


def gaussian_on_grid(sensitivity: float, epsilon: float, delta: float, dim: int,
                     gamma: float | None = None) -> GridNoise:
    """Exact discrete Gaussian noise for one (ε, δ)-DP release of ℓ2 sensitivity Δ in ``dim`` dimensions.

    γ = :func:`grid_step` (min(Δ, Δ/ε), √d) — at ε > 1 the grid follows the noise scale,
    so rounding σ²/γ² up to an integer leaves no floor of one grid step; in grid units the
    rounded centres differ by at most Δ/γ + √d.  One dimension: the smallest integer σ²/γ² whose exact profile ([CKS20],
    Thm. 7) at the integer sensitivity ⌊Δ/γ⌋ + 1 is ≤ δ.  Several: σ = Δ'/√(2ρ) with ρ the
    largest zCDP that implies (ε, δ) (:func:`dpopt.privacy.zcdp.zcdp_rho`).  A caller's public
    power-of-two ``gamma`` replaces the default grid (same calibration on it).
    """
    eps, dlt = check_epsilon_delta(epsilon, delta, allow_zero_delta=False)
    d = _check_dim(dim)
    sensitivity = check_sensitivity(sensitivity)
    gamma = _check_gamma(gamma) if gamma is not None else grid_step(min(sensitivity, sensitivity / eps), math.sqrt(d))
    if d == 1:
        shift = math.floor(sensitivity / gamma) + 1
        return GridNoise("gaussian", gamma, _smallest_profile_sigma2(eps, dlt, shift))
    reach = sensitivity / gamma + math.sqrt(d)
    sigma_units = reach / math.sqrt(2.0 * zcdp_rho(Budget(eps, dlt)))  # checked above
    return GridNoise("gaussian", gamma, _ceil_fraction(sigma_units**2))


def _smallest_profile_sigma2(epsilon: float, delta: float, shift: int) -> Fraction:
    """The smallest integer σ² with discrete_gaussian_delta(ε, shift, σ²) ≤ δ (bisection on integers)."""
    hi = max(1, math.ceil((shift * (1.0 + math.sqrt(2.0 * math.log(1.25 / delta))) / epsilon) ** 2))
    while discrete_gaussian_delta(epsilon, shift, hi) > delta:
        hi *= 2
    lo = 0
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if discrete_gaussian_delta(epsilon, shift, mid) <= delta:
            hi = mid
        else:
            lo = mid
    return Fraction(hi)


def laplace_on_grid(l1_sensitivity: float, epsilon: float, dim: int,
                    gamma: float | None = None) -> GridNoise:
    """Exact discrete Laplace noise for one ε-DP release of ℓ1 sensitivity Δ₁ in ``dim`` dimensions.

    γ = :func:`grid_step` (min(Δ₁, Δ₁/ε), d); the rounded centres differ by at most Δ₁/γ + d in ℓ1
    (grid units), and the discrete Laplace of scale t is (that/t)-DP, so t = (Δ₁/γ + d)/ε,
    rounded up to an integer (a larger t only adds noise).  A caller's public power-of-two
    ``gamma`` replaces the default grid.
    """
    eps, _ = check_epsilon_delta(epsilon, 0.0)
    d = _check_dim(dim)
    l1_sensitivity = check_sensitivity(l1_sensitivity, "l1_sensitivity")
    gamma = _check_gamma(gamma) if gamma is not None else grid_step(min(l1_sensitivity, l1_sensitivity / eps), float(d))
    reach = Fraction(l1_sensitivity) / Fraction(gamma) + d
    return GridNoise("laplace", gamma, Fraction(math.ceil(reach / Fraction(eps))))
