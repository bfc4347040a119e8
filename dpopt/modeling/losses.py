"""Per-example losses of generalized linear form, with their constants.

Every loss here is a *generalized linear* loss ℓ(θ; x, y) = φ(⟨x, θ⟩, y): its
gradient φ'·x lies along x and its Hessian φ''·x xᵀ has rank one.  Mechanisms
rely on that structure (objective perturbation's Jacobian argument needs a
rank-one Hessian, Kifer–Smith–Thakurta 2012).  All constants are computed from
the *declared* bounds of the :class:`~dpopt.modeling.dataset.Dataset` and, where
a loss is unbounded in θ (squared loss), from the radius of the constraint set.
The empirical loss is the average ``(1/n) Σ ℓ(θ; x_i, y_i)``.

Labels are declared by the loss type, never read from the data
(docs/design.md, "Privacy rules"): a classification loss (logistic, hinge, smoothed
hinge; ``label_domain = "classes"``) is defined for y ∈ {−1, +1} and maps every other
label onto it row by row when it is built (y > 0 ↦ +1, otherwise −1:
:meth:`Dataset.with_class_labels`); a regression loss (squared, Huber;
``label_domain = "bounded"``) is defined for |y| ≤ ``y_bound`` as declared on the
dataset, which clips labels outside it when it is built.  No label is refused for its
value, and every constant (:meth:`Loss.constants`, :meth:`Loss.value_at_zero_bound`)
reads the declaration, so neighbouring datasets get the same constants.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar, Literal

import numpy as np

from dpopt.errors import ModelError
from dpopt.modeling.dataset import Dataset
from dpopt.modeling.variable import Variable


# scipy.special is imported on first use, not with dpopt (it costs a few tenths of a second)
def expit(x: np.ndarray) -> np.ndarray:
    """scipy.special.expit (imported on first use)."""
    from scipy.special import expit as f

    return np.asarray(f(x))


def logsumexp(x: np.ndarray, axis: int) -> np.ndarray:
    """scipy.special.logsumexp (imported on first use)."""
    from scipy.special import logsumexp as f

    return np.asarray(f(x, axis=axis))


def softmax(x: np.ndarray, axis: int) -> np.ndarray:
    """scipy.special.softmax (imported on first use)."""
    from scipy.special import softmax as f

    return np.asarray(f(x, axis=axis))


@dataclass(frozen=True)
class LossConstants:
    """Constants of a per-example loss over a domain, from declared bounds.

    Attributes
    ----------
    lipschitz_l2 : float
        sup ‖∇ℓ(θ; d)‖₂ over the domain and all admissible rows (``inf`` if unbounded).
    lipschitz_l1 : float
        Lipschitz constant with respect to the ℓ1 norm on θ, i.e. sup ‖∇ℓ‖∞.
    hessian_bound : float or None
        sup of the spectral norm of ∇²ℓ(θ; d); None if ℓ is not twice differentiable
        with a bounded Hessian (hinge, 0/1).
    strong_convexity : float
        A lower bound on the smallest eigenvalue of ∇²ℓ(θ; d) (0 for rank-one Hessians).
    curvature : float
        Frank–Wolfe curvature constant Γ ≤ hessian_bound · diam₂(C)² of the average loss
        over the domain (``inf`` when the domain is unbounded or there is no Hessian bound).
    """

    lipschitz_l2: float
    lipschitz_l1: float
    hessian_bound: float | None
    strong_convexity: float
    curvature: float


class Loss(ABC):
    """A generalized linear per-example loss φ(⟨x, θ⟩, y) over a dataset.

    Parameters
    ----------
    data : Dataset
        Data with declared bounds.  A classification loss keeps
        :meth:`Dataset.with_class_labels` of it (labels mapped onto ±1) as ``self.data``.
    variable : Variable
        The parameter θ; its size must equal the number of features.
    """

    name: str = "loss"
    #: rank of the per-example Hessian (GLM losses: one)
    hessian_rank: int = 1
    #: the labels the loss is declared for (module docstring): ``"classes"`` — {−1, +1}, every
    #: other label mapped onto them when the loss is built; ``"bounded"`` — |y| ≤ the dataset's
    #: declared ``y_bound`` (labels outside it are clipped when the dataset is built)
    label_domain: ClassVar[Literal["classes", "bounded", "indices"]] = "bounded"
    #: k, the number of linear outputs per row: θ is a d×k matrix flattened row-major and the
    #: loss is φ(Θᵀx, y) with a k-vector of scores (1 for the scalar losses)
    n_outputs: int = 1
    #: whether the curvature vanishes with the slope, ‖∇²φ(z, y)‖ ≤ 2‖∇φ(z, y)‖ (logistic:
    #: p(1 − p) ≤ 1 − p), so that a small gradient also means a flat loss: DP-GD's preconditioned
    #: steps may then lengthen the step as the adaptive clip shrinks (dpopt.mechanisms.gradient_descent)
    curvature_follows_slope: ClassVar[bool] = False
    #: whether the loss's cvxpy encoding is a quadratic (or linear) objective, so that over a
    #: polyhedral set with QP-representable regularizers the problem is a QP (QP-only backends)
    qp_representable: ClassVar[bool] = False
    #: whether φ(·, y) is a quadratic with the same curvature for every label (φ'' ≡
    #: :meth:`d2phi_bound`), so that the mean gradient is affine in θ and two moments of the
    #: data give it exactly (:meth:`gradient_from_moments`)
    quadratic: ClassVar[bool] = False
    #: whether :meth:`conjugate` knows the Fenchel conjugate φ*(a, y) (the dual mechanisms)
    conjugate_known: ClassVar[bool] = False

    def __init__(self, data: Dataset, variable: Variable) -> None:
        if not isinstance(data, Dataset):
            raise ModelError(f"{type(self).__name__} needs a dpopt Dataset, got {type(data).__name__}")
        if not isinstance(variable, Variable):
            raise ModelError(f"{type(self).__name__} needs a dpopt Variable, got {type(variable).__name__}")
        if variable.size != data.n_features * self.n_outputs:
            per = "" if self.n_outputs == 1 else f" × {self.n_outputs} outputs = {data.n_features * self.n_outputs}"
            raise ModelError(
                f"variable has size {variable.size} but the data has {data.n_features} features{per}"
            )
        self.data = data.with_class_labels() if self.label_domain == "classes" else data
        self.variable = variable
        self._check_data()

    def _check_data(self) -> None:  # noqa: B027 — optional hook, not abstract
        """Refuse a dataset whose *declarations* the loss cannot use (override; never read a value)."""

    def declared_labels(self) -> np.ndarray:
        """Labels spanning the declared label domain: ±1, or −y_bound, 0, y_bound.

        Raises
        ------
        ModelError
            For a ``"bounded"`` loss on a dataset without a declared ``y_bound``.
        """
        if self.label_domain == "classes":
            return np.array([-1.0, 1.0])
        if self.data.y_bound is None:
            raise ModelError(f"the {self.name} loss needs a declared y_bound on the dataset to bound its labels")
        return np.array([-self.data.y_bound, 0.0, self.data.y_bound])

    def value_at_zero_bound(self) -> float:
        """φ₀ = sup φ(0, y) over the declared labels (:meth:`declared_labels`), never the data's.

        Over ``[−y_bound, y_bound]`` the supremum is taken at −y_bound, 0 and y_bound, which is
        exact when φ(0, ·) is quasi-convex (squared, Huber); a user loss for which it is not
        overrides this method.
        """
        ys = self.declared_labels()
        return float(np.max(self.phi(np.zeros(ys.size), ys)))

    def dphi_at_zero_bound(self) -> float:
        """sup |φ'(0, y)| over the admissible labels, from the declarations only.

        ``dphi_bound(0)`` by default; a loss with a sharper closed form overrides it (the
        a-priori fallback's start, :mod:`dpopt.numerics.apg`, reads it).
        """
        return float(self.dphi_bound(0.0))

    # -- the scalar link function ------------------------------------------------
    @abstractmethod
    def phi(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Loss value φ(z, y) at margins/predictions ``z``."""

    @abstractmethod
    def dphi(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Derivative ∂φ/∂z."""

    def d2phi(self, z: np.ndarray, y: np.ndarray) -> np.ndarray | None:
        """Second derivative ∂²φ/∂z² (almost everywhere), or None if not available."""
        return None

    @abstractmethod
    def dphi_bound(self, z_bound: float) -> float:
        """sup |∂φ/∂z| over |z| ≤ z_bound and admissible y (may be ``inf``)."""

    @abstractmethod
    def d2phi_bound(self) -> float | None:
        """sup ∂²φ/∂z², or None when φ is not twice differentiable with bounded curvature."""

    def gradient_from_moments(self, theta: np.ndarray, gram: np.ndarray, linear: np.ndarray) -> np.ndarray:
        """The mean gradient of a :attr:`quadratic` loss at θ from its moments: ``gram`` = XᵀX/n
        and ``linear`` = Xᵀφ'(0, y)/n, as φ''·(gram θ) + linear.

        Raises
        ------
        ModelError
            For a loss that does not declare :attr:`quadratic`.
        """
        if not self.quadratic:
            raise ModelError(f"the {self.name} loss is not quadratic: its gradient is not affine in θ")
        curvature = self.d2phi_bound()
        assert curvature is not None
        return curvature * (gram @ theta) + linear

    def conjugate(self, a: np.ndarray, y: np.ndarray) -> np.ndarray:
        """φ*(a, y) = sup_z a z − φ(z, y) per example (``inf`` outside its domain), for a loss that
        declares :attr:`conjugate_known`.

        Raises
        ------
        ModelError
            For a loss whose conjugate dpopt does not know.
        """
        raise ModelError(f"no Fenchel conjugate is known for the {self.name} loss")

    # -- numeric evaluation of the average loss -----------------------------------

    def value(self, theta: np.ndarray) -> float:
        """Average loss (1/n) Σ φ(⟨x_i, θ⟩, y_i) (per partition on a Dask-backed dataset)."""
        if self.data.is_distributed:
            from dpopt.modeling.readers import loss_value

            return loss_value(self, theta)
        return float(np.mean(self.phi(self.scores(theta), self.data.y)))

    def gradient(self, theta: np.ndarray) -> np.ndarray:
        """Gradient of the average loss (per partition on a Dask-backed dataset)."""
        if self.data.is_distributed:
            from dpopt.modeling.readers import gradient_sum

            return gradient_sum(self, theta) / self.data.n
        g = self.data.X.T @ self.dphi(self.scores(theta), self.data.y) / self.data.n
        return np.asarray(g).reshape(-1)

    def scores(self, theta: np.ndarray, X: np.ndarray | None = None) -> np.ndarray:
        """⟨x_i, θ⟩ for every row (n-vector), or Θᵀx_i (n×k) for a loss of k outputs."""
        X = self.data.X if X is None else X
        theta = np.asarray(theta, dtype=np.float64)
        if self.n_outputs == 1:
            return np.asarray(X @ theta)
        return np.asarray(X @ theta.reshape(-1, self.n_outputs))

    # -- constants -------------------------------------------------------------------
    def constants(self, domain_radius: dict[object, float] | None = None) -> LossConstants:
        """Constants from the declared bounds and a domain's radii.

        Parameters
        ----------
        domain_radius : dict, optional
            ``{1: r1, 2: r2, "inf": rinf}``: the radius of the domain of θ in each
            norm (``None`` for an unbounded domain).
        """
        d = self.data
        # |⟨x, θ⟩| ≤ ‖x‖_q ‖θ‖_{q*} with q the declared order
        if domain_radius is None:
            z_bound = math.inf
        else:
            dual = {1.0: "inf", 2.0: 2, math.inf: 1}[d.norm_order]
            z_bound = d.x_bound * domain_radius[dual]
        g = self.dphi_bound(z_bound)
        h = self.d2phi_bound()
        x2 = d.x_bound_in(2)
        xinf = d.x_bound_in("inf")
        hess = None if h is None else h * x2**2
        diam2 = math.inf if domain_radius is None else 2.0 * domain_radius[2]
        curvature = math.inf if hess is None or not math.isfinite(diam2) else hess * diam2**2
        return LossConstants(
            lipschitz_l2=g * x2,
            lipschitz_l1=g * xinf,
            hessian_bound=hess,
            strong_convexity=0.0,
            curvature=curvature,
        )

    def summary(self) -> str:
        """One line naming the loss and its data shape (no data values)."""
        return f"{self.name} loss on n={self.data.n}, d={self.data.n_features}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.data!r})"


def _positive_parameter(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (math.isfinite(value) and value > 0):
        raise ModelError(f"{name} must be positive and finite, got {value!r}")
    return float(value)


def _require_y_bound(loss: Loss) -> None:
    if loss.data.y_bound is None:
        raise ModelError(f"{loss.name} loss needs a declared y_bound on the dataset")


class SquaredLoss(Loss):
    """Squared loss φ(z, y) = (z − y)².

    Its gradient 2(z − y)x is bounded only on a bounded domain:
    L₂ = 2 (x_bound·‖C‖ + y_bound)·‖x‖₂-bound; φ'' = 2.
    """

    name = "squared"
    qp_representable = True
    quadratic = True  # φ'' = 2 for every label
    conjugate_known = True

    def _check_data(self) -> None:
        _require_y_bound(self)

    def dphi_at_zero_bound(self) -> float:
        y_bound = self.data.y_bound
        return 2.0 * y_bound if y_bound is not None else float(self.dphi_bound(0.0))  # |2(0 − y)| ≤ 2Y

    def phi(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        return (z - y) ** 2

    def dphi(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        return 2.0 * (z - y)

    def d2phi(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.full_like(z, 2.0)

    def dphi_bound(self, z_bound: float) -> float:
        assert self.data.y_bound is not None
        return 2.0 * (z_bound + self.data.y_bound)

    def d2phi_bound(self) -> float:
        return 2.0

    def conjugate(self, a: np.ndarray, y: np.ndarray) -> np.ndarray:
        """φ*(a) = a y + a²/4 (φ = (z − y)²)."""
        return a * y + 0.25 * a * a


class LogisticLoss(Loss):
    """Logistic loss φ(z, y) = log(1 + exp(−y z)) for labels y ∈ {−1, +1}.

    Any other label is mapped onto {−1, +1} when the loss is built (y > 0 ↦ +1, otherwise −1).

    |φ'| ≤ 1 and φ'' ≤ 1/4, so L₂ = x_bound (ℓ2) and the Hessian bound is x_bound²/4.
    """

    name = "logistic"
    curvature_follows_slope = True  # σ(z)(1 − σ(z)) ≤ 1 − σ(z) = |φ'| for y = 1 (and symmetrically)
    label_domain = "classes"
    conjugate_known = True

    def dphi_at_zero_bound(self) -> float:
        return 0.5  # |φ'(0, ±1)| = σ(0) = 1/2

    def phi(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.logaddexp(0.0, -y * z)

    def dphi(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        return -y * expit(-y * z)

    def d2phi(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        s = expit(y * z)
        return s * (1.0 - s)

    def dphi_bound(self, z_bound: float) -> float:
        return 1.0

    def d2phi_bound(self) -> float:
        return 0.25

    def conjugate(self, a: np.ndarray, y: np.ndarray) -> np.ndarray:
        """With t = −a y ∈ [0, 1], φ*(a) = t log t + (1 − t) log(1 − t) (``inf`` outside [0, 1])."""
        t = -a * y
        inside = (t >= 0) & (t <= 1)
        tc = np.clip(t, 1e-300, 1.0)
        uc = np.clip(1.0 - t, 1e-300, 1.0)
        val = np.where(t > 0, tc * np.log(tc), 0.0) + np.where(t < 1, uc * np.log(uc), 0.0)
        return np.where(inside, val, np.inf)


class HuberLoss(Loss):
    """Huber loss of the residual r = z − y with threshold ``h``.

    φ = r²/2 for |r| ≤ h, h(|r| − h/2) otherwise; |φ'| ≤ h, φ'' ≤ 1 (almost
    everywhere: φ' is 1-Lipschitz, which is what the change-of-variables argument
    of objective perturbation uses).
    """

    name = "huber"
    qp_representable = True

    def __init__(self, data: Dataset, variable: Variable, *, h: float = 1.0) -> None:
        self.h = _positive_parameter(h, "Huber threshold h")
        super().__init__(data, variable)

    def dphi_at_zero_bound(self) -> float:
        y_bound = self.data.y_bound
        return min(self.h, y_bound) if y_bound is not None else float(self.dphi_bound(0.0))  # |clip(−y, ±h)|

    def _check_data(self) -> None:
        _require_y_bound(self)

    def phi(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        r = np.abs(z - y)
        return np.where(r <= self.h, 0.5 * r**2, self.h * (r - 0.5 * self.h))

    def dphi(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.clip(z - y, -self.h, self.h)

    def d2phi(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        return (np.abs(z - y) <= self.h).astype(np.float64)

    def dphi_bound(self, z_bound: float) -> float:
        assert self.data.y_bound is not None
        return min(self.h, z_bound + self.data.y_bound)

    def d2phi_bound(self) -> float:
        return 1.0


class SmoothedHingeLoss(Loss):
    """Quadratically smoothed hinge loss with smoothing width ``h`` (labels ±1, others mapped: y > 0 ↦ +1).

    With margin m = y z: φ = 0 for m ≥ 1, (1 − m)²/(2h) for 1 − h < m < 1 and
    1 − m − h/2 for m ≤ 1 − h.  |φ'| ≤ 1, φ'' ≤ 1/h.
    """

    name = "smoothed-hinge"
    label_domain = "classes"

    def __init__(self, data: Dataset, variable: Variable, *, h: float = 0.5) -> None:
        self.h = _positive_parameter(h, "smoothing width h")
        super().__init__(data, variable)

    def dphi_at_zero_bound(self) -> float:
        return min(1.0, 1.0 / self.h)  # |φ'(0, ±1)| = clip(1/h, 0, 1)

    def phi(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        m = y * z
        return np.where(m >= 1, 0.0, np.where(m > 1 - self.h, (1 - m) ** 2 / (2 * self.h), 1 - m - self.h / 2))

    def dphi(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        m = y * z
        return -y * np.clip((1 - m) / self.h, 0.0, 1.0)

    def d2phi(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        m = y * z
        return ((m < 1) & (m > 1 - self.h)).astype(np.float64) / self.h

    def dphi_bound(self, z_bound: float) -> float:
        return 1.0

    def d2phi_bound(self) -> float:
        return 1.0 / self.h


class HingeLoss(Loss):
    """Hinge loss max(0, 1 − y z) (labels ±1, others mapped: y > 0 ↦ +1): Lipschitz, no Hessian bound.

    Mechanisms that need second-order smoothness (objective perturbation) refuse it;
    use :class:`SmoothedHingeLoss` there.
    """

    name = "hinge"
    label_domain = "classes"
    qp_representable = True  # piecewise linear: an LP, which a QP solver takes

    def phi(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.maximum(0.0, 1.0 - y * z)

    def dphi(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.where(y * z < 1.0, -y, 0.0)

    def dphi_bound(self, z_bound: float) -> float:
        return 1.0

    def d2phi_bound(self) -> None:
        return None


class MultinomialLogisticLoss(Loss):
    """Multinomial (softmax) logistic loss over k ≥ 2 classes: φ(z, y) = log Σ_j e^{z_j} − z_y.

    θ is a d×k matrix Θ flattened row-major (``Variable(d * k)``), the scores are z = Θᵀx and
    the labels are class indices y ∈ {0, …, k − 1}: every other label is mapped to 0 when the
    loss is built (:meth:`Dataset.with_index_labels`), never refused.

    Constants, from the declarations only: the per-example gradient is x ⊗ (p − e_y) with
    p = softmax(z), so ‖∇ℓ‖₂ = ‖x‖₂·‖p − e_y‖₂ < √2·‖x‖₂ (‖p − e_y‖₂² = (1 − p_y)² + Σ_{j≠y} p_j²
    ≤ 2(1 − p_y)²) and ‖∇ℓ‖∞ ≤ ‖x‖∞ (every entry of p − e_y lies in [−1, 1]).  The Hessian in Θ
    is (x xᵀ) ⊗ (diag p − p pᵀ), whose spectral norm is at most ‖x‖₂²/2 (the eigenvalues of
    diag p − p pᵀ are at most max_j 2p_j(1 − p_j) ≤ 1/2 by Gershgorin: row j has diagonal
    p_j(1 − p_j) and off-diagonal sum p_j(1 − p_j)).  The Hessian has rank k − 1 per example, not one: objective
    perturbation's change-of-variables argument (a rank-one Hessian) does not cover it, so the
    mechanisms that need it refuse this loss before the charge.

    Parameters
    ----------
    data : Dataset
        Features with their declared bound; labels are class indices.
    variable : Variable
        Θ flattened, of size d·k.
    classes : int
        k ≥ 2, a public declaration (never read from the labels).
    """

    name = "multinomial-logistic"
    curvature_follows_slope = True  # ‖diag p − ppᵀ‖ ≤ max_i 2p_i(1 − p_i) ≤ 2(1 − p_y) ≤ 2‖p − e_y‖
    label_domain = "indices"
    hessian_rank = 2

    def __init__(self, data: Dataset, variable: Variable, *, classes: int) -> None:
        if isinstance(classes, bool) or not isinstance(classes, (int, np.integer)) or int(classes) < 2:
            raise ModelError(f"classes must be an integer >= 2 (the declared number of classes), got {classes!r}")
        self.n_outputs = int(classes)
        self.hessian_rank = self.n_outputs - 1
        super().__init__(data, variable)
        self.data = self.data.with_index_labels(self.n_outputs)

    def _check_data(self) -> None:
        if self.data.is_distributed:
            raise ModelError("the multinomial logistic loss is in-memory only: load the table with "
                             "Dataset.from_frame/from_csv, not a Dask-backed reader")

    def declared_labels(self) -> np.ndarray:
        """The class indices 0, …, k − 1."""
        return np.arange(self.n_outputs, dtype=np.float64)

    def value_at_zero_bound(self) -> float:
        """φ(0, y) = log k for every label."""
        return math.log(self.n_outputs)

    def phi(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        z = np.atleast_2d(np.asarray(z, dtype=np.float64))
        rows = np.arange(z.shape[0])
        return np.asarray(logsumexp(z, axis=1) - z[rows, np.asarray(y, dtype=np.int64)])

    def dphi(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        """∇_z φ = softmax(z) − e_y, one row per example (n×k)."""
        p = softmax(np.atleast_2d(np.asarray(z, dtype=np.float64)), axis=1)
        p[np.arange(p.shape[0]), np.asarray(y, dtype=np.int64)] -= 1.0
        return p

    def dphi_bound(self, z_bound: float) -> float:
        """sup ‖∇_z φ‖₂ = √2 (approached, never reached)."""
        return math.sqrt(2.0)

    def d2phi_bound(self) -> float:
        """sup of the spectral norm of diag p − p pᵀ: 1/2."""
        return 0.5

    def constants(self, domain_radius: dict[object, float] | None = None) -> LossConstants:
        """The generic constants with the sharper ℓ∞ bound ‖∇ℓ‖∞ ≤ ‖x‖∞ (class docstring)."""
        generic = super().constants(domain_radius)
        return LossConstants(lipschitz_l2=generic.lipschitz_l2, lipschitz_l1=self.data.x_bound_in("inf"),
                             hessian_bound=generic.hessian_bound, strong_convexity=0.0,
                             curvature=generic.curvature)

    def predict_proba(self, theta: np.ndarray, X: np.ndarray) -> np.ndarray:
        """softmax(Θᵀx) for every row of ``X`` (post-processing of a released Θ)."""
        return np.asarray(softmax(self.scores(theta, X), axis=1))
