"""The backend (oracle) interface every solver adapter implements."""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
from abc import ABC, abstractmethod
from typing import Any, ClassVar, Generic, TypeVar

import numpy as np

from dpopt.backends.result import OracleResult, SolveOptions
from dpopt.errors import BackendCapabilityError, BackendUnavailableError
from dpopt.modeling.discrete import DiscreteProblem
from dpopt.modeling.problem import Problem

#: what backends accept: a convex Problem or a DiscreteProblem (by kind)
AnyProblem = Problem | DiscreteProblem

#: what a backend's :meth:`Backend.prepare` compiles a problem into (one type per backend)
PreparedT = TypeVar("PreparedT")


class Backend(ABC, Generic[PreparedT]):
    """A solver adapter: prepares a compiled problem once, then solves it for
    fresh linear perturbations ``b`` without rebuilding it.

    Generic in its prepared type: a concrete backend names what :meth:`prepare` returns
    and :meth:`solve` takes (``class HighsGroupedBackend(Backend[GroupedPrepared])``);
    code that holds any backend uses ``Backend[Any]``.

    Backends know nothing about privacy: they solve and report honestly.
    """

    #: registry name
    name: ClassVar[str] = ""
    #: importable module that must be present
    module: ClassVar[str] = ""
    #: distribution whose version is reported
    distribution: ClassVar[str] = ""
    #: one line for ``dpopt doctor``
    description: ClassVar[str] = ""
    #: "convex", "mip" or "lp"
    kind: ClassVar[str] = "convex"

    # ---- capabilities, declared per class; the tables of dpopt.backends.registry.ranked derive from them
    #: ``solver="auto"``'s preference among the backends of its ``kind``, lower first; None: never
    #: chosen by ``auto`` (:meth:`auto_rank_for` may refine it by the problem's structure)
    auto_rank: ClassVar[int | None] = None
    #: preference as the independent verifier of a big-M MIP backend's answers, lower first; None:
    #: never a verifier (:func:`dpopt.backends.verify.choose_verifier`)
    verifier_rank: ClassVar[int | None] = None
    #: how a MIP backend models a discrete problem: ``"big-m"`` (per-row big-M, cross-checked by
    #: another engine), ``"grouped"`` (the grouped decomposition, cross-checked by its SCIP twin)
    #: or ``"enumeration"`` (every grid point: exact, no verifier)
    formulation: ClassVar[str] = "big-m"
    #: solves the conic mirror steps dpopt compiles (:mod:`dpopt.backends.programs`)
    solves_steps: ClassVar[bool] = False
    #: solves the linear programs dpopt compiles (an HPolytope's linear minimization)
    solves_lp: ClassVar[bool] = False
    #: backend names that mean this backend for a compiled linear program, when they carry no
    #: ``[options]`` (``scipy-lp``: ``highs`` and ``scipy``, earlier spellings of it)
    lp_aliases: ClassVar[tuple[str, ...]] = ()

    def prepare_lmo(self, A: np.ndarray, b: np.ndarray) -> Any:
        """Compile the linear minimization ``min ⟨c, s⟩ s.t. A s ≤ b`` (an HPolytope's LMO, public
        data only) into what :meth:`solve` takes, for a backend that declares :attr:`solves_lp`.

        Raises
        ------
        BackendCapabilityError
            For a backend that does not solve the linear programs dpopt compiles (the default).
        """
        raise BackendCapabilityError(f"backend {self.name!r} cannot solve an HPolytope's linear minimization")

    def auto_rank_for(self, problem: AnyProblem | None) -> int | None:
        """The ``auto`` rank on ``problem`` (its declarations only); default :attr:`auto_rank`."""
        return self.auto_rank

    def check_options(self, options: dict[str, Any], where: str) -> None:
        """Refuse a solver profile's ``[options]`` that this backend does not accept, before anything
        is charged (:mod:`dpopt.backends.options`); ``where`` names the source in the message.

        The default checks nothing: dpopt knows nothing of a plug-in's settings.

        Raises
        ------
        SolverOptionError
            An unknown name (with close matches) or a value the solver refuses.
        """

    def required_modules(self) -> tuple[str, ...]:
        """The modules that must import for the backend to be usable."""
        return (self.module,)

    def version(self) -> str | None:
        """Installed version of the solver package, or None if it (or a required module) is missing.

        Cached per distribution and modules for the life of the process (installed packages do not
        change under a running process; reading package metadata costs more than many small solves).
        """
        return _installed_version(self.distribution or self.module, tuple(self.required_modules()))

    def available(self) -> bool:
        """Whether the solver package imports."""
        return self.version() is not None

    def require(self) -> str:
        """The version, or BackendUnavailableError naming the package to install."""
        v = self.version()
        if v is None:
            raise BackendUnavailableError(
                f"backend {self.name!r} needs the Python package {self.distribution or self.module!r}, "
                f"which is not installed or fails to import; install it (pip install "
                f"{self.distribution or self.module}) or choose another solver (dpopt doctor lists them)"
            )
        return v

    @abstractmethod
    def check(self, problem: AnyProblem) -> None:
        """Raise BackendCapabilityError if this backend cannot solve ``problem``."""

    @abstractmethod
    def prepare(self, problem: AnyProblem) -> PreparedT:
        """Compile ``problem`` once (its perturbation's ``b`` becomes a parameter)."""

    @abstractmethod
    def solve(self, prepared: PreparedT, b: np.ndarray | None, options: SolveOptions) -> OracleResult:
        """Solve the prepared problem with linear term ``b`` (None: keep the current one)."""

    def prepare_for(self, problem: AnyProblem, options: SolveOptions) -> PreparedT:
        """Compile ``problem`` for a solve with ``options`` (default: :meth:`prepare`).

        A backend whose compilation reads a profile option (``highs-grouped``'s
        ``enumerate``) overrides this; everyone else inherits it.
        """
        return self.prepare(problem)

    def solve_problem(self, problem: AnyProblem, options: SolveOptions | None = None) -> OracleResult:
        """Check, prepare and solve once with the problem's own perturbation.

        The one convenience path of every backend: :meth:`require`, :meth:`check`,
        :meth:`prepare_for`, then :meth:`solve` with :func:`perturbation_of` the problem
        (η of a DiscreteProblem, ``b`` of a convex Problem's perturbation).
        """
        options = options or SolveOptions()
        self.require()
        self.check(problem)
        prepared = self.prepare_for(problem, options)
        return self.solve(prepared, perturbation_of(problem), options)


def perturbation_of(problem: AnyProblem) -> np.ndarray | None:
    """The noise vector a backend's :meth:`Backend.solve` takes for ``problem``.

    η for a :class:`DiscreteProblem` (None: unperturbed), the linear term ``b`` of a convex
    Problem's perturbation (None without one).
    """
    if isinstance(problem, DiscreteProblem):
        return problem.eta
    return None if problem.perturbation is None else problem.perturbation.b


@functools.cache
def _installed_version(distribution: str, modules: tuple[str, ...]) -> str | None:
    """The version of ``distribution`` once ``modules`` import; None when one does not."""
    try:
        for module in modules:
            importlib.import_module(module)
    except Exception:  # noqa: BLE001 — any import failure means unusable
        return None
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"
