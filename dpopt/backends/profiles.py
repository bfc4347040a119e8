"""Solver profiles: a backend name plus options, from a name or a TOML file.

A profile file (see ``solvers/``) looks like::

    backend = "clarabel"
    tolerance = 1e-10      # optional
    time_limit = 60        # optional, seconds
    threads = 2            # optional
    verify = false         # optional: no independent cross-check of discrete oracle answers
    executor = "dask"      # optional: where parallel work runs ("inprocess", "processes", "dask")
    scheduler = "tcp://10.0.0.5:8786"   # optional, with executor = "dask": an existing cluster
    workers = 2            # optional: worker count of a pool or LocalCluster dpopt starts
    [options]              # passed to the solver as is
    max_iter = 500

Everything in a profile is checked when it is loaded, before any budget is charged: the
top-level keys and their types, and the ``[options]`` against the solver's own settings
(:func:`dpopt.backends.options.check_solver_options`; unknown names come with close matches).
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from dpopt.backends import registry
from dpopt.backends.base import AnyProblem, Backend
from dpopt.backends.options import check_solver_options, suggest
from dpopt.backends.result import SolveOptions
from dpopt.errors import BackendCapabilityError, ModelError, UnknownSolverError
from dpopt.modeling.discrete import DiscreteProblem

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

_PROFILE_KEYS = {"backend", "tolerance", "time_limit", "threads", "max_iterations", "options", "description",
                 "verify", "executor", "scheduler", "workers"}
#: executor names a profile may give (dpopt.executors.resolve_executor)
EXECUTOR_NAMES = ("inprocess", "processes", "dask")


@dataclass(frozen=True)
class ExecutorSettings:
    """A profile's ``executor``, ``scheduler`` and ``workers`` keys (dpopt.executors)."""

    executor: str = "inprocess"
    scheduler: str | None = None
    workers: int | None = None
    #: True for a default dpopt chose (not the user): if its pool cannot start, the run stays in-process
    fallback: bool = False


@dataclass(frozen=True)
class SolverProfile:
    """A backend and the options to call it with."""

    backend: str
    options: SolveOptions = field(default_factory=SolveOptions)
    source: str = ""
    #: False: the discrete mechanisms skip their cross-verification (dpopt.backends.verify); None: default
    verify: bool | None = None
    #: where the run's parallel work goes (None: the run's ``executor`` argument or in-process)
    executor: ExecutorSettings | None = None


def load_profile(path: str | Path) -> SolverProfile:
    """Read a TOML solver profile and check all of it (module docstring).

    Raises
    ------
    UnknownSolverError
        The file does not exist, or names an unknown backend.
    ModelError
        Invalid TOML, an unknown key, a value of the wrong type, or an ``[options]`` entry
        the solver does not accept (:class:`~dpopt.errors.SolverOptionError`).
    """
    p = Path(path)
    if not p.is_file():
        raise UnknownSolverError(f"solver profile file {str(p)!r} does not exist")
    try:
        data = tomllib.loads(p.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ModelError(f"solver profile {p.name}: invalid TOML ({exc})") from None
    where = f"solver profile {p.name}"
    unknown = sorted(set(data) - _PROFILE_KEYS)
    if unknown:
        raise ModelError(f"{where}: unknown keys {unknown}{suggest(unknown[0], _PROFILE_KEYS)}; "
                         f"allowed: {', '.join(sorted(_PROFILE_KEYS))}")
    if not isinstance(data.get("backend"), str):
        raise ModelError(f"{where}: the key 'backend' is required and must be a backend name (a string)")
    registry.get(data["backend"])  # fails early, listing known names
    name = data["backend"].lower()
    extra = data.get("options", {})
    if not isinstance(extra, dict):
        raise ModelError(f"{where}: 'options' must be a table ([options])")
    opts = SolveOptions(
        time_limit=_positive(data.get("time_limit"), "time_limit", where),
        tolerance=_positive(data.get("tolerance", SolveOptions.tolerance), "tolerance", where) or SolveOptions.tolerance,
        threads=_count(data.get("threads"), "threads", where),
        max_iterations=_count(data.get("max_iterations"), "max_iterations", where),
        extra=dict(extra),
    )
    check_solver_options(name, opts.extra, where=where)
    verify = data.get("verify")
    if verify is not None and not isinstance(verify, bool):
        raise ModelError(f"{where}: verify must be true or false, got {verify!r}")
    return SolverProfile(name, opts, str(p), verify, _executor_settings(data, where))


def _executor_settings(data: dict[str, Any], where: str) -> ExecutorSettings | None:
    """The profile's executor keys, checked (the scheduler is reached only when a run starts)."""
    if not {"executor", "scheduler", "workers"} & set(data):
        return None
    name = data.get("executor", "dask" if "scheduler" in data else "inprocess")
    if name not in EXECUTOR_NAMES:
        raise ModelError(f"{where}: executor must be one of {', '.join(map(repr, EXECUTOR_NAMES))}, got {name!r}"
                         f"{suggest(str(name), EXECUTOR_NAMES)}")
    scheduler = data.get("scheduler")
    if scheduler is not None and (not isinstance(scheduler, str) or not scheduler):
        raise ModelError(f"{where}: scheduler must be an address such as 'tcp://host:8786', got {scheduler!r}")
    if scheduler is not None and name != "dask":
        raise ModelError(f"{where}: scheduler needs executor = \"dask\", got executor = {name!r}")
    return ExecutorSettings(name, scheduler, _count(data.get("workers"), "workers", where))


def profile_executor(solver: object) -> ExecutorSettings | None:
    """The executor settings of ``solver`` when it is a profile (a SolverProfile or a ``.toml`` path)."""
    if isinstance(solver, SolverProfile):
        return solver.executor
    if isinstance(solver, Path) or (isinstance(solver, str) and solver.endswith(".toml")):
        return load_profile(solver).executor
    return None


def _positive(v: Any, name: str, where: str) -> float | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
        raise ModelError(f"{where}: {name} must be a positive number, got {v!r}")
    return float(v)


def _count(v: Any, name: str, where: str) -> int | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise ModelError(f"{where}: {name} must be an integer ≥ 1, got {v!r}")
    return v


def resolve(solver: str | Path | SolverProfile | Backend, problem: AnyProblem | None = None) -> tuple[Backend, SolverProfile]:
    """Turn a solver name, profile path or profile into (backend, profile).

    ``"auto"`` picks the first of :func:`auto_order` that is installed and can solve
    ``problem`` (a choice that depends on the problem's structure only): scipy first on
    ℝ^d, boxes and — for smooth GLM losses without an ℓ1 term — ℓ2 balls (its Newton
    methods); clarabel first on other constraint sets (each backend's declared
    :meth:`~dpopt.backends.base.Backend.auto_rank_for`).  For a
    DiscreteProblem it is :func:`dpopt.backends.auto_discrete.choose_discrete` (schema,
    n and grid only).
    Unknown names fail at once, listing the known ones.
    """
    if isinstance(solver, Backend):
        return solver, SolverProfile(solver.name)
    if isinstance(solver, SolverProfile):
        return registry.get(solver.backend), solver
    if isinstance(solver, Path) or (isinstance(solver, str) and solver.endswith(".toml")):
        prof = load_profile(solver)
        return registry.get(prof.backend), prof
    if not isinstance(solver, str):
        raise UnknownSolverError(f"solver must be a name or a profile path, got {type(solver).__name__}")
    if solver.lower() == "auto":
        return _auto(problem)
    backend = registry.get(solver)
    return backend, SolverProfile(backend.name)


def _auto(problem: AnyProblem | None) -> tuple[Backend, SolverProfile]:
    if isinstance(problem, DiscreteProblem):  # from the schema, n and the grid (auto_discrete)
        from dpopt.backends.auto_discrete import choose_discrete

        name = choose_discrete(problem).backend
        return registry.get(name), SolverProfile(name)
    reasons = []
    for b in auto_order(problem):
        name = b.name
        if not b.available():
            reasons.append(f"{name}: not installed")
            continue
        if problem is not None:
            try:
                b.check(problem)
            except BackendCapabilityError as exc:
                reasons.append(f"{name}: {exc}")
                continue
        return b, SolverProfile(name)
    raise BackendCapabilityError("no installed backend can solve this problem: " + "; ".join(reasons))


def auto_order(problem: AnyProblem | None = None) -> list[Backend]:
    """The convex backends ``solver="auto"`` tries on ``problem``, in order: the registered backends
    of kind ``"convex"`` that declare an ``auto`` rank on it (:meth:`~dpopt.backends.base.Backend.auto_rank_for`;
    structure only), lowest first."""
    return registry.ranked(lambda b: b.auto_rank_for(problem) if b.kind == "convex" else None)


def merge_options(profile: SolverProfile, **overrides: Any) -> SolveOptions:
    """The profile's options with non-None overrides applied."""
    return replace(profile.options, **{k: v for k, v in overrides.items() if v is not None})
