"""A scipy/numpy backend for smooth (strongly) convex problems.

On ℝ^d and on an ℓ2 ball a damped (projected) Newton method is used whenever the loss
has a second derivative and d ≤ 2000: the GLM Hessian Xᵀ diag(w φ'') X costs O(m d²)
for the m distinct rows, computed as one float32 ``syrk`` (a *model*: its rounding
changes the speed of convergence, not the limit, and no certificate reads it).  On the
ball each step minimizes the quadratic model over the ball — the proximal Newton step
for h = ι_C (Lee, Sun and Saunders 2014, "Proximal Newton-type methods", Alg. 1 with
exact subproblems; quadratic local convergence, their Thm. 3.3) — by the Moré–Sorensen
secular equation on the model's KKT multiplier ν (Nocedal and Wright 2006, Alg. 4.3),
and an Armijo backtracking line search along the feasible segment globalizes it.  A
GLM Hessian is singular when columns are collinear (one-hot blocks summing to an
intercept, as in the standard Adult encoding); the model's eigenvalues are then floored
at its float32 rounding level (:meth:`_Model.eig`), so the model is H̃ ≻ 0 and there is
no "hard case".  On large data the first steps' models are sub-sampled (every k-th row,
:meth:`_Smooth.hessian`) and full models take over for the local phase.  L-BFGS-B (scipy) does the bulk of the work on
boxes and — through the exact split θ = u − v, u, v ≥ 0 — with an ℓ1 regularizer, and
is the fallback if Newton stalls; an accelerated proximal-gradient method (FISTA with
adaptive restart) handles ℓ1/ℓ2 balls and the simplex, and polishes every answer.  The
backend certifies its own result through the norm of the gradient mapping ‖G‖ ≤
tolerance (a KKT residual: G = 0 exactly at the optimum); mechanisms re-certify it
independently (:func:`dpopt.numerics.certificates.certify`).

Speed: the rows are aggregated, sparse-copied and cached once per data set
(:func:`dpopt.compile.aggregate.glm_design`); the last evaluation is memoized so the
final certificate reuses Newton's gradient; BLAS runs single-threaded by default (the
products are small, and on a shared machine multi-threaded BLAS busy-waits — "thread
thrash"), or with ``SolveOptions.threads`` threads (threadpoolctl).
"""

from __future__ import annotations

import math
import threading
import time
import weakref
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy
import scipy.linalg
from scipy.optimize import minimize

from dpopt._threads import blas_threads
from dpopt.backends.base import AnyProblem, Backend
from dpopt.backends.options import refuse_options
from dpopt.backends.result import Limit, OracleResult, OracleStatus, SolveOptions
from dpopt.compile.aggregate import GLMDesign, glm_design
from dpopt.errors import BackendCapabilityError
from dpopt.modeling.losses import Loss
from dpopt.modeling.perturbation import Perturbation
from dpopt.modeling.problem import Problem
from dpopt.numerics.prox import composite_prox, prox_supported

#: largest dimension for which the dense Newton method is used
NEWTON_MAX_DIM = 2000
#: keep the Hessian model while full steps shrink ‖G‖ by at least this factor
LAZY_RATE = 0.1
#: rows in the sampled Hessian model of the first Newton steps (see :meth:`_Smooth.hessian`)
SAMPLE_ROWS = 8192
#: the full Hessian model replaces the sampled one once ‖G‖ has fallen by this factor
SAMPLE_SWITCH = 1e-3
#: eigenvalues of a Hessian model are raised to this fraction of the largest (float32 rounding level)
EIG_FLOOR = 1e-6
_base_d2phi = Loss.d2phi  # losses that do not override it have no second derivative


@dataclass
class _Smooth:
    """Aggregated evaluation of the smooth part: average loss + ℓ2² + perturbation."""

    problem: Problem
    design: GLMDesign
    w: np.ndarray  # counts / n
    b: np.ndarray
    l2: float
    zeta: float
    theta0: np.ndarray
    _memo: tuple[np.ndarray, np.ndarray, float, np.ndarray] | None = field(default=None, repr=False)

    @classmethod
    def build(cls, problem: Problem) -> _Smooth:
        design = glm_design(problem.loss.data.X, problem.loss.data.y)
        p = problem.perturbation or Perturbation(problem.dim)
        assert p.b is not None and p.theta0 is not None
        return cls(problem, design, design.counts / problem.n, np.array(p.b), problem.l2_weight, p.zeta,
                   np.array(p.theta0))

    def set_linear(self, b: np.ndarray) -> None:
        """Replace the linear term (and forget the memoized evaluation)."""
        self.b = np.asarray(b, dtype=np.float64)
        self._memo = None

    def _margins(self, theta: np.ndarray) -> np.ndarray:
        m = self._memo
        if m is not None and np.array_equal(m[0], theta):
            return m[1]
        return self.design.matvec(theta)

    def value_grad(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        """Value and gradient at θ (the last evaluation is memoized)."""
        m = self._memo
        if m is not None and np.array_equal(m[0], theta):
            return m[2], m[3].copy()
        loss, y = self.problem.loss, self.design.y
        z = self.design.matvec(theta)
        v = float(self.w @ loss.phi(z, y))
        g = self.design.rmatvec(self.w * loss.dphi(z, y))
        d = theta - self.theta0
        v += 0.5 * self.l2 * float(theta @ theta) + float(self.b @ theta) + 0.5 * self.zeta * float(d @ d)
        g = g + self.l2 * theta + self.b + self.zeta * d
        self._memo = (theta.copy(), z, v, g)
        return v, g.copy()

    def hessian(self, theta: np.ndarray, *, sampled: bool = False) -> np.ndarray | None:
        """A model of the Hessian (GLM: Xᵀ diag(w φ'') X + (λ + ζ)I, float32 products), or None.

        With ``sampled``, only every k-th row enters, reweighted by k (k = :func:`_stride`;
        k = 1 on small data): a sub-sampled Newton model (Byrd, Chin, Neveitt and Nocedal
        2011, "On the use of stochastic Hessian information in optimization methods for
        machine learning"; Roosta-Khorasani and Mahoney 2019, "Sub-sampled Newton methods").
        The rows are a fixed stride, not random, so a solve is deterministic.
        """
        k = _stride(self.design.n_rows) if sampled else 1
        h = self.problem.loss.d2phi(self._margins(theta)[::k], self.design.y[::k])
        if h is None:
            return None
        H = _gram(self.design, (k * self.w[::k]) * h, stride=k, start=not np.any(theta))
        H[np.diag_indices_from(H)] += self.l2 + self.zeta
        return H


def _stride(m: int) -> int:
    """Row stride of the sampled Hessian model: about :data:`SAMPLE_ROWS` of the m rows (1 if m < 2·that)."""
    return max(1, m // SAMPLE_ROWS)


#: per design: the strided float32 rows of the sampled model, and the Gram model at θ = 0
#: (every solve starts there; the design's own memo holds only the last product)
_sampled_rows: weakref.WeakKeyDictionary[GLMDesign, tuple[int, np.ndarray]] = weakref.WeakKeyDictionary()
_start_grams: weakref.WeakKeyDictionary[GLMDesign, tuple[np.ndarray, np.ndarray]] = weakref.WeakKeyDictionary()
_cache_lock = threading.Lock()


def _strided_gram(design: GLMDesign, weights: np.ndarray, stride: int) -> np.ndarray:
    """Σ_j weights_j x_j x_jᵀ over the rows j·stride, in float32 (a model, like ``gram_model``)."""
    if stride == 1:
        return design.gram_model(weights)
    with _cache_lock:
        hit = _sampled_rows.get(design)
    if hit is None or hit[0] != stride:
        hit = (stride, np.ascontiguousarray(design.X[::stride], dtype=np.float32))
        with _cache_lock:
            _sampled_rows[design] = hit
    A = hit[1] * np.sqrt(np.maximum(weights, 0.0)).astype(np.float32)[:, None]
    return np.asarray(A.T @ A, dtype=np.float64)  # one syrk


def _gram(design: GLMDesign, weights: np.ndarray, *, stride: int, start: bool) -> np.ndarray:
    """The (strided) Gram model as a new array, remembered per design when ``start``
    (θ = 0: the weights are w·φ''(0, y), the same for every solve on the data set)."""
    if not start:
        return _strided_gram(design, weights, stride)
    with _cache_lock:
        hit = _start_grams.get(design)
    if hit is not None and np.array_equal(hit[0], weights):
        return hit[1].copy()
    H = _strided_gram(design, weights, stride)
    with _cache_lock:
        _start_grams[design] = (np.array(weights), H.copy())
    return H


def _ball_point(v: np.ndarray, radius: float | None) -> np.ndarray:
    """The projection of v onto the ℓ2 ball of ``radius`` (identity for None)."""
    if radius is None:
        return v
    nv = float(np.linalg.norm(v))
    return v if nv <= radius else (radius / nv) * v


def _stationarity(x: np.ndarray, g: np.ndarray, beta: float, radius: float | None) -> float:
    """‖G‖ = β‖x − P(x − g/β)‖ plus its floating-point slack (the rule of :func:`prox.certify`)."""
    if radius is None:
        return float(np.linalg.norm(g))
    xp = _ball_point(x - g / beta, radius)
    eps = np.finfo(np.float64).eps
    slack = 4.0 * eps * (beta * float(np.linalg.norm(x)) + float(np.linalg.norm(g)) + beta * float(np.linalg.norm(xp)))
    return float(np.linalg.norm(beta * (x - xp))) + slack


def _secular_multiplier(lam: np.ndarray, a: np.ndarray, radius: float) -> float:
    """ν ≥ 0 with ‖a/(λ + ν)‖ = radius, for λ > 0 and ‖a/λ‖ > radius (Moré–Sorensen).

    Newton's method on ψ(ν) = 1/‖a/(λ + ν)‖ − 1/radius, which is concave and increasing,
    so from ν = 0 (ψ < 0) the iterates increase monotonically to the root
    (Nocedal and Wright 2006, Sec. 4.3).
    """
    nu = 0.0
    for _ in range(100):
        q = a / (lam + nu)
        phi = float(np.linalg.norm(q))
        if abs(phi - radius) <= 1e-15 * radius:
            break
        dphi3 = float(np.sum(q * q / (lam + nu)))  # −φ'(ν)·φ
        step = (phi - radius) / radius * phi * phi / dphi3
        if not step > 0.0:  # φ ≤ radius up to rounding: the root is reached
            break
        nu += step
        if step <= 1e-16 * nu:
            break
    return nu


class _Model:
    """A Hessian model H ⪰ 0 with its Cholesky factor and (on demand) eigendecomposition,
    kept while the model is reused for several steps."""

    def __init__(self, H: np.ndarray) -> None:
        self.H = H
        self._cho: tuple[np.ndarray, bool] | None = None
        self._eig: tuple[np.ndarray, np.ndarray] | None = None

    def solve(self, g: np.ndarray) -> np.ndarray:
        """H⁻¹g (raises LinAlgError when H is not positive definite)."""
        if self._cho is None:
            self._cho = scipy.linalg.cho_factor(self.H, check_finite=False)
        return np.asarray(scipy.linalg.cho_solve(self._cho, g, check_finite=False))

    def eig(self) -> tuple[np.ndarray, np.ndarray]:
        """(λ̃, Q) with H ≈ Q diag(λ̃) Qᵀ, every λ̃ ≥ :data:`EIG_FLOOR`·λ_max (λ_max ≤ 0: λ̃ = λ).

        A GLM Hessian Xᵀ diag(w φ'') X is singular when columns are collinear (one-hot
        blocks that sum to an intercept column), and its float32 model then has eigenvalues
        of either sign around 0 (|error| ≲ 10⁻⁷·λ_max).  Raising them to the floor changes
        the model by no more than its own rounding already does — the speed of convergence,
        not the limit — and keeps the step defined: on an active ball the multiplier
        ν > 0 dominates the floor, and along a direction with no curvature the gradient
        vanishes up to rounding, so the floor only bounds that rounding's effect.
        """
        if self._eig is None:
            lam, Q = np.linalg.eigh(self.H)
            if lam[-1] > 0.0:
                lam = np.maximum(lam, EIG_FLOOR * float(lam[-1]))
            self._eig = (lam, Q)
        return self._eig


def _newton_step(model: _Model, x: np.ndarray, g: np.ndarray, radius: float | None) -> np.ndarray | None:
    """d minimizing gᵀd + ½dᵀHd subject to ‖x + d‖ ≤ radius (no constraint for None).

    With the multiplier ν of the model's constraint, (H + νI) d = −(g + νx); d is
    formed from that equation (small near the optimum, so it keeps its relative
    accuracy) and ν from the secular equation ‖x + d(ν)‖ = radius.  When the Cholesky
    factorization fails (H singular, see :meth:`_Model.eig`) or its step leaves the
    ball, the eigendecomposition with its floored eigenvalues solves the same equations.
    """
    try:
        d: np.ndarray | None = -model.solve(g)
    except (np.linalg.LinAlgError, ValueError):
        d = None
    if d is not None and (radius is None or float(np.linalg.norm(x + d)) <= radius):
        return d
    lam, Q = model.eig()
    if not lam[0] > 0.0:
        return None
    gh = Q.T @ g
    xh = np.zeros_like(gh) if radius is None else Q.T @ x
    nu = 0.0
    if radius is not None and float(np.linalg.norm((lam * xh - gh) / lam)) > radius:
        nu = _secular_multiplier(lam, lam * xh - gh, radius)
    return np.asarray(-(Q @ ((gh + nu * xh) / (lam + nu))))


class ScipyBackend(Backend[_Smooth]):
    """Damped (projected) Newton, L-BFGS-B and FISTA polishing, certified by the gradient-mapping norm."""

    name = "scipy"
    module = "scipy"
    distribution = "scipy"
    description = "scipy/numpy damped Newton, L-BFGS-B and accelerated proximal gradient: smooth losses on ℝ^d, boxes, balls, simplex"
    auto_rank = 10

    def auto_rank_for(self, problem: AnyProblem | None) -> int | None:
        """First (10) on ℝ^d, on a box (L-BFGS-B's bounds) and where its projected Newton method
        applies (:meth:`newton_applies`), where it is the fastest certified solver; after
        clarabel (25) on other constraint sets, which interior point handles best."""
        constraint = getattr(problem, "constraint", None)
        if constraint is None:
            return self.auto_rank
        if isinstance(problem, Problem) and (constraint.norm_ball == "inf" or self.newton_applies(problem)):
            return self.auto_rank
        return 25

    def check_options(self, options: dict[str, Any], where: str) -> None:
        """It reads no ``[options]`` (:func:`dpopt.backends.options.refuse_options`)."""
        refuse_options(self.name, options, where)

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
        other = [type(r).__name__ for r in problem.regularizers if r.elastic_weights is None]
        if other:  # read from the declaration Regularizer.elastic_weights: a·½‖θ‖² + b‖θ‖₁
            raise BackendCapabilityError(
                f"backend 'scipy' handles L2Squared and L1Norm regularizers only, not {', '.join(other)}: "
                "use 'clarabel'"
            )
        if not prox_supported(problem.constraint, problem.l1_weight):
            raise BackendCapabilityError(
                f"backend 'scipy' cannot combine an L1Norm regularizer with "
                f"{type(problem.constraint).__name__}: use 'clarabel'"
            )

    def version(self) -> str | None:
        """scipy's version (imported with this module, so no metadata lookup per call)."""
        return str(scipy.__version__)

    @staticmethod
    def newton_applies(problem: Problem) -> bool:
        """Whether the Newton path serves ``problem`` (structure only: ℝ^d or an ℓ2 ball,
        no ℓ1 term, d ≤ :data:`NEWTON_MAX_DIM`, a loss with a second derivative)."""
        c = problem.constraint
        return (
            problem.l1_weight == 0.0
            and problem.dim <= NEWTON_MAX_DIM
            and (c is None or c.norm_ball == 2)
            and math.isfinite(problem.smoothness)
            and type(problem.loss).d2phi is not _base_d2phi
            and problem.elastic
        )

    def prepare(self, problem: AnyProblem) -> _Smooth:
        self.check(problem)
        assert isinstance(problem, Problem)  # check() refused anything else
        return _Smooth.build(problem)

    def solve(self, prepared: _Smooth, b: np.ndarray | None, options: SolveOptions) -> OracleResult:
        f = prepared
        if b is not None:
            f.set_linear(b)
        start = time.perf_counter()
        deadline = math.inf if options.time_limit is None else start + options.time_limit
        max_iter = options.max_iterations or 100_000
        self._deadline = deadline
        tol = self._gradient_tolerance(f.problem, options)
        with blas_threads(options.threads):
            x = self._initial_point(f, tol, max_iter, options, deadline)
            x, gnorm, iters, limit = self._fista(f, x, tol, max_iter, deadline)
            value = f.value_grad(x)[0] + f.problem.l1_weight * float(np.abs(x).sum())
        elapsed = time.perf_counter() - start
        ok = gnorm <= tol
        status = OracleStatus.OPTIMAL if ok else OracleStatus.LIMIT
        return OracleResult(
            solution=x,
            status=status,
            solver_certified=ok,
            solve_time=elapsed,
            backend=self.name,
            backend_version=scipy.__version__,
            raw_status="converged" if ok or limit is None else f"stopped: {limit.value} limit",
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
        """Damped (projected) Newton when it applies (:meth:`newton_applies`), else — or if
        Newton stalls — L-BFGS-B followed by Newton; FISTA then finishes and certifies."""
        p = f.problem
        newton = self.newton_applies(p)
        c = p.constraint
        radius = c.radius(2) if c is not None and c.norm_ball == 2 else None
        if newton:
            x, res = self._newton(f, np.zeros(p.dim), tol, deadline, radius=radius)
            if res <= tol:
                return x
        x = self._lbfgs(f, max_iter, max(options.tolerance, 1e-9))
        if not newton:
            return x
        return self._newton(f, _ball_point(x, radius), tol, deadline, radius=radius)[0]

    # -- stage 1: L-BFGS-B where the feasible set is a box ------------------------
    def _lbfgs(self, f: _Smooth, max_iter: int, tol: float) -> np.ndarray:
        p = f.problem
        c = p.constraint
        d = p.dim
        if c is not None and c.norm_ball != "inf":
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

    # -- stage 1b: damped (projected) Newton on ℝ^d or an ℓ2 ball (d ≤ 2000) ------------
    @staticmethod
    def _newton(f: _Smooth, x: np.ndarray, tol: float, deadline: float, *, radius: float | None = None,
                max_steps: int = 60) -> tuple[np.ndarray, float]:
        """Proximal Newton for h = ι_{‖·‖≤radius} (module docstring); returns (x, ‖G(x)‖).

        A step is accepted by Armijo's rule F(x + td) ≤ F(x) + 10⁻⁴·t·⟨g, d⟩ or, where the
        objective's change is below its rounding, when it decreases ‖G‖.  For the exact model
        minimizer ⟨g, d⟩ ≤ −½dᵀH̃d < 0 (d = 0 is feasible in the subproblem; Lee, Sun and
        Saunders 2014, Prop. 2.4), but on an active ball d is nearly tangent and g nearly
        normal, so near the optimum the computed ⟨g, d⟩ is rounding of either sign: a step
        whose computed slope is not negative is then tried at t = 1 and kept only if it
        decreases ‖G‖ (the rule the certificate reads).  The Hessian model
        is kept for the next step while full steps shrink ‖G‖ at least :data:`LAZY_RATE`-fold
        (a linearly convergent chord step costs one gradient instead of a Hessian; Shamanskii's
        variant of Newton's method, Kelley 1995, Sec. 5.4.3) and recomputed otherwise.  On
        large data (m ≥ 2·:data:`SAMPLE_ROWS` rows) the models of the first steps use every
        k-th row only (:meth:`_Smooth.hessian`), until ‖G‖ has fallen :data:`SAMPLE_SWITCH`-fold
        or a sampled step fails; from then on full models give the quadratic local
        convergence.  The gradient, the objective and ‖G‖ are always exact, so neither the
        limit nor the certificate depends on the model.
        ``x`` must be feasible.
        """
        beta = f.problem.smoothness
        v, g = f.value_grad(x)
        res = _stationarity(x, g, beta, radius)
        model: _Model | None = None
        fresh = model_sampled = False
        sampled, res0 = _stride(f.design.n_rows) > 1, res
        for _ in range(max_steps):
            if res <= tol or time.perf_counter() > deadline:
                break
            sampled = sampled and res > SAMPLE_SWITCH * res0
            if model is not None and model_sampled and not sampled:
                model = None  # the local phase: full Hessian models from here on
            if model is None:
                H, fresh, model_sampled = f.hessian(x, sampled=sampled), True, sampled
                if H is None:
                    break
                model = _Model(H)
            d = _newton_step(model, x, g, radius)
            slope = math.inf if d is None else float(g @ d)
            descent = slope < 0.0
            accepted = d is not None
            t = 1.0
            while accepted and t > (1e-10 if descent else 0.5):  # Armijo backtracking on [x, x + d]
                assert d is not None
                xn = _ball_point(x + t * d, radius)
                vn, gn = f.value_grad(xn)
                rn = _stationarity(xn, gn, beta, radius)
                if (descent and vn <= v + 1e-4 * t * slope) or rn < res:
                    break
                t *= 0.5
            else:
                accepted = False
            if not accepted:
                if fresh and not model_sampled:
                    break
                sampled = sampled and not fresh  # a fresh sampled model failed: use the full one
                model = None  # a stale or sampled model failed: retry from here with a fresh one
                continue
            if t < 1.0 or rn > LAZY_RATE * res:
                model = None
            fresh = False
            x, v, g, res = xn, vn, gn, rn
        return x, res

    @staticmethod
    def _mapping_norm(x: np.ndarray, g: np.ndarray, beta: float, prox: Any,
                      unconstrained: bool) -> tuple[float, float]:
        """(‖G‖ plus its floating-point slack, the slack): the same rule as
        dpopt.numerics.certificates.certify."""
        if unconstrained:
            return float(np.linalg.norm(g)), 0.0
        xp = prox(x - g / beta)
        eps = np.finfo(np.float64).eps
        slack = 4.0 * eps * (beta * float(np.linalg.norm(x)) + float(np.linalg.norm(g)) + beta * float(np.linalg.norm(xp)))
        return float(np.linalg.norm(beta * (x - xp))) + slack, slack

    # -- stage 2: FISTA with adaptive restart, certified by ‖G‖ ----------------------
    def _fista(self, f: _Smooth, x: np.ndarray, tol: float, max_iter: int,
               deadline: float) -> tuple[np.ndarray, float, int, Limit | None]:
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
            gnorm, slack = self._mapping_norm(x, gx, beta, prox, unconstrained)
            if gnorm <= tol:
                return x, gnorm, k, None
            if slack >= tol and gnorm <= 2.0 * slack:
                # converged to float precision, but the rounding slack alone exceeds the
                # requested ‖G‖: no further iteration can certify; stop now (the caller's
                # a-priori fallback answers) instead of running to the iteration limit
                return x, gnorm, k, Limit.PRECISION
            if time.perf_counter() > deadline:
                return x, gnorm, k, Limit.TIME
            _, gy = f.value_grad(yk)
            x_new = prox(yk - gy / beta)
            t_new = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t * t))
            if float((yk - x_new) @ (x_new - x)) > 0:  # adaptive restart (O'Donoghue–Candès)
                yk, t = x_new.copy(), 1.0
            else:
                yk = x_new + ((t - 1.0) / t_new) * (x_new - x)
                t = t_new
            x = x_new
        return x, gnorm, max_iter, Limit.ITERATIONS
