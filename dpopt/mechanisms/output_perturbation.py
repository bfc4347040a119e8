"""Output perturbation for strongly convex ERM (Chaudhuri–Monteleoni–Sarwate 2011, Alg. 1).

For F(θ) = (1/n) Σ ℓ(θ; d_i) + r(θ) with ℓ convex and L-Lipschitz (ℓ2) on C and
r Λ-strongly convex, the minimizer over a convex C moves by at most 2L/(nΛ)
when one row is replaced (CMS11 Cor. 8; the argument holds over any convex C
through first-order optimality).  dpopt's certificate proves the released
pre-noise point is within ``tolerance`` of the exact minimizer, so the
sensitivity of what is released is 2L/(nΛ) + 2·tolerance.  Noise: the
ℓ2-Laplace density ∝ exp(−ε‖v‖/Δ) of CMS11 (pure ε-DP), or for δ > 0 the
Gaussian calibrated by the analytic Gaussian mechanism (Balle–Wang 2018) when its
expected norm in d dimensions is smaller.  With
``project=True`` the noisy point is projected back onto C (post-processing).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

from dpopt.errors import MechanismError
from dpopt.mechanisms.base import (
    ConvexMechanism,
    ConvexPlan,
    NoiseChoice,
    NoiseSpec,
    OnUncertified,
    template_problem,
)
from dpopt.mechanisms.params import Boolean, arguments
from dpopt.modeling.problem import Problem
from dpopt.privacy.ledger import Ledger


class OutputPerturbation(ConvexMechanism):
    """Output perturbation (CMS11 Alg. 1) with Gaussian or ℓ2-Laplace noise.

    Parameters
    ----------
    epsilon, delta : float
        Target guarantee (δ = 0: ℓ2-Laplace noise, pure ε-DP).
    project : bool
        Project the noisy parameters onto the constraint set (post-processing).
    ledger, tolerance, on_uncertified, noise :
        As in :class:`~dpopt.mechanisms.base.ConvexMechanism`.
    """

    name = "OutputPerturbation"
    theorem = "CMS11 Alg. 1, sensitivity 2L/(nΛ)"
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **ConvexMechanism._parameter_constraints,
        "project": [Boolean()],
    }

    def __init__(self, epsilon: float, delta: float = 0.0, *, project: bool = False,
                 ledger: Ledger | None = None, tolerance: float = 1e-6, on_uncertified: OnUncertified = "raise",
                 noise: NoiseChoice = "auto") -> None:
        self._validate(arguments(locals()))
        super().__init__(epsilon, delta, ledger=ledger, tolerance=tolerance, on_uncertified=on_uncertified,
                         noise=noise)
        self.project = bool(project)

    def calibrate(self, problem: Problem) -> ConvexPlan:
        lam = problem.strong_convexity
        if not lam > 0:
            raise MechanismError(
                f"{self.name} needs a strongly convex objective; add an L2Squared regularizer "
                "(its weight is the strong convexity Λ in the sensitivity 2L/(nΛ))"
            )
        L = problem.loss_constants().lipschitz_l2
        if not math.isfinite(L):
            raise MechanismError(
                f"the {problem.loss.name} loss is not Lipschitz on an unbounded domain; "
                "add a bounded constraint set (e.g. L2Ball)"
            )
        sensitivity = 2.0 * L / (problem.n * lam) + 2.0 * self.tolerance
        output = NoiseSpec.for_sensitivity(sensitivity, self.epsilon, self.delta, problem.dim, self.noise)
        params = {
            "noise": output.kind, "noise_scale": output.scale, "sensitivity_l2": sensitivity,
            "lipschitz_l2": L, "strong_convexity": lam, "projected": self.project,
        }
        return ConvexPlan(template=template_problem(problem), linear_noise=NoiseSpec("none", 0.0), output_noise=output,
                          tolerance=self.tolerance, parameters=params, project_output=self.project)
