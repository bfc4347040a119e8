"""The base class of constraint sets and the results and helpers the sets share.

:class:`ConstraintSet` is the protocol every set C ⊂ ℝ^p answers (linear minimization,
support function, projection, centre, radii and diameters, vertices, Gaussian width);
:class:`GaussianWidth` is the result of a Gaussian-width computation.  The concrete sets
live in :mod:`dpopt.modeling.balls` (ℓ1, ℓ2, ℓ∞ balls), :mod:`dpopt.modeling.boxes` (simplex,
box, orthant), :mod:`dpopt.modeling.vertex_polytope` (vertex hull) and
:mod:`dpopt.modeling.structured_sets` (H-polytopes, group-ℓ1 and nuclear-norm balls).
The sets are immutable and public: they describe a parameter domain, never data.
"""

from __future__ import annotations

import math
import numbers
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Literal

import numpy as np

from dpopt.errors import ModelError
from dpopt.modeling.variable import Variable, dimension_of

if TYPE_CHECKING:
    from dpopt.modeling.expressions import Constraint

__all__ = [
    "ConstraintSet",
    "GaussianWidth",
    "L1ProxRule",
    "Norm",
    "WidthMethod",
]


Norm = Literal[1, 2, "inf"]


WidthMethod = Literal["closed-form", "quadrature", "monte-carlo"]


L1ProxRule = Literal["threshold-then-project", "project"]


# Cap on the number of floats materialised at once by batched computations.
BATCH_FLOATS = 1 << 22


@dataclass(frozen=True)
class GaussianWidth:
    """The Gaussian width ``G_C = E_g[sup_{v∈C} ⟨g, v⟩]`` of a set, with bounds.

    Attributes
    ----------
    value : float
        The estimate (exact up to rounding for ``"closed-form"``).
    low, high : float
        An interval for ``G_C``: equal to ``value`` for ``"closed-form"``; the
        quadrature error estimate plus the truncated tail for ``"quadrature"``;
        a ``confidence`` t-interval for ``"monte-carlo"``.
    method : {"closed-form", "quadrature", "monte-carlo"}
        How the value was obtained.
    n_samples : int
        Number of Gaussian samples (``0`` unless Monte Carlo).
    confidence : float
        Confidence level of ``[low, high]`` (``1.0`` unless Monte Carlo; the
        quadrature interval rests on scipy's error *estimate*).
    """

    value: float
    low: float
    high: float
    method: WidthMethod
    n_samples: int = 0
    confidence: float = 1.0

    def summary(self) -> str:
        """A one-line readable description."""
        if self.method == "monte-carlo":
            return (
                f"Gaussian width {self.value:.6g} ({self.method}, n={self.n_samples}, "
                f"{100 * self.confidence:g}% CI [{self.low:.6g}, {self.high:.6g}])"
            )
        if self.method == "quadrature":
            return f"Gaussian width {self.value:.10g} ({self.method}, [{self.low:.10g}, {self.high:.10g}])"
        return f"Gaussian width {self.value:.10g} ({self.method})"


def _norm_key(norm: object) -> Norm:
    if isinstance(norm, bool):
        raise ModelError(f"unknown norm {norm!r}: use 1, 2 or 'inf'")
    if norm == 1:
        return 1
    if norm == 2:
        return 2
    if norm == "inf" or (isinstance(norm, (int, float)) and math.isinf(norm) and norm > 0):
        return "inf"
    raise ModelError(f"unknown norm {norm!r}: use 1, 2 or 'inf'")


def vector_norm(a: np.ndarray, norm: Norm, axis: int) -> np.ndarray:
    order = {1: 1, 2: 2, "inf": np.inf}[norm]
    return np.asarray(np.linalg.norm(a, ord=order, axis=axis))


def positive_finite(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ModelError(f"{name} must be a positive finite number, got {type(value).__name__}")
    v = float(value)
    if not math.isfinite(v) or v <= 0:
        raise ModelError(f"{name} must be a positive finite number, got {value!r}")
    return v


def positive_int(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
        raise ModelError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def check_vector(x: object, dim: int, name: str, *, finite: bool = True) -> np.ndarray:
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise ModelError(f"{name} must be a numeric vector of length {dim}") from None
    if arr.shape != (dim,):
        raise ModelError(f"{name} must have shape ({dim},), got shape {arr.shape}")
    if finite and not np.all(np.isfinite(arr)):
        raise ModelError(f"{name} contains NaN or inf entries")
    return arr


def unit_vector(dim: int, i: int, value: float) -> np.ndarray:
    out = np.zeros(dim)
    out[i] = value
    return out


def project_simplex(v: np.ndarray, scale: float) -> np.ndarray:
    """Euclidean projection onto ``{w ≥ 0 : Σ w = scale}`` by sorting.

    The O(p log p) algorithm of Held et al. (1974), Duchi et al. (2008) and
    Condat (2016, Alg. 1): the projection is ``max(v − τ, 0)`` with the
    threshold ``τ`` read off the sorted cumulative sums.
    """
    u = np.sort(v)[::-1]
    css = np.cumsum(u) - scale
    ind = np.arange(1, v.size + 1)
    rho = np.flatnonzero(u - css / ind > 0)[-1]  # never empty: holds at index 0
    tau = css[rho] / (rho + 1.0)
    return np.maximum(v - tau, 0.0)


class ConstraintSet(ABC):
    """A closed convex set ``C ⊂ ℝ^dim``, compact unless it declares ``bounded = False``.

    Subclasses are immutable (frozen dataclasses).  The public methods validate
    their vector arguments (shape ``(dim,)``, finite entries) and raise
    :class:`~dpopt.errors.ModelError` otherwise; every returned array is a
    fresh copy.

    Subclasses implement :meth:`_lmo`, :meth:`_project`, :meth:`center`,
    :meth:`_radius`, :meth:`_diameter`, :attr:`n_vertices`, :meth:`_vertices`
    and :attr:`is_symmetric`; they may override :meth:`_support`,
    :meth:`_support_many` and :meth:`gaussian_width` with closed forms.

    Capabilities are *declared* by class attributes, which the compilers,
    backends and the a-priori fallback read instead of switching on the type
    (the defaults are the conservative answers, so a new set that declares
    nothing is refused where it would be wrong, never mis-solved):

    ``polyhedral``
        ``C`` is a polyhedron and its solver encodings use linear constraints
        only, so a quadratic objective over it is a QP (QP-only backends).
    ``exact_projection``
        :meth:`project` is closed-form, exact up to rounding (the a-priori
        fallback of :mod:`dpopt.numerics.apg` needs it).
    ``l1_prox``
        How ``argmin_x ½‖x − v‖² + t‖x‖₁ + ι_C(x)`` is computed exactly:
        ``"threshold-then-project"`` when it is ``P_C(soft_threshold(v, t))``
        (projections that preserve signs and the order of magnitudes, Yu 2013),
        ``"project"`` when ‖·‖₁ is constant on ``C``, ``None`` when there is no
        closed form.
    ``closed_form_lmo``
        :meth:`lmo` is a closed form (reported as such by Frank–Wolfe releases).
    ``lmo_is_lp``
        :meth:`lmo` is a linear program that mechanisms compile
        (:func:`dpopt.backends.programs.prepare_polytope_lmo`) and solve with a
        backend; such a set also provides ``A``, ``b`` and ``clip_to_box``.
    ``norm_ball``
        ``C = {θ : ‖θ‖_q ≤ r}`` for this q (1, 2 or ``"inf"``), centred at 0, so
        ``radius(q)`` is r (backends use it for bounds and trust regions).
    ``mirror_potential``
        The key of :data:`dpopt.numerics.potentials.POTENTIALS` that
        ``potential="auto"`` pairs with the set (Sec. 3.2 of TTZ14); the
        potential's own requirements then hold for the set.
    ``project_solver_points``
        Whether a solver's answer on ``C`` is projected back onto it (``False``
        when :meth:`project` is itself an iterative solve: the answer is kept,
        feasible to the solver's tolerance).
    ``bounded``
        ``C`` is bounded: radii, diameters, the support function and the LMO are
        finite.  ``False`` for a cone such as :class:`NonNegative`, which has a
        projection but no linear minimization oracle: mechanisms that need one
        (Frank–Wolfe, mirror descent) refuse the set before the charge.
    ``has_lmo``
        :meth:`lmo` answers (closed form or a linear program).  ``False`` for an unbounded
        set and for an intersection whose LMO is neither (an ℓ2 ball with rows):
        Frank–Wolfe refuses such a set before the charge.

    ``grid_projection``
        :meth:`project_to_grid` keeps a grid point on the grid (a coordinate-wise clip to
        the grid points inside the bounds: boxes, the orthant, bounds alone).

    Two methods serve releases: :meth:`project_to_grid` (the projection of a grid release,
    kept on the grid where the set allows it) and :meth:`relaxation` (a superset with a
    closed-form projection, over which objective perturbation may solve before projecting).

    A set describes itself to the solvers by :meth:`as_constraints` (constraints on the variable
    in cvxpy's spelling, which :mod:`dpopt.compile` translates for every solver), or, for a set
    those cannot write (a nuclear-norm or submodular-norm ball, the hull of vertices), by an
    encoding registered in :mod:`dpopt.compile` (``@dpopt.compile.cvxpy_program.set_constraints
    .register``), which takes precedence.
    """

    dim: int
    polyhedral: ClassVar[bool] = False
    exact_projection: ClassVar[bool] = False
    l1_prox: ClassVar[L1ProxRule | None] = None
    closed_form_lmo: ClassVar[bool] = False
    lmo_is_lp: ClassVar[bool] = False
    norm_ball: ClassVar[Norm | None] = None
    mirror_potential: ClassVar[str] = "euclidean"
    project_solver_points: ClassVar[bool] = True
    bounded: ClassVar[bool] = True
    has_lmo: ClassVar[bool] = True
    grid_projection: ClassVar[bool] = False

    # -- linear optimisation -------------------------------------------------

    def lmo(self, g: np.ndarray) -> np.ndarray:
        """Linear minimization oracle: a point of ``argmin_{v∈C} ⟨g, v⟩``.

        Parameters
        ----------
        g : array_like, shape (dim,)
            The linear objective (e.g. a noisy gradient in Frank–Wolfe).

        Returns
        -------
        numpy.ndarray, shape (dim,)
            A minimiser; an extreme point of ``C`` for every set in this module.
        """
        return self._lmo(check_vector(g, self.dim, "g"))

    def support(self, g: np.ndarray) -> float:
        """Support function ``h_C(g) = max_{v∈C} ⟨g, v⟩ = ⟨g, lmo(−g)⟩``."""
        return float(self._support(check_vector(g, self.dim, "g")))

    def _support(self, g: np.ndarray) -> float:
        return float(g @ self._lmo(-g))

    def _support_many(self, G: np.ndarray) -> np.ndarray:
        """Support function of every row of ``G`` (n, dim); override to vectorise."""
        return np.array([self._support(row) for row in G])

    @abstractmethod
    def _lmo(self, g: np.ndarray) -> np.ndarray: ...

    # -- projection and membership -------------------------------------------

    def project(self, v: np.ndarray) -> np.ndarray:
        """Euclidean projection ``argmin_{w∈C} ‖w − v‖₂``."""
        return self._project(check_vector(v, self.dim, "v"))

    @abstractmethod
    def _project(self, v: np.ndarray) -> np.ndarray: ...

    def project_with_error(self, v: np.ndarray) -> tuple[np.ndarray, float]:
        """(x, err): a point x ∈ C with ``‖x − P_C(v)‖₂ ≤ err``.

        The closed-form projections of the balls and the simplex are exact up to
        rounding (err = 0); sets with an iterative projection override this with
        a certified bound, or ``inf`` when they have none (dpopt's optimality
        certificates then refuse to certify).
        """
        return self.project(v), 0.0

    def project_to_grid(self, v: np.ndarray, step: float) -> tuple[np.ndarray, bool]:
        """``(x, on_grid)``: the projection of a release ``v`` on the grid γℤ^p (γ = ``step``).

        ``v`` itself when it is already in C (so a grid release stays on its grid); otherwise
        :meth:`project`, off the grid (``on_grid`` False).  Sets whose projection is a
        coordinate-wise clip (boxes, the orthant, bounds) override this to clip to the grid
        points inside their bounds.  A function of the released ``v`` only: post-processing.
        """
        arr = check_vector(v, self.dim, "v")
        if self.contains(arr, tol=0.0):
            return arr.copy(), True
        return self.project(arr), False

    def as_constraints(self, w: Variable) -> list[Constraint] | None:
        """C written as constraints on ``w``, or None (the default) when the set does not say.

        The constraints are the modeling layer's, in cvxpy's spelling
        (:mod:`dpopt.modeling.expressions`): ``A @ w <= b``, ``A @ w == b``, ``a @ w >= c``,
        ``w >= 0``, ``norm1(w) <= r``, ``norm2(w) <= r``, ``norm_inf(w) <= r``, with public
        constants only.  The compile layer translates them for a solver (the cvxpy encoding of a
        set with no encoding registered for its class), so a set that declares them needs no
        code in :mod:`dpopt.compile`.  A ``polyhedral`` set returns linear constraints only.

        Parameters
        ----------
        w : Variable
            A variable of the set's dimension, standing for the point of C.
        """
        return None

    def relaxation(self) -> ConstraintSet | None:
        """A superset of C with a closed-form projection (``exact_projection``), or None.

        C itself when it has one; polytopes return their bounding box; None otherwise.
        Objective perturbation solves over it and projects its release onto C.
        """
        return self if self.exact_projection else None

    def contains(self, v: np.ndarray, tol: float = 1e-9) -> bool:
        """Whether ``v`` lies in ``C`` up to a tolerance.

        ``v`` counts as a member when its Euclidean distance to ``C`` is at
        most ``tol · max(1, ‖C‖₂)`` (``‖C‖₂ = radius(2)``), so the test is
        scale-aware and the same for every set.  Vectors with NaN or inf
        entries are not members.

        Raises
        ------
        ModelError
            If ``v`` does not have shape ``(dim,)`` or ``tol`` is negative.
        """
        if not (tol >= 0):
            raise ModelError(f"tol must be non-negative, got {tol!r}")
        arr = check_vector(v, self.dim, "v", finite=False)
        if not np.all(np.isfinite(arr)):
            return False
        return self._distance(arr) <= tol * max(1.0, self.radius(2))

    def _distance(self, v: np.ndarray) -> float:
        return float(np.linalg.norm(v - self._project(v)))

    # -- geometry --------------------------------------------------------------

    @abstractmethod
    def center(self) -> np.ndarray:
        """A fixed, data-independent point of ``C`` (e.g. θ0 of the ℓ2 potential)."""

    def radius(self, norm: Norm = 2) -> float:
        """``‖C‖ = max_{v∈C} ‖v‖`` in the ℓ1, ℓ2 or ℓ∞ norm (``norm`` 1, 2 or ``"inf"``)."""
        return float(self._radius(_norm_key(norm)))

    def diameter(self, norm: Norm = 2) -> float:
        """``max_{u,v∈C} ‖u − v‖`` in the ℓ1, ℓ2 or ℓ∞ norm."""
        return float(self._diameter(_norm_key(norm)))

    @abstractmethod
    def _radius(self, norm: Norm) -> float: ...

    @abstractmethod
    def _diameter(self, norm: Norm) -> float: ...

    @property
    @abstractmethod
    def is_symmetric(self) -> bool:
        """Whether ``C = −C`` (centrally symmetric about the origin)."""

    # -- vertices --------------------------------------------------------------

    @property
    @abstractmethod
    def n_vertices(self) -> int | float:
        """Number of vertices (``math.inf`` when ``C`` is not a polytope)."""

    def vertices(self, max_count: int = 100_000) -> np.ndarray:
        """The vertices as rows of a ``(k, dim)`` array.

        Raises
        ------
        ModelError
            If ``C`` has infinitely many extreme points, or more than ``max_count``.
        """
        max_count = positive_int(max_count, "max_count")
        n = self.n_vertices  # may be a huge int (2^p for boxes): never convert it to float
        if isinstance(n, float) and math.isinf(n):
            raise ModelError(
                f"{type(self).__name__} is not a polytope and has no finite vertex list; "
                "use lmo() or support() instead"
            )
        if n > max_count:
            count = str(n) if n < 10**15 else f"about 10^{int(math.log10(n))}"
            raise ModelError(
                f"{type(self).__name__} in dimension {self.dim} has {count} vertices, more than "
                f"max_count={max_count}; use lmo() instead or raise max_count"
            )
        return self._vertices()

    def _vertices(self) -> np.ndarray:
        raise NotImplementedError  # pragma: no cover - only reached for finite n_vertices

    # -- Gaussian width --------------------------------------------------------

    def gaussian_width(
        self, *, n_samples: int = 20_000, confidence: float = 0.95, seed: int | None = 0
    ) -> GaussianWidth:
        """The Gaussian width ``G_C = E_g[max_{v∈C} ⟨g, v⟩]``, ``g ~ N(0, I_dim)``.

        Sets with a closed form or an exact one-dimensional quadrature override
        this and ignore the sampling arguments; the default is
        :meth:`gaussian_width_monte_carlo`.

        Parameters
        ----------
        n_samples : int
            Monte Carlo sample size (at least 2).
        confidence : float
            Level of the Monte Carlo t-interval, in (0, 1).
        seed : int or None
            Seed of the Monte Carlo generator; ``None`` draws fresh entropy.
            The same seed gives the same result.
        """
        return self.gaussian_width_monte_carlo(n_samples=n_samples, confidence=confidence, seed=seed)

    def gaussian_width_monte_carlo(
        self, *, n_samples: int = 20_000, confidence: float = 0.95, seed: int | None = 0
    ) -> GaussianWidth:
        """Monte Carlo estimate of the Gaussian width over the support function.

        The estimate is the mean of ``support(g_j)`` over ``n_samples``
        independent ``g_j ~ N(0, I)``; ``[low, high]`` is the ``confidence``
        t-interval ``mean ± t_{(1+confidence)/2, n−1} · sd / √n``.
        Deterministic for a given ``seed``.
        """
        n_samples = positive_int(n_samples, "n_samples")
        if n_samples < 2:
            raise ModelError("n_samples must be at least 2 for a confidence interval")
        if isinstance(confidence, bool) or not (0.0 < float(confidence) < 1.0):
            raise ModelError(f"confidence must lie strictly between 0 and 1, got {confidence!r}")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))):
            raise ModelError(f"seed must be an int or None, got {type(seed).__name__}")
        rng = np.random.default_rng(seed)
        batch = max(1, BATCH_FLOATS // max(self.dim, self._support_cost()))
        values = np.empty(n_samples)
        for start in range(0, n_samples, batch):
            stop = min(n_samples, start + batch)
            values[start:stop] = self._support_many(rng.standard_normal((stop - start, self.dim)))
        mean = float(values.mean())
        sd = float(values.std(ddof=1))
        from scipy import stats  # heavy: imported when a width is estimated, not with dpopt

        half = float(stats.t.ppf(0.5 * (1.0 + confidence), n_samples - 1)) * sd / math.sqrt(n_samples)
        return GaussianWidth(
            value=mean,
            low=mean - half,
            high=mean + half,
            method="monte-carlo",
            n_samples=n_samples,
            confidence=float(confidence),
        )

    def _support_cost(self) -> int:
        """Floats materialised per sample by :meth:`_support_many` (for batching)."""
        return self.dim


def clip_to_grid(v: np.ndarray, low: np.ndarray, high: np.ndarray, step: float) -> tuple[np.ndarray, bool]:
    """``(x, on_grid)``: ``v`` clipped to the multiples of ``step`` inside ``[low, high]``.

    A grid point ``v`` stays a grid point: each bound is rounded inward onto the grid.  Where an
    interval holds no grid point the plain clip is used and ``on_grid`` is False.
    """
    with np.errstate(invalid="ignore"):
        lo = np.ceil(low / step) * step
        hi = np.floor(high / step) * step
    fits = lo <= hi
    out = np.clip(v, np.where(fits, lo, low), np.where(fits, hi, high))
    return out, bool(np.all(fits))


def closed_form(value: float) -> GaussianWidth:
    return GaussianWidth(value=value, low=value, high=value, method="closed-form")


def init_set(obj: object, var: Variable | int) -> None:
    dim = dimension_of(var)
    object.__setattr__(obj, "dim", dim)
    object.__setattr__(obj, "variable", var if isinstance(var, Variable) else None)
