"""What an oracle call returns: :class:`OracleResult`, its status and its limit."""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field, fields, replace
from typing import Any, ClassVar

import numpy as np

from dpopt.backends.certificates import Check, json_value


class OracleStatus(str, enum.Enum):
    """Termination reason of an oracle call."""

    OPTIMAL = "optimal"
    LIMIT = "limit"  # a time, iteration or node limit stopped the solver
    INACCURATE = "inaccurate"  # the solver stopped with reduced accuracy
    INFEASIBLE = "infeasible"
    UNBOUNDED = "unbounded"
    ERROR = "error"


class Limit(str, enum.Enum):
    """Which limit stopped a solver (:attr:`OracleResult.limit`, with status LIMIT).

    The values are the strings JSON output and messages show (``str(Limit.TIME) == "time"``).
    """

    TIME = "time"  # the wall-clock limit the user set
    ITERATIONS = "iterations"  # an iteration limit (the solver's own, or a backend's work cap)
    NODES = "nodes"  # a branch-and-bound node limit (``max_iterations`` of a MIP backend)
    OBJECTIVE = "objective"  # an objective limit (cutoff) set by a profile's raw options
    PRECISION = "precision"  # converged to floating-point precision short of the tolerance (scipy)

    def __str__(self) -> str:
        return str(self.value)


@dataclass(frozen=True)
class SolveOptions:
    """Solve parameters passed to every backend.

    Parameters
    ----------
    time_limit : float, optional
        Wall-clock limit in seconds (None: no limit).
    tolerance : float
        Target accuracy (relative gap / KKT residual) the backend aims for.
    threads : int, optional
        Threads the solver may use.
    seed : int
        Solver's own random seed (a fixed constant: solver randomness never depends on data).
    max_iterations : int, optional
        Deterministic work limit where the backend has one.
    distance_tolerance : float, optional
        The distance to the exact optimum the caller must be able to prove (set by
        mechanisms); backends that can steer towards it (scipy) use it.
    extra : dict
        Backend-specific options (from a solver profile).
    """

    time_limit: float | None = None
    tolerance: float = 1e-12
    threads: int | None = None
    seed: int = 0
    max_iterations: int | None = None
    distance_tolerance: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class OracleResult:
    """The outcome of one oracle (solver) call.

    Attributes
    ----------
    solution : ndarray or None
        The point returned (None when the solver produced none).
    status : OracleStatus
        Termination reason.
    limit : Limit or None
        Which limit stopped the solver when status is LIMIT (a string such as ``"time"``
        is converted to its :class:`Limit`).
    primal_bound, dual_bound, gap : float
        Objective bounds reported by the solver (nan when unknown).
    solver_certified : bool
        Whether the solver itself claims an optimal solution within tolerance.
    certified : bool
        The verdict used by mechanisms: the solver's claim *and* dpopt's re-check
        (set by the mechanism; equals ``solver_certified`` until then).
    recheck : Check or None
        dpopt's own re-check, typed per problem family (:mod:`dpopt.backends.certificates`:
        a distance bound to the exact optimum, a grid point's exact objective, ...).
    solve_time : float
        Wall-clock seconds inside the solver call.
    backend, backend_version, raw_status : str
        Who answered and what it said.
    residual : float
        The backend's optimality residual where it reports one (nan otherwise).
    message : str
        Human-readable notes.
    """

    solution: np.ndarray | None
    status: OracleStatus
    solver_certified: bool
    solve_time: float
    backend: str
    backend_version: str
    raw_status: str
    limit: Limit | None = None
    primal_bound: float = math.nan
    dual_bound: float = math.nan
    gap: float = math.nan
    residual: float = math.nan
    certified: bool | None = None
    recheck: Check | None = None
    message: str = ""

    def __post_init__(self) -> None:
        if self.certified is None:
            object.__setattr__(self, "certified", bool(self.solver_certified))
        if self.limit is not None and not isinstance(self.limit, Limit):
            object.__setattr__(self, "limit", _limit(self.limit))
        if self.recheck is not None and not isinstance(self.recheck, Check):
            raise TypeError(f"OracleResult.recheck is a dpopt.backends.certificates.Check or None, "
                            f"not {type(self.recheck).__name__}")

    def with_recheck(self, check: Check, accepted: bool) -> OracleResult:
        """A copy carrying a re-check and the final verdict.

        Re-checks compose: the verdict is the current one *and* ``accepted``, so a later
        re-check can never turn an uncertified result back into a certified one.
        """
        return replace(self, recheck=check, certified=bool(self.certified and accepted))

    def summary(self) -> str:
        """One line: backend, status, limit, bounds, gap, verdict, time."""
        parts = [f"{self.backend} {self.backend_version}", f"status={self.status.value}"]
        if self.limit is not None:
            parts.append(f"limit={self.limit.value}")
        for name in ("primal_bound", "dual_bound", "gap", "residual"):
            v = getattr(self, name)
            if not math.isnan(v):
                parts.append(f"{name}={v:.3g}")
        if self.recheck is not None:
            parts += self.recheck.summary_parts()
        parts.append("certified" if self.certified else "NOT certified")
        parts.append(f"{self.solve_time:.3f}s")
        return ", ".join(parts)

    #: fields that are functions of the data beyond the released point (objective
    #: values, residuals, times).  A whole OracleResult is a diagnostic for the data
    #: curator (even its status and verdict can depend on the data): releases carry
    #: :class:`~dpopt.mechanisms.release.OracleCall` records instead
    DATA_DEPENDENT: ClassVar[tuple[str, ...]] = (
        "primal_bound", "dual_bound", "gap", "residual", "solve_time", "raw_status", "message",
    )

    def to_dict(self, *, include_solution: bool = False) -> dict[str, Any]:
        """JSON-ready dictionary (the raw solution only on request; the re-check as its ``to_dict()``)."""
        d = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "solution"}
        d["status"] = self.status.value
        d["limit"] = None if self.limit is None else self.limit.value
        d["recheck"] = None if self.recheck is None else self.recheck.to_dict()
        if include_solution and self.solution is not None:
            d["solution"] = json_value(self.solution)  # nan/inf entries as None
        return {k: json_value(v) for k, v in d.items()}  # numpy scalars to Python, nan/inf to None


def _limit(value: object) -> Limit:
    """The :class:`Limit` named ``value`` (ValueError listing the known ones)."""
    try:
        return Limit(value)
    except ValueError:
        known = ", ".join(repr(m.value) for m in Limit)
        raise ValueError(f"unknown solver limit {value!r}; OracleResult.limit takes a Limit ({known})") from None
