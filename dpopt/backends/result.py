"""What an oracle call returns: :class:`OracleResult` and its status enum."""

from __future__ import annotations

import enum
import math
from dataclasses import asdict, dataclass, field, replace
from typing import Any, ClassVar

import numpy as np


class OracleStatus(str, enum.Enum):
    """Termination reason of an oracle call."""

    OPTIMAL = "optimal"
    LIMIT = "limit"  # a time, iteration or node limit stopped the solver
    INACCURATE = "inaccurate"  # the solver stopped with reduced accuracy
    INFEASIBLE = "infeasible"
    UNBOUNDED = "unbounded"
    ERROR = "error"


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
    limit : str or None
        Which limit stopped the solver ("time", "iterations", "nodes") when status is LIMIT.
    primal_bound, dual_bound, gap : float
        Objective bounds reported by the solver (nan when unknown).
    solver_certified : bool
        Whether the solver itself claims an optimal solution within tolerance.
    certified : bool
        The verdict used by mechanisms: the solver's claim *and* dpopt's re-check
        (set by the mechanism; equals ``solver_certified`` until then).
    recheck : dict or None
        dpopt's own certificate (distance bound to the exact optimum, ...).
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
    limit: str | None = None
    primal_bound: float = math.nan
    dual_bound: float = math.nan
    gap: float = math.nan
    residual: float = math.nan
    certified: bool | None = None
    recheck: dict[str, Any] | None = None
    message: str = ""

    def __post_init__(self) -> None:
        if self.certified is None:
            object.__setattr__(self, "certified", bool(self.solver_certified))

    def with_recheck(self, recheck: dict[str, Any], accepted: bool) -> OracleResult:
        """A copy carrying a re-check and the final verdict.

        Re-checks compose: the verdict is the current one *and* ``accepted``, so a later
        re-check can never turn an uncertified result back into a certified one.
        """
        return replace(self, recheck=recheck, certified=bool(self.certified and accepted))

    def summary(self) -> str:
        """One line: backend, status, limit, bounds, gap, verdict, time."""
        parts = [f"{self.backend} {self.backend_version}", f"status={self.status.value}"]
        if self.limit:
            parts.append(f"limit={self.limit}")
        for name in ("primal_bound", "dual_bound", "gap", "residual"):
            v = getattr(self, name)
            if not math.isnan(v):
                parts.append(f"{name}={v:.3g}")
        if self.recheck and "distance_bound" in self.recheck:
            parts.append(f"distance_bound={self.recheck['distance_bound']:.3g}")
            if "tolerance" in self.recheck:
                parts.append(f"tolerance={self.recheck['tolerance']:.3g}")
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
        """JSON-ready dictionary (the raw solution only on request)."""
        d = asdict(self)
        d["status"] = self.status.value
        d.pop("solution")
        if include_solution and self.solution is not None:
            d["solution"] = self.solution.tolist()
        for k, v in list(d.items()):
            if isinstance(v, float) and not math.isfinite(v):
                d[k] = None
        return d
