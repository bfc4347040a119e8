"""Output perturbation for strongly convex ERM (Chaudhuri–Monteleoni–Sarwate 2011, Alg. 1).

For F(θ) = (1/n) Σ ℓ(θ; d_i) + r(θ) with ℓ convex and L-Lipschitz (ℓ2) on C and
r Λ-strongly convex, the minimizer over a convex C moves by at most 2L/(nΛ)
when one row is replaced (CMS11 Cor. 8; the argument holds over any convex C
through first-order optimality).  dpopt's certificate proves the released
pre-noise point is within ``tolerance`` of the exact minimizer, so the
sensitivity of the certified point is Δ = 2L/(nΛ) + 2·tolerance.

The release is exact on a public grid: the certified point is rounded onto γℤ^d, with
γ = 2^⌊log2(Δ/(2^8·√d))⌋ a power of two read from Δ and d only
(:func:`dpopt.privacy.grid.grid_step`; ``parameters["grid_step"]``), and exact integer
noise is added in grid units ([CKS20], Algs. 1–3).  Rounded neighbours differ by at most
Δ/γ + √d grid steps (ℓ2).  Noise: for pure ε-DP the discrete Laplace law per coordinate
calibrated to the ℓ1 sensitivity √d·Δ (ε = Δ₁/t, exact for integer shifts; it replaces
CMS11's ℓ2-Laplace density, which has no exact lattice sampler, at a cost of about √2 in
E‖noise‖ for d ≥ 2); for δ > 0 the discrete Gaussian (the exact [CKS20] Thm. 7 profile in
one dimension, its zCDP ρ = Δ'²/(2σ²) with the [CKS20] conversion in d), when its expected
norm is smaller (:meth:`~dpopt.privacy.noise_spec.NoiseSpec.for_sensitivity`).  Every released
coordinate is an integer multiple of γ, and which multiples are reachable does not depend
on the data.  Everything after the discrete noisy value is post-processing, including the
projection back onto C: by default (``project="auto"``, the same as ``True``) the grid values
are projected onto C (:meth:`~dpopt.modeling.constraint_set.ConstraintSet.project_to_grid`:
clipped to the grid points inside a box, the orthant or bounds; a Euclidean projection, off
the grid where it moves them, onto the others), so the released θ lies in the user's own set.
A set without a closed-form projection is solved over its closed-form superset
(:meth:`~dpopt.modeling.constraint_set.ConstraintSet.relaxation`), whose constants the
sensitivity then uses.  ``project=False`` releases the grid values as they are.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, Literal

from dpopt.errors import MechanismError
from dpopt.mechanisms.base import OnUncertified
from dpopt.mechanisms.constrained import unbounded_lipschitz
from dpopt.mechanisms.convex import ConvexMechanism, ConvexPlan, template_problem
from dpopt.mechanisms.params import Options
from dpopt.modeling.problem import Problem
from dpopt.privacy.ledger import Ledger
from dpopt.privacy.noise_spec import NoiseChoice, NoiseSpec

#: the ``project`` setting: "auto" (= True) projects onto the set, False never
Project = bool | Literal["auto"]


class OutputPerturbation(ConvexMechanism):
    """Output perturbation (CMS11 Alg. 1) with exact discrete Gaussian or discrete Laplace noise on a public grid.

    Parameters
    ----------
    epsilon, delta : float
        Target guarantee (δ = 0: discrete Laplace noise, pure ε-DP).
    project : {"auto", True, False}
        Project the noisy parameters onto the constraint set (post-processing of the grid
        values): ``"auto"`` (default) and ``True`` onto any set, ``False`` never (the grid values as
        they are, which may lie outside the set).
    ledger, tolerance, on_uncertified, noise :
        As in :class:`~dpopt.mechanisms.convex.ConvexMechanism`.

    Notes
    -----
    ``parameters`` hold the public grid step (``grid_step``), the law (``noise``) and its scale
    (``noise_scale``: σ, or the discrete Laplace's b per coordinate), all in θ's units, and
    ``projected``: whether θ was projected onto the set (read from the set's declaration).
    """

    name = "OutputPerturbation"
    theorem = "CMS11 Alg. 1, sensitivity 2L/(nΛ)"
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **ConvexMechanism._parameter_constraints,
        "project": [Options(("auto", True, False))],
    }

    def __init__(self, epsilon: float, delta: float = 0.0, *, project: Project = "auto",
                 ledger: Ledger | None = None, tolerance: float = 1e-6, on_uncertified: OnUncertified = "raise",
                 noise: NoiseChoice = "auto") -> None:
        super().__init__(epsilon, delta, ledger=ledger, tolerance=tolerance, on_uncertified=on_uncertified,
                         noise=noise)
        self.project: Project = project

    def projects(self, problem: Problem) -> bool:
        """Whether the release is projected onto ``problem``'s set: always when there is one, unless
        ``project=False`` (public: no data is read)."""
        return problem.constraint is not None and self.project is not False

    def calibrate(self, problem: Problem) -> ConvexPlan:
        lam = problem.strong_convexity
        if not lam > 0:
            raise MechanismError(
                f"{self.name} needs a strongly convex objective; add an L2Squared regularizer "
                "(its weight is the strong convexity Λ in the sensitivity 2L/(nΛ))"
            )
        L = problem.loss_constants().lipschitz_l2
        if not math.isfinite(L):
            raise unbounded_lipschitz(problem, self.name)
        sensitivity = 2.0 * L / (problem.n * lam) + 2.0 * self.tolerance
        output = NoiseSpec.for_sensitivity(sensitivity, self.epsilon, self.delta, problem.dim, self.noise)
        project = self.projects(problem)
        params = {
            "noise": output.kind, "noise_scale": output.scale, "grid_step": output.grid_step,
            "sensitivity_l2": sensitivity,
            "lipschitz_l2": L, "strong_convexity": lam, "projected": project,
        }
        return ConvexPlan(template=template_problem(problem), linear_noise=NoiseSpec.none(), output_noise=output,
                          tolerance=self.tolerance, parameters=params, project_output=project)
