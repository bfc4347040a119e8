"""Objective perturbation over a convex set (Talwar–Thakurta–Zhang 2014, Alg. 2,
after Kifer–Smith–Thakurta 2012 and Chaudhuri–Monteleoni–Sarwate 2011).

Normalisation
-------------
All noise scales refer to the **normalized** objective (average loss):

    θ^priv = argmin_{θ∈C}  (1/n) Σ_i ℓ(θ; d_i) + r(θ) + (ζ/2)‖θ − θ₀‖² + ⟨β, θ⟩,

with β = b/n, where b is the noise of the *unnormalized* analysis (sum of
losses), so ``parameters["noise_scale"]`` is the scale of β and equals the
unnormalized scale divided by n.

Privacy (replace-one neighbours; ℓ convex, GLM with rank-one Hessian, ‖∇ℓ‖₂ ≤ L
and ∇²ℓ ⪯ λI on C, all from declared bounds).  In unnormalized form the output
θ determines b = −∇(Σℓ + n r + nζ/2‖·−θ₀‖²)(θ); for neighbours D, D' the two
noise values differ by g = ∇ℓ(θ; d) − ∇ℓ(θ; d'), ‖g‖ ≤ 2L, g ∈ span{x, x'}.
The privacy loss splits into three parts, ε = ε_J + ε_b + ε_A:

* Jacobian (KST12 Thm. 2's argument): the Hessians differ by rank ≤ 2 with
  eigenvalues ≤ λ, so the determinant ratio is at most 1 + λ/(n μ), μ the
  strong convexity of the normalized objective including ζ.  ζ is the smallest
  value with log(1 + λ/(n(μ₀ + ζ))) ≤ ε_J: if the regularizer's μ₀ already
  suffices ζ = 0 and ε_J = log(1 + λ/(nμ₀)) (as in CMS11 Alg. 2), otherwise
  ε_J = ε/2 and ζ = λ/(n(e^{ε/2} − 1)) − μ₀.  TTZ14 Alg. 2 line 1 sets
  ζ = 2λ/(nε) − λ_min; since log(1 + ε/2) ≤ ε/2, our exact requirement is
  slightly smaller and still sufficient.
* Noise density ratio, δ = 0: b ∝ exp(−ε_b‖b‖/(2L)) (ℓ2-Laplace, CMS11), ratio ≤ e^{ε_b}.
  For δ > 0 the mechanism uses the Gaussian below or this ℓ2-Laplace law,
  whichever has the smaller expected norm in d dimensions (an ε_b-DP law is
  also (ε_b, δ_b)-DP); ``parameters["noise"]`` says which.
  δ > 0: b ~ N(0, σ²I). For an output θ, b = b_D(θ) is the noise that yields θ on D
  and b_{D'}(θ) = b + g the one on D'; the log-ratio is
  L = ln p(b)/p(b + g) = (2⟨b, g⟩ + ‖g‖²)/(2σ²), and ⟨b, g⟩ ≤ ‖P_S b‖·2L with
  S = span{x, x'} (fixed by the pair, dimension ≤ 2) because g ∈ S, ‖g‖ ≤ 2L.  With
  the Jacobian ratio in [e^{−ε_J}, e^{ε_J}] (both directions, D and D' play symmetric
  roles), for any set S' of outputs
  P_D(S') − e^{ε_J+ε_b} P_{D'}(S') ≤ ∫ |J_D| (p(b_D) − e^{ε_b} p(b_{D'}))₊ dθ
  = E_b[(1 − e^{ε_b − L})₊], so with R = ‖P_S b‖/σ ~ χ₂ (χ₁ if x ∥ x', which is
  stochastically smaller) and a = 2L/σ,
  δ_b(ε_b) ≤ E[(1 − e^{ε_b − aR − a²/2})₊], since the integrand increases with L.
  Only the upper bound on L is used, and the same bound holds with D and D'
  swapped, so this one-sided profile gives the two-sided (ε_b, δ_b) guarantee.
  σ is the smallest value with δ_b(ε_b) ≤ δ_b (``calibration="chi2-profile"``,
  default; :func:`dpopt.privacy.profiles.chi_shift_sigma`), about 0.83–0.88× the
  cutoff σ = 2L/(√(c² + 2ε_b) − c), c = √(2 ln(1/δ_b)) (``calibration="cutoff"``:
  P(R > c) = δ_b exactly for χ₂, then L ≤ ac + a²/2 = ε_b off that set).
  **TTZ14 Alg. 2 states σ² = 2L² log(1/δ)/(nε)²,
  which is the Gaussian mechanism's constant for sensitivity L and ignores
  both the 2L sensitivity and the Jacobian term; it does not follow from KST12
  and we do not use it.**
* Approximate oracle (ε_A, δ_A): the solver's point x is only within a proven
  distance ``tolerance`` of the exact θ^priv; x is released on a public grid (below)
  with exact discrete noise calibrated to sensitivity 2·tolerance.  Conditioned on the
  exact optimum, neighbours' outputs are then (ε_A, δ_A)-close, and adaptive
  composition gives the total (as in Iyengar et al. 2019, "approximate minima
  perturbation").  The scale uses the *declared* tolerance, never the measured one.

The released value (exact, on a public grid)
--------------------------------------------
The release is ``round(x/γ)·γ + K·γ`` with γ = 2^⌊log2(2·tolerance/(256·√d))⌋, the grid of
every additive release (:func:`dpopt.privacy.grid.grid_step` of the sensitivity 2·tolerance;
public: the declared tolerance and d only; ``parameters["grid_step"]``), and K an exact
discrete Gaussian (δ > 0, when its expected norm is smaller) or discrete Laplace vector on
ℤ^d ([CKS20], Algs. 1–3) calibrated by the discrete law's own guarantee to the rounded
centres' reach 2·tolerance/γ + √d grid steps in ℓ2 (the Gaussian's zCDP with the [CKS20]
conversion; the Laplace in ℓ1, √d·2·tolerance/γ + d).  The grid is finer than the
tolerance, and that is safe: the bits of a release below the tolerance are those of
K·γ, whose law does not depend on the data, and the reachable values are all of γℤ^d
whatever the centre.  A grid as coarse as the tolerance would add √d whole steps to the
sensitivity (measured: ×6 on the output noise of the README example) and protect nothing
more.
Every released coordinate is an integer multiple of γ, and the reachable multiples do not
depend on the data (nor on whether the accelerator or the fallback answered: both points
are within the tolerance).  Everything after the discrete noisy value is post-processing.

Why the continuous proof still covers the linear noise: β is never released.  It only
shapes the objective; what leaves the mechanism is a grid release of the certified
point x, and x is within ``tolerance`` of θ^priv(β), the exact argmin, which the Jacobian
argument above treats as a function of the noise with a density.  The approximate-oracle
step is the additive release of x, now exact on the grid, so the composition above holds
as stated.  What is still floating point: the draw of β (continuous Gaussian or ℓ2-Laplace
from the run's generator, as the density argument requires), the objective and the solver's
or fallback's computation of x; none of them is released, and the grid release's
reachable set does not depend on their low-order bits.

The split is ε_A = approx_share·ε, δ_A = approx_share·δ, and the rest goes to
ε_b, δ_b.  Utility: Theorem 4.1 of TTZ (excess risk O(L G_C √log(1/δ)/(εn) + λ‖C‖²/(εn))).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from dpopt.errors import MechanismError
from dpopt.mechanisms.base import OnUncertified
from dpopt.mechanisms.constrained import unbounded_lipschitz
from dpopt.mechanisms.convex import ConvexMechanism, ConvexPlan, template_problem
from dpopt.mechanisms.params import Interval, Options, Real, Vector
from dpopt.modeling.problem import Problem
from dpopt.privacy.calibration import Budget, budget_pair
from dpopt.privacy.ledger import Ledger
from dpopt.privacy.noise_spec import NoiseChoice, NoiseSpec, choose
from dpopt.privacy.profiles import chi_shift_sigma, cutoff_shift_sigma

#: the Gaussian-branch calibrations of :func:`gaussian_objective_sigma`
CALIBRATIONS = ("chi2-profile", "cutoff")


def gaussian_objective_sigma(lipschitz: float, epsilon: float | Budget, delta: float | None, *,
                             calibration: str = "chi2-profile") -> float:
    """σ of the unnormalized linear noise for ε_b, δ_b (see the module docstring).

    Parameters
    ----------
    lipschitz : float
        L, the declared bound on ‖∇ℓ‖₂ (the noise difference has norm ≤ 2L).
    epsilon, delta : float, or a Budget and None
        ε_b > 0 and 0 < δ_b < 1, the noise term's share (a Budget: derived from a checked level,
        not checked again).
    calibration : {"chi2-profile", "cutoff"}
        ``"chi2-profile"``: the smallest σ with E[(1 − e^{ε − aR − a²/2})₊] ≤ δ,
        a = 2L/σ, R ~ χ₂ (:func:`dpopt.privacy.profiles.chi_shift_sigma`).
        ``"cutoff"``: σ = 2L/(√(c² + 2ε) − c), c = √(2 ln(1/δ)), the χ₂ tail cut at δ.

    Returns
    -------
    float
        σ.
    """
    if calibration == "chi2-profile":
        return chi_shift_sigma(2.0 * lipschitz, epsilon, delta, 2)
    if calibration == "cutoff":
        eps, dlt = budget_pair(epsilon, delta, allow_zero_delta=False)
        return cutoff_shift_sigma(2.0 * lipschitz, eps, math.sqrt(2.0 * math.log(1.0 / dlt)))
    raise MechanismError(f"calibration must be one of {', '.join(map(repr, CALIBRATIONS))}, got {calibration!r}")


def jacobian_split(hessian_bound: float, n: int, mu0: float, epsilon: float,
                   share: float = 0.5) -> tuple[float, float]:
    """(ε_J, ζ): the Jacobian share of ε and the added strong convexity ζ.

    ε_J = ``share``·ε and ζ = λ/(n(e^{ε_J} − 1)) − μ₀, unless the regularizer's μ₀ alone
    already gives log(1 + λ/(nμ₀)) ≤ share·ε (then ζ = 0 and ε_J is that smaller value).
    """
    if mu0 > 0:
        eps_j = math.log1p(hessian_bound / (n * mu0))
        if eps_j <= share * epsilon:
            return eps_j, 0.0
    eps_j = share * epsilon
    zeta = hessian_bound / (n * math.expm1(eps_j)) - mu0
    return eps_j, max(zeta, 0.0)


#: the Jacobian shares ``split="auto"`` chooses from
SPLIT_GRID = tuple(i / 40 for i in range(1, 40))


def risk_bound(sigma: float, zeta: float, radius: float, n: int, dim: int) -> float:
    """The excess-risk bound the ``"auto"`` split minimizes: 2R·E‖β‖ + ζR²/2.

    With β the normalized linear noise (E‖β‖ ≤ σ√d/n) and the added (ζ/2)‖θ − θ₀‖², the
    perturbed minimizer θ̂ satisfies F(θ̂) − F(θ*) ≤ ⟨β, θ* − θ̂⟩ + (ζ/2)‖θ* − θ₀‖²
    ≤ 2R‖β‖ + ζR²/2 on a set of ℓ2 radius R (TTZ14 Thm 4.1's two terms, constants explicit).
    """
    return 2.0 * radius * sigma * math.sqrt(dim) / n + 0.5 * zeta * radius**2


def auto_split(hessian_bound: float, n: int, mu0: float, epsilon: float, delta: float, lipschitz: float,
               radius: float, dim: int, calibration: str) -> float:
    """The Jacobian share of ε minimizing :func:`risk_bound` over :data:`SPLIT_GRID`.

    Every candidate share is calibrated by the same privacy profile (σ for the remaining
    ε_b at δ_b), so each is a valid (ε, δ) split; the choice reads public constants only
    (Redberg, Koskela and Wang 2023 show the fixed ε/2 of TTZ14/KST12 is far from the best
    split; they tune it, here it is the minimizer of the explicit bound).
    """
    best, best_share = math.inf, 0.5
    for share in SPLIT_GRID:
        eps_j, zeta = jacobian_split(hessian_bound, n, mu0, epsilon, share)
        # ε − ε_J > 0 and δ come from the mechanism's checked level: each share is not checked again
        sigma = gaussian_objective_sigma(lipschitz, Budget(epsilon - eps_j, delta), None, calibration=calibration)
        value = risk_bound(sigma, zeta, radius, n, dim)
        if value < best:
            best, best_share = value, share
    return best_share


class ObjectivePerturbation(ConvexMechanism):
    """Objective perturbation over a convex set (TTZ14 Alg. 2 / KST12 / CMS11).

    Parameters
    ----------
    epsilon, delta : float
        Target guarantee; δ = 0 gives pure ε-DP (ℓ2-Laplace linear noise, discrete Laplace output noise).
    approx_share : float
        Fraction of ε (and δ) reserved for the approximate-oracle correction.
    theta0 : array_like, optional
        Centre of the added quadratic term (default: the constraint set's centre, or 0).
    calibration : {"chi2-profile", "cutoff"}
        σ of the Gaussian branch (module docstring); reported as
        ``parameters["calibration"]`` when the Gaussian law is used.
    split : float or "auto"
        The share of ε (after the approximate-oracle part) given to the Jacobian term, in
        (0, 1).  ``"auto"`` (default) takes the share minimizing the explicit excess-risk
        bound 2R·E‖β‖ + ζR²/2 (:func:`auto_split`) when the problem has a bounded constraint set
        of ℓ2 radius R (or an L2Squared weight λ, R = L/λ), else 0.5 (TTZ14 Alg. 2's ε/2).
    ledger, tolerance, on_uncertified :
        As in :class:`~dpopt.mechanisms.convex.ConvexMechanism`.
    noise : {"auto", "gaussian", "l2-laplace"}
        The law of the linear noise β (continuous, never released): Gaussian or ℓ2-Laplace,
        ``"auto"`` the smaller expected norm.  The released point's output noise is always the
        exact law on the grid ``parameters["grid_step"]`` (module docstring).
    """

    name = "ObjectivePerturbation"
    theorem = "TTZ14 Alg. 2 / KST12 Thm. 2, GLM rank-one Hessian"
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **ConvexMechanism._parameter_constraints,
        "approx_share": [Interval(Real, 0, 0.5, closed="neither")],
        "theta0": [Vector(), None],
        "calibration": [Options(CALIBRATIONS)],
        "split": [Options(("auto",)), Interval(Real, 0, 1, closed="neither")],
    }

    def __init__(self, epsilon: float, delta: float = 0.0, *, approx_share: float = 0.01,
                 theta0: np.ndarray | None = None, calibration: str = "chi2-profile",
                 split: float | str = "auto", ledger: Ledger | None = None, tolerance: float = 1e-6,
                 on_uncertified: OnUncertified = "raise", noise: NoiseChoice = "auto") -> None:
        super().__init__(epsilon, delta, ledger=ledger, tolerance=tolerance, on_uncertified=on_uncertified,
                         noise=noise)
        self.split = split if split == "auto" else float(split)
        self.calibration = calibration
        self.approx_share = float(approx_share)
        self.theta0 = theta0

    def calibrate(self, problem: Problem) -> ConvexPlan:
        const = problem.loss_constants()
        if problem.loss.hessian_rank != 1:
            raise MechanismError(f"{self.name} needs a loss with rank-one Hessian (a GLM loss)")
        if const.hessian_bound is None:
            raise MechanismError(
                f"{self.name} needs a loss with a bounded Hessian; {problem.loss.name} has none "
                "(use a smoothed loss such as SmoothedHingeLoss, or OutputPerturbation)"
            )
        L = const.lipschitz_l2
        if not math.isfinite(L):
            raise unbounded_lipschitz(problem, self.name)
        n, eps, delta = problem.n, self.epsilon, self.delta
        eps_a, delta_a = self.approx_share * eps, self.approx_share * delta
        mu0 = problem.strong_convexity
        share = self._share(problem, const.hessian_bound, L, eps - eps_a, delta - delta_a)
        eps_j, zeta = jacobian_split(const.hessian_bound, n, mu0, eps - eps_a, share)
        eps_b, delta_b = eps - eps_a - eps_j, delta - delta_a
        linear = NoiseSpec("l2-laplace", 2.0 * L / eps_b / n)
        if delta > 0:  # ε_b-DP noise also satisfies (ε_b, δ_b): keep whichever is smaller
            # shares of the checked level (ε_b > 0, 0 < δ_b < δ): not checked again
            sigma = gaussian_objective_sigma(L, Budget(eps_b, delta_b), None, calibration=self.calibration)
            gauss = NoiseSpec("gaussian", sigma / n)
            linear = choose(gauss, linear, problem.dim, self.noise)
        output = NoiseSpec.for_sensitivity(2.0 * self.tolerance, eps_a, delta_a, problem.dim)
        theta0 = self._theta0(problem)
        params = {
            "noise": linear.kind, "noise_scale": linear.scale, "normalization": "average loss (1/n)",
            "calibration": self.calibration if linear.kind == "gaussian" else "l2-laplace (pure DP)",
            "zeta": zeta, "lipschitz_l2": L, "hessian_bound": const.hessian_bound,
            "epsilon_jacobian": eps_j, "epsilon_noise": eps_b, "delta_noise": delta_b,
            "epsilon_approx": eps_a, "delta_approx": delta_a, "jacobian_share": share,
            "output_noise": output.kind, "output_noise_scale": output.scale, "grid_step": output.grid_step,
        }
        return ConvexPlan(template=template_problem(problem, zeta, theta0), linear_noise=linear, output_noise=output,
                          tolerance=self.tolerance, parameters=params, project_output=problem.constraint is not None)

    def _share(self, problem: Problem, hessian_bound: float, lipschitz: float, epsilon: float,
               delta: float) -> float:
        """The Jacobian share: the user's, or the :func:`auto_split` minimizer (public facts only)."""
        if self.split != "auto":
            return float(self.split)
        if delta == 0:
            return 0.5
        if problem.constraint is not None and problem.constraint.bounded:
            radius = float(problem.constraint.radius(2))
        elif problem.l2_weight > 0:  # no set, or an unbounded one (the orthant): ‖θ*‖ ≤ L/λ
            radius = lipschitz / problem.l2_weight
        else:
            return 0.5
        return auto_split(hessian_bound, problem.n, problem.strong_convexity, epsilon, delta, lipschitz, radius,
                          problem.dim, self.calibration)

    def _theta0(self, problem: Problem) -> np.ndarray:
        if self.theta0 is not None:
            t0 = np.asarray(self.theta0, dtype=np.float64)
            if t0.shape != (problem.dim,) or not np.all(np.isfinite(t0)):
                raise MechanismError(f"theta0 must be a finite vector of length {problem.dim}")
            if problem.constraint is not None and not problem.constraint.contains(t0):
                raise MechanismError("theta0 must lie in the constraint set")
            return t0
        return np.zeros(problem.dim) if problem.constraint is None else problem.constraint.center()
