"""A scipy/numpy backend for smooth (strongly) convex problems.

On ℝ^d a damped Newton method (the GLM Hessian Xᵀ diag(φ'') X costs O(n d²),
so it is used for d ≤ 2000) converges quadratically; L-BFGS-B (scipy) does the
bulk of the work on boxes and — through the exact split θ = u − v, u, v ≥ 0 —
with an ℓ1 regularizer, and is the fallback if Newton stalls; an accelerated
proximal-gradient method (FISTA with adaptive restart) handles ℓ1/ℓ2 balls and
the simplex, and polishes every answer.  The backend certifies its own result
through the norm of the gradient mapping ‖G‖ ≤ tolerance (a KKT residual: G = 0
exactly at the optimum).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy
from scipy.optimize import minimize

from dpopt.backends.base import AnyProblem, Backend
from dpopt.backends.registry import register
from dpopt.backends.result import OracleResult, OracleStatus, SolveOptions
from dpopt.compile.aggregate import aggregate_rows
from dpopt.errors import BackendCapabilityError
from dpopt.modeling.perturbation import Perturbation
from dpopt.modeling.problem import Problem
from dpopt.modeling.prox import composite_prox, prox_supported
from dpopt.modeling.regularizers import L1Norm, L2Squared
from dpopt.modeling.sets import LinfBall


@dataclass
class _Smooth:
    """Aggregated evaluation of the smooth part: average loss + ℓ2² + perturbation."""

    problem: Problem
    X: np.ndarray
    y: np.ndarray
    w: np.ndarray  # counts / n
    b: np.ndarray
    l2: float
    zeta: float
    theta0: np.ndarray

    @classmethod
    def build(cls, problem: Problem) -> _Smooth:
        X, y, c = aggregate_rows(problem.loss.data.X, problem.loss.data.y)
        p = problem.perturbation or Perturbation(problem.dim)
        assert p.b is not None and p.theta0 is not None
        return cls(problem, X, y, c / problem.n, np.array(p.b), problem.l2_weight, p.zeta, np.array(p.theta0))

    def value_grad(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        loss = self.problem.loss
        z = self.X @ theta
        v = float(self.w @ loss.phi(z, self.y))
        g = self.X.T @ (self.w * loss.dphi(z, self.y))
        d = theta - self.theta0
        v += 0.5 * self.l2 * float(theta @ theta) + float(self.b @ theta) + 0.5 * self.zeta * float(d @ d)
        g = g + self.l2 * theta + self.b + self.zeta * d
        return v, g


    def hessian(self, theta: np.ndarray) -> np.ndarray | None:
        """Hessian of the smooth part (GLM: Xᵀ diag(w φ'') X + (λ + ζ)I), or None."""
        h = self.problem.loss.d2phi(self.X @ theta, self.y)
        if h is None:
            return None
        H = (self.X * (self.w * h)[:, None]).T @ self.X
        H[np.diag_indices_from(H)] += self.l2 + self.zeta
        return H


class ScipyBackend(Backend):
    """L-BFGS-B + FISTA polishing, certified by the gradient-mapping norm."""

    name = "scipy"
    module = "scipy"
    distribution = "scipy"
    description = "scipy/numpy damped Newton, L-BFGS-B and accelerated proximal gradient: smooth losses on ℝ^d, boxes, balls, simplex"

    def check(self, problem: AnyProblem) -> None:
        if not isinstance(problem, Problem):
            raise BackendCapabilityError(
                "backend 'scipy' solves convex problems; for a discrete domain use 'highs', 'cpsat' or 'bruteforce'"
            )
        if not math.isfinite(problem.smoothness):
            raise BackendCapabilityError(
                f"backend 'scipy' needs a smooth loss; {problem.loss.name} has no Hessian bound: "
                "use 'clarabel' or a smoothed loss"
            )
        other = [type(r).__name__ for r in problem.regularizers if not isinstance(r, (L2Squared, L1Norm))]
        if other:
            raise BackendCapabilityError(
                f"backend 'scipy' handles L2Squared and L1Norm regularizers only, not {', '.join(other)}: "
                "use 'clarabel'"
            )
        if not prox_supported(problem.constraint, problem.l1_weight):
            raise BackendCapabilityError(
                f"backend 'scipy' cannot combine an L1Norm regularizer with "
                f"{type(problem.constraint).__name__}: use 'clarabel'"
            )

    def prepare(self, problem: AnyProblem) -> Any:
        self.check(problem)
        assert isinstance(problem, Problem)  # check() refused anything else
        return _Smooth.build(problem)

    def solve(self, prepared: Any, b: np.ndarray | None, options: SolveOptions) -> OracleResult:
        f: _Smooth = prepared
        if b is not None:
            f.b = np.asarray(b, dtype=np.float64)
        start = time.perf_counter()
        deadline = math.inf if options.time_limit is None else start + options.time_limit
        max_iter = options.max_iterations or 100_000
        self._deadline = deadline
        tol = self._gradient_tolerance(f.problem, options)
        x = self._initial_point(f, tol, max_iter, options, deadline)
        x, gnorm, iters, limit = self._fista(f, x, tol, max_iter, deadline)
        elapsed = time.perf_counter() - start
        ok = gnorm <= tol
        status = OracleStatus.OPTIMAL if ok else OracleStatus.LIMIT
        value = f.value_grad(x)[0] + f.problem.l1_weight * float(np.abs(x).sum())
        return OracleResult(
            solution=x,
            status=status,
            solver_certified=ok,
            solve_time=elapsed,
            backend=self.name,
            backend_version=scipy.__version__,
            raw_status="converged" if ok else f"stopped: {limit} limit",
            limit=None if ok else limit,
            primal_bound=value,
            residual=gnorm,
            message=f"fista_iterations={iters}",
        )

    _deadline: float = math.inf

    def _stop_at_deadline(self, intermediate_result: object) -> None:
        if time.perf_counter() > self._deadline:
            raise StopIteration

    @staticmethod
    def _gradient_tolerance(problem: Problem, options: SolveOptions) -> float:
        """‖G‖ target: ``tolerance``, tightened so that a strongly convex problem's
        proven distance to the optimum, ‖G‖(1/β + 2/μ), is at most ``distance_tolerance``/2."""
        tol = options.tolerance
        dist = options.distance_tolerance
        mu, beta = problem.strong_convexity, problem.smoothness
        if dist is not None and mu > 0:
            tol = min(tol, 0.5 * float(dist) / (1.0 / beta + 2.0 / mu))
        return max(tol, 1e-15)

    def _initial_point(self, f: _Smooth, tol: float, max_iter: int, options: SolveOptions,
                       deadline: float) -> np.ndarray:
        """Damped Newton on ℝ^d when the Hessian is cheap (d ≤ 2000), else (or if Newton
        stalls) L-BFGS-B followed by Newton; FISTA then finishes and certifies."""
        p = f.problem
        newton = p.constraint is None and p.l1_weight == 0.0 and p.dim <= 2000
        if newton:
            x = self._newton(f, np.zeros(p.dim), tol, deadline)
            if float(np.linalg.norm(f.value_grad(x)[1])) <= tol:
                return x
        x = self._lbfgs(f, max_iter, max(options.tolerance, 1e-9))
        return self._newton(f, x, tol, deadline) if newton else x

    # -- stage 1: L-BFGS-B where the feasible set is a box ------------------------
    def _lbfgs(self, f: _Smooth, max_iter: int, tol: float) -> np.ndarray:
        p = f.problem
        c = p.constraint
        d = p.dim
        if c is not None and not isinstance(c, LinfBall):
            # unconstrained warm start; FISTA projects it and finishes on C
            return self._lbfgs_free(f, max_iter, tol)
        r = None if c is None else c.radius("inf")
        opts: dict[str, Any] = {"maxiter": min(max_iter, 15_000), "gtol": tol, "ftol": 0.0, "maxcor": 20}
        lam1 = p.l1_weight
        if lam1 == 0.0:
            res = minimize(f.value_grad, np.zeros(d), jac=True, method="L-BFGS-B", callback=self._stop_at_deadline,
                           bounds=None if r is None else [(-r, r)] * d, options=opts)
            return np.asarray(res.x)

        def split(uv: np.ndarray) -> tuple[float, np.ndarray]:
            v, g = f.value_grad(uv[:d] - uv[d:])
            return v + lam1 * float(uv.sum()), np.concatenate([g + lam1, -g + lam1])

        res = minimize(split, np.zeros(2 * d), jac=True, method="L-BFGS-B", callback=self._stop_at_deadline,
                       bounds=[(0.0, r)] * (2 * d), options=opts)
        return np.asarray(res.x[:d] - res.x[d:])

    def _lbfgs_free(self, f: _Smooth, max_iter: int, tol: float) -> np.ndarray:
        lam1 = f.problem.l1_weight
        d = f.problem.dim
        opts: dict[str, Any] = {"maxiter": min(max_iter, 15_000), "gtol": tol, "ftol": 0.0, "maxcor": 20}

        def split(uv: np.ndarray) -> tuple[float, np.ndarray]:
            v, g = f.value_grad(uv[:d] - uv[d:])
            return v + lam1 * float(uv.sum()), np.concatenate([g + lam1, -g + lam1])

        if lam1 == 0.0:
            return np.asarray(minimize(f.value_grad, np.zeros(d), jac=True, method="L-BFGS-B", callback=self._stop_at_deadline, options=opts).x)
        res = minimize(split, np.zeros(2 * d), jac=True, method="L-BFGS-B", callback=self._stop_at_deadline, bounds=[(0.0, None)] * (2 * d), options=opts)
        return np.asarray(res.x[:d] - res.x[d:])

    # -- stage 1b: damped Newton polish on ℝ^d (quadratic convergence; d ≤ 2000) ----------
    @staticmethod
    def _newton(f: _Smooth, x: np.ndarray, tol: float, deadline: float, max_steps: int = 50) -> np.ndarray:
        v, g = f.value_grad(x)
        for _ in range(max_steps):
            if float(np.linalg.norm(g)) <= tol or time.perf_counter() > deadline:
                break
            H = f.hessian(x)
            if H is None:
                break
            try:
                step = np.linalg.solve(H, g)
            except np.linalg.LinAlgError:
                break
            t = 1.0
            while t > 1e-10:  # Armijo backtracking
                xn = x - t * step
                vn, gn = f.value_grad(xn)
                if vn <= v - 1e-4 * t * float(g @ step) or float(np.linalg.norm(gn)) < float(np.linalg.norm(g)):
                    break
                t *= 0.5
            else:
                break
            x, v, g = xn, vn, gn
        return x

    @staticmethod
    def _mapping_norm(x: np.ndarray, g: np.ndarray, beta: float, prox: Any, unconstrained: bool) -> float:
        """‖G‖ plus its floating-point slack (the same rule as dpopt.modeling.prox.certify)."""
        if unconstrained:
            return float(np.linalg.norm(g))
        xp = prox(x - g / beta)
        eps = np.finfo(np.float64).eps
        slack = 4.0 * eps * (beta * float(np.linalg.norm(x)) + float(np.linalg.norm(g)) + beta * float(np.linalg.norm(xp)))
        return float(np.linalg.norm(beta * (x - xp))) + slack

    # -- stage 2: FISTA with adaptive restart, certified by ‖G‖ ----------------------
    def _fista(self, f: _Smooth, x: np.ndarray, tol: float, max_iter: int,
               deadline: float) -> tuple[np.ndarray, float, int, str]:
        p = f.problem
        beta = p.smoothness
        lam1, c = p.l1_weight, p.constraint

        def prox(v: np.ndarray) -> np.ndarray:
            return composite_prox(c, lam1, v, 1.0 / beta)

        unconstrained = c is None and lam1 == 0.0
        x = prox(x)
        yk, t = x.copy(), 1.0
        gnorm = math.inf
        for k in range(max_iter):
            _, gx = f.value_grad(x)
            gnorm = self._mapping_norm(x, gx, beta, prox, unconstrained)
            if gnorm <= tol:
                return x, gnorm, k, ""
            if time.perf_counter() > deadline:
                return x, gnorm, k, "time"
            _, gy = f.value_grad(yk)
            x_new = prox(yk - gy / beta)
            t_new = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t * t))
            if float((yk - x_new) @ (x_new - x)) > 0:  # adaptive restart (O'Donoghue–Candès)
                yk, t = x_new.copy(), 1.0
            else:
                yk = x_new + ((t - 1.0) / t_new) * (x_new - x)
                t = t_new
            x = x_new
        return x, gnorm, max_iter, "iterations"


register("scipy", ScipyBackend)
