"""The public noise law of a release: exact discrete noise on a public grid, or a continuous law
for a perturbation that is never released (:class:`NoiseSpec`), and the choice between the
Gaussian and the pure-ε law for one (ε, δ) release (:meth:`NoiseSpec.for_sensitivity`)."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

import numpy as np

from dpopt.errors import MechanismError
from dpopt.privacy.grid import GridNoise, gaussian_on_grid, laplace_on_grid
from dpopt.privacy.sampling import gaussian_noise, l2_laplace_noise

#: the ``noise`` setting of the mechanisms that choose between Gaussian and pure-ε noise
NoiseChoice = Literal["auto", "gaussian", "l2-laplace"]


@dataclass(frozen=True)
class NoiseSpec:
    """A public noise law: exact discrete noise on a public grid, or a continuous law for a
    perturbation that is never released.

    * **On a grid** (``grid`` set, ``kind`` ``"gaussian"`` or ``"laplace"``): the discrete
      Gaussian or discrete Laplace law of :class:`dpopt.privacy.grid.GridNoise` on γℤ^d
      ([CKS20], Algs. 1–3).  :meth:`release` rounds a centre onto the grid and adds the exact
      integer noise: every released value is an integer multiple of the public γ
      (:attr:`grid_step`), and the set of reachable values does not depend on the centre.
      This is the law of every additive value a mechanism releases.
    * **Continuous** (``grid`` None, ``kind`` ``"gaussian"`` or ``"l2-laplace"``): N(0, σ²I) or
      the density ∝ exp(−‖v‖₂/scale), drawn in floating point by :meth:`draw` from the run's
      generator.  Only for a perturbation that never leaves the mechanism (objective
      perturbation's linear term, whose proof needs a density).
    * ``"none"``: no noise (a zero sensitivity).

    Attributes
    ----------
    kind : {"gaussian", "laplace", "l2-laplace", "none"}
        The law.
    scale : float
        σ (Gaussian), b (discrete Laplace, per coordinate) or the ℓ2-Laplace scale, in the
        units of the value; 0 for ``"none"``.
    grid : GridNoise, optional
        The exact law on the grid (None: continuous or none).
    """

    kind: Literal["gaussian", "laplace", "l2-laplace", "none"]
    scale: float
    grid: GridNoise | None = None

    def __post_init__(self) -> None:
        if self.grid is not None and (self.grid.kind != self.kind or self.grid.scale != self.scale):
            raise ValueError("NoiseSpec: kind and scale must be the grid law's (use NoiseSpec.on_grid)")
        if self.grid is None and self.kind == "laplace":
            raise ValueError("NoiseSpec: the discrete Laplace law needs its grid (use NoiseSpec.on_grid)")
        if self.kind == "none" and self.scale != 0.0:
            raise ValueError("NoiseSpec: 'none' has scale 0")

    @classmethod
    def on_grid(cls, grid: GridNoise) -> NoiseSpec:
        """The exact law ``grid`` (kind and scale read from it)."""
        return cls(grid.kind, grid.scale, grid)

    @classmethod
    def none(cls) -> NoiseSpec:
        """No noise."""
        return cls("none", 0.0)

    @property
    def grid_step(self) -> float | None:
        """The public grid step γ of the released values (None for a continuous law or none)."""
        return None if self.grid is None else self.grid.gamma

    @property
    def releasable(self) -> bool:
        """Whether :meth:`release` may be used: an exact law on a grid, or no noise."""
        return self.grid is not None or self.kind == "none"

    def release(self, centre: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The exact release of ``centre``: rounded (half to even) onto the grid plus exact
        integer noise, times γ (:meth:`GridNoise.release`).

        The integers come from :func:`dpopt.privacy.exact.sampler_for` (``rng``): an unseeded
        run's :class:`~dpopt.privacy.rng.SecureGenerator` gives the OS CSPRNG and never its own
        stream; a seeded generator gives a reproducible sampler seeded by one draw of it.
        ``"none"`` returns the centre unchanged (used only where the sensitivity is 0).
        """
        values = np.asarray(centre, dtype=np.float64)
        if self.kind == "none":
            return values.copy()
        if self.grid is None:
            raise MechanismError(f"a continuous {self.kind} law cannot release a value; calibrate "
                                 "it on a grid (NoiseSpec.for_sensitivity)")
        return self.grid.release(values, rng)

    def draw(self, rng: np.random.Generator, dim: int) -> np.ndarray:
        """A draw of the continuous law (never released: a perturbation inside an objective)."""
        if self.kind == "none" or self.scale == 0.0:
            return np.zeros(dim)
        if self.grid is not None:
            raise MechanismError("noise on a grid is added by release(centre, rng), never drawn alone")
        if self.kind == "gaussian":
            return np.asarray(gaussian_noise(rng, self.scale, dim), dtype=np.float64)
        return np.asarray(l2_laplace_noise(rng, self.scale, dim), dtype=np.float64)

    def zcdp_mu(self, sensitivity: float, dim: int) -> float:
        """μ such that releasing a centre of ℓ2 sensitivity Δ with this discrete Gaussian is
        μ²/2-zCDP: (Δ + γ√d)/σ ([CKS20]: ρ = ‖shift‖²/(2σ²) for integer shifts in grid units,
        and rounded neighbours differ by at most Δ/γ + √d steps).  Its Rényi curve is that of
        a μ-GDP mechanism, which is what Rényi accounting of a composition needs."""
        if self.kind != "gaussian" or self.grid is None:
            raise MechanismError("zcdp_mu needs a discrete Gaussian law on a grid")
        return (sensitivity + self.grid.gamma * math.sqrt(dim)) / self.scale

    def scaled(self, factor: float) -> NoiseSpec:
        """The same law with its scale multiplied by ``factor`` > 0, on the same grid (for mutation tests)."""
        if self.kind == "none":
            return self
        if self.grid is None:
            return NoiseSpec(self.kind, self.scale * factor)
        f = Fraction(factor)
        param = self.grid.param * (f * f if self.kind == "gaussian" else f)
        return NoiseSpec.on_grid(GridNoise(self.grid.kind, self.grid.gamma, param))

    def expected_norm(self, dim: int) -> float:
        """E‖v‖₂ of a draw in ``dim`` dimensions (an upper bound for the discrete laws).

        Continuous Gaussian: σ√2·Γ((d+1)/2)/Γ(d/2); ℓ2-Laplace: scale·d (‖v‖ ~ Gamma(d, scale));
        discrete laws: √(:meth:`second_moment`) (Jensen).
        """
        if self.kind == "none":
            return 0.0
        if self.grid is not None:
            return math.sqrt(self.second_moment(dim))
        if self.kind == "gaussian":
            return self.scale * math.sqrt(2.0) * math.exp(math.lgamma((dim + 1) / 2) - math.lgamma(dim / 2))
        return self.scale * dim

    def second_moment(self, dim: int) -> float:
        """E‖v‖₂² of a draw in ``dim`` dimensions (an upper bound for the discrete Gaussian).

        Continuous Gaussian σ²d; ℓ2-Laplace scale²·d(d + 1); discrete Gaussian ≤ σ²d (its
        variance is below σ², [CKS20] Prop. 19); discrete Laplace of scale t (grid units)
        exactly d·γ²·2q/(1 − q)², q = e^{−1/t}.
        """
        if self.kind == "none":
            return 0.0
        if self.kind == "gaussian":
            return self.scale**2 * dim
        if self.grid is None:
            return self.scale**2 * dim * (dim + 1)
        q = math.exp(-1.0 / float(self.grid.param))
        return dim * self.grid.gamma**2 * 2.0 * q / (1.0 - q) ** 2

    @classmethod
    def for_sensitivity(cls, sensitivity: float, epsilon: float, delta: float, dim: int,
                        choice: NoiseChoice = "auto", *, grid_step: float | None = None) -> NoiseSpec:
        """The exact law on a grid for one (ε, δ)-DP release of ℓ2 sensitivity Δ in ``dim`` dimensions.

        * Pure ε (δ = 0, or ``choice="l2-laplace"``): discrete Laplace per coordinate
          (:func:`~dpopt.privacy.grid.laplace_on_grid`), calibrated to the ℓ1 sensitivity
          √d·Δ (rounded up), so b ≈ √d·Δ/ε.  The continuous ℓ2-Laplace law ∝ exp(−ε‖v‖/Δ) has
          no exact lattice sampler here; the cost is in E‖noise‖: ≤ √(2d)·b ≈ √2·d·Δ/ε against
          the ℓ2-Laplace's d·Δ/ε, a factor ≈ √2 for d ≥ 2 (1 for d = 1), plus the grid's 2^-8.
        * δ > 0: the discrete Gaussian (:func:`~dpopt.privacy.grid.gaussian_on_grid`: the exact
          [CKS20] Thm. 7 profile for d = 1, its zCDP with the [CKS20] conversion for d > 1);
          ``"auto"`` takes whichever of the two has the smaller :meth:`expected_norm` (an ε-DP
          law is also (ε, δ)-DP).

        Parameters
        ----------
        sensitivity : float
            Δ ≥ 0 of the centre in ℓ2 (0 gives ``"none"``).
        epsilon, delta : float
            The release's guarantee.
        dim : int
            d, the number of coordinates released.
        choice : {"auto", "gaussian", "l2-laplace"}
            The law (``"l2-laplace"``: the pure-ε law above, whose name is kept).
        grid_step : float, optional
            A public power-of-two grid γ to calibrate on (default: :func:`~dpopt.privacy.grid.grid_step`
            of Δ, which makes rounding cost at most 2^-8 of Δ).  Rounded neighbours then differ
            by at most Δ/γ + √d grid steps in ℓ2 (√d·Δ/γ + d in ℓ1), and the laws are
            calibrated to that, the Gaussian through its zCDP.
        """
        if sensitivity == 0.0:
            return cls.none()
        d = int(dim)
        l1 = math.nextafter(math.sqrt(d) * sensitivity, math.inf) if d > 1 else float(sensitivity)
        laplace = cls.on_grid(_laplace_law(l1, epsilon, d, grid_step))
        if delta == 0:
            return laplace
        gauss = cls.on_grid(_gaussian_law(sensitivity, epsilon, delta, d, grid_step))
        return choose(gauss, laplace, d, choice)


@functools.lru_cache(maxsize=256)
def _gaussian_law(sensitivity: float, epsilon: float, delta: float, dim: int, gamma: float | None) -> GridNoise:
    """The discrete Gaussian for one (ε, δ) release (cached: a pure function of public numbers;
    one dimension uses the exact profile, several the zCDP conversion, on either grid)."""
    return gaussian_on_grid(sensitivity, epsilon, delta, dim, gamma)


@functools.lru_cache(maxsize=256)
def _laplace_law(l1_sensitivity: float, epsilon: float, dim: int, gamma: float | None) -> GridNoise:
    """The discrete Laplace law for one ε-DP release (cached: a pure function of public numbers)."""
    return laplace_on_grid(l1_sensitivity, epsilon, dim, gamma)


def choose(gauss: NoiseSpec, laplace: NoiseSpec, dim: int, choice: NoiseChoice = "auto") -> NoiseSpec:
    """The requested law, or for ``"auto"`` the one with the smaller expected norm."""
    if choice == "gaussian":
        return gauss
    if choice == "l2-laplace":
        return laplace
    return gauss if gauss.expected_norm(dim) <= laplace.expected_norm(dim) else laplace
