"""The immutable :class:`Problem`: loss + constraint set + regularizers (+ perturbation)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np

from dpopt.errors import ModelError
from dpopt.modeling.losses import Loss, LossConstants
from dpopt.modeling.perturbation import Perturbation
from dpopt.modeling.regularizers import Regularizer

if TYPE_CHECKING:
    from dpopt.modeling.constraint_set import ConstraintSet


@dataclass(frozen=True)
class Problem:
    """minimize_θ∈C (1/n) Σ ℓ(θ; d_i) + Σ regularizers(θ) [+ perturbation(θ)].

    Parameters
    ----------
    loss : Loss
        The average per-example loss.
    constraint : ConstraintSet, constraint, or a list of them, optional
        The set C (``None``: θ ranges over ℝ^d).  Constraints written with the variable
        (``w >= 0``, ``w <= u``, ``w[j] == 0``, ``A @ w <= b``, ``dp.norm1(w) <= r``) and lists
        mixing them with sets mean their intersection; the problem keeps the one set they
        equal (:func:`dpopt.modeling.constraints.constraint_set`), so ``problem.constraint`` is
        always a ConstraintSet or None.
    regularizer : Regularizer or a tuple of them, optional
        Data-independent terms (any :class:`~dpopt.modeling.regularizers.Regularizer`,
        e.g. L2Squared, L1Norm, SubmodularNorm); at most one of each kind.
    perturbation : Perturbation, optional
        Set by mechanisms, not by users.
    """

    loss: Loss
    constraint: ConstraintSet | None = None
    regularizer: object = ()
    perturbation: Perturbation | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        from dpopt.modeling.constraint_set import ConstraintSet

        if not isinstance(self.loss, Loss):
            raise ModelError(f"loss must be a dpopt Loss, got {type(self.loss).__name__}")
        regs = self.regularizer
        if regs is None:
            regs = ()
        elif isinstance(regs, Regularizer):
            regs = (regs,)
        try:
            items: tuple[object, ...] = tuple(regs)  # type: ignore[arg-type]
        except TypeError:
            raise ModelError(
                f"unsupported regularizer {type(regs).__name__}: use a dpopt Regularizer "
                "(e.g. L2Squared, L1Norm, SubmodularNorm) or a tuple of them"
            ) from None
        kinds = [type(r) for r in items]
        for r in items:
            if not isinstance(r, Regularizer):
                raise ModelError(
                    f"unsupported regularizer {type(r).__name__}: use a dpopt Regularizer "
                    "(e.g. L2Squared, L1Norm, SubmodularNorm)"
                )
            if r.dim != self.dim:
                raise ModelError(f"regularizer has dimension {r.dim}, the variable {self.dim}")
        if len(set(kinds)) != len(kinds):
            raise ModelError("give each kind of regularizer at most once (add the weights instead)")
        object.__setattr__(self, "regularizer", items)
        c = self.constraint
        if c is not None and not isinstance(c, ConstraintSet):
            from dpopt.modeling.constraints import constraint_set

            c = constraint_set(c, self.loss.variable)
            object.__setattr__(self, "constraint", c)
        if c is not None:
            if not isinstance(c, ConstraintSet):
                raise ModelError(f"constraint must be a dpopt ConstraintSet, got {type(c).__name__}")
            if c.dim != self.dim:
                raise ModelError(f"constraint set has dimension {c.dim}, the variable {self.dim}")
        p = self.perturbation
        if p is not None and p.dim != self.dim:
            raise ModelError(f"perturbation has dimension {p.dim}, the variable {self.dim}")

    # -- structure ---------------------------------------------------------------
    @property
    def dim(self) -> int:
        """Dimension of θ."""
        return self.loss.variable.size

    @property
    def n(self) -> int:
        """Number of data rows."""
        return self.loss.data.n

    @property
    def feature_names(self) -> tuple[str, ...]:
        """Public names of θ's coordinates: the dataset's feature names when θ has one per
        column (a schema's expanded names, or names declared on the Dataset), else ()."""
        names = tuple(getattr(self.loss.data, "feature_names", ()))
        return names if len(names) == self.dim else ()

    @property
    def regularizers(self) -> tuple[Regularizer, ...]:
        return self.regularizer  # type: ignore[return-value]

    @property
    def elastic(self) -> bool:
        """Whether every regularizer is ``a·½‖θ‖² + b‖θ‖₁`` (declares ``elastic_weights``)."""
        return all(r.elastic_weights is not None for r in self.regularizers)

    def _elastic_sum(self, i: int) -> float:
        return sum((w[i] for r in self.regularizers if (w := r.elastic_weights) is not None), 0.0)

    @property
    def l2_weight(self) -> float:
        """The total weight a of the a·½‖θ‖² parts of the regularizers (0 if none)."""
        return self._elastic_sum(0)

    @property
    def l1_weight(self) -> float:
        """The total weight b of the b‖θ‖₁ parts of the regularizers (0 if none)."""
        return self._elastic_sum(1)

    def with_perturbation(self, perturbation: Perturbation | None) -> Problem:
        """A copy of the problem with ``perturbation`` added."""
        return replace(self, perturbation=perturbation)

    def domain_radius(self) -> dict[object, float] | None:
        """Radii of C in the ℓ1, ℓ2 and ℓ∞ norms (None when unconstrained)."""
        c = self.constraint
        if c is None:
            return None
        return {1: c.radius(1), 2: c.radius(2), "inf": c.radius("inf")}

    def loss_constants(self) -> LossConstants:
        """The loss's constants over this problem's domain."""
        return self.loss.constants(self.domain_radius())

    @property
    def strong_convexity(self) -> float:
        """A lower bound on the ℓ2 strong convexity of the (perturbed) objective."""
        mu = self.loss_constants().strong_convexity + self.l2_weight
        if self.perturbation is not None:
            mu += self.perturbation.zeta
        return mu

    @property
    def smoothness(self) -> float:
        """An upper bound on the smoothness (gradient Lipschitz constant) of the smooth part."""
        h = self.loss_constants().hessian_bound
        if h is None:
            return math.inf
        beta = h + self.l2_weight
        if self.perturbation is not None:
            beta += self.perturbation.zeta
        return beta

    # -- numeric evaluation ---------------------------------------------------------
    def smooth_value(self, theta: np.ndarray) -> float:
        """Average loss + (λ/2)‖θ‖² + perturbation, at θ."""
        v = self.loss.value(theta) + 0.5 * self.l2_weight * float(theta @ theta)
        if self.perturbation is not None:
            v += self.perturbation.value(theta)
        return v

    def smooth_gradient(self, theta: np.ndarray) -> np.ndarray:
        """Gradient of :meth:`smooth_value`."""
        g = self.loss.gradient(theta) + self.l2_weight * theta
        if self.perturbation is not None:
            g = g + self.perturbation.gradient(theta)
        return g

    def objective(self, theta: np.ndarray) -> float:
        """The full (perturbed) objective at θ (ignoring the constraint): every regularizer
        is evaluated by its own :meth:`~dpopt.modeling.regularizers.Regularizer.value`."""
        v = self.loss.value(theta) + sum((r.value(theta) for r in self.regularizers), 0.0)
        if self.perturbation is not None:
            v += self.perturbation.value(theta)
        return v

    def summary(self) -> str:
        """A one-line description without data values."""
        parts = [self.loss.summary()]
        if self.constraint is not None:
            parts.append(f"over {type(self.constraint).__name__}")
        for r in self.regularizers:
            parts.append(f"+ {type(r).__name__}({r.lam:g})")
        return " ".join(parts)
