"""Mirror-descent potentials Ψ for constraint sets (Talwar–Thakurta–Zhang 2014, Sec. 3.2).

Private mirror descent (Alg. 1) steps by

    θ_{t+1} = argmin_{θ∈C} ⟨η(∇ℒ(θ_t) + b_t) − ∇Ψ(θ_t), θ − θ_t⟩ + Ψ(θ)
            = argmin_{θ∈C} Ψ(θ) − ⟨w, θ⟩,   w = ∇Ψ(θ_t) − η(∇ℒ(θ_t) + b_t),

so a potential needs its gradient (the mirror map) and the *constrained mirror
step* ``w ↦ argmin_{θ∈C} Ψ(θ) − ⟨w, θ⟩``.  Each class below gives them, in
closed form where one is known (:meth:`Potential.mirror_step` returns ``None``
otherwise, and :mod:`dpopt.mechanisms.bregman` compiles the step to cvxpy), plus
the constants Theorem 3.2 and Corollary 3.6 need (:class:`MirrorGeometry`): the
range ``max_C Ψ − min_C Ψ``, the modulus κ of strong convexity with respect to
the Minkowski norm ``‖·‖_Q`` of a symmetric body Q, ``‖Q‖₂`` and the Gaussian
width ``G_Q`` (an upper bound).

Potentials
----------
:class:`EuclideanPotential`
    ``½‖θ − θ₀‖²`` on any set with a Euclidean projection (eq. (13)).
:class:`EntropyPotential`
    Negative entropy on the simplex; multiplicative step (eq. (14), simplex case).
:class:`QNormPotential`
    ``‖θ‖²_{Q,q} / (4(q − 1))`` for a polytope with k vertices (Fact 3.4, Claim 3.5);
    no closed-form step (cvxpy).
:class:`GroupL1Potential`
    ``Σ_j ‖θ_(j)/r‖₂^s / (sγ)`` for group-ℓ1 balls and the ℓ1 ball (singleton groups),
    Ben-Tal–Nemirovski (BTN13, Sec. 5.3.3); closed-form step up to one scalar root.
:class:`NuclearPotential`
    ``c Σ_i σ_i(Θ/r)^{1+q}`` for nuclear-norm balls of matrices (BTN13, Sec. 5.2.3);
    closed-form step through one SVD and one scalar root.

A potential that does not fit the set is refused with :class:`~dpopt.errors.ModelError`.
This module uses numpy and scipy only.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from fractions import Fraction
from functools import singledispatch
from typing import Any, ClassVar

import numpy as np

from dpopt.errors import ModelError
from dpopt.modeling.constraint_set import ConstraintSet

__all__ = [
    "EntropyPotential",
    "EuclideanPotential",
    "GroupL1Potential",
    "MirrorGeometry",
    "MirrorPoint",
    "NuclearPotential",
    "Potential",
    "QNormPotential",
    "default_potential",
    "make_potential",
    "vertex_weights",
]


@dataclass(frozen=True)
class MirrorGeometry:
    """Constants of Theorem 3.2 / Corollary 3.6 for a potential on a set.

    Attributes
    ----------
    range : float
        An upper bound on ``max_C Ψ − min_C Ψ`` (bounds ``B_Ψ(θ*, θ₁)`` for θ₁ = argmin_C Ψ).
    modulus : float
        κ: Ψ is κ-strongly convex on C with respect to ``‖·‖_Q``.
    q_radius : float
        ``‖Q‖₂ = max_{v∈Q} ‖v‖₂``.
    q_width : float
        An upper bound on the Gaussian width ``G_Q``.
    """

    range: float
    modulus: float
    q_radius: float
    q_width: float


@dataclass(frozen=True)
class MirrorPoint:
    """An iterate θ with what its potential needs to evaluate ∇Ψ(θ) there.

    Attributes
    ----------
    theta : ndarray
        The point of C.
    aux : ndarray or None
        Entropy: ``log(θ/s)`` (finite even where θ underflows); q-norm: the
        signed vertex weights α with ``Vᵀα = θ`` attaining ``‖θ‖_{Q,q}``.
    """

    theta: np.ndarray
    aux: np.ndarray | None = None


def _refuse(potential: str, constraint: ConstraintSet, fits: str) -> ModelError:
    return ModelError(
        f"the {potential} potential does not fit a {type(constraint).__name__}; it needs {fits}. "
        "Use potential='euclidean' (any set with a projection) or 'auto'"
    )


class Potential(ABC):
    """A potential Ψ on a constraint set C (Alg. 1's input Ψ).

    Parameters
    ----------
    constraint : ConstraintSet
        The set C; a set the potential does not fit raises ModelError.
    """

    name: ClassVar[str] = "potential"
    #: the reference the potential and its constants come from
    reference: ClassVar[str] = ""

    def __init__(self, constraint: ConstraintSet) -> None:
        if not isinstance(constraint, ConstraintSet):
            raise ModelError(f"a potential needs a dpopt ConstraintSet, got {type(constraint).__name__}")
        self.constraint = constraint
        self.dim = constraint.dim

    @abstractmethod
    def value(self, theta: np.ndarray) -> float:
        """Ψ(θ)."""

    @abstractmethod
    def gradient(self, point: MirrorPoint) -> np.ndarray:
        """∇Ψ at ``point.theta`` (the mirror map)."""

    @abstractmethod
    def mirror_step(self, w: np.ndarray) -> MirrorPoint | None:
        """``argmin_{θ∈C} Ψ(θ) − ⟨w, θ⟩`` in closed form, or None when there is none."""

    @abstractmethod
    def geometry(self) -> MirrorGeometry:
        """The constants of Theorem 3.2 for this potential on its set."""

    def start(self) -> MirrorPoint | None:
        """θ₁ = argmin_C Ψ (the mirror step at w = 0), or None when it needs a solver."""
        return self.mirror_step(np.zeros(self.dim))

    def point(self, theta: np.ndarray) -> MirrorPoint:
        """A :class:`MirrorPoint` for a point of C (override when ∇Ψ needs more than θ)."""
        return MirrorPoint(np.asarray(theta, dtype=np.float64))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({type(self.constraint).__name__}, dim={self.dim})"


# ---------------------------------------------------------------------------
# Euclidean
# ---------------------------------------------------------------------------


def _expected_gaussian_norm(p: int) -> float:
    """E‖g‖₂ for g ~ N(0, I_p) (the Gaussian width of the unit ℓ2 ball)."""
    return math.sqrt(2.0) * math.exp(math.lgamma((p + 1) / 2) - math.lgamma(p / 2))


class EuclideanPotential(Potential):
    """Ψ(θ) = ½‖θ − θ₀‖², θ₀ = ``C.center()`` (Sec. 3.2, eq. (13)).

    Q is the unit ℓ2 ball (κ = 1, ‖Q‖₂ = 1, G_Q = E‖g‖₂ ≤ √p) and the range is
    at most ½ diam₂(C)².  The mirror step is the Euclidean projection
    ``Π_C(θ₀ + w)`` (``C.project``), so it fits every set with a projection.
    """

    name = "euclidean"
    reference = "TTZ14 Sec. 3.2, eq. (13)"

    def __init__(self, constraint: ConstraintSet) -> None:
        super().__init__(constraint)
        self.theta0 = constraint.center()

    def value(self, theta: np.ndarray) -> float:
        d = np.asarray(theta) - self.theta0
        return 0.5 * float(d @ d)

    def gradient(self, point: MirrorPoint) -> np.ndarray:
        return point.theta - self.theta0

    def mirror_step(self, w: np.ndarray) -> MirrorPoint | None:
        try:
            return MirrorPoint(self.constraint.project(self.theta0 + w))
        except NotImplementedError:
            return None

    def geometry(self) -> MirrorGeometry:
        diam = self.constraint.diameter(2)
        return MirrorGeometry(0.5 * diam**2, 1.0, 1.0, _expected_gaussian_norm(self.dim))


# ---------------------------------------------------------------------------
# Entropy on the simplex
# ---------------------------------------------------------------------------


class EntropyPotential(Potential):
    """Negative entropy Ψ(θ) = Σ (θ_i/s) log(θ_i/s) on the simplex ``{θ ≥ 0, Σθ = s}``.

    Pinsker's inequality makes Ψ 1-strongly convex w.r.t. ``‖θ‖₁/s``, the
    Minkowski norm of Q = the ℓ1 ball of radius s (so ‖Q‖₂ = s, G_Q ≤ s√(2 ln 2p));
    the range is ln p (Sec. 3.2, simplex case of eq. (14)).  The mirror step is
    multiplicative: ``θ_{t+1} ∝ θ_t exp(−s η g̃)``, computed in the log domain.
    """

    name = "entropy"
    reference = "TTZ14 Sec. 3.2 (simplex), eq. (14)"

    def __init__(self, constraint: ConstraintSet) -> None:
        if getattr(constraint, "mirror_potential", None) != self.name:
            raise _refuse(self.name, constraint, "a Simplex (a set declaring mirror_potential = 'entropy')")
        super().__init__(constraint)
        self.scale = float(constraint.scale)  # type: ignore[attr-defined]  # the simplex's declared sum

    def value(self, theta: np.ndarray) -> float:
        from scipy import special

        u = np.asarray(theta) / self.scale
        return float(np.sum(special.xlogy(u, u)))

    def point(self, theta: np.ndarray) -> MirrorPoint:
        theta = np.asarray(theta, dtype=np.float64)
        with np.errstate(divide="ignore"):
            logs = np.log(np.maximum(theta, 0.0) / self.scale)
        return MirrorPoint(theta, np.maximum(logs, -745.0))  # exp(−745) underflows to 0 anyway

    def gradient(self, point: MirrorPoint) -> np.ndarray:
        logs = self.point(point.theta).aux if point.aux is None else point.aux
        assert logs is not None
        return (logs + 1.0) / self.scale

    def mirror_step(self, w: np.ndarray) -> MirrorPoint:
        z = self.scale * np.asarray(w, dtype=np.float64)
        top = float(np.max(z))  # log-sum-exp by hand: scipy's costs ~200 µs a call on small arrays
        logs = z - (top + math.log(float(np.sum(np.exp(z - top)))))
        return MirrorPoint(self.scale * np.exp(logs), logs)

    def geometry(self) -> MirrorGeometry:
        p = self.dim
        return MirrorGeometry(math.log(p) if p > 1 else 0.0, 1.0, self.scale,
                              self.scale * math.sqrt(2.0 * math.log(2.0 * p)))


# ---------------------------------------------------------------------------
# q-norm potential for polytopes (Fact 3.4, Claim 3.5)
# ---------------------------------------------------------------------------


def claim_3_5_exponent(k: int) -> float:
    """q = ln k/(ln k − 1) (Claim 3.5), clamped to 2 and rounded to a small rational.

    Fact 3.4 needs q ∈ (1, 2]; the claim's q exceeds 2 when ln k < 2 (k ≤ 7), and
    is not even defined for k ≤ e, so q = 2 there.  q is rounded to a fraction
    with denominator ≤ 64 (cvxpy's p-norm cone needs a rational exponent); the
    constants below use the rounded q exactly.
    """
    if k <= 7:
        return 2.0
    q = math.log(k) / (math.log(k) - 1.0)
    return float(Fraction(q).limit_denominator(64))


class QNormPotential(Potential):
    """Ψ(θ) = ‖θ‖²_{Q,q} / (4(q − 1)) for a polytope C = conv{v_1, …, v_k} (Fact 3.4).

    ``‖θ‖_{Q,q} = min{‖α‖_q : Σ α_i v_i = θ}`` over signed weights α, Q = conv(C ∪ −C).
    Ψ is 1-strongly convex w.r.t. ``‖·‖_{Q,q}`` (Fact 3.4) and, since
    ``‖α‖₁ ≤ k^{1−1/q}‖α‖_q``, κ = k^{−2(1−1/q)}-strongly convex w.r.t. ``‖·‖_Q``
    (Claim 3.5: κ = 1/e² at q = ln k/(ln k − 1), which the paper states as
    "O(1)").  Range ≤ 1/(4(q − 1)) (a point of C has convex weights, ‖α‖_q ≤ 1),
    ‖Q‖₂ = max_i ‖v_i‖₂ and G_Q ≤ ‖Q‖₂ √(2 ln 2k).

    The mirror step has no closed form: it is compiled to cvxpy
    (:mod:`dpopt.mechanisms.bregman`).  ∇Ψ(θ) = u solves ``V u = ∇_α ψ(α*)`` for
    the optimal weights α* (KKT of the infimum), which the step returns.

    Parameters
    ----------
    constraint : ConstraintSet
        A polytope with its vertex list: VertexPolytope, Simplex, L1Ball, or a
        LinfBall / other polytope with at most ``max_vertices`` vertices.
    max_vertices : int
        Refuse polytopes with more vertices (the step has k extra variables).
    """

    name = "qnorm"
    reference = "TTZ14 Fact 3.4, Claim 3.5, eq. (14)"

    def __init__(self, constraint: ConstraintSet, *, max_vertices: int = 10_000) -> None:
        n = constraint.n_vertices if isinstance(constraint, ConstraintSet) else math.inf
        if isinstance(n, float) or n > max_vertices:
            raise _refuse(self.name, constraint, f"a polytope with a vertex list of at most {max_vertices} vertices")
        super().__init__(constraint)
        self.V = constraint.vertices(max_count=max_vertices)  # (k, p)
        self.k = int(self.V.shape[0])
        self.q = claim_3_5_exponent(self.k)
        self.coef = 1.0 / (4.0 * (self.q - 1.0))

    def _alpha_gradient(self, alpha: np.ndarray) -> np.ndarray:
        """∇_α of coef·‖α‖_q²: 2·coef·‖α‖_q^{2−q} sign(α)|α|^{q−1}."""
        norm = float(np.linalg.norm(alpha, self.q))
        if norm == 0.0:
            return np.zeros_like(alpha)
        return 2.0 * self.coef * norm ** (2.0 - self.q) * np.sign(alpha) * np.abs(alpha) ** (self.q - 1.0)

    def weights(self, theta: np.ndarray) -> np.ndarray:
        """Minimal-ℓq signed weights α with Vᵀα = θ, by :func:`vertex_weights` (SLSQP in
        :mod:`dpopt.compile.qnorm_weights`; small k only)."""
        return vertex_weights(self, np.asarray(theta, dtype=np.float64))

    def point(self, theta: np.ndarray) -> MirrorPoint:
        theta = np.asarray(theta, dtype=np.float64)
        return MirrorPoint(theta, self.weights(theta))

    def value(self, theta: np.ndarray) -> float:
        alpha = self.weights(theta)
        return self.coef * float(np.linalg.norm(alpha, self.q)) ** 2

    def gradient(self, point: MirrorPoint) -> np.ndarray:
        alpha = point.aux if point.aux is not None else self.weights(point.theta)
        return np.linalg.lstsq(self.V, self._alpha_gradient(alpha), rcond=None)[0]

    def mirror_step(self, w: np.ndarray) -> MirrorPoint | None:
        return None  # no closed form: dpopt.mechanisms.bregman compiles it

    def geometry(self) -> MirrorGeometry:
        kappa = float(self.k) ** (-2.0 * (1.0 - 1.0 / self.q))
        radius = float(np.max(np.linalg.norm(self.V, axis=1)))
        return MirrorGeometry(self.coef, kappa, radius, radius * math.sqrt(2.0 * math.log(2.0 * self.k)))


# ---------------------------------------------------------------------------
# Separable power potentials: group-ℓ1 balls (BTN13 5.3.3) and nuclear-norm balls (5.2.3)
# ---------------------------------------------------------------------------


@singledispatch
def vertex_weights(potential: QNormPotential, theta: np.ndarray) -> np.ndarray:
    """``argmin ‖α‖_q s.t. Vᵀα = θ``: the signed vertex weights of a q-norm potential at θ.

    A small smooth program that needs a solver, so this layer only names it: the compile layer
    registers the algorithm for the potential's type with ``@vertex_weights.register``
    (:mod:`dpopt.compile.qnorm_weights`, SLSQP, imported with this module by the package root).

    Raises
    ------
    ModelError
        For a potential type no algorithm is registered for.
    """
    raise ModelError(f"no vertex-weight program is registered for a {type(potential).__name__}: register one "
                     "with @dpopt.numerics.potentials.vertex_weights.register")


def power_ball_step(norms: np.ndarray, s: float, a: float) -> np.ndarray:
    """ρ = argmin {Σ_j ρ_j^s/(s a) − n_j ρ_j : ρ ≥ 0, Σ ρ_j ≤ 1} for n ≥ 0, s ∈ (1, 2].

    KKT: ρ_j(λ) = (a·max(n_j − λ, 0))^{1/(s−1)} with λ ≥ 0 the smallest value making
    Σρ_j(λ) ≤ 1 (λ = 0 if the unconstrained point is inside).  f(λ) = Σρ_j(λ) − 1 is
    convex and decreasing, so Newton's method started left of the root increases
    monotonically to it without overshooting.  The start λ₀ = max(0, max_j n_j − 1/a)
    lies left of the root (there ρ_top ≥ 1) and keeps every a(n_j − λ) ≤ 1, so
    nothing overflows although 1/(s−1) can be large.
    """
    norms = np.asarray(norms, dtype=np.float64)
    e = 1.0 / (s - 1.0)
    top = float(np.max(norms)) if norms.size else 0.0
    if top <= 0.0:
        return np.zeros_like(norms)

    def rho(lam: float) -> tuple[np.ndarray, np.ndarray]:
        base = a * np.maximum(norms - lam, 0.0)
        power = base ** (e - 1.0)
        return power * base, power  # ρ and ρ / base (for the derivative)

    lam = max(0.0, top - 1.0 / a)
    r, _ = rho(lam)
    if lam == 0.0 and float(r.sum()) <= 1.0:
        return r
    for _ in range(100):
        r, dr = rho(lam)
        f = float(r.sum()) - 1.0
        slope = -e * a * float(dr.sum())  # f'(λ) < 0 left of max n_j
        if f <= 0.0 or slope == 0.0:
            break
        step = -f / slope
        lam += step
        if step <= 4.0 * np.finfo(float).eps * max(lam, top):
            break
    r, _ = rho(lam)
    total = float(r.sum())
    return r / total if total > 1.0 else r


def btn_group_constants(m: int) -> tuple[float, float]:
    """(s, γ) of BTN13 Sec. 5.3.3 for m groups: s = 2, γ = 1 (m = 1); s = 2, γ = ½ (m = 2);
    s = 1 + 1/ln m, γ = 1/(e ln m) (m ≥ 3).  Then Σ_j ‖x_(j)‖₂^s/(sγ) is 1-strongly convex
    w.r.t. the group norm Σ_j ‖x_(j)‖₂ on its unit ball, with range 1/(sγ) = O(log m).

    The paper (Sec. 3.2, grouped ℓ1) writes M for the exponent and calls the groups "M blocks";
    the exponent and the constants depend on the number of groups m = ⌈p/k⌉, as here.
    """
    if m == 1:
        return 2.0, 1.0
    if m == 2:
        return 2.0, 0.5
    return 1.0 + 1.0 / math.log(m), 1.0 / (math.e * math.log(m))


def _group_spec(constraint: ConstraintSet) -> tuple[list[np.ndarray], float] | None:
    """(groups as index arrays, radius) for a set declaring ``mirror_potential = "group-l1"``
    (an L1Ball: singleton groups; a GroupL1Ball: its groups), else None."""
    if getattr(constraint, "mirror_potential", None) != "group-l1":
        return None
    return _group_indices(constraint), float(_ball_radius(constraint))


def _group_indices(constraint: Any) -> list[np.ndarray]:
    """The set's groups (``groups`` or ``group_indices``), or singletons when it has none."""
    for attr in ("groups", "group_indices"):
        g = getattr(constraint, attr, None)
        if g is not None:
            return [np.asarray(x, dtype=np.intp).ravel() for x in g]
    return [np.array([i], dtype=np.intp) for i in range(constraint.dim)]


def _ball_radius(constraint: Any) -> float:
    for attr in ("r", "radius_value", "_radius_value"):
        v = getattr(constraint, attr, None)
        if isinstance(v, (int, float)):
            return float(v)
    return float(constraint.radius(2))  # for both balls the ℓ2 radius equals the ball's radius


class GroupL1Potential(Potential):
    """Ψ(θ) = Σ_j ‖θ_(j)/r‖₂^s / (sγ) on the group-ℓ1 ball ``{Σ_j ‖θ_(j)‖₂ ≤ r}`` (BTN13 5.3.3).

    With m groups, (s, γ) from :func:`btn_group_constants`: Ψ is 1-strongly convex
    w.r.t. ``‖θ‖_Q = Σ_j ‖θ_(j)‖₂ / r`` on C (Q = C), range 1/(sγ) ≈ e ln m,
    ‖Q‖₂ = r, G_Q ≤ r(√(max group size) + √(2 ln m)).  The ℓ1 ball is the case
    of m = p singleton groups.  Mirror step: θ_(j) = r ρ_j w_(j)/‖w_(j)‖ with ρ from
    :func:`power_ball_step` (closed form up to one scalar root).
    """

    name = "group-l1"
    reference = "TTZ14 Sec. 3.2 (grouped ℓ1), eq. (15); BTN13 Sec. 5.3.3"

    def __init__(self, constraint: ConstraintSet) -> None:
        spec = _group_spec(constraint)
        if spec is None:
            raise _refuse(self.name, constraint, "an L1Ball or a GroupL1Ball")
        super().__init__(constraint)
        self.groups, self.r = spec
        self.m = len(self.groups)
        self.labels = np.empty(self.dim, dtype=np.intp)
        for j, g in enumerate(self.groups):
            self.labels[g] = j
        self.s, self.gamma = btn_group_constants(self.m)

    def _norms(self, x: np.ndarray) -> np.ndarray:
        return np.sqrt(np.bincount(self.labels, weights=x * x, minlength=self.m))

    def value(self, theta: np.ndarray) -> float:
        return float(np.sum(self._norms(np.asarray(theta) / self.r) ** self.s)) / (self.s * self.gamma)

    def gradient(self, point: MirrorPoint) -> np.ndarray:
        x = point.theta / self.r
        norms = self._norms(x)
        with np.errstate(divide="ignore"):
            factor = np.where(norms > 0, norms ** (self.s - 2.0), 0.0)
        return x * factor[self.labels] / (self.gamma * self.r)

    def mirror_step(self, w: np.ndarray) -> MirrorPoint:
        v = self.r * np.asarray(w, dtype=np.float64)  # argmin over the unit ball in x = θ/r
        norms = self._norms(v)
        rho = power_ball_step(norms, self.s, self.gamma)
        with np.errstate(divide="ignore", invalid="ignore"):
            factor = np.where(norms > 0, rho / norms, 0.0)
        return MirrorPoint(self.r * v * factor[self.labels])

    def geometry(self) -> MirrorGeometry:
        size = max(len(g) for g in self.groups)
        width = self.r * (math.sqrt(size) + math.sqrt(2.0 * math.log(max(self.m, 2))))
        return MirrorGeometry(1.0 / (self.s * self.gamma), 1.0, self.r, width)


def btn_nuclear_constants(m: int) -> tuple[float, float]:
    """(q, c) of BTN13 Sec. 5.2.3: q = 1/(2 ln 2m), c = 4√e·ln(2m) / (2^q (1 + q)).

    The paper prints c = 4√(e log 2m)/(2^q(1 + q)); with that c the range max_C Ψ = c
    would be O(√log m), contradicting its own "max Ψ = O(log m)" and BTN13, where the
    factor is 4√e·ln(2m): dpopt uses BTN13's constant.
    """
    q = 1.0 / (2.0 * math.log(2.0 * m))
    return q, 4.0 * math.sqrt(math.e) * math.log(2.0 * m) / (2.0**q * (1.0 + q))


def _matrix_shape(constraint: Any) -> tuple[int, int]:
    for attr in ("shape", "matrix_shape"):
        shp = getattr(constraint, attr, None)
        if shp is not None and len(shp) == 2:
            return int(shp[0]), int(shp[1])
    raise ModelError(f"{type(constraint).__name__} does not expose its matrix shape")  # pragma: no cover


class NuclearPotential(Potential):
    """Ψ(θ) = c Σ_i σ_i(Θ/r)^{1+q} for the nuclear-norm ball ``{‖Θ‖_* ≤ r}`` (BTN13 5.2.3).

    θ is the matrix Θ (rows × cols) flattened row-major; m = min(rows, cols);
    (q, c) from :func:`btn_nuclear_constants`.  Ψ is 1-strongly convex w.r.t.
    ``‖Θ‖_*/r`` on C (Q = C), range c = O(log m), ‖Q‖₂ = r,
    G_Q ≤ r(√rows + √cols) (eq. (16)).  ∇Ψ = (c(1+q)/r) U diag((σ/r)^q) Vᵀ.
    Mirror step (von Neumann: Ψ and C are unitarily invariant): the SVD
    ``rW = U diag(n) Vᵀ`` and Θ = r U diag(ρ) Vᵀ with ρ from
    :func:`power_ball_step` on the singular values.
    """

    name = "nuclear"
    reference = "TTZ14 Sec. 3.2 (low-rank matrices), eq. (16); BTN13 Sec. 5.2.3"

    def __init__(self, constraint: ConstraintSet) -> None:
        if getattr(constraint, "mirror_potential", None) != self.name:
            raise _refuse(self.name, constraint, "a NuclearNormBall (a set declaring mirror_potential = 'nuclear')")
        super().__init__(constraint)
        self.shape = _matrix_shape(constraint)
        self.r = _ball_radius(constraint)
        self.m = min(self.shape)
        self.q, self.c = btn_nuclear_constants(self.m)

    def value(self, theta: np.ndarray) -> float:
        sv = np.linalg.svd(np.asarray(theta).reshape(self.shape) / self.r, compute_uv=False)
        return self.c * float(np.sum(sv ** (1.0 + self.q)))

    def gradient(self, point: MirrorPoint) -> np.ndarray:
        U, sv, Vt = np.linalg.svd(point.theta.reshape(self.shape) / self.r, full_matrices=False)
        G = (U * (self.c * (1.0 + self.q) * sv**self.q)) @ Vt / self.r
        return G.reshape(-1)

    def mirror_step(self, w: np.ndarray) -> MirrorPoint:
        U, sv, Vt = np.linalg.svd(self.r * np.asarray(w).reshape(self.shape), full_matrices=False)
        rho = power_ball_step(sv, 1.0 + self.q, 1.0 / (self.c * (1.0 + self.q)))
        return MirrorPoint(((U * (self.r * rho)) @ Vt).reshape(-1))

    def geometry(self) -> MirrorGeometry:
        rows, cols = self.shape
        return MirrorGeometry(self.c, 1.0, self.r, self.r * (math.sqrt(rows) + math.sqrt(cols)))


# ---------------------------------------------------------------------------
# choosing a potential
# ---------------------------------------------------------------------------

POTENTIALS: dict[str, type[Potential]] = {
    "euclidean": EuclideanPotential,
    "entropy": EntropyPotential,
    "qnorm": QNormPotential,
    "group-l1": GroupL1Potential,
    "nuclear": NuclearPotential,
}


def default_potential(constraint: ConstraintSet) -> Potential:
    """The potential Sec. 3.2 pairs with the set, read from its declaration
    :attr:`~dpopt.modeling.constraint_set.ConstraintSet.mirror_potential`: entropy (simplex), group-ℓ1
    (ℓ1 and group-ℓ1 balls), nuclear (nuclear-norm balls), q-norm (vertex polytopes), else
    Euclidean."""
    name = constraint.mirror_potential
    if name not in POTENTIALS:
        raise ModelError(
            f"{type(constraint).__name__} declares mirror_potential={name!r}, which is not one of "
            f"{', '.join(POTENTIALS)}"
        )
    return POTENTIALS[name](constraint)


def make_potential(spec: str | Potential, constraint: ConstraintSet) -> Potential:
    """A potential for ``constraint`` from a name (``"auto"`` or a key of POTENTIALS) or an instance.

    Raises
    ------
    ModelError
        For an unknown name, or a potential that does not fit the set.
    """
    if isinstance(spec, Potential):
        if spec.constraint != constraint and spec.constraint is not constraint:
            raise ModelError(
                f"the potential was built for a different set ({type(spec.constraint).__name__}, "
                f"dim {spec.dim}) than the problem's constraint; build it from problem.constraint"
            )
        return spec
    if spec == "auto":
        return default_potential(constraint)
    if spec not in POTENTIALS:
        raise ModelError(f"unknown potential {spec!r}; use 'auto' or one of {', '.join(POTENTIALS)}")
    return POTENTIALS[spec](constraint)
