"""The norm balls ``{v : ‖v‖ ≤ r}`` centred at 0: :class:`L1Ball` (the LASSO constraint),
:class:`L2Ball` and :class:`LinfBall`, with the geometry private mechanisms need from them
(Talwar, Thakurta and Zhang 2014: LMO, support function, projection, radii, vertices and the
Gaussian width).

The sets are immutable and public: they describe a parameter domain, never data.  numpy and
scipy only; cvxpy and MIP encodings live in :mod:`dpopt.compile`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

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
)
from dpopt.modeling.expressions import Constraint, NormConstraint
from dpopt.modeling.gaussian_width import expected_max_abs_gaussian
from dpopt.modeling.variable import Variable

__all__ = ["L1Ball", "L2Ball", "LinfBall", "NormBall"]



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

    def as_constraints(self, w: Variable) -> list[Constraint]:
        return [NormConstraint(w, 1, self.r)]  # norm1(w) <= r, built without w's identity matrix

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

    def as_constraints(self, w: Variable) -> list[Constraint]:
        return [NormConstraint(w, 2, self.r)]  # norm2(w) <= r, built without w's identity matrix

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
