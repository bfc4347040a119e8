"""A duality-gap certificate for strongly convex problems regularized by Ω∞.

For ``P(θ) = f(θ) + lam·Ω∞(θ)`` over C (C = ℝ^p or a set with an exact
projection), with f smooth and μ-strongly convex (loss + (Λ/2)‖θ‖² +
perturbation), every ``s ∈ lam·|P|(F)`` gives a lower model, since
``lam·Ω∞(θ') = max_{s∈lam|P|(F)} ⟨s, θ'⟩`` (Eq. (5)):

    P(θ') ≥ f(x) + ⟨∇f(x), θ' − x⟩ + (μ/2)‖θ' − x‖² + ⟨s, θ'⟩ =: m_s(θ'),

a quadratic minimised over C at ``Proj_C(x − (∇f(x) + s)/μ)``.  Hence
``P* ≥ min_C m_s`` and, for feasible x, ``(μ/2)‖x − θ*‖² ≤ P(x) − P* ≤ gap(s)``:

    ‖x − θ*‖₂ ≤ √(2·gap(s)/μ).

Any feasible s is valid; dpopt starts from ``s = −∇f(x)`` scaled into
``lam·|P|(F)`` by the dual norm (exact at the optimum of an unconstrained
problem, Eq. (13)) and lowers the gap by Frank–Wolfe steps over lam·|P|(F)
with exact line search (the gap is a convex quadratic in s; the LMO is the
greedy algorithm), so every s is a convex combination of feasible points.
The point x itself is released; the certificate never trusts the solver.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from dpopt.modeling.submodular import dual_norm, omega, polyhedron_lmo
from dpopt.modeling.submodular_norms import SubmodularNorm
from dpopt.numerics.prox import Certificate, certify_composite

if TYPE_CHECKING:
    from dpopt.modeling.problem import Problem

__all__ = ["certify_norm_regularized", "has_submodular_norm"]

#: Frank–Wolfe steps spent lowering the gap over the dual point s
_FW_STEPS = 300


def has_submodular_norm(problem: Problem) -> bool:
    """Whether the problem carries a :class:`SubmodularNorm` regularizer."""
    return any(isinstance(r, SubmodularNorm) for r in problem.regularizers)


def _gap(x: np.ndarray, g: np.ndarray, s: np.ndarray, mu: float, reg: float, project: object) -> float:
    """An upper bound on ``P(x) − min_C m_s`` (without the common f(x)).

    ``project`` returns (t, err) with ‖t − t*‖ ≤ err for the exact minimizer t* of the
    quadratic m_s over C; then min m_s ≥ m_s(t) − ‖∇m_s(t)‖·err (convexity).
    """
    z = x - (g + s) / mu
    t, err = (z, 0.0) if project is None else project(z)  # type: ignore[operator]
    d = t - x
    model = float(g @ d) + 0.5 * mu * float(d @ d) + float(s @ t)
    if err > 0:
        model -= float(np.linalg.norm(g + s + mu * d)) * err
    return reg - model


def _best_dual_point(reg_term: SubmodularNorm, x: np.ndarray, g: np.ndarray, mu: float) -> np.ndarray:
    """A point of ``lam·|P|(F)`` with a small unconstrained gap (scaled −∇f, then FW steps)."""
    lam, F = reg_term.lam, reg_term.F
    u = -g / lam
    c = max(1.0, dual_norm(F, u) * (1.0 + 1e-9))
    s = lam * u / c
    for _ in range(_FW_STEPS):
        d = (g + s) / mu - x  # gradient of the gap in s
        v = lam * polyhedron_lmo(F, d)
        step = v - s
        curv = float(step @ step) / mu
        slope = float(d @ step)
        if curv <= 0.0 or slope >= -1e-18 * max(1.0, float(np.abs(x).sum())):
            break
        s = s + min(1.0, -slope / curv) * step
    return s


def certify_norm_regularized(problem: Problem, x: np.ndarray) -> Certificate:
    """dpopt's certificate for a μ-strongly convex problem with a SubmodularNorm term.

    Returns the feasible point and ``√(2·gap/μ)`` (``inf`` when the problem is not
    strongly convex and smooth, when it also has an L1Norm term, when the point is
    not finite, or when the constraint set has no exact projection).
    """
    from dpopt.modeling.regularizers import L1Norm

    mu = problem.strong_convexity
    beta = max(problem.smoothness, mu)
    x = np.asarray(x, dtype=np.float64)
    norms = [r for r in problem.regularizers if isinstance(r, SubmodularNorm)]
    bad = (
        not (mu > 0 and math.isfinite(beta)) or x.shape != (problem.dim,) or not np.all(np.isfinite(x))
        or len(norms) != 1 or any(isinstance(r, L1Norm) for r in problem.regularizers)
    )
    if bad:
        fallback = x if x.shape == (problem.dim,) else np.full(problem.dim, np.nan)
        return Certificate(fallback, math.inf, math.inf, mu, beta)
    term = norms[0]
    c = problem.constraint
    project = None if c is None else c.project_with_error
    if c is not None:
        x, err0 = c.project_with_error(x)  # the bound below needs a feasible x
        if not math.isfinite(err0):  # no certified projection: x may lie outside C
            return Certificate(x, math.inf, math.inf, mu, beta)
    g = problem.smooth_gradient(x)
    s = _best_dual_point(term, x, g, mu)
    reg = term.lam * omega(term.F, x)
    gap = _gap(x, g, s, mu, reg, project)
    eps = np.finfo(np.float64).eps
    scale = abs(reg) + float(np.abs(s) @ np.abs(x)) + float(np.abs(g) @ np.abs(x)) + float((g + s) @ (g + s)) / mu
    gap = max(gap, 0.0) + 64.0 * eps * (scale + 1.0)
    return Certificate(x, math.sqrt(2.0 * gap / mu), float(np.linalg.norm(g + s)), mu, beta)


def certify(problem: Problem, x: np.ndarray) -> Certificate:
    """Certify a solver's point for a strongly convex (perturbed) problem.

    Returns the feasible point x⁺ and a proven bound on its distance to the exact
    minimizer; the bound is ``inf`` when the objective is not strongly convex or
    not smooth, or when the point is not finite.  With a submodular-norm term (Ω∞) the
    bound comes from a duality gap (:func:`certify_norm_regularized`), otherwise from the
    gradient mapping (:func:`dpopt.numerics.prox.certify_composite`).
    """
    if has_submodular_norm(problem):
        return certify_norm_regularized(problem, x)
    return certify_composite(problem, x)
