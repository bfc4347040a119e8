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
   per-w bad sets is not small.  The bad set must hold uniformly:
   C = {η : sup_{w∈W_τ} ⟨η, π(w)⟩ > σ a}.  π(W_τ) lies on the unit sphere, so
   E sup ≤ σ√(d + 1) and by the Borell–TIS inequality P(C) ≤ δ for
   a = √(d + 1) + √(2 ln(1/δ)).
3. On C's complement p(η)/p(η + v) = exp((2Δ⟨η, π(ŵ)⟩ + Δ²)/(2σ²))
   ≤ exp(Δa/σ + Δ²/(2σ²)); this is ≤ e^ε for
   σ = Δ / (√(a² + 2ε) − a)  (≈ Δ a/ε).  (Lemma 3's statement also has G² where
   Alg. 1 has G; G is what the proof uses.)

For Adult (d = 23, D = √23, τ = 1, δ = 1/n²) this σ is about 1.4× the paper's
7GD²√ln(1/δ)/(τε).  The privacy proof needs the *exact* argmin, so only a
certified oracle answer is released (DESIGN.md's oracle contract).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpopt.backends.result import OracleResult
from dpopt.errors import MechanismError
from dpopt.mechanisms.discrete_base import DiscreteMechanism, Solver, check_alpha
from dpopt.mechanisms.release import Release
from dpopt.modeling.discrete import DiscreteProblem
from dpopt.privacy.sampling import gaussian_noise

#: the additive suboptimality an oracle answer may have (in loss units: rows); the shift
#: Δ = 4GD²/τ + 4αD²/τ² accounts for it
DEFAULT_ALPHA = 1e-3


def opdisc_sigma(lipschitz: float, bound: float, step: float, dim: int, epsilon: float, delta: float) -> float:
    """σ of OPDisc's η (see the module docstring): Δ/(√(a² + 2ε) − a),
    Δ = 4GD²/τ, a = √(d + 1) + √(2 ln(1/δ))."""
    shift = 4.0 * lipschitz * bound**2 / step
    a = math.sqrt(dim + 1) + math.sqrt(2.0 * math.log(1.0 / delta))
    x = 2.0 * epsilon / (math.sqrt(a * a + 2.0 * epsilon) + a)  # = √(a²+2ε) − a, stably
    return shift / x


class OPDisc(DiscreteMechanism):
    """Objective perturbation over a discrete domain (NRVW19 Alg. 1, corrected σ).

    Parameters
    ----------
    epsilon, delta : float
        Target guarantee; δ > 0 is required (Gaussian noise).
    **kwargs
        ``ledger``, ``on_uncertified`` as in :class:`~dpopt.mechanisms.base.Mechanism`.
    """

    name = "OPDisc"
    theorem = "NRVW19 Alg. 1 / Thm. 1, σ corrected (uniform bad set)"
    kind = "normalized"

    def __init__(self, epsilon: float, delta: float, *, alpha: float = DEFAULT_ALPHA, **kwargs: Any) -> None:
        super().__init__(epsilon, delta, **kwargs)
        if self.delta == 0:
            raise MechanismError("OPDisc needs delta > 0 (its noise is Gaussian)")
        self.alpha = check_alpha(alpha)

    def sigma(self, problem: DiscreteProblem) -> float:
        """The noise scale for ``problem`` (public: from τ, D, d, G, ε, δ only)."""
        g = problem.domain
        return opdisc_sigma(problem.loss.lipschitz, g.bound(problem.dim), g.step, problem.dim,
                            self.epsilon, self.delta)

    def run(self, problem: DiscreteProblem, *, solver: Solver = "highs", time_limit: float | None = None,
            seed: int | None = None, threads: int | None = None, keep_diagnostics: bool = False) -> Release:
        """Draw η, call the oracle once (to completion unless ``time_limit`` is set), release ŵ.

        Parameters
        ----------
        problem : DiscreteProblem
            The plain (unperturbed) problem.
        solver : str, path or Backend
            The MIP oracle (``highs``, ``highs-grouped``, ``cpsat``, ``bruteforce`` or a profile).
        time_limit : float, optional
            Opt-in: the guarantee then holds only if no neighbouring run stops on it, and a run
            that stops raises UncertifiedOracleError (see :mod:`dpopt.mechanisms.discrete_base`).
        seed : int, optional
            For reproducible noise only.
        threads : int, optional
            Solver threads.
        keep_diagnostics : bool
            Keep the solver's record (not private) in ``release.diagnostics``.
        """
        template = self._template(problem)
        sigma = self.sigma(template)
        session = self._session(template, solver, time_limit, threads)
        params = {"noise": "gaussian", "noise_scale": sigma, "lipschitz": template.loss.lipschitz,
                  "l2_bound": template.domain.bound(template.dim), "step": template.domain.step}

        def draw(rng: np.random.Generator) -> list[np.ndarray]:
            return [np.asarray(gaussian_noise(rng, sigma, template.dim + 1), dtype=np.float64)]

        def finish(rng: np.random.Generator, results: list[OracleResult]) -> np.ndarray:
            w = results[-1].solution
            return np.zeros(template.dim) if w is None else np.asarray(w, dtype=np.float64)

        return self._execute(session, draw, finish, parameters=params, seed=seed,
                             keep_diagnostics=keep_diagnostics)
