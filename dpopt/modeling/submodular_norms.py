"""Ω∞ as a regularizer and its unit ball as a constraint set (Kumar–Deisenroth 2019, Eq. (5)-(8)).

:class:`SubmodularNorm`
    the regularizer ``lam·Ω∞(θ)`` added to the *average* loss; with the paper's
    normalization (Eq. (1), ``(1/n)Σℓ + (λ/n)Ω∞``) ``lam = λ/n``.
:class:`SubmodularNormBall`
    the constraint set ``C = {θ : Ω∞(θ) ≤ r}`` of Eq. (8).

Both compile to cvxpy (:mod:`dpopt.compile.submodular_cvxpy`): exact atoms for
ℓ1, ℓ∞, ordered weighted ℓ1 and group/chain norms, and for a general F an exact
LP by constraint generation over greedy vertices.  Nothing here reads data.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from dpopt.errors import BackendCapabilityError, ModelError
from dpopt.modeling.balls import L1Ball, LinfBall, NormBall
from dpopt.modeling.constraint_set import (
    ConstraintSet,
    GaussianWidth,
    Norm,
    init_set,
    positive_finite,
)
from dpopt.modeling.regularizers import Regularizer
from dpopt.modeling.submodular import (
    ENUMERATE_MAX_P,
    Cardinality,
    ConcaveCardinality,
    Indicator,
    SetFunction,
    dual_norm,
    dual_norm_argmax,
    omega,
    subset_masks,
    vertex_blocks,
)
from dpopt.modeling.variable import Variable, dimension_of
from dpopt.modeling.vertex_polytope import VertexPolytope

__all__ = ["SubmodularNorm", "SubmodularNormBall"]


def _check_F(F: object, dim: int) -> SetFunction:
    if not isinstance(F, SetFunction):
        raise ModelError(f"F must be a dpopt SetFunction (e.g. GroupCoverage), got {type(F).__name__}")
    if F.p != dim:
        raise ModelError(f"F is defined on p={F.p} elements but the variable has size {dim}")
    return F


@dataclass(frozen=True, init=False, eq=False)
class SubmodularNorm(Regularizer):
    """The regularizer ``lam · Ω∞(θ) = lam · f(|θ|)`` (Eq. (6)), f the Lovász extension of F.

    Parameters
    ----------
    variable : Variable or int
        θ or its size p.
    F : SetFunction
        A non-decreasing submodular function on p elements.
    lam : float
        The weight (> 0) in the average-loss objective; the paper's λ/n.

    Notes
    -----
    Ω∞ is a norm but not strongly convex: mechanisms whose privacy rests on
    strong convexity (output perturbation, Thm. 1) need an added
    :class:`~dpopt.L2Squared` term.
    """

    qp_representable = True  # exact atoms are piecewise linear; the general F is an LP by cuts

    dim: int
    F: SetFunction = field(repr=False)
    lam: float

    def __init__(self, variable: Variable | int, F: SetFunction, lam: float) -> None:
        dim = dimension_of(variable)
        object.__setattr__(self, "dim", dim)
        object.__setattr__(self, "F", _check_F(F, dim))
        if isinstance(lam, bool) or not isinstance(lam, (int, float, np.floating)) or not (
            math.isfinite(lam) and lam > 0
        ):
            raise ModelError(f"SubmodularNorm weight lam must be positive and finite (λ > 0), got {lam!r}")
        object.__setattr__(self, "lam", float(lam))

    @property
    def strong_convexity(self) -> float:
        return 0.0

    def value(self, theta: np.ndarray) -> float:
        """``lam · Ω∞(θ)``."""
        return self.lam * omega(self.F, theta)

    def norm(self, theta: np.ndarray) -> float:
        """``Ω∞(θ)`` (unweighted)."""
        return omega(self.F, theta)

    def dual(self, s: np.ndarray) -> float:
        """``Ω*(s)`` (unweighted)."""
        return dual_norm(self.F, s)

    def prox(self, v: np.ndarray, step: float) -> np.ndarray:
        """``prox_{step·lam·Ω∞}(v)`` by Moreau, when ``|P|(F)`` is a product of ℓ1 balls.

        Raises
        ------
        BackendCapabilityError
            For the families whose ``|P|(F)`` is not such a product (the projection
            onto it would be iterative).
        """
        blocks = product_l1_blocks(self.F)
        if blocks is None:
            raise BackendCapabilityError(
                f"SubmodularNorm for {self.F.describe()} has no closed-form proximal map "
                "(its blocks overlap or are not ℓ1 balls)"
            )
        return prox_omega(blocks, step * self.lam, np.asarray(v, dtype=np.float64))

    def __repr__(self) -> str:
        return f"SubmodularNorm({self.F.describe()}, lam={self.lam:g})"


@dataclass(frozen=True, init=False, eq=False)
class SubmodularNormBall(NormBall):
    """The ball ``{θ ∈ ℝ^p : Ω∞(θ) ≤ r}`` (the set C of Eq. (8), scaled).

    Parameters
    ----------
    var : Variable or int
        The variable or its size p.
    F : SetFunction
        A non-decreasing submodular function on p elements.
    radius : float
        r > 0.

    Notes
    -----
    The ball is ``r · conv{ ε ⊙ 1_A / F(A) : A ≠ ∅, ε ∈ {±1}^p }`` (Bach 2010).
    LMO: ``−r · dual_norm_argmax(−g)`` (the best set of the dual norm); support
    ``r·Ω*(g)``.  Projection is exact for the ℓ1 and ℓ∞ cases and otherwise
    fully corrective Frank–Wolfe over LMO vertices with each restricted problem
    projected by :class:`~dpopt.sets.VertexPolytope` (certified by the
    Frank–Wolfe gap).  Radii: ``‖C‖∞ = r/min_i F({i})``, ``‖C‖₁ = r·Ω*(1)``,
    ``‖C‖₂ = r·max_A √|A|/F(A)`` exactly for cardinality-based F, else the
    upper bound ``√(‖C‖₁‖C‖∞)``.  The vertex list (p ≤ 8) is every signed
    ``1_A/F(A)`` (a superset of the extreme points, ``3^p − 1`` rows).
    """

    polyhedral = True  # conv of finitely many points; its cvxpy atoms and cuts are linear

    dim: int
    F: SetFunction = field(repr=False)
    r: float
    variable: Variable | None = field(default=None, compare=False)

    def __init__(self, var: Variable | int, F: SetFunction, radius: float = 1.0) -> None:
        init_set(self, var)
        object.__setattr__(self, "F", _check_F(F, self.dim))
        object.__setattr__(self, "r", positive_finite(radius, "SubmodularNormBall radius"))

    def __repr__(self) -> str:
        return f"SubmodularNormBall({self.F.describe()}, r={self.r:g})"

    def norm(self, v: np.ndarray) -> float:
        """``Ω∞(v)``."""
        return omega(self.F, v)

    # -- special cases with an existing set ---------------------------------------
    def _as_norm_ball(self) -> ConstraintSet | None:
        if isinstance(self.F, Cardinality):
            return L1Ball(self.dim, self.r / self.F.c)
        if isinstance(self.F, Indicator):
            return LinfBall(self.dim, self.r / self.F.c)
        return None

    # -- linear optimisation -------------------------------------------------------
    def _lmo(self, g: np.ndarray) -> np.ndarray:
        return -self.r * dual_norm_argmax(self.F, g)

    def _support(self, g: np.ndarray) -> float:
        return self.r * dual_norm(self.F, g)

    # -- projection ------------------------------------------------------------------
    def _project(self, v: np.ndarray) -> np.ndarray:
        special = self._as_norm_ball()
        if special is not None:
            return special.project(v)
        if omega(self.F, v) <= self.r:
            return v.copy()
        return self._project_fully_corrective(v)[0]

    def project_with_error(self, v: np.ndarray) -> tuple[np.ndarray, float]:
        """The projection and a certified bound on its error (√(2·gap) of the column generation)."""
        v = np.asarray(v, dtype=np.float64)
        special = self._as_norm_ball()
        if special is not None:
            return special.project_with_error(v)
        if omega(self.F, v) <= self.r:
            return v.copy(), 0.0
        return self._project_fully_corrective(v)

    def _project_fully_corrective(self, v: np.ndarray, *, max_rounds: int = 200) -> tuple[np.ndarray, float]:
        """Projection by column generation; returns the point and the bound ``√(2·gap)``."""
        atoms = [self._lmo(-v)]
        x = atoms[0]
        bound = math.inf
        for _ in range(max_rounds):
            x = VertexPolytope(np.array(atoms)).project(v)
            grad = x - v
            s = self._lmo(grad)
            gap = max(float(grad @ (x - s)), 0.0)
            bound = math.sqrt(2.0 * gap)
            if bound <= 1e-10 * max(1.0, self.r, float(np.linalg.norm(v))):
                break
            atoms.append(s)
        return x, bound

    def contains(self, v: np.ndarray, tol: float = 1e-9) -> bool:
        """Whether ``Ω∞(v) ≤ r(1 + tol)`` (non-finite vectors are not members)."""
        if not (tol >= 0):
            raise ModelError(f"tol must be non-negative, got {tol!r}")
        arr = np.asarray(v, dtype=np.float64)
        if arr.shape != (self.dim,):
            raise ModelError(f"v must have shape ({self.dim},), got shape {arr.shape}")
        if not np.all(np.isfinite(arr)):
            return False
        return omega(self.F, arr) <= self.r * (1.0 + tol)

    # -- geometry --------------------------------------------------------------------
    def _radius(self, norm: Norm) -> float:
        F = self.F
        rinf = self.r / float(np.min(F.singletons()))
        if norm == "inf":
            return rinf
        r1 = self.r * dual_norm(F, np.ones(self.dim))
        if norm == 1:
            return r1
        if F._is_cardinality_based():
            h = np.concatenate([[0.0], np.cumsum(F.gains(np.arange(self.dim)))])
            k = np.arange(1, self.dim + 1)
            return self.r * float(np.max(np.sqrt(k) / h[1:]))
        return math.sqrt(r1 * rinf)

    @property
    def n_vertices(self) -> int | float:
        if isinstance(self.F, Cardinality):
            return 2 * self.dim
        if isinstance(self.F, Indicator):
            return 2**self.dim
        return 3**self.dim - 1 if self.dim <= ENUMERATE_MAX_P else math.inf

    def _vertices(self) -> np.ndarray:
        special = self._as_norm_ball()
        if special is not None:
            return special.vertices(max_count=max(1, int(self.n_vertices)))
        masks = subset_masks(self.dim)
        vals = np.array([self.F.value_mask(m) for m in masks])
        rows = []
        for m, val in zip(masks, vals, strict=True):
            nz = np.flatnonzero(m)
            signs = ((np.arange(2**nz.size)[:, None] >> np.arange(nz.size)[None, :]) & 1) * 2.0 - 1.0
            block = np.zeros((signs.shape[0], self.dim))
            block[:, nz] = signs / val
            rows.append(block)
        return self.r * np.vstack(rows)

    def gaussian_width(
        self, *, n_samples: int = 2_000, confidence: float = 0.95, seed: int | None = 0
    ) -> GaussianWidth:
        """``r · E Ω*(g)``: exact for the ℓ1/ℓ∞ cases, else Monte Carlo over the dual norm."""
        special = self._as_norm_ball()
        if special is not None:
            return special.gaussian_width()
        return self.gaussian_width_monte_carlo(n_samples=n_samples, confidence=confidence, seed=seed)

    def _support_many(self, G: np.ndarray) -> np.ndarray:
        if isinstance(self.F, ConcaveCardinality):
            top = np.cumsum(-np.sort(-np.abs(G), axis=1), axis=1)
            return self.r * np.max(top / self.F.h[1:], axis=1)
        return np.array([self._support(row) for row in G])


def product_l1_blocks(F: SetFunction) -> list[tuple[np.ndarray, np.ndarray]] | None:
    """|P|(F) as a product of scaled ℓ1 balls: ``[(idx (m, k), weights (m,)), ...]``, or None."""
    blocks = vertex_blocks(F)
    if blocks is None:
        return None
    seen = np.zeros(F.p, dtype=np.int64)
    out = []
    for b in blocks:
        k = b.idx.shape[1]
        if b.V.shape != (2 * k, k) or not np.array_equal(b.V, np.vstack([np.eye(k), -np.eye(k)])):
            return None
        np.add.at(seen, b.idx.ravel(), 1)
        out.append((np.asarray(b.idx), np.asarray(b.weights, dtype=np.float64)))
    return out if int(seen.max(initial=0)) <= 1 else None


def project_l1(v: np.ndarray, r: float) -> np.ndarray:
    """Euclidean projection onto the ℓ1 ball of radius r (sort-based, exact)."""
    a = np.abs(v)
    if float(a.sum()) <= r:
        return v.copy()
    u = np.sort(a)[::-1]
    css = np.cumsum(u) - r
    ind = np.arange(1, a.size + 1)
    rho = np.flatnonzero(u - css / ind > 0)[-1]
    tau = css[rho] / (rho + 1.0)
    return np.sign(v) * np.maximum(a - tau, 0.0)


def prox_omega(blocks: list[tuple[np.ndarray, np.ndarray]], lam: float, v: np.ndarray) -> np.ndarray:
    """prox_{lam·Ω∞}(v) = v − Proj_{lam·|P|(F)}(v) for a product of scaled ℓ1 balls (Moreau)."""
    proj = np.zeros_like(v)
    for idx, w in blocks:
        if idx.shape[1] == 1:  # segments [−w, w]
            i = idx[:, 0]
            proj[i] = np.clip(v[i], -lam * w, lam * w)
            continue
        for j in range(idx.shape[0]):
            proj[idx[j]] = project_l1(v[idx[j]], lam * float(w[j]))
    return v - proj
