"""Proximal maps of the non-smooth part h = λ‖·‖₁ + ι_C, and a certificate from them.

The gradient-mapping certificate bounds the distance to the exact minimizer of a
μ-strongly convex composite objective f + h with β-smooth f (Beck 2017,
Thm. 10.16 / Nesterov 2013): with x⁺ = prox_{h/β}(x − ∇f(x)/β) and gradient
mapping G = β(x − x⁺),

    ⟨G, x − x*⟩ ≥ ‖G‖²/(2β) + (μ/2)‖x − x*‖²   ⇒   ‖x − x*‖ ≤ 2‖G‖/μ,

so ‖x⁺ − x*‖ ≤ ‖G‖ (1/β + 2/μ).  This holds for any x ∈ ℝ^d (feasible or not), so
dpopt releases the feasible point x⁺ with that proven distance bound,
independently of what the solver claims.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from dpopt._threads import blas_threads
from dpopt.errors import BackendCapabilityError
from dpopt.modeling.regularizers import soft_threshold

if TYPE_CHECKING:
    from dpopt.modeling.constraint_set import ConstraintSet
    from dpopt.modeling.problem import Problem


def prox_supported(constraint: ConstraintSet | None, l1: float) -> bool:
    """Whether :func:`composite_prox` has an exact closed form for this pair.

    Read from the set's declaration :attr:`~dpopt.modeling.constraint_set.ConstraintSet.l1_prox`.
    """
    if l1 == 0.0 or constraint is None:
        return True
    return constraint.l1_prox is not None


def composite_prox(constraint: ConstraintSet | None, l1: float, v: np.ndarray, step: float) -> np.ndarray:
    """argmin_x ½‖x − v‖² + step·l1·‖x‖₁ subject to x ∈ C.

    Exact for C = ℝ^d and for every set that declares an ``l1_prox`` rule: the
    ℓ1 prox commutes with the projections of the ℓ1/ℓ2/ℓ∞ balls (sign- and
    scale-preserving, Yu 2013); on the simplex ‖x‖₁ is constant.  Raises
    BackendCapabilityError otherwise.
    """
    if l1 == 0.0:
        return v.copy() if constraint is None else constraint.project(v)
    if constraint is None:
        return soft_threshold(v, step * l1)
    if constraint.l1_prox is None:
        raise BackendCapabilityError(
            f"no exact proximal map for an L1Norm regularizer over {type(constraint).__name__}; "
            "use a ball or simplex constraint, or drop the L1Norm term (a set declares one with "
            "its class attribute l1_prox)"
        )
    if constraint.l1_prox == "project":
        return constraint.project(v)
    return constraint.project(soft_threshold(v, step * l1))


@dataclass(frozen=True)
class Certificate:
    """dpopt's own optimality certificate for a strongly convex composite problem.

    Attributes
    ----------
    point : ndarray
        The feasible point x⁺ that may be released.
    distance_bound : float
        Proven bound on ‖x⁺ − θ*‖₂, θ* the exact minimizer.
    gradient_mapping_norm : float
        ‖G‖ at the solver's point.
    strong_convexity, smoothness : float
        The μ and β used.
    """

    point: np.ndarray
    distance_bound: float
    gradient_mapping_norm: float
    strong_convexity: float
    smoothness: float

    def to_dict(self) -> dict[str, float]:
        return {
            "distance_bound": self.distance_bound,
            "gradient_mapping_norm": self.gradient_mapping_norm,
            "strong_convexity": self.strong_convexity,
            "smoothness": self.smoothness,
        }


def gradient_mapping(problem: Problem, x: np.ndarray, beta: float) -> tuple[np.ndarray, np.ndarray, float, float]:
    """(x⁺, G, slack, err) for step 1/β on ``problem``'s composite objective.

    ``slack`` bounds the floating-point error of the computed G: forming
    x − g/β and subtracting it from x loses up to a few ulps of ‖x‖ and ‖g‖/β,
    which β magnifies (without it a tiny gradient can round to G = 0 exactly).
    On ℝ^d with no ℓ1 term G is the gradient itself and no slack is needed.
    ``err`` bounds ‖x⁺ − P(x − g/β)‖ when the set's projection is iterative
    (:meth:`ConstraintSet.project_with_error`; 0 for the closed-form ones, inf for
    sets without a certified projection); x⁺ itself always lies in C.
    """
    g = problem.smooth_gradient(x)
    if problem.constraint is None and problem.l1_weight == 0.0:
        return x - g / beta, g, 0.0, 0.0
    if problem.l1_weight == 0.0:
        assert problem.constraint is not None
        xp, err = problem.constraint.project_with_error(x - g / beta)
    else:
        xp, err = composite_prox(problem.constraint, problem.l1_weight, x - g / beta, 1.0 / beta), 0.0
    eps = np.finfo(np.float64).eps
    slack = 4.0 * eps * (beta * float(np.linalg.norm(x)) + float(np.linalg.norm(g)) + beta * float(np.linalg.norm(xp)))
    return xp, beta * (x - xp), slack, float(err)


def certify_composite(problem: Problem, x: np.ndarray) -> Certificate:
    """The gradient-mapping certificate of a solver's point (no submodular-norm term).

    Returns the feasible point x⁺ and a proven bound on its distance to the exact
    minimizer; the bound is ``inf`` when the objective is not strongly convex or
    not smooth, or when the point is not finite.  :func:`dpopt.numerics.certificates.certify`
    chooses between this and the duality-gap certificate of a submodular norm.
    """
    mu = problem.strong_convexity
    beta = max(problem.smoothness, mu)
    x = np.asarray(x, dtype=np.float64)
    if not (mu > 0 and math.isfinite(beta)) or x.shape != (problem.dim,) or not np.all(np.isfinite(x)):
        fallback = x if x.shape == (problem.dim,) else np.full(problem.dim, np.nan)
        return Certificate(fallback, math.inf, math.inf, mu, beta)
    with blas_threads():  # one pass over the data: single-threaded BLAS avoids thread thrash
        xp, G, slack, err = gradient_mapping(problem, x, beta)
    # with an inexact projection (error ≤ err) the exact mapping G* satisfies
    # ‖G*‖ ≤ ‖G‖ + β·err, and x⁺ is within err of the exact prox point
    gn = float(np.linalg.norm(G)) + slack + beta * err
    return Certificate(xp, err + gn * (1.0 / beta + 2.0 / mu), gn, mu, beta)
