"""The convex objective/output perturbation path: :class:`ConvexMechanism`, its plan, the
accelerator and the a-priori fallback.

The convex mechanisms never fail for data reasons: the chosen solver is an *accelerator*,
whose answer is used when dpopt's gradient-mapping certificate proves it within the declared
``tolerance`` of the exact optimum; otherwise an accelerated proximal gradient method
(:mod:`dpopt.numerics.apg`) whose iteration count is fixed from public constants and the noise
provably reaches the same tolerance.  Either way the run releases, and the release does not say
which of the two answered (that bit depends on the data; it is in the opt-in diagnostics).  A
problem without that fallback (a set with an iterative projection such as a polytope, an
overlapping submodular norm, a loss without a Hessian bound) is refused before the charge, and
the refusal names the mechanisms that accept it; only ``on_uncertified="release-unsafe"`` runs
it, as an experiment whose release says that no privacy guarantee holds.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np

from dpopt.backends.base import Backend
from dpopt.backends.certificates import ConvexCheck
from dpopt.backends.profiles import merge_options, resolve
from dpopt.backends.result import OracleResult, OracleStatus, SolveOptions
from dpopt.errors import DpoptError, MechanismError
from dpopt.mechanisms.base import (
    NOISE_LAWS,
    ON_UNCERTIFIED,
    Mechanism,
    OnUncertified,
    Plan,
    RunOptions,
    SolverNeed,
    check_noise_law,
    loaded_mechanisms,
)
from dpopt.mechanisms.constrained import relaxed_problem, release_projection
from dpopt.mechanisms.params import Interval, Real
from dpopt.mechanisms.pipeline import Outcome
from dpopt.mechanisms.release import OracleCall
from dpopt.modeling.perturbation import Perturbation
from dpopt.modeling.problem import Problem
from dpopt.numerics.apg import plan_fallback, solve_with_proof, unsupported_reason
from dpopt.numerics.certificates import certify
from dpopt.privacy.ledger import Ledger
from dpopt.privacy.noise_spec import NoiseChoice, NoiseSpec

#: the fallback is planned (and refused, if ever) for noise norms up to this multiple of the
#: law's expected norm, before the charge; larger draws still run (the count is then larger)
NOISE_QUANTILE = 10.0


@dataclass(frozen=True, kw_only=True)
class ConvexPlan(Plan):
    """A calibrated objective/output perturbation run: the perturbation template, the noise laws,
    and the accelerator resolved from public facts."""

    template: Problem  # the problem with its perturbation's ζ, θ₀ (b = 0)
    linear_noise: NoiseSpec  # continuous law of b in the normalized objective (never released)
    output_noise: NoiseSpec  # exact law on a grid: releases the certified point
    tolerance: float  # allowed ‖x⁺ − θ*‖ (the output noise accounts for it)
    project_output: bool = False
    has_fallback: bool = True
    backend: Any = None
    options: SolveOptions | None = None
    call: OracleCall | None = None


class ConvexMechanism(Mechanism):
    """A mechanism that perturbs a convex :class:`Problem` and certifies one solve.

    Subclasses implement :meth:`calibrate` (the noise laws); :meth:`plan` adds the checks,
    the a-priori fallback's plan and the accelerator.  The ``solver`` is the accelerator: a
    backend name (``dpopt doctor`` lists them), a TOML profile, or ``"auto"``; its answer is
    used when dpopt proves it within ``tolerance``, otherwise the fallback's (module
    docstring).  A problem without the a-priori fallback (e.g. a polytope constraint or an
    overlapping submodular norm; :func:`dpopt.numerics.apg.unsupported_reason`) is refused
    before the charge with a :class:`~dpopt.errors.MechanismError`, unless ``on_uncertified``
    is ``"release-unsafe"``: such a run could fail after the charge for data reasons.

    Parameters
    ----------
    epsilon, delta, ledger :
        As in :class:`Mechanism`.
    tolerance : float
        Largest allowed distance ‖θ̂ − θ*‖₂ between the released pre-noise point and
        the exact optimum of the perturbed problem, proven by dpopt's certificate;
        the mechanism's analysis accounts for it: dpopt's certificate proves it for the solver's
        answer, otherwise the a-priori fallback's bound does.
    on_uncertified : {"raise", "release-unsafe"}
        For a problem without the a-priori fallback (:func:`dpopt.numerics.apg.unsupported_reason`):
        ``"raise"`` (default) refuses it before the charge with a
        :class:`~dpopt.errors.MechanismError` naming the mechanisms that accept it;
        ``"release-unsafe"`` runs the solver alone and returns its point with
        ``private=False`` (experiments only: the release says no guarantee holds).  Problems
        with the fallback always release privately, whatever this setting.
    noise : {"auto", "gaussian", "l2-laplace"}
        The law of the released noise (exact, on a public grid: :meth:`NoiseSpec.for_sensitivity`):
        ``"l2-laplace"`` the pure-ε law (discrete Laplace per coordinate), ``"gaussian"`` the
        discrete Gaussian, ``"auto"`` the pure-ε law for δ = 0 and, for δ > 0, whichever of the
        two has the smaller expected norm.  (Objective perturbation's linear term stays the
        continuous Gaussian or ℓ2-Laplace its proof needs; it is never released.)

    Notes
    -----
    The released point is ``output_noise.release(x)`` for the certified point x: x rounded onto
    the public grid γℤ^d (``parameters["grid_step"]``) plus exact discrete noise ([CKS20]), so
    every released coordinate is an integer multiple of γ (or, with a projection, a
    post-processing of such values); everything after the discrete noisy value is
    post-processing.
    """

    needs = SolverNeed.ACCELERATOR
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **Mechanism._parameter_constraints,
        "tolerance": [Interval(Real, 0, None, closed="neither")],
        "on_uncertified": [ON_UNCERTIFIED],
        "noise": [NOISE_LAWS],
    }

    def __init__(self, epsilon: float, delta: float = 0.0, *, ledger: Ledger | None = None,
                 tolerance: float = 1e-6, on_uncertified: OnUncertified = "raise",
                 noise: NoiseChoice = "auto") -> None:
        super().__init__(epsilon, delta, ledger=ledger)
        self.noise: NoiseChoice = check_noise_law(noise, self.delta)
        self.tolerance = float(tolerance)
        self.on_uncertified: OnUncertified = on_uncertified

    @abstractmethod
    def calibrate(self, problem: Problem) -> ConvexPlan:
        """Validate ``problem`` and calibrate the noise (no solver, no data values)."""

    def plan(self, problem: Problem, options: RunOptions | None = None) -> ConvexPlan:
        """The checks, the calibration, the fallback's plan and the accelerator (before the charge)."""
        options = options or RunOptions()
        if not isinstance(problem, Problem):
            raise MechanismError(f"run() needs a dpopt Problem, got {type(problem).__name__}")
        if problem.perturbation is not None:
            raise MechanismError("the problem already carries a perturbation; pass the plain problem")
        solve_on, relaxed = relaxed_problem(problem)
        plan = self.calibrate(solve_on)
        if relaxed:  # solved over a closed-form superset, released onto the set (unless
            # OutputPerturbation(project=False) keeps the grid values)
            plan = replace(plan, project_output=getattr(self, "project", True) is not False, parameters=dict(
                plan.parameters, solved_over=f"{type(solve_on.constraint).__name__} (a superset of "
                f"{type(problem.constraint).__name__} with a closed-form projection)"))
        if not plan.output_noise.releasable:
            raise MechanismError(f"{self.name}: the output noise must be an exact law on a grid")
        has_fallback = self._check_guarantee(plan, problem)  # from the problem's structure only
        backend, profile = resolve(options.solver, plan.template)
        version = backend.require()
        backend.check(plan.template)
        solve_options = merge_options(profile, time_limit=options.time_limit, threads=options.threads,
                                      distance_tolerance=plan.tolerance)
        call = OracleCall(backend.name, version, "accelerator" if has_fallback else "oracle",
                          _acceptance(plan.tolerance, has_fallback))
        projection = release_projection(problem.constraint) if plan.project_output else None
        parameters = dict(plan.parameters, backend=backend.name, tolerance=plan.tolerance, projection=projection,
                          fallback="accelerated proximal gradient (a-priori bound)" if has_fallback
                          else "none (release-unsafe experiment: no privacy guarantee)")
        return replace(plan, problem=problem, parameters=parameters, profile=profile, has_fallback=has_fallback,
                       backend=backend, options=solve_options, call=call)

    def execute(self, plan: Plan, rng: np.random.Generator) -> Outcome:
        """Draw b, accelerate, re-check, else the fallback; release the point on the grid.

        The linear noise b (continuous, never released) is drawn from ``rng``; the certified
        point is released by ``plan.output_noise.release`` (rounded onto the public grid plus
        exact discrete noise, :meth:`NoiseSpec.release`); the optional projection after it is
        post-processing.
        """
        assert isinstance(plan, ConvexPlan) and plan.call is not None and plan.options is not None
        problem = plan.problem
        b = plan.linear_noise.draw(rng, problem.dim)
        result = _accelerate(plan.backend, plan.template, b, plan.options)
        result, point = self._recheck(plan, b, result)
        details: dict[str, Any] = {"answered_by": "accelerator"}
        if not plan.has_fallback:  # the opted-in experiment: never private, certified or not
            return Outcome(self._finish(plan, problem, plan.output_noise.release(point, rng)),
                           calls=(replace(plan.call, certified=bool(result.certified)),),
                           results=(result,), private=False, notes=(UNSAFE_NOTE,))
        if not result.certified:
            point, details = _fallback(plan, b)
        return Outcome(self._finish(plan, problem, plan.output_noise.release(point, rng)), calls=(plan.call,),
                       results=(result,), details=details)

    def _check_guarantee(self, plan: ConvexPlan, problem: Problem) -> bool:
        """Whether the a-priori fallback covers the run; refuse before the charge when it does not.

        Reads the problem's structure and the public noise law only.  With the fallback, its
        plan is made here for noise norms up to :data:`NOISE_QUANTILE` times the expected one
        (a refusal for unbounded work happens now, not after the draw).  Without it the run
        could fail after the charge for data reasons, so it is refused with one line that names
        the mechanisms accepting the problem, unless the caller opted into
        ``on_uncertified="release-unsafe"`` (returns False: the run is an unprivate experiment).
        """
        reason = unsupported_reason(plan.template)
        if reason is None:
            plan_fallback(plan.template, plan.tolerance,
                          noise_bound=NOISE_QUANTILE * plan.linear_noise.expected_norm(problem.dim))
            return True
        if self.on_uncertified == "release-unsafe":
            return False
        raise MechanismError(
            f"{self.name} cannot guarantee a release here: {reason}, so a solve could fail after the "
            f"charge; nothing was charged. {_alternatives(problem)}"
        )

    @staticmethod
    def _finish(plan: ConvexPlan, problem: Problem, theta: np.ndarray) -> np.ndarray:
        """Post-processing of the grid release: the projection onto the declared set, kept on the
        grid where the set allows it (:meth:`ConstraintSet.project_to_grid`), else the grid values."""
        if plan.project_output and problem.constraint is not None:
            step = plan.output_noise.grid_step
            c = problem.constraint
            point = c.project(theta) if step is None else c.project_to_grid(theta, step)[0]
            return np.asarray(point, dtype=np.float64)
        return np.asarray(theta, dtype=np.float64)

    def _recheck(self, plan: ConvexPlan, b: np.ndarray, result: OracleResult) -> tuple[OracleResult, np.ndarray]:
        """dpopt's certificate: the feasible point x⁺ and a proof ‖x⁺ − θ*‖ ≤ tolerance."""
        t = plan.template
        assert t.perturbation is not None
        perturbed = t.with_perturbation(t.perturbation.with_noise(b))
        if result.solution is None:
            return result.with_recheck(ConvexCheck(tolerance=plan.tolerance, reason="no solution"), False), np.zeros(t.dim)
        cert = certify(perturbed, result.solution)
        check = ConvexCheck.from_certificate(cert, plan.tolerance)
        return result.with_recheck(check, check.within_tolerance), cert.point


#: the note of a ``release-unsafe`` run of a problem without the a-priori fallback
UNSAFE_NOTE = ("UNSAFE: on_uncertified='release-unsafe' ran a problem without an a-priori fallback; "
               "no privacy guarantee holds for this release")

#: the mechanisms a refusal may suggest, with probe settings that make their ``plan`` check only
#: the problem's structure (explicit steps, clip and step size replace defaults that need bounds)
_ALTERNATIVES: tuple[tuple[str, dict[str, Any]], ...] = (
    ("DPGradientDescent", {"steps": 1, "clip": 1.0, "learning_rate": 1.0}),
    ("PrivateMirrorDescent", {"steps": 1}),
    ("GaussianFrankWolfe", {"steps": 1}),
    ("PolytopeFrankWolfe", {"steps": 1}),
    ("DualFrankWolfe", {"steps": 1}),
)


def _alternatives(problem: Problem) -> str:
    """One sentence naming the mechanisms whose ``plan`` accepts ``problem`` (public checks only)."""
    loaded = loaded_mechanisms()
    names = []
    for name, settings in _ALTERNATIVES:
        if name not in loaded:
            continue
        mechanism = loaded[name](1.0, 1e-6, ledger=Ledger(), **settings)
        try:
            mechanism.check_problem(problem)
            mechanism.plan(problem)
        except (DpoptError, NotImplementedError):  # refused: not an alternative
            continue
        names.append(name)
    if not names:
        return "No dpopt mechanism accepts this problem as stated; change the constraint set or the regularizer."
    return f"Mechanisms that accept this problem: {', '.join(names)}."


def _acceptance(tolerance: float, has_fallback: bool) -> str:
    rule = f"point proven within {tolerance:g} of the exact optimum (gradient-mapping certificate)"
    if has_fallback:
        rule += "; otherwise accelerated proximal gradient, whose a-priori bound proves the same"
    return rule


def _accelerate(backend: Backend, template: Problem, b: np.ndarray, options: SolveOptions) -> OracleResult:
    """The accelerator's answer; any failure of the external solver is an ERROR result, never an exception."""
    try:
        return backend.solve(backend.prepare(template), b, options)
    except Exception as exc:  # noqa: BLE001 — an accelerator may fail; the fallback answers
        return OracleResult(solution=None, status=OracleStatus.ERROR, solver_certified=False, solve_time=math.nan,
                            backend=backend.name, backend_version=backend.version() or "unknown",
                            raw_status="exception", message=f"{type(exc).__name__}")


def _fallback(plan: ConvexPlan, b: np.ndarray) -> tuple[np.ndarray, dict[str, Any]]:
    """The fallback's point, proven within the plan's tolerance a priori."""
    t = plan.template
    assert t.perturbation is not None
    solved = solve_with_proof(t.with_perturbation(t.perturbation.with_noise(b)), plan.tolerance,
                              max_iterations=None)  # planned before the charge: never refuse here
    details = {"answered_by": "fallback", "fallback_iterations": solved.iterations,
               "fallback_distance_bound": solved.distance_bound,
               "fallback_certificate": solved.certificate.to_dict()}
    return np.asarray(solved.point, dtype=np.float64), details


def template_problem(problem: Problem, zeta: float = 0.0, theta0: np.ndarray | None = None) -> Problem:
    """The problem with a zero linear term and the quadratic term (ζ/2)‖θ − θ₀‖²."""
    return problem.with_perturbation(Perturbation(problem.dim, zeta=zeta, theta0=theta0))
