"""Private Frank–Wolfe over a general convex set with Gaussian noise (TTZ14 Alg. 5, Thm. B.1).
The algorithm, its calibration and the corrections to the paper are in
:mod:`dpopt.mechanisms.frank_wolfe`."""

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
from dpopt.mechanisms.params import Interval, Options, Real, arguments, renamed_setting
from dpopt.mechanisms.pipeline import Outcome
from dpopt.mechanisms.release import OracleCall
from dpopt.modeling.problem import Problem
from dpopt.numerics.fw_oracles import (
    clipped_smooth_gradient,
)
from dpopt.privacy.calibration import gaussian_delta, gaussian_sigma_analytic
from dpopt.privacy.ledger import Ledger
from dpopt.privacy.sampling import gaussian_noise
from dpopt.progress import counted

__all__ = ["GaussianFrankWolfe", "paper_sigma_checked"]


#: the public acceptance rule of an HPolytope LMO answer (the release's OracleCall says it)
LMO_ACCEPTANCE = ("an optimal vertex, clipped to the polytope's exact bounding box (post-processing of the "
                  "noisy gradient); no optimal answer: the run stops and releases nothing")


# ---------------------------------------------------------------------------
# Shared pieces
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
class GaussianPlan(Plan):
    """A calibrated Alg. 5 run (public quantities only)."""

    steps: int
    sigma: float
    sensitivity: float
    lmo: str
    solve_lmo: Callable[[np.ndarray], np.ndarray] | None = None  # None: the set's own LMO
    calls: tuple[OracleCall, ...] = ()


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
    solver's tolerance cannot raise the sensitivity above 2L₂/n.
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

    def plan(self, problem: Problem, options: RunOptions | None = None) -> GaussianPlan:
        """Validate ``problem``, calibrate σ and, for an LP LMO, prepare its solver (no data values read).

        ``options.solver`` (a name, a TOML profile or a Backend) solves an
        :class:`~dpopt.modeling.HPolytope`'s LMO, an LP (``"auto"``: ``scipy-lp``, HiGHS
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
        sigma, record = self.noise_sigma(lip, problem.n, steps)
        sensitivity = 2.0 * lip / problem.n
        params = {
            "calibration": self.calibration, "accountant": self.accountant if self.calibration == "accountant" else None,
            "noise": "gaussian", "noise_scale": sigma, **record, "steps": steps, "sensitivity_l2": sensitivity,
            "lipschitz_l2": lip, "lmo": lmo, "step_rule": self.step, "neighbouring": "replace-one",
        }
        if not c.lmo_is_lp:
            return GaussianPlan(steps, sigma, sensitivity, lmo, problem=problem, parameters=params)
        backend, profile = programs.resolve_lp_backend(solver)
        calls = (OracleCall(backend.name, backend.require(), f"step solver ({steps} LMO calls)", LMO_ACCEPTANCE),)
        solve_lmo = _backend_lmo(c, backend, merge_options(profile, time_limit=options.time_limit,
                                                           threads=options.threads))
        return GaussianPlan(steps, sigma, sensitivity, lmo, solve_lmo, calls, problem=problem, profile=profile,
                            parameters=dict(params, lmo_backend=backend.name))

    def solver_need(self, problem: Any) -> SolverNeed:
        """Only a set whose LMO is a linear program (``lmo_is_lp``, e.g. an
        :class:`~dpopt.modeling.HPolytope`) calls an LP solver."""
        lp = bool(getattr(getattr(problem, "constraint", None), "lmo_is_lp", False))
        return SolverNeed.STEP if lp else SolverNeed.NONE

    def execute(self, plan: Plan, rng: np.random.Generator) -> Outcome:
        """Alg. 5 on the data: T Frank–Wolfe steps on Gaussian-noised clipped gradients."""
        assert isinstance(plan, GaussianPlan)
        problem = plan.problem
        c = problem.constraint
        lmo = plan.solve_lmo if plan.solve_lmo is not None else c.lmo
        draw = lambda: gaussian_noise(rng, plan.sigma, problem.dim)  # noqa: E731
        return Outcome(gaussian_frank_wolfe(clipped_smooth_gradient(problem, norm=2), lmo, c.center(),
                                            plan.steps, draw, self.step), calls=plan.calls)


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
