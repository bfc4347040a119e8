"""The backend (oracle) interface every solver adapter implements."""

from __future__ import annotations

import importlib
import importlib.metadata
from abc import ABC, abstractmethod
from typing import Any, ClassVar

import numpy as np

from dpopt.backends.result import OracleResult, SolveOptions
from dpopt.errors import BackendUnavailableError
from dpopt.modeling.discrete import DiscreteProblem
from dpopt.modeling.problem import Problem

#: what backends accept: a convex Problem or a DiscreteProblem (by kind)
AnyProblem = Problem | DiscreteProblem


class Backend(ABC):
    """A solver adapter: prepares a compiled problem once, then solves it for
    fresh linear perturbations ``b`` without rebuilding it.

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
    #: "convex" or "mip"
    kind: ClassVar[str] = "convex"

    def version(self) -> str | None:
        """Installed version of the solver package, or None if it is missing."""
        try:
            importlib.import_module(self.module)
        except Exception:  # noqa: BLE001 — any import failure means unusable
            return None
        try:
            return importlib.metadata.version(self.distribution or self.module)
        except importlib.metadata.PackageNotFoundError:
            return "unknown"

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
    def prepare(self, problem: AnyProblem) -> Any:
        """Compile ``problem`` once (its perturbation's ``b`` becomes a parameter)."""

    @abstractmethod
    def solve(self, prepared: Any, b: np.ndarray | None, options: SolveOptions) -> OracleResult:
        """Solve the prepared problem with linear term ``b`` (None: keep the current one)."""

    def solve_problem(self, problem: AnyProblem, options: SolveOptions | None = None) -> OracleResult:
        """Convenience: check, prepare and solve once."""
        self.require()
        self.check(problem)
        prepared = self.prepare(problem)
        if isinstance(problem, DiscreteProblem):
            b = problem.eta
        else:
            b = None if problem.perturbation is None else problem.perturbation.b
        return self.solve(prepared, b, options or SolveOptions())
