"""Output perturbation for Ω∞-regularized ERM (Kumar–Deisenroth 2019, Sec. 4.1, Thm. 1, Lemma 1).

The mechanism releases ``θ^priv = θ̂ + b`` (Eq. (17)) for

    θ̂ = argmin_θ (1/n) Σ ℓ(θ; d_i) + (Λ/2)‖θ‖² + lam·Ω∞(θ)        (lam = λ/n of Eq. (6))

Privacy (replace-one neighbours)
--------------------------------
The sensitivity of θ̂ comes from strong convexity only (CMS11 Cor. 8, whose
argument goes through subgradients, so the non-smooth Ω∞ is harmless): if the
objective is Λ-strongly convex and ‖∇ℓ‖₂ ≤ L on the points that can be
minimizers, ``‖θ̂(D) − θ̂(D')‖₂ ≤ 2L/(nΛ)``.  **Ω∞ alone is not strongly
convex** — it is a norm, flat along rays — so without a strongly convex term
the minimizer can jump between far-apart points of a flat optimal face when
one row changes, and no finite sensitivity exists (Thm. 1 inherits [11]'s
ℓ2² assumption without saying so).  The mechanism therefore requires an
:class:`~dpopt.L2Squared` term (elastic-net style) and calibrates
to its weight Λ; it refuses problems without one.

On ℝ^p (no constraint set) the minimizer lies in the public ball
``‖θ̂‖₂ ≤ R = √(2 φ₀/Λ)``, ``φ₀ = sup_y φ(0, y)`` (compare the objective at θ̂
and at 0; every loss here is ≥ 0 and Ω∞ ≥ 0), so L is the loss's ℓ2-Lipschitz
constant over that ball (the squared loss is Lipschitz there).  dpopt's own
duality-gap certificate (:mod:`dpopt.numerics.certificates`) proves the
released pre-noise point is within ``tolerance`` of θ̂, and the sensitivity
is ``2L/(nΛ) + 2·tolerance``.  That certificate converges like the square
root of the solver's accuracy, hence the default ``tolerance = 1e-4``.
The release is exact on a public grid, exactly as :class:`OutputPerturbation`: the
certified point is rounded onto γℤ^p, γ = 2^⌊log2(Δ/(2^8·√p))⌋ (public: Δ and p only,
``parameters["grid_step"]``), plus exact discrete Laplace noise per coordinate (pure ε-DP,
calibrated to the ℓ1 sensitivity √p·Δ) or, for δ > 0, the discrete Gaussian ([CKS20]) when
its expected norm is smaller.  Everything after the discrete noisy value is
post-processing (``project=True`` projects the grid values onto the constraint set).

Utility (Lemma 1, corrected)
----------------------------
For isotropic noise b (Gaussian or ℓ2-Laplace: ``b = ‖b‖u``, u uniform on
the sphere and independent of ‖b‖) and any centre θ̂ (the proof uses E b = 0, not
optimality; the release's centre is the grid point nearest θ̂, at most γ√p/2 away),

    E[P(θ̂ + b) − P(θ̂)] ≤ loss_term + lam · E‖b‖ · G_{|P|(F)} / E‖g‖ + (Λ/2) E‖b‖²,

with ``E Ω∞(b) = E‖b‖·E Ω∞(u) = E‖b‖ · G_{|P|(F)}/E‖g‖`` (Eq. (5) and
``G = E Ω∞(g)``), the triangle inequality ``Ω∞(θ̂ + b) − Ω∞(θ̂) ≤ Ω∞(b)``
(the paper's monotonicity/submodularity steps prove the same), and
``loss_term = (φ''_max/2) x₂² E‖b‖²/p`` for losses with bounded curvature (the
first-order term has mean zero), else ``L E|⟨b, x⟩|``.  Two corrections to
the paper's proof: (i) its last step writes ``E_b f(|b|) = G_{|P|(F)}`` for
``b ~ N(0, σ²I)``; the correct value is ``σ·G_{|P|(F)}``, so the regularizer
term is ``(λ/n)σG``, not ``(λ/n)G``; (ii) it substitutes ``θ^priv − θ* = b``
although ``θ^priv = θ̂ + b`` (θ̂ is the empirical, θ* the population
minimizer); the bound above is for the empirical excess risk
``P(θ^priv) − P(θ̂)``, which is what Lemma 1's proof actually controls.
The released noise is the discrete law on the grid: its moments E‖b‖ ≤ √(E‖b‖²) and
E‖b‖² (:meth:`~dpopt.privacy.noise_spec.NoiseSpec.second_moment`: ≤ pσ² for the discrete
Gaussian, exact for the discrete Laplace) enter the curvature and ridge terms, which need
only independent zero-mean coordinates.  The regularizer term's ``E Ω∞(b) = E‖b‖·G/E‖g‖``
and the Lipschitz branch's ``E|⟨b, x⟩|`` use isotropy, which the discrete laws (independent
coordinates) do not have: for them those terms are the values of an isotropic law with the
same E‖b‖, estimates rather than bounds.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, ClassVar

from dpopt.errors import MechanismError
from dpopt.mechanisms.base import OnUncertified, RunOptions
from dpopt.mechanisms.convex import ConvexPlan, template_problem
from dpopt.mechanisms.output_perturbation import OutputPerturbation, Project
from dpopt.mechanisms.params import Integral, Interval
from dpopt.modeling.losses import Loss
from dpopt.modeling.problem import Problem
from dpopt.modeling.regularizers import L1Norm
from dpopt.modeling.submodular_norms import SubmodularNorm
from dpopt.numerics.submodular_lp import polyhedron_gaussian_width
from dpopt.privacy.ledger import Ledger
from dpopt.privacy.noise_spec import NoiseChoice, NoiseSpec

__all__ = ["SubmodularOutputPerturbation", "lemma1_excess_risk", "loss_at_zero_bound", "theorem1_lambda"]


def loss_at_zero_bound(loss: Loss) -> float:
    """``φ₀ = sup_y φ(0, y)`` over the labels the loss declares (:meth:`Loss.value_at_zero_bound`).

    Read from the loss type and the declared ``y_bound``, never from the labels, so neighbouring
    datasets get the same radius and noise.
    """
    return loss.value_at_zero_bound()


def _expected_gaussian_norm(p: int) -> float:
    return math.sqrt(2.0) * math.exp(math.lgamma((p + 1) / 2) - math.lgamma(p / 2))


def _second_moment(noise: NoiseSpec, p: int) -> float:
    """E‖b‖² of the law (the discrete laws' own second moment, :meth:`NoiseSpec.second_moment`)."""
    return noise.second_moment(p)


def lemma1_excess_risk(problem: Problem, noise: NoiseSpec, width: float) -> dict[str, float]:
    """The corrected Lemma 1 bound on ``E[P(θ̂ + b) − P(θ̂)]`` and its three terms (module notes)."""
    p = problem.dim
    norm = next(r for r in problem.regularizers if isinstance(r, SubmodularNorm))
    m1, m2 = noise.expected_norm(p), _second_moment(noise, p)
    eg = _expected_gaussian_norm(p)
    x2 = problem.loss.data.x_bound_in(2)
    curv = problem.loss.d2phi_bound()
    lip = problem.loss.dphi_bound(math.inf) * x2
    terms = []
    if curv is not None:
        terms.append(0.5 * curv * x2**2 * m2 / p)
    if math.isfinite(lip):
        terms.append(lip * m1 * math.sqrt(2.0 / math.pi) / eg)
    loss_term = min(terms) if terms else math.inf
    reg_term = norm.lam * m1 * width / eg
    ridge_term = 0.5 * problem.l2_weight * m2
    return {"loss_term": loss_term, "regularizer_term": reg_term, "ridge_term": ridge_term,
            "total": loss_term + reg_term + ridge_term}


def theorem1_lambda(lipschitz: float, x_bound: float, width: float, n: int) -> float:
    """Thm. 1's choice ``λ = L R₂ √n / G_{|P|(F)}``, returned as the average-loss weight ``lam = λ/n``."""
    return lipschitz * x_bound / (width * math.sqrt(n))


class SubmodularOutputPerturbation(OutputPerturbation):
    """Output perturbation for ERM regularized by Ω∞ plus a required ℓ2² term (KD19 Thm. 1).

    Parameters
    ----------
    epsilon, delta : float
        Target guarantee under replace-one neighbours (δ = 0: discrete Laplace noise on the grid).
    tolerance : float
        Proven distance of the pre-noise point to θ̂ (added twice to the sensitivity).
    width_samples : int
        Monte Carlo samples for G_{|P|(F)} when F has no closed form (public, seeded).
    project, ledger, on_uncertified, noise :
        As in :class:`~dpopt.mechanisms.output_perturbation.OutputPerturbation`.

    Notes
    -----
    See the module docstring: sensitivity ``2L/(nΛ) + 2·tolerance`` with Λ the
    L2Squared weight, L over the implied ball ``‖θ‖₂ ≤ √(2φ₀/Λ)`` on ℝ^p.  The
    release reports ``gaussian_width`` (of |P|(F)) and the corrected Lemma 1
    bound ``excess_risk_bound`` on ``E[P(θ^priv) − P(θ̂)]``.  ``solver="auto"``
    means Clarabel (the scipy backend has no Ω∞ proximal map).
    """

    name = "SubmodularOutputPerturbation"
    theorem = "KD19 Thm. 1 / Lemma 1 (corrected), sensitivity 2L/(nΛ) with a required ℓ2² term"

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **OutputPerturbation._parameter_constraints,
        "width_samples": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, epsilon: float, delta: float = 0.0, *, tolerance: float = 1e-4,
                 width_samples: int = 4000, project: Project = False, ledger: Ledger | None = None,
                 on_uncertified: OnUncertified = "raise", noise: NoiseChoice = "auto") -> None:
        super().__init__(epsilon, delta, project=project, ledger=ledger, tolerance=tolerance,
                         on_uncertified=on_uncertified, noise=noise)
        self.width_samples = int(width_samples)

    def _check(self, problem: Problem) -> SubmodularNorm:
        norms = [r for r in problem.regularizers if isinstance(r, SubmodularNorm)]
        if len(norms) != 1:
            raise MechanismError(f"{self.name} needs exactly one SubmodularNorm regularizer (the Ω∞ of Thm. 1)")
        if any(isinstance(r, L1Norm) for r in problem.regularizers):
            raise MechanismError(
                f"{self.name}: fold the L1Norm term into F (e.g. ChainCut(eta=...) or a GroupCoverage "
                "with singleton groups) instead of adding it separately"
            )
        if not problem.l2_weight > 0:
            raise MechanismError(
                f"{self.name} needs an L2Squared term: Ω∞ is a norm, not strongly convex, so the minimizer of "
                "loss + λΩ∞ has no bounded sensitivity; add L2Squared(θ, Λ) (its weight Λ is the strong "
                "convexity in the sensitivity 2L/(nΛ))"
            )
        return norms[0]

    def _lipschitz(self, problem: Problem) -> tuple[float, float]:
        """(L, R): the ℓ2-Lipschitz constant over the implied (or given) domain and that radius."""
        if problem.constraint is not None:
            return problem.loss_constants().lipschitz_l2, problem.constraint.radius(2)
        radius = math.sqrt(2.0 * loss_at_zero_bound(problem.loss) / problem.l2_weight) + self.tolerance
        dom = {1: radius * math.sqrt(problem.dim), 2: radius, "inf": radius}
        return problem.loss.constants(dom).lipschitz_l2, radius

    def calibrate(self, problem: Problem) -> ConvexPlan:
        norm = self._check(problem)
        lam_sc = problem.strong_convexity
        L, radius = self._lipschitz(problem)
        if not math.isfinite(L):
            raise MechanismError(f"the {problem.loss.name} loss has no finite Lipschitz constant here")
        sensitivity = 2.0 * L / (problem.n * lam_sc) + 2.0 * self.tolerance
        output = NoiseSpec.for_sensitivity(sensitivity, self.epsilon, self.delta, problem.dim, self.noise)
        width = polyhedron_gaussian_width(norm.F, n_samples=self.width_samples)
        risk = lemma1_excess_risk(problem, output, width.value)
        params = {
            "noise": output.kind, "noise_scale": output.scale, "grid_step": output.grid_step,
            "sensitivity_l2": sensitivity,
            "lipschitz_l2": L, "domain_radius_l2": radius, "strong_convexity": lam_sc,
            "omega_weight": norm.lam, "set_function": norm.F.describe(),
            "gaussian_width": width.value, "gaussian_width_method": width.method,
            "excess_risk_bound": risk["total"], "excess_risk_terms": risk,
            "projected": self.projects(problem), "neighbouring": "replace-one",
        }
        return ConvexPlan(template=template_problem(problem), linear_noise=NoiseSpec.none(), output_noise=output,
                          tolerance=self.tolerance, parameters=params, project_output=self.projects(problem))

    def plan(self, problem: Problem, options: RunOptions | None = None) -> ConvexPlan:
        """As :meth:`ConvexMechanism.plan`; ``solver="auto"`` is Clarabel."""
        options = options or RunOptions()
        if isinstance(options.solver, str) and options.solver.lower() == "auto":
            options = replace(options, solver="clarabel")
        return super().plan(problem, options)
