"""The Bregman (mirror) step of Alg. 1 solved by a backend.

The step ``argmin_{θ∈C} Ψ(θ) − ⟨w, θ⟩`` of a potential without a closed form is
compiled once by :func:`dpopt.compile.bregman_program.compile_bregman_step` and
solved for each step's ``w`` by a cvxpy-based :class:`~dpopt.backends.base.Backend`
(:func:`dpopt.backends.programs.resolve_step_backend` turns ``solver=`` into one);
every solve is one :meth:`~dpopt.backends.base.Backend.solve` returning an
:class:`~dpopt.backends.result.OracleResult`.  This module only turns that result
into a mirror point.

The step sees only public or already-private quantities (the previous iterate
and a noisy gradient), so its accuracy affects utility, never privacy: an
inaccurate or failed solve is not a privacy failure.  :func:`bregman_step` accepts
any point the backend returns, whatever its status, projected back onto C (vertex
polytopes: the solver's point, feasible to its tolerance); when the backend returns
no point (an error or a limit) it returns None and the mechanism keeps the previous
iterate.  Either way nothing is raised and nothing about the failure is released
(the counts are diagnostics).  An iterate outside C by the solver's tolerance cannot
raise the sensitivity either: the mechanism clips per-example gradients to the
declared L (:func:`dpopt.mechanisms.mirror_descent.gradient_oracle`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpopt.backends import programs
from dpopt.backends.base import Backend
from dpopt.backends.result import OracleResult, OracleStatus, SolveOptions
from dpopt.compile.bregman_program import BregmanProgram, compile_bregman_step, constraint_encoding
from dpopt.numerics import potentials as P

__all__ = ["ACCEPTANCE", "BregmanProgram", "StepResult", "bregman_step", "compile_bregman_step",
           "constraint_encoding", "resolve_step_backend"]

#: the public acceptance rule of a compiled mirror step (the release's OracleCall says it)
ACCEPTANCE = ("any point the solver returns, projected onto C (post-processing of noisy gradients); "
              "no point: the previous iterate is kept")


@dataclass(frozen=True)
class StepResult:
    """One compiled mirror step: the point (with its potential's aux data), the status and the oracle's record."""

    point: P.MirrorPoint | None
    status: str
    result: OracleResult | None = None


def bregman_step(program: BregmanProgram, w: np.ndarray, backend: Backend,
                 options: SolveOptions | None = None) -> StepResult:
    """Solve the compiled step for one ``w`` with ``backend``; the point is projected onto C."""
    result = backend.solve(program, np.asarray(w, dtype=np.float64),
                           options or SolveOptions(tolerance=programs.STEP_TOLERANCE))
    if result.solution is None or result.status is OracleStatus.ERROR:  # an error may leave a stale point
        return StepResult(None, result.status.value, result)
    return StepResult(program.point(result.solution), result.status.value, result)


def resolve_step_backend(solver: programs.SolverSpec) -> Backend:
    """The backend of :func:`dpopt.backends.programs.resolve_step_backend` (``"auto"``: clarabel)."""
    return programs.resolve_step_backend(solver)[0]
