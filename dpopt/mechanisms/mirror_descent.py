"""Private mirror descent (Talwar, Thakurta and Zhang 2014, Alg. 1 ``A_Noise-MD``).

For an average loss ℒ(θ; D) = (1/n) Σ ℓ(θ; d_i) with every ℓ(·; d) convex and
L-Lipschitz in ℓ2 on C, and a potential Ψ fitted to C (Sec. 3.2,
:mod:`dpopt.numerics.potentials`), the algorithm runs T steps

    θ₁ = argmin_C Ψ,
    θ_{t+1} = argmin_{θ∈C} ⟨η(∇ℒ(θ_t; D) + b_t) − ∇Ψ(θ_t), θ − θ_t⟩ + Ψ(θ),  b_t ~ N(0, σ² I),

and releases the average θ^priv = (1/T) Σ_{t=1}^T θ_t.

Privacy (Thm 3.1).  Under replace-one neighbours the sum of the per-example gradients
(clipped to L) moves by at most 2L (the average by Δ = 2L/n), so each step is a noisy
release and the run is a T-fold adaptive composition; every θ_t and the output are
post-processing of the noisy gradients.  The privacy does not depend on how accurately a
mirror step is solved: per-example gradients are clipped to the declared L
(:func:`gradient_oracle`), so an iterate a compiled step leaves slightly outside C cannot
raise the sensitivity above 2L.

The noise is exact and on a public grid ([CKS20]; :mod:`dpopt.privacy.grid`): each step
rounds the gradient *sum* n·∇ℒ(θ_t; D) onto γℤ^d, γ = grid_step(2L, √d) a public power of
two (γ√d ≤ 2L/256), adds an exact discrete Gaussian vector with σ²/γ² an integer, and
divides by n afterwards (post-processing), so b_t above is that rounding plus noise.
Rounded neighbours differ by at most Δ' = 2L + γ√d; a step is ρ-zCDP with ρ = Δ'²/(2σ²)
and T steps add.  σ (on the sum) comes in two modes, both reported in the release (with
``grid_step`` γ and ``zcdp_rho``):

* ``mode="accountant"`` (default): ``accountant="zcdp"`` (default) σ = Δ'·√(T/(2ρ)) with
  ρ = :func:`~dpopt.privacy.zcdp.zcdp_rho` (ε, δ); ``accountant="rdp"``: dp-accounting's
  RDP accountant of the unsampled Gaussian at Δ' (valid: the discrete Gaussian's Rényi
  divergence is at most the continuous one's at every order, and that accountant reads
  only that curve), slightly larger.  ``"analytic"`` and ``"pld"`` (the continuous
  Gaussian's exact privacy-loss distribution) do not cover discrete noise and are refused
  before the charge;
* ``mode="paper"``: Alg. 1 line 1, σ² = 32 L² T log²(T/δ) / (εn)² on the average
  (:func:`~dpopt.privacy.accountant.paper_sigma`; n times it on the sum), raised to the
  zCDP σ where it is below it (the paper's strong-composition argument is the continuous
  Gaussian's, so only the zCDP σ is relied on).

``noise_scale`` reports σ on the *average* gradient as drawn (σ/n), ``noise_scale_sum`` on
the sum.

Utility (Thm 3.2 / Cor. 3.6).  If Ψ is κ-strongly convex w.r.t. ``‖·‖_Q`` with
range R = max_C Ψ − min_C Ψ, then for any η

    E[ℒ(θ^priv)] − min_C ℒ ≤ R'/(η'T) + η'K,
    R' = R/κ,  η' = η/κ,  K = L²‖Q‖₂² + σ²(G_Q² + ‖Q‖₂²)

(the proof of Thm 3.2, eqs. (3)–(12), with E‖b‖²_{Q*} ≤ σ²(G_Q² + ‖Q‖₂²) by the
Gaussian Poincaré inequality in place of the paper's loose integral (7)).  The
default η minimizes it, η' = √(R'/(TK)), as in Cor. 3.6, giving the bound
2√(R'K/T), reported as ``excess_risk_bound``.  The default T is Thm 3.2's
T = ‖Q‖² ε² n² / (log²(n/δ)(G_Q² + ‖Q‖²)) capped at ``max_steps``; the theorem
statement's extra 1/L² factor in T is a typo (its proof's T has none, and T
must be dimensionless).

Correctness notes on the paper's constants: the paper's σ is valid but loose
(see :mod:`dpopt.privacy.accountant`); q in Claim 3.5 is clamped to 2 for k ≤ 7
(Fact 3.4 needs q ∈ (1, 2]); the nuclear-norm potential uses BTN13's 4√e·ln(2m)
factor (the paper prints 4√(e log 2m)).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Literal

import numpy as np

from dpopt.backends import programs
from dpopt.backends.base import Backend
from dpopt.backends.result import SolveOptions
from dpopt.errors import MechanismError
from dpopt.mechanisms.base import STEPS, Mechanism, Plan, RunOptions, SolverNeed
from dpopt.mechanisms.bregman import ACCEPTANCE, BregmanProgram, bregman_step, compile_bregman_step
from dpopt.mechanisms.params import Instance, Integral, Interval, Options, Real
from dpopt.mechanisms.pipeline import Outcome
from dpopt.mechanisms.release import OracleCall
from dpopt.modeling.problem import Problem
from dpopt.numerics.clipping import ClippedGradient, in_domain_ball
from dpopt.numerics.potentials import (
    POTENTIALS,
    MirrorGeometry,
    MirrorPoint,
    Potential,
    make_potential,
)
from dpopt.privacy.accountant import (
    CONTINUOUS_ONLY,
    GridSteps,
    gaussian_sigma_for_composition,
    grid_gaussian_steps,
    grid_reach,
    paper_sigma,
)
from dpopt.privacy.ledger import Ledger
from dpopt.privacy.zcdp import zcdp_rho
from dpopt.progress import counted

__all__ = ["MirrorPlan", "PrivateMirrorDescent", "theorem_steps"]

NoiseMode = Literal["paper", "accountant"]
DEFAULT_MAX_STEPS = 10_000


@dataclass(frozen=True)
class MirrorPlan(Plan):
    """A calibrated run: public settings only (no data values)."""

    potential: Potential
    steps: int
    learning_rate: float
    noise: GridSteps  # the gradient sums' grid and exact noise
    sensitivity: float
    geometry: MirrorGeometry
    bound: float
    program: BregmanProgram | None = None  # the compiled mirror step (a potential without a closed form)
    backend: Backend | None = None
    options: SolveOptions | None = None
    calls: tuple[OracleCall, ...] = ()

    @property
    def sigma(self) -> float:
        """σ of the noise on the average gradient, as drawn (σ on the sum / n)."""
        return self.noise.sigma / self.problem.n


def theorem_steps(geometry: MirrorGeometry, n: int, epsilon: float, delta: float, max_steps: int) -> int:
    """Thm 3.2's T = ‖Q‖²ε²n² / (log²(n/δ)(G_Q² + ‖Q‖²)), in [1, max_steps]."""
    q2, g2 = geometry.q_radius**2, geometry.q_width**2
    t = q2 * (epsilon * n) ** 2 / (math.log(n / delta) ** 2 * (g2 + q2))
    return int(min(max(1, math.floor(t)), max_steps))


def optimal_rate(geometry: MirrorGeometry, steps: int, lipschitz: float, sigma: float) -> tuple[float, float]:
    """(η, bound): Cor. 3.6's step size for the κ-scaled potential, and the bound 2√(R'K/T)."""
    r_scaled = geometry.range / geometry.modulus
    q2, g2 = geometry.q_radius**2, geometry.q_width**2
    k = lipschitz**2 * q2 + sigma**2 * (g2 + q2)
    if k == 0.0 or r_scaled == 0.0:
        return 1.0, 0.0
    eta_scaled = math.sqrt(r_scaled / (steps * k))
    return geometry.modulus * eta_scaled, 2.0 * math.sqrt(r_scaled * k / steps)


def gradient_oracle(problem: Problem) -> Callable[[np.ndarray], np.ndarray]:
    """θ ↦ the average of the per-example gradients clipped to the declared ℓ2 constant L.

    Thm 3.1's sensitivity Δ = 2L/n needs ‖∇ℓ(θ; d)‖₂ ≤ L, which the declared L
    guarantees only for θ ∈ C; a compiled q-norm mirror step (cvxpy) is feasible
    only to solver tolerance.  Each per-example gradient is therefore clipped to L
    in ℓ2 (:class:`~dpopt.numerics.clipping.ClippedGradient`), so Δ = 2L/n holds
    for every iterate by construction; inside C nothing is clipped.

    For a loss that declares itself ``quadratic`` (the squared loss) with p ≤ n, the Gram
    matrix XᵀX/n and Xᵀφ'(0, y)/n are formed once (:meth:`~dpopt.modeling.losses.Loss.gradient_from_moments`),
    so a step costs O(p²) instead of O(np).  That shortcut cannot clip, so it
    is used only while θ lies in the ball the constants were computed for
    (:func:`~dpopt.numerics.clipping.in_domain_ball`, which reads θ and public
    radii only): there no per-example gradient exceeds L and both paths agree.
    The shortcut needs X in memory: a Dask-backed X always takes the clipped
    path, reduced per partition on the cluster.
    """
    loss = problem.loss
    clipped = ClippedGradient(loss, norm=2, bound=problem.loss_constants().lipschitz_l2)
    X = loss.data.X
    if loss.quadratic and isinstance(X, np.ndarray) and X.shape[1] <= X.shape[0]:
        n = loss.data.n
        y = np.asarray(loss.data.y)
        gram = X.T @ X / n
        linear = X.T @ loss.dphi(np.zeros_like(y, dtype=np.float64), y) / n  # Xᵀφ'(0, y)/n
        radius = problem.domain_radius()

        def gradient(theta: np.ndarray) -> np.ndarray:
            if in_domain_ball(theta, loss, radius):
                return loss.gradient_from_moments(theta, gram, linear)
            return clipped(theta)

        return gradient
    return clipped


class PrivateMirrorDescent(Mechanism):
    """Private mirror descent (TTZ14 Alg. 1) with a potential fitted to the constraint set.

    Parameters
    ----------
    epsilon : float
        ε > 0.
    delta : float
        δ ∈ (0, 1) (Gaussian noise needs δ > 0).
    potential : str or Potential
        ``"auto"`` (Sec. 3.2's choice for the set: entropy on the simplex, group-ℓ1
        on ℓ1 and group-ℓ1 balls, nuclear on nuclear-norm balls, q-norm on vertex
        polytopes, else Euclidean), a name (``"euclidean"``, ``"entropy"``,
        ``"qnorm"``, ``"group-l1"``, ``"nuclear"``) or a Potential built on the
        problem's constraint.  A potential that does not fit the set is refused.
    steps : int, optional
        T ≥ 1 (default: Thm 3.2's T capped at ``max_steps``).
    learning_rate : float, optional
        η > 0 (default: Cor. 3.6's η for the chosen σ and T).
    mode : {"accountant", "paper"}
        Which σ the run uses; both are computed and reported.
    accountant : {"zcdp", "rdp"}
        Accountant mode's calibration of the discrete Gaussian noise: zCDP (default,
        [CKS20]) or dp-accounting's RDP accountant at Δ'; reported as
        ``parameters["accountant"]``.  ``"analytic"`` and ``"pld"`` are refused (module docstring).
    max_steps : int
        Cap on the default T.
    ledger : Ledger, optional
        Charged once, (ε, δ), for the whole run.
    """

    name = "PrivateMirrorDescent"
    theorem = ("TTZ14 Alg. 1, Thm 3.1 (privacy), Thm 3.2 / Cor. 3.6 (utility); exact discrete Gaussian on a grid, "
               "zCDP [CKS20]")

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **Mechanism._parameter_constraints,
        "delta": [Interval(Real, 0, 1, closed="neither", why="Gaussian noise needs δ > 0")],
        "potential": [Options(("auto", *POTENTIALS)), Instance(Potential, what="a Potential")],
        "steps": STEPS,
        "learning_rate": [Interval(Real, 0, None, closed="neither"), None],
        "mode": [Options(("accountant", "paper"))],
        "accountant": [Options(("zcdp", "rdp"), why=CONTINUOUS_ONLY)],
        "max_steps": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, epsilon: float, delta: float, *, potential: str | Potential = "auto",
                 steps: int | None = None, learning_rate: float | None = None,
                 mode: NoiseMode = "accountant", accountant: str = "zcdp",
                 max_steps: int = DEFAULT_MAX_STEPS, ledger: Ledger | None = None) -> None:
        super().__init__(epsilon, delta, ledger=ledger)
        self.steps = None if steps is None else int(steps)
        self.learning_rate = None if learning_rate is None else float(learning_rate)
        self.max_steps = int(max_steps)
        self.potential = potential
        self.mode: NoiseMode = mode
        self.accountant = accountant

    # -- calibration (public quantities only) -------------------------------------------
    def solver_need(self, problem: Any) -> SolverNeed:
        """Only a potential without a closed-form mirror step compiles its steps for a solver."""
        return SolverNeed.STEP if self.calibrate(problem).potential.start() is None else SolverNeed.NONE

    def calibrate(self, problem: Problem) -> MirrorPlan:
        """Validate ``problem`` and calibrate σ, T and η (no data values are read)."""
        if not isinstance(problem, Problem):
            raise MechanismError(f"run() needs a dpopt Problem, got {type(problem).__name__}")
        if problem.perturbation is not None:
            raise MechanismError("the problem already carries a perturbation; pass the plain problem")
        if problem.constraint is None:
            raise MechanismError(
                f"{self.name} runs over a constraint set C; add one (e.g. dp.Simplex, dp.L1Ball, dp.L2Ball)"
            )
        if not problem.constraint.bounded:  # the set's declaration: the potential's range is infinite
            raise MechanismError(
                f"{self.name} needs a bounded constraint set (its potential's range sets T and η); "
                f"{type(problem.constraint).__name__} is unbounded: use a Box, or DPGradientDescent or "
                "ObjectivePerturbation over it"
            )
        other = [type(r).__name__ for r in problem.regularizers if r.elastic_weights is None]
        if other:  # the gradient adds a·θ + b·sign(θ): only elastic terms are in it
            raise MechanismError(
                f"{self.name} supports L2Squared and L1Norm regularizers only (terms a·½‖θ‖² + b‖θ‖₁, "
                f"declared by Regularizer.elastic_weights), not {', '.join(other)}"
            )
        lipschitz = problem.loss_constants().lipschitz_l2
        if not math.isfinite(lipschitz):
            raise MechanismError(
                f"the {problem.loss.name} loss has no finite ℓ2 Lipschitz constant over this domain, "
                f"which {self.name}'s noise (σ ∝ L/n) needs; declare the data bounds (x_bound, y_bound) "
                "and use a bounded constraint set"
            )
        potential = make_potential(self.potential, problem.constraint)
        geometry = potential.geometry()
        n = problem.n
        steps = self.steps or theorem_steps(geometry, n, self.epsilon, self.delta, self.max_steps)
        sensitivity = 2.0 * lipschitz / n
        sigma_zcdp, sigma_acc = self._sum_sigmas(2.0 * lipschitz, problem.dim, steps)
        # the paper's σ (on the sum: n times Alg. 1's) is never allowed below the zCDP requirement
        sigma_paper = n * paper_sigma(lipschitz, n, steps, self.privacy_level, None)
        paper_raised = sigma_paper < sigma_zcdp
        sigma_paper = max(sigma_paper, sigma_zcdp)
        noise = grid_gaussian_steps(sigma_paper if self.mode == "paper" else sigma_acc, 2.0 * lipschitz,
                                    problem.dim, steps)
        sigma = noise.sigma / n  # on the average gradient, as drawn
        lip_total = lipschitz + problem.l2_weight * problem.constraint.radius(2) + problem.l1_weight * math.sqrt(problem.dim)
        eta, bound = optimal_rate(geometry, steps, lip_total, sigma)
        if self.learning_rate is not None:
            eta = self.learning_rate
            r_scaled = geometry.range / geometry.modulus
            k = lip_total**2 * geometry.q_radius**2 + sigma**2 * (geometry.q_width**2 + geometry.q_radius**2)
            eta_s = eta / geometry.modulus
            bound = r_scaled / (eta_s * steps) + eta_s * k
        params: dict[str, Any] = {
            "mode": self.mode, "noise": "discrete-gaussian", "noise_scale": sigma,
            "noise_scale_paper": sigma_paper / n, "noise_scale_accountant": sigma_acc / n,
            "accountant": self.accountant, "noise_scale_paper_raised_to_exact": paper_raised,
            "noise_scale_sum": noise.sigma, "grid_step": noise.gamma, "sensitivity_l2_sum": 2.0 * lipschitz,
            "sensitivity_l2_sum_on_grid": noise.reach, "zcdp_rho": noise.rho,
            "steps": steps, "learning_rate": eta, "potential": potential.name,
            "potential_reference": potential.reference, "sensitivity_l2": sensitivity,
            "lipschitz_l2": lipschitz, "potential_range": geometry.range,
            "potential_modulus": geometry.modulus, "q_radius_l2": geometry.q_radius,
            "q_gaussian_width_bound": geometry.q_width, "excess_risk_bound": bound,
            "neighbouring": "replace-one",
        }
        return MirrorPlan(potential, steps, eta, noise, sensitivity, geometry, bound, problem=problem, parameters=params)

    def _sum_sigmas(self, sensitivity: float, dim: int, steps: int) -> tuple[float, float]:
        """(zCDP σ, the chosen accountant's σ) on the gradient sum, both for Δ' = Δ + γ√d."""
        reach = grid_reach(sensitivity, dim)[1]
        sigma_zcdp = reach * math.sqrt(steps / (2.0 * zcdp_rho(self.privacy_level)))
        if self.accountant == "zcdp":
            return sigma_zcdp, sigma_zcdp
        return sigma_zcdp, gaussian_sigma_for_composition(reach, steps, self.epsilon, self.delta, self.accountant)

    # -- the run ------------------------------------------------------------------------
    def plan(self, problem: Problem, options: RunOptions | None = None) -> MirrorPlan:
        """The calibration and, for a potential without a closed-form step, the step solver.

        ``options.solver`` is the cvxpy-based backend for such steps: a name (``"clarabel"``,
        ``"scs"``), a TOML profile or a Backend (``"auto"``: clarabel, else scs), with
        ``time_limit`` seconds per compiled step; a closed-form potential calls no solver.
        """
        options = options or RunOptions()
        plan = self.calibrate(problem)
        if plan.potential.start() is not None:
            return replace(plan, needs=SolverNeed.NONE)
        backend, profile = programs.resolve_step_backend(options.solver)
        version = backend.require()
        program = compile_bregman_step(plan.potential)
        calls = (OracleCall(backend.name, version, f"step solver ({plan.steps + 1} mirror steps)", ACCEPTANCE),)
        return replace(plan, parameters=dict(plan.parameters, step_backend=backend.name), profile=profile,
                       needs=SolverNeed.STEP, program=program, backend=backend, calls=calls,
                       options=programs.step_options(profile, time_limit=options.time_limit))

    def execute(self, plan: Plan, rng: np.random.Generator) -> Outcome:
        """Alg. 1's T noisy mirror steps on the data; the average iterate."""
        assert isinstance(plan, MirrorPlan)
        theta, counts = self._iterate(plan.problem, plan, rng, plan.program, plan.backend, plan.options)
        return Outcome(theta, calls=plan.calls, details=counts)  # counts depend on the data: diagnostics only

    def _iterate(self, problem: Problem, plan: MirrorPlan, rng: np.random.Generator,
                 program: BregmanProgram | None, backend: Backend | None, options: SolveOptions | None,
                 ) -> tuple[np.ndarray, dict[str, int]]:
        """The T steps of Alg. 1; returns the average iterate and step-solver counts."""
        potential, eta, n = plan.potential, plan.learning_rate, problem.n
        gradient = gradient_oracle(problem)
        noise = plan.noise.draws(rng, problem.dim)  # data-independent: drawn ahead in blocks
        l2w, l1w = problem.l2_weight, problem.l1_weight
        counts = {"compiled_steps": 0, "compiled_steps_not_optimal": 0}

        def mirror(w: np.ndarray, current: MirrorPoint | None) -> MirrorPoint:
            closed = potential.mirror_step(w)
            if closed is not None:
                return closed
            assert program is not None and backend is not None
            res = bregman_step(program, w, backend, options)
            counts["compiled_steps"] += 1
            if res.status != "optimal":
                counts["compiled_steps_not_optimal"] += 1
            if res.point is None:  # no point at all: stay (post-processing, privacy unaffected)
                return current if current is not None else potential.point(potential.constraint.center())
            return res.point

        point = mirror(np.zeros(problem.dim), None)  # θ₁ = argmin_C Ψ
        total = np.zeros(problem.dim)
        for _ in counted(plan.steps, "mirror descent iterations"):
            theta = point.theta
            total += theta
            g = plan.noise.release(gradient(theta) * n, next(noise)) / n  # the noisy sum, then / n
            if l2w:
                g = g + l2w * theta
            if l1w:
                g = g + l1w * np.sign(theta)
            point = mirror(potential.gradient(point) - eta * g, point)
        return total / plan.steps, counts
