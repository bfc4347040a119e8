"""Structured constraint sets: group-ℓ1 balls, nuclear-norm balls, H-polytopes.

The sets of Talwar, Thakurta and Zhang (2014), Sec. 3.2 beyond the plain norm
balls of :mod:`dpopt.modeling.balls`, with the same interface (LMO, support
function, projection, membership, radii, diameters, Gaussian width):

:class:`GroupL1Ball`
    ``{v : Σ_G ‖v_G‖₂ ≤ r}`` for disjoint groups G partitioning the coordinates.
:class:`NuclearNormBall`
    ``{V ∈ ℝ^{p×q} : ‖V‖_* ≤ r}``; the parameter vector is ``V`` flattened in
    row-major (C) order, so ``theta.reshape(p, q)`` is the matrix.
:class:`HPolytope`
    ``{v : A v ≤ b}`` given by inequalities; its LMO is a linear program and its
    projection a QP, both solved by :func:`solve_polytope_program`.

Like the other sets these are public descriptions of a parameter domain and
never see data.  Only numpy and scipy's special functions, quadrature and SVDs are
used here: no solver package is imported by the modeling layer.  The polytope's
optimizations are posed as :class:`PolytopeLP` and :class:`PolytopeProjection` programs and
solved by :func:`solve_polytope_program`, a ``functools.singledispatch`` function for which the
backend layer registers its solvers (:mod:`dpopt.backends.polytope_programs`: HiGHS and
L-BFGS-B through scipy, imported with this module by the package root).  Mechanisms call the
LMO through the backend their ``solver=`` names instead.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import singledispatch
from typing import Any

import numpy as np

from dpopt.errors import ModelError
from dpopt.modeling.balls import NormBall
from dpopt.modeling.boxes import Box
from dpopt.modeling.constraint_set import (
    ConstraintSet,
    GaussianWidth,
    Norm,
    check_vector,
    init_set,
    positive_finite,
    project_simplex,
    unit_vector,
)
from dpopt.modeling.expressions import Constraint, LinearConstraint
from dpopt.modeling.gaussian_width import QUAD
from dpopt.modeling.variable import Variable, dimension_of
from dpopt.modeling.vertex_polytope import VertexPolytope

__all__ = ["GroupL1Ball", "HPolytope", "LinearAnswer", "NuclearNormBall", "PolytopeLP", "PolytopeProjection",
           "ProjectionAnswer", "minimize_linear", "project_onto_polytope", "solve_polytope_program"]

#: matrices with at most this many entries get a dense SVD; larger ones ARPACK's svds.
_DENSE_SVD_ENTRIES = 250_000


def _project_l1_nonneg(s: np.ndarray, r: float) -> np.ndarray:
    """Projection of a non-negative vector onto ``{w ≥ 0 : Σ w ≤ r}``."""
    if float(np.sum(s)) <= r:
        return s.copy()
    return project_simplex(s, r)


# ---------------------------------------------------------------------------
# Group-ℓ1 ball
# ---------------------------------------------------------------------------


def _parse_groups(groups: object, dim: int) -> tuple[np.ndarray, ...]:
    """Disjoint index arrays covering ``range(dim)``, from groups or per-coordinate labels."""
    try:
        flat = np.asarray(groups)
    except (TypeError, ValueError):
        flat = np.empty(0, dtype=object)
    if flat.ndim == 1 and flat.size == dim and flat.dtype.kind in "iu":
        labels = flat.astype(np.int64)
        out = tuple(np.flatnonzero(labels == g) for g in np.unique(labels))
    else:
        if not isinstance(groups, Sequence) or isinstance(groups, str) or len(groups) == 0:
            raise ModelError(
                "groups must be a non-empty list of index lists, or an integer label per coordinate"
            )
        out_list = []
        for g in groups:
            idx = np.asarray(g)
            if idx.ndim != 1 or idx.size == 0 or idx.dtype.kind not in "iu":
                raise ModelError("every group must be a non-empty 1-D list of integer indices")
            out_list.append(idx.astype(np.int64))
        out = tuple(out_list)
    allidx = np.concatenate(out)
    if allidx.min() < 0 or allidx.max() >= dim:
        raise ModelError(f"group indices must lie in [0, {dim})")
    if allidx.size != dim or np.unique(allidx).size != dim:
        raise ModelError(
            f"groups must partition the {dim} coordinates: disjoint and covering every index "
            "(put a coordinate in a group of its own to leave it ungrouped)"
        )
    for g in out:
        g.flags.writeable = False
    return out


@dataclass(frozen=True, init=False, eq=False)
class GroupL1Ball(NormBall):
    """The group-ℓ1 ball ``{v ∈ ℝ^p : Σ_G ‖v_G‖₂ ≤ r}`` over disjoint groups.

    Parameters
    ----------
    var : Variable or int
        The variable the set constrains, or its dimension p.
    radius : float
        The radius r (positive, finite).
    groups : list of index lists, or int array of shape (p,)
        Either the groups as lists of coordinate indices (disjoint, covering
        ``0..p−1``), or one integer group label per coordinate.

    Notes
    -----
    The LMO returns ``−r g_G/‖g_G‖₂`` on the group with the largest
    ``‖g_G‖₂`` (first such group; ``r·e_i`` at the first index of the first
    group when ``g = 0``).  Projection projects the vector of group norms onto
    the ℓ1 ball and rescales each group.  With k_max the largest group size,
    ``radius(1) = r√k_max`` and ``radius(2) = radius("inf") = r``.  The Gaussian
    width ``r · E max_G ‖g_G‖₂`` is computed by exact one-dimensional quadrature
    over the chi distributions of the group norms.
    """

    exact_projection = True

    closed_form_lmo = True
    mirror_potential = "group-l1"
    dim: int
    r: float
    groups: tuple[np.ndarray, ...] = field(repr=False)
    variable: Variable | None = field(default=None, compare=False)
    _labels: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64), repr=False)

    def __init__(self, var: Variable | int, radius: float, groups: object) -> None:
        init_set(self, var)
        object.__setattr__(self, "r", positive_finite(radius, "GroupL1Ball radius"))
        parsed = _parse_groups(groups, self.dim)
        object.__setattr__(self, "groups", parsed)
        labels = np.empty(self.dim, dtype=np.int64)
        for k, g in enumerate(parsed):
            labels[g] = k
        labels.flags.writeable = False
        object.__setattr__(self, "_labels", labels)

    def __repr__(self) -> str:
        return f"GroupL1Ball(dim={self.dim}, r={self.r}, n_groups={len(self.groups)})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GroupL1Ball):
            return NotImplemented
        return self.r == other.r and bool(np.array_equal(self._labels, other._labels))

    def __hash__(self) -> int:
        return hash((self.r, self._labels.tobytes()))

    @property
    def group_sizes(self) -> np.ndarray:
        """Size of every group, in group order."""
        return np.array([g.size for g in self.groups])

    def group_norms(self, v: np.ndarray) -> np.ndarray:
        """``‖v_G‖₂`` for every group G, in group order."""
        v = check_vector(v, self.dim, "v")
        return self._group_norms(v)

    def _group_norms(self, v: np.ndarray) -> np.ndarray:
        return np.sqrt(np.bincount(self._labels, weights=v * v, minlength=len(self.groups)))

    def norm(self, v: np.ndarray) -> float:
        """The group-ℓ1 norm ``Σ_G ‖v_G‖₂``."""
        return float(np.sum(self.group_norms(v)))

    def _lmo(self, g: np.ndarray) -> np.ndarray:
        norms = self._group_norms(g)
        k = int(np.argmax(norms))
        if norms[k] == 0.0:
            return unit_vector(self.dim, int(self.groups[0][0]), self.r)
        out = np.zeros(self.dim)
        idx = self.groups[k]
        out[idx] = (-self.r / norms[k]) * g[idx]
        return out

    def _support(self, g: np.ndarray) -> float:
        return self.r * float(np.max(self._group_norms(g)))

    def _support_many(self, G: np.ndarray) -> np.ndarray:
        sq = np.zeros((G.shape[0], len(self.groups)))
        np.add.at(sq.T, self._labels, (G * G).T)
        return self.r * np.sqrt(sq.max(axis=1))

    def _project(self, v: np.ndarray) -> np.ndarray:
        norms = self._group_norms(v)
        if float(norms.sum()) <= self.r:
            return v.copy()
        target = _project_l1_nonneg(norms, self.r)
        with np.errstate(invalid="ignore", divide="ignore"):
            factor = np.where(norms > 0, target / norms, 0.0)
        return v * factor[self._labels]

    def _radius(self, norm: Norm) -> float:
        if norm == 1:
            return self.r * math.sqrt(int(self.group_sizes.max()))
        return self.r

    @property
    def n_vertices(self) -> int | float:
        """2p when every group is a singleton (the ℓ1 ball), else ``inf``."""
        return 2 * self.dim if len(self.groups) == self.dim else math.inf

    def _vertices(self) -> np.ndarray:
        eye = self.r * np.eye(self.dim)
        return np.vstack([eye, -eye])

    def gaussian_width(
        self, *, n_samples: int = 20_000, confidence: float = 0.95, seed: int | None = 0
    ) -> GaussianWidth:
        """``G = r · E max_G ‖g_G‖₂`` by exact quadrature; sampling arguments unused.

        ``E M = ∫₀^∞ 1 − Π_G F_{k_G}(t) dt`` with ``F_k`` the chi CDF with k degrees
        of freedom (regularized lower gamma ``P(k/2, t²/2)``), cut at
        ``T = √k_max + √(2 log m) + 12`` for m groups.  The tail beyond T is at
        most ``Σ_G √(2π) Φ(−(T − √k_G))`` (Gaussian concentration of the
        1-Lipschitz map g ↦ ‖g_G‖₂ around a median ≤ √k_G).
        """
        from scipy import integrate, special  # imported when a width is computed, not with dpopt

        sizes, counts = np.unique(self.group_sizes, return_counts=True)
        half = 0.5 * sizes.astype(float)
        m = int(counts.sum())
        upper = math.sqrt(float(sizes.max())) + math.sqrt(2.0 * math.log(max(m, 2))) + 12.0

        def integrand(t: float) -> float:
            log_cdf = np.log(np.maximum(special.gammainc(half, 0.5 * t * t), 1e-300))
            return -math.expm1(float(np.sum(counts * log_cdf)))

        mid = math.sqrt(float(sizes.max())) + math.sqrt(2.0 * math.log(max(m, 2)))
        value, err = integrate.quad(integrand, 0.0, upper, points=[mid], **QUAD)
        tail = float(np.sum(counts * math.sqrt(2.0 * math.pi) * special.ndtr(-(upper - np.sqrt(sizes)))))
        return GaussianWidth(self.r * value, self.r * (value - err), self.r * (value + err + tail),
                             "quadrature")


# ---------------------------------------------------------------------------
# Nuclear-norm ball
# ---------------------------------------------------------------------------


def _check_shape(shape: object) -> tuple[int, int]:
    if (
        not isinstance(shape, tuple)
        or len(shape) != 2
        or not all(isinstance(s, (int, np.integer)) and not isinstance(s, bool) and s > 0 for s in shape)
    ):
        raise ModelError(f"shape must be a tuple (p, q) of positive integers, got {shape!r}")
    return int(shape[0]), int(shape[1])


def top_singular_pair(M: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """The largest singular value of ``M`` and a unit singular pair ``(u, v)``.

    Dense SVD (LAPACK) for matrices with at most 250,000 entries, otherwise
    ARPACK (:func:`scipy.sparse.linalg.svds`, k = 1) started from a fixed
    vector, so the answer is deterministic.
    """
    p, q = M.shape
    if M.size <= _DENSE_SVD_ENTRIES or min(p, q) == 1:
        U, s, Vt = np.linalg.svd(M, full_matrices=False)
        return float(s[0]), U[:, 0].copy(), Vt[0].copy()
    from scipy.sparse.linalg import svds

    v0 = np.full(min(p, q), 1.0 / math.sqrt(min(p, q)))
    U, s, Vt = svds(M, k=1, v0=v0, tol=1e-10)
    return float(s[0]), U[:, 0].copy(), Vt[0].copy()


@dataclass(frozen=True, init=False)
class NuclearNormBall(NormBall):
    """The nuclear-norm ball ``{V ∈ ℝ^{p×q} : ‖V‖_* ≤ r}`` of a matrix parameter.

    Parameters
    ----------
    var : Variable or int
        The variable the set constrains (size p·q), or that size.
    radius : float
        The radius r (positive, finite).
    shape : tuple (p, q)
        The matrix shape.  The parameter vector is the matrix flattened in
        row-major (C) order: ``V = theta.reshape(p, q)``.

    Notes
    -----
    The LMO is ``−r u₁ v₁ᵀ`` for the top singular pair of the reshaped
    gradient (``r e₀e₀ᵀ`` for a zero gradient); the support function is
    ``r σ_max``.  Projection projects the singular values onto the ℓ1 ball: a
    closed form given one SVD (``exact_projection``, like the ℓ1 ball's sort), so
    the convex mechanisms' a-priori fallback runs over this set.
    Radii of the flattened vector: ``r`` in ℓ2 (Frobenius) and ℓ∞ (largest
    entry), ``r√(pq)`` in ℓ1 (attained by ``r u vᵀ`` with flat unit u, v).  The
    Gaussian width ``r · E‖G‖_op`` has no closed form and is estimated by Monte
    Carlo (it lies between ``max(√p, √q)`` and ``√p + √q`` times r).
    """

    exact_projection = True
    closed_form_lmo = True
    mirror_potential = "nuclear"
    dim: int
    r: float
    shape: tuple[int, int]
    variable: Variable | None = field(default=None, compare=False)

    def __init__(self, var: Variable | int, radius: float, *, shape: tuple[int, int]) -> None:
        init_set(self, var)
        object.__setattr__(self, "r", positive_finite(radius, "NuclearNormBall radius"))
        p, q = _check_shape(shape)
        if p * q != self.dim:
            raise ModelError(f"shape {shape} has {p * q} entries but the variable has size {self.dim}")
        object.__setattr__(self, "shape", (p, q))

    def as_matrix(self, v: np.ndarray) -> np.ndarray:
        """The (p, q) matrix of a parameter vector (row-major)."""
        return check_vector(v, self.dim, "v").reshape(self.shape)

    def norm(self, v: np.ndarray) -> float:
        """The nuclear norm of the matrix of ``v``."""
        return float(np.linalg.svd(self.as_matrix(v), compute_uv=False).sum())

    def _lmo(self, g: np.ndarray) -> np.ndarray:
        s, u, v = top_singular_pair(g.reshape(self.shape))
        if s == 0.0:
            return unit_vector(self.dim, 0, self.r)
        return (-self.r * np.outer(u, v)).ravel()

    def _support(self, g: np.ndarray) -> float:
        return self.r * top_singular_pair(g.reshape(self.shape))[0]

    def _support_many(self, G: np.ndarray) -> np.ndarray:
        mats = G.reshape(G.shape[0], *self.shape)
        return self.r * np.linalg.norm(mats, ord=2, axis=(1, 2))

    def _project(self, v: np.ndarray) -> np.ndarray:
        U, s, Vt = np.linalg.svd(v.reshape(self.shape), full_matrices=False)
        if float(s.sum()) <= self.r:
            return v.copy()
        return ((U * _project_l1_nonneg(s, self.r)) @ Vt).ravel()

    def _radius(self, norm: Norm) -> float:
        if norm == 1:
            return self.r * math.sqrt(self.dim)
        return self.r

    @property
    def n_vertices(self) -> float:
        return math.inf  # extreme points: every r·u vᵀ with unit u, v


# ---------------------------------------------------------------------------
# Polytope given by inequalities
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class LinearAnswer:
    """A linear program's answer: status ``"optimal"``, ``"infeasible"``, ``"unbounded"``,
    ``"limit"`` or ``"error"``; the point (None unless optimal), the value and the solver's message."""

    status: str
    x: np.ndarray | None
    value: float
    message: str = ""


@dataclass(frozen=True)
class ProjectionAnswer:
    """A projection's point, whether the iterative method converged, and its message."""

    x: np.ndarray
    converged: bool
    message: str = ""


#: per-variable (low, high) of a linear program, None for unbounded
Bounds = Sequence[tuple[float | None, float | None]]


@dataclass(frozen=True, eq=False)
class PolytopeLP:
    """``min ⟨c, x⟩ s.t. A x ≤ b`` within per-variable ``bounds``: a linear program that a set's
    public geometry poses (``A`` dense or scipy sparse)."""

    c: np.ndarray
    A: Any
    b: np.ndarray
    bounds: Bounds


@dataclass(frozen=True, eq=False)
class PolytopeProjection:
    """``argmin ½‖w − v‖² s.t. A w ≤ b``: the Euclidean projection onto an H-polytope."""

    A: np.ndarray
    b: np.ndarray
    v: np.ndarray


@singledispatch
def solve_polytope_program(program: object) -> LinearAnswer | ProjectionAnswer:
    """Solve a program posed by a set's geometry, dispatching on the program's type.

    The modeling layer imports no solver package: the backend layer registers its solvers for
    :class:`PolytopeLP` (answered by a :class:`LinearAnswer`) and :class:`PolytopeProjection`
    (a :class:`ProjectionAnswer`) with ``@solve_polytope_program.register``
    (:mod:`dpopt.backends.polytope_programs`, imported with this module).

    Raises
    ------
    ModelError
        For a program type no solver is registered for.
    """
    raise ModelError(f"no solver is registered for a {type(program).__name__}: register one with "
                     "@dpopt.modeling.structured_sets.solve_polytope_program.register")


def minimize_linear(c: np.ndarray, A: Any, b: np.ndarray, bounds: Bounds) -> LinearAnswer:
    """``min ⟨c, x⟩ s.t. A x ≤ b`` within ``bounds``, by the solver registered for :class:`PolytopeLP`."""
    answer = solve_polytope_program(PolytopeLP(c, A, b, bounds))
    if not isinstance(answer, LinearAnswer):
        raise ModelError(f"the solver registered for a PolytopeLP returned a {type(answer).__name__}, "
                         "not a LinearAnswer")
    return answer


def project_onto_polytope(A: np.ndarray, b: np.ndarray, v: np.ndarray) -> ProjectionAnswer:
    """``argmin ½‖w − v‖² s.t. A w ≤ b``, by the solver registered for :class:`PolytopeProjection`."""
    answer = solve_polytope_program(PolytopeProjection(A, b, v))
    if not isinstance(answer, ProjectionAnswer):
        raise ModelError(f"the solver registered for a PolytopeProjection returned a {type(answer).__name__}, "
                         "not a ProjectionAnswer")
    return answer


def _minimize_linear(c: np.ndarray, A: np.ndarray, b: np.ndarray) -> LinearAnswer:
    """``min cᵀx s.t. A x ≤ b`` (x free)."""
    return minimize_linear(c, A, b, [(None, None)] * A.shape[1])


@dataclass(frozen=True, init=False, eq=False)
class HPolytope(ConstraintSet):
    """A bounded polytope ``{v ∈ ℝ^p : A v ≤ b}`` given by inequalities.

    Parameters
    ----------
    A : array_like, shape (m, p)
        Constraint matrix (finite entries, no zero rows).
    b : array_like, shape (m,)
        Right-hand side.
    variable : Variable, optional
        The variable the set constrains; its size must be p.

    Raises
    ------
    ModelError
        Malformed A or b, an empty polytope, or an unbounded one.

    Notes
    -----
    The LMO solves the LP ``min ⟨g, v⟩ s.t. A v ≤ b`` with :func:`solve_polytope_program`
    (HiGHS through scipy, :mod:`dpopt.backends.polytope_programs`;
    mechanisms use the backend their ``solver=`` names, on the same LP compiled by
    :mod:`dpopt.compile.polytope_program`); at construction one LP per direction
    ``±e_i`` gives the bounding box (2p LPs), which proves boundedness and gives

    * ``radius("inf")`` and ``diameter("inf")`` exactly;
    * ``radius(1)``, ``radius(2)``, ``diameter(1)``, ``diameter(2)`` as **upper
      bounds** from the box (their exact values are maxima of a convex function
      over a polytope, NP-hard in general).  Every use of a radius in dpopt
      (Lipschitz constants, sensitivities) stays valid with an upper bound.

    The centre is the Chebyshev centre (the centre of the largest inscribed
    ball, one more LP).  Projection solves the dual of
    ``min ½‖w − v‖² s.t. A w ≤ b`` (a bound-constrained QP in λ ≥ 0, compiled by
    :func:`dpopt.compile.polytope_program.projection_dual`) with the installed solver
    (default: L-BFGS-B); the answer ``v − Aᵀλ`` may violate the constraints by about 1e-9
    relative.  There is no vertex list (``n_vertices`` is ``inf``): for small
    dimensions :meth:`to_vertex_polytope` enumerates the vertices with qhull.
    """

    polyhedral = True

    lmo_is_lp = True
    dim: int
    variable: Variable | None
    A: np.ndarray = field(repr=False)
    b: np.ndarray = field(repr=False)
    _box: np.ndarray = field(repr=False)
    _center: np.ndarray = field(repr=False)

    def __init__(self, A: object, b: object, *, variable: Variable | None = None) -> None:
        try:
            Am = np.array(A, dtype=np.float64)
            bv = np.array(b, dtype=np.float64)
        except (TypeError, ValueError):
            raise ModelError("HPolytope A must be a numeric (m, p) array and b a numeric (m,) vector") from None
        if Am.ndim != 2 or Am.shape[0] == 0 or Am.shape[1] == 0:
            raise ModelError(f"HPolytope A must be a non-empty 2-D (m, p) array, got shape {Am.shape}")
        if bv.shape != (Am.shape[0],):
            raise ModelError(f"HPolytope b must have shape ({Am.shape[0]},), got {bv.shape}")
        if not (np.all(np.isfinite(Am)) and np.all(np.isfinite(bv))):
            raise ModelError("HPolytope A and b must have finite entries")
        if np.any(np.linalg.norm(Am, axis=1) == 0):
            raise ModelError("HPolytope A has an all-zero row; remove it")
        if variable is not None:
            dim = dimension_of(variable)
            if dim != Am.shape[1]:
                raise ModelError(f"A has {Am.shape[1]} columns but the variable has size {dim}")
        Am.flags.writeable = False
        bv.flags.writeable = False
        object.__setattr__(self, "dim", int(Am.shape[1]))
        object.__setattr__(self, "variable", variable if isinstance(variable, Variable) else None)
        object.__setattr__(self, "A", Am)
        object.__setattr__(self, "b", bv)
        object.__setattr__(self, "_box", self._bounding_box())
        object.__setattr__(self, "_center", self._chebyshev_center())

    def as_constraints(self, w: Variable) -> list[Constraint]:
        return [LinearConstraint(w, self.A, self.b)]  # A @ w <= b, built without w's identity matrix

    def __repr__(self) -> str:
        return f"HPolytope(m={self.A.shape[0]}, dim={self.dim})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, HPolytope):
            return NotImplemented
        return bool(np.array_equal(self.A, other.A) and np.array_equal(self.b, other.b))

    def __hash__(self) -> int:
        return hash((self.A.shape, self.A.tobytes(), self.b.tobytes()))

    # -- construction-time LPs ---------------------------------------------------
    def _bounding_box(self) -> np.ndarray:
        """``(2, p)``: rows min and max of every coordinate over the polytope."""
        box = np.empty((2, self.dim))
        for i in range(self.dim):
            for row, sign in ((0, 1.0), (1, -1.0)):
                res = _minimize_linear(unit_vector(self.dim, i, sign), self.A, self.b)
                if res.status == "infeasible":
                    raise ModelError("HPolytope is empty: the inequalities A v ≤ b have no solution")
                if res.status == "unbounded":
                    raise ModelError(
                        f"HPolytope is unbounded along coordinate {i}; add inequalities that bound it"
                    )
                if res.status != "optimal":
                    raise ModelError(f"HPolytope bounding-box LP failed: {res.message}")
                box[row, i] = sign * res.value
        return box

    def _chebyshev_center(self) -> np.ndarray:
        norms = np.linalg.norm(self.A, axis=1)
        c = np.zeros(self.dim + 1)
        c[-1] = -1.0
        A_ext = np.hstack([self.A, norms[:, None]])
        res = minimize_linear(c, A_ext, self.b, [(None, None)] * self.dim + [(0, None)])
        if res.status != "optimal" or res.x is None:  # pragma: no cover - bounded, non-empty: always solves
            return 0.5 * (self._box[0] + self._box[1])
        return np.asarray(res.x[: self.dim], dtype=np.float64)

    # -- linear optimisation ---------------------------------------------------
    def _lmo(self, g: np.ndarray) -> np.ndarray:
        """The LP's vertex, clipped to the bounding box.

        The LP solver returns a point feasible only to its tolerance.  Every radius this set
        reports is computed from the bounding box, and so are the Lipschitz constants
        and sensitivities built on them; clipping the answer to the box (exact in
        floating point) keeps every iterate built from LMO answers inside the box, so
        those constants hold at the iterates by construction.  The
        mechanisms also clip per-example gradients, so privacy does not rest on this alone.
        """
        res = _minimize_linear(g, self.A, self.b)
        if res.status != "optimal" or res.x is None:
            raise ModelError(f"HPolytope LMO: the LP did not solve ({res.message})")
        return self.clip_to_box(res.x)

    def clip_to_box(self, x: np.ndarray) -> np.ndarray:
        """``x`` clipped to the exact bounding box (see :meth:`_lmo` for why LMO answers are)."""
        return np.clip(np.asarray(x, dtype=np.float64), self._box[0], self._box[1])

    # -- projection and membership ----------------------------------------------
    def project_with_error(self, v: np.ndarray) -> tuple[np.ndarray, float]:
        """The projection, with no certified error bound (``inf``): it is an iterative
        dual method whose point may violate Aθ ≤ b slightly, so dpopt's optimality
        certificates do not accept it (mechanisms that need one fail closed)."""
        v = np.asarray(v, dtype=np.float64)
        if np.all(self.A @ v <= self.b):
            return v.copy(), 0.0
        return self.project(v), math.inf

    def _project(self, v: np.ndarray) -> np.ndarray:
        if np.all(self.A @ v <= self.b):
            return v.copy()
        res = project_onto_polytope(self.A, self.b, v)
        if not res.converged:
            warnings.warn(f"HPolytope projection: the iterative solver stopped early ({res.message})",
                          RuntimeWarning, stacklevel=3)
        return np.asarray(res.x, dtype=np.float64)

    def contains(self, v: np.ndarray, tol: float = 1e-9) -> bool:
        """Whether ``A v ≤ b`` up to ``tol``.

        Each violation is measured as a distance to its half-space,
        ``(a_iᵀv − b_i)/‖a_i‖₂``, and must be at most ``tol · max(1, ‖C‖₂)``
        (``‖C‖₂`` the box bound of :meth:`radius`).  Non-finite vectors are not members.
        """
        if not (tol >= 0):
            raise ModelError(f"tol must be non-negative, got {tol!r}")
        arr = check_vector(v, self.dim, "v", finite=False)
        if not np.all(np.isfinite(arr)):
            return False
        viol = (self.A @ arr - self.b) / np.linalg.norm(self.A, axis=1)
        return bool(np.max(viol) <= tol * max(1.0, self.radius(2)))

    # -- geometry --------------------------------------------------------------
    def center(self) -> np.ndarray:
        """The Chebyshev centre (centre of the largest inscribed ball)."""
        return self._center.copy()

    def _radius(self, norm: Norm) -> float:
        peak = np.maximum(np.abs(self._box[0]), np.abs(self._box[1]))
        if norm == "inf":
            return float(peak.max())
        if norm == 1:
            return float(peak.sum())
        return float(np.linalg.norm(peak))

    def _diameter(self, norm: Norm) -> float:
        width = self._box[1] - self._box[0]
        if norm == "inf":
            return float(width.max())
        if norm == 1:
            return float(width.sum())
        return float(np.linalg.norm(width))

    @property
    def is_symmetric(self) -> bool:
        """Whether the normalized inequalities are closed under ``a ↦ −a`` (sufficient for C = −C)."""
        norms = np.linalg.norm(self.A, axis=1)[:, None]
        rows = np.round(np.hstack([self.A, self.b[:, None]]) / norms, 12) + 0.0
        neg = np.round(np.hstack([-self.A, self.b[:, None]]) / norms, 12) + 0.0
        return bool(np.array_equal(np.unique(rows, axis=0), np.unique(neg, axis=0)))

    @property
    def n_vertices(self) -> float:
        """``inf``: the vertices are not listed (see :meth:`to_vertex_polytope`)."""
        return math.inf

    def vertices(self, max_count: int = 100_000) -> np.ndarray:
        """The vertices, enumerated with qhull (dimension 2 to 8) or from the box (dimension 1).

        Raises
        ------
        ModelError
            In dimension above 8, or with more than ``max_count`` vertices.
        """
        if self.dim == 1:
            V = np.unique(self._box.reshape(2, 1), axis=0)
        elif self.dim <= 8:
            from scipy.spatial import HalfspaceIntersection

            halfspaces = np.hstack([self.A, -self.b[:, None]])
            try:
                hs = HalfspaceIntersection(halfspaces, self._center)
            except Exception as exc:  # qhull: degenerate (lower-dimensional) polytopes
                raise ModelError(
                    f"HPolytope vertex enumeration failed (is the polytope full-dimensional?): {exc}"
                ) from None
            V = np.unique(np.round(hs.intersections, 12), axis=0)
        else:
            raise ModelError(
                f"HPolytope in dimension {self.dim} has no vertex list (enumeration is exponential); "
                "use lmo() instead"
            )
        if V.shape[0] > max_count:
            raise ModelError(f"HPolytope has {V.shape[0]} vertices, more than max_count={max_count}")
        return V

    def relaxation(self) -> ConstraintSet:
        """The exact bounding box (a superset with a closed-form projection)."""
        return Box(self.variable if self.variable is not None else self.dim, self._box[0], self._box[1])

    def to_vertex_polytope(self) -> VertexPolytope:
        """The same polytope as a :class:`VertexPolytope` (small dimensions only)."""
        return VertexPolytope(self.vertices(), variable=self.variable)

    def gaussian_width(
        self, *, n_samples: int = 2_000, confidence: float = 0.95, seed: int | None = 0
    ) -> GaussianWidth:
        """Monte Carlo estimate over LP support values (one LP per sample; default 2,000 samples)."""
        return self.gaussian_width_monte_carlo(n_samples=n_samples, confidence=confidence, seed=seed)
