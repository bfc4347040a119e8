"""Regularizers added to the average loss (data-independent terms).

Every regularizer is a :class:`Regularizer`: a frozen dataclass with the
dimension ``dim`` and weight ``lam``, its value, its strong-convexity modulus
and, where one exists in closed form, its proximal map.  Solver encodings live
in :mod:`dpopt.compile` (register the cvxpy one with
``@dpopt.compile.cvxpy_program.regularizer_term.register``); this module
imports no solver package.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from dpopt.errors import BackendCapabilityError, ModelError
from dpopt.modeling.variable import Variable, dimension_of

__all__ = ["L1Norm", "L2Squared", "Regularizer"]


def _weight(lam: float, name: str) -> float:
    if isinstance(lam, bool) or not isinstance(lam, (int, float, np.floating)):
        raise ModelError(f"{name} weight must be a number, got {type(lam).__name__}")
    if not math.isfinite(lam) or lam <= 0:
        raise ModelError(f"{name} weight must be positive and finite, got {lam!r}")
    return float(lam)


class Regularizer(ABC):
    """A data-independent term ``lam · r(θ)`` added to the average loss.

    Subclasses are frozen dataclasses with ``dim`` and ``lam``; they implement
    :meth:`value` and :attr:`strong_convexity` and override :meth:`prox` when
    the proximal map has a closed form.

    Attributes
    ----------
    qp_representable : bool
        Class-level declaration: the term's solver encodings are quadratic or
        piecewise linear, so it keeps a QP a QP (QP-only backends read it).
    elastic_weights : tuple of float or None
        ``(a, b)`` when the term is exactly ``a·½‖θ‖₂² + b‖θ‖₁`` (None otherwise):
        proximal-gradient methods and the scipy backend then take ``a`` into the
        smooth part and ``b`` into the exact ℓ1 prox composed with the set's
        projection (:func:`dpopt.numerics.prox.composite_prox`), so they accept the
        term; :class:`~dpopt.modeling.problem.Problem` sums them into
        ``l2_weight`` and ``l1_weight``.
    """

    dim: int
    lam: float
    qp_representable: ClassVar[bool] = False

    @property
    @abstractmethod
    def strong_convexity(self) -> float:
        """Modulus of strong convexity in the ℓ2 norm."""

    @abstractmethod
    def value(self, theta: np.ndarray) -> float:
        """The term's value at ``theta``."""

    @property
    def elastic_weights(self) -> tuple[float, float] | None:
        """``(a, b)`` when the term is ``a·½‖θ‖₂² + b‖θ‖₁``, else None (the default)."""
        return None

    def prox(self, v: np.ndarray, step: float) -> np.ndarray:
        """``argmin_x ½‖x − v‖² + step · value(x)``.

        Raises
        ------
        BackendCapabilityError
            When this regularizer has no closed-form proximal map.
        """
        raise BackendCapabilityError(
            f"{type(self).__name__} has no closed-form proximal map; override Regularizer.prox to add one"
        )


@dataclass(frozen=True, init=False)
class L2Squared(Regularizer):
    """(λ/2)‖θ‖₂²: λ-strongly convex (the convention of Chaudhuri et al. 2011)."""

    qp_representable = True

    dim: int
    lam: float

    def __init__(self, variable: Variable | int, lam: float) -> None:
        object.__setattr__(self, "dim", dimension_of(variable))
        object.__setattr__(self, "lam", _weight(lam, "L2Squared"))

    @property
    def strong_convexity(self) -> float:
        """Modulus of strong convexity in the ℓ2 norm."""
        return self.lam

    @property
    def elastic_weights(self) -> tuple[float, float]:
        return self.lam, 0.0

    def value(self, theta: np.ndarray) -> float:
        return 0.5 * self.lam * float(theta @ theta)

    def gradient(self, theta: np.ndarray) -> np.ndarray:
        return self.lam * theta

    def prox(self, v: np.ndarray, step: float) -> np.ndarray:
        """``v / (1 + step·λ)``."""
        return np.asarray(v, dtype=np.float64) / (1.0 + step * self.lam)


@dataclass(frozen=True, init=False)
class L1Norm(Regularizer):
    """λ‖θ‖₁ (non-smooth; handled through its proximal map)."""

    qp_representable = True

    dim: int
    lam: float

    def __init__(self, variable: Variable | int, lam: float) -> None:
        object.__setattr__(self, "dim", dimension_of(variable))
        object.__setattr__(self, "lam", _weight(lam, "L1Norm"))

    @property
    def strong_convexity(self) -> float:
        return 0.0

    @property
    def elastic_weights(self) -> tuple[float, float]:
        return 0.0, self.lam

    def value(self, theta: np.ndarray) -> float:
        return self.lam * float(np.abs(theta).sum())

    def prox(self, v: np.ndarray, step: float) -> np.ndarray:
        """Soft thresholding at ``step·λ``."""
        return soft_threshold(np.asarray(v, dtype=np.float64), step * self.lam)


def soft_threshold(v: np.ndarray, t: float) -> np.ndarray:
    """Componentwise sign(v)·max(|v| − t, 0)."""
    return np.sign(v) * np.maximum(np.abs(v) - t, 0.0)
