"""Private Frank–Wolfe on the dual of Ω∞-regularized ERM (Kumar–Deisenroth 2019, Alg. 2, Eq. (12)-(13)).

Setting and notation
--------------------
With the average-loss normalization of dpopt and ``lam = λ/n`` (Eq. (1)),

    P(θ) = L̂(θ) + lam·Ω∞(θ),      L̂(θ) = (1/n) Σ φ(⟨x_i, θ⟩, y_i) + (Λ/2)‖θ‖²,

and, since ``lam·Ω∞`` is the support function of ``K = lam·|P|(F)`` (Eq. (5)),
the dual is (Eq. (12)/(25))

    max_{s∈K} −L̂*(−s),     θ(s) = argmin_θ L̂(θ) + ⟨s, θ⟩ = ∇L̂*(−s)     (Eq. (13)).

Frank–Wolfe on ``h(s) = L̂*(−s)`` (Alg. 1/2): ``∇h(s) = −θ(s)``, so the
linear step picks ``argmax_{v∈S} ⟨v, θ(s_{t−1})⟩`` over the vertices S of K
— the greedy algorithm without noise.  ``L̂*`` needs the Fenchel conjugates of
the per-example losses (:class:`DualLoss`: squared and logistic); a loss
without a known conjugate is refused.  ``L̂`` must be strongly convex (the
paper assumes it, Sec. 4.2): the ℓ2² term Λ > 0 is required.

Privacy (replace-one neighbours) — corrections to the paper
----------------------------------------------------------
1. *Score sensitivity.*  Alg. 2 adds ``Lap(L Γ_K √(8T log(1/δ))/(nε))`` with L
   "the ℓ1-Lipschitz constant of L̂*", transplanted from TTZ14's Alg. 4 where
   the gradient is an average of per-example gradients.  Here it is not: the
   conjugate of a sum is not a sum of conjugates, and the gradient ``θ(s)``
   depends on all rows through an optimization; the Lipschitz constant of L̂*
   bounds ``‖θ(s)‖``, not how θ(s) moves between neighbours.  The correct
   bound uses strong convexity: ``‖θ_D(s) − θ_{D'}(s)‖₂ ≤ Δθ = 2L/(nΛ)``
   (L: sup ‖∇ℓ‖₂ over the public ball ``‖θ(s)‖₂ ≤ R_θ`` that contains every
   θ(s), s ∈ K), so the score ``−⟨v, θ(s)⟩`` of a vertex moves by at most
   ``Δ = sup_{v∈K} ⟨v, δθ⟩ = lam·Ω∞(δθ) ≤ lam·R₂(|P|(F))·Δθ`` with
   ``R₂ = max_{s∈|P|(F)} ‖s‖₂``.  Inner solves are certified to
   ``‖θ̃ − θ(s)‖ ≤ inner_tolerance`` and Δθ gains ``2·inner_tolerance``.
2. *Noisy max, exactly.*  The scores are rounded onto the public grid
   γ = ``grid_step(min(Δ, 2Δ/ε₀), B)`` (B = number of blocks, γ·B ≤ Δ/256), which raises
   the sensitivity of a candidate's total score to Δ' = (⌊Δ/γ⌋ + B)γ ≤ Δ + Bγ
   (``parameters["score_grid"]``, ``"score_sensitivity_grid"``).  Report-noisy-min
   with exact discrete Laplace noise over non-monotone scores needs scale
   ``2Δ'/ε₀``; the exponential mechanism (``"gumbel"``) uses the same scale and is
   sampled exactly by rejection with exact Bernoulli(exp(−x)) trials
   (:mod:`dpopt.privacy.exact_selection`, which proves both rules ε₀-DP and the
   exponential mechanism ε₀-bounded-range).  Composition over T steps: the
   better of basic and zCDP composition (:func:`noisy_max_budget`), not the
   advanced-composition constant √(8T log(1/δ)).  The dual step that follows each
   selection is post-processing of the chosen vertex.
3. *Primal recovery touches the data.*  Alg. 2 privatizes the dual iterate
   ``ŝ = s_T``; Eq. (13) then computes ``θ(ŝ)`` from the data again, which is
   not post-processing.  dpopt releases θ(ŝ) rounded onto a public grid plus exact
   discrete noise calibrated to ``Δθ`` (output perturbation for fixed public ŝ,
   :meth:`NoiseSpec.release`: discrete Gaussian, or discrete Laplace for pure ε;
   ``parameters["recovery_grid_step"]``) on a share of the budget, and composes the
   two parts (basic composition); ``release="dual"`` releases ŝ alone with the
   whole budget on the selections.  Everything after the noisy θ is post-processing.
4. *Step size.*  Alg. 2 uses ``ρ_t = 1/(t+2)`` (``step="paper"``); the
   standard ``2/(t+2)`` (Jaggi 2013) is the default.  Steps are public.

Which vertex sets are supported (exactly)
-----------------------------------------
The noisy selection must range over an explicit candidate set with exact
accounting.  dpopt supports (i) vertex lists small enough to enumerate
(``polyhedron_vertices``; Laplace or Gumbel) and (ii) Minkowski sums of small
blocks (``vertex_blocks``: cardinality → p segments, coverage and chain cut →
one ℓ1 ball per group), where the candidates are tuples of block vertices and
the exponential mechanism ``∝ exp(−ε₀ Σ_b k_b /(2D))`` on the integer block scores
k_b factorizes into independent exact draws per block (the sum of a tuple lies in K;
D = Δ'/γ bounds the change of the total integer score).  Report-noisy-max does not factorize, so
blocks need ``selection="gumbel"``.  Anything else is refused.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from dpopt.backends.base import Backend
from dpopt.backends.profiles import SolverProfile
from dpopt.errors import MechanismError, ModelError
from dpopt.mechanisms.base import (
    NOISE_LAWS,
    STEPS,
    Mechanism,
    Plan,
    RunOptions,
    SolverNeed,
    check_noise_law,
)
from dpopt.mechanisms.params import Integral, Interval, Options, Real
from dpopt.mechanisms.pipeline import Outcome
from dpopt.mechanisms.submodular_output import loss_at_zero_bound
from dpopt.modeling.losses import Loss
from dpopt.modeling.problem import Problem
from dpopt.modeling.regularizers import L1Norm
from dpopt.modeling.submodular import SetFunction, VertexBlocks, vertex_blocks
from dpopt.modeling.submodular_norms import SubmodularNorm
from dpopt.numerics.submodular_lp import polyhedron_l2_radius, polyhedron_vertices
from dpopt.privacy.exact_selection import ExactSelector, grid_sensitivity, selection_grid
from dpopt.privacy.grid import grid_step
from dpopt.privacy.ledger import Ledger
from dpopt.privacy.noise_spec import NoiseChoice, NoiseSpec
from dpopt.privacy.noisy_max import NoisyMaxBudget, noisy_max_budget
from dpopt.progress import counted

__all__ = ["DualFrankWolfe", "DualLoss", "SelectionSpace", "dual_step_size"]

Solver = str | Path | SolverProfile | Backend


def dual_step_size(t: int, rule: str) -> float:
    """ρ_t for t = 0, …, T−1: ``2/(t+2)`` (standard) or Alg. 2's ``1/(t+3)`` (its ρ = 1/(t+2), t = 1..T)."""
    return 2.0 / (t + 2.0) if rule == "standard" else 1.0 / (t + 3.0)


# ---------------------------------------------------------------------------
# The smooth part L̂, its conjugate and the map s ↦ θ(s) of Eq. (13)
# ---------------------------------------------------------------------------


def per_example_conjugate(loss: Loss, a: np.ndarray, y: np.ndarray) -> np.ndarray:
    """φ*(a) = sup_z a z − φ(z, y) (``inf`` outside the domain): the loss's own
    :meth:`~dpopt.modeling.losses.Loss.conjugate`, for a loss that declares ``conjugate_known``
    (squared: ``a y + a²/4``; logistic: ``t log t + (1 − t) log(1 − t)`` with ``t = −a y``).
    """
    if not loss.conjugate_known:
        raise MechanismError(f"no Fenchel conjugate is known for the {loss.name} loss; DualFrankWolfe "
                             f"supports the losses that declare one ({conjugate_losses()})")
    return loss.conjugate(a, y)


def conjugate_losses() -> str:
    """The loss classes that declare ``conjugate_known`` (for refusals), found by discovery."""
    from dpopt.discovery import subclasses

    return " and ".join(c.__name__ for c in subclasses(Loss, within="dpopt.modeling", public=True)
                        if c.conjugate_known)


class DualLoss:
    """``L̂(θ) = (1/n)Σφ(⟨x_i, θ⟩, y_i) + (Λ/2)‖θ‖²``, its conjugate and ``θ(s)`` (Eq. (13)).

    ``θ(s) = argmin L̂(θ) + ⟨s, θ⟩``: a Cholesky solve for the squared loss,
    damped Newton for the logistic loss.  Every answer is certified by
    ``‖θ̃ − θ(s)‖₂ ≤ ‖∇‖₂/Λ`` (strong convexity) and must meet ``tolerance``.
    """

    def __init__(self, loss: Loss, ridge: float, tolerance: float) -> None:
        if not loss.conjugate_known:
            per_example_conjugate(loss, np.zeros(1), np.zeros(1))  # raises the clear error
        self.loss, self.ridge, self.tol = loss, float(ridge), float(tolerance)
        self.X, self.y = loss.data.X, loss.data.y
        self.n, self.p = self.X.shape
        self._chol: Any = None
        self._warm = np.zeros(self.p)

    def value(self, theta: np.ndarray) -> float:
        return self.loss.value(theta) + 0.5 * self.ridge * float(theta @ theta)

    def gradient(self, theta: np.ndarray) -> np.ndarray:
        return self.loss.gradient(theta) + self.ridge * theta

    def _hessian(self, theta: np.ndarray) -> np.ndarray:
        h = self.loss.d2phi(self.X @ theta, self.y)
        assert h is not None
        H = (self.X * (h / self.n)[:, None]).T @ self.X
        H[np.diag_indices_from(H)] += self.ridge
        return H

    def primal(self, s: np.ndarray) -> np.ndarray:
        """θ(s) within ``tolerance`` of the exact minimizer; never fails for data reasons.

        Cholesky (squared) or damped Newton (logistic) answer when the strong-convexity
        certificate ``‖∇‖₂/Λ ≤ tolerance`` holds; otherwise the accelerated method of
        :func:`dpopt.numerics.apg.solve_with_proof` on ``L̂(θ) + ⟨s, θ⟩`` (unconstrained,
        μ = Λ, β = Λ + the loss's declared Hessian bound, start 0, radius
        ``(G₀ + ‖s‖)/Λ``) runs a number of steps fixed by those public constants and s,
        and its a-priori bound proves the same tolerance.
        """
        theta = self._fast_primal(s)
        grad = self.gradient(theta) + s
        if not (np.all(np.isfinite(theta)) and float(np.linalg.norm(grad)) / self.ridge <= self.tol):
            theta = self._fallback_primal(s)
        self._warm = theta
        return theta

    def _fast_primal(self, s: np.ndarray) -> np.ndarray:
        """Cholesky (squared) or damped Newton from the warm start (logistic); not certified."""
        import scipy.linalg as sla  # imported on first use, not with dpopt

        with np.errstate(all="ignore"):
            try:
                if self.loss.quadratic:  # θ(s) solves (φ''·XᵀX/n + Λ I) θ = −Xᵀφ'(0, y)/n − s
                    if self._chol is None:
                        self._chol = sla.cho_factor(self._hessian(np.zeros(self.p)))
                    slope = self.loss.dphi(np.zeros(self.n), self.y)
                    theta = sla.cho_solve(self._chol, -(self.X.T @ slope) / self.n - s)
                    return self._newton(theta, s, steps=2)  # one refinement step for rounding
                return self._newton(self._warm.copy(), s, steps=100)
            except (np.linalg.LinAlgError, ValueError):
                return np.full(self.p, np.nan)

    def _fallback_primal(self, s: np.ndarray) -> np.ndarray:
        """θ(s) by V-FISTA with an a-priori iteration count (public constants and s only)."""
        from dpopt.modeling.perturbation import Perturbation
        from dpopt.modeling.regularizers import L2Squared
        from dpopt.numerics.apg import solve_with_proof

        problem = Problem(self.loss, regularizer=L2Squared(self.p, self.ridge),
                          perturbation=Perturbation(self.p, b=s))
        return np.asarray(solve_with_proof(problem, self.tol, max_iterations=None).point, dtype=np.float64)

    def _newton(self, theta: np.ndarray, s: np.ndarray, steps: int) -> np.ndarray:
        def obj(t: np.ndarray) -> float:
            return self.value(t) + float(s @ t)

        for _ in range(steps):
            g = self.gradient(theta) + s
            gnorm = float(np.linalg.norm(g))
            if gnorm <= 0.1 * self.ridge * self.tol:
                break
            step = np.linalg.solve(self._hessian(theta), g)
            t, f0 = 1.0, obj(theta)
            while t > 1e-12:  # Armijo, or a smaller gradient (near the optimum values round)
                cand = theta - t * step
                if obj(cand) <= f0 - 1e-4 * t * float(g @ step):
                    break
                if float(np.linalg.norm(self.gradient(cand) + s)) < gnorm:
                    break
                t *= 0.5
            theta = theta - t * step
        return theta

    def conjugate(self, u: np.ndarray) -> float:
        """``L̂*(u) = ⟨u, θ⟩ − L̂(θ)`` at ``θ = θ(−u)`` (Fenchel–Young equality)."""
        theta = self.primal(-u)
        return float(u @ theta) - self.value(theta)

    def conjugate_upper(self, u: np.ndarray) -> float:
        """An upper bound on L̂*(u) from the per-example conjugates (inner weak duality).

        With ``a_i = φ'(⟨x_i, θ⟩, y_i)`` at the inner solution, the Fenchel dual of
        ``min_θ L̂(θ) − ⟨u, θ⟩`` gives
        ``L̂*(u) ≤ (1/n)Σφ*(a_i) + ‖u − (1/n)Xᵀa‖²/(2Λ)``.
        """
        theta = self.primal(-u)
        a = self.loss.dphi(self.X @ theta, self.y)
        r = u - self.X.T @ a / self.n
        return float(np.mean(per_example_conjugate(self.loss, a, self.y))) + float(r @ r) / (2.0 * self.ridge)


# ---------------------------------------------------------------------------
# Candidate vertex sets for the noisy selection
# ---------------------------------------------------------------------------


class SelectionSpace:
    """The candidates of the noisy linear step over ``K = lam·|P|(F)``.

    ``blocks``: a Minkowski decomposition (candidates = tuples of block vertices,
    factorized exponential mechanism) or a single block holding an enumerated
    vertex list.
    """

    def __init__(self, F: SetFunction, lam: float, max_vertices: int) -> None:
        blocks = vertex_blocks(F)
        enumerated = False
        if blocks is None:
            try:
                V = polyhedron_vertices(F, max_count=max_vertices)
            except ModelError:
                raise MechanismError(
                    f"DualFrankWolfe cannot select privately over |P|(F) for {F.describe()}: its vertices are "
                    f"neither few enough to list (max_vertices={max_vertices}) nor a product/Minkowski sum of "
                    "small blocks; use GroupCoverage, ChainCut, Cardinality or Indicator, a smaller p, or "
                    "SubmodularOutputPerturbation"
                ) from None
            blocks = [VertexBlocks(np.arange(F.p)[None, :], V, np.ones(1))]
            enumerated = True
        self.blocks, self.lam, self.p = blocks, float(lam), F.p
        self.enumerated = enumerated
        self.n_blocks = sum(b.n_blocks for b in blocks)
        self.log_candidates = float(sum(b.n_blocks * math.log(b.V.shape[0]) for b in blocks))

    def select(self, theta: np.ndarray, argmin_rows: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        """The private argmin of the scores ``−⟨v, θ⟩``: ``argmin_rows(scores)`` picks one vertex
        per block (row); returns the sum of the chosen block vertices (a point of K)."""
        out = np.zeros(self.p)
        for b in self.blocks:
            scores = -self.lam * b.weights[:, None] * (theta[b.idx] @ b.V.T)
            pick = np.asarray(argmin_rows(scores), dtype=np.int64)
            np.add.at(out, b.idx, self.lam * b.weights[:, None] * b.V[pick])
        return out


# ---------------------------------------------------------------------------
# The mechanism
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class DualPlan(Plan):
    """A calibrated Alg. 2 run (public quantities only)."""

    space: SelectionSpace
    steps: int
    budget: NoisyMaxBudget | None
    score_sensitivity: float
    scale: float
    score_grid: float
    theta_sensitivity: float
    recovery: NoiseSpec


def check_dual_problem(problem: object, name: str) -> tuple[Problem, SubmodularNorm]:
    """The problem and its one submodular norm, or a one-line refusal naming ``name`` (public checks only)."""
    if not isinstance(problem, Problem):
        raise MechanismError(f"{name}.run() needs a dpopt Problem, got {type(problem).__name__}")
    if problem.perturbation is not None:
        raise MechanismError("the problem already carries a perturbation; pass the plain problem")
    if problem.constraint is not None:
        raise MechanismError(f"{name} solves the dual of an unconstrained problem (Eq. (12)); drop the constraint set")
    norms = [r for r in problem.regularizers if isinstance(r, SubmodularNorm)]
    if len(norms) != 1 or any(isinstance(r, L1Norm) for r in problem.regularizers):
        raise MechanismError(f"{name} needs exactly one SubmodularNorm regularizer (and no L1Norm: fold it into F)")
    if not problem.loss.conjugate_known:
        raise MechanismError(
            f"{name} needs the Fenchel conjugate of the loss; it is known for {conjugate_losses()}, "
            f"not for {type(problem.loss).__name__}"
        )
    if not problem.l2_weight > 0:
        raise MechanismError(
            f"{name} needs an L2Squared term (Λ > 0): L̂ must be strongly convex so that θ(s) = ∇L̂*(−s) is "
            "well defined and has bounded sensitivity 2L/(nΛ)"
        )
    return problem, norms[0]


def _check_inner_fallback(problem: Problem, name: str) -> None:
    """Refuse before the charge when the inner solves θ(s) would have no a-priori fallback.

    :meth:`DualLoss.primal` falls back on :func:`dpopt.numerics.apg.solve_with_proof` for
    ``L̂(θ) + ⟨s, θ⟩`` on ℝ^p; whether that is available depends on the loss's declared
    constants only (a Hessian bound, a bound on its gradient at 0), never on the data.
    """
    from dpopt.modeling.regularizers import L2Squared
    from dpopt.numerics.apg import unsupported_reason

    inner = Problem(problem.loss, regularizer=L2Squared(problem.dim, problem.l2_weight))
    reason = unsupported_reason(inner)
    if reason is not None:
        raise MechanismError(
            f"{name}: its inner solves θ(s) would have no a-priori fallback ({reason}), so a run could "
            "fail after the charge; nothing was charged"
        )


class DualFrankWolfe(Mechanism):
    """Private Frank–Wolfe on the dual over ``K = lam·|P|(F)`` with primal recovery (KD19 Alg. 2, Eq. (13)).

    Parameters
    ----------
    epsilon, delta : float
        Target guarantee under replace-one neighbours (δ = 0: pure ε-DP).
    steps : int, optional
        T (default: ``⌈(C ε_sel / (Δ log|S|))^{2/3}⌉`` clamped to [1, 500] with
        the curvature ``C = diam₂(K)²/Λ``, the FW/noise trade-off of Thm. 4).
    selection : {"gumbel", "laplace"}
        The exponential mechanism, sampled exactly (needed for block decompositions), or
        report-noisy-min with exact discrete Laplace noise (enumerated lists only).
    step : {"standard", "paper"}
        ``2/(t+2)`` or Alg. 2's ``1/(t+2)``.
    release : {"primal", "dual"}
        Release θ(ŝ) on a grid plus exact discrete noise (default) or the dual iterate ŝ.
    recovery_share : float
        Share of ε and δ spent on the primal recovery noise (``release="primal"``).
    inner_tolerance : float
        Certified accuracy of every inner solve θ(s).
    max_vertices : int
        Largest vertex list enumerated when F has no block decomposition.
    noise : {"auto", "gaussian", "l2-laplace"}
        Law of the recovery noise.
    ledger : Ledger, optional
        Charged once per run with (ε, δ).

    Notes
    -----
    See the module docstring for the sensitivities (corrected from the paper).
    """

    name = "DualFrankWolfe"
    needs = SolverNeed.NONE  # inner solves are closed form or Newton
    theorem = "KD19 Alg. 2 / Eq. (13), corrected: Δ = lam·R₂·2L/(nΛ), noisy-max 2Δ/ε₀, private recovery"

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **Mechanism._parameter_constraints,
        "steps": STEPS,
        "selection": [Options(("gumbel", "laplace"))],
        "step": [Options(("standard", "paper"))],
        "release": [Options(("primal", "dual"))],
        "recovery_share": [Interval(Real, 0, 1, closed="neither")],
        "inner_tolerance": [Interval(Real, 0, 1, closed="neither")],
        "max_vertices": [Interval(Integral, 1, None, closed="left")],
        "noise": [NOISE_LAWS],
    }

    def __init__(self, epsilon: float, delta: float = 0.0, *, steps: int | None = None,
                 selection: str = "gumbel", step: str = "standard", release: str = "primal",
                 recovery_share: float = 0.5, inner_tolerance: float = 1e-9, max_vertices: int = 100_000,
                 noise: NoiseChoice = "auto", ledger: Ledger | None = None) -> None:
        super().__init__(epsilon, delta, ledger=ledger)
        self.noise: NoiseChoice = check_noise_law(noise, self.delta)
        self.steps = None if steps is None else int(steps)
        self.selection, self.step, self.release = selection, step, release
        self.recovery_share, self.inner_tolerance = float(recovery_share), float(inner_tolerance)
        self.max_vertices = int(max_vertices)

    # -- calibration -------------------------------------------------------------
    def selection_scale(self, sensitivity: float, budget: NoisyMaxBudget) -> float:
        """Noise scale ``2Δ'/ε₀`` of one selection for the grid-adjusted Δ' (the mutation tests
        override this)."""
        return budget.scale(sensitivity)

    def selector(self, plan: DualPlan) -> ExactSelector:
        """The exact selection rule of ``plan`` (rule, score grid, scale)."""
        return ExactSelector("laplace" if self.selection == "laplace" else "gumbel", plan.score_grid, plan.scale)

    def _split(self) -> tuple[float, float, float, float]:
        if self.release == "dual":
            return self.epsilon, self.delta, 0.0, 0.0
        share = self.recovery_share
        return ((1 - share) * self.epsilon, (1 - share) * self.delta, share * self.epsilon, share * self.delta)

    def theta_sensitivity(self, problem: Problem, norm: SubmodularNorm) -> tuple[float, float, float]:
        """(Δθ, L, R_θ): the sensitivity of θ(s) for every s ∈ K, from declared bounds."""
        r2 = polyhedron_l2_radius(norm.F)
        smax = norm.lam * r2
        ridge = problem.l2_weight
        radius = (smax + math.sqrt(smax**2 + 2.0 * ridge * loss_at_zero_bound(problem.loss))) / ridge
        radius += self.inner_tolerance
        dom = {1: radius * math.sqrt(problem.dim), 2: radius, "inf": radius}
        L = problem.loss.constants(dom).lipschitz_l2
        return 2.0 * L / (problem.n * ridge) + 2.0 * self.inner_tolerance, L, radius

    def plan(self, problem: Problem, options: RunOptions | None = None) -> DualPlan:
        """Validate the problem and calibrate all noise (no data values read)."""
        problem, norm = check_dual_problem(problem, self.name)
        _check_inner_fallback(problem, self.name)
        space = SelectionSpace(norm.F, norm.lam, self.max_vertices)
        if self.selection == "laplace" and space.n_blocks > 1:
            raise MechanismError(
                "selection='laplace' (report-noisy-max) needs one enumerated vertex list; this |P|(F) is a "
                f"Minkowski sum of {space.n_blocks} blocks, where only the exponential mechanism factorizes: "
                "use selection='gumbel'"
            )
        d_theta, L, radius = self.theta_sensitivity(problem, norm)
        r2 = polyhedron_l2_radius(norm.F)
        delta_score = norm.lam * r2 * d_theta
        eps_sel, dlt_sel, eps_rec, dlt_rec = self._split()
        steps = self.steps or self._default_steps(norm.lam * r2, problem.l2_weight, eps_sel, delta_score,
                                                       space.log_candidates)
        budget = noisy_max_budget(eps_sel, dlt_sel, steps, self.selection)
        grid = selection_grid(delta_score, space.n_blocks, budget.scale(delta_score))
        on_grid = grid_sensitivity(delta_score, grid, space.n_blocks) * grid
        scale = self.selection_scale(on_grid, budget)
        recovery = NoiseSpec.none()
        if self.release == "primal":
            # the grid is at most 1/256 of both Δθ and Δθ/ε (public): a large ε keeps its small noise
            fine = grid_step(min(d_theta, d_theta / eps_rec), float(problem.dim))
            recovery = NoiseSpec.for_sensitivity(d_theta, eps_rec, dlt_rec, problem.dim, self.noise, grid_step=fine)
        params = {
            "selection": self.selection, "composition": budget.composition, "steps": steps,
            "step_epsilon": budget.step_epsilon, "score_sensitivity": delta_score, "score_grid": grid,
            "score_sensitivity_grid": on_grid, "selection_scale": scale,
            "theta_sensitivity_l2": d_theta, "lipschitz_l2": L, "theta_radius_l2": radius,
            "polyhedron_l2_radius": r2, "omega_weight": norm.lam, "ridge": problem.l2_weight,
            "blocks": space.n_blocks, "enumerated_vertices": space.enumerated,
            "log_candidates": space.log_candidates, "release": self.release,
            "epsilon_selection": eps_sel, "delta_selection": dlt_sel,
            "epsilon_recovery": eps_rec, "delta_recovery": dlt_rec,
            "recovery_noise": recovery.kind, "recovery_scale": recovery.scale,
            "recovery_grid_step": recovery.grid_step,
            "step_rule": self.step, "set_function": norm.F.describe(), "neighbouring": "replace-one",
        }
        return DualPlan(space, steps, budget, delta_score, scale, grid, d_theta, recovery, problem=problem,
                        parameters=params)

    @staticmethod
    def _default_steps(k_radius: float, ridge: float, eps: float, delta_score: float, log_cands: float) -> int:
        curvature = (2.0 * k_radius) ** 2 / ridge
        noise = delta_score * max(log_cands, 1.0)
        if not (noise > 0 and curvature > 0):
            return 1
        return int(min(500, max(1, math.ceil((curvature * eps / noise) ** (2.0 / 3.0)))))

    # -- running -------------------------------------------------------------------
    def execute(self, plan: Plan, rng: np.random.Generator) -> Outcome:
        """Alg. 2 on the data: T exact private selections in the dual, then the primal map released
        on its grid with exact noise (the selections' and the release's bits come from one exact
        sampler per use, :func:`dpopt.privacy.exact.sampler_for`)."""
        assert isinstance(plan, DualPlan)
        problem = plan.problem
        dual = DualLoss(problem.loss, problem.l2_weight, self.inner_tolerance)
        select = self.selector(plan).bind_rows(rng)
        s = np.zeros(problem.dim)  # s₀ ∈ K, data-independent
        for t in counted(plan.steps, "dual Frank–Wolfe iterations"):
            v = plan.space.select(dual.primal(s), select)
            rho = dual_step_size(t, self.step)
            s = (1.0 - rho) * s + rho * v
        if self.release == "dual":
            return Outcome(s, notes=("the released vector is the dual iterate ŝ ∈ K, not θ",))
        return Outcome(plan.recovery.release(dual.primal(s), rng))
