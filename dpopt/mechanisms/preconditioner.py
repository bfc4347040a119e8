"""A private preconditioner for DP-GD: a noisy Gram matrix and Böhning's quadratic bound.

Every dpopt loss is a generalized linear loss φ(Θᵀx, y), so the Hessian of the average loss
is (1/n) Σ_i ∇²φ_i ⊗ x_i x_iᵀ with ‖∇²φ_i‖ ≤ c, c the loss's declared ``d2phi_bound`` (1/4
for the logistic loss, 1/2 for the multinomial one).  Hence

    ∇²f(Θ) ⪯ P ⊗ I_k,   P = (c/n)·XᵀX + λI

everywhere ([BL88] for the logistic loss; [Böh92] for the multinomial one, whose bound
½(I − 11ᵀ/k) ⊗ XᵀX is below ½ I ⊗ XᵀX), with λ the weight of an
``L2Squared`` term.  Gradient steps in the metric of P, Θ ← Θ − P⁻¹∇f(Θ), minimize that
quadratic upper bound at every step, so their progress does not depend on how badly XᵀX is
conditioned — plain gradient descent with the step 1/β, β = c·B² + λ the worst-case
smoothness, needs about κ(XᵀX) times more steps on one-hot data.  This is the idea of the
private second-order methods of [GHST23], in its cheapest form: one private Hessian bound,
released once, instead of a noisy Hessian per step.

Privacy.  XᵀX is released once as its upper triangle (k = d(d+1)/2 values) with exact discrete
Gaussian noise on a public grid, at ρ_P = ``share``·ρ of the run's zCDP budget ρ; its
replace-one ℓ2 sensitivity is √2·B² (:func:`~dpopt.mechanisms.adassp.gram_sensitivity`,
derived in :mod:`dpopt.mechanisms.adassp`).  The noisy steps that follow get the rest,
(1 − share)·ρ, and zCDP composes adaptively ([CKS20]), so the run is ρ-zCDP.  Everything
computed from the noisy Gram Ĝ is post-processing:

    P = (c/n)·(Ĝ₊ + τI) + λI,   τ = ``ridge`` · 2σ_P√d,

where Ĝ₊ is Ĝ with its negative eigenvalues set to 0 and 2σ_P√d is about the operator norm
of the symmetric noise matrix (the largest eigenvalue of a d×d symmetric matrix of N(0, σ²)
entries is ≈ 2σ√d), so that P is positive definite and, with high probability, not below
the true bound in any direction the noise could have hidden.  P depends on the data only
through Ĝ, and no value of Ĝ can make the map fail: ``numpy.linalg.eigh`` of a finite
symmetric matrix always returns, and every eigenvalue of P is at least cτ/n > 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpopt._threads import blas_threads
from dpopt.mechanisms.adassp import gram_sensitivity
from dpopt.modeling.problem import Problem
from dpopt.numerics.clipping import ClippedGradient
from dpopt.privacy.accountant import GridSteps, zcdp_gaussian_steps

__all__ = ["Preconditioner", "PreconditionerPlan", "plan_preconditioner", "preconditioner_reason"]


@dataclass(frozen=True)
class PreconditionerPlan:
    """The public settings of the noisy Gram release and of the map to P (module docstring)."""

    gram: GridSteps  # one release of the upper triangle of XᵀX: its grid and exact noise
    ridge: float  # τ, in the units of XᵀX
    curvature: float  # c, the loss's declared sup ‖∇²φ‖
    l2_weight: float  # λ of an L2Squared term
    n: int
    share: float  # ρ_P / ρ

    @property
    def rho(self) -> float:
        """ρ_P, the zCDP of the Gram release as drawn."""
        return self.gram.rho


def preconditioner_reason(problem: Problem) -> str | None:
    """Why the preconditioner does not apply to ``problem`` (None when it does); declarations only.

    It needs the loss's declared curvature bound c and an exact projection in the Euclidean
    metric after the step (no ℓ1 term, whose proximal map in the metric of P has no closed form).
    """
    c = problem.loss.d2phi_bound()
    if c is None or not (math.isfinite(c) and c > 0):
        return f"the {problem.loss.name} loss declares no bound on its curvature (d2phi_bound)"
    if problem.l1_weight:
        return "an L1Norm term has no closed-form proximal map in the preconditioner's metric"
    return None


def plan_preconditioner(problem: Problem, rho: float, share: float, ridge: float) -> PreconditionerPlan:
    """Calibrate the Gram release at ρ_P = share·ρ and the ridge τ (public numbers only).

    Parameters
    ----------
    problem : Problem
        Supplies n, d, the declared row bound B, c and λ.
    rho : float
        The run's zCDP budget ρ.
    share : float
        The Gram release's share of ρ, in (0, 1).
    ridge : float
        τ in units of 2σ_P√d (module docstring).

    Returns
    -------
    PreconditionerPlan
    """
    data = problem.loss.data
    d = data.n_features
    gram = zcdp_gaussian_steps(gram_sensitivity(float(data.x_bound_in(2)), d), d * (d + 1) // 2, 1, share * rho)
    curvature = float(problem.loss.d2phi_bound())  # type: ignore[arg-type]  # checked by preconditioner_reason
    return PreconditionerPlan(gram, ridge * 2.0 * gram.sigma * math.sqrt(d), curvature, problem.l2_weight,
                              problem.n, share)


class Preconditioner:
    """P⁻¹ of one run, built from the released noisy Gram matrix (post-processing only).

    Parameters
    ----------
    plan : PreconditionerPlan
        The public settings.
    noisy_upper : numpy.ndarray
        The released upper triangle of XᵀX (row-major, diagonal included), on its grid.
    outputs : int
        k, the number of outputs of the loss (Θ is d×k, flattened row-major).
    """

    def __init__(self, plan: PreconditionerPlan, noisy_upper: np.ndarray, outputs: int = 1) -> None:
        d = int(round((math.sqrt(8 * noisy_upper.size + 1) - 1) / 2))
        gram = np.zeros((d, d))
        gram[np.triu_indices(d)] = noisy_upper
        with blas_threads(1):  # a d×d matrix: BLAS threads only slow it down on shared cores
            values, self._vectors = np.linalg.eigh(gram, UPLO="U")
        scale = plan.curvature / plan.n
        self.eigenvalues = scale * (np.maximum(values, 0.0) + plan.ridge) + plan.l2_weight
        self.outputs = int(outputs)

    @classmethod
    def release(cls, plan: PreconditionerPlan, data: ClippedGradient, rng: np.random.Generator) -> Preconditioner:
        """Release XᵀX's upper triangle on its grid with the plan's exact noise and build P⁻¹ (reads the data)."""
        gram = data.gram()
        upper = gram[np.triu_indices(gram.shape[0])]
        noisy = plan.gram.release(upper, next(plan.gram.draws(rng, upper.size)))
        return cls(plan, noisy, data.loss.n_outputs)

    def solve(self, g: np.ndarray) -> np.ndarray:
        """P⁻¹g for a flattened d×k gradient g (each of the k columns solved with the same P)."""
        V = self._vectors
        G = g.reshape(V.shape[0], self.outputs)
        return (V @ ((V.T @ G) / self.eigenvalues[:, None])).reshape(-1)
