"""Shared machinery of the mechanisms, and the convex objective/output perturbation path.

Every mechanism runs through :func:`dpopt.mechanisms.pipeline.run_private`: public checks
and calibration (declared constants only) → charge → touch the data → release.

The convex mechanisms (:class:`ConvexMechanism`) never fail for data reasons: the chosen
solver is an *accelerator*, whose answer is used when dpopt's gradient-mapping
certificate proves it within the declared ``tolerance`` of the exact optimum; otherwise
an accelerated proximal gradient method (:mod:`dpopt.numerics.apg`) whose iteration count
is fixed from public constants and the noise provably reaches the same tolerance.  Either
way the run releases, and the release does not say which of the two answered (that bit
depends on the data; it is in the opt-in diagnostics).  A problem without that fallback
(a set with an iterative projection such as a polytope, an overlapping submodular norm, a
loss without a Hessian bound) is refused before the charge, and the refusal names the
mechanisms that accept it; only ``on_uncertified="release-unsafe"`` runs it, as an
experiment whose release says that no privacy guarantee holds.
"""

from __future__ import annotations

import functools
import math
from abc import ABC, abstractmethod
from dataclasses import dataclass, field, replace
from enum import Enum
from fractions import Fraction
from functools import partial
from pathlib import Path
from typing import Any, ClassVar, Literal, final

import numpy as np

from dpopt.backends.base import Backend
from dpopt.backends.certificates import ConvexCheck
from dpopt.backends.profiles import SolverProfile, merge_options, resolve
from dpopt.backends.result import OracleResult, OracleStatus, SolveOptions
from dpopt.discovery import subclasses
from dpopt.errors import DpoptError, ExecutorError, MechanismError, UncertifiedOracleError
from dpopt.executors import NAMES as EXECUTOR_NAMES
from dpopt.executors import ExecutorSpec
from dpopt.mechanisms.constrained import relaxed_problem, release_projection
from dpopt.mechanisms.params import (
    Instance,
    Integral,
    Interval,
    Options,
    Real,
    arguments,
    validate_params,
)
from dpopt.mechanisms.pipeline import Outcome, run_private
from dpopt.mechanisms.release import Diagnostics, OracleCall, Release
from dpopt.modeling.perturbation import Perturbation
from dpopt.modeling.problem import Problem
from dpopt.numerics.apg import plan_fallback, solve_with_proof, unsupported_reason
from dpopt.numerics.certificates import certify
from dpopt.privacy.grid import GridNoise, gaussian_on_grid, laplace_on_grid
from dpopt.privacy.ledger import DefaultLedger, Ledger
from dpopt.privacy.rng import make_rng
from dpopt.privacy.sampling import gaussian_noise, l2_laplace_noise

OnUncertified = Literal["raise", "release-unsafe"]
NoiseChoice = Literal["auto", "gaussian", "l2-laplace"]
_DEFAULT_LEDGER = DefaultLedger()
#: the fallback is planned (and refused, if ever) for noise norms up to this multiple of the
#: law's expected norm, before the charge; larger draws still run (the count is then larger)
NOISE_QUANTILE = 10.0


def default_ledger() -> Ledger:
    """The process-wide ledger charged when a mechanism is given none.

    Unlimited and in memory; it refuses to be charged in a worker process (a joblib,
    multiprocessing, ``concurrent.futures`` or Dask worker has one of its own), see
    :class:`~dpopt.privacy.ledger.DefaultLedger`: pass a
    :class:`~dpopt.privacy.sqlite_ledger.SQLiteLedger` to charge one budget from several processes.
    """
    return _DEFAULT_LEDGER


#: the ``noise`` setting of the mechanisms that choose between Gaussian and pure-ε noise
#: (``"l2-laplace"``: the pure-ε law, on a grid the discrete Laplace per coordinate; :meth:`NoiseSpec.for_sensitivity`)
NOISE_LAWS = Options(("auto", "gaussian", "l2-laplace"))
#: the ``on_uncertified`` setting of the mechanisms with a certified oracle
ON_UNCERTIFIED = Options(("raise", "release-unsafe"))
#: the ``steps`` setting (T, the number of iterations) of every iterative mechanism; None: a default T
STEPS = [Interval(Integral, 1, None, closed="left", why="T ≤ 0 runs nothing"), None]


def check_noise_law(noise: NoiseChoice, delta: float) -> NoiseChoice:
    """The validated ``noise`` setting: Gaussian noise needs δ > 0 (a check across two settings)."""
    if noise == "gaussian" and delta == 0:
        raise MechanismError("Gaussian noise needs delta > 0; use noise='l2-laplace' for pure ε-DP")
    return noise


@dataclass(frozen=True)
class NoiseSpec:
    """A public noise law: exact discrete noise on a public grid, or a continuous law for a
    perturbation that is never released.

    * **On a grid** (``grid`` set, ``kind`` ``"gaussian"`` or ``"laplace"``): the discrete
      Gaussian or discrete Laplace law of :class:`dpopt.privacy.grid.GridNoise` on γℤ^d
      ([CKS20], Algs. 1–3).  :meth:`release` rounds a centre onto the grid and adds the exact
      integer noise: every released value is an integer multiple of the public γ
      (:attr:`grid_step`), and the set of reachable values does not depend on the centre.
      This is the law of every additive value a mechanism releases.
    * **Continuous** (``grid`` None, ``kind`` ``"gaussian"`` or ``"l2-laplace"``): N(0, σ²I) or
      the density ∝ exp(−‖v‖₂/scale), drawn in floating point by :meth:`draw` from the run's
      generator.  Only for a perturbation that never leaves the mechanism (objective
      perturbation's linear term, whose proof needs a density).
    * ``"none"``: no noise (a zero sensitivity).

    Attributes
    ----------
    kind : {"gaussian", "laplace", "l2-laplace", "none"}
        The law.
    scale : float
        σ (Gaussian), b (discrete Laplace, per coordinate) or the ℓ2-Laplace scale, in the
        units of the value; 0 for ``"none"``.
    grid : GridNoise, optional
        The exact law on the grid (None: continuous or none).
    """

    kind: Literal["gaussian", "laplace", "l2-laplace", "none"]
    scale: float
    grid: GridNoise | None = None

    def __post_init__(self) -> None:
        if self.grid is not None and (self.grid.kind != self.kind or self.grid.scale != self.scale):
            raise ValueError("NoiseSpec: kind and scale must be the grid law's (use NoiseSpec.on_grid)")
        if self.grid is None and self.kind == "laplace":
            raise ValueError("NoiseSpec: the discrete Laplace law needs its grid (use NoiseSpec.on_grid)")
        if self.kind == "none" and self.scale != 0.0:
            raise ValueError("NoiseSpec: 'none' has scale 0")

    @classmethod
    def on_grid(cls, grid: GridNoise) -> NoiseSpec:
        """The exact law ``grid`` (kind and scale read from it)."""
        return cls(grid.kind, grid.scale, grid)

    @classmethod
    def none(cls) -> NoiseSpec:
        """No noise."""
        return cls("none", 0.0)

    @property
    def grid_step(self) -> float | None:
        """The public grid step γ of the released values (None for a continuous law or none)."""
        return None if self.grid is None else self.grid.gamma

    @property
    def releasable(self) -> bool:
        """Whether :meth:`release` may be used: an exact law on a grid, or no noise."""
        return self.grid is not None or self.kind == "none"

    def release(self, centre: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The exact release of ``centre``: rounded (half to even) onto the grid plus exact
        integer noise, times γ (:meth:`GridNoise.release`).

        The integers come from :func:`dpopt.privacy.exact.sampler_for` (``rng``): an unseeded
        run's :class:`~dpopt.privacy.rng.SecureGenerator` gives the OS CSPRNG and never its own
        stream; a seeded generator gives a reproducible sampler seeded by one draw of it.
        ``"none"`` returns the centre unchanged (used only where the sensitivity is 0).
        """
        values = np.asarray(centre, dtype=np.float64)
        if self.kind == "none":
            return values.copy()
        if self.grid is None:
            raise MechanismError(f"a continuous {self.kind} law cannot release a value; calibrate "
                                 "it on a grid (NoiseSpec.for_sensitivity)")
        return self.grid.release(values, rng)

    def draw(self, rng: np.random.Generator, dim: int) -> np.ndarray:
        """A draw of the continuous law (never released: a perturbation inside an objective)."""
        if self.kind == "none" or self.scale == 0.0:
            return np.zeros(dim)
        if self.grid is not None:
            raise MechanismError("noise on a grid is added by release(centre, rng), never drawn alone")
        if self.kind == "gaussian":
            return np.asarray(gaussian_noise(rng, self.scale, dim), dtype=np.float64)
        return np.asarray(l2_laplace_noise(rng, self.scale, dim), dtype=np.float64)

    def zcdp_mu(self, sensitivity: float, dim: int) -> float:
        """μ such that releasing a centre of ℓ2 sensitivity Δ with this discrete Gaussian is
        μ²/2-zCDP: (Δ + γ√d)/σ ([CKS20]: ρ = ‖shift‖²/(2σ²) for integer shifts in grid units,
        and rounded neighbours differ by at most Δ/γ + √d steps).  Its Rényi curve is that of
        a μ-GDP mechanism, which is what Rényi accounting of a composition needs."""
        if self.kind != "gaussian" or self.grid is None:
            raise MechanismError("zcdp_mu needs a discrete Gaussian law on a grid")
        return (sensitivity + self.grid.gamma * math.sqrt(dim)) / self.scale

    def scaled(self, factor: float) -> NoiseSpec:
        """The same law with its scale multiplied by ``factor`` > 0, on the same grid (for mutation tests)."""
        if self.kind == "none":
            return self
        if self.grid is None:
            return NoiseSpec(self.kind, self.scale * factor)
        f = Fraction(factor)
        param = self.grid.param * (f * f if self.kind == "gaussian" else f)
        return NoiseSpec.on_grid(GridNoise(self.grid.kind, self.grid.gamma, param))

    def expected_norm(self, dim: int) -> float:
        """E‖v‖₂ of a draw in ``dim`` dimensions (an upper bound for the discrete laws).

        Continuous Gaussian: σ√2·Γ((d+1)/2)/Γ(d/2); ℓ2-Laplace: scale·d (‖v‖ ~ Gamma(d, scale));
        discrete laws: √(:meth:`second_moment`) (Jensen).
        """
        if self.kind == "none":
            return 0.0
        if self.grid is not None:
            return math.sqrt(self.second_moment(dim))
        if self.kind == "gaussian":
            return self.scale * math.sqrt(2.0) * math.exp(math.lgamma((dim + 1) / 2) - math.lgamma(dim / 2))
        return self.scale * dim

    def second_moment(self, dim: int) -> float:
        """E‖v‖₂² of a draw in ``dim`` dimensions (an upper bound for the discrete Gaussian).

        Continuous Gaussian σ²d; ℓ2-Laplace scale²·d(d + 1); discrete Gaussian ≤ σ²d (its
        variance is below σ², [CKS20] Prop. 19); discrete Laplace of scale t (grid units)
        exactly d·γ²·2q/(1 − q)², q = e^{−1/t}.
        """
        if self.kind == "none":
            return 0.0
        if self.kind == "gaussian":
            return self.scale**2 * dim
        if self.grid is None:
            return self.scale**2 * dim * (dim + 1)
        q = math.exp(-1.0 / float(self.grid.param))
        return dim * self.grid.gamma**2 * 2.0 * q / (1.0 - q) ** 2

    @classmethod
    def for_sensitivity(cls, sensitivity: float, epsilon: float, delta: float, dim: int,
                        choice: NoiseChoice = "auto", *, grid_step: float | None = None) -> NoiseSpec:
        """The exact law on a grid for one (ε, δ)-DP release of ℓ2 sensitivity Δ in ``dim`` dimensions.

        * Pure ε (δ = 0, or ``choice="l2-laplace"``): discrete Laplace per coordinate
          (:func:`~dpopt.privacy.grid.laplace_on_grid`), calibrated to the ℓ1 sensitivity
          √d·Δ (rounded up), so b ≈ √d·Δ/ε.  The continuous ℓ2-Laplace law ∝ exp(−ε‖v‖/Δ) has
          no exact lattice sampler here; the cost is in E‖noise‖: ≤ √(2d)·b ≈ √2·d·Δ/ε against
          the ℓ2-Laplace's d·Δ/ε, a factor ≈ √2 for d ≥ 2 (1 for d = 1), plus the grid's 2^-8.
        * δ > 0: the discrete Gaussian (:func:`~dpopt.privacy.grid.gaussian_on_grid`: the exact
          [CKS20] Thm. 7 profile for d = 1, its zCDP with the [CKS20] conversion for d > 1);
          ``"auto"`` takes whichever of the two has the smaller :meth:`expected_norm` (an ε-DP
          law is also (ε, δ)-DP).

        Parameters
        ----------
        sensitivity : float
            Δ ≥ 0 of the centre in ℓ2 (0 gives ``"none"``).
        epsilon, delta : float
            The release's guarantee.
        dim : int
            d, the number of coordinates released.
        choice : {"auto", "gaussian", "l2-laplace"}
            The law (``"l2-laplace"``: the pure-ε law above, whose name is kept).
        grid_step : float, optional
            A public power-of-two grid γ to calibrate on (default: :func:`~dpopt.privacy.grid.grid_step`
            of Δ, which makes rounding cost at most 2^-8 of Δ).  Rounded neighbours then differ
            by at most Δ/γ + √d grid steps in ℓ2 (√d·Δ/γ + d in ℓ1), and the laws are
            calibrated to that, the Gaussian through its zCDP.
        """
        if sensitivity == 0.0:
            return cls.none()
        d = int(dim)
        l1 = math.nextafter(math.sqrt(d) * sensitivity, math.inf) if d > 1 else float(sensitivity)
        laplace = cls.on_grid(_laplace_law(l1, epsilon, d, grid_step))
        if delta == 0:
            return laplace
        gauss = cls.on_grid(_gaussian_law(sensitivity, epsilon, delta, d, grid_step))
        return choose(gauss, laplace, d, choice)


@functools.lru_cache(maxsize=256)
def _gaussian_law(sensitivity: float, epsilon: float, delta: float, dim: int, gamma: float | None) -> GridNoise:
    """The discrete Gaussian for one (ε, δ) release (cached: a pure function of public numbers;
    one dimension uses the exact profile, several the zCDP conversion, on either grid)."""
    return gaussian_on_grid(sensitivity, epsilon, delta, dim, gamma)


@functools.lru_cache(maxsize=256)
def _laplace_law(l1_sensitivity: float, epsilon: float, dim: int, gamma: float | None) -> GridNoise:
    """The discrete Laplace law for one ε-DP release (cached: a pure function of public numbers)."""
    return laplace_on_grid(l1_sensitivity, epsilon, dim, gamma)


def choose(gauss: NoiseSpec, laplace: NoiseSpec, dim: int, choice: NoiseChoice = "auto") -> NoiseSpec:
    """The requested law, or for ``"auto"`` the one with the smaller expected norm."""
    if choice == "gaussian":
        return gauss
    if choice == "l2-laplace":
        return laplace
    return gauss if gauss.expected_norm(dim) <= laplace.expected_norm(dim) else laplace


class SolverNeed(Enum):
    """What a mechanism does with the ``solver`` of a run (declared, or from the problem's structure).

    ``NONE``: closed-form steps, so an explicit solver or time limit is refused before the
    charge; ``STEP``: a solver computes a post-processing step of the noisy values (an LP
    LMO, a Bregman step); ``ORACLE``: the released answer is the solver's, re-checked by
    dpopt (the discrete MIP oracles); ``ACCELERATOR``: the solver's answer is used when
    dpopt's certificate proves it, else an a-priori fallback answers.
    """

    NONE = "none"
    STEP = "step"
    ORACLE = "oracle"
    ACCELERATOR = "accelerator"


def _check_threads(threads: object) -> None:
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
        raise MechanismError("threads must be a positive integer (or None)")


@dataclass(frozen=True)
class RunOptions:
    """The validated keywords of one :meth:`Mechanism.run` (public settings, never released as data).

    Attributes
    ----------
    solver : str, path, SolverProfile or Backend
        ``"auto"`` or an explicit backend name, TOML profile or Backend.
    time_limit : float, optional
        Seconds per solver call (an opt-in that makes a discrete guarantee conditional).
    seed : int or SeedSequence, optional
        For reproducible noise only; None: OS entropy.
    threads : int, optional
        Solver threads.
    keep_diagnostics : bool
        Keep the solver's (non-private) record in ``release.diagnostics``.
    executor : str, Executor, ExecutorSettings or dask Client, optional
        Where parallel work runs (:func:`dpopt.executors.resolve_executor`).

    Raises
    ------
    MechanismError, PrivacyParameterError, ExecutorError
        On construction, for a bad time limit, thread count, seed or executor name (before
        anything is charged).
    """

    solver: Any = "auto"
    time_limit: float | None = None
    seed: Any = None
    threads: int | None = None
    keep_diagnostics: bool = False
    executor: Any = None

    def __post_init__(self) -> None:
        Mechanism._check_time_limit(self.time_limit)
        _check_threads(self.threads)
        if self.seed is not None:
            make_rng(self.seed)  # refuses a generator, a float, a negative int with its own message
        if isinstance(self.executor, str) and self.executor.strip().lower() not in EXECUTOR_NAMES:
            raise ExecutorError(f"unknown executor {self.executor!r}; known executors: {', '.join(EXECUTOR_NAMES)}")

    @property
    def explicit(self) -> bool:
        """Whether the caller chose a solver or a time limit (refused where no solver is called)."""
        from dpopt.backends.programs import is_explicit

        return is_explicit(self.solver) or self.time_limit is not None


@dataclass(frozen=True, kw_only=True)
class Plan:
    """A calibrated run, made before the charge from declarations only.

    Every family's plan extends it with its calibration (noise laws, steps, a resolved
    solver); these fields are what the pipeline needs to charge and release.

    Attributes
    ----------
    problem : object
        The checked problem :meth:`Mechanism.execute` runs on (it holds the data; the plan
        itself holds no value computed from it).
    parameters : dict
        The public parameters of the release (and of the ledger entry).
    summary : str, optional
        The problem's public summary (the ledger label); None: ``problem.summary()``.
    n : int, optional
        The number of rows (public under replace-one); None: ``problem.n``.
    feature_names : tuple of str, optional
        Names of θ's coordinates; None: ``problem.feature_names``.
    notes : tuple of str
        Public notes known before the run.
    profile : SolverProfile, optional
        The resolved solver profile (its executor keys), or the run's ``solver`` argument.
    needs : SolverNeed, optional
        The solver need found while planning; None: :meth:`Mechanism.solver_need`.
    """

    problem: Any = None
    parameters: dict[str, Any] = field(default_factory=dict)
    summary: str | None = None
    n: int | None = None
    feature_names: tuple[str, ...] | None = None
    notes: tuple[str, ...] = ()
    profile: Any = None
    needs: SolverNeed | None = None

    def described(self) -> tuple[str, int | None, tuple[str, ...]]:
        """(summary, n, feature names), from the fields or else the problem's declarations."""
        summary = self.summary if self.summary is not None else self.problem.summary()
        n = self.n if self.n is not None else getattr(self.problem, "n", None)
        names = self.feature_names if self.feature_names is not None else tuple(
            getattr(self.problem, "feature_names", ()))
        return summary, n, names


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


class Mechanism(ABC):
    """A private algorithm with an (ε, δ) guarantee under replace-one neighbours.

    A mechanism declares ``name``, ``theorem``, ``problem_type``, ``solver_need`` and
    ``_parameter_constraints``, and implements :meth:`plan` (the public checks and the
    calibration, before the charge) and :meth:`execute` (everything that touches the data,
    after it).  :meth:`run` is defined here only: it validates the options, checks the
    problem's type, plans, refuses an unused solver, charges and releases through
    :func:`~dpopt.mechanisms.pipeline.run_private`, so the order holds for every mechanism.

    Parameters
    ----------
    epsilon : float
        ε > 0.
    delta : float
        δ ∈ [0, 1).
    ledger : Ledger, optional
        Where the release is charged (default: :func:`default_ledger`).

    Notes
    -----
    Every class declares its ``__init__`` settings in ``_parameter_constraints``
    (:mod:`dpopt.mechanisms.params`, after scikit-learn), extended by subclasses as
    ``{**Base._parameter_constraints, ...}``; ``__init__`` checks them first, so a wrong
    setting raises :class:`~dpopt.errors.InvalidParameterError` (a
    ``MechanismError``) before anything can be charged.
    """

    name: ClassVar[str] = "mechanism"
    theorem: ClassVar[str] = ""
    #: the problem class ``run`` accepts (checked first, before :meth:`plan`)
    problem_type: ClassVar[Any] = Problem
    #: the refusal of another problem type ({got}: its type's name, {name}: the mechanism's)
    problem_refusal: ClassVar[str] = "run() needs a dpopt Problem, got {got}"
    #: what the mechanism does with ``solver`` (:meth:`solver_need` when it depends on the problem)
    needs: ClassVar[SolverNeed] = SolverNeed.ORACLE
    #: whether its analysis covers a loss of several outputs (``Loss.n_outputs`` > 1: a d×k θ,
    #: the multinomial logistic loss); the others refuse such a problem before the charge
    multi_output: ClassVar[bool] = False
    #: the allowed values of every keyword of ``__init__`` (:func:`dpopt.mechanisms.params.validate_params`)
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "delta": [Interval(Real, 0, 1, closed="left")],
        "ledger": [Instance(Ledger, what="a dpopt Ledger"), None],
    }

    def __init__(self, epsilon: float, delta: float = 0.0, *, ledger: Ledger | None = None) -> None:
        self._validate(arguments(locals()))
        self.epsilon, self.delta = float(epsilon), float(delta)
        self.ledger = ledger if ledger is not None else _DEFAULT_LEDGER

    def _validate(self, values: dict[str, object]) -> None:
        """Check ``__init__`` settings against the class's ``_parameter_constraints`` (nothing charged yet)."""
        validate_params(self.name, type(self)._parameter_constraints, values)

    def solver_need(self, problem: Any) -> SolverNeed:
        """What ``run(problem)`` does with a solver (public: the problem's structure); default ``needs``.

        Front ends (``dpopt solve``) and :meth:`run` refuse an explicit solver or time
        limit when it is :attr:`SolverNeed.NONE`.
        """
        return self.needs

    @final
    def run(self, problem: Any, *, solver: str | Path | SolverProfile | Backend = "auto",
            time_limit: float | None = None, seed: int | None = None,
            threads: int | None = None, keep_diagnostics: bool = False,
            executor: ExecutorSpec = None) -> Release:
        """Run the mechanism once and return a release (the same for every mechanism).

        Parameters
        ----------
        problem : Problem, DiscreteProblem or callable
            The plain (unperturbed) problem, of the class's ``problem_type``.
        solver : str, path, SolverProfile or Backend
            ``"auto"`` (default), a backend name (``dpopt doctor`` lists them), a TOML
            profile or a Backend.  Its role is the class's :class:`SolverNeed`: refused
            (with ``time_limit``) when the run calls no solver.
        time_limit : float, optional
            Seconds per solver call.
        seed : int, optional
            For reproducible noise only; by default noise is seeded from OS entropy.
        threads : int, optional
            Solver threads (ignored when no solver is called).
        keep_diagnostics : bool
            Keep the solver's record (not private) in ``release.diagnostics``.
        executor : str, Executor or dask Client, optional
            Where parallel work runs (``"inprocess"``, ``"processes"``, ``"dask"`` or a
            ``distributed.Client``; :func:`dpopt.executors.resolve_executor`).  None: a solver
            profile's ``executor`` key, else in-process.  Never part of the release.

        Raises
        ------
        MechanismError
            Before the charge, for a setting, problem or solver the mechanism refuses.
        """
        options = RunOptions(solver=solver, time_limit=time_limit, seed=seed, threads=threads,
                             keep_diagnostics=keep_diagnostics, executor=executor)
        self.check_problem(problem)
        plan = self.plan(problem, options)
        need = plan.needs if plan.needs is not None else self.solver_need(problem)
        if options.explicit and need is SolverNeed.NONE:
            raise MechanismError(
                f"{self.name} calls no solver on this problem, so an explicit solver or time_limit "
                "would have no effect; drop it (solver='auto')"
            )
        return self._release(plan, options)

    @final
    def check_problem(self, problem: Any) -> None:
        """Refuse, before :meth:`plan`, a problem of another type or a loss with several outputs
        that the mechanism's analysis does not cover (declarations only).

        Raises
        ------
        MechanismError
            Naming the mechanisms that accept a loss of several outputs.
        """
        if not isinstance(problem, self.problem_type):
            raise MechanismError(self.problem_refusal.format(got=type(problem).__name__, name=self.name))
        loss = getattr(problem, "loss", None)
        outputs = getattr(loss, "n_outputs", 1)
        if outputs > 1 and not self.multi_output:
            able = sorted(name for name, cls in _loaded_mechanisms().items()
                          if cls.multi_output and not name.startswith("_"))
            raise MechanismError(
                f"{self.name} fits one linear output; the {getattr(loss, 'name', 'loss')} loss has {outputs} "
                f"(one per class) and its analysis does not cover them: use {' or '.join(able)}, or fit one "
                "binary model per class (dpopt.sklearn.DPOneVsRestClassifier, k times the budget)")

    def _release(self, plan: Plan, options: RunOptions) -> Release:
        """Charge, :meth:`execute` the plan on the data and build the release (the pipeline)."""
        summary, n, names = plan.described()
        return run_private(self, partial(self.execute, plan), problem=summary, n=n,
                           parameters=dict(plan.parameters), seed=options.seed,
                           keep_diagnostics=options.keep_diagnostics, notes=plan.notes,
                           executor=options.executor, solver=plan.profile, feature_names=names)

    @abstractmethod
    def plan(self, problem: Any, options: RunOptions | None = None) -> Plan:
        """The public checks and the calibration, from declarations only (nothing charged, no data read).

        ``options`` None means the defaults (``RunOptions()``).
        """

    @abstractmethod
    def execute(self, plan: Plan, rng: np.random.Generator) -> Outcome:
        """Everything that touches the data: draw the noise from ``rng``, solve, post-process."""

    def _uncertified(self, reason: str, results: tuple[OracleResult, ...]) -> UncertifiedOracleError:
        """The fail-closed error of the discrete oracles (a crash that persists, or a time limit the
        caller opted into): a message without data-dependent numbers, diagnostics attached (the
        pipeline strips them unless the caller asked for them).  The convex mechanisms never raise
        it: they release through the a-priori fallback or refuse before the charge."""
        return UncertifiedOracleError(
            f"{self.name}: {reason}, so nothing is released (the budget ε={self.epsilon:g}, "
            f"δ={self.delta:g} is spent). Whether this happens can depend on the data: this outcome "
            "is not covered by the privacy guarantee. Run without a time limit (private mode), or "
            "choose another solver; run(..., keep_diagnostics=True) shows the solver's record (not private).",
            diagnostics=Diagnostics(results),
        )

    @staticmethod
    def _check_time_limit(time_limit: float | None) -> None:
        if time_limit is not None and (
            isinstance(time_limit, bool) or not isinstance(time_limit, (int, float)) or not time_limit > 0
        ):
            raise MechanismError("time_limit must be a positive number of seconds")


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
        self._validate(arguments(locals()))
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


def _loaded_mechanisms() -> dict[str, type[Mechanism]]:
    """Every mechanism class of :mod:`dpopt.mechanisms` loaded in this process, by name (importing
    the package loads them all; found by :func:`dpopt.discovery.subclasses` so that this module
    imports none of them)."""
    return {cls.__name__: cls for cls in subclasses(Mechanism, within="dpopt.mechanisms", concrete=False)}


def _alternatives(problem: Problem) -> str:
    """One sentence naming the mechanisms whose ``plan`` accepts ``problem`` (public checks only)."""
    loaded = _loaded_mechanisms()
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
