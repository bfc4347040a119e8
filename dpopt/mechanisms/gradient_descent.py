"""Gradient perturbation: noisy (stochastic) projected gradient descent.

:class:`DPGradientDescent` (full batch; Bassily, Smith and Thakurta 2014, Alg. 1 without
sampling, as benchmarked by Yu et al. 2020 "Gradient perturbation is underrated") and
:class:`DPSGD` (Poisson-subsampled; Abadi et al. 2016, Alg. 1) run T steps

    θ_{t+1} = prox_{ηr, C}(θ_t − η (ĝ_t + λθ_t)),

from the centre of C (or 0), where ĝ_t is a noisy estimate of the average gradient of
the loss, λ the weight of an ``L2Squared`` regularizer and prox the exact proximal map of
an ``L1Norm`` regularizer over C (:func:`dpopt.numerics.prox.composite_prox`).  The output
is the average of θ_1..θ_T (``output="average"``, default: the iterate the convex rate
below is stated for) or the last iterate (``output="last"``).  Both are
post-processing of the noisy gradients and cost the same.

Privacy (replace-one neighbours).  Every per-example gradient is clipped to ℓ2 norm C
(:class:`~dpopt.numerics.clipping.ClippedGradient`; C defaults to the loss's declared ℓ2
Lipschitz constant, where clipping changes nothing inside the declared domain), so
replacing one row moves the sum of clipped gradients by at most 2C wherever θ is.

* DP-GD: ĝ_t = (Σ_i clip_C(g_i) + N(0, σ²I))/n.  Each step is a Gaussian mechanism with
  sensitivity 2C, hence (2C/σ)-GDP; T adaptive steps are exactly μ-GDP with
  μ = 2C√T/σ (Dong, Roth and Su 2022, Cor. 3.3), so σ is the analytic Gaussian σ
  (Balle and Wang 2018) for sensitivity 2C√T (``accountant="analytic"``, exact) or
  dp-accounting's PLD (``"pld"``, an upper bound converging to it).
* Adaptive clipping (DP-GD's default, ``clip="adaptive"``; Andrew, Thakkar, McMahan and
  Ramaswamy 2021, "Differentially private learning with adaptive clipping", Alg. 1 with
  its geometric update).  Each step also releases the noisy count
  b̃_t = #{i : ‖g_i‖ ≤ C_t} + N(0, σ_b²) and sets
  C_{t+1} = C_t · exp(−η_C (b̃_t/n − γ)), clamped to [C_0/100, C_0] with C_0 = L: C_t tracks
  the γ-quantile of the per-example gradient norms (post-processing of noisy releases).
  The gradient noise is σ_t = z C_t, so step t releases a Gaussian vector whose
  replace-one sensitivity, in units of its noise, is √((2/z)² + (1/σ_b)²) (the sum moves by
  2C_t, the count by 1) whatever C_t is: T adaptive steps are exactly μ-GDP with
  μ = √T · √(4/z² + 1/σ_b²).  z and σ_b give the count a share ``clip_share`` of each
  step's μ²: with u the per-step noise of a unit-sensitivity T-fold composition at (ε, δ),
  z = 2u/√(1 − share) and σ_b = u/√share.  The loss-gradient step is scaled by C_0/C_t
  (a clipped gradient is at most C_t long, so the step keeps the length η C_0 of the
  unclipped method; λθ and the prox keep η).  Defaults γ = 0.8, η_C = 0.2,
  share = 0.05.  Andrew et al.'s γ = 0.5 collapses C for logistic regression: near the
  optimum most examples are classified with margin and their gradients vanish, so the
  median norm goes to 0.  γ was picked among 0.5–0.9 on Adult (``dpopt bench linear``):
  accuracies for 0.7–0.9 agree within 0.005 at every ε, so the default does not hinge
  on that look at the data; the budget does not pay for it, and the benchmark says so.
* DP-SGD: every row enters the batch B_t independently with probability q (Poisson
  sampling, :func:`poisson_batch`), ĝ_t = (Σ_{i∈B_t} clip_C(g_i) + N(0, σ²I))/(qn), an
  unbiased estimate of the clipped average gradient.  σ = zC with z the smallest
  multiplier whose T-fold Poisson-subsampled Gaussian composition is (ε, δ)-DP under
  replace-one, by dp-accounting's PLD accountant
  (:func:`dpopt.privacy.accountant.sampled_gaussian_multiplier`).  The accounting holds
  only for Poisson sampling: batches of a fixed size taken in data order (a loader
  without shuffling) put the same rows in every batch and are not amplified at all
  (``tests/mechanisms/test_gradient_descent.py`` audits that mutant).

Defaults (public: declared constants, n, d, ε, δ; never the data).

* ``learning_rate``: η = 1/β with β the declared smoothness of the average loss plus λ
  (the classical step of smooth gradient descent).  Non-smooth losses need an explicit η.
* ``steps`` (DP-GD): the T minimizing the bound on the averaged iterate of noisy
  gradient descent for a β-smooth convex objective with start distance R,
  R²/(2ηT) + η d σ_T²/(2n²) with σ_T = 2C√T/μ, i.e. T = R μ n / (2 η C √d), clamped to
  [1, ``max_steps``].  R is the ℓ2 radius of C, or L/λ (a bound on ‖θ*‖ for an
  L2Squared weight λ) when there is no set; without either, ``steps`` is required.
* DP-SGD: q = 1/√n (expected batch √n), and DP-GD's T and η.  With T and η fixed, a small
  q multiplies the noise an accountant needs by about q (the subsampled Gaussian is close
  to (2q√T/z)-GDP when z is large), and the estimate is divided by qn instead of n, so the
  noise per step matches DP-GD's while a step reads about √n rows instead of n.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np

from dpopt.errors import MechanismError
from dpopt.mechanisms.base import STEPS, Mechanism, Plan, RunOptions, SolverNeed
from dpopt.mechanisms.params import Integral, Interval, Options, Real, arguments
from dpopt.mechanisms.pipeline import Outcome
from dpopt.modeling.problem import Problem
from dpopt.numerics.clipping import ClippedGradient
from dpopt.numerics.prox import composite_prox, prox_supported
from dpopt.privacy.accountant import gaussian_sigma_for_composition, sampled_gaussian_multiplier
from dpopt.privacy.calibration import gaussian_sigma_analytic
from dpopt.privacy.ledger import Ledger
from dpopt.privacy.sampling import gaussian_noise
from dpopt.progress import counted

__all__ = ["AdaptiveClip", "DPGradientDescent", "DPSGD", "GradientPlan", "default_steps", "poisson_batch"]

Output = Literal["last", "average"]
#: cap on the default T (a public bound on the run time: a step reads every row)
DEFAULT_MAX_STEPS = 1_000
#: adaptive clipping defaults (module docstring): target quantile γ, rate η_C, count share
ADAPTIVE_QUANTILE, ADAPTIVE_RATE, ADAPTIVE_SHARE = 0.8, 0.2, 0.05
#: the adaptive clip stays in [C_0 · ADAPTIVE_FLOOR, C_0]
ADAPTIVE_FLOOR = 0.01
Clip = float | Literal["adaptive", "lipschitz"] | None


@dataclass(frozen=True)
class AdaptiveClip:
    """The public settings of adaptive clipping (module docstring)."""

    quantile: float  # γ
    rate: float  # η_C
    count_sigma: float  # σ_b, on the count #{i : ‖g_i‖ ≤ C_t}
    floor: float  # smallest C_t


@dataclass(frozen=True)
class GradientPlan(Plan):
    """A calibrated run: public settings only (no data values)."""

    steps: int
    learning_rate: float
    clip: float
    sigma: float  # noise standard deviation on the *sum* of clipped gradients
    sampling_rate: float  # 1.0 for full batch
    start: np.ndarray
    adaptive: AdaptiveClip | None = None  # None: the clip stays ``clip`` (sigma stays ``sigma``)


def poisson_batch(rng: np.random.Generator, n: int, rate: float) -> np.ndarray:
    """Indices of a Poisson sample: every row independently with probability ``rate``.

    The batch size is Binomial(n, q), not fixed: the accounting of :class:`DPSGD` needs it.
    """
    return np.flatnonzero(rng.random(n) < rate)


def default_steps(radius: float, mu: float, n: int, step: float, clip: float, dim: int,
                  max_steps: int) -> int:
    """T = R μ n / (2 η C √d), the minimizer of the noisy-GD bound (module docstring), in [1, max_steps]."""
    t = radius * mu * n / (2.0 * step * clip * math.sqrt(dim))
    return int(min(max(1, math.ceil(t)), max_steps))


#: a setting in the open interval (0, 1)
_OPEN_UNIT = Interval(Real, 0, 1, closed="neither")
#: a finite setting > 0
_POSITIVE = Interval(Real, 0, None, closed="neither")


class _GradientMechanism(Mechanism):
    """Shared set-up of DP-GD and DP-SGD (validation, defaults, the iteration)."""

    needs = SolverNeed.NONE  # closed-form steps
    #: what ``clip=None`` means for this mechanism
    default_clip: Literal["adaptive", "lipschitz"] = "lipschitz"
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **Mechanism._parameter_constraints,
        "delta": [Interval(Real, 0, 1, closed="neither", why="Gaussian noise needs δ > 0")],
        "steps": STEPS,
        "learning_rate": [_POSITIVE, None],
        "clip": [_POSITIVE, Options(("lipschitz", "adaptive")), None],
        "output": [Options(("average", "last"))],
        "max_steps": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, epsilon: float, delta: float, *, steps: int | None = None,
                 learning_rate: float | None = None, clip: Clip = None, output: Output = "average",
                 max_steps: int = DEFAULT_MAX_STEPS, ledger: Ledger | None = None) -> None:
        self._validate(arguments(locals()))
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
        mu = 1.0 / gaussian_sigma_analytic(1.0, self.epsilon, self.delta)  # the whole run's GDP μ
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
                        rng: np.random.Generator) -> np.ndarray:
        """(Σ clip_C(g_i) + N(0, σ²I)) / n: the full-batch estimate (DP-SGD overrides it)."""
        n = clipped.loss.data.n
        return (clipped(theta) * n + gaussian_noise(rng, plan.sigma, theta.shape[0])) / n

    def _iterate(self, problem: Problem, plan: GradientPlan, rng: np.random.Generator) -> Outcome:
        clipped = ClippedGradient(problem.loss, norm=2, bound=plan.clip)
        eta, lam, l1 = plan.learning_rate, problem.l2_weight, problem.l1_weight
        theta = plan.start.copy()
        total = np.zeros_like(theta)
        bound = plan.clip
        for _ in counted(plan.steps, f"{self.name} iterations"):
            if plan.adaptive is None:
                g = self._noisy_gradient(clipped, theta, plan, rng)
            else:
                g, bound_next = self._adaptive_gradient(clipped, theta, plan, bound, rng)
                g *= plan.clip / bound  # the step of length η C_0 (module docstring)
                bound = bound_next
            if lam:
                g = g + lam * theta
            theta = composite_prox(problem.constraint, l1, theta - eta * g, eta)
            total += theta
        out = theta if self.output == "last" else total / plan.steps
        return Outcome(out, details={} if plan.adaptive is None else {"clip_final": bound})

    @staticmethod
    def _adaptive_gradient(clipped: ClippedGradient, theta: np.ndarray, plan: GradientPlan, bound: float,
                           rng: np.random.Generator) -> tuple[np.ndarray, float]:
        """One adaptive-clipping step: the noisy average gradient clipped to ``bound`` and the
        next bound from the noisy count of unclipped examples (Andrew et al. 2021, Alg. 1)."""
        ad = plan.adaptive
        assert ad is not None
        n = clipped.loss.data.n
        total, count = clipped.sum_and_count(theta, bound)
        noise_sd = plan.sigma * bound / plan.clip  # σ_t = z C_t
        g = (total + gaussian_noise(rng, noise_sd, theta.shape[0])) / n
        fraction = (count + float(gaussian_noise(rng, ad.count_sigma, 1)[0])) / n
        step = bound * math.exp(-ad.rate * (fraction - ad.quantile))
        return g, min(max(step, ad.floor), plan.clip)

    def _parameters(self, plan_steps: int, eta: float, clip: float, sigma: float, accountant: str,
                    lipschitz: float) -> dict[str, Any]:
        return {
            "steps": plan_steps, "learning_rate": eta, "clip": "fixed", "clip_l2": clip, "lipschitz_l2": lipschitz,
            "noise": "gaussian", "noise_scale": sigma, "noise_multiplier": sigma / clip, "accountant": accountant,
            "output": self.output, "neighbouring": "replace-one",
        }


class DPGradientDescent(_GradientMechanism):
    """Noisy projected full-batch gradient descent (DP-GD), calibrated exactly by μ-GDP.

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
        (0.2) and the count's share of each step's μ² in (0, 1) (0.05).
    output : {"average", "last"}
        The average of the iterates (default) or the last iterate.
    accountant : {"analytic", "pld"}
        Exact μ-GDP composition (default) or dp-accounting's PLD.
    max_steps : int
        Cap on the default T.
    ledger : Ledger, optional
        As in :class:`~dpopt.mechanisms.base.Mechanism`.

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
    theorem = "BST14 Alg. 1 (full batch); exact μ-GDP composition (Dong–Roth–Su 2022, Cor. 3.3)"

    default_clip = "adaptive"

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **_GradientMechanism._parameter_constraints,
        "accountant": [Options(("analytic", "pld"))],
        "clip_quantile": [_OPEN_UNIT],
        "clip_rate": [_POSITIVE],
        "clip_share": [_OPEN_UNIT],
    }

    def __init__(self, epsilon: float, delta: float, *, steps: int | None = None,
                 learning_rate: float | None = None, clip: Clip = None, output: Output = "average",
                 accountant: str = "analytic", clip_quantile: float = ADAPTIVE_QUANTILE,
                 clip_rate: float = ADAPTIVE_RATE, clip_share: float = ADAPTIVE_SHARE,
                 max_steps: int = DEFAULT_MAX_STEPS, ledger: Ledger | None = None) -> None:
        self._validate(arguments(locals()))
        super().__init__(epsilon, delta, steps=steps, learning_rate=learning_rate, clip=clip, output=output,
                         max_steps=max_steps, ledger=ledger)
        self.accountant = accountant
        self.clip_quantile, self.clip_rate = float(clip_quantile), float(clip_rate)
        self.clip_share = float(clip_share)

    def plan(self, problem: Problem, options: RunOptions | None = None) -> GradientPlan:
        lipschitz, clip, eta, steps = self._settings(problem)
        if not self.adaptive:
            sigma = gaussian_sigma_for_composition(2.0 * clip, steps, self.epsilon, self.delta, self.accountant)
            params = self._parameters(steps, eta, clip, sigma, self.accountant, lipschitz)
            params["gdp_mu"] = 2.0 * clip * math.sqrt(steps) / sigma
            return GradientPlan(steps, eta, clip, sigma, 1.0, self._start(problem), problem=problem, parameters=params)
        unit = gaussian_sigma_for_composition(1.0, steps, self.epsilon, self.delta, self.accountant)
        z = 2.0 * unit / math.sqrt(1.0 - self.clip_share)
        adaptive = AdaptiveClip(self.clip_quantile, self.clip_rate, unit / math.sqrt(self.clip_share),
                                ADAPTIVE_FLOOR * clip)
        params = self._parameters(steps, eta, clip, z * clip, self.accountant, lipschitz)
        params.update(clip="adaptive", clip_quantile=adaptive.quantile, clip_rate=adaptive.rate,
                      clip_share=self.clip_share, count_sigma=adaptive.count_sigma, clip_floor=adaptive.floor,
                      gdp_mu=math.sqrt(steps) / unit)
        return GradientPlan(steps, eta, clip, z * clip, 1.0, self._start(problem), adaptive,
                            problem=problem, parameters=params)

    def gdp_mu(self, problem: Problem) -> float:
        """The run's exact μ-GDP parameter (public; used by :class:`~dpopt.PrivateSelection`)."""
        return float(self.plan(problem).parameters["gdp_mu"])


class DPSGD(_GradientMechanism):
    """Noisy projected SGD with Poisson subsampling (DP-SGD), accounted by PLD (replace-one).

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
    ledger : Ledger, optional
        As in :class:`~dpopt.mechanisms.base.Mechanism`.
    """

    name = "DPSGD"
    theorem = "ACG+16 Alg. 1 with Poisson sampling; PLD accounting, replace-one (dp-accounting)"

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **_GradientMechanism._parameter_constraints,
        "sampling_rate": [Interval(Real, 0, 1, closed="right"), None],
    }

    def __init__(self, epsilon: float, delta: float, *, sampling_rate: float | None = None,
                 steps: int | None = None, learning_rate: float | None = None, clip: Clip = None,
                 output: Output = "average", max_steps: int = DEFAULT_MAX_STEPS,
                 ledger: Ledger | None = None) -> None:
        self._validate(arguments(locals()))
        super().__init__(epsilon, delta, steps=steps, learning_rate=learning_rate, clip=clip, output=output,
                         max_steps=max_steps, ledger=ledger)
        self.sampling_rate = None if sampling_rate is None else float(sampling_rate)
        if self.adaptive:
            raise MechanismError("DPSGD does not implement clip='adaptive' (the noisy count would need the "
                                 "subsampled accounting of Andrew et al. 2021); use DPGradientDescent or a "
                                 "fixed clip")

    def plan(self, problem: Problem, options: RunOptions | None = None) -> GradientPlan:
        lipschitz, clip, eta, steps = self._settings(problem)
        q = self.sampling_rate if self.sampling_rate is not None else min(1.0, 1.0 / math.sqrt(problem.n))
        sigma = clip * sampled_gaussian_multiplier(q, steps, self.epsilon, self.delta)
        params = self._parameters(steps, eta, clip, sigma, "pld (Poisson-subsampled Gaussian)", lipschitz)
        params.update(sampling_rate=q, sampling="poisson", expected_batch=q * problem.n)
        return GradientPlan(steps, eta, clip, sigma, q, self._start(problem), problem=problem, parameters=params)

    def _batch(self, rng: np.random.Generator, n: int, rate: float) -> np.ndarray:
        """The rows of one step: a Poisson sample (the accounting's assumption)."""
        return poisson_batch(rng, n, rate)

    def _noisy_gradient(self, clipped: ClippedGradient, theta: np.ndarray, plan: GradientPlan,
                        rng: np.random.Generator) -> np.ndarray:
        """(Σ_{i∈B} clip_C(g_i) + N(0, σ²I)) / (qn) with B a Poisson sample."""
        n = clipped.loss.data.n
        rows = self._batch(rng, n, plan.sampling_rate)
        total = clipped.sum_over(theta, rows)
        return (total + gaussian_noise(rng, plan.sigma, theta.shape[0])) / (plan.sampling_rate * n)
