"""The oracles of private Frank–Wolfe: vertex scorers (Alg. 4) and gradient oracles.

A :class:`VertexScorer` scores ``⟨s, g⟩`` over the vertices s of a polytope (from its
vertex array, or in O(p) for the ℓ1 ball and the simplex, :func:`vertex_scorer`); a
gradient oracle gives the clipped smooth gradient at the current iterate
(:class:`ProblemGradient`, or the incremental LASSO oracles of
:mod:`dpopt.numerics.lasso_fast` through :class:`CoordinateGradient`).  Nothing here draws
noise or knows a budget: :mod:`dpopt.mechanisms.frank_wolfe` calibrates, charges and adds the
noise (talwar-thakurta-zhang-2014, Alg. 4 and 5).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import singledispatch
from typing import ClassVar

import numpy as np

from dpopt.errors import MechanismError
from dpopt.modeling.balls import L1Ball
from dpopt.modeling.boxes import Simplex
from dpopt.modeling.constraint_set import ConstraintSet
from dpopt.modeling.problem import Problem
from dpopt.numerics.clipping import ClippedGradient
from dpopt.numerics.lasso_fast import DirectLassoGradient, IncrementalLassoGradient

__all__ = [
    "CoordinateGradient",
    "L1BallScorer",
    "ProblemGradient",
    "SimplexScorer",
    "VertexScorer",
    "clipped_smooth_gradient",
    "vertex_scorer",
]


class VertexScorer:
    """Scores ``⟨s, g⟩`` of the rows s of a vertex array ``V`` (k, p)."""

    coordinate_steps: ClassVar[bool] = False

    def __init__(self, V: np.ndarray) -> None:
        self.V = np.asarray(V, dtype=np.float64)
        self.n_candidates = int(self.V.shape[0])
        self.l1_radius = float(np.max(np.abs(self.V).sum(axis=1)))

    def scores(self, g: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """The scores ⟨s, g⟩ of every vertex (into ``out``, shape (n_candidates,), when given)."""
        return np.asarray(self.V @ g) if out is None else np.matmul(self.V, g, out=out)

    def vertex(self, i: int) -> np.ndarray:
        return self.V[i].copy()


class L1BallScorer(VertexScorer):
    """The 2p vertices ``+r e_0..+r e_{p−1}, −r e_0..−r e_{p−1}`` of the ℓ1 ball, scored in O(p)."""

    coordinate_steps = True

    def __init__(self, dim: int, radius: float) -> None:
        self.dim, self.r = dim, float(radius)
        self.n_candidates = 2 * dim
        self.l1_radius = self.r

    def scores(self, g: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        out = np.empty(self.n_candidates) if out is None else out
        np.multiply(g, self.r, out=out[:self.dim])
        np.multiply(g, -self.r, out=out[self.dim:])
        return out

    def coordinate(self, i: int) -> tuple[int, float]:
        return (i, self.r) if i < self.dim else (i - self.dim, -self.r)

    def vertex(self, i: int) -> np.ndarray:
        j, value = self.coordinate(i)
        out = np.zeros(self.dim)
        out[j] = value
        return out


class SimplexScorer(VertexScorer):
    """The p vertices ``scale·e_i`` of the simplex, scored in O(p)."""

    def __init__(self, dim: int, scale: float) -> None:
        self.dim, self.scale = dim, float(scale)
        self.n_candidates = dim
        self.l1_radius = self.scale

    def scores(self, g: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        return np.multiply(g, self.scale, out=out)

    def vertex(self, i: int) -> np.ndarray:
        out = np.zeros(self.dim)
        out[i] = self.scale
        return out


@singledispatch
def vertex_scorer(constraint: ConstraintSet, max_vertices: int) -> VertexScorer:
    """The vertex scorer of a polytope with a vertex list, or a clear refusal.

    Any set with a finite :attr:`~dpopt.modeling.constraint_set.ConstraintSet.n_vertices` is
    scored from its vertex array; a set with a faster scorer registers it with
    ``@vertex_scorer.register`` (the ℓ1 ball and the simplex below).
    """
    n = constraint.n_vertices
    if isinstance(n, float):
        raise MechanismError(
            f"PolytopeFrankWolfe (Alg. 4) needs a polytope given by its vertices; "
            f"{type(constraint).__name__} has no vertex list. Use GaussianFrankWolfe (Alg. 5), "
            "or a VertexPolytope (HPolytope.to_vertex_polytope() in small dimensions)"
        )
    if n > max_vertices:
        raise MechanismError(
            f"{type(constraint).__name__} in dimension {constraint.dim} has more than "
            f"max_vertices={max_vertices} vertices; raise max_vertices or use GaussianFrankWolfe (Alg. 5)"
        )
    return VertexScorer(constraint.vertices(max_count=max_vertices))


@vertex_scorer.register
def _(constraint: L1Ball, max_vertices: int) -> VertexScorer:
    return L1BallScorer(constraint.dim, constraint.r)


@vertex_scorer.register
def _(constraint: Simplex, max_vertices: int) -> VertexScorer:
    return SimplexScorer(constraint.dim, constraint.scale)


def clipped_smooth_gradient(problem: Problem, *, norm: object) -> Callable[[np.ndarray], np.ndarray]:
    """θ ↦ (1/n) Σ clip_L(∇ℓ(θ; d_i)) + λθ, with L the loss's declared constant in ``norm``.

    The sensitivities ``Δ = 2L₂/n`` (Alg. 5, ``norm=2``) and ``Δ = 2L₁‖C‖₁/n`` of the
    scores ⟨s, ∇L⟩ (Alg. 4, ``norm="inf"``: ``|⟨s, g − g'⟩| ≤ ‖s‖₁‖g − g'‖∞``) need
    every per-example gradient within the declared L, which holds on C only; an LMO
    answer feasible to solver tolerance (the HPolytope LP) can leave C.  Clipping each
    per-example gradient to L (:class:`~dpopt.numerics.clipping.ClippedGradient`)
    makes the bound hold for every iterate by construction; on C
    it changes nothing.  The (λ/2)‖θ‖² term is data-independent and not clipped.
    """
    constants = problem.loss_constants()
    bound = constants.lipschitz_l2 if norm == 2 else constants.lipschitz_l1
    clipped = ClippedGradient(problem.loss, norm=norm, bound=bound)
    lam = problem.l2_weight
    if problem.perturbation is not None:  # pragma: no cover - refused by _check_problem
        raise MechanismError("the problem already carries a perturbation; pass the plain problem")
    return lambda theta: clipped(theta) + lam * theta


class ProblemGradient:
    """The straightforward oracle: the clipped smooth gradient at the current iterate.

    Per-example gradients are clipped to the declared ℓ1-Lipschitz constant in ℓ∞
    (:func:`clipped_smooth_gradient`), so the score sensitivity ``2L₁‖C‖₁/n`` holds
    even at an iterate outside C.
    """

    def __init__(self, problem: Problem, theta0: np.ndarray) -> None:
        self.problem = problem
        self.theta = np.array(theta0, dtype=np.float64)
        self._gradient = clipped_smooth_gradient(problem, norm="inf")

    def gradient(self) -> np.ndarray:
        return self._gradient(self.theta)

    def advance(self, mu: float, scorer: VertexScorer, i: int) -> None:
        self.theta = (1.0 - mu) * self.theta + mu * scorer.vertex(i)


class CoordinateGradient:
    """Adapter: a LASSO gradient oracle stepping toward the ℓ1-ball vertex ``±r e_j``.

    The incremental gradient cannot clip per example, so the iterate is mapped
    exactly into the declared ball instead: after the first step the gradient is
    taken at ``θ · min(1, r/‖θ‖₁)`` with r the scorer's (public) ℓ1 radius.  On the
    ball ``|⟨x, θ⟩| ≤ x_bound·r``, so every per-example gradient is within the declared
    L₁ and the scores keep sensitivity ``2L₁r/n`` at any point.  The iterates are
    convex combinations of ``±r e_j``, so the map only ever undoes rounding (or a
    faulty vertex).
    """

    def __init__(self, oracle: IncrementalLassoGradient | DirectLassoGradient) -> None:
        self.oracle = oracle
        self.l1_radius: float | None = None
        # the incremental gradient is written into one array, reused by the next call
        self._out = {"out": np.empty(oracle.p)} if isinstance(oracle, IncrementalLassoGradient) else {}

    @property
    def theta(self) -> np.ndarray:
        return self.oracle.theta

    def gradient(self) -> np.ndarray:
        """The gradient at the current iterate (for the incremental oracle, an array the next call overwrites)."""
        return self.oracle.gradient(l1_radius=self.l1_radius, **self._out)

    def advance(self, mu: float, scorer: VertexScorer, i: int) -> None:
        assert isinstance(scorer, L1BallScorer)
        self.l1_radius = scorer.r
        j, value = scorer.coordinate(i)
        self.oracle.step(mu, j, value)
