"""RSPM: Report Separator-Perturbed Minimum (Neel–Roth–Wu 2019, as NRVW19 Alg. 3).

    ŵ = argmin_{w ∈ W_τ}  L(D, w) + Σ_{u ∈ U} ξ_u e_u(w),    ξ_u i.i.d. noise,

with U a *separator set* for W_τ (NRVW19 Def. A.1): {0,1}-valued functions such that
any two distinct w ≠ w' differ on at least one e ∈ U.  L is the sum of losses with
values in [0, B] (0/1 loss: B = the largest row weight).

Separator set for the τ-grid
----------------------------
The threshold functions e_{j,t}(w) = 1[k_j ≥ t] for every coordinate j and every
t = klow + 1, …, khigh (w = τk): if k ≠ k' then k_j < k'_j for some j (or the reverse),
and t = k'_j separates them.  m = d (K − 1) with K levels per coordinate; for the
paper's {−1, 0, 1}^d this is m = 2d, the size NRVW19 Sec. 3.1 quotes.  The weighted
separator term is separable, Σ_j T_j[k_j] with T_j[v] = Σ_{t ≤ v} ξ_{j,t}, and the MIP
encodes it exactly through the one-hot level variables (kind "levels" of
:class:`DiscreteProblem`).  NRVW19's Fig. 3 instead adds a *linear* term −⟨η, w⟩ over
{−1, 0, 1}^d: a linear function cannot separate k_j = 0 from both k_j = ±1 with a
positive margin, so that oracle is not RSPM's and its privacy proof does not apply.

Privacy (replace-one neighbours), from the shift argument of NRW19
--------------------------------------------------------------------
Let s_u = −2B if e_u(ŵ) = 1 and +2B otherwise.  For any w ≠ ŵ the separator term of
ξ + s exceeds that of ξ, relative to ŵ, by 2B·#{u : e_u(w) ≠ e_u(ŵ)} ≥ 2B, while
replacing one loss changes L(·, w) − L(·, ŵ) by at most 2B.  So the (a.s. unique)
minimizer ŵ on D with noise ξ is the minimizer on D' with noise ξ + s.

*An α-approximate oracle* (answers proven within α of the optimum, in loss units):
let ŵ be α-optimal on D with noise ξ, F_D(w) − F_D(ŵ) ≥ −α for all w, and use the
shift |s_u| = 2B + 2α (same signs).  For w ≠ ŵ on D' with noise ξ + s,

    F'(w) − F'(ŵ) ≥ −α − 2B + (2B + 2α)·#{u : e_u(w) ≠ e_u(ŵ)} ≥ α,

so ŵ is the only α-optimal point there (equality has probability 0) and *any*
α-approximate oracle returns it; a shift of 2B + α would make ŵ the exact argmin
only.  Below, "2B" is therefore 2(B + α): ``rspm_laplace_scale`` and
``rspm_gaussian_sigma`` take ``alpha`` and use B + α.

* Laplace ξ_u ~ Lap(b), b = 2Bm/ε: p(ξ)/p(ξ + s) ≤ exp(‖s‖₁/b) = e^ε — pure ε-DP.
* Gaussian ξ ~ N(0, σ²I_m): log p(ξ)/p(ξ + s) = (2⟨ξ, s⟩ + ‖s‖²)/(2σ²).  The shift s
  depends on ŵ, which depends on ξ (the minimizer *aligns* with the noise), so the
  bad set must hold for all shifts at once: sup_s ⟨ξ, s⟩ ≤ 2B‖ξ‖₁, and ‖ξ‖₁ is
  √m-Lipschitz, so ‖ξ‖₁ ≤ σA with A = m√(2/π) + √(2m ln(1/δ)) except with
  probability δ (Gaussian concentration).  Then the loss is ≤ ε for
  σ = B (A + √(A² + 2mε)) / ε.
  NRVW19 Alg. 3 states σ = 7√(m ln(1/δ))/ε, which grows like √m: it comes from a
  per-direction tail bound that ignores this dependence (the same flaw as in the
  appendix proof of OPDisc's Lemma 3), and it is not enough once m ≳ 400.  (Alg. 3
  also draws d + 1 coordinates where there are m separator weights.)

With ``noise="auto"`` the law with the smaller per-weight standard deviation is used
(Laplace: √2 b; for δ = 0 only Laplace is valid).  The proof needs an α-optimal
minimizer for the declared α, so only certified (or proven α-optimal) oracle answers
are released.

What is released, and why the continuous proof covers it
--------------------------------------------------------
The separator weights ξ are never released (the release states only the public law and
scale; the opt-in, non-private ``keep_diagnostics`` record is outside every guarantee);
they enter only the objective.  The release is ŵ, a function of (ξ, D) over the *finite*
set W_τ, and the shift argument above bounds P_D[ŵ = w] against P_D'[ŵ = w] for every w
directly, so no additive grid (:mod:`dpopt.privacy.grid`) is needed: the output space is
the declared grid itself, the same for every dataset, and the floating-point attack on
additive releases ([Mir12]) has no centre-dependent low-order bits to read.  ŵ is released as the canonical
double τ·k of its integer coordinates (:meth:`RSPM.finish`, post-processing through
:func:`dpopt.mechanisms.opdisc.canonical_grid_point`: the identity on the backends'
answers, and it removes a custom backend's float artefacts).

What remains floating point, and is a residual of the analysis rather than covered by it:
ξ is drawn by float samplers (``laplace_noise``/``gaussian_noise`` on a PCG64DXSM stream),
whose laws only approximate Lap(b)^m and N(0, σ²I_m), and the objective is evaluated in
floats.  The proof is for the continuous ξ; the distribution of argmins that the float ξ
induces approximates, but is not exactly, the one it bounds, and no bound on the difference
is proved here (the float laws live on finitely many doubles, and their relative error can
be large in the far tails).  In particular the pure ε of the Laplace law is a statement
about the continuous law.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from dpopt.backends.result import OracleResult
from dpopt.errors import MechanismError
from dpopt.mechanisms.base import OnUncertified
from dpopt.mechanisms.discrete_base import ALPHA, DEFAULT_ALPHA, DiscreteMechanism, DiscretePlan
from dpopt.mechanisms.opdisc import canonical_grid_point
from dpopt.mechanisms.params import Options
from dpopt.modeling.discrete import DiscreteProblem
from dpopt.privacy.ledger import Ledger
from dpopt.privacy.sampling import gaussian_noise, laplace_noise


def separator_count(problem: DiscreteProblem) -> int:
    """m = d (K − 1): the threshold separator set of the τ-grid."""
    return problem.dim * (problem.levels - 1)


def rspm_laplace_scale(loss_bound: float, separators: int, epsilon: float, *, alpha: float = 0.0) -> float:
    """b = 2(B + α)m/ε (pure ε-DP; per-separator shift 2B + 2α, module docstring)."""
    return 2.0 * (loss_bound + alpha) * separators / epsilon


def rspm_gaussian_sigma(loss_bound: float, separators: int, epsilon: float, delta: float, *,
                        alpha: float = 0.0) -> float:
    """σ = (B + α)(A + √(A² + 2mε))/ε with A = m√(2/π) + √(2m ln(1/δ)) (module docstring)."""
    m = separators
    a = m * math.sqrt(2.0 / math.pi) + math.sqrt(2.0 * m * math.log(1.0 / delta))
    return (loss_bound + alpha) * (a + math.sqrt(a * a + 2.0 * m * epsilon)) / epsilon


def level_table(weights: np.ndarray) -> np.ndarray:
    """T (d × K) from threshold weights ξ (d × (K − 1)): T_j[v] = Σ_{t ≤ v} ξ_{j,t}."""
    d = weights.shape[0]
    return np.concatenate([np.zeros((d, 1)), np.cumsum(weights, axis=1)], axis=1)


class RSPM(DiscreteMechanism):
    """Report Separator-Perturbed Minimum over a τ-grid (NRVW19 Alg. 3, corrected σ).

    Parameters
    ----------
    epsilon, delta : float
        Target guarantee (δ = 0 gives pure ε-DP with Laplace weights).
    noise : {"auto", "laplace", "gaussian"}
        Law of the separator weights (module docstring).
    alpha : float
        Accepted additive suboptimality of an oracle answer (loss units); each
        separator's shift 2B + 2α pays for it (module docstring).
    ledger, on_uncertified, verify :
        As in :class:`~dpopt.mechanisms.discrete_base.DiscreteMechanism`.
    """

    name = "RSPM"
    theorem = "NRW19 / NRVW19 Alg. 3, threshold separator set, σ corrected (uniform bad set)"
    kind = "levels"
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **DiscreteMechanism._parameter_constraints,
        "noise": [Options(("auto", "laplace", "gaussian"))],
        "alpha": [ALPHA],
    }

    def __init__(self, epsilon: float, delta: float = 0.0, *, noise: str = "auto",
                 alpha: float = DEFAULT_ALPHA, ledger: Ledger | None = None,
                 on_uncertified: OnUncertified = "raise", verify: bool = True) -> None:
        super().__init__(epsilon, delta, ledger=ledger, on_uncertified=on_uncertified, verify=verify)
        self.alpha = float(alpha)
        if noise == "gaussian" and self.delta == 0:
            raise MechanismError("Gaussian separator weights need delta > 0; use noise='laplace' for pure ε-DP")
        self.separator_noise = noise

    def noise_law(self, problem: DiscreteProblem) -> tuple[str, float]:
        """("laplace", b) or ("gaussian", σ) for ``problem`` (public quantities only)."""
        bound = problem.loss.value_bound  # losses take values in [0, B], B declared
        m = separator_count(problem)
        if m == 0:
            raise MechanismError("the grid has a single level per coordinate: there is nothing to choose")
        b = rspm_laplace_scale(bound, m, self.epsilon, alpha=self.alpha)
        if self.separator_noise == "laplace" or self.delta == 0:
            return "laplace", b
        sigma = rspm_gaussian_sigma(bound, m, self.epsilon, self.delta, alpha=self.alpha)
        if self.separator_noise == "gaussian" or sigma < math.sqrt(2.0) * b:
            return "gaussian", sigma
        return "laplace", b

    def calibrate(self, template: DiscreteProblem) -> tuple[tuple[str, float], dict[str, Any]]:
        """The separator noise law and scale, and the release parameters (public only)."""
        law, scale = self.noise_law(template)
        return (law, scale), {"noise": law, "noise_scale": scale, "separators": separator_count(template),
                              "loss_bound": template.loss.value_bound, "step": template.domain.step}

    def draw(self, plan: DiscretePlan, rng: np.random.Generator) -> list[np.ndarray]:
        """The separator weights ξ as one level table."""
        law, scale = plan.calibration
        shape = (plan.problem.dim, plan.problem.levels - 1)
        sample = gaussian_noise if law == "gaussian" else laplace_noise
        weights = np.asarray(sample(rng, scale, shape), dtype=np.float64).reshape(shape)
        return [level_table(weights).reshape(-1)]

    def finish(self, plan: DiscretePlan, rng: np.random.Generator, results: list[OracleResult]) -> np.ndarray:
        """The oracle's grid point ŵ, as the canonical double τ·k (module docstring)."""
        w = results[-1].solution
        return np.zeros(plan.problem.dim) if w is None else canonical_grid_point(w, plan.problem.domain.step)
