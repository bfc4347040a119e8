"""A convex fallback solver whose iteration count is fixed before the data is read.

Convex mechanisms use an external solver as an *accelerator*: its answer is released
when dpopt's certificate (:func:`dpopt.numerics.certificates.certify`) proves it within the
declared tolerance.  Whether that happens depends on the data, so a private run must
not stop there.  This module is the fallback: accelerated proximal gradient on the
composite objective ``F = f + h`` of a perturbed :class:`~dpopt.modeling.problem.Problem`

    f(θ) = (1/n) Σ ℓ(θ; d_i) + (Λ/2)‖θ‖² + ⟨b, θ⟩ + (ζ/2)‖θ − θ₀‖²      (μ-strongly convex, β-smooth)
    h(θ) = λ₁‖θ‖₁ + lam·Ω∞(θ) + ι_C(θ)                                  (proximable, see below)

run for a number of iterations K computed from public quantities only — μ, β, the
declared data bounds, the constraint set's diameter, n through nothing but those — and
the noise b (the noise is not data).  The a-priori bound, not a measurement, proves
``‖x_K − θ*‖₂ ≤ tolerance``, so the run releases whatever the data are.

The method (Beck 2017, *First-Order Methods in Optimization*, Sec. 10.7.7, V-FISTA)
----------------------------------------------------------------------------------
With κ = β/μ, q = (√κ − 1)/(√κ + 1) and T(y) = prox_{h/β}(y − ∇f(y)/β):

    x⁰ = T(z),  y⁰ = x⁰;     x^{k+1} = T(y^k),  y^{k+1} = x^{k+1} + q (x^{k+1} − x^k).

Beck's Theorem 10.42 gives ``F(x^k) − F* ≤ (1 − 1/√κ)^k (F(x⁰) − F* + (μ/2)‖x⁰ − θ*‖²)``.
The first step x⁰ = T(z) from a public start z bounds the bracket without reading
F(x⁰): the fundamental prox-grad inequality (Beck 2017, Thm. 10.16, with the strong
convexity of f in ℓ_f(θ*, z) ≥ (μ/2)‖θ* − z‖²) gives
``F(x⁰) − F* + (β/2)‖x⁰ − θ*‖² ≤ ((β − μ)/2)‖z − θ*‖²``, hence with R ≥ ‖z − θ*‖

    (μ/2)‖x^k − θ*‖² ≤ F(x^k) − F* ≤ (1 − 1/√κ)^k ((β − μ)/2) R²
    ⇒ ‖x^k − θ*‖ ≤ √((κ − 1)(1 − 1/√κ)^k) · R,

(the first inequality: F is μ-strongly convex and 0 ∈ ∂F(θ*)).  :func:`fallback_iterations`
returns the smallest k that makes the right side at most ``tolerance/2``; the other half
of the tolerance is the floating-point margin (below).  This is the bound of Nesterov
2018, Thm. 2.2.3 for the constant-momentum method, in distance form; d'Aspremont,
Scieur and Taylor 2021 (Acceleration Methods, Thm. 4.10) state the same rate.

The radius R (:func:`public_radius`)
------------------------------------
The start z is 0 when 0 ∈ C (no set, a centrally symmetric one, or a set whose exact
projection maps 0 to itself: a box around 0, the orthant), else the set's public centre.
For a bounded set, ``R = diam₂(C)``.  When z = 0 and h(0) = min h
(true for ‖·‖₁, Ω∞ and ι_C with 0 ∈ C), strong monotonicity of ∇f and
⟨u, θ*⟩ ≥ h(θ*) − h(0) ≥ 0 for u = −∇f(θ*) ∈ ∂h(θ*) give
``μ‖θ*‖² ≤ ⟨∇f(θ*) − ∇f(0), θ*⟩ ≤ ‖∇f(0)‖·‖θ*‖``, so ``‖θ*‖ ≤ ‖∇f(0)‖/μ`` with

    ‖∇f(0)‖ = ‖∇L̂(0) + b − ζθ₀‖ ≤ G₀ + ‖b‖ + ζ‖θ₀‖,   G₀ ≥ ‖(1/n) Σ φ'(0, y_i) x_i‖ ≤ sup_y |φ'(0, y)| · X₂,

X₂ the declared ℓ2 row bound.  Per loss (declared bounds only): squared
``|φ'(0, y)| = 2|y| ≤ 2·y_bound``; logistic ``|−y·σ(0)| = 1/2``; Huber
``min(h, y_bound)``; smoothed hinge ``min(1, 1/h)``; any other loss its declared
``dphi_bound(0)``.  R is the smaller of the two bounds that apply; so an unbounded set
such as the orthant (:class:`~dpopt.modeling.boxes.NonNegative`, diameter ∞) gets its
radius from strong convexity alone.  With neither (an unbounded set and no bound on
φ'(0, ·), or an unbounded set without 0) there is no public radius and the fallback is
refused (:class:`~dpopt.errors.MechanismError`).

Which non-smooth parts are supported
------------------------------------
The proximal step must be exact, or the a-priori analysis does not apply: ℝ^p or a set
that declares ``exact_projection`` (L1Ball, L2Ball, LinfBall, Box, NonNegative, Simplex,
GroupL1Ball, NuclearNormBall: closed forms, the last one given an SVD), an
ℓ1 term only with ℝ^p or a set that declares ``l1_prox`` (:func:`~dpopt.numerics.prox.composite_prox`),
and Ω∞ (Kumar–Deisenroth 2019, Eq. (5)) only on ℝ^p without an ℓ1 term and when
|P|(F) is a *product* of scaled ℓ1 balls on disjoint coordinate blocks (cardinality,
indicator, coverage with disjoint groups): by Moreau, ``prox_{t·lam·Ω∞}(v) = v −
Proj_{t·lam·|P|(F)}(v)`` and the projection onto a product is the product of exact
ℓ1-ball projections.  Other F (overlapping groups, chains, general submodular F) would
need an iterative projection whose error the a-priori bound does not absorb; they, the
sets with iterative projections (VertexPolytope, HPolytope, SubmodularNormBall) and
losses without a Hessian bound have no fallback (:func:`fallback_supported` is False),
and the convex mechanisms refuse such problems before the charge.

Floating point
--------------
The bound above is for exact arithmetic.  Half of the tolerance is reserved for
rounding: accelerated gradient methods do not accumulate errors beyond a factor of
order √κ of the per-step error (Devolder–Glineur–Nesterov 2014; Schmidt–Le Roux–Bach
2011, Prop. 4), and a step's relative error is a few ulps times √n for the data sums.
This margin is a model, not a proof; :class:`FallbackSolve` therefore also carries the
a-posteriori certificate at the point (diagnostics only: it must not steer the run).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from dpopt.errors import MechanismError
from dpopt.modeling.losses import Loss
from dpopt.modeling.submodular_norms import SubmodularNorm, product_l1_blocks, prox_omega
from dpopt.numerics.certificates import certify
from dpopt.numerics.prox import Certificate, composite_prox, prox_supported

if TYPE_CHECKING:
    from dpopt.modeling.constraint_set import ConstraintSet
    from dpopt.modeling.problem import Problem

__all__ = [
    "DEFAULT_MAX_ITERATIONS",
    "FallbackPlan",
    "FallbackSolve",
    "fallback_iterations",
    "fallback_supported",
    "origin_in",
    "plan_fallback",
    "public_radius",
    "solve_with_proof",
    "unsupported_reason",
]

#: default refusal threshold on K (public; K grows like √κ·log(R/tolerance))
DEFAULT_MAX_ITERATIONS = 200_000
#: share of the tolerance the exact-arithmetic bound may use (the rest is for rounding)
_EXACT_SHARE = 0.5


@dataclass(frozen=True)
class FallbackPlan:
    """What the fallback will do, fixed from public quantities (and the noise norm).

    Attributes
    ----------
    start : ndarray
        The public start z (0, or the constraint set's centre).
    radius : float
        R ≥ ‖z − θ*‖₂.
    strong_convexity, smoothness : float
        μ and β of the smooth part.
    iterations : int
        K: one proximal-gradient step plus the V-FISTA steps.
    distance_bound : float
        The a-priori bound √((κ − 1)(1 − 1/√κ)^(K−1))·R on ‖x_K − θ*‖₂ (exact arithmetic).
    tolerance : float
        The tolerance the plan was made for (distance_bound ≤ tolerance/2).
    """

    start: np.ndarray
    radius: float
    strong_convexity: float
    smoothness: float
    iterations: int
    distance_bound: float
    tolerance: float


@dataclass(frozen=True)
class FallbackSolve:
    """The fallback's answer.

    Attributes
    ----------
    point : ndarray
        A feasible point (the output of an exact proximal step).
    iterations : int
        The number of proximal steps taken (= the planned K; never data-dependent).
    distance_bound : float
        The a-priori bound on ‖point − θ*‖₂ (at most tolerance/2; the rest of the
        tolerance is the rounding margin).
    certificate : Certificate
        :func:`~dpopt.numerics.certificates.certify` at ``point``: an a-posteriori check computed
        from the data, for diagnostics only (**not private**; never use it to decide).
    """

    point: np.ndarray
    iterations: int
    distance_bound: float
    certificate: Certificate


# ---------------------------------------------------------------------------
# Structure: what the fallback supports (public facts only)
# ---------------------------------------------------------------------------


def _norm_terms(problem: Problem) -> list[SubmodularNorm]:
    return [r for r in problem.regularizers if isinstance(r, SubmodularNorm)]


def unsupported_reason(problem: Problem) -> str | None:
    """Why the fallback cannot handle ``problem`` (its structure only), or None.

    Reads the loss's declared constants, the regularizers and the constraint set's type,
    never the data or the noise.
    """
    mu, beta = problem.strong_convexity, problem.smoothness
    if not (mu > 0 and math.isfinite(mu)):
        return "the objective is not strongly convex (add an L2Squared term)"
    if not math.isfinite(beta):
        return f"the {problem.loss.name} loss declares no Hessian bound (use a smooth loss)"
    c = problem.constraint
    if c is not None and not c.exact_projection:  # the set's declaration
        return f"{type(c).__name__} has no exact closed-form projection (it is computed iteratively)"
    if problem.l1_weight > 0 and not prox_supported(c, problem.l1_weight):
        return f"an L1Norm term has no exact proximal map over {type(c).__name__}"
    norms = _norm_terms(problem)
    if norms:
        if c is not None or problem.l1_weight > 0:
            return "a SubmodularNorm term has an exact proximal map only on ℝ^p without an L1Norm term"
        if product_l1_blocks(norms[0].F) is None:
            return (f"the proximal map of Ω∞ for {norms[0].F.describe()} needs an iterative projection "
                    "onto |P|(F) (its blocks overlap or are not ℓ1 balls)")
    if c is not None and not c.bounded and not origin_in(c):
        return f"{type(c).__name__} is unbounded and does not contain 0, so there is no public start and radius"
    if (c is None or not c.bounded) and not math.isfinite(_gradient_at_zero_bound(problem.loss)):
        return f"the {problem.loss.name} loss declares no bound on its gradient at θ = 0 and the set is unbounded"
    return None


def fallback_supported(problem: Problem) -> bool:
    """Whether :func:`solve_with_proof` handles this problem (decided from its structure only)."""
    return unsupported_reason(problem) is None


def _require_supported(problem: Problem) -> None:
    reason = unsupported_reason(problem)
    if reason is not None:
        raise MechanismError(
            f"no a-priori fallback solver for {problem.summary()}: {reason} (see dpopt.numerics.apg)"
        )


# ---------------------------------------------------------------------------
# Public constants: start, radius, iteration count
# ---------------------------------------------------------------------------


def _gradient_at_zero_bound(loss: Loss) -> float:
    """G₀ ≥ ‖∇L̂(0)‖₂ = ‖(1/n) Σ φ'(0, y_i) x_i‖₂ from the declared bounds
    (:meth:`~dpopt.modeling.losses.Loss.dphi_at_zero_bound`)."""
    return loss.dphi_at_zero_bound() * loss.data.x_bound_in(2)


def origin_in(c: ConstraintSet | None) -> bool:
    """Whether 0 ∈ C, from the set alone: no set, a centrally symmetric one, or an exact
    projection that maps 0 to itself (exact, so ι_C(0) = 0 = min ι_C holds exactly)."""
    if c is None or c.is_symmetric:
        return True
    return bool(c.exact_projection and not np.any(c.project(np.zeros(c.dim))))


def _start(problem: Problem) -> np.ndarray:
    c = problem.constraint
    if origin_in(c):
        return np.zeros(problem.dim)
    assert c is not None
    return np.asarray(c.center(), dtype=np.float64)


def public_radius(problem: Problem) -> float:
    """A bound R ≥ ‖z − θ*‖₂ from public facts and the noise (z: the fallback's start).

    ``diam₂(C)`` for a bounded constraint set; when z = 0 also ``(G₀ + ‖b‖ + ζ‖θ₀‖)/μ``
    (module docstring: G₀ per loss from the declared bounds, b the linear noise,
    ζ, θ₀ the quadratic perturbation), whichever is smaller.

    Raises
    ------
    MechanismError
        When neither bound exists (an unbounded domain and a loss without a declared
        bound on its gradient at 0) or the objective is not strongly convex.
    """
    mu = problem.strong_convexity
    c = problem.constraint
    bounds = [] if c is None or not c.bounded else [float(c.diameter(2))]
    if origin_in(c):
        g0 = _gradient_at_zero_bound(problem.loss)
        p = problem.perturbation
        if p is not None:
            assert p.b is not None and p.theta0 is not None
            g0 += float(np.linalg.norm(p.b)) + p.zeta * float(np.linalg.norm(p.theta0))
        if mu > 0:
            bounds.append(g0 / mu)
    radius = min(bounds, default=math.inf)
    if not math.isfinite(radius):
        raise MechanismError(
            f"no public bound on the distance to the optimum for {problem.summary()}: declare the data "
            "bounds the loss needs (y_bound), add an L2Squared term, or add a bounded constraint set"
        )
    return radius


def _kappa(mu: float, beta: float) -> float:
    return max(beta, mu) / mu


def _a_priori_distance(kappa: float, steps: int, radius: float) -> float:
    """√((κ − 1)(1 − 1/√κ)^steps)·R: the V-FISTA distance bound after ``steps`` momentum steps."""
    if kappa <= 1.0 or radius == 0.0:
        return 0.0
    if steps == 0:  # F(x⁰) − F* + (β/2)‖x⁰ − θ*‖² ≤ ((β − μ)/2)R²
        return math.sqrt(1.0 - 1.0 / kappa) * radius
    log_rate = math.log1p(-1.0 / math.sqrt(kappa))
    return math.exp(0.5 * (math.log(kappa - 1.0) + steps * log_rate)) * radius


def fallback_iterations(problem: Problem, tolerance: float, radius: float) -> int:
    """K such that K proximal steps provably give ‖x_K − θ*‖₂ ≤ tolerance/2 (exact arithmetic).

    One proximal-gradient step x⁰ = T(z) and then the smallest k with
    ``√((κ − 1)(1 − 1/√κ)^k)·R ≤ tolerance/2`` (Beck 2017, Thm. 10.42 with the
    distance form derived in the module docstring), plus one step of slack for the
    rounding of the logarithms.  A deterministic function of μ, β (from
    ``problem``'s declared constants), ``tolerance`` and ``radius``; reads no data.

    Parameters
    ----------
    problem : Problem
        Supplies μ = ``strong_convexity`` and β = ``smoothness`` (public constants).
    tolerance : float
        The distance ‖x_K − θ*‖₂ to prove; half of it is reserved for rounding.
    radius : float
        R ≥ ‖z − θ*‖₂ (:func:`public_radius`).
    """
    if not (isinstance(tolerance, (int, float)) and math.isfinite(tolerance) and tolerance > 0):
        raise MechanismError(f"tolerance must be a positive finite number, got {tolerance!r}")
    if not (math.isfinite(radius) and radius >= 0):
        raise MechanismError("radius must be a finite non-negative bound (see public_radius)")
    mu, beta = problem.strong_convexity, problem.smoothness
    if not (mu > 0 and math.isfinite(beta)):
        raise MechanismError("the fallback needs a strongly convex objective with a declared Hessian bound")
    kappa = _kappa(mu, beta)
    target = _EXACT_SHARE * tolerance
    if _a_priori_distance(kappa, 0, radius) <= target:
        return 1
    # (κ − 1)(1 − 1/√κ)^k R² ≤ target²  ⇔  k ≥ log((κ − 1) R² / target²) / (−log(1 − 1/√κ))
    need = math.log(kappa - 1.0) + 2.0 * (math.log(radius) - math.log(target))
    k = max(0, math.ceil(need / -math.log1p(-1.0 / math.sqrt(kappa)))) + 1
    while _a_priori_distance(kappa, k, radius) > target:  # guard the float evaluation of the ceil
        k += 1
    return 1 + k


def _check_budget(iterations: int, max_iterations: int | None, problem: Problem) -> None:
    if max_iterations is not None and iterations > max_iterations:
        raise MechanismError(
            f"the a-priori fallback for {problem.summary()} needs more than max_iterations={max_iterations} "
            "steps at this tolerance (its count depends only on the declared constants, the set and the noise "
            "scale): raise the tolerance, the strong convexity (L2Squared) or max_iterations"
        )


def plan_fallback(template: Problem, tolerance: float, *, noise_bound: float = 0.0,
                  max_iterations: int | None = DEFAULT_MAX_ITERATIONS) -> FallbackPlan:
    """Plan the fallback before any noise is drawn: refuse early, from public facts only.

    The radius is computed for a linear noise term of norm ``noise_bound`` (the template's
    own b is ignored); a mechanism passes a public high quantile of its noise law's norm so
    that the refusal happens here, before the budget is charged, and not after the draw.

    Parameters
    ----------
    template : Problem
        The problem with the mechanism's perturbation template (ζ, θ₀; b is ignored).
    tolerance : float
        The distance to prove.
    noise_bound : float
        A public bound on ‖b‖₂ the plan should cover.
    max_iterations : int or None
        Refuse when K exceeds it (None: never refuse).

    Raises
    ------
    MechanismError
        If the problem has no fallback (:func:`unsupported_reason`), no public radius,
        or K > ``max_iterations``.
    """
    _require_supported(template)
    if not (math.isfinite(noise_bound) and noise_bound >= 0):
        raise MechanismError("noise_bound must be a finite non-negative number")
    from dpopt.modeling.perturbation import Perturbation

    p = template.perturbation
    b = np.zeros(template.dim)
    b[0] = noise_bound  # only ‖b‖ enters the radius
    zeta = 0.0 if p is None else p.zeta
    theta0 = None if p is None else p.theta0
    probe = template.with_perturbation(Perturbation(template.dim, b=b, zeta=zeta, theta0=theta0))
    return _plan(probe, tolerance, max_iterations)


def _plan(problem: Problem, tolerance: float, max_iterations: int | None) -> FallbackPlan:
    radius = public_radius(problem)
    k = fallback_iterations(problem, tolerance, radius)
    _check_budget(k, max_iterations, problem)
    mu, beta = problem.strong_convexity, max(problem.smoothness, problem.strong_convexity)
    bound = _a_priori_distance(_kappa(mu, beta), k - 1, radius)
    return FallbackPlan(_start(problem), radius, mu, beta, k, bound, float(tolerance))


# ---------------------------------------------------------------------------
# The proximal step and V-FISTA
# ---------------------------------------------------------------------------


def _prox_operator(problem: Problem, beta: float) -> Callable[[np.ndarray], np.ndarray]:
    """T(y) = prox_{h/β}(y − ∇f(y)/β) for the problem's (supported) non-smooth part."""
    norms = _norm_terms(problem)
    c, l1 = problem.constraint, problem.l1_weight
    if norms:
        blocks = product_l1_blocks(norms[0].F)
        assert blocks is not None
        lam = norms[0].lam / beta

        def step_norm(y: np.ndarray) -> np.ndarray:
            return prox_omega(blocks, lam, y - problem.smooth_gradient(y) / beta)

        return step_norm

    def step(y: np.ndarray) -> np.ndarray:
        v = y - problem.smooth_gradient(y) / beta
        if c is None and l1 == 0.0:
            return v
        return composite_prox(c, l1, v, 1.0 / beta)

    return step


def _v_fista(problem: Problem, plan: FallbackPlan) -> np.ndarray:
    """x⁰ = T(z), then K − 1 V-FISTA steps with momentum (√κ − 1)/(√κ + 1) (Beck 2017, Sec. 10.7.7)."""
    beta = plan.smoothness
    step = _prox_operator(problem, beta)
    root = math.sqrt(_kappa(plan.strong_convexity, beta))
    q = (root - 1.0) / (root + 1.0)
    x = step(plan.start.copy())
    y = x
    for _ in range(plan.iterations - 1):
        x_new = step(y)
        y = x_new + q * (x_new - x)
        x = x_new
    return x


def solve_with_proof(problem: Problem, tolerance: float, *,
                     max_iterations: int | None = DEFAULT_MAX_ITERATIONS) -> FallbackSolve:
    """Minimize the perturbed ``problem`` to a proven distance ``tolerance`` of θ*, a priori.

    K (:func:`fallback_iterations`) is computed from μ, β, the public radius and the noise
    before any data-dependent quantity is evaluated; exactly K proximal steps are then
    taken.  The returned point is feasible and ‖point − θ*‖₂ ≤ ``distance_bound`` ≤
    tolerance/2 in exact arithmetic (module docstring; the other half is the rounding margin).

    Parameters
    ----------
    problem : Problem
        The perturbed problem (its perturbation's b is the drawn noise).
    tolerance : float
        The distance to prove.
    max_iterations : int or None
        Refuse when K exceeds it (None: never).  The refusal reads public constants and
        the noise only, never the data; a mechanism that must not refuse after its charge
        calls :func:`plan_fallback` first with a public bound on the noise norm.

    Raises
    ------
    MechanismError
        If the problem has no fallback (:func:`unsupported_reason`) or K > ``max_iterations``.
    """
    _require_supported(problem)
    plan = _plan(problem, tolerance, max_iterations)
    point = _v_fista(problem, plan)
    return FallbackSolve(point, plan.iterations, plan.distance_bound, certify(problem, point))
