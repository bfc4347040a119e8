"""Private Frank–Wolfe over a general convex set with Gaussian noise (TTZ14 Alg. 5, Thm. B.1).
The algorithm, its calibration and the corrections to the paper are in
:mod:`dpopt.mechanisms.frank_wolfe`.

The noisy gradients are exact and on a public grid ([CKS20]; :mod:`dpopt.privacy.grid`):
each step rounds the sum of the per-example gradients clipped to L₂ onto γℤ^d,
γ = grid_step(2L₂, √d) a public power of two (γ√d ≤ 2L₂/256), adds an exact discrete
Gaussian vector (σ²/γ² an integer) and only then divides by n and adds λθ; the LMO and the
step are post-processing.  Rounded neighbours differ by at most Δ' = 2L₂ + γ√d, so a step is
ρ-zCDP with ρ = Δ'²/(2σ²) and T steps add.  ``accountant="zcdp"`` (default):
σ = Δ'·√(T/(2ρ)) with ρ = :func:`~dpopt.privacy.zcdp.zcdp_rho` (ε, δ); ``"rdp"``:
dp-accounting's RDP of the unsampled Gaussian at Δ' (valid: the discrete Gaussian's Rényi
divergence is at most the continuous one's at every order); ``"analytic"`` and ``"pld"``
(the continuous Gaussian's exact privacy loss) are refused before the charge;
``calibration="paper"`` uses the paper's σ raised to the zCDP σ where it is below it.
The release reports ``grid_step`` γ and ``noise_scale_sum`` (σ on the sum as drawn),
``noise_scale`` (σ/n, on the average gradient) and ``zcdp_rho``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar

import numpy as np

from dpopt.backends import programs
from dpopt.backends.base import Backend
from dpopt.backends.profiles import merge_options
from dpopt.backends.result import OracleStatus, SolveOptions
from dpopt.errors import MechanismError, ModelError
from dpopt.mechanisms.base import STEPS, Mechanism, Plan, RunOptions, SolverNeed
from dpopt.mechanisms.frank_wolfe import (
    STEP_RULES,
    check_fw_problem,
    curvature_bound,
    paper_iterations,
    step_size,
)
from dpopt.mechanisms.params import Interval, Options, Real
from dpopt.mechanisms.pipeline import Outcome
from dpopt.mechanisms.release import OracleCall
from dpopt.modeling.problem import Problem
from dpopt.numerics.clipping import ClippedGradient
from dpopt.privacy.accountant import CONTINUOUS_ONLY, GridSteps, grid_gaussian_steps, grid_reach
from dpopt.privacy.calibration import Budget, budget_pair
from dpopt.privacy.ledger import Ledger
from dpopt.privacy.zcdp import zcdp_rho
from dpopt.progress import counted

__all__ = ["GaussianFrankWolfe", "paper_sigma_checked"]


#: the public acceptance rule of an HPolytope LMO answer (the release's OracleCall says it)
LMO_ACCEPTANCE = ("an optimal vertex, clipped to the polytope's exact bounding box (post-processing of the "
                  "noisy gradient); no optimal answer: the run stops and releases nothing")


# ---------------------------------------------------------------------------
# Shared pieces
# ---------------------------------------------------------------------------


@lru_cache(maxsize=256)
def _accountant_sigma(reach: float, steps: int, epsilon: float, delta: float, method: str) -> float:
    """σ on the gradient sum for Δ' = ``reach``: zCDP, or the dp-accounting RDP accountant (cached:
    public inputs only, and the RDP search is slow)."""
    if method == "zcdp":
        return zcdp_sum_sigma(reach, steps, epsilon, delta)
    from dpopt.privacy.accountant import gaussian_sigma_for_composition

    return gaussian_sigma_for_composition(reach, steps, epsilon, delta, method=method)


def zcdp_sum_sigma(reach: float, steps: int, epsilon: float | Budget, delta: float | None) -> float:
    """σ = Δ'·√(T/(2ρ)) with ρ = zcdp_rho(ε, δ): T discrete Gaussian steps meet (ε, δ) ([CKS20])."""
    return reach * math.sqrt(steps / (2.0 * zcdp_rho(epsilon, delta)))


def paper_sigma_checked(lipschitz_l2: float, n: int, steps: int, epsilon: float | Budget, delta: float | None,
                        dim: int = 1) -> tuple[float, bool]:
    """The paper's σ (Alg. 1 line 1, on the average gradient) and whether it had to be raised.

    The requirement is the zCDP σ of the discrete Gaussian on the grid (module docstring),
    divided by n: Δ' = 2L₂ + γ√d on the sum, σ = Δ'·√(T/(2ρ)).  (ε, δ) or a mechanism's
    checked Budget (then ``delta`` None), checked once here.
    """
    from dpopt.privacy.accountant import paper_sigma

    level = Budget(*budget_pair(epsilon, delta, allow_zero_delta=False))
    sigma = paper_sigma(lipschitz_l2, n, steps, level, None)
    if lipschitz_l2 == 0.0:
        return sigma, False
    need = zcdp_sum_sigma(grid_reach(2.0 * lipschitz_l2, dim)[1], steps, level, None) / n
    return (sigma, False) if sigma >= need else (need, True)


@dataclass(frozen=True)
class GaussianPlan(Plan):
    """A calibrated Alg. 5 run (public quantities only)."""

    steps: int
    noise: GridSteps  # the gradient sums' grid and exact noise
    sensitivity: float
    lmo: str
    solve_lmo: Callable[[np.ndarray], np.ndarray] | None = None  # None: the set's own LMO
    calls: tuple[OracleCall, ...] = ()

    @property
    def sigma(self) -> float:
        """σ of the noise on the average gradient, as drawn (σ on the sum / n)."""
        return self.noise.sigma / self.problem.n


def gaussian_frank_wolfe(noisy_gradient: Callable[[np.ndarray], np.ndarray],
                         lmo: Callable[[np.ndarray], np.ndarray], theta0: np.ndarray, steps: int,
                         rule: str) -> np.ndarray:
    """Run T Frank–Wolfe steps with ``s_t = LMO(noisy_gradient(θ_t))``."""
    theta = np.array(theta0, dtype=np.float64)
    for t in counted(steps, "Frank–Wolfe iterations"):
        s = lmo(noisy_gradient(theta))
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
        with the Gaussian width of C).
    calibration : {"accountant", "paper"}
        σ from a privacy accountant (tight) or the paper's formula (raised to the zCDP σ).
    accountant : {"zcdp", "rdp"}
        The accountant of ``calibration="accountant"`` for the discrete Gaussian noise: zCDP
        (default, [CKS20]) or dp-accounting's RDP at Δ'; reported as
        ``parameters["accountant"]``.  ``"analytic"`` and ``"pld"`` are refused (module docstring).
    step : {"standard", "paper"}
        μ_t = 2/(t+2) (default) or the paper's constant 1/(T+2).
    ledger : Ledger, optional
        Charged once per run with (ε, δ).

    Notes
    -----
    Gradient sensitivity ``Δ = 2L₂/n`` (2L₂ on the sum, which is what is put on the grid);
    the release reports the mode, σ, the paper's σ, ``grid_step`` and ``zcdp_rho``.  The LMO is closed-form for the norm balls, the simplex, vertex
    polytopes, group-ℓ1 and nuclear-norm balls, and an LP for
    :class:`~dpopt.sets.HPolytope`, solved by the backend ``solver=`` names
    (:func:`dpopt.backends.programs.resolve_lp_backend`; ``"auto"``: ``scipy-lp``); it is
    post-processing of the noisy gradient, so its accuracy does not affect privacy:
    the next gradient is taken with per-example gradients clipped to L₂
    (:func:`clipped_smooth_gradient`), so an iterate the LP leaves outside C by the
    solver's tolerance cannot raise the sensitivity above 2L₂/n.
    """

    name = "GaussianFrankWolfe"
    theorem = "TTZ14 Alg. 5 / Thm. B.1, exact discrete Gaussian gradients on a grid with Δ = 2L₂/n, zCDP [CKS20]"

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **Mechanism._parameter_constraints,
        "delta": [Interval(Real, 0, 1, closed="neither",
                           why="GaussianFrankWolfe needs delta > 0 (Gaussian noise); use PolytopeFrankWolfe "
                               "for pure ε-DP over a polytope")],
        "steps": STEPS,
        "calibration": [Options(("accountant", "paper"))],
        "accountant": [Options(("zcdp", "rdp"), why=CONTINUOUS_ONLY)],
        "step": [STEP_RULES],
    }

    def __init__(self, epsilon: float, delta: float, *, steps: int | None = None,
                 calibration: str = "accountant", accountant: str = "zcdp", step: str = "standard",
                 ledger: Ledger | None = None) -> None:
        super().__init__(epsilon, delta, ledger=ledger)
        self.steps = None if steps is None else int(steps)
        self.calibration = calibration
        self.accountant = accountant
        self.step = step

    def noise_sigma(self, lipschitz_l2: float, n: int, steps: int, dim: int = 1) -> tuple[float, dict[str, Any]]:
        """σ of the gradient noise on the *average* gradient (σ on the sum / n) before it is put
        on the grid, and its record (the mutation tests override this)."""
        paper, raised = paper_sigma_checked(lipschitz_l2, n, steps, self.privacy_level, None, dim)
        record: dict[str, Any] = {"noise_scale_paper": paper, "noise_scale_paper_raised_to_exact": raised}
        if self.calibration == "paper":
            return paper, record
        reach = grid_reach(2.0 * lipschitz_l2, dim)[1]
        return _accountant_sigma(reach, steps, self.epsilon, self.delta, self.accountant) / n, record

    def plan(self, problem: Problem, options: RunOptions | None = None) -> GaussianPlan:
        """Validate ``problem``, calibrate σ and, for an LP LMO, prepare its solver (no data values read).

        ``options.solver`` (a name, a TOML profile or a Backend) solves an
        :class:`~dpopt.sets.HPolytope`'s LMO, an LP (``"auto"``: ``scipy-lp``, HiGHS
        through scipy; ``"highs"`` and ``"scipy"`` mean it too; ``"clarabel"``, ``"scs"``
        also solve it), with ``time_limit`` seconds and ``threads`` per LP.  Every other
        set has a closed-form LMO and calls no solver.
        """
        options = options or RunOptions()
        solver = options.solver
        problem = check_fw_problem(problem, self.name)
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
            steps = paper_iterations(curvature_bound(problem), problem.n, self.epsilon, lip * width,
                                      "a positive ℓ2-Lipschitz constant")
        sigma, record = self.noise_sigma(lip, problem.n, steps, problem.dim)
        noise = grid_gaussian_steps(sigma * problem.n, 2.0 * lip, problem.dim, steps)
        sensitivity = 2.0 * lip / problem.n
        params = {
            "calibration": self.calibration, "accountant": self.accountant if self.calibration == "accountant" else None,
            "noise": "discrete-gaussian", "noise_scale": noise.sigma / problem.n, **record,
            "noise_scale_sum": noise.sigma, "grid_step": noise.gamma, "sensitivity_l2_sum_on_grid": noise.reach,
            "zcdp_rho": noise.rho, "steps": steps, "sensitivity_l2": sensitivity,
            "lipschitz_l2": lip, "lmo": lmo, "step_rule": self.step, "neighbouring": "replace-one",
        }
        if not c.lmo_is_lp:
            return GaussianPlan(steps, noise, sensitivity, lmo, problem=problem, parameters=params)
        backend, profile = programs.resolve_lp_backend(solver)
        calls = (OracleCall(backend.name, backend.require(), f"step solver ({steps} LMO calls)", LMO_ACCEPTANCE),)
        solve_lmo = _backend_lmo(c, backend, merge_options(profile, time_limit=options.time_limit,
                                                           threads=options.threads))
        return GaussianPlan(steps, noise, sensitivity, lmo, solve_lmo, calls, problem=problem, profile=profile,
                            parameters=dict(params, lmo_backend=backend.name))

    def solver_need(self, problem: Any) -> SolverNeed:
        """Only a set whose LMO is a linear program (``lmo_is_lp``, e.g. an
        :class:`~dpopt.sets.HPolytope`) calls an LP solver."""
        lp = bool(getattr(getattr(problem, "constraint", None), "lmo_is_lp", False))
        return SolverNeed.STEP if lp else SolverNeed.NONE

    def execute(self, plan: Plan, rng: np.random.Generator) -> Outcome:
        """Alg. 5 on the data: T Frank–Wolfe steps on noisy clipped gradient sums on the grid."""
        assert isinstance(plan, GaussianPlan)
        problem = plan.problem
        c = problem.constraint
        lmo = plan.solve_lmo if plan.solve_lmo is not None else c.lmo
        clipped = ClippedGradient(problem.loss, norm=2, bound=problem.loss_constants().lipschitz_l2)
        n, lam = problem.n, problem.l2_weight
        noise = plan.noise.draws(rng, problem.dim)  # data-independent: drawn ahead in blocks

        def noisy_gradient(theta: np.ndarray) -> np.ndarray:  # the noisy sum, then / n and + λθ
            return plan.noise.release(clipped(theta) * n, next(noise)) / n + lam * theta

        return Outcome(gaussian_frank_wolfe(noisy_gradient, lmo, c.center(), plan.steps, self.step),
                       calls=plan.calls)


def _backend_lmo(polytope: Any, backend: Backend, options: SolveOptions) -> Callable[[np.ndarray], np.ndarray]:
    """g ↦ the polytope's LMO answer from ``backend``, clipped to its exact bounding box.

    The LP is compiled once here, before the charge (public data only).  The answer is
    post-processing of the noisy gradient: a non-optimal solve raises a ModelError whose
    message holds no number (as the modeling layer's LMO always did), so the run stops
    with the budget spent and nothing released.  Clipping to the box keeps every iterate
    within the box the declared constants were computed on
    (:meth:`~dpopt.sets.HPolytope.clip_to_box`).
    """
    prepared = programs.prepare_polytope_lmo(backend, polytope)

    def lmo(g: np.ndarray) -> np.ndarray:
        result = backend.solve(prepared, np.asarray(g, dtype=np.float64), options)
        if result.status is not OracleStatus.OPTIMAL or result.solution is None:
            raise ModelError(f"HPolytope LMO: the LP did not solve ({backend.name}: {result.status.value})")
        return polytope.clip_to_box(result.solution)

    return lmo
