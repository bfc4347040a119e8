"""OPSamp: averaged perturbed-oracle calls plus Laplace output noise (NRVW19 Alg. 2).

    w_k = O_α(D, σ_k) ∈ argmin_{w ∈ W} L(D, w) − ⟨σ_k, w⟩ (up to α),   σ_k ~ Exp(rate)^d,
    output  (1/m) Σ_k w_k + μ,   μ ~ Lap(λ/ε)^d   (here: exact discrete Laplace on a grid, below),

for losses ℓ_i that are G-Lipschitz in the ℓ1 norm on W (values in [0, 1] for the
utility bound, Thm. 7).  The privacy proof (Thm. 11) conditions on the event that the
average of the m calls is within its high-probability ℓ1 sensitivity λ of the
neighbour's average (Lemma 10) and then uses the Laplace mechanism.  Here W is a τ-grid
(:class:`~dpopt.modeling.discrete.DiscreteProblem`, kind "linear") and O_α a MIP
backend; D_∞ and D₂ are the ℓ∞ and ℓ2 diameters of W.

Constants: corrected from the paper
-----------------------------------
1. *Lemma 9's union bound.*  Hoeffding bounds each coordinate's deviation by D_∞γ
   (D_∞ the width of the coordinate's range); the paper then claims the same bound for
   the ℓ1 norm, but ‖v‖₁ > c only implies |v_j| > c/d for some j.  The union bound over
   d coordinates gives ‖W(D, Σ) − E O(D, σ)‖₁ ≤ d D_∞ γ, and with both tails of every
   coordinate for both datasets (4d events) the failure probability is δ when
   m = ⌈ln(4d/δ)/(2γ²)⌉ (the paper's ln(2d/δ) counts one tail).  So
   λ = 2 d D_∞ γ + 250 rate G d² D_∞² + α/(10G)  (paper: 4 D_∞ γ + ...).
2. *A free cap.*  Both averages lie in W, so their ℓ1 distance never exceeds the ℓ1
   diameter Δ₁ of W (≤ min(d D_∞, √d D₂)); λ = min(λ, Δ₁) is valid, and when the cap
   binds the Laplace step alone is ε-DP.
3. The stability constant 250 rate G d² D_∞² + α/(10G) is Lemma 8 as the paper states
   it (Suggala–Netrapalli 2019's FTPL stability, doubled for replace-one neighbours);
   dpopt takes it as given.

Defaults follow Alg. 2: γ = min(1, √(ε/n) d^{5/4} √D₂), rate
= √(D₂ √(2d) ε / (250 G² d² D_∞² (1 + ln(2/β)) n)); ``calls`` = m may be given instead
of γ (then γ = √(ln(4d/δ)/(2m))), and ``rate`` may be given (any values keep the
guarantee: λ is computed from them).  At Adult's size the cap binds
(λ = Δ₁): OPSamp is a theoretical mechanism whose utility needs far larger n.

The released value (exact, on a public grid)
--------------------------------------------
The average is released as ``round(avg/s)·s + K·s``, with s = 2^⌊log2(λ/(2^8·d))⌋ a public
power of two (λ and d only: :func:`dpopt.privacy.grid.laplace_on_grid`; ``grid_step``; not
to be confused with Hoeffding's γ above) and K exact discrete Laplace per coordinate
([CKS20], Alg. 2) of integer scale t = ⌈(λ/s + d)/ε⌉: the rounded averages differ by at most
λ/s + d grid steps in ℓ1, so on Lemma 10's event the step is ε-DP; ``laplace_scale`` = s·t
≥ λ/ε.  Every released coordinate is an integer multiple of s and the reachable multiples
do not depend on the data; everything after the discrete noisy value is post-processing.
The exponential perturbations σ_k stay floating point: they are never released, only the
oracles' grid answers to them.

The approximate oracle (α ≥ 0)
------------------------------
With ``alpha = 0`` every call must be certified exactly optimal (as in OPDisc).  With
``alpha > 0`` a call is accepted when the solver *proves* its answer α-optimal: the
point is on the grid and f(w) − (proven lower bound) ≤ α, f recomputed by dpopt (a
time-limited MIP solve with a small enough gap counts).  α enters λ as above.  Any call
that is not accepted fails the whole run closed: nothing is released, the budget is spent.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np

from dpopt.backends.result import OracleResult
from dpopt.errors import MechanismError
from dpopt.mechanisms.base import OnUncertified
from dpopt.mechanisms.discrete_base import ALPHA, DEFAULT_ALPHA, DiscreteMechanism, DiscretePlan
from dpopt.mechanisms.params import Integral, Interval, Real
from dpopt.modeling.discrete import DiscreteProblem
from dpopt.privacy.grid import GridNoise, laplace_on_grid
from dpopt.privacy.ledger import Ledger
from dpopt.privacy.sampling import exponential_noise

#: stability constant of Lemma 8 (Suggala–Netrapalli's 125, doubled for replacement)
STABILITY = 250.0


@dataclass(frozen=True)
class OPSampPlan:
    """The public constants of one OPSamp run (module docstring)."""

    calls: int  # m
    gamma: float
    rate: float  # of the Exp perturbation (mean 1/rate)
    lipschitz_l1: float  # G
    diameter_inf: float  # D_∞
    diameter_l2: float  # D₂
    diameter_l1: float  # Δ₁, the cap
    sensitivity: float  # λ (after the cap)
    laplace_scale: float  # b = s·t ≥ λ/ε, per coordinate
    grid_step: float  # s, the public grid of the release

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def grid_diameters(problem: DiscreteProblem) -> tuple[float, float, float]:
    """(D_∞, D₂, Δ₁): bounds on the ℓ∞, ℓ2 and ℓ1 diameters of W_τ."""
    g, d = problem.domain, problem.dim
    D = g.bound(d)
    r = math.floor(D / g.step * (1 + 1e-12))  # |k_j| ≤ D/τ inside the ℓ2 ball
    width = g.step * max(min(g.khigh, r) - max(g.klow, -r), 0)
    d2 = min(2.0 * D, width * math.sqrt(d))
    return width, d2, min(d * width, math.sqrt(d) * d2)


class OPSamp(DiscreteMechanism):
    """OPSamp over a τ-grid with a MIP oracle (NRVW19 Alg. 2, corrected constants).

    The release is exact on the public grid ``parameters["grid_step"]`` with discrete Laplace
    noise of scale ``parameters["laplace_scale"]`` per coordinate (module docstring).

    Parameters
    ----------
    epsilon, delta : float
        Target guarantee; δ > 0 is required (the averaging holds with probability 1 − δ).
    alpha : float
        Additive accuracy of the oracle that is accepted (0: exact, certified optimum); the
        default 1e-3 (in loss units) makes the acceptance robust to solver tolerances and
        adds α/(10G) to λ.
    calls : int, optional
        Number m of oracle calls (default from Alg. 2's γ).
    rate : float, optional
        Rate of the exponential perturbation (default: Alg. 2's η).
    beta : float
        Failure probability of the utility bound, used by the default rate only.
    max_calls : int
        Refuse plans needing more oracle calls than this.
    ledger, on_uncertified, verify :
        As in :class:`~dpopt.mechanisms.discrete_base.DiscreteMechanism`.
    """

    name = "OPSamp"
    theorem = "NRVW19 Alg. 2 / Thm. 11, Lemma 9 union bound corrected, ℓ1-diameter cap"
    kind = "linear"
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **DiscreteMechanism._parameter_constraints,
        "delta": [Interval(Real, 0, 1, closed="neither",
                           why="OPSamp needs delta > 0: its sensitivity bound holds with probability 1 − δ")],
        "alpha": [ALPHA],
        "calls": [Interval(Integral, 1, None, closed="left"), None],
        "rate": [Interval(Real, 0, None, closed="neither"), None],
        "beta": [Interval(Real, 0, 1, closed="neither")],
        "max_calls": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, epsilon: float, delta: float, *, alpha: float = DEFAULT_ALPHA, calls: int | None = None,
                 rate: float | None = None, beta: float = 0.05, max_calls: int = 10_000,
                 ledger: Ledger | None = None, on_uncertified: OnUncertified = "raise",
                 verify: bool = True) -> None:
        super().__init__(epsilon, delta, ledger=ledger, on_uncertified=on_uncertified, verify=verify)
        self.alpha, self.beta = float(alpha), float(beta)
        self.calls = None if calls is None else int(calls)
        self.rate = None if rate is None else float(rate)
        self.max_calls = int(max_calls)

    def constants(self, problem: DiscreteProblem) -> OPSampPlan:
        """The constants for ``problem`` (public: d, n, τ, the grid, G, ε, δ, α only)."""
        loss = problem.loss
        G = getattr(loss, "lipschitz_l1", None)
        if G is None or not (math.isfinite(G) and G > 0):
            raise MechanismError("OPSamp needs a loss with a declared ℓ1 Lipschitz constant (lipschitz_l1 > 0)")
        d, n, eps = problem.dim, loss.data.n, self.epsilon
        d_inf, d2, d1 = grid_diameters(problem)
        if d_inf == 0:
            raise MechanismError("the grid has a single point inside the ℓ2 bound: there is nothing to choose")
        log_term = math.log(4.0 * d / self.delta)
        if self.calls is None:
            gamma = min(1.0, math.sqrt(eps / n) * d**1.25 * math.sqrt(d2))
            m = math.ceil(log_term / (2.0 * gamma * gamma))
        else:
            m = self.calls
        gamma = math.sqrt(log_term / (2.0 * m))  # the γ that m calls actually give
        if m > self.max_calls:
            raise MechanismError(f"OPSamp would need {m} oracle calls (more than max_calls={self.max_calls}); "
                                 "pass calls= to trade calls against output noise")
        rate = self.rate if self.rate is not None else math.sqrt(
            d2 * math.sqrt(2.0 * d) * eps / (STABILITY * G * G * d * d * d_inf**2 * (1 + math.log(2 / self.beta)) * n))
        lam = 2.0 * d * d_inf * gamma + STABILITY * rate * G * d * d * d_inf**2 + self.alpha / (10.0 * G)
        lam = min(lam, d1)
        law = laplace_on_grid(lam, eps, d)
        return OPSampPlan(calls=m, gamma=gamma, rate=rate, lipschitz_l1=G, diameter_inf=d_inf, diameter_l2=d2,
                          diameter_l1=d1, sensitivity=lam, laplace_scale=law.scale, grid_step=law.gamma)

    def calibrate(self, template: DiscreteProblem) -> tuple[OPSampPlan, dict[str, Any]]:
        """The constants (:meth:`constants`) and the release parameters."""
        constants = self.constants(template)
        return constants, {"noise": "laplace", **constants.to_dict()}

    def draw(self, plan: DiscretePlan, rng: np.random.Generator) -> Iterator[np.ndarray]:
        """m exponential perturbations (mean 1/rate), drawn lazily."""
        c, d = plan.calibration, plan.problem.dim
        return (exponential_noise(rng, 1.0 / c.rate, d) for _ in range(c.calls))

    def finish(self, plan: DiscretePlan, rng: np.random.Generator, results: list[OracleResult]) -> np.ndarray:
        """The average of the m answers released on the grid with exact discrete Laplace noise of scale b per coordinate."""
        c, d = plan.calibration, plan.problem.dim
        law = GridNoise("laplace", c.grid_step, Fraction(c.laplace_scale) / Fraction(c.grid_step))
        sols = [r.solution for r in results if r.solution is not None]
        avg = np.mean(sols, axis=0) if sols else np.zeros(d)
        return law.release(np.asarray(avg, dtype=np.float64), rng)
