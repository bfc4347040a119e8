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
from pathlib import Path

import numpy as np

from dpopt.backends.base import Backend
from dpopt.backends.profiles import SolverProfile, merge_options, resolve
from dpopt.errors import MechanismError
from dpopt.mechanisms.base import Mechanism
from dpopt.mechanisms.release import Release
from dpopt.modeling.discrete import DiscreteProblem
from dpopt.privacy.rng import make_rng
from dpopt.privacy.sampling import gaussian_noise


def opdisc_sigma(lipschitz: float, bound: float, step: float, dim: int, epsilon: float, delta: float) -> float:
    """σ of OPDisc's η (see the module docstring): Δ/(√(a² + 2ε) − a),
    Δ = 4GD²/τ, a = √(d + 1) + √(2 ln(1/δ))."""
    shift = 4.0 * lipschitz * bound**2 / step
    a = math.sqrt(dim + 1) + math.sqrt(2.0 * math.log(1.0 / delta))
    x = 2.0 * epsilon / (math.sqrt(a * a + 2.0 * epsilon) + a)  # = √(a²+2ε) − a, stably
    return shift / x


class OPDisc(Mechanism):
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

    def __init__(self, epsilon: float, delta: float, **kwargs: object) -> None:
        super().__init__(epsilon, delta, **kwargs)  # type: ignore[arg-type]
        if self.delta == 0:
            raise MechanismError("OPDisc needs delta > 0 (its noise is Gaussian)")

    def sigma(self, problem: DiscreteProblem) -> float:
        """The noise scale for ``problem`` (public: from τ, D, d, G, ε, δ only)."""
        g = problem.domain
        return opdisc_sigma(problem.loss.lipschitz, g.bound(problem.dim), g.step, problem.dim,
                            self.epsilon, self.delta)

    def run(self, problem: DiscreteProblem, *, solver: str | Path | SolverProfile | Backend = "highs",
            time_limit: float | None = None, seed: int | None = None,
            threads: int | None = None) -> Release:
        """Draw η, call the oracle once, release ŵ only if the oracle certified it."""
        if not isinstance(problem, DiscreteProblem):
            raise MechanismError(
                f"OPDisc needs a DiscreteProblem (a ZeroOneLoss over an IntegerGrid), got "
                f"{type(problem).__name__}; a continuous variable is not supported"
            )
        if problem.eta is not None:
            raise MechanismError("the problem already carries a perturbation; pass the plain problem")
        self._check_time_limit(time_limit)
        sigma = self.sigma(problem)
        backend, profile = resolve(solver, problem)
        backend.require()
        backend.check(problem)
        options = merge_options(profile, time_limit=time_limit, threads=threads)
        self.ledger.require(self.epsilon, self.delta)
        rng, seed_info = make_rng(seed)
        eta = np.asarray(gaussian_noise(rng, sigma, problem.dim + 1), dtype=np.float64)
        prepared = backend.prepare(problem)
        result, charge = self._charged_solve(backend, prepared, eta, options, problem.summary())
        w = result.solution
        ok = w is not None and problem.domain.contains(w)
        result = result.with_recheck({**(result.recheck or {}), "on_grid": bool(ok)}, ok)
        if not result.certified:
            self._fail_closed(result, charge)
        params = {"noise": "gaussian", "noise_scale": sigma, "lipschitz": problem.loss.lipschitz,
                  "l2_bound": problem.domain.bound(problem.dim), "step": problem.domain.step,
                  "backend": backend.name}
        return Release(
            theta=np.zeros(problem.dim) if w is None else np.asarray(w, dtype=np.float64),
            epsilon=self.epsilon, delta=self.delta, mechanism=f"{self.name} [{self.theorem}]",
            parameters=params, oracle_calls=(result,), seed=seed_info, private=bool(result.certified),
            problem=problem.summary(),
            notes=() if result.certified else ("UNSAFE: released without a certified oracle result",),
        )
