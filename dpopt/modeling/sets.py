"""Constraint sets C ⊂ ℝ^p and the geometry private mechanisms need from them.

Every set answers the questions the mechanisms of Talwar, Thakurta and Zhang
(2014) ask: a linear minimization oracle (Frank–Wolfe), the support function,
Euclidean projection (projected / mirror descent), a fixed data-independent
centre (the θ0 of the ℓ2 potential), radii ``‖C‖`` and diameters in the ℓ1, ℓ2
and ℓ∞ norms, the vertices of polytopes (noisy-max Frank–Wolfe, Alg. 4) and the
Gaussian width ``G_C = E_g[sup_{θ∈C} ⟨θ, g⟩]``, ``g ~ N(0, I_p)`` (Sec. 2.2).

Sets
----
:class:`L1Ball`, :class:`L2Ball`, :class:`LinfBall`
    ``{v : ‖v‖ ≤ r}`` centred at 0.
:class:`Simplex`
    ``{v ≥ 0 : Σ v = scale}``.
:class:`Box`
    ``{v : low ≤ v ≤ high}`` coordinatewise (a shifted, stretched ℓ∞ ball).
:class:`NonNegative`
    The orthant ``{v : v ≥ 0}`` (unbounded: projection, no linear minimization).
:class:`VertexPolytope`
    The convex hull of the rows of a (k, p) array.

The sets are immutable and public: they describe a parameter domain, never
data, so nothing here is privacy sensitive.  This module uses numpy and scipy
only; cvxpy and MIP encodings live in :mod:`dpopt.compile`.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np

from dpopt.errors import ModelError
from dpopt.modeling.constraint_set import (
    BATCH_FLOATS,
    ConstraintSet,
    GaussianWidth,
    Norm,
    check_vector,
    clip_to_grid,
    closed_form,
    init_set,
    positive_finite,
    positive_int,
    project_simplex,
    unit_vector,
    vector_norm,
)
from dpopt.modeling.variable import Variable

__all__ = [
    "Box",
    "L1Ball",
    "L2Ball",
    "LinfBall",
    "NonNegative",
    "NormBall",
    "Simplex",
    "VertexPolytope",
]


# ---------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# Validation helpers
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# Base class
# ---------------------------------------------------------------------------


_QUAD = {"epsabs": 1e-13, "epsrel": 1e-12, "limit": 500}


def expected_max_abs_gaussian(p: int) -> tuple[float, float, float]:
    """``E max_i |g_i|`` for p iid standard normals by exact quadrature.

    ``E M = ∫₀^∞ P(M > t) dt = ∫₀^∞ 1 − (2Φ(t) − 1)^p dt``, integrated on
    ``[0, T]`` with ``T = √(2 log 2p) + 12`` and the integrand evaluated as
    ``−expm1(p · log1p(−2Φ(−t)))`` (no cancellation for large p).  The tail
    beyond T is at most ``∫_T^∞ 2p Φ(−t) dt ≤ 2p φ(T)`` (below 1e-30).

    Returns ``(value, low, high)``.
    """
    from scipy import integrate, special  # imported when a width is computed, not with dpopt

    t_mid = math.sqrt(2.0 * math.log(2.0 * p))
    upper = t_mid + 12.0

    def integrand(t: float) -> float:
        return -math.expm1(p * math.log1p(-2.0 * special.ndtr(-t)))

    value, err = integrate.quad(integrand, 0.0, upper, points=[t_mid], **_QUAD)
    tail = 2.0 * p * math.exp(-0.5 * upper * upper) / math.sqrt(2.0 * math.pi)
    return value, value - err, value + err + tail


def _expected_max_gaussian(p: int) -> tuple[float, float, float]:
    """``E max_i g_i`` for p iid standard normals by exact quadrature.

    Integrating ``E M = ∫ t · p φ(t) Φ(t)^{p−1} dt`` by parts gives
    ``E M = ∫₀^∞ (1 − Φ(t)^p) dt − ∫_{−∞}^0 Φ(t)^p dt`` whose integrands are
    smooth and monotone; they are evaluated through ``log Φ`` (``log_ndtr``).
    The positive part is cut at ``T = √(2 log p) + 12`` (tail ≤ ``p φ(T)``), the
    negative part at ``−12`` (tail ≤ ``φ(12)`` ≈ 5e-32).

    Returns ``(value, low, high)``.
    """
    from scipy import integrate, special  # imported when a width is computed, not with dpopt

    if p == 1:
        return 0.0, 0.0, 0.0
    t_mid = math.sqrt(2.0 * math.log(p))
    upper = t_mid + 12.0
    lower = 12.0

    def pos(t: float) -> float:
        return -math.expm1(p * float(special.log_ndtr(t)))

    def neg(t: float) -> float:
        return math.exp(p * float(special.log_ndtr(t)))

    v_pos, e_pos = integrate.quad(pos, 0.0, upper, points=[t_mid], **_QUAD)
    v_neg, e_neg = integrate.quad(neg, -lower, 0.0, **_QUAD)
    tail_pos = p * math.exp(-0.5 * upper * upper) / math.sqrt(2.0 * math.pi)
    tail_neg = math.exp(-0.5 * lower * lower) / math.sqrt(2.0 * math.pi)
    value = v_pos - v_neg
    return value, value - e_pos - e_neg - tail_neg, value + e_pos + e_neg + tail_pos


# ---------------------------------------------------------------------------
# Norm balls
# ---------------------------------------------------------------------------


class NormBall(ConstraintSet):
    """A ball ``{v : ‖v‖ ≤ r}`` of some norm: centred at 0, symmetric, diameter twice the radius."""

    def center(self) -> np.ndarray:
        return np.zeros(self.dim)

    def _diameter(self, norm: Norm) -> float:
        return 2.0 * self._radius(norm)

    @property
    def is_symmetric(self) -> bool:
        return True


@dataclass(frozen=True, init=False)
class L1Ball(NormBall):
    """The ℓ1 ball ``{v ∈ ℝ^p : ‖v‖₁ ≤ r}`` (the LASSO constraint).

    Parameters
    ----------
    var : Variable or int
        The variable the set constrains, or its dimension p.
    radius : float
        The radius r (positive, finite).

    Notes
    -----
    The LMO returns the vertex ``−r·sgn(g_i)·e_i`` at the first index of the
    largest ``|g_i|``, with ``sgn(0) := −1`` (so ``g = 0`` gives ``r·e_0``):
    the answer is always one of the 2p vertices.  Projection is the
    sort-based simplex projection applied to ``|v|`` (Duchi et al. 2008).
    """

    polyhedral = True
    exact_projection = True
    l1_prox = "threshold-then-project"

    closed_form_lmo = True
    norm_ball = 1
    mirror_potential = "group-l1"
    dim: int
    r: float
    variable: Variable | None = field(default=None, compare=False)

    def __init__(self, var: Variable | int, radius: float) -> None:
        init_set(self, var)
        object.__setattr__(self, "r", positive_finite(radius, "L1Ball radius"))

    def _lmo(self, g: np.ndarray) -> np.ndarray:
        i = int(np.argmax(np.abs(g)))
        return unit_vector(self.dim, i, -self.r if g[i] > 0 else self.r)

    def _support(self, g: np.ndarray) -> float:
        return self.r * float(np.max(np.abs(g)))

    def _support_many(self, G: np.ndarray) -> np.ndarray:
        return self.r * np.max(np.abs(G), axis=1)

    def _project(self, v: np.ndarray) -> np.ndarray:
        if np.sum(np.abs(v)) <= self.r:
            return v.copy()
        return np.sign(v) * project_simplex(np.abs(v), self.r)

    def _radius(self, norm: Norm) -> float:
        return self.r  # the vertices ±r e_i have every ℓq norm equal to r

    @property
    def n_vertices(self) -> int:
        return 2 * self.dim

    def _vertices(self) -> np.ndarray:
        """Rows ``r·e_0, …, r·e_{p−1}, −r·e_0, …, −r·e_{p−1}``."""
        eye = self.r * np.eye(self.dim)
        return np.vstack([eye, -eye])

    def gaussian_width(
        self, *, n_samples: int = 20_000, confidence: float = 0.95, seed: int | None = 0
    ) -> GaussianWidth:
        """``G = r · E max_i |g_i|`` by exact quadrature (≈ r√(2 log 2p)); sampling arguments unused."""
        value, low, high = expected_max_abs_gaussian(self.dim)
        return GaussianWidth(self.r * value, self.r * low, self.r * high, "quadrature")


@dataclass(frozen=True, init=False)
class L2Ball(NormBall):
    """The Euclidean ball ``{v ∈ ℝ^p : ‖v‖₂ ≤ r}``.

    Parameters
    ----------
    var : Variable or int
        The variable the set constrains, or its dimension p.
    radius : float
        The radius r (positive, finite).

    Notes
    -----
    The LMO returns ``−r·g/‖g‖₂``, and ``r·e_0`` for ``g = 0``.  The ball has
    infinitely many extreme points, so :meth:`vertices` refuses.
    """

    exact_projection = True
    l1_prox = "threshold-then-project"

    closed_form_lmo = True
    norm_ball = 2
    dim: int
    r: float
    variable: Variable | None = field(default=None, compare=False)

    def __init__(self, var: Variable | int, radius: float) -> None:
        init_set(self, var)
        object.__setattr__(self, "r", positive_finite(radius, "L2Ball radius"))

    def _lmo(self, g: np.ndarray) -> np.ndarray:
        n = float(np.linalg.norm(g))
        if n == 0.0:
            return unit_vector(self.dim, 0, self.r)
        return (-self.r / n) * g

    def _support(self, g: np.ndarray) -> float:
        return self.r * float(np.linalg.norm(g))

    def _support_many(self, G: np.ndarray) -> np.ndarray:
        return self.r * np.linalg.norm(G, axis=1)

    def _project(self, v: np.ndarray) -> np.ndarray:
        n = float(np.linalg.norm(v))
        if n <= self.r:
            return v.copy()
        return (self.r / n) * v

    def _distance(self, v: np.ndarray) -> float:
        return max(float(np.linalg.norm(v)) - self.r, 0.0)

    def _radius(self, norm: Norm) -> float:
        # max ‖v‖₁ over the ball is r√p (at r·1/√p); ‖v‖∞ ≤ ‖v‖₂ with equality at r·e_i
        return self.r * math.sqrt(self.dim) if norm == 1 else self.r

    @property
    def n_vertices(self) -> float:
        return math.inf

    def gaussian_width(
        self, *, n_samples: int = 20_000, confidence: float = 0.95, seed: int | None = 0
    ) -> GaussianWidth:
        """``G = r · E‖g‖₂ = r √2 Γ((p+1)/2) / Γ(p/2)`` (closed form); sampling arguments unused.

        The Gamma ratio is the Pochhammer symbol ``(p/2)_{1/2}``
        (``scipy.special.poch``): no overflow, and unlike a difference of
        ``gammaln`` values no loss of relative accuracy for large p (≤ 1e-11).
        """
        from scipy import special

        ratio = float(special.poch(0.5 * self.dim, 0.5))
        return closed_form(self.r * math.sqrt(2.0) * ratio)


@dataclass(frozen=True, init=False)
class LinfBall(NormBall):
    """The box ``{v ∈ ℝ^p : ‖v‖∞ ≤ r}``.

    Parameters
    ----------
    var : Variable or int
        The variable the set constrains, or its dimension p.
    radius : float
        The half-width r (positive, finite).

    Notes
    -----
    The LMO returns ``−r·sgn(g)`` coordinatewise with ``sgn(0) := −1``, i.e.
    ``+r`` where ``g_i = 0``: the answer is always one of the ``2^p``
    vertices.  :meth:`vertices` lists them only up to ``max_count``.
    """

    polyhedral = True
    exact_projection = True
    l1_prox = "threshold-then-project"

    closed_form_lmo = True
    norm_ball = "inf"
    grid_projection = True
    dim: int
    r: float
    variable: Variable | None = field(default=None, compare=False)

    def __init__(self, var: Variable | int, radius: float) -> None:
        init_set(self, var)
        object.__setattr__(self, "r", positive_finite(radius, "LinfBall radius"))

    def _lmo(self, g: np.ndarray) -> np.ndarray:
        return np.where(g > 0, -self.r, self.r)

    def _support(self, g: np.ndarray) -> float:
        return self.r * float(np.sum(np.abs(g)))

    def _support_many(self, G: np.ndarray) -> np.ndarray:
        return self.r * np.sum(np.abs(G), axis=1)

    def _project(self, v: np.ndarray) -> np.ndarray:
        return np.clip(v, -self.r, self.r)

    def project_to_grid(self, v: np.ndarray, step: float) -> tuple[np.ndarray, bool]:
        """Clip to the grid points inside ``[−r, r]``, so a grid release stays on γℤ^p."""
        r = np.full(self.dim, self.r)
        return clip_to_grid(check_vector(v, self.dim, "v"), -r, r, step)

    def _radius(self, norm: Norm) -> float:
        if norm == 1:
            return self.r * self.dim
        if norm == 2:
            return self.r * math.sqrt(self.dim)
        return self.r

    @property
    def n_vertices(self) -> int:
        return 2**self.dim

    def _vertices(self) -> np.ndarray:
        """The sign vectors ``r·s``; row j has ``s_i = +1`` where bit i of j is set."""
        bits = (np.arange(2**self.dim)[:, None] >> np.arange(self.dim)[None, :]) & 1
        return self.r * (2.0 * bits - 1.0)

    def gaussian_width(
        self, *, n_samples: int = 20_000, confidence: float = 0.95, seed: int | None = 0
    ) -> GaussianWidth:
        """``G = r · E‖g‖₁ = r p √(2/π)`` (closed form); sampling arguments unused."""
        return closed_form(self.r * self.dim * math.sqrt(2.0 / math.pi))


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
        value, low, high = _expected_max_gaussian(self.dim)
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


# ---------------------------------------------------------------------------
# Polytope given by vertices
# ---------------------------------------------------------------------------


@dataclass(frozen=True, init=False, eq=False)
class VertexPolytope(ConstraintSet):
    """The convex hull of the rows of a ``(k, p)`` array.

    Parameters
    ----------
    vertices : array_like, shape (k, p)
        Finite points whose convex hull is the set (k ≥ 1, p ≥ 1).  Rows need
        not be extreme points and may repeat; :attr:`n_vertices` is k, an upper
        bound on the number of true vertices.
    variable : Variable, optional
        The variable the set constrains; its size must be p.

    Notes
    -----
    Radii and diameters are maxima over the rows (over pairs of rows for the
    diameter): a convex function attains its maximum over a polytope at a
    vertex.  Projection solves the small QP ``min_{λ∈Δ_k} ½‖Vᵀλ − v‖²`` with
    FISTA (see :meth:`project_with_bound` for the accuracy).  Equality is by
    value, as for the other sets: two polytopes with the same rows in the same
    order are equal whatever variable they are attached to.
    """

    polyhedral = True

    closed_form_lmo = True
    mirror_potential = "qnorm"
    project_solver_points = False  # project() is FISTA
    dim: int
    variable: Variable | None
    _V: np.ndarray = field(repr=False)
    _lipschitz: float = field(repr=False)

    def __init__(self, vertices: np.ndarray, *, variable: Variable | None = None) -> None:
        try:
            V = np.array(vertices, dtype=np.float64)
        except (TypeError, ValueError):
            raise ModelError("VertexPolytope vertices must be a numeric (k, p) array") from None
        if V.ndim != 2:
            raise ModelError(
                f"VertexPolytope vertices must be a 2-D (k, p) array, got {V.ndim} dimension(s)"
            )
        if V.shape[0] == 0 or V.shape[1] == 0:
            raise ModelError(f"VertexPolytope needs at least one vertex of positive dimension, got shape {V.shape}")
        if not np.all(np.isfinite(V)):
            raise ModelError("VertexPolytope vertices contain NaN or inf entries")
        if variable is not None:
            if not isinstance(variable, Variable):
                raise ModelError(f"variable must be a Variable, got {type(variable).__name__}")
            if variable.size != V.shape[1]:
                raise ModelError(
                    f"vertices have dimension {V.shape[1]} but the variable has size {variable.size}"
                )
        V.flags.writeable = False
        object.__setattr__(self, "dim", int(V.shape[1]))
        object.__setattr__(self, "variable", variable)
        object.__setattr__(self, "_V", V)
        # Lipschitz constant of λ ↦ V(Vᵀλ − v): the largest eigenvalue of V Vᵀ.
        object.__setattr__(self, "_lipschitz", float(np.linalg.norm(V, 2)) ** 2)

    def __repr__(self) -> str:
        name = f", variable={self.variable.name!r}" if self.variable is not None else ""
        return f"VertexPolytope(k={self._V.shape[0]}, dim={self.dim}{name})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, VertexPolytope):
            return NotImplemented
        return bool(np.array_equal(self._V, other._V))

    def __hash__(self) -> int:
        return hash((self._V.shape, self._V.tobytes()))

    # -- linear optimisation ---------------------------------------------------

    def _lmo(self, g: np.ndarray) -> np.ndarray:
        return self._V[int(np.argmin(self._V @ g))].copy()

    def _support(self, g: np.ndarray) -> float:
        return float(np.max(self._V @ g))

    def _support_many(self, G: np.ndarray) -> np.ndarray:
        return np.max(G @ self._V.T, axis=1)

    def _support_cost(self) -> int:
        return max(self.dim, self._V.shape[0])

    # -- projection ------------------------------------------------------------

    def _project(self, v: np.ndarray) -> np.ndarray:
        return self._project_with_bound(v, None, 20_000)[0]

    def project_with_error(self, v: np.ndarray) -> tuple[np.ndarray, float]:
        """The projection and its certified error (:meth:`project_with_bound`)."""
        return self.project_with_bound(v)

    def relaxation(self) -> ConstraintSet:
        """The bounding box of the vertices (a superset with a closed-form projection)."""
        return Box(self.variable if self.variable is not None else self.dim, self._V.min(axis=0),
                   self._V.max(axis=0))

    def project_with_bound(
        self, v: np.ndarray, *, tol: float | None = None, max_iter: int = 20_000
    ) -> tuple[np.ndarray, float]:
        """Euclidean projection onto the hull, with a certified error bound.

        Solves ``min_{λ∈Δ_k} ½‖Vᵀλ − v‖²`` by FISTA (Beck & Teboulle 2009,
        step ``1/‖V‖₂²``) with gradient-based adaptive restart (O'Donoghue &
        Candès 2015).  Every 10 iterations the support of λ is polished: the
        point is replaced by the projection of ``v`` onto the affine hull of
        the active rows when that lies in their convex hull, which makes the
        answer exact up to rounding once the optimal face is identified.

        The returned ``bound`` certifies ``‖x − P_C(v)‖₂ ≤ bound`` for the
        point ``x ∈ C``: with ``∇ = x − v`` and the Frank–Wolfe gap
        ``gap = ⟨∇, x⟩ − min_i ⟨∇, V_i⟩``, 1-strong convexity of ``½‖· − v‖²``
        gives ``‖x − P_C(v)‖₂ ≤ √(2·gap)``, and the obtuse-angle property of
        projections gives ``‖x − P_C(v)‖₂ ≤ ‖x − v‖₂``; ``bound`` is the
        smaller.  Iteration stops when ``bound ≤ tol`` (default
        ``1e-9 · max(1, ‖C‖₂, ‖v‖₂)``), when the gap is at the level of
        floating-point rounding (the bound is then about ``1e-8 · scale``
        while the point is typically exact to ~1e-15), or after ``max_iter``
        iterations (with a ``RuntimeWarning``).

        Returns
        -------
        x : numpy.ndarray, shape (dim,)
            The projection; always a convex combination of the rows.
        bound : float
            The certified bound on the distance to the exact projection.
        """
        v = check_vector(v, self.dim, "v")
        if tol is not None and not (tol > 0):
            raise ModelError(f"tol must be positive, got {tol!r}")
        return self._project_with_bound(v, tol, positive_int(max_iter, "max_iter"))

    def _certificate(self, x: np.ndarray, v: np.ndarray) -> tuple[float, bool]:
        """A bound on ‖x − P_C(v)‖₂ for x ∈ C, and whether the Frank–Wolfe gap is at rounding level."""
        grad = x - v
        gap = max(float(grad @ x - np.min(self._V @ grad)), 0.0)
        vmax = float(np.max(np.abs(self._V)))
        floor = 64.0 * np.finfo(float).eps * float(np.sum(np.abs(grad))) * max(vmax, float(np.max(np.abs(x))))
        bound = min(math.sqrt(2.0 * gap), float(np.linalg.norm(grad)))
        return bound, bool(gap <= floor)

    def _polish(self, lam: np.ndarray, v: np.ndarray) -> np.ndarray | None:
        """Weights of the projection of v onto the affine hull of the active rows, if feasible."""
        active = np.flatnonzero(lam > 0)
        P = self._V[active]
        base = P[0]
        if active.size == 1:
            mu = np.ones(1)
        else:
            D = P[1:] - base
            c = np.linalg.lstsq(D.T, v - base, rcond=None)[0]
            mu = np.concatenate([[1.0 - c.sum()], c])
            if mu.min() < -1e-9:
                return None
            mu = np.maximum(mu, 0.0)
            total = mu.sum()
            if not total > 0:
                return None
            mu /= total
        out = np.zeros_like(lam)
        out[active] = mu
        return out

    def _project_with_bound(
        self, v: np.ndarray, tol: float | None, max_iter: int
    ) -> tuple[np.ndarray, float]:
        V = self._V
        k = V.shape[0]
        if tol is None:
            tol = 1e-9 * max(1.0, self.radius(2), float(np.linalg.norm(v)))
        if k == 1 or self._lipschitz == 0.0:
            x = V[0].copy()
            return x, 0.0  # a single point: its own projection, exactly
        step = 1.0 / self._lipschitz
        Vv = V @ v
        lam = np.zeros(k)
        lam[int(np.argmin(np.sum((V - v) ** 2, axis=1)))] = 1.0  # nearest row
        y = lam.copy()
        t = 1.0
        best_lam, best_bound = lam, math.inf
        for it in range(1, max_iter + 1):
            grad = V @ (V.T @ y) - Vv
            lam_new = project_simplex(y - step * grad, 1.0)
            if float(grad @ (lam_new - lam)) > 0.0:  # adaptive restart
                t = 1.0
                y = lam_new
            else:
                t_new = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t * t))
                y = lam_new + ((t - 1.0) / t_new) * (lam_new - lam)
                t = t_new
            lam = lam_new
            if it % 10 and it != max_iter:
                continue
            polished = self._polish(lam, v)
            candidates = [lam] if polished is None else [polished, lam]
            for cand in candidates:
                x = V.T @ cand
                bound, at_rounding_level = self._certificate(x, v)
                if bound < best_bound:
                    best_lam, best_bound = cand, bound
                if bound <= tol or at_rounding_level:
                    return x, bound
            if polished is not None:  # continue from the better point
                lam = y = best_lam
                t = 1.0
        warnings.warn(
            f"VertexPolytope projection (k={k}, dim={self.dim}) stopped after max_iter={max_iter} "
            f"iterations above tol={tol:.3g}; raise max_iter for a tighter answer",
            RuntimeWarning,
            stacklevel=3,
        )
        return V.T @ best_lam, best_bound

    # -- geometry --------------------------------------------------------------

    def center(self) -> np.ndarray:
        """The mean of the rows."""
        return self._V.mean(axis=0)

    def _radius(self, norm: Norm) -> float:
        return float(np.max(vector_norm(self._V, norm, axis=1)))

    def _diameter(self, norm: Norm) -> float:
        V = self._V
        k = V.shape[0]
        block = max(1, BATCH_FLOATS // (k * self.dim))
        best = 0.0
        for start in range(0, k, block):
            diff = V[start : start + block, None, :] - V[None, :, :]
            best = max(best, float(np.max(vector_norm(diff, norm, axis=2))))
        return best

    @property
    def is_symmetric(self) -> bool:
        """Whether the set of rows is exactly closed under negation.

        A sufficient, not a necessary, condition for ``C = −C`` (an interior
        row without its negation makes this False even if the hull is
        symmetric).
        """
        rows = np.unique(self._V + 0.0, axis=0)  # + 0.0 maps −0.0 to 0.0
        neg = np.unique(-self._V + 0.0, axis=0)
        return rows.shape == neg.shape and bool(np.array_equal(rows, neg))

    # -- vertices --------------------------------------------------------------

    @property
    def n_vertices(self) -> int:
        return int(self._V.shape[0])

    def _vertices(self) -> np.ndarray:
        """A copy of the given rows, in the given order."""
        return self._V.copy()
