"""Gradient perturbation: noisy (stochastic) projected gradient descent.

:class:`DPGradientDescent` (full batch; Bassily, Smith and Thakurta 2014, Alg. 1 without
sampling, as benchmarked by Yu et al. 2020 "Gradient perturbation is underrated") and
:class:`DPSGD` (Poisson-subsampled; Abadi et al. 2016, Alg. 1) run T steps

    θ_{t+1} = prox_{ηr, C}(θ_t − η (ĝ_t + λθ_t)),

from the centre of C (or 0), where ĝ_t is a noisy estimate of the average gradient of
the loss, λ the weight of an ``L2Squared`` regularizer and prox the exact proximal map of
an ``L1Norm`` regularizer over C (:func:`dpopt.numerics.prox.composite_prox`).  The output
is the average of the last ⌈T/2⌉ iterates (``output="suffix"``, DP-GD's default: suffix
averaging [RSS12], which drops the early iterates still far from the optimum), of all of
θ_1..θ_T (``output="average"``, DP-SGD's default: the iterate the convex rate below is
stated for) or the last iterate (``output="last"``).  All are
post-processing of the noisy gradients and cost the same.

Preconditioning (DP-GD's default, ``precondition="auto"``).  Before the steps, DP-GD
releases XᵀX once with exact noise at a share ``precondition_share`` (default 0.05) of its
zCDP budget and steps in the metric of P = (c/n)(XᵀX^₊ + τI) + λI, c the loss's declared
curvature bound — Böhning's quadratic upper bound on the Hessian of any dpopt (GLM) loss
([BL88]):

    θ_{t+1} = Π_C(θ_t − η P⁻¹(ĝ_t + λθ_t)),   η = 1,

(:mod:`dpopt.mechanisms.preconditioner`, which has the derivation and the privacy argument;
the steps get the remaining (1 − share)·ρ).  The steps then no longer need about κ(XᵀX)
times more iterations on ill-conditioned (e.g. one-hot) data, so T = 50 steps suffice where
plain DP-GD needs up to its cap of 1,000, and the noise of each step, which grows like √T,
is smaller.  ``"auto"`` applies it when the loss declares a curvature bound and there is no
``L1Norm`` term (whose prox in the metric of P has no closed form); ``precondition=False``
gives the plain steps below.  Π_C is the Euclidean projection (post-processing).

Privacy (replace-one neighbours).  Every per-example gradient is clipped to ℓ2 norm C
(:class:`~dpopt.numerics.clipping.ClippedGradient`; C defaults to the loss's declared ℓ2
Lipschitz constant, where clipping changes nothing inside the declared domain), so
replacing one row moves the sum of clipped gradients by at most 2C wherever θ is.

The noisy sums are exact and on a public grid ([CKS20]; :mod:`dpopt.privacy.grid`).  Each
step rounds the clipped gradient *sum* S_t onto γℤ^d, γ = grid_step(2C, √d) a public power
of two with γ√d ≤ 2C/256, adds an exact discrete Gaussian vector K_t ~ N_ℤ(0, σ²/γ²)^d in
grid units (σ²/γ² an integer), and releases (round(S_t/γ) + K_t)·γ, an exact multiple of
γ; the division by n (or qn), the step, the prox and the averaging are post-processing.
Rounded neighbours differ by at most Δ' = 2C + γ√d, so a step is ρ-zCDP with
ρ = Δ'²/(2σ²) ([CKS20]: the discrete Gaussian's Rényi divergence is at most the continuous
one's), and T adaptive steps are (Tρ)-zCDP.

* DP-GD (``accountant="zcdp"``, the only one): σ = Δ'·√(T/(2ρ)) with ρ = zcdp_rho(ε, δ),
  the largest ρ whose [CKS20] conversion gives δ(ε) ≤ δ
  (:func:`dpopt.privacy.zcdp.zcdp_rho`).  ``"analytic"`` and ``"pld"`` (the continuous
  Gaussian's exact μ-GDP composition and its PLD) do not cover discrete noise and are
  refused before the charge.  The release reports ``grid_step`` γ, ``noise_scale`` σ (as
  drawn) and ``zcdp_rho`` (the run's ρ, ≤ the budget's).
* Adaptive clipping (DP-GD's default, ``clip="adaptive"``; Andrew, Thakkar, McMahan and
  Ramaswamy 2021, "Differentially private learning with adaptive clipping", Alg. 1 with
  its geometric update).  Each step also releases the noisy count
  b̃_t = #{i : ‖g_i‖ ≤ C_t} + K_b, K_b ~ N_ℤ(0, σ_b²) exact with σ_b² an integer (the count is
  an integer: grid 1, no rounding, sensitivity 1), and sets
  C_{t+1} = C_t · exp(−η_C (b̃_t/n − γ_q)), clamped to [C_0/100, C_0] with C_0 = L: C_t
  tracks the γ_q-quantile of the per-example gradient norms (post-processing of noisy
  releases).  The gradient sum is released in units of C_t: S_t/C_t moves by at most 2
  whatever C_t is, so it is rounded onto γℤ^d with γ = grid_step(2, √d) and gets noise
  N_ℤ(0, z²/γ²)^d; the noisy value times C_t is post-processing.  A step is therefore
  ρ_t-zCDP with ρ_t = Δ'²/(2z²) + 1/(2σ_b²), Δ' = 2 + γ√d, the same at every step.  The
  count gets a share ``clip_share`` of each step's ρ: with u = √(T/(2ρ)),
  z = Δ'u/√(1 − share) and σ_b² = ⌈u²/share⌉.  The loss-gradient step is scaled by
  C_0/C_t (a clipped gradient is at most C_t long, so the step keeps the length η C_0 of
  the unclipped method; λθ and the prox keep η).  In the preconditioner's metric this
  lengthening is kept only for losses whose curvature vanishes with their slope
  (``Loss.curvature_follows_slope``: logistic, multinomial), where a small gradient quantile
  also means the quadratic bound P is loose; for the squared loss P is the exact Hessian,
  and a lengthened step would overshoot.  Defaults γ_q = 0.8, η_C = 0.8,
  share = 0.05.  Andrew et al.'s γ_q = 0.5 collapses C for logistic regression: near the
  optimum most examples are classified with margin and their gradients vanish, so the
  median norm goes to 0.
* DP-SGD: every row enters the batch B_t independently with probability q (Poisson
  sampling, :func:`poisson_batch`; exactly ⌈q·2⁵³⌉/2⁵³, :func:`inclusion_probability`, which
  the accounting uses), ĝ_t = (Σ_{i∈B_t} clip_C(g_i) on the grid + K_t γ)/(qn), an unbiased
  estimate of the clipped average gradient up to rounding.  Fix the history and the batch of
  the other rows: a step's output on D and D' is (1 − q)N_ℤ(a) + qN_ℤ(b) against
  (1 − q)N_ℤ(a) + qN_ℤ(c), with a, b, c the rounded sums without the row, with its D value and
  with its D' value: ‖b − a‖, ‖c − a‖ ≤ C/γ + √d and ‖b − c‖ ≤ 2C/γ + √d in grid units.
  ``accountant="rdp"`` (default, proved): the Rényi divergence of that pair at every integer
  order is bounded by the binomial expansion of :mod:`dpopt.privacy.subsampled_rdp` (the proof
  is in docs/exact-noise.md, "Amplification by sampling"; after [WBK19], [ZW19], with the
  discrete Gaussian's integer moments from [CKS20]); mixing over the other rows' batch keeps the
  bound (joint convexity), T adaptive steps add it ([Mir17]) and [CKS20] Prop. 12 converts it.
  σ²/γ² is the smallest integer it certifies, about 1.1·q times the unamplified σ for small q.  Where the
  unamplified zCDP σ below is smaller (q near 1, or ε too small for the orders evaluated), that
  one is used and the release says so.  ``accountant="zcdp"`` (opt-in): without
  amplification — a Poisson-sampled step is a mixture, over the batches, of steps whose sums
  differ by at most 2C on neighbours, so each step is Δ'²/(2σ²)-zCDP as in DP-GD and
  σ = Δ'·√(T/(2ρ)).  ``accountant="pld"`` (opt-in): σ = z·(C + γ√d) with z the smallest
  multiplier whose T-fold Poisson-subsampled *continuous* Gaussian composition is (ε, δ)-DP
  under replace-one, by dp-accounting's PLD accountant
  (:func:`dpopt.privacy.accountant.sampled_gaussian_multiplier`; its dominating pair moves the
  mean by ±z⁻¹σ, here the one-sided distance C + γ√d).  **Not proved for the noise the run
  draws**: it conditions the guarantee on the discrete Gaussian behaving like the continuous
  one under subsampling (the release's ``accountant`` and ``notes`` say so); it exists to
  compare with libraries that sample float noise.  Every accounting holds only for Poisson
  sampling: batches of a fixed size taken in data order (a loader without shuffling) put the
  same rows in every batch and are not amplified at all
  (``tests/mechanisms/test_gradient_descent.py`` audits that mutant).

Defaults (public: declared constants, n, d, ε, δ; never the data).  The constants of
DP-GD's defaults — T = 50 and η = 1 with the preconditioner, its share 0.05 and ridge factor
1, γ_q = 0.8, η_C = 0.8 and the suffix average — were chosen on three synthetic tables and two
scikit-learn tables, never on Adult, where ``dpopt bench linear`` measures them; ``dpopt
bench defaults`` reruns that comparison (each setting varied alone) and prints it.

* With the preconditioner: η = 1 (the minimizer of the quadratic bound) and T = 50, capped by
  ``max_steps``.
* Without it (and DP-SGD): ``learning_rate`` η = 1/β with β the declared smoothness of the
  average loss plus λ (the classical step of smooth gradient descent).  Non-smooth losses
  need an explicit η.
* ``steps`` (DP-GD): the T minimizing the bound on the averaged iterate of noisy
  gradient descent for a β-smooth convex objective with start distance R,
  R²/(2ηT) + η d σ_T²/(2n²) with σ_T = 2C√T/μ and μ = √(2ρ) (σ above, without the grid's
  1/256), i.e. T = R μ n / (2 η C √d), clamped to
  [1, ``max_steps``].  R is the ℓ2 radius of C, or L/λ (a bound on ‖θ*‖ for an
  L2Squared weight λ) when there is no set; without either, ``steps`` is required.
* DP-SGD: q = 1/√n (expected batch √n), and plain DP-GD's T and η.  With T and η fixed, a small
  q multiplies the noise an accountant needs by about q (the subsampled Gaussian is close
  to (2q√T/z)-GDP when z is large), and the estimate is divided by qn instead of n, so the
  noise per step matches DP-GD's while a step reads about √n rows instead of n.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any, ClassVar, Literal

import numpy as np

from dpopt.errors import MechanismError
from dpopt.mechanisms.base import STEPS, Mechanism, Plan, RunOptions, SolverNeed
from dpopt.mechanisms.params import Integral, Interval, Options, Real
from dpopt.mechanisms.pipeline import Outcome
from dpopt.mechanisms.preconditioner import (
    Preconditioner,
    PreconditionerPlan,
    plan_preconditioner,
    preconditioner_reason,
)
from dpopt.modeling.problem import Problem
from dpopt.numerics.clipping import ClippedGradient
from dpopt.numerics.prox import composite_prox, prox_supported
from dpopt.privacy.accountant import (
    CONTINUOUS_ONLY,
    GridSteps,
    grid_gaussian_steps,
    grid_reach,
    sampled_gaussian_multiplier,
    zcdp_gaussian_steps,
)
from dpopt.privacy.grid import GridNoise
from dpopt.privacy.ledger import Ledger
from dpopt.privacy.subsampled_rdp import SubsampledGrid, subsampled_variance
from dpopt.privacy.zcdp import zcdp_rho
from dpopt.progress import counted

__all__ = ["AdaptiveClip", "DPGradientDescent", "DPSGD", "GradientPlan", "adaptive_steps", "averaged_steps",
           "default_steps", "inclusion_probability", "poisson_batch", "sampled_steps"]

Output = Literal["last", "average", "suffix"]
#: cap on the default T (a public bound on the run time: a step reads every row)
DEFAULT_MAX_STEPS = 1_000
#: adaptive clipping defaults (module docstring): target quantile γ, rate η_C, count share
ADAPTIVE_QUANTILE, ADAPTIVE_RATE, ADAPTIVE_SHARE = 0.8, 0.8, 0.05
#: the preconditioned run's defaults (module docstring): T, the Gram release's share of ρ, τ/(2σ_P√d)
PRECONDITIONED_STEPS, PRECONDITIONER_SHARE, PRECONDITIONER_RIDGE = 50, 0.05, 1.0
#: the adaptive clip stays in [C_0 · ADAPTIVE_FLOOR, C_0]
ADAPTIVE_FLOOR = 0.01
Clip = float | Literal["adaptive", "lipschitz"] | None


@dataclass(frozen=True)
class AdaptiveClip:
    """The public settings of adaptive clipping (module docstring)."""

    quantile: float  # γ_q
    rate: float  # η_C
    count: GridSteps  # the count #{i : ‖g_i‖ ≤ C_t}: grid 1, σ_b² an integer, reach 1
    floor: float  # smallest C_t

    @property
    def count_sigma(self) -> float:
        """σ_b of the count's discrete Gaussian noise."""
        return self.count.sigma


@dataclass(frozen=True)
class GradientPlan(Plan):
    """A calibrated run: public settings only (no data values)."""

    steps: int
    learning_rate: float
    clip: float
    noise: GridSteps  # the sums' grid and exact noise (adaptive: in units of the current clip C_t)
    sampling_rate: float  # 1.0 for full batch
    start: np.ndarray
    adaptive: AdaptiveClip | None = None  # None: the clip stays ``clip``
    preconditioner: PreconditionerPlan | None = None  # None: plain steps (the Euclidean metric)

    @property
    def sigma(self) -> float:
        """σ of the noise on the sum (value units; adaptive: at C_t = C_0)."""
        return self.noise.sigma * (self.clip if self.adaptive is not None else 1.0)


def poisson_batch(rng: np.random.Generator, n: int, rate: float) -> np.ndarray:
    """Indices of a Poisson sample: every row independently with probability
    :func:`inclusion_probability` (``rate``).

    The batch size is Binomial(n, q), not fixed: the accounting of :class:`DPSGD` needs it.
    """
    return np.flatnonzero(rng.random(n) < rate)


def inclusion_probability(rate: float) -> float:
    """The exact probability that :func:`poisson_batch` takes a row: ⌈q·2⁵³⌉/2⁵³.

    numpy's ``Generator.random`` returns multiples of 2⁻⁵³, uniformly, so P[U < q] is q rounded
    up onto that grid (exact in float64); DP-SGD's accountant uses this value, not q.
    """
    return math.ceil(rate * 2.0**53) / 2.0**53


def averaged_steps(steps: int, output: str) -> int:
    """How many of the last iterates the output averages: all T (``"average"``), the last ⌈T/2⌉
    (``"suffix"``) or the last one (``"last"``)."""
    return {"average": steps, "suffix": (steps + 1) // 2, "last": 1}[output]


def adaptive_steps(steps: int, dim: int, rho: float, share: float) -> tuple[GridSteps, GridSteps]:
    """The grid noise of adaptive clipping (module docstring): the sum in units of C_t and the count.

    With u = √(T/(2ρ)): the sum (sensitivity 2, grid γ = grid_step(2, √d), Δ' = 2 + γ√d) gets
    σ = Δ'u/√(1 − share), the count (sensitivity 1, an integer) σ_b² = ⌈u²/share⌉, so that
    every step is at most (ρ/T)-zCDP and the count has the share ``share`` of it.
    """
    unit2 = steps / (2.0 * rho)
    total = zcdp_gaussian_steps(2.0, dim, steps, (1.0 - share) * rho)
    count = GridNoise("gaussian", 1.0, Fraction(math.ceil(unit2 / share * (1.0 + 1e-12))))
    return total, GridSteps(count, 1.0, steps)


def default_steps(radius: float, mu: float, n: int, step: float, clip: float, dim: int,
                  max_steps: int) -> int:
    """T = R μ n / (2 η C √d), the minimizer of the noisy-GD bound (module docstring), in [1, max_steps]."""
    t = radius * mu * n / (2.0 * step * clip * math.sqrt(dim))
    return int(min(max(1, math.ceil(t)), max_steps))


def sampled_steps(clip: float, dim: int, steps: int, rate: float, epsilon: float,
                  delta: float) -> tuple[GridSteps, float, int] | None:
    """DP-SGD's grid noise by the subsampled discrete Gaussian's RDP (module docstring).

    On the grid γ = grid_step(2C, √d) the rounded batch sums with and without a row differ by at
    most C/γ + √d and with either of two rows by 2C/γ + √d (grid units); σ²/γ² is the smallest
    integer (to 2⁻²² relative) that :func:`dpopt.privacy.subsampled_rdp.subsampled_variance`
    certifies for T steps at the exact inclusion probability.  Returns the steps with the
    certificate's ε and order, or None when no order certifies ε (the caller's zCDP σ applies).
    """
    gamma, reach = grid_reach(2.0 * clip, dim)
    pad = 1.0 + 1e-12  # the float sums C/γ + √d, rounded up
    step = SubsampledGrid(inclusion_probability(rate), (clip / gamma + math.sqrt(dim)) * pad,
                          (2.0 * clip / gamma + math.sqrt(dim)) * pad)
    found = subsampled_variance(step, steps, epsilon, delta)
    if found is None:
        return None
    variance, eps, order = found
    return GridSteps(GridNoise("gaussian", gamma, Fraction(variance)), reach, steps), eps, order


#: a setting in the open interval (0, 1)
_OPEN_UNIT = Interval(Real, 0, 1, closed="neither")
#: a finite setting > 0
_POSITIVE = Interval(Real, 0, None, closed="neither")


class _GradientMechanism(Mechanism):
    """Shared set-up of DP-GD and DP-SGD (validation, defaults, the iteration)."""

    needs = SolverNeed.NONE  # closed-form steps
    #: clipping and the noise act on the flattened gradient x ⊗ φ'(Θᵀx) of any number of outputs
    multi_output = True
    #: what ``clip=None`` means for this mechanism
    default_clip: Literal["adaptive", "lipschitz"] = "lipschitz"
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **Mechanism._parameter_constraints,
        "delta": [Interval(Real, 0, 1, closed="neither", why="Gaussian noise needs δ > 0")],
        "steps": STEPS,
        "learning_rate": [_POSITIVE, None],
        "clip": [_POSITIVE, Options(("lipschitz", "adaptive")), None],
        "output": [Options(("suffix", "average", "last"))],
        "max_steps": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, epsilon: float, delta: float, *, steps: int | None = None,
                 learning_rate: float | None = None, clip: Clip = None, output: Output = "average",
                 max_steps: int = DEFAULT_MAX_STEPS, ledger: Ledger | None = None) -> None:
        super().__init__(epsilon, delta, ledger=ledger)
        self.steps = None if steps is None else int(steps)
        self.max_steps = int(max_steps)
        self.learning_rate = None if learning_rate is None else float(learning_rate)
        clip = self.default_clip if clip is None else clip
        self.adaptive = clip == "adaptive"
        self.clip = None if isinstance(clip, str) else float(clip)  # None: C = the declared Lipschitz constant
        self.output: Output = output

    # -- public checks ----------------------------------------------------------------
    def _check_problem(self, problem: Problem) -> float:
        """Validate the problem; return the declared ℓ2 Lipschitz constant."""
        if not isinstance(problem, Problem):
            raise MechanismError(f"run() needs a dpopt Problem, got {type(problem).__name__}")
        if problem.perturbation is not None:
            raise MechanismError("the problem already carries a perturbation; pass the plain problem")
        other = [type(r).__name__ for r in problem.regularizers if r.elastic_weights is None]
        if other:  # the step: a·θ in the gradient, then the exact ℓ1 prox composed with the projection
            raise MechanismError(
                f"{self.name} supports L2Squared and L1Norm regularizers only (terms a·½‖θ‖² + b‖θ‖₁, "
                f"declared by Regularizer.elastic_weights), not {', '.join(other)}"
            )
        if not prox_supported(problem.constraint, problem.l1_weight):
            raise MechanismError(
                f"{self.name} needs an exact proximal step; an L1Norm regularizer is supported over no set, "
                "a ball or the simplex"
            )
        lipschitz = problem.loss_constants().lipschitz_l2
        if self.clip is None and not math.isfinite(lipschitz):
            raise MechanismError(
                f"the {problem.loss.name} loss has no finite ℓ2 Lipschitz constant here; declare data "
                "bounds and a bounded set, or pass clip= (per-example gradients are clipped to it)"
            )
        return lipschitz

    def _step_size(self, problem: Problem) -> float:
        if self.learning_rate is not None:
            return self.learning_rate
        beta = problem.smoothness
        if not (math.isfinite(beta) and beta > 0):
            raise MechanismError(
                f"the {problem.loss.name} loss declares no smoothness bound, so {self.name} has no default "
                "step size; pass learning_rate="
            )
        return 1.0 / beta

    def _radius(self, problem: Problem, lipschitz: float) -> float | None:
        if problem.constraint is not None and problem.constraint.bounded:
            return float(problem.constraint.radius(2))
        if problem.l2_weight > 0 and math.isfinite(lipschitz):
            return lipschitz / problem.l2_weight
        return None

    def _default_steps(self, problem: Problem, lipschitz: float, step: float, clip: float) -> int:
        radius = self._radius(problem, lipschitz)
        if radius is None:
            raise MechanismError(
                f"{self.name} needs steps= here: without a constraint set or an L2Squared regularizer "
                "there is no declared radius to choose the number of steps from"
            )
        mu = math.sqrt(2.0 * zcdp_rho(self.privacy_level))  # σ_T = 2C√T/μ (module docstring)
        return default_steps(radius, mu, problem.n, step, clip, problem.dim, self.max_steps)

    def _settings(self, problem: Problem) -> tuple[float, float, float, int]:
        """(L, C, η, T) from the checked problem and the user's settings or the defaults."""
        lipschitz = self._check_problem(problem)
        clip = self.clip if self.clip is not None else lipschitz
        eta = self._step_size(problem)
        return lipschitz, clip, eta, self.steps or self._default_steps(problem, lipschitz, eta, clip)

    @staticmethod
    def _start(problem: Problem) -> np.ndarray:
        return np.zeros(problem.dim) if problem.constraint is None else np.asarray(
            problem.constraint.center(), dtype=np.float64)

    # -- the run ----------------------------------------------------------------------
    def plan(self, problem: Problem, options: RunOptions | None = None) -> GradientPlan:
        """Validate ``problem`` and calibrate (public quantities only)."""
        raise NotImplementedError

    def execute(self, plan: Plan, rng: np.random.Generator) -> Outcome:
        """The T noisy steps on the data; the last (or average) iterate."""
        assert isinstance(plan, GradientPlan)
        return self._iterate(plan.problem, plan, rng)

    def _noisy_gradient(self, clipped: ClippedGradient, theta: np.ndarray, plan: GradientPlan,
                        units: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The noisy sum (Σ clip_C(g_i) on the grid + K γ), then / n: the full-batch estimate
        (DP-SGD overrides it)."""
        n = clipped.loss.data.n
        return plan.noise.release(clipped(theta) * n, units) / n

    def _iterate(self, problem: Problem, plan: GradientPlan, rng: np.random.Generator) -> Outcome:
        clipped = ClippedGradient(problem.loss, norm=2, bound=plan.clip)
        eta, lam, l1 = plan.learning_rate, problem.l2_weight, problem.l1_weight
        theta = plan.start.copy()
        total = np.zeros_like(theta)
        bound = plan.clip
        noise = plan.noise.draws(rng, theta.shape[0])  # data-independent: drawn ahead in blocks
        counts = None if plan.adaptive is None else plan.adaptive.count.draws(rng, 1)
        first = plan.steps - averaged_steps(plan.steps, self.output)  # the first step whose iterate is averaged
        metric = None if plan.preconditioner is None else Preconditioner.release(plan.preconditioner, clipped, rng)
        for t in counted(plan.steps, f"{self.name} iterations"):
            if counts is None:
                g = self._noisy_gradient(clipped, theta, plan, next(noise), rng)
            else:
                g, bound = self._adaptive_gradient(clipped, theta, plan, bound, next(noise), next(counts))
            if lam:
                g = g + lam * theta
            if metric is not None:
                g = metric.solve(g)
            theta = composite_prox(problem.constraint, l1, theta - eta * g, eta)
            if t >= first:
                total += theta
        out = total / (plan.steps - first)
        details: dict[str, Any] = {} if plan.adaptive is None else {"clip_final": bound}
        if metric is not None:  # post-processing of the noisy Gram (diagnostics: the preconditioner's audit)
            details["preconditioner_eigenvalues"] = metric.eigenvalues.copy()
        return Outcome(out, details=details)

    @staticmethod
    def _adaptive_gradient(clipped: ClippedGradient, theta: np.ndarray, plan: GradientPlan, bound: float,
                           units: np.ndarray, count_units: np.ndarray) -> tuple[np.ndarray, float]:
        """One adaptive-clipping step (Andrew et al. 2021, Alg. 1): the noisy sum of gradients
        clipped to ``bound`` = C_t, released in units of C_t, times C_0/n (the step of length
        η C_0, module docstring), and the next bound from the noisy count of unclipped examples."""
        ad = plan.adaptive
        assert ad is not None
        n = clipped.loss.data.n
        total, count = clipped.sum_and_count(theta, bound)
        # (ŝ_t C_t / n) · C_0/C_t; in the preconditioner's metric only where a flat loss follows a small slope
        lengthen = plan.preconditioner is None or clipped.loss.curvature_follows_slope
        g = plan.noise.release(total / bound, units) * ((plan.clip if lengthen else bound) / n)
        fraction = float(ad.count.release(np.array([float(count)]), count_units)[0]) / n
        step = bound * math.exp(-ad.rate * (fraction - ad.quantile))
        return g, min(max(step, ad.floor), plan.clip)

    def _parameters(self, plan_steps: int, eta: float, clip: float, noise: GridSteps, accountant: str,
                    lipschitz: float) -> dict[str, Any]:
        """The public record of a fixed-clip run (the grid and σ are on the sum, in value units)."""
        return {
            "steps": plan_steps, "learning_rate": eta, "clip": "fixed", "clip_l2": clip, "lipschitz_l2": lipschitz,
            "noise": "discrete-gaussian", "noise_scale": noise.sigma, "noise_multiplier": noise.sigma / clip,
            "grid_step": noise.gamma, "sensitivity_l2": 2.0 * clip, "sensitivity_l2_on_grid": noise.reach,
            "accountant": accountant, "zcdp_rho": noise.rho, "output": self.output, "neighbouring": "replace-one",
        }


class DPGradientDescent(_GradientMechanism):
    """Noisy projected full-batch gradient descent (DP-GD): exact discrete Gaussian noise on a
    public grid, accounted by zCDP (module docstring).

    Parameters
    ----------
    epsilon : float
        ε > 0.
    delta : float
        δ ∈ (0, 1).
    steps : int, optional
        T ≥ 1 (default: module docstring; needs a constraint set or an L2Squared term).
    learning_rate : float, optional
        η > 0 (default 1/β from the declared smoothness).
    clip : float, "adaptive" or "lipschitz", default "adaptive"
        Per-example ℓ2 clip norm: adaptive clipping from C_0 = the loss's declared ℓ2
        Lipschitz constant (module docstring), that constant fixed (``"lipschitz"``), or a
        fixed number.
    clip_quantile, clip_rate, clip_share : float
        Adaptive clipping's target quantile γ ∈ (0, 1) (default 0.8), geometric rate η_C > 0
        (0.8) and the count's share of each step's μ² in (0, 1) (0.05).
    output : {"suffix", "average", "last"}
        The average of the last ⌈T/2⌉ iterates (default), of all of them, or the last iterate.
    precondition : "auto", True or False
        Step in the metric of the private preconditioner (module docstring): ``"auto"``
        (default) when the loss declares a curvature bound and there is no ``L1Norm`` term;
        ``True`` refuses, before the charge, a problem it does not apply to.  With it, η
        defaults to 1 and T to 50.
    precondition_share : float
        The noisy Gram release's share of the run's zCDP ρ, in (0, 1) (default 0.05).
    precondition_ridge : float
        τ in units of 2σ_P√d, the noise matrix's typical operator norm (default 1).
    accountant : {"zcdp"}
        zCDP of the discrete Gaussian ([CKS20]), the only analysis that covers the grid noise;
        ``"analytic"`` and ``"pld"`` (the continuous Gaussian's) are refused before the charge.
    max_steps : int
        Cap on the default T.
    ledger : Ledger, optional
        As in :class:`~dpopt.mechanisms.base.Mechanism`.

    Notes
    -----
    Release parameters: ``grid_step`` γ (of the sum; adaptive: in units of the clip C_t),
    ``noise_scale`` σ on the sum as drawn (adaptive: at C_t = C_0), ``count_sigma`` σ_b,
    ``zcdp_rho`` (the run's ρ) and ``accountant``; with the preconditioner
    ``preconditioner_sigma``, ``preconditioner_grid_step``, ``preconditioner_sensitivity_l2``
    (Δ' on the grid), ``preconditioner_ridge`` τ, ``preconditioner_zcdp_rho`` and
    ``steps_zcdp_rho`` (their sum is ``zcdp_rho``).

    Examples
    --------
    >>> import numpy as np, dpopt as dp
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, (500, 3)) / 2
    >>> data = dp.Dataset(X, np.sign(X[:, 0] + 0.1), x_bound=1.0)
    >>> th = dp.Variable(3)
    >>> problem = dp.Problem(dp.LogisticLoss(data, th), constraint=dp.L2Ball(th, 5.0))
    >>> release = dp.DPGradientDescent(1.0, 1e-5, ledger=dp.Ledger()).run(problem, seed=0)
    >>> release.theta.shape
    (3,)
    """

    name = "DPGradientDescent"
    theorem = "BST14 Alg. 1 (full batch); exact discrete Gaussian on a grid, zCDP composition [CKS20]"

    default_clip = "adaptive"

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **_GradientMechanism._parameter_constraints,
        "accountant": [Options(("zcdp",), why=CONTINUOUS_ONLY)],
        "clip_quantile": [_OPEN_UNIT],
        "clip_rate": [_POSITIVE],
        "clip_share": [_OPEN_UNIT],
        "precondition": [Options((True, False, "auto"))],
        "precondition_share": [_OPEN_UNIT],
        "precondition_ridge": [_POSITIVE],
    }

    def __init__(self, epsilon: float, delta: float, *, steps: int | None = None,
                 learning_rate: float | None = None, clip: Clip = None, output: Output = "suffix",
                 accountant: str = "zcdp", clip_quantile: float = ADAPTIVE_QUANTILE,
                 clip_rate: float = ADAPTIVE_RATE, clip_share: float = ADAPTIVE_SHARE,
                 precondition: bool | Literal["auto"] = "auto", precondition_share: float = PRECONDITIONER_SHARE,
                 precondition_ridge: float = PRECONDITIONER_RIDGE, max_steps: int = DEFAULT_MAX_STEPS,
                 ledger: Ledger | None = None) -> None:
        super().__init__(epsilon, delta, steps=steps, learning_rate=learning_rate, clip=clip, output=output,
                         max_steps=max_steps, ledger=ledger)
        self.accountant = accountant
        self.clip_quantile, self.clip_rate = float(clip_quantile), float(clip_rate)
        self.clip_share = float(clip_share)
        self.precondition = precondition
        self.precondition_share, self.precondition_ridge = float(precondition_share), float(precondition_ridge)

    def _preconditioned(self, problem: Problem) -> bool:
        """Whether this run steps in the metric of the private preconditioner (declarations only)."""
        reason = preconditioner_reason(problem)
        if self.precondition is True and reason is not None:
            raise MechanismError(f"precondition=True does not apply here: {reason}; pass precondition=False")
        return self.precondition is not False and reason is None

    def _step_size(self, problem: Problem) -> float:
        """With the preconditioner η defaults to 1 (the step of the quadratic bound); otherwise 1/β."""
        if self.learning_rate is None and self._preconditioned(problem):
            return 1.0
        return super()._step_size(problem)

    def _default_steps(self, problem: Problem, lipschitz: float, step: float, clip: float) -> int:
        """With the preconditioner T defaults to ``PRECONDITIONED_STEPS`` (capped by ``max_steps``);
        otherwise the noisy-GD bound's T (module docstring)."""
        if self._preconditioned(problem):
            return min(PRECONDITIONED_STEPS, self.max_steps)
        return super()._default_steps(problem, lipschitz, step, clip)

    def plan(self, problem: Problem, options: RunOptions | None = None) -> GradientPlan:
        lipschitz, clip, eta, steps = self._settings(problem)
        metric = None
        rho = zcdp_rho(self.privacy_level)
        if self._preconditioned(problem):
            metric = plan_preconditioner(problem, rho, self.precondition_share, self.precondition_ridge)
            rho -= metric.rho  # the steps get the rest: ρ_P + ρ_steps ≤ ρ
        plan = self._plan_steps(problem, lipschitz, clip, eta, steps, rho)
        if metric is None:
            return plan
        params = dict(plan.parameters)
        params.update(preconditioner="noisy Gram matrix (Böhning bound)", preconditioner_share=metric.share,
                      preconditioner_sigma=metric.gram.sigma, preconditioner_grid_step=metric.gram.gamma,
                      preconditioner_ridge=metric.ridge, preconditioner_sensitivity_l2=metric.gram.reach,
                      preconditioner_zcdp_rho=metric.rho, steps_zcdp_rho=params["zcdp_rho"],
                      zcdp_rho=params["zcdp_rho"] + metric.rho)
        return replace(plan, preconditioner=metric, parameters=params)

    def _plan_steps(self, problem: Problem, lipschitz: float, clip: float, eta: float, steps: int,
                    rho: float) -> GradientPlan:
        """The T noisy steps at zCDP ρ: fixed or adaptive clipping (module docstring)."""
        if not self.adaptive:
            noise = zcdp_gaussian_steps(2.0 * clip, problem.dim, steps, rho)
            params = self._parameters(steps, eta, clip, noise, self.accountant, lipschitz)
            return GradientPlan(steps, eta, clip, noise, 1.0, self._start(problem), problem=problem, parameters=params)
        noise, count = adaptive_steps(steps, problem.dim, rho, self.clip_share)
        adaptive = AdaptiveClip(self.clip_quantile, self.clip_rate, count, ADAPTIVE_FLOOR * clip)
        params = self._parameters(steps, eta, clip, noise, self.accountant, lipschitz)
        params.update(clip="adaptive", noise_scale=noise.sigma * clip, noise_multiplier=noise.sigma,
                      grid_unit="the current clip C_t", sensitivity_l2=2.0, clip_quantile=adaptive.quantile,
                      clip_rate=adaptive.rate, clip_share=self.clip_share, count_sigma=count.sigma,
                      count_grid_step=1.0, clip_floor=adaptive.floor, zcdp_rho=noise.rho + count.rho)
        return GradientPlan(steps, eta, clip, noise, 1.0, self._start(problem), adaptive,
                            problem=problem, parameters=params)

    def zcdp_rho(self, problem: Problem) -> float:
        """The run's ρ-zCDP (public, from the plan): T steps' ρ with σ as drawn."""
        return float(self.plan(problem).parameters["zcdp_rho"])

    def gdp_mu(self, problem: Problem) -> float:
        """μ = √(2ρ) with ρ the run's zCDP (public; used by :class:`~dpopt.PrivateSelection`).

        The run is not μ-GDP (its noise is discrete); it is ρ-zCDP, i.e. its Rényi DP is
        ε(λ) ≤ λρ = λμ²/2 at every order, which is the only property of a μ-GDP candidate that
        the papernot-steinke selection's RDP accounting uses (PS22 Thm 2).
        """
        return math.sqrt(2.0 * self.zcdp_rho(problem))


#: the note of a DP-SGD release accounted by the continuous Gaussian's subsampled PLD
PLD_NOTE = ("accountant='pld': the (ε, δ) rests on the continuous Gaussian's subsampled PLD, which is not proved "
            "for the exact discrete Gaussian noise this run drew; accountant='rdp' (the default) is proved")


class DPSGD(_GradientMechanism):
    """Noisy projected SGD with Poisson subsampling (DP-SGD): exact discrete Gaussian noise on a
    public grid, accounted by the subsampled discrete Gaussian's Rényi DP (default, proved, with
    amplification by sampling); module docstring.

    Parameters
    ----------
    epsilon : float
        ε > 0.
    delta : float
        δ ∈ (0, 1).
    sampling_rate : float, optional
        Poisson rate q ∈ (0, 1] (default 1/√n).
    steps : int, optional
        T ≥ 1 (default: DP-GD's default T).
    learning_rate, output, max_steps :
        As in :class:`DPGradientDescent`.
    clip : float or "lipschitz", default "lipschitz"
        A fixed per-example ℓ2 clip norm (default: the declared ℓ2 Lipschitz constant);
        ``"adaptive"`` is refused (module docstring).
    accountant : {"rdp", "zcdp", "pld"}
        ``"rdp"`` (default): the proved Rényi DP bound of the Poisson-subsampled discrete
        Gaussian under replace-one (:mod:`dpopt.privacy.subsampled_rdp`), σ about 1.1·q times
        the unamplified one; the unamplified zCDP σ where that is smaller.  ``"zcdp"``: proved ([CKS20]) and
        without amplification, so σ is DP-GD's.  ``"pld"``: σ from dp-accounting's PLD of the
        Poisson-subsampled *continuous* Gaussian at the one-sided distance C + γ√d; not proved
        for the discrete Gaussian the run draws (module docstring), and the release says so.
    ledger : Ledger, optional
        As in :class:`~dpopt.mechanisms.base.Mechanism`.

    Notes
    -----
    Release parameters: ``grid_step`` γ and ``noise_scale`` σ on the batch sum, ``accountant``,
    ``sampling_rate`` q and ``inclusion_probability`` (q on the sampler's grid of 2⁻⁵³),
    ``sensitivity_l2_on_grid`` (2C + γ√d) and ``row_reach_l2`` (C + γ√d); with ``"rdp"`` the
    certificate ``rdp_epsilon`` ≤ ε and its order ``rdp_order``; ``zcdp_rho`` where the run is
    accounted by zCDP, otherwise the proved but unamplified ``zcdp_rho_without_amplification``
    of the same σ.
    """

    name = "DPSGD"
    theorem = ("ACG+16 Alg. 1 with Poisson sampling; discrete Gaussian on a grid; Rényi DP of the Poisson-subsampled "
               "discrete Gaussian under replace-one (WBK19, ZW19, CKS20; docs/exact-noise.md), or zCDP without "
               "amplification [CKS20], or the continuous Gaussian's subsampled PLD (opt-in, not proved)")

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **_GradientMechanism._parameter_constraints,
        "sampling_rate": [Interval(Real, 0, 1, closed="right"), None],
        "accountant": [Options(("rdp", "zcdp", "pld"))],
    }

    def __init__(self, epsilon: float, delta: float, *, sampling_rate: float | None = None,
                 steps: int | None = None, learning_rate: float | None = None, clip: Clip = None,
                 output: Output = "average", accountant: str = "rdp", max_steps: int = DEFAULT_MAX_STEPS,
                 ledger: Ledger | None = None) -> None:
        super().__init__(epsilon, delta, steps=steps, learning_rate=learning_rate, clip=clip, output=output,
                         max_steps=max_steps, ledger=ledger)
        self.sampling_rate = None if sampling_rate is None else float(sampling_rate)
        self.accountant = accountant
        if self.adaptive:
            raise MechanismError("DPSGD does not implement clip='adaptive' (the noisy count would need the "
                                 "subsampled accounting of Andrew et al. 2021); use DPGradientDescent or a "
                                 "fixed clip")

    def plan(self, problem: Problem, options: RunOptions | None = None) -> GradientPlan:
        lipschitz, clip, eta, steps = self._settings(problem)
        q = self.sampling_rate if self.sampling_rate is not None else min(1.0, 1.0 / math.sqrt(problem.n))
        unamplified = zcdp_gaussian_steps(2.0 * clip, problem.dim, steps, zcdp_rho(self.privacy_level))
        extra: dict[str, Any] = {}
        if self.accountant == "rdp":
            sampled = sampled_steps(clip, problem.dim, steps, q, self.epsilon, self.delta)
            if sampled is None or unamplified.noise.param <= sampled[0].noise.param:  # the proved zCDP is smaller
                noise, label = unamplified, "zcdp (no amplification: smaller than the subsampled RDP bound here)"
            else:
                noise, label = sampled[0], "rdp (Poisson-subsampled discrete Gaussian, replace-one)"
                extra = {"rdp_epsilon": sampled[1], "rdp_order": sampled[2]}
        elif self.accountant == "zcdp":
            noise, label = unamplified, "zcdp (no amplification)"
        else:  # z = σ/Δ₁ for the one-sided distance Δ₁ = C + γ√d of the rounded sums with and without a row
            row_reach = grid_reach(2.0 * clip, problem.dim)[1] - clip
            sigma = row_reach * sampled_gaussian_multiplier(inclusion_probability(q), steps, self.epsilon, self.delta)
            noise = grid_gaussian_steps(sigma, 2.0 * clip, problem.dim, steps)
            label = "pld (Poisson-subsampled continuous Gaussian; not proved for the discrete noise)"
        params = self._parameters(steps, eta, clip, noise, label, lipschitz)
        if not label.startswith("zcdp"):
            params["zcdp_rho_without_amplification"] = params.pop("zcdp_rho")
        params.update(extra, sampling_rate=q, inclusion_probability=inclusion_probability(q), sampling="poisson",
                      expected_batch=q * problem.n, row_reach_l2=noise.reach - clip)
        notes = (PLD_NOTE,) if self.accountant == "pld" else ()
        return GradientPlan(steps, eta, clip, noise, q, self._start(problem), problem=problem, parameters=params,
                            notes=notes)

    def _batch(self, rng: np.random.Generator, n: int, rate: float) -> np.ndarray:
        """The rows of one step: a Poisson sample (the accounting's assumption)."""
        return poisson_batch(rng, n, rate)

    def _noisy_gradient(self, clipped: ClippedGradient, theta: np.ndarray, plan: GradientPlan,
                        units: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """(Σ_{i∈B} clip_C(g_i) on the grid + K γ) / (qn) with B a Poisson sample."""
        n = clipped.loss.data.n
        rows = self._batch(rng, n, plan.sampling_rate)
        return plan.noise.release(clipped.sum_over(theta, rows), units) / (plan.sampling_rate * n)
