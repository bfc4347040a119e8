"""The sets cut out by coordinate bounds and one sum: :class:`Simplex`
(``{v ≥ 0 : Σ v = scale}``), :class:`Box` (``{v : low ≤ v ≤ high}``, a shifted, stretched ℓ∞
ball) and :class:`NonNegative` (the orthant ``{v : v ≥ 0}``, unbounded: projection, no linear
minimization).

The sets are immutable and public: they describe a parameter domain, never data.  numpy and
scipy only; cvxpy and MIP encodings live in :mod:`dpopt.compile`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from dpopt.errors import ModelError
from dpopt.modeling.constraint_set import (
    ConstraintSet,
    GaussianWidth,
    Norm,
    check_vector,
    clip_to_grid,
    closed_form,
    init_set,
    positive_finite,
    project_simplex,
    unit_vector,
    vector_norm,
)
from dpopt.modeling.gaussian_width import expected_max_gaussian
from dpopt.modeling.variable import Variable

__all__ = ["Box", "NonNegative", "Simplex"]


# ---------------------------------------------------------------------------
# Simplex
# ---------------------------------------------------------------------------


@dataclass(frozen=True, init=False)
class Simplex(ConstraintSet):
    """The scaled probability simplex ``{v ∈ ℝ^p : v ≥ 0, Σ v = scale}``.

    Parameters
    ----------
    var : Variable or int
        The variable the set constrains, or its dimension p.
    scale : float
        The total mass (positive, finite); 1 for the probability simplex.

    Notes
    -----
    The LMO returns ``scale·e_i`` at the first index of the smallest ``g_i``.
    The centre is the uniform vector ``scale/p · 1``.  For p = 1 the set is
    the single point ``{scale}`` and every diameter is 0.
    """

    polyhedral = True
    exact_projection = True
    l1_prox = "project"  # ‖·‖₁ = scale on the set

    closed_form_lmo = True
    mirror_potential = "entropy"
    dim: int
    scale: float
    variable: Variable | None = field(default=None, compare=False)

    def __init__(self, var: Variable | int, scale: float = 1.0) -> None:
        init_set(self, var)
        object.__setattr__(self, "scale", positive_finite(scale, "Simplex scale"))

    def _lmo(self, g: np.ndarray) -> np.ndarray:
        return unit_vector(self.dim, int(np.argmin(g)), self.scale)

    def _support(self, g: np.ndarray) -> float:
        return self.scale * float(np.max(g))

    def _support_many(self, G: np.ndarray) -> np.ndarray:
        return self.scale * np.max(G, axis=1)

    def _project(self, v: np.ndarray) -> np.ndarray:
        return project_simplex(v, self.scale)

    def center(self) -> np.ndarray:
        return np.full(self.dim, self.scale / self.dim)

    def _radius(self, norm: Norm) -> float:
        return self.scale  # ‖v‖₁ = scale on the set; ℓ2 and ℓ∞ are maximal at the vertices

    def _diameter(self, norm: Norm) -> float:
        if self.dim == 1:
            return 0.0
        return {1: 2.0 * self.scale, 2: math.sqrt(2.0) * self.scale, "inf": self.scale}[norm]

    @property
    def is_symmetric(self) -> bool:
        return False

    @property
    def n_vertices(self) -> int:
        return self.dim

    def _vertices(self) -> np.ndarray:
        """Rows ``scale·e_0, …, scale·e_{p−1}``."""
        return self.scale * np.eye(self.dim)

    def gaussian_width(
        self, *, n_samples: int = 20_000, confidence: float = 0.95, seed: int | None = 0
    ) -> GaussianWidth:
        """``G = scale · E max_i g_i`` by exact quadrature (≈ scale·√(2 log p)); sampling arguments unused."""
        value, low, high = expected_max_gaussian(self.dim)
        return GaussianWidth(self.scale * value, self.scale * low, self.scale * high, "quadrature")


# ---------------------------------------------------------------------------
# Box and non-negative orthant
# ---------------------------------------------------------------------------


def _bound_vector(value: object, dim: int, name: str) -> np.ndarray:
    """A finite scalar or ``(dim,)`` bound, broadcast to a read-only ``(dim,)`` array."""
    try:
        arr = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ModelError(f"Box {name} must be a number or a numeric vector of length {dim}") from None
    if arr.ndim == 0:
        arr = np.full(dim, float(arr))
    if arr.shape != (dim,):
        raise ModelError(f"Box {name} must be a number or have shape ({dim},), got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ModelError(f"Box {name} must be finite (use NonNegative for the unbounded orthant)")
    arr.flags.writeable = False
    return arr


@dataclass(frozen=True, init=False, eq=False)
class Box(ConstraintSet):
    """The box ``{v ∈ ℝ^p : low_i ≤ v_i ≤ high_i}``.

    Parameters
    ----------
    var : Variable or int
        The variable the set constrains, or its dimension p.
    low, high : float or array_like of shape (p,)
        Finite bounds, one per coordinate or one for all; ``low ≤ high``
        coordinatewise (equal bounds fix a coordinate).

    Notes
    -----
    Projection is ``clip(v, low, high)`` (exact), and with an ℓ1 term the
    coordinatewise prox ``clip(soft_threshold(v, t), low, high)`` is exact too (a
    one-dimensional convex problem restricted to an interval).  The LMO takes
    ``low_i`` where ``g_i > 0`` and ``high_i`` otherwise.  Radii and diameters are
    exact: the ℓq norm of ``max(|low|, |high|)`` and of ``high − low``.  The
    Gaussian width is ``Σ_i (high_i − low_i)/√(2π)`` (closed form, since
    ``E max(low·g, high·g) = (high − low)·E g₊``).
    """

    polyhedral = True
    exact_projection = True
    l1_prox = "threshold-then-project"
    closed_form_lmo = True
    grid_projection = True
    dim: int
    low: np.ndarray
    high: np.ndarray
    variable: Variable | None = field(default=None, compare=False)

    def __init__(self, var: Variable | int, low: float | np.ndarray, high: float | np.ndarray) -> None:
        init_set(self, var)
        lo, hi = _bound_vector(low, self.dim, "low"), _bound_vector(high, self.dim, "high")
        if np.any(lo > hi):
            raise ModelError("Box needs low ≤ high in every coordinate")
        object.__setattr__(self, "low", lo)
        object.__setattr__(self, "high", hi)

    def __repr__(self) -> str:
        if np.all(self.low == self.low[0]) and np.all(self.high == self.high[0]):
            return f"Box(dim={self.dim}, low={self.low[0]:g}, high={self.high[0]:g})"
        return f"Box(dim={self.dim})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Box):
            return NotImplemented
        return bool(np.array_equal(self.low, other.low) and np.array_equal(self.high, other.high))

    def __hash__(self) -> int:
        return hash((self.low.tobytes(), self.high.tobytes()))

    def _lmo(self, g: np.ndarray) -> np.ndarray:
        return np.where(g > 0, self.low, self.high)

    def _support(self, g: np.ndarray) -> float:
        return float(np.sum(np.maximum(g * self.low, g * self.high)))

    def _support_many(self, G: np.ndarray) -> np.ndarray:
        return np.sum(np.maximum(G * self.low, G * self.high), axis=1)

    def _project(self, v: np.ndarray) -> np.ndarray:
        return np.clip(v, self.low, self.high)

    def _distance(self, v: np.ndarray) -> float:
        return float(np.linalg.norm(v - np.clip(v, self.low, self.high)))

    def project_to_grid(self, v: np.ndarray, step: float) -> tuple[np.ndarray, bool]:
        """Clip to the grid points inside the box, so a grid release stays on γℤ^p."""
        return clip_to_grid(check_vector(v, self.dim, "v"), self.low, self.high, step)

    def center(self) -> np.ndarray:
        """The midpoint ``(low + high)/2``."""
        return 0.5 * (self.low + self.high)

    def _radius(self, norm: Norm) -> float:
        return float(vector_norm(np.maximum(np.abs(self.low), np.abs(self.high)), norm, axis=0))

    def _diameter(self, norm: Norm) -> float:
        return float(vector_norm(self.high - self.low, norm, axis=0))

    @property
    def is_symmetric(self) -> bool:
        return bool(np.array_equal(self.low, -self.high))

    @property
    def n_vertices(self) -> int:
        """``2^p`` corners (repeated where ``low_i = high_i``)."""
        return 2**self.dim

    def _vertices(self) -> np.ndarray:
        """The corners; row j takes ``high_i`` where bit i of j is set, else ``low_i``."""
        bits = (np.arange(2**self.dim)[:, None] >> np.arange(self.dim)[None, :]) & 1
        return np.where(bits == 1, self.high, self.low)

    def gaussian_width(
        self, *, n_samples: int = 20_000, confidence: float = 0.95, seed: int | None = 0
    ) -> GaussianWidth:
        """``G = Σ_i (high_i − low_i)/√(2π)`` (closed form); sampling arguments unused."""
        return closed_form(float(np.sum(self.high - self.low)) / math.sqrt(2.0 * math.pi))


@dataclass(frozen=True, init=False)
class NonNegative(ConstraintSet):
    """The non-negative orthant ``{v ∈ ℝ^p : v ≥ 0}`` (non-negative coefficients).

    Parameters
    ----------
    var : Variable or int
        The variable the set constrains, or its dimension p.

    Notes
    -----
    The set is a cone, not a compact set (``bounded = False``): projection is
    ``max(v, 0)`` (exact, and ``max(soft_threshold(v, t), 0)`` with an ℓ1 term), the
    centre is the origin, but radii, diameters and the Gaussian width are infinite
    and there is no linear minimization oracle (:meth:`lmo` raises
    :class:`~dpopt.errors.ModelError`): Frank–Wolfe and mirror descent refuse the set;
    objective and output perturbation and DP-GD accept it (with a strongly convex
    objective the convex mechanisms' a-priori fallback bounds its distance to the
    optimum by strong convexity, :func:`dpopt.numerics.apg.public_radius`).
    Membership is scale-aware in the point: ``dist(v, C) ≤ tol·max(1, ‖v‖₂)``.
    """

    polyhedral = True
    exact_projection = True
    l1_prox = "threshold-then-project"
    bounded = False
    has_lmo = False
    grid_projection = True
    dim: int
    variable: Variable | None = field(default=None, compare=False)

    def __init__(self, var: Variable | int) -> None:
        init_set(self, var)

    def _lmo(self, g: np.ndarray) -> np.ndarray:
        raise ModelError(
            "NonNegative is unbounded and has no linear minimization oracle; Frank–Wolfe needs a bounded "
            "set such as dp.Box(theta, 0, high)"
        )

    def _support(self, g: np.ndarray) -> float:
        return math.inf if bool(np.any(g > 0)) else 0.0

    def _support_many(self, G: np.ndarray) -> np.ndarray:
        return np.where(np.any(G > 0, axis=1), math.inf, 0.0)

    def _project(self, v: np.ndarray) -> np.ndarray:
        return np.maximum(v, 0.0)

    def _distance(self, v: np.ndarray) -> float:
        return float(np.linalg.norm(np.minimum(v, 0.0)))

    def project_to_grid(self, v: np.ndarray, step: float) -> tuple[np.ndarray, bool]:
        """``max(v, 0)``: 0 is a grid point, so a grid release stays on γℤ^p."""
        return np.maximum(check_vector(v, self.dim, "v"), 0.0), True

    def contains(self, v: np.ndarray, tol: float = 1e-9) -> bool:
        """Whether ``dist(v, C) ≤ tol·max(1, ‖v‖₂)`` (the set has no finite radius to scale by)."""
        if not (tol >= 0):
            raise ModelError(f"tol must be non-negative, got {tol!r}")
        arr = check_vector(v, self.dim, "v", finite=False)
        if not np.all(np.isfinite(arr)):
            return False
        return self._distance(arr) <= tol * max(1.0, float(np.linalg.norm(arr)))

    def center(self) -> np.ndarray:
        """The origin (the apex of the cone)."""
        return np.zeros(self.dim)

    def _radius(self, norm: Norm) -> float:
        return math.inf

    def _diameter(self, norm: Norm) -> float:
        return math.inf

    @property
    def is_symmetric(self) -> bool:
        return False

    @property
    def n_vertices(self) -> float:
        return math.inf  # a cone: its one extreme point does not span it

    def gaussian_width(
        self, *, n_samples: int = 20_000, confidence: float = 0.95, seed: int | None = 0
    ) -> GaussianWidth:
        """``inf`` (the orthant is unbounded); sampling arguments unused."""
        return closed_form(math.inf)

    def gaussian_width_monte_carlo(
        self, *, n_samples: int = 20_000, confidence: float = 0.95, seed: int | None = 0
    ) -> GaussianWidth:
        """``inf``: every sample's support value is infinite."""
        return closed_form(math.inf)
