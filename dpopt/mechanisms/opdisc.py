"""OPDisc: objective perturbation over a discrete domain (Neel–Roth–Vietri–Wu 2019, Alg. 1).

    ŵ = argmin_{w ∈ W_τ}  L(D, w) − ⟨η, π(w)⟩,   η ~ N(0, σ²)^{d+1},

with π(w) = (w, √(D² − ‖w‖²))/D the normalization onto the unit sphere of ℝ^{d+1}
and L the sum of G-Lipschitz losses on the τ-separated grid W_τ (0/1 loss:
G = max weight / τ).  Neighbouring relation: replace one loss function.

Noise scale: corrected from the paper
-------------------------------------
The proof of Thm. 1 maps the noise η that yields ŵ on D to η' = η + v with
v = c·π(ŵ), which yields ŵ on D' (Lemma 4).  Three things in the paper's
constants do not hold together, and we use what the proof supports:

1. Lemma 4's contradiction needs c ≥ 4GD²/τ, but Alg. 1, the map g and the
   appendix proof of Lemma 3 use ‖v‖ = 2GD²/τ.  We use ‖v‖ = Δ = 4GD²/τ.
2. The appendix proof of Lemma 3 bounds p(η)/p(η + v) through the projection of
   η on the direction of v, i.e. on π(ŵ), with a bad set C chosen for a *fixed*
   w.  But ŵ depends on η — it maximizes ⟨η, π(w)⟩ minus the loss — so
   ⟨η, π(ŵ)⟩ is not a one-dimensional Gaussian and the union over w of the
   per-w bad sets is not small.  The bound must hold uniformly in ŵ, and we
   integrate it instead of cutting it off (next item).
3. *The exact χ²_{d+1} profile* (``calibration="chi2-profile"``, the default).
   E(D, w) = {η : ŵ(D, η) = w} partition ℝ^{d+1} (up to a null set, Lemma 2), and
   g_w(η) = η + Δπ(w) maps E(D, w) into E(D', w) (Lemma 4, item 4 below for α > 0).
   g_w is a translation: injective with Jacobian 1, so for any set S of outputs
   P_{D'}(S) ≥ Σ_{w∈S} ∫_{E(D,w)} p(η + Δπ(w)) dη and

       P_D(S) − e^ε P_{D'}(S) ≤ Σ_{w∈S} ∫_{E(D,w)} (p(η) − e^ε p(η + Δπ(w)))₊ dη
                              ≤ E_η[(1 − e^{ε − L(η)})₊],
       L(η) = ln p(η)/p(η + Δπ(ŵ(η))) = (2Δ⟨η, π(ŵ)⟩ + Δ²)/(2σ²).

   π(ŵ) is a unit vector, so ⟨η, π(ŵ)⟩ ≤ ‖η‖ whatever ŵ is, and (1 − e^{ε−L})₊
   increases with L; with R = ‖η‖/σ ~ χ_{d+1} and a = Δ/σ

       δ(ε) ≤ E[(1 − e^{ε − aR − a²/2})₊],

   evaluated by quadrature; σ is the smallest value with δ(ε) ≤ δ
   (:func:`dpopt.privacy.profiles.chi_shift_sigma`).  The bound holds for every
   ordered pair (D, D'), so it is a two-sided (ε, δ) guarantee.  The same coupling
   with a *cutoff* instead of the integral — C = {‖η‖ > σc}, c = √(d + 1) +
   √(2 ln(1/δ)) (Borell–TIS), L ≤ ac + a²/2 ≤ ε on C's complement — gives
   σ = Δ/(√(c² + 2ε) − c) (``calibration="borell-tis"``, the previous default),
   about 1.27–1.33× larger on Adult.  (Lemma 3's statement also has G² where Alg. 1
   has G; G is what the proof uses.)
4. *An α-approximate oracle.*  Let ŵ be α-optimal on D at η, F_D(v) − F_D(ŵ) ≥ −α
   for all v (F_D(w) = L(D, w) − ⟨η, π(w)⟩, sums of losses).  At η' = η + cπ(ŵ) on
   D', for v ≠ ŵ with t = ‖v − ŵ‖ ≥ τ, using ⟨π(ŵ), π(ŵ) − π(v)⟩ = ½‖π(ŵ) − π(v)‖²
   ≥ t²/(2D²) (NRVW19 eq. (1)) and the G-Lipschitz losses,

       F'_{D'}(v) − F'_{D'}(ŵ) ≥ −α − 2Gt + c t²/(2D²) ≥ α   for every t ≥ τ

   as soon as c ≥ 4GD²/τ + 4αD²/τ² (the bound is increasing in t beyond τ).  So ŵ
   is the *only* α-optimal point on D' at η' (ties have probability 0): any
   α-approximate oracle must return it, and item 3 applies with
   Δ = 4GD²/τ + 4αD²/τ² (α in loss units, i.e. on the sum of losses).  With a
   shift of only 4GD²/τ + 2αD²/τ², ŵ would be the exact argmin on D' but the
   oracle could return another α-optimal point.

For Adult (d = 23, D = √23, τ = 1, G = 1, δ = 1/n², n = 15,682, α = 0) the
profile gives σ ≈ 809 at ε = 1 (Borell–TIS cutoff: 1027), about 1.1× the paper's
7GD²√ln(1/δ)/(τε).  The proof needs an α-optimal answer for the declared α, so
only a certified (or proven α-optimal) oracle answer is released (docs/design.md's
oracle contract).

What is released, and why the continuous proof covers it
--------------------------------------------------------
OPDisc is not an additive release: η never leaves the mechanism (the release states only
the public σ; the opt-in, non-private ``keep_diagnostics`` record is outside every
guarantee), and it enters only the objective.  The release is ŵ, a function of (η, D)
whose values lie in the *finite* set W_τ, and the argument above bounds P_D[ŵ = w] against P_D'[ŵ = w] for every w ∈ W_τ directly.  So no
additive grid (:mod:`dpopt.privacy.grid`) is needed: the output space is already the
declared grid, the same for every dataset, and the floating-point attack on additive
releases (Mironov [Mir12]: which doubles are reachable depends on the centre) has nothing
to read — whatever float arithmetic the solver does, ŵ is reported as the canonical double
τ·k of its integer coordinates k (:meth:`OPDisc.finish` rounds w/τ to integers and
multiplies back, a post-processing step that is the identity on the backends' answers and
removes any float artefact of a custom backend).

What remains floating point, and is a residual of the analysis rather than covered by it:
η is drawn by a float sampler (``gaussian_noise``, numpy's ziggurat on a PCG64DXSM stream),
whose law only approximates N(0, σ²I) — it is a distribution on finitely many doubles — and
the objective is evaluated in floats.  The proof is for the continuous η; the distribution
of argmins that the float η induces approximates, but is not exactly, the one the proof
bounds, and no bound on the difference is proved here (the float law lives on finitely many
doubles, and its relative error can be large in the far tails).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from dpopt.backends.result import OracleResult
from dpopt.errors import MechanismError
from dpopt.mechanisms.base import OnUncertified
from dpopt.mechanisms.discrete_base import ALPHA, DEFAULT_ALPHA, DiscreteMechanism, DiscretePlan
from dpopt.mechanisms.params import Interval, Options, Real
from dpopt.modeling.discrete import DiscreteProblem
from dpopt.privacy.calibration import Budget, budget_pair
from dpopt.privacy.ledger import Ledger
from dpopt.privacy.profiles import chi_shift_sigma, cutoff_shift_sigma
from dpopt.privacy.sampling import gaussian_noise

#: the noise calibrations :func:`opdisc_sigma` knows (module docstring, items 3 and 2)
CALIBRATIONS = ("chi2-profile", "borell-tis")


def canonical_grid_point(w: np.ndarray, step: float) -> np.ndarray:
    """τ·round(w/τ): the grid point w stands for, as the double every backend computes for it.

    Post-processing of an accepted answer (which lies within 1e-9 grid steps of τk,
    ``IntegerGrid.contains``): the identity on τ·k itself (for |k| < 2^51, fl(fl(τk)/τ)
    rounds back to k), and it removes a custom backend's float artefact, so the released
    bits are a function of k alone.
    """
    return step * np.rint(np.asarray(w, dtype=np.float64) / step)


def opdisc_shift(lipschitz: float, bound: float, step: float, *, alpha: float = 0.0) -> float:
    """Δ = 4GD²/τ + 4αD²/τ²: the coupling's shift (module docstring, items 1 and 4)."""
    return 4.0 * lipschitz * bound**2 / step + 4.0 * alpha * bound**2 / step**2


def opdisc_sigma(lipschitz: float, bound: float, step: float, dim: int, epsilon: float | Budget,
                 delta: float | None, *, alpha: float = 0.0, calibration: str = "chi2-profile") -> float:
    """σ of OPDisc's η ∈ ℝ^{d+1} (see the module docstring).

    Parameters
    ----------
    lipschitz, bound, step : float
        G (per-row Lipschitz constant on the grid), D (ℓ2 bound of the grid), τ (step).
    dim : int
        d; the noise has d + 1 coordinates.
    epsilon, delta : float, or a Budget and None
        Target guarantee, δ > 0 (the mechanism's checked level is not checked again).
    alpha : float
        The oracle's accepted additive suboptimality (loss units); enters Δ.
    calibration : {"chi2-profile", "borell-tis"}
        The exact χ_{d+1} profile integral (default) or the older cutoff
        ``Δ/(√(c² + 2ε) − c)``, ``c = √(d + 1) + √(2 ln(1/δ))``.

    Returns
    -------
    float
        σ.
    """
    if calibration not in CALIBRATIONS:
        raise MechanismError(f"calibration must be one of {', '.join(map(repr, CALIBRATIONS))}, "
                             f"got {calibration!r}")
    shift = opdisc_shift(lipschitz, bound, step, alpha=alpha)
    if calibration == "chi2-profile":
        return chi_shift_sigma(shift, epsilon, delta, dim + 1)
    eps, dlt = budget_pair(epsilon, delta, allow_zero_delta=False)
    c = math.sqrt(dim + 1) + math.sqrt(2.0 * math.log(1.0 / dlt))
    return cutoff_shift_sigma(shift, eps, c)


class OPDisc(DiscreteMechanism):
    """Objective perturbation over a discrete domain (NRVW19 Alg. 1, corrected σ).

    Parameters
    ----------
    epsilon, delta : float
        Target guarantee; δ > 0 is required (Gaussian noise).
    alpha : float
        Accepted additive suboptimality of an oracle answer (loss units); the shift
        Δ = 4GD²/τ + 4αD²/τ² pays for it (module docstring, item 4).
    calibration : {"chi2-profile", "borell-tis"}
        How σ is computed from Δ (module docstring, item 3); reported in the release's
        ``parameters["calibration"]``.
    ledger, on_uncertified, verify :
        As in :class:`~dpopt.mechanisms.discrete_base.DiscreteMechanism`.

    Notes
    -----
    ``run(problem, solver=..., time_limit=...)`` draws η, calls the oracle once (to completion
    unless ``time_limit`` is set) and releases ŵ.  ``solver="auto"`` (default) chooses the MIP
    oracle from public declarations only — ``bruteforce`` for a tiny grid, ``highs-grouped``
    when the data's schema makes the grouped decomposition applicable within its declared size
    limits (Adult: seconds per call where the big-M model takes many minutes), else ``cpsat`` —
    so every neighbouring dataset gets the same one (:mod:`dpopt.backends.auto_discrete`); the
    release names it and states the rule in ``parameters["solver_rule"]``.  A name (``highs``,
    ``highs-grouped``, ``cpsat``, ``bruteforce``), a profile or a Backend is used as given.  A
    ``time_limit`` is an opt-in: the guarantee then holds only if no neighbouring run stops on
    it, and a run that stops raises ``UncertifiedOracleError``
    (:mod:`dpopt.mechanisms.discrete_base`).
    """

    name = "OPDisc"
    theorem = "NRVW19 Alg. 1 / Thm. 1, σ corrected (uniform bad set)"
    kind = "normalized"
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **DiscreteMechanism._parameter_constraints,
        "delta": [Interval(Real, 0, 1, closed="neither", why="OPDisc needs delta > 0: its noise is Gaussian")],
        "alpha": [ALPHA],
        "calibration": [Options(CALIBRATIONS)],
    }

    def __init__(self, epsilon: float, delta: float, *, alpha: float = DEFAULT_ALPHA,
                 calibration: str = "chi2-profile", ledger: Ledger | None = None,
                 on_uncertified: OnUncertified = "raise", verify: bool = True) -> None:
        super().__init__(epsilon, delta, ledger=ledger, on_uncertified=on_uncertified, verify=verify)
        self.alpha = float(alpha)
        self.calibration = calibration

    def sigma(self, problem: DiscreteProblem) -> float:
        """The noise scale for ``problem`` (public: from τ, D, d, G, ε, δ, α only)."""
        g = problem.domain
        return opdisc_sigma(problem.loss.lipschitz, g.bound(problem.dim), g.step, problem.dim,
                            self.privacy_level, None, alpha=self.alpha, calibration=self.calibration)

    def calibrate(self, template: DiscreteProblem) -> tuple[float, dict[str, Any]]:
        """σ and the release parameters (public: τ, D, d, G, ε, δ, α only)."""
        sigma = self.sigma(template)
        return sigma, {"noise": "gaussian", "noise_scale": sigma, "calibration": self.calibration,
                       "lipschitz": template.loss.lipschitz, "l2_bound": template.domain.bound(template.dim),
                       "step": template.domain.step}

    def draw(self, plan: DiscretePlan, rng: np.random.Generator) -> list[np.ndarray]:
        """One η ~ N(0, σ²I) in d + 1 dimensions."""
        return [np.asarray(gaussian_noise(rng, plan.calibration, plan.problem.dim + 1), dtype=np.float64)]

    def finish(self, plan: DiscretePlan, rng: np.random.Generator, results: list[OracleResult]) -> np.ndarray:
        """The oracle's grid point ŵ, as the canonical double τ·k (module docstring)."""
        w = results[-1].solution
        return np.zeros(plan.problem.dim) if w is None else canonical_grid_point(w, plan.problem.domain.step)
