"""Private Frank–Wolfe over a polytope with noisy max (TTZ14 Alg. 4, Thm. 5.4), and the fast
private LASSO.  The algorithm, its constants and the corrections to the paper are in
:mod:`dpopt.mechanisms.frank_wolfe`.

Every vertex choice is an exact private selection on integers
(:mod:`dpopt.privacy.exact_selection`): the scores ⟨s, ∇L(θ_t)⟩ are rounded onto the public
grid γ = ``grid_step(min(Δ, 2Δ/ε₀), 1)`` (a power of two, γ ≤ Δ/256), which raises the score
sensitivity to Δ' = (⌊Δ/γ⌋ + 1)γ ≤ Δ + γ, and the vertex is drawn by the exponential
mechanism (``"gumbel"``, sampled by rejection with exact Bernoulli(exp(−x)) trials) or by
report-noisy-min with exact discrete Laplace noise (``"laplace"``), both of scale 2Δ'/ε₀.
The Frank–Wolfe step, the next gradient and the released iterate are functions of the
chosen indices and the data only through later selections, so everything after each
selection is post-processing.  An unseeded run draws every selection bit from the OS
CSPRNG (:func:`dpopt.privacy.exact.sampler_for`), none from the generator's PCG64 stream."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from dpopt.errors import DataError, MechanismError
from dpopt.mechanisms.base import STEPS, Mechanism, Plan, RunOptions, SolverNeed
from dpopt.mechanisms.frank_wolfe import (
    STEP_RULES,
    bound_iterations,
    check_fw_problem,
    curvature_bound,
    step_size,
)
from dpopt.mechanisms.params import Integral, Interval, Options
from dpopt.mechanisms.pipeline import Outcome
from dpopt.mechanisms.release import Release
from dpopt.modeling.balls import L1Ball
from dpopt.modeling.losses import SquaredLoss
from dpopt.modeling.problem import Problem
from dpopt.modeling.rows import map_label_block
from dpopt.numerics.fw_oracles import (
    CoordinateGradient,
    L1BallScorer,
    ProblemGradient,
    VertexScorer,
    vertex_scorer,
)
from dpopt.numerics.lasso_fast import DirectLassoGradient, IncrementalLassoGradient
from dpopt.privacy.exact_selection import ExactSelector, grid_sensitivity, selection_grid
from dpopt.privacy.ledger import Ledger
from dpopt.privacy.noisy_max import NoisyMaxBudget, noisy_max_budget, resolve_selection
from dpopt.progress import counted

__all__ = ["PolytopeFrankWolfe", "noisy_max_frank_wolfe"]


def noisy_max_frank_wolfe(oracle: Any, scorer: VertexScorer, steps: int, select: Callable[[np.ndarray], int],
                          rule: str) -> np.ndarray:
    """Run T noisy-argmin Frank–Wolfe steps; ``select(scores)`` is the private argmin of a step
    (:meth:`ExactSelector.bind`).  The scores are written into one array, reused every step."""
    scores = np.empty(scorer.n_candidates)
    for t in counted(steps, "Frank–Wolfe iterations"):
        choice = select(scorer.scores(oracle.gradient(), out=scores))
        oracle.advance(step_size(t, steps, rule), scorer, int(choice))
    return np.asarray(oracle.theta)


@dataclass(frozen=True)
class PolytopePlan(Plan):
    """A calibrated Alg. 4 run (public quantities only)."""

    scorer: VertexScorer
    steps: int
    budget: NoisyMaxBudget
    sensitivity: float
    scale: float
    score_grid: float
    lipschitz_l1: float
    fast: bool
    lasso: tuple[Any, np.ndarray, float] | None = None  # run_lasso's (X, y, λ), instead of a Problem


class PolytopeFrankWolfe(Mechanism):
    """Private Frank–Wolfe over a polytope with noisy-max vertex selection (TTZ14 Alg. 4).

    Parameters
    ----------
    epsilon, delta : float
        Target guarantee under replace-one neighbours (δ = 0: pure ε-DP, ε₀ = ε/T).
    steps : int, optional
        T, the number of noisy selections.  Default: the T that minimizes the
        excess-risk bound ``2Γ/(T+2) + η(T)`` with this run's own noise scale
        (:func:`~dpopt.mechanisms.frank_wolfe.bound_iterations`; η(T) the expected
        excess score of one selection, see :mod:`dpopt.mechanisms.frank_wolfe`, item 6),
        from declared bounds only.  The paper's T of Thm. 5.5 omits the noise's constants
        and asks for many times more steps (at large ε each selection is then noise).
    selection : {"auto", "laplace", "gumbel"}
        Report-noisy-min with exact discrete Laplace noise or the exponential mechanism
        sampled exactly (``"gumbel"``), both of scale 2Δ'/ε₀ on the score grid; see
        :mod:`dpopt.privacy.noisy_max` for their compositions.
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

    Notes
    -----
    Score sensitivity ``Δ = 2 L₁ ‖C‖₁ / n`` with L₁ the loss's declared
    ℓ1-Lipschitz constant over C, on the score grid γ = ``grid_step(Δ, 1)``
    (``min(Δ, 2Δ/ε₀)`` for Δ; ``parameters["score_grid"]``) Δ' = (⌊Δ/γ⌋ + 1)γ (``"sensitivity_score_grid"``); per-step
    budget ε₀ from :func:`dpopt.privacy.noisy_max.noisy_max_budget`.  The paper's own scale
    ``L₁‖C‖₁√(8T log(1/δ))/(nε)`` is reported as ``paper_scale`` for
    comparison only (it is not private under replace-one, see the module notes).
    """

    name = "PolytopeFrankWolfe"
    needs = SolverNeed.NONE  # the LMO over a vertex list is a noisy argmin
    theorem = "TTZ14 Alg. 4 / Thm. 5.4, corrected scale 2Δ/ε₀ with Δ = 2L₁‖C‖₁/n"

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **Mechanism._parameter_constraints,
        "steps": STEPS,
        "selection": [Options(("auto", "laplace", "gumbel"))],
        "step": [STEP_RULES],
        "fast": [Options(("auto", True, False))],
        "max_vertices": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, epsilon: float, delta: float = 0.0, *, steps: int | None = None,
                 selection: str = "auto", step: str = "standard", fast: bool | str = "auto",
                 max_vertices: int = 100_000, ledger: Ledger | None = None) -> None:
        super().__init__(epsilon, delta, ledger=ledger)
        self.steps = None if steps is None else int(steps)
        self.selection = resolve_selection(selection, self.delta)
        self.step = step
        self.fast = fast
        self.max_vertices = int(max_vertices)

    # -- calibration ----------------------------------------------------------
    def selection_scale(self, sensitivity: float, budget: NoisyMaxBudget) -> float:
        """Noise scale of one selection: ``2Δ'/ε₀`` for the grid-adjusted Δ' (the mutation tests
        override this)."""
        return budget.scale(sensitivity)

    def default_steps(self, curvature: float, sensitivity: float, candidates: int) -> int:
        """T minimizing ``2Γ/(T+2) + η(T)``: η(T) = ``c·b(T)·(1 + ln k)`` with b(T) = 2Δ/ε₀(T) the
        selection scale T steps leave (c = 1 for the exponential mechanism, whose excess score
        is at most b ln k; c = 2 for report-noisy-min, at most twice the mean largest of k
        |Laplace(b)|, b·H_k ≤ b(1 + ln k)).  Public quantities only."""
        factor = (1.0 if self.selection == "gumbel" else 2.0) * (1.0 + math.log(candidates))

        def selection_error(steps: int) -> float:
            eps0 = noisy_max_budget(self.privacy_level, None, steps, self.selection).step_epsilon
            return factor * 2.0 * sensitivity / eps0

        return bound_iterations(curvature, selection_error, "a positive ℓ1-Lipschitz constant")

    def selector(self, plan: PolytopePlan) -> ExactSelector:
        """The exact selection rule of ``plan`` (rule, score grid, scale)."""
        return ExactSelector(self.selection, plan.score_grid, plan.scale)

    def _calibrate(self, scorer: VertexScorer, n: int, lipschitz_l1: float, curvature: float,
                   fast: bool) -> PolytopePlan:
        if not (math.isfinite(lipschitz_l1) and lipschitz_l1 >= 0):
            raise MechanismError(
                f"{self.name} needs the loss's ℓ1-Lipschitz constant (sup ‖∇ℓ‖∞) over C, and it is not "
                "finite here; bound the domain with a constraint set and declare x_bound/y_bound"
            )
        l1r = scorer.l1_radius
        sensitivity = 2.0 * lipschitz_l1 * l1r / n
        steps = self.steps or self.default_steps(curvature, sensitivity, scorer.n_candidates)
        budget = noisy_max_budget(self.privacy_level, None, steps, self.selection)
        grid = selection_grid(sensitivity, 1, budget.scale(sensitivity))
        on_grid = grid_sensitivity(sensitivity, grid) * grid
        scale = self.selection_scale(on_grid, budget)
        paper = (lipschitz_l1 * l1r * math.sqrt(8 * steps * math.log(1 / self.delta)) / (n * self.epsilon)
                 if self.delta > 0 else math.nan)
        params = {
            "selection": self.selection, "composition": budget.composition, "steps": steps,
            "step_epsilon": budget.step_epsilon, "sensitivity_score": sensitivity,
            "score_grid": grid, "sensitivity_score_grid": on_grid, "noise_scale": scale, "paper_scale": paper, "lipschitz_l1": lipschitz_l1,
            "l1_radius": l1r, "candidates": scorer.n_candidates, "step_rule": self.step,
            "fast_lasso": fast, "neighbouring": "replace-one",
        }
        return PolytopePlan(scorer, steps, budget, sensitivity, scale, grid, lipschitz_l1, fast, parameters=params)

    def plan(self, problem: Problem, options: RunOptions | None = None) -> PolytopePlan:
        """Validate ``problem`` and calibrate the selection noise (no data values read)."""
        problem = check_fw_problem(problem, self.name)
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
        plan = self._calibrate(scorer, problem.n, lip, curvature_bound(problem),
                               lasso and self.fast is not False and not distributed)
        return replace(plan, problem=problem)

    # -- running --------------------------------------------------------------
    def execute(self, plan: Plan, rng: np.random.Generator) -> Outcome:
        """Alg. 4 on the data: T exact private vertex selections and Frank–Wolfe steps."""
        assert isinstance(plan, PolytopePlan)
        oracle: Any
        if plan.lasso is not None:  # run_lasso's raw arrays
            X, y, lam = plan.lasso
            cls = IncrementalLassoGradient if plan.fast else DirectLassoGradient
            oracle = CoordinateGradient(cls(X, y, np.zeros(X.shape[1]), lam=lam))
        elif plan.fast:
            c, data = plan.problem.constraint, plan.problem.loss.data
            oracle = CoordinateGradient(IncrementalLassoGradient(data.X, data.y, c.center(),
                                                                 lam=plan.problem.l2_weight))
        else:
            oracle = ProblemGradient(plan.problem, plan.problem.constraint.center())
        select = self.selector(plan).bind(rng)
        return Outcome(noisy_max_frank_wolfe(oracle, plan.scorer, plan.steps, select, self.step))

    def run_lasso(self, X: Any, y: np.ndarray, *, radius: float, x_bound: float = 1.0, y_bound: float = 1.0,
                  lam: float = 0.0, seed: int | None = None, fast: bool = True) -> Release:
        """Private LASSO on a dense or scipy-sparse X: ``min (1/n)‖Xθ − y‖² (+ λ/2‖θ‖²)`` over ``‖θ‖₁ ≤ r``.

        The same mechanism as :meth:`run` with ``SquaredLoss`` over ``L1Ball``,
        without building a :class:`~dpopt.Dataset` (which holds dense
        data only).  Declared bounds: ``‖x_i‖∞ ≤ x_bound`` and ``|y_i| ≤
        y_bound``; entries outside them are clipped onto them and a NaN or
        infinite entry is read as 0, never refused (a refusal would reveal
        the row).  ℓ1-Lipschitz constant over the ball:
        ``L₁ = 2(r·x_bound + y_bound)·x_bound``.

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

        plan = replace(plan, summary=summary, n=n, feature_names=(), lasso=(Xm, yv, lam))
        return self._release(plan, RunOptions(seed=seed))  # the same pipeline as run()


def _check_lasso_data(X: Any, y: Any, x_bound: float, y_bound: float) -> tuple[Any, np.ndarray]:
    """Validate shapes and map the data onto the declared bounds row by row.

    A non-finite entry (NaN, ±inf) of X or y is read as 0, the rule of a column without a
    declared missing-value policy on data read inside a run
    (:func:`~dpopt.modeling.rows.map_feature_block`, ``map_label_block``); then entries of X are
    clipped to [−x_bound, x_bound] (each row then has ‖x‖∞ ≤ x_bound) and labels to
    [−y_bound, y_bound].  A row outside its declaration is mapped, never refused for its
    values (refusing would reveal it); only shapes (public) are refused."""
    for value, name in ((x_bound, "x_bound"), (y_bound, "y_bound")):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not (math.isfinite(value) and value > 0):
            raise MechanismError(f"{name} must be a positive finite number (a declared public bound)")
    Xm: Any = sp.csr_matrix(X, dtype=np.float64) if sp.issparse(X) else np.asarray(X, dtype=np.float64)
    yv = np.asarray(y, dtype=np.float64)
    if Xm.ndim != 2 or yv.shape != (Xm.shape[0],) or Xm.shape[0] == 0 or Xm.shape[1] == 0:
        raise DataError(f"X must be (n, p) and y (n,), got shapes {Xm.shape} and {yv.shape}")
    values = Xm.data if sp.issparse(Xm) else Xm
    if values.size and not (float(np.max(np.abs(values))) <= x_bound):  # also true for a NaN or inf
        if sp.issparse(Xm):
            Xm = Xm.copy()
            Xm.data = _onto_bound(Xm.data, x_bound)
        else:
            Xm = _onto_bound(Xm, x_bound)
    return Xm, map_label_block(yv, y_bound, True)


def _onto_bound(values: np.ndarray, bound: float) -> np.ndarray:
    """A copy of ``values`` with non-finite entries read as 0 and the rest clipped to [−bound, bound]."""
    out = np.where(np.isfinite(values), values, 0.0)
    return np.clip(out, -bound, bound, out=out)


# ---------------------------------------------------------------------------
# Alg. 5
# ---------------------------------------------------------------------------


