"""The mechanism core: :class:`Mechanism` with its one final :meth:`~Mechanism.run`, the
:class:`RunOptions` of a run, the calibrated :class:`Plan`, the :class:`SolverNeed` of a
mechanism, and the settings shared by the families (``noise``, ``on_uncertified``, ``steps``).

Every mechanism runs through :func:`dpopt.mechanisms.pipeline.run_private`: public checks
and calibration (declared constants only) → charge → touch the data → release.  The convex
objective/output perturbation path is :mod:`dpopt.mechanisms.convex`; the noise laws are
:mod:`dpopt.privacy.noise_spec`.
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from enum import Enum
from functools import partial
from pathlib import Path
from typing import Any, ClassVar, Literal, TypeVar, cast, final

import numpy as np

from dpopt.backends.base import Backend
from dpopt.backends.profiles import SolverProfile
from dpopt.backends.result import OracleResult
from dpopt.discovery import subclasses
from dpopt.errors import ExecutorError, MechanismError, UncertifiedOracleError
from dpopt.executors import NAMES as EXECUTOR_NAMES
from dpopt.executors import ExecutorSpec
from dpopt.mechanisms.params import (
    Instance,
    Integral,
    Interval,
    Options,
    Real,
    init_arguments,
    validate_params,
)
from dpopt.mechanisms.pipeline import Outcome, run_private
from dpopt.mechanisms.release import Diagnostics, Release
from dpopt.modeling.problem import Problem
from dpopt.privacy.calibration import Budget
from dpopt.privacy.ledger import DefaultLedger, Ledger
from dpopt.privacy.noise_spec import NoiseChoice
from dpopt.privacy.rng import make_rng
from dpopt.progress import in_private_run

OnUncertified = Literal["raise", "release-unsafe"]
M = TypeVar("M", bound="Mechanism")
_DEFAULT_LEDGER = DefaultLedger()


def default_ledger() -> Ledger:
    """The process-wide ledger charged when a mechanism is given none.

    Unlimited and in memory; it refuses to be charged in a worker process (a joblib,
    multiprocessing, ``concurrent.futures`` or Dask worker has one of its own), see
    :class:`~dpopt.privacy.ledger.DefaultLedger`: pass a
    :class:`~dpopt.privacy.sqlite_ledger.SQLiteLedger` to charge one budget from several processes.
    """
    return _DEFAULT_LEDGER


#: the ``noise`` setting of the mechanisms that choose between Gaussian and pure-ε noise
#: (``"l2-laplace"``: the pure-ε law, on a grid the discrete Laplace per coordinate;
#: :meth:`~dpopt.privacy.noise_spec.NoiseSpec.for_sensitivity`)
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
    diagnostics : bool
        Spend a small share of ε on noisy counts of what the declarations did to the data
        (:mod:`dpopt.mechanisms.diagnostics`); False: the model gets all of it.

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
    diagnostics: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.diagnostics, bool):
            raise MechanismError(f"diagnostics must be True or False, got {self.diagnostics!r}")
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
    ``{**Base._parameter_constraints, ...}``; the construction checks every ``__init__``
    argument against them once, in :meth:`__new__` (an ``__init__`` does not check again), so
    a wrong setting raises :class:`~dpopt.errors.InvalidParameterError` (a ``MechanismError``)
    before anything can be charged.  ε and δ are then fixed (:attr:`privacy_level`), and the later
    layers (the plan's calibration, the ledger) take them as checked.
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
    #: whether a copy with a smaller ε is the same mechanism at that ε (its calibration is made in
    #: :meth:`plan`), so that ``run`` may take its data diagnostics' share out of ε; False for a
    #: mechanism that calibrates when it is built (its runs take no diagnostics)
    rebudgets: ClassVar[bool] = True
    #: the allowed values of every keyword of ``__init__`` (:func:`dpopt.mechanisms.params.validate_params`)
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "delta": [Interval(Real, 0, 1, closed="left")],
        "ledger": [Instance(Ledger, what="a dpopt Ledger"), None],
    }

    def __new__(cls: type[M], *args: Any, **kwargs: Any) -> M:
        """The one settings check of a construction, before any ``__init__`` runs: every argument
        of the class's ``__init__`` (defaults included) against its merged ``_parameter_constraints``.

        ``copy`` and ``pickle`` rebuild an instance without arguments from a checked state, so
        nothing is checked then; an entry that has checked the settings itself builds through
        :meth:`prevalidated`.
        """
        self = super().__new__(cls)
        if args or kwargs:
            settings = init_arguments(cls, args, kwargs)
            if settings is not None:  # else __init__ raises its own TypeError for the call
                validate_params(cls.name, cls._parameter_constraints, settings)
        return self

    @classmethod
    def prevalidated(cls: type[M], *args: Any, **kwargs: Any) -> M:
        """Build from settings an entry has already checked against ``_parameter_constraints``
        (an estimator's fit, a wrapper built from checked mechanisms): ``__init__`` without the
        settings check of :meth:`__new__`, so one call checks each input once."""
        self = object.__new__(cls)
        self.__init__(*args, **kwargs)  # type: ignore[misc]
        return self

    def __init__(self, epsilon: float, delta: float = 0.0, *, ledger: Ledger | None = None) -> None:
        # checked in __new__ (or by the entry that built it through prevalidated)
        self._privacy_level = Budget(float(epsilon), float(delta))
        self.ledger = ledger if ledger is not None else _DEFAULT_LEDGER

    @property
    def privacy_level(self) -> Budget:
        """(ε, δ), fixed at construction and checked there: the pipeline charges it unchecked."""
        return self._privacy_level

    def with_privacy_level(self: M, level: Budget) -> M:
        """A copy of this mechanism with another privacy level, its other settings unchanged (a share
        of a checked level, as a composition that splits ε builds)."""
        twin = copy.copy(self)
        twin._privacy_level = level
        return twin

    @property
    def epsilon(self) -> float:
        """ε of the guarantee."""
        return self._privacy_level.epsilon

    @property
    def delta(self) -> float:
        """δ of the guarantee."""
        return self._privacy_level.delta

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
            executor: ExecutorSpec = None, diagnostics: bool = True) -> Release:
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
        diagnostics : bool
            True (default): on a problem over an in-memory Dataset, 2 % of ε goes to noisy counts
            of what its declarations did to the table (rows clipped, entries clipped, rounded,
            unseen or missing per column, unmatched or missing labels), stated in the release and
            the ledger row, with one warning when a count is clearly large
            (:mod:`dpopt.mechanisms.diagnostics`); the release's (ε, δ) is the mechanism's.
            False: the model gets the whole budget.

        Raises
        ------
        MechanismError
            Before the charge, for a setting, problem or solver the mechanism refuses.
        """
        options = RunOptions(solver=solver, time_limit=time_limit, seed=seed, threads=threads,
                             keep_diagnostics=keep_diagnostics, executor=executor, diagnostics=diagnostics)
        self.check_problem(problem)
        runner = self._diagnosed(problem, options)
        plan = runner.plan(problem, options)
        need = plan.needs if plan.needs is not None else self.solver_need(problem)
        if options.explicit and need is SolverNeed.NONE:
            raise MechanismError(
                f"{self.name} calls no solver on this problem, so an explicit solver or time_limit "
                "would have no effect; drop it (solver='auto')"
            )
        return runner._release(plan, options)

    def _diagnosed(self, problem: Any, options: RunOptions) -> Mechanism:
        """This mechanism, or it with its data's private diagnostics (``WithDiagnostics.around``,
        found among the loaded mechanisms so that this module imports none of them); a run inside
        another private run takes none (the outer run's data)."""
        wrap = loaded_mechanisms().get("WithDiagnostics") if options.diagnostics and not in_private_run() else None
        return self if wrap is None else cast(Mechanism, cast(Any, wrap).around(self, problem))

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
            able = sorted(name for name, cls in loaded_mechanisms().items()
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


def loaded_mechanisms() -> dict[str, type[Mechanism]]:
    """Every mechanism class of :mod:`dpopt.mechanisms` loaded in this process, by name (importing
    the package loads them all; found by :func:`dpopt.discovery.subclasses` so that this module
    imports none of them)."""
    return {cls.__name__: cls for cls in subclasses(Mechanism, within="dpopt.mechanisms", concrete=False)}
