"""The convex hull of the rows of a ``(k, p)`` array (:class:`VertexPolytope`), the set of
noisy-max Frank–Wolfe (Talwar, Thakurta and Zhang 2014, Alg. 4).

The set is immutable and public: it describes a parameter domain, never data.  numpy and scipy
only; cvxpy and MIP encodings live in :mod:`dpopt.compile`.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np

from dpopt.errors import ModelError
from dpopt.modeling.boxes import Box
from dpopt.modeling.constraint_set import (
    BATCH_FLOATS,
    ConstraintSet,
    Norm,
    check_vector,
    positive_int,
    project_simplex,
    vector_norm,
)
from dpopt.modeling.variable import Variable

__all__ = ["VertexPolytope"]



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
