"""Check a loss's declared constants numerically, in the manner of scikit-learn's ``check_estimator``.

A :class:`~dpopt.modeling.losses.Loss` *declares* what the mechanisms calibrate their noise
from: the bounds ``dphi_bound(z_bound)`` on |φ'| and ``d2phi_bound()`` on φ'', the constants
:meth:`~dpopt.modeling.losses.Loss.constants` derives from them and the declared bounds of the
data (:class:`~dpopt.modeling.losses.LossConstants`), and
:meth:`~dpopt.modeling.losses.Loss.value_at_zero_bound`.  Nothing in a private run checks them
against φ: a constant declared too small voids the guarantee without a sign.  :func:`check_loss`
evaluates the loss on points of its *declared* domain and compares.

Sampling
--------
Rows x lie in the declared row ball (``x_bound`` in the ``x_norm`` norm): the zero row, extreme
points (±x_bound·e_i for ℓ1 and ℓ2, sign vectors for ℓ∞: where the bounds on ‖x‖₂ and ‖x‖∞
are attained), random points on its boundary and inside it.  Each row is paired with every extreme label the loss declares (±1 for a classification
loss; −y_bound, 0, y_bound and random labels between them for a regression loss) and with
points θ of the domain: the two points of the domain with the smallest and the largest margin
⟨x, θ⟩ (its linear minimization oracle; the bounds are attained there), points of the segment
between them, the centre and random points.  On an unbounded domain (``domain=None``, or a set
with ``bounded = False``) θ is taken along ±x with margins up to :data:`UNBOUNDED_MARGIN`.  The
checks of φ alone (derivatives, convexity, ``d2phi_bound``) run over the labels and a grid of
margins that covers the domain's margins twice over.

A loss of k outputs (``n_outputs`` = k: θ a d×k matrix Θ flattened row-major, scores z = Θᵀx)
is checked the same way in score space: the extremes are taken along a direction of scores
(e_a − e_b or a random one), derivatives along lines of scores, and ``dphi_bound`` bounds
‖∇_z φ‖₂ at ‖z‖∞.

Checks
------
``lipschitz_l2``, ``lipschitz_l1``
    ‖∇ℓ(θ; x, y)‖₂ and ‖∇ℓ(θ; x, y)‖∞ (the dual of ℓ1) at the sampled points, against
    ``constants(...)``.
``dphi_bound``
    |φ'(z, y)| ≤ ``dphi_bound(|z|)`` at every sampled margin.
``hessian_bound``
    ‖∇ℓ(θ; d) − ∇ℓ(θ'; d)‖₂ / ‖θ − θ'‖₂ for θ' − θ along x (where ∇²ℓ = φ''·xxᵀ acts most)
    between close margins the domain attains, and |φ''|·‖x‖₂² where φ'' is given.
``d2phi_bound``
    |φ'(a) − φ'(b)| / |a − b| for close margins, and φ''.
``strong_convexity``, ``convexity``
    ℓ((θ + θ')/2) ≤ (ℓ(θ) + ℓ(θ'))/2 − (μ/8)‖θ − θ'‖₂² for pairs of the domain, with the declared
    μ; and φ(·, y) convex along the margin grid (every mechanism assumes a convex loss).
``curvature``
    (2/γ²)(ℓ(θ + γ(s − θ)) − ℓ(θ) − γ⟨s − θ, ∇ℓ(θ)⟩) for θ, s in the domain (per example: a
    dataset of identical rows is admissible, so the average loss's constant bounds it too).
``dphi``, ``d2phi``
    φ' (and φ'' where given) against one-sided finite differences of φ (and φ'): the
    derivative must lie between them, which a kink (hinge) also satisfies.
``value_at_zero_bound``
    φ(0, y) ≤ the declared φ₀ for the sampled labels.
``value``, ``gradient``
    The average loss's :meth:`~dpopt.modeling.losses.Loss.value` against the mean of φ, and its
    :meth:`~dpopt.modeling.losses.Loss.gradient` against finite differences of ``value``, on the
    loss's own dataset (these read the data: a check of one's own code, never a private step).
``cvxpy``
    The registered cvxpy encoding (:func:`dpopt.compile.cvxpy_program.loss_phi`) is convex under
    cvxpy's rules and its value equals Σ c·φ on sampled rows with random counts c.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from dpopt.errors import ModelError
from dpopt.modeling.balls import L2Ball
from dpopt.modeling.constraint_set import ConstraintSet
from dpopt.modeling.losses import Loss, LossConstants
from dpopt.modeling.problem import Problem

__all__ = ["UNBOUNDED_MARGIN", "LossCheck", "LossCheckReport", "check_loss"]

#: the largest margin |⟨x, θ⟩| sampled on an unbounded domain
UNBOUNDED_MARGIN = 50.0
#: the step of the finite differences, relative to max(1, |z|)
FD_STEP = 1e-5
#: points θ per row (see :func:`_thetas`)
THETAS_PER_ROW = 8
#: the slack of a bound check beyond its relative tolerance
ATOL = 1e-9

Domain = ConstraintSet | Problem | float | None


# ---------------------------------------------------------------------------
# The report
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class LossCheck:
    """One check of :func:`check_loss`.

    Attributes
    ----------
    name : str
        What is checked: a declared constant (``"lipschitz_l2"``, ``"hessian_bound"``, ...), a
        method (``"dphi"``, ``"value_at_zero_bound"``) or the cvxpy encoding (``"cvxpy"``).
    claim : str
        The inequality checked, in words.
    declared : float or None
        The declared value at the worst point (None for a check of a derivative or an encoding).
    observed : float or None
        For a bound, its value at the worst point; for an agreement, the discrepancy at the
        worst point (0 when the derivative lies within the finite differences); None when skipped.
    passed : bool or None
        None when the check does not apply to the loss (``detail`` says why).
    detail : str
        Where the worst point lies, or why the check was skipped.
    tolerance : float or None
        For an agreement, the tolerance of rounding at the worst point.
    """

    name: str
    claim: str
    declared: float | None
    observed: float | None
    passed: bool | None
    detail: str = ""
    tolerance: float | None = None

    def _values(self) -> str:
        return ", ".join(f"{label} {value:.6g}" for label, value in
                         (("declared", self.declared), ("observed", self.observed),
                          ("tolerance", self.tolerance)) if value is not None)

    def line(self) -> str:
        """One line: status, name, declared and observed values, detail."""
        status = {True: "ok", False: "FAILED", None: "skipped"}[self.passed]
        values = self._values()
        return f"{status:8} {self.name:20} " + (f"{values}  " if values else "") + f"({self.detail or self.claim})"

    def failure(self) -> str:
        """The failure message: the constant or method, its declared and observed values, the claim."""
        return f"{self.name}: {self._values()} — {self.claim}" + (f" ({self.detail})" if self.detail else "")


@dataclass(frozen=True)
class LossCheckReport:
    """What :func:`check_loss` checked, and how it went.

    Attributes
    ----------
    loss : str
        The loss's class name.
    domain : str
        The domain of θ the constants were checked over.
    n_points : int
        The number of sampled (x, y, θ) points.
    checks : tuple of LossCheck
        Every check, in order (passed, failed and skipped).
    """

    loss: str
    domain: str
    n_points: int
    checks: tuple[LossCheck, ...]

    @property
    def failures(self) -> tuple[LossCheck, ...]:
        """The checks that failed."""
        return tuple(c for c in self.checks if c.passed is False)

    @property
    def passed(self) -> bool:
        """True when no check failed."""
        return not self.failures

    def summary(self) -> str:
        """A readable table of the checks."""
        counts = {s: sum(c.passed is v for c in self.checks) for s, v in
                  (("passed", True), ("failed", False), ("skipped", None))}
        head = (f"check_loss({self.loss}) over {self.domain}, {self.n_points} points: "
                + ", ".join(f"{n} {s}" for s, n in counts.items() if n))
        return "\n".join([head, *("  " + c.line() for c in self.checks)])


# ---------------------------------------------------------------------------
# Sampling the declared domain
# ---------------------------------------------------------------------------


def _fmt(z: np.ndarray) -> str:
    """A score: a margin (one output) or a short vector (k outputs)."""
    flat = np.ravel(z)
    return f"z = {flat[0]:.4g}" if flat.size == 1 else "z = [" + ", ".join(f"{v:.3g}" for v in flat) + "]"


@dataclass(frozen=True)
class _Points:
    """Groups (x, y) of a row and a label, each with the same T points θ of the domain."""

    X: np.ndarray      # (G, d) rows
    y: np.ndarray      # (G,) labels
    theta: np.ndarray  # (G, T, d·k) points of the domain, the two extremes first
    z: np.ndarray      # (G, T, k) scores Θᵀx (the margin ⟨x, θ⟩ when k = 1)

    def where(self, g: int, j: int | None = None) -> str:
        """Describe group ``g`` (and its point ``j``)."""
        score = "" if j is None else f"score {_fmt(self.z[g, j])}, "
        return f"at {score}label y = {self.y[g]:.4g}, ‖x‖₂ = {np.linalg.norm(self.X[g]):.4g}"


@dataclass(frozen=True)
class _Lines:
    """Lines z = base + t·v of scores, each with a label, for the checks of φ alone."""

    base: np.ndarray  # (L, k)
    v: np.ndarray     # (L, k) unit directions
    y: np.ndarray     # (L,) labels
    t: np.ndarray     # (m,) sorted positions along every line

    def at(self, t: np.ndarray) -> np.ndarray:
        """The scores at positions ``t`` (shape (m,) or (L, m)): shape (L, m, k)."""
        return self.base[:, None, :] + np.asarray(t)[..., None] * self.v[:, None, :]

    @property
    def z(self) -> np.ndarray:
        return self.at(self.t)

    def where(self, z: np.ndarray, y: np.ndarray) -> Callable[[int], str]:
        """Describe point i of flattened scores ``z`` (N, k) and labels ``y`` (N,)."""
        return lambda i: f"at score {_fmt(z[i])}, label y = {y[i]:.4g}"


def _outputs(loss: Loss) -> int:
    """k, the loss's number of linear outputs (1 for a margin loss)."""
    return int(getattr(loss, "n_outputs", 1))


def _resolve_domain(loss: Loss, domain: Domain) -> ConstraintSet | None:
    """The set of θ the constants are checked over (a radius is an ℓ2 ball)."""
    if isinstance(domain, Problem):
        return domain.constraint
    if domain is None or isinstance(domain, ConstraintSet):
        if domain is not None and domain.dim != loss.variable.size:
            raise ModelError(f"the domain has dimension {domain.dim}, the loss's variable {loss.variable.size}")
        return domain
    if isinstance(domain, bool) or not isinstance(domain, (int, float)):
        raise ModelError(f"domain must be a ConstraintSet, a Problem, a radius or None, got {type(domain).__name__}")
    return L2Ball(loss.variable, float(domain))


def _radii(domain: ConstraintSet | None) -> dict[object, float] | None:
    """The radii :meth:`Loss.constants` reads, as :meth:`Problem.domain_radius` gives them."""
    if domain is None:
        return None
    return {1: domain.radius(1), 2: domain.radius(2), "inf": domain.radius("inf")}


def _describe(domain: ConstraintSet | None) -> str:
    if domain is None:
        return "an unbounded domain"
    radius = domain.radius(2)
    return f"{type(domain).__name__} (ℓ2 radius {radius:.4g})" if math.isfinite(radius) else type(domain).__name__


def _rows(loss: Loss, n: int, rng: np.random.Generator) -> np.ndarray:
    """n rows of the declared row ball: zero, extreme points, boundary points, interior points."""
    data = loss.data
    d, order, bound = data.n_features, data.norm_order, data.x_bound
    gauss = rng.standard_normal((n, d))
    on_sphere = gauss / np.linalg.norm(gauss, ord=order, axis=1, keepdims=True)
    if order == math.inf:  # the corners, where ‖x‖₂ = √d·x_bound
        vertices = rng.choice([-1.0, 1.0], size=(n, d))
    else:  # ±e_i: vertices of the ℓ1 ball; on the ℓ2 sphere, where ‖x‖∞ = x_bound
        vertices = np.eye(d)[np.arange(n) % d] * rng.choice([-1.0, 1.0], size=(n, 1))
    third = max(1, n // 3)
    inside = on_sphere[2 * third:] * rng.uniform(0, 1, size=(max(0, n - 2 * third), 1))
    rows = np.concatenate([vertices[:third], on_sphere[third:2 * third], inside])
    rows[0] = 0.0
    return bound * rows[:n]


def _labels(loss: Loss, rng: np.random.Generator) -> np.ndarray:
    """The labels the loss declares, and random ones between the extremes for a regression loss."""
    declared = np.asarray(loss.declared_labels(), dtype=np.float64)
    if loss.label_domain != "bounded":
        return declared
    return np.concatenate([declared, rng.uniform(declared.min(), declared.max(), size=2)])


def _score_direction(k: int, rng: np.random.Generator) -> np.ndarray:
    """A unit direction of scores: 1 for one output; e_a − e_b or a random one for k outputs."""
    if k == 1:
        return np.ones(1)
    if rng.uniform() < 0.5:
        a, b = rng.choice(k, size=2, replace=False)
        v = np.zeros(k)
        v[a], v[b] = 1.0, -1.0
    else:
        v = rng.standard_normal(k)
    return v / np.linalg.norm(v)


def _thetas(domain: ConstraintSet | None, x: np.ndarray, v: np.ndarray, scale: float,
            rng: np.random.Generator) -> np.ndarray:
    """:data:`THETAS_PER_ROW` points of the domain for row x: first the two extremes of the score
    along v (⟨x, θ⟩ itself for one output), then points between them, the centre, random points."""
    g = np.outer(x, v).ravel()  # ⟨g, θ⟩ = ⟨Θᵀx, v⟩
    size = g.size
    if domain is not None and domain.bounded:
        lo, hi, centre = domain.lmo(g), domain.lmo(-g), domain.center()
        far = domain.project(rng.standard_normal(size) * 2.0 * domain.radius(2) / math.sqrt(size))
        near = centre + rng.uniform() * (domain.project(rng.standard_normal(size) * domain.radius(2)) - centre)
    else:
        norm2 = float(g @ g)
        along = g / norm2 if norm2 > 0 else np.zeros(size)
        lo, hi, centre = -UNBOUNDED_MARGIN * along, UNBOUNDED_MARGIN * along, np.zeros(size)
        far, near = rng.standard_normal(size) * scale, rng.standard_normal(size) * scale * rng.uniform()
        if domain is not None:
            lo, hi, centre, far, near = (domain.project(t) for t in (lo, hi, domain.center(), far, near))
    steps = [0.5, *rng.uniform(0, 1, size=THETAS_PER_ROW - 6)]
    return np.array([lo, hi, *(lo + s * (hi - lo) for s in steps), centre, far, near])


def _points(loss: Loss, domain: ConstraintSet | None, n_rows: int, rng: np.random.Generator) -> _Points:
    """Every row paired with every sampled label, each pair with the row's points θ."""
    k, d = _outputs(loss), loss.data.n_features
    rows, labels = _rows(loss, n_rows, rng), _labels(loss, rng)
    scale = UNBOUNDED_MARGIN / max(loss.data.x_bound_in(2), 1e-300) / math.sqrt(d * k)
    thetas = np.array([_thetas(domain, x, _score_direction(k, rng), scale, rng) for x in rows])
    X = np.repeat(rows, labels.size, axis=0)
    theta = np.repeat(thetas, labels.size, axis=0)
    z = np.einsum("gd,gtdk->gtk", X, theta.reshape(*theta.shape[:2], d, k))
    return _Points(X, np.tile(labels, rows.shape[0]), theta, z)


def _lines(points: _Points, labels: np.ndarray, rng: np.random.Generator) -> _Lines:
    """For one output, the margin axis through the sampled margins; for k outputs, lines along
    e_a − e_b and random directions through 0 and through sampled scores.  Every line covers twice
    the sampled scores, and is taken with every label."""
    k = points.z.shape[2]
    top = max(10.0, 2.0 * float(np.max(np.abs(points.z))))
    logs = np.logspace(-4, math.log10(top), 40)
    if k == 1:
        t = np.unique(np.concatenate([np.linspace(-top, top, 257), logs, -logs, [0.0], points.z.ravel()]))
        base, v = np.zeros((1, 1)), np.ones((1, 1))
    else:
        t = np.unique(np.concatenate([np.linspace(-top, top, 129), logs, -logs, [0.0]]))
        v = np.array([_score_direction(k, rng) for _ in range(8)])
        sampled = points.z.reshape(-1, k)[rng.choice(points.z.shape[0] * points.z.shape[1], size=2)]
        base = np.concatenate([np.zeros((1, k)), sampled])
        base, v = np.repeat(base, v.shape[0], axis=0), np.tile(v, (base.shape[0], 1))
    n = base.shape[0]
    return _Lines(np.repeat(base, labels.size, axis=0), np.repeat(v, labels.size, axis=0),
                  np.tile(labels, n), t)


# ---------------------------------------------------------------------------
# Evaluating the loss: scores of shape (..., k), labels of shape (...); the loss sees the flat
# arrays its methods take (margins (N,) for one output, scores (N, k) for k outputs)
# ---------------------------------------------------------------------------


def _flat(z: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, tuple[int, ...]]:
    z = np.asarray(z, dtype=np.float64)
    shape, k = z.shape[:-1], z.shape[-1]
    flat = z.reshape(-1, k).copy()
    labels = np.broadcast_to(np.asarray(y, dtype=np.float64), shape).ravel().copy()
    return (flat[:, 0] if k == 1 else flat), labels, shape


def _phi(loss: Loss, z: np.ndarray, y: np.ndarray) -> np.ndarray:
    """φ(z, y): shape z.shape[:-1]."""
    zf, yf, shape = _flat(z, y)
    return np.asarray(loss.phi(zf, yf), dtype=np.float64).reshape(shape)


def _dphi(loss: Loss, z: np.ndarray, y: np.ndarray) -> np.ndarray:
    """∇_z φ(z, y): shape z.shape."""
    zf, yf, _ = _flat(z, y)
    return np.asarray(loss.dphi(zf, yf), dtype=np.float64).reshape(np.shape(z))


def _d2phi(loss: Loss, z: np.ndarray, y: np.ndarray) -> np.ndarray | None:
    """φ''(z, y) (shape z.shape[:-1]) of a loss of one output that gives it, else None."""
    if np.shape(z)[-1] != 1:
        return None
    zf, yf, shape = _flat(z, y)
    out = loss.d2phi(zf, yf)
    return None if out is None else np.asarray(out, dtype=np.float64).reshape(shape)


def _bound(name: str, claim: str, declared: float | np.ndarray, observed: np.ndarray,
           where: Callable[[int], str], rtol: float) -> LossCheck:
    """A bound check: ``observed ≤ declared`` at every point (up to ``rtol``); report the worst."""
    flat = np.asarray(observed, dtype=np.float64).ravel()
    bound = np.broadcast_to(np.asarray(declared, dtype=np.float64), observed.shape).ravel()
    if flat.size == 0:
        return LossCheck(name, claim, None, None, None, "no points to evaluate")
    excess = np.where(np.isnan(flat), np.inf, flat - bound * (1.0 + rtol) - ATOL)
    i = int(np.argmax(excess)) if np.isfinite(bound).any() or np.isnan(flat).any() else int(np.argmax(flat))
    return LossCheck(name, claim, float(bound[i]), float(flat[i]), bool(excess[i] <= 0), where(i))


def _agreement(name: str, claim: str, gap: np.ndarray, tol: np.ndarray | float,
               where: Callable[[int], str]) -> LossCheck:
    """A check that ``gap ≤ tol`` everywhere; report the largest gap beyond its tolerance."""
    flat = np.where(np.isnan(gap.ravel()), np.inf, gap.ravel())
    tols = np.broadcast_to(np.asarray(tol, dtype=np.float64), gap.shape).ravel()
    i = int(np.argmax(flat - tols))
    return LossCheck(name, claim, None, float(flat[i]), bool(flat[i] <= tols[i]), where(i), float(tols[i]))


def _bracket_gap(f: Callable[[np.ndarray], np.ndarray], df: np.ndarray, t: np.ndarray, scale: np.ndarray,
                 rtol: float) -> tuple[np.ndarray, np.ndarray]:
    """(gap, tol): how far the derivative ``df`` of f at t lies outside f's one-sided difference
    quotients (steps relative to max(1, ``scale``)), and the tolerance of rounding.

    A derivative of a function convex or concave near t lies between its one-sided difference
    quotients, also at a kink (where any subgradient between them is accepted).
    """
    h = FD_STEP * np.maximum(1.0, scale)
    f0, fp, fm = f(t), f(t + h), f(t - h)
    left, right = (f0 - fm) / h, (fp - f0) / h
    tol = rtol * (1.0 + np.abs(df)) + 64 * np.finfo(float).eps * (np.abs(f0) + np.abs(fp) + np.abs(fm)) / h
    gap = np.maximum.reduce([np.minimum(left, right) - df, df - np.maximum(left, right), np.zeros_like(df)])
    return np.where(np.isfinite(df), gap, np.inf), tol


# ---------------------------------------------------------------------------
# The checks
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Context:
    loss: Loss
    constants: LossConstants
    points: _Points
    lines: _Lines
    rtol: float
    rng: np.random.Generator

    def where_point(self, i: int) -> str:
        g, j = divmod(i, self.points.z.shape[1])
        return self.points.where(g, j)

    def where_line(self, z: np.ndarray) -> Callable[[int], str]:
        """Describe point i of scores ``z`` (L, m', k) taken on the lines (one label per line)."""
        flat = z.reshape(-1, z.shape[-1])
        return self.lines.where(flat, np.repeat(self.lines.y, z.shape[1]))


def _check_lipschitz(ctx: _Context, norm: float) -> LossCheck:
    p = ctx.points
    g = _dphi(ctx.loss, p.z, p.y[:, None])
    size = np.linalg.norm(g, ord=norm, axis=-1) * np.linalg.norm(p.X, ord=norm, axis=1)[:, None]
    if norm == 2:
        return _bound("lipschitz_l2", "‖∇ℓ(θ; x, y)‖₂ ≤ lipschitz_l2 over the domain",
                      ctx.constants.lipschitz_l2, size, ctx.where_point, ctx.rtol)
    return _bound("lipschitz_l1", "‖∇ℓ(θ; x, y)‖∞ ≤ lipschitz_l1 (Lipschitz in ℓ1) over the domain",
                  ctx.constants.lipschitz_l1, size, ctx.where_point, ctx.rtol)


def _check_dphi_bound(ctx: _Context) -> LossCheck:
    p, k = ctx.points, ctx.points.z.shape[2]
    z = np.concatenate([ctx.lines.z.reshape(-1, k), p.z.reshape(-1, k)])
    y = np.concatenate([np.repeat(ctx.lines.y, ctx.lines.t.size), np.repeat(p.y, p.z.shape[1])])
    levels, index = np.unique(np.max(np.abs(z), axis=1), return_inverse=True)
    bounds = np.array([float(ctx.loss.dphi_bound(float(b))) for b in levels])[index.ravel()]
    size = np.linalg.norm(_dphi(ctx.loss, z, y), axis=-1)
    claim = "|φ'(z, y)| ≤ dphi_bound(|z|)" if k == 1 else "‖∇_z φ(z, y)‖₂ ≤ dphi_bound(‖z‖∞)"
    return _bound("dphi_bound", claim, bounds, size, ctx.lines.where(z, y), ctx.rtol)


def _secants(ctx: _Context, z: np.ndarray, y: np.ndarray) -> np.ndarray:
    """‖∇_z φ(z_{j+1}) − ∇_z φ(z_j)‖₂ / ‖z_{j+1} − z_j‖₂ along axis −2 of z (0 where the step is 0)."""
    g = _dphi(ctx.loss, z, y)
    dz = np.linalg.norm(np.diff(z, axis=-2), axis=-1)
    apart = dz > 1e-7 * np.maximum(1.0, np.max(np.abs(z[..., 1:, :]), axis=-1))  # else: only rounding
    return np.where(apart, np.linalg.norm(np.diff(g, axis=-2), axis=-1) / np.where(apart, dz, 1.0), 0.0)


def _check_hessian_bound(ctx: _Context) -> LossCheck:
    claim = "‖∇ℓ(θ) − ∇ℓ(θ')‖₂ ≤ hessian_bound·‖θ − θ'‖₂ over the domain"
    declared = ctx.constants.hessian_bound
    if declared is None:
        return LossCheck("hessian_bound", claim, None, None, None,
                         "the loss declares no Hessian bound (None): mechanisms that need one refuse it")
    p = ctx.points
    t = np.linspace(0.0, 1.0, 33)[None, :, None]
    z = p.z[:, :1] + t * (p.z[:, 1:2] - p.z[:, :1])  # scores the domain attains, between its extremes
    x2 = np.sum(p.X**2, axis=1)[:, None]
    ratio = _secants(ctx, z, p.y[:, None]) * x2
    d2 = _d2phi(ctx.loss, p.z, p.y[:, None])
    if d2 is not None:
        ratio = np.concatenate([ratio, np.abs(d2) * x2], axis=1)
    return _bound("hessian_bound", claim, declared, ratio, lambda i: p.where(i // ratio.shape[1]), ctx.rtol)


def _check_d2phi_bound(ctx: _Context) -> LossCheck:
    claim = ("|φ'(a, y) − φ'(b, y)| ≤ d2phi_bound()·|a − b| and φ'' ≤ d2phi_bound()" if ctx.points.z.shape[2] == 1
             else "‖∇_z φ(a, y) − ∇_z φ(b, y)‖₂ ≤ d2phi_bound()·‖a − b‖₂")
    declared = ctx.loss.d2phi_bound()
    if declared is None:
        return LossCheck("d2phi_bound", claim, None, None, None, "the loss declares no bound on φ'' (None)")
    z = ctx.lines.z
    y = ctx.lines.y[:, None]
    observed, zs = _secants(ctx, z, y), z[:, 1:]
    d2 = _d2phi(ctx.loss, z, y)
    if d2 is not None:
        observed, zs = np.concatenate([observed, np.abs(d2)], axis=1), np.concatenate([zs, z], axis=1)
    return _bound("d2phi_bound", claim, float(declared), observed, ctx.where_line(zs), ctx.rtol)


def _check_dphi(ctx: _Context) -> LossCheck:
    lines = ctx.lines
    y = lines.y[:, None]
    t = np.broadcast_to(lines.t, (lines.y.size, lines.t.size))
    z = lines.z
    along = np.sum(_dphi(ctx.loss, z, y) * lines.v[:, None, :], axis=-1)
    gap, tol = _bracket_gap(lambda s: _phi(ctx.loss, lines.at(s), y), along, t,
                            np.max(np.abs(z), axis=-1), ctx.rtol)
    return _agreement("dphi", "∇_z φ(z, y) along a line lies between the one-sided finite differences of φ",
                      gap, tol, ctx.where_line(z))


def _check_d2phi(ctx: _Context) -> LossCheck:
    claim = "φ''(z, y) lies between the one-sided finite differences of φ'"
    lines = ctx.lines
    y = lines.y[:, None]
    z = lines.z
    d2 = _d2phi(ctx.loss, z, y)
    if d2 is None:
        return LossCheck("d2phi", claim, None, None, None, "the loss gives no second derivative of one output")
    t = np.broadcast_to(lines.t, d2.shape)
    gap, tol = _bracket_gap(lambda s: _dphi(ctx.loss, lines.at(s), y)[..., 0], d2, t, np.abs(z[..., 0]),
                            ctx.rtol)
    return _agreement("d2phi", claim, gap, tol, ctx.where_line(z))


def _check_convexity(ctx: _Context) -> LossCheck:
    z, y = ctx.lines.z, ctx.lines.y[:, None]
    gaps, tols, mids = [], [], []
    for step in (1, 4, 16, 64):
        a, b = z[:, :-step], z[:, step:]
        fa, fb, fm = _phi(ctx.loss, a, y), _phi(ctx.loss, b, y), _phi(ctx.loss, (a + b) / 2, y)
        gaps.append(np.maximum(fm - (fa + fb) / 2, 0.0))
        tols.append(1e-9 * (1.0 + np.abs(fa) + np.abs(fb)))
        mids.append((a + b) / 2)
    return _agreement("convexity", "φ((a + b)/2, y) ≤ (φ(a, y) + φ(b, y))/2 along lines of scores",
                      np.concatenate(gaps, axis=1), np.concatenate(tols, axis=1),
                      ctx.where_line(np.concatenate(mids, axis=1)))


def _pairs(ctx: _Context) -> tuple[np.ndarray, np.ndarray]:
    """Index arrays (i, j), i < j, of the point pairs within each group."""
    i, j = np.array(list(combinations(range(ctx.points.z.shape[1]), 2))).T
    return i, j


def _check_strong_convexity(ctx: _Context) -> LossCheck:
    p, mu = ctx.points, ctx.constants.strong_convexity
    i, j = _pairs(ctx)
    y = p.y[:, None]
    fi, fj = _phi(ctx.loss, p.z[:, i], y), _phi(ctx.loss, p.z[:, j], y)
    fm = _phi(ctx.loss, (p.z[:, i] + p.z[:, j]) / 2, y)
    dist2 = np.sum((p.theta[:, i] - p.theta[:, j]) ** 2, axis=2)
    excess = fm - (fi + fj) / 2 + mu * dist2 / 8 - 1e-9 * (1.0 + np.abs(fi) + np.abs(fj))
    with np.errstate(divide="ignore", invalid="ignore"):
        implied = np.where(dist2 > 1e-18, 8 * ((fi + fj) / 2 - fm) / dist2, np.inf)
    failed = bool((excess > 0).any())
    worst = int(np.argmax(excess)) if failed else int(np.argmin(implied))
    return LossCheck("strong_convexity",
                     "ℓ((θ + θ')/2) ≤ (ℓ(θ) + ℓ(θ'))/2 − (μ/8)‖θ − θ'‖₂² over the domain "
                     "(observed: the largest μ the sampled pairs allow)",
                     float(mu), float(implied.ravel()[worst]), not failed, p.where(worst // i.size))


def _check_curvature(ctx: _Context) -> LossCheck:
    claim = "(2/γ²)(ℓ(θ + γ(s − θ)) − ℓ(θ) − γ⟨s − θ, ∇ℓ(θ)⟩) ≤ curvature for θ, s in the domain"
    declared = ctx.constants.curvature
    if not math.isfinite(declared):
        return LossCheck("curvature", claim, None, None, None, "the declared curvature is infinite")
    p = ctx.points
    i, j = _pairs(ctx)
    first, second = np.concatenate([i, j]), np.concatenate([j, i])
    y = p.y[:, None]
    z0, dz = p.z[:, first], p.z[:, second] - p.z[:, first]
    f0, slope = _phi(ctx.loss, z0, y), np.sum(_dphi(ctx.loss, z0, y) * dz, axis=-1)
    values = [2 / gamma**2 * (_phi(ctx.loss, z0 + gamma * dz, y) - f0 - gamma * slope)
              for gamma in (1.0, 0.5, 0.1)]
    observed = np.stack(values, axis=2)
    return _bound("curvature", claim, declared, observed, lambda n: p.where(n // (first.size * 3)), ctx.rtol)


def _check_value_at_zero(ctx: _Context) -> LossCheck:
    labels = np.unique(ctx.lines.y)
    phi0 = _phi(ctx.loss, np.zeros((labels.size, ctx.points.z.shape[2])), labels)
    return _bound("value_at_zero_bound", "φ(0, y) ≤ value_at_zero_bound() for the declared labels",
                  float(ctx.loss.value_at_zero_bound()), phi0, lambda i: f"at label y = {labels[i]:.4g}",
                  ctx.rtol)


def _sample_thetas(ctx: _Context, count: int) -> np.ndarray:
    flat = ctx.points.theta.reshape(-1, ctx.points.theta.shape[2])
    return flat[ctx.rng.choice(flat.shape[0], size=min(count, flat.shape[0]), replace=False)]


def _scores(X: np.ndarray, theta: np.ndarray, k: int) -> np.ndarray:
    """Θᵀx for every row of X: shape (n, k)."""
    return np.asarray(X @ theta.reshape(-1, k))


def _check_value(ctx: _Context) -> LossCheck:
    claim = "value(θ) equals the mean of φ(Θᵀx_i, y_i) over the loss's dataset"
    data, k = ctx.loss.data, ctx.points.z.shape[2]
    if data.is_distributed:
        return LossCheck("value", claim, None, None, None, "the dataset is Dask-backed")
    thetas = _sample_thetas(ctx, 4)
    want = np.array([np.mean(_phi(ctx.loss, _scores(data.X, t, k), data.y)) for t in thetas])
    got = np.array([ctx.loss.value(t) for t in thetas])
    return _agreement("value", claim, np.abs(got - want), ctx.rtol * (1.0 + np.abs(want)),
                      lambda i: f"at ‖θ‖₂ = {np.linalg.norm(thetas[i]):.4g}")


def _directional_gap(loss: Loss, theta: np.ndarray, grad: np.ndarray, u: np.ndarray,
                     rtol: float) -> tuple[float, float]:
    """(gap, tol) of ⟨grad, u⟩ against the one-sided differences of ``loss.value`` along u."""

    def along(s: np.ndarray) -> np.ndarray:
        return np.array([loss.value(theta + float(si) * u) for si in s])

    zero = np.zeros(1)
    gap, tol = _bracket_gap(along, np.array([grad @ u]), zero, zero + np.linalg.norm(theta), rtol)
    return float(gap[0]), float(tol[0])


def _check_gradient(ctx: _Context) -> LossCheck:
    thetas = _sample_thetas(ctx, 3)
    gaps, tols, where = [], [], []
    for theta in thetas:
        grad = np.asarray(ctx.loss.gradient(theta), dtype=np.float64)
        for _ in range(2):
            u = ctx.rng.standard_normal(theta.size)
            gap, tol = _directional_gap(ctx.loss, theta, grad, u / np.linalg.norm(u), ctx.rtol)
            gaps.append(gap)
            tols.append(tol)
            where.append(f"at ‖θ‖₂ = {np.linalg.norm(theta):.4g}, along a random unit direction")
    return _agreement("gradient", "⟨gradient(θ), u⟩ lies between one-sided finite differences of value(θ)",
                      np.array(gaps), np.array(tols), lambda i: where[i])


def _check_cvxpy(ctx: _Context, enabled: bool) -> LossCheck:
    claim = "the cvxpy encoding loss_phi is convex and equals Σ c·φ(Θᵀx, y)"
    if not enabled:
        return LossCheck("cvxpy", claim, None, None, None, "not requested (cvxpy=False)")
    import cvxpy as cp  # imported here: ``import dpopt.testing`` stays free of solver packages

    from dpopt.compile.cvxpy_program import loss_phi

    p, k = ctx.points, ctx.points.z.shape[2]
    counts = ctx.rng.integers(1, 4, size=p.y.size).astype(np.float64)
    theta = cp.Variable(p.theta.shape[2])
    scores = p.X @ theta if k == 1 else p.X @ cp.reshape(theta, (p.X.shape[1], k), order="C")
    try:
        expr = loss_phi(ctx.loss, scores, p.y, counts)
    except ModelError as exc:
        return LossCheck("cvxpy", claim, None, None, False, f"{exc}; or pass cvxpy=False")
    if not expr.is_convex():
        return LossCheck("cvxpy", claim, None, None, False, "the expression is not convex under cvxpy's DCP rules")
    thetas = np.concatenate([p.theta[:3, 0], p.theta[:3, 1], _sample_thetas(ctx, 4)])
    gap, tol = [], []
    for t in thetas:
        theta.value = t
        want = float(counts @ _phi(ctx.loss, _scores(p.X, t, k), p.y))
        raw = expr.value
        got = math.inf if raw is None else float(np.asarray(raw))
        gap.append(abs(got - want))
        tol.append(ctx.rtol * (1.0 + abs(want)))
    return _agreement("cvxpy", claim, np.array(gap), np.array(tol),
                      lambda i: f"at ‖θ‖₂ = {np.linalg.norm(thetas[i]):.4g}")


def _checks(ctx: _Context, cvxpy: bool) -> Iterator[LossCheck]:
    yield _check_lipschitz(ctx, 2)
    yield _check_lipschitz(ctx, math.inf)
    yield _check_dphi_bound(ctx)
    yield _check_hessian_bound(ctx)
    yield _check_d2phi_bound(ctx)
    yield _check_strong_convexity(ctx)
    yield _check_convexity(ctx)
    yield _check_curvature(ctx)
    yield _check_dphi(ctx)
    yield _check_d2phi(ctx)
    yield _check_value_at_zero(ctx)
    yield _check_value(ctx)
    yield _check_gradient(ctx)
    yield _check_cvxpy(ctx, cvxpy)


def check_loss(loss: Loss, *, domain: Domain = 1.0, n_points: int = 32, seed: int = 0,
               cvxpy: bool = True, rtol: float = 1e-6) -> LossCheckReport:
    """Check a loss's declared constants, derivatives and cvxpy encoding on its declared domain.

    Parameters
    ----------
    loss : Loss
        The loss to check, built on a dataset whose *declared* bounds (``x_bound``, ``x_norm``,
        ``y_bound``) define the rows and labels sampled; the values of the data are read only by
        the ``value`` and ``gradient`` checks.
    domain : ConstraintSet, Problem, float or None, default 1.0
        The domain of θ the constants are checked over, as a mechanism reads them: a set (e.g.
        ``problem.constraint``), a :class:`~dpopt.modeling.problem.Problem` (its constraint), a
        radius (an ℓ2 ball) or None (θ unconstrained: ``loss.constants(None)``).
    n_points : int, default 32
        The number of rows sampled from the declared row ball; each is paired with every
        sampled label and :data:`THETAS_PER_ROW` points θ.
    seed : int, default 0
        Seed of the sampling.
    cvxpy : bool, default True
        Check the cvxpy encoding; False for a loss meant only for gradient mechanisms.
    rtol : float, default 1e-6
        Relative tolerance of every comparison.

    Returns
    -------
    LossCheckReport
        Every check with its declared and observed values (``report.summary()``).

    Raises
    ------
    AssertionError
        When a check fails, listing every failed check with the constant or method, its
        declared value and the observed one.
    ModelError
        When the arguments are malformed, or the loss declares no labels to sample (a
        regression loss on a dataset without ``y_bound``).
    """
    if not isinstance(loss, Loss):
        raise ModelError(f"check_loss checks a dpopt Loss, got {type(loss).__name__}")
    if isinstance(n_points, bool) or not isinstance(n_points, int) or n_points < 2:
        raise ModelError(f"n_points must be an integer of at least 2, got {n_points!r}")
    rng = np.random.default_rng(seed)
    resolved = _resolve_domain(loss, domain)
    points = _points(loss, resolved, n_points, rng)
    lines = _lines(points, np.unique(points.y), rng)
    ctx = _Context(loss, loss.constants(_radii(resolved)), points, lines, rtol, rng)
    report = LossCheckReport(type(loss).__name__, _describe(resolved), int(points.z.shape[0] * points.z.shape[1]),
                             tuple(_checks(ctx, cvxpy)))
    if report.failures:
        lines_ = "\n".join("  " + c.failure() for c in report.failures)
        raise AssertionError(f"{report.loss} fails {len(report.failures)} check(s) over {report.domain}:\n{lines_}")
    return report
