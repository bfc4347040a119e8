"""Shared machinery of the convex objective/output perturbation mechanisms.

Every mechanism follows one path: validate the problem and calibrate noise
(before any solver runs) → resolve the backend → check the budget → draw noise
from a securely seeded generator → compile once and solve → charge the ledger →
re-check the solver's answer with dpopt's own certificate → post-process →
:class:`~dpopt.mechanisms.release.Release`.  A call that is not certified
releases nothing (``UncertifiedOracleError``), and the budget stays spent.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

import numpy as np
from scipy.special import gammaln

from dpopt.backends.base import Backend
from dpopt.backends.profiles import SolverProfile, merge_options, resolve
from dpopt.backends.result import OracleResult, SolveOptions
from dpopt.errors import MechanismError, UncertifiedOracleError
from dpopt.mechanisms.release import Release
from dpopt.modeling.perturbation import Perturbation
from dpopt.modeling.problem import Problem
from dpopt.modeling.prox import certify
from dpopt.privacy.calibration import check_epsilon_delta, gaussian_sigma
from dpopt.privacy.ledger import Charge, Ledger
from dpopt.privacy.rng import make_rng
from dpopt.privacy.sampling import gaussian_noise, l2_laplace_noise

OnUncertified = Literal["raise", "release-unsafe"]
NoiseChoice = Literal["auto", "gaussian", "l2-laplace"]
_DEFAULT_LEDGER = Ledger()


def default_ledger() -> Ledger:
    """The process-wide ledger charged when a mechanism is given none."""
    return _DEFAULT_LEDGER


@dataclass(frozen=True)
class NoiseSpec:
    """A public noise distribution: Gaussian N(0, σ²I) or ℓ2-Laplace ∝ exp(−‖v‖/scale)."""

    kind: Literal["gaussian", "l2-laplace", "none"]
    scale: float

    def draw(self, rng: np.random.Generator, dim: int) -> np.ndarray:
        if self.kind == "none" or self.scale == 0.0:
            return np.zeros(dim)
        if self.kind == "gaussian":
            return np.asarray(gaussian_noise(rng, self.scale, dim), dtype=np.float64)
        return np.asarray(l2_laplace_noise(rng, self.scale, dim), dtype=np.float64)

    def expected_norm(self, dim: int) -> float:
        """E‖v‖₂ of a draw in ``dim`` dimensions."""
        if self.kind == "none":
            return 0.0
        if self.kind == "gaussian":
            return self.scale * math.sqrt(2.0) * math.exp(gammaln((dim + 1) / 2) - gammaln(dim / 2))
        return self.scale * dim  # the norm is Gamma(dim, scale)

    @classmethod
    def for_sensitivity(cls, sensitivity: float, epsilon: float, delta: float, dim: int,
                        choice: NoiseChoice = "auto") -> NoiseSpec:
        """ℓ2-Laplace (pure ε-DP), or for δ > 0 the analytic Gaussian (Balle–Wang 2018)
        when its expected norm in ``dim`` dimensions is smaller (ε-DP implies (ε, δ)-DP)."""
        if sensitivity == 0.0:
            return cls("none", 0.0)
        laplace = cls("l2-laplace", sensitivity / epsilon)
        if delta == 0:
            return laplace
        gauss = cls("gaussian", gaussian_sigma(sensitivity, epsilon, delta, method="analytic"))
        return choose(gauss, laplace, dim, choice)


def choose(gauss: NoiseSpec, laplace: NoiseSpec, dim: int, choice: NoiseChoice = "auto") -> NoiseSpec:
    """The requested law, or for ``"auto"`` the one with the smaller expected norm."""
    if choice == "gaussian":
        return gauss
    if choice == "l2-laplace":
        return laplace
    return gauss if gauss.expected_norm(dim) <= laplace.expected_norm(dim) else laplace


@dataclass(frozen=True)
class Plan:
    """A calibrated run: the perturbation template and the public noise laws."""

    template: Problem  # the problem with its perturbation's ζ, θ₀ (b = 0)
    linear_noise: NoiseSpec  # law of b in the normalized objective
    output_noise: NoiseSpec  # law of the noise added to the certified point
    tolerance: float  # allowed ‖x⁺ − θ*‖ (the output noise accounts for it)
    parameters: dict[str, Any] = field(default_factory=dict)
    project_output: bool = False


class Mechanism(ABC):
    """A private algorithm with an (ε, δ) guarantee under replace-one neighbours.

    Parameters
    ----------
    epsilon : float
        ε > 0.
    delta : float
        δ ∈ [0, 1).
    ledger : Ledger, optional
        Where the release is charged (default: :func:`default_ledger`).
    tolerance : float
        Largest allowed distance ‖θ̂ − θ*‖₂ between the released pre-noise point and
        the exact optimum of the perturbed problem, proven by dpopt's certificate;
        the mechanism's analysis accounts for it.  A solve that cannot prove it fails closed.
    noise : {"auto", "gaussian", "l2-laplace"}
        The noise law: ``"auto"`` takes ℓ2-Laplace for δ = 0 and, for δ > 0, whichever of
        Gaussian and ℓ2-Laplace has the smaller expected norm.
    on_uncertified : {"raise", "release-unsafe"}
        ``"raise"`` (default) releases nothing when a solve is not certified;
        ``"release-unsafe"`` returns the point with ``private=False`` (experiments only).
    """

    name: ClassVar[str] = "mechanism"
    theorem: ClassVar[str] = ""

    def __init__(self, epsilon: float, delta: float = 0.0, *, ledger: Ledger | None = None,
                 tolerance: float = 1e-6, on_uncertified: OnUncertified = "raise",
                 noise: NoiseChoice = "auto") -> None:
        self.epsilon, self.delta = check_epsilon_delta(epsilon, delta)
        if noise not in ("auto", "gaussian", "l2-laplace"):
            raise MechanismError("noise must be 'auto', 'gaussian' or 'l2-laplace'")
        if noise == "gaussian" and self.delta == 0:
            raise MechanismError("Gaussian noise needs delta > 0; use noise='l2-laplace' for pure ε-DP")
        self.noise: NoiseChoice = noise
        if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or not (
            math.isfinite(tolerance) and tolerance > 0
        ):
            raise MechanismError(f"tolerance must be a positive number, got {tolerance!r}")
        if on_uncertified not in ("raise", "release-unsafe"):
            raise MechanismError("on_uncertified must be 'raise' or 'release-unsafe'")
        self.tolerance = float(tolerance)
        self.ledger = ledger if ledger is not None else _DEFAULT_LEDGER
        self.on_uncertified = on_uncertified

    @abstractmethod
    def run(self, problem: Any, *, solver: str | Path | SolverProfile | Backend = "auto",
            time_limit: float | None = None, seed: int | None = None,
            threads: int | None = None) -> Release:
        """Run the mechanism once and return a release."""

    def _charged_solve(self, backend: Backend, prepared: Any, b: np.ndarray, options: SolveOptions,
                       label: str) -> tuple[OracleResult, Charge]:
        """Charge the ledger (the data is about to be touched), then call the oracle;
        if the call raises, the charge stays spent and is marked unreleased."""
        charge = self.ledger.charge(self.epsilon, self.delta, label=label, mechanism=self.name)
        try:
            return backend.solve(prepared, b, options), charge
        except BaseException:
            self.ledger.mark_unreleased(charge)
            raise

    def _fail_closed(self, result: OracleResult, charge: Charge) -> None:
        """Mark the charge unreleased and raise, unless release-unsafe was asked for."""
        self.ledger.mark_unreleased(charge)
        if self.on_uncertified == "raise":
            raise UncertifiedOracleError(
                f"{self.name}: the oracle call was not certified, so nothing is released "
                f"(the budget ε={self.epsilon:g}, δ={self.delta:g} is spent). Certificate: "
                f"{result.summary()}. Raise time_limit, loosen tolerance, or choose another solver.",
                certificate=result,
            )

    @staticmethod
    def _check_time_limit(time_limit: float | None) -> None:
        if time_limit is not None and (
            isinstance(time_limit, bool) or not isinstance(time_limit, (int, float)) or not time_limit > 0
        ):
            raise MechanismError("time_limit must be a positive number of seconds")


class ConvexMechanism(Mechanism):
    """A mechanism that perturbs a convex :class:`Problem` and certifies one solve."""

    @abstractmethod
    def plan(self, problem: Problem) -> Plan:
        """Validate ``problem`` and calibrate the noise (no solver, no data values)."""

    def run(self, problem: Problem, *, solver: str | Path | SolverProfile | Backend = "auto",
            time_limit: float | None = None, seed: int | None = None,
            threads: int | None = None) -> Release:
        """Run the mechanism once and return a release.

        Parameters
        ----------
        problem : Problem
            The (unperturbed) problem.
        solver : str, path or Backend
            A backend name (``dpopt doctor`` lists them), a TOML profile, or ``"auto"``.
        time_limit : float, optional
            Seconds per oracle call; a call stopped by it is not certified.
        seed : int, optional
            For reproducible noise only; by default noise is seeded from OS entropy.
        threads : int, optional
            Solver threads.

        Raises
        ------
        UncertifiedOracleError
            The oracle did not certify its answer; nothing is released, the budget is spent.
        """
        if not isinstance(problem, Problem):
            raise MechanismError(f"run() needs a dpopt Problem, got {type(problem).__name__}")
        if problem.perturbation is not None:
            raise MechanismError("the problem already carries a perturbation; pass the plain problem")
        self._check_time_limit(time_limit)
        plan = self.plan(problem)
        backend, profile = resolve(solver, plan.template)
        backend.require()
        backend.check(plan.template)
        options = merge_options(profile, time_limit=time_limit, threads=threads,
                                distance_tolerance=plan.tolerance)
        self.ledger.require(self.epsilon, self.delta)
        rng, seed_info = make_rng(seed)
        b = plan.linear_noise.draw(rng, problem.dim)
        out_noise = plan.output_noise.draw(rng, problem.dim)
        prepared = backend.prepare(plan.template)
        result, charge = self._charged_solve(backend, prepared, b, options, problem.summary())
        result, point = self._recheck(plan, b, result)
        parameters = dict(plan.parameters, backend=backend.name, tolerance=plan.tolerance)
        if not result.certified:
            self._fail_closed(result, charge)
        theta = point + out_noise
        if plan.project_output and problem.constraint is not None:
            theta = problem.constraint.project(theta)
        notes = () if result.certified else ("UNSAFE: released without a certified oracle result",)
        return Release(
            theta=theta, epsilon=self.epsilon, delta=self.delta,
            mechanism=f"{self.name} [{self.theorem}]", parameters=parameters,
            oracle_calls=(result,), seed=seed_info, private=bool(result.certified),
            problem=problem.summary(), notes=notes,
        )

    def _recheck(self, plan: Plan, b: np.ndarray, result: OracleResult) -> tuple[OracleResult, np.ndarray]:
        """dpopt's certificate: the feasible point x⁺ and a proof ‖x⁺ − θ*‖ ≤ tolerance."""
        t = plan.template
        assert t.perturbation is not None
        perturbed = t.with_perturbation(t.perturbation.with_noise(b))
        if result.solution is None:
            return result.with_recheck({"tolerance": plan.tolerance, "reason": "no solution"}, False), np.zeros(t.dim)
        cert = certify(perturbed, result.solution)
        accepted = bool(cert.distance_bound <= plan.tolerance)
        recheck = dict(cert.to_dict(), tolerance=plan.tolerance)
        return result.with_recheck(recheck, accepted), cert.point


def template_problem(problem: Problem, zeta: float = 0.0, theta0: np.ndarray | None = None) -> Problem:
    """The problem with a zero linear term and the quadratic term (ζ/2)‖θ − θ₀‖²."""
    return problem.with_perturbation(Perturbation(problem.dim, zeta=zeta, theta0=theta0))
