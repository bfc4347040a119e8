"""A reusable conformance suite every backend must pass.

Each case builds a small canonical problem, solves it through the backend and
checks the answer against a backend-independent truth: a closed form where one
exists, otherwise dpopt's own gradient-mapping certificate (a proven distance to
the exact optimum).  The discrete cases (``discrete-*``: OPDisc's normalized, OPSamp's
linear and RSPM's separator-table perturbations of a small 0/1-loss problem over an
IntegerGrid) are checked against exhaustive enumeration
(:func:`~dpopt.modeling.discrete.brute_force`): the answer must be certified and be the
unique argmin.  Status reporting is checked too: an infeasible program must come back
INFEASIBLE and uncertified, a solve cut by a time limit must not claim certification
(``time-limit`` for convex backends, ``discrete-time-limit`` for MIP backends).  A backend
that cannot solve a case's kind of problem refuses it clearly (the case is skipped, saying
why).  Third-party backends can run it with::

    from dpopt.backends.conformance import run_suite
    failures = run_suite("mybackend")
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpopt.backends import registry
from dpopt.backends.base import AnyProblem, Backend
from dpopt.backends.result import Limit, OracleResult, OracleStatus, SolveOptions
from dpopt.errors import BackendCapabilityError
from dpopt.modeling import losses as L
from dpopt.modeling.balls import L1Ball, L2Ball, LinfBall
from dpopt.modeling.boxes import Simplex
from dpopt.modeling.dataset import Dataset
from dpopt.modeling.discrete import DiscreteProblem, PerturbationKind, brute_force
from dpopt.modeling.domains import IntegerGrid
from dpopt.modeling.perturbation import Perturbation
from dpopt.modeling.problem import Problem
from dpopt.modeling.regularizers import L1Norm, L2Squared
from dpopt.modeling.schema import Numeric, Schema
from dpopt.modeling.variable import Variable
from dpopt.modeling.zero_one import ZeroOneLoss
from dpopt.numerics.certificates import certify

#: distance to the exact optimum a conforming backend must reach on the canonical cases
DISTANCE_TOLERANCE = 1e-4


@dataclass(frozen=True)
class Outcome:
    """What a conformance case found: passed, skipped (with why) or failed (with why)."""

    case: str
    backend: str
    verdict: str  # "passed" | "skipped" | "failed"
    detail: str = ""


def _data(n: int, d: int, *, binary: bool, seed: int) -> Dataset:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    w = rng.normal(size=d)
    z = X @ w + 0.3 * rng.normal(size=n)
    y = np.where(z >= 0, 1.0, -1.0) if binary else np.clip(z, -1.0, 1.0)
    return Dataset(X, y, x_bound=1.0, x_norm=2, y_bound=1.0)


def _perturbed(problem: Problem, seed: int) -> Problem:
    b = np.random.default_rng(seed).normal(scale=0.05, size=problem.dim)
    return problem.with_perturbation(Perturbation(problem.dim, b=b, zeta=0.01))


def ridge() -> tuple[Problem, np.ndarray]:
    """Unconstrained ridge regression with its closed-form solution."""
    data = _data(200, 5, binary=False, seed=1)
    th = Variable(5)
    lam = 0.1
    p = Problem(L.SquaredLoss(data, th), regularizer=L2Squared(th, lam))
    X, y, n = data.X, data.y, data.n
    exact = np.linalg.solve(2 * X.T @ X / n + lam * np.eye(5), 2 * X.T @ y / n)
    return p, exact


def _canonical() -> dict[str, Callable[[], Problem]]:
    def logistic_l2ball() -> Problem:
        data = _data(300, 6, binary=True, seed=2)
        th = Variable(6)
        return _perturbed(Problem(L.LogisticLoss(data, th), constraint=L2Ball(th, 1.0),
                                  regularizer=L2Squared(th, 1e-3)), 3)

    def squared_l1ball() -> Problem:
        data = _data(200, 8, binary=False, seed=4)
        th = Variable(8)
        return _perturbed(Problem(L.SquaredLoss(data, th), constraint=L1Ball(th, 0.5)), 5)

    def huber_box() -> Problem:
        data = _data(200, 4, binary=False, seed=6)
        th = Variable(4)
        return _perturbed(Problem(L.HuberLoss(data, th, h=0.2), constraint=LinfBall(th, 0.3)), 7)

    def smoothed_hinge_simplex() -> Problem:
        data = _data(150, 5, binary=True, seed=8)
        th = Variable(5)
        return _perturbed(Problem(L.SmoothedHingeLoss(data, th), constraint=Simplex(th, 1.0)), 9)

    def logistic_l1_regularized() -> Problem:
        data = _data(250, 6, binary=True, seed=10)
        th = Variable(6)
        return _perturbed(Problem(L.LogisticLoss(data, th), regularizer=(L2Squared(th, 1e-2), L1Norm(th, 0.02))), 11)

    return {
        "logistic-l2ball": logistic_l2ball,
        "squared-l1ball": squared_l1ball,
        "huber-box": huber_box,
        "smoothed-hinge-simplex": smoothed_hinge_simplex,
        "logistic-l1-regularized": logistic_l1_regularized,
    }


def _solve(backend: Backend[Any], problem: AnyProblem, options: SolveOptions) -> Outcome | OracleResult:
    try:
        backend.check(problem)
    except BackendCapabilityError as exc:
        return Outcome("", backend.name, "skipped", f"refused clearly: {exc}")
    return backend.solve_problem(problem, options)


#: the discrete cases: name → the perturbation kind of its oracle problem
DISCRETE_CASES: dict[str, PerturbationKind] = {
    "discrete-opdisc": "normalized", "discrete-opsamp": "linear", "discrete-rspm": "levels",
}


def discrete_problem(n: int, d: int, grid: IntegerGrid, *, seed: int,
                     kind: PerturbationKind = "normalized") -> DiscreteProblem:
    """A 0/1-loss problem over ``grid`` on features declared as multiples of 1/4 in [−1, 1],
    with weights 1 to 3 and a noise draw of ``kind``."""
    rng = np.random.default_rng(seed)
    X = rng.integers(-4, 5, size=(n, d)) / 4.0
    y = np.where(X @ rng.normal(size=d) + rng.normal(0.0, 0.5, n) > 0, 1.0, -1.0)
    data = Dataset(X, y, schema=Schema.uniform(d, Numeric(-1, 1, grid="1/4")))
    weights = rng.integers(1, 4, size=n).astype(float)
    problem = DiscreteProblem(ZeroOneLoss(data, Variable(d), grid, weights=weights, weight_bound=3.0)).with_kind(kind)
    return problem.with_eta(rng.normal(0.0, 2.0, problem.noise_size))


def case_names() -> list[str]:
    """Names of every conformance case."""
    return ["ridge-closed-form", *_canonical(), "infeasible", "time-limit", *DISCRETE_CASES, "discrete-time-limit"]


def run_case(backend_name: str, case: str) -> Outcome:
    """Run one conformance case against one backend."""
    backend = registry.get(backend_name)
    if not backend.available():
        return Outcome(case, backend_name, "skipped", "solver package not installed")
    opts = SolveOptions(distance_tolerance=DISTANCE_TOLERANCE / 10)
    if case == "ridge-closed-form":
        problem, exact = ridge()
        r = _solve(backend, problem, opts)
        if isinstance(r, Outcome):
            return Outcome(case, backend_name, r.verdict, r.detail)
        err = float(np.linalg.norm(r.solution - exact)) if r.solution is not None else np.inf
        ok = r.certified and err <= DISTANCE_TOLERANCE
        return Outcome(case, backend_name, "passed" if ok else "failed", f"{r.summary()}; error={err:.2e}")
    if case == "infeasible":
        return _infeasible(backend)
    if case == "time-limit":
        return _time_limit(backend)
    if case in DISCRETE_CASES:
        return _discrete(backend, case)
    if case == "discrete-time-limit":
        return _discrete_time_limit(backend)
    problem = _canonical()[case]()
    r = _solve(backend, problem, opts)
    if isinstance(r, Outcome):
        return Outcome(case, backend_name, r.verdict, r.detail)
    if r.solution is None:
        return Outcome(case, backend_name, "failed", f"no solution: {r.summary()}")
    cert = certify(problem, r.solution)
    ok = r.certified and r.status is OracleStatus.OPTIMAL and cert.distance_bound <= DISTANCE_TOLERANCE
    return Outcome(case, backend_name, "passed" if ok else "failed",
                   f"{r.summary()}; proven distance {cert.distance_bound:.2e}")


def _infeasible(backend: Backend[Any]) -> Outcome:
    from dpopt.backends.cvxpy_backend import CvxpyBackend

    if not isinstance(backend, CvxpyBackend):
        return Outcome("infeasible", backend.name, "skipped",
                       "this backend's domains (ℝ^d, balls, boxes, simplex) are never empty")
    import cvxpy as cp

    from dpopt.compile.cvxpy_program import CvxpyProgram

    th = cp.Variable(3)
    prob = cp.Problem(cp.Minimize(cp.sum_squares(th)), [th >= 1, cp.sum(th) <= -1])
    r = backend.solve(CvxpyProgram(prob, th, None), None, SolveOptions())
    ok = r.status is OracleStatus.INFEASIBLE and not r.certified
    return Outcome("infeasible", backend.name, "passed" if ok else "failed", r.summary())


def _time_limit(backend: Backend[Any]) -> Outcome:
    data = _data(4000, 60, binary=False, seed=12)
    th = Variable(60)
    problem = _perturbed(Problem(L.SquaredLoss(data, th), constraint=L1Ball(th, 1.0),
                                 regularizer=L2Squared(th, 1e-6)), 13)
    try:
        backend.check(problem)
    except BackendCapabilityError as exc:
        return Outcome("time-limit", backend.name, "skipped", f"refused clearly: {exc}")
    prepared = backend.prepare(problem)
    r = backend.solve(prepared, problem.perturbation.b if problem.perturbation else None,
                      SolveOptions(time_limit=1e-4, tolerance=1e-14, distance_tolerance=1e-14))
    ok = not r.certified and r.status is not OracleStatus.OPTIMAL
    return Outcome("time-limit", backend.name, "passed" if ok else "failed", r.summary())


def _discrete(backend: Backend[Any], case: str) -> Outcome:
    """A small discrete problem of the case's kind against exhaustive enumeration."""
    problem = discrete_problem(24, 3, IntegerGrid(0.5, -1.0, 1.0, l2_bound=1.2), seed=14,
                               kind=DISCRETE_CASES[case])
    r = _solve(backend, problem, SolveOptions(threads=1))
    if isinstance(r, Outcome):
        return Outcome(case, backend.name, r.verdict, r.detail)
    w_bf, v_bf = brute_force(problem)
    if r.solution is None:
        return Outcome(case, backend.name, "failed", f"no solution: {r.summary()}")
    exact = bool(np.array_equal(r.solution, w_bf)) and abs(problem.objective(r.solution) - v_bf) <= 1e-9
    ok = r.certified and r.status is OracleStatus.OPTIMAL and exact
    return Outcome(case, backend.name, "passed" if ok else "failed",
                   f"{r.summary()}; {'the' if exact else 'NOT the'} enumerated argmin")


def _discrete_time_limit(backend: Backend[Any]) -> Outcome:
    """A discrete problem far too large for the time limit: the answer must not be certified."""
    problem = discrete_problem(1500, 10, IntegerGrid(1.0, -4.0, 4.0), seed=15)
    try:
        backend.check(problem)
        prepared = backend.prepare_for(problem, SolveOptions())
    except BackendCapabilityError as exc:
        return Outcome("discrete-time-limit", backend.name, "skipped", f"refused clearly: {exc}")
    r = backend.solve(prepared, problem.eta, SolveOptions(time_limit=0.05, threads=1))
    ok = not r.certified and r.status is not OracleStatus.OPTIMAL
    if r.status is OracleStatus.LIMIT:
        ok = ok and r.limit is Limit.TIME
    return Outcome("discrete-time-limit", backend.name, "passed" if ok else "failed", r.summary())


def run_suite(backend_name: str) -> list[Outcome]:
    """Every case against ``backend_name``; returns all outcomes."""
    return [run_case(backend_name, c) for c in case_names()]
