"""The intersection of public constraints as one constraint set.

:class:`Intersection` holds a constraint list in a canonical form — coordinate bounds
``low ≤ w ≤ high`` (infinite bounds allowed: ``w >= 0``, ``w[j] == 0``, boxes, the ℓ∞ ball),
general rows ``G w ≤ h`` and ``E w = e`` (``A @ w <= b``, polytopes, a simplex's sum), and at
most one ℓ1 and one ℓ2 ball — and declares what it can, so every mechanism reads it like
any other set (:class:`~dpopt.modeling.constraint_set.ConstraintSet`):

* radii and diameters: the smallest of the balls' and the bounding box's (upper bounds,
  valid wherever dpopt uses a radius); the bounding box comes from the bounds, the balls and,
  with rows, 2p linear programs at construction (as for an HPolytope);
* projection: closed form (``exact_projection``) for bounds containing 0 with at most one
  ball, or bounds alone (:mod:`dpopt.modeling.projections`); otherwise Dykstra's
  alternating projections, pulled inside toward a public point of the set so that the answer
  is always feasible, with a certified error bound from the Frank–Wolfe gap (the support
  function from the LMO, or bounded by the ℓ2 ball's and the polyhedral pieces' without one);
* the LMO: closed form for bounds containing 0 with one ball (a fractional knapsack for ℓ1,
  the projection curve for ℓ2) or for the bounds alone;
  otherwise a linear program through the installed polytope solver (the LP backend), with the
  ℓ1 ball lifted (``−t ≤ w ≤ t, Σt ≤ r``); none with an ℓ2 ball and other pieces
  (``has_lmo = False``: Frank–Wolfe refuses the set before the charge);
* ``relaxation()``: a superset with a closed-form projection (the bounding box, with the
  ball when it contains 0), over which objective perturbation solves before projecting its
  release onto the set.

:func:`dpopt.modeling.constraints.constraint_set` builds it from a list and returns the simpler
set it equals when there is one (a Box, NonNegative, a ball).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpopt.errors import ModelError
from dpopt.modeling.constraint_set import (
    ConstraintSet,
    GaussianWidth,
    Norm,
    check_vector,
    clip_to_grid,
    closed_form,
    vector_norm,
)
from dpopt.modeling.projections import (
    box_l1_lmo,
    box_l1_project,
    box_l2_lmo,
    box_l2_project,
    dykstra,
    pull_inside,
)
from dpopt.modeling.structured_sets import minimize_linear
from dpopt.modeling.variable import Variable

__all__ = ["Intersection"]

_ORD = {1: 1, 2: 2, "inf": np.inf}


def _row_norms(M: np.ndarray) -> np.ndarray:
    return np.linalg.norm(M, axis=1) if M.size else np.zeros(M.shape[0])


@dataclass(frozen=True, init=False, eq=False)
class Intersection(ConstraintSet):
    """``{w : low ≤ w ≤ high, G w ≤ h, E w = e, ‖w‖₁ ≤ r1, ‖w‖₂ ≤ r2}`` (module docstring).

    Parameters
    ----------
    var : Variable or int
        The variable the set constrains, or its dimension p.
    low, high : array_like of shape (p,)
        Coordinate bounds (``-inf``/``inf`` where none).
    G, h : array_like of shapes (m, p), (m,), optional
        Inequality rows.
    E, e : array_like of shapes (k, p), (k,), optional
        Equality rows.
    l1, l2 : float, optional
        Radii of the ℓ1 and ℓ2 balls (None: no such ball).

    Raises
    ------
    ModelError
        Malformed pieces, or an empty intersection.

    Notes
    -----
    The declarations are per instance (they depend on which pieces are present) and are
    read exactly like the class attributes of the other sets.
    """

    dim: int
    variable: Variable | None = field(compare=False)
    low: np.ndarray = field(repr=False)
    high: np.ndarray = field(repr=False)
    G: np.ndarray = field(repr=False)
    h: np.ndarray = field(repr=False)
    E: np.ndarray = field(repr=False)
    e: np.ndarray = field(repr=False)
    l1: float | None = None
    l2: float | None = None
    _box: np.ndarray = field(repr=False, default_factory=lambda: np.zeros((2, 0)))
    _center: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0))

    def __init__(self, var: Variable | int, low: object, high: object, *, G: object = None, h: object = None,
                 E: object = None, e: object = None, l1: float | None = None, l2: float | None = None) -> None:
        from dpopt.modeling.variable import dimension_of

        dim = dimension_of(var)
        put = object.__setattr__
        put(self, "dim", dim)
        put(self, "variable", var if isinstance(var, Variable) else None)
        put(self, "low", self._frozen(np.broadcast_to(np.asarray(low, dtype=np.float64), (dim,))))
        put(self, "high", self._frozen(np.broadcast_to(np.asarray(high, dtype=np.float64), (dim,))))
        if np.any(np.isnan(self.low)) or np.any(np.isnan(self.high)) or np.any(self.low > self.high):
            raise ModelError("the constraints are infeasible: a coordinate's lower bound exceeds its upper bound")
        put(self, "G", self._frozen(np.zeros((0, dim)) if G is None else np.asarray(G, dtype=np.float64)))
        put(self, "h", self._frozen(np.zeros(0) if h is None else np.asarray(h, dtype=np.float64)))
        put(self, "E", self._frozen(np.zeros((0, dim)) if E is None else np.asarray(E, dtype=np.float64)))
        put(self, "e", self._frozen(np.zeros(0) if e is None else np.asarray(e, dtype=np.float64)))
        for M, rhs, what in ((self.G, self.h, "G w ≤ h"), (self.E, self.e, "E w = e")):
            if M.ndim != 2 or M.shape[1] != dim or rhs.shape != (M.shape[0],):
                raise ModelError(f"{what}: the rows must have {dim} columns and one right-hand side each")
            if not (np.all(np.isfinite(M)) and np.all(np.isfinite(rhs))) or np.any(_row_norms(M) == 0):
                raise ModelError(f"{what}: rows must be finite and non-zero")
        put(self, "l1", None if l1 is None else float(l1))
        put(self, "l2", None if l2 is None else float(l2))
        self._declare()

    @staticmethod
    def _frozen(a: np.ndarray) -> np.ndarray:
        a = np.array(a, dtype=np.float64)
        a.flags.writeable = False
        return a

    # -- declarations ------------------------------------------------------------------------
    def _declare(self) -> None:
        put = object.__setattr__
        rows = self.G.shape[0] + self.E.shape[0] > 0
        zero_inside = bool(np.all(self.low <= 0) and np.all(self.high >= 0))
        n_balls = (self.l1 is not None) + (self.l2 is not None)
        closed = not rows and (n_balls == 0 or (n_balls == 1 and zero_inside))
        signs = bool(np.all((self.low >= 0) | (self.high <= 0)))  # ‖w‖₁ is linear on the set
        put(self, "exact_projection", closed)
        put(self, "grid_projection", not rows and n_balls == 0)
        put(self, "project_solver_points", closed)
        put(self, "l1_prox", "threshold-then-project" if closed else None)
        put(self, "polyhedral", self.l2 is None)
        box = self._bounding_box()
        put(self, "_box", box)
        bounded = bool(np.all(np.isfinite(box)))
        put(self, "bounded", bounded)
        closed_lmo = bounded and not rows and (n_balls == 0 or (zero_inside and n_balls == 1))
        put(self, "closed_form_lmo", closed_lmo)
        lp_lmo = bounded and self.l2 is None and not closed_lmo and (self.l1 is None or signs)
        put(self, "lmo_is_lp", lp_lmo)
        put(self, "has_lmo", bounded and (closed_lmo or self.l2 is None))
        put(self, "_center", self._find_center())

    def _ball_box(self) -> float:
        return min(r for r in (self.l1, self.l2, math.inf) if r is not None)

    def _bounding_box(self) -> np.ndarray:
        """``(2, p)``: coordinate-wise bounds of the set (exact for bounds with balls, the LP
        bounds of the polyhedral rows otherwise; infinite where unbounded)."""
        r = self._ball_box()
        low, high = np.maximum(self.low, -r), np.minimum(self.high, r)
        if np.any(low > high):
            raise ModelError("the constraints are infeasible: the bounds lie outside the norm ball")
        nearest = np.clip(0.0, low, high)
        for q, radius in ((1, self.l1), (2, self.l2)):
            if radius is not None and float(np.linalg.norm(nearest, q)) > radius * (1 + 1e-12):
                raise ModelError(f"the constraints are infeasible: the bounds lie outside the ℓ{q} ball")
        if self.G.shape[0] + self.E.shape[0] == 0:
            return np.vstack([low, high])
        A, b = self._linear_rows(low, high)
        box = np.vstack([low, high]).copy()
        for i in range(self.dim):
            for row, sign in ((0, 1.0), (1, -1.0)):
                c = np.zeros(self.dim)
                c[i] = sign
                res = self._lp(c, A, b)
                if res.status == "infeasible":
                    raise ModelError("the constraints are infeasible: the rows A w ≤ b and the bounds have no "
                                     "common point")
                if res.status == "optimal":
                    box[row, i] = sign * res.value
                elif res.status != "unbounded":
                    raise ModelError(f"the bounding-box linear program failed: {res.message}")
        return box

    def _linear_rows(self, low: np.ndarray, high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The polyhedral pieces (rows, equalities, finite bounds) as ``A w ≤ b``."""
        eye = np.eye(self.dim)
        fin_hi, fin_lo = np.isfinite(high), np.isfinite(low)
        A = np.vstack([self.G, self.E, -self.E, eye[fin_hi], -eye[fin_lo]])
        b = np.concatenate([self.h, self.e, -self.e, high[fin_hi], -low[fin_lo]])
        return A, b

    def _lp(self, c: np.ndarray, A: np.ndarray, b: np.ndarray) -> Any:
        """``min ⟨c, w⟩`` over the rows (and the ℓ1 ball, lifted) by :func:`~dpopt.modeling.structured_sets.minimize_linear`."""
        p = self.dim
        if self.l1 is None:
            return minimize_linear(c, A, b, [(None, None)] * p)
        eye = np.eye(p)
        lifted = np.vstack([np.hstack([A, np.zeros((A.shape[0], p))]), np.hstack([eye, -eye]),
                            np.hstack([-eye, -eye]), np.concatenate([np.zeros(p), np.ones(p)])[None, :]])
        rhs = np.concatenate([b, np.zeros(2 * p), [self.l1]])
        res = minimize_linear(np.concatenate([c, np.zeros(p)]), lifted, rhs,
                                                [(None, None)] * p + [(0.0, None)] * p)
        return res

    def _find_center(self) -> np.ndarray:
        """0 when it is in the set, else the projection of the bounding box's midpoint (public)."""
        zero = np.zeros(self.dim)
        if self._violation(zero) <= 0.0:
            return zero
        mid = np.where(np.isfinite(self._box).all(axis=0), 0.5 * (self._box[0] + self._box[1]),
                       np.clip(np.zeros(self.dim), self._box[0], self._box[1]))
        x = self._dykstra(mid)
        if self._violation(x) > 1e-9 * max(1.0, float(np.max(np.abs(x)))):
            raise ModelError("the constraints are infeasible or nearly so (no common point was found)")
        return x

    # -- membership --------------------------------------------------------------------------
    def _violation(self, v: np.ndarray) -> float:
        """The largest violation of a piece, each measured as a distance bound to that piece."""
        parts = [0.0, float(np.max(self.low - v, initial=0.0)), float(np.max(v - self.high, initial=0.0))]
        if self.G.shape[0]:
            parts.append(float(np.max((self.G @ v - self.h) / _row_norms(self.G))))
        if self.E.shape[0]:
            parts.append(float(np.max(np.abs(self.E @ v - self.e) / _row_norms(self.E))))
        if self.l1 is not None:
            parts.append((float(np.sum(np.abs(v))) - self.l1) / math.sqrt(self.dim))
        if self.l2 is not None:
            parts.append(float(np.linalg.norm(v)) - self.l2)
        return max(parts)

    def contains(self, v: np.ndarray, tol: float = 1e-9) -> bool:
        """Whether every piece holds up to ``tol·max(1, ‖C‖₂)`` (``max(1, ‖v‖₂)`` when unbounded)."""
        if not (tol >= 0):
            raise ModelError(f"tol must be non-negative, got {tol!r}")
        arr = check_vector(v, self.dim, "v", finite=False)
        if not np.all(np.isfinite(arr)):
            return False
        scale = self.radius(2) if self.bounded else float(np.linalg.norm(arr))
        return self._violation(arr) <= tol * max(1.0, scale)

    # -- projection --------------------------------------------------------------------------
    def _pieces(self) -> list[Any]:
        pieces: list[Any] = [lambda x: np.clip(x, self.low, self.high)]
        for a, beta, nrm in zip(self.G, self.h, _row_norms(self.G) ** 2, strict=True):
            pieces.append(lambda x, a=a, beta=beta, nrm=nrm: x - max(float(a @ x) - beta, 0.0) / nrm * a)
        if self.E.shape[0]:
            pinv = np.linalg.pinv(self.E)
            pieces.append(lambda x: x - pinv @ (self.E @ x - self.e))
        if self.l1 is not None:
            r1 = self.l1
            pieces.append(lambda x: box_l1_project(x, np.full(self.dim, -np.inf), np.full(self.dim, np.inf), r1))
        if self.l2 is not None:
            r2 = self.l2
            pieces.append(lambda x: x if float(np.linalg.norm(x)) <= r2 else x * (r2 / float(np.linalg.norm(x))))
        return pieces

    def _dykstra(self, v: np.ndarray) -> np.ndarray:
        return dykstra(v, self._pieces())

    def _fractions(self) -> list[Any]:
        """Per piece, the largest t with ``center + t·d`` inside it (center inside)."""
        def bounds(c: np.ndarray, d: np.ndarray) -> float:
            with np.errstate(divide="ignore", invalid="ignore"):
                up = np.where(d > 0, (self.high - c) / d, np.inf)
                down = np.where(d < 0, (self.low - c) / d, np.inf)
            return float(np.min(np.concatenate([up, down, [1.0]])))

        def rows(c: np.ndarray, d: np.ndarray) -> float:
            slope, slack = self.G @ d, self.h - self.G @ c
            with np.errstate(divide="ignore", invalid="ignore"):
                t = np.where(slope > 0, np.maximum(slack, 0.0) / slope, np.inf)
            return float(np.min(t, initial=1.0))

        def ball(q: int, r: float) -> Any:
            def frac(c: np.ndarray, d: np.ndarray) -> float:
                if float(np.linalg.norm(c + d, q)) <= r:
                    return 1.0
                lo, hi = 0.0, 1.0  # ‖c + t d‖ is convex in t and ≤ r at t = 0: bisection
                for _ in range(60):
                    mid = 0.5 * (lo + hi)
                    lo, hi = (mid, hi) if float(np.linalg.norm(c + mid * d, q)) <= r else (lo, mid)
                return lo
            return frac

        out: list[Any] = [bounds, rows]
        if self.l1 is not None:
            out.append(ball(1, self.l1))
        if self.l2 is not None:
            out.append(ball(2, self.l2))
        return out

    def _project(self, v: np.ndarray) -> np.ndarray:
        if self.exact_projection:
            zero_inside = bool(np.all(self.low <= 0) and np.all(self.high >= 0))
            if self.l1 is not None and zero_inside:
                return box_l1_project(v, self.low, self.high, self.l1)
            if self.l2 is not None and zero_inside:
                return box_l2_project(v, self.low, self.high, self.l2)
            return np.clip(v, self.low, self.high)
        if self._violation(v) <= 0.0:
            return v.copy()
        x = self._dykstra(v)
        x = np.clip(x, self.low, self.high) if self.E.shape[0] == 0 else x
        return pull_inside(x, self._center, self._fractions())

    def project_with_error(self, v: np.ndarray) -> tuple[np.ndarray, float]:
        """The projection and a certified bound on its distance to the exact one.

        0 for the closed forms; otherwise ``√(2·gap)`` with gap a bound on the Frank–Wolfe gap
        ``h_C(v − x) − ⟨v − x, x⟩`` of ½‖· − v‖² at the feasible x (strong convexity 1).  The
        support function h_C is the set's own when it has an LMO; with an ℓ2 ball and rows it is
        bounded by the smaller of the ball's ``r‖d‖`` and the polyhedral pieces' LP value (both
        supersets of C), a valid and, where one piece is active, tight bound; ``inf`` when the set
        is unbounded.
        """
        x = self.project(v)
        if self.exact_projection:
            return x, 0.0
        if not self.bounded:
            return x, math.inf
        d = np.asarray(v, dtype=np.float64) - x
        support = float(self.support(d)) if self.has_lmo else self._support_bound(d)
        gap = max(support - float(d @ x), 0.0)
        return x, math.sqrt(2.0 * gap) + 1e-12 * max(1.0, float(np.linalg.norm(x)))

    def _support_bound(self, d: np.ndarray) -> float:
        """An upper bound on ``h_C(d)``: min of the ℓ2 ball's and the polyhedral pieces' (within the
        bounding box) support values."""
        bound = math.inf if self.l2 is None else self.l2 * float(np.linalg.norm(d))
        A, b = self._linear_rows(self._box[0], self._box[1])
        res = self._lp(-d, A, b)
        if res.status == "optimal":
            bound = min(bound, -float(res.value))
        return bound

    def project_to_grid(self, v: np.ndarray, step: float) -> tuple[np.ndarray, bool]:
        """Bounds alone: clip to the grid points inside the bounds, so the answer stays on γℤ^p."""
        if self.grid_projection:
            return clip_to_grid(check_vector(v, self.dim, "v"), self.low, self.high, step)
        return super().project_to_grid(v, step)

    def relaxation(self) -> ConstraintSet | None:
        """A superset with a closed-form projection: the bounding box (finite or not), with the
        ℓ2 (else ℓ1) ball when the box contains 0; the set itself when it has one."""
        if self.exact_projection:
            return self
        low, high = self._box[0], self._box[1]
        zero_inside = bool(np.all(low <= 0) and np.all(high >= 0))
        ball = {"l2": self.l2} if self.l2 is not None else ({"l1": self.l1} if self.l1 is not None else {})
        relaxed = Intersection(self.variable if self.variable is not None else self.dim, low, high,
                               **(ball if zero_inside else {}))
        return relaxed

    # -- linear optimisation ------------------------------------------------------------------
    def _lmo(self, g: np.ndarray) -> np.ndarray:
        if not self.has_lmo:
            raise ModelError(
                "Intersection has no linear minimization oracle here (an ℓ2 ball with other pieces is not a "
                "linear program, or the set is unbounded): use DPGradientDescent or ObjectivePerturbation over it"
            )
        if self.closed_form_lmo:
            return self._closed_lmo(g)
        A, b = self._linear_rows(self.low, self.high)
        res = self._lp(g, A, b)
        if res.status != "optimal" or res.x is None:
            raise ModelError(f"Intersection LMO: the linear program did not solve ({res.message})")
        return self.clip_to_box(np.asarray(res.x[: self.dim], dtype=np.float64))

    def _closed_lmo(self, g: np.ndarray) -> np.ndarray:
        if self.l1 is not None:
            return box_l1_lmo(g, self.low, self.high, self.l1)
        if self.l2 is not None:
            return box_l2_lmo(g, self.low, self.high, self.l2)
        return np.where(g > 0, self.low, self.high)

    @property
    def A(self) -> np.ndarray:
        """The rows ``A w ≤ b`` of a set whose LMO is a linear program (``lmo_is_lp``)."""
        return self._lp_rows()[0]

    @property
    def b(self) -> np.ndarray:
        """The right-hand side of :attr:`A`."""
        return self._lp_rows()[1]

    def _lp_rows(self) -> tuple[np.ndarray, np.ndarray]:
        A, b = self._linear_rows(self.low, self.high)
        if self.l1 is not None:  # sign-constrained coordinates: ‖w‖₁ = Σ sign_i w_i, one row
            sign = np.where(self.low >= 0, 1.0, np.where(self.high <= 0, -1.0, 0.0))
            A, b = np.vstack([A, sign[None, :]]), np.concatenate([b, [self.l1]])
        return A, b

    def clip_to_box(self, x: np.ndarray) -> np.ndarray:
        """``x`` clipped to the bounding box (as for an HPolytope's LMO answers)."""
        return np.clip(np.asarray(x, dtype=np.float64), self._box[0], self._box[1])

    @property
    def bounding_box(self) -> tuple[np.ndarray, np.ndarray]:
        """``(low, high)``: coordinate-wise bounds of the set (infinite where unbounded)."""
        return self._box[0].copy(), self._box[1].copy()

    # -- geometry ------------------------------------------------------------------------------
    def center(self) -> np.ndarray:
        """0 when it is in the set, else a fixed public point of it (see :meth:`_find_center`)."""
        return self._center.copy()

    def _radius(self, norm: Norm) -> float:
        peak = np.maximum(np.abs(self._box[0]), np.abs(self._box[1]))
        p = self.dim
        best = float(vector_norm(peak, norm, axis=0))
        if self.l1 is not None:
            best = min(best, self.l1)
        if self.l2 is not None:
            best = min(best, self.l2 * (math.sqrt(p) if norm == 1 else 1.0))
        return best

    def _diameter(self, norm: Norm) -> float:
        best = float(vector_norm(self._box[1] - self._box[0], norm, axis=0))
        return min(best, 2.0 * self._radius(norm))

    @property
    def is_symmetric(self) -> bool:
        rows = self.G.shape[0] + self.E.shape[0] > 0
        return not rows and bool(np.array_equal(self.low, -self.high))

    @property
    def n_vertices(self) -> float:
        return math.inf

    def gaussian_width(self, *, n_samples: int = 2_000, confidence: float = 0.95,
                       seed: int | None = 0) -> GaussianWidth:
        """Monte Carlo over the support function when there is an LMO; otherwise the smallest
        closed-form width of a superset (the ℓ2 ball's, ``r·√p``, or the box's), an upper bound."""
        if self.has_lmo:
            return self.gaussian_width_monte_carlo(n_samples=n_samples, confidence=confidence, seed=seed)
        if not self.bounded:
            return closed_form(math.inf)
        box = float(np.sum(self._box[1] - self._box[0])) / math.sqrt(2.0 * math.pi)
        ball = math.inf if self.l2 is None else self.l2 * math.sqrt(self.dim)
        value = min(box, ball)
        return GaussianWidth(value=value, low=0.0, high=value, method="closed-form")

    def __repr__(self) -> str:
        parts = []
        finite = np.isfinite(self.low) | np.isfinite(self.high)
        if np.any(finite):
            parts.append(f"bounds on {int(np.sum(finite))}")
        if self.G.shape[0]:
            parts.append(f"{self.G.shape[0]} rows")
        if self.E.shape[0]:
            parts.append(f"{self.E.shape[0]} equalities")
        if self.l1 is not None:
            parts.append(f"‖w‖₁ ≤ {self.l1:g}")
        if self.l2 is not None:
            parts.append(f"‖w‖₂ ≤ {self.l2:g}")
        return f"Intersection(dim={self.dim}: {', '.join(parts) or 'ℝ^p'})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Intersection):
            return NotImplemented
        return all(np.array_equal(getattr(self, k), getattr(other, k)) for k in ("low", "high", "G", "h", "E", "e")
                   ) and (self.l1, self.l2) == (other.l1, other.l2)

    def __hash__(self) -> int:
        return hash((self.low.tobytes(), self.high.tobytes(), self.G.tobytes(), self.E.tobytes(), self.l1, self.l2))

