"""Private Frank–Wolfe (Talwar, Thakurta and Zhang 2014, Algs. 4 and 5).

Both mechanisms run T Frank–Wolfe steps ``θ_{t+1} = (1 − μ_t)θ_t + μ_t s_t``
from the data-independent centre θ₁ of C, on the smooth objective
``(1/n) Σ ℓ(θ; d_i) + (λ/2)‖θ‖²``, and release θ_{T+1}.  Neighbouring
datasets differ in one row (replace-one); every constant below comes from the
declared data bounds, never from the data.

:class:`PolytopeFrankWolfe` — Alg. 4 (``A_Noise-FW(polytope)``, Thm. 5.4)
    C = conv(S) for a finite vertex list S (``L1Ball``, ``Simplex``,
    ``VertexPolytope``, small ``LinfBall``).  Step t picks
    ``s_t = argmin_{s∈S} ⟨s, ∇L(θ_t)⟩ + noise_s``.  With ℓ the ℓ1-Lipschitz
    constant L₁ (``‖∇ℓ‖∞ ≤ L₁``) the score of s moves by at most
    ``Δ = 2 L₁ ‖C‖₁ / n`` between neighbours, ``‖C‖₁ = max_{s∈S} ‖s‖₁``.

    * ``selection="laplace"``: report-noisy-max with Laplace(2Δ/ε₀)
      noise, ε₀-DP per step; composed by the better of basic composition and
      zCDP composition of pure-DP steps (ε₀²/2-zCDP each, Bun–Steinke 2016).
    * ``selection="gumbel"``: the exponential mechanism ∝ exp(−ε₀ score/(2Δ))
      sampled as a Gumbel(2Δ/ε₀) noisy argmin; ε₀-DP and ε₀-bounded-range per
      step, composed by the better of basic composition and zCDP composition
      of bounded-range steps (ε₀²/8-zCDP each, Cesar–Rogers 2021, Lemma 3.2).
    * ``selection="auto"`` (default): Gumbel when δ > 0 (four times less zCDP per
      step, so twice the ε₀ once zCDP composition wins, T ≳ 30 at ε = 1), Laplace
      when δ = 0 (both are then ε₀ = ε/T; ``parameters["selection"]`` says which).

    See :mod:`dpopt.privacy.noisy_max` for ε₀.  With δ = 0 both are pure ε-DP
    (ε₀ = ε/T).

:class:`GaussianFrankWolfe` — Alg. 5 (``A_Noise-FW(Gen-convex)``, Thm. B.1)
    Any compact convex C with a linear minimization oracle: closed forms for
    ℓ1/ℓ2/ℓ∞ balls, the simplex, vertex polytopes, group-ℓ1 and nuclear-norm
    balls, and an LP for :class:`~dpopt.modeling.HPolytope` (solved by the backend
    ``solver=`` names: ``scipy-lp``, HiGHS through scipy, by default).  Step t
    uses ``s_t = LMO(∇L(θ_t) + b_t)``, ``b_t ~ N(0, σ² I)``.  The gradient has
    ℓ2 sensitivity ``Δ = 2L₂/n`` (L₂ the ℓ2-Lipschitz constant), and T noisy
    gradients compose adaptively.  Both algorithms clip per-example gradients to the
    declared constant in the sensitivity's norm (ℓ∞ for Alg. 4's scores, ℓ2 for
    Alg. 5; the fast LASSO path maps the iterate exactly into the ℓ1 ball instead),
    so the sensitivity holds at every iterate, inside C or not.  σ comes from

    * ``calibration="accountant"`` (default): the smallest σ whose T-fold
      Gaussian composition meets (ε, δ).  ``accountant="analytic"`` (default) is
      exact: every step is a full-batch Gaussian mechanism with the same
      sensitivity Δ (the clipped average gradient, whatever the iterate), i.e.
      (Δ/σ)-GDP, and T adaptive steps compose to exactly μ-GDP with μ = Δ√T/σ
      (Dong–Roth–Su 2022, Cor. 3.3), whose exact (ε, δ) curve is
      δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (their Cor. 2.13; Balle–Wang 2018);
      about 0.93× the RDP σ.  ``accountant="rdp"`` or ``"pld"`` use dp-accounting
      (the earlier default was RDP), see
      :func:`dpopt.privacy.accountant.gaussian_sigma_for_composition`;
    * ``calibration="paper"``: ``σ² = 32 L₂² T log²(T/δ) / (εn)²``
      (Alg. 1 line 1, which the proof of Thm. B.2 recalls).

Corrections to the paper (and why)
----------------------------------
1. *Score sensitivity (Alg. 4, line 3).*  The paper's scale
   ``L₁‖C‖₁√(8T log(1/δ))/(nε)`` is ``Δ'/ε₀`` with ``Δ' = L₁‖C‖₁/n`` and
   ``ε₀ = ε/√(8T log(1/δ))``.  Under replace-one the gradient of the average
   loss moves by ``(∇ℓ(d) − ∇ℓ(d'))/n``, up to ``2L₁/n`` in ℓ∞, so Δ = 2Δ'.
2. *Noisy max of non-monotone scores.*  Laplace report-noisy-max with scale
   Δ/ε₀ is ε₀-DP only for monotone scores (counting queries, BLST10 / Dwork–
   Roth Claim 3.9).  The scores ±⟨e_j, ∇L⟩ of the ℓ1 ball move in opposite
   directions, and the privacy loss of scale Δ/ε₀ tends to 2ε₀ in the tails;
   scale 2Δ/ε₀ is needed.  Together with 1., the paper's noise is 4× too
   small for its ε₀ (the mutation test in ``tests/test_frank_wolfe.py`` shows
   the audit refuting a 4× cut).
3. *Composition.*  ``ε₀ = ε/√(8T log(1/δ))`` relies on the advanced
   composition theorem, whose second term ``Tε₀(e^{ε₀} − 1)`` fits in the
   remaining ε/2 only when ε ≲ 4 log(1/δ); we solve for the largest valid ε₀
   instead (basic or zCDP, see above), which is also about √2 larger.  Net:
   our Laplace scale is ≈ 2× the paper's, and valid.
4. *Step size.*  Alg. 4 uses the constant μ = 1/(T+2); then θ₁ keeps weight
   (1 − μ)^T ≈ e^{−1} in θ_T and the method does not converge.  Thm. 5.6
   (Jaggi 2013, Thm. 1) holds for μ_t = 2/(t+2), t = 0, 1, …, which is our
   default (``step="standard"``); ``step="paper"`` reproduces the constant step.
   Step sizes are public, so privacy does not depend on them.
5. *Alg. 5's σ.*  The algorithm box writes ``32 L₂ T log²(n/δ)/(nε)²``: L₂
   must be squared (σ is in gradient units) and the proof of Thm. B.2 (and
   Alg. 1) use log(T/δ).  We use ``σ² = 32 L₂² T log²(T/δ)/(εn)²``
   = ``(√(8T) log(T/δ) Δ/ε)²``.  It is valid but loose: T Gaussian steps
   compose exactly to one Gaussian with sensitivity Δ√T (Dong–Roth–Su 2022),
   and the paper mode is checked against that exact requirement (σ is raised
   to it, and the release says so, should the formula ever fall short).
6. *Iteration count.*  The paper loops over t = 1..T−1 and calibrates for T;
   here ``steps`` is both the number of noisy steps and the count the
   noise is calibrated for.  Its default is the paper's
   ``T = Γ^{2/3}(nε)^{2/3}/(L₁‖C‖₁)^{2/3}`` (Thm. 5.5; with L₂ G_C in place of
   L₁‖C‖₁ for Thm. B.2), with the curvature Γ bounded from declared bounds
   (``Γ ≤ sup φ'' · (x_bound · diam_{q*}(C))²`` for a GLM loss with
   ``‖x‖_q ≤ x_bound``, plus ``λ diam₂(C)²``).

Fast private LASSO
------------------
For the squared loss over an ℓ1 ball (``fast="auto"``), the gradient is kept
up to date incrementally (:mod:`dpopt.mechanisms.lasso_fast`): O(p) per step
instead of two passes over X.  :meth:`PolytopeFrankWolfe.run_lasso` runs the
same mechanism directly on a dense or scipy-sparse X.  For the same noise both
paths give the same iterates (up to rounding).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache, singledispatch
from pathlib import Path
from typing import Any, ClassVar, Literal

import numpy as np
import scipy.sparse as sp

from dpopt.backends import programs
from dpopt.backends.base import Backend
from dpopt.backends.profiles import SolverProfile, merge_options
from dpopt.backends.result import OracleStatus, SolveOptions
from dpopt.errors import DataError, MechanismError, ModelError
from dpopt.executors import ExecutorSpec
from dpopt.mechanisms.base import STEPS, Mechanism, refuse_unused_solver
from dpopt.mechanisms.lasso_fast import DirectLassoGradient, IncrementalLassoGradient
from dpopt.mechanisms.params import Integral, Interval, Options, Real, arguments, renamed_setting
from dpopt.mechanisms.pipeline import Outcome, run_private
from dpopt.mechanisms.release import OracleCall, Release
from dpopt.modeling.clipping import ClippedGradient
from dpopt.modeling.losses import SquaredLoss
from dpopt.modeling.problem import Problem
from dpopt.modeling.sets import ConstraintSet, L1Ball, Simplex
from dpopt.privacy.calibration import gaussian_delta, gaussian_sigma_analytic
from dpopt.privacy.ledger import Ledger
from dpopt.privacy.noisy_max import NoisyMaxBudget, noisy_max_budget, resolve_selection
from dpopt.privacy.sampling import gaussian_noise, gumbel_noise, laplace_noise
from dpopt.progress import counted

__all__ = ["GaussianFrankWolfe", "PolytopeFrankWolfe", "step_size"]

StepRule = Literal["standard", "paper"]
Calibration = Literal["accountant", "paper"]
Solver = str | Path | SolverProfile | Backend

#: the public acceptance rule of an HPolytope LMO answer (the release's OracleCall says it)
LMO_ACCEPTANCE = ("an optimal vertex, clipped to the polytope's exact bounding box (post-processing of the "
                  "noisy gradient); no optimal answer: the run stops and releases nothing")


# ---------------------------------------------------------------------------
# Shared pieces
# ---------------------------------------------------------------------------


def step_size(t: int, steps: int, rule: str = "standard") -> float:
    """Frank–Wolfe step μ_t for t = 0, …, T−1: ``2/(t+2)`` (Jaggi 2013) or the paper's ``1/(T+2)``."""
    return 2.0 / (t + 2.0) if rule == "standard" else 1.0 / (steps + 2.0)


#: the ``step`` setting: μ_t = 2/(t+2) (Jaggi 2013) or the paper's constant 1/(T+2)
STEP_RULES = Options(("standard", "paper"))


def _check_problem(problem: object, name: str) -> Problem:
    if not isinstance(problem, Problem):
        raise MechanismError(f"{name}.run() needs a dpopt Problem, got {type(problem).__name__}")
    if problem.perturbation is not None:
        raise MechanismError("the problem already carries a perturbation; pass the plain problem")
    if problem.constraint is None:
        raise MechanismError(f"{name} needs a bounded constraint set C (Frank–Wolfe moves inside C)")
    if not problem.constraint.bounded:  # the set's declaration: no linear minimization oracle
        raise MechanismError(
            f"{name} needs a bounded constraint set with a linear minimization oracle; "
            f"{type(problem.constraint).__name__} is unbounded: use a Box, or DPGradientDescent or "
            "ObjectivePerturbation over it"
        )
    if problem.l1_weight > 0:  # an L1Norm (or another term declaring an ℓ1 part)
        raise MechanismError(
            f"{name} needs a smooth objective: replace the L1Norm regularizer by an L1Ball constraint"
        )
    other = [type(r).__name__ for r in problem.regularizers if r.elastic_weights is None]
    if other:  # the gradient oracle adds the declared (λ/2)‖θ‖² parts only
        raise MechanismError(
            f"{name} needs a smooth objective: it handles L2Squared regularizers only, not {', '.join(other)}"
        )
    return problem


def _curvature_bound(problem: Problem) -> float:
    """Γ ≤ sup φ'' · (x_bound · diam_{q*}(C))² + λ diam₂(C)² from declared bounds (inf if unknown)."""
    c = problem.constraint
    assert c is not None
    h = problem.loss.d2phi_bound()
    if h is None:
        return math.inf
    data = problem.loss.data
    dual = {1.0: "inf", 2.0: 2, math.inf: 1}[data.norm_order]
    return h * (data.x_bound * c.diameter(dual)) ** 2 + problem.l2_weight * c.diameter(2) ** 2  # type: ignore[arg-type]


def _paper_iterations(curvature: float, n: int, epsilon: float, scale: float, what: str) -> int:
    """``T = Γ^{2/3}(nε)^{2/3}/scale^{2/3}`` rounded up (TTZ14 Thm. 5.5 / B.2)."""
    if not (math.isfinite(curvature) and curvature > 0 and scale > 0):
        raise MechanismError(
            f"cannot choose the paper's T without a finite curvature bound and {what}; pass steps=T"
        )
    return max(1, math.ceil((curvature * n * epsilon / scale) ** (2.0 / 3.0)))


# ---------------------------------------------------------------------------
# Alg. 4: vertex scorers
# ---------------------------------------------------------------------------


class VertexScorer:
    """Scores ``⟨s, g⟩`` of the rows s of a vertex array ``V`` (k, p)."""

    coordinate_steps: ClassVar[bool] = False

    def __init__(self, V: np.ndarray) -> None:
        self.V = np.asarray(V, dtype=np.float64)
        self.n_candidates = int(self.V.shape[0])
        self.l1_radius = float(np.max(np.abs(self.V).sum(axis=1)))

    def scores(self, g: np.ndarray) -> np.ndarray:
        return np.asarray(self.V @ g)

    def vertex(self, i: int) -> np.ndarray:
        return self.V[i].copy()


class L1BallScorer(VertexScorer):
    """The 2p vertices ``+r e_0..+r e_{p−1}, −r e_0..−r e_{p−1}`` of the ℓ1 ball, scored in O(p)."""

    coordinate_steps = True

    def __init__(self, dim: int, radius: float) -> None:
        self.dim, self.r = dim, float(radius)
        self.n_candidates = 2 * dim
        self.l1_radius = self.r

    def scores(self, g: np.ndarray) -> np.ndarray:
        return np.concatenate([self.r * g, -self.r * g])

    def coordinate(self, i: int) -> tuple[int, float]:
        return (i, self.r) if i < self.dim else (i - self.dim, -self.r)

    def vertex(self, i: int) -> np.ndarray:
        j, value = self.coordinate(i)
        out = np.zeros(self.dim)
        out[j] = value
        return out


class SimplexScorer(VertexScorer):
    """The p vertices ``scale·e_i`` of the simplex, scored in O(p)."""

    def __init__(self, dim: int, scale: float) -> None:
        self.dim, self.scale = dim, float(scale)
        self.n_candidates = dim
        self.l1_radius = self.scale

    def scores(self, g: np.ndarray) -> np.ndarray:
        return self.scale * g

    def vertex(self, i: int) -> np.ndarray:
        out = np.zeros(self.dim)
        out[i] = self.scale
        return out


@singledispatch
def vertex_scorer(constraint: ConstraintSet, max_vertices: int) -> VertexScorer:
    """The vertex scorer of a polytope with a vertex list, or a clear refusal.

    Any set with a finite :attr:`~dpopt.modeling.sets.ConstraintSet.n_vertices` is
    scored from its vertex array; a set with a faster scorer registers it with
    ``@vertex_scorer.register`` (the ℓ1 ball and the simplex below).
    """
    n = constraint.n_vertices
    if isinstance(n, float):
        raise MechanismError(
            f"PolytopeFrankWolfe (Alg. 4) needs a polytope given by its vertices; "
            f"{type(constraint).__name__} has no vertex list. Use GaussianFrankWolfe (Alg. 5), "
            "or a VertexPolytope (HPolytope.to_vertex_polytope() in small dimensions)"
        )
    if n > max_vertices:
        raise MechanismError(
            f"{type(constraint).__name__} in dimension {constraint.dim} has more than "
            f"max_vertices={max_vertices} vertices; raise max_vertices or use GaussianFrankWolfe (Alg. 5)"
        )
    return VertexScorer(constraint.vertices(max_count=max_vertices))


@vertex_scorer.register
def _(constraint: L1Ball, max_vertices: int) -> VertexScorer:
    return L1BallScorer(constraint.dim, constraint.r)


@vertex_scorer.register
def _(constraint: Simplex, max_vertices: int) -> VertexScorer:
    return SimplexScorer(constraint.dim, constraint.scale)


# ---------------------------------------------------------------------------
# Alg. 4: gradient oracles and the loop
# ---------------------------------------------------------------------------


def clipped_smooth_gradient(problem: Problem, *, norm: object) -> Callable[[np.ndarray], np.ndarray]:
    """θ ↦ (1/n) Σ clip_L(∇ℓ(θ; d_i)) + λθ, with L the loss's declared constant in ``norm``.

    The sensitivities ``Δ = 2L₂/n`` (Alg. 5, ``norm=2``) and ``Δ = 2L₁‖C‖₁/n`` of the
    scores ⟨s, ∇L⟩ (Alg. 4, ``norm="inf"``: ``|⟨s, g − g'⟩| ≤ ‖s‖₁‖g − g'‖∞``) need
    every per-example gradient within the declared L, which holds on C only; an LMO
    answer feasible to solver tolerance (the HPolytope LP) can leave C.  Clipping each
    per-example gradient to L (:class:`~dpopt.modeling.clipping.ClippedGradient`)
    makes the bound hold for every iterate by construction (issue 10, item 5); on C
    it changes nothing.  The (λ/2)‖θ‖² term is data-independent and not clipped.
    """
    constants = problem.loss_constants()
    bound = constants.lipschitz_l2 if norm == 2 else constants.lipschitz_l1
    clipped = ClippedGradient(problem.loss, norm=norm, bound=bound)
    lam = problem.l2_weight
    if problem.perturbation is not None:  # pragma: no cover - refused by _check_problem
        raise MechanismError("the problem already carries a perturbation; pass the plain problem")
    return lambda theta: clipped(theta) + lam * theta


class ProblemGradient:
    """The straightforward oracle: the clipped smooth gradient at the current iterate.

    Per-example gradients are clipped to the declared ℓ1-Lipschitz constant in ℓ∞
    (:func:`clipped_smooth_gradient`), so the score sensitivity ``2L₁‖C‖₁/n`` holds
    even at an iterate outside C.
    """

    def __init__(self, problem: Problem, theta0: np.ndarray) -> None:
        self.problem = problem
        self.theta = np.array(theta0, dtype=np.float64)
        self._gradient = clipped_smooth_gradient(problem, norm="inf")

    def gradient(self) -> np.ndarray:
        return self._gradient(self.theta)

    def advance(self, mu: float, scorer: VertexScorer, i: int) -> None:
        self.theta = (1.0 - mu) * self.theta + mu * scorer.vertex(i)


class CoordinateGradient:
    """Adapter: a LASSO gradient oracle stepping toward the ℓ1-ball vertex ``±r e_j``.

    The incremental gradient cannot clip per example, so the iterate is mapped
    exactly into the declared ball instead: after the first step the gradient is
    taken at ``θ · min(1, r/‖θ‖₁)`` with r the scorer's (public) ℓ1 radius.  On the
    ball ``|⟨x, θ⟩| ≤ x_bound·r``, so every per-example gradient is within the declared
    L₁ and the scores keep sensitivity ``2L₁r/n`` (issue 10, item 5).  The iterates are
    convex combinations of ``±r e_j``, so the map only ever undoes rounding (or a
    faulty vertex).
    """

    def __init__(self, oracle: IncrementalLassoGradient | DirectLassoGradient) -> None:
        self.oracle = oracle
        self.l1_radius: float | None = None

    @property
    def theta(self) -> np.ndarray:
        return self.oracle.theta

    def gradient(self) -> np.ndarray:
        return self.oracle.gradient(l1_radius=self.l1_radius)

    def advance(self, mu: float, scorer: VertexScorer, i: int) -> None:
        assert isinstance(scorer, L1BallScorer)
        self.l1_radius = scorer.r
        j, value = scorer.coordinate(i)
        self.oracle.step(mu, j, value)


def noisy_max_frank_wolfe(oracle: Any, scorer: VertexScorer, steps: int, draw: Callable[[int], np.ndarray],
                          rule: str) -> np.ndarray:
    """Run T noisy-argmin Frank–Wolfe steps; ``draw(k)`` returns the k selection noises of a step."""
    for t in counted(steps, "Frank–Wolfe iterations"):
        alpha = scorer.scores(oracle.gradient()) + draw(scorer.n_candidates)
        oracle.advance(step_size(t, steps, rule), scorer, int(np.argmin(alpha)))
    return np.asarray(oracle.theta)


@dataclass(frozen=True)
class PolytopePlan:
    """A calibrated Alg. 4 run (public quantities only)."""

    scorer: VertexScorer
    steps: int
    budget: NoisyMaxBudget
    sensitivity: float
    scale: float
    lipschitz_l1: float
    fast: bool
    parameters: dict[str, Any] = field(default_factory=dict)


class PolytopeFrankWolfe(Mechanism):
    """Private Frank–Wolfe over a polytope with noisy-max vertex selection (TTZ14 Alg. 4).

    Parameters
    ----------
    epsilon, delta : float
        Target guarantee under replace-one neighbours (δ = 0: pure ε-DP, ε₀ = ε/T).
    steps : int, optional
        T, the number of noisy selections (default: the paper's T of Thm. 5.5
        from declared bounds).  ``iterations=`` is its deprecated alias (FutureWarning).
    selection : {"auto", "laplace", "gumbel"}
        Laplace report-noisy-max (scale 2Δ/ε₀) or the exponential mechanism
        (Gumbel noisy-max, scale 2Δ/ε₀); see the module notes for their compositions.
        ``"auto"`` (default): Gumbel when δ > 0, Laplace when δ = 0.
    step : {"standard", "paper"}
        μ_t = 2/(t+2) (default; Jaggi 2013) or the paper's constant 1/(T+2).
    fast : {"auto", True, False}
        Use the incremental LASSO gradient for a squared loss over an ℓ1 ball
        (``"auto"``: whenever it applies; ``True``: refuse other problems).
    max_vertices : int
        Largest vertex list the generic path enumerates.
    ledger : Ledger, optional
        Charged once per run with (ε, δ).
    iterations : int, optional
        Deprecated alias of ``steps``.

    Notes
    -----
    Score sensitivity ``Δ = 2 L₁ ‖C‖₁ / n`` with L₁ the loss's declared
    ℓ1-Lipschitz constant over C; per-step budget ε₀ from
    :func:`dpopt.privacy.noisy_max.noisy_max_budget`.  The paper's own scale
    ``L₁‖C‖₁√(8T log(1/δ))/(nε)`` is reported as ``paper_scale`` for
    comparison only (it is not private under replace-one, see the module notes).
    """

    name = "PolytopeFrankWolfe"
    uses_solver = False  # the LMO over a vertex list is a noisy argmin
    theorem = "TTZ14 Alg. 4 / Thm. 5.4, corrected scale 2Δ/ε₀ with Δ = 2L₁‖C‖₁/n"

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **Mechanism._parameter_constraints,
        "steps": STEPS,
        "selection": [Options(("auto", "laplace", "gumbel"))],
        "step": [STEP_RULES],
        "fast": [Options(("auto", True, False))],
        "max_vertices": [Interval(Integral, 1, None, closed="left")],
        "iterations": STEPS,
    }

    def __init__(self, epsilon: float, delta: float = 0.0, *, steps: int | None = None,
                 selection: str = "auto", step: str = "standard", fast: bool | str = "auto",
                 max_vertices: int = 100_000, ledger: Ledger | None = None,
                 iterations: int | None = None) -> None:
        self._validate(arguments(locals()))
        super().__init__(epsilon, delta, ledger=ledger)
        steps = renamed_setting(self.name, "steps", steps, "iterations", iterations)
        self.steps = None if steps is None else int(steps)
        self.selection = resolve_selection(selection, self.delta)
        self.step = step
        self.fast = fast
        self.max_vertices = int(max_vertices)

    # -- calibration ----------------------------------------------------------
    def selection_scale(self, sensitivity: float, budget: NoisyMaxBudget) -> float:
        """Noise scale of one selection: ``2Δ/ε₀`` (the mutation tests override this)."""
        return budget.scale(sensitivity)

    def _calibrate(self, scorer: VertexScorer, n: int, lipschitz_l1: float, curvature: float,
                   fast: bool) -> PolytopePlan:
        if not (math.isfinite(lipschitz_l1) and lipschitz_l1 >= 0):
            raise MechanismError(
                f"{self.name} needs the loss's ℓ1-Lipschitz constant (sup ‖∇ℓ‖∞) over C, and it is not "
                "finite here; bound the domain with a constraint set and declare x_bound/y_bound"
            )
        l1r = scorer.l1_radius
        steps = self.steps or _paper_iterations(curvature, n, self.epsilon, lipschitz_l1 * l1r,
                                                     "a positive ℓ1-Lipschitz constant")
        budget = noisy_max_budget(self.epsilon, self.delta, steps, self.selection)
        sensitivity = 2.0 * lipschitz_l1 * l1r / n
        scale = self.selection_scale(sensitivity, budget)
        paper = (lipschitz_l1 * l1r * math.sqrt(8 * steps * math.log(1 / self.delta)) / (n * self.epsilon)
                 if self.delta > 0 else math.nan)
        params = {
            "selection": self.selection, "composition": budget.composition, "steps": steps,
            "step_epsilon": budget.step_epsilon, "sensitivity_score": sensitivity,
            "noise_scale": scale, "paper_scale": paper, "lipschitz_l1": lipschitz_l1,
            "l1_radius": l1r, "candidates": scorer.n_candidates, "step_rule": self.step,
            "fast_lasso": fast, "neighbouring": "replace-one",
        }
        return PolytopePlan(scorer, steps, budget, sensitivity, scale, lipschitz_l1, fast, params)

    def plan(self, problem: Problem) -> PolytopePlan:
        """Validate ``problem`` and calibrate the selection noise (no data values read)."""
        problem = _check_problem(problem, self.name)
        c = problem.constraint
        assert c is not None
        scorer = vertex_scorer(c, self.max_vertices)
        lasso = isinstance(problem.loss, SquaredLoss) and isinstance(scorer, L1BallScorer)
        if self.fast is True and not lasso:
            raise MechanismError("fast=True needs a SquaredLoss over an L1Ball (the LASSO); use fast='auto'")
        distributed = bool(getattr(problem.loss.data, "is_distributed", False))
        if self.fast is True and distributed:  # the incremental gradient holds X in memory
            raise MechanismError("fast=True needs the data in memory; on a Dask-backed dataset use fast='auto' "
                                 "(the per-partition clipped gradient)")
        lip = problem.loss_constants().lipschitz_l1
        return self._calibrate(scorer, problem.n, lip, _curvature_bound(problem),
                               lasso and self.fast is not False and not distributed)

    # -- running --------------------------------------------------------------
    def _draw(self, rng: np.random.Generator, scale: float) -> Callable[[int], np.ndarray]:
        if self.selection == "laplace":
            return lambda k: laplace_noise(rng, scale, k)
        return lambda k: -gumbel_noise(rng, scale, k)

    def run(self, problem: Problem, *, solver: Solver = "auto", time_limit: float | None = None,
            seed: int | None = None, threads: int | None = None, keep_diagnostics: bool = False,
            executor: ExecutorSpec = None) -> Release:
        """Run Alg. 4 once on ``problem`` and return the release.

        No solver is called (the LMO over a vertex list is a noisy argmin): an explicit
        ``solver`` or ``time_limit`` is refused before the charge (MechanismError);
        ``threads`` is accepted for the common interface.
        """
        self._check_time_limit(time_limit)
        plan = self.plan(problem)
        refuse_unused_solver(self, solver, time_limit, "the LMO over a vertex list is a noisy argmin")
        c = problem.constraint
        assert c is not None

        def work(rng: np.random.Generator) -> Outcome:
            oracle: Any
            if plan.fast:
                data = problem.loss.data
                oracle = CoordinateGradient(IncrementalLassoGradient(data.X, data.y, c.center(),
                                                                     lam=problem.l2_weight))
            else:
                oracle = ProblemGradient(problem, c.center())
            draw = self._draw(rng, plan.scale)
            return Outcome(noisy_max_frank_wolfe(oracle, plan.scorer, plan.steps, draw, self.step))

        return run_private(self, work, problem=problem.summary(), n=problem.n, parameters=dict(plan.parameters), seed=seed,
                           keep_diagnostics=keep_diagnostics, executor=executor, solver=solver,
                           feature_names=problem.feature_names)

    def run_lasso(self, X: Any, y: np.ndarray, *, radius: float, x_bound: float = 1.0, y_bound: float = 1.0,
                  lam: float = 0.0, seed: int | None = None, fast: bool = True) -> Release:
        """Private LASSO on a dense or scipy-sparse X: ``min (1/n)‖Xθ − y‖² (+ λ/2‖θ‖²)`` over ``‖θ‖₁ ≤ r``.

        The same mechanism as :meth:`run` with ``SquaredLoss`` over ``L1Ball``,
        without building a :class:`~dpopt.modeling.Dataset` (which holds dense
        data only).  Declared bounds: ``‖x_i‖∞ ≤ x_bound`` and ``|y_i| ≤
        y_bound``; rows outside them are refused.  ℓ1-Lipschitz constant over
        the ball: ``L₁ = 2(r·x_bound + y_bound)·x_bound``.

        Parameters
        ----------
        X : ndarray or scipy sparse matrix, shape (n, p)
        y : ndarray, shape (n,)
        radius : float
            r of the ℓ1 ball.
        x_bound, y_bound : float
            Declared bounds.
        lam : float
            Weight of an optional (λ/2)‖θ‖² term.
        seed : int, optional
            For reproducible noise only.
        fast : bool
            Incremental gradient (default) or the straightforward full gradient.
        """
        Xm, yv = _check_lasso_data(X, y, x_bound, y_bound)
        n, p = Xm.shape
        ball = L1Ball(p, radius)
        lip = 2.0 * (ball.r * x_bound + y_bound) * x_bound
        curvature = 2.0 * (x_bound * 2.0 * ball.r) ** 2 + lam * (2.0 * ball.r) ** 2
        plan = self._calibrate(L1BallScorer(p, ball.r), n, lip, curvature, fast)
        summary = f"squared loss on n={n}, d={p} ({'sparse' if sp.issparse(Xm) else 'dense'}) over L1Ball"

        def work(rng: np.random.Generator) -> Outcome:
            cls = IncrementalLassoGradient if fast else DirectLassoGradient
            oracle = CoordinateGradient(cls(Xm, yv, np.zeros(p), lam=lam))
            draw = self._draw(rng, plan.scale)
            return Outcome(noisy_max_frank_wolfe(oracle, plan.scorer, plan.steps, draw, self.step))

        return run_private(self, work, problem=summary, n=n, parameters=dict(plan.parameters), seed=seed)


def _check_lasso_data(X: Any, y: Any, x_bound: float, y_bound: float) -> tuple[Any, np.ndarray]:
    """Validate shapes and map the data onto the declared bounds row by row.

    Entries of X are clipped to [−x_bound, x_bound] (each row then has ‖x‖∞ ≤ x_bound) and
    labels to [−y_bound, y_bound]: a row outside its declaration is mapped, never refused
    for its values (refusing would reveal it).  Only shapes and NaN/inf are refused."""
    for value, name in ((x_bound, "x_bound"), (y_bound, "y_bound")):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not (math.isfinite(value) and value > 0):
            raise MechanismError(f"{name} must be a positive finite number (a declared public bound)")
    Xm: Any = sp.csr_matrix(X, dtype=np.float64) if sp.issparse(X) else np.asarray(X, dtype=np.float64)
    yv = np.asarray(y, dtype=np.float64)
    if Xm.ndim != 2 or yv.shape != (Xm.shape[0],) or Xm.shape[0] == 0 or Xm.shape[1] == 0:
        raise DataError(f"X must be (n, p) and y (n,), got shapes {Xm.shape} and {yv.shape}")
    values = Xm.data if sp.issparse(Xm) else Xm
    if not (np.all(np.isfinite(values)) and np.all(np.isfinite(yv))):
        raise DataError("X or y contains NaN or inf entries")
    if values.size and float(np.max(np.abs(values))) > x_bound:
        if sp.issparse(Xm):
            Xm = Xm.copy()
            np.clip(Xm.data, -x_bound, x_bound, out=Xm.data)
        else:
            Xm = np.clip(Xm, -x_bound, x_bound)
    return Xm, np.clip(yv, -y_bound, y_bound)


# ---------------------------------------------------------------------------
# Alg. 5
# ---------------------------------------------------------------------------


@lru_cache(maxsize=256)
def _accountant_sigma(sensitivity: float, steps: int, epsilon: float, delta: float, method: str) -> float:
    """σ from the dp-accounting accountant (cached: public inputs only, and RDP search is slow)."""
    from dpopt.privacy.accountant import gaussian_sigma_for_composition

    return gaussian_sigma_for_composition(sensitivity, steps, epsilon, delta, method=method)


def paper_sigma_checked(lipschitz_l2: float, n: int, steps: int, epsilon: float, delta: float) -> tuple[float, bool]:
    """The paper's σ (Alg. 1 line 1) and whether it had to be raised to the exact requirement.

    T Gaussian steps of sensitivity Δ = 2L₂/n compose exactly to one Gaussian
    with sensitivity Δ√T, so ``gaussian_delta(σ, Δ√T, ε) ≤ δ`` decides validity.
    """
    from dpopt.privacy.accountant import paper_sigma

    sigma = paper_sigma(lipschitz_l2, n, steps, epsilon, delta)
    total = 2.0 * lipschitz_l2 / n * math.sqrt(steps)
    if total == 0.0 or gaussian_delta(sigma, total, epsilon) <= delta:
        return sigma, False
    return gaussian_sigma_analytic(total, epsilon, delta), True


@dataclass(frozen=True)
class GaussianPlan:
    """A calibrated Alg. 5 run (public quantities only)."""

    steps: int
    sigma: float
    sensitivity: float
    lmo: str
    parameters: dict[str, Any] = field(default_factory=dict)


def gaussian_frank_wolfe(gradient: Callable[[np.ndarray], np.ndarray], lmo: Callable[[np.ndarray], np.ndarray],
                         theta0: np.ndarray, steps: int, draw: Callable[[], np.ndarray], rule: str) -> np.ndarray:
    """Run T Frank–Wolfe steps with ``s_t = LMO(∇L(θ_t) + b_t)``, ``b_t = draw()``."""
    theta = np.array(theta0, dtype=np.float64)
    for t in counted(steps, "Frank–Wolfe iterations"):
        s = lmo(gradient(theta) + draw())
        mu = step_size(t, steps, rule)
        theta = (1.0 - mu) * theta + mu * s
    return theta


class GaussianFrankWolfe(Mechanism):
    """Private Frank–Wolfe over a general convex set with Gaussian gradient noise (TTZ14 Alg. 5).

    Parameters
    ----------
    epsilon, delta : float
        Target guarantee under replace-one neighbours; δ > 0 is required.
    steps : int, optional
        T, the number of noisy gradients (default: the paper's T of Thm. B.2,
        with the Gaussian width of C).  ``iterations=`` is its deprecated alias (FutureWarning).
    calibration : {"accountant", "paper"}
        σ from a privacy accountant (tight) or the paper's formula.
    accountant : {"analytic", "rdp", "pld"}
        The accountant of ``calibration="accountant"``: exact μ-GDP (default),
        dp-accounting's RDP (the earlier default) or PLD; reported as
        ``parameters["accountant"]``.
    step : {"standard", "paper"}
        μ_t = 2/(t+2) (default) or the paper's constant 1/(T+2).
    ledger : Ledger, optional
        Charged once per run with (ε, δ).
    iterations : int, optional
        Deprecated alias of ``steps``.

    Notes
    -----
    Gradient sensitivity ``Δ = 2L₂/n``; the release reports the mode, σ and the
    paper's σ.  The LMO is closed-form for the norm balls, the simplex, vertex
    polytopes, group-ℓ1 and nuclear-norm balls, and an LP for
    :class:`~dpopt.modeling.HPolytope`, solved by the backend ``solver=`` names
    (:func:`dpopt.backends.programs.resolve_lp_backend`; ``"auto"``: ``scipy-lp``); it is
    post-processing of the noisy gradient, so its accuracy does not affect privacy:
    the next gradient is taken with per-example gradients clipped to L₂
    (:func:`clipped_smooth_gradient`), so an iterate the LP leaves outside C by the
    solver's tolerance cannot raise the sensitivity above 2L₂/n (issue 10, item 5).
    """

    name = "GaussianFrankWolfe"
    theorem = "TTZ14 Alg. 5 / Thm. B.1, Gaussian gradients with Δ = 2L₂/n"

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **Mechanism._parameter_constraints,
        "delta": [Interval(Real, 0, 1, closed="neither",
                           why="GaussianFrankWolfe needs delta > 0 (Gaussian noise); use PolytopeFrankWolfe "
                               "for pure ε-DP over a polytope")],
        "steps": STEPS,
        "calibration": [Options(("accountant", "paper"))],
        "accountant": [Options(("analytic", "rdp", "pld"))],
        "step": [STEP_RULES],
        "iterations": STEPS,
    }

    def __init__(self, epsilon: float, delta: float, *, steps: int | None = None,
                 calibration: str = "accountant", accountant: str = "analytic", step: str = "standard",
                 ledger: Ledger | None = None, iterations: int | None = None) -> None:
        self._validate(arguments(locals()))
        super().__init__(epsilon, delta, ledger=ledger)
        steps = renamed_setting(self.name, "steps", steps, "iterations", iterations)
        self.steps = None if steps is None else int(steps)
        self.calibration = calibration
        self.accountant = accountant
        self.step = step

    def noise_sigma(self, lipschitz_l2: float, n: int, steps: int) -> tuple[float, dict[str, Any]]:
        """σ of the gradient noise and its record (the mutation tests override this)."""
        sensitivity = 2.0 * lipschitz_l2 / n
        paper, raised = paper_sigma_checked(lipschitz_l2, n, steps, self.epsilon, self.delta)
        record: dict[str, Any] = {"noise_scale_paper": paper, "noise_scale_paper_raised_to_exact": raised}
        if self.calibration == "paper":
            return paper, record
        sigma = _accountant_sigma(sensitivity, steps, self.epsilon, self.delta, self.accountant)
        return sigma, record

    def plan(self, problem: Problem, solver: Solver = "auto") -> GaussianPlan:
        """Validate ``problem`` and calibrate σ (no data values read)."""
        problem = _check_problem(problem, self.name)
        c = problem.constraint
        assert c is not None
        if c.lmo_is_lp:
            lmo = f"lp:{programs.resolve_lp_backend(solver)[0].name}"  # unknown or unable solvers refused here
        else:
            lmo = "closed-form" if c.closed_form_lmo else f"{type(c).__name__}.lmo"
        lip = problem.loss_constants().lipschitz_l2
        if not (math.isfinite(lip) and lip >= 0):
            raise MechanismError(
                f"{self.name} needs the loss's ℓ2-Lipschitz constant (sup ‖∇ℓ‖₂) over C, and it is not "
                "finite here; bound the domain with a constraint set and declare x_bound/y_bound"
            )
        steps = self.steps
        if steps is None:
            width = c.gaussian_width().high
            steps = _paper_iterations(_curvature_bound(problem), problem.n, self.epsilon, lip * width,
                                      "a positive ℓ2-Lipschitz constant")
        sigma, record = self.noise_sigma(lip, problem.n, steps)
        sensitivity = 2.0 * lip / problem.n
        params = {
            "calibration": self.calibration, "accountant": self.accountant if self.calibration == "accountant" else None,
            "noise": "gaussian", "noise_scale": sigma, **record, "steps": steps, "sensitivity_l2": sensitivity,
            "lipschitz_l2": lip, "lmo": lmo, "step_rule": self.step, "neighbouring": "replace-one",
        }
        return GaussianPlan(steps, sigma, sensitivity, lmo, params)

    def calls_solver(self, problem: Any) -> bool:
        """Only a set whose LMO is a linear program (``lmo_is_lp``, e.g. an
        :class:`~dpopt.modeling.HPolytope`) calls an LP solver."""
        return bool(getattr(getattr(problem, "constraint", None), "lmo_is_lp", False))

    def run(self, problem: Problem, *, solver: Solver = "auto", time_limit: float | None = None,
            seed: int | None = None, threads: int | None = None, keep_diagnostics: bool = False,
            executor: ExecutorSpec = None) -> Release:
        """Run Alg. 5 once on ``problem`` and return the release.

        ``solver`` (a name, a TOML profile or a Backend) solves an
        :class:`~dpopt.modeling.HPolytope`'s LMO, an LP (``"auto"``: ``scipy-lp``, HiGHS
        through scipy; ``"highs"`` and ``"scipy"`` mean it too; ``"clarabel"``, ``"scs"``
        also solve it), with ``time_limit`` seconds and ``threads`` per LP.  Every other
        set has a closed-form LMO: an explicit ``solver`` or ``time_limit`` is then
        refused before the charge (MechanismError).
        """
        self._check_time_limit(time_limit)
        plan = self.plan(problem, solver)
        c = problem.constraint
        assert c is not None
        lmo: Callable[[np.ndarray], np.ndarray] = c.lmo
        calls: tuple[OracleCall, ...] = ()
        parameters = dict(plan.parameters)
        profile: SolverProfile | None = None
        if c.lmo_is_lp:
            backend, profile = programs.resolve_lp_backend(solver)
            calls = (OracleCall(backend.name, backend.require(), f"step solver ({plan.steps} LMO calls)",
                                LMO_ACCEPTANCE),)
            parameters["lmo_backend"] = backend.name
            lmo = _backend_lmo(c, backend, merge_options(profile, time_limit=time_limit, threads=threads))
        else:
            refuse_unused_solver(self, solver, time_limit, f"the {type(c).__name__} LMO is closed form")

        def work(rng: np.random.Generator) -> Outcome:
            draw = lambda: gaussian_noise(rng, plan.sigma, problem.dim)  # noqa: E731
            return Outcome(gaussian_frank_wolfe(clipped_smooth_gradient(problem, norm=2), lmo, c.center(),
                                                plan.steps, draw, self.step), calls=calls)

        return run_private(self, work, problem=problem.summary(), n=problem.n, parameters=parameters, seed=seed,
                           keep_diagnostics=keep_diagnostics, executor=executor, solver=profile,
                           feature_names=problem.feature_names)


def _backend_lmo(polytope: Any, backend: Backend, options: SolveOptions) -> Callable[[np.ndarray], np.ndarray]:
    """g ↦ the polytope's LMO answer from ``backend``, clipped to its exact bounding box.

    The LP is compiled once here, before the charge (public data only).  The answer is
    post-processing of the noisy gradient: a non-optimal solve raises a ModelError whose
    message holds no number (as the modeling layer's LMO always did), so the run stops
    with the budget spent and nothing released.  Clipping to the box keeps every iterate
    within the box the declared constants were computed on
    (:meth:`~dpopt.modeling.HPolytope.clip_to_box`).
    """
    prepared = programs.prepare_polytope_lmo(backend, polytope)

    def lmo(g: np.ndarray) -> np.ndarray:
        result = backend.solve(prepared, np.asarray(g, dtype=np.float64), options)
        if result.status is not OracleStatus.OPTIMAL or result.solution is None:
            raise ModelError(f"HPolytope LMO: the LP did not solve ({backend.name}: {result.status.value})")
        return polytope.clip_to_box(result.solution)

    return lmo
