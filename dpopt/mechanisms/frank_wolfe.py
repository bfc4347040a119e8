"""Private Frank–Wolfe (Talwar, Thakurta and Zhang 2014, Algs. 4 and 5): what both mechanisms share.

:class:`~dpopt.mechanisms.polytope_frank_wolfe.PolytopeFrankWolfe` (Alg. 4) and
:class:`~dpopt.mechanisms.gaussian_frank_wolfe.GaussianFrankWolfe` (Alg. 5) each live in their own
module; this one holds the step-size rules, the problem check, the curvature bound and the
paper's iteration count they both use, and the account of both algorithms and of the
corrections to the paper below.

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
    balls, and an LP for :class:`~dpopt.sets.HPolytope` (solved by the backend
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
   small for its ε₀ (the mutation test in ``tests/mechanisms/test_frank_wolfe.py`` shows
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
   noise is calibrated for.  Alg. 4's default T (:func:`bound_iterations`)
   minimizes the bound the analysis gives, with the run's own noise:
   ``2Γ/(T+2) + η(T)`` (Jaggi 2013, Thm. 1 with an additive LMO error η;
   TTZ14 Thm. 5.4), η(T) the expected excess score of one noisy selection at
   the scale ``b = 2Δ/ε₀(T)`` the budget leaves each of T steps:
   ``b(1 + ln k)`` for the exponential mechanism (the Gibbs bound ``b ln k``)
   and ``2b(1 + ln k)`` for report-noisy-min (twice the mean largest of k
   |Laplace(b)|, ``b·H_k``), k candidates.  The paper's
   ``T = Γ^{2/3}(nε)^{2/3}/(L₁‖C‖₁)^{2/3}`` (Thm. 5.5) balances the same two
   terms but without the noise's constants (ln k, the √(8 log(1/δ)) of its
   composition, the factor 2 of 1.–2.) and with √T composition also for
   δ = 0, where ε₀ = ε/T: it asks for 7–9× more steps for δ > 0 and 20–70×
   for δ = 0 (logistic loss on 3,000 Adult rows, ε = 0.5–50), each with that
   much less budget, and at large ε the selections become noise (Adult, rows
   declared in ℓ∞, ‖θ‖₁ ≤ 10, ε = 50, δ = 1e-6: the paper's T = 13,104 gives
   test accuracy 0.770 against 0.764 for the majority class; the bound's
   T = 1,471 gives 0.815–0.816; non-private optimum over the ball 0.827).  Alg. 5 keeps
   the paper's ``T = (Γnε/(L₂G_C))^{2/3}`` (Thm. B.2).  The curvature Γ is
   bounded from declared bounds (``Γ ≤ sup φ'' · (x_bound · diam_{q*}(C))²``
   for a GLM loss with ``‖x‖_q ≤ x_bound``, plus ``λ diam₂(C)²``).

Fast private LASSO
------------------
For the squared loss over an ℓ1 ball (``fast="auto"``), the gradient is kept
up to date incrementally (:mod:`dpopt.numerics.lasso_fast`): O(p) per step
instead of two passes over X.  :meth:`PolytopeFrankWolfe.run_lasso` runs the
same mechanism directly on a dense or scipy-sparse X.  For the same noise both
paths give the same iterates (up to rounding).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from dpopt.errors import MechanismError
from dpopt.mechanisms.params import Options
from dpopt.modeling.dataset import Dataset
from dpopt.modeling.problem import Problem

__all__ = ["STEP_RULES", "bound_iterations", "check_fw_problem", "curvature_bound", "margin_radius",
           "paper_iterations", "step_size"]


def step_size(t: int, steps: int, rule: str = "standard") -> float:
    """Frank–Wolfe step μ_t for t = 0, …, T−1: ``2/(t+2)`` (Jaggi 2013) or the paper's ``1/(T+2)``."""
    return 2.0 / (t + 2.0) if rule == "standard" else 1.0 / (steps + 2.0)


#: the ``step`` setting: μ_t = 2/(t+2) (Jaggi 2013) or the paper's constant 1/(T+2)
STEP_RULES = Options(("standard", "paper"))


def check_fw_problem(problem: object, name: str) -> Problem:
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
    if not problem.constraint.has_lmo:  # declared: e.g. an ℓ2 ball intersected with rows
        raise MechanismError(
            f"{name} needs a linear minimization oracle over C, and {problem.constraint!r} has none (an ℓ2 ball "
            "with other constraints is not a linear program): use DPGradientDescent or ObjectivePerturbation over it"
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


def curvature_bound(problem: Problem) -> float:
    """Γ ≤ sup φ'' · (x_bound · diam_{q*}(C))² + λ diam₂(C)² from declared bounds (inf if unknown)."""
    c = problem.constraint
    assert c is not None
    h = problem.loss.d2phi_bound()
    if h is None:
        return math.inf
    data = problem.loss.data
    dual = {1.0: "inf", 2.0: 2, math.inf: 1}[data.norm_order]
    return h * (data.x_bound * c.diameter(dual)) ** 2 + problem.l2_weight * c.diameter(2) ** 2  # type: ignore[arg-type]


def paper_iterations(curvature: float, n: int, epsilon: float, scale: float, what: str) -> int:
    """``T = Γ^{2/3}(nε)^{2/3}/scale^{2/3}`` rounded up (TTZ14 Thm. 5.5 / B.2)."""
    if not (math.isfinite(curvature) and curvature > 0 and scale > 0):
        raise MechanismError(
            f"cannot choose the paper's T without a finite curvature bound and {what}; pass steps=T"
        )
    return max(1, math.ceil((curvature * n * epsilon / scale) ** (2.0 / 3.0)))


#: the largest default T :func:`bound_iterations` considers
MAX_DEFAULT_STEPS = 1_000_000


def bound_iterations(curvature: float, selection_error: Callable[[int], float], what: str) -> int:
    """The T that minimizes ``2Γ/(T+2) + η(T)``, the excess-risk bound of T noisy Frank–Wolfe steps.

    ``selection_error(T)`` is η(T), the expected excess score of one noisy selection when the
    budget is split over T steps (it grows with T: more steps, less budget each); ``2Γ/(T+2)``
    is Frank–Wolfe's own error after T steps of μ_t = 2/(t+2) (Jaggi 2013, Thm. 1).  The
    minimum is taken over the grid ``T = ⌈1.01^i⌉ ≤ MAX_DEFAULT_STEPS`` (the bound is flat
    near its minimum; the smallest T wins a tie).  Only public quantities enter.
    """
    if not (math.isfinite(curvature) and curvature > 0 and selection_error(1) > 0):
        raise MechanismError(f"cannot choose the default T without a finite curvature bound and {what}; pass steps=T")
    best_t, best = 1, math.inf
    t, i = 1, 0
    while t <= MAX_DEFAULT_STEPS:
        value = 2.0 * curvature / (t + 2) + selection_error(t)
        if value < best:
            best_t, best = t, value
        i += 1
        t = max(t + 1, math.ceil(1.01**i))
    return best_t


def margin_radius(data: Dataset, margin: float = 3.0) -> float:
    """A default ℓ1 radius for a linear classifier over ``L1Ball``: ``r = 3m/B∞``, from declarations only.

    Over ``‖θ‖₁ ≤ r`` the margin ``⟨θ, x⟩`` of a row is at most ``r‖x‖∞ ≤ r·B∞``, with B∞ the
    declared ℓ∞ row bound (the smaller of the one the dataset's ``x_bound`` implies and, with a
    schema, ``schema.row_norm_bound("inf")``: 1 for unit-scaled numeric, 0/1 and one-hot
    columns and an intercept).  A classifier that does better than the base rate needs room
    for an intercept of about ``m`` *and* for features that move a row's margin across
    ``[−m, m]`` (a swing of ``2m``): ``‖θ‖₁ ≈ 3m/B∞``.  The default ``m = 3`` (probabilities
    0.05–0.95) gives r = 9 for unit-scaled columns.

    Why not r = 1 with unit-scaled columns: the intercept alone then takes the whole ball.
    On Adult (standard encoding, 3,000 rows) the *non-private* optimum of the logistic loss
    over ``‖θ‖₁ ≤ 1`` or ``≤ 2`` is the majority predictor (test accuracy 0.764); over
    ``‖θ‖₁ ≤ 5, 10, 20`` it is 0.810, 0.827, 0.837.  A larger r costs the selections nothing
    (scores and noise both scale with r) but raises the curvature ``Γ ∝ r²``, so Frank–Wolfe
    needs more steps, each with less budget.  No data value is read: the answer depends on the
    declarations (bounds, norm, schema) only.
    """
    if isinstance(margin, bool) or not isinstance(margin, (int, float)) or not (math.isfinite(margin) and margin > 0):
        raise MechanismError("margin must be a positive finite number")
    if not isinstance(data, Dataset):
        raise MechanismError(f"margin_radius needs a dpopt Dataset, got {type(data).__name__}")
    bound = data.x_bound_in("inf")
    if data.schema is not None:
        bound = min(bound, data.schema.row_norm_bound("inf"))
    return 3.0 * float(margin) / bound
